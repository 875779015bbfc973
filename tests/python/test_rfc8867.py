"""rtcc rfc8867: the cases' parameters are the RFCs', --short runs end to end, the verdict
fails when a metric crosses its threshold, and a bad controller is one line and exit 2."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from rtcc.cli import main
from rtcc.rfc8867 import cases
from rtcc.rfc8867.metrics import THRESHOLDS, converge, verdict


def _flows(case: str, kind: str | None = None) -> list[dict]:
    flows = cases.build(cases.CASES[case], "gcc")["flow"]
    return [f for f in flows if kind is None or f.get("kind", "video") == kind]


def test_5_1_capacity_schedule_delay_queue():
    sc = cases.build(cases.CASES["5.1"], "gcc")
    # RFC 8867 §5.1: 1, 2.5, 0.6, 1 Mbps from 0, 40, 60, 80 s; 50 ms; 300 ms queue; 100 s.
    assert sc["link"]["capacity"]["steps"] == [
        ["0s", "1000kbps"], ["40s", "2500kbps"], ["60s", "600kbps"], ["80s", "1000kbps"]]
    assert (sc["link"]["delay"], sc["link"]["queue"], sc["duration"]) == ("50ms", "300ms", "100s")
    assert [f["controller"] for f in sc["flow"]] == ["gcc"]


def test_5_2_and_5_3_schedules():
    s2 = cases.build(cases.CASES["5.2"], "nada")
    assert s2["duration"] == "125s" and len(s2["flow"]) == 2
    assert [k for _, k in s2["link"]["capacity"]["steps"]] == [
        "4000kbps", "2000kbps", "3500kbps", "1000kbps", "2000kbps"]
    s3 = cases.build(cases.CASES["5.3"], "nada")
    assert s3["link"]["reverse_capacity"]["steps"] == [
        ["0s", "2000kbps"], ["35s", "800kbps"], ["70s", "2000kbps"]]
    assert [f.get("direction", "forward") for f in s3["flow"]] == ["forward", "reverse"]


def test_5_5_one_way_delays_and_starts():
    sc = cases.build(cases.CASES["5.5"], "gcc")
    base = float(sc["link"]["delay"].removesuffix("ms"))
    delays = [base + float(f.get("access_delay", "0ms").removesuffix("ms")) for f in sc["flow"]]
    assert delays == [10, 25, 50, 100, 150]  # RFC 8867 §5.5
    assert [f["start"] for f in sc["flow"]] == ["0s", "10s", "20s", "30s", "40s"]


def test_tcp_cases():
    assert len(_flows("5.6", "tcp")) == 1
    assert cases.build(cases.CASES["5.6-1000"], "gcc")["link"]["queue"] == "1000ms"
    short = _flows("5.7", "web")
    assert len(short) == 10 and sum(not f["start_idle"] for f in short) == 2
    assert {(f["object_min"], f["object_max"], f["think_time"]) for f in short} == {
        ("30kB", "50kB", "10s")}  # RFC 8868 §5.1
    # RFC 8867 §5.6, §5.7: "default TCP congestion control [RFC5681]".
    assert {f["cc"] for f in _flows("5.6", "tcp") + short} == {"reno"}
    assert [f["start"] for f in _flows("5.7", "video")] == ["5s", "5s"]


def test_media_source_and_path_defaults():
    # RFC 8867 §4.3: 150 kbps - 1.5 Mbps, starting at 150 kbps, on every media flow (NADA's
    # RMIN/RMAX come from it: with the flow default of 50 Mbps NADA's equilibrium queue on a
    # 1 Mbps link is 10 ms · 50 = 500 ms, past the 300 ms queue); §4.2 / RFC 8868 §4.5.3 jitter.
    for case in cases.CASES.values():
        sc = cases.build(case, "nada")
        media = [f for f in sc["flow"] if f.get("kind", "video") == "video"]
        assert {(f["min_rate"], f["max_rate"], f["start_rate"]) for f in media} == {
            ("150kbps", "1500kbps", "150kbps")}, case.id
        assert sc["link"]["jitter"] == "5ms"


def test_cellular_cases_rfc8869_section_2():
    for cid, kb in (("8869-2-driving", 479), ("8869-2-short", 189)):
        sc = cases.build(cases.CASES[cid], "gcc")
        assert cases.CASES[cid].section == "RFC 8869 §2"
        # A byte queue (300 ms at the trace's mean rate), not a time limit that drops at
        # every gap of the trace; 20 ms one way, RFC 8869 §2.1.2's 40 ms RTT.
        assert (sc["link"]["queue"], sc["link"]["delay"]) == (f"{kb}kB", "20ms")


def test_convergence_share_capped_at_max_rate():
    # RFC 8867 §5.2: at 4 Mbps two flows settle near their 1.5 Mbps maximum, converged.
    from rtcc.rfc8867.metrics import _dynamics
    t = np.arange(0.5, 20.01, 0.5)
    series = pd.DataFrame({"t_s": t, "goodput_kbps": 1400.0, "capacity_kbps": 4000.0})
    fwd = [(0, {"start_s": 0.0}), (1, {"start_s": 0.0})]
    got = _dynamics(fwd, {0: series, 1: series}, (), 20.0, max_kbps=1500.0)
    assert got["convergence_s"] <= 0.5
    assert _dynamics(fwd, {0: series, 1: series}, (), 20.0)["convergence_s"] == 20.0


def test_5_8_pause_and_resume():
    video = _flows("5.8", "video")
    assert [(f["name"], f["start"], f.get("stop")) for f in video][1:3] == [
        ("media2", "0s", "40s"), ("media2-resumed", "60s", "119s")]


def test_short_scales_every_time():
    sc = cases.build(cases.CASES["5.1"], "gcc", short=True)
    assert sc["duration"] == "20s" and sc["link"]["capacity"]["steps"][1][0] == "8s"


def _passing(case: str) -> dict:
    row = {}
    for metric, side, bound in THRESHOLDS[case]:
        row[metric] = bound * (1.1 if side == "min" else 0.9)
    return row


@pytest.mark.parametrize("case", sorted(THRESHOLDS))
def test_verdict_fails_when_a_metric_crosses(case):
    row = _passing(case)
    assert verdict(case, row) == (True, [])
    for metric, side, bound in THRESHOLDS[case]:
        bad = dict(row)
        bad[metric] = bound * (0.9 if side == "min" else 1.1) + (-1e-3 if side == "min" else 1e-3)
        ok, why = verdict(case, bad)
        assert not ok and any(w.startswith(metric) for w in why)
        ok, why = verdict(case, {**row, metric: math.nan})
        assert not ok and f"{metric} missing" in why


def test_convergence_time():
    t = np.arange(0.5, 40.5, 0.5)
    share = np.full_like(t, 1000.0)
    rate = np.where(t < 12, 300.0, 1000.0)  # in the band from the 12 s bin on
    assert converge(t, rate, share, 0.0, 40.0) == pytest.approx(11.5)
    assert converge(t, np.full_like(t, 300.0), share, 0.0, 40.0) == 40.0


def test_bad_controller_one_line_exit_2(tmp_path, capsys):
    assert main(["rfc8867", "gcc", "no-such-cc", "--short", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no-such-cc" in err[0] and "not registered" in err[0]


def test_short_end_to_end(tmp_path, capsys):
    out = tmp_path / "rfc"
    assert main(["rfc8867", "--short", "--out", str(out), "--jobs", "2", "-q"]) == 0
    t = pd.read_csv(out / "table.csv")
    assert t["error"].isna().all()
    assert set(t["scheme"]) == {"gcc", "nada"} and set(t["experiment"]) == set(cases.CASES)
    assert t["rate_kbps"].gt(0).all() and t["utilization"].between(0, 1.2).all()
    assert t["pass"].isin([True, False]).all()
    assert t.loc[t["experiment"] == "5.3", "reverse_utilization"].notna().all()
    assert t["usable_utilization"].ge(t["utilization"] - 1e-9).all()
    assert t.loc[t["experiment"] == "5.3", "reverse_usable_utilization"].notna().all()
    assert t.loc[t["experiment"] == "5.2", "jain"].between(0, 1).all()
    page = (out / "report.html").read_text()
    assert "RFC 8867 §5.1" in page and "Pass when" in page
    assert "<h2>Matrix</h2>" in page and "Explanations are given for the full cases only" in page
    assert (out / "rate_5.1.png").stat().st_size > 0 and (out / "cdf_5.7.png").exists()


def test_progress_label_in_the_suites_words():
    from rtcc.reproduce.runs import progress_label

    assert progress_label("rfc8867", "rfc8867") == (
        "RFC 8867 §5.1-5.8 test cases, RFC 8869 §2 cellular")


def test_usable_capacity_caps_each_active_flow_at_the_media_maximum():
    """5.1's 2.5 Mbps period offers one 1.5 Mbps flow only 1.5 Mbps: a flow at its maximum
    there uses all it may, and a second flow's arrival doubles what may be used."""
    from rtcc.rfc8867.metrics import _usable

    t = np.arange(0.5, 20.01, 0.5)
    cap = pd.DataFrame({"t_s": t, "capacity_kbps": np.where(t <= 10, 1000.0, 2500.0)})
    one = [(0, {"start_s": 0.0})]
    # 10 s at 1000 and 10 s at 1500 usable: a flow at 1000 then 1500 uses all of it.
    assert _usable(1250.0, one, {0: cap}, 20.0, 1500.0) == pytest.approx(1.0)
    assert _usable(1250.0, one, {0: cap}, 20.0, math.inf) == pytest.approx(1250.0 / 1750.0)
    two = [(0, {"start_s": 0.0}), (1, {"start_s": 10.0})]
    # The second flow from 10 s: 2500 usable (2 x 1500 capped by the link) after it.
    assert _usable(1750.0, two, {0: cap}, 20.0, 1500.0) == pytest.approx(1.0)
    assert math.isnan(_usable(1000.0, one, {}, 20.0, 1500.0))
    # A bin without a capacity value takes its neighbour's instead of voiding the metric.
    gap = cap.assign(capacity_kbps=cap["capacity_kbps"].where(t != 5.0))
    assert _usable(1250.0, one, {0: gap}, 20.0, 1500.0) == pytest.approx(1.0)
    # A flow whose series starts late (5.4's newcomer) adds the link's earlier bins.
    late = cap[cap["t_s"] > 10.0]
    assert _usable(1750.0, two, {0: cap[cap["t_s"] <= 10.0], 1: late}, 20.0, 1500.0) == pytest.approx(1.0)


def test_every_explanation_names_registered_controllers_and_cases():
    import rtcc
    from rtcc.rfc8867.explanations import EXPLANATIONS, KINDS

    names = {c["name"] for c in rtcc.native().controllers()}
    seen = set()
    for e in EXPLANATIONS:
        assert set(e.controllers) <= names, e.controllers
        assert set(e.cases) <= set(cases.CASES), e.cases
        assert e.kind in KINDS and e.text and "\n" not in e.text
        for cell in ((c, k) for c in e.controllers for k in e.cases):
            assert cell not in seen, f"{cell} explained twice"
            seen.add(cell)


def test_the_explanations_match_the_verdicts_they_were_written_against():
    """Each failing cell of the recorded matrix has an explanation and each explanation is
    of a failing cell, so a verdict that moves (and is recorded) cannot leave a stale line."""
    import rtcc
    from rtcc.rfc8867.explanations import EXPLANATIONS, MEASURED, explain

    # Every built-in video controller: not the Python bridge, nor controllers a test or a
    # bench registered in this process.
    names = {c["name"] for c in rtcc.native().controllers()
             if not c["python"] and not c["name"].startswith("bench-")} - {"python"}  # fmt: skip
    assert set(MEASURED) == names
    ids = list(cases.CASES)
    for ctl, verdicts in MEASURED.items():
        assert len(verdicts) == len(ids) and set(verdicts) <= {"P", "F"}, ctl
        for case, v in zip(ids, verdicts):
            assert (explain(ctl, case) is not None) == (v == "F"), (ctl, case)
    assert sum(len(e.controllers) * len(e.cases) for e in EXPLANATIONS) == sum(
        v.count("F") for v in MEASURED.values())


def test_the_page_gives_each_failing_cell_its_explanation_or_says_it_has_none():
    from rtcc.rfc8867.explanations import explain
    from rtcc.rfc8867.page import matrix

    assert explain("fixed", "5.1") is not None and explain("fixed", "5.5") is None
    t = pd.DataFrame([
        {"experiment": "5.1", "scheme": "fixed", "pass": False, "why": "loss_rate 0.37 > 0.02"},
        {"experiment": "5.5", "scheme": "fixed", "pass": False, "why": "jain 0.5 < 0.8"},
        {"experiment": "5.1", "scheme": "copa", "pass": True, "why": ""},
    ])  # fmt: skip
    text = "".join(matrix(t, explained=True))
    assert "5.1 · fixed: loss_rate 0.37 &gt; 0.02 — rtcc default: no congestion control" in text
    assert "5.5 · fixed: jain 0.5 &lt; 0.8 — not yet explained" in text
    assert "5.1 · copa" not in text and '<td class="pass">PASS</td>' in text
    assert "1/1" in text and "0/2" in text  # copa passed its one case, fixed neither of two
    short = "".join(matrix(t, explained=False))
    assert "no congestion control" not in short and "full cases only" in short
