//! Integration tests of nicbench-traffic, one file per behaviour.

mod determinism;
mod errors;
mod parse_back;
mod pcap_out;
mod popularity;
mod sizes;
mod timing;

use nicbench_traffic::{TrafficConfig, TrafficGen};

/// All (ts, frame bytes, flow, size) of a finite stream.
pub fn collect(config: &TrafficConfig) -> Vec<(u64, Vec<u8>, u32, u32)> {
    let mut generator = TrafficGen::new(config).expect("valid config");
    let mut out = Vec::new();
    while let Some(p) = generator.next_packet() {
        out.push((
            p.meta.ts_ns,
            p.data.to_vec(),
            p.meta.flow_index,
            p.meta.frame_size_bytes,
        ));
    }
    out
}
