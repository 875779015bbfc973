//! VP8 (RFC 7741) and H.264 (RFC 6184) payload formats: descriptors and
//! payload structures round trip, frames survive packetization byte for byte,
//! lost packets make a frame incomplete, hostile payloads are errors.

mod common;
mod rtp_support;

use common::*;
use proptest::prelude::*;
use rtcc_wire::payload::h264::{self, FuA, H264Depacketizer, H264Payload};
use rtcc_wire::payload::vp8::{self, PictureId, Vp8Depacketizer, Vp8Descriptor, Vp8Payload, Vp8PayloadHeader};
use rtcc_wire::{Wire, WireError};
use rtp_support::*;

/// A VP8 frame with a valid payload header (RFC 7741 §4.3, RFC 6386 §9.1):
/// a key frame carries the start code and its size.
fn vp8_frame(key: bool, first_partition: u32, body: &[u8]) -> Vec<u8> {
    let tag = u32::from(!key) | 0x10 | (first_partition << 5);
    let mut f = tag.to_le_bytes()[..3].to_vec();
    if key {
        f.extend_from_slice(&[0x9d, 0x01, 0x2a]);
        f.extend_from_slice(&640u16.to_le_bytes());
        f.extend_from_slice(&360u16.to_le_bytes());
    }
    f.extend_from_slice(body);
    f
}

/// NAL bodies as an encoder emits them: no 00 00 0x sequences (emulation
/// prevention, H.264 §7.4.1) and a non-zero last octet (the RBSP stop bit).
fn nal_body(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed) | 1).collect()
}

fn annexb(nals: &[Vec<u8>]) -> Vec<u8> {
    nals.iter().flat_map(|n| h264::START_CODE.iter().chain(n).copied()).collect()
}

/// SPS, PPS, SEI and an IDR slice of `idr_len` octets.
fn access_unit(idr_len: usize) -> Vec<Vec<u8>> {
    let with_header = |h: u8, body: Vec<u8>| [vec![h], body].concat();
    vec![
        with_header(0x67, nal_body(12, 1)),
        with_header(0x68, nal_body(4, 2)),
        with_header(0x06, nal_body(20, 3)),
        with_header(0x65, nal_body(idr_len, 4)),
    ]
}

fn feed_vp8(d: &mut Vp8Depacketizer, first_seq: u16, ts: u32, ps: &[Vp8Payload]) -> Vec<Vec<u8>> {
    let mut frames = Vec::new();
    for (i, p) in ps.iter().enumerate() {
        let seq = first_seq.wrapping_add(i as u16);
        if let vp8::Depacketized::Frame(f) = d.push(seq, ts, i + 1 == ps.len(), &p.to_bytes()).unwrap() {
            frames.push(f);
        }
    }
    frames
}

fn feed_h264(d: &mut H264Depacketizer, first_seq: u16, ts: u32, ps: &[H264Payload]) -> Vec<Vec<u8>> {
    let mut units = Vec::new();
    for (i, p) in ps.iter().enumerate() {
        let seq = first_seq.wrapping_add(i as u16);
        if let h264::Depacketized::AccessUnit(u) = d.push(seq, ts, i + 1 == ps.len(), &p.to_bytes()).unwrap() {
            units.push(u);
        }
    }
    units
}

proptest! {
    #[test]
    fn vp8_descriptor_and_payload_round_trip(d in vp8_descriptor(), p in vp8_payload()) {
        assert_round_trip(&d);
        assert_round_trip(&p);
    }

    #[test]
    fn h264_payloads_round_trip(p in h264_payload()) {
        assert_round_trip(&p);
    }

    #[test]
    fn vp8_frames_survive_packetization(key in any::<bool>(), body in bytes(5000), max in 20usize..1200, pid in any::<u16>(), seq in any::<u16>()) {
        let frame = vp8_frame(key, 100, &body);
        let ps = vp8::packetize(&frame, max, pid).unwrap();
        let sizes: Vec<usize> = ps.iter().map(|p| p.wire_size()).collect();
        prop_assert!(sizes.iter().all(|&s| s <= max));
        prop_assert!(sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1, "even split {:?}", sizes);
        prop_assert!(ps[0].descriptor.starts_frame() && ps[1..].iter().all(|p| !p.descriptor.start_of_partition));
        prop_assert!(ps.iter().all(|p| p.descriptor.picture_id == Some(PictureId::Long(pid & 0x7fff))));
        let mut d = Vp8Depacketizer::new();
        prop_assert_eq!(feed_vp8(&mut d, seq, 9000, &ps), vec![frame]);
    }

    #[test]
    fn h264_access_units_survive_packetization(idr in 1usize..6000, max in 40usize..1200, seq in any::<u16>()) {
        let nals = access_unit(idr);
        let au = annexb(&nals);
        let ps = h264::packetize(&au, max).unwrap();
        prop_assert!(ps.iter().all(|p| p.wire_size() <= max));
        let mut d = H264Depacketizer::new();
        prop_assert_eq!(feed_h264(&mut d, seq, 3000, &ps), vec![au]);
        prop_assert_eq!(d.incomplete_units(), 0);
    }
}

#[test]
fn vp8_descriptor_bytes_by_hand() {
    // RFC 7741 §4.2: X=1 S=1 PID=0 | I=1 | M=1 PictureID 0x1234.
    let d = Vp8Descriptor {
        non_reference: false,
        start_of_partition: true,
        partition_index: 0,
        picture_id: Some(PictureId::Long(0x1234)),
        tl0_pic_idx: None,
        tid: None,
        key_idx: None,
    };
    assert_eq!(d.to_bytes(), [0x90, 0x80, 0x92, 0x34]);
    // N=1, PID=3, 7-bit PictureID 0x55, TL0PICIDX 9, TID 2 with Y, KEYIDX 17.
    let d = Vp8Descriptor {
        non_reference: true,
        start_of_partition: false,
        partition_index: 3,
        picture_id: Some(PictureId::Short(0x55)),
        tl0_pic_idx: Some(9),
        tid: Some((2, true)),
        key_idx: Some(17),
    };
    assert_eq!(d.to_bytes(), [0xa3, 0xf0, 0x55, 0x09, 0xb1]);
    // No optional field: one octet, X clear.
    assert_eq!(Vp8Descriptor { picture_id: None, tl0_pic_idx: None, tid: None, key_idx: None, ..d }.to_bytes(), [0x23]);
    // T clear with K set: TID/Y are zero on the wire and ignored on read.
    assert_eq!(Vp8Descriptor::decode(&[0x80, 0x10, 0xff]).unwrap().tid, None);
    assert_eq!(Vp8Descriptor::decode(&[0x80, 0x10, 0xff]).unwrap().key_idx, Some(31));
}

#[test]
fn vp8_payload_header_reads_key_and_inter_frames() {
    let k = Vp8PayloadHeader::parse(&vp8_frame(true, 1234, &[0; 10])).unwrap();
    assert!(k.key_frame && k.show_frame);
    assert_eq!((k.first_partition_size, k.dimensions), (1234, Some((640, 360))));
    let i = Vp8PayloadHeader::parse(&vp8_frame(false, 77, &[1])).unwrap();
    assert!(!i.key_frame);
    assert_eq!((i.first_partition_size, i.dimensions), (77, None));
    let mut bad = vp8_frame(true, 1, &[0; 4]);
    bad[3] = 0;
    assert!(matches!(Vp8PayloadHeader::parse(&bad), Err(WireError::Invalid { field: "start code", .. })));
    assert!(vp8::packetize(&[0x10], 100, 0).is_err(), "no payload header");
    assert!(vp8::packetize(&vp8_frame(false, 1, &[]), 4, 0).is_err(), "no room after the descriptor");
}

#[test]
fn vp8_lost_packet_drops_its_frame_only() {
    let f1 = vp8_frame(true, 10, &nal_body(3000, 1));
    let f2 = vp8_frame(false, 10, &nal_body(2500, 2));
    let (p1, p2) = (vp8::packetize(&f1, 1000, 1).unwrap(), vp8::packetize(&f2, 1000, 2).unwrap());
    assert!(p1.len() >= 3);
    let mut d = Vp8Depacketizer::new();
    // Frame 1 loses its second packet: nothing comes out of it.
    let mut out = Vec::new();
    for (i, p) in p1.iter().enumerate().filter(|(i, _)| *i != 1) {
        if let vp8::Depacketized::Frame(f) = d.push(100 + i as u16, 0, i + 1 == p1.len(), &p.to_bytes()).unwrap() {
            out.push(f);
        }
    }
    assert!(out.is_empty());
    assert_eq!(d.incomplete_frames(), 1);
    // Frame 2 follows and assembles.
    assert_eq!(feed_vp8(&mut d, 100 + p1.len() as u16, 3000, &p2), vec![f2.clone()]);
    // A frame whose first packet is lost never starts.
    let mut d = Vp8Depacketizer::new();
    assert!(feed_vp8(&mut d, 5, 0, &p2[1..]).is_empty());
    // A frame whose marker is lost is dropped when the next frame starts.
    let mut d = Vp8Depacketizer::new();
    for (i, p) in p1[..p1.len() - 1].iter().enumerate() {
        assert_eq!(d.push(i as u16, 0, false, &p.to_bytes()).unwrap(), vp8::Depacketized::Pending);
    }
    assert_eq!(feed_vp8(&mut d, p1.len() as u16, 3000, &p2), vec![f2]);
    assert_eq!(d.incomplete_frames(), 1);
    // A payload that does not parse is an error, not a panic.
    assert!(d.push(0, 0, true, &[0x90]).is_err());
}

#[test]
fn h264_structures_by_hand() {
    // RFC 6184 §5.7.1: STAP-A header takes the highest NRI; sizes are 16-bit.
    let stap = H264Payload::StapA(vec![vec![0x67, 0xaa], vec![0x08, 0xbb, 0xcc]]);
    assert_eq!(stap.to_bytes(), [0x78, 0x00, 0x02, 0x67, 0xaa, 0x00, 0x03, 0x08, 0xbb, 0xcc]);
    // §5.8: FU indicator F|NRI|28, FU header S|E|R|type.
    let fu = H264Payload::FuA(FuA { forbidden: false, nri: 3, start: true, end: false, nal_type: 5, data: vec![1, 2] });
    assert_eq!(fu.to_bytes(), [0x7c, 0x85, 1, 2]);
    let err = |b: &[u8]| match H264Payload::decode(b) {
        Err(WireError::Invalid { field, .. }) => field,
        Err(WireError::Truncated { what, .. }) => what,
        Ok(p) => panic!("{p:?}"),
    };
    assert_eq!(err(&[0x7c, 0xc5, 1]), "S/E");
    assert_eq!(err(&[0x7c, 0x85]), "payload");
    assert_eq!(err(&[0x79, 0, 1, 0x65]), "type",);
    assert_eq!(err(&[0x78, 0x00, 0x05, 0x67]), "H.264 STAP-A unit");
    assert_eq!(err(&[0x78, 0x00, 0x00]), "NALU size");
    assert_eq!(err(&[0x78]), "units");
    assert_eq!(err(&[0x00]), "type");
}

#[test]
fn h264_packetizer_chooses_stap_a_single_and_fu_a() {
    let nals = access_unit(3000);
    let ps = h264::packetize(&annexb(&nals), 1200).unwrap();
    // SPS, PPS and SEI aggregate; the IDR slice is fragmented into 3 near-equal FU-As.
    assert_eq!(ps[0], H264Payload::StapA(nals[..3].to_vec()));
    let fus: Vec<&FuA> =
        ps[1..].iter().map(|p| if let H264Payload::FuA(f) = p { f } else { panic!("{p:?}") }).collect();
    assert_eq!(fus.len(), 3);
    assert!(fus[0].start && !fus[0].end && fus[2].end && !fus[1].start && !fus[1].end);
    assert_eq!(fus.iter().map(|f| f.data.len()).sum::<usize>(), 3000);
    assert!(fus.iter().all(|f| f.nal_type == 5 && f.nri == 3));
    // A unit that fits alone goes as a single NAL unit packet.
    let ps = h264::packetize_nals(&[&nals[3][..500], &nals[3][..900]], 1000).unwrap();
    assert!(matches!(ps[..], [H264Payload::Single(_), H264Payload::Single(_)]));
    // 3-octet start codes and trailing zeros are read too.
    assert_eq!(
        h264::split_annexb(&[0, 0, 1, 0x67, 5, 0, 0, 0, 1, 0x68, 7, 0, 0, 1, 0x65, 9]),
        vec![&[0x67, 5][..], &[0x68, 7], &[0x65, 9]]
    );
    assert!(h264::packetize_nals(&[&[0x78, 1]], 100).is_err(), "a STAP-A is not a NAL unit to packetize");
    assert!(h264::packetize_nals(&[&[]], 100).is_err());
    assert!(h264::packetize_nals(&[&[0x65, 1]], 2).is_err());
}

#[test]
fn h264_loss_makes_the_access_unit_incomplete() {
    let au1 = access_unit(4000);
    let au2 = access_unit(300);
    let p1 = h264::packetize(&annexb(&au1), 1000).unwrap();
    let p2 = h264::packetize(&annexb(&au2), 1000).unwrap();
    assert!(p1.len() >= 4);
    // Each packet of the middle unit lost in turn, between two complete units.
    let n2 = p2.len() as u16;
    for lost in 0..p1.len() {
        let mut d = H264Depacketizer::new();
        assert_eq!(feed_h264(&mut d, 0, 0, &p2), vec![annexb(&au2)]);
        let mut out = Vec::new();
        for (i, p) in p1.iter().enumerate().filter(|(i, _)| *i != lost) {
            if let h264::Depacketized::AccessUnit(u) =
                d.push(n2 + i as u16, 3000, i + 1 == p1.len(), &p.to_bytes()).unwrap()
            {
                out.push(u);
            }
        }
        assert!(out.is_empty(), "access unit without packet {lost}");
        let next = feed_h264(&mut d, n2 + p1.len() as u16, 6000, &p2);
        assert_eq!(d.incomplete_units(), 1, "lost packet {lost}");
        assert_eq!(next, vec![annexb(&au2)], "the next unit after losing packet {lost}");
    }
}

#[test]
fn fuzz_payload_decoders_and_depacketizers() {
    let vp8_seeds: Vec<Vec<u8>> =
        vp8::packetize(&vp8_frame(true, 5, &nal_body(300, 1)), 120, 77).unwrap().iter().map(|p| p.to_bytes()).collect();
    let mut rich = Vp8Descriptor::decode(&[0xa3, 0xf0, 0x55, 0x09, 0xb1]).unwrap().to_bytes();
    rich.push(0x42);
    let mut seeds = vp8_seeds.clone();
    seeds.push(rich);
    assert!(fuzz_decoder::<Vp8Payload>(&seeds, 30_000, 21) > 1_000);
    let descriptors: Vec<Vec<u8>> =
        seeds.iter().map(|s| Vp8Payload::decode(s).unwrap().descriptor.to_bytes()).collect();
    fuzz_decoder::<Vp8Descriptor>(&descriptors, 20_000, 22);

    let h264_seeds: Vec<Vec<u8>> =
        h264::packetize(&annexb(&access_unit(700)), 300).unwrap().iter().map(|p| p.to_bytes()).collect();
    assert!(fuzz_decoder::<H264Payload>(&h264_seeds, 30_000, 23) > 1_000);

    // Depacketizers take any stream of payloads, flags from the input too;
    // seeds are whole frames in the stream format, so some assemble.
    let stream = |ps: &[Vec<u8>]| -> Vec<u8> {
        ps.iter()
            .filter(|p| p.len() < 256)
            .enumerate()
            .flat_map(|(i, p)| [u8::from(i + 1 == ps.len()), p.len() as u8].into_iter().chain(p.iter().copied()))
            .collect()
    };
    let seeds = vec![stream(&vp8_seeds), stream(&h264_seeds)];
    // (Each depacketizer sees both streams; the other format's bytes may happen to parse.)
    assert!(rtcc_wire::payload::fuzz_depacketizers(&seeds[0]) >= 1, "the VP8 seed is a frame");
    assert!(rtcc_wire::payload::fuzz_depacketizers(&seeds[1]) >= 1, "the H.264 seed is an access unit");
    let mut frames = 0;
    rtcc_wire::fuzzing::bounded_fuzz(&seeds, 20_000, 24, |input| {
        frames += rtcc_wire::payload::fuzz_depacketizers(input)
    });
    assert!(frames > 100, "mutated streams still assemble some frames ({frames})");
}

/// libwebrtc `modules/rtp_rtcp/source/video_rtp_depacketizer_vp8_unittest.cc`.
#[test]
fn libwebrtc_vp8_descriptor_vectors() {
    // MultipleExtensions: X and N, PID 6, 15-bit PictureID 0x1234, TL0PICIDX 42, TID 1 with Y, KEYIDX 17.
    let mut packet = vec![0b1010_0110, 0b1111_0000, 0x80 | 0x12, 0x34, 42, 0b0111_0001]; // TID 01, Y 1, KEYIDX 10001
    packet.extend_from_slice(&[0; 4]);
    let p = Vp8Payload::decode(&packet).unwrap();
    let d = &p.descriptor;
    assert!(d.non_reference && !d.start_of_partition);
    assert_eq!(
        (d.partition_index, d.picture_id, d.tl0_pic_idx, d.tid, d.key_idx),
        (6, Some(PictureId::Long(0x1234)), Some(42), Some((1, true)), Some(17))
    );
    assert_eq!(p.data.len(), 4, "the descriptor is 6 octets");
    assert_eq!(p.to_bytes(), packet);
    // TwoBytePictureID: a 4-octet descriptor.
    let p = Vp8Payload::decode(&[0b1010_0000, 0b1000_0000, 0x80 | 0x12, 0x34, 0, 0, 0, 0, 0, 0]).unwrap();
    assert_eq!((p.descriptor.picture_id, p.data.len()), (Some(PictureId::Long(0x1234)), 6));
    // TooShortHeader: every extension flagged, only the PictureID present.
    assert!(matches!(
        Vp8Payload::decode(&[0b1000_0000, 0b1111_0000, 0x80 | 17, 17]),
        Err(WireError::Invalid { field: "TL0PICIDX", .. })
    ));
    // FailsOnEmptyPayload.
    assert!(Vp8Payload::decode(&[]).is_err());
}
