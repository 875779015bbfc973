//! What the controllers' tests share: unit shorthands, parameters given as
//! text, a state column, and closed loops of the whole sender over `Pair`.

use super::{Controller, ParamValue, Params, SentPacket};
use crate::feedback::PacketResult;
use crate::packet::PacketKind;
use crate::pair::{Pair, Transmitted};
use crate::sender::SenderConfig;
use crate::units::{DataRate, DataSize, Duration, Time};

pub(crate) const MS: Duration = Duration::from_millis(1);

pub(crate) fn ms(v: i64) -> Time {
    Time::from_millis(v)
}

pub(crate) fn us(v: i64) -> Time {
    Time::from_micros(v)
}

pub(crate) fn kbps(v: u64) -> DataRate {
    DataRate::from_kbps(v)
}

/// Each value as text, as a scenario file gives it.
pub(crate) fn params(given: &[(&str, &str)]) -> Params {
    given.iter().fold(Params::new(), |p, (k, v)| p.with(k, ParamValue::Str(v.to_string())))
}

/// The controller's state column `key`, if it reports one.
pub(crate) fn state(c: &dyn Controller, key: &str) -> Option<f64> {
    let mut v = None;
    c.state(&mut |k, x| v = if k == key { Some(x) } else { v });
    v
}

/// Per 100 ms slot: bytes delivered, queueing delay summed over the packets
/// sent in it (beyond propagation and the packet's own serialisation), and
/// the target and `mode` column at its end.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Slot {
    pub delivered: u64,
    pub queue_us: i64,
    pub packets: i64,
    pub target: DataRate,
    pub mode: Option<f64>,
}

/// `c` in `sender` alone for `secs` over a FIFO bottleneck of `capacity(t)`
/// and `owd` each way, the ideal encoder at 30 fps, reports every 50 ms.
pub(crate) fn closed_loop(
    c: Box<dyn Controller>,
    sender: SenderConfig,
    capacity: fn(Time) -> DataRate,
    owd: Duration,
    secs: i64,
) -> Vec<Slot> {
    let mut pair = Pair::builder().sender(sender).controller(c).delay(owd).capacity(capacity).build();
    let mut slots = vec![Slot::default(); (secs * 10) as usize];
    let slot = |t: Time| (t.as_micros() / 100_000) as usize;
    for (i, sl) in slots.iter_mut().enumerate() {
        pair.run_until(ms(100 * (i as i64 + 1)));
        sl.target = pair.sender.controller().decision().target_rate;
        sl.mode = state(pair.sender.controller(), "mode");
    }
    for t in pair.sent() {
        let Some(arrival) = t.arrival else { continue };
        let send = t.sent.send_time;
        if let Some(sl) = slots.get_mut(slot(arrival)) {
            sl.delivered += t.packet.size.bytes();
        }
        if let Some(sl) = slots.get_mut(slot(send)) {
            let own = t.packet.size / capacity(send);
            sl.queue_us += ((arrival - send) - owd - own).as_micros().max(0);
            sl.packets += 1;
        }
    }
    slots
}

pub(crate) fn utilisation(slots: &[Slot], capacity: DataRate) -> f64 {
    let bytes: u64 = slots.iter().map(|s| s.delivered).sum();
    bytes as f64 * 8.0 / (capacity.bps() as f64 * slots.len() as f64 / 10.0)
}

pub(crate) fn queue_ms(slots: &[Slot]) -> f64 {
    let (us, n) = slots.iter().fold((0, 0), |(u, n), s| (u + s.queue_us, n + s.packets));
    us as f64 / 1000.0 / n.max(1) as f64
}

/// `c` alone for 20 s over a FIFO bottleneck of `capacity`, 20 ms each way,
/// the ideal encoder: the utilisation and the mean one-way delay (ms) of the
/// packets sent from 5 s on, once the start is over.
pub(crate) fn fixed_link(c: Box<dyn Controller>, capacity: DataRate) -> (f64, f64) {
    let mut pair = Pair::builder()
        .sender(SenderConfig::default())
        .controller(c)
        .delay(Duration::from_millis(20))
        .bottleneck(capacity)
        .build();
    pair.run_until(Time::from_secs_f64(20.0));
    let (from, to) = (Time::from_millis(5_000), Time::from_millis(20_000));
    let in_span = |t: &&Transmitted| t.sent.send_time >= from && t.sent.send_time < to;
    let delivered: u64 = pair.delivered().filter(in_span).map(|t| t.packet.size.bytes()).sum();
    let utilisation = delivered as f64 / (capacity * (to - from)).bytes() as f64;
    let owd: Vec<f64> = pair
        .delivered()
        .filter(in_span)
        .filter_map(|t| Some((t.arrival? - t.sent.send_time).as_millis_f64()))
        .collect();
    (utilisation, owd.iter().sum::<f64>() / owd.len() as f64)
}

/// A media packet outside any probe cluster, as a test's sender records it.
pub(crate) fn sent_media(seq: u64, size: DataSize, send_time: Time, in_flight: DataSize) -> SentPacket {
    SentPacket { seq, kind: PacketKind::Media, size, send_time, probe_cluster: -1, in_flight, ..SentPacket::default() }
}

/// Input `i` of the odd-input runs: a packet sent at about `i` ms but up to
/// 5 ms early, its sequence number up to 2 ahead, 0–1499 B; every 40th
/// input also a report of up to 29 packets, up to 59 sequence numbers back,
/// sent up to 99 ms before, a third lost and the rest arriving out of
/// order. `probes` puts the packets in random probe clusters (gcc's).
pub(crate) fn odd_input(i: u64, rnd: &mut impl FnMut(u64) -> u64, probes: bool) -> (SentPacket, Vec<PacketResult>) {
    let now = Time::from_micros((i * 1000) as i64 - rnd(5000) as i64);
    let (seq, size) = (i + rnd(3), DataSize::from_bytes(rnd(1500)));
    let probe_cluster = if probes { rnd(4) as i32 - 1 } else { -1 };
    let kind = PacketKind::Media;
    let sent = SentPacket { seq, kind, size, send_time: now, probe_cluster, in_flight: size, ..SentPacket::default() };
    let packets = (0..if i.is_multiple_of(40) { rnd(30) } else { 0 })
        .map(|k| PacketResult {
            seq: i.saturating_sub(rnd(60)),
            kind: if probes { PacketKind::Probe } else { kind },
            size: DataSize::from_bytes(rnd(1300)),
            send_time: now - MS * rnd(100) as i64,
            arrival: (rnd(3) > 0).then(|| now + MS * (k as i64 - 20)),
            probe_cluster: if probes { rnd(3) as i32 - 1 } else { -1 },
            ..PacketResult::default()
        })
        .collect();
    (sent, packets)
}
