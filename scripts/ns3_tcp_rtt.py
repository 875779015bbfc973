"""Anchor for Cubic's RTT unfairness: bare ns-3 (the `ns3` pip wheel) running two TCP
Cubic bulk flows (BulkSendApplication -> PacketSink) through one bottleneck, one with a
short and one with a long RTT, as rtcc's scenario

    [link]  capacity = "10Mbps", delay = "20ms", queue = "100pkt"
    [[flow]] kind = "tcp", cc = "cubic"
    [[flow]] kind = "tcp", cc = "cubic", access_delay = "40ms"

- a dumbbell: both senders reach router A over 10 Gbps access links (the short flow's
  0 ms, the long flow's --access, default 40 ms, crossed by its data and its ACKs: RTT 40
  and 120 ms); A -> B is the
  10 Mbps / 20 ms bottleneck with a drop-tail queue of QUEUE packets (default 100) at A's
  device, no traffic-control queue disc above it; B reaches the sinks over 10 Gbps, 0 ms;
- MTU 1500, MSS 1448 (timestamps on), SACK on, delayed ACKs every 2 segments, socket
  buffers that never limit the window, 200 ms minimum RTO, initial window 10 (as
  `scripts/ns3_tcp.py`);
- `--prr-rfc`: ns-3 3.44's PRR (TcpPrrRecovery::DoRecovery) adds a segment to
  DeliveredData for every duplicate ACK even with SACK, where the SACKed bytes are
  already counted, so the window grows during recovery and a second loss round
  follows (fixed in ns-3-dev by 05c9099bb, "Fix PRR DeliveredData double-count with SACK
  enabled"); this flag replaces it with `scripts/ns3_tcp.py`'s RFC 6937 PRR, which counts
  the SACKed bytes once.

Prints `share_short=` (the short flow's part of both sinks' bytes over [WARMUP, SECONDS]),
`goodput_short_mbps=`, `goodput_long_mbps=`, `recoveries_short=` and `recoveries_long=`
(entries into Recovery or Loss), one per line; exits 1 with a one-line message on stderr
when ns-3 cannot be imported or the run fails. Usage:
    python ns3_tcp_rtt.py [SECONDS] [--warmup S] [--access MS] [--queue PKTS] [--seed N]
        [--start-long S] [--prr-rfc]
"""

import argparse
from typing import NoReturn

import ns3_common  # a sibling module: this script's folder is on sys.path
from ns3_common import MSS

RATE = "10Mbps"
DELAY = "20ms"

# Recovery entries per socket; --prr-rfc installs ns3_common.PRR_CPP, RFC 6937 PRR.
TRACE_CPP = r"""
#include "ns3/config.h"
namespace rtcc_ns3_rtt {
uint64_t recoveries[2] = {0, 0};
void State0(ns3::TcpSocketState::TcpCongState_t, ns3::TcpSocketState::TcpCongState_t s) {
    if (s == ns3::TcpSocketState::CA_RECOVERY || s == ns3::TcpSocketState::CA_LOSS) recoveries[0]++;
}
void State1(ns3::TcpSocketState::TcpCongState_t, ns3::TcpSocketState::TcpCongState_t s) {
    if (s == ns3::TcpSocketState::CA_RECOVERY || s == ns3::TcpSocketState::CA_LOSS) recoveries[1]++;
}
void Setup(uint32_t node, int which, bool prr) {
    std::string base = "/NodeList/" + std::to_string(node) + "/$ns3::TcpL4Protocol/SocketList/0";
    ns3::Config::ConnectWithoutContext(base + "/CongState", ns3::MakeCallback(which == 0 ? &State0 : &State1));
    if (prr) rtcc_ns3_prr::Install(node);
}
void SetupAt(double at, uint32_t node, int which, bool prr) {
    ns3::Simulator::Schedule(ns3::Seconds(at), &Setup, node, which, prr);
}
}
"""


def fail(msg: str) -> NoReturn:
    ns3_common.fail("ns3_tcp_rtt.py", msg)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("seconds", nargs="?", type=float, default=120.0)
    p.add_argument("--warmup", type=float, default=20.0, help="seconds left out of the share")
    p.add_argument("--access", type=float, default=40.0, help="the long flow's extra one-way ms")
    p.add_argument("--queue", type=int, default=100, help="bottleneck queue, packets")
    p.add_argument("--seed", type=int, default=1, help="ns-3 RngRun")
    p.add_argument("--start-long", type=float, default=0.0, help="the long flow's start, s")
    p.add_argument("--prr-rfc", action="store_true", help="RFC 6937 PRR in place of ns-3 3.44's")
    a = p.parse_args()
    if not a.seconds > a.warmup >= 0:
        fail(f"need SECONDS > --warmup >= 0, got {a.seconds} and {a.warmup}")
    if a.access < 0 or a.queue < 1 or not 0 <= a.start_long < a.warmup:
        fail(
            f"need --access >= 0, --queue >= 1 and 0 <= --start-long < --warmup, "
            f"got {a.access}, {a.queue} and {a.start_long}"
        )
    try:
        from ns import ns
    except Exception as e:  # ImportError, or cppyy failing to load the libraries
        fail(f"cannot import ns-3 (pip install ns3): {e}")

    ns.RngSeedManager.SetRun(a.seed)
    ns3_common.tcp_defaults(ns, 1 << 23)

    # 0, 1: senders (short, long); 2, 3: routers A, B; 4, 5: sinks.
    net = ns3_common.Net(ns, 6)
    link = net.link

    big = 10000  # access links never queue for long
    link(0, 2, "10Gbps", "0ms", "10.1.1.0", big)
    link(1, 2, "10Gbps", f"{a.access:g}ms", "10.1.2.0", big)
    link(2, 3, RATE, DELAY, "10.1.3.0", a.queue)
    dst = [
        link(3, 4, "10Gbps", "0ms", "10.1.4.0", big).GetAddress(1),
        link(3, 5, "10Gbps", "0ms", "10.1.5.0", big).GetAddress(1),
    ]
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

    import cppyy

    cppyy.cppdef(ns3_common.PRR_CPP)
    cppyy.cppdef(TRACE_CPP)
    tr = cppyy.gbl.rtcc_ns3_rtt
    sinks = []
    for k in range(2):
        start = a.start_long if k == 1 else 0.0
        sinks.append(net.bulk(k, 4 + k, dst[k], 5000 + k, start, a.seconds))
        # Each sender's socket exists once its BulkSend starts.
        tr.SetupAt(start + 0.001, net.nodes.Get(k).GetId(), k, bool(a.prr_rfc))

    ns.Simulator.Stop(ns.Seconds(a.warmup))
    ns.Simulator.Run()
    before = [int(s.GetTotalRx()) for s in sinks]
    ns.Simulator.Stop(ns.Seconds(a.seconds - a.warmup))
    ns.Simulator.Run()
    got = [int(s.GetTotalRx()) - b for s, b in zip(sinks, before)]
    ns.Simulator.Destroy()
    span = a.seconds - a.warmup
    # On rtcc's basis: each 1448 B segment with its 52 B of headers.
    mbps = [g * (MSS + 52) / MSS * 8 / span / 1e6 for g in got]
    print(f"share_short={got[0] / max(sum(got), 1):.4f}", flush=True)
    print(f"goodput_short_mbps={mbps[0]:.3f}", flush=True)
    print(f"goodput_long_mbps={mbps[1]:.3f}", flush=True)
    print(f"recoveries_short={int(tr.recoveries[0])}", flush=True)
    print(f"recoveries_long={int(tr.recoveries[1])}", flush=True)


if __name__ == "__main__":
    ns3_common.run_main("ns3_tcp_rtt.py", main)
