"""Decoding native tables into pandas (no native module needed)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from rtcc.result import FRAME_STATUS, PACKET_KINDS, Result, decode_table


def col(values, dtype: str) -> tuple[str, bytes]:
    np_dtype = {"f64": "<f8", "i64": "<i8", "u8": "u1"}[dtype]
    return dtype, np.asarray(values, dtype=np_dtype).tobytes()


def test_decode_table_dtypes_and_values():
    df = decode_table(
        {
            "t": col([0.0, 0.5, math.nan], "f64"),
            "n": col([-1, 2**40, 3], "i64"),
            "b": col([0, 1, 255], "u8"),
        }
    )
    assert list(df.columns) == ["t", "n", "b"]
    assert [str(t) for t in df.dtypes] == ["float64", "int64", "uint8"]
    assert df["n"].tolist() == [-1, 2**40, 3]
    assert df["b"].tolist() == [0, 1, 255]
    assert math.isnan(df["t"].iloc[2])
    df.loc[0, "t"] = 9.0  # writable: decoded arrays are copies, not read-only views


def test_decode_table_empty_and_errors():
    assert decode_table({}).shape == (0, 0)
    assert decode_table({"x": col([], "f64")}).shape == (0, 1)
    with pytest.raises(ValueError, match="unknown dtype"):
        decode_table({"x": ("f32", b"\0\0\0\0")})
    with pytest.raises(ValueError, match="whole number"):
        decode_table({"x": ("f64", b"\0" * 9)})
    with pytest.raises(ValueError, match=r"t\.b: 1 rows, expected 2"):
        decode_table({"a": col([1, 2], "i64"), "b": col([1], "i64")}, "t")


def _finished(packets, frames) -> dict:
    summary = {"scenario": "s", "seed": 5, "duration_s": 1.0, "flows": [{"name": "call"}]}
    return {
        "summary": json.dumps(summary),
        "tables": {"packets": packets, "frames": frames, "timeseries": {}, "link": {}},
    }


def test_kind_and_status_become_categoricals_keeping_codes():
    packets = {
        "flow": col([0] * 9, "i64"),
        "kind": col([0, 1, 2, 3, 4, 5, 6, 7, 9], "u8"),
        "size": col([1200] * 9, "i64"),
    }
    frames = {"flow": col([0] * 5, "i64"), "status": col([0, 1, 2, 3, 4], "u8")}
    result = Result.from_native(_finished(packets, frames), "x = 1\n", "src.toml")

    p = result.packets
    assert list(p.columns) == ["flow", "kind", "kind_code", "size"]
    assert isinstance(p["kind"].dtype, pd.CategoricalDtype)
    assert list(p["kind"].cat.categories) == list(PACKET_KINDS)
    assert p["kind"].tolist()[:8] == list(PACKET_KINDS)
    assert pd.isna(p["kind"].iloc[8])  # an unknown code is missing, not an error
    assert p["kind_code"].tolist() == [0, 1, 2, 3, 4, 5, 6, 7, 9]

    f = result.frames
    assert f["status"].tolist() == list(FRAME_STATUS)
    assert f["status_code"].tolist() == [0, 1, 2, 3, 4]

    assert result.name == "s"
    assert result.seed == 5
    assert result.flow_names() == {0: "call"}
    assert result.flows["name"].tolist() == ["call"]
    assert result.scenario_text == "x = 1\n"
    assert result.source == "src.toml"
    assert result.timeseries.empty and result.link.empty
    assert repr(result) == (
        "<Result 's' seed=5 flows=[call] rows: packets=9, frames=5, timeseries=0, link=0>"
    )


def test_summary_key_order_is_kept():
    text = '{"scenario": "s", "seed": 1, "duration_s": 2, "flows": [], "link": {}, "jain_index": 1}'
    result = Result.from_native({"summary": text, "tables": {}})
    assert list(result.summary) == ["scenario", "seed", "duration_s", "flows", "link", "jain_index"]
