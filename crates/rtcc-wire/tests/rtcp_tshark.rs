//! rtcc-wire's RTCP encodings dissected by an outside implementation,
//! Wireshark's tshark: every packet goes into a pcap (UDP to 127.0.0.1:5005,
//! decoded as RTCP), and the dissection must show no malformed packet or
//! error, and the field values rtcc wrote. Skipped, with the reason printed,
//! where tshark is not installed.

mod common;

use std::path::Path;

use rtcc_wire::rtcp::*;
use rtcc_wire::Wire;

const RTCP_PORT: u16 = 5005;

fn run(file: &Path, args: &[&str]) -> Option<String> {
    let decode_as = format!("udp.port=={RTCP_PORT},rtcp");
    let mut all = vec!["-d", &decode_as];
    all.extend_from_slice(args);
    common::tshark(file, &all, "RTCP")
}

/// One frame's fields, each field's occurrences joined by ';'.
fn fields(file: &Path, frame: usize, names: &[&str]) -> Vec<String> {
    let mut args = vec![
        "-Y".to_string(),
        format!("frame.number == {frame}"),
        "-T".into(),
        "fields".into(),
        "-E".into(),
        "aggregator=;".into(),
        "-E".into(),
        "separator=|".into(),
    ];
    for n in names {
        args.push("-e".into());
        args.push((*n).into());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run(file, &args).expect("tshark ran before").trim_end().split('|').map(str::to_string).collect()
}

fn packets() -> Vec<Vec<u8>> {
    let info =
        SenderInfo { ntp: 0xe8a1_2345_8000_0000, rtp_timestamp: 90_000, packet_count: 1234, octet_count: 1_000_000 };
    let rb = |ssrc| ReportBlock::new(ssrc, 25, -3, 0x0002_ffff, 17, 0x2345_8000, 65_536).unwrap();
    let sr = SenderReport::new(0x1111_1111, info, vec![rb(0x2222_2222), rb(0x3333_3333)]).unwrap();
    let rr = ReceiverReport::new(0x4444_4444, vec![rb(0x1111_1111)]).unwrap();
    let sdes = Sdes::cname(0x1111_1111, "rtcc@example").unwrap();
    let bye = Bye::new(vec![0x1111_1111, 0x5555_5555], Some(b"done".to_vec())).unwrap();
    let nack = Nack::from_seqs(0x4444_4444, 0x1111_1111, [65534, 65535, 0, 3, 100]).unwrap();
    let pli = Pli { sender_ssrc: 0x4444_4444, media_ssrc: 0x1111_1111 };
    let remb = Remb::new(0x4444_4444, 2_500_000, vec![0x1111_1111, 0x2222_2222]).unwrap();
    let mut arrivals: Vec<(u16, Option<i64>)> = (0..40u16)
        .map(|i| (65_520u16.wrapping_add(i), (i % 9 != 4).then(|| 5_000_000 + i64::from(i) * 1_300)))
        .collect();
    arrivals.push((65_520u16.wrapping_add(41), Some(5_000_000 - 2_000)));
    let twcc = TransportFeedbackBuilder::new(0x4444_4444, 0x1111_1111, 7).build(65_520, 5_000_000, &arrivals).remove(0);
    let r = |ato| Some(CcfbReport { ecn: 0, ato });
    let ccfb = CongestionControlFeedback::new(
        0x4444_4444,
        vec![CcfbBlock { ssrc: 0x1111_1111, begin_seq: 65_534, reports: vec![r(100), None, r(90)] }],
        0x1234_5678,
    )
    .unwrap();
    let mut outcomes = vec![true; 30];
    outcomes.extend([false, true, false, true]);
    let loss = RleBlock::from_outcomes(0x1111_1111, 1000, &outcomes);
    let xr = Xr {
        ssrc: 0x4444_4444,
        blocks: vec![XrBlock::LossRle(loss.clone()), XrBlock::DiscardRle { early: false, block: loss }],
    };
    let compound = Compound::new(vec![
        RtcpPacket::ReceiverReport(rr.clone()),
        RtcpPacket::Sdes(sdes.clone()),
        RtcpPacket::TransportFeedback(twcc.clone()),
        RtcpPacket::Remb(remb.clone()),
    ]);
    vec![
        sr.to_bytes(),
        rr.to_bytes(),
        sdes.to_bytes(),
        bye.to_bytes(),
        nack.to_bytes(),
        pli.to_bytes(),
        remb.to_bytes(),
        twcc.to_bytes(),
        ccfb.to_bytes(),
        xr.to_bytes(),
        compound.to_bytes(),
    ]
}

#[test]
fn tshark_dissects_rtcc_rtcp() {
    let dir = std::env::temp_dir().join(format!("rtcc-wire-rtcp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("rtcp.pcap");
    let packets = packets();
    std::fs::write(&file, rtcc_wire::pcap::loopback_udp(&packets, RTCP_PORT, RTCP_PORT)).unwrap();

    let Some(verbose) = run(&file, &["-V"]) else { return };
    for bad in ["Malformed", "Expert Info (Error", "Expert Info (Warning"] {
        assert!(!verbose.contains(bad), "tshark reports {bad}:\n{verbose}");
    }
    // Every datagram's packet lengths add up to its size (tshark checks once
    // per datagram, the compound included).
    assert_eq!(verbose.matches("RTCP frame length check: OK").count(), packets.len(), "{verbose}");

    let f = |frame, names: &[&str]| fields(&file, frame, names);
    // SR (RFC 3550 §6.4.1) with two report blocks.
    let sr_fields = [
        "rtcp.pt",
        "rtcp.rc",
        "rtcp.senderssrc",
        "rtcp.timestamp.ntp.msw",
        "rtcp.timestamp.ntp.lsw",
        "rtcp.timestamp.rtp",
        "rtcp.sender.packetcount",
        "rtcp.sender.octetcount",
        "rtcp.ssrc.identifier",
        "rtcp.ssrc.fraction",
        "rtcp.ssrc.cum_nr",
        "rtcp.ssrc.ext_high",
        "rtcp.ssrc.jitter",
        "rtcp.ssrc.lsr",
        "rtcp.ssrc.dlsr",
    ];
    assert_eq!(
        f(1, &sr_fields),
        [
            "200",
            "2",
            "0x11111111",
            "3902874437",
            "2147483648",
            "90000",
            "1234",
            "1000000",
            "0x22222222;0x33333333",
            "25;25",
            "-3;-3",
            "196607;196607",
            "17;17",
            "591757312;591757312",
            "65536;65536"
        ]
    );
    assert_eq!(
        f(2, &["rtcp.pt", "rtcp.senderssrc", "rtcp.ssrc.identifier", "rtcp.ssrc.cum_nr"]),
        ["201", "0x44444444", "0x11111111", "-3"]
    );
    assert_eq!(f(3, &["rtcp.pt", "rtcp.sc", "rtcp.sdes.type", "rtcp.sdes.text"]), ["202", "1", "1;0", "rtcc@example"]);
    assert_eq!(
        f(4, &["rtcp.pt", "rtcp.sc", "rtcp.ssrc.identifier", "rtcp.sdes.text"]),
        ["203", "2", "0x11111111;0x55555555", "done"]
    );
    // NACK across the wrap: PID 65534 with 65535, 0, 3 in the mask.
    // (tshark adds the PIDs the mask implies to the pid field, unwrapped, so
    // the PIDs on the wire are read from its tree.)
    assert_eq!(
        f(5, &["rtcp.rtpfb.fmt", "rtcp.mediassrc", "rtcp.rtpfb.nack_blp"]),
        ["1", "0x11111111", "0x0013;0x0000"]
    );
    for pid in ["65534", "100"] {
        assert!(verbose.contains(&format!("RTCP Transport Feedback NACK PID: {pid}\n")), "{verbose}");
    }
    assert_eq!(f(6, &["rtcp.pt", "rtcp.psfb.fmt", "rtcp.mediassrc"]), ["206", "1", "0x11111111"]);
    // REMB: 2.5 Mbit/s is mantissa 156250 × 2^4.
    assert_eq!(
        f(
            7,
            &[
                "rtcp.psfb.fmt",
                "rtcp.psfb.remb.identifier",
                "rtcp.psfb.remb.fci.number_ssrcs",
                "rtcp.psfb.remb.fci.br_exp",
                "rtcp.psfb.remb.fci.br_mantissa",
                "rtcp.psfb.remb.fci.ssrc"
            ]
        ),
        ["15", "REMB", "2", "4", "156250", "0x11111111;0x22222222"]
    );
    assert!(verbose.contains("REMB: max bitrate=2500000"));
    // Transport-wide CC: the header, rtcc's chunks and every receive delta.
    let RtcpPacket::TransportFeedback(twcc) = Compound::decode(&packets[7]).unwrap().packets.remove(0) else {
        panic!()
    };
    let chunks: Vec<String> = twcc.chunks().iter().map(u16::to_string).collect();
    let deltas: Vec<String> = twcc
        .packets
        .iter()
        .filter_map(|p| match *p {
            PacketStatus::NotReceived => None,
            PacketStatus::Small(d) => Some(format!("0x{d:02x}")),
            PacketStatus::Large(d) => Some(format!("0x{:04x}", d as u16)),
        })
        .collect();
    assert_eq!(
        f(
            8,
            &[
                "rtcp.rtpfb.transportcc.baseseq",
                "rtcp.rtpfb.transportcc.statuscount",
                "rtcp.rtpfb.transportcc.reftime",
                "rtcp.rtpfb.transportcc.pktcount",
                "rtcp.rtpfb.transportcc.pktchunk",
                "rtcp.rtpfb.transportcc.recv_delta"
            ]
        ),
        [
            twcc.base_seq.to_string(),
            twcc.packets.len().to_string(),
            twcc.reference_time.to_string(),
            twcc.fb_count.to_string(),
            chunks.join(";"),
            deltas.join(";")
        ]
    );
    assert_eq!((twcc.base_seq, twcc.packets.len(), twcc.reference_time), (65520, 42, 78));
    assert!(verbose.contains("Recv Delta: 0xff2d Negative Delta: [seq: 25] -52.750000 ms"), "{verbose}");
    // RFC 8888: this tshark (4.0) has no CCFB dissector and shows FMT 11's
    // bytes after the sender SSRC as media SSRC + FCI; they are rtcc's.
    assert_eq!(
        f(9, &["rtcp.rtpfb.fmt", "rtcp.mediassrc", "rtcp.fci"]),
        ["11", "0x11111111", "fffe000380640000805a000012345678"]
    );
    // XR: the Loss RLE block dissected (a run of 30 received, then the
    // vector 0101 for the last four); the discard RLE block (BT 25) is
    // unknown to this tshark and skipped by its length.
    assert_eq!(
        f(
            10,
            &[
                "rtcp.pt",
                "rtcp.xr.bt",
                "rtcp.xr.beginseq",
                "rtcp.xr.endseq",
                "rtcp.xr.chunk.length",
                "rtcp.xr.chunk.bit_vector",
                "rtcp.ssrc.identifier"
            ]
        ),
        ["207", "1;25", "1000", "1034", "30", &(0b0101u16 << 11).to_string(), "0x11111111"]
    );
    assert_eq!(f(11, &["rtcp.pt", "rtcp.rtpfb.fmt", "rtcp.psfb.fmt"]), ["201;202;205;206", "15", "15"]);
    std::fs::remove_dir_all(&dir).ok();
}
