"""Anchor for `rtcc bench --workload tcp`: bare ns-3 (the `ns3` pip wheel) running one
TCP Cubic bulk flow (BulkSendApplication -> PacketSink) for SECONDS (default 120) over
the same path as rtcc's `tcp` workload:

- one 10 Mbps / 20 ms point-to-point link (RTT 40 ms, BDP 50 kB), both directions;
  ACKs travel back over the same link's reverse direction;
- a drop-tail queue of 33 packets (33 x 1500 B = 49.5 kB, 1 BDP) at the sender's
  device, with the traffic-control layer's default queue disc removed so nothing else
  buffers (rtcc: `queue = "33pkt"`);
- MTU 1500, MSS 1448 (timestamps on: 1448 + 52 B of TCP/IP headers = 1500), SACK on,
  delayed ACKs every 2 segments, socket buffers large enough never to limit the window.

`--prr-rfc` replaces ns-3 3.44's PRR (TcpPrrRecovery::DoRecovery), which adds a segment to
DeliveredData for every duplicate ACK although the SACKed bytes are already counted in it:
the window then grows during recovery (to 76 segments from 67 on this path), a second
round of drops follows one RTT after the first and every congestion episode is two
recoveries and two reductions (fixed in ns-3-dev by 05c9099bb, "Fix PRR DeliveredData
double-count with SACK enabled"). The replacement is RFC 6937 PRR counting the SACKed and
cumulatively acknowledged bytes once, as Linux `tcp_cwnd_reduction` counts
`newly_acked_sacked`.

`--access` puts the bottleneck between two routers with 10 Gbps, zero-delay access
links on either side (a three-link dumbbell) instead of one link; the default, a single
link, is the cheaper lower bound for ns-3.

Prints `run_s=<wall seconds of Simulator::Run>` and `goodput_mbps=` (the sink's bytes on
rtcc's wire basis, each 1448 B segment counted with its 52 B of headers, per second) on stdout, one per line, then Cubic's window dynamics: `loss_events=` (entries
into Recovery or Loss), `cwnd_period_s=` (mean time between loss events after the
first, the slow-start exit), `cwnd_trough_pkts=` (median ssthresh each of those events
set, the window after the reduction, in segments) and `retransmits=` (data segments
sent again); and exits 1 with a one-line message on stderr
when ns-3 cannot be imported or the run fails. Usage:
    python ns3_tcp.py [SECONDS] [--access] [--prr-rfc]
"""

import argparse
import time
from typing import NoReturn

import ns3_common  # a sibling module: this script's folder is on sys.path
from ns3_common import MSS

QUEUE_PACKETS = 33  # 1 BDP: 10 Mbps x 40 ms = 50 kB = 33.3 packets of 1500 B
RATE = "10Mbps"
DELAY = "20ms"


# Trace sinks in C++ (cppyy): a Python callback per traced event would cost more
# than the run. Loss events are entries into CA_RECOVERY (3) or CA_LOSS (4); each one's
# trough is the ssthresh set at the same instant; a data segment below the highest
# sequence sent is a retransmission.
TRACE_CPP = r"""
#include <vector>
namespace rtcc_ns3 {
std::vector<double> loss_t, ssthresh_t;
std::vector<uint32_t> ssthresh_v;
uint64_t retransmits = 0;
uint32_t high = 0;
bool seen = false;
void CongState(ns3::TcpSocketState::TcpCongState_t, ns3::TcpSocketState::TcpCongState_t s) {
    if (s == ns3::TcpSocketState::CA_RECOVERY || s == ns3::TcpSocketState::CA_LOSS)
        loss_t.push_back(ns3::Simulator::Now().GetSeconds());
}
void Ssthresh(uint32_t, uint32_t v) {
    ssthresh_t.push_back(ns3::Simulator::Now().GetSeconds());
    ssthresh_v.push_back(v);
}
void Tx(ns3::Ptr<const ns3::Packet> p, const ns3::TcpHeader& h, ns3::Ptr<const ns3::TcpSocketBase>) {
    if (p->GetSize() == 0) return;
    ns3::SequenceNumber32 seq = h.GetSequenceNumber();
    if (seen && seq < ns3::SequenceNumber32(high)) { retransmits++; return; }
    high = (seq + p->GetSize()).GetValue();
    seen = true;
}
void Connect(uint32_t node) {
    std::string base = "/NodeList/" + std::to_string(node) + "/$ns3::TcpL4Protocol/SocketList/0/";
    ns3::Config::ConnectWithoutContext(base + "CongState", ns3::MakeCallback(&CongState));
    ns3::Config::ConnectWithoutContext(base + "SlowStartThreshold", ns3::MakeCallback(&Ssthresh));
    ns3::Config::ConnectWithoutContext(base + "Tx", ns3::MakeCallback(&Tx));
}
void ConnectAt(double at, uint32_t node) { ns3::Simulator::Schedule(ns3::Seconds(at), &Connect, node); }
}
"""


def dynamics(loss_t: list[float], ss_t: list[float], ss_v: list[int], mss: int) -> dict[str, float]:
    """Loss events, their mean spacing after the first and median trough in segments."""
    troughs = []
    for t in loss_t[1:]:
        # The ssthresh set at the loss instant (same simulated time), else the last before.
        at = [v for st, v in zip(ss_t, ss_v) if abs(st - t) < 1e-9] or [
            v for st, v in zip(ss_t, ss_v) if st <= t
        ][-1:]
        if at:
            troughs.append(at[-1] / mss)
    gaps = [b - a for a, b in zip(loss_t[1:], loss_t[2:])]
    troughs.sort()
    return {
        "loss_events": float(len(loss_t)),
        "cwnd_period_s": sum(gaps) / len(gaps) if gaps else float("nan"),
        "cwnd_trough_pkts": troughs[len(troughs) // 2] if troughs else float("nan"),
    }


def fail(msg: str) -> NoReturn:
    ns3_common.fail("ns3_tcp.py", msg)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("seconds", nargs="?", type=float, default=120.0)
    p.add_argument("--access", action="store_true", help="fast access links on both sides")
    p.add_argument("--prr-rfc", action="store_true", help="RFC 6937 PRR in place of ns-3 3.44's")
    a = p.parse_args()
    if not a.seconds > 0:
        fail(f"SECONDS must be positive, got {a.seconds}")
    try:
        from ns import ns
    except Exception as e:  # ImportError, or cppyy failing to load the libraries
        fail(f"cannot import ns-3 (pip install ns3): {e}")

    ns3_common.tcp_defaults(ns, 1 << 22)
    net = ns3_common.Net(ns, 4 if a.access else 2)

    def link(i: int, j: int, rate: str, delay: str, subnet: str) -> object:
        return net.link(i, j, rate, delay, subnet, QUEUE_PACKETS)

    if a.access:
        link(0, 1, "10Gbps", "0ms", "10.1.1.0")
        link(1, 2, RATE, DELAY, "10.1.2.0")
        dst = link(2, 3, "10Gbps", "0ms", "10.1.3.0").GetAddress(1)
        ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
    else:
        dst = link(0, 1, RATE, DELAY, "10.1.1.0").GetAddress(1)
    src_node = net.nodes.Get(0)
    sink = net.bulk(0, net.nodes.GetN() - 1, dst, 5000, 0.0, a.seconds)
    ns.Simulator.Stop(ns.Seconds(a.seconds))

    import cppyy

    cppyy.cppdef(TRACE_CPP)
    tr = cppyy.gbl.rtcc_ns3
    # The sender's socket exists once BulkSend starts (t = 0): connect just after.
    tr.ConnectAt(0.001, src_node.GetId())
    if a.prr_rfc:
        cppyy.cppdef(ns3_common.PRR_CPP)
        cppyy.gbl.rtcc_ns3_prr.InstallAt(0.001, src_node.GetId())

    t0 = time.perf_counter()
    ns.Simulator.Run()
    run_s = time.perf_counter() - t0
    rx = int(sink.GetTotalRx())
    ns.Simulator.Destroy()
    print(f"run_s={run_s:.3f}", flush=True)
    # On rtcc's basis: each delivered segment with its 52 B of headers.
    wire = rx * (MSS + 52) / MSS
    print(f"goodput_mbps={wire * 8 / a.seconds / 1e6:.3f}", flush=True)
    topology = "dumbbell" if a.access else "p2p"
    speedup = a.seconds / max(run_s, 1e-9)
    print(f"sim_s={a.seconds:g} speedup={speedup:.1f}x topology={topology}", flush=True)
    d = dynamics(list(tr.loss_t), list(tr.ssthresh_t), [int(v) for v in tr.ssthresh_v], MSS)
    for k, v in d.items():
        print(f"{k}={v:.3f}", flush=True)
    print(f"retransmits={int(tr.retransmits)}", flush=True)


if __name__ == "__main__":
    ns3_common.run_main("ns3_tcp.py", main)
