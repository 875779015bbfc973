//! RTP payload formats for video: how a codec's frame is cut into payloads
//! and put back together.

pub mod h264;
pub mod red;
pub mod vp8;

/// Entry point the bounded fuzz test and the `fuzz/` target share: `data` read
/// as a stream of packets (each a flags octet — marker, timestamp step,
/// sequence skip — a length octet and that many payload octets) fed to both
/// depacketizers, which must take any of it without panicking.
#[doc(hidden)]
pub fn fuzz_depacketizers(mut data: &[u8]) -> usize {
    let (mut v, mut h) = (vp8::Vp8Depacketizer::new(), h264::H264Depacketizer::new());
    let (mut seq, mut ts, mut frames) = (0u16, 0u32, 0);
    while let [flags, len, rest @ ..] = data {
        let n = (*len as usize).min(rest.len());
        let (payload, tail) = rest.split_at(n);
        seq = seq.wrapping_add(1 + u16::from(flags & 0x0c == 0x0c));
        ts = ts.wrapping_add(u32::from(flags & 0x02 != 0) * 3000);
        let marker = flags & 0x01 != 0;
        frames += usize::from(matches!(v.push(seq, ts, marker, payload), Ok(vp8::Depacketized::Frame(_))));
        frames += usize::from(matches!(h.push(seq, ts, marker, payload), Ok(h264::Depacketized::AccessUnit(_))));
        data = tail;
    }
    frames
}
