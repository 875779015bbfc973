//! A call's datagrams (`rtcc_core::datagram`) as Wireshark's RTP dissector
//! reads them: every packet of a GCC call with FEC, NACK, audio, probes and
//! padding at 5 % loss is written to a pcap and dissected by `tshark` as RTP;
//! each packet's SSRC, sequence number, payload type, marker, timestamp,
//! padding and extension ids must be what rtcc wrote, with no malformed
//! packet or error. Skips, saying so, when tshark is not installed (unless
//! RTCC_REQUIRE_TSHARK is set).

use std::process::Command;

use rtcc_core::controller::{self, ControllerContext, Params};
use rtcc_core::datagram::{Egress, Ingress, Session};
use rtcc_core::fec::FecConfig;
use rtcc_core::packet::PacketKind;
use rtcc_core::pair::Pair;
use rtcc_core::receiver::ReceiverConfig;
use rtcc_core::sender::{AudioConfig, SenderConfig};
use rtcc_core::units::{DataRate, Duration, Time};
use rtcc_wire::rtp::RtpPacket;
use rtcc_wire::Wire;

const PORT: u16 = 5004;

fn call_datagrams() -> (Vec<Vec<u8>>, Vec<PacketKind>) {
    let cfg = SenderConfig {
        fec: Some(FecConfig { group: 5, ..FecConfig::default() }),
        nack: Some(Duration::from_secs(1)),
        audio: Some(AudioConfig { rate: DataRate::from_kbps(32), ptime: Duration::from_millis(20) }),
        ..SenderConfig::default()
    };
    let gcc = controller::create("gcc", &Params::new(), &ControllerContext::default()).unwrap();
    let mut pair = Pair::builder()
        .sender(cfg)
        .controller(gcc)
        .receiver(ReceiverConfig { nack: true, ..Default::default() })
        .bottleneck(DataRate::from_mbps(2))
        .loss(0.05, 11)
        .build();
    pair.run_until(Time::from_millis(8_000));
    let session = Session::for_flow(0);
    let mut egress = Egress::new(session, 40_000, 65_000);
    let mut ingress = Ingress::new(session);
    let (mut out, mut kinds) = (Vec::new(), Vec::new());
    for t in pair.sent() {
        let bytes = egress.encode(&t.packet).unwrap_or_else(|e| panic!("{:?}: {e}", t.packet));
        let back = ingress.decode(&bytes).unwrap();
        assert_eq!(back, rtcc_core::packet::Packet { kind: t.packet.kind.on_wire(), ..t.packet.clone() });
        out.push(bytes);
        kinds.push(t.packet.kind);
    }
    (out, kinds)
}

fn tshark(file: &std::path::Path, args: &[&str]) -> Option<String> {
    let decode_as = format!("udp.port=={PORT},rtp");
    match Command::new("tshark").args(["-n", "-r"]).arg(file).args(["-d", &decode_as]).args(args).output() {
        Ok(o) => {
            assert!(o.status.success(), "tshark failed: {}", String::from_utf8_lossy(&o.stderr));
            Some(String::from_utf8(o.stdout).unwrap())
        }
        Err(e) => {
            assert!(std::env::var_os("RTCC_REQUIRE_TSHARK").is_none(), "tshark not runnable ({e})");
            eprintln!("SKIPPED: tshark not runnable ({e})");
            None
        }
    }
}

#[test]
fn wireshark_reads_every_datagram_as_rtcc_wrote_it() {
    let (datagrams, kinds) = call_datagrams();
    for k in [PacketKind::Media, PacketKind::Rtx, PacketKind::Fec, PacketKind::Audio, PacketKind::Probe] {
        assert!(kinds.contains(&k), "the call sent no {} packet", k.name());
    }
    let dir = std::env::temp_dir().join(format!("rtcc-datagram-tshark-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("call.pcap");
    std::fs::write(&file, rtcc_wire::pcap::loopback_udp(&datagrams, 5000, PORT)).unwrap();
    let fields = [
        "rtp.ssrc",
        "rtp.seq",
        "rtp.p_type",
        "rtp.marker",
        "rtp.timestamp",
        "rtp.padding",
        "rtp.padding.count",
        "rtp.ext.rfc5285.id",
    ];
    let mut args = vec!["-T", "fields", "-E", "separator=/t", "-E", "occurrence=a", "-E", "aggregator=,"];
    for f in fields {
        args.extend(["-e", f]);
    }
    let Some(out) = tshark(&file, &args) else { return };
    let rows: Vec<Vec<&str>> = out.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(rows.len(), datagrams.len());
    let num = |s: &str| -> u64 {
        match s.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16).unwrap(),
            None if s == "True" => 1,
            None if s == "False" => 0,
            None => s.parse().unwrap_or_else(|_| panic!("not a number: {s:?}")),
        }
    };
    for (i, (row, bytes)) in rows.iter().zip(&datagrams).enumerate() {
        let p = RtpPacket::decode(bytes).unwrap();
        let at = format!("datagram {i} ({})", kinds[i].name());
        assert_eq!(num(row[0]), u64::from(p.ssrc), "{at}");
        assert_eq!(num(row[1]), u64::from(p.sequence_number), "{at}");
        assert_eq!(row[2], p.payload_type.to_string(), "{at}: {row:?}");
        assert_eq!(num(row[3]), u64::from(p.marker), "{at}");
        assert_eq!(num(row[4]), u64::from(p.timestamp), "{at}");
        assert_eq!(num(row[5]), u64::from(p.padding > 0), "{at}");
        if p.padding > 0 {
            assert_eq!(num(row[6]), u64::from(p.padding), "{at}");
        }
        let ids: Vec<u64> = row[7].split(',').filter(|s| !s.is_empty()).map(num).collect();
        let want: Vec<u64> = p.extension.as_ref().unwrap().elements().iter().map(|e| u64::from(e.id)).collect();
        assert_eq!(ids, want, "{at}");
    }
    let Some(verbose) = tshark(&file, &["-V"]) else { return };
    for frame in verbose.split("\nFrame ") {
        for bad in ["Malformed", "Expert Info (Error"] {
            assert!(!frame.contains(bad), "tshark reports {bad} in frame {frame}");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}
