//! The PCIe link between a NIC and its host, and what moving a packet over it costs: the
//! parameter group [`PcieParams`] (ConnectX, ConnectX eSwitch, Agilio: profiles declare its
//! names) and the link and TLP arithmetic every PCIe model here uses ([`link_gbps`],
//! [`tlp_count`]; also the off-path model's, `crate::offpath::pcie`).
//!
//! Accounting (the pcie-bench model, coarse): a packet's DMA is its bytes in TLPs of at most
//! the max payload size, each TLP carrying a fixed overhead (header, sequence number, LCRC,
//! framing), plus the descriptor and completion traffic of the packet, in one direction.
//!
//! Invariants: a packet takes at least one TLP (its descriptor travels even for an empty
//! payload); a 0-byte transfer alone takes none ([`tlp_count`]); capacities are payload rates
//! per direction before TLP overheads.

use crate::error::ModelError;
use crate::profile::params::{param_group, require_positive, require_whole};

/// Payload rate of a link per direction before TLP overheads [Gb/s]: lanes × GT/s × line-code
/// efficiency (e.g. 16 × 8 GT/s × 128/130 for PCIe 3.0 x16).
pub fn link_gbps(lanes: f64, gt_per_s: f64, encoding_efficiency: f64) -> f64 {
    lanes * gt_per_s * encoding_efficiency
}

/// Whole TLPs needed to move `bytes` in TLPs of at most `unit_bytes` (0 bytes → 0 TLPs).
pub fn tlp_count(bytes: f64, unit_bytes: f64) -> f64 {
    if bytes <= 0.0 {
        0.0
    } else {
        (bytes / unit_bytes).ceil()
    }
}

param_group! {
    /// The PCIe link to the host and the per-packet DMA accounting over it.
    PcieParams {
    /// PCIe lanes to the host (two x16 slots count 32).
    pcie_lanes,
    /// PCIe signalling rate per lane [GT/s].
    pcie_gt_per_s,
    /// Line-code efficiency (128b/130b for PCIe 3.0).
    pcie_encoding_efficiency,
    /// Max payload per TLP \[B\].
    pcie_max_payload_bytes,
    /// Header, sequence, LCRC and framing bytes per TLP \[B\].
    pcie_tlp_overhead_bytes,
    /// Descriptor and completion bytes per packet and direction \[B\].
    pcie_descriptor_bytes_per_packet,
    }
}

impl PcieParams {
    pub(crate) fn validate(&self) -> Result<(), ModelError> {
        require_positive(&[
            ("pcie_lanes", self.pcie_lanes),
            ("pcie_gt_per_s", self.pcie_gt_per_s),
            ("pcie_encoding_efficiency", self.pcie_encoding_efficiency),
            ("pcie_max_payload_bytes", self.pcie_max_payload_bytes),
        ])?;
        require_whole(&[("pcie_lanes", self.pcie_lanes)])
    }

    /// Payload capacity per direction [Gb/s] (before TLP overheads).
    pub fn gbps(&self) -> f64 {
        link_gbps(self.pcie_lanes, self.pcie_gt_per_s, self.pcie_encoding_efficiency)
    }

    /// Bytes a frame of `frame_bytes` costs on PCIe in one direction: its payload in
    /// max-payload TLPs (at least one) plus the descriptors.
    pub fn dma_bytes(&self, frame_bytes: f64) -> f64 {
        let tlps = tlp_count(frame_bytes, self.pcie_max_payload_bytes).max(1.0);
        frame_bytes + tlps * self.pcie_tlp_overhead_bytes + self.pcie_descriptor_bytes_per_packet
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gen3_x16() -> PcieParams {
        PcieParams {
            pcie_lanes: 16.0,
            pcie_gt_per_s: 8.0,
            pcie_encoding_efficiency: 128.0 / 130.0,
            pcie_max_payload_bytes: 256.0,
            pcie_tlp_overhead_bytes: 24.0,
            pcie_descriptor_bytes_per_packet: 128.0,
        }
    }

    #[test]
    fn test_tlp_count() {
        assert_eq!(tlp_count(0.0, 128.0), 0.0);
        assert_eq!(tlp_count(1.0, 128.0), 1.0);
        assert_eq!(tlp_count(128.0, 128.0), 1.0);
        assert_eq!(tlp_count(129.0, 128.0), 2.0);
        assert_eq!(tlp_count(4096.0, 512.0), 8.0);
    }

    #[test]
    fn test_dma_bytes_count_whole_tlps_and_the_descriptor() {
        let p = gen3_x16();
        // 1500 B: 6 TLPs of ≤ 256 B → 1500 + 6 × 24 + 128.
        assert_eq!(p.dma_bytes(1500.0), 1500.0 + 6.0 * 24.0 + 128.0);
        assert_eq!(p.dma_bytes(256.0), 256.0 + 24.0 + 128.0);
        assert_eq!(p.dma_bytes(257.0), 257.0 + 2.0 * 24.0 + 128.0);
        // An empty payload still moves its descriptor in one TLP.
        assert_eq!(p.dma_bytes(0.0), 24.0 + 128.0);
        assert!((p.gbps() - 16.0 * 8.0 * 128.0 / 130.0).abs() < 1e-9);
    }

    #[test]
    fn test_validate_names_the_bad_value() {
        let msg = |p: PcieParams| p.validate().err().map(|e| e.to_string()).unwrap_or_default();
        assert!(gen3_x16().validate().is_ok());
        let none = PcieParams {
            pcie_max_payload_bytes: 0.0,
            ..gen3_x16()
        };
        assert!(msg(none).contains("'pcie_max_payload_bytes' must be > 0"));
        let half = PcieParams {
            pcie_lanes: 15.5,
            ..gen3_x16()
        };
        assert!(msg(half).contains("'pcie_lanes' must be a whole number"));
    }
}
