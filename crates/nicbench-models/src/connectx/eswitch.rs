//! ConnectX-5 in switchdev mode (ASAP², `profiles/connectx5-25g.toml`, kind `connectx-eswitch`):
//! the eSwitch FDB tables OVS-TC offloads megaflows into, looked up through the on-NIC
//! steering cache of [`super::steering`].
//!
//! Structure: on kernel 4.15 the driver has no software steering; the firmware writes the FDB
//! entries (firmware-managed steering). That changes who writes the STEs and what an insertion
//! costs, not how the steering hardware reads them: a lookup still hashes the masked key into a
//! matcher's STE table in ICM (host memory) and reads STEs through the steering cache. So the
//! FDB's megaflow masks are modelled as fast-table matchers of [`super::steering::Tables`]
//! (one matcher per mask; tc filters sit on the ingress port, so a pass probes the masks of its
//! ingress), and the timing is that module's: a miss is a PCIe round trip with a bounded number
//! in flight. The hit rate depends on the order of the flows' packets: the seed's TRex sends
//! the flows in turn (Red Hat's PVP script increments the IPv4 addresses per packet, `op="inc"`),
//! a cyclic scan of the working set, which an LRU cache would miss entirely once the set outgrows
//! it (the rate would then not fall from 16K to 64K flows/rules, as the seed's does). So the
//! cache replaces a random line (assumed: the replacement policy is not documented; this is the
//! simplest one under which a scan still hits), and under the scan an STE survives
//! the misses between its reads ([`Tables::cache_hit_rates_round_robin`]); for independent
//! references (`FlowOrder::Random`) random replacement and LRU give the same uniform C/W, Che's
//! approximation ([`Tables::cache_hit_rates`]). A VXLAN encap action reads its
//! tunnel header (a packet-reformat context, one per VNI) through the same cache: one more
//! entry per megaflow, indexed directly (no hashing).
//!
//! The cache, the lookup pipeline, the miss latency and the STE hash geometry are inherited
//! from the 100G ConnectX-5 profile (fitted on PAM'21); the drop of throughput with flows is
//! what that cache predicts for the PVP working set, not a fitted knee.

use super::params::{ConnectxParams, SteeringParams};
use super::steering::{MatcherId, Tables};
use crate::common::PcieParams;
use crate::error::ModelError;
use crate::ovs_nic::{FlowOrder, HostParams, NicCost};
use crate::ovs_nic::{Ingress, MegaflowLoad};
use crate::profile::params::{model_params, require_positive};
use std::collections::BTreeMap;

/// The `kind` of the profiles this model reads.
pub const KIND: &str = "connectx-eswitch";

/// The `connectx-eswitch` profile kind: the parameters of [`EswitchParams`].
pub const PROFILE_KIND: crate::model::ProfileKind = crate::model::ProfileKind {
    name: KIND,
    check: |p| p.params::<EswitchParams>().map(drop),
};

/// Buckets standing for a directly indexed table (one entry each, no collisions): the limit of
/// the hashed working set B(1 − e^{−K/B}) → K.
const DIRECT_INDEX_BUCKETS: u64 = 1 << 40;

model_params! {
    /// Every parameter the ConnectX eswitch (switchdev, OVS-TC) model reads.
    EswitchParams, kind KIND => {
    /// Ethernet line rate of a port [Gb/s].
    link_gbps,
    } groups {
    /// The PCIe link to the host (the VF's packets, both ways).
    pcie: PcieParams,
    /// The steering pipeline the FDB's matchers are looked up through.
    steering: SteeringParams,
    /// The PVP host around the NIC.
    host: HostParams,
    }
}

impl EswitchParams {
    pub(crate) fn validate(&self) -> Result<(), ModelError> {
        require_positive(&[("link_gbps", self.link_gbps)])
    }

    /// The steering model's parameters: this profile's cache, pipeline and STE geometry, the
    /// FDB as fast (hardware-steered) tables; nothing else of [`ConnectxParams`] is read here.
    fn fdb_steering(&self) -> ConnectxParams {
        ConnectxParams {
            nonroot_fast_tables: 1.0,
            steering: self.steering.clone(),
            ..ConnectxParams::default()
        }
    }
}

/// FDB group the offloaded megaflows live in (any non-root group: a hardware-steered table).
const FDB_GROUP: u32 = 1;

/// What one PVP packet (both passes) costs the eSwitch with `load` offloaded; `flows` = the
/// traffic's flows (each sends the same share of packets, in `order`).
pub fn pvp_cost(p: &EswitchParams, load: &MegaflowLoad, flows: u64, order: FlowOrder) -> NicCost {
    let mut tables = Tables::new(&p.fdb_steering());
    tables.total_flows = flows.max(1);
    let mut hops: Vec<(u32, Vec<MatcherId>)> = Vec::new();
    for ingress in [Ingress::Uplink, Ingress::Vf] {
        let mut probed = Vec::new();
        for (i, m) in load
            .masks
            .iter()
            .enumerate()
            .filter(|(_, m)| m.ingress == ingress && m.offloaded > 0)
        {
            let id = tables.matcher(FDB_GROUP, &format!("mask{i}"), i as u32, true);
            tables.set_entries(id, m.offloaded);
            // Flows whose packets probe this mask (its share of the pass, uniform traffic).
            tables.matchers[id as usize].flows = (load.offloaded_share(m) * flows as f64).round() as u64;
            probed.push(id);
            if m.encap {
                let ctx = tables.matcher(FDB_GROUP, &format!("encap{i}"), u32::MAX, true);
                tables.set_entries(ctx, m.offloaded);
                let c = &mut tables.matchers[ctx as usize];
                c.buckets = DIRECT_INDEX_BUCKETS;
                c.flows = (load.offloaded_share(m) * flows as f64).round() as u64;
                probed.push(ctx);
            }
        }
        hops.push((FDB_GROUP, probed));
    }
    let rates = match order {
        FlowOrder::RoundRobin => tables.cache_hit_rates_round_robin(),
        FlowOrder::Random => tables.cache_hit_rates(),
    };
    let cost = tables.path_cost(&hops, &rates);
    let mut detail = BTreeMap::new();
    detail.insert("steering_cache_hit_rate".to_string(), tables.mean_hit_rate(&rates));
    detail.insert("steering_working_set_stes".to_string(), tables.working_set_stes());
    detail.insert("steering_misses_per_packet".to_string(), cost.misses);
    detail.insert("ste_reads_per_packet".to_string(), cost.lookups);
    NicCost {
        service_ns: cost.service_ns,
        latency_ns: cost.latency_ns,
        detail,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::tests::dir;
    use crate::profile::Profile;

    fn params() -> EswitchParams {
        Profile::load("connectx5-25g", &dir())
            .and_then(|p| p.params())
            .expect("connectx5-25g loads")
    }

    #[test]
    fn test_misses_grow_with_flows_once_the_working_set_passes_the_cache() {
        let p = params();
        let at = |flows| pvp_cost(&p, &MegaflowLoad::pvp(flows, false), flows, FlowOrder::Random);
        let small = at(1_000);
        assert_eq!(small.detail["steering_cache_hit_rate"], 1.0, "fits in the cache");
        let (k16, k64) = (at(16_384), at(65_536));
        assert!(k16.detail["steering_working_set_stes"] > p.steering.steering_cache_entries);
        assert!(k64.detail["steering_misses_per_packet"] > 2.0 * k16.detail["steering_misses_per_packet"]);
        assert!(k64.service_ns > k16.service_ns && k16.service_ns > small.service_ns);
    }

    #[test]
    fn test_a_larger_cache_moves_the_drop() {
        let p = params();
        let bigger = EswitchParams {
            steering: SteeringParams {
                steering_cache_entries: 4.0 * p.steering.steering_cache_entries,
                ..p.steering.clone()
            },
            ..p.clone()
        };
        let load = MegaflowLoad::pvp(16_384, false);
        assert!(
            pvp_cost(&bigger, &load, 16_384, FlowOrder::Random).service_ns
                < pvp_cost(&p, &load, 16_384, FlowOrder::Random).service_ns
        );
        assert_eq!(
            pvp_cost(&bigger, &load, 16_384, FlowOrder::Random).detail["steering_cache_hit_rate"],
            1.0
        );
    }

    #[test]
    fn test_vxlan_encap_reads_one_context_per_packet_more() {
        let p = params();
        let plain = pvp_cost(&p, &MegaflowLoad::pvp(8_192, false), 8_192, FlowOrder::Random);
        let vxlan = pvp_cost(&p, &MegaflowLoad::pvp(8_192, true), 8_192, FlowOrder::Random);
        assert!((vxlan.detail["ste_reads_per_packet"] - plain.detail["ste_reads_per_packet"] - 1.0).abs() < 1e-9);
        assert!(vxlan.detail["steering_working_set_stes"] > plain.detail["steering_working_set_stes"] + 8_000.0);
    }

    #[test]
    fn test_round_robin_flows_miss_more_at_16k_and_saturate_sooner() {
        // TRex's cyclic order against a random-replacement cache: below the cache nothing
        // misses; past it more misses than independent references at the same working set,
        // but the misses per packet level off at the STE reads (2) instead of climbing to them.
        let p = params();
        let misses = |flows, order| {
            pvp_cost(&p, &MegaflowLoad::pvp(flows, false), flows, order).detail["steering_misses_per_packet"]
        };
        assert_eq!(misses(8_000, FlowOrder::RoundRobin), 0.0);
        let (rr16, rr64) = (
            misses(16_000, FlowOrder::RoundRobin),
            misses(64_000, FlowOrder::RoundRobin),
        );
        let (ir16, ir64) = (misses(16_000, FlowOrder::Random), misses(64_000, FlowOrder::Random));
        assert!(rr16 > ir16, "{rr16} vs {ir16}");
        assert!(rr64 / rr16 < ir64 / ir16, "{rr64}/{rr16} vs {ir64}/{ir16}");
        assert!(rr64 > 1.8 && rr64 < 2.0, "{rr64}");
    }
}
