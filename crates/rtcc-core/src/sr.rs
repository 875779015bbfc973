//! RTCP sender reports and the round trip they give (RFC 3550 §6.4.1).
//!
//! A sending end sends an SR with its NTP clock about once per report
//! interval; the receiving end keeps the middle 32 bits of the newest one
//! and when it arrived; each receiver report block echoes them as LSR and
//! the time since as DLSR. The sending end then has the round trip on its
//! own clock alone: arrival of the RR − LSR − DLSR. No clock needs to agree
//! with the other end's, and the receiver's wait before its report is taken
//! out by DLSR.

use rtcc_wire::rtcp::{Compound, RtcpPacket, Sdes, SenderInfo, SenderReport};
use rtcc_wire::Wire;

use crate::feedback::ssrcs;
use crate::units::{Duration, Time};

/// Report interval of a video stream: libwebrtc's RTCPSender sends video
/// RTCP every second (its `kDefaultVideoReportInterval`), each one at a
/// random point of [0.5, 1.5] intervals after the last (RFC 3550 §6.3.1
/// randomises the same way).
pub const VIDEO_INTERVAL: Duration = Duration::from_secs(1);

/// RFC 3550 §4 NTP timestamp (32.32 s) of a clock time, seconds counted
/// from the clock's zero. Wraps after 136 years.
pub fn ntp(t: Time) -> u64 {
    let us = t.as_micros().max(0) as u64;
    let (s, frac) = (us / 1_000_000, us % 1_000_000);
    (s << 32) | ((frac << 32) / 1_000_000)
}

/// Its middle 32 bits (16.16 s): an RR's LSR, RFC 8888's report timestamp.
pub fn ntp_middle(t: Time) -> u32 {
    (ntp(t) >> 16) as u32
}

/// The clock time a middle-32-bit timestamp stands for (RFC 8888's report
/// timestamp): the first µs that `ntp_middle` truncates to it. It wraps
/// after 18 hours, longer than any run.
pub fn from_ntp_middle(v: u32) -> Time {
    Time::from_micros((i64::from(v) * 1_000_000 + 65_535) >> 16)
}

/// A time in 1/65,536 s, as DLSR carries it (RFC 3550 §6.4.1), rounded down
/// and held at the field's largest value.
pub fn dlsr(d: Duration) -> u32 {
    ((i128::from(d.as_micros().max(0)) << 16) / 1_000_000).min(i128::from(u32::MAX)) as u32
}

/// The round trip a report block gives a sending end that receives it at
/// `now` (RFC 3550 §6.4.1: A − LSR − DLSR in 1/65,536 s, on the sender's
/// clock alone): `None` when the block echoes no SR (LSR 0) or the
/// difference is negative (a block from a clock that went back, or bytes
/// that were not an echo of this sender's SR).
pub fn round_trip(now: Time, lsr: u32, dlsr: u32) -> Option<Duration> {
    if lsr == 0 {
        return None;
    }
    let elapsed = ntp_middle(now).wrapping_sub(lsr);
    // More than half the 18-hour wrap is read as "before the SR".
    if elapsed >= 1 << 31 || elapsed < dlsr {
        return None;
    }
    let units = i64::from(elapsed - dlsr);
    Some(Duration::from_micros((units * 1_000_000) >> 16))
}

/// Flow `flow`'s SR at `now` as one compound RTCP datagram (RFC 3550 §6.1:
/// the SR, then an SDES with the CNAME): the NTP and 90 kHz RTP timestamps
/// of `now`, and the RTP packets and payload octets sent so far (the counts
/// wrap, §6.4.1).
pub fn sender_report(flow: u16, now: Time, packets: u64, octets: u64) -> Vec<u8> {
    let (_, media) = ssrcs(flow);
    let info = SenderInfo {
        ntp: ntp(now),
        rtp_timestamp: crate::packet::rtp_timestamp(now),
        packet_count: packets as u32,
        octet_count: octets as u32,
    };
    let sr = SenderReport { ssrc: media, info, reports: Vec::new(), extension: Vec::new() };
    let mut packets = vec![RtcpPacket::SenderReport(sr)];
    // "rtcc-<flow>": short, unique per flow; always a valid CNAME.
    if let Ok(sdes) = Sdes::cname(media, &format!("rtcc-{flow}")) {
        packets.push(RtcpPacket::Sdes(sdes));
    }
    Compound::new(packets).to_bytes()
}

/// The newest SR of flow `flow`'s media stream in `bytes` (its NTP
/// timestamp's middle 32 bits, what LSR echoes), if the datagram is RTCP and
/// holds one; anything else, broken bytes included, is `None`.
pub fn read_sender_report(flow: u16, bytes: &[u8]) -> Option<u32> {
    let (_, media) = ssrcs(flow);
    let compound = Compound::decode(bytes).ok()?;
    compound.packets.iter().rev().find_map(|p| match p {
        RtcpPacket::SenderReport(sr) if sr.ssrc == media => Some(sr.info.ntp_middle()),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ntp_halves_and_middle_bits() {
        let t = Time::from_micros(2_500_000);
        assert_eq!(ntp(t), (2 << 32) | (1 << 31));
        assert_eq!(ntp_middle(t), (2 << 16) | (1 << 15));
        // The inverse gives back every µs within the 15.3 µs unit it falls in.
        for us in [0, 1, 15, 16, 2_500_000, 7_654_321] {
            let back = from_ntp_middle(ntp_middle(Time::from_micros(us)));
            assert!(back <= Time::from_micros(us) && us - back.as_micros() < 16, "{us}: {back:?}");
            assert_eq!(ntp_middle(back), ntp_middle(Time::from_micros(us)));
        }
        assert_eq!(dlsr(Duration::from_micros(500_000)), 1 << 15);
        assert_eq!(dlsr(Duration::from_micros(-5)), 0);
        assert_eq!(dlsr(Duration::from_secs(1 << 20)), u32::MAX);
    }

    /// RFC 3550 §6.4.1's example: an RR arriving at 46,864.5 s (0xb710:8000)
    /// echoing LSR 0xb705:2000 with DLSR 0x0005:4000 (5.25 s) gives 6.125 s.
    #[test]
    fn the_rfc_example_round_trip() {
        let now = Time::from_micros(0xb710 * 1_000_000 + 500_000);
        assert_eq!(ntp_middle(now), 0xb710_8000);
        let rtt = round_trip(now, 0xb705_2000, 0x0005_4000).unwrap();
        assert_eq!(rtt, Duration::from_micros(6_125_000));
        assert_eq!(round_trip(now, 0, 0x0005_4000), None, "no SR echoed");
        assert_eq!(round_trip(now, 0xb710_9000, 0), None, "an SR from the future");
        assert_eq!(round_trip(now, 0xb705_2000, 0x0020_0000), None, "held longer than it was away");
    }

    #[test]
    fn a_sender_report_reads_back_and_nothing_else_does() {
        let now = Time::from_micros(12_345_678);
        let bytes = sender_report(3, now, 1_000, 1_200_000);
        assert_eq!(read_sender_report(3, &bytes), Some(ntp_middle(now)));
        assert_eq!(read_sender_report(4, &bytes), None, "another flow's SSRC");
        let c = Compound::decode(&bytes).unwrap();
        match &c.packets[..] {
            [RtcpPacket::SenderReport(sr), RtcpPacket::Sdes(s)] => {
                assert_eq!((sr.info.packet_count, sr.info.octet_count), (1_000, 1_200_000));
                assert_eq!(sr.info.rtp_timestamp, crate::packet::rtp_timestamp(now));
                assert_eq!(s.chunks[0].cname(), Some(&b"rtcc-3"[..]));
            }
            other => panic!("{other:?}"),
        }
        for cut in 0..bytes.len() {
            let _ = read_sender_report(3, &bytes[..cut]);
        }
        assert_eq!(read_sender_report(3, &[0x80, 201, 0, 1, 0, 0, 0, 0]), None, "an RR");
    }
}
