"""A self-contained HTML report of one run: no scripts, no external resources."""

from __future__ import annotations

import base64
import html
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rtcc.result import Result

__all__ = ["CSS", "embed_png", "fmt", "render"]

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

_CAPTIONS = {
    "rates.png": "Link capacity against each flow's sending, video and padding rate.",
    "queue.png": "Queuing delay at the bottleneck.",
    "frame_delay.png": "Frame latency (capture to display) and frame delay "
    "(encoded to fully received) by capture time.",
    "cdf.png": "Distributions of frame latency, frame delay and packet one-way delay.",
}


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


def _flow_table(flows: list[Mapping[str, Any]]) -> str:
    """Metrics as rows, flows as columns: reads better than 20+ columns across."""
    if not flows:
        return "<p>No flows.</p>"
    keys: list[str] = []
    for flow in flows:
        keys.extend(k for k in flow if k not in keys and k != "name")
    head = "".join(f"<th>{html.escape(str(f.get('name', i)))}</th>" for i, f in enumerate(flows))
    rows = [f"<tr><th>metric</th>{head}</tr>"]
    for key in keys:
        cells = "".join(f"<td>{_esc(f.get(key))}</td>" for f in flows)
        rows.append(f"<tr><td>{html.escape(key)}</td>{cells}</tr>")
    return '<div class="scroll"><table>' + "".join(rows) + "</table></div>"


def _kv_table(data: Mapping[str, Any]) -> str:
    if not data:
        return "<p>\u2013</p>"
    rows = "".join(
        f"<tr><td>{html.escape(str(k))}</td><td>{_esc(v)}</td></tr>" for k, v in data.items()
    )
    return f"<table>{rows}</table>"


def render(result: Result, images: Mapping[str, bytes] | None = None) -> str:
    """The report as one HTML string; ``images`` maps plot file names to PNG bytes."""
    summary = result.summary
    name = html.escape(result.name)
    link = summary.get("link", {})
    # The simulator's counts and, from timing.json, its wall time.
    sim = {**summary.get("sim", {}), **(result.timing or {})}
    top = {
        k: v for k, v in summary.items() if k not in ("scenario", "seed", "flows", "link", "sim")
    }

    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>rtcc \u2013 {name}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>{name}</h1>",
        f'<p class="meta">seed {_esc(summary.get("seed"))} \u00b7 '
        f"{_esc(summary.get('duration_s'))} s simulated \u00b7 "
        f"source {html.escape(result.source)}</p>",
        "<h2>Flows</h2>",
        _flow_table(summary.get("flows", [])),
        "<h2>Link</h2>",
        _kv_table(link),
    ]
    if top:
        parts += ["<h2>Run</h2>", _kv_table(top)]
    parts += ["<h2>Simulator</h2>", _kv_table(sim)]
    if images:
        parts.append("<h2>Plots</h2>")
        for filename, png in images.items():
            parts.append(embed_png(png, filename, _CAPTIONS.get(filename, filename)))
    parts += [
        "<h2>Scenario</h2>",
        f"<pre>{html.escape(result.scenario_text or '(not recorded)')}</pre>",
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"
