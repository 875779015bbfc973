"""The Dumbo reproduction's self-contained HTML report (style and embedding from rtcc.report)."""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rtcc.report import CSS, embed_png, fmt
from rtcc.reproduce import dumbo_thesis as thesis

if TYPE_CHECKING:
    from rtcc.reproduce.dumbo import Outcome

__all__ = ["render"]

_EXTRA_CSS = """
td.thesis { color: #8a1c1c; }
th.group { text-align: center; }
.note { color: #555; font-size: 0.9em; text-align: left; }
"""

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
    ("queue_delay_ms_mean", "network (queuing) delay (ms)", 1.0),
    ("utilization", "utilisation (%)", 100.0),
    ("video_kbps", "video (kbps)", 1.0),
    ("padding_kbps", "dummy / padding incl. probes (kbps)", 1.0),
)


def _num(value: Any, scale: float = 1.0) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return html.escape(fmt(float(value) * scale))


def _comparison(
    rows: Sequence[Mapping[str, Any]],
    columns: Sequence[tuple[str, str, float]],
    reference: Mapping[str, Mapping[str, float]],
    notes: Mapping[str, str],
) -> str:
    """Metrics side by side: rtcc's value, then the thesis's (empty where it gives none)."""
    top = "".join(f'<th class="group" colspan="2">{html.escape(h)}</th>' for _, h, _ in columns)
    sub = "<th>rtcc</th><th>thesis</th>" * len(columns)
    out = [
        '<div class="scroll"><table>',
        f'<tr><th rowspan="2">scheme</th>{top}<th rowspan="2">note</th></tr>',
        f"<tr>{sub}</tr>",
    ]
    for row in rows:
        scheme = str(row["scheme"])
        ref = reference.get(scheme, {})
        cells = "".join(
            f"<td>{_num(row.get(col), scale)}</td>"
            f'<td class="thesis">{_num(ref.get(col), scale)}</td>'
            for col, _, scale in columns
        )
        note = "; ".join(str(n) for n in (row.get("note"), notes.get(scheme)) if n)
        out.append(
            f"<tr><td>{html.escape(scheme)}</td>{cells}"
            f'<td class="note">{html.escape(str(note))}</td></tr>'
        )
    out.append("</table></div>")
    return "\n".join(out)


def _rows(outcome: Outcome, experiment: str) -> list[dict[str, Any]]:
    table = outcome.table
    return [dict(r) for _, r in table[table["experiment"] == experiment].iterrows()]


def _pulse_rows(outcome: Outcome) -> list[dict[str, Any]]:
    """Pulse rows, noting steps whose latency never came back to the pre-step band."""
    rows = _rows(outcome, "pulse")
    for row in rows:
        missed, steps = row.get("down_unconverged"), row.get("steps_down")
        if isinstance(missed, float) and missed > 0:
            extra = (
                f"{missed:.0f} of {steps:.0f} drops never back within 110 % of the "
                "pre-step latency (its average leaves them out; see settle down)"
            )
            row["note"] = "; ".join(str(n) for n in (row.get("note"), extra) if isinstance(n, str))
    return rows


def _ratios(outcome: Outcome) -> str:
    from rtcc.reproduce.dumbo import ratios

    ours = ratios(outcome.table)
    if not ours:
        return (
            "<p>The Dumbo-vs-GCC ratios need GCC and at least one of copa+dumbo, "
            "rocc+dumbo on the traces; they were not available in this run.</p>"
        )
    ref = thesis.CELLULAR_RATIOS
    rows = [
        ("utilisation, Dumbo ÷ GCC", ours["utilization"], ref["utilization"], "+32 %"),
        ("queuing delay, GCC ÷ Dumbo", ours["queue_delay"], ref["queue_delay"], "÷4"),
        ("video bitrate, Dumbo ÷ GCC", ours["video_kbps"], ref["video_kbps"], "+16 %"),
    ]
    body = "".join(
        f"<tr><td>{html.escape(name)}</td><td>{mine:.2f}&times;</td>"
        f'<td class="thesis">{theirs:.2f}&times; ({html.escape(said)}, §6.3)</td></tr>'
        for name, mine, theirs, said in rows
    )
    return f"<table><tr><th>ratio</th><th>rtcc</th><th>thesis</th></tr>{body}</table>"


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


def render(outcome: Outcome, images: Mapping[str, tuple[bytes, str]]) -> str:
    """The page; ``images`` is :func:`rtcc.reproduce.figures.render_all`'s output."""
    v = outcome.variant
    results = [r for r in (outcome.pulse, outcome.cellular) if r is not None]
    computed = sum(r.executed for r in results)
    cached = sum(r.cached for r in results)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<title>rtcc &ndash; reproducing Dumbo</title>",
        f"<style>{CSS}{_EXTRA_CSS}</style></head><body>",
        "<h1>Reproducing Dumbo (Karimi, MIT MS thesis 2023)</h1>",
        f'<p class="meta">{html.escape(v.name)} variant · wall time {outcome.wall_s:.1f} s '
        f"({computed} runs simulated, {cached} read from the cache) · controllers registered: "
        f"{html.escape(', '.join(outcome.controllers))}</p>",
    ]
    if outcome.skipped:
        items = "".join(
            f"<li><b>{html.escape(k)}</b>: {html.escape(why)}</li>"
            for k, why in outcome.skipped.items()
        )
        parts.append(f"<p>Schemes skipped (their controller could not run):</p><ul>{items}</ul>")
    parts += [
        "<h2>1. Pulse link (thesis §3.1, §6.2.1)</h2>",
        f"<p>3 Mbps ↔ 500 kbps every {v.pulse_every_s} s (starting high), 25 ms one-way "
        f"delay, queue unlimited, {v.pulse_s} s; lagging encoder, Dumbo resolution table. "
        "Thesis values are from §6.2.1 (convergence) and §3.3 (Copa+Dumbo bitrates).</p>",
        _comparison(_pulse_rows(outcome), PULSE_COLUMNS, thesis.PULSE, thesis.PULSE_TEXT),
    ]
    parts += [embed_png(png, name, cap) for name, (png, cap) in images.items()
              if name.startswith("pulse")]  # fmt: skip
    parts.append("<h2>2. Cellular traces (thesis §6.2.2, §6.3, §6.4, App. A)</h2>")
    names = ", ".join(p.name for p in outcome.traces)
    used = (
        f" ({outcome.direction} direction): {names}. {v.trace_s} s each, 25 ms one-way "
        "delay, queue unlimited."
        if names
        else ". The cellular experiment was not run."
    )
    parts.append(
        f"<p>{html.escape(outcome.traces_note)}{html.escape(used)}" + " The thesis ran the 16 "
        "Mahimahi cellular traces; 13 of those files are available here (three were too "
        "large to obtain), so these averages are not directly comparable with the "
        "thesis's.</p>"
    )
    if outcome.traces:
        sources = {k: f"thesis: {s}" for k, s in thesis.CELLULAR_SOURCES.items()}
        rows = _rows(outcome, "cellular")
        parts.append(_comparison(rows, CELLULAR_COLUMNS, thesis.CELLULAR, sources))
        parts += ["<h3>Dumbo vs GCC</h3>", _ratios(outcome)]
    parts += [embed_png(png, name, cap) for name, (png, cap) in images.items()
              if not name.startswith("pulse")]  # fmt: skip
    parts += [
        "<h2>Definitions and notes</h2>",
        _definitions(v.pulse_s, v.pulse_every_s),
        "<p>Numbers: <code>table.csv</code> (one row per scheme and experiment), "
        "<code>runs.csv</code> (one row per run), <code>runs/</code> (cached runs).</p>",
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"
