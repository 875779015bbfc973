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

__all__ = ["EXPLANATIONS", "KINDS", "Explanation", "explain"]

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


def _deep(q50: str) -> str:
    return ("against the NewReno flow, which keeps the drop-tail queue full, a delay-based "
            "controller yields (RFC 8867 §5.6 asks only that neither starve); with a 50 ms "
            f"queue the same case passes ({q50} of the fair share)")


def _web(rates: str, extra: str = "") -> str:
    return ("the ten short TCP flows' slow-start bursts fill the queue whenever the media "
            "leaves them little room: two media flows at a fixed 240, 400, 660 and 770 kbps "
            f"give a queuing p95 of 63, 83, 191 and 279 ms; here they hold {rates} kbps{extra}")


_PHASE = ("every camera captures at exactly start + k/30 s, so the flows' frames keep one "
          "phase for the whole run and the frame-bursting estimator's split follows it; with "
          "realistic sender timing (timing = { pacer_tick = \"0ms\" }: capture phase from the "
          "seed, clock drift, encode jitter) ")
_VIVACE_JITTER = ("the utility's RTT-gradient term over 50 ms monitor intervals reads RFC 8867 "
                  "§4.2's 5 ms path jitter as congestion (a 20-packet interval's gradient "
                  "varies by several times the 0.01 threshold): ")
_PUDICA_JITTER = ("the bandwidth utilisation ratio is read from each frame's receive "
                  "dispersion, on which RFC 8867 §4.2's 5 ms path jitter weighs as much as the "
                  "link: ")
_NADA_RAMP = ("RFC 8698's ramp from the 150 kbps start (RFC 8867 §4.3) and back after a cut is "
              "slow, and the 5 ms path jitter slows it further: ")
_BBR_QUEUE = ("BBR keeps up to cwnd_gain 2 x its BDP estimate in flight, so its standing queue "
              "is up to one round trip (5.1: q95 145 ms at 100 ms RTT, 255 ms at 200 ms), and "
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
    Explanation(("gcc", "gcc-probing"), ("5.6",), "design",
                "the trendline detector reads the NewReno flow's sawtooth as a positive delay "
                "gradient whatever the queue's depth: 0.173 of the fair share with the 300 ms "
                "queue, 0.195 with a 50 ms queue"),
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
                "0.85/0.74/0.67/0.80/0.78 with jitter = \"0ms\", where 5.1 then fills the queue "
                "(q95 254 ms) and 5.3's reverse flow, whose feedback crosses the congested "
                "forward link, stays low (0.31)"),
    Explanation(("vivace",), ("5.1-100",), "design",
                _VIVACE_JITTER + "usable utilisation 0.40 (0.46 without the jitter); at 200 ms "
                "RTT the fixed 50 ms monitor intervals' utility gradients drive a slower ascent "
                "still (40 s in the 1 Mbps period without reaching the band)"),
    Explanation(("vivace",), ("5.6", "5.6-1000"), "design",
                "the RTT-gradient utility penalises the NewReno flow's sawtooth whatever the "
                "queue's depth: 0.16 of the fair share with the 300 ms queue, 0.167 with a 50 ms "
                "queue"),
    Explanation(("vivace",), ("5.7",), "design",
                _VIVACE_JITTER + "utilisation 0.42 (0.68 without it), the two flows split "
                "586/248 kbps, and the busier one meets the web flows' bursts (" + "fixed media "
                "at 660 kbps per flow: queuing p95 191 ms)"),
    Explanation(("vivace",), ("8869-2-driving", "8869-2-short"), "design",
                "the trace's capacity variation reads as a latency gradient: 185 and 202 kbps "
                "(175 and 237 without path jitter); on a constant link at the driving trace's "
                "12.77 Mbps mean the same case gives 823 kbps"),
    # nada, nadar, c-nadu
    Explanation(("nada",), ("5.1", "5.1-100", "5.2", "5.4"), "design",
                _NADA_RAMP + "convergence 20.5/23.5/25/44 s in 5.1/5.1-100/5.2/5.4, 12.5/15/"
                "14/34.5 s with jitter = \"0ms\" (5.4's last flow takes 40 s to reach 800 "
                "kbps)"),
    Explanation(("nadar",), ("5.1", "5.1-100", "5.2", "5.4"), "design",
                _NADA_RAMP + "convergence 14.5/18/16/35 s in 5.1/5.1-100/5.2/5.4, 13/18/16/16 s "
                "with jitter = \"0ms\""),
    Explanation(("c-nadu",), ("5.1-100", "5.2"), "design",
                _NADA_RAMP + "5.1-100 converges in 11 s (11.5 without jitter, loss 0.9 % "
                "then); in 5.2 one flow stays near 600 kbps for the whole last period (share "
                "1 Mbps) after the 1 Mbps period cut it"),
    Explanation(("nada",), ("5.6", "5.6-1000"), "design", _deep("0.652")),
    Explanation(("nadar",), ("5.6-1000",), "design", _deep("0.447")),
    Explanation(("c-nadu",), ("5.6", "5.6-1000"), "design", _deep("0.494")),
    Explanation(("rocc",), ("5.6", "5.6-1000"), "design", _deep("0.514")),
    Explanation(("rocc+dumbo",), ("5.6", "5.6-1000"), "design", _deep("0.470")),
    Explanation(("rrtcc",), ("5.6", "5.6-1000"), "design", _deep("0.606")),
    Explanation(("nada",), ("5.7",), "design", _web("683/641")),
    Explanation(("nadar",), ("5.7",), "design", _web("601/628")),
    Explanation(("c-nadu",), ("5.7",), "design", _web("485/581")),
    Explanation(("copa",), ("5.7",), "design", _web("794/746")),
    Explanation(("cross",), ("5.7",), "design", _web("587/599", ", with or without ProbeRTT")),
    Explanation(("fbra",), ("5.7",), "design", _web("678/435")),
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
                "false 160/122/142 ms (the half-rate probe and its 200 ms length are the paper's "
                "and rtcc's choice; §V says only that the rate is halved)"),
    Explanation(("cross",), ("5.1-100", "5.2", "5.4"), "reconstruction",
                _CROSS_PROBE + "queuing p95 277/238/151 ms in 5.1-100/5.2/5.4, and still 237/"
                "204/163 ms with probe_rtt = false, when OWD_min stays right: then the capacity "
                "drops hold it, as MIMD moves 5 % per decision (eq. 4, η) at about 2.6 "
                "decisions per second here, so after 5.2's halving at 25 s and its cut to 1 Mbps "
                "at 75 s the queue stays above 140 ms for seconds (5 s means 143 and 163 ms)"),
    # bbr, rbbr
    Explanation(("bbr",), ("5.1-100", "5.2", "5.3", "5.4", "5.8"), "design",
                _BBR_QUEUE + "q95 255/267/261/179/177 ms in 5.1-100/5.2/5.3/5.4/5.8 (5.2's "
                "convergence 17 s and the 2-3 % losses come with the full queue)"),
    Explanation(("rbbr",), ("5.1-100", "5.2", "5.3", "5.4", "5.8", "8869-2-short"), "design",
                _BBR_QUEUE + "rbbr keeps BBR's model on a rate: q95 227/287/264/221/296/340 ms "
                "in 5.1-100/5.2/5.3/5.4/5.8/8869-2-short (5.1 at 100 ms RTT: 121 ms)"),
    Explanation(("bbr",), ("5.5",), "design",
                "BBR v1's RTT unfairness: the in-flight cap of 2 BDP gives long-RTT flows more "
                "(Hock et al., ICNP 2017): 505/396/857/1236/1188 kbps for 10/25/50/100/150 ms "
                "one way, min/max 0.251"),
    # copa
    Explanation(("copa",), ("5.1-100",), "design",
                "at 200 ms RTT the 60 s drop from 2.5 (1.5 used) to 0.6 Mbps takes Copa "
                "several round trips to follow (its window moves by v/(δ·cwnd) per ACK): q95 "
                "150.15 ms and 2.02 % loss, both just past their bounds"),
    # pibes
    Explanation(("pibes",), ("5.1", "5.1-100", "5.2", "5.3"), "setting",
                "min_frame_packets = 3 (so frames keep feeding the burst estimator, eq. 1 "
                "needs n_min = 3) floors the rate at 3 x 1200 B x 30 fps = 864 kbps (target 864 "
                "throughout 5.1's 0.6 and 1 Mbps periods): the 300 ms queue fills and 18-34 % "
                "of packets are lost; with min_frame_packets = 0 5.1 still fails (q95 218 ms, "
                "5.6 % loss): PIBES's only delay response is its share falling to s_min"),
    Explanation(("pibes",), ("5.4", "5.7", "5.8", "8869-2-short"), "setting",
                "the 864 kbps floor of min_frame_packets = 3 and no loss response: three flows "
                "on 3.5 Mbps keep the queue full (q95 297 ms, 41-58 % loss in 5.4); with "
                "min_frame_packets = 0 5.4's q95 is 30 ms (its Jain then 0.83)"),
    # sqp
    Explanation(("sqp",), ("5.2", "5.7", "8869-2-driving"), "reconstruction",
                "the queuing baseline (minimum OWD over owd_window = 2 s, at most 100 ms above a "
                "10 s minimum; the paper leaves it open) follows a standing queue: in 5.2 from "
                "85 s it climbs 86 -> 340 ms, the queuing it reads falls to 7-48 ms while the "
                "real queue is 292 ms, and NACK retransmissions (1.0-1.3 Mbps) ride above the "
                "target (2.7 Mbps sent on the 2 Mbps link, 28 % loss); 5.7's 231 ms and the "
                "driving trace's 301 ms (against 300) are the same standing queue"),
    # pudica
    Explanation(("pudica",), ("5.1", "5.2", "5.3", "5.5", "5.8", "8869-2-driving", "8869-2-short"),
                "reconstruction",
                _PUDICA_JITTER + "usable utilisation 0.56/0.56/0.60/0.63/0.58 in "
                "5.1/5.2/5.3/5.5/5.8 and 300/500 kbps on the two traces; with jitter = \"0ms\" "
                "0.81/0.89/0.87/0.90/0.88 and 723/1123 kbps (5.8 and the traces then pass; 5.1 "
                "fills the queue, q95 265 ms, 5.5's min/max is 0.326)"),
    Explanation(("pudica",), ("5.1-100",), "reconstruction",
                _PUDICA_JITTER + "usable utilisation 0.56 (0.79 without the jitter; 4.5 % loss "
                "and 15.5 s convergence remain at 200 ms RTT)"),
    Explanation(("pudica",), ("5.6", "5.6-1000"), "reconstruction",
                "yields to the NewReno flow whatever the queue's depth (0.154 of the fair share, "
                "0.175 with a 50 ms queue): every frame's dispersion shows a full link"),
    Explanation(("pudica",), ("5.7",), "reconstruction",
                _PUDICA_JITTER + "utilisation 0.43 (0.65 without it, then q95 204 ms from the "
                "web flows); Jain 0.81 (638/224 kbps) is 1.00 with realistic sender timing"),
    # salsify
    Explanation(("salsify",), ("5.1", "5.1-100", "5.2"), "design",
                "each frame fits what the link drains in delay_target = 100 ms (§8.4) less what "
                "is in flight, and at 100-200 ms RTT the data in flight takes most of that: 73 % "
                "of a 1 Mbps link in 5.1, usable utilisation 0.60 at 200 ms RTT; with "
                "delay_target = 200ms both 5.1 (0.98) and 5.1-100 (0.90) pass"),
    # rrtcc
    Explanation(("rrtcc",), ("5.1", "5.1-100", "5.2", "5.3", "5.4", "5.8"), "design",
                "the 2013 receive-side rate control raises the REMB by about 4 %/s here (160 -> "
                "818 kbps from 2 to 42 s in 5.1, with no loss and under 8 ms of queue; the "
                "receiver assumes a 200 ms RTT), so from the 150 kbps start and after each cut "
                "it spends most of every period below its share: usable utilisation 0.56/0.60/"
                "0.54/0.43/0.66/0.69 in 5.1/5.1-100/5.2/5.3/5.4/5.8; pacing it (pacing_factor "
                "2.5) changes nothing (5.1: 0.59)"),
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
    # burstrtc (and the frame-bursting schemes' phase)
    Explanation(("burstrtc",), ("5.2", "5.4", "5.5", "5.7", "5.8"), "defect",
                _PHASE + "Jain 0.76/0.65/0.58/0.80/0.73 in 5.2/5.4/5.5/5.7/5.8 become "
                "0.99/0.93/0.95/1.00/0.88, and 5.5 and 5.8 pass"),
    Explanation(("burstrtc",), ("5.1-100", "8869-2-driving"), "defect",
                _PHASE + "5.1-100's convergence falls from 20 to 11.5 s and the driving "
                "trace's queuing p95 from 387 to 109 ms (its rate stays 532 kbps)"),
    Explanation(("salsify",), ("5.4",), "defect", _PHASE + "5.4 passes (Jain 0.998)"),
    Explanation(("pudica",), ("5.4",), "reconstruction",
                _PUDICA_JITTER + "usable utilisation 0.58 (0.89 without it); the three flows' "
                "split (1102/513/403 kbps, Jain 0.84) stays with jitter = \"0ms\" and "
                "realistic sender timing (0.79): not yet explained"),
    Explanation(("copa+dumbo",), ("5.2",), "design",
                "after the 1 Mbps period (75-100 s) the two flows climb back unevenly (about "
                "940 and 750 kbps in 100-120 s against a 1 Mbps share): 18.5 s to converge"),
)


def explain(controller: str, case: str) -> Explanation | None:
    """The explanation of ``controller`` failing ``case``, or None."""
    for e in EXPLANATIONS:
        if controller in e.controllers and case in e.cases:
            return e
    return None
