//! The ConnectX model's parameters: every value it reads, declared once; profiles of
//! `kind = "connectx"` (`profiles/connectx*.toml`, `bluefield1.toml`) carry exactly these.
//! Two blocks are groups other models read too: the PCIe link ([`PcieParams`]) and the
//! steering pipeline ([`SteeringParams`], declared here; the eSwitch model of
//! [`super::eswitch`] reads the same pipeline).
//!
//! Invariant: the model reads parameters only through [`ConnectxParams`], so what a run
//! used is exactly the profile plus its overrides.

use super::KIND;
use crate::common::PcieParams;
use crate::error::ModelError;
use crate::profile::params::{model_params, param_group, require_positive, require_whole};

model_params! {
    /// Every parameter the ConnectX model reads (see each profile for units and provenance).
    ConnectxParams, kind KIND => {
    /// Ethernet line rate [Gb/s].
    link_gbps,
    /// One-way cable + PHY/MAC propagation \[ns\].
    link_propagation_ns,
    /// Fixed part of the end-to-end latency outside the modeled queues (generator
    /// tx/rx stacks, MAC/PHY pipelines) \[ns\].
    fixed_latency_ns,
    /// Extra fixed latency when the generator replays a pcap at its timestamps (PAM'21's
    /// `nic-live.npf`, Figs. 3-4) instead of looping a trace held in memory (`nic-occupancy.npf`,
    /// Fig. 2): a different generator pipeline on the measurement server \[ns\].
    timed_replay_latency_ns,
    /// NIC packet buffer in front of the steering pipeline \[B\].
    nic_buffer_bytes,
    /// RX descriptors per queue.
    rx_ring_descriptors,
    /// Packets per rx burst of the poll-mode NF.
    rx_burst_packets,
    /// NF core time per non-empty burst \[ns\].
    nf_burst_ns,
    /// NF core time per forwarded packet \[ns\].
    nf_packet_ns,
    /// Root table (group 0) capacity \[entries\].
    root_table_capacity,
    /// Hash buckets of the root table (one STE each; collisions chain behind them).
    root_table_buckets,
    /// STEs available for the root table's collision chains; a colliding entry beyond them
    /// goes to the firmware's overflow list.
    root_collision_pool_entries,
    /// Root-table lookup cost with empty chains \[ns\].
    root_lookup_base_ns,
    /// Extra root-table lookup cost per chained entry a missing lookup walks (the load
    /// entries / buckets on average) \[ns\].
    root_lookup_ns_per_chain_entry,
    /// Extra root-table lookup cost per entry in the overflow list (a miss scans it) \[ns\].
    root_overflow_ns_per_entry,
    /// 1 when groups >= 1 are fast hardware-steering tables (0: firmware tables like the root).
    nonroot_fast_tables,
    /// Size of a steering table entry in ICM \[B\].
    ste_bytes,
    /// Root-table insertion, firmware command path, IPv4 match [µs/rule].
    root_insert_ipv4_us,
    root_insert_ipv6_us,
    /// Extra root insertion cost per entry in the overflow list, IPv4/VLAN/tunnel matches [µs/entry].
    root_insert_overflow_us_per_entry,
    /// Extra cost of a root insertion whose entry spills to the overflow list (the collision
    /// pool is exhausted and its bucket is taken), IPv4/VLAN/tunnel matches [µs/spill].
    root_insert_spill_us,
    /// Firmware time each packet traversing the root table takes from the firmware command
    /// path [ns/packet]: root-table commands stretch by 1 / (1 − root pps × this).
    root_cmd_ns_per_packet,
    /// Root-table deletion [µs/rule].
    root_delete_us,
    /// Non-root insertion, direct rule writes, IPv4 match [µs/rule].
    nonroot_insert_ipv4_us,
    nonroot_insert_ipv6_us,
    nonroot_insert_vlan_us,
    nonroot_insert_tunnel_us,
    /// Extra insertion cost per action beyond the first \[µs\].
    insert_per_extra_action_us,
    /// Non-root deletion [µs/rule].
    nonroot_delete_us,
    /// In-place rule update (the paper's dedicated API) [µs/rule].
    nonroot_update_inplace_us,
    /// Fixed cost of one batch call to the rule API \[µs\].
    install_batch_overhead_us,
    /// Core time to rewrite one STE during a matcher rehash \[ns\].
    rehash_ns_per_ste,
    /// Embedded Arm cores (BlueField), informational for host-side models.
    arm_cores,
    } groups {
    /// The PCIe link to the host (the packets' DMA).
    pcie: PcieParams,
    /// The hardware steering pipeline: matcher hash tables, steering cache, miss path.
    steering: SteeringParams,
    }
}

param_group! {
    /// The hardware steering pipeline the ConnectX models share: the STE hash tables of the
    /// matchers, the on-NIC steering cache in front of them (ICM in host memory) and its miss path.
    SteeringParams {
    /// Initial hash-table size of a matcher \[entries\].
    ste_hash_initial_entries,
    /// Fraction of its buckets a matcher's table reaches before it is rehashed: in collision
    /// entries and in used buckets (`ste_rehash_on_collisions` = 1, mlx5dr), else in entries.
    ste_rehash_load,
    /// 1: the table grows on collisions (mlx5 software steering's rule); 0: on load.
    ste_rehash_on_collisions in [0.0, 1.0],
    /// Growth factor of a rehash.
    ste_rehash_growth,
    /// Largest matcher hash table \[entries\]; beyond it entries chain in collision lists.
    ste_hash_max_entries,
    /// On-NIC steering cache \[STEs\].
    steering_cache_entries,
    /// Pipeline time per STE lookup that hits the cache \[ns\].
    steering_lookup_ns,
    /// ICM read latency on a steering-cache miss (PCIe round trip) \[ns\].
    steering_miss_latency_ns,
    /// Outstanding steering-cache misses the NIC keeps in flight.
    steering_outstanding_misses,
    }
}

impl ConnectxParams {
    pub(crate) fn validate(&self) -> Result<(), ModelError> {
        let positive = [
            ("link_gbps", self.link_gbps),
            ("nic_buffer_bytes", self.nic_buffer_bytes),
            ("rx_ring_descriptors", self.rx_ring_descriptors),
            ("rx_burst_packets", self.rx_burst_packets),
            ("root_table_capacity", self.root_table_capacity),
            ("root_table_buckets", self.root_table_buckets),
        ];
        require_positive(&positive)?;
        require_whole(&[("arm_cores", self.arm_cores)])?;
        if self.root_cmd_ns_per_packet < 0.0 {
            return Err(ModelError::Profile(format!(
                "parameter 'root_cmd_ns_per_packet' must be >= 0, got {}",
                self.root_cmd_ns_per_packet
            )));
        }
        if self.root_collision_pool_entries < 0.0 {
            return Err(ModelError::Profile(format!(
                "parameter 'root_collision_pool_entries' must be >= 0, got {}",
                self.root_collision_pool_entries
            )));
        }
        Ok(())
    }
}

impl SteeringParams {
    pub(crate) fn validate(&self) -> Result<(), ModelError> {
        require_positive(&[
            ("ste_hash_initial_entries", self.ste_hash_initial_entries),
            ("ste_rehash_load", self.ste_rehash_load),
            ("ste_hash_max_entries", self.ste_hash_max_entries),
            ("steering_cache_entries", self.steering_cache_entries),
            ("steering_miss_latency_ns", self.steering_miss_latency_ns),
            ("steering_outstanding_misses", self.steering_outstanding_misses),
        ])?;
        require_whole(&[("ste_rehash_on_collisions", self.ste_rehash_on_collisions)])?;
        if self.ste_rehash_growth <= 1.0 {
            return Err(ModelError::Profile(format!(
                "parameter 'ste_rehash_growth' must be > 1, got {}",
                self.ste_rehash_growth
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::profile::tests::dir;
    use crate::profile::{ModelParams, Profile};
    use std::collections::BTreeMap;

    /// The ConnectX-5 profile's parameters (tests hold whatever calibration does within bounds).
    pub(crate) fn test_params() -> ConnectxParams {
        Profile::load("connectx5", &dir())
            .and_then(|p| p.params())
            .expect("connectx5 profile loads")
    }

    #[test]
    fn test_builtin_profiles_declare_every_parameter() {
        for want in ["bluefield1", "connectx4", "connectx5", "connectx6"] {
            let p = Profile::load(want, &dir()).expect("loads");
            assert_eq!(p.kind, KIND);
            assert_eq!(
                p.params.len(),
                ConnectxParams::NAMES.len(),
                "{want}: every parameter declared"
            );
            p.params::<ConnectxParams>().expect("valid");
        }
    }

    #[test]
    fn test_overrides_and_errors() {
        let mut p = Profile::load("connectx5", &dir()).expect("loads");
        let o: BTreeMap<String, f64> = [("root_collision_pool_entries".to_string(), 12_000.0)].into();
        p.apply_overrides(&o).expect("known parameter");
        assert_eq!(
            p.params::<ConnectxParams>().expect("valid").root_collision_pool_entries,
            12_000.0
        );
        let out_of_range: BTreeMap<String, f64> = [("root_collision_pool_entries".to_string(), -1.0)].into();
        let msg = p
            .apply_overrides(&out_of_range)
            .and_then(|()| p.params::<ConnectxParams>().map(drop))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            msg.contains("'root_collision_pool_entries' must be >= 0, got -1"),
            "{msg}"
        );
        let missing =
            "name = \"x\"\nkind = \"connectx\"\n[param.link_gbps]\nvalue = 1.0\nunit = \"Gbps\"\nprovenance = \"t\"\n";
        let msg = Profile::from_toml(missing, "x.toml")
            .and_then(|p| p.params::<ConnectxParams>().map(drop))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(msg.starts_with("profile x.toml: missing parameter"), "{msg}");
    }

    #[test]
    fn test_a_negative_parameter_is_refused() {
        // A cost below zero would run and report a NIC faster than one without the cost; the
        // model's own checks (validate) did not cover its per-packet costs.
        for name in ["nf_packet_ns", "root_lookup_base_ns", "fixed_latency_ns"] {
            let mut p = Profile::load("connectx5", &dir()).expect("loads");
            let msg = p
                .apply_overrides(&[(name.to_string(), -1.0)].into())
                .and_then(|()| p.params::<ConnectxParams>().map(drop))
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(msg.contains(&format!("parameter '{name}' = -1 is negative")), "{msg}");
        }
    }

    #[test]
    fn test_pcie_bytes() {
        let p = test_params();
        // 1500 B: 6 TLPs of ≤256 B → 1500 + 6×24 + the descriptors (compressed CQEs, Tx share).
        let descriptors = p.pcie.pcie_descriptor_bytes_per_packet;
        assert_eq!(descriptors, 37.75);
        assert_eq!(p.pcie.dma_bytes(1500.0), 1500.0 + 6.0 * 24.0 + descriptors);
        assert!((p.pcie.gbps() - 16.0 * 8.0 * 0.9846).abs() < 1e-9);
    }
}
