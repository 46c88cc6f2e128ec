//! Packet sources for a run: the traffic generator (metadata only, no frame bytes) or a
//! pcap replayed at its timestamps. Each source also gives one classifier key per flow,
//! so classification happens once per flow, not per packet.

use crate::error::ModelError;
use crate::scenario::Scenario;
use ahash::AHashMap;
use nicbench_classify::PacketKey;
use nicbench_traffic::{TrafficGen, TrafficConfig};
use nicbench_wire::FlowKey;

pub enum Source {
    Gen { gen: Box<TrafficGen>, keys: Vec<PacketKey> },
    /// (ts relative to the first packet [ns], flow, frame size incl. FCS [B]).
    Trace { packets: Vec<(u64, u32, u32)>, next: usize, keys: Vec<PacketKey> },
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
        Ok(Source::Gen { gen: Box::new(gen), keys })
    }

    fn from_pcap(path: &str, duration_ns: u64) -> Result<Source, ModelError> {
        let mut src = nicbench_pcap::PcapSource::open(path).map_err(|e| ModelError::Trace(e.to_string()))?;
        let mut index: AHashMap<PacketKey, u32> = AHashMap::new();
        let mut keys = Vec::new();
        let mut packets = Vec::new();
        let mut first_ts = None;
        while let Some(packet) = src.next_packet() {
            let packet = packet.map_err(|e| ModelError::Trace(e.to_string()))?;
            let first = *first_ts.get_or_insert(packet.ts_ns);
            let ts = packet.ts_ns.saturating_sub(first);
            if ts >= duration_ns {
                break;
            }
            let mut key = PacketKey::from_ethernet(packet.data);
            key.frame_bytes = 0; // flow identity ignores the length
            let next = keys.len() as u32;
            let flow = *index.entry(key).or_insert(next);
            if flow == next {
                keys.push(key);
            }
            packets.push((ts, flow, packet.orig_len.saturating_add(4)));
        }
        Ok(Source::Trace { packets, next: 0, keys })
    }

    pub fn keys(&self) -> &[PacketKey] {
        match self {
            Source::Gen { keys, .. } | Source::Trace { keys, .. } => keys,
        }
    }

    pub fn flow_keys(&self) -> &[FlowKey] {
        match self {
            Source::Gen { gen, .. } => gen.flows(),
            Source::Trace { .. } => &[],
        }
    }

    /// (generation time [ns], flow index, frame size incl. FCS [B]).
    #[inline]
    pub fn next_packet(&mut self) -> Option<(u64, u32, u32)> {
        match self {
            Source::Gen { gen, .. } => gen.next_meta().map(|m| (m.ts_ns, m.flow_index, m.frame_size_bytes)),
            Source::Trace { packets, next, .. } => {
                let p = packets.get(*next).copied();
                *next += 1;
                p
            }
        }
    }
}
