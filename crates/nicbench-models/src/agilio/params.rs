//! The Agilio CX model's parameters (`profiles/agilio-cx-25g.toml`, kind `agilio`).

use super::KIND;
use crate::common::PcieParams;
use crate::error::ModelError;
use crate::ovs_nic::HostParams;
use crate::profile::params::{model_params, require_positive, require_whole};

model_params! {
    /// Every parameter the Agilio CX (NFP flower firmware, OVS-TC) model reads.
    AgilioParams, kind KIND => {
    /// Ethernet line rate of a port [Gb/s].
    link_gbps,
    /// Flow processing cores running the datapath.
    fpc_cores,
    /// Hardware threads over all flow processing cores (each holds one packet in flight).
    fpc_threads,
    /// Core (instruction) time of one pass of a packet through the flower datapath: parse,
    /// hash, compare, actions, when its data is at hand \[ns\].
    fpc_ns_per_pass,
    /// Memory reads a flow-cache lookup makes, one after the other (hash bucket, entry).
    flow_reads_per_pass,
    /// Bytes one megaflow occupies in the flow cache (key, mask id, actions, bucket share) \[B\].
    flow_entry_bytes,
    /// On-chip cache in front of the DRAM holding the flow cache \[B\].
    emem_cache_bytes,
    /// Read latency when the entry is in the on-chip cache \[ns\].
    emem_hit_latency_ns,
    /// Read latency from DRAM \[ns\].
    dram_latency_ns,
    /// Megaflows the firmware can hold (one stats context each) \[entries\].
    flow_capacity_entries,
    /// Distinct megaflow masks the firmware's mask table holds.
    mask_table_entries,
    /// Extra memory reads of a pass whose actions push a tunnel header (tunnel/neighbour entry).
    tunnel_reads_per_pass,
    /// Extra core time of a pass that decapsulates or encapsulates a tunnel \[ns\].
    tunnel_ns_per_pass,
    } groups {
    /// The PCIe link to the host (the VF's packets, both ways).
    pcie: PcieParams,
    /// The PVP host around the NIC.
    host: HostParams,
    }
}

impl AgilioParams {
    pub(crate) fn validate(&self) -> Result<(), ModelError> {
        require_positive(&[
            ("link_gbps", self.link_gbps),
            ("fpc_cores", self.fpc_cores),
            ("fpc_threads", self.fpc_threads),
            ("fpc_ns_per_pass", self.fpc_ns_per_pass),
            ("flow_entry_bytes", self.flow_entry_bytes),
            ("emem_cache_bytes", self.emem_cache_bytes),
            ("flow_capacity_entries", self.flow_capacity_entries),
            ("mask_table_entries", self.mask_table_entries),
        ])?;
        require_whole(&[("fpc_cores", self.fpc_cores), ("fpc_threads", self.fpc_threads)])?;
        if self.fpc_threads < self.fpc_cores {
            return Err(ModelError::Profile(format!(
                "parameter 'fpc_threads' ({}) must be >= 'fpc_cores' ({}): every core runs at least one thread",
                self.fpc_threads, self.fpc_cores
            )));
        }
        for (name, v) in [
            ("flow_reads_per_pass", self.flow_reads_per_pass),
            ("emem_hit_latency_ns", self.emem_hit_latency_ns),
            ("dram_latency_ns", self.dram_latency_ns),
            ("tunnel_reads_per_pass", self.tunnel_reads_per_pass),
            ("tunnel_ns_per_pass", self.tunnel_ns_per_pass),
        ] {
            if v < 0.0 {
                return Err(ModelError::Profile(format!("parameter '{name}' must be >= 0, got {v}")));
            }
        }
        Ok(())
    }
}
