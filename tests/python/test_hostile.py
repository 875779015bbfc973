"""Hostile inputs on the Python side: files stay under the output folder,
bounded inputs, one clear line instead of a traceback, atomic writes, one sweep per
folder, typed API arguments. Runs against the fake native module."""

from __future__ import annotations

import errno
import fcntl
import os
from pathlib import Path

import pytest

import rtcc
from conftest import SHORT_SCENARIO, one_line_error
from conftest import run_main as run
from rtcc import limits
from rtcc.scenario import load_scenario, peek
from rtcc.sweepspec import SweepError, load_spec, loads_toml

pytestmark = pytest.mark.usefixtures("fake_native")

DEEP = "x = " + "[" * 400 + "]" * 400 + "\n"  # Python's TOML reader overflows at ~330

# An inline base and no traces: expanding it needs no native module.
SPEC = """\
name = "{name}"
controllers = ["fixed"]
seeds = {seeds}

[base]
name = "base"
duration = "2s"
link = {{ capacity = "2Mbps", delay = "20ms", queue = "unlimited" }}

[[base.flow]]
name = "call"
controller = {{ name = "fixed", rate = "500kbps" }}
encoder = "ideal"
"""


def spec_text(name: str = "small", seeds: object = 2) -> str:
    return SPEC.format(name=name, seeds=seeds)


# --- 1. output confinement -----------------------------------------------------------


@pytest.mark.parametrize("name", ["../../../x", "/tmp/rtcc-escape", ".hidden", "a/b", "x" * 65])
def test_save_video_refuses_flow_names_that_are_not_file_names(
    capsys, tmp_path: Path, monkeypatch, name: str
):
    monkeypatch.chdir(tmp_path)
    scenario = tmp_path / "s.toml"
    scenario.write_text(SHORT_SCENARIO.replace('name = "call"', f"name = {name!r}"))
    out = tmp_path / "deep" / "er" / "out"
    code, _, err = run(capsys, "run", scenario, "--out", out, "--save-video", "--no-plots")
    one_line_error(code, err, "flow[0].name", "file name")
    assert not out.exists()  # refused before anything ran or was written
    with pytest.raises(ValueError, match=r"flow\[0\]\.name"):
        rtcc.simulate(scenario, save_video=out)
    # Without --save-video the name is only a label.
    code, _, err = run(capsys, "run", scenario, "--out", out, "--no-plots", "-q")
    assert code == 0, err


def test_file_name_rule():
    for good in ("call", "flow-1", "a_b.c", "X" * 64, "0"):
        assert limits.file_name_error(good) is None
    for bad in ("", ".", "..", "../x", "/x", "a b", "é", "a\nb", "x" * 65, 5):
        assert limits.file_name_error(bad) is not None
    assert limits.safe_file_name("..", "d") == "d"
    assert limits.safe_file_name("...", "d") == "d"
    assert limits.safe_file_name("my sweep", "d") == "my_sweep"


def test_sweep_name_must_be_a_file_name(capsys, tmp_path: Path, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    for bad in ("../../x", "/tmp/x", ".."):
        with pytest.raises(SweepError, match=r"name: .*file name.*results folder"):
            load_spec(spec_text(name=bad))
        spec = work / "s.toml"
        spec.write_text(spec_text(name=bad))
        code, _, err = run(capsys, "sweep", spec, "-q", "--jobs", "1")
        one_line_error(code, err, "s.toml: name:")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["work"]  # nothing written beside
    assert not (work / "results").exists()
    # A name taken from the file's stem is made safe instead of refused.
    odd = work / "my sweep.toml"
    odd.write_text(spec_text().replace('name = "small"\n', ""))
    assert load_spec(odd).name == "my_sweep"


# --- 2. tracebacks and unbounded inputs ----------------------------------------------


def test_deep_toml_is_one_line_not_a_recursion_error(capsys, tmp_path: Path):
    assert peek(DEEP) == {}
    with pytest.raises(ValueError, match="nested more than"):
        load_scenario(DEEP, "deep.toml")
    with pytest.raises(SweepError, match=r"deep.toml: .*nested more than"):
        loads_toml(DEEP, "deep.toml")
    deep = tmp_path / "deep.toml"
    deep.write_text(DEEP)
    code, _, err = run(capsys, "run", deep, "--out", tmp_path / "o")
    one_line_error(code, err, str(deep), "nested")
    spec = tmp_path / "spec.toml"
    spec.write_text(DEEP)
    code, _, err = run(capsys, "sweep", spec, "--out", tmp_path / "o2")
    one_line_error(code, err, str(spec), "nested")


def test_brackets_in_strings_and_comments_are_not_nesting():
    text = 'a = "' + "[" * 500 + '"\n# ' + "{" * 500 + "\nb = '" + "[" * 500 + "'\n"
    assert limits.nesting_depth(text) == 0
    assert peek(text)["a"] == "[" * 500
    assert limits.nesting_depth("x = [[1], {a = [2]}]") == 3


def test_validate_checks_every_file(capsys, tmp_path: Path, short_scenario: Path):
    deep = tmp_path / "deep.toml"
    deep.write_text(DEEP)
    bad = tmp_path / "bad.toml"
    bad.write_text("duration = \n")
    code, out, err = run(capsys, "validate", deep, short_scenario, bad, "/dev/zero")
    assert code == 2
    errors = err.splitlines()
    assert len(errors) == 3, err
    assert str(deep) in errors[0] and str(bad) in errors[1] and "/dev/zero" in errors[2]
    assert "Traceback" not in err
    assert f"{short_scenario}: ok" in out


def test_devices_pipes_and_huge_files_are_refused_before_reading(capsys, tmp_path: Path):
    code, _, err = run(capsys, "run", "/dev/zero", "--out", tmp_path / "o")
    one_line_error(code, err, "/dev/zero", "not a regular file")
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)  # opening it would block: it must not be opened
    code, _, err = run(capsys, "run", fifo, "--out", tmp_path / "o")
    one_line_error(code, err, "not a regular file")
    huge = tmp_path / "huge.toml"
    with huge.open("wb") as f:
        f.truncate(limits.MAX_INPUT_BYTES + 1)  # sparse: costs no disk
    code, _, err = run(capsys, "run", huge, "--out", tmp_path / "o")
    one_line_error(code, err, str(huge), "16 MiB")
    with pytest.raises(SweepError, match="16 MiB"):
        load_spec(huge)
    assert not (tmp_path / "o").exists()


def test_sweep_run_count_is_checked_before_expanding(capsys, tmp_path: Path):
    with pytest.raises(SweepError, match=r"100,000,000 runs .* above the limit of 100,000"):
        load_spec(spec_text(seeds=100_000_000))
    many = spec_text() + '\n[overrides]\n"flow.0.fps" = [' + ", ".join(["30"] * 2000) + "]\n"
    many = many.replace('controllers = ["fixed"]', 'controllers = ["fixed"] \n')
    many = many.replace("seeds = 2", "seeds = 1000")
    with pytest.raises(SweepError, match=r"2,000,000 runs \(.*2000 flow.0.fps x 1000 seed\)"):
        load_spec(many)
    assert len(load_spec(spec_text(seeds=3), max_runs=3).runs) == 3
    spec = tmp_path / "s.toml"
    spec.write_text(spec_text(seeds=3))
    code, _, err = run(capsys, "sweep", spec, "--max-runs", "2", "--out", tmp_path / "o")
    one_line_error(code, err, "3 runs", "limit of 2 runs", "--max-runs")
    assert not (tmp_path / "o").exists()


# --- 3. output folders and writes ----------------------------------------------------


def test_unusable_out_is_refused_before_simulating(
    capsys, tmp_path: Path, short_scenario, monkeypatch
):
    def boom(*_a, **_k):
        raise AssertionError("simulated before checking --out")

    monkeypatch.setattr(rtcc, "simulate", boom)
    a_file = tmp_path / "file"
    a_file.write_text("x")
    code, _, err = run(capsys, "run", short_scenario, "--out", a_file)
    one_line_error(code, err, str(a_file), "not a directory")
    code, _, err = run(capsys, "run", short_scenario, "--out", a_file / "sub" / "dir")
    one_line_error(code, err, str(a_file), "not a directory")

    def read_only(*_a, **_k):
        raise PermissionError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(limits.tempfile, "mkstemp", read_only)
    code, _, err = run(capsys, "run", short_scenario, "--out", tmp_path / "new")
    one_line_error(code, err, str(tmp_path), "cannot create files in", "Read-only file system")


def _full_disk_after(n: int):
    def write(path: Path, raw: bytes) -> None:
        with path.open("wb") as f:
            f.write(raw[:n])  # part of it reaches the disk, then the disk is full
        raise OSError(errno.ENOSPC, "No space left on device")

    return write


def test_full_disk_names_the_file_and_leaves_no_partial_file(
    capsys, tmp_path: Path, short_scenario, monkeypatch
):
    result = rtcc.simulate(short_scenario)
    out = tmp_path / "res"
    with pytest.MonkeyPatch.context() as patch, pytest.raises(OSError) as caught:
        patch.setattr(limits, "_write", _full_disk_after(10))
        result.save(out, plots=False)
    assert caught.value.errno == errno.ENOSPC
    assert caught.value.filename == str(out / "summary.json")
    assert list(out.iterdir()) == []  # no truncated summary, no temporary file

    import pandas as pd
    import pyarrow.parquet as pq

    def parquet_full(self, *_a, **_k):
        raise OSError(errno.ENOSPC, "No space left on device")

    # `rtcc run` writes its tables while the run goes on, a Result's save at the end.
    monkeypatch.setattr(pq.ParquetWriter, "write_table", parquet_full)
    out2 = tmp_path / "res2"
    code, _, err = run(capsys, "run", short_scenario, "--out", out2, "--no-plots")
    one_line_error(code, err, str(out2 / "packets.parquet"), "No space left")
    assert list(out2.iterdir()) == []

    def frame_full(self, path, **_k):
        Path(path).write_bytes(b"PAR1 half")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(pd.DataFrame, "to_parquet", frame_full)
    out3 = tmp_path / "res3"
    with pytest.raises(OSError) as caught:
        result.save(out3, plots=False)
    assert caught.value.filename == str(out3 / "packets.parquet")
    assert sorted(p.name for p in out3.iterdir()) == ["summary.json"]


def test_atomic_write_replaces_whole_files(tmp_path: Path):
    path = tmp_path / "a.txt"
    limits.write_atomic(path, "old")
    limits.write_atomic(path, b"new")
    assert path.read_bytes() == b"new"
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]


# --- 4. one sweep per folder ---------------------------------------------------------


def test_one_folder_holds_one_sweep(tmp_path: Path):
    out = tmp_path / "out"
    first = rtcc.sweep(spec_text(name="first"), out=out, jobs=1)
    assert len(first) == 2
    with pytest.raises(SweepError, match=r"holds sweep 'first'.*one folder holds one sweep"):
        rtcc.sweep(spec_text(name="second"), out=out, jobs=1)
    assert (out / "table.csv").read_text().count("\n") == 3  # still the first sweep's
    # The same sweep extended (one more seed) reuses its cached runs.
    again = rtcc.sweep(spec_text(name="first", seeds=3), out=out, jobs=1)
    assert (again.attrs["cached"], again.attrs["executed"]) == (2, 1)
    # The same sweep given as a file (its name, not its file, is what counts).
    a = tmp_path / "a.toml"
    a.write_text(spec_text(name="first", seeds=3))
    assert rtcc.sweep(a, out=out, jobs=1).attrs["cached"] == 3
    assert (out / "table.csv").read_text().count("\n") == 4
    # A sweep named after its file: another file is another sweep.
    b = tmp_path / "b.toml"
    b.write_text(spec_text().replace('name = "small"\n', ""))
    with pytest.raises(SweepError, match=r"holds sweep 'first' \(from .*a.toml\), not 'b'"):
        rtcc.sweep(b, out=out, jobs=1)


def test_a_second_writer_is_refused_while_a_sweep_runs(capsys, tmp_path: Path):
    out = tmp_path / "out"
    out.mkdir()
    fd = os.open(out / "sweep.lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # another process's sweep
        os.write(fd, b"4242")
        with pytest.raises(SweepError, match=r"another sweep is writing .*process 4242"):
            rtcc.sweep(spec_text(), out=out, jobs=1)
        assert not (out / "table.csv").exists()
    finally:
        os.close(fd)
    assert len(rtcc.sweep(spec_text(), out=out, jobs=1)) == 2  # free again


# --- 5. Python API arguments ---------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "needle"),
    [
        ({"source": 5}, TypeError, "source must be a string"),
        ({"seed": True}, TypeError, "seed must be an integer"),
        ({"seed": 1.5}, TypeError, "seed must be an integer"),
        ({"seed": "3"}, TypeError, "seed must be an integer"),
        ({"seed": -1}, ValueError, "seed must be in 0"),
        ({"seed": 2**64}, ValueError, "seed must be in 0"),
        ({"record_packets": "no"}, TypeError, "record_packets"),
        ({"progress": "yes"}, TypeError, "progress"),
        ({"save_video": 3}, TypeError, "save_video"),
    ],
)
def test_simulate_argument_types(short_scenario: Path, kwargs, error, needle):
    with pytest.raises(error, match=needle):
        rtcc.simulate(short_scenario, **kwargs)


def test_simulate_accepts_numpy_seeds(short_scenario: Path):
    import numpy as np

    assert rtcc.simulate(short_scenario, seed=np.uint64(5)).seed == 5


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [({"jobs": "2"}, "jobs must be a whole number"), ({"jobs": True}, "jobs"),
     ({"fresh": "yes"}, "fresh"), ({"out": 5}, "out must be a folder")],
)  # fmt: skip
def test_sweep_argument_types(kwargs, needle):
    with pytest.raises(TypeError, match=needle):
        rtcc.sweep(spec_text(), **kwargs)


# --- 6. sweep axes naming flows that do not exist ------------------------------------


def test_controller_flows_must_name_existing_flows(capsys, tmp_path: Path):
    text = spec_text().replace("seeds = 2", "seeds = 2\ncontroller_flows = [5]")
    with pytest.raises(SweepError, match=r"controller_flows: flow 5 does not exist.* 1 flow "):
        load_spec(text)
    spec = tmp_path / "s.toml"
    spec.write_text(text)
    code, _, err = run(capsys, "sweep", spec, "--out", tmp_path / "o")
    one_line_error(code, err, "controller_flows", "flow 5", "1 flow")
    assert len(load_spec(text.replace("[5]", "[0]")).runs) == 2
