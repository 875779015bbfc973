"""`rtcc query` reads the dataset's own files and nothing else: no file outside it read or
written, no network, no configuration change; --out is the only file written; a damaged
batch, an interrupt and control characters in values each end in one plain line."""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import rtcc
from conftest import one_line_error, run_main
from rtcc import dataset
from rtcc.dataset import DatasetError

pytest.importorskip("duckdb")

ESC = "\x1b"


def make_dataset(folder: Path, schemes: tuple[str, ...] = ("gcc", "bbr")) -> Path:
    """A dataset written by hand: its marker and one runs batch of one row per scheme."""
    (folder / "runs" / "study=s").mkdir(parents=True)
    (folder / dataset.MARKER).write_text(
        json.dumps({"format": "rtcc-dataset", "version": 1, "tables": ["runs", "timeseries"]})
    )
    table = pa.table(
        {
            "run": [f"r{i}" for i in range(len(schemes))],
            "labels": ["{}"] * len(schemes),
            "flow": pa.array([0] * len(schemes), pa.int32()),
            "scheme": list(schemes),
            "utilization": [0.5 + i / 10 for i in range(len(schemes))],
        }
    )
    pq.write_table(table, folder / "runs" / "study=s" / "a.parquet")
    return folder


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return make_dataset(tmp_path / "ds")


def test_the_dataset_is_read(data: Path):
    got = rtcc.query("SELECT scheme, utilization FROM runs ORDER BY scheme", dataset=data)
    assert got["scheme"].tolist() == ["bbr", "gcc"]
    assert rtcc.query("DESCRIBE runs", dataset=data)["column_name"].tolist()[0] == "study"
    # CALL of a table function reads as SELECT * FROM it does.
    assert rtcc.query("CALL pragma_version()", dataset=data)["library_version"][0].startswith("v")
    assert rtcc.query("CALL query_table('runs')", dataset=data)["scheme"].tolist() == ["gcc", "bbr"]


@pytest.mark.parametrize(
    ("sql", "needle"),
    [
        ("COPY (SELECT 1) TO '{tmp}/out.csv'", "COPY refused"),
        ("COPY runs TO '{data}/dataset.json' (FORMAT csv)", "COPY refused"),
        # A view's own file is an allowed path to DuckDB: only the statement check stops this.
        ("COPY (SELECT 5 AS flow) TO '{batch}' (FORMAT parquet, USE_TMP_FILE false)", "COPY"),
        ("SELECT 1; COPY (SELECT 1) TO '{tmp}/out.csv'", "COPY refused"),
        ("EXPLAIN ANALYZE COPY (SELECT 1) TO '{tmp}/out.csv'", "COPY refused"),
        ("EXPORT DATABASE '{tmp}/exported'", "EXPORT refused"),
        ("INSTALL httpfs", "INSTALL refused"),
        ("LOAD httpfs", "LOAD refused"),
        ("SET enable_external_access = true", "SET refused: a setting change"),
        # DuckDB types this SET: the refusal says so rather than list PRAGMA as allowed.
        ("PRAGMA threads=64", "PRAGMA refused: a setting change (SET, RESET, USE, PRAGMA x=...)"),
        ("RESET threads", "RESET refused: a setting change"),
        ("ATTACH '{tmp}/other.duckdb'", "ATTACH refused"),
        ("SELECT * FROM read_csv('/etc/passwd')", '"/etc/passwd"'),
        ("CALL read_csv('/etc/passwd')", '"/etc/passwd"'),  # CALL is sandboxed as SELECT
        ("CALL glob('{tmp}/*')", "file system operations are disabled"),
        ("SELECT * FROM read_text('/etc/hostname')", '"/etc/hostname"'),
        ("SELECT * FROM glob('{tmp}/*')", "file system operations are disabled"),
        ("SELECT * FROM read_parquet('https://example.com/x.parquet')", "example.com"),
    ],
)
def test_every_way_out_of_the_dataset_is_one_line(capsys, tmp_path: Path, data: Path, sql, needle):
    before = sorted(tmp_path.rglob("*"))
    batch = data / "runs" / "study=s" / "a.parquet"
    files = {p: p.read_bytes() for p in (data / dataset.MARKER, batch)}
    text = sql.format(tmp=tmp_path, data=data, batch=batch)
    code, out, err = run_main(capsys, "query", text, "--dataset", data)
    assert out == ""
    one_line_error(code, err, "query: ", needle)
    with pytest.raises(DatasetError, match="^query: "):
        rtcc.query(text, dataset=data)
    assert sorted(tmp_path.rglob("*")) == before  # nothing written, nothing removed
    assert {p: p.read_bytes() for p in files} == files


@pytest.mark.parametrize(
    "sql",
    [
        "COPY (SELECT 1) TO '{tmp}/out.csv'",
        "SELECT * FROM read_csv('/etc/passwd')",
        "INSTALL httpfs",
        "LOAD httpfs",
        "SET enable_external_access = true",
        "SET memory_limit = '1GB'",
        "ATTACH '{tmp}/other.duckdb'",
        "SELECT * FROM sniff_csv('/etc/passwd')",
    ],
)
def test_the_connection_itself_refuses_them(tmp_path: Path, data: Path, sql: str):
    """The statement check aside, DuckDB's own sandbox holds: the views' files are the only
    paths it opens (a view's file stays writable to it: the statement check covers that),
    and the configuration is locked."""
    import duckdb

    file = next((data / "runs").rglob("*.parquet"))
    original = file.read_bytes()
    con = dataset.connect(data)
    try:
        with pytest.raises(duckdb.Error, match="disabled|locked|Permission"):
            con.execute(sql.format(file=file, tmp=tmp_path))
        assert len(con.execute("SELECT * FROM runs").fetchall()) == 2  # still reads its own
    finally:
        con.close()
    assert file.read_bytes() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds"]


def test_out_is_the_only_file_written(capsys, tmp_path: Path, data: Path):
    sql = "SELECT scheme, utilization FROM runs ORDER BY scheme"
    code, out, err = run_main(capsys, "query", sql, "--dataset", data, "--out", tmp_path / "r.csv")
    assert code == 0, err
    assert out == "result: " + str(tmp_path / "r.csv") + " (2 rows)\n"
    assert pd.read_csv(tmp_path / "r.csv")["scheme"].tolist() == ["bbr", "gcc"]
    rtcc.query(sql, dataset=data, out=tmp_path / "r.parquet")
    assert pd.read_parquet(tmp_path / "r.parquet")["scheme"].tolist() == ["bbr", "gcc"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds", "r.csv", "r.parquet"]
    for target, needle in (
        (tmp_path / "r.txt", "give a file ending in .csv or .parquet"),
        (data / "runs" / "study=s" / "b.parquet", "inside the dataset"),
        (tmp_path, "give a file ending in"),
        (Path("/proc/1/r.csv"), "cannot create files in /proc/1, which exists (the OS says: "),
    ):
        code, out, err = run_main(capsys, "query", sql, "--dataset", data, "--out", target)
        one_line_error(code, err, f"--out {target}", needle)
    assert not (data / "runs" / "study=s" / "b.parquet").exists()


def test_a_damaged_batch_is_named_in_one_line(capsys, tmp_path: Path, data: Path):
    bad = data / "runs" / "study=s" / "b.parquet"
    bad.write_bytes(b"PAR1 this is not a parquet file")
    code, _, err = run_main(capsys, "query", "SELECT count(*) FROM runs", "--dataset", data)
    one_line_error(code, err, f"{bad}: not a Parquet file")
    # Both marks in place, the footer garbage: DuckDB's own error, still naming the file.
    bad.write_bytes(b"PAR1" + b"\x00" * 64 + b"\x10\x00\x00\x00PAR1")
    code, _, err = run_main(capsys, "query", "SELECT count(*) FROM runs", "--dataset", data)
    one_line_error(code, err, f"{bad}: unreadable Parquet")
    bad.unlink()
    os.symlink("/dev/zero", bad)
    code, _, err = run_main(capsys, "query", "SELECT count(*) FROM runs", "--dataset", data)
    one_line_error(code, err, f"{bad}: a device (through a symbolic link)")


def test_control_characters_are_escaped_on_a_terminal(capsys, data: Path, monkeypatch):
    sql = "SELECT 'red' || chr(27) || '[31m' || chr(13) || chr(7) AS \"x" + ESC + "y\""
    code, out, _ = run_main(capsys, "query", sql, "--dataset", data)
    assert code == 0 and ESC not in out and "\r" not in out and "\x07" not in out
    assert "red\\x1b[31m\\x0d\\x07" in out and "x\\x1by" in out
    # --csv: escaped on a terminal (newlines too: a row is one line), exact through a pipe.
    sql = "SELECT 'a' || chr(10) || 'b' || chr(27) AS v, 1 AS n"
    code, out, _ = run_main(capsys, "query", sql, "--dataset", data, "--csv")
    assert out == 'v,n\n"a\nb' + ESC + '",1\n'
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    code, out, _ = run_main(capsys, "query", sql, "--dataset", data, "--csv")
    assert out == "v,n\na\\x0ab\\x1b,1\n"
    # An error echoing the query's text is escaped as well.
    code, _, err = run_main(capsys, "query", "SELECT nope" + ESC + "x FROM runs", "--dataset", data)
    assert ESC not in one_line_error(code, err, "nope\\x1bx")


def test_sigint_interrupts_a_long_query(capsys, data: Path):
    """The handler the query installs calls DuckDB's interrupt; main says one line, 130."""
    sql = "SELECT count(*) FROM range(1000000000000) a"
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        code, out, err = run_main(capsys, "query", sql, "--dataset", data)
    finally:
        timer.cancel()
    assert (code, out, err) == (130, "", "rtcc: interrupted\n")
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # put back


def test_no_dataset_here_says_to_pass_dataset(capsys, tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = run_main(capsys, "query", "SELECT 1")
    one_line_error(code, err, "no ./results folder", "pass --dataset DIR")
    (tmp_path / "results").mkdir()
    code, _, err = run_main(capsys, "query", "SELECT 1")
    one_line_error(code, err, "holds no rtcc dataset", "pass --dataset DIR")
    make_dataset(tmp_path / "results" / "ds")
    code, out, err = run_main(capsys, "query", "SELECT count(*) AS n FROM runs")
    assert code == 0 and out.splitlines()[2].strip() == "2", err
