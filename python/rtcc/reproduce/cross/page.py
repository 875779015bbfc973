"""The Cross reproduction's self-contained HTML report (report.html): per experiment, rtcc's
numbers with the paper's beside them where its text gives one, the figures, and notes."""

from __future__ import annotations

import html
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from rtcc.reproduce.cross import paper
from rtcc.reproduce.cross.experiments import MULTI_SEEDS, over_seeds
from rtcc.reproduce.page import (
    cell, document, embed, endnotes, failed_runs, meta, problems, scheme_text,
)

if TYPE_CHECKING:
    from rtcc.reproduce.cross.experiments import Outcome

__all__ = ["render"]

# (column, heading, scale)
COLUMNS = (
    ("utilization_received", "utilisation, eq. 6 (%)", 100.0),
    ("owd_ms_mean", "mean one-way delay (ms)", 1.0),
    ("frame_delay_ms_mean", "frame delay, capture → received (ms)", 1.0),
    ("sender_wait_ms_mean", "of it waiting at the sender (ms)", 1.0),
    ("loss_rate", "loss rate (%)", 100.0),
    ("goodput_kbps", "goodput, all flows (kbps)", 1.0),
)


def _table(rows: list[tuple[str, str, list[tuple[Any, ...]]]], headings: list[str]) -> str:
    """Rows of (experiment, scheme, [(value, scale, paper value or None, spread or None)]):
    rtcc's value (a mean over seeds) with its (min, max) over seeds, the paper's in red
    beside it where there is one."""
    out = ['<div class="scroll"><table><tr><th>experiment</th><th>scheme</th>']
    out += [f"<th>{html.escape(h)}</th>" for h in headings]
    out.append("</tr>")
    for experiment, scheme, cells in rows:
        tds = []
        for value, scale, ref, spread in cells:
            text = cell(value, scale)
            if spread is not None:
                text += f" ({cell(spread[0], scale)}-{cell(spread[1], scale)})"
            if ref is not None:
                text += f' <span style="color:#8a1c1c">({cell(ref, scale)})</span>'
            tds.append(f"<td>{text}</td>")
        out.append(
            f"<tr><td>{html.escape(experiment)}</td><td>{scheme_text(scheme)}</td>{''.join(tds)}</tr>"
        )
    out.append("</table></div>")
    return "\n".join(out)


def _rows(
    table: pd.DataFrame, prefix: str, columns: list[tuple[str, float]], ref: Any = None
) -> list[tuple[str, str, list[tuple[Any, ...]]]]:
    """Rows of ``table`` (:func:`over_seeds`'s: one per experiment and scheme)."""
    if table.empty or "utilization_received" not in table:
        return []
    part = table[table["experiment"].str.startswith(prefix)]
    rows = []

    def spread(r: pd.Series, c: str) -> tuple[Any, Any] | None:
        several = r.get("seeds", 1) > 1 and not pd.isna(r.get(f"{c}_min", math.nan))
        return (r[f"{c}_min"], r[f"{c}_max"]) if several else None

    for _, r in part.iterrows():
        refs = ref(r) if ref else {}
        cells = [(r.get(c), s, refs.get(c), spread(r, c)) for c, s in columns]
        rows.append((str(r["experiment"]), str(r["scheme"]), cells))
    return rows


def _number(experiment: str) -> int:
    return int(experiment.split()[-1].rstrip("%"))


def _vi_a_ref(r: pd.Series) -> dict[str, float]:
    case = _number(str(r["experiment"]))
    if r["scheme"] != "cross" or case not in paper.VI_A_CROSS:
        return {}
    return {"utilization_received": paper.VI_A_CROSS[case]}


def _loss_ref(r: pd.Series) -> dict[str, float]:
    ref = paper.LOSS_UTILIZATION.get(str(r["scheme"]), {}).get(_number(str(r["experiment"])))
    return {"utilization_received": ref} if ref is not None else {}


def _table2_ref(r: pd.Series) -> dict[str, float]:
    ref = paper.TABLE_II.get(str(r["scheme"]), {}).get(_number(str(r["experiment"])))
    return {"loss_rate": ref / 100} if ref is not None else {}


def _online_ref(r: pd.Series) -> dict[str, float]:
    ref = paper.ONLINE_FREEZE.get(str(r["scheme"]), {}).get(_number(str(r["experiment"])))
    return {"freeze_ratio_webrtc": ref} if ref is not None else {}


def _adapt_ref(r: pd.Series) -> dict[str, float]:
    key = "off" if "no fast" in str(r["scheme"]) else "on"
    return {"spike_s": paper.FAST_ADAPTATION_SPIKE_S[key]}


# What was tested for NADA and NADAR at 2 % loss (rtcc: 47.4 % and 30.4 % utilisation;
# paper: 42.90 % and 45.52 %), one flow of VI-B, seed 1.
_NADA_LOSS = (
    "<p>NADA and NADAR at 2 % loss. The loss term of RFC 8698's congestion signal, DLOSS x "
    "(p_loss / PLRREF)^2 = 10 ms x 2^2 = 40 ms, outweighs the queue, and the rate settles "
    "at r_ref = PRIO x XREF x RMAX / x_curr (§4.3), so utilisation under loss scales with "
    "RMAX, which the paper does not give (rtcc: the flow's 20 Mbps max_rate). Measured, "
    "rmax 15 / 20 / 30 Mbps: NADA 38.9 / 47.4 / 64.8 %, NADAR 26.4 / 30.4 / 37.0 %; with "
    "dloss = 0 (no loss term) NADA 91.6 %, NADAR 52.2 %. NADAR's gap to NADA is its "
    "ProbeRTT: with it pushed out of the run (probe_rtt_interval = 1000 s) NADAR gives "
    "NADA's 47.4 % and 91.6 % exactly; halving r_ref every 10 s costs more than the "
    "re-sampled base delay gains when the loss term, not the queue, holds the rate. The "
    "paper's order (NADAR 45.52 % above NADA 42.90 %) is not reproduced; RMAX, the loss "
    "term and the ProbeRTT interval were tested, and none reverses it.</p>"
)


def _quic_rows() -> str:
    """Table II's QUIC rows, the paper's numbers only, and why rtcc has none."""
    cases = sorted(next(iter(paper.TABLE_II_QUIC.values())))
    head = "".join(f"<th>case {c}</th>" for c in cases)
    rows = "".join(
        f"<tr><td>{html.escape(name)}</td>"
        + "".join(f"<td>{cell(v[c] / 100, 100.0)}</td>" for c in cases)
        + "</tr>"
        for name, v in paper.TABLE_II_QUIC.items()
    )
    return (
        "<p>Table II's QUIC rows, loss rate (%), the paper's only. They are BBR in a QUIC "
        "transfer on ns-3, with its window and with the window removed in ProbeBW; rtcc "
        "has no QUIC transport, and its BBR schemes are WebRTC calls (bbr: WebRTC's "
        "BbrNetworkController feeding an encoder; rbbr: the paper's Algorithm 1), whose "
        "sending is limited by the encoder's target rather than by a window over an "
        "always-full send buffer, so neither stands in for them.</p>"
        f'<div class="scroll"><table><tr><th>paper</th>{head}</tr>{rows}</table></div>'
    )


def _vivace_mean(table: pd.DataFrame) -> str:
    if table.empty or "utilization_received" not in table:
        return ""
    part = table[table["experiment"].str.startswith("VI-A case") & (table["scheme"] == "vivace")]
    if part.empty or part["utilization_received"].isna().all():
        return ""
    mean = float(part["utilization_received"].mean())
    return (
        f"<p>Vivace's mean utilisation over the cases run: {100 * mean:.1f} % "
        f"(paper, over all eight: {100 * paper.VIVACE_MEAN:.2f} %).</p>"
    )


def render(outcome: Outcome, images: Mapping[str, tuple[bytes, str]]) -> str:
    """The page for ``outcome`` (:func:`rtcc.reproduce.cross.experiments.run`) with its
    figures (:func:`rtcc.reproduce.cross.figures.render_all`)."""
    v = outcome.variant
    failed = failed_runs(outcome.table)
    # One row per experiment and scheme: means over seeds, the Jain indices' spread.
    t = over_seeds(outcome.table)
    main = [(c, s) for c, _, s in COLUMNS]
    heads = [h for _, h, _ in COLUMNS]
    # A table written before the summary's index had its newer name has only jain_index.
    active = "jain_goodput_active" if "jain_goodput_active" in t else "jain_index"
    parts = [
        meta(outcome),
        "<p>Paper's numbers, where its text gives one, in red in parentheses. GCC runs with "
        'the classic loss rule (<code>loss = "classic"</code>), as WebRTC had it then; the '
        "simulated-link runs use the <code>ideal</code> encoder, as the paper's simulated "
        "encoder produced its target rate. Every flow's <code>max_rate</code> is 20 Mbps, "
        "which NADA and NADAR take as RMAX: their equilibrium queuing delay is "
        "XREF x RMAX / rate (RFC 8698 §4.3), 10 ms x 20 Mbps / rate. One-way delay is the "
        "network's only; frame delay is capture to fully received, end to end, and its part "
        "waiting at the sender (capture to the frame's last packet sent: the encoder and the "
        "pacer queue a rate cut leaves behind) is beside it; each is the mean of the flows'. "
        f"VI-A, VI-D and Table II run over seeds 1-{MULTI_SEEDS} (each flow's capture phase and "
        "clock come from the seed): their numbers are means over seeds, and each Jain index "
        "has its min-max over seeds in parentheses; the figures show seed 1.</p>",
    ]
    parts += problems(outcome.skipped, failed, "Schemes skipped")
    a, b, c = v.schedule
    parts += [
        "<h2>VI-A: Table III links, three flows (Figs. 5-12)</h2>",
        f"<p>{v.fairness_s} s; flows at {a[0]}-{a[1]} s, {b[0]}-{b[1]} s, {c[0]}-{c[1]} s; "
        "queue = capacity x the case's time, drop-tail. Utilisation is eq. 6: all flows' "
        "received bytes over capacity x run time.</p>",
        "<p>Figs. 8-12's fairness is read with the flows side by side: Jain's index of the "
        f"three flows' mean received rates over {max(x[0] for x in v.schedule)}-"
        f"{min(x[1] for x in v.schedule)} s, when all three are active. The summary's index "
        "(each flow over its own lifetime) mixes a flow's time alone with its time shared, "
        "so it is shown beside, not used for the claims.</p>",
        _table(
            _rows(t, "VI-A case", [*main, ("jain_aligned", 1.0), (active, 1.0)], _vi_a_ref),
            [
                *heads, "Jain, all three active",
                "Jain, each over its own lifetime (jain_goodput_active)",
            ],  # fmt: skip
        ),
        _vivace_mean(t),
        *embed(
            {
                k: images[k]
                for k in ("case_bars.png", "working_points.png", "rates_vi_a.png", "rates_nada.png")
                if k in images
            }
        ),
        "<h2>VI-B: random loss in Case 6 (Figs. 13-14)</h2>",
        f"<p>One flow, {v.loss_s} s, Bernoulli loss after the bottleneck from 10 s.</p>",
        _table(_rows(t, "VI-B", main, _loss_ref), heads),
        _NADA_LOSS,
        *embed({k: images[k] for k in ("loss_utilization.png",) if k in images}),
        "<h2>VI-C: fast bandwidth adaptation (Figs. 15-16)</h2>",
        f"<p>10 Mbps, 4 Mbps from {v.adapt[0]} s, 10 Mbps from {v.adapt[1]} s; 50 ms one-way, "
        "queue 10 Mbps x 200 ms. Spike: seconds while the capacity is low with one-way delay "
        "above the run's minimum + 100 ms (100 ms bins). Recovery: seconds after the capacity "
        "returns until the target is back within 90 % of its pre-drop mean.</p>",
        _table(
            _rows(t, "VI-C", [("spike_s", 1.0), ("recovery_s", 1.0), *main], _adapt_ref),
            ["delay spike (s)", "recovery (s)", *heads],
        ),
        *embed({k: images[k] for k in ("adaptation.png",) if k in images}),
        "<h2>VI-D: RTT fairness (Fig. 17)</h2>",
        f"<p>15 Mbps; flow 1 at 40 ms RTT from 0 s, flow 2 at 80 ms RTT from {v.rtt[0]} s, "
        f"{v.rtt[1]} s. Jain's index of the two flows' received rates over "
        f"{v.rtt[2]}-{v.rtt[1]} s. The paper gives no numbers: RBBR favours the longer RTT, "
        "NADAR and Cross are fair.</p>",
        _table(
            _rows(t, "VI-D", [("jain_window", 1.0), ("rtt40_kbps", 1.0), ("rtt80_kbps", 1.0)]),
            ["Jain (window)", "40 ms flow (kbps)", "80 ms flow (kbps)"],
        ),
        *embed({k: images[k] for k in ("rates_rtt.png",) if k in images}),
        "<h2>§IV: BBR vs RBBR loss rate (Tables I-II, Fig. 3)</h2>",
        "<p>The paper gives neither the flow count nor the schedule; rtcc runs VI-A's three "
        f"flows over {v.fairness_s} s on Table I's links. bbr is WebRTC's: its congestion "
        "window blocks the pacer, whose 2 s queue-time limit then raises the rate.</p>",
        _table(_rows(t, "Table II", main, _table2_ref), heads),
        _quic_rows(),
        *embed({k: images[k] for k in ("rates_bbr.png",) if k in images}),
        "<h2>VI-E: online evaluation stand-in (Figs. 18-19)</h2>",
        f"<p>Cases 1-3: {v.online_period_s} s troughs at 3/4/6 Mbps with the limit lifted "
        f"({html.escape('100 Mbps')}) for {v.online_period_s} s between them, three troughs; "
        "cases 4-6: constant 3/4/6 Mbps. A 6 Mbps-max call on the default lagging encoder, "
        "25 ms one-way. Freeze ratio by WebRTC's rule (<code>freeze_ratio_webrtc</code>).</p>",
        _table(
            _rows(t, "VI-E", [("freeze_ratio_webrtc", 100.0), *main[:4]], _online_ref),
            ["freeze ratio (%)", *heads[:4]],
        ),
        *embed({k: images[k] for k in ("freeze_ratio.png",) if k in images}),
        *endnotes(paper.NOTES),
    ]
    return document("reproducing Cross", "Reproducing Cross (Zhang & Yang, arXiv 2409.10042)",
                    [p for p in parts if p], paper="paper")  # fmt: skip
