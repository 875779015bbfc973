"""Why each failing cell of the ``rtcc rfc8867`` matrix fails: one line per controller and
case (or a group of cases failing for one reason), with the evidence measured on the full
cases and, where a mechanism was tested, the variant run that showed it (``python3 -m rtcc
rfc8867 ... --out DIR`` on the default settings; the variants change one scenario or
controller field on the same case).

``kind`` says whose the failure is:

- ``design``: a known weakness of that design, as the paper or RFC describes it;
- ``reconstruction``: a weakness of rtcc's reconstruction of a design whose paper leaves
  the rule open (its ``[GAP]``/choice parameters), not of the paper's design;
- ``setting``: an rtcc default a user may change (the controller's own parameter);
- ``defect``: an rtcc model defect, with the setting that removes it where one exists.

A failing cell with no entry shows as "not yet explained". The verdicts move when the
simulator's defaults move (sender timing, feedback format): an entry is about the
mechanism, and its numbers are those of the run it was measured on.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["EXPLANATIONS", "KINDS", "MEASURED", "Explanation", "explain"]

KINDS = {
    "design": "known weakness of the design",
    "reconstruction": "weakness of rtcc's reconstruction",
    "setting": "rtcc default",
    "defect": "rtcc model defect",
}


@dataclass(frozen=True)
class Explanation:
    controllers: tuple[str, ...]
    cases: tuple[str, ...]
    kind: str
    text: str


# Two media flows at a fixed rate each (kbps) beside 5.7's ten web flows: queuing p95 (ms).
_WEB_FIXED = "240/400/590/660/770 kbps: 63/83/149/191/279 ms"


def _web(rates: str, own: str = "") -> str:
    return ("the ten short TCP flows' slow-start bursts fill the queue whenever the media "
            f"leaves them little room (two fixed-rate media flows at {_WEB_FIXED}); here the "
            f"flows hold {rates} kbps" + (f", and {own}" if own else ", which accounts for it"))


_PHASE = ("every camera captures at exactly start + k/30 s, so the flows' frames keep one "
          "phase for the whole run and the frame-bursting estimator's split follows it; with "
          "realistic sender timing (timing = { pacer_tick = \"0ms\" }: capture phase from the "
          "seed, clock drift, encode jitter) ")
_VIVACE_JITTER = ("the utility's RTT-gradient term over 50 ms monitor intervals reads RFC 8867 "
                  "§4.2's 5 ms path jitter (half-normal, no reordering) as congestion: ")
_PUDICA_JITTER = ("the bandwidth utilisation ratio is read from each frame's receive "
                  "dispersion, which RFC 8867 §4.2's 5 ms path jitter stretches: ")
_NADA_RAMP = ("RFC 8698's ramp from the 150 kbps start (RFC 8867 §4.3) and back after a cut "
              "is slow: ")
_BBR_QUEUE = ("BBR keeps up to cwnd_gain 2 x its BDP estimate in flight, so its standing queue "
              "grows with the round trip (5.1: q95 145 ms at 100 ms RTT, 255 ms at 200 ms), and "
              "several BBR flows each add theirs (Hock et al., ICNP 2017): ")
_CROSS_PROBE = ("Cross's ProbeRTT (§V: half rate) re-samples OWD_min from a queue it did not "
                "drain (5.1: OWD_min 56 -> 186 ms at 25-30 s), so it sees less queue than there "
                "is and raises the rate: ")

EXPLANATIONS: tuple[Explanation, ...] = (
    # fixed: no congestion control at all.
    Explanation(("fixed",), ("5.1", "5.1-100", "5.2", "5.3", "5.7"), "setting",
                "no congestion control: a constant 1 Mbps (fixed's default rate), so every "
                "period with less than 1 Mbps per flow (5.1: 0.6 Mbps; 5.2: 1 Mbps for two; "
                "5.3: 0.5 Mbps; 5.7: 2 Mbps for two media and ten web flows) fills the 300 ms "
                "queue (p95 285-295 ms) and loses 26-54 % of packets"),
    # gcc and gcc-probing give the same runs here (probing acts only when application-limited).
    Explanation(("gcc", "gcc-probing"), ("5.1", "5.1-100"), "design",
                "after the 80 s step from 0.6 to 1 Mbps the target climbs additively, about 20 "
                "kbps/s (513 -> 614 kbps in 80-86 s), while it is near the link-capacity "
                "estimate the 0.6 Mbps period left (stable_kbps about 480, AimdRateControl), "
                "and multiplicatively only from 87 s: 10.5 s to the band's 750 kbps"),
    Explanation(("gcc", "gcc-probing"), ("5.3",), "design",
                "each capacity halving (20 s: 2 -> 1 Mbps; 40 s: 1 -> 0.5 Mbps) leaves 2-3 s of "
                "queue above 150 ms (5 s means of one-way delay 247 and 224 ms) before the "
                "overuse cut drains it: the cut to 0.85 of the acknowledged rate drains at 15 % "
                "of capacity"),
    Explanation(("gcc", "gcc-probing"), ("5.4",), "design",
                "late-comer: the flow arriving at 40 s stays at 0.66x the first two (810 against "
                "1103/1304 kbps after 45 s); each flow's AIMD link-capacity estimate is its own "
                "rate at its overuses (stable_kbps 679 against 1003/1195), near it the increase "
                "is additive, and the shared queue's overuse cuts all three together (6-7 cuts "
                "per 10 s each), so the ratio persists"),
    Explanation(("gcc", "gcc-probing"), ("5.7",), "design",
                "each short TCP flow's slow-start burst is a delay gradient the trendline reads "
                "as overuse: the two media flows hold 241 and 235 kbps of the 2 Mbps link (the "
                "same without path jitter) while media and web flows leave 1.2 Mbps idle"),
    Explanation(("gcc", "gcc-probing"), ("8869-2-driving",), "design",
                "libwebrtc's congestion-window pushback: across the trace's delivery gaps the "
                "data in flight exceeds goog_cc's window, the encoder drops frames (61) and the "
                "target stays near 300 kbps on a 6-14 Mbps trace; with drop_frames = false the "
                "rate is 793 kbps"),
    # vivace
    Explanation(("vivace",), ("5.1", "5.2", "5.3", "5.4", "5.8"), "design",
                _VIVACE_JITTER + "5.1 reaches 161 kbps at 10 s (904 without the jitter); usable "
                "utilisation 0.51/0.52/0.27/0.45/0.56 in 5.1/5.2/5.3/5.4/5.8 against "
                "0.85/0.74/0.67/0.80/0.78 with jitter = \"0ms\"; without the jitter 5.1 fills "
                "the queue instead (q95 254 ms), 5.2 loses 2.5 %, 5.3's reverse flow, whose "
                "feedback crosses the congested forward link, stays low (0.31) and 5.4 splits "
                "unevenly (Jain 0.88)"),
    Explanation(("vivace",), ("5.1-100",), "design",
                _VIVACE_JITTER + "usable utilisation 0.40; without the jitter 0.46 and the "
                "queue fills (q95 269 ms): at 200 ms RTT the fixed 50 ms monitor intervals "
                "do not find the 1 Mbps rate in 40 s either way"),
    Explanation(("vivace",), ("5.7",), "design",
                _VIVACE_JITTER + "utilisation 0.42 (0.68 without it) and the two flows split "
                "586/248 kbps; the 239 ms queuing p95 is above what fixed media at those rates "
                "meet (" + _WEB_FIXED + "): not yet explained"),
    Explanation(("vivace",), ("8869-2-driving", "8869-2-short"), "design",
                "the trace's capacity variation reads as a latency gradient: 185 and 202 kbps "
                "(175 and 237 without path jitter); on a constant link at the driving trace's "
                "12.77 Mbps mean the same case gives 823 kbps"),
    # nada, nadar, c-nadu
    Explanation(("nada",), ("5.1", "5.1-100", "5.2", "5.4"), "design",
                _NADA_RAMP + "convergence 20.5/23.5/25/44 s in 5.1/5.1-100/5.2/5.4, of which the "
                "5 ms path jitter costs some (12.5/15/14/34.5 s with jitter = \"0ms\"); 5.4's "
                "last flow takes 40 s to reach 800 kbps"),
    Explanation(("nadar",), ("5.1", "5.1-100", "5.2", "5.4"), "design",
                _NADA_RAMP + "convergence 14.5/18/16/35 s in 5.1/5.1-100/5.2/5.4 "
                "(13/18/16/16 s without path jitter)"),
    Explanation(("c-nadu",), ("5.1-100", "5.2"), "design",
                _NADA_RAMP + "5.1-100 converges in 11 s (11.5 without path jitter) and loses "
                "2.2 % at the 60 s drop to 0.6 Mbps; in 5.2 one flow stays near 600 kbps through "
                "the last period (share 1 Mbps) after the 1 Mbps period cut it"),
    Explanation(("rocc+dumbo",), ("5.6", "5.6-1000"), "design",
                "Dumbo skips captures while the sender's queue is long (skip_threshold); against "
                "the NewReno-filled queue the rocc window keeps it long, so 847 of 3,418 (25 %) "
                "and 1,205 of 3,418 (35 %) captures are skipped and the video sent (117 and 98 "
                "kbps) falls under the 150 kbps minimum the target keeps (159 and 151 kbps); "
                "rocc alone holds 159 and 149 kbps"),
    Explanation(("nada",), ("5.7",), "design",
                _web("683/641", "fixed media at that rate meet 191 ms against these 241: the "
                     "other 50 ms are NADA's own, not yet explained")),
    Explanation(("nadar",), ("5.7",), "design",
                _web("601/628", "fixed media at that rate meet 149-191 ms against these 220: "
                     "the rest is its own, not yet explained")),
    Explanation(("c-nadu",), ("5.7",), "design",
                _web("485/581", "fixed media at that rate meet under 149 ms against these 189: "
                     "the rest is its own, not yet explained")),
    Explanation(("copa",), ("5.7",), "design", _web("794/746")),
    Explanation(("cross",), ("5.7",), "design",
                _web("587/599", "fixed media at that rate meet about 149 ms against these 235 "
                     "(231 without ProbeRTT): the rest is Cross's own, not yet explained")),
    Explanation(("fbra",), ("5.7",), "design",
                _web("678/435", "fixed media at that rate meet under 149 ms against these 230: "
                     "the rest is FBRA's drifting watermarks (below), not tested here")),
    Explanation(("bbr",), ("5.7",), "design", _web("848/848")),
    Explanation(("rbbr",), ("5.7",), "design", _web("915/866")),
    Explanation(("rocc+dumbo",), ("5.7",), "design",
                "delay-based, it yields to each web burst: the two flows hold 485/465 kbps, "
                "usable utilisation 0.476 against the 0.5 threshold, with a queuing p95 of 74 ms"),
    Explanation(("nadar",), ("8869-2-driving",), "design",
                "the trace's capacity variation reads as queuing: 385 kbps; on a constant link "
                "at the trace's 12.77 Mbps mean the same case gives 1294 kbps"),
    # cross
    Explanation(("cross",), ("5.1", "5.3", "5.8"), "reconstruction",
                _CROSS_PROBE + "queuing p95 259/169/188 ms in 5.1/5.3/5.8; with probe_rtt = "
                "false 160/122/142 ms, so 5.3 and 5.8 pass and 5.1 stays just over (the half "
                "rate is §V's; its 200 ms length is rtcc's choice, the paper is silent)"),
    Explanation(("cross",), ("5.1-100", "5.2"), "reconstruction",
                _CROSS_PROBE + "queuing p95 277/238 ms in 5.1-100/5.2, and still 237/204 ms with "
                "probe_rtt = false, when OWD_min stays right: then the capacity drops hold it, "
                "as MIMD moves 5 % per decision (eq. 4, η) at about 2.6 decisions per second "
                "here, so after 5.2's halving at 25 s and its cut to 1 Mbps at 75 s the queue "
                "stays above 140 ms for seconds (5 s means 143 and 163 ms)"),
    Explanation(("cross",), ("5.4",), "design",
                "queuing p95 151 ms against 150 on a constant 3.5 Mbps link with three flows; "
                "not ProbeRTT (163 ms with probe_rtt = false): not yet explained"),
    # bbr, rbbr
    Explanation(("bbr",), ("5.1-100", "5.2", "5.4", "5.8"), "design",
                _BBR_QUEUE + "q95 255/267/179/177 ms in 5.1-100/5.2/5.4/5.8 (5.2's convergence "
                "17 s and the 2-3 % losses come with the full queue)"),
    Explanation(("bbr",), ("5.3",), "design",
                _BBR_QUEUE + "5.3's one forward flow at 100 ms RTT keeps a q95 of 261 ms and "
                "loses 2.4 %, more than 5.1's 145 ms at the same RTT; that its feedback queues "
                "behind the reverse media and lengthens the round trip it measures is not "
                "tested: not yet explained"),
    Explanation(("rbbr",), ("5.1-100", "5.2", "5.3", "5.4", "5.8", "8869-2-short"), "design",
                _BBR_QUEUE + "rbbr keeps BBR's model on a rate: q95 227/287/264/221/296/340 ms "
                "in 5.1-100/5.2/5.3/5.4/5.8/8869-2-short (5.1 at 100 ms RTT: 121 ms)"),
    Explanation(("bbr",), ("5.5",), "design",
                "BBR v1's RTT unfairness: the in-flight cap of 2 BDP gives long-RTT flows more "
                "(Hock et al., ICNP 2017): 505/396/857/1236/1188 kbps over each flow's life for "
                "10/25/50/100/150 ms one way; over the window all five are on, min/max 0.251"),
    # copa
    Explanation(("copa",), ("5.1-100",), "design",
                "at 200 ms RTT the 60 s drop from 2.5 (1.5 used) to 0.6 Mbps takes Copa "
                "several round trips to follow (its window moves by v/(δ·cwnd) per ACK): q95 "
                "150.15 ms and 2.02 % loss, both just past their bounds"),
    # pibes
    Explanation(("pibes",), ("5.1", "5.1-100", "5.2", "5.3"), "design",
                "PIBES sets its rate from the burst-dispersion estimate times a share and its "
                "only delay response is the share falling to s_min (§IV), with no loss "
                "response; rtcc's min_frame_packets = 3 (eq. 1 needs n_min = 3 per burst) also "
                "floors it at 3 x 1200 B x 30 fps = 864 kbps (target 864 throughout 5.1's 0.6 "
                "and 1 Mbps periods): the 300 ms queue fills and 18-34 % of packets are lost; "
                "with min_frame_packets = 0, 5.1 still fails (q95 218 ms, 5.6 % loss)"),
    Explanation(("pibes",), ("5.4", "5.7", "5.8", "8869-2-short"), "design",
                "no loss response and the 864 kbps floor of min_frame_packets = 3: three flows "
                "on 3.5 Mbps keep the queue full (q95 297 ms, 41-58 % loss in 5.4); with "
                "min_frame_packets = 0 5.4's q95 is 30 ms but the flows split unevenly (Jain "
                "0.83, not yet explained)"),
    # sqp
    Explanation(("sqp",), ("5.2", "5.7", "8869-2-driving"), "reconstruction",
                "the queuing baseline (minimum OWD over owd_window = 2 s, at most 100 ms above a "
                "10 s minimum; the paper leaves it open) follows a standing queue: in 5.2 from "
                "85 s it climbs 86 -> 340 ms, the queuing it reads falls to 7-48 ms while the "
                "real queue is 292 ms, and NACK retransmissions (1.0-1.3 Mbps) ride above the "
                "target (2.7 Mbps sent on the 2 Mbps link, 28 % loss); 5.7's 231 ms and the "
                "driving trace's 301 ms (against 300) are the same standing queue; 5.7's Jain "
                "0.86 (479/1110 kbps) is 1.00 with realistic sender timing, which then loses "
                "62 % (the same baseline, not a fix)"),
    # pudica
    Explanation(("pudica",), ("5.1", "5.2", "5.3", "5.5", "5.8", "8869-2-driving", "8869-2-short"),
                "reconstruction",
                _PUDICA_JITTER + "usable utilisation 0.56/0.56/0.60/0.63/0.58 in "
                "5.1/5.2/5.3/5.5/5.8 and 300/500 kbps on the two traces; with jitter = \"0ms\" "
                "0.81/0.89/0.87/0.90/0.88 and 723/1123 kbps: 5.8 and the traces pass, while 5.1 "
                "fills the queue (q95 265 ms, 5.8 % loss), 5.2 loses 4.3 % and takes 25 s, 5.3 "
                "loses 2.05 % and 5.5's min/max is 0.326"),
    Explanation(("pudica",), ("5.1-100",), "reconstruction",
                _PUDICA_JITTER + "usable utilisation 0.56 (0.79 without the jitter; 4.5 % loss "
                "and 15.5 s convergence remain at 200 ms RTT)"),
    Explanation(("pudica",), ("5.7",), "reconstruction",
                _PUDICA_JITTER + "utilisation 0.43 (0.65 without it, then q95 204 ms from the "
                "web flows); Jain 0.81 (638/224 kbps) is 1.00 with realistic sender timing"),
    Explanation(("pudica",), ("5.4",), "reconstruction",
                _PUDICA_JITTER + "usable utilisation 0.58 (0.89 without it); the three flows' "
                "split (1102/513/403 kbps, Jain 0.84) stays with jitter = \"0ms\" and "
                "realistic sender timing (0.79): not yet explained"),
    # salsify
    Explanation(("salsify",), ("5.1", "5.1-100", "5.2"), "design",
                "each frame fits what the link drains in delay_target = 100 ms (§8.4) less what "
                "is in flight, and at 100-200 ms RTT the data in flight takes most of that: 73 % "
                "of a 1 Mbps link in 5.1, usable utilisation 0.60 at 200 ms RTT; with "
                "delay_target = 200ms both 5.1 (0.98) and 5.1-100 (0.90) pass"),
    Explanation(("salsify",), ("5.4",), "defect", _PHASE + "5.4 passes (Jain 0.998)"),
    # rrtcc
    Explanation(("rrtcc",), ("5.1", "5.1-100", "5.2", "5.3", "5.4", "5.8"), "design",
                "the 2013 receive-side rate control raises the REMB by about 4 %/s here (160 -> "
                "818 kbps from 2 to 42 s in 5.1, with no loss and under 8 ms of queue; the "
                "receiver assumes a 200 ms RTT), so from the 150 kbps start and after each cut "
                "it spends most of every period below its share: usable utilisation 0.56/0.60/"
                "0.54/0.43/0.66/0.69 in 5.1/5.1-100/5.2/5.3/5.4/5.8; pacing it (pacing_factor "
                "2.5) changes nothing (5.1: 0.59); the REMB also follows the 60 s drop to "
                "0.6 Mbps late (up to 49 % of a report's packets lost, OWD 344 ms): 5.1's 2.3 % "
                "loss"),
    Explanation(("rrtcc",), ("5.7",), "design",
                "its slow increase (about 4 %/s) restarts after every web burst's overuse: "
                "214/202 kbps, usable utilisation 0.21"),
    Explanation(("rrtcc",), ("8869-2-driving", "8869-2-short"), "design",
                "the trace's capacity variation reads as overuse and the increase is slow: "
                "355/543 kbps; on a constant link at the driving trace's mean, 1054 kbps"),
    # fbra
    Explanation(("fbra",), ("5.1", "5.1-100", "5.2", "5.4", "5.8"), "design",
                "the OWD watermarks are percentiles of the last 2 s of loss-free reports (§4.1), "
                "so they rise with the queue FBRA builds (5.1: high watermark 62 -> 236 ms in the "
                "first 22 s) and DOWN comes late: q95 174/215/201/188/180 ms; the rate swings "
                "about the 0.6 Mbps period (418-546 kbps per 10 s) without 3 s inside ±25 % "
                "(convergence 20 s); path jitter and early-report detection are not the cause "
                "(5.1 without either: 193 and 162 ms)"),
    Explanation(("fbra",), ("5.3",), "design",
                "§4.3 counts a report arriving sooner than half the interval as congestion; "
                "the reverse flow's reports queue behind the forward media and arrive bunched, "
                "so its rate goes DOWN again and again: reverse flow 354 kbps, 965 kbps with "
                "early = 0"),
    Explanation(("fbra",), ("8869-2-driving",), "design",
                "the trace's capacity variation moves the OWD watermarks: 531 kbps; on a "
                "constant link at the trace's mean, 1353 kbps"),
    # burstrtc
    Explanation(("burstrtc",), ("5.5", "5.8"), "defect",
                _PHASE + "Jain 0.58/0.73 become 0.95/0.88 and both cases pass"),
    Explanation(("burstrtc",), ("5.2", "5.4", "5.7"), "defect",
                _PHASE + "Jain 0.76/0.65/0.80 become 0.99/0.93/1.00; what still fails then is "
                "convergence (25 and 37 s: not yet explained) and 5.7's queue from the web "
                "flows (179 ms)"),
    Explanation(("burstrtc",), ("8869-2-driving",), "design",
                "alone on the trace it estimates 2.0-2.6 Mbps of background traffic that does "
                "not exist and 2.3-3.7 Mbps of capacity on a 6-14 Mbps link (the phantom "
                "competitor rtcc's BurstRTC also shows on Verizon-LTE-short: eqs. 3-6 under "
                "bunched delivery, an open question), so it sends 541 kbps; its 387 ms queuing "
                "p95 is 109 ms with realistic sender timing"),
    Explanation(("burstrtc",), ("5.1-100",), "design",
                "converges in 20 s after a capacity change at 200 ms RTT (11.5 s with realistic "
                "sender timing): not yet explained"),
    Explanation(("copa+dumbo",), ("5.2",), "design",
                "after the 1 Mbps period (75-100 s) the two flows climb back unevenly (about "
                "940 and 750 kbps in 100-120 s against a 1 Mbps share): 18.5 s to converge, "
                "not yet explained further"),
)


# The verdicts the explanations were written against (`rtcc rfc8867` with every registered
# controller, full cases, 2026-11-28): per controller, "P" (pass) or "F" (fail) for each case
# of cases.CASES in its order. Each "F" has an explanation and each explanation an "F".
MEASURED: dict[str, str] = {
    "fixed": "FFFFPPPPFPPP",
    "gcc": "FFPFFPPPFPFP",
    "gcc-probing": "FFPFFPPPFPFP",
    "copa": "PFPPPPPPFPPP",
    "rocc": "PPPPPPPPPPPP",
    "vivace": "FFFFFPPPFFFF",
    "nada": "FFFPFPPPFPPP",
    "nadar": "FFFPFPPPFPFP",
    "cross": "FFFFFPPPFFPP",
    "bbr": "PFFFFFPPFFPP",
    "rbbr": "PFFFFPPPFFPF",
    "pibes": "FFFFFPPPFFPF",
    "sqp": "PPFPPPPPFPFP",
    "pudica": "FFFFFFPPFFFF",
    "salsify": "FFFPFPPPPPPP",
    "rrtcc": "FFFFFPPPFFFF",
    "burstrtc": "PFFPFFPPFFFP",
    "c-nadu": "PFFPPPPPFPPP",
    "fbra": "FFFFFPPPFFFP",
    "copa+dumbo": "PPFPPPPPPPPP",
    "rocc+dumbo": "PPPPPPFFFPPP",
}


def explain(controller: str, case: str) -> Explanation | None:
    """The explanation of ``controller`` failing ``case``, or None."""
    for e in EXPLANATIONS:
        if controller in e.controllers and case in e.cases:
            return e
    return None
