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
import sys
import time
from typing import Any, NoReturn

QUEUE_PACKETS = 33  # 1 BDP: 10 Mbps x 40 ms = 50 kB = 33.3 packets of 1500 B
MSS = 1448
RATE = "10Mbps"
DELAY = "20ms"


# Trace sinks in C++ (cppyy): a Python callback per traced event would cost more
# than the run. Loss events are entries into CA_RECOVERY (3) or CA_LOSS (4); each one's
# trough is the ssthresh set at the same instant; a data segment below the highest
# sequence sent is a retransmission.
# RFC 6937 PRR for --prr-rfc (scripts/ns3_tcp_rtt.py uses it too): ns-3 3.44's
# TcpPrrRecovery::DoRecovery without its per-duplicate-ACK segment.
PRR_CPP = r"""
#include <cmath>
#include "ns3/config.h"
#include "ns3/tcp-recovery-ops.h"
#include "ns3/tcp-socket-base.h"
namespace rtcc_ns3_prr {
class RfcPrr : public ns3::TcpRecoveryOps {
  public:
    uint32_t delivered = 0, out = 0, recover_fs = 0;
    std::string GetName() const override { return "RfcPrr"; }
    void EnterRecovery(ns3::Ptr<ns3::TcpSocketState> tcb, uint32_t, uint32_t, uint32_t d) override {
        delivered = 0; out = 0; recover_fs = tcb->m_bytesInFlight;
        DoRecovery(tcb, d, true);
    }
    void DoRecovery(ns3::Ptr<ns3::TcpSocketState> tcb, uint32_t d, bool) override {
        if (d == 0) return;
        delivered += d;
        int snd;
        int pipe = (int)tcb->m_bytesInFlight.Get(), ssthresh = (int)tcb->m_ssThresh.Get();
        if (pipe > ssthresh) {
            snd = (int)std::ceil(delivered * (double)ssthresh / recover_fs) - (int)out;
        } else {
            int limit = std::max((int)delivered - (int)out, (int)d);
            if (tcb->m_isRetransDataAcked) limit += tcb->m_segmentSize;
            snd = std::min(limit, ssthresh - pipe);
        }
        snd = std::max(snd, (int)(out > 0 ? 0 : tcb->m_segmentSize));
        tcb->m_cWnd = pipe + snd;
        tcb->m_cWndInfl = tcb->m_cWnd;
    }
    void ExitRecovery(ns3::Ptr<ns3::TcpSocketState> tcb) override { tcb->m_cWndInfl = tcb->m_cWnd; }
    void UpdateBytesSent(uint32_t b) override { out += b; }
    ns3::Ptr<ns3::TcpRecoveryOps> Fork() override { return ns3::CopyObject<RfcPrr>(this); }
};
void Install(uint32_t node) {
    std::string p = "/NodeList/" + std::to_string(node) + "/$ns3::TcpL4Protocol/SocketList/0";
    ns3::Config::MatchContainer m = ns3::Config::LookupMatches(p);
    m.Get(0)->GetObject<ns3::TcpSocketBase>()->SetRecoveryAlgorithm(ns3::CreateObject<RfcPrr>());
}
void InstallAt(double at, uint32_t node) { ns3::Simulator::Schedule(ns3::Seconds(at), &Install, node); }
}
"""

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
    print(f"ns3_tcp.py: {msg}", file=sys.stderr, flush=True)
    sys.exit(1)


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

    d = ns.Config.SetDefault
    d("ns3::TcpL4Protocol::SocketType", ns.TypeIdValue(ns.TcpCubic.GetTypeId()))
    d("ns3::TcpSocket::SegmentSize", ns.UintegerValue(MSS))
    d("ns3::TcpSocket::DelAckCount", ns.UintegerValue(2))
    d("ns3::TcpSocket::SndBufSize", ns.UintegerValue(1 << 22))
    d("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(1 << 22))
    d("ns3::TcpSocketBase::Sack", ns.BooleanValue(True))
    # Linux's (and rtcc's) 200 ms RTO floor; ns-3's default is 1 s.
    d("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.MilliSeconds(200)))
    d("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(10))

    nodes = ns.NodeContainer()
    nodes.Create(4 if a.access else 2)
    ns.InternetStackHelper().Install(nodes)
    addr = ns.Ipv4AddressHelper()
    tch = ns.TrafficControlHelper()

    def link(i: int, j: int, rate: str, delay: str, net: str) -> Any:
        h = ns.PointToPointHelper()
        h.SetDeviceAttribute("DataRate", ns.StringValue(rate))
        h.SetChannelAttribute("Delay", ns.StringValue(delay))
        h.SetDeviceAttribute("Mtu", ns.UintegerValue(1500))
        limit = ns.QueueSizeValue(ns.QueueSize(f"{QUEUE_PACKETS}p"))
        h.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", limit)
        pair = ns.NodeContainer()
        pair.Add(nodes.Get(i))
        pair.Add(nodes.Get(j))
        devs = h.Install(pair)
        addr.SetBase(ns.Ipv4Address(net), ns.Ipv4Mask("255.255.255.0"))
        ifs = addr.Assign(devs)
        # Assign installs pfifo_fast (1000 packets) above the device queue: remove it,
        # so the device's drop-tail queue is the only buffer.
        tch.Uninstall(devs)
        return ifs

    if a.access:
        link(0, 1, "10Gbps", "0ms", "10.1.1.0")
        link(1, 2, RATE, DELAY, "10.1.2.0")
        dst = link(2, 3, "10Gbps", "0ms", "10.1.3.0").GetAddress(1)
        ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
    else:
        dst = link(0, 1, RATE, DELAY, "10.1.1.0").GetAddress(1)
    src_node, dst_node = nodes.Get(0), nodes.Get(nodes.GetN() - 1)

    port = 5000
    sink_helper = ns.PacketSinkHelper(
        "ns3::TcpSocketFactory", ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo()
    )
    sink_apps = sink_helper.Install(dst_node)
    sink_apps.Start(ns.Seconds(0.0))
    bulk = ns.BulkSendHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(dst, port).ConvertTo())
    bulk.SetAttribute("MaxBytes", ns.UintegerValue(0))
    bulk.SetAttribute("SendSize", ns.UintegerValue(16 * MSS))
    apps = bulk.Install(src_node)
    apps.Start(ns.Seconds(0.0))
    apps.Stop(ns.Seconds(a.seconds))
    ns.Simulator.Stop(ns.Seconds(a.seconds))

    import cppyy

    cppyy.cppdef(TRACE_CPP)
    tr = cppyy.gbl.rtcc_ns3
    # The sender's socket exists once BulkSend starts (t = 0): connect just after.
    tr.ConnectAt(0.001, src_node.GetId())
    if a.prr_rfc:
        cppyy.cppdef(PRR_CPP)
        cppyy.gbl.rtcc_ns3_prr.InstallAt(0.001, src_node.GetId())

    t0 = time.perf_counter()
    ns.Simulator.Run()
    run_s = time.perf_counter() - t0
    sink = sink_apps.Get(0).GetObject[ns.PacketSink]()
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
    try:
        main()
    except SystemExit:
        raise
    except Exception as e:  # cppyy errors carry multi-line C++ text: keep the first line
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        fail(f"ns-3 run failed: {type(e).__name__}: {first}")
