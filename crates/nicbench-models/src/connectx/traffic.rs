//! Packet sources for a run: the traffic generator (metadata only, no frame bytes) or a
//! pcap replayed at its timestamps. Each source also gives one classifier key per flow,
//! so classification happens once per flow, not per packet.
//!
//! A pcap is streamed, not preloaded: flows are numbered in order of first appearance and
//! [`Source::keys`] grows as the replay discovers them (a 10M-packet trace runs in bounded
//! memory and reports progress from its first packet). A read error ends the stream and
//! is kept in [`Source::error`] with the packet index, so the caller decides what to do.

use super::request::Request;
use crate::error::ModelError;
use ahash::AHashMap;
use nicbench_classify::PacketKey;
use nicbench_traffic::{PacketMeta, TrafficConfig, TrafficGen};
use nicbench_wire::FlowKey;
use std::sync::Mutex;

/// Generated packets decided ahead per [`TrafficGen::fill_meta`] call: the burst API
/// skips most of `next_meta`'s per-packet checks; the order is unchanged, so results
/// stay bit-identical for a seed (the generator's summary is not used here, so deciding
/// a few packets ahead is harmless).
const GEN_AHEAD: usize = 256;

pub enum Source {
    Gen {
        gen: Box<TrafficGen>,
        keys: Vec<PacketKey>,
        ahead: Box<GenAhead>,
    },
    Trace(Box<TraceReplay>),
}

/// A pcap being replayed: the reader and the flows seen so far.
pub struct TraceReplay {
    src: nicbench_pcap::PcapSource<std::fs::File>,
    index: AHashMap<PacketKey, u32>,
    keys: Vec<PacketKey>,
    first_ts_ns: Option<u64>,
    duration_ns: u64,
    packets: u64,
    error: Option<String>,
    done: bool,
    path: String,
}

/// Packets already decided by the generator, not yet handed out (`metas[pos..len]`).
pub struct GenAhead {
    metas: [PacketMeta; GEN_AHEAD],
    pos: usize,
    len: usize,
    /// Decide packets without drawing their flows ([`Source::set_flow_blind`]).
    flow_blind: bool,
}

impl GenAhead {
    fn new() -> GenAhead {
        GenAhead {
            metas: [PacketMeta {
                ts_ns: 0,
                flow_index: 0,
                frame_size_bytes: 0,
            }; GEN_AHEAD],
            pos: 0,
            len: 0,
            flow_blind: false,
        }
    }

    /// Appends the next burst to `out` (see [`Source::next_burst`]), copying slices of
    /// the packets decided ahead.
    #[inline]
    fn next_burst(&mut self, gen: &mut TrafficGen, max: usize, span_ns: u64, out: &mut Vec<PacketMeta>) {
        let mut first_ts_ns = None;
        while out.len() < max {
            if self.pos >= self.len {
                self.len = match self
                    .flow_blind
                    .then(|| gen.fill_meta_flow_blind(&mut self.metas))
                    .flatten()
                {
                    Some(n) => n,
                    None => {
                        // Sizes are drawn: flows must be drawn too (same RNG).
                        self.flow_blind = false;
                        gen.fill_meta(&mut self.metas)
                    }
                };
                self.pos = 0;
                if self.len == 0 {
                    return;
                }
            }
            let ahead = self.metas.get(self.pos..self.len).unwrap_or(&[]);
            let limit_ns = first_ts_ns.get_or_insert(ahead[0].ts_ns).saturating_add(span_ns);
            let room = max - out.len();
            // The burst ends after `room` packets or at the first one `span_ns` past its start.
            let take = ahead
                .iter()
                .take(room)
                .position(|m| m.ts_ns >= limit_ns)
                .map_or(room.min(ahead.len()), |i| i + 1);
            out.extend_from_slice(&ahead[..take]);
            self.pos += take;
            if out.last().is_some_and(|m| m.ts_ns >= limit_ns) {
                return;
            }
        }
    }
}

/// A capture record's error with its packet index: the reader's own record errors say it
/// (`packet 12 at byte offset 936: ...`), others get `packet N:` in front.
pub(crate) fn packet_error(index: u64, e: &nicbench_pcap::PcapError) -> String {
    let what = e.to_string();
    if what.starts_with("packet ") {
        what
    } else {
        format!("packet {index}: {what}")
    }
}

impl TraceReplay {
    /// (ts relative to the first packet \[ns\], flow, frame size incl. FCS \[B\]).
    fn next(&mut self) -> Option<(u64, u32, u32)> {
        if self.done {
            return None;
        }
        let packet = match self.src.next_packet() {
            None => {
                self.done = true;
                return None;
            }
            Some(Err(e)) => {
                self.error = Some(crate::error::trace_message(&self.path, &packet_error(self.packets, &e)));
                self.done = true;
                return None;
            }
            Some(Ok(p)) => p,
        };
        let first = *self.first_ts_ns.get_or_insert(packet.ts_ns);
        let ts = packet.ts_ns.saturating_sub(first);
        if ts >= self.duration_ns {
            self.done = true;
            return None;
        }
        let mut key = PacketKey::from_record(packet.linktype, packet.data);
        key.frame_bytes = 0; // flow identity ignores the length
        let frame_bytes = packet.orig_len.saturating_add(4);
        let next = self.keys.len() as u32;
        let flow = *self.index.entry(key).or_insert(next);
        if flow == next {
            self.keys.push(key);
        }
        self.packets += 1;
        Some((ts, flow, frame_bytes))
    }
}

impl Source {
    pub fn new(scn: &Request) -> Result<Source, ModelError> {
        if let Some(path) = &scn.trace {
            return Source::from_pcap(path, scn.duration_ns);
        }
        let mut config: TrafficConfig = scn.traffic.clone().unwrap_or_default();
        // The run's duration bounds the stream unless the traffic ends earlier.
        let end = config
            .duration_ns
            .unwrap_or(u64::MAX)
            .min(scn.duration_ns.saturating_sub(config.start_ns));
        config.duration_ns = Some(end);
        let (gen, keys) = fresh_generator(&config)?;
        Ok(Source::Gen {
            gen: Box::new(gen),
            keys,
            ahead: Box::new(GenAhead::new()),
        })
    }

    fn from_pcap(path: &str, duration_ns: u64) -> Result<Source, ModelError> {
        let src = nicbench_pcap::PcapSource::open(path).map_err(|e| ModelError::trace(path, e))?;
        Ok(Source::Trace(Box::new(TraceReplay {
            src,
            index: AHashMap::new(),
            keys: Vec::new(),
            first_ts_ns: None,
            duration_ns,
            packets: 0,
            error: None,
            done: false,
            path: path.to_string(),
        })))
    }

    /// Classifier keys of the flows known so far (all of them for generated traffic).
    pub fn keys(&self) -> &[PacketKey] {
        match self {
            Source::Gen { keys, .. } => keys,
            Source::Trace(t) => &t.keys,
        }
    }

    /// From now on, generated packets may all carry flow 0 instead of their drawn flow: for a
    /// run whose NIC treats every flow alike until its end (no rule ever changes), so the
    /// flow of a packet cannot change any result. Drawing the flow was a fifth of a packet's
    /// simulation. Timestamps and sizes stay those of the seeded stream; with drawn sizes
    /// (which share the RNG with the flows) the flows are drawn as before. No effect on a trace.
    pub fn set_flow_blind(&mut self, flow_blind: bool) {
        if let Source::Gen { ahead, .. } = self {
            ahead.flow_blind = flow_blind;
        }
    }

    /// Whether generated packets are decided without their flows (see [`Source::set_flow_blind`]).
    pub fn is_flow_blind(&self) -> bool {
        matches!(self, Source::Gen { ahead, .. } if ahead.flow_blind)
    }

    /// The read error that ended a trace early, if any.
    pub fn error(&self) -> Option<&str> {
        match self {
            Source::Gen { .. } => None,
            Source::Trace(t) => t.error.as_deref(),
        }
    }

    pub fn flow_keys(&self) -> &[FlowKey] {
        match self {
            Source::Gen { gen, .. } => gen.flows(),
            Source::Trace(_) => &[],
        }
    }

    /// Replaces `out` with the next burst: up to `max` packets, ending early after the
    /// first one at least `span_ns` later than the burst's first (empty at the end).
    #[inline]
    pub fn next_burst(&mut self, max: usize, span_ns: u64, out: &mut Vec<PacketMeta>) {
        out.clear();
        match self {
            Source::Gen { gen, ahead, .. } => ahead.next_burst(gen, max, span_ns, out),
            Source::Trace(t) => {
                while out.len() < max {
                    let Some((ts_ns, flow_index, frame_size_bytes)) = t.next() else {
                        break;
                    };
                    out.push(PacketMeta {
                        ts_ns,
                        flow_index,
                        frame_size_bytes,
                    });
                    if out.first().is_some_and(|m| ts_ns >= m.ts_ns.saturating_add(span_ns)) {
                        break;
                    }
                }
            }
        }
    }
}

/// Fresh generators (no packet drawn yet) and their flows' keys, by traffic config, most
/// recent last. A study runs many scenarios with the same traffic (a sweep over rules,
/// baselines, a few seeds); drawing the flows, building their templates (no longer built:
/// [`TrafficGen::new_meta_only`]) and their keys took a fifth of a 200 ms run. A clone of a
/// fresh generator is the generator `new_meta_only` would build (it is deterministic in its
/// config), so results do not change.
static FRESH_GENERATORS: Mutex<Vec<(String, TrafficGen, Vec<PacketKey>)>> = Mutex::new(Vec::new());
/// Configs remembered (a few seeds × a baseline); each entry is ~0.25 KB per flow.
const FRESH_GENERATORS_KEPT: usize = 8;

fn fresh_generator(config: &TrafficConfig) -> Result<(TrafficGen, Vec<PacketKey>), ModelError> {
    let id = serde_json::to_string(config).map_err(|e| ModelError::Scenario(format!("traffic: {e}")))?;
    // A poisoned lock only means another run panicked mid-insert; the entries stay valid.
    let mut cache = FRESH_GENERATORS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(i) = cache.iter().position(|(c, _, _)| *c == id) {
        let entry = cache.remove(i);
        let out = (entry.1.clone(), entry.2.clone());
        cache.push(entry);
        return Ok(out);
    }
    drop(cache);
    let gen = TrafficGen::new_meta_only(config)?;
    let (_, max_size) = config.size.min_max()?;
    let keys = flow_packet_keys(gen.flows(), max_size)?;
    let mut cache = FRESH_GENERATORS.lock().unwrap_or_else(|e| e.into_inner());
    if cache.len() >= FRESH_GENERATORS_KEPT {
        cache.remove(0);
    }
    cache.push((id, gen.clone(), keys.clone()));
    Ok((gen, keys))
}

/// Classifier keys of generated flows whose frames are `frame_size_bytes` long.
///
/// Each flow's headers are built at the smallest size that holds them (the key holds no
/// length field, only `frame_bytes`, set as for the full frame): building 10K full-size
/// frames was most of a short run's setup.
fn flow_packet_keys(flows: &[FlowKey], frame_size_bytes: u32) -> Result<Vec<PacketKey>, ModelError> {
    let build = |k: &FlowKey, size: Option<u32>| {
        let mut spec = nicbench_traffic::flows::frame_spec(k, frame_size_bytes);
        spec.frame_size_bytes = size
            .unwrap_or_else(|| spec.min_frame_size_bytes())
            .min(frame_size_bytes);
        spec.build()
            .map(|frame| PacketKey::from_ethernet(&frame))
            .map_err(|e| ModelError::Scenario(format!("traffic: {e}")))
    };
    let Some(first) = flows.first() else {
        return Ok(Vec::new());
    };
    let frame_bytes = build(first, Some(frame_size_bytes))?.frame_bytes;
    flows
        .iter()
        .map(|k| {
            let mut key = build(k, None)?;
            key.frame_bytes = frame_bytes;
            Ok(key)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use nicbench_traffic::flows::frame_spec;
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

    fn flow(src: IpAddr, dst: IpAddr, proto: u8, vlan: Option<u16>, vni: Option<u32>) -> FlowKey {
        FlowKey {
            src,
            dst,
            proto,
            src_port: 1234,
            dst_port: 80,
            vlan,
            vni,
        }
    }

    #[test]
    fn test_flow_keys_from_small_frames_equal_full_frames() {
        let v4 = |a: u8| IpAddr::V4(Ipv4Addr::new(10, 0, 0, a));
        let v6 = |a: u16| IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, a));
        let flows = vec![
            flow(v4(1), v4(2), 17, None, None),
            flow(v4(3), v4(4), 6, Some(7), None),
            flow(v6(1), v6(2), 17, None, None),
            flow(v4(5), v4(6), 17, None, Some(42)),
        ];
        for size in [128u32, 1500, 9000] {
            let keys = flow_packet_keys(&flows, size).expect("keys");
            for (k, got) in flows.iter().zip(&keys) {
                let full = PacketKey::from_ethernet(&frame_spec(k, size).build().expect("frame"));
                assert_eq!(*got, full, "{k:?} at {size} B");
            }
        }
        assert!(flow_packet_keys(&[], 1500).expect("empty").is_empty());
    }

    /// Bursts of `config`'s stream: (bursts, whether the generator's sequence is unchanged).
    fn bursts(config: &TrafficConfig, span_ns: u64) -> Vec<Vec<PacketMeta>> {
        let mut gen = TrafficGen::new(config).expect("gen");
        let mut ahead = GenAhead::new();
        let mut bursts = Vec::new();
        loop {
            let mut out = Vec::new();
            ahead.next_burst(&mut gen, 32, span_ns, &mut out);
            if out.is_empty() {
                return bursts;
            }
            bursts.push(out);
        }
    }

    #[test]
    fn test_fresh_generators_are_reused_unchanged() {
        let config = TrafficConfig {
            flows: 50,
            seed: 77,
            duration_ns: Some(100_000),
            ..Default::default()
        };
        let (mut a, keys_a) = fresh_generator(&config).expect("first");
        let (mut b, keys_b) = fresh_generator(&config).expect("cached");
        let mut direct = TrafficGen::new(&config).expect("direct");
        assert_eq!(keys_a, keys_b);
        assert_eq!(a.flows(), direct.flows());
        let draw = |g: &mut TrafficGen| std::iter::from_fn(|| g.next_meta()).collect::<Vec<_>>();
        let (da, db, dd) = (draw(&mut a), draw(&mut b), draw(&mut direct));
        assert!(!dd.is_empty());
        assert_eq!(da, dd, "a clone of the cached generator starts from the beginning");
        assert_eq!(db, dd);
        let other = TrafficConfig {
            seed: 78,
            ..config.clone()
        };
        assert_ne!(fresh_generator(&other).expect("other").0.flows(), a.flows());
    }

    #[test]
    fn test_bursts_follow_the_generator_sequence_and_span() {
        use nicbench_traffic::Rate;
        // 100 Gb/s of 64 B (6.7 ns apart) and 0.15 Mpps (~6.7 µs apart): full bursts, span-cut bursts.
        for (rate, full) in [(Rate::Gbps(100.0), true), (Rate::Mpps(0.15), false)] {
            let config = TrafficConfig {
                flows: 100,
                rate,
                duration_ns: Some(2_000_000),
                ..Default::default()
            };
            let bursts = bursts(&config, 10_000);
            let mut reference = TrafficGen::new(&config).expect("gen");
            let expected: Vec<PacketMeta> = std::iter::from_fn(|| reference.next_meta()).collect();
            assert!(expected.len() > 200, "{rate:?}");
            assert_eq!(bursts.concat(), expected, "same sequence in bursts ({rate:?})");
            for b in &bursts[..bursts.len() - 1] {
                let limit = b[0].ts_ns + 10_000;
                // Only a burst's last packet may reach the span; a short burst ends there.
                assert!(b[..b.len() - 1].iter().all(|m| m.ts_ns < limit));
                assert!(b.len() == 32 || b[b.len() - 1].ts_ns >= limit, "{rate:?}: {b:?}");
                assert_eq!(b.len() == 32, full, "{rate:?}");
            }
        }
    }
}
