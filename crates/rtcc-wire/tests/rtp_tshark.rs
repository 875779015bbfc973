//! RTP as Wireshark's dissectors read it: rtcc's encodings are written to a
//! pcap (Ethernet/IPv4/UDP to 127.0.0.1:5004), dissected by `tshark` as RTP
//! with VP8 on PT 96 and H.264 on PT 97, and every dissected field must match
//! with no malformed packet or error expert info. Skips, saying so, when
//! tshark is not installed.

mod common;

use std::path::Path;

use rtcc_wire::payload::red::{RedBlock, RedPayload};
use rtcc_wire::payload::{h264, vp8};
use rtcc_wire::rtp::{
    AbsSendTime, ExtensionKind, ExtensionMap, HeaderExtension, RtpPacket, TransportSequenceNumber, TypedExtension,
};
use rtcc_wire::Wire;

const RTP_PORT: u16 = 5004;

fn tshark(file: &Path, extra: &[&str]) -> Option<String> {
    let decode_as = format!("udp.port=={RTP_PORT},rtp");
    let mut args = vec!["-d", &decode_as, "-d", "rtp.pt==96,vp8", "-d", "rtp.pt==97,h264"];
    args.extend_from_slice(extra);
    common::tshark(file, &args, "RTP")
}

/// One dissected packet's fields, by name, multiple occurrences comma-joined.
struct Row(Vec<(String, String)>);

impl Row {
    fn get(&self, name: &str) -> &str {
        self.0.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str()).unwrap_or("")
    }
    /// A numeric field (tshark writes some in hex), each occurrence.
    fn nums(&self, name: &str) -> Vec<u64> {
        self.get(name)
            .split(',')
            .filter(|s| !s.is_empty())
            .map(|s| match s.strip_prefix("0x") {
                Some(h) => u64::from_str_radix(h, 16).unwrap(),
                None if s == "True" => 1,
                None if s == "False" => 0,
                None => s.parse().unwrap_or_else(|_| panic!("{name}: {s}")),
            })
            .collect()
    }
    fn num(&self, name: &str) -> Option<u64> {
        self.nums(name).first().copied()
    }
}

fn dissect(file: &Path, fields: &[&str]) -> Option<Vec<Row>> {
    let mut args = vec!["-T", "fields", "-E", "separator=/t", "-E", "occurrence=a", "-E", "aggregator=,"];
    for f in fields {
        args.push("-e");
        args.push(f);
    }
    let out = tshark(file, &args)?;
    Some(
        out.lines()
            .map(|l| Row(fields.iter().map(|f| f.to_string()).zip(l.split('\t').map(str::to_string)).collect()))
            .collect(),
    )
}

fn assert_clean(file: &Path) -> bool {
    let Some(v) = tshark(file, &["-V"]) else { return false };
    for frame in v.split("\nFrame ") {
        for bad in ["Malformed", "Expert Info (Error", "Expert Info (Warning"] {
            // Wireshark does not decode slice data: "Warning/Undecoded" says so, nothing more.
            let found = frame.lines().any(|l| l.contains(bad) && !l.contains("Warning/Undecoded"));
            assert!(!found, "tshark reports {bad} in frame {frame}");
        }
    }
    true
}

fn packets() -> Vec<RtpPacket> {
    let mut out = Vec::new();
    // Header fields: CSRCs, marker, padding, a one-byte extension block from a map.
    let mut map = ExtensionMap::new();
    map.insert(3, ExtensionKind::TransportSequenceNumber).unwrap();
    map.insert(2, ExtensionKind::AbsSendTime).unwrap();
    let mut p = RtpPacket::new(111, 65535, 0xdead_beef, 0x1234_5678, vec![0xaa; 20]).unwrap();
    p.marker = true;
    p.csrcs = vec![1, 0xffff_ffff];
    p.padding = 7;
    p.extension = Some(
        map.write(&[
            TypedExtension::TransportSequenceNumber(TransportSequenceNumber(0x0102)),
            TypedExtension::AbsSendTime(AbsSendTime(0x12_3456)),
        ])
        .unwrap(),
    );
    out.push(p);
    // Two-byte form with appbits and an empty element.
    let mut e = HeaderExtension::TwoByte { appbits: 5, elements: Vec::new() };
    e.push(200, vec![9, 8, 7]).unwrap();
    e.push(17, vec![]).unwrap();
    let mut p = RtpPacket::new(98, 0, 1, 2, vec![1, 2, 3]).unwrap();
    p.extension = Some(e);
    out.push(p);
    out.push(RtpPacket::padding_only(99, 1, 1, 2, 224).unwrap());
    // RED (PT 99, tshark's default for RFC 2198): a redundant PCMU block and a primary PCMA one.
    let red = RedPayload {
        redundant: vec![RedBlock { payload_type: 0, timestamp_offset: 160, data: vec![0x55; 160] }],
        primary_payload_type: 8,
        primary: vec![0xd5; 160],
    };
    out.push(RtpPacket::new(99, 5, 320, 2, red.to_bytes()).unwrap());
    // VP8: a key frame in three packets.
    let mut frame = vec![0x10 | (50 << 5) as u8, 0, 0, 0x9d, 0x01, 0x2a];
    frame.extend_from_slice(&320u16.to_le_bytes());
    frame.extend_from_slice(&180u16.to_le_bytes());
    frame.extend((0..2000).map(|i| (i * 7) as u8));
    for (i, pl) in vp8::packetize(&frame, 800, 0x1abc).unwrap().iter().enumerate() {
        let mut p = RtpPacket::new(96, 10 + i as u16, 9000, 0x5678, pl.to_bytes()).unwrap();
        p.marker = i == 2;
        out.push(p);
    }
    // H.264: SPS+PPS in a STAP-A, an IDR slice in FU-As, a single NAL unit.
    // The parameter sets of RFC 6184 §8.2.1's example (sprop-parameter-sets=Z0IACpZTBYmI,aMljiA==).
    let sps = [0x67, 0x42, 0x00, 0x0a, 0x96, 0x53, 0x05, 0x89, 0x88];
    let pps = [0x68, 0xc9, 0x63, 0x88];
    let idr: Vec<u8> = std::iter::once(0x65).chain((0..2500).map(|i| (i as u8) | 1)).collect();
    let nals: [&[u8]; 4] = [&sps, &pps, &idr, &[0x41, 0x9a, 0x02]];
    for (i, pl) in h264::packetize_nals(&nals, 1000).unwrap().iter().enumerate() {
        out.push(RtpPacket::new(97, 20 + i as u16, 3000, 0x9abc, pl.to_bytes()).unwrap());
    }
    out
}

#[test]
fn tshark_dissects_rtp_vp8_and_h264_as_encoded() {
    let ps = packets();
    let dir = std::env::temp_dir().join(format!("rtcc-wire-rtp-tshark-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("rtp.pcap");
    std::fs::write(
        &file,
        rtcc_wire::pcap::loopback_udp(&ps.iter().map(|p| p.to_bytes()).collect::<Vec<_>>(), RTP_PORT + 2, RTP_PORT),
    )
    .unwrap();
    if !assert_clean(&file) {
        return;
    }
    let fields = [
        "rtp.version",
        "rtp.padding",
        "rtp.ext",
        "rtp.cc",
        "rtp.marker",
        "rtp.p_type",
        "rtp.seq",
        "rtp.timestamp",
        "rtp.ssrc",
        "rtp.csrc.item",
        "rtp.ext.profile",
        "rtp.ext.rfc5285.id",
        "rtp.ext.rfc5285.len",
        "rtp.ext.rfc5285.data",
        "rtp.padding.count",
        "rtp.payload",
        "vp8.pld.s",
        "vp8.pld.partid",
        "vp8.pld.pictureid",
        "vp8.hdr.frametype",
        "vp8.keyframe.width",
        "rtp.follow",
        "rtp.timestamp-offset",
        "rtp.block-length",
        "h264.nal_unit_hdr",
        "h264.nal_unit_type",
        "h264.start.bit",
        "h264.end.bit",
        "h264.nalu_size",
    ];
    let rows = dissect(&file, &fields).unwrap();
    assert_eq!(rows.len(), ps.len(), "one dissected row per packet");
    for (p, r) in ps.iter().zip(&rows) {
        let at = format!("packet seq {}", p.sequence_number);
        assert_eq!(r.num("rtp.version"), Some(2), "{at}");
        assert_eq!(r.num("rtp.marker"), Some(p.marker as u64), "{at}");
        assert_eq!(r.num("rtp.p_type"), Some(p.payload_type as u64), "{at}");
        assert_eq!(r.num("rtp.seq"), Some(p.sequence_number as u64), "{at}");
        assert_eq!(r.num("rtp.timestamp"), Some(p.timestamp as u64), "{at}");
        assert_eq!(r.num("rtp.ssrc"), Some(p.ssrc as u64), "{at}");
        assert_eq!(r.num("rtp.cc"), Some(p.csrcs.len() as u64), "{at}");
        assert_eq!(r.nums("rtp.csrc.item"), p.csrcs.iter().map(|&c| c as u64).collect::<Vec<_>>(), "{at}");
        assert_eq!(r.num("rtp.padding"), Some((p.padding > 0) as u64), "{at}");
        if p.padding > 0 {
            assert_eq!(r.num("rtp.padding.count"), Some(p.padding as u64), "{at}");
        }
        match &p.extension {
            Some(e) => {
                let b = e.to_bytes();
                assert_eq!(r.num("rtp.ext.profile"), Some(u16::from_be_bytes([b[0], b[1]]) as u64), "{at}");
                let ids: Vec<u64> = e.elements().iter().map(|x| x.id as u64).collect();
                assert_eq!(r.nums("rtp.ext.rfc5285.id"), ids, "{at}");
                let lens: Vec<u64> = e.elements().iter().map(|x| x.data.len() as u64).collect();
                assert_eq!(r.nums("rtp.ext.rfc5285.len"), lens, "{at}");
                let data: Vec<String> = e
                    .elements()
                    .iter()
                    .filter(|x| !x.data.is_empty())
                    .map(|x| x.data.iter().map(|b| format!("{b:02x}")).collect())
                    .collect();
                assert_eq!(r.get("rtp.ext.rfc5285.data").replace(':', ""), data.join(","), "{at}");
            }
            None => assert_eq!(r.num("rtp.ext"), Some(0), "{at}"),
        }
        match p.payload_type {
            96 => {
                let v = vp8::Vp8Payload::decode(&p.payload).unwrap();
                assert_eq!(r.num("vp8.pld.s"), Some(v.descriptor.start_of_partition as u64), "{at}");
                assert_eq!(r.num("vp8.pld.partid"), Some(0), "{at}");
                assert_eq!(r.num("vp8.pld.pictureid"), Some(0x1abc), "{at}");
                if v.descriptor.start_of_partition {
                    assert!(!r.get("vp8.hdr.frametype").is_empty(), "{at}: payload header dissected");
                    assert_eq!(r.num("vp8.keyframe.width"), Some(320), "{at}");
                }
            }
            99 if !p.payload.is_empty() => {
                let red = RedPayload::decode(&p.payload).unwrap();
                let follow: Vec<u64> = red.redundant.iter().map(|_| 1).chain([0]).collect();
                assert_eq!(r.nums("rtp.follow"), follow, "{at}");
                assert_eq!(
                    r.nums("rtp.timestamp-offset"),
                    red.redundant.iter().map(|b| b.timestamp_offset as u64).collect::<Vec<_>>(),
                    "{at}"
                );
                assert_eq!(
                    r.nums("rtp.block-length"),
                    red.redundant.iter().map(|b| b.data.len() as u64).collect::<Vec<_>>(),
                    "{at}"
                );
                // Block payload types, then the primary's, after the packet's own.
                let pts: Vec<u64> = std::iter::once(99)
                    .chain(red.redundant.iter().map(|b| b.payload_type as u64))
                    .chain([red.primary_payload_type as u64])
                    .collect();
                assert_eq!(r.nums("rtp.p_type"), pts, "{at}");
            }
            97 => match h264::H264Payload::decode(&p.payload).unwrap() {
                h264::H264Payload::StapA(ns) => {
                    let types: Vec<u64> = std::iter::once(24).chain(ns.iter().map(|n| (n[0] & 0x1f) as u64)).collect();
                    // tshark names the header's Type field (outer and aggregated) nal_unit_hdr.
                    assert_eq!(r.nums("h264.nal_unit_hdr"), types, "{at}");
                    assert_eq!(r.nums("h264.nalu_size"), ns.iter().map(|n| n.len() as u64).collect::<Vec<_>>(), "{at}");
                }
                h264::H264Payload::FuA(f) => {
                    assert_eq!(r.nums("h264.nal_unit_hdr"), [28], "{at}");
                    // ... and the FU header's type nal_unit_type.
                    assert_eq!(r.nums("h264.nal_unit_type"), [f.nal_type as u64], "{at}");
                    assert_eq!(
                        (r.num("h264.start.bit"), r.num("h264.end.bit")),
                        (Some(f.start as u64), Some(f.end as u64)),
                        "{at}"
                    );
                }
                h264::H264Payload::Single(n) => assert_eq!(r.nums("h264.nal_unit_hdr"), [(n[0] & 0x1f) as u64], "{at}"),
            },
            _ if !p.payload.is_empty() => {
                let hex: String = p.payload.iter().map(|b| format!("{b:02x}")).collect();
                assert_eq!(r.get("rtp.payload").replace(':', ""), hex, "{at}");
            }
            _ => {}
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}
