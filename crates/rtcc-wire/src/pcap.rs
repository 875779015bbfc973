//! Datagrams as a capture file Wireshark and tshark read, for checking what
//! rtcc sends against their dissectors and for looking at a run's packets.

/// A pcap file (libpcap 2.4, µs timestamps, LINKTYPE_ETHERNET): per datagram
/// an Ethernet/IPv4/UDP frame from 127.0.0.1:`src_port` to 127.0.0.1:`dst_port`.
pub fn loopback_udp(datagrams: &[Vec<u8>], src_port: u16, dst_port: u16) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
    out.extend_from_slice(&2u16.to_le_bytes());
    out.extend_from_slice(&4u16.to_le_bytes());
    out.extend_from_slice(&[0; 8]); // thiszone, sigfigs
    out.extend_from_slice(&65_535u32.to_le_bytes()); // snaplen
    out.extend_from_slice(&1u32.to_le_bytes());
    for (i, d) in datagrams.iter().enumerate() {
        let mut frame = vec![0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 2, 0x08, 0x00];
        let mut ip = vec![0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 17, 0, 0, 127, 0, 0, 1, 127, 0, 0, 1];
        ip[2..4].copy_from_slice(&((20 + 8 + d.len()) as u16).to_be_bytes());
        ip[4..6].copy_from_slice(&(i as u16).to_be_bytes());
        let sum: u32 = ip.chunks(2).map(|w| u32::from(u16::from_be_bytes([w[0], w[1]]))).sum();
        let sum = (sum & 0xffff) + (sum >> 16);
        ip[10..12].copy_from_slice(&(!((sum & 0xffff) + (sum >> 16)) as u16).to_be_bytes());
        frame.extend_from_slice(&ip);
        frame.extend_from_slice(&src_port.to_be_bytes());
        frame.extend_from_slice(&dst_port.to_be_bytes());
        frame.extend_from_slice(&((8 + d.len()) as u16).to_be_bytes());
        frame.extend_from_slice(&[0, 0]); // no UDP checksum (RFC 768, allowed over IPv4)
        frame.extend_from_slice(d);
        out.extend_from_slice(&(1_700_000_000u32 + i as u32).to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        out.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        out.extend_from_slice(&frame);
    }
    out
}
