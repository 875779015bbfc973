//! Real encoders' frames (libvpx VP8, OpenH264 H.264 through rtcc-video)
//! through the payload formats: packetized, depacketized byte for byte, and
//! decoded by the codec's decoder. Skips a codec this build lacks, saying so.

use rtcc_video::codec::{new_decoder, new_encoder, Codec, EncoderSettings};
use rtcc_video::Picture;
use rtcc_wire::payload::{h264, vp8};
use rtcc_wire::Wire;

/// Moving gradients: enough detail for multi-packet key and delta frames.
fn picture(w: u32, h: u32, n: u32) -> Picture {
    let mut p = Picture::new(w, h);
    for y in 0..h {
        for x in 0..w {
            p.y[(y * w + x) as usize] = ((x * 3 + y * 2 + n * 5) % 256) as u8 ^ ((x / 16 + y / 16 + n) % 2 * 40) as u8;
        }
    }
    p
}

fn frames(codec: Codec) -> Option<Vec<Vec<u8>>> {
    if let Err(e) = codec.available() {
        println!("skipping {codec}: {e}");
        return None;
    }
    let mut enc = new_encoder(&EncoderSettings::webrtc(codec, 320, 240, 30.0, 2_000_000)).unwrap();
    let out: Vec<Vec<u8>> =
        (0..12).filter_map(|n| enc.encode(&picture(320, 240, n), n == 0).unwrap()).map(|f| f.data).collect();
    assert!(out.len() >= 6, "{codec}: {} frames", out.len());
    Some(out)
}

#[test]
fn real_vp8_frames_round_trip_and_decode() {
    let Some(fs) = frames(Codec::Vp8) else { return };
    let mut dec = new_decoder(Codec::Vp8).unwrap();
    let mut d = vp8::Vp8Depacketizer::new();
    let mut seq = 65530u16;
    for (i, f) in fs.iter().enumerate() {
        let header = vp8::Vp8PayloadHeader::parse(f).unwrap();
        assert_eq!(header.key_frame, i == 0, "frame {i}");
        if i == 0 {
            assert_eq!(header.dimensions, Some((320, 240)));
        }
        let ps = vp8::packetize(f, 300, i as u16).unwrap();
        let mut got = None;
        for (k, p) in ps.iter().enumerate() {
            if let vp8::Depacketized::Frame(x) = d.push(seq, i as u32 * 3000, k + 1 == ps.len(), &p.to_bytes()).unwrap()
            {
                got = Some(x);
            }
            seq = seq.wrapping_add(1);
        }
        let got = got.unwrap_or_else(|| panic!("frame {i} of {} packets not rebuilt", ps.len()));
        assert_eq!(&got, f, "frame {i}");
        let pic = dec.decode(&got).unwrap().expect("a picture");
        assert_eq!((pic.width, pic.height), (320, 240));
    }
}

#[test]
fn real_h264_access_units_round_trip_and_decode() {
    let Some(fs) = frames(Codec::H264) else { return };
    let mut dec = new_decoder(Codec::H264).unwrap();
    let mut d = h264::H264Depacketizer::new();
    let mut seq = 65530u16;
    let mut kinds = std::collections::HashSet::new();
    for (i, f) in fs.iter().enumerate() {
        let ps = h264::packetize(f, 300).unwrap();
        for p in &ps {
            kinds.insert(std::mem::discriminant(p));
        }
        let mut got = None;
        for (k, p) in ps.iter().enumerate() {
            if let h264::Depacketized::AccessUnit(x) =
                d.push(seq, i as u32 * 3000, k + 1 == ps.len(), &p.to_bytes()).unwrap()
            {
                got = Some(x);
            }
            seq = seq.wrapping_add(1);
        }
        let got = got.unwrap_or_else(|| panic!("access unit {i} not rebuilt"));
        // The depacketizer writes 4-octet start codes: the same NAL units in the same order.
        assert_eq!(h264::split_annexb(&got), h264::split_annexb(f), "access unit {i}");
        if f.starts_with(&h264::START_CODE)
            && h264::split_annexb(f).len() == f.windows(4).filter(|w| *w == h264::START_CODE).count()
        {
            assert_eq!(&got, f, "access unit {i} byte for byte");
        }
        let pic = dec.decode(&got).unwrap().expect("a picture");
        assert_eq!((pic.width, pic.height), (320, 240));
    }
    assert!(kinds.len() >= 2, "the stream used more than one payload structure");
}
