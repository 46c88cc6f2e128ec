//! A virtual Open vSwitch datapath (issue 16): the OpenFlow pipeline on OVS's classifier, the
//! megaflow cache it fills (which header bits each lookup consulted become the megaflow's
//! mask), upcalls and revalidators, and `hw-offload` to a NIC through tc flower.
//!
//! ```text
//!  pcap ─▶ flow key ─▶ megaflow cache ──hit──▶ count on the flow (offloaded: NIC; else host)
//!                          │ miss: upcall, queued to a handler thread (upcall_us each; lost when full)
//!                          ▼
//!           OpenFlow tables (pipeline.rs; classifier + un-wildcarding: megaflow.rs)
//!                          │ DpFlow = key & consulted bits, datapath actions
//!                          ▼
//!           offload.rs: OVS tc layer ─▶ NIC caps ─▶ dp:tc offloaded yes/no, or dp:ovs
//!           cache.rs:   install when the upcall finishes (flow limit; packets meanwhile: duplicate
//!                       upcalls), revalidators (max-idle, dynamic flow limit; dumps slowed by busy handlers)
//! ```
//!
//! VXLAN ports (`tunnel.rs`): packets on the underlay's physical port pass the underlay bridge
//! first; a `tnl_pop` sends the inner packet through the cache again from the tunnel port.
//!
//! One [`Request`] in, one [`result::Result`] out ([`Vswitch`], the model in the registry): the
//! rule file is read here (`rules.rs`), once; the bridge's ports are the rules' names unless the
//! request lists them (`ports.rs`); the NIC's capabilities and the host's costs come from
//! profiles (`nic.rs`). A pass of packets through the datapath is `run.rs`, which the PVP model
//! (`crate::ovs_pvp`) runs twice over one trace. Packets are taken in file order; simulated time
//! is the pcap's timestamps relative to its first packet.
//!
//! Invariants: no published result is used at run time; a run is a pure function of the
//! request (rules, ports, pcap, config) and the profiles it names.

pub mod cache;
pub mod key;
pub mod megaflow;
pub mod nic;
pub mod offload;
pub mod pipeline;
pub mod ports;
pub mod result;
pub mod rules;
pub mod run;
pub mod trie;
pub mod tunnel;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::model::Model;
use crate::profile::profiles_dir;
use crate::ModelError;
pub use cache::CacheConfig;
pub use megaflow::LookupConfig;
pub use offload::{OffloadCaps, TcPolicy};
pub use pipeline::PortInfo;
pub use ports::VxlanPort;
pub use tunnel::{Underlay, VxlanOptions};

/// A cost parameter: value, unit and where the value comes from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CostParam {
    pub value: f64,
    pub unit: String,
    pub provenance: String,
}

/// The host's costs: the parameters of the same names of the host's profile ([`nic::host_costs`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HostCosts {
    /// Per packet handled in software (kernel datapath or tc software) \[ns\].
    pub sw_packet_ns: CostParam,
    /// Per upcall on a handler thread (classifier walk, flow install) \[µs\].
    pub upcall_us: CostParam,
    /// Per flow per revalidator dump \[µs\].
    pub revalidate_flow_us: CostParam,
    /// Upcalls a handler's queue (its netlink socket) holds; more are lost \[upcalls\].
    pub upcall_queue: CostParam,
    /// The host's cores for the datapath's threads: the default `n-handler-threads`, and what
    /// handlers and revalidators share \[cores\].
    pub host_datapath_cores: CostParam,
}

/// One run: an OpenFlow rule file, the bridge's ports, a pcap received on `in_port`.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// The OpenFlow rule file: `ovs-ofctl add-flow` lines, `ovs-ofctl dump-flows` output, or a
    /// JSON list of `nicbench_rules::openflow::OfRule` values ([`rules::load`]).
    pub openflow: String,
    /// The bridge's ports (the LOCAL port has ofport 65534); default: the names the rules use
    /// and `in_port` ([`ports::default_ports`]), or with `tunnels` [`ports::tunnel_ports`].
    #[serde(default)]
    pub ports: Option<Vec<PortInfo>>,
    /// VXLAN ports of the bridge: the ports and the underlay are then derived (give either
    /// `tunnels`, or `ports` and `underlay`).
    #[serde(default)]
    pub tunnels: Vec<VxlanPort>,
    /// Packets, in file order.
    pub pcap: String,
    /// The port (name) every packet of the pcap arrives on: a port of `ports`, or the
    /// underlay's physical port (VXLAN packets to the underlay IP are then decapsulated).
    pub in_port: String,
    /// The underlay bridge behind the VXLAN ports of `ports`.
    #[serde(default)]
    pub underlay: Option<Underlay>,
    #[serde(default)]
    pub lookup: LookupConfig,
    #[serde(default)]
    pub cache: CacheConfig,
    /// `other_config:hw-offload`; default: on when a `nic` is given.
    #[serde(default)]
    pub hw_offload: Option<bool>,
    #[serde(default)]
    pub tc_policy: TcPolicy,
    /// The NIC whose profile's capabilities decide offload: a profile name or path of the PVP
    /// kinds ([`nic::nics`]).
    #[serde(default)]
    pub nic: Option<String>,
    /// The profile whose PVP host prices the host's work; default: `nic`, else [`nic::DEFAULT_HOST`].
    #[serde(default)]
    pub host: Option<String>,
    #[serde(default)]
    pub profiles_dir: Option<String>,
    /// Parameter overrides of those profiles (`upcall_us`, ...).
    #[serde(default)]
    pub overrides: BTreeMap<String, f64>,
}

impl Request {
    pub fn from_json(json: &str) -> Result<Request, ModelError> {
        serde_json::from_str(json).map_err(|e| ModelError::Scenario(format!("vswitch request: {e}")))
    }
}

/// The virtual OVS datapath in the registry: a [`Request`] (a rule file, ports, a trace) in, a
/// [`result::Result`] (the megaflows) out.
pub struct Vswitch;

impl Model for Vswitch {
    const NAME: &'static str = "vswitch";
    const SUMMARY: &'static str =
        "Open vSwitch's datapath: OpenFlow pipeline, megaflow un-wildcarding, revalidators, tc offload to a NIC";
    const PROFILE_KINDS: &'static [&'static str] = crate::pvp::PROFILE_KINDS;
    type Request = Request;
    type Result = result::Result;

    fn request_from_json(text: &str) -> Result<Request, ModelError> {
        Request::from_json(text)
    }

    fn run(request: &Request, progress: &mut dyn FnMut(u64)) -> Result<result::Result, ModelError> {
        simulate(request, progress)
    }
}

/// The shared part of a run: the rules (read once), the settings, the NIC's capabilities and the
/// host's costs from the profiles.
fn setup(req: &Request) -> Result<run::Setup, ModelError> {
    let rules = rules::load(&req.openflow)?;
    let dir = profiles_dir(req.profiles_dir.as_deref());
    let nic = req
        .nic
        .as_deref()
        .map(|n| nic::load(n, &dir, &req.overrides))
        .transpose()?;
    let costs = match (req.host.as_deref(), &nic) {
        (None, Some(p)) => nic::host_costs(p)?,
        (host, _) => nic::host_costs(&nic::load(host.unwrap_or(nic::DEFAULT_HOST), &dir, &req.overrides)?)?,
    };
    Ok(run::Setup {
        rules,
        lookup: req.lookup.clone(),
        cache: req.cache.clone(),
        hw_offload: req.hw_offload.unwrap_or(nic.is_some()),
        tc_policy: req.tc_policy,
        caps: nic.as_ref().map(nic::caps).transpose()?,
        costs,
    })
}

/// The ports and underlay of a pass arriving on `in_port`: the request's, or derived from the
/// rules (and the VXLAN ports).
pub fn ports_for(
    rules: &[nicbench_rules::openflow::OfRule],
    in_port: &str,
    ports: Option<&[PortInfo]>,
    underlay: Option<&Underlay>,
    tunnels: &[VxlanPort],
) -> Result<(Vec<PortInfo>, Option<Underlay>), ModelError> {
    match (ports, tunnels.is_empty()) {
        (Some(p), true) => Ok((p.to_vec(), underlay.cloned())),
        (None, true) if underlay.is_none() => Ok((ports::default_ports(rules, in_port), None)),
        (None, false) if underlay.is_none() => {
            let (p, u) = ports::tunnel_ports(tunnels, rules)?;
            Ok((p, Some(u)))
        }
        _ => Err(ModelError::Scenario(
            "give either `tunnels` (the ports and the underlay are derived) or `ports` (and `underlay`), not both; \
             an `underlay` needs `ports`"
                .into(),
        )),
    }
}

/// Runs one request; `progress(packets)` now and then.
pub fn simulate(req: &Request, progress: &mut dyn FnMut(u64)) -> Result<result::Result, ModelError> {
    let setup = setup(req)?;
    let (ports, underlay) = ports_for(
        &setup.rules,
        &req.in_port,
        req.ports.as_deref(),
        req.underlay.as_ref(),
        &req.tunnels,
    )?;
    let mut pass = run::Pass::new(&setup, &ports, underlay.as_ref(), &req.in_port)?;
    run::read_trace(&req.pcap, |ts, len, frame| {
        pass.packet(ts, len, frame);
        if pass.packets() % run::PROGRESS_EVERY_PACKETS == 0 {
            progress(pass.packets());
        }
        Ok(())
    })?;
    let mut result = pass.finish();
    let matched = ports::matched_in_ports(&setup.rules);
    if !matched.is_empty() && !matched.contains(&req.in_port) {
        result.in_port_unmatched = Some(matched.into_iter().collect());
    }
    Ok(result)
}

#[cfg(test)]
mod tests;
