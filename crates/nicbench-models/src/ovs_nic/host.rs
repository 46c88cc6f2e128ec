//! The PVP host around an OVS-offload NIC: the VM's forwarding loop and the host's software
//! datapaths (the OVS kernel datapath, OVS-DPDK; the virtual OVS datapath's costs), a parameter
//! group every PVP-capable NIC profile declares under the same names ([`crate::agilio`],
//! [`crate::connectx::eswitch`]).

use crate::error::ModelError;
use crate::profile::params::{param_group, require_positive, require_whole};

param_group! {
    /// The PVP host around the NIC (same parameter names in every PVP-capable profile).
    HostParams {
    /// The VM's forwarding loop (testpmd on the VF, one core) per packet \[ns\].
    vm_packet_ns,
    /// A small DMA read's round trip from the NIC to host memory and back \[ns\]: a packet's
    /// crossing to the host and back costs three (see `crate::pvp`'s latency).
    pcie_dma_read_ns,
    /// Host core time of one pass through the OVS kernel datapath (megaflow hit) \[ns\].
    host_kernel_packet_ns,
    /// Host cores the kernel datapath may use.
    host_datapath_cores,
    /// PMD core time of one pass through OVS-DPDK (vhost included) \[ns\].
    dpdk_packet_ns,
    /// PMD cores OVS-DPDK dedicates (busy polling whatever the load).
    dpdk_pmd_cores,
    /// The virtual OVS datapath's costs (`crate::vswitch::HostCosts`): per packet handled in
    /// software \[ns\], per upcall \[µs\], per flow per revalidator dump \[µs\], a handler's
    /// upcall queue \[upcalls\].
    sw_packet_ns,
    upcall_us,
    revalidate_flow_us,
    upcall_queue,
    }
}

impl HostParams {
    pub(crate) fn validate(&self) -> Result<(), ModelError> {
        require_positive(&[
            ("vm_packet_ns", self.vm_packet_ns),
            ("pcie_dma_read_ns", self.pcie_dma_read_ns),
            ("host_kernel_packet_ns", self.host_kernel_packet_ns),
            ("host_datapath_cores", self.host_datapath_cores),
            ("dpdk_packet_ns", self.dpdk_packet_ns),
            ("dpdk_pmd_cores", self.dpdk_pmd_cores),
        ])?;
        require_whole(&[
            ("host_datapath_cores", self.host_datapath_cores),
            ("dpdk_pmd_cores", self.dpdk_pmd_cores),
        ])
    }
}
