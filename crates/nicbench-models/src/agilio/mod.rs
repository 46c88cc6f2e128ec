//! Netronome Agilio CX 2x25GbE (NFP-4000) running the flower firmware behind OVS-TC
//! (`profiles/agilio-cx-25g.toml`, kind `agilio`).
//!
//! ```text
//!  port ─▶ NFP: 480 threads on 60 flow processing cores ─▶ PCIe ─▶ VF (VM) ─▶ NFP ─▶ port
//!               each pass: parse + hash (core time), then dependent reads of the
//!               flow cache (hash bucket, entry) in EMEM: on-chip cache, else DRAM
//! ```
//!
//! Structure (seed 002 line 123: 60 cores, 480 threads; the Linux `nfp` flower driver: a mask
//! table of `NFP_FLOWER_MASK_ENTRY_RS` = 256 entries, one stats context per offloaded flow):
//! the flow cache is an exact-match table of megaflows, hashed, in EMEM/DRAM. A packet pass
//! occupies its thread for its core time plus its memory reads; while a thread waits, the
//! core runs another one. So the chip forwards at
//!
//!   min(cores / core time per packet,  threads / thread residency per packet)
//!
//! and as long as the threads cover the memory latency (residency ≤ threads/cores × core time)
//! the first term holds, whatever the flows: the flat curve. Only when the reads get slow
//! enough (the flow cache outgrows the on-chip cache and lookups go to DRAM) and threads are
//! few does the second term take over. Beyond the firmware's capacity (stats contexts, masks)
//! megaflows are refused and run in the host's kernel datapath.
//!
//! Invariants: analytic and pure; every number comes from the profile.

pub mod params;

pub use params::AgilioParams;

use crate::ovs_nic::{Ingress, MegaflowLoad};
use crate::ovs_nic::{NicCost, Refusal};
use std::collections::BTreeMap;

/// The `kind` of the profiles this model reads.
pub const KIND: &str = "agilio";

/// The `agilio` profile kind: the parameters of [`AgilioParams`].
pub const PROFILE_KIND: crate::model::ProfileKind = crate::model::ProfileKind {
    name: KIND,
    check: |p| p.params::<AgilioParams>().map(drop),
};

/// Takes the megaflows the firmware can hold: masks up to the mask table's size, megaflows up to
/// the stats contexts, in the order given; the rest are refused (and why).
pub fn admit(p: &AgilioParams, load: &MegaflowLoad) -> (MegaflowLoad, Vec<Refusal>) {
    let mut admitted = load.clone();
    let mut refused = Vec::new();
    let mut masks_used = 0.0;
    let mut room = p.flow_capacity_entries.max(0.0) as u64;
    for (i, m) in admitted.masks.iter_mut().enumerate() {
        if m.offloaded == 0 {
            continue;
        }
        if masks_used + 1.0 > p.mask_table_entries {
            refused.push(Refusal {
                mask: i,
                megaflows: m.offloaded,
                reason: format!("mask table full ({} masks)", p.mask_table_entries),
            });
            m.offloaded = 0;
            continue;
        }
        masks_used += 1.0;
        let take = m.offloaded.min(room);
        if take < m.offloaded {
            refused.push(Refusal {
                mask: i,
                megaflows: m.offloaded - take,
                reason: format!("flow table full ({} stats contexts)", p.flow_capacity_entries),
            });
        }
        m.offloaded = take;
        room -= take;
    }
    (admitted, refused)
}

/// Hit rate of flow-cache reads in the on-chip cache: uniform access over the working set
/// (every offloaded megaflow is live), LRU → cache / working set.
pub fn emem_hit_rate(p: &AgilioParams, offloaded_megaflows: u64) -> f64 {
    let working_set = offloaded_megaflows as f64 * p.flow_entry_bytes;
    if working_set <= p.emem_cache_bytes {
        1.0
    } else {
        p.emem_cache_bytes / working_set
    }
}

/// What one PVP packet (both passes) costs the NFP with `load` admitted.
pub fn pvp_cost(p: &AgilioParams, load: &MegaflowLoad) -> NicCost {
    let (offloaded, _) = load.offloaded();
    let hit = emem_hit_rate(p, offloaded);
    let read_ns = hit * p.emem_hit_latency_ns + (1.0 - hit) * p.dram_latency_ns;
    let (mut core_ns, mut residency_ns) = (0.0, 0.0);
    for ingress in [Ingress::Uplink, Ingress::Vf] {
        // Every pass is parsed and looked up (a miss too: it goes to the host after the lookup);
        // tunnel work only on the offloaded share that decaps / encaps.
        let tunnel_share: f64 = load
            .masks
            .iter()
            .filter(|m| m.ingress == ingress && (m.decap || m.encap))
            .map(|m| load.offloaded_share(m))
            .sum();
        let encap_share: f64 = load
            .masks
            .iter()
            .filter(|m| m.ingress == ingress && m.encap)
            .map(|m| load.offloaded_share(m))
            .sum();
        let pass_core_ns = p.fpc_ns_per_pass + tunnel_share * p.tunnel_ns_per_pass;
        let reads = p.flow_reads_per_pass + encap_share * p.tunnel_reads_per_pass;
        core_ns += pass_core_ns;
        residency_ns += pass_core_ns + reads * read_ns;
    }
    let core_bound_ns = core_ns / p.fpc_cores;
    let thread_bound_ns = residency_ns / p.fpc_threads;
    let mut detail = BTreeMap::new();
    detail.insert("emem_hit_rate".to_string(), hit);
    detail.insert("flow_read_ns".to_string(), read_ns);
    detail.insert("thread_residency_ns".to_string(), residency_ns);
    detail.insert("core_bound_mpps".to_string(), 1e3 / core_bound_ns);
    detail.insert("thread_bound_mpps".to_string(), 1e3 / thread_bound_ns);
    NicCost {
        service_ns: core_bound_ns.max(thread_bound_ns),
        latency_ns: residency_ns,
        detail,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::tests::dir;
    use crate::profile::Profile;

    fn params() -> AgilioParams {
        Profile::load("agilio-cx-25g", &dir())
            .and_then(|p| p.params())
            .expect("agilio-cx-25g loads")
    }

    #[test]
    fn test_threads_hide_the_memory_latency_so_flows_do_not_matter() {
        let p = params();
        let at = |flows| pvp_cost(&p, &MegaflowLoad::pvp(flows, false)).service_ns;
        assert!(
            emem_hit_rate(&p, 2 * 131_072) < 0.5,
            "the flow cache outgrows the on-chip cache"
        );
        assert_eq!(at(8_192), at(131_072), "core-bound at every flow count");
    }

    #[test]
    fn test_few_threads_or_slow_memory_expose_the_flow_count() {
        let p = params();
        let few = AgilioParams {
            fpc_threads: p.fpc_cores,
            dram_latency_ns: 4.0 * p.dram_latency_ns,
            ..p.clone()
        };
        let at = |q: &AgilioParams, flows| pvp_cost(q, &MegaflowLoad::pvp(flows, false)).service_ns;
        assert!(
            at(&few, 131_072) > 1.2 * at(&few, 8_192),
            "one thread per core: reads are not hidden"
        );
        assert!(at(&few, 8_192) >= at(&p, 8_192));
    }

    #[test]
    fn test_capacity_refusals_name_the_limit() {
        let p = AgilioParams {
            flow_capacity_entries: 1_000.0,
            mask_table_entries: 1.0,
            ..params()
        };
        let (admitted, refused) = admit(&p, &MegaflowLoad::pvp(800, false));
        assert_eq!(admitted.offloaded(), (800, 1));
        assert_eq!(refused.len(), 1);
        assert!(refused[0].reason.starts_with("mask table full"), "{refused:?}");
        let p = AgilioParams {
            flow_capacity_entries: 1_000.0,
            ..params()
        };
        let (admitted, refused) = admit(&p, &MegaflowLoad::pvp(800, false));
        assert_eq!(admitted.offloaded().0, 1_000);
        assert_eq!(refused[0].megaflows, 600);
        assert!(refused[0].reason.starts_with("flow table full"), "{refused:?}");
    }
}
