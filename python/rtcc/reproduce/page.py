"""HTML pieces every reproduction's report shares: the self-contained page (rtcc's report
style, from :mod:`rtcc.report`), tables of rtcc's numbers beside the paper's, and figures
embedded as data URIs. Each paper's page module assembles these from data passed in."""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rtcc.report import CSS, embed_png, fmt

if TYPE_CHECKING:
    from rtcc.reproduce.runs import Outcome

__all__ = [
    "bullets", "by_prefix", "cell", "claims", "comparison", "document", "embed", "endnotes",
    "failed_runs", "findings", "images", "meta", "problems", "run_table", "scheme_text",
]  # fmt: skip

# {paper} is the CSS class of the paper's cells in comparison().
_COMPARISON_CSS = """
td.{paper} {{ color: #8a1c1c; }}
th.group {{ text-align: center; }}
.note {{ color: #555; font-size: 0.9em; text-align: left; }}
td.note {{ min-width: 14em; max-width: 34em; }}
.scroll {{ max-width: 100%; }}
"""


RECONSTRUCTION_MARK = " (reconstruction)"


def scheme_text(label: Any) -> str:
    """A scheme's name as every table shows it, escaped: marked when the controller registry
    flags it as a reconstruction (:func:`rtcc.reproduce.runs.is_reconstruction`)."""
    from rtcc.reproduce.runs import is_reconstruction

    text = str(label)
    return html.escape(text + (RECONSTRUCTION_MARK if is_reconstruction(text) else ""))


def cell(value: Any, scale: float = 1.0) -> str:
    """A table cell's text: ``value * scale`` as :func:`rtcc.report.fmt` shows it, escaped;
    empty for None/NaN (the paper gives no number)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return html.escape(fmt(float(value) * scale))


def comparison(
    rows: Sequence[Mapping[str, Any]],
    columns: Sequence[tuple[str, str, float]],
    reference: Mapping[str, Mapping[str, float]],
    notes: Mapping[str, str],
    paper: str = "thesis",
) -> str:
    """Metrics side by side per scheme: rtcc's value, then the paper's (empty where it gives
    none). ``columns`` are (column, heading, scale); ``reference`` and ``notes`` are keyed
    by scheme; ``paper`` names the paper's sub-column (and its cells' CSS class)."""
    top = "".join(f'<th class="group" colspan="2">{html.escape(h)}</th>' for _, h, _ in columns)
    sub = f"<th>rtcc</th><th>{html.escape(paper)}</th>" * len(columns)
    out = [
        '<div class="scroll"><table>',
        f'<tr><th rowspan="2">scheme</th>{top}<th rowspan="2">note</th></tr>',
        f"<tr>{sub}</tr>",
    ]
    for row in rows:
        scheme = str(row["scheme"])
        ref = reference.get(scheme, {})
        cells = "".join(
            f"<td>{cell(row.get(col), scale)}</td>"
            f'<td class="{html.escape(paper)}">{cell(ref.get(col), scale)}</td>'
            for col, _, scale in columns
        )
        note = "; ".join(str(n) for n in (row.get("note"), notes.get(scheme)) if n)
        out.append(
            f"<tr><td>{scheme_text(scheme)}</td>{cells}"
            f'<td class="note">{html.escape(str(note))}</td></tr>'
        )
    out.append("</table></div>")
    return "\n".join(out)


def embed(images: Mapping[str, tuple[bytes, str]]) -> list[str]:
    """``{filename: (png, caption)}`` as ``<figure>`` elements, in order."""
    return [embed_png(png, name, caption) for name, (png, caption) in images.items()]


def document(title: str, heading: str, body: Iterable[str], paper: str = "thesis") -> str:
    """The whole page: ``title`` after "rtcc &ndash; " in the tab, ``heading`` as its <h1>, then
    the ``body`` HTML parts; ``paper`` as in :func:`comparison`."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>rtcc &ndash; {html.escape(title)}</title>",
        f"<style>{CSS}{_COMPARISON_CSS.format(paper=paper)}</style></head><body>",
        f"<h1>{html.escape(heading)}</h1>",
        *body,
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def problems(skipped: Mapping[str, str], failed: Any, heading: str = "Skipped") -> list[str]:
    """HTML lists of what was skipped (name -> why) and of the runs that failed (rows of a
    table with ``experiment``, ``scheme`` and ``error``); nothing for none."""
    out = []
    if skipped:
        items = "".join(
            f"<li><b>{html.escape(k)}</b>: {html.escape(w)}</li>" for k, w in skipped.items()
        )
        out.append(f"<p>{html.escape(heading)}:</p><ul>{items}</ul>")
    if len(failed):
        items = "".join(
            f"<li>{html.escape(str(r['experiment']))} · {scheme_text(r['scheme'])}: "
            f"{html.escape(str(r['error']))}</li>"
            for _, r in failed.iterrows()
        )
        out.append(f"<p>Runs that failed:</p><ul>{items}</ul>")
    return out


def run_table(
    part: Any,
    columns: Sequence[tuple[str, str, float]],
    keys: Sequence[str],
    ref: Mapping[tuple[Any, ...], Mapping[str, float]] | None = None,
) -> str:
    """One row per run of the DataFrame ``part``: its ``keys`` columns, then rtcc's values
    (``(column, header, scale)``) with the paper's beside them (red, in parentheses) where
    ``ref`` has one for the row's key tuple."""
    if part.empty:
        return "<p>No runs.</p>"
    out = ['<div class="scroll"><table><tr>']
    out += [f"<th>{html.escape(k)}</th>" for k in keys]
    out += [f"<th>{html.escape(h)}</th>" for _, h, _ in columns]
    out.append("</tr>")
    for _, r in part.iterrows():
        key = tuple(r.get(k) for k in keys)
        refs = (ref or {}).get(key, {})
        tds = [
            f"<td>{scheme_text(v) if k == 'scheme' else html.escape(str(v))}</td>"
            for k, v in zip(keys, key, strict=True)
        ]
        for col, _, scale in columns:
            text = cell(r.get(col), scale)
            if col in refs:
                text += f' <span style="color:#8a1c1c">({cell(refs[col], scale)})</span>'
            tds.append(f"<td>{text}</td>")
        out.append(f"<tr>{''.join(tds)}</tr>")
    out.append("</table></div>")
    return "\n".join(out)


def by_prefix(table: Any, prefix: str) -> Any:
    """The rows of a run table whose ``experiment`` starts with ``prefix``."""
    if table.empty or "experiment" not in table:
        return table
    return table[table["experiment"].str.startswith(prefix)]


def claims(said: Mapping[str, str], prefixes: Sequence[str]) -> str:
    """What the paper's figures show (``said``: prefix -> words), for ``prefixes``."""
    items = "".join(
        f"<li><b>{html.escape(p)}</b>: {html.escape(said[p])}</li>" for p in prefixes if p in said
    )
    return f"<p>The paper's figures show:</p><ul>{items}</ul>"


def images(found: Mapping[str, tuple[bytes, str]], names: Sequence[str]) -> list[str]:
    """The figures ``names`` of ``found`` that exist, embedded in that order."""
    return embed({k: found[k] for k in names if k in found})


def meta(outcome: Outcome, *, seeds: int | None = None, traces: bool = False) -> str:
    """The page's first line: the variant (and its ``seeds``), the wall time, the runs
    simulated and read from the cache, the traces folder (with ``traces``) and the
    controllers registered."""
    results = outcome.results.values()
    computed = sum(r.executed for r in results)
    cached = sum(r.cached for r in results)
    parts = [f"{html.escape(outcome.variant.name)} variant"]
    if seeds is not None:
        parts.append(f"{seeds} seeds")
    parts.append(
        f"wall time {outcome.wall_s:.1f} s ({computed} runs simulated, {cached} read from "
        "the cache)"
    )
    if traces:
        parts.append(f"traces: {html.escape(outcome.traces or 'none')}")
    parts.append(f"controllers registered: {html.escape(', '.join(outcome.controllers))}")
    return f'<p class="meta">{" · ".join(parts)}</p>'


def failed_runs(table: Any) -> Any:
    """The rows of a run table whose run failed (an ``error``); none without that column."""
    return table[table["error"].notna()] if "error" in table else table.iloc[0:0]


def bullets(items: Iterable[str]) -> str:
    """``items`` as an HTML list, escaped."""
    return "<ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in items) + "</ul>"


def findings(
    outcome: Outcome, written: Sequence[str], computed: Sequence[str] = ()
) -> list[str]:
    """Where rtcc differs from the paper, for this page's run: ``computed`` (sentences made
    from this run's table) always; ``written`` (prose whose numbers were measured on the
    full variant) only on a full run's page, so a shorter run never quotes numbers it did
    not produce."""
    if outcome.variant.name == "full":
        return [*computed, *written]
    return [
        *computed,
        f"The other findings were measured on the full variant; this page is of the "
        f"{outcome.variant.name} variant, whose numbers are in the tables above.",
    ]


def endnotes(
    notes: Iterable[str],
    findings: Iterable[str] | None = None,
    files: Mapping[str, str] | None = None,
) -> list[str]:
    """The page's end: where rtcc differs from the paper (``findings``, when given), the
    ``notes``, and the files a reproduction writes (``files``: more of them, name -> what,
    after table.csv)."""
    out = []
    if findings is not None:
        out += ["<h2>Where rtcc differs from the paper</h2>", bullets(findings)]
    more = "".join(
        f"<code>{html.escape(k)}</code> ({html.escape(w)}), " for k, w in (files or {}).items()
    )
    out += [
        "<h2>Notes</h2>",
        bullets(notes),
        f"<p>Numbers: <code>table.csv</code> (one row per run), {more}<code>runs.csv</code> "
        "(each run's labels and key), <code>runs/</code> (cached runs); every run is also in "
        "the results dataset (<code>dataset/</code> unless <code>--dataset</code> named "
        "another), which <code>rtcc query</code> reads.</p>",
    ]
    return out
