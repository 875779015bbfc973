"""A reproduction holds its folder's lock (a sweep's, OUT/sweep.lock) while it writes: a
second reproduction or a sweep into the folder is refused at once in one line naming the
folder and the holder, and the lock is free again when the holder ends."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

import rtcc
from conftest import one_line_error, requires_native, run_main
from rtcc.reproduce import EXPERIMENTS, index
from rtcc.sweepspec import SweepError

SPEC = """\
name = "small"
controllers = ["gcc"]

[base]
duration = "1s"

[base.link]
capacity = "1Mbps"

[[base.flow]]
name = "call"
"""


@requires_native
def test_a_second_reproduction_into_a_locked_folder_is_refused(capsys, tmp_path: Path):
    out = tmp_path / "out"
    with index.lock(out, "fbra"):  # this process is the first reproduction
        code, stdout, err = run_main(capsys, "reproduce", "fbra", "--short", "--out", out, "-q")
        line = one_line_error(code, err, f"{out}: another reproduction (rtcc reproduce fbra)")
        assert f"(process {os.getpid()})" in line and "give another --out" in line
        assert stdout == "" and sorted(p.name for p in out.iterdir()) == ["sweep.lock"]
        # A sweep into it is refused the same way, naming the reproduction.
        with pytest.raises(SweepError, match=r"another reproduction \(rtcc reproduce fbra\)"):
            rtcc.sweep(SPEC, out=out, jobs=1)
    with index.lock(out, "fbra"):  # released: free again
        pass


@requires_native
def test_a_reproduction_is_refused_while_a_sweep_writes(capsys, tmp_path: Path):
    out = tmp_path / "out"
    out.mkdir()
    fd = os.open(out / "sweep.lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # another process's sweep
        os.write(fd, b"4242")  # the lock's first format: the holder's id alone
        code, _, err = run_main(capsys, "reproduce", "cross", "--short", "--out", out)
        one_line_error(code, err, f"{out}: another sweep is writing", "(process 4242)")
    finally:
        os.close(fd)


@requires_native
def test_reproduce_all_locks_each_paper_folder(capsys, tmp_path: Path):
    out = tmp_path / "all"
    first = next(iter(EXPERIMENTS))
    with index.lock(out / first, first):  # `rtcc reproduce FIRST --out all/FIRST` runs
        code, _, err = run_main(capsys, "reproduce", "all", "--short", "--out", out, "-q")
        one_line_error(code, err, f"{out / first}: another reproduction (rtcc reproduce {first})")
    with index.lock(out, "all"):  # and the top folder
        code, _, err = run_main(capsys, "reproduce", "all", "--short", "--out", out, "-q")
        one_line_error(code, err, f"{out}: another reproduction (rtcc reproduce all)")


def test_a_lock_that_is_not_a_file_is_refused_not_waited_on(tmp_path: Path):
    out = tmp_path / "out"
    out.mkdir()
    os.mkfifo(out / "sweep.lock")
    with pytest.raises(SweepError, match="sweep.lock: not a regular file; remove it"):
        index.lock(out, "fbra").__enter__()
    (out / "sweep.lock").unlink()
    os.symlink("/dev/zero", out / "sweep.lock")
    with pytest.raises(SweepError, match="sweep.lock: cannot be opened as a lock"):
        index.lock(out, "fbra").__enter__()
