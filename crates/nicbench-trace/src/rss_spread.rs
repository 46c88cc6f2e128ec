//! `nicbench rss`: how Toeplitz RSS with a RETA spreads a trace over N queues.

use std::path::Path;

use nicbench_pcap::PcapSource;
use nicbench_wire::rss::{hash_flow, Reta, RssFields, Toeplitz};
use serde::Serialize;

use crate::link::rss_flow_key;
use crate::packed_key::FlowSet;
use crate::{TraceError, PROGRESS_EVERY_PACKETS};

#[derive(Clone, Debug)]
pub struct RssOptions {
    pub queues: u16,
    pub key: Vec<u8>,
    /// Hash addresses and L4 ports (TCP/UDP/SCTP), or addresses only.
    pub with_ports: bool,
    /// RETA entries (a power of two, 64..=512 on real NICs).
    pub reta_size: usize,
    /// Hash the inner headers of tunnelled frames instead of the outer ones.
    pub inner: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct QueueLoad {
    pub queue: u16,
    pub packets: u64,
    pub flows: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct RssReport {
    pub packets: u64,
    pub flows: u64,
    /// Packets without an IP header: a NIC sends them to queue 0 (no hash).
    pub unhashed: u64,
    pub queues: Vec<QueueLoad>,
    /// max / mean of per-queue packets (1.0 = perfect balance).
    pub packet_imbalance: f64,
    /// max / mean of per-queue distinct flows.
    pub flow_imbalance: f64,
}

pub fn rss_spread(path: &Path, options: &RssOptions, progress: &mut dyn FnMut(u64)) -> Result<RssReport, TraceError> {
    if options.queues == 0 {
        return Err(TraceError::Invalid("the number of queues must be at least 1".into()));
    }
    let toeplitz = Toeplitz::new(&options.key).map_err(|e| TraceError::Invalid(e.to_string()))?;
    let reta = Reta::round_robin(options.queues, options.reta_size).map_err(|e| TraceError::Invalid(e.to_string()))?;
    let fields = if options.with_ports {
        RssFields::IpPorts
    } else {
        RssFields::Ip
    };
    let mut source = PcapSource::open(path)?;
    let mut per_queue_packets = vec![0u64; usize::from(options.queues)];
    // A key always hashes to the same queue, so one set of all keys, counting each new key
    // against its queue, gives the distinct flows per queue.
    let mut per_queue_flows = vec![0u64; usize::from(options.queues)];
    let mut seen = FlowSet::default();
    let (mut packets, mut unhashed) = (0u64, 0u64);
    while let Some(record) = source.next_packet() {
        let pkt = record?;
        packets += 1;
        let queue = match rss_flow_key(pkt.linktype, pkt.data, options.inner) {
            Some(key) => {
                let q = usize::from(reta.queue(hash_flow(&toeplitz, &key, fields)));
                if seen.insert(&key) {
                    per_queue_flows[q] += 1;
                }
                q
            }
            None => {
                unhashed += 1;
                0
            }
        };
        per_queue_packets[queue] += 1;
        if packets % PROGRESS_EVERY_PACKETS == 0 {
            progress(source.bytes_read());
        }
    }
    progress(source.bytes_read());
    let queues: Vec<QueueLoad> = (0..options.queues)
        .map(|q| QueueLoad {
            queue: q,
            packets: per_queue_packets[usize::from(q)],
            flows: per_queue_flows[usize::from(q)],
        })
        .collect();
    let flows = queues.iter().map(|q| q.flows).sum();
    Ok(RssReport {
        packets,
        flows,
        unhashed,
        packet_imbalance: imbalance(queues.iter().map(|q| q.packets)),
        flow_imbalance: imbalance(queues.iter().map(|q| q.flows)),
        queues,
    })
}

/// max / mean; 1.0 for an empty input (nothing is imbalanced).
pub fn imbalance(values: impl Iterator<Item = u64> + Clone) -> f64 {
    let n = values.clone().count();
    let total: u64 = values.clone().sum();
    if n == 0 || total == 0 {
        return 1.0;
    }
    let max = values.max().unwrap_or(0);
    max as f64 / (total as f64 / n as f64)
}

#[cfg(test)]
mod tests {
    use super::imbalance;

    #[test]
    fn imbalance_is_max_over_mean() {
        assert_eq!(imbalance([10u64, 10, 10, 10].into_iter()), 1.0);
        assert_eq!(imbalance([40u64, 0, 0, 0].into_iter()), 4.0);
        assert_eq!(imbalance([].into_iter()), 1.0);
    }
}
