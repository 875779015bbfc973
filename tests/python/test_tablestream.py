"""Tables written while the run goes on: the same files as a run kept in memory."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import rtcc
import rtcc.tablestream
from conftest import one_line_error, requires_native
from conftest import run_main as run
from rtcc.result import TABLES, Result

pytestmark = requires_native

MIXED = """\
duration = "8s"
seed = 5
[link]
capacity = { kind = "step", steps = [["0s", "4Mbps"], ["3s", "1Mbps"], ["6s", "4Mbps"]] }
queue = "60kB"
loss = 0.02
jitter = "3ms"
[[flow]]
controller = "gcc"
encoder = "lagging"
[[flow]]
controller = "vivace"
start = "1s"
[[flow]]
kind = "tcp"
cc = "cubic"
start = "2s"
"""


def test_streamed_tables_equal_the_tables_kept_in_memory(tmp_path: Path, monkeypatch) -> None:
    whole = rtcc.simulate(MIXED)
    whole.save(tmp_path / "memory", plots=False)
    # Small batches: many parts, columns that appear after the first batch.
    monkeypatch.setattr(rtcc.tablestream, "ROWS_PER_BATCH", 300)
    taken = []
    real = rtcc.tablestream.TableStream.add

    def counting(self, tables):
        taken.append(sum(len(next(iter(t.values()), ("", b""))[1]) > 0 for t in tables.values()))
        real(self, tables)

    monkeypatch.setattr(rtcc.tablestream.TableStream, "add", counting)
    streamed = rtcc.simulate(MIXED, tables_dir=tmp_path / "stream")
    assert len(taken) >= 5, "the run handed over its tables in several batches"
    assert not list((tmp_path / "stream").glob(".rtcc-tables-*")), "no part files are left"
    for name in TABLES:
        a = pd.read_parquet(tmp_path / "memory" / f"{name}.parquet")
        b = pd.read_parquet(tmp_path / "stream" / f"{name}.parquet")
        assert len(a) > 0
        pd.testing.assert_frame_equal(a, b, check_categorical=True)
        pd.testing.assert_frame_equal(getattr(whole, name), getattr(streamed, name))
    assert streamed.summary == whole.summary | {"sim": streamed.summary["sim"]}


def test_a_streamed_result_reads_only_the_columns_asked_for(tmp_path: Path) -> None:
    result = rtcc.simulate(MIXED, tables_dir=tmp_path)
    owd = result.table("packets", ["flow", "owd_ms", "no_such_column"])
    assert list(owd.columns) == ["flow", "owd_ms"]
    assert result._tables["packets"] is None, "the packet table was not read whole"
    assert "packets=" in repr(result) and result._tables["packets"] is None
    before = (tmp_path / "packets.parquet").stat().st_mtime_ns
    result.save(tmp_path, plots=False)
    assert (tmp_path / "packets.parquet").stat().st_mtime_ns == before, "not written twice"
    assert len(result.packets) == len(owd)
    with pytest.raises(ValueError, match="not a table"):
        result.table("nope")
    loaded = Result.load(tmp_path)
    pd.testing.assert_frame_equal(loaded.frames, result.frames)


def test_a_failed_run_leaves_no_tables(tmp_path: Path, monkeypatch) -> None:
    # Batches are written before the run fails: their part files must go too.
    monkeypatch.setattr(rtcc.tablestream, "ROWS_PER_BATCH", 300)
    seen: list[list[Path]] = []

    def stop(now: float, total: float) -> None:
        seen.append(sorted(tmp_path.rglob("*.parquet")))
        if now > 4:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        rtcc.simulate(MIXED, tables_dir=tmp_path, progress=stop)
    assert seen[-1], "part files were written while the run went on"
    assert list(tmp_path.iterdir()) == []


def test_a_run_over_its_packet_budget_is_one_line(capsys, tmp_path: Path):
    # Streamed or not, a run that outgrows its budget stops with one line.
    over = tmp_path / "over.toml"
    over.write_text(
        'duration = "30s"\n[limits]\npackets = 2000\n[link]\ncapacity = "3Mbps"\n'
        '[[flow]]\ncontroller = "gcc"\n',
        encoding="utf-8",
    )
    out = tmp_path / "res"
    code, _, err = run(capsys, "run", over, "--out", out)
    line = one_line_error(code, err, "limits.packets", "budget of 2000 packets")
    assert "stopped at" in line
    assert not out.exists() or not list(out.glob("*.parquet")), "no tables of a stopped run"
    before = tmp_path / "before.toml"
    before.write_text(
        'duration = "120s"\n[link]\ncapacity = "3Mbps"\n[[flow]]\n'
        'controller = { name = "fixed", rate = "10Gbps", pacing_factor = 1 }\n',
        encoding="utf-8",
    )
    code, _, err = run(capsys, "validate", before)
    one_line_error(code, err, "limits.packets", "raise [limits] packets")
