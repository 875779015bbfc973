"""The Dumbo reproduction's self-contained HTML report (report.html).

Built from the data passed in (the per-scheme table, the figures, the run's facts); the
thesis's own numbers and notes, shown beside rtcc's, come from
:mod:`rtcc.reproduce.dumbo.thesis`. Page shell and comparison tables: :mod:`rtcc.reproduce.page`.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from rtcc.reproduce.dumbo import thesis
from rtcc.reproduce.page import cell, comparison, document, embed

__all__ = ["render"]

# (column, heading, scale) for the pulse comparison; rates in Mbps as §6.2.1 quotes them.
PULSE_COLUMNS = (
    ("converge_up_s", "converge up (s)", 1.0),
    ("up_max_mbps", "max after up (Mbps)", 1.0),
    ("up_steady_mbps", "steady after up (Mbps)", 1.0),
    ("converge_down_s", "converge down (s)", 1.0),
    ("converge_down_settle_s", "settle down (s)", 1.0),
    ("down_latency_steady_ms", "steady latency after down (ms)", 1.0),
    ("down_latency_max_ms", "max latency after down (ms)", 1.0),
    ("down_steady_mbps", "steady after down (Mbps)", 1.0),
    ("video_kbps", "video (kbps)", 1.0),
    ("padding_kbps", "padding (kbps)", 1.0),
)
CELLULAR_COLUMNS = (
    ("psnr_db_mean", "PSNR (dB)", 1.0),
    ("ssim_db_mean", "SSIM (dB)", 1.0),
    ("frame_latency_ms_mean", "frame latency (ms)", 1.0),
    ("frame_delay_ms_mean", "frame delay, capture → received (ms)", 1.0),
    ("sender_wait_ms_mean", "of it waiting at the sender (ms)", 1.0),
    ("sojourn_ms_mean", "network (queuing) delay, arrival → departure (ms)", 1.0),
    ("utilization_mean", "utilisation per sample (%)", 100.0),
    ("utilization", "utilisation Σ/Σ (%)", 100.0),
    ("video_kbps", "video (kbps)", 1.0),
    ("padding_kbps", "dummy / padding incl. probes (kbps)", 1.0),
)


def _rows(table: pd.DataFrame, experiment: str) -> list[dict[str, Any]]:
    return [dict(r) for _, r in table[table["experiment"] == experiment].iterrows()]


def _pulse_rows(table: pd.DataFrame) -> list[dict[str, Any]]:
    """Pulse rows, noting steps whose latency never came back to the pre-step band."""
    rows = _rows(table, "pulse")
    for row in rows:
        missed, steps = row.get("down_unconverged"), row.get("steps_down")
        if isinstance(missed, float) and missed > 0:
            extra = (
                f"{missed:.0f} of {steps:.0f} drops never back within 110 % of the "
                "pre-step latency (its average leaves them out; see settle down)"
            )
            row["note"] = "; ".join(str(n) for n in (row.get("note"), extra) if isinstance(n, str))
    return rows


def _ratios(ours: Mapping[str, float]) -> str:
    if not ours:
        return (
            "<p>The Dumbo-vs-GCC ratios need GCC and at least one of copa+dumbo, "
            "rocc+dumbo on the traces; they were not available in this run.</p>"
        )
    ref = thesis.CELLULAR_RATIOS
    times = "{:.2f}&times;".format
    rows = [
        ("utilisation, Dumbo ÷ GCC", ours["utilization"], ref["utilization"], "+32 %", times),
        ("queuing delay, GCC ÷ Dumbo", ours["queue_delay"], ref["queue_delay"], "÷4", times),
        ("video bitrate, Dumbo ÷ GCC", ours["video_kbps"], ref["video_kbps"], "+16 %", times),
    ]
    if "frame_latency_ms" in ours:
        # The thesis states this one as a difference: "100 ms lower frame latency".
        rows.append((
            "frame latency, Dumbo − GCC", ours["frame_latency_ms"], ref["frame_latency_ms"],
            "100 ms lower", "{:+.0f} ms".format,
        ))  # fmt: skip
    body = "".join(
        f"<tr><td>{html.escape(name)}</td><td>{show(mine)}</td>"
        f'<td class="thesis">{show(theirs)} ({html.escape(said)}, §6.3)</td></tr>'
        for name, mine, theirs, said, show in rows
    )
    return f'<div class="scroll"><table><tr><th>ratio</th><th>rtcc</th><th>thesis</th></tr>{body}</table></div>'


def follow_index(video_kbps: Any, utilization: Any, capacity_kbps: float) -> float | None:
    """Video / (utilisation per sample x mean capacity): about 1 for a rate that follows
    the link's capacity, well below 1 for a rate that ignores it (a slow link counts as
    fully used at any rate that fills it, a fast one barely)."""
    try:
        v, u = float(video_kbps), float(utilization)
    except (TypeError, ValueError):
        return None
    if not (u > 0 and capacity_kbps > 0) or v != v:
        return None
    return v / (u * capacity_kbps)


def _follows(rows: Sequence[Mapping[str, Any]], capacity_kbps: float | None, traces: int) -> str:
    """Whether each scheme's rate follows the traces' capacity, rtcc's and the thesis's."""
    if not capacity_kbps:
        return ""
    body = []
    for row in rows:
        scheme = str(row["scheme"])
        ref = thesis.CELLULAR.get(scheme, {})
        mine = follow_index(row.get("video_kbps"), row.get("utilization_mean"), capacity_kbps)
        theirs = follow_index(ref.get("video_kbps"), ref.get("utilization_mean"), capacity_kbps)
        body.append(
            f"<tr><td>{html.escape(scheme)}</td><td>{cell(mine, 1.0)}</td>"
            f'<td class="thesis">{cell(theirs, 1.0)}</td></tr>'
        )
    return (
        "<h3>Does the rate follow the link?</h3>"
        "<p>Video ÷ (utilisation per sample &times; the mean capacity of the "
        f"{traces} traces here, {capacity_kbps:,.0f} kbps): about 1 for a rate that follows "
        "the capacity, well below 1 for one rate held on every trace (a slow trace counts as "
        "fully used by it, a fast one barely). The thesis's values use the thesis's video and "
        "utilisation with the capacity of the traces here (it ran 16), so they show "
        "consistency, not proof.</p>"
        '<div class="scroll"><table><tr><th>scheme</th><th>rtcc</th><th>thesis</th></tr>'
        + "".join(body)
        + "</table></div>"
    )


def _definitions(pulse_s: int, every_s: int) -> str:
    steps = pulse_s // every_s - 1  # the link starts high and alternates every every_s
    items = [
        "Convergence (§6.2.1), from 100 ms bins: <b>up</b> = time from the step to the end "
        "of the first bin whose utilisation (received bytes / capacity) reaches 90 % of the "
        "highest utilisation before the next step; <b>down</b> = time until the frame "
        "latency (mean per capture bin, centred 1 s rolling median) is back within 110 % of "
        "the median over the 10 s before the step, after having left that band (0 if it "
        "never left). Steady state = mean from convergence to the next step. Each is "
        f"averaged over the steps of its direction ({(steps + 1) // 2} down, {steps // 2} up "
        f"in {pulse_s} s).",
        "<b>settle down</b> (rtcc's addition) applies the down rule against the post-step "
        "steady state (median of the last 10 s before the next step): at 500 kbps each "
        "frame takes longer to serialise, so with rtcc's small fixed delays the new level "
        "can sit more than 10 % above the old one and the thesis's rule never fires.",
        "Cellular metrics are per-run means averaged over traces (each trace weighs the "
        "same). Network delay is the per-packet queuing delay (§3.1); utilisation is the "
        "flow's received bytes over the link's capacity.",
        "The backlogged Copa flow has no frames, so its latency cells are empty.",
        *map(html.escape, thesis.NOTES),
    ]
    return "<ul>" + "".join(f"<li>{i}</li>" for i in items) + "</ul>"


def render(
    table: pd.DataFrame,
    images: Mapping[str, tuple[bytes, str]],
    ratios: Mapping[str, float],
    *,
    variant: str,
    pulse_s: int,
    pulse_every_s: int,
    trace_s: int,
    traces: Sequence[str],
    traces_note: str,
    direction: str,
    skipped: Mapping[str, str],
    controllers: Sequence[str],
    computed: int,
    cached: int,
    wall_s: float,
    capacity_kbps: float | None = None,
) -> str:
    """The page. ``table`` is table.csv, ``images`` the figures
    (:func:`rtcc.reproduce.dumbo.figures.render_all`), ``ratios`` Dumbo vs GCC on the traces
    (:func:`rtcc.reproduce.dumbo.experiments.ratios`); the rest describe the run: the
    variant's name and durations, the trace files used, schemes skipped and why, the
    controllers registered, runs simulated and read from the cache, the wall time, and the
    cellular traces' mean capacity (:func:`~rtcc.reproduce.dumbo.experiments.trace_capacity_kbps`).
    """
    parts = [
        f'<p class="meta">{html.escape(variant)} variant · wall time {wall_s:.1f} s '
        f"({computed} runs simulated, {cached} read from the cache) · controllers registered: "
        f"{html.escape(', '.join(controllers))}</p>",
    ]
    if skipped:
        items = "".join(
            f"<li><b>{html.escape(k)}</b>: {html.escape(why)}</li>" for k, why in skipped.items()
        )
        parts.append(f"<p>Schemes skipped (their controller could not run):</p><ul>{items}</ul>")
    pulse_images = {k: v for k, v in images.items() if k.startswith("pulse")}
    parts += [
        "<h2>1. Pulse link (thesis §3.1, §6.2.1)</h2>",
        f"<p>3 Mbps ↔ 500 kbps every {pulse_every_s} s (starting high), 25 ms one-way "
        f"delay, queue unlimited, {pulse_s} s; lagging encoder, Dumbo resolution table. "
        "Thesis values are from §6.2.1 (convergence) and §3.3 (Copa+Dumbo bitrates).</p>",
        comparison(_pulse_rows(table), PULSE_COLUMNS, thesis.PULSE, thesis.PULSE_TEXT),
        *embed(pulse_images),
    ]
    parts.append("<h2>2. Cellular traces (thesis §6.2.2, §6.3, §6.4, App. A)</h2>")
    names = ", ".join(traces)
    used = (
        f" ({direction} direction): {names}. {trace_s} s each, 25 ms one-way "
        "delay, queue unlimited."
        if names
        else ". The cellular experiment was not run."
    )
    parts.append(
        f"<p>{html.escape(traces_note)}{html.escape(used)}" + " The thesis ran the 16 "
        "Mahimahi cellular traces; 13 of those files are available here (three were too "
        "large to obtain), so these averages are not directly comparable with the "
        "thesis's.</p>"
    )
    if traces:
        sources = {k: f"thesis: {s}" for k, s in thesis.CELLULAR_SOURCES.items()}
        rows = _rows(table, "cellular")
        parts.append(comparison(rows, CELLULAR_COLUMNS, thesis.CELLULAR, sources))
        parts += [
            "<h3>Dumbo vs GCC</h3>",
            _ratios(ratios),
            _follows(rows, capacity_kbps, len(traces)),
        ]
    parts += embed({k: v for k, v in images.items() if k not in pulse_images})
    parts += [
        "<h2>Definitions and notes</h2>",
        _definitions(pulse_s, pulse_every_s),
        "<p>Numbers: <code>table.csv</code> (one row per scheme and experiment), "
        "<code>runs.csv</code> (one row per run), "
        "<code>runs/</code> (cached runs); every run is also in the results dataset "
        "(<code>dataset/</code> unless <code>--dataset</code> named another), which "
        "<code>rtcc query</code> reads.</p>",
    ]
    return document("reproducing Dumbo", "Reproducing Dumbo (Karimi, MIT MS thesis 2023)", parts)
