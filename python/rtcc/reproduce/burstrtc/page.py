"""The BurstRTC reproduction's self-contained HTML report (report.html): per experiment,
rtcc's numbers with the paper's beside them where it gives one, what the paper's figure
shows, the figures, and notes."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import pandas as pd

from rtcc.reproduce.burstrtc import paper
from rtcc.reproduce.page import by_prefix as _part
from rtcc.reproduce.page import (
    cell, claims, document, endnotes, failed_runs, findings, meta, problems,
)
from rtcc.reproduce.page import images as _images
from rtcc.reproduce.page import run_table as _table

if TYPE_CHECKING:
    from rtcc.reproduce.burstrtc.experiments import Outcome

__all__ = ["render"]

MAIN = (
    ("goodput_kbps", "bit-rate received (kbps, mean over seeds)", 1.0),
    ("goodput_kbps_min", "lowest seed", 1.0),
    ("goodput_kbps_max", "highest seed", 1.0),
    ("frame_delay_ms_mean", "frame delay mean (ms)", 1.0),
    ("frame_delay_ms_p95", "frame delay p95 (ms)", 1.0),
    ("sender_wait_ms_mean", "of it waiting at the sender (ms)", 1.0),
    ("owd_ms_mean", "one-way network delay (ms)", 1.0),
    ("freeze_ratio", "freezing time (%)", 100.0),
    ("send_buffer_overshoot", "buffer > 150 ms (%)", 100.0),
    ("send_buffer_undershoot", "buffer empty (%)", 100.0),
    ("loss_rate", "loss (%)", 100.0),
)


def _claims(prefixes: Sequence[str]) -> str:
    return claims(paper.CLAIMS, prefixes)


def _versus_gcc(table: pd.DataFrame) -> str:
    """burstrtc's bit-rate gain and frame-delay cut against gcc per content (the paper's
    headline: up to +59.8 % and -48.9 %)."""
    items = []
    for experiment in ("Fig. 12", "Fig. 13", "Fig. 13 vp8"):
        part = table[table["experiment"] == experiment].set_index("scheme")
        if not {"gcc", "burstrtc"} <= set(part.index):
            continue
        g, b = part.loc["gcc"], part.loc["burstrtc"]
        gain = b["goodput_kbps"] / g["goodput_kbps"] - 1
        cut = 1 - b["frame_delay_ms_mean"] / g["frame_delay_ms_mean"]
        items.append(
            f"<li>{html.escape(experiment)}: bit-rate {cell(gain, 100)} %, mean frame delay "
            f"{cell(-cut, 100)} % against gcc</li>"
        )
    if not items:
        return ""
    return (
        "<p>burstrtc against gcc (paper: up to +59.8 % bit-rate and -48.9 % frame delay):"
        f"</p><ul>{''.join(items)}</ul>"
    )


def render(outcome: Outcome, images: Mapping[str, tuple[bytes, str]]) -> str:
    """The page for ``outcome`` (:func:`rtcc.reproduce.burstrtc.experiments.run`) with its
    figures (:func:`rtcc.reproduce.burstrtc.figures.render_all`)."""
    t = outcome.table
    v = outcome.variant
    failed = failed_runs(t)
    p95_ref = {
        (experiment, scheme): {"frame_delay_ms_p95": ms}
        for experiment, profile in (("Fig. 12", "static"), ("Fig. 13", "dynamic"))
        for scheme, ms in paper.FIG_14_P95[profile].items()
    }
    for experiment, profile in (("Fig. 12", "static"), ("Fig. 13", "dynamic")):
        for scheme, f in paper.FIG_16_FREEZE[profile].items():
            p95_ref.setdefault((experiment, scheme), {})["freeze_ratio"] = f
    fair_ref = {("Table I", s): {"jain": j} for s, j in paper.TABLE_I.items()}
    fair = _part(t, "Table I")
    if not fair.empty and "jain" in fair:
        fair = (
            fair.groupby(["experiment", "scheme"], sort=False)
            .agg(jain=("jain", "mean"),
                 jain_min=("jain_min" if "jain_min" in fair else "jain", "min"),
                 jain_second_half=("jain_second_half", "mean"), phases=("jain", "size"))
            .reset_index()
        )  # fmt: skip
    sampler_ref = {("Fig. 8", "burstrtc"): dict(paper.FIG_8)}
    parts = [
        meta(outcome, traces=True),
        f"<p>{v.duration_s} s runs on 4 Mbps, 20 ms one way, an unlimited drop-tail queue, "
        "the content encoder model with its static or dynamic profile unless stated; "
        f"every case over {v.seeds} seeds (real VP8 over {v.vp8_seeds}): the mean, and the "
        "lowest and highest seed where shown. "
        "Bit-rate is the media received; frame delay is encode done to fully received; a "
        "freeze is a gap of more than 100 ms between displayed frames. The paper's numbers "
        "in red in parentheses.</p>",
    ]
    parts += problems(outcome.skipped, failed, "Skipped")
    parts += [
        "<h2>Figs. 12-16 and Fig. 3: static and dynamic content</h2>",
        _claims(["Fig. 12", "Fig. 13", "Fig. 14", "Fig. 16", "Fig. 3"]),
        _versus_gcc(t),
        _table(
            pd.concat([_part(t, "Fig. 12"), _part(t, "Fig. 13")]),
            MAIN,
            ["experiment", "scheme"],
            p95_ref,
        ),
        *_images(images, ["content.png", "tail.png", "buffer.png"]),
        "<h2>Fig. 17: responsiveness</h2>",
        _claims(["Fig. 17"]),
        "<p>Reaction: seconds from the drop until the target is at most 2 Mbps, and from the "
        "rise until it is back to 3.6 Mbps; the worst 1 s mean one-way delay while the link "
        "is low.</p>",
        _table(
            _part(t, "Fig. 17"),
            (
                *MAIN[:4],
                ("react_down_s", "down after (s)", 1.0),
                ("react_up_s", "up after (s)", 1.0),
                ("owd_ms_max_1s_low", "worst 1 s delay (ms)", 1.0),
            ),
            ["experiment", "scheme"],
        ),
        *_images(images, ["responsiveness.png"]),
        "<h2>Figs. 18-20: a cellular trace, random loss, delay jitter</h2>",
        _claims(["Fig. 18", "Fig. 19", "Fig. 20"]),
        _table(
            pd.concat([_part(t, "Fig. 18"), _part(t, "Fig. 19"), _part(t, "Fig. 20")]),
            (("capacity_kbps", "capacity mean (kbps)", 1.0), *MAIN[:4], MAIN[-1]),
            ["experiment", "scheme"],
        ),
        *_images(images, ["stress.png"]),
        "<h2>Table I: two flows of one scheme</h2>",
        _claims(["Table I"]),
        f"<p>Fixed-size frames (the ideal encoder); the second flow starts at {v.join_s} s "
        f"plus k/{v.phases} of a frame interval, k = 0..{v.phases - 1}: the cameras are not "
        "phase-locked, and frame trains share differently when they overlap at the "
        "bottleneck than when they interleave. Jain's index of the two flows' mean "
        "bit-rates while both run (mean and lowest over the phases), and over the second "
        "half of that time; then each run.</p>",
        _table(
            fair,
            (
                ("jain", "Jain (both running, mean)", 1.0),
                ("jain_min", "Jain (lowest phase and seed)", 1.0),
                ("jain_second_half", "Jain (second half, mean)", 1.0),
            ),
            ["experiment", "scheme"],
            fair_ref,
        ),
        _table(
            _part(t, "Table I"),
            (
                ("jain", "Jain (mean over seeds)", 1.0),
                ("jain_min", "lowest seed", 1.0),
                ("jain_max", "highest seed", 1.0),
                ("flow1_kbps", "flow 1 (kbps)", 1.0),
                ("flow2_kbps", "flow 2 (kbps)", 1.0),
            ),
            ["experiment", "scheme", "phase"],
        ),
        *_images(images, ["fairness.png"]),
        "<h2>Figs. 8 and 11: the sampler and the delay model</h2>",
        _claims(["Fig. 8", "Fig. 11"]),
        "<p>Fig. 8: mean |estimate - truth| in Mbps from 2 s on (the truth: the link's "
        "capacity, and the UDP flow's 1 Mbps). Fig. 11: burstrtc with L = 30, its mean "
        "|predicted - measured| delay D of the frame 30 frames ahead, and the naive "
        "predictor's (the latest known D).</p>",
        _table(
            pd.concat([_part(t, "Fig. 8"), _part(t, "Fig. 11")]),
            (
                ("capacity_error_mbps", "capacity error (Mbps)", 1.0),
                ("background_error_mbps", "background error (Mbps)", 1.0),
                ("model_error_ms", "model error (ms)", 1.0),
                ("naive_error_ms", "naive error (ms)", 1.0),
                *MAIN[:3],
            ),
            ["experiment", "scheme"],
            sampler_ref,
        ),
        *_images(images, ["sampler.png"]),
        *endnotes(paper.NOTES, findings(outcome, paper.FINDINGS)),
    ]
    return document(
        "reproducing BurstRTC",
        "Reproducing BurstRTC (Jia et al.)",
        [p for p in parts if p],
        paper="paper",
    )
