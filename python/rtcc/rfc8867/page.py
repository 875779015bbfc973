"""report.html of ``rtcc rfc8867``: per case, its parameters, the verdict and metrics of
each controller, the thresholds, the rate-vs-capacity and delay-CDF figures; built from the
reproductions' page pieces (:mod:`rtcc.reproduce.page`)."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rtcc.reproduce.page import bullets, document, endnotes, failed_runs, images, meta, problems
from rtcc.reproduce.page import run_table
from rtcc.rfc8867.cases import CASES
from rtcc.rfc8867.explanations import KINDS, explain
from rtcc.rfc8867.metrics import THRESHOLDS

if TYPE_CHECKING:
    from rtcc.reproduce.runs import Outcome

__all__ = ["COLUMNS", "matrix", "render"]

COLUMNS = (
    ("rate_kbps", "rate (kbps)", 1.0), ("utilization", "utilisation (%)", 100.0),
    ("usable_utilization", "of usable capacity (%)", 100.0),
    ("reverse_utilization", "reverse utilisation (%)", 100.0),
    ("reverse_usable_utilization", "reverse, of usable (%)", 100.0),
    ("share_of_fair", "of fair share vs TCP (%)", 100.0),
    ("owd_ms_mean", "OWD mean (ms)", 1.0), ("owd_ms_p95", "OWD p95 (ms)", 1.0),
    ("queue_delay_ms_p95", "queueing p95 (ms)", 1.0), ("loss_rate", "loss (%)", 100.0),
    ("feedback_overhead", "feedback / media (%)", 100.0),
    ("jain", "Jain", 1.0), ("rate_ratio", "min/max rate", 1.0),
    ("convergence_s", "convergence (s)", 1.0), ("oscillation_cv", "oscillation (CV)", 1.0),
)  # fmt: skip

NOTES = (
    "Not modelled: RFC 8869 §2's radio (ns-3 LTE: scheduler, HARQ, handover, UE mobility "
    "and load); the cellular cases replay measured LTE downlink capacity traces instead.",
    "Not modelled: RFC 8869 §3 Wi-Fi (802.11 contention, rate adaptation, aggregation); "
    "the simulator has no shared-medium MAC, so no Wi-Fi case runs.",
    "RFC 8867 §5.8's pause is the flow stopping and the same call starting afresh at the "
    "resume instant: the controller's state is not kept across the pause.",
    "Delay CDFs are over the kept series' 0.5 s bins (each bin's mean one-way delay); the "
    "95th percentiles in the tables are per packet.",
    "Every threshold is a choice derived from the RFC's stated expectation; "
    "docs/rfc8867.md gives each one's reason.",
)


def _thresholds(cid: str) -> str:
    items = [f"{m} {'≥' if side == 'min' else '≤'} {b:g}" for m, side, b in THRESHOLDS[cid]]
    return f"<p>Pass when: {html.escape(', '.join(items))}.</p>"


def matrix(t: Any, explained: bool) -> list[str]:
    """The controller x case matrix of verdicts, then one line per failing cell: the
    thresholds it crossed and, with ``explained``, why (:mod:`~rtcc.rfc8867.explanations`,
    measured on the full cases), or "not yet explained"."""
    if t.empty or "pass" not in t:
        return []
    cases = [c for c in CASES if c in set(t["experiment"])]
    schemes = list(dict.fromkeys(t["scheme"]))
    cell = {(r["scheme"], r["experiment"]): r for _, r in t.iterrows()}
    out = ["<style>table.matrix td.pass{background:#e6f4ea}table.matrix td.fail{background:#fce8e6}</style>",
           '<div class="scroll"><table class="matrix"><tr><th>controller</th>']
    out += [f"<th>{html.escape(c)}</th>" for c in cases] + ["<th>passed</th></tr>"]
    for sc in schemes:
        out.append(f"<tr><td>{html.escape(sc)}</td>")
        passed = 0
        for c in cases:
            r = cell.get((sc, c))
            if r is None:
                out.append("<td>&ndash;</td>")
            elif r["pass"] is True:
                passed += 1
                out.append('<td class="pass">PASS</td>')
            else:
                out.append(f'<td class="fail" title="{html.escape(str(r.get("why") or ""))}">FAIL</td>')
        out.append(f"<td>{passed}/{sum((sc, c) in cell for c in cases)}</td></tr>")
    out.append("</table></div>")
    lines = []
    for sc in schemes:
        for c in cases:
            r = cell.get((sc, c))
            if r is None or r["pass"] is True:
                continue
            line = f"{c} · {sc}: {r.get('why') or 'failed'}"
            if explained:
                e = explain(sc, c)
                line += f" — {KINDS[e.kind]}: {e.text}" if e else " — not yet explained"
            lines.append(line)
    note = ("" if explained else
            "<p>Explanations are given for the full cases only: the thresholds and the "
            "explanations' numbers are the full cases'.</p>")  # fmt: skip
    return ["<h2>Matrix</h2>", "".join(out), "<h3>Failures</h3>", note, bullets(lines)]


def render(outcome: Outcome, found: Mapping[str, tuple[bytes, str]]) -> str:
    t = outcome.table
    parts = [meta(outcome), *problems(outcome.skipped, failed_runs(t))]
    parts += matrix(t, explained=outcome.variant.name == "full")
    for cid, case in CASES.items():
        part = t[t["experiment"] == cid] if "experiment" in t else t
        cols = [c for c in COLUMNS if c[0] in part and part[c[0]].notna().any()]
        parts += [f"<h2>{html.escape(case.section)}: {html.escape(case.title)}</h2>",
                  _thresholds(cid),
                  run_table(part, [("pass", "pass", 1.0), *cols], ["scheme"])
                  if not part.empty else "<p>No runs.</p>",
                  *images(found, [f"rate_{cid}.png", f"cdf_{cid}.png"])]  # fmt: skip
    parts += endnotes(NOTES)
    return document("RFC 8867 evaluation", "RMCAT evaluation: RFC 8867 test cases, RFC 8868 "
                    "metrics", [p for p in parts if p], paper="rfc")  # fmt: skip
