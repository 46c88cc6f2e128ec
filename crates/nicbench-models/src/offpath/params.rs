//! The off-path model's parameters: every value it reads, declared once; profiles of
//! `kind = "offpath"` (`profiles/{bluefield2,connectx6-rnic}.toml`) carry exactly these.
//!
//! Invariants: every parameter must be present with a finite, non-negative value (missing
//! or unknown names are errors, never a silent default); overrides may only name declared
//! parameters, so a calibration can replace any of them by name.

use super::KIND;
use crate::error::ModelError;
use crate::profile::params::{model_params, require_positive, require_whole};

model_params! {
    /// Every parameter the off-path model reads (units and provenance in the profiles).
    OffpathParams, kind KIND => {
    // --- network ---------------------------------------------------------------
    /// Network ports of the NIC.
    network_ports,
    /// Data rate of one port, per direction [Gb/s].
    network_port_gbps,
    /// Usable fraction of the port rate (link-level flow control, idles) \[ratio\].
    network_efficiency,
    /// RDMA path MTU: payload bytes per network packet \[B\].
    network_mtu_bytes,
    /// Headers and CRCs of every network packet (IB LRH+BTH+ICRC+VCRC) \[B\].
    network_packet_overhead_bytes,
    /// Extra header of a READ request / WRITE first packet (RETH) \[B\].
    network_rdma_ext_header_bytes,
    /// One-way client NIC ↔ server NIC through the switch, per direction \[ns\].
    network_one_way_ns,
    /// Requester-side NIC, PCIe and polling time of a client request (both ways) \[ns\].
    client_side_ns,
    // --- PCIe ---------------------------------------------------------------------
    /// 1 when the NIC has a SoC behind an internal PCIe switch (BlueField), 0 for a plain RNIC.
    has_soc,
    /// Lanes of PCIe0 and PCIe1.
    pcie_lanes,
    /// Signalling rate per lane [GT/s].
    pcie_gt_per_s,
    /// Line-code efficiency (128b/130b) \[ratio\].
    pcie_encoding_efficiency,
    /// Link time taken by DLLPs (ACK/NAK, flow-control updates) \[ratio\].
    pcie_dllp_overhead_fraction,
    /// TLP header of memory reads/writes (4 DW, 64-bit addresses) \[B\].
    pcie_request_header_bytes,
    /// TLP header of completions (3 DW) \[B\].
    pcie_completion_header_bytes,
    /// Data-link layer bytes per TLP (sequence number + LCRC) \[B\].
    pcie_dll_bytes,
    /// Physical-layer framing bytes per TLP \[B\].
    pcie_framing_bytes,
    /// PCIe MTU (max payload size) towards host memory \[B\].
    host_mps_bytes,
    /// PCIe MTU (max payload size) towards SoC memory \[B\].
    soc_mps_bytes,
    /// Max read request size towards host memory \[B\].
    host_mrrs_bytes,
    /// Max read request size towards SoC memory \[B\].
    soc_mrrs_bytes,
    /// Work-queue entry size (inline in a BlueFlame MMIO, or DMA-fetched) \[B\].
    wqe_bytes,
    /// Largest payload a responder's echo reply carries inline in its WQE (no DMA read) \[B\].
    max_inline_bytes,
    /// One-way latency of the internal PCIe switch \[ns\].
    pcie_switch_one_way_ns,
    /// One-way latency of PCIe0 incl. the host root complex \[ns\].
    pcie0_one_way_ns,
    /// One-way latency of PCIe1 incl. the NIC's PCIe core \[ns\].
    pcie1_one_way_ns,
    // --- NIC cores ----------------------------------------------------------------
    /// Request contexts' worth of processing of all NIC cores (0-B rate = contexts / service);
    /// a context is held through the request's PCIe stalls (Little's law).
    nic_core_contexts,
    /// On a SmartNIC (two endpoints behind the switch): the fraction of `nic_core_contexts`
    /// one endpoint (host or SoC, the same for both) can use alone; the rest serves only the
    /// other endpoint (seed §4: "reserves some NIC cores for each endpoint"). Unused on an RNIC.
    nic_core_endpoint_fraction,
    /// Fraction of a stalled request's wait that still occupies the shared cores (the rest of
    /// the wait only holds its context) \[ratio\].
    nic_stall_shared_fraction,
    /// Context time of a READ responder, without DMA; also of a two-sided message (receive +
    /// echo reply), whose DMA is counted apart \[ns\].
    nic_read_service_ns,
    /// Context time of a WRITE responder, without DMA \[ns\].
    nic_write_service_ns,
    /// Context time of the requester side of a host↔SoC request \[ns\].
    nic_requester_service_ns,
    /// Context time per PCIe TLP the NIC sends or receives \[ns\].
    nic_tlp_ns,
    /// Latency of one pass through the NIC pipeline \[ns\].
    nic_pipeline_ns,
    /// TLPs one DMA transfer can keep in the NIC's completion/relay buffer.
    completion_buffer_entries,
    /// Extra context time per TLP beyond the buffer (head-of-line blocked) \[ns\].
    completion_overflow_ns,
    /// NIC-internal loopback between requester and responder of a host↔SoC request \[ns\].
    loopback_ns,
    // --- memories -------------------------------------------------------------------
    /// Host memory read latency seen by a DMA read (LLC/DRAM) \[ns\].
    host_memory_read_ns,
    /// Context stall a DMA read of host memory adds beyond the links and the memory read: the
    /// root complex's handling of device reads (the SoC sits on the switch, without one) \[ns\].
    host_dma_read_occupancy_ns,
    /// SoC memory read latency seen by a DMA read (and by a SoC core: no DDIO) \[ns\].
    soc_memory_read_ns,
    /// Host DRAM channels.
    host_dram_channels,
    /// Banks per host DRAM channel.
    host_dram_banks_per_channel,
    /// Bytes mapped to one bank before the address moves to the next \[B\].
    host_dram_interleave_bytes,
    /// Host DRAM bandwidth [Gb/s].
    host_dram_gbps,
    /// Bank busy time of one write access \[ns\].
    host_dram_bank_write_ns,
    /// Bank busy time of one read access \[ns\].
    host_dram_bank_read_ns,
    /// LLC bytes DDIO can hold for device writes/reads (0 = no DDIO) \[B\].
    host_ddio_bytes,
    /// SoC DRAM channels.
    soc_dram_channels,
    /// Banks per SoC DRAM channel.
    soc_dram_banks_per_channel,
    /// Bytes mapped to one SoC bank before the address moves to the next \[B\].
    soc_dram_interleave_bytes,
    /// SoC DRAM bandwidth [Gb/s].
    soc_dram_gbps,
    /// SoC bank busy time of one write access \[ns\].
    soc_dram_bank_write_ns,
    /// SoC bank busy time of one read access \[ns\].
    soc_dram_bank_read_ns,
    /// SoC cache bytes usable by device accesses (0 = no DDIO-like feature) \[B\].
    soc_ddio_bytes,
    // --- CPUs -----------------------------------------------------------------------
    /// Host cores serving two-sided messages.
    host_cores,
    /// SoC Arm cores.
    soc_cores,
    /// Host core time per two-sided message (receive + echo) \[ns\].
    host_message_ns,
    /// SoC core time per two-sided message \[ns\].
    soc_message_ns,
    // --- requesters: posting one request (MMIO) ------------------------------------
    /// Client CPU time to build one WQE \[ns\].
    client_post_cpu_ns,
    /// Client MMIO time of a BlueFlame post (WQE inline, one per request) \[ns\].
    client_blueflame_mmio_ns,
    /// NIC DMA fetch of one batched WQE from client memory, per WQE \[ns\].
    client_wqe_fetch_ns,
    /// Flight time of a client MMIO write until the NIC sees it (latency only; the thread does not wait) \[ns\].
    client_mmio_latency_ns,
    host_post_cpu_ns,
    host_blueflame_mmio_ns,
    /// NIC DMA fetch of one batched WQE from host memory (through PCIe0 and the switch) \[ns\].
    host_wqe_fetch_ns,
    /// Flight time of a host MMIO write until the NIC sees it (latency only; the thread does not wait) \[ns\].
    host_mmio_latency_ns,
    soc_post_cpu_ns,
    soc_blueflame_mmio_ns,
    /// SoC doorbell MMIO time incl. its store barrier, once per batch (the x86 requesters' doorbell
    /// costs their BlueFlame MMIO) \[ns\].
    soc_doorbell_mmio_ns,
    /// NIC DMA fetch of one batched WQE from SoC memory \[ns\].
    soc_wqe_fetch_ns,
    /// Flight time of a soc MMIO write until the NIC sees it (latency only; the thread does not wait) \[ns\].
    soc_mmio_latency_ns,
    }
}

impl OffpathParams {
    pub(crate) fn validate(&self) -> Result<(), ModelError> {
        let positive = [
            ("network_ports", self.network_ports),
            ("network_port_gbps", self.network_port_gbps),
            ("network_efficiency", self.network_efficiency),
            ("network_mtu_bytes", self.network_mtu_bytes),
            ("pcie_lanes", self.pcie_lanes),
            ("pcie_gt_per_s", self.pcie_gt_per_s),
            ("pcie_encoding_efficiency", self.pcie_encoding_efficiency),
            ("host_mps_bytes", self.host_mps_bytes),
            ("soc_mps_bytes", self.soc_mps_bytes),
            ("host_mrrs_bytes", self.host_mrrs_bytes),
            ("soc_mrrs_bytes", self.soc_mrrs_bytes),
            ("nic_core_contexts", self.nic_core_contexts),
            ("nic_core_endpoint_fraction", self.nic_core_endpoint_fraction),
            ("completion_buffer_entries", self.completion_buffer_entries),
            ("host_dram_channels", self.host_dram_channels),
            ("host_dram_banks_per_channel", self.host_dram_banks_per_channel),
            ("host_dram_interleave_bytes", self.host_dram_interleave_bytes),
            ("host_dram_gbps", self.host_dram_gbps),
            ("soc_dram_channels", self.soc_dram_channels),
            ("soc_dram_banks_per_channel", self.soc_dram_banks_per_channel),
            ("soc_dram_interleave_bytes", self.soc_dram_interleave_bytes),
            ("soc_dram_gbps", self.soc_dram_gbps),
            ("host_cores", self.host_cores),
            ("soc_cores", self.soc_cores),
        ];
        require_positive(&positive)?;
        require_whole(&[
            ("network_ports", self.network_ports),
            ("pcie_lanes", self.pcie_lanes),
            ("host_cores", self.host_cores),
            ("soc_cores", self.soc_cores),
            ("host_dram_channels", self.host_dram_channels),
            ("soc_dram_channels", self.soc_dram_channels),
            ("host_dram_banks_per_channel", self.host_dram_banks_per_channel),
            ("soc_dram_banks_per_channel", self.soc_dram_banks_per_channel),
        ])?;
        for (name, v) in [
            ("network_efficiency", self.network_efficiency),
            ("pcie_encoding_efficiency", self.pcie_encoding_efficiency),
            ("nic_core_endpoint_fraction", self.nic_core_endpoint_fraction),
            ("nic_stall_shared_fraction", self.nic_stall_shared_fraction),
        ] {
            if v > 1.0 {
                return Err(ModelError::Profile(format!(
                    "parameter '{name}' must be in (0, 1], got {v}"
                )));
            }
        }
        if !(0.0..1.0).contains(&self.pcie_dllp_overhead_fraction) {
            return Err(ModelError::Profile(format!(
                "parameter 'pcie_dllp_overhead_fraction' must be in [0, 1), got {}",
                self.pcie_dllp_overhead_fraction
            )));
        }
        if self.has_soc != 0.0 && self.has_soc != 1.0 {
            return Err(ModelError::Profile(format!(
                "parameter 'has_soc' must be 0 or 1, got {}",
                self.has_soc
            )));
        }
        // Every time, byte count and header size must be non-negative; this catches a
        // calibration that wanders below zero with a clear name.
        if let Ok(serde_json::Value::Object(map)) = serde_json::to_value(self) {
            for (name, v) in map {
                if v.as_f64().is_some_and(|x| x < 0.0) {
                    return Err(ModelError::Profile(format!("parameter '{name}' must be >= 0, got {v}")));
                }
            }
        }
        Ok(())
    }

    /// True for a BlueField-like NIC (SoC behind a PCIe switch).
    pub fn soc_present(&self) -> bool {
        self.has_soc == 1.0
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::profile::tests::dir;
    use crate::profile::{ModelParams, Profile};
    use std::collections::BTreeMap;

    pub(crate) fn load(name: &str) -> Profile {
        Profile::load(name, &dir()).unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    pub(crate) fn params(name: &str) -> OffpathParams {
        load(name).params().unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    #[test]
    fn test_profiles_load_with_provenance_and_fitted_marks() {
        for name in ["bluefield2", "connectx6-rnic"] {
            let p = load(name);
            assert_eq!(p.kind, KIND);
            assert_eq!(p.calibration_study.as_deref(), Some("offpath"));
            assert_eq!(
                p.params.len(),
                OffpathParams::NAMES.len(),
                "{name}: every parameter declared"
            );
            let fitted = p
                .params
                .values()
                .filter(|x| x.provenance.starts_with("fitted: offpath calibration set"))
                .count();
            // The RNIC has the fitted values it shares with the BlueField-2 (NIC cores, host, clients).
            assert!(
                fitted >= if name == "bluefield2" { 15 } else { 5 },
                "{name}: {fitted} fitted params"
            );
        }
        assert!(params("bluefield2").soc_present());
        assert!(!params("connectx6-rnic").soc_present());
    }

    #[test]
    fn test_overrides_and_errors() {
        let mut p = load("bluefield2");
        let o: BTreeMap<String, f64> = [("completion_overflow_ns".to_string(), 1000.0)].into();
        p.apply_overrides(&o).expect("known parameter");
        assert_eq!(
            p.params::<OffpathParams>().expect("valid").completion_overflow_ns,
            1000.0
        );
        assert!(p.params["completion_overflow_ns"]
            .provenance
            .starts_with("override (was: fitted"));
        let negative: BTreeMap<String, f64> = [("nic_tlp_ns".to_string(), -1.0)].into();
        let msg = p
            .apply_overrides(&negative)
            .and_then(|()| p.params::<OffpathParams>().map(drop))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(msg.contains("'nic_tlp_ns' must be >= 0"), "{msg}");
        let msg = load("connectx5")
            .params::<OffpathParams>()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(msg.contains("not the offpath model"), "{msg}");
        let missing =
            "name = \"x\"\nkind = \"offpath\"\n[param.has_soc]\nvalue = 1.0\nunit = \"bool\"\nprovenance = \"t\"\n";
        let msg = Profile::from_toml(missing, "x.toml")
            .and_then(|p| p.params::<OffpathParams>().map(drop))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(msg.starts_with("profile x.toml: missing parameter"), "{msg}");
    }
}
