"""The page of one run (``report.html``, written by ``rtcc run`` and :meth:`Result.save`).

Charts first, interactive as on the comparison page (:mod:`rtcc.runcharts`, drawn with
:mod:`rtcc.charts`' bundle): each flow's rates and its controller's target, pacing rate and
capacity estimate against the link's capacity; delays per bin and per frame; delay
distributions. Then the summary's metrics in groups (throughput, delay, video quality, loss,
fairness, the link), each with its words and unit, and the scenario. One self-contained
file: plotly.js and the figures are inlined, so the page reads offline.

``CSS``, :func:`fmt` and :func:`embed_png` are shared with the other pages.
"""

from __future__ import annotations

import base64
import html
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rtcc.metrics import METRICS, Metric

if TYPE_CHECKING:
    from rtcc.result import Result

__all__ = ["CSS", "DELAYS", "GROUPS", "embed_png", "fmt", "render"]

_CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d1d1f;
       max-width: 1180px; margin: 2em auto; padding: 0 1.5em; }
h1 { font-size: 1.6em; margin-bottom: 0.1em; }
h2 { font-size: 1.15em; margin-top: 2em; border-bottom: 1px solid #ddd; padding-bottom: 0.2em; }
.meta { color: #555; }
table { border-collapse: collapse; margin: 0.6em 0; font-variant-numeric: tabular-nums; }
th, td { padding: 0.25em 0.7em; border-bottom: 1px solid #eee; text-align: right; }
th { background: #f5f5f7; font-weight: 600; }
td:first-child, th:first-child { text-align: left; }
.scroll { overflow-x: auto; }
figure { margin: 1.2em 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { color: #555; font-size: 0.9em; }
pre { background: #f5f5f7; padding: 1em; overflow-x: auto; font-size: 12.5px; }
"""

# Public for other self-contained pages (sweep and reproduction reports).
CSS = _CSS

_PAGE_CSS = """
h3 { font-size: 1em; margin: 1.6em 0 0.3em; }
.chart { width: 100%; margin: 0.4em 0 0.2em; }
.caption { color: #555; font-size: 0.9em; margin: 0 0 1em; }
th .sub { display: block; font-weight: 400; color: #666; font-size: 0.85em; }
th.group { text-align: center; border-bottom: 1px solid #ddd; }
td.text { text-align: right; color: #333; }
details summary { cursor: pointer; color: #333; margin: 0.6em 0; }
"""

# Per delay of the summary (its field prefix), the words a row gives it; the columns are
# the statistics a flow has of it (mean, p50, p95, p99, max).
DELAYS: tuple[tuple[str, str], ...] = (
    ("owd_ms", "one-way delay (packets)"),
    ("queue_delay_ms", "queuing delay at the bottleneck (packets)"),
    ("sojourn_ms", "bottleneck sojourn, arrival \u2192 departure (packets)"),
    ("frame_latency_ms", "frame latency, capture \u2192 display"),
    ("frame_delay_ms", "frame delay, encoded \u2192 received"),
    ("sender_wait_ms", "sender wait, capture \u2192 last packet sent"),
    ("transport_delay_ms", "frame transport, first packet sent \u2192 received"),
    ("playout_delay_ms", "playout delay, received \u2192 shown"),
    ("jitter_buffer_ms", "jitter buffer delay given"),
    ("rtt_ms", "round-trip time (TCP)"),
    ("fct_ms", "download completion time"),
)
_STATS = (("mean", "mean"), ("p50", "median"), ("p95", "p95"), ("p99", "p99"), ("max", "max"))

# How the page words what the comparison page's catalogue (rtcc.metrics) does not.
_WORDS: dict[str, Metric] = {
    "probe_kbps": Metric("probes", "kbps"),
    "fec_kbps": Metric("FEC", "kbps"),
    "rtx_kbps": Metric("retransmissions", "kbps"),
    "audio_kbps": Metric("audio", "kbps"),
    "report_kbps": Metric("feedback sent back (reports, ACKs)", "kbps"),
    "target_kbps_mean": Metric("controller target, mean", "kbps"),
    "media_utilization": Metric("media utilisation", "%", 100),
    "capacity_estimate_error": Metric(
        "capacity estimate error, mean |estimate / capacity \u2212 1|", "%", 100
    ),
    "capacity_estimate_within_10": Metric("capacity estimate within 10 %", "% of bins", 100),
    "send_buffer_overshoot": Metric("send buffer over 150 ms", "% of time", 100),
    "send_buffer_undershoot": Metric("send buffer empty", "% of time", 100),
    "objects_started": Metric("downloads started"),
    "objects_completed": Metric("downloads completed"),
    "psnr_db_mean": Metric("PSNR, displayed frames", "dB"),
    "ssim_db_mean": Metric("SSIM, displayed frames", "dB"),
    "ssim_mean": Metric("SSIM, displayed frames", "0\u20131"),
    "psnr_db_displayed": Metric("PSNR on screen", "dB"),
    "ssim_db_displayed": Metric("SSIM on screen", "dB"),
    "ssim_displayed": Metric("SSIM on screen", "0\u20131"),
    "quality_source": Metric("quality measured on"),
    "freeze_count": Metric("freezes", "count"),
    "frames_sent": Metric("frames encoded"),
    "frames_displayed": Metric("frames displayed"),
    "frames_lost": Metric("frames lost"),
    "frames_late": Metric("frames late (discarded)"),
    "frames_skipped": Metric("captures skipped"),
    "key_frames": Metric("key frames"),
    "resolution_switches": Metric("resolution switches"),
    "encoder_drops": Metric("frames the encoder dropped"),
    "packetize_errors": Metric("frames the payload format could not packetize"),
    "frames_unassembled": Metric("frames whose arrived bytes made no frame"),
    "psnr_db_fec_mean": Metric("PSNR of frames rebuilt with FEC", "dB"),
    "cwnd_drops": Metric("captures dropped, congestion window full"),
    "sender_stalls": Metric("sender stalls (1 s without media sent)"),
    "decode_errors": Metric("decode errors"),
    "packets_sent": Metric("packets sent"),
    "packets_dropped": Metric("packets dropped at the bottleneck"),
    "packets_lost": Metric("packets lost after the bottleneck"),
    "late_discard_rate": Metric("frames discarded late", "% of frames", 100),
    "discard_rate": Metric("packets discarded late", "% of received", 100),
    "nacks_sent": Metric("NACKs sent"),
    "plis_sent": Metric("PLIs sent"),
    "rtx_packets": Metric("packets retransmitted"),
    "retransmits": Metric("TCP segments retransmitted"),
    "rtos": Metric("TCP retransmission timeouts"),
    "fec_packets": Metric("FEC packets"),
    "fec_recovered": Metric("packets rebuilt from FEC"),
    "fec_recovered_late": Metric("packets rebuilt from FEC too late"),
    "fec_unrecoverable": Metric("losses FEC could not cover"),
    "fec_unrepaired": Metric("covered packets FEC could not rebuild"),
    "ffre": Metric("FEC frame recovery efficiency (FFRE)", "%", 100),
    "reports_sent": Metric("receiver reports sent"),
    "reports_lost": Metric("receiver reports lost"),
    "link_share": Metric("share of the bottleneck's data", "%", 100),
    "competition_accuracy": Metric("competition detected right", "% of bins", 100),
    "capacity_kbps_mean": Metric("capacity, mean", "kbps"),
    "delivered_kbps": Metric("delivered", "kbps"),
    "utilization_received": Metric("utilisation, bytes received", "%", 100),
    "queue_ms_mean": Metric("queuing delay, mean", "ms"),
    "queue_ms_max": Metric("queuing delay, max", "ms"),
    "drops": Metric("packets dropped"),
}

# The flows' metrics in groups, rows in this order; delays are their own table (DELAYS).
GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Throughput", (
        "video_kbps", "padding_kbps", "probe_kbps", "fec_kbps", "rtx_kbps", "audio_kbps",
        "send_kbps", "goodput_kbps", "report_kbps", "target_kbps_mean", "utilization",
        "utilization_mean", "media_utilization", "capacity_estimate_error",
        "capacity_estimate_within_10", "send_buffer_overshoot", "send_buffer_undershoot",
        "objects_started", "objects_completed",
    )),
    ("Video quality", (
        "psnr_db_mean", "ssim_db_mean", "ssim_mean", "psnr_db_displayed", "ssim_db_displayed",
        "ssim_displayed", "psnr_db_fec_mean", "quality_source", "freeze_ratio", "freeze_ratio_webrtc",
        "freeze_count", "frames_sent", "frames_displayed", "frames_lost", "frames_late",
        "frames_skipped", "key_frames", "resolution_switches", "encoder_drops", "cwnd_drops",
        "sender_stalls", "decode_errors", "packetize_errors", "frames_unassembled",
    )),
    ("Loss", (
        "loss_rate", "packets_sent", "packets_dropped", "packets_lost", "late_discard_rate",
        "discard_rate", "nacks_sent", "plis_sent", "rtx_packets", "retransmits", "fec_packets",
        "fec_recovered", "fec_recovered_late", "fec_unrecoverable", "fec_unrepaired", "ffre",
        "reports_sent", "reports_lost",
    )),
    ("Fairness", ("link_share", "competition_accuracy")),
)  # fmt: skip
# Rows of features a run may not use, left out when zero for every flow.
_IF_USED = frozenset({
    "padding_kbps", "probe_kbps", "fec_kbps", "rtx_kbps", "audio_kbps", "report_kbps",
    "objects_started", "objects_completed", "key_frames", "resolution_switches",
    "encoder_drops", "cwnd_drops", "sender_stalls", "decode_errors", "packetize_errors", "frames_unassembled", "frames_skipped",
    "frames_late", "nacks_sent", "plis_sent", "rtx_packets", "retransmits", "fec_packets", "fec_recovered",
    "fec_recovered_late", "fec_unrecoverable", "fec_unrepaired", "reports_lost",
    "late_discard_rate", "discard_rate", "send_buffer_overshoot", "send_buffer_undershoot",
})  # fmt: skip
# What names a flow (the page's column heads and the Flows table), not a metric.
_LABELS = ("name", "kind", "direction", "cc", "controller", "encoder", "start_s", "stop_s")
_LINK = ("capacity_kbps_mean", "utilization", "utilization_received", "delivered_kbps",
         "queue_ms_mean", "queue_ms_max", "drops")  # fmt: skip
_RUN = ("scenario", "seed", "duration_s", "flows", "link", "reverse_link", "sim")
_JAIN = ("jain_goodput_active", "jain_index")  # the same index; the first name the newer

def fmt(value: Any) -> str:
    """Format a metric for display: None/NaN as an en dash, floats to 4 significant digits."""
    if value is None:
        return "\u2013"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if math.isnan(value):
            return "\u2013"
        if math.isinf(value):
            return "\u221e" if value > 0 else "-\u221e"
        if value != 0 and (abs(value) >= 1e6 or abs(value) < 1e-3):
            return f"{value:.3e}"
        return f"{value:.4g}" if abs(value) < 1000 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def embed_png(png: bytes, alt: str, caption: str) -> str:
    """A ``<figure>`` with the PNG inlined as a data URI, so the page stands alone."""
    data = base64.b64encode(png).decode("ascii")
    return (
        f'<figure><img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'
        f"<figcaption>{html.escape(caption)}</figcaption></figure>"
    )



def _esc(value: Any) -> str:
    return html.escape(fmt(value))


def _words(key: str) -> Metric:
    """How the page names a summary field: its own words, the comparison catalogue's, or
    the field's name."""
    return _WORDS.get(key) or METRICS.get(key) or Metric(key)


def _shown(value: Any, scale: float) -> str:
    """A cell: a number scaled to its unit, or text, never a container's repr."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return _esc(value)
    return _esc(value * scale if scale != 1 else value)


def _used(values: Iterable[Any], key: str) -> bool:
    present = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    if key in _IF_USED:
        return any(v not in (0, 0.0, "") for v in present)
    return bool(present)


def _head_cell(field: str, words: str) -> str:
    """A row's first cell: the words, and the summary field it shows (for a hover)."""
    field = html.escape(field)
    return f'<td data-field="{field}" title="{field}">{html.escape(words)}</td>'


def _flow_heads(flows: Sequence[Mapping[str, Any]]) -> str:
    cells = []
    for i, f in enumerate(flows):
        what = f.get("controller") if f.get("kind", "video") == "video" else f.get("cc")
        sub = f' <span class="sub">{html.escape(str(what))}</span>' if what else ""
        cells.append(f"<th>{html.escape(str(f.get('name', i)))}{sub}</th>")
    return "".join(cells)


def _group_table(flows: Sequence[Mapping[str, Any]], keys: Sequence[str]) -> str | None:
    """Rows of ``keys`` (metric with its unit), one column per flow; None when no row has
    a value."""
    rows = []
    for key in keys:
        values = [f.get(key) for f in flows]
        if not _used(values, key):
            continue
        m = _words(key)
        cells = "".join(f"<td>{_shown(v, m.scale)}</td>" for v in values)
        rows.append(f"<tr>{_head_cell(key, m.title())}{cells}</tr>")
    if not rows:
        return None
    head = f"<tr><th>metric</th>{_flow_heads(flows)}</tr>"
    return '<div class="scroll"><table>' + head + "".join(rows) + "</table></div>"


def _delay_table(flows: Sequence[Mapping[str, Any]]) -> str | None:
    """One row per delay any flow has; per flow its mean, median (where kept), p95, p99 and
    maximum, in ms."""
    stats = [
        (stat, word)
        for stat, word in _STATS
        if any(f.get(f"{prefix}_{stat}") is not None for f in flows for prefix, _ in DELAYS)
    ]
    rows = []
    for prefix, words in DELAYS:
        if not any(f.get(f"{prefix}_{stat}") is not None for f in flows for stat, _ in stats):
            continue
        cells = "".join(
            f"<td>{_shown(f.get(f'{prefix}_{stat}'), 1)}</td>" for f in flows for stat, _ in stats
        )
        rows.append(f"<tr>{_head_cell(prefix, words)}{cells}</tr>")
    if not rows:
        return None
    heads = "".join(
        f'<th class="group" colspan="{len(stats)}">{html.escape(str(f.get("name", i)))}</th>'
        for i, f in enumerate(flows)
    )
    words = "".join(f"<th>{w}</th>" for _ in flows for _, w in stats)
    return (
        '<div class="scroll"><table>'
        f"<tr><th></th>{heads}</tr><tr><th>delay (ms)</th>{words}</tr>"
        + "".join(rows)
        + "</table></div>"
    )


def _link_table(link: Mapping[str, Any], reverse: Mapping[str, Any] | None) -> str:
    """The bottleneck (and the reverse one) as rows of metrics; the utilisation by kind of
    traffic is one row per kind."""
    sides = [("forward", link)] + ([("reverse", reverse)] if reverse else [])
    kinds: list[str] = []
    for _, side in sides:
        by_kind = side.get("utilization_by_kind")
        if isinstance(by_kind, Mapping):
            kinds.extend(k for k, v in by_kind.items() if k not in kinds and v)
    rows = []
    for key in _LINK:
        values = [side.get(key) for _, side in sides]
        if not _used(values, key):
            continue
        m = _words(key)
        cells = "".join(f"<td>{_shown(v, m.scale)}</td>" for v in values)
        rows.append(f"<tr>{_head_cell(key, m.title())}{cells}</tr>")
    for kind in kinds:
        values = [(side.get("utilization_by_kind") or {}).get(kind) for _, side in sides]
        cells = "".join(f"<td>{_shown(v, 100)}</td>" for v in values)
        rows.append(f"<tr><td>utilisation by {html.escape(kind)} (%)</td>{cells}</tr>")
    head = "".join(f"<th>{name}</th>" for name, _ in sides)
    body = "".join(rows)
    return f'<div class="scroll"><table><tr><th>bottleneck</th>{head}</tr>{body}</table></div>'


def _flows_table(flows: Sequence[Mapping[str, Any]]) -> str:
    rows = []
    for i, f in enumerate(flows):
        scheme = f.get("controller") if f.get("kind", "video") == "video" else f.get("cc")
        span = (f.get("start_s"), f.get("stop_s"))
        active = fmt(None) if None in span else f"{fmt(span[0])}\u2013{fmt(span[1])}"
        cells = [f.get("name", i), f.get("kind"), scheme, f.get("encoder"), f.get("direction")]
        rows.append(
            "<tr>" + "".join(f'<td class="text">{_esc(c)}</td>' for c in cells)
            + f'<td class="text">{html.escape(active)}</td></tr>'
        )  # fmt: skip
    head = "".join(
        f"<th>{h}</th>"
        for h in ("flow", "kind", "controller", "encoder", "direction", "active (s)")
    )
    return f'<div class="scroll"><table><tr>{head}</tr>{"".join(rows)}</table></div>'


def _flat(prefix: str, value: Any) -> Iterable[tuple[str, Any]]:
    """``value`` as (dotted name, scalar) pairs: a mapping or list is opened, never shown
    as its repr."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            yield from _flat(f"{prefix}.{k}", v)
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            yield from _flat(f"{prefix}[{i}]", v)
    else:
        yield prefix, value


def _more(summary: Mapping[str, Any], flows: Sequence[Mapping[str, Any]]) -> str | None:
    """The summary's fields no section above shows, by their names (a field added to the
    summary shows here until the page gives it a place)."""
    placed = set(_LABELS) | {k for _, keys in GROUPS for k in keys}
    placed |= {f"{p}_{s}" for p, _ in DELAYS for s, _ in _STATS}
    rows: list[tuple[str, list[Any]]] = []
    keys: list[str] = []
    for f in flows:
        keys.extend(k for k in f if k not in placed and k not in keys)
    for key in keys:
        pairs = [dict(_flat(key, f.get(key))) for f in flows]
        for name in dict.fromkeys(n for p in pairs for n in p):
            rows.append((name, [p.get(name) for p in pairs]))
    run = [
        (name, [value])
        for key, value in summary.items()
        if key not in _RUN and key not in _JAIN
        for name, value in _flat(key, value)
    ]
    if not rows and not run:
        return None
    out = ["<details><summary>Other fields of summary.json</summary>"]
    if rows:
        head = f"<tr><th>field</th>{_flow_heads(flows)}</tr>"
        body = "".join(
            f"<tr><td>{html.escape(n)}</td>" + "".join(f"<td>{_esc(v)}</td>" for v in vs) + "</tr>"
            for n, vs in rows
        )
        out.append(f'<div class="scroll"><table>{head}{body}</table></div>')
    if run:
        body = "".join(f"<tr><td>{html.escape(n)}</td><td>{_esc(v[0])}</td></tr>" for n, v in run)
        out.append(f"<table><tr><th>run</th><th></th></tr>{body}</table>")
    out.append("</details>")
    return "\n".join(out)


def _meta(result: Result, flows: Sequence[Mapping[str, Any]]) -> str:
    summary = result.summary
    timing = getattr(result, "timing", None) or summary.get("sim") or {}
    parts = [f"seed {_esc(summary.get('seed'))}", f"{_esc(summary.get('duration_s'))} s simulated"]
    if timing.get("wall_s") is not None:
        speed = timing.get("speedup")
        parts[-1] += f" in {_esc(timing['wall_s'])} s" + (
            f" ({_esc(speed)}\u00d7 real time)" if speed is not None else ""
        )
    parts.append(f"{len(flows)} flow{'s' if len(flows) != 1 else ''}")
    parts.append(f"source {html.escape(result.source)}")
    return '<p class="meta">' + " \u00b7 ".join(parts) + "</p>"


def _charts(result: Result, page: Any) -> list[str]:
    from rtcc import runcharts

    out = []
    fig, height = runcharts.rates(result)
    out += [
        "<h2>Rates</h2>",
        page.add(fig, "rates", None, height),
        '<p class="caption">Per 100 ms bin: the link\'s capacity (black steps) against each '
        "flow's sending rate (wide, light: everything it put on the wire), video and padding "
        "rates, and its controller's target, pacing rate and capacity estimate, those it "
        "reports. The axis first spans the capacity and the flows' rates (their 99th "
        "percentiles): the modebar's autoscale shows what lies above, such as a pacing rate. "
        "Drag to zoom, double-click to reset; a legend entry hides or shows its line.</p>",
    ]
    fig, height = runcharts.delays(result)
    out += [
        "<h2>Delay over time</h2>",
        page.add(fig, "delay", None, height),
        '<p class="caption">Top: the bottleneck\'s queuing delay and each flow\'s mean '
        "one-way and queuing delay per 100 ms bin. Bottom: each frame's latency (capture "
        "\u2192 display) and delay (encoded \u2192 received), by capture time.</p>",
    ]
    cdfs = runcharts.cdfs(result)
    if cdfs is not None:
        out += [
            page.add(cdfs[0], "cdf", None, cdfs[1]),
            '<p class="caption">Distributions over the whole run, per flow (packets: up to '
            "500,000, evenly taken); the axis is logarithmic when the delays span more than "
            "a factor of 10.</p>",
        ]
    return out


def render(result: Result, images: Mapping[str, bytes] | None = None) -> str:
    """The page as one HTML string. ``images`` are the PNG plots written beside it (named
    on the page; the charts are drawn from the tables)."""
    from rtcc import charts

    summary = result.summary
    flows: list[Mapping[str, Any]] = list(summary.get("flows") or [])
    name = html.escape(result.name)
    page = charts.Charts()
    body = [f"<h1>{name}</h1>", _meta(result, flows)]
    body += _charts(result, page)
    body += ["<h2>Metrics</h2>", "<h3>Flows</h3>"]
    body.append(_flows_table(flows) if flows else "<p>No flows.</p>")
    jain = next((summary[k] for k in _JAIN if summary.get(k) is not None), None)
    for title, keys in GROUPS:
        table = _group_table(flows, keys)
        section = [table] if table is not None else []
        if title == "Fairness" and jain is not None:
            section.insert(
                0,
                f'<p>{html.escape(METRICS["jain_goodput_active"].title())}: '
                f'<b data-field="jain_goodput_active">{_esc(jain)}</b></p>',
            )
        if section:
            body += [f"<h3>{title}</h3>", *section]
        if title == "Throughput":
            delay = _delay_table(flows)
            if delay is not None:
                body += ["<h3>Delay</h3>", delay]
    body += [
        "<h3>Link</h3>",
        _link_table(summary.get("link") or {}, summary.get("reverse_link")),
    ]
    more = _more(summary, flows)
    if more is not None:
        body.append(more)
    if images:
        body.append(
            '<p class="caption">Static figures beside this page: '
            + ", ".join(html.escape(n) for n in images)
            + ".</p>"
        )
    body += [
        "<h2>Scenario</h2>",
        f"<pre>{html.escape(result.scenario_text or '(not recorded)')}</pre>",
    ]
    return (
        "\n".join(
            [
                "<!DOCTYPE html>",
                '<html lang="en"><head><meta charset="utf-8">',
                '<meta name="viewport" content="width=device-width, initial-scale=1">',
                f"<title>rtcc \u2013 {name}</title>",
                f"<style>{_CSS}{_PAGE_CSS}</style>",
                "</head><body>",
                *body,
                page.scripts(),
                "</body></html>",
            ]
        )
        + "\n"
    )
