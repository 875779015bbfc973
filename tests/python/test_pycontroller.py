"""Controllers written in Python (rtcc.pycontrollers): registered by name, by `py:module:Class`
or by entry point; their parameters checked as a built-in's; one batched on_feedback per
report; user errors as one line naming the controller and method; runs on the process pool
and on Ray."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

import rtcc
from conftest import one_line_error, policy_scenario, requires_native, run_main, subprocess_env

pytestmark = requires_native

# The controller module the worker processes import, written to a temp dir on PYTHONPATH.
MODULE = '''\
import numpy as np

from rtcc.pycontrollers import Param


class Aimd:
    """AIMD on loss: additive increase per report, multiplicative decrease on loss"""

    params = [
        Param("increase", "20kbps", "added per report without loss"),
        Param("decrease", 0.85, "factor on a report with loss", min=0.1, max=1.0),
        Param("fail_at", -1.0, "raise in on_feedback from this time (s); negative: never"),
        Param("bad_rate_at", -1.0, "decide a negative rate from this time (s); negative: never"),
    ]

    def __init__(self, params, context):
        self.rate = context.start_bps
        self.low, self.high = context.min_bps, context.max_bps
        self.p = params
        self.reports = 0
        self.packets = 0
        self.bad = False

    def on_feedback(self, now_s, fb):
        if 0 <= self.p["fail_at"] <= now_s:
            raise ValueError("boom")
        if 0 <= self.p["bad_rate_at"] <= now_s:
            self.bad = True
        self.reports += 1
        self.packets += len(fb)
        if np.isnan(fb.arrival_s).any():
            self.rate *= self.p["decrease"]
        else:
            self.rate += self.p["increase"]
        self.rate = min(max(self.rate, self.low), self.high)

    def decision(self):
        return {"target_bps": -5.0} if self.bad else self.rate

    def state(self):
        return {"aimd_reports": float(self.reports), "aimd_packets": float(self.packets)}
'''


@pytest.fixture(scope="module")
def module_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding `pyctl_aimd.py` and an installed-package record whose entry point
    names it as `aimd-ep`; put on sys.path and PYTHONPATH for the module."""
    folder = tmp_path_factory.mktemp("pyctl")
    (folder / "pyctl_aimd.py").write_text(MODULE, encoding="utf-8")
    info = folder / "pyctl_aimd-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pyctl-aimd\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[rtcc.controllers]\naimd-ep = pyctl_aimd:Aimd\n")
    sys.path.insert(0, str(folder))
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(folder), old) if p)
    yield folder
    sys.path.remove(str(folder))
    if old is None:
        os.environ.pop("PYTHONPATH", None)
    else:
        os.environ["PYTHONPATH"] = old


@pytest.fixture(scope="module")
def aimd(module_dir: Path) -> type:
    import pyctl_aimd

    rtcc.register_controller("aimd-test", pyctl_aimd.Aimd)
    return pyctl_aimd.Aimd


def scenario(controller: str, duration: str = "10s") -> str:
    return policy_scenario(duration, f"controller = {controller}\n")


def test_a_registered_class_drives_the_flow_with_one_call_per_report(aimd: type):
    res = rtcc.simulate(scenario('{ name = "aimd-test", increase = "30kbps" }'))
    flow = res.summary["flows"][0]
    assert flow["controller"] == "aimd-test"
    # AIMD on a 1 Mbps link: rises from 300 kbps, backs off on loss, stays near the link.
    assert 500 < flow["video_kbps"] < 1100, flow["video_kbps"]
    ts = res.timeseries
    reports, packets = ts["aimd_reports"].max(), ts["aimd_packets"].max()
    # A report every 50 ms (more with NACKs) over 10 s, each with its packets in one call.
    assert 190 < reports < 600 and packets / reports > 2, (reports, packets)
    again = rtcc.simulate(scenario('{ name = "aimd-test", increase = "30kbps" }'))
    assert json.dumps(again.summary, sort_keys=True) == json.dumps(res.summary, sort_keys=True)
    # A parameter changes the run: the class reads it.
    slower = rtcc.simulate(scenario('{ name = "aimd-test", increase = "1kbps" }'))
    assert slower.summary["flows"][0]["video_kbps"] < flow["video_kbps"] - 100


def test_parameters_are_listed_and_checked_as_a_builtin_controllers(aimd: type):
    listed = {c["name"]: c for c in rtcc.controllers()}
    entry = listed["aimd-test"]
    assert entry["python"] and not listed["gcc"]["python"]
    assert entry["summary"].startswith("AIMD on loss")
    params = {p["name"]: p for p in entry["params"]}
    assert (params["increase"]["kind"], params["increase"]["default"]) == ("rate", "20kbps")
    assert (params["decrease"]["kind"], params["decrease"]["range"]) == ("number", "[0.1, 1]")
    with pytest.raises(rtcc.ScenarioError, match=r"flow\[0\]\.controller\.decrease: .*1\.5"):
        rtcc.simulate(scenario('{ name = "aimd-test", decrease = 1.5 }'))
    with pytest.raises(rtcc.ScenarioError, match=r"flow\[0\]\.controller.*bogus"):
        rtcc.simulate(scenario('{ name = "aimd-test", bogus = 1 }'))
    with pytest.raises(ValueError, match=r"parameter 'x': default 2 is outside \[0, 1\]"):
        rtcc.register_controller("bad", aimd, params=[rtcc.pycontrollers.Param("x", 2, min=0, max=1)])
    with pytest.raises(ValueError, match="has no decision"):
        rtcc.register_controller("bad", object)


def test_an_exception_in_user_code_is_one_line_naming_controller_and_method(aimd: type):
    from rtcc.pycontrollers import ControllerError

    with pytest.raises(ControllerError) as caught:
        rtcc.simulate(scenario('{ name = "aimd-test", fail_at = 2.0 }'))
    assert str(caught.value) == "controller 'aimd-test' raised in on_feedback: ValueError: boom"
    assert isinstance(caught.value.__cause__, ValueError)
    with pytest.raises(ControllerError, match=(
        r"^controller 'aimd-test' gave an invalid decision after on_feedback: "
        r"target_bps -5(\.0)? is not a rate"
    )):  # fmt: skip
        rtcc.simulate(scenario('{ name = "aimd-test", bad_rate_at = 1.0 }'))


def test_a_failing_run_exits_non_zero_and_writes_no_results(
    module_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    path = tmp_path / "fail.toml"
    path.write_text(scenario('{ name = "py:pyctl_aimd:Aimd", fail_at = 2.0 }'), encoding="utf-8")
    out = tmp_path / "out"
    code, _, err = run_main(capsys, "run", path, "--out", out, "-q")
    one_line_error(code, err, "controller 'py:pyctl_aimd:Aimd' raised in on_feedback: ValueError: boom")
    assert not out.exists() or not any(out.iterdir()), sorted(out.iterdir())
    # RTCC_DEBUG=1: the whole traceback, the user's line in it.
    env = {**subprocess_env(), "RTCC_DEBUG": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "rtcc", "run", str(path), "--out", str(tmp_path / "o2"), "-q"],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode != 0
    assert 'raise ValueError("boom")' in done.stderr and "Traceback" in done.stderr


def fresh_video_kbps(name: str, duration: str, before: str = "") -> float:
    """The video rate of a run of controller ``name`` in a fresh Python process, after
    ``before`` (lines of Python) has run there."""
    code = (
        f"import json, rtcc\n{before}"
        f"r = rtcc.simulate({scenario(json.dumps(name), duration)!r})\n"
        "print(json.dumps(r.summary['flows'][0]['video_kbps']))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=subprocess_env(), capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_module_reference_and_an_entry_point_resolve_in_a_fresh_process(module_dir: Path):
    ref = rtcc.simulate(scenario('"py:pyctl_aimd:Aimd"', "4s")).summary
    for name in ("py:pyctl_aimd:Aimd", "aimd-ep"):
        assert fresh_video_kbps(name, "4s") == ref["flows"][0]["video_kbps"]
    listed = subprocess.run(
        [sys.executable, "-m", "rtcc", "controllers", "--json"], env=subprocess_env(),
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    entries = {c["name"]: c for c in json.loads(listed.stdout)["controllers"]}
    assert entries["aimd-ep"]["python"], sorted(entries)
    with pytest.raises(rtcc.ScenarioError, match="cannot import no_such_module"):
        rtcc.simulate(scenario('"py:no_such_module:Ctl"', "1s"))


def test_a_module_first_imported_against_a_stand_in_native_module_still_resolves(module_dir: Path):
    """rtcc.pycontrollers imported while another module stood in for rtcc._rtcc (as
    the tests' fake does) must still hand its resolver to the real one later."""
    stand_in = (
        "import sys, types\n"
        "real = rtcc.native()\n"
        "sys.modules['rtcc._rtcc'] = rtcc._rtcc = types.ModuleType('rtcc._rtcc')\n"
        "import rtcc.pycontrollers\n"
        "sys.modules['rtcc._rtcc'] = rtcc._rtcc = real\n"
    )
    ref = rtcc.simulate(scenario('"py:pyctl_aimd:Aimd"', "2s")).summary["flows"][0]["video_kbps"]
    assert fresh_video_kbps("py:pyctl_aimd:Aimd", "2s", stand_in) == ref


SPEC = """\
name = "pyctl"
controllers = ["py:pyctl_aimd:Aimd", "fixed"]
seeds = 2

[base]
duration = "3s"

[base.link]
capacity = "1Mbps"
delay = "20ms"
queue = "50pkt"

[[base.flow]]
encoder = "ideal"
"""


def test_a_sweep_runs_the_python_controller_on_the_process_pool(module_dir: Path, tmp_path: Path):
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC, encoding="utf-8")
    table = rtcc.sweep(spec, out=tmp_path / "out", jobs=2)
    assert (table.attrs["executed"], table.attrs["failed"]) == (4, 0)
    rows = table[table["controller"] == "py:pyctl_aimd:Aimd"]
    assert len(rows) == 2 and all(rows["video_kbps"] > 300)
    assert not any(math.isnan(v) for v in rows["video_kbps"])


def test_a_sweep_runs_the_python_controller_on_ray(module_dir: Path, tmp_path: Path):
    ray = pytest.importorskip("ray")
    import logging

    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC, encoding="utf-8")
    # Workers inherit the environment, PYTHONPATH with the module's folder included.
    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.ERROR,
             log_to_driver=False, object_store_memory=100 * 2**20)  # fmt: skip
    try:
        address = ray.get_runtime_context().gcs_address
        table = rtcc.sweep(spec, out=tmp_path / "out", executor="ray", address=address)
    finally:
        ray.shutdown()
    assert (table.attrs["executed"], table.attrs["failed"]) == (4, 0)
    local = rtcc.sweep(spec, out=tmp_path / "local", jobs=2)
    assert (tmp_path / "out" / "table.csv").read_bytes() == (
        tmp_path / "local" / "table.csv"
    ).read_bytes()
    assert local.attrs["executed"] == 4


def test_a_python_controller_joins_a_reproduction_as_a_scheme(
    module_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    import pandas as pd

    code, _, err = run_main(capsys, "reproduce", "dumbo", "--short", "--scheme", "py:nope:X",
                            "--out", tmp_path / "refused", "-q")  # fmt: skip
    one_line_error(code, err, "--scheme py:nope:X", "cannot import nope")
    code, _, err = run_main(capsys, "reproduce", "pibes", "--scheme", "gcc", "-q")
    one_line_error(code, err, "--scheme: only 'rtcc reproduce dumbo' and 'rtcc reproduce cross'")
    out = tmp_path / "dumbo"
    code, _, err = run_main(capsys, "reproduce", "dumbo", "--short", "--scheme",
                            "py:pyctl_aimd:Aimd", "--out", out, "-q")  # fmt: skip
    assert code == 0, err
    table = pd.read_csv(out / "table.csv")
    rows = table[table["scheme"] == "py:pyctl_aimd:Aimd"]
    assert set(rows["experiment"]) == {"pulse", "cellular"}, table[["experiment", "scheme"]]
    assert (rows["runs"] > 0).all() and (rows["failed"] == 0).all()


def test_a_python_controller_joins_crosss_compared_experiments_as_a_scheme(
    module_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    import pandas as pd

    code, _, err = run_main(capsys, "reproduce", "cross", "--short", "--scheme", "py:nope:X",
                            "--out", tmp_path / "refused", "-q")  # fmt: skip
    one_line_error(code, err, "--scheme py:nope:X", "cannot import nope")
    out = tmp_path / "cross"
    code, _, err = run_main(capsys, "reproduce", "cross", "--short", "--scheme",
                            "py:pyctl_aimd:Aimd", "--out", out, "-q")  # fmt: skip
    assert code == 0, err
    table = pd.read_csv(out / "table.csv")
    rows = table[table["scheme"] == "py:pyctl_aimd:Aimd"]
    kinds = {e.rsplit(" ", 1)[0] if e[-1].isdigit() or e.endswith("%") else e
             for e in rows["experiment"]}  # fmt: skip
    # Every experiment that compares schemes, and not VI-C (cross against itself).
    assert kinds == {"VI-A case", "VI-B loss", "VI-D", "Table II case", "VI-E case"}, kinds
    assert rows["error"].isna().all() if "error" in rows else True
    assert (rows["utilization_received"] > 0).all()
    # The paper has no values for it; the page still shows it.
    assert "py:pyctl_aimd:Aimd" in (out / "report.html").read_text(encoding="utf-8")


def test_the_pyctl_bench_runs_each_controller_in_rust_and_python_to_the_same_rates():
    """`rtcc bench --workload pyctl` in its own process (it registers bench-aimd and the
    ports): every pair's target series are equal, and the AIMD's moves (not a constant)."""
    code = (
        "import json; from rtcc import benchpy; "
        "print(json.dumps(benchpy.run(1), default=float))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=subprocess_env(), timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = {r["controller"]: r for r in json.loads(done.stdout)}
    assert set(rows) == {"fixed", "fixed+reports", "aimd"}
    for r in rows.values():
        assert r["same_rates"], r
        assert r["packets"] > 0 and r["rust_ms_per_sim_s"] > 0 and r["slowdown"] > 0
    assert rows["fixed"]["target_kbps_mean"] == pytest.approx(1000)
    # The AIMD meets loss on the 2 Mbps link: it is neither at its start nor at a bound.
    assert 500 < rows["aimd"]["target_kbps_mean"] < 2500
    cli = subprocess.run([sys.executable, "-m", "rtcc", "bench", "--workload", "pyctl",
                          "--repeat", "1"], capture_output=True, text=True,
                         env=subprocess_env(), timeout=300)  # fmt: skip
    assert cli.returncode == 0, cli.stderr
    lines = [ln for ln in cli.stdout.splitlines() if ln.startswith(("fixed", "aimd"))]
    assert len(lines) == 3 and all(ln.rstrip().endswith("yes") for ln in lines), cli.stdout


def test_the_pyctl_bench_tells_a_different_rule_apart():
    """The same-rates check is not vacuous: a port that steps differently does not match."""
    code = (
        "import json; from rtcc import benchpy\n"
        "class Off(benchpy.PyAimd):\n"
        "    def on_feedback(self, now_s, fb):\n"
        "        super().on_feedback(now_s, fb); self.rate += 1.0\n"
        "benchpy.PAIRS = ((\"aimd\", \"bench-aimd\", \"bench-py-aimd-off\", Off),)\n"
        "print(json.dumps(benchpy.run(1), default=float))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=subprocess_env(), timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (row,) = json.loads(done.stdout)
    assert not row["same_rates"]
