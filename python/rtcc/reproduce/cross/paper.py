"""The Cross paper's own numbers and setups (Zhang & Yang, "Cross: A Delay Based
Congestion Control Method for RTP Media", arXiv 2409.10042), for the report.

Only numbers the text states are here; the paper's per-case utilisation and delay (Figs.
5-7) are given as figures, not numbers, so only the values §VI-A quotes are compared.
"""

from __future__ import annotations

__all__ = [
    "CASES", "FAST_ADAPTATION_SPIKE_S", "LOSS_UTILIZATION", "NOTES", "ONLINE_FREEZE",
    "TABLE_I", "TABLE_II", "TABLE_II_QUIC", "VIVACE_MEAN", "VI_A_CROSS",
]  # fmt: skip

# Table III: case -> (capacity Mbps, one-way propagation delay ms, queue as ms of capacity).
CASES = {
    1: (3, 30, 90),
    2: (3, 50, 200),
    3: (6, 30, 90),
    4: (6, 50, 200),
    5: (12, 30, 90),
    6: (12, 50, 200),
    7: (15, 30, 90),
    8: (15, 50, 200),
}

# Table I (BBR vs RBBR): case -> (capacity Mbps, one-way delay ms, queue as ms of capacity).
TABLE_I = {1: (6, 100, 300), 2: (12, 50, 150), 3: (15, 30, 100)}

# Table II: packet loss rate (%) per case.
TABLE_II = {
    "bbr": {1: 3.49, 2: 5.90, 3: 3.89},
    "rbbr": {1: 0.62, 2: 1.99, 3: 0.25},
}
# Table II's rows for BBR in QUIC on ns-3, with its window and without it in ProbeBW
# ("QUIC-BBR-NCWND"): a QUIC transfer, not a WebRTC call, so no rtcc scheme runs them.
TABLE_II_QUIC = {
    "QUIC-BBR": {1: 2.06, 2: 1.21, 3: 0.47},
    "QUIC-BBR-NCWND": {1: 8.34, 2: 7.87, 3: 8.83},
}

# §VI-A, Fig. 7: "Cross achieves similar channel utilization about 95.0%" in Cases 4 and 6;
# Vivace "has an average channel utilization of 93.34% across all eight tests".
VI_A_CROSS = {4: 0.95, 6: 0.95}
VIVACE_MEAN = 0.9334

# §VI-B, Fig. 14: channel utilisation in Case 6 with random loss (percent -> fraction).
LOSS_UTILIZATION = {
    "vivace": {2: 0.20},  # "drops to below 20%"
    "nada": {2: 0.4290},
    "nadar": {2: 0.4552},
    "gcc": {8: 0.7950, 10: 0.4113},
    "rbbr": {10: 0.8323},
    "copa": {10: 0.8660},
    "cross": {10: 0.8678},
}

# §VI-C: the large latency spike after 10 -> 4 Mbps lasts "approximate 2 seconds" with
# fast bandwidth adaptation and "approximate 10 seconds" without.
FAST_ADAPTATION_SPIKE_S = {"on": 2.0, "off": 10.0}

# §VI-E, Fig. 19: average freezing duration ratio; the text gives Cases 4 and 6 only.
ONLINE_FREEZE = {"bbr": {4: 0.0611, 6: 0.0108}, "cross": {4: 0.0147, 6: 0.0091}}

NOTES = (
    "Eq. 5 calls OWD_m the median, but its index n·1/4 is the lower quartile; rtcc takes "
    "the index as given (the cross parameter quantile = 0.25).",
    "§VI-B: the paper's Vivace run 'exits abnormally' above 2 % loss, so it has no numbers there.",
    "§VI-E was an online service (Unreal-rendered museum, H.264, about 6 Mbps max, Linux tc "
    "shaping, browser receiver); rtcc's stand-in is a simulated call with the same bandwidth "
    "scripts, so its freeze ratios are not the service's.",
)
