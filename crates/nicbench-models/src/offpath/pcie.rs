//! PCIe arithmetic of the off-path NIC: links, directions, TLP counts and wire bytes
//! (the pcie-bench model: payload + header + DLL + framing per TLP), and which links a
//! DMA to host or SoC memory crosses (seed 004, Table 3).
//!
//! What it shares with the host-PCIe group of the packet NICs ([`crate::common::pcie`]): the
//! link rate (lanes × GT/s × encoding, [`link_gbps`]) and the whole-TLP count ([`tlp_count`]),
//! from there. What differs, and why it is not that group: this models a BlueField-2's
//! internal PCIe switch with two links (PCIe0 switch ↔ host, PCIe1 NIC cores ↔ switch) and
//! counts each TLP per link and direction, with the TLP overhead split by kind (request and
//! completion headers differ, DLL and framing bytes apart), the max payload and read request
//! sizes per memory (host or SoC), DLLP time deducted from the link, and no per-packet
//! descriptor (RDMA requests post WQEs, counted as MMIO writes and DMA reads of their own);
//! the group's one lumped overhead per TLP and one descriptor per frame cannot say that.
//!
//! Direction naming, used everywhere in the model and the JSON contract:
//! `up` = away from the NIC cores, towards memory / the root complex (PCIe1 NIC → switch,
//! PCIe0 switch → host); `down` = towards the NIC cores. DMA writes, read requests and
//! MMIO-free traffic from the NIC go up; read completions and CPU MMIO writes come down.
//!
//! Invariants: counts are whole TLPs (`ceil`), a 0-byte transfer costs no TLP, and every
//! TLP carries `header + pcie_dll_bytes + pcie_framing_bytes` bytes besides its payload.

use super::params::OffpathParams;
use super::request::Endpoint;
use crate::common::pcie as common_pcie;
pub use crate::common::pcie::tlp_count;

/// A PCIe link and direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LinkDir {
    Pcie0Up,
    Pcie0Down,
    Pcie1Up,
    Pcie1Down,
}

impl LinkDir {
    pub const ALL: [LinkDir; 4] = [
        LinkDir::Pcie0Up,
        LinkDir::Pcie0Down,
        LinkDir::Pcie1Up,
        LinkDir::Pcie1Down,
    ];

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn name(self) -> &'static str {
        match self {
            LinkDir::Pcie0Up => "pcie0_up",
            LinkDir::Pcie0Down => "pcie0_down",
            LinkDir::Pcie1Up => "pcie1_up",
            LinkDir::Pcie1Down => "pcie1_down",
        }
    }
}

/// A physical PCIe link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Link {
    /// Switch ↔ host root complex (the RNIC's only link).
    Pcie0,
    /// NIC cores ↔ switch.
    Pcie1,
}

impl Link {
    pub fn up(self) -> LinkDir {
        match self {
            Link::Pcie0 => LinkDir::Pcie0Up,
            Link::Pcie1 => LinkDir::Pcie1Up,
        }
    }

    pub fn down(self) -> LinkDir {
        match self {
            Link::Pcie0 => LinkDir::Pcie0Down,
            Link::Pcie1 => LinkDir::Pcie1Down,
        }
    }
}

/// TLPs and their wire bytes per link direction, for one request.
///
/// `data_tlps` counts only the TLPs that carry the transfer's data (DMA write TLPs and read
/// completions), the quantity of the seed's Table 3, which omits read requests and MMIO
/// ("our simplified model omits control path packets"); `tlps` counts every TLP.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PcieLoad {
    pub tlps: [f64; 4],
    pub data_tlps: [f64; 4],
    pub bytes: [f64; 4],
}

impl PcieLoad {
    fn add(&mut self, dir: LinkDir, tlps: f64, bytes: f64) {
        self.tlps[dir.index()] += tlps;
        self.bytes[dir.index()] += bytes;
    }

    fn add_data(&mut self, dir: LinkDir, tlps: f64, bytes: f64) {
        self.add(dir, tlps, bytes);
        self.data_tlps[dir.index()] += tlps;
    }

    pub fn merge(&mut self, other: &PcieLoad) {
        for i in 0..4 {
            self.tlps[i] += other.tlps[i];
            self.data_tlps[i] += other.data_tlps[i];
            self.bytes[i] += other.bytes[i];
        }
    }

    /// Every count and byte multiplied by `factor` (e.g. a per-batch cost spread over its requests).
    pub fn scaled(&self, factor: f64) -> PcieLoad {
        PcieLoad {
            tlps: self.tlps.map(|x| x * factor),
            data_tlps: self.data_tlps.map(|x| x * factor),
            bytes: self.bytes.map(|x| x * factor),
        }
    }
}

/// Usable bytes per second of one link direction (encoding and DLLPs deducted). Not written
/// over [`link_gbps`]: its products in their own order (× 1e9 before the encoding), which
/// rounds differently for some lane counts and rates, and the fitted results are this order's.
pub fn link_bytes_per_s(p: &OffpathParams) -> f64 {
    p.pcie_lanes * p.pcie_gt_per_s * 1e9 * p.pcie_encoding_efficiency * (1.0 - p.pcie_dllp_overhead_fraction) / 8.0
}

/// Link payload rate per direction before TLP overheads [Gb/s] ("P" of the seed's P − N rule).
pub fn link_gbps(p: &OffpathParams) -> f64 {
    common_pcie::link_gbps(p.pcie_lanes, p.pcie_gt_per_s, p.pcie_encoding_efficiency)
}

/// Bytes of a memory read/write request TLP besides its payload.
pub fn request_overhead_bytes(p: &OffpathParams) -> f64 {
    p.pcie_request_header_bytes + p.pcie_dll_bytes + p.pcie_framing_bytes
}

/// Bytes of a completion TLP besides its payload.
pub fn completion_overhead_bytes(p: &OffpathParams) -> f64 {
    p.pcie_completion_header_bytes + p.pcie_dll_bytes + p.pcie_framing_bytes
}

/// The PCIe MTU (max payload size) negotiated towards `mem` (seed Table 3: host 512 B, SoC 128 B).
pub fn mps(p: &OffpathParams, mem: Endpoint) -> f64 {
    match mem {
        Endpoint::Host => p.host_mps_bytes,
        Endpoint::Soc => p.soc_mps_bytes,
    }
}

pub fn mrrs(p: &OffpathParams, mem: Endpoint) -> f64 {
    match mem {
        Endpoint::Host => p.host_mrrs_bytes,
        Endpoint::Soc => p.soc_mrrs_bytes,
    }
}

/// Links between the NIC cores and `mem`, NIC side first. Host memory on a BlueField
/// crosses PCIe1 then PCIe0; the SoC sits on the switch (seed §2.3: "the SoC is directly
/// linked to the switch"), so SoC memory crosses PCIe1 only. A plain RNIC has PCIe0 only.
pub fn links_to(p: &OffpathParams, mem: Endpoint) -> &'static [Link] {
    match (p.soc_present(), mem) {
        (true, Endpoint::Host) => &[Link::Pcie1, Link::Pcie0],
        (true, Endpoint::Soc) => &[Link::Pcie1],
        (false, _) => &[Link::Pcie0],
    }
}

/// One-way latency NIC cores ↔ `mem` (links and, on a BlueField, the switch) \[ns\].
pub fn one_way_ns(p: &OffpathParams, mem: Endpoint) -> f64 {
    links_to(p, mem)
        .iter()
        .map(|l| match l {
            Link::Pcie0 => p.pcie0_one_way_ns,
            Link::Pcie1 => p.pcie1_one_way_ns,
        })
        .sum::<f64>()
        + if p.soc_present() { p.pcie_switch_one_way_ns } else { 0.0 }
}

/// The NIC DMA-writes `bytes` into `mem`: posted write TLPs of at most MPS bytes, up.
pub fn dma_write(p: &OffpathParams, mem: Endpoint, bytes: f64) -> PcieLoad {
    let mut load = PcieLoad::default();
    let n = tlp_count(bytes, mps(p, mem));
    for link in links_to(p, mem) {
        load.add_data(link.up(), n, bytes + n * request_overhead_bytes(p));
    }
    load
}

/// The NIC DMA-reads `bytes` from `mem`: read requests of at most MRRS bytes go up,
/// completions of at most MPS bytes come down.
pub fn dma_read(p: &OffpathParams, mem: Endpoint, bytes: f64) -> PcieLoad {
    let mut load = PcieLoad::default();
    let requests = tlp_count(bytes, mrrs(p, mem));
    let completions = tlp_count(bytes, mps(p, mem));
    for link in links_to(p, mem) {
        load.add(link.up(), requests, requests * request_overhead_bytes(p));
        load.add_data(
            link.down(),
            completions,
            bytes + completions * completion_overhead_bytes(p),
        );
    }
    load
}

/// A CPU next to `mem` writes `bytes` to the NIC by MMIO (one posted TLP), down.
pub fn mmio_write(p: &OffpathParams, mem: Endpoint, bytes: f64) -> PcieLoad {
    let mut load = PcieLoad::default();
    for link in links_to(p, mem) {
        load.add(link.down(), 1.0, bytes + request_overhead_bytes(p));
    }
    load
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::offpath::params::tests::params;

    fn bf2() -> OffpathParams {
        params("bluefield2")
    }

    #[test]
    fn test_link_capacity_pcie4_x16() {
        let p = bf2();
        // 16 lanes × 16 GT/s × 128/130 = 252.06 Gb/s per direction before TLP overheads.
        assert!(
            (link_gbps(&p) - 16.0 * 16.0 * 128.0 / 130.0).abs() < 1e-3,
            "{}",
            link_gbps(&p)
        );
        let expect = 16.0 * 16e9 * (128.0 / 130.0) * (1.0 - p.pcie_dllp_overhead_fraction) / 8.0;
        assert!((link_bytes_per_s(&p) / expect - 1.0).abs() < 1e-5);
    }

    #[test]
    fn test_dma_tlps_by_memory() {
        let p = bf2();
        // 4 KiB write to SoC memory: 4096 / 128 = 32 TLPs on PCIe1 up only,
        // each 128 + 16 (4-DW header) + 6 (DLL) + 2 (framing) = 152 B.
        let w = dma_write(&p, Endpoint::Soc, 4096.0);
        assert_eq!(w.tlps, [0.0, 0.0, 32.0, 0.0]);
        assert_eq!(w.data_tlps, w.tlps);
        assert_eq!(w.bytes[LinkDir::Pcie1Up.index()], 32.0 * 152.0);
        // 4 KiB read from host memory: 4096/512 = 8 read requests (24 B each) up on PCIe1
        // and PCIe0, 8 completions of 512 + 12 + 6 + 2 = 532 B down on both.
        let r = dma_read(&p, Endpoint::Host, 4096.0);
        assert_eq!(r.tlps, [8.0, 8.0, 8.0, 8.0]);
        // Only the completions carry data (Table 3 counts them, not the read requests).
        assert_eq!(r.data_tlps, [0.0, 8.0, 0.0, 8.0]);
        assert_eq!(r.bytes[LinkDir::Pcie0Up.index()], 8.0 * 24.0);
        assert_eq!(r.bytes[LinkDir::Pcie1Down.index()], 8.0 * 532.0);
        // One 64-B BlueFlame WQE from the SoC: one TLP down PCIe1.
        let m = mmio_write(&p, Endpoint::Soc, 64.0);
        assert_eq!(m.tlps, [0.0, 0.0, 0.0, 1.0]);
        assert_eq!(m.data_tlps, [0.0; 4]);
        // 0 bytes: no TLP at all.
        assert_eq!(dma_read(&p, Endpoint::Soc, 0.0), PcieLoad::default());
    }

    #[test]
    fn test_rnic_has_only_pcie0_and_no_switch() {
        let p = params("connectx6-rnic");
        assert_eq!(dma_write(&p, Endpoint::Host, 1024.0).tlps, [2.0, 0.0, 0.0, 0.0]);
        assert_eq!(one_way_ns(&p, Endpoint::Host), p.pcie0_one_way_ns);
        let b = bf2();
        let expect = b.pcie1_one_way_ns + b.pcie_switch_one_way_ns + b.pcie0_one_way_ns;
        assert_eq!(one_way_ns(&b, Endpoint::Host), expect);
    }
}
