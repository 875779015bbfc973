"""The PIBES paper's own numbers and setups (Heimbach, Guo, Ngan & Lee, "PIBES - A
Competing-Flow-Aware Protocol for Real-Time Video Applications"), for the report.

The paper gives numbers only in Table 1 and its parameter settings; its other results are
figures, whose direction the report states in words (``CLAIMS``).
"""

from __future__ import annotations

__all__ = ["CLAIMS", "FINDINGS", "NOTES", "OWD_MS", "S_MAX", "TABLE_1"]

# §IV-B: "The duration of each of the following experiments is 40 seconds, and the
# link's one-way delay is 0.02 seconds."
OWD_MS = 20
S_MAX = 0.95  # §IV: the FSM's s_max; Fig. 10's delay bound sends at 95 % of the link

# Table 1: bandwidth utilisation of one video flow on a 4 Mbps link against 0/1/2 TCP flows.
TABLE_1 = {
    "gcc": {0: 0.73, 1: 0.24, 2: 0.08},  # the paper's "WebRTC" (AppRTC, GCC)
    "salsify": {0: 0.92, 1: 0.37, 2: 0.35},
}

# What each figure shows, in the paper's words (by experiment prefix).
CLAIMS = {
    "Fig. 6": "estimate converged to the link bandwidth with a burst of 3 packets and "
    "stabilised beyond 6",
    "Fig. 7": "accuracy and precision of the estimate decrease as alpha increases",
    "Fig. 8": "competing TCP flows in either direction have a negligible impact on the estimate",
    "Fig. 9": "competition detected shortly after a TCP flow starts; a few isolated wrong "
    "detections",
    "Fig. 10": "PIBES and Salsify use the link fully, WebRTC less; PIBES's frame delay slightly "
    "below Salsify's and close to the bound of sending at 95 % of the link",
    "Fig. 11": "PIBES tracks the 3G capacity with a small gap (s_max); Salsify and WebRTC use "
    "less; Salsify's delay slightly lower",
    "Fig. 12": "PIBES tracks the ramp; Salsify reacts quickly but its frame delay varies more "
    "in the trough; WebRTC lowest throughput",
    "Fig. 13": "PIBES falls to its s_min share (about 2 of 4 Mbps) while TCP runs; Salsify "
    "about 1.5 Mbps; WebRTC keeps falling and recovers slowly",
    "Fig. 14": "PIBES holds about 2 Mbps with one or two TCP flows; WebRTC below 0.5 Mbps "
    "once the second starts",
    "Fig. 15": "on 3G with TCP, PIBES shares by its minimum share; WebRTC and Salsify lose "
    "most of the link",
    "Fig. 16": "on the ramp with TCP, PIBES tracks its minimum share and takes the regained "
    "capacity quickly",
    "Fig. 17": "with R_min = 1.5 Mbps PIBES holds 1.5 Mbps even when the link is 2 Mbps",
    "Fig. 18": "two PIBES flows with s_min = s_max/2 share the link fairly",
}

NOTES = (
    "The paper's WebRTC ran through AppRTC with its real encoder and its own caps; rtcc runs "
    'gcc with libwebrtc\'s default cap for the resolution (caps = "webrtc") and, in Table 1, '
    "uncapped as well. The paper's Salsify ran the authors' code with its two-encoding codec; "
    "rtcc's salsify is the transport with one encoding sized to the budget.",
    "Every flow uses the noise encoder of eq. 7 (frame size = target x (1 + N(0, 0.025))), the "
    "paper's own frame model, so the schemes differ only in their rate control.",
    "The paper does not give the bottleneck queue; rtcc uses 50 packets, Dummynet's default "
    "queue size (the paper's emulator is a modified Dummynet), and shows Table 1 with 150 "
    "packets as well.",
    "Figs. 6-7 ran on a real host, whose timing noise spreads the inter-arrival times; the "
    "simulator's link is exact, so these runs add 0.3 ms of delay jitter (std dev, never "
    "reordering) to give the estimator noise to smooth. Without it every burst size and alpha "
    "give the exact capacity.",
    "The paper's Figs. 12 and 16 ramp the link between 4 and 2 Mbps: rtcc ramps it down over "
    "10-15 s and up over 25-30 s in 0.5 s steps, as the text describes the figures.",
    "Schedules the paper gives only as figures: Fig. 8/9 add a TCP flow every 5 s from 5 s; "
    "Fig. 13 runs TCP over 10-27 s (stated); Fig. 14 starts two TCP flows at 10 and 20 s; "
    "Figs. 15-17 run TCP from 10 s; Fig. 18's second PIBES flow starts at 10 s.",
)

# Where rtcc's runs part from the paper, and why (the numbers are in the tables above).
FINDINGS = (
    "Salsify's mean frame delay is above capped gcc's on the fixed and ramped links (Figs. "
    "10, 12), though below it on the 3G trace: its budget lets 100 ms of data be in flight, so "
    "on a 40 ms round trip it keeps a standing queue of the difference, while capped gcc sends "
    "below the link and queues nothing. The paper could not measure WebRTC's frame delay and "
    "quotes Salsify's own comparison against a real WebRTC, whose encoder and jitter buffer "
    "add delay these models do not have.",
    "Two PIBES flows (Fig. 18) share fairly but overload the link: each detects the other only "
    "while the other's packets land between its own paced packets; when their frames do not "
    "overlap the detector clears, Fig. 4 raises the share by delta per frame back towards "
    "s_max, and the sum of the shares stays above the link (heavy loss, long frame delays). "
    "The paper shows only the two throughputs.",
    "Against Cubic, how much Salsify keeps depends on the queue: with 50 packets (150 ms at 4 "
    "Mbps) TCP cannot push the delay past Salsify's 100 ms budget and Salsify keeps more than "
    "the paper's 37 %; with 150 packets it keeps less. gcc keeps less than the paper's 24 % "
    "against one Cubic flow with either queue.",
)
