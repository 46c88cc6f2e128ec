//! Packet sources for a run: the traffic generator (metadata only, no frame bytes) or a
//! pcap replayed at its timestamps. Each source also gives one classifier key per flow,
//! so classification happens once per flow, not per packet.
//!
//! A pcap is streamed, not preloaded: flows are numbered in order of first appearance and
//! [`Source::keys`] grows as the replay discovers them (a 10M-packet trace runs in bounded
//! memory and reports progress from its first packet). A read error ends the stream and
//! is kept in [`Source::error`] with the packet index, so the caller decides what to do.

use crate::error::ModelError;
use crate::scenario::Scenario;
use ahash::AHashMap;
use nicbench_classify::PacketKey;
use nicbench_traffic::{PacketMeta, TrafficConfig, TrafficGen};
use nicbench_wire::FlowKey;

/// Generated packets decided ahead per [`TrafficGen::fill_meta`] call: the burst API
/// skips most of `next_meta`'s per-packet checks; the order is unchanged, so results
/// stay bit-identical for a seed (the generator's summary is not used here, so deciding
/// a few packets ahead is harmless).
const GEN_AHEAD: usize = 64;

pub enum Source {
    Gen { gen: Box<TrafficGen>, keys: Vec<PacketKey>, ahead: Box<GenAhead> },
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
}

/// Packets already decided by the generator, not yet handed out (`metas[pos..len]`).
pub struct GenAhead {
    metas: [PacketMeta; GEN_AHEAD],
    pos: usize,
    len: usize,
}

impl GenAhead {
    fn new() -> GenAhead {
        GenAhead { metas: [PacketMeta { ts_ns: 0, flow_index: 0, frame_size_bytes: 0 }; GEN_AHEAD], pos: 0, len: 0 }
    }

    #[inline]
    fn next(&mut self, gen: &mut TrafficGen) -> Option<(u64, u32, u32)> {
        if self.pos == self.len {
            self.len = gen.fill_meta(&mut self.metas);
            self.pos = 0;
        }
        let m = self.metas.get(self.pos).filter(|_| self.pos < self.len)?;
        self.pos += 1;
        Some((m.ts_ns, m.flow_index, m.frame_size_bytes))
    }
}

impl TraceReplay {
    /// (ts relative to the first packet [ns], flow, frame size incl. FCS [B]).
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
                self.error = Some(format!("packet {}: {e}", self.packets));
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
        let mut key = PacketKey::from_ethernet(packet.data);
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
    pub fn new(scn: &Scenario) -> Result<Source, ModelError> {
        if let Some(path) = &scn.trace {
            return Source::from_pcap(path, scn.duration_ns);
        }
        let mut config: TrafficConfig = scn.traffic.clone().unwrap_or_default();
        // The run's duration bounds the stream unless the traffic ends earlier.
        let end = config.duration_ns.unwrap_or(u64::MAX).min(scn.duration_ns.saturating_sub(config.start_ns));
        config.duration_ns = Some(end);
        let gen = TrafficGen::new(&config)?;
        let (_, max_size) = config.size.min_max()?;
        let mut keys = Vec::with_capacity(gen.flows().len());
        for k in gen.flows() {
            let frame = nicbench_traffic::flows::frame_spec(k, max_size)
                .build()
                .map_err(|e| ModelError::Scenario(format!("traffic: {e}")))?;
            keys.push(PacketKey::from_ethernet(&frame));
        }
        Ok(Source::Gen { gen: Box::new(gen), keys, ahead: Box::new(GenAhead::new()) })
    }

    fn from_pcap(path: &str, duration_ns: u64) -> Result<Source, ModelError> {
        let src = nicbench_pcap::PcapSource::open(path).map_err(|e| ModelError::Trace(e.to_string()))?;
        Ok(Source::Trace(Box::new(TraceReplay {
            src,
            index: AHashMap::new(),
            keys: Vec::new(),
            first_ts_ns: None,
            duration_ns,
            packets: 0,
            error: None,
            done: false,
        })))
    }

    /// Classifier keys of the flows known so far (all of them for generated traffic).
    pub fn keys(&self) -> &[PacketKey] {
        match self {
            Source::Gen { keys, .. } => keys,
            Source::Trace(t) => &t.keys,
        }
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

    /// (generation time [ns], flow index, frame size incl. FCS [B]).
    #[inline]
    pub fn next_packet(&mut self) -> Option<(u64, u32, u32)> {
        match self {
            Source::Gen { gen, ahead, .. } => ahead.next(gen),
            Source::Trace(t) => t.next(),
        }
    }
}
