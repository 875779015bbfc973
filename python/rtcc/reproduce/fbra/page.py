"""The FBRA reproduction's report.html: per table, the mean ± std over seeds of each scheme
at each delay with the paper's mean beside it, the figures, and notes."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from rtcc.reproduce.fbra import paper
from rtcc.reproduce.fbra.experiments import summary
from rtcc.reproduce.page import (
    cell, claims, document, endnotes, failed_runs, findings, meta, problems, scheme_text,
)
from rtcc.reproduce.page import images as _images

if TYPE_CHECKING:
    from rtcc.reproduce.runs import Outcome

__all__ = ["render"]

# End-to-end frame delay and its part spent at the sender, beside the network's OWD.
_DELAYS = (("frame_delay_ms_mean", "frame delay (ms)", 1.0, None, None),
           ("sender_wait_ms_mean", "of it waiting at the sender (ms)", 1.0, None, None))
# The mean TFS's range over the web flows' host_jitter (experiments.HOST_JITTER_MS and 0).
_TFS_JITTER = ("tfs_jitter", "TFS over host_jitter 0-1 ms (%, min-max)", 100.0, None, None)
# (column, header, scale, paper table, index in its tuples or None)
COLUMNS = {
    "Table 1": (("goodput_kbps", "goodput (kbps)", 1.0, paper.TABLE_1, 0),
                ("loss_discard_rate", "lost or discarded (%)", 100.0, paper.TABLE_1, 1),
                ("loss_rate", "lost (%)", 100.0, None, None),
                ("lost_frames", "lost frames", 1.0, paper.TABLE_1, 2),
                ("fec_share", "FEC / media (%)", 100.0, None, None),
                ("frcc", "FRCC (%)", 100.0, None, None),
                ("ffre_frames", "FFRE (%)", 100.0, None, None),
                ("probes_per_min", "probes / min", 1.0, None, None),
                ("owd_ms_mean", "OWD (ms)", 1.0, None, None),
                *_DELAYS),
    "Table 2": (("goodput_kbps", "goodput (kbps)", 1.0, paper.TABLE_2, 0),
                ("loss_discard_rate", "lost or discarded (%)", 100.0, paper.TABLE_2, 1),
                ("lost_frames", "lost frames", 1.0, paper.TABLE_2, 2),
                ("tcp_kbps", "TCP (kbps)", 1.0, paper.TABLE_2, 3),
                ("tfs", "TFS (%)", 100.0, paper.TABLE_2, 4),
                _TFS_JITTER,
                ("frcc", "FRCC (%)", 100.0, None, None),
                ("owd_ms_mean", "OWD (ms)", 1.0, None, None),
                *_DELAYS),
    "Table 3": (("goodput_kbps", "flow 1 (kbps)", 1.0, paper.TABLE_3, 0),
                ("goodput2_kbps", "flow 2 (kbps)", 1.0, paper.TABLE_3, 1),
                ("tcp_kbps", "TCP (kbps)", 1.0, paper.TABLE_3, 2),
                ("tfs", "TFS (%)", 100.0, paper.TABLE_3, 3),
                _TFS_JITTER,
                ("jain_video", "Jain, the two flows (min-max)", 1.0, None, None),
                ("loss_discard_rate", "lost or discarded (%)", 100.0, None, None),
                ("owd_ms_mean", "OWD (ms)", 1.0, None, None),
                *_DELAYS),
    "No loss": (("goodput_kbps", "goodput (kbps)", 1.0, None, None),
                ("utilization", "goodput / capacity (%)", 100.0, None, None),
                ("frcc", "FRCC (%)", 100.0, None, None),
                ("loss_rate", "lost (%)", 100.0, None, None)),
    "GE loss": (("goodput_kbps", "goodput (kbps)", 1.0, None, None),
                ("utilization", "goodput / capacity (%)", 100.0, None, None),
                ("goodput_vs_lossfree", "against no loss (%)", 100.0, None, None),
                ("frcc", "FRCC (%)", 100.0, None, None),
                ("loss_rate", "lost (%)", 100.0, None, None)),
}  # fmt: skip


def _table(s: Any, experiment: str) -> str:
    part = s[s["experiment"] == experiment] if len(s) else s
    # Every run of the case failed: summary() had nothing to average.
    if part.empty or "runs" not in part:
        return "<p>No runs.</p>"
    cols = COLUMNS[experiment]
    out = ['<div class="scroll"><table><tr><th>scheme</th><th>delay</th><th>runs</th>']
    out += [f"<th>{html.escape(h)}</th>" for _, h, _, _, _ in cols]
    out.append("</tr>")
    for _, r in part.iterrows():
        tds = [f"<td>{scheme_text(r['scheme'])}</td>", f"<td>{int(r['delay_ms'])} ms</td>",
               f"<td>{int(r['runs'])}</td>"]  # fmt: skip
        for col, _, scale, ref, idx in cols:
            text = ""
            if col in r and f"{col}_mean" not in r:  # a per-case ratio, no spread
                text = cell(r[col], scale)
            if f"{col}_mean" in r:
                text = f"{cell(r[f'{col}_mean'], scale)} ± {cell(r[f'{col}_std'], scale)}"
            if f"{col}_min" in r and not pd.isna(r[f"{col}_min"]):  # the spread over seeds or jitter
                spread = f"{cell(r[f'{col}_min'], scale)}-{cell(r[f'{col}_max'], scale)}"
                text = f"{text} ({spread})" if text else spread
            if ref is not None and idx is not None:
                got = ref.get(str(r["scheme"]), {}).get(int(r["delay_ms"]))
                if got is not None:
                    text += f' <span style="color:#8a1c1c">({cell(got[idx], 1.0)})</span>'
            tds.append(f"<td>{text}</td>")
        out.append(f"<tr>{''.join(tds)}</tr>")
    out.append("</table></div>")
    return "\n".join(out)


def _mean(s: Any, experiment: str, scheme: str, delay: int, column: str) -> float | None:
    """The mean over seeds of ``column`` in the summary row, None when the run lacks it."""
    if not len(s) or f"{column}_mean" not in s:
        return None
    row = s[(s["experiment"] == experiment) & (s["scheme"] == scheme) & (s["delay_ms"] == delay)]
    if row.empty or pd.isna(row[f"{column}_mean"].iloc[0]):
        return None
    return float(row[f"{column}_mean"].iloc[0])


def computed_findings(s: Any) -> list[str]:
    """Findings stated from this run's summary (:func:`summary`): Table 1's goodput of fbra
    against rrtcc at each delay, and Table 3's TCP fair share per scheme at each delay."""
    out = []
    gaps, refs = [], []
    ref1 = paper.TABLE_1
    for delay in sorted({int(d) for d in s["delay_ms"]}) if len(s) else []:
        f = _mean(s, "Table 1", "fbra", delay, "goodput_kbps")
        r = _mean(s, "Table 1", "rrtcc", delay, "goodput_kbps")
        if f is not None and r:
            gaps.append(f"{100 * (f - r) / r:+.0f} % at {delay} ms")
            if delay in ref1.get("fbra", {}) and delay in ref1.get("rrtcc", {}):
                pf, pr = ref1["fbra"][delay][0], ref1["rrtcc"][delay][0]
                refs.append(f"{100 * (pf - pr) / pr:+.1f} %")
    if gaps:
        said = f" (paper: {', '.join(refs)})" if len(refs) == len(gaps) else ""
        out.append(f"Table 1, this run: fbra's goodput against rrtcc's is {', '.join(gaps)}{said}.")
    shares = []
    for scheme in dict.fromkeys(s["scheme"]) if len(s) else []:
        per = [
            f"{d} ms {100 * v:.0f} %"
            for d in sorted({int(x) for x in s["delay_ms"]})
            if (v := _mean(s, "Table 3", str(scheme), d, "tfs")) is not None
        ]
        if per:
            shares.append(f"{scheme} {', '.join(per)}")
    if shares:
        out.append("TCP fair share in Table 3, this run: " + "; ".join(shares) + ".")
    return out


def render(outcome: Outcome, images: Mapping[str, tuple[bytes, str]]) -> str:
    t = outcome.table
    v = outcome.variant
    s = summary(t)
    failed = failed_runs(t)
    parts = [
        meta(outcome, seeds=v.seeds),
        "<p>Mean ± standard deviation over seeds; the paper's mean in red in parentheses "
        "(its loss rate and lost frames as it counted them).</p>",
        *problems(outcome.skipped, failed.assign(scheme=failed.get("scheme", "")), "Skipped"),
    ]
    for n, title in ((1, "one flow on a variable-capacity link"),
                     (2, "one flow against 10 web-like TCP flows"),
                     (3, "two flows against 10 web-like TCP flows")):  # fmt: skip
        e = f"Table {n}"
        parts += [f"<h2>{e}: {title}</h2>", claims(paper.CLAIMS, [e]), _table(s, e),
                  *_images(images, [f"table{n}.png"])]  # fmt: skip
    parts += ["<h2>Beyond the paper: one flow on 2 Mbps, without loss and with 5 % "
              "Gilbert-Elliott loss</h2>", f"<p>{html.escape(paper.LOSS_CASE)}</p>",
              "<h3>No loss</h3>", _table(s, "No loss"), "<h3>GE loss</h3>", _table(s, "GE loss"),
              "<p>fbra's constants and their sources: docs/fbra-constants.md in the source "
              "tree, and the controller's module documentation.</p>"]  # fmt: skip
    parts += endnotes(
        paper.NOTES, findings(outcome, paper.FINDINGS, computed_findings(s)),
        {"summary.csv": "mean and std per case"},
    )  # fmt: skip
    return document("reproducing FBRA", "Reproducing FBRA (Nagy, Singh, Ott & Eggert)",
                    [p for p in parts if p], paper="paper")  # fmt: skip
