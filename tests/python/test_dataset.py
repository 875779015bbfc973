"""The results dataset: one row per flow per run, series beside them, DuckDB queries,
two writers, and resumed or repeated sweeps adding nothing twice."""

from __future__ import annotations

import subprocess
import sys
from io import StringIO
from pathlib import Path

import pandas as pd
import pytest

import rtcc
from conftest import requires_native, subprocess_env
from rtcc import dataset
from rtcc.dataset import DatasetError

pytestmark = requires_native

# A call and a Cubic flow: two rows per run, the second with TCP's text fields.
SPEC = """\
name = "pair"
controllers = ["gcc", { name = "fixed", rate = "1Mbps", label = "fixed-1M" }]
traces = ["3Mbps", "2Mbps"]
seeds = [1, 2]
series = true
controller_flows = [0]

[base]
name = "pair"
duration = "3s"

[base.link]
capacity = "3Mbps"
delay = "20ms"
queue = "unlimited"

[[base.flow]]
name = "call"
controller = "gcc"
encoder = "ideal"

[[base.flow]]
name = "bulk"
kind = "tcp"
cc = "cubic"
start = "1s"

[overrides]
"link.delay" = ["10ms", "40ms"]
"""
RUNS = 2 * 2 * 2 * 2  # controllers x traces x delays x seeds
FLOWS = 2


def sweep(tmp_path: Path, name: str = "pair", text: str = SPEC, **kwargs):
    out = tmp_path / name
    return rtcc.sweep(text.replace('name = "pair"', f'name = "{name}"', 1), out=out, **kwargs)


def test_one_row_per_flow_per_run_with_labels_and_series(tmp_path: Path):
    table = sweep(tmp_path, jobs=2)
    assert table.attrs["appended"] == RUNS * FLOWS
    assert table.attrs["dataset"] == str(tmp_path / "pair" / "dataset")
    rows = rtcc.query("SELECT * FROM runs ORDER BY run, flow", dataset=tmp_path)
    assert len(rows) == RUNS * FLOWS
    assert list(rows.columns[:10]) == [
        "study", "experiment", "scheme", "trace", "seed", "run", "flow", "flow_name", "kind",
        "controller",
    ]  # fmt: skip
    assert set(rows["study"]) == {"pair"} and set(rows["experiment"]) == {"pair"}
    assert rows.groupby("run")["flow_name"].apply(list).map(tuple).unique().tolist() == [
        ("call", "bulk")
    ]
    assert set(rows.loc[rows["flow"] == 1, "cc"]) == {"cubic"}
    # The first flow's metrics are the sweep table's, run by run.
    first = rows[rows["flow"] == 0].set_index("run")
    for _, row in table.iterrows():
        mine = first.loc[row["run"]]
        assert (mine["scheme"], mine["trace"], mine["seed"]) == (
            row["controller"], row["trace"], row["seed"],
        )  # fmt: skip
        for metric in ("utilization", "frame_latency_ms_mean", "video_kbps", "loss_rate"):
            assert mine[metric] == pytest.approx(row[metric], nan_ok=True)
    # Override axes live in the labels, as JSON.
    delays = rtcc.query(
        """SELECT labels->>'$."link.delay"' AS delay, count(*) AS n FROM runs
           GROUP BY ALL ORDER BY delay""",
        dataset=tmp_path / "pair" / "dataset",
    )
    assert delays.to_dict("list") == {"delay": ["10ms", "40ms"], "n": [16, 16]}
    # Series: only the first flow is analysed (flows = "first"), one row per 100 ms bin.
    bins = rtcc.query(
        "SELECT run, flow, count(*) AS n, max(t_s) AS end_s FROM timeseries GROUP BY ALL",
        dataset=tmp_path,
    )
    assert len(bins) == RUNS and set(bins["flow"]) == {0}
    assert set(bins["n"]) == {30} and set(bins["end_s"]) == {3.0}
    joined = rtcc.query(
        "SELECT r.scheme, avg(t.recv_kbps) AS kbps FROM timeseries t "
        "JOIN runs r USING (study, run, flow) GROUP BY ALL ORDER BY r.scheme",
        dataset=tmp_path,
    )
    assert list(joined["scheme"]) == ["fixed-1M", "gcc"]


def test_queries_agree_with_pandas(tmp_path: Path):
    table = sweep(tmp_path, jobs=2)
    sql = (
        "SELECT scheme, trace, avg(utilization) AS u, max(frame_latency_ms_p95) AS p95 "
        "FROM runs WHERE flow = 0 GROUP BY ALL ORDER BY scheme, trace"
    )
    got = rtcc.query(sql, dataset=tmp_path / "pair" / "dataset")
    want = (
        table.groupby(["controller", "trace"], as_index=False)
        .agg(u=("utilization", "mean"), p95=("frame_latency_ms_p95", "max"))
        .rename(columns={"controller": "scheme"})
        .sort_values(["scheme", "trace"], ignore_index=True)
    )
    pd.testing.assert_frame_equal(got, want, check_dtype=False)


def test_repeated_extended_and_resumed_sweeps_add_nothing_twice(tmp_path: Path):
    first = sweep(tmp_path, jobs=2)
    again = sweep(tmp_path, jobs=2)
    assert (again.attrs["cached"], again.attrs["appended"]) == (RUNS, 0)
    # One more seed: only the new runs are added.
    more = sweep(tmp_path, text=SPEC.replace("seeds = [1, 2]", "seeds = [1, 2, 3]"), jobs=2)
    assert more.attrs["appended"] == RUNS // 2 * FLOWS
    count = "SELECT count(*) AS n, count(DISTINCT run) AS runs FROM runs"
    found = rtcc.query(count, dataset=tmp_path).iloc[0].tolist()
    assert found == [RUNS * 3 // 2 * FLOWS, RUNS * 3 // 2]
    # A sweep interrupted before it appended: its cached runs are added by the next one.
    out = tmp_path / "pair"
    for batch in (out / "dataset").rglob("*.parquet"):
        batch.unlink()
    resumed = sweep(tmp_path, jobs=2)
    assert (resumed.attrs["executed"], resumed.attrs["appended"]) == (0, RUNS * FLOWS)
    assert len(first) == RUNS


def test_two_writers_share_one_dataset(tmp_path: Path):
    shared = tmp_path / "shared"
    video_only = SPEC.split('[[base.flow]]\nname = "bulk"')[0]
    video_only += '[overrides]\n"link.delay" = "5ms"\n'
    specs = {"pair": SPEC, "alone": video_only.replace('name = "pair"', 'name = "alone"', 1)}
    procs = []
    for name, text in specs.items():
        path = tmp_path / f"{name}.toml"
        path.write_text(text, encoding="utf-8")
        command = ["sweep", path, "--out", tmp_path / name, "--dataset", shared, "-j", "1", "-q"]
        procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "rtcc", *map(str, command)],
                env=subprocess_env(),
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    for proc in procs:
        assert proc.wait(timeout=300) == 0, proc.stderr.read() if proc.stderr else ""
    counts = rtcc.query(
        "SELECT study, count(*) AS n, count(cc) AS tcp FROM runs GROUP BY ALL ORDER BY study",
        dataset=shared,
    )
    assert counts.to_dict("list") == {
        "study": ["alone", "pair"], "n": [RUNS // 2, RUNS * FLOWS], "tcp": [0, RUNS],
    }  # fmt: skip
    files = sorted(p.relative_to(shared).as_posix() for p in shared.rglob("*") if p.is_file())
    assert not [f for f in files if f.endswith(".tmp")]
    assert len([f for f in files if f.startswith("runs/")]) == 2  # one batch per sweep
    assert not (tmp_path / "pair" / "dataset").exists()  # --dataset replaces OUT/dataset


def test_a_race_on_the_same_run_shows_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    sweep(tmp_path, jobs=2)
    folder = tmp_path / "pair" / "dataset"
    # Two writers that both found the runs missing: the second batch repeats the first.
    monkeypatch.setattr(dataset, "_identities", lambda _folder: set())
    again = sweep(tmp_path, jobs=2)
    assert again.attrs["appended"] == RUNS * FLOWS
    assert len(list((folder / "runs").rglob("*.parquet"))) == 2
    rows = rtcc.query("SELECT count(*) AS n FROM runs", dataset=folder)
    assert rows["n"].item() == RUNS * FLOWS
    bins = rtcc.query("SELECT count(*) AS n FROM timeseries", dataset=folder)
    assert bins["n"].item() == RUNS * 30


def test_cli_query_prints_a_table_and_csv(run_cli, tmp_path: Path):
    sweep(tmp_path, jobs=2)
    sql = "SELECT scheme, count(*) AS rows, avg(utilization) AS u FROM runs GROUP BY ALL ORDER BY 1"
    done = run_cli("query", sql, "--dataset", tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["scheme", "rows", "u"] and lines[-1] == "(2 rows)"
    assert lines[2].split()[:2] == ["fixed-1M", str(RUNS // 2 * FLOWS)]
    csv = run_cli("query", sql, "--dataset", tmp_path, "--csv")
    frame = pd.read_csv(StringIO(csv.stdout))
    pd.testing.assert_frame_equal(frame, rtcc.query(sql, dataset=tmp_path), check_dtype=False)
    # Without --dataset: every dataset under ./results.
    (tmp_path / "results").mkdir()
    (tmp_path / "pair").rename(tmp_path / "results" / "pair")
    default = run_cli("query", "SELECT count(*) AS n FROM runs", cwd=tmp_path)
    assert default.stdout.splitlines()[2].strip() == str(RUNS * FLOWS)


@pytest.mark.parametrize(
    ("sql", "needle"),
    [
        ("SELEC 1", 'Parser Error: syntax error at or near "SELEC"'),
        ("SELECT nope FROM runs", 'Referenced column "nope" not found'),
        ("SELECT * FROM elsewhere", "elsewhere"),
        ("", "no SQL statement in it"),
        ("  -- a comment alone\n", "no SQL statement in it"),
    ],
)
def test_bad_sql_is_one_line(run_cli, tmp_path: Path, sql: str, needle: str):
    sweep(tmp_path, jobs=2)
    done = run_cli("query", sql, "--dataset", tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1
    assert done.stderr.startswith("rtcc: error: query: ") and needle in done.stderr
    with pytest.raises(DatasetError, match=r"^query: "):
        rtcc.query(sql, dataset=tmp_path)


def test_datasets_are_found_checked_and_never_mixed_with_other_files(tmp_path: Path):
    with pytest.raises(DatasetError, match="no such folder"):
        rtcc.query("SELECT 1", dataset=tmp_path / "nope")
    with pytest.raises(DatasetError, match="holds no rtcc dataset"):
        rtcc.query("SELECT 1", dataset=tmp_path)
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "notes.txt").write_text("mine")
    with pytest.raises(DatasetError, match=r"not an rtcc dataset .* not empty"):
        sweep(tmp_path, dataset=tmp_path / "junk", jobs=1)
    assert not (tmp_path / "pair" / "runs").exists()  # refused before any run
    empty = tmp_path / "empty"
    (empty / "dataset").mkdir(parents=True)
    (empty / "dataset" / dataset.MARKER).write_text(
        '{"format": "rtcc-dataset", "version": 1}', encoding="utf-8"
    )
    assert rtcc.query("SELECT count(*) AS n FROM runs", dataset=empty)["n"].item() == 0
    (empty / "dataset" / dataset.MARKER).write_text('{"format": "rtcc-dataset", "version": 9}')
    with pytest.raises(DatasetError, match="version 9"):
        rtcc.query("SELECT 1", dataset=empty)
    # No dataset at all when asked for none.
    table = sweep(tmp_path, name="none", dataset=False, jobs=1)
    assert table.attrs["dataset"] is None and not (tmp_path / "none" / "dataset").exists()


def test_query_without_duckdb_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    sweep(tmp_path, name="few", text=SPEC.replace("seeds = [1, 2]", "seeds = [1]"), jobs=1)
    monkeypatch.setitem(sys.modules, "duckdb", None)  # import duckdb raises ImportError
    with pytest.raises(DatasetError, match=r"^querying the dataset needs DuckDB: pip install"):
        rtcc.query("SELECT 1", dataset=tmp_path)


def test_dataset_arguments_are_checked(tmp_path: Path):
    with pytest.raises(TypeError, match="dataset must be a folder path, None or False"):
        rtcc.sweep(SPEC, dataset=5)
    with pytest.raises(TypeError, match="sql must be text"):
        rtcc.query(5, dataset=tmp_path)
    with pytest.raises(TypeError, match="dataset must be a folder path or a list"):
        rtcc.query("SELECT 1", dataset=[5])
