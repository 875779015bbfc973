"""Scenario input handling and TOML written from dicts (no native module needed;
test_native.py runs written scenarios through the simulator's parser)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from rtcc.scenario import ScenarioInput, dumps_toml, load_scenario

tomllib = pytest.importorskip("tomllib")  # stdlib from Python 3.11

SCENARIO = {
    "name": "two flows",
    "duration": "30s",
    "seed": 3,
    "link": {
        "capacity": {"kind": "pulse", "high": "3Mbps", "low": "500kbps", "every": "40s"},
        "delay": "25ms",
        "queue": "100ms",
        "loss": {"kind": "bernoulli", "p": 0.01},
    },
    "flow": [
        {"name": "a", "controller": {"name": "fixed", "rate": "2Mbps"}, "fps": 30},
        {"name": "b", "controller": "gcc", "encoder": {"kind": "lagging", "tau_up": "1.3s"}},
    ],
}


def test_round_trip_through_tomllib():
    text = dumps_toml(SCENARIO)
    assert tomllib.loads(text) == SCENARIO
    # Nested dicts become tables; the two short flows an inline array of tables.
    assert "[link]" in text and "[link.capacity]" in text and "[link.loss]" in text
    assert text.startswith('name = "two flows"\n')


def test_arrays_of_tables_round_trip_inline_or_as_sections():
    long = {"name": "a" * 40, "controller": {"name": "gcc", "loss": "classic"}, "fps": 30}
    data = {"flow": [long, {**long, "steps": [["1s", "2Mbps"], ["5s", "1Mbps"]]}]}
    text = dumps_toml(data)
    assert text.count("[[flow]]") == 2 and text.count("[flow.controller]") == 2
    assert tomllib.loads(text) == data
    short = {"flow": [{"name": "a"}, {"name": "b", "controller": {"name": "fixed"}}]}
    assert tomllib.loads(dumps_toml(short)) == short


def test_scalars_and_escapes():
    data = {
        "s": 'quote " backslash \\ tab \t newline \n bell \x07',
        "unicode": "débit → 3 Mbps",
        "i": -12,
        "f": 0.1,
        "tiny": 1e-7,
        "big": 1e20,
        "whole": 3.0,
        "t": True,
        "no": False,
        "inf": math.inf,
        "list": [1, 2, 3],
        "mixed": ["a", 1.5],
        "nested": [[1, 2], ["x"]],
        "empty": [],
        "inline": [{"a": 1}, {"b": "c"}],
        "key with space": 1,
        "path": Path("traces/x.down"),
    }
    back = tomllib.loads(dumps_toml(data))
    expected = {**data, "path": "traces/x.down"}
    assert back == expected


def test_nan_is_written():
    assert math.isnan(tomllib.loads(dumps_toml({"x": math.nan}))["x"])


def test_none_values_are_left_out():
    back = tomllib.loads(dumps_toml({"a": 1, "seed": None, "link": {"queue": None, "x": 2}}))
    assert back == {"a": 1, "link": {"x": 2}}
    # At every depth: inside an array of tables and in an inline table of one.
    data = {"flow": [{"name": "a", "start": None, "controller": {"name": "gcc", "x": None}}]}
    back = tomllib.loads(dumps_toml(data))
    assert back == {"flow": [{"name": "a", "controller": {"name": "gcc"}}]}


def test_scalars_come_before_tables_whatever_the_dict_order():
    data = {"link": {"delay": "25ms"}, "name": "late scalar"}
    assert tomllib.loads(dumps_toml(data)) == data


def test_unsupported_values_are_refused():
    with pytest.raises(TypeError, match="cannot write object"):
        dumps_toml({"x": object()})
    with pytest.raises(TypeError, match="cannot hold None"):
        dumps_toml({"x": [1, None]})
    with pytest.raises(TypeError, match="keys must be strings"):
        dumps_toml({1: "x"})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="bytes"):
        dumps_toml({"x": b"raw"})
    with pytest.raises(TypeError, match="top level"):
        dumps_toml([1])  # type: ignore[arg-type]


def test_numpy_values_subclasses_and_tuples_become_plain_toml():
    np = pytest.importorskip("numpy")
    import enum

    class Level(enum.IntEnum):
        HIGH = 3

    data = {
        "a": np.int64(4), "b": np.float64(0.5), "c": np.array([1.5, 2.0]), "d": (1, 2),
        "e": Level.HIGH, "f": np.bool_(True),
    }  # fmt: skip
    text = dumps_toml(data)
    assert tomllib.loads(text) == {
        "a": 4,
        "b": 0.5,
        "c": [1.5, 2.0],
        "d": [1, 2],
        "e": 3,
        "f": True,
    }
    assert "HIGH" not in text and "np." not in text


def test_load_scenario_kinds(tmp_path: Path):
    text = 'name = "x"\nduration = "1s"\n'
    assert load_scenario(text) == ScenarioInput(text, "<scenario>")
    assert load_scenario('name = "x"').source == "<scenario>"  # '=' means text
    assert load_scenario(text, source="mine").source == "mine"

    path = tmp_path / "case.toml"
    path.write_text(text, encoding="utf-8")
    for given in (path, str(path)):
        loaded = load_scenario(given)
        assert (loaded.text, loaded.source, loaded.stem) == (text, str(path), "case")

    loaded = load_scenario({"name": "d", "duration": "1s"})
    assert loaded.source == "<dict>"
    assert tomllib.loads(loaded.text) == {"name": "d", "duration": "1s"}

    ready = ScenarioInput("a = 1\n", "src", "stem")
    assert load_scenario(ready) is ready


def test_load_scenario_errors(tmp_path: Path):
    with pytest.raises(FileNotFoundError):
        load_scenario(tmp_path / "missing.toml")
    with pytest.raises(IsADirectoryError):
        load_scenario(tmp_path)
    bad = tmp_path / "latin1.toml"
    bad.write_bytes('name = "d\xe9bit"\n'.encode("latin-1"))
    with pytest.raises(UnicodeDecodeError):
        load_scenario(bad)
    with pytest.raises(TypeError):
        load_scenario(42)  # type: ignore[arg-type]
