//! The traffic's flows and how the card spreads them over streams.
//!
//! Flows are what the study's Ixia generated: TCP between distinct endpoint pairs with
//! static ports ("as we use static TCP source and destination ports, between each set of
//! endpoints one flow is created"), addresses uniform in 10.0.0.0/8. Each flow gets a
//! share of the packets: equal, or Zipf(s) by a random rank. The stream of a flow is its
//! symmetric Toeplitz hash (`nicbench_wire::rss`) modulo the number of streams, so the
//! per-stream flow counts are the real balls-into-bins outcome of that hash.
//!
//! Invariants: same (flows, seed, exponent) → same flows, weights and hashes; both
//! directions of a flow hash alike (symmetric key), so one key per flow suffices.

use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr};

use nicbench_sim::RngStreams;
use nicbench_wire::{hash_flow, FlowKey, RssFields, Toeplitz, SYMMETRIC_KEY};
use rand::Rng;

use crate::error::ModelError;

/// RNG stream of the flow addresses (distinct from the engine's streams).
const FLOW_STREAM: u64 = 0x464c_4f57;
/// Static ports of the generated TCP flows (client ephemeral → server).
const SRC_PORT: u16 = 49_152;
const DST_PORT: u16 = 80;
/// Largest flow set accepted (the study sweeps to 1,048,576).
pub const MAX_FLOWS: usize = 1 << 24;

/// Generated flows: their stream hash and their share of the packets.
#[derive(Clone, Debug)]
pub struct FlowSet {
    pub hashes: Vec<u32>,
    /// Packet share per flow (sums to 1).
    pub weights: Vec<f64>,
    pub uniform: bool,
}

impl FlowSet {
    pub fn generate(flows: usize, seed: u64, zipf_exponent: f64, hash_ports: bool) -> Result<FlowSet, ModelError> {
        Self::generate_reporting(flows, seed, zipf_exponent, hash_ports, &mut |_| {})
    }

    /// [`FlowSet::generate`], calling `progress(flows_made)` every 65,536 flows (16M flows take seconds).
    pub fn generate_reporting(
        flows: usize,
        seed: u64,
        zipf_exponent: f64,
        hash_ports: bool,
        progress: &mut dyn FnMut(u64),
    ) -> Result<FlowSet, ModelError> {
        if flows == 0 || flows > MAX_FLOWS {
            return Err(ModelError::Scenario(format!(
                "flows must be in 1..={MAX_FLOWS}, found {flows}"
            )));
        }
        if !zipf_exponent.is_finite() || !(0.0..=5.0).contains(&zipf_exponent) {
            return Err(ModelError::Scenario(format!(
                "zipf exponent must be in [0, 5], found {zipf_exponent}"
            )));
        }
        let toeplitz = Toeplitz::new(&SYMMETRIC_KEY).map_err(|e| ModelError::Scenario(e.to_string()))?;
        let fields = if hash_ports { RssFields::IpPorts } else { RssFields::Ip };
        let mut rng = RngStreams::new(seed).stream(FLOW_STREAM);
        let mut seen = HashSet::with_capacity(flows);
        let mut hashes = Vec::with_capacity(flows);
        while hashes.len() < flows {
            let src = (10_u32 << 24) | (rng.random::<u32>() >> 8);
            let dst = (10_u32 << 24) | (rng.random::<u32>() >> 8);
            if src == dst || !seen.insert((u64::from(src) << 32) | u64::from(dst)) {
                continue;
            }
            let key = FlowKey {
                src: IpAddr::V4(Ipv4Addr::from(src)),
                dst: IpAddr::V4(Ipv4Addr::from(dst)),
                proto: 6,
                src_port: SRC_PORT,
                dst_port: DST_PORT,
                vlan: None,
                vni: None,
            };
            hashes.push(hash_flow(&toeplitz, &key, fields));
            if hashes.len() % (1 << 16) == 0 {
                progress(hashes.len() as u64);
            }
        }
        let uniform = zipf_exponent == 0.0;
        let weights = if uniform {
            vec![1.0 / flows as f64; flows]
        } else {
            // Flow i has popularity rank i+1; ranks are independent of the hash because the
            // addresses are random.
            let raw: Vec<f64> = (1..=flows).map(|rank| (rank as f64).powf(-zipf_exponent)).collect();
            let total: f64 = raw.iter().sum();
            raw.into_iter().map(|w| w / total).collect()
        };
        Ok(FlowSet {
            hashes,
            weights,
            uniform,
        })
    }

    pub fn len(&self) -> usize {
        self.hashes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }

    /// Keeps the first `fraction` of the flows (the card's filter drops the others);
    /// weights are renormalized over the kept flows' share, which is returned.
    pub fn filtered(&self, fraction: f64) -> Result<(FlowSet, f64), ModelError> {
        if !(fraction > 0.0 && fraction <= 1.0) {
            return Err(ModelError::Scenario(format!(
                "filter_keep must be in (0, 1], found {fraction}"
            )));
        }
        let keep = ((self.len() as f64 * fraction).round() as usize).clamp(1, self.len());
        let share: f64 = self.weights[..keep].iter().sum();
        let weights = self.weights[..keep].iter().map(|w| w / share).collect();
        Ok((
            FlowSet {
                hashes: self.hashes[..keep].to_vec(),
                weights,
                uniform: self.uniform,
            },
            share,
        ))
    }

    /// Spreads the flows over `streams` streams (hash modulo streams).
    pub fn assign(&self, streams: usize) -> Vec<StreamLoad> {
        let n = streams.max(1);
        let mut per: Vec<Vec<f64>> = vec![Vec::new(); n];
        for (&h, &w) in self.hashes.iter().zip(&self.weights) {
            per[(h as usize) % n].push(w);
        }
        per.into_iter().map(|ws| StreamLoad::new(ws, self.uniform)).collect()
    }
}

/// The flows of one stream (one flow-meter process).
#[derive(Clone, Debug)]
pub struct StreamLoad {
    pub flows: usize,
    /// This stream's share of all captured packets.
    pub share: f64,
    /// The flows' packet shares, most popular first (empty for equal flows: analytic).
    sorted_weights: Vec<f64>,
}

impl StreamLoad {
    fn new(mut weights: Vec<f64>, uniform: bool) -> StreamLoad {
        let share: f64 = weights.iter().sum();
        let flows = weights.len();
        if uniform {
            weights = Vec::new();
        } else {
            weights.sort_by(|a, b| b.total_cmp(a));
        }
        StreamLoad {
            flows,
            share,
            sorted_weights: weights,
        }
    }

    /// Share of this stream's packets that belong to its `k` most popular flows (`k` may be
    /// fractional): the hit ratio of a cache of `k` records that only this stream uses.
    pub fn top_share(&self, k: f64) -> f64 {
        shared_hit_ratios(&[self], k)[0]
    }
}

/// Hit ratio of each stream's packets when the streams share a cache of `k` flow records.
///
/// The cache keeps the `k` most popular records of all the streams together (an ideal,
/// popularity-ordered cache; for equal flows that is what LRU converges to: every record is
/// resident with probability k / flows). So a stream with more flows does not get a bigger
/// private share: all streams see the same per-flow residency, as in a shared LLC.
pub fn shared_hit_ratios(loads: &[&StreamLoad], k: f64) -> Vec<f64> {
    let total_flows: usize = loads.iter().map(|l| l.flows).sum();
    let k = k.max(0.0);
    if total_flows == 0 || k >= total_flows as f64 {
        return vec![1.0; loads.len()];
    }
    let uniform = loads.iter().all(|l| l.sorted_weights.is_empty());
    if uniform {
        return vec![k / total_flows as f64; loads.len()];
    }
    // Weight of the k-th most popular flow over all streams: flows above it are cached.
    let mut all: Vec<f64> = loads.iter().flat_map(|l| l.sorted_weights.iter().copied()).collect();
    let whole = (k.floor() as usize).min(all.len() - 1);
    let (_, threshold, _) = all.select_nth_unstable_by(whole, |a, b| b.total_cmp(a));
    let threshold = *threshold;
    let frac = k - whole as f64;
    loads
        .iter()
        .map(|l| {
            if l.share <= 0.0 {
                return 1.0;
            }
            let mut hit = 0.0;
            for &w in &l.sorted_weights {
                if w > threshold {
                    hit += w;
                } else {
                    if w == threshold {
                        hit += w * frac;
                    }
                    break;
                }
            }
            (hit / l.share).clamp(0.0, 1.0)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_flows_reproducible_and_balanced() {
        let a = FlowSet::generate(16_384, 7, 0.0, true).expect("flows");
        let b = FlowSet::generate(16_384, 7, 0.0, true).expect("flows");
        assert_eq!(a.hashes, b.hashes);
        let c = FlowSet::generate(16_384, 8, 0.0, true).expect("flows");
        assert_ne!(a.hashes, c.hashes);
        let loads = a.assign(8);
        assert_eq!(loads.iter().map(|l| l.flows).sum::<usize>(), 16_384);
        // Balls into bins: 2048 ± a few σ (σ ≈ 42) per stream.
        for l in &loads {
            assert!((1800..2300).contains(&l.flows), "{}", l.flows);
            assert!((l.share - l.flows as f64 / 16_384.0).abs() < 1e-9);
        }
    }

    #[test]
    fn test_symmetric_hash_same_stream_both_directions() {
        let t = Toeplitz::new(&SYMMETRIC_KEY).expect("key");
        let key = FlowKey {
            src: IpAddr::V4(Ipv4Addr::new(10, 1, 2, 3)),
            dst: IpAddr::V4(Ipv4Addr::new(10, 9, 8, 7)),
            proto: 6,
            src_port: SRC_PORT,
            dst_port: DST_PORT,
            vlan: None,
            vni: None,
        };
        assert_eq!(
            hash_flow(&t, &key, RssFields::IpPorts),
            hash_flow(&t, &key.reversed(), RssFields::IpPorts)
        );
    }

    #[test]
    fn test_top_share_uniform_and_zipf() {
        let u = FlowSet::generate(1000, 1, 0.0, true).expect("flows").assign(1);
        assert!((u[0].top_share(250.0) - 0.25).abs() < 1e-12);
        assert_eq!(u[0].top_share(5000.0), 1.0);
        let z = FlowSet::generate(1000, 1, 1.0, true).expect("flows").assign(1);
        // Zipf(1): the top 10% of flows carry far more than 10% of the packets.
        assert!(z[0].top_share(100.0) > 0.6, "{}", z[0].top_share(100.0));
        assert!((z[0].top_share(1000.0) - 1.0).abs() < 1e-9);
        assert!(z[0].top_share(10.5) > z[0].top_share(10.0));
    }

    #[test]
    fn test_shared_cache_same_residency_for_all_streams() {
        let loads = FlowSet::generate(10_000, 1, 0.0, true).expect("flows").assign(4);
        let refs: Vec<&StreamLoad> = loads.iter().collect();
        let hits = shared_hit_ratios(&refs, 2_500.0);
        assert!(hits.iter().all(|&h| (h - 0.25).abs() < 1e-12), "{hits:?}");
        let z = FlowSet::generate(10_000, 1, 1.0, true).expect("flows").assign(4);
        let zr: Vec<&StreamLoad> = z.iter().collect();
        let zh = shared_hit_ratios(&zr, 2_500.0);
        // Packets served from the cache over all streams = the top 2,500 flows' share.
        let mut all: Vec<f64> = FlowSet::generate(10_000, 1, 1.0, true).expect("flows").weights;
        all.sort_by(|a, b| b.total_cmp(a));
        let want: f64 = all[..2_500].iter().sum();
        let got: f64 = z.iter().zip(&zh).map(|(l, h)| l.share * h).sum();
        assert!((got - want).abs() < 1e-9, "{got} vs {want}");
    }

    #[test]
    fn test_bad_inputs_and_filter() {
        assert!(FlowSet::generate(0, 1, 0.0, true).is_err());
        assert!(FlowSet::generate(10, 1, -1.0, true).is_err());
        let f = FlowSet::generate(1000, 1, 1.0, true).expect("flows");
        let (kept, share) = f.filtered(0.5).expect("filter");
        assert_eq!(kept.len(), 500);
        assert!(
            share > 0.5 && share < 1.0,
            "Zipf: the first half holds the popular flows"
        );
        assert!((kept.weights.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        assert!(f.filtered(0.0).is_err());
    }
}
