//! Red Hat PVP through the virtual Open vSwitch datapath, with the user's rules and trace
//! (`nicbench vswitch --openflow R --trace T --nic N`): one request, one run.
//!
//! ```text
//!  rule file (read once) ──▶ setup: rules, the NIC's offload capabilities, the host's costs (profiles)
//!  trace (read once) ─┬▶ uplink pass: packets arriving on the uplink (VXLAN: tnl_pop, then the
//!                     │  tunnel-key megaflow)
//!                     └▶ the VM's frames (VXLAN: decapsulated by nicbench-wire) ─▶ VF pass: the VM
//!                        returns each frame on its port (VXLAN: tnl_push on the way out)
//!  installed megaflows per mask and ingress (load.rs) ─▶ the NIC's PVP cost ([`crate::pvp`])
//! ```
//!
//! The VM is a forwarding loop that returns each packet unchanged (testpmd in the seed's guest);
//! with VXLAN it gets and returns the inner frames, and the PVP model runs with `vxlan` and the
//! inner frame size (the seed's Fig. 9 sizes are inner frames). The two passes are independent
//! datapaths fed in turn, packet by packet: the same as one run after the other.
//!
//! Invariants: the rule file and the trace are each read once; a run is a pure function of the
//! request and the profiles it names.

pub mod load;

use std::collections::BTreeMap;

use ahash::AHashSet;
use nicbench_rules::openflow::DpAction;
use nicbench_wire::parse::{decapsulate_vxlan, parse_ethernet, VXLAN_UDP_PORT};
use nicbench_wire::FlowKey;
use serde::{Deserialize, Serialize};

use crate::model::Model;
use crate::ovs_nic::{Ingress, MegaflowLoad};
use crate::profile::profiles_dir;
use crate::pvp::{self, MIN_FRAME_BYTES};
use crate::vswitch::result::Result as PassResult;
use crate::vswitch::{self, nic, rules, run, TcPolicy, VxlanPort};
use crate::ModelError;

/// The model: see the module doc.
pub struct OvsPvp;

impl Model for OvsPvp {
    const NAME: &'static str = "ovs-pvp";
    const SUMMARY: &'static str =
        "Red Hat PVP with your OpenFlow rules and trace through the virtual OVS datapath and an OVS-TC offload NIC";
    const PROFILE_KINDS: &'static [&'static str] = pvp::PROFILE_KINDS;
    type Request = Request;
    type Result = Result;

    fn run(request: &Request, progress: &mut dyn FnMut(u64)) -> std::result::Result<Result, ModelError> {
        run(request, progress)
    }
}

/// One PVP run.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// The OpenFlow rules for both directions: a file of `ovs-ofctl add-flow` lines,
    /// `ovs-ofctl dump-flows` output, or a JSON list of `OfRule` values.
    pub openflow: String,
    /// The packets arriving on the uplink (pcap/pcapng of Ethernet frames, file order).
    pub trace: String,
    /// The OVS-TC offload NIC: a profile name or path of the PVP kinds (`nicbench_models::pvp`).
    pub nic: String,
    #[serde(default)]
    pub profiles_dir: Option<String>,
    /// Parameter overrides of the NIC's profile (the NIC's, the PVP host's and the datapath
    /// host's parameters).
    #[serde(default)]
    pub overrides: BTreeMap<String, f64>,
    /// The physical port's name in the rules.
    pub uplink: String,
    /// The VM's port (its VF representor) in the rules; the VM returns each packet on it.
    pub vm_port: String,
    /// VXLAN ports whose underlay is the uplink: the trace is then VXLAN (decapsulated on the
    /// way in, the VM's packets encapsulated on the way out).
    #[serde(default)]
    pub tunnels: Vec<VxlanPort>,
    #[serde(default)]
    pub tc_policy: TcPolicy,
    /// Offered load [Gb/s on the wire]; default: the port's line rate.
    #[serde(default)]
    pub offered_gbps: Option<f64>,
    /// How the flows' packets take turns at the NIC (`crate::ovs_nic::FlowOrder` names);
    /// default: round-robin.
    #[serde(default)]
    pub flow_order: Option<String>,
}

/// The datapath's two passes.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Passes {
    /// Packets arriving on the uplink.
    pub uplink: PassResult,
    /// The VM's packets, arriving on its port.
    pub vf: PassResult,
}

/// What a PVP run gives.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Result {
    pub datapath: Passes,
    /// The megaflows per mask and ingress the PVP model was given.
    pub load: MegaflowLoad,
    /// The VM's mean frame size with FCS \[B\] (with VXLAN: the inner frames').
    pub frame_bytes: u32,
    /// The VM's flows (distinct flow keys of its frames).
    pub flows: u64,
    pub pvp: pvp::request::Result,
}

/// The frames the VM receives: their count, bytes and distinct flows.
#[derive(Default)]
struct VmFrames {
    packets: u64,
    bytes: u64,
    flows: AHashSet<FlowKey>,
}

impl VmFrames {
    fn add(&mut self, frame: &[u8], len: u32) {
        self.packets += 1;
        self.bytes += u64::from(len);
        if let Some(key) = FlowKey::from_frame(&parse_ethernet(frame)) {
            self.flows.insert(key);
        }
    }

    /// The mean frame size with the FCS a capture lacks, at least the smallest Ethernet frame;
    /// the mean is rounded half to even.
    fn frame_bytes(&self) -> u32 {
        let mean = (self.bytes as f64 / self.packets as f64).round_ties_even();
        (mean as u32)
            .saturating_add(nicbench_wire::builder::FCS_BYTES)
            .max(MIN_FRAME_BYTES)
    }
}

/// Runs one request (see the module doc); `progress(packets)` now and then.
pub fn run(req: &Request, progress: &mut dyn FnMut(u64)) -> std::result::Result<Result, ModelError> {
    if let Some(t) = req.tunnels.iter().find(|t| t.underlay != req.uplink) {
        return Err(ModelError::Scenario(format!(
            "tunnels: '{}': underlay '{}' must be the uplink '{}' (the VXLAN trace arrives on it)",
            t.name, t.underlay, req.uplink
        )));
    }
    let dir = profiles_dir(req.profiles_dir.as_deref());
    let nic_profile = nic::load(&req.nic, &dir, &req.overrides)?;
    let setup = run::Setup {
        rules: rules::load(&req.openflow)?,
        lookup: Default::default(),
        cache: Default::default(),
        hw_offload: true,
        tc_policy: req.tc_policy,
        caps: Some(nic::caps(&nic_profile)?),
        costs: nic::host_costs(&nic_profile)?,
    };
    let ports_of = |in_port: &str| vswitch::ports_for(&setup.rules, in_port, None, None, &req.tunnels);
    let (uplink_ports, uplink_underlay) = ports_of(&req.uplink)?;
    let (vf_ports, vf_underlay) = ports_of(&req.vm_port)?;
    let mut uplink = run::Pass::new(&setup, &uplink_ports, uplink_underlay.as_ref(), &req.uplink)?;
    let mut vf = run::Pass::new(&setup, &vf_ports, vf_underlay.as_ref(), &req.vm_port)?;
    let vxlan = !req.tunnels.is_empty();
    let mut vm = VmFrames::default();
    run::read_trace(&req.trace, |ts, len, frame| {
        uplink.packet(ts, len, frame);
        // The VM's frame: the inner one of a VXLAN frame (every captured byte after its header).
        let (frame, len) = match vxlan.then(|| decapsulate_vxlan(frame, VXLAN_UDP_PORT)).flatten() {
            Some(v) => (v.inner, v.inner.len() as u32),
            None if vxlan => (frame, frame.len() as u32),
            None => (frame, len),
        };
        vf.packet(ts, len, frame);
        vm.add(frame, len);
        if vm.packets % run::PROGRESS_EVERY_PACKETS == 0 {
            progress(vm.packets);
        }
        Ok(())
    })?;
    if vm.packets == 0 {
        return Err(ModelError::trace(&req.trace, "the trace has no packets"));
    }
    let passes = Passes {
        uplink: uplink.finish(),
        vf: vf.finish(),
    };
    let megaflows = MegaflowLoad {
        masks: [(&passes.uplink, Ingress::Uplink), (&passes.vf, Ingress::Vf)]
            .into_iter()
            .flat_map(|(r, ingress)| load::mask_load(r, ingress))
            .collect(),
    };
    for (r, ingress, port) in [
        (&passes.uplink, Ingress::Uplink, &req.uplink),
        (&passes.vf, Ingress::Vf, &req.vm_port),
    ] {
        let forwarding = r
            .megaflows
            .iter()
            .any(|m| m.flow.actions.iter().any(|a| matches!(a, DpAction::Output { .. })));
        if !forwarding {
            return Err(ModelError::Rules(format!(
                "no packet arriving on '{port}' ({}) is forwarded: the rules drop them (a PVP loop needs rules for \
                 both directions: uplink -> VM and VM -> uplink)",
                ingress.name()
            )));
        }
    }
    let (frame_bytes, flows) = (vm.frame_bytes(), (vm.flows.len() as u64).max(1));
    let prediction = pvp::predict(&pvp::Request {
        nic: req.nic.clone(),
        profiles_dir: req.profiles_dir.clone(),
        overrides: req.overrides.clone(),
        flows,
        frame_bytes,
        vxlan,
        offered_gbps: req.offered_gbps,
        megaflows: Some(megaflows.clone()),
        datapath: None,
        flow_order: req.flow_order.clone(),
    })?;
    Ok(Result {
        datapath: passes,
        load: megaflows,
        frame_bytes,
        flows,
        pvp: prediction,
    })
}

#[cfg(test)]
mod tests;
