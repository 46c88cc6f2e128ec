//! The ConnectX steering model: what a lookup costs given the installed tables.
//!
//! Structure (mlx5 software steering, seed 000 §2.1):
//! - Tables are rte_flow groups. Group 0 (the root table) is firmware-managed with a
//!   fixed capacity; on ConnectX-4 every group is (`nonroot_fast_tables = 0`).
//! - A fast (non-root) table holds one **matcher** per distinct rule mask; a matcher is a
//!   hash table of 64 B steering entries (STEs) in host memory (ICM). It starts at
//!   `ste_hash_initial_entries` buckets; an entry whose bucket is taken goes to the bucket's
//!   collision (miss) list, and a lookup reads `entries / buckets` STEs. The table grows by
//!   `ste_rehash_growth` up to `ste_hash_max_entries` when, as in the driver's
//!   `dr_rule_need_enlarge_hash`, both its collision entries and its used buckets reach the
//!   increase threshold, `ste_rehash_load` × (buckets + 1) rounded down: with entries hashed
//!   uniformly that is at ~1.2 entries per bucket (the expected collisions
//!   n − B(1 − e^{−n/B}) reach B/2), not at half load (`ste_rehash_on_collisions` = 1; with 0,
//!   for tables the driver does not manage, it grows once entries pass `ste_rehash_load` × B).
//! - A lookup in a table probes its matchers in priority order until one matches.
//!
//! Timing hypotheses (parameters in the profile, opaque ones fitted):
//! - **Root table**: a firmware-managed hash table of STEs like the driver's own (mlx5 software
//!   steering hashes the masked tag with CRC32 into a power-of-two table of STEs and chains
//!   colliding entries in miss lists behind their bucket): `root_table_buckets` buckets, and
//!   `root_collision_pool_entries` STEs for the collision chains. With n entries hashed uniformly
//!   into B buckets, B(1 − e^{−n/B}) buckets are used and the other n − B(1 − e^{−n/B}) entries
//!   collide (balls into bins); a colliding entry beyond the pool goes to the firmware's
//!   overflow list. The traffic misses every rule (it hits the default rule), so a lookup
//!   walks its bucket's chain, n / B entries on average (`root_lookup_ns_per_chain_entry`
//!   each), and then the whole overflow list (`root_overflow_ns_per_entry` per entry): a
//!   per-packet cost, so it collapses throughput at any offered load (PAM'21: also 64 B at
//!   3.5 Gb/s). The collapse starts where the collisions exhaust the pool — a consequence of
//!   the table's geometry (it moves with the buckets and the pool), not a fitted knee.
//! - **Fast tables**: STEs are read through an on-NIC steering cache. Each table of a jump
//!   chain is a dependent lookup. Cache hit rate = cache size / working set (uniform
//!   access under LRU), where the working set is the STEs the traffic touches: per probed
//!   matcher, the distinct buckets the flows hash to (`B(1 − e^{−K/B})` for K distinct
//!   masked keys) times the chain length. When the flows send in turn (a generator that
//!   increments addresses per packet) the hit rate is that of a random-replacement cache under
//!   a cyclic scan instead ([`Tables::cache_hit_rates_round_robin`]). A hit costs `steering_lookup_ns` of pipeline
//!   time; a miss is a PCIe round trip of `steering_miss_latency_ns` with at most
//!   `steering_outstanding_misses` in flight.
//! - Per packet: service time (throughput) = firmware-table time + max(pipeline time,
//!   miss time / outstanding misses); unloaded latency = firmware time + pipeline time +
//!   miss latency × misses (dependent reads are serial).

use super::params::ConnectxParams;
use std::collections::BTreeMap;

/// Expected entries that collide when `n` entries are hashed uniformly into `buckets` buckets:
/// n − B(1 − e^{−n/B}) (those not first in their bucket).
pub fn expected_collisions(n: f64, buckets: f64) -> f64 {
    let b = buckets.max(1.0);
    (n - b * -(-n / b).exp_m1()).max(0.0)
}

/// Flows per bucket the round-robin cache model sums over (Poisson tail beyond is negligible
/// at the loads a rehashing table keeps, ≤ ~1.2 flows per bucket, and < 1e-9 up to ~4).
const MAX_FLOWS_PER_BUCKET: u32 = 24;

/// Chance that an STE read j times per cycle, at random points of it, is still cached at a
/// read when the cache evicts a random line `a` cache-sizes' worth of times per cycle:
/// E[e^{−aG}] with the gap G ~ Beta(1, j − 1) (G = 1 for j = 1). For many reads G ≈ Exp(j).
fn survival(j: f64, a: f64) -> f64 {
    if j <= 1.0 {
        return (-a).exp();
    }
    if j > 64.0 {
        return j / (j + a);
    }
    // Simpson's rule on ∫₀¹ (j − 1)(1 − g)^{j−2} e^{−ag} dg.
    let n = 256;
    let f = |g: f64| (j - 1.0) * (1.0 - g).powf(j - 2.0) * (-a * g).exp();
    let h = 1.0 / n as f64;
    let inner: f64 = (1..n)
        .map(|k| f(k as f64 * h) * if k % 2 == 1 { 4.0 } else { 2.0 })
        .sum();
    (f(0.0) + inner + f(1.0)) * h / 3.0
}

/// Index of a matcher in [`Tables`].
pub type MatcherId = u32;

/// One mask's hash table within a group.
#[derive(Clone, Debug)]
pub struct Matcher {
    pub group: u32,
    pub signature: String,
    /// Best (lowest) priority of its rules: probe order within the group.
    pub priority: u32,
    pub entries: u64,
    pub buckets: u64,
    /// Whether flows differ under this mask (false for e.g. a bare `eth` default rule).
    pub varies_per_flow: bool,
    /// Flows whose lookups probe this matcher (from the functional path).
    pub flows: u64,
}

/// A matcher's table grew.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rehash {
    pub group: u32,
    pub new_buckets: u64,
}

/// The installed tables as the timing model sees them (entry counts per matcher).
#[derive(Clone, Debug)]
pub struct Tables {
    params: ConnectxParams,
    pub matchers: Vec<Matcher>,
    /// Flows of the traffic (for access shares).
    pub total_flows: u64,
    /// The flows take turns (round-robin traffic): the steering cache sees a cyclic scan
    /// ([`Tables::cache_hit_rates_round_robin`]) instead of independent references.
    pub round_robin: bool,
    by_signature: BTreeMap<(u32, String), MatcherId>,
}

/// What one lookup path costs.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PathCost {
    /// Firmware-table (root) time that occupies the steering engine per packet: collision
    /// chains and overflow (throughput) \[ns\].
    pub fw_ns: f64,
    /// What the firmware-managed table adds to a packet's latency \[ns\]: its lookup latency
    /// (`root_lookup_base_ns`) plus `fw_ns`.
    pub fw_latency_ns: f64,
    /// The path visits a firmware-managed table.
    pub root: bool,
    /// STE reads in fast tables.
    pub lookups: f64,
    /// Expected steering-cache misses.
    pub misses: f64,
    /// Steering-engine occupancy per packet (throughput) \[ns\].
    pub service_ns: f64,
    /// Unloaded steering latency \[ns\].
    pub latency_ns: f64,
    pub tables: u32,
}

impl Tables {
    pub fn new(params: &ConnectxParams) -> Tables {
        Tables {
            params: params.clone(),
            matchers: Vec::new(),
            total_flows: 0,
            round_robin: false,
            by_signature: BTreeMap::new(),
        }
    }

    /// Whether `group` is a firmware-managed table.
    pub fn is_fw_group(&self, group: u32) -> bool {
        group == 0 || self.params.nonroot_fast_tables < 0.5
    }

    /// Whether a fast table of `buckets` holding `entries` grows at its next colliding insert
    /// (mlx5dr's `dr_rule_need_enlarge_hash`, with the expected collisions of uniform hashing), or
    /// with `ste_rehash_on_collisions` = 0 once its entries pass `ste_rehash_load` of its buckets.
    fn needs_rehash(&self, entries: u64, buckets: f64) -> bool {
        let s = &self.params.steering;
        if s.ste_rehash_on_collisions < 0.5 {
            return entries as f64 > s.ste_rehash_load * buckets;
        }
        let threshold = (s.ste_rehash_load * (buckets + 1.0)).floor().max(1.0);
        let collisions = expected_collisions(entries as f64, buckets);
        collisions >= threshold && entries as f64 - collisions >= threshold
    }

    /// The size a fast table of `buckets` holding `entries` grows to, if it grows (at most
    /// `ste_hash_max_entries`).
    fn grown(&self, entries: u64, buckets: f64) -> Option<f64> {
        let max = self.params.steering.ste_hash_max_entries.max(1.0);
        (buckets < max && self.needs_rehash(entries, buckets))
            .then(|| (buckets * self.params.steering.ste_rehash_growth).min(max))
    }

    /// Buckets of a matcher holding `entries` (growth from the initial size).
    pub fn buckets_for(&self, entries: u64) -> u64 {
        let mut buckets = self.params.steering.ste_hash_initial_entries.max(1.0);
        while let Some(larger) = self.grown(entries, buckets) {
            buckets = larger;
        }
        buckets as u64
    }

    /// The matcher for (group, signature), created empty if new.
    pub fn matcher(&mut self, group: u32, signature: &str, priority: u32, varies_per_flow: bool) -> MatcherId {
        if let Some(&id) = self.by_signature.get(&(group, signature.to_string())) {
            let m = &mut self.matchers[id as usize];
            m.priority = m.priority.min(priority);
            return id;
        }
        let id = self.matchers.len() as MatcherId;
        let buckets = self.buckets_for(0);
        self.matchers.push(Matcher {
            group,
            signature: signature.to_string(),
            priority,
            entries: 0,
            buckets,
            varies_per_flow,
            flows: 0,
        });
        self.by_signature.insert((group, signature.to_string()), id);
        id
    }

    /// Sets a matcher's entry count directly (pre-installed rules: the table is sized for them).
    pub fn set_entries(&mut self, id: MatcherId, entries: u64) {
        let buckets = self.buckets_for(entries);
        if let Some(m) = self.matchers.get_mut(id as usize) {
            m.entries = entries;
            m.buckets = m.buckets.max(buckets);
        }
    }

    /// One more entry; returns the rehash it triggered in a fast table, if any.
    pub fn add_entry(&mut self, id: MatcherId) -> Option<Rehash> {
        let m = self.matchers.get(id as usize)?;
        let entries = m.entries + 1;
        let larger = if self.is_fw_group(m.group) {
            None
        } else {
            self.grown(entries, m.buckets as f64)
        };
        let m = self.matchers.get_mut(id as usize)?;
        m.entries = entries;
        m.buckets = larger? as u64;
        Some(Rehash {
            group: m.group,
            new_buckets: m.buckets,
        })
    }

    /// One entry fewer (tables never shrink, like mlx5dr).
    pub fn remove_entry(&mut self, id: MatcherId) {
        if let Some(m) = self.matchers.get_mut(id as usize) {
            m.entries = m.entries.saturating_sub(1);
        }
    }

    /// Entries in `group` (all matchers).
    pub fn group_entries(&self, group: u32) -> u64 {
        self.matchers
            .iter()
            .filter(|m| m.group == group)
            .map(|m| m.entries)
            .sum()
    }

    /// Occupancy of a firmware table (entries / capacity), may exceed 1 in requests but
    /// installed entries are capped by the caller.
    pub fn occupancy(&self, group: u32) -> f64 {
        self.group_entries(group) as f64 / self.params.root_table_capacity
    }

    /// Entries of a firmware table in its overflow list: the expected collisions of its
    /// entries in its buckets, beyond the collision pool (see the module doc).
    pub fn spilled_entries(&self, group: u32) -> f64 {
        let p = &self.params;
        (expected_collisions(self.group_entries(group) as f64, p.root_table_buckets) - p.root_collision_pool_entries)
            .max(0.0)
    }

    /// Expected growth of the overflow list when one more entry is inserted into `group`: the
    /// chance that the new entry spills (0 while the collision pool lasts; then the chance that
    /// its bucket is taken, 1 − e^(−n/B)).
    pub fn spill_chance(&self, group: u32) -> f64 {
        let p = &self.params;
        let n = self.group_entries(group) as f64;
        let spilled = |n: f64| (expected_collisions(n, p.root_table_buckets) - p.root_collision_pool_entries).max(0.0);
        (spilled(n + 1.0) - spilled(n)).clamp(0.0, 1.0)
    }

    /// Mean chain length a missing lookup walks in a firmware table: entries per bucket.
    pub fn chain_load(&self, group: u32) -> f64 {
        self.group_entries(group) as f64 / self.params.root_table_buckets.max(1.0)
    }

    /// Matchers of `group` that hold entries, in probe order.
    pub fn probe_order(&self, group: u32) -> Vec<MatcherId> {
        let mut ids: Vec<MatcherId> = (0..self.matchers.len() as MatcherId)
            .filter(|&i| self.matchers[i as usize].group == group && self.matchers[i as usize].entries > 0)
            .collect();
        ids.sort_by_key(|&i| (self.matchers[i as usize].priority, i));
        ids
    }

    /// STEs of a fast matcher a lookup reads (1, or the collision-chain length).
    fn chain_len(m: &Matcher) -> f64 {
        (m.entries as f64 / m.buckets.max(1) as f64).max(1.0)
    }

    /// Per fast matcher with traffic: (touched STEs, accesses per STE per packet).
    fn touched(&self) -> Vec<(usize, f64, f64)> {
        let total_flows: u64 = self.total_flows.max(1);
        self.matchers
            .iter()
            .enumerate()
            .filter(|(_, m)| m.flows > 0 && m.entries > 0 && !self.is_fw_group(m.group))
            .map(|(i, m)| {
                let keys = if m.varies_per_flow { m.flows as f64 } else { 1.0 };
                let b = m.buckets.max(1) as f64;
                let stes = (b * (1.0 - (-keys / b).exp()) * Self::chain_len(m)).max(1.0);
                // Uniform flow popularity: the share of packets probing m, times its reads.
                let accesses = m.flows as f64 / total_flows as f64 * Self::chain_len(m);
                (i, stes, accesses / stes)
            })
            .collect()
    }

    /// Working set of the traffic in fast tables \[STEs\].
    pub fn working_set_stes(&self) -> f64 {
        self.touched().iter().map(|t| t.1).sum()
    }

    /// Steering-cache hit rate per matcher (index = matcher id), LRU under independent
    /// references by Che's approximation: an STE accessed at rate r hits with
    /// probability 1 − e^{−r·T}, where the characteristic time T fills the cache:
    /// Σ stes · (1 − e^{−r·T}) = cache size. Hot STEs (a default rule every packet
    /// reads) stay cached while per-flow STEs compete for the rest.
    pub fn cache_hit_rates(&self) -> Vec<f64> {
        let mut rates = vec![1.0; self.matchers.len()];
        let touched = self.touched();
        let cache = self.params.steering.steering_cache_entries;
        let total: f64 = touched.iter().map(|t| t.1).sum();
        if total <= cache {
            return rates;
        }
        let filled = |t: f64| touched.iter().map(|&(_, n, r)| n * (1.0 - (-r * t).exp())).sum::<f64>();
        let (mut lo, mut hi) = (0.0f64, 1.0f64);
        while filled(hi) < cache && hi < 1e18 {
            hi *= 2.0;
        }
        for _ in 0..100 {
            let mid = 0.5 * (lo + hi);
            if filled(mid) < cache {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        for &(i, _, r) in &touched {
            rates[i] = 1.0 - (-r * hi).exp();
        }
        rates
    }

    /// Steering-cache hit rate per matcher when the flows take turns (round robin: a traffic
    /// generator that increments the addresses per packet, as TRex's field engine with
    /// `op="inc"` does in Red Hat's PVP script) and the cache replaces a random line on a miss.
    ///
    /// Under LRU such a cyclic scan would never hit once the working set passes the cache. With
    /// random replacement and M misses per cycle (one packet per flow), a read hits if its STE
    /// survived the misses since its previous read: e^{−gM/C} for a gap of g cycles. A bucket
    /// that j flows hash to is read j times per cycle at random points of it, so its gaps are
    /// Beta(1, j − 1) distributed (one whole cycle for j = 1); the flows per bucket are
    /// Poisson(keys / buckets). M is the positive root of M = Σ reads · (1 − hit(M)), which
    /// exists exactly when the touched STEs outnumber the cache. (For independent references
    /// with uniform popularity random replacement and LRU give the same C/W, which is why
    /// [`Self::cache_hit_rates`], LRU by Che, serves the independent case.)
    pub fn cache_hit_rates_round_robin(&self) -> Vec<f64> {
        let mut rates = vec![1.0; self.matchers.len()];
        let cache = self.params.steering.steering_cache_entries;
        if self.working_set_stes() <= cache || cache <= 0.0 {
            return rates;
        }
        // Per matcher with traffic: (STEs read j times per cycle, j) classes.
        let classes: Vec<(usize, Vec<(f64, f64)>)> = self
            .matchers
            .iter()
            .enumerate()
            .filter(|(_, m)| m.flows > 0 && m.entries > 0 && !self.is_fw_group(m.group))
            .map(|(i, m)| {
                if !m.varies_per_flow {
                    return (i, vec![(1.0, m.flows as f64)]);
                }
                let buckets = m.buckets.max(1) as f64;
                let lambda = m.flows as f64 / buckets;
                let mut poisson = (-lambda).exp();
                let mut out = Vec::new();
                for j in 1..=MAX_FLOWS_PER_BUCKET {
                    poisson *= lambda / j as f64;
                    out.push((buckets * poisson, j as f64));
                }
                (i, out)
            })
            .collect();
        let misses = |per_cycle: f64| {
            classes
                .iter()
                .flat_map(|(_, c)| c.iter())
                .map(|&(stes, j)| stes * j * (1.0 - survival(j, per_cycle / cache)))
                .sum::<f64>()
        };
        // misses(M) − M is > 0 just above 0 (the working set exceeds the cache) and < 0 once
        // every read misses.
        let reads: f64 = classes.iter().flat_map(|(_, c)| c.iter()).map(|&(n, j)| n * j).sum();
        let (mut lo, mut hi) = (0.0f64, reads);
        for _ in 0..100 {
            let mid = 0.5 * (lo + hi);
            if misses(mid) > mid {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        for (i, c) in &classes {
            let (r, h) = c.iter().fold((0.0, 0.0), |(r, h), &(n, j)| {
                (r + n * j, h + n * j * survival(j, hi / cache))
            });
            if r > 0.0 {
                rates[*i] = h / r;
            }
        }
        rates
    }

    /// Lookup-weighted mean hit rate.
    pub fn cache_hit_rate(&self) -> f64 {
        self.mean_hit_rate(&self.hit_rates())
    }

    /// Steering-cache hit rate per matcher for this traffic's order: a cyclic scan for
    /// round-robin flows, independent references otherwise.
    pub fn hit_rates(&self) -> Vec<f64> {
        if self.round_robin {
            self.cache_hit_rates_round_robin()
        } else {
            self.cache_hit_rates()
        }
    }

    /// Lookup-weighted mean of per-matcher hit rates.
    pub fn mean_hit_rate(&self, rates: &[f64]) -> f64 {
        let (mut w, mut h) = (0.0, 0.0);
        for (i, m) in self.matchers.iter().enumerate() {
            if m.flows > 0 && m.entries > 0 && !self.is_fw_group(m.group) {
                let a = m.flows as f64 * Self::chain_len(m);
                w += a;
                h += a * rates[i];
            }
        }
        if w > 0.0 {
            h / w
        } else {
            1.0
        }
    }

    /// Cost of a path: for each table visited, the matchers probed there.
    pub fn path_cost(&self, hops: &[(u32, Vec<MatcherId>)], hit_rates: &[f64]) -> PathCost {
        let p = &self.params;
        let mut cost = PathCost {
            tables: hops.len() as u32,
            ..PathCost::default()
        };
        for (group, probed) in hops {
            if self.is_fw_group(*group) {
                // A root-table lookup is one STE read by the steering pipeline (its throughput
                // is the pipeline's, like any table's), plus the firmware's serial work when
                // the entry is not the bucket's first: the collision chain it walks and the
                // overflow list. `root_lookup_base_ns` is what the firmware-managed table adds
                // to a packet's latency, not a limit on the rate: 64 B traffic at line rate
                // with few rules is "30x" above what the collapsed table forwards (seed 000
                // §3.1), which a 69 ns serial cost per packet (14.5 Mpps) could not be.
                let firmware_ns = p.root_lookup_ns_per_chain_entry * self.chain_load(*group)
                    + p.root_overflow_ns_per_entry * self.spilled_entries(*group);
                cost.lookups += 1.0;
                cost.root = true;
                cost.fw_ns += firmware_ns;
                cost.fw_latency_ns += p.root_lookup_base_ns + firmware_ns;
            } else {
                for &id in probed {
                    if let Some(m) = self.matchers.get(id as usize) {
                        let reads = Self::chain_len(m);
                        cost.lookups += reads;
                        cost.misses += reads * (1.0 - hit_rates.get(id as usize).copied().unwrap_or(1.0));
                    }
                }
                // A table with no rules is still one (empty) lookup in the chain.
                if probed.is_empty() {
                    cost.lookups += 1.0;
                }
            }
        }
        let pipeline_ns = cost.lookups * p.steering.steering_lookup_ns;
        let miss_ns = cost.misses * p.steering.steering_miss_latency_ns;
        cost.service_ns = cost.fw_ns + pipeline_ns.max(miss_ns / p.steering.steering_outstanding_misses);
        cost.latency_ns = cost.fw_latency_ns + pipeline_ns + miss_ns;
        cost
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connectx::params::tests::test_params;
    use crate::connectx::params::SteeringParams;

    #[test]
    fn test_expected_collisions_match_hashing_random_keys() {
        // Oracle: hash random 5-tuple-like keys into B buckets (a seeded generator standing in for
        // the NIC's CRC32) and count the entries that are not first in their bucket.
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let buckets = 65_536u64;
        let mut used = vec![false; buckets as usize];
        let mut collisions = 0u64;
        for n in 1..=60_000u64 {
            let b = rng.random_range(0..buckets) as usize;
            collisions += u64::from(used[b]);
            used[b] = true;
            if n % 10_000 == 0 {
                let want = expected_collisions(n as f64, buckets as f64);
                assert!(
                    (collisions as f64 - want).abs() < 4.0 * want.sqrt() + 5.0,
                    "{n}: {collisions} vs {want}"
                );
            }
        }
        assert_eq!(expected_collisions(0.0, 10.0), 0.0);
    }

    #[test]
    fn test_root_overflow_starts_where_the_pool_is_exhausted_and_moves_with_the_geometry() {
        let p = test_params();
        let first_spill = |p: &ConnectxParams| {
            let mut t = Tables::new(p);
            let m = t.matcher(0, "x", 0, true);
            (1..=200u64).map(|k| k * 500).find(|&n| {
                t.set_entries(m, n);
                t.spilled_entries(0) > 0.0
            })
        };
        let base = first_spill(&p).expect("spills before 100K entries");
        // The pool decides: PAM'21's collapse between 56,000 and 57,000 rules.
        let knee = p.root_collision_pool_entries;
        assert!(expected_collisions(base as f64 - 500.0, p.root_table_buckets) <= knee);
        assert!(expected_collisions(base as f64, p.root_table_buckets) > knee);
        // Twice the buckets: fewer collisions for the same entries, the collapse moves up.
        let wider = ConnectxParams {
            root_table_buckets: 2.0 * p.root_table_buckets,
            ..p.clone()
        };
        assert!(first_spill(&wider).expect("spills") > base + 10_000);
        // A larger pool moves it up too; no pool: the first collision overflows.
        let deeper = ConnectxParams {
            root_collision_pool_entries: 2.0 * knee,
            ..p.clone()
        };
        assert!(first_spill(&deeper).expect("spills") > base);
        let none = ConnectxParams {
            root_collision_pool_entries: 0.0,
            ..p
        };
        assert_eq!(first_spill(&none), Some(500));
    }

    #[test]
    fn test_buckets_grow_by_factor_until_max() {
        let p = test_params();
        let t = Tables::new(&p);
        let init = p.steering.ste_hash_initial_entries as u64;
        assert_eq!(t.buckets_for(0), init);
        let b = t.buckets_for(10_000);
        assert!(!t.needs_rehash(10_000, b as f64));
        assert!(
            t.needs_rehash(10_000, b as f64 / p.steering.ste_rehash_growth),
            "smallest size that holds them"
        );
        // The driver's threshold: collisions (and used buckets) reach half the buckets, which
        // uniform hashing reaches at ~1.2 entries per bucket.
        assert!(!t.needs_rehash(19_000, 16_384.0) && t.needs_rehash(20_000, 16_384.0));
        assert_eq!(t.buckets_for(u32::MAX as u64), p.steering.ste_hash_max_entries as u64);
    }

    #[test]
    fn test_add_entry_rehashes_in_fast_tables_only() {
        let p = test_params();
        let mut t = Tables::new(&p);
        let fast = t.matcher(1, "eth/ipv4", 0, true);
        let root = t.matcher(0, "eth/ipv4", 0, true);
        // The first n at which the initial table's expected collisions reach its threshold.
        let threshold = (1..)
            .find(|&n| t.needs_rehash(n, p.steering.ste_hash_initial_entries))
            .unwrap()
            - 1;
        let rehashes: Vec<_> = (0..=threshold).filter_map(|_| t.add_entry(fast)).collect();
        assert_eq!(rehashes.len(), 1);
        assert_eq!(
            rehashes[0].new_buckets,
            (p.steering.ste_hash_initial_entries * p.steering.ste_rehash_growth) as u64
        );
        assert!((0..=threshold).all(|_| t.add_entry(root).is_none()));
        assert_eq!(t.group_entries(0), threshold + 1);
    }

    #[test]
    fn test_fast_tables_grow_where_the_driver_grows_them() {
        // PAM'21 Fig. 5b: Table 1's insertion rate keeps rising from 32K to 65.5K rules. With the
        // driver's rule the 16K-bucket table grows once, at ~19.7K entries (1.2 per bucket), and
        // not again before ~78.6K; growing at half load would rehash into 256K buckets at 32,769.
        let p = test_params();
        assert_eq!(
            p.steering.ste_rehash_on_collisions, 1.0,
            "connectx5 uses the driver's rule"
        );
        let mut t = Tables::new(&p);
        let m = t.matcher(1, "eth/ipv4", 0, true);
        let mut grown_at = Vec::new();
        for n in 1..=65_536u64 {
            if let Some(r) = t.add_entry(m) {
                grown_at.push((n, r.new_buckets));
            }
        }
        let late: Vec<_> = grown_at.iter().filter(|(n, _)| *n > 16_000).collect();
        assert_eq!(late.len(), 1, "{grown_at:?}");
        assert_eq!(late[0].1, 65_536);
        assert!((19_000..20_500).contains(&late[0].0), "{grown_at:?}");
        let on_load = ConnectxParams {
            steering: SteeringParams {
                ste_rehash_on_collisions: 0.0,
                ..p.steering.clone()
            },
            ..p
        };
        let mut t = Tables::new(&on_load);
        let m = t.matcher(1, "eth/ipv4", 0, true);
        let last = (1..=65_536u64)
            .filter_map(|n| t.add_entry(m).map(|r| (n, r.new_buckets)))
            .last();
        assert_eq!(last, Some((32_769, 262_144)));
    }

    #[test]
    fn test_hit_rate_falls_with_working_set() {
        let p = test_params();
        let mut t = Tables::new(&p);
        let m = t.matcher(1, "exact", 0, true);
        t.set_entries(m, 1000);
        let hot = t.matcher(1, "default", 1, false);
        t.set_entries(hot, 1);
        t.total_flows = 10;
        t.matchers[m as usize].flows = 10;
        t.matchers[hot as usize].flows = 10;
        assert_eq!(t.cache_hit_rate(), 1.0);
        t.total_flows = 10_000_000;
        t.matchers[m as usize].flows = 10_000_000;
        t.matchers[hot as usize].flows = 10_000_000;
        t.set_entries(m, 50_000_000);
        let rates = t.cache_hit_rates();
        assert!(rates[m as usize] < 0.1, "{rates:?}");
        assert!(
            rates[hot as usize] > 0.99,
            "a default STE every packet reads stays cached: {rates:?}"
        );
        let hops = vec![(0, vec![]), (1, vec![m, hot])];
        let c = t.path_cost(&hops, &rates);
        assert_eq!(c.tables, 2);
        assert!(c.lookups > 1.0 && c.misses > 0.0 && c.latency_ns > c.service_ns);
    }

    /// Oracle: a random-replacement cache of C lines simulated under a cyclic scan (flow 0, 1,
    /// ..., n − 1, 0, ...) over two matchers of n hashed keys each plus one STE every packet
    /// reads; the analytic round-robin hit rates must agree with the simulated ones.
    #[test]
    fn test_round_robin_hit_rates_match_a_simulated_random_replacement_cache() {
        for cache in [4_000.0, 1_500.0] {
            check_round_robin_against_simulation(cache);
        }
    }

    fn check_round_robin_against_simulation(cache: f64) {
        use rand::{Rng, SeedableRng};
        let base = test_params();
        let p = ConnectxParams {
            steering: SteeringParams {
                steering_cache_entries: cache,
                ..base.steering.clone()
            },
            ..base
        };
        let flows = 5_000u64;
        let mut t = Tables::new(&p);
        let (a, b) = (t.matcher(1, "a", 0, true), t.matcher(1, "b", 1, true));
        let hot = t.matcher(1, "default", 2, false);
        for (id, n) in [(a, flows), (b, flows), (hot, 1)] {
            t.set_entries(id, n);
            t.matchers[id as usize].flows = flows;
        }
        t.total_flows = flows;
        let analytic = t.cache_hit_rates_round_robin();

        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        // Each flow's key hashes to a bucket (an STE) of each matcher; the hot STE is one line.
        let bucket =
            |rng: &mut rand_chacha::ChaCha8Rng, m: MatcherId| rng.random_range(0..t.matchers[m as usize].buckets);
        let keys: Vec<[u64; 2]> = (0..flows).map(|_| [bucket(&mut rng, a), bucket(&mut rng, b)]).collect();
        let lines = p.steering.steering_cache_entries as usize;
        let mut held: Vec<u64> = Vec::with_capacity(lines);
        let mut cached = std::collections::HashSet::new();
        let (mut reads, mut hits) = ([0u64; 3], [0u64; 3]);
        for cycle in 0..40 {
            for key in &keys {
                for (slot, line) in [(0, key[0]), (1, (1 << 40) | key[1]), (2, 1 << 41)] {
                    let hit = cached.contains(&line);
                    if !hit {
                        if held.len() < lines {
                            held.push(line);
                        } else {
                            let victim = rng.random_range(0..lines);
                            cached.remove(&held[victim]);
                            held[victim] = line;
                        }
                        cached.insert(line);
                    }
                    if cycle >= 10 {
                        reads[slot] += 1;
                        hits[slot] += u64::from(hit);
                    }
                }
            }
        }
        for (slot, id) in [(0, a), (1, b), (2, hot)] {
            let simulated = hits[slot] as f64 / reads[slot] as f64;
            let predicted = analytic[id as usize];
            assert!(
                (simulated - predicted).abs() < 0.01,
                "cache {cache}, matcher {id}: simulated {simulated}, predicted {predicted}"
            );
        }
        assert!(
            analytic[a as usize] < 0.3 && analytic[hot as usize] > 0.99,
            "{analytic:?}"
        );
    }
}
