"""Frame delay and sender wait beside network delay on the comparison page and the PIBES,
BurstRTC and FBRA rows; Cross's fairness over the flows' aligned lifetimes; Table II's
QUIC rows and the NADA loss note on the Cross page."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest


def _record(key: str, flows: list[dict]) -> dict:
    return {
        "version": 1, "key": key, "seed": 1, "scenario": 'name = "base"\n',
        "summary": {"scenario": "base", "seed": 1, "duration_s": 30.0, "flows": flows,
                    "link": {"utilization": 0.5}, "jain_index": None},
        "flows": {},
    }  # fmt: skip


def test_comparison_shows_frame_delay_and_sender_wait_beside_network_delay(tmp_path: Path):
    from rtcc.comparison import build
    from rtcc.runset import load_runs

    folder = tmp_path / "sweep"
    (folder / "runs").mkdir(parents=True)
    rows = []
    for key, scheme, wait in (("a", "cross", 300.0), ("b", "gcc", 20.0)):
        flow = {"name": "call", "kind": "video", "controller": scheme, "utilization": 0.9,
                "owd_ms_p95": 70.0, "frame_delay_ms_mean": wait + 60.0,
                "sender_wait_ms_mean": wait}  # fmt: skip
        (folder / "runs" / f"{key}.json").write_text(json.dumps(_record(key, [flow])))
        rows.append({"scenario": "base", "controller": scheme, "seed": 1, "flow_name": "call",
                     "run": key, "error": None})  # fmt: skip
    pd.DataFrame(rows).to_csv(folder / "table.csv", index=False)
    page = build(load_runs([folder]))
    owd = page.index("one-way delay, p95 (ms)")
    frame = page.index("frame delay, mean (ms)")
    wait = page.index("sender wait, capture to last packet sent, mean (ms)")
    assert owd < frame < wait
    assert "360" in page and "300" in page


def test_pibes_burstrtc_fbra_rows_carry_the_delays() -> None:
    from rtcc.reproduce.burstrtc import experiments as burstrtc
    from rtcc.reproduce.burstrtc import page as burstrtc_page
    from rtcc.reproduce.fbra import experiments as fbra
    from rtcc.reproduce.fbra import page as fbra_page
    from rtcc.reproduce.pibes import experiments as pibes
    from rtcc.reproduce.pibes import page as pibes_page

    flow = {"kind": "video", "goodput_kbps": 900.0, "video_kbps": 1000.0, "utilization": 0.9,
            "owd_ms_mean": 40.0, "frame_delay_ms_mean": 140.0, "frame_delay_ms_p95": 200.0,
            "sender_wait_ms_mean": 100.0, "sender_wait_ms_p95": 150.0, "loss_rate": 0.0,
            "freeze_ratio": 0.0, "fec_kbps": 0.0}  # fmt: skip
    summary = {"flows": [flow], "link": {"capacity_kbps_mean": 1000.0, "utilization": 0.9}}
    for module in (pibes, burstrtc):
        row = module.metrics({"summary": summary, "flows": {}}, "none", module.SHORT)
        assert (row["sender_wait_ms_mean"], row["owd_ms_mean"]) == (100.0, 40.0)
    for page in (pibes_page, burstrtc_page):
        assert {"sender_wait_ms_mean", "owd_ms_mean"} <= {c for c, _, _ in page.MAIN}
    assert fbra._video_metrics(flow)["sender_wait_ms_mean"] == 100.0
    table = pd.DataFrame([{"experiment": "Table 1", "scheme": "fbra", "delay_ms": 50,
                           "goodput_kbps": 900.0, **fbra._video_metrics(flow)}])  # fmt: skip
    s = fbra.summary(table)
    assert s["frame_delay_ms_mean_mean"].iloc[0] == 140.0
    for experiment in ("Table 1", "Table 2", "Table 3"):
        cols = {c for c, *_ in fbra_page.COLUMNS[experiment]}
        assert {"owd_ms_mean", "frame_delay_ms_mean", "sender_wait_ms_mean"} <= cols
    assert "<th>of it waiting at the sender (ms)</th>" in fbra_page._table(s, "Table 1")


def _series(t: np.ndarray, life: tuple[float, float], shared: float, alone: float):
    rate = np.where((t > life[0]) & (t <= life[1]), alone, np.nan)
    rate[(t > 80) & (t <= 200)] = shared
    return pd.DataFrame({"t_s": t, "recv_kbps": rate})


def test_aligned_jain_reads_only_the_time_all_flows_are_active() -> None:
    from rtcc.reproduce.cross.experiments import FULL, aligned_jain

    t = np.arange(1.0, 301.0)
    life = FULL.schedule  # (0, 300), (35, 200), (80, 300): all three in 80-200 s
    fair = [_series(t, life[0], 1000, 3000), _series(t, life[1], 1000, 500),
            _series(t, life[2], 1000, 100)]  # fmt: skip
    assert aligned_jain(fair, life) == pytest.approx(1.0)
    # Shared 1000/500/500: (2000)^2 / (3 x 1.5e6) = 8/9, whatever each did alone.
    uneven = [_series(t, life[0], 1000, 3000), _series(t, life[1], 500, 9000),
              _series(t, life[2], 500, 0)]  # fmt: skip
    assert aligned_jain(uneven, life) == pytest.approx(8 / 9)
    assert math.isnan(aligned_jain([*uneven[:2], None], life))
    assert math.isnan(aligned_jain(uneven, ((0, 50), (60, 100), (0, 100))))


def test_cross_row_and_page_carry_aligned_jain_quic_rows_and_nada_note() -> None:
    from rtcc.reproduce.cross import page, paper
    from rtcc.reproduce.cross.experiments import SHORT, metrics

    t = np.arange(1.0, 101.0)
    flows, kept = [], {}
    for i, (a, b) in enumerate(SHORT.schedule):
        rate = np.where((t > a) & (t <= b), 1000.0 if i == 0 else 500.0, np.nan)
        kept[str(i)] = {"series": {"t_s": t.tolist(), "recv_kbps": rate.tolist()}}
        flows.append({"packets_sent": 10, "loss_rate": 0.0, "goodput_kbps": 1.0,
                      "owd_ms_mean": 40.0, "target_kbps_mean": 1.0})  # fmt: skip
    record = {"summary": {"flows": flows, "link": {"utilization_received": 0.9,
                                                   "utilization": 0.9}}, "flows": kept}  # fmt: skip
    row = metrics(record, "VI-A case 4", SHORT)
    assert row["jain_aligned"] == pytest.approx(8 / 9)
    assert "jain_aligned" not in metrics(record, "VI-B loss 2%", SHORT)
    quic = page._quic_rows()
    assert "QUIC-BBR-NCWND" in quic and "8.34" in quic and "0.47" in quic
    assert paper.TABLE_II_QUIC["QUIC-BBR"][2] == 1.21
    assert "probe_rtt_interval" in page._NADA_LOSS
