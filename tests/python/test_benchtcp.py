"""Cubic's window dynamics in `rtcc bench --workload tcp --ns3`: the parser of
scripts/ns3_tcp.py's output, rtcc's side on a short run and the table beside ns-3's."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from rtcc import benchtcp, cli

# scripts/ns3_tcp.py 30 with the ns3 3.44 wheel, as printed (the loader's noise on stderr).
NS3_OUT = """run_s=0.706
goodput_mbps=9.856
sim_s=30 speedup=42.5x topology=p2p
loss_events=18.000
cwnd_period_s=1.834
cwnd_trough_pkts=47.000
retransmits=167
"""
NS3_ERR = "[runStaticInitializersOnce]: Failed to materialize symbols: { (main, { x }) }\n"

# The workload's path: 10 Mbps x 40 ms RTT over 1500 B packets, and its 33-packet queue.
BDP_PKTS = 10e6 * 0.040 / 8 / 1500
QUEUE_PKTS = 33


def test_parser_reads_the_recorded_ns3_output():
    row = benchtcp.parse_ns3("ns3", 0, NS3_OUT, NS3_ERR)
    assert row == {
        "run_s": 0.706,
        "goodput_mbps": 9.856,
        "loss_events": 18.0,
        "cwnd_period_s": 1.834,
        "cwnd_trough_pkts": 47.0,
        "retransmits": 167.0,
    }


def test_parser_takes_an_output_without_dynamics_and_refuses_one_without_goodput():
    row = benchtcp.parse_ns3("ns3", 0, "run_s=1.2\ngoodput_mbps=9.5\n", "")
    assert row == {"run_s": 1.2, "goodput_mbps": 9.5}
    with pytest.raises(RuntimeError, match=r"no run_s=/goodput_mbps= in its output \(loss_events=3\)"):
        benchtcp.parse_ns3("ns3", 0, "run_s=1.2\nloss_events=3\n", "")


def test_dynamics_of_a_series_counts_events_spacing_and_troughs():
    # Slow-start exit at 0.3-0.4 s (left out of period and trough), then events at
    # 2.0 s and 4.5 s: one gap of 2.5 s; troughs 40 and 46 packets (least of the event's
    # bin and the next), median of two: the upper.
    t = [round(0.1 * i, 1) for i in range(1, 51)]
    rtx = [0.0] * 50
    cwnd = [90000.0] * 50
    for i, r in ((2, 30), (3, 4), (19, 1), (44, 2)):
        rtx[i] = r
    cwnd[19], cwnd[20] = 66000.0, 60000.0
    cwnd[44], cwnd[45] = 69000.0, 72000.0
    d = benchtcp.dynamics_of(pd.DataFrame({"t_s": t, "retransmits": rtx, "cwnd_bytes": cwnd}))
    assert d == {"loss_events": 3.0, "cwnd_period_s": pytest.approx(2.5), "cwnd_trough_pkts": 46.0,
                 "retransmits": 37.0}


def test_a_series_without_tcp_columns_measures_nothing():
    d = benchtcp.dynamics_of(pd.DataFrame({"t_s": [0.1], "goodput_kbps": [1.0]}))
    assert set(d) == set(benchtcp.DYNAMICS) and all(math.isnan(v) for v in d.values())
    assert [r[1] for r in benchtcp.dynamics_rows(d)] == ["-"] * 4


def test_rtcc_dynamics_lie_within_the_paths_physical_bounds():
    d = benchtcp.rtcc_dynamics(20.0)
    # The window peaks where the pipe and the queue are full, W = BDP + Q (66 packets);
    # Cubic keeps beta = 0.7 of it (RFC 9438 §4.6): the trough near 46, never above the
    # peak nor below half of it.
    peak = BDP_PKTS + QUEUE_PKTS
    assert 0.5 * peak <= d["cwnd_trough_pkts"] <= peak
    assert abs(d["cwnd_trough_pkts"] - 0.7 * peak) <= 3
    # Regrowth to the peak takes at most K = cbrt(W(1 - beta)/C), C = 0.4 (RFC 9438
    # §4.2): 3.7 s; and no loss event comes within 5 RTTs (0.2 s) of the last.
    k = ((peak * 0.3) / 0.4) ** (1 / 3)
    assert 0.2 < d["cwnd_period_s"] <= k + 0.2
    assert d["loss_events"] >= 20.0 / (k + 0.2)
    assert d["retransmits"] >= d["loss_events"]
    assert not any(math.isnan(v) for v in d.values())


def test_cli_prints_rtcc_and_ns3_dynamics_side_by_side(capsys, tmp_path: Path):
    python = tmp_path / "ns3-python"
    body = "".join(f"echo '{line}'\n" for line in NS3_OUT.splitlines())
    python.write_text(f"#!/bin/sh\n{body}echo 'noise' >&2\n", encoding="utf-8")
    python.chmod(0o755)
    code = cli.main(["bench", "--workload", "tcp", "--repeat", "1", "--ns3", str(python)])
    out, err = capsys.readouterr()
    assert code == 0, err
    rows = {line.split("  ")[0].strip(): line.split() for line in out.splitlines()}
    period = rows["cwnd period s (between loss events)"]
    assert period[-1] == "1.83" and 0.2 < float(period[-2]) < 4.0
    trough = rows["cwnd trough packets (after reduction)"]
    assert trough[-1] == "47.0" and 40 <= float(trough[-2]) <= 50
    assert rows["retransmissions"][-1] == "167"


def test_ns3_rtt_script_refuses_bad_arguments_in_one_line():
    # Checked before ns-3 is imported, so any Python runs it.
    script = Path(__file__).resolve().parents[2] / "scripts" / "ns3_tcp_rtt.py"
    for args, why in [
        (["10", "--warmup", "20"], "need SECONDS > --warmup"),
        (["60", "--start-long", "30"], "0 <= --start-long < --warmup"),
        (["60", "--queue", "0"], "--queue >= 1"),
    ]:
        done = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True)
        assert done.returncode == 1 and done.stdout == ""
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("ns3_tcp_rtt.py: ") and why in lines[0], lines
