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

`--access` puts the bottleneck between two routers with 10 Gbps, zero-delay access
links on either side (a three-link dumbbell) instead of one link; the default, a single
link, is the cheaper lower bound for ns-3.

Prints `run_s=<wall seconds of Simulator::Run>` and `goodput_mbps=` (the sink's bytes on
rtcc's wire basis, each 1448 B segment counted with its 52 B of headers, per second) on stdout, one per line, and exits 1 with a one-line message on stderr
when ns-3 cannot be imported or the run fails. Usage:
    python ns3_tcp.py [SECONDS] [--access]
"""

import argparse
import sys
import time
from typing import Any, NoReturn

QUEUE_PACKETS = 33  # 1 BDP: 10 Mbps x 40 ms = 50 kB = 33.3 packets of 1500 B
MSS = 1448
RATE = "10Mbps"
DELAY = "20ms"


def fail(msg: str) -> NoReturn:
    print(f"ns3_tcp.py: {msg}", file=sys.stderr, flush=True)
    sys.exit(1)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("seconds", nargs="?", type=float, default=120.0)
    p.add_argument("--access", action="store_true", help="fast access links on both sides")
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


if __name__ == "__main__":
    try:
        main()
    except SystemExit:
        raise
    except Exception as e:  # cppyy errors carry multi-line C++ text: keep the first line
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        fail(f"ns-3 run failed: {type(e).__name__}: {first}")
