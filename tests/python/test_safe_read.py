"""Every reader of results reads a regular file of bounded size: a summary or run record
linked to /dev/zero, a FIFO, a folder or a huge file is refused in one line naming it,
before anything is read (and without waiting on the FIFO); a results folder that cannot
be written says why in the system's own words."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pandas as pd
import pytest

from conftest import one_line_error, requires_native, run_main
from rtcc import safeio
from rtcc.result import Result
from rtcc.runset import RunsError, load_runs

SUMMARY = {"scenario": "s", "flows": [{"name": "call", "controller": "gcc", "utilization": 0.5}]}


def hostile(path: Path, kind: str) -> str:
    """Make ``path`` a hostile entry; the words its refusal must hold."""
    if kind == "zero":
        os.symlink("/dev/zero", path)
        return "a device (through a symbolic link), not a regular file"
    if kind == "fifo":
        os.mkfifo(path)
        return "a FIFO (named pipe), not a regular file"
    if kind == "folder":
        path.mkdir()
        return "a folder, not a regular file"
    # Sparse: above the limit without using the disk.
    with path.open("wb") as f:
        f.truncate(safeio.MAX_RECORD_BYTES + 1)
    return f"{safeio.MAX_RECORD_BYTES + 1:,} bytes, above the 256 MiB limit"


KINDS = ("zero", "fifo", "folder", "huge")


@pytest.mark.parametrize("kind", KINDS)
def test_the_helper_refuses_before_reading(tmp_path: Path, kind: str):
    path = tmp_path / "summary.json"
    needle = hostile(path, kind)
    for read in (safeio.read_bytes, safeio.read_json):
        with pytest.raises(safeio.ReadError, match="^" + str(path) + ": ") as caught:
            read(path)
        assert needle in str(caught.value)
    with pytest.raises(safeio.ReadError, match="not a regular file|limit"):
        safeio.check_file(path, safeio.MAX_RECORD_BYTES)


def test_the_helper_reads_what_it_should(tmp_path: Path):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(SUMMARY))
    os.symlink(path, tmp_path / "link.json")  # a link to a regular file is read
    assert safeio.read_json(tmp_path / "link.json") == SUMMARY
    with pytest.raises(safeio.ReadError, match="above the 10 bytes limit"):
        safeio.read_bytes(path, limit=10)
    with pytest.raises(safeio.ReadError, match=r"nope.json: no such file$"):
        safeio.read_bytes(tmp_path / "nope.json")
    path.write_bytes(b"\xff{}")
    with pytest.raises(safeio.ReadError, match="not UTF-8 text"):
        safeio.read_json(path)
    path.write_text("[" * 100_000)
    with pytest.raises(safeio.ReadError, match="not readable JSON"):
        safeio.read_json(path)


@pytest.mark.parametrize("kind", KINDS)
def test_report_refuses_a_hostile_summary(capsys, tmp_path: Path, kind: str):
    run = tmp_path / "run"
    run.mkdir()
    needle = hostile(run / "summary.json", kind)
    code, out, err = run_main(capsys, "report", run, "--out", tmp_path / "page.html")
    one_line_error(code, err, str(run / "summary.json"), needle)
    assert out == "" and not (tmp_path / "page.html").exists()
    with pytest.raises(ValueError, match=re.escape(needle)):
        Result.load(run)


@pytest.mark.parametrize("kind", ["zero", "fifo"])
def test_a_hostile_timing_file_is_refused(capsys, tmp_path: Path, kind: str):
    run = tmp_path / "run"
    run.mkdir()
    (run / "summary.json").write_text(json.dumps(SUMMARY))
    needle = hostile(run / "timing.json", kind)
    code, out, err = run_main(capsys, "fairness", run)
    one_line_error(code, err, str(run / "timing.json"), needle)
    assert out == ""
    with pytest.raises(safeio.ReadError, match=re.escape(needle)):
        Result.load(run)


@pytest.mark.parametrize("kind", KINDS)
def test_report_refuses_a_hostile_run_record_or_table(capsys, tmp_path: Path, kind: str):
    sweep = tmp_path / "sweep"
    (sweep / "runs").mkdir(parents=True)
    row = {"scenario": "s", "controller": "gcc", "seed": 1, "flow_name": "call", "run": "k"}
    pd.DataFrame([row]).to_csv(sweep / "table.csv", index=False)
    record = sweep / "runs" / "k.json"
    needle = hostile(record, kind)
    code, _, err = run_main(capsys, "report", sweep, "--out", tmp_path / "page.html")
    one_line_error(code, err, str(record), needle)
    # The table itself.
    (sweep / "table.csv").unlink()
    if kind == "huge":  # the table's limit is its own
        with (sweep / "table.csv").open("wb") as f:
            f.truncate(safeio.MAX_TABLE_BYTES + 1)
        needle = "above the 2 GiB limit"
    else:
        hostile(sweep / "table.csv", kind)
    with pytest.raises(RunsError, match=re.escape(needle)) as caught:
        load_runs([sweep])
    assert str(sweep / "table.csv") in str(caught.value)


def test_a_run_folder_table_that_is_not_a_file_is_refused(tmp_path: Path):
    from rtcc.runset import load_distributions

    run = tmp_path / "run"
    run.mkdir()
    (run / "summary.json").write_text(json.dumps(SUMMARY))
    os.mkfifo(run / "frames.parquet")
    runs = load_runs([run])
    with pytest.raises(RunsError, match=r"frames.parquet: a FIFO \(named pipe\)"):
        load_distributions(runs)
    with pytest.raises(safeio.ReadError, match=r"frames.parquet: a FIFO"):
        Result.load(run).table("frames")


@requires_native
@pytest.mark.parametrize("command", ["run", "sweep"])
def test_an_unwritable_out_gives_the_system_reason(capsys, tmp_path: Path, command: str):
    spec = tmp_path / "spec.toml"
    spec.write_text(
        'name = "x"\ncontrollers = ["gcc"]\n\n[base]\nduration = "1s"\n\n'
        '[base.link]\ncapacity = "1Mbps"\n\n[[base.flow]]\nname = "call"\n'
    )
    given = [spec] if command == "sweep" else []
    # /proc/1 exists: the failure is creating a file there, and its reason is the kernel's.
    code, _, err = run_main(capsys, command, *given, "--out", "/proc/1/nope", "-q")
    line = one_line_error(
        code, err, "--out /proc/1/nope: cannot create files in /proc/1, which exists (the OS says: "
    )
    assert "/proc/1: no such file" not in line
    try:
        os.mkdir("/proc/1/nope")
    except OSError as exc:
        assert line.endswith(f"(the OS says: {os.strerror(exc.errno)})")
    (tmp_path / "file").write_text("x")
    code, _, err = run_main(capsys, command, *given, "--out", tmp_path / "file" / "o", "-q")
    one_line_error(code, err, f"--out {tmp_path / 'file' / 'o'}: {tmp_path / 'file'} is not a")
