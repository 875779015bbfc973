//! A real codec's frame as the RTP payloads its packets carry, and the frame
//! back from them: the sender cuts each frame with its payload format's
//! packetizer (rtcc-wire: VP8 RFC 7741, H.264 RFC 6184), the receiver puts
//! the payloads that arrived (received, retransmitted or rebuilt from FEC)
//! through the depacketizer, and only then has bytes to decode.

use crate::packet::{Payload, PayloadFormat};
use rtcc_wire::payload::{h264, vp8};
use rtcc_wire::Wire;

/// `frame` (the encoder's bitstream, tagged with its format) as payloads of
/// at most `max_payload` octets, in sending order. `picture_id` is VP8's
/// 15-bit PictureID (RFC 7741 §4.2; libwebrtc sends it on every packet).
/// Opaque bytes are cut into near-equal slices, as the model encoders' frames.
/// `None` when the format's packetizer refuses the bitstream (or it is a
/// parity, not a frame).
pub fn packetize(frame: &Payload, max_payload: usize, picture_id: u16) -> Option<Vec<Payload>> {
    let max_payload = max_payload.max(1);
    let bytes = frame.bytes();
    let format = frame.format();
    let wrap = |v: Vec<u8>| Payload::with_format(format, v);
    Some(match format {
        PayloadFormat::Vp8 => {
            vp8::packetize(bytes, max_payload, picture_id).ok()?.iter().map(|p| wrap(p.to_bytes())).collect()
        }
        PayloadFormat::H264 => h264::packetize(bytes, max_payload).ok()?.iter().map(|p| wrap(p.to_bytes())).collect(),
        PayloadFormat::Parity => return None,
        PayloadFormat::Opaque => {
            let (len, count) = (bytes.len() as u64, bytes.len().div_ceil(max_payload).max(1) as u64);
            let mut at = 0;
            (0..count)
                .map(|i| {
                    let n = share(len, count, i) as usize;
                    at += n;
                    wrap(bytes[at - n..at].to_vec())
                })
                .collect()
        }
    })
}

/// Octets of part `i` when `total` is split into `count` near-equal parts,
/// the larger first, so no runt trails the frame (as libwebrtc's
/// RtpPacketizer splits).
pub fn share(total: u64, count: u64, i: u64) -> u64 {
    total / count + u64::from(i < total % count)
}

/// The frame a complete set of payloads (in sending order; the receiver
/// calls it only once every packet of the frame is in) carries, through
/// the format's depacketizer with consecutive sequence numbers and the
/// marker on the last; `None` when they do not make a frame (a payload that
/// does not parse, a frame that does not start or end where it should).
pub fn depacketize(payloads: &[Payload]) -> Option<Payload> {
    let n = payloads.len();
    let mut format = None;
    let mut out = None;
    let mut vp8 = vp8::Vp8Depacketizer::new();
    let mut h264 = h264::H264Depacketizer::new();
    let mut opaque = Vec::new();
    for (i, p) in payloads.iter().enumerate() {
        if *format.get_or_insert(p.format()) != p.format() {
            return None;
        }
        let (seq, last) = (i as u16, i + 1 == n);
        match p.format() {
            PayloadFormat::Vp8 => {
                // The depacketizer skips packets before a frame's start
                // silently; here every payload must belong to the frame.
                if i == 0 && !vp8::Vp8Payload::decode(p.bytes()).ok()?.descriptor.starts_frame() {
                    return None;
                }
                if let vp8::Depacketized::Frame(f) = vp8.push(seq, 0, last, p.bytes()).ok()? {
                    out = last.then_some(f);
                }
            }
            PayloadFormat::H264 => {
                if let h264::Depacketized::AccessUnit(f) = h264.push(seq, 0, last, p.bytes()).ok()? {
                    out = last.then_some(f);
                }
            }
            PayloadFormat::Opaque => {
                opaque.extend_from_slice(p.bytes());
                if last {
                    out = Some(std::mem::take(&mut opaque));
                }
            }
            PayloadFormat::Parity => return None,
        }
    }
    // A payload that restarted or broke the frame was dropped with it.
    if vp8.incomplete_frames() + h264.incomplete_units() > 0 {
        return None;
    }
    Some(Payload::with_format(format?, out?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opaque_slices_are_near_equal_and_rebuild_the_frame() {
        let frame = Payload::new((0..2501u32).map(|i| i as u8).collect());
        let parts = packetize(&frame, 1200, 0).unwrap();
        let sizes: Vec<usize> = parts.iter().map(Payload::len).collect();
        assert_eq!(sizes, [834, 834, 833]);
        assert_eq!(depacketize(&parts), Some(frame));
        // A parity is not a frame to cut.
        assert_eq!(packetize(&Payload::with_format(PayloadFormat::Parity, vec![1; 10]), 1200, 0), None);
    }

    /// A VP8 frame tag (RFC 6386 §9.1): key frame, shown, first partition
    /// size 0, then the start code and a 64x64 size.
    fn vp8_frame(len: usize) -> Payload {
        let mut f = vec![0x10, 0x00, 0x00, 0x9d, 0x01, 0x2a, 64, 0, 64, 0];
        f.extend((f.len()..len).map(|i| (i * 13) as u8));
        Payload::with_format(PayloadFormat::Vp8, f)
    }

    #[test]
    fn vp8_payloads_carry_descriptors_and_rebuild_the_frame() {
        let frame = vp8_frame(3000);
        let parts = packetize(&frame, 1200, 7).unwrap();
        assert_eq!(parts.len(), 3);
        // A 4-octet descriptor (X, I, 15-bit PictureID) on each.
        assert_eq!(parts.iter().map(Payload::len).sum::<usize>(), 3000 + 3 * 4);
        assert!(parts.iter().all(|p| p.len() <= 1200 && p.format() == PayloadFormat::Vp8));
        assert_eq!(depacketize(&parts), Some(frame));
        // Without its first payload (S=1) the rest is not a frame, nor are
        // the payloads out of order (the first would be skipped, the start
        // would come second).
        assert_eq!(depacketize(&parts[1..]), None);
        let swapped = [parts[1].clone(), parts[0].clone(), parts[2].clone()];
        assert_eq!(depacketize(&swapped), None);
        let restarted = [parts[0].clone(), parts[0].clone(), parts[2].clone()];
        assert_eq!(depacketize(&restarted), None);
        // A payload that does not parse.
        let bad = [Payload::with_format(PayloadFormat::Vp8, vec![0x80])];
        assert_eq!(depacketize(&bad), None);
    }

    #[test]
    fn h264_access_unit_goes_through_fu_a_and_back() {
        // SPS, PPS and a 3000-octet IDR slice in Annex B form.
        let mut au = vec![0, 0, 0, 1, 0x67, 1, 2, 3, 0, 0, 0, 1, 0x68, 4, 5, 0, 0, 0, 1, 0x65];
        au.extend((0..3000).map(|i| (i % 251) as u8 | 1));
        let frame = Payload::with_format(PayloadFormat::H264, au.clone());
        let parts = packetize(&frame, 1200, 0).unwrap();
        assert!(parts.len() >= 3 && parts.iter().all(|p| p.len() <= 1200));
        assert_eq!(depacketize(&parts).unwrap().bytes(), &au[..]);
    }
}
