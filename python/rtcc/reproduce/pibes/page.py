"""The PIBES reproduction's self-contained HTML report (report.html): per experiment, rtcc's
numbers with the paper's beside them where it gives one, what the paper's figure shows,
the figures, and notes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import pandas as pd

from rtcc.reproduce.page import by_prefix as _part
from rtcc.reproduce.page import claims, document, endnotes, failed_runs, meta, problems
from rtcc.reproduce.page import images as _images
from rtcc.reproduce.page import run_table as _table
from rtcc.reproduce.pibes import paper

if TYPE_CHECKING:
    from rtcc.reproduce.pibes.experiments import Outcome

__all__ = ["render"]

MAIN = (
    ("utilization", "video utilisation (%)", 100.0),
    ("tcp_utilization", "TCP utilisation (%)", 100.0),
    ("frame_delay_ms_mean", "frame delay mean (ms)", 1.0),
    ("frame_delay_ms_p95", "frame delay p95 (ms)", 1.0),
    ("sender_wait_ms_mean", "of it waiting at the sender (ms)", 1.0),
    ("owd_ms_mean", "one-way network delay (ms)", 1.0),
    ("loss_rate", "loss (%)", 100.0),
)
ESTIMATE = (
    ("estimate_error", "mean |estimate error| (%)", 100.0),
    ("estimate_within_10", "bins within 10 % (%)", 100.0),
    ("estimate_error_worst_stretch", "worst stretch error (%)", 100.0),
    ("detect_s", "detected after (s)", 1.0),
    ("clear_s", "cleared after (s)", 1.0),
    ("detection_correct", "detection correct (%)", 100.0),
)


def _claims(prefixes: Sequence[str]) -> str:
    return claims(paper.CLAIMS, prefixes)


def render(outcome: Outcome, images: Mapping[str, tuple[bytes, str]]) -> str:
    """The page for ``outcome`` (:func:`rtcc.reproduce.pibes.experiments.run`) with its
    figures (:func:`rtcc.reproduce.pibes.figures.render_all`)."""
    t = outcome.table
    v = outcome.variant
    failed = failed_runs(t)
    table1_ref = {
        ("Table 1", scheme, n, q): {"utilization": u}
        for scheme, values in paper.TABLE_1.items()
        for n, u in values.items()
        for q in v.queues
    }
    parts = [
        meta(outcome, traces=True),
        f"<p>{v.duration_s} s runs, 20 ms one way, a 50-packet drop-tail queue; every video "
        "flow on eq. 7's noise encoder. Utilisation counts all the flow's received bytes "
        "(FEC and retransmissions included) over the capacity. Frame delay is encode done to "
        "fully received. The paper's numbers in red in parentheses.</p>",
    ]
    parts += problems(outcome.skipped, failed, "Skipped")
    parts += [
        "<h2>Table 1: one video flow against Cubic on 4 Mbps</h2>",
        "<p>gcc is capped as libwebrtc caps it for the resolution (the paper's WebRTC); "
        "gcc uncapped has no cap.</p>",
        _table(
            _part(t, "Table 1"),
            MAIN,
            ["experiment", "scheme", "tcp_flows", "queue_pkt"],
            table1_ref,
        ),
        *_images(images, ["table1.png"]),
        "<h2>Figs. 6-9: estimate accuracy and competition detection (5 Mbps)</h2>",
        _claims(["Fig. 6", "Fig. 7", "Fig. 8", "Fig. 9"]),
        "<p>Error: |B/C - 1| per 100 ms bin. Fig. 8's worst stretch is the largest mean error "
        "between two TCP joins, 2 s after each. Detection: seconds from a change of the "
        "ground truth (another flow's data leaving the bottleneck) until the detector "
        "agrees, and the share of bins that agree from 2 s after each change.</p>",
        _table(
            pd.concat([_part(t, "Fig. 6"), _part(t, "Fig. 7"), _part(t, "Fig. 8")]),
            ESTIMATE,
            ["experiment", "scheme"],
        ),
        *_images(images, ["sensitivity.png", "estimate.png"]),
        "<h2>Figs. 10-12: alone on fixed, 3G and ramped links</h2>",
        _claims(["Fig. 10", "Fig. 11", "Fig. 12"]),
        f"<p>Frame-delay bound of Fig. 10: 20 ms + a frame at 95 % of the link sent at the "
        f"link's rate = {paper.OWD_MS + paper.S_MAX * 1000 / 30:.1f} ms.</p>",
        _table(
            pd.concat([_part(t, "Fig. 10"), _part(t, "Fig. 11"), _part(t, "Fig. 12")]),
            MAIN,
            ["experiment", "scheme"],
        ),
        *_images(images, ["throughput_links.png", "frame_delay.png"]),
        "<h2>Figs. 13-17: competing TCP traffic</h2>",
        _claims(["Fig. 13", "Fig. 14", "Fig. 15", "Fig. 16", "Fig. 17"]),
        _table(
            pd.concat([_part(t, f"Fig. {n}") for n in (13, 14, 15, 16, 17)]),
            (
                *MAIN,
                ("share_mean", "mean share s", 1.0),
                ("detect_s", "detected after (s)", 1.0),
                ("clear_s", "cleared after (s)", 1.0),
                ("recv_kbps_min_1s", "lowest 1 s rate with TCP (kbps)", 1.0),
            ),
            ["experiment", "scheme"],
        ),
        *_images(images, ["throughput_tcp.png"]),
        "<h2>Fig. 18: two PIBES flows</h2>",
        _claims(["Fig. 18"]),
        _table(
            _part(t, "Fig. 18"),
            (
                ("seed", "seed", 1.0),
                ("jain_overlap", "Jain (both running)", 1.0),
                ("flow1_kbps", "flow 1 (kbps)", 1.0),
                ("flow2_kbps", "flow 2 (kbps)", 1.0),
            ),
            ["experiment", "scheme"],
        ),
        *_images(images, ["throughput_pibes.png"]),
        *endnotes(paper.NOTES, paper.FINDINGS),
    ]
    return document(
        "reproducing PIBES",
        "Reproducing PIBES (Heimbach, Guo, Ngan & Lee)",
        [p for p in parts if p],
        paper="paper",
    )
