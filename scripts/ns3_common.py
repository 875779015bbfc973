"""What the bare ns-3 TCP anchors (`ns3_tcp.py`, `ns3_tcp_rtt.py`) share: the TCP socket
defaults, point-to-point links whose drop-tail device queue is the only buffer, a bulk
flow into a packet sink, RFC 6937 PRR and the one-line failure.

Each script runs stand-alone (`python scripts/ns3_tcp.py`), so this folder is first on
sys.path and a plain `import ns3_common` finds this module.
"""

import sys
from collections.abc import Callable
from typing import Any, NoReturn

MSS = 1448

# RFC 6937 PRR for --prr-rfc: ns-3 3.44's TcpPrrRecovery::DoRecovery without its
# per-duplicate-ACK segment, counting the SACKed and cumulatively acknowledged bytes once.
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


def fail(script: str, msg: str) -> NoReturn:
    print(f"{script}: {msg}", file=sys.stderr, flush=True)
    sys.exit(1)


def run_main(script: str, main: Callable[[], None]) -> None:
    """``main()``, any failure as one line on stderr and exit status 1."""
    try:
        main()
    except SystemExit:
        raise
    except Exception as e:  # cppyy errors carry multi-line C++ text: keep the first line
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        fail(script, f"ns-3 run failed: {type(e).__name__}: {first}")


def tcp_defaults(ns: Any, buffer_bytes: int) -> None:
    """TCP Cubic, MSS 1448 (timestamps on), SACK, delayed ACKs every 2 segments, socket
    buffers of ``buffer_bytes``, a 200 ms minimum RTO and an initial window of 10."""
    d = ns.Config.SetDefault
    d("ns3::TcpL4Protocol::SocketType", ns.TypeIdValue(ns.TcpCubic.GetTypeId()))
    d("ns3::TcpSocket::SegmentSize", ns.UintegerValue(MSS))
    d("ns3::TcpSocket::DelAckCount", ns.UintegerValue(2))
    d("ns3::TcpSocket::SndBufSize", ns.UintegerValue(buffer_bytes))
    d("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(buffer_bytes))
    d("ns3::TcpSocketBase::Sack", ns.BooleanValue(True))
    # Linux's (and rtcc's) 200 ms RTO floor; ns-3's default is 1 s.
    d("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.MilliSeconds(200)))
    d("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(10))


class Net:
    """``count`` nodes with the Internet stack, joined by point-to-point links."""

    def __init__(self, ns: Any, count: int) -> None:
        self.ns = ns
        self.nodes = ns.NodeContainer()
        self.nodes.Create(count)
        ns.InternetStackHelper().Install(self.nodes)
        self.addr = ns.Ipv4AddressHelper()
        self.tch = ns.TrafficControlHelper()

    def link(self, i: int, j: int, rate: str, delay: str, net: str, queue: int) -> Any:
        """Nodes ``i`` and ``j`` on subnet ``net``/24, MTU 1500, a drop-tail queue of
        ``queue`` packets at each device; the link's interfaces."""
        ns = self.ns
        h = ns.PointToPointHelper()
        h.SetDeviceAttribute("DataRate", ns.StringValue(rate))
        h.SetChannelAttribute("Delay", ns.StringValue(delay))
        h.SetDeviceAttribute("Mtu", ns.UintegerValue(1500))
        limit = ns.QueueSizeValue(ns.QueueSize(f"{queue}p"))
        h.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", limit)
        pair = ns.NodeContainer()
        pair.Add(self.nodes.Get(i))
        pair.Add(self.nodes.Get(j))
        devs = h.Install(pair)
        self.addr.SetBase(ns.Ipv4Address(net), ns.Ipv4Mask("255.255.255.0"))
        ifs = self.addr.Assign(devs)
        # Assign installs pfifo_fast (1000 packets) above the device queue: remove it,
        # so the device's drop-tail queue is the only buffer.
        self.tch.Uninstall(devs)
        return ifs

    def bulk(self, src: int, sink: int, dst: Any, port: int, start: float, stop: float) -> Any:
        """A BulkSend from node ``src`` to ``dst``:``port`` over [start, stop], writing
        16 segments at a time, into a PacketSink on node ``sink`` from 0; the sink."""
        ns = self.ns
        sink_helper = ns.PacketSinkHelper(
            "ns3::TcpSocketFactory", ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo()
        )
        sink_apps = sink_helper.Install(self.nodes.Get(sink))
        sink_apps.Start(ns.Seconds(0.0))
        to = ns.InetSocketAddress(dst, port).ConvertTo()
        bulk = ns.BulkSendHelper("ns3::TcpSocketFactory", to)
        bulk.SetAttribute("MaxBytes", ns.UintegerValue(0))
        bulk.SetAttribute("SendSize", ns.UintegerValue(16 * MSS))
        apps = bulk.Install(self.nodes.Get(src))
        apps.Start(ns.Seconds(start))
        apps.Stop(ns.Seconds(stop))
        return sink_apps.Get(0).GetObject[ns.PacketSink]()
