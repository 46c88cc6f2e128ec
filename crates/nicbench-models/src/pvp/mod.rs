//! The Red Hat PVP (PHY-VM-PHY) testbed of seed 002 (Fig. 6) around an OVS-offload NIC.
//!
//! ```text
//!  generator ═ 25G port ─▶ NIC lookup (pass 1, uplink filters) ─▶ PCIe ─▶ VF ─▶ VM (testpmd)
//!      ▲                                                                       │
//!      └═══ 25G port ◀── NIC lookup (pass 2, VF filters, VXLAN encap) ◀─ PCIe ◀┘
//!  megaflows the NIC refused: each such pass goes through the host's kernel datapath instead
//! ```
//!
//! - [`crate::ovs_nic`]: what the datapath hands an OVS-TC NIC (megaflow counts per mask) and
//!   what the NIC answers ([`NicCost`], [`Refusal`]), the host around it ([`HostParams`]).
//! - [`request`]: the request/result contract (JSON; schema in `docs/contracts/`).
//! - the NICs: [`crate::connectx::eswitch`] (ConnectX-5 switchdev) and [`crate::agilio`].
//!
//! Throughput = min(offered, wire, NIC, PCIe each way, the VM's forwarding core, the host's
//! software datapath for what is not offloaded): the stages are pipelined, so the slowest one
//! sets the rate; the others run below saturation.
//!
//! Invariants: analytic and pure; frame rates come from Ethernet's per-frame overhead (preamble
//! + SFD + inter-frame gap), not from published rates.

pub mod request;

pub use request::Request;

use crate::agilio::{self, AgilioParams};
use crate::common::PcieParams;
use crate::connectx::eswitch::{self, EswitchParams};
use crate::error::ModelError;
use crate::model::Model;
use crate::ovs_nic::{choice, FlowOrder, HostParams, MegaflowLoad, NicCost, Refusal};
use crate::profile::{profiles_dir, Profile};
use std::collections::BTreeMap;

/// Ethernet's line time per frame besides the frame (preamble, SFD, interPacketGap) \[B\].
const WIRE_OVERHEAD_BYTES: f64 = nicbench_wire::builder::WIRE_OVERHEAD_BYTES as f64;
/// Outer Ethernet (14) + IPv4 (20) + UDP (8) + VXLAN (8) headers a VXLAN encap adds (RFC 7348).
pub const VXLAN_OVERHEAD_BYTES: u32 = 50;
/// Smallest and largest frame accepted, with FCS \[B\]: the one range every nicbench command takes
/// (`nicbench_wire::builder`: Ethernet's minimum to a 9000 B jumbo MTU).
pub const MIN_FRAME_BYTES: u32 = nicbench_wire::builder::MIN_FRAME_SIZE_BYTES;
pub const MAX_FRAME_BYTES: u32 = nicbench_wire::builder::MAX_FRAME_SIZE_BYTES;

/// Frames per second a link carries at `gbps` for frames of `frame_bytes` (FCS included).
pub fn line_rate_mpps(gbps: f64, frame_bytes: f64) -> f64 {
    gbps * 1e3 / ((frame_bytes + WIRE_OVERHEAD_BYTES) * 8.0)
}

/// Which OVS datapath forwards: the NIC (OVS-TC offload), the kernel, or OVS-DPDK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Datapath {
    TcOffload,
    Kernel,
    Dpdk,
}

impl Datapath {
    pub const NAMES: [&'static str; 3] = ["tc-offload", "kernel", "dpdk"];

    pub fn parse(text: &str) -> Result<Datapath, ModelError> {
        choice(
            "datapath",
            text,
            &Datapath::NAMES,
            &[Datapath::TcOffload, Datapath::Kernel, Datapath::Dpdk],
        )
    }

    pub fn name(self) -> &'static str {
        Datapath::NAMES[self as usize]
    }
}

/// The profile kinds a PVP testbed's NIC may be of: the ConnectX-5 eSwitch and the Agilio CX.
pub const PROFILE_KINDS: &[&str] = &[eswitch::KIND, agilio::KIND];

/// Checks an OVS-TC NIC's profile as the PVP testbed reads it: one of [`PROFILE_KINDS`], its typed
/// parameters (the NIC's and its host's) valid. For the models that read these profiles too.
pub fn check_nic(profile: &Profile) -> Result<(), ModelError> {
    Nic::load(profile).map(drop)
}

/// A loaded PVP-capable NIC.
enum Nic {
    Eswitch(EswitchParams),
    Agilio(AgilioParams),
}

impl Nic {
    fn load(profile: &Profile) -> Result<Nic, ModelError> {
        match profile.kind.as_str() {
            eswitch::KIND => Ok(Nic::Eswitch(profile.params()?)),
            agilio::KIND => Ok(Nic::Agilio(profile.params()?)),
            other => Err(ModelError::Scenario(format!(
                "nic: profile '{}' is of kind '{other}', which has no OVS offload (allowed kinds: {})",
                profile.name,
                PROFILE_KINDS.join(", ")
            ))),
        }
    }

    /// The port's line rate [Gb/s], the PCIe link and the host around the NIC.
    fn testbed(&self) -> (f64, &PcieParams, &HostParams) {
        match self {
            Nic::Eswitch(p) => (p.link_gbps, &p.pcie, &p.host),
            Nic::Agilio(p) => (p.link_gbps, &p.pcie, &p.host),
        }
    }

    fn admit(&self, load: &MegaflowLoad) -> (MegaflowLoad, Vec<Refusal>) {
        match self {
            // The FDB's capacity (millions of entries) is not reached by the loads modelled here.
            Nic::Eswitch(_) => (load.clone(), Vec::new()),
            Nic::Agilio(p) => agilio::admit(p, load),
        }
    }

    fn cost(&self, load: &MegaflowLoad, flows: u64, order: FlowOrder) -> NicCost {
        match self {
            Nic::Eswitch(p) => eswitch::pvp_cost(p, load, flows, order),
            Nic::Agilio(p) => agilio::pvp_cost(p, load),
        }
    }
}

/// The PVP model in the registry: a [`Request`] in, a [`request::Result`] out. Analytic.
pub struct Pvp;

impl Model for Pvp {
    const NAME: &'static str = "pvp";
    const SUMMARY: &'static str =
        "Red Hat PVP (PHY-VM-PHY) around an OVS-TC offload NIC: Agilio CX or ConnectX-5 switchdev (seed 002)";
    const PROFILE_KINDS: &'static [&'static str] = PROFILE_KINDS;
    const LIMITS: &'static [(&'static str, u64)] = request::LIMITS;
    type Request = Request;
    type Result = request::Result;

    fn request_from_json(text: &str) -> Result<Request, ModelError> {
        Request::from_json(text)
    }

    fn run(request: &Request, _progress: &mut dyn FnMut(u64)) -> Result<request::Result, ModelError> {
        predict(request)
    }
}

/// Loads the request's profile (with overrides) and predicts the PVP run.
pub fn predict(request: &Request) -> Result<request::Result, ModelError> {
    let mut profile = Profile::load(&request.nic, &profiles_dir(request.profiles_dir.as_deref()))?;
    profile.apply_overrides(&request.overrides)?;
    let nic = Nic::load(&profile)?;
    let (link_gbps, pcie, host) = nic.testbed();
    let datapath = Datapath::parse(request.datapath.as_deref().unwrap_or("tc-offload"))?;
    let order = FlowOrder::parse(request.flow_order.as_deref().unwrap_or("round-robin"))?;
    request.validate(link_gbps)?;
    let flows = request.flows;
    let wanted = request
        .megaflows
        .clone()
        .unwrap_or_else(|| MegaflowLoad::pvp(flows, request.vxlan));
    wanted.validate("megaflows")?;
    let (admitted, refused) = match datapath {
        Datapath::TcOffload => nic.admit(&wanted),
        // Software datapaths: nothing is offered to the NIC.
        Datapath::Kernel | Datapath::Dpdk => {
            let mut none = wanted.clone();
            none.masks.iter_mut().for_each(|m| m.offloaded = 0);
            (none, Vec::new())
        }
    };
    let cost = nic.cost(&admitted, flows, order);
    Ok(solve(
        &profile.name,
        &profile.kind,
        datapath,
        order,
        request,
        link_gbps,
        pcie,
        host,
        &admitted,
        refused,
        cost,
    ))
}

#[allow(clippy::too_many_arguments)]
fn solve(
    nic: &str,
    kind: &str,
    datapath: Datapath,
    order: FlowOrder,
    request: &Request,
    link_gbps: f64,
    pcie: &PcieParams,
    host: &HostParams,
    admitted: &MegaflowLoad,
    refused: Vec<Refusal>,
    cost: NicCost,
) -> request::Result {
    let inner = f64::from(request.frame_bytes);
    let wire = inner
        + if request.vxlan {
            f64::from(VXLAN_OVERHEAD_BYTES)
        } else {
            0.0
        };
    let offered_gbps = request.offered_gbps.unwrap_or(link_gbps);
    let offered_mpps = line_rate_mpps(offered_gbps, wire);
    let software_passes = match datapath {
        Datapath::Dpdk => 0.0,
        _ => admitted.software_passes(),
    };
    // Each PVP packet crosses PCIe once each way (to the VM and back); a pass through the kernel
    // datapath adds one crossing each way (NIC → host representor → NIC).
    let crossings = 1.0 + software_passes;
    let pcie_mpps = pcie.gbps() * 1e3 / (pcie.dma_bytes(inner) * 8.0) / crossings;
    let mut limits: BTreeMap<String, f64> = BTreeMap::new();
    limits.insert("wire".into(), line_rate_mpps(link_gbps, wire));
    limits.insert("nic".into(), 1e3 / cost.service_ns.max(1e-9));
    limits.insert("pcie".into(), pcie_mpps);
    limits.insert("vm".into(), 1e3 / host.vm_packet_ns);
    let mut software_ns_per_packet = 0.0;
    match datapath {
        Datapath::Dpdk => {
            software_ns_per_packet = 2.0 * host.dpdk_packet_ns;
            limits.insert(
                "host_datapath".into(),
                host.dpdk_pmd_cores * 1e3 / software_ns_per_packet,
            );
        }
        _ if software_passes > 0.0 => {
            software_ns_per_packet = software_passes * host.host_kernel_packet_ns;
            limits.insert(
                "host_datapath".into(),
                host.host_datapath_cores * 1e3 / software_ns_per_packet,
            );
        }
        _ => {}
    }
    let (bottleneck, limit) = limits
        .iter()
        .min_by(|a, b| a.1.total_cmp(b.1))
        .map(|(k, v)| (k.clone(), *v))
        .unwrap_or_default();
    let mpps = offered_mpps.min(limit);
    let host_cores_busy = match datapath {
        Datapath::Dpdk => host.dpdk_pmd_cores,
        _ => mpps * software_ns_per_packet / 1e3,
    };
    let serialization_ns = 2.0 * (wire + WIRE_OVERHEAD_BYTES) * 8.0 / link_gbps;
    // A crossing to the host and back, as a DMA engine moves a packet: the NIC writes the packet
    // and its completion (posted writes: half a round trip until they land), the driver rings the
    // doorbell (an MMIO write, half a round trip), the NIC reads the descriptor and then the
    // packet (a round trip each; no inlining of the packet into the descriptor assumed).
    let pcie_ns = crossings * 3.0 * host.pcie_dma_read_ns;
    let parts_ns = [
        ("wire", serialization_ns),
        ("nic", cost.latency_ns),
        ("pcie", pcie_ns),
        ("vm", host.vm_packet_ns),
        ("software", software_ns_per_packet),
    ];
    let latency_ns: f64 = parts_ns.iter().map(|p| p.1).sum();
    let (offloaded, masks_offloaded) = admitted.offloaded();
    let total: u64 = admitted.masks.iter().map(|m| m.megaflows).sum();
    request::Result {
        nic: nic.to_string(),
        kind: kind.to_string(),
        datapath: datapath.name().to_string(),
        flow_order: order.name().to_string(),
        flows: request.flows,
        wire_frame_bytes: wire as u32,
        offered_mpps,
        mpps,
        gbps: mpps * wire * 8.0 / 1e3,
        line_gbps: mpps * (wire + WIRE_OVERHEAD_BYTES) * 8.0 / 1e3,
        loss: if offered_mpps > 0.0 {
            (1.0 - mpps / offered_mpps).max(0.0)
        } else {
            0.0
        },
        latency_us: latency_ns / 1e3,
        latency_parts_us: parts_ns.iter().map(|(k, v)| (k.to_string(), v / 1e3)).collect(),
        bottleneck: if mpps < offered_mpps {
            bottleneck
        } else {
            "offered".to_string()
        },
        limits_mpps: limits,
        megaflows_offloaded: offloaded,
        megaflows_software: total - offloaded,
        masks_offloaded: masks_offloaded as u64,
        refused,
        host_cores_busy,
        nic_service_ns: cost.service_ns,
        detail: cost.detail,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_64b_at_25g_is_37_2_mpps_from_ethernet_overheads() {
        assert!((line_rate_mpps(25.0, 64.0) - 37.202).abs() < 1e-3);
        assert!((line_rate_mpps(25.0, 1518.0) - 2.0319).abs() < 1e-3);
    }

    #[test]
    fn test_unknown_datapath_is_named() {
        let msg = Datapath::parse("ovs").err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            msg.contains("datapath: unknown 'ovs' (allowed: tc-offload, kernel, dpdk)"),
            "{msg}"
        );
    }
}
