//! What the simulator drives: a flow's two ends, each sans-IO and apart.
//! The sending end puts packets on the forward path and takes what comes
//! back; the receiving end takes those packets and answers over the reverse
//! path. Neither reads the other: all that passes between them is a
//! `Packet` one way (in the simulator's `Envelope`, whose other fields only
//! the recorder reads) and a `Back` the other, as datagrams would. Each end
//! has a timer; every input carries `now`.
//!
//! The drain-then-sleep contract, for any driver: after any input (a
//! timeout, a packet, a `Back`), poll the end's output (`poll_transmit`,
//! `poll_back`) until it returns `None`, then sleep until `poll_timeout`.
//! A deadline at or before the last input's time means "due now". The
//! simulator is one driver of this contract (`sim.rs`); a flow kind is a
//! pair of ends built together (a video call, `call.rs`; a TCP, web-like or
//! UDP flow, `traffic.rs`).

use rtcc_core::feedback::ReceiverReport;
use rtcc_core::packet::Packet;
use rtcc_core::tcp;
use rtcc_core::units::{DataSize, Time};

use crate::queue::Item;
use crate::recorder::Recorder;
pub use rtcc_record::Envelope;

/// What a receiving end sends back.
#[derive(Clone, Debug)]
pub enum Back {
    /// A video receiver's report (transport feedback, NACK, PLI).
    Report(ReceiverReport),
    /// A TCP receiver's ACK.
    Ack(tcp::Ack),
    /// A web-like client's request for its next object.
    Request(crate::traffic::Request),
}

impl Back {
    /// Bytes on the wire (what the reverse bottleneck serialises).
    pub fn wire_size(&self) -> DataSize {
        match self {
            Back::Report(r) => r.wire_size(),
            Back::Ack(a) => a.wire_size(),
            Back::Request(r) => r.wire_size(),
        }
    }
}

impl Item for Envelope {
    fn size(&self) -> DataSize {
        self.packet.size
    }
    fn flow(&self) -> u16 {
        self.flow
    }
}

/// What crosses a bottleneck in the simulator, whole: a sending end's
/// packet, or what a receiving end sent back (a report, an ACK, a request)
/// with the flow it belongs to (its bytes are `Back::wire_size`).
#[derive(Clone, Debug)]
pub enum Datagram {
    Data(Envelope),
    Back { flow: u16, back: Box<Back> },
}

impl Item for Datagram {
    fn size(&self) -> DataSize {
        match self {
            Datagram::Data(p) => p.packet.size,
            Datagram::Back { back, .. } => back.wire_size(),
        }
    }
    fn flow(&self) -> u16 {
        match self {
            Datagram::Data(p) => p.flow,
            Datagram::Back { flow, .. } => *flow,
        }
    }
}

// With many flows every queue, path and store a packet passes through
// holds it cold: at most nine words. (32-bit targets pack it smaller.)
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<Datagram>() <= 72 && std::mem::size_of::<Envelope>() <= 72);

/// A flow's sending end as the simulator drives it.
pub trait SendEnd: Send {
    /// When it next wants to be woken.
    fn poll_timeout(&self) -> Option<Time>;
    fn handle_timeout(&mut self, now: Time);
    /// It takes up a decision changed outside its controller's calls
    /// (`Sender::refresh_decision`); nothing for ends without one.
    fn refresh_decision(&mut self, _now: Time) {}
    /// The next packet for the forward path, if one may leave at `now`.
    fn poll_transmit(&mut self, now: Time) -> Option<Envelope>;
    /// Something the receiving end sent back arrived.
    fn handle_back(&mut self, now: Time, back: &Back);

    /// Tell the recorder what of its own record is final at `now` (all of
    /// it `at_end`).
    fn record_settled(&mut self, flow: usize, now: Time, at_end: bool, rec: &mut Recorder);
    /// Its state at the end of the bin ending at `at`.
    fn record_sample(&self, flow: usize, at: Time, rec: &mut Recorder);
    /// Its totals when the run ends at `at` (after the receiving end's).
    fn record_end(&self, flow: usize, at: Time, rec: &mut Recorder);
    /// Start loading the state its next event touches: the simulator calls
    /// this one event ahead (`rtcc_core::cache`).
    fn prefetch(&self) {}
    /// A failure that makes the flow's results untrustworthy.
    fn failure(&self) -> Option<String> {
        None
    }
    /// A video call's sender, for a driver that feeds it frames from
    /// outside (`SenderConfig::external_frames`); None for other ends.
    fn video_sender(&mut self) -> Option<&mut rtcc_core::sender::Sender> {
        None
    }
}

/// A flow's receiving end as the simulator drives it.
pub trait RecvEnd: Send {
    /// When it next wants to be woken (it is woken through `poll_back`).
    fn poll_timeout(&self) -> Option<Time>;
    fn handle_packet(&mut self, now: Time, packet: &Packet);
    /// What it sends back at `now`.
    fn poll_back(&mut self, now: Time) -> Option<Back>;

    /// As `SendEnd::record_settled`, for its own record.
    fn record_settled(&mut self, flow: usize, now: Time, at_end: bool, rec: &mut Recorder);
    /// Its state at the end of the bin ending at `at` (before the sending
    /// end's).
    fn record_sample(&self, _flow: usize, _at: Time, _rec: &mut Recorder) {}
    /// Its totals when the run ends at `at` (before the sending end's).
    fn record_end(&self, flow: usize, at: Time, rec: &mut Recorder);
    /// As `SendEnd::prefetch`.
    fn prefetch(&self) {}
}

/// A flow's two ends, built together from its spec.
pub struct Ends {
    pub send: Box<dyn SendEnd>,
    pub recv: Box<dyn RecvEnd>,
}
