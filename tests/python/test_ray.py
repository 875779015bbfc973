"""Sweeps on Ray (`--executor ray`): the same table and cache as the local pool, resuming
after the sweep's process is killed, files shipped to workers, a foreign build refused,
and one clear line without Ray."""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

import rtcc
from conftest import requires_native, subprocess_env
from rtcc import raypool
from rtcc.scenario import peek
from rtcc.sweepspec import Analysis, SweepError

try:
    import ray
except ImportError as exc:
    ray = None
    _RAY_ERROR = str(exc)
else:
    _RAY_ERROR = ""

# CI installs the ray extra and sets RTCC_REQUIRE_RAY=1: there these tests fail, not skip.
REQUIRED = bool(os.environ.get("RTCC_REQUIRE_RAY"))
needs_ray = pytest.mark.skipif(
    ray is None and not REQUIRED,
    reason=f"ray cannot be imported ({_RAY_ERROR}); pip install 'rtcc[ray]'",
)

RATES = ("500kbps", "1Mbps", "2Mbps", "4Mbps")
SEEDS = 18
FIXED = ", ".join(f'{{ name = "fixed", rate = "{r}", label = "fixed-{r}" }}' for r in RATES)
SPEC = f"""\
name = "many"
controllers = [{FIXED}]
traces = ["3Mbps", "1500kbps", "small.down"]
seeds = {SEEDS}

[base]
name = "tiny"
duration = "4s"

[base.link]
capacity = "3Mbps"
delay = "20ms"
queue = "unlimited"

[[base.flow]]
name = "call"
controller = "fixed"
encoder = "ideal"
"""
TOTAL = len(RATES) * 3 * SEEDS  # controllers x traces x seeds
# Fields that hold wall-clock time: the only ones two executors may disagree on.
WALL_CLOCK = ("wall_s", "speedup", "written_at")


def write_trace(path: Path, seconds: int = 4) -> Path:
    """A Mahimahi trace: one delivery opportunity per ms, two every third ms (~18 Mbps)."""
    lines = [str(ms) for ms in range(1, seconds * 1000 + 1) for _ in range(1 + (ms % 3 == 0))]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def spec(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("spec")
    write_trace(folder / "small.down")
    path = folder / "many.toml"
    path.write_text(SPEC, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A local Ray cluster of two worker processes for this module; yields its address."""
    if ray is None:
        pytest.fail(f"RTCC_REQUIRE_RAY is set but ray cannot be imported ({_RAY_ERROR})")
    ray.init(
        num_cpus=2, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False,
        object_store_memory=200 * 2**20,
    )  # fmt: skip
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def local(spec: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sweep on the local process pool: the reference."""
    out = tmp_path_factory.mktemp("local")
    table = rtcc.sweep(spec, out=out, jobs=2)
    assert (table.attrs["executed"], table.attrs["failed"]) == (TOTAL, 0)
    return out


def records(out: Path) -> dict[str, dict]:
    """Each cached run's record without its wall-clock fields."""
    found = {}
    for path in (out / "runs").glob("*.json"):
        record = json.loads(path.read_text(encoding="utf-8"))
        record.pop("wall_s")
        for key in WALL_CLOCK:
            record["summary"]["sim"].pop(key, None)
        found[path.name] = record
    return found


def dataset_rows(out: Path) -> pd.DataFrame:
    rows = rtcc.query("SELECT * FROM runs ORDER BY run, flow", dataset=out / "dataset")
    return rows.drop(columns=["wall_s", "written_at"])


@requires_native
@needs_ray
def test_ray_sweep_gives_the_local_pools_table(
    spec: Path, local: Path, cluster: str, tmp_path: Path
):
    out = tmp_path / "ray"
    table = rtcc.sweep(spec, out=out, executor="ray", address=cluster)
    assert (table.attrs["executed"], table.attrs["cached"], table.attrs["failed"]) == (TOTAL, 0, 0)
    assert TOTAL >= 200
    # Byte for byte: table.csv has no wall-clock field.
    assert (out / "table.csv").read_bytes() == (local / "table.csv").read_bytes()
    assert records(out) == records(local)  # the same keys, summaries and scenario texts
    pd.testing.assert_frame_equal(dataset_rows(out), dataset_rows(local))
    # A second sweep finds everything cached: no cluster work, nothing appended twice.
    again = rtcc.sweep(spec, out=out, executor="ray", address=cluster)
    assert (again.attrs["executed"], again.attrs["cached"], again.attrs["appended"]) == (
        0, TOTAL, 0,
    )  # fmt: skip


def cache_files(out: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in (out / "runs").glob("*.json")}


@requires_native
@needs_ray
def test_a_killed_ray_sweep_resumes_without_recomputing(
    spec: Path, local: Path, cluster: str, tmp_path: Path
):
    out = tmp_path / "killed"
    command = [sys.executable, "-m", "rtcc", "sweep", str(spec), "--out", str(out),
               "--executor", "ray", "--address", cluster]  # fmt: skip
    sweep = subprocess.Popen(
        [*command, "-q"], env=subprocess_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 120
    try:
        while len(cache_files(out) if (out / "runs").is_dir() else {}) < TOTAL // 5:
            assert sweep.poll() is None, sweep.communicate()
            assert time.monotonic() < deadline, "the sweep never got going"
            time.sleep(0.005)
    finally:
        sweep.send_signal(signal.SIGKILL)
        sweep.wait()
    assert sweep.returncode == -signal.SIGKILL
    finished = cache_files(out)
    assert TOTAL // 5 <= len(finished) < TOTAL, "killed midway"

    done = subprocess.run(command, env=subprocess_env(), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    counts = re.search(r"(\d+) runs: (\d+) simulated, (\d+) cached, (\d+) failed", done.stdout)
    assert counts is not None, done.stdout
    assert tuple(map(int, counts.groups())) == (TOTAL, TOTAL - len(finished), len(finished), 0)
    after = cache_files(out)
    assert {k: after[k] for k in finished} == finished  # none rewritten
    assert len(after) == TOTAL
    assert (out / "table.csv").read_bytes() == (local / "table.csv").read_bytes()
    # The killed sweep appended nothing; its restart appended every run once.
    assert f"({TOTAL} rows added)" in done.stdout
    pd.testing.assert_frame_equal(dataset_rows(out), dataset_rows(local))


@requires_native
@needs_ray
def test_files_reach_workers_that_cannot_see_them(cluster: str, tmp_path: Path):
    from rtcc import sweeprun

    folder = tmp_path / "scenario"
    folder.mkdir()
    write_trace(folder / "cell.down")
    text = SPEC_SCENARIO.replace("TRACE", "cell.down")
    source = str(folder / "call.toml")
    expected = rtcc.simulate(text, source=source, record_packets=False).summary
    shipper = raypool._Shipper(ray)
    shipped, files = shipper.prepare(text, source)
    assert len(files) == 1 and raypool._PLACEHOLDER in shipped
    (folder / "cell.down").unlink()  # the workers' copy now comes only from the object store
    remote = ray.remote(raypool._task)
    build = sweeprun._simulator_digest()
    key, record, error = ray.get(remote.remote("k", shipped, source, 1, Analysis(), files, build))
    assert error is None, error
    for what in (expected, record["summary"]):
        for key in WALL_CLOCK:
            what["sim"].pop(key, None)
    assert record["summary"] == expected
    digest = files[0][0]
    assert (raypool.shipped_root() / digest / "cell.down").is_file()
    # Without the shipped file the same task fails, naming the field: the copy was used.
    _, nothing, error = ray.get(remote.remote("k", text, source, 1, Analysis(), [], build))
    assert nothing is None and "link.capacity.file" in error


SPEC_SCENARIO = """\
name = "cell"
duration = "2s"
seed = 1

[link]
capacity = { kind = "trace", file = "TRACE" }
delay = "20ms"
queue = "unlimited"

[[flow]]
controller = { name = "fixed", rate = "1Mbps" }
encoder = "ideal"
"""


def test_every_file_field_is_shipped_and_built_in_profiles_are_not():
    scenario = {
        "link": {
            "capacity": {"kind": "trace", "file": "a.down"},
            "reverse_capacity": {"kind": "trace", "file": "b.up"},
        },
        "flow": [
            {
                "content": {"file": "clip.y4m", "photos": ["p1.png", "p2.png"]},
                "encoder": {"kind": "lagging", "profile": "mine.toml"},
                "quality": {"profile": "q.toml"},
            },
            {"encoder": {"kind": "lagging", "profile": "vp8"}, "quality": {"profile": "h264"}},
            {"encoder": {"kind": "content", "profile": "static"}, "content": {"kind": "game"}},
        ],
    }
    found = sorted(str(c[k]) for c, k in raypool.ship_fields(scenario))
    assert found == ["a.down", "b.up", "clip.y4m", "mine.toml", "p1.png", "p2.png", "q.toml"]


def test_materialized_paths_are_escaped_into_the_toml_string(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    odd = tmp_path / 'a "quoted" \\ folder'
    monkeypatch.setattr(raypool, "shipped_root", lambda: odd)
    text = f'file = "{raypool._PLACEHOLDER}/d1/x.down"\n'
    out = raypool.materialize(text, [("d1", "x.down", ["ref"])], lambda ref: b"1\n")
    assert Path(peek(out)["file"]) == odd / "d1" / "x.down"
    assert (odd / "d1" / "x.down").read_bytes() == b"1\n"


@requires_native
@needs_ray
def test_a_worker_of_another_build_is_refused(
    spec: Path, cluster: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from rtcc import sweeprun

    # This process now claims another build than the workers' native module.
    monkeypatch.setattr(sweeprun, "_simulator_digest", lambda: "another build")
    with pytest.raises(SweepError, match=r"Ray worker on .* runs another rtcc build"):
        rtcc.sweep(spec, out=tmp_path / "o", executor="ray", address=cluster)
    assert not list((tmp_path / "o" / "runs").glob("*.json"))


@requires_native
def test_without_ray_the_local_pool_works_and_ray_is_one_line(spec: Path, tmp_path: Path):
    shadow = tmp_path / "shadow" / "ray"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('No module named ray')\n")
    env = subprocess_env()
    env["PYTHONPATH"] = os.pathsep.join([str(shadow.parent), env["PYTHONPATH"]])
    cli = [sys.executable, "-m", "rtcc", "sweep", str(spec), "-q"]
    local = subprocess.run([*cli, "--out", tmp_path / "a"], env=env, capture_output=True)
    assert local.returncode == 0, local.stderr
    missing = subprocess.run(
        [*cli, "--out", tmp_path / "b", "--executor", "ray"], env=env, capture_output=True,
        text=True,
    )  # fmt: skip
    assert missing.returncode == 2
    assert missing.stderr == "rtcc: error: --executor ray needs Ray: pip install 'rtcc[ray]'\n"
    # A sweep found whole in the cache needs no cluster, hence no Ray.
    cached = subprocess.run(
        [*cli, "--out", tmp_path / "a", "--executor", "ray"], env=env, capture_output=True
    )
    assert cached.returncode == 0, cached.stderr


@needs_ray
@pytest.mark.parametrize(
    ("address", "reason"),
    [("junk", "not a Ray cluster address"), ("127.0.0.1:1", "no Ray cluster answers there")],
)
def test_a_bad_ray_address_from_the_environment_is_named_as_such(
    spec: Path, tmp_path: Path, address: str, reason: str
):
    done = subprocess.run(
        [sys.executable, "-m", "rtcc", "sweep", str(spec), "--out", str(tmp_path / "o"),
         "--executor", "ray"],
        env={**subprocess_env(), "RAY_ADDRESS": address}, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith(f"rtcc: error: RAY_ADDRESS {address}: {reason}")


def test_executor_arguments_are_checked():
    with pytest.raises(ValueError, match="executor must be 'local' or 'ray'"):
        rtcc.sweep(SPEC, executor="dask")
    with pytest.raises(ValueError, match=r"address: .* goes with executor 'ray'"):
        rtcc.sweep(SPEC, address="127.0.0.1:6379")
    with pytest.raises(TypeError, match="address must be"):
        rtcc.sweep(SPEC, executor="ray", address=6379)


@requires_native
@needs_ray
def test_a_reproduction_on_ray_matches_the_local_pool(cluster: str, tmp_path: Path):
    from rtcc.reproduce import fbra

    local = fbra.run(tmp_path / "local", 2, short=True)
    remote = fbra.run(tmp_path / "ray", short=True, executor="ray", address=cluster)
    assert sum(r.executed for r in remote.results.values()) == len(remote.table) > 0
    for name in ("table.csv", "summary.csv"):
        assert (tmp_path / "ray" / name).read_bytes() == (tmp_path / "local" / name).read_bytes()
    assert len(local.table) == len(remote.table)
