//! RTP and RTCP on the wire, with no I/O: every type here encodes to the
//! bytes a real stack sends and decodes from any bytes without panicking.
//!
//! Each message type implements [`Wire`]: `wire_size()` is exactly the number
//! of bytes `encode` appends, and `decode(encode(x)) == x`.

#![forbid(unsafe_code)]

pub mod error;
pub use error::WireError;
pub mod fec;
#[doc(hidden)]
pub mod fuzzing;
pub mod payload;
pub mod pcap;
pub mod rtcp;
pub mod rtp;

/// A message with one wire form.
pub trait Wire: Sized {
    /// Bytes `encode` appends.
    fn wire_size(&self) -> usize;
    /// Appends the wire form to `out`.
    fn encode(&self, out: &mut Vec<u8>);
    /// Parses one message that fills `buf` exactly (trailing bytes are an error
    /// unless the format says otherwise).
    fn decode(buf: &[u8]) -> Result<Self, WireError>;

    /// The wire form in a new buffer.
    fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.wire_size());
        self.encode(&mut out);
        out
    }
}
