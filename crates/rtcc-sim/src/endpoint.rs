//! What the simulator drives: a flow's two endpoints, sans-IO. The sending
//! end puts packets on the forward path and takes what comes back; the
//! receiving end takes those packets and answers over the reverse path.
//! Each end has a timer; every input carries `now`. The simulator knows
//! nothing else of a flow, so a video call (`call.rs`) and any other kind
//! of traffic — a TCP or UDP flow with its ACKs — are driven the same way.

use rtcc_core::feedback::ReceiverReport;
use rtcc_core::packet::Packet;
use rtcc_core::tcp;
use rtcc_core::units::{DataSize, Time};

use crate::recorder::Recorder;

/// What a receiving end sends back.
#[derive(Clone, Debug)]
pub enum Back {
    /// A video receiver's report (transport feedback, NACK, PLI).
    Report(ReceiverReport),
    /// A TCP receiver's ACK.
    Ack(tcp::Ack),
}

impl Back {
    /// Bytes on the wire (what the reverse bottleneck serialises).
    pub fn wire_size(&self) -> DataSize {
        match self {
            Back::Report(r) => r.wire_size(),
            Back::Ack(a) => a.wire_size(),
        }
    }
}

/// A flow's two endpoints as the simulator drives them.
pub trait Endpoints: Send {
    /// When the sending end next wants to be woken.
    fn sender_timeout(&self) -> Option<Time>;
    fn handle_sender_timeout(&mut self, now: Time);
    /// The sending end takes up a decision changed outside its controller's
    /// calls (`Sender::refresh_decision`); nothing for ends without one.
    fn refresh_decision(&mut self, _now: Time) {}
    /// The next packet for the forward path, if one may leave at `now`.
    fn poll_transmit(&mut self, now: Time) -> Option<Packet>;
    /// Something the receiving end sent back arrived.
    fn handle_back(&mut self, now: Time, back: &Back);

    /// When the receiving end next wants to be woken.
    fn receiver_timeout(&self) -> Option<Time>;
    fn handle_packet(&mut self, now: Time, packet: &Packet);
    /// What the receiving end sends back at `now` (it is woken through this).
    fn poll_back(&mut self, now: Time) -> Option<Back>;

    /// Tell the recorder about frames (or other units) whose fate is known
    /// at `now`; all of them `at_end`.
    fn record_settled(&mut self, flow: usize, now: Time, at_end: bool, rec: &mut Recorder);
    /// The sending end's state at the end of the bin ending at `at`.
    fn record_sample(&self, flow: usize, at: Time, rec: &mut Recorder);
    /// The flow's totals when the run ends at `at`.
    fn record_end(&self, flow: usize, at: Time, rec: &mut Recorder);
    /// Start loading the state the sending end's next event touches: the
    /// simulator calls this one event ahead (`rtcc_core::cache`).
    fn prefetch_sender(&self) {}
    /// As `prefetch_sender`, for the receiving end.
    fn prefetch_receiver(&self) {}
    /// A failure that makes the flow's results untrustworthy.
    fn failure(&self) -> Option<String> {
        None
    }
}
