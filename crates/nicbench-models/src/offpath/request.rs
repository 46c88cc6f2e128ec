//! The JSON contract with the Python side (schemas `docs/contracts/offpath.request.schema.json`
//! and `offpath.result.schema.json`): [`Request`] in, [`Result`] out, and the validated [`Flow`]
//! the model works on.
//!
//! Invariants: a [`Flow`] is only built by [`Request::flows`], which rejects every bad
//! field with a one-line message naming the flow index and the field; shares are
//! normalised to sum 1 (with `mix = "max_min"` and no share given: weights = each flow's
//! queue pairs, machines x threads).

use super::solve::MixMode;
use crate::error::ModelError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Largest payload accepted (anything above is surely a unit mistake) \[B\].
pub const MAX_PAYLOAD_BYTES: f64 = 1024.0 * 1024.0 * 1024.0;
/// Default random address range of the seed's runs (§3 "Evaluation setup": 10 GB) \[B\].
pub const DEFAULT_ADDRESS_RANGE_BYTES: f64 = 10e9;

#[derive(Clone, Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Request {
    pub nic: String,
    #[serde(default)]
    pub profiles_dir: Option<String>,
    #[serde(default)]
    pub overrides: BTreeMap<String, f64>,
    /// How flows share the NIC: "shares" (default) or "max_min" (see `solve.rs`).
    #[serde(default)]
    pub mix: Option<String>,
    pub flows: Vec<FlowSpec>,
}

/// One flow as written in the request (validated into a [`Flow`]).
#[derive(Clone, Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    pub path: String,
    pub verb: String,
    pub payload_bytes: f64,
    #[serde(default)]
    pub share: Option<f64>,
    #[serde(default)]
    pub threads: Option<f64>,
    #[serde(default)]
    pub machines: Option<f64>,
    #[serde(default)]
    pub doorbell_batch: Option<f64>,
    #[serde(default)]
    pub address_range_bytes: Option<f64>,
    #[serde(default)]
    pub offered_mpps: Option<f64>,
}

/// The communication paths of an off-path SmartNIC (seed 004, Fig. 2c).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CommPath {
    /// ① client → host memory.
    ClientHost,
    /// ② client → SoC memory.
    ClientSoc,
    /// ③ H2S: host requester, SoC responder.
    HostSoc,
    /// ③ S2H: SoC requester, host responder.
    SocHost,
}

impl CommPath {
    pub const ALL: [CommPath; 4] = [
        CommPath::ClientHost,
        CommPath::ClientSoc,
        CommPath::HostSoc,
        CommPath::SocHost,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CommPath::ClientHost => "client->host",
            CommPath::ClientSoc => "client->soc",
            CommPath::HostSoc => "host->soc",
            CommPath::SocHost => "soc->host",
        }
    }

    pub fn parse(text: &str) -> Option<CommPath> {
        let t = text.trim().to_ascii_lowercase().replace(' ', "");
        CommPath::ALL.into_iter().find(|p| p.name() == t)
    }

    /// Whose memory the responder side touches.
    pub fn responder(self) -> Endpoint {
        match self {
            CommPath::ClientHost | CommPath::SocHost => Endpoint::Host,
            CommPath::ClientSoc | CommPath::HostSoc => Endpoint::Soc,
        }
    }

    /// Who posts the requests.
    pub fn requester(self) -> Requester {
        match self {
            CommPath::ClientHost | CommPath::ClientSoc => Requester::Client,
            CommPath::HostSoc => Requester::Host,
            CommPath::SocHost => Requester::Soc,
        }
    }

    /// ③: both ends sit behind this NIC (no network crossing).
    pub fn is_intra(self) -> bool {
        matches!(self, CommPath::HostSoc | CommPath::SocHost)
    }
}

/// A memory (and its CPU) behind the NIC.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Endpoint {
    Host,
    Soc,
}

impl Endpoint {
    pub fn other(self) -> Endpoint {
        match self {
            Endpoint::Host => Endpoint::Soc,
            Endpoint::Soc => Endpoint::Host,
        }
    }
}

/// Where requests are posted from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Requester {
    Client,
    Host,
    Soc,
}

impl Requester {
    /// The seed's peak-throughput requesters: (machines, threads per machine).
    pub fn default_parallelism(self) -> (f64, f64) {
        match self {
            // §3: "up to eleven requester machines"; §3.1: "each with 12 threads".
            Requester::Client => (11.0, 12.0),
            // §4: "requester at the host (24 requester threads)".
            Requester::Host => (1.0, 24.0),
            // Table 1: 8 Arm cores.
            Requester::Soc => (1.0, 8.0),
        }
    }
}

impl Requester {
    /// The memory a host/SoC requester's WQEs and buffers live in (None for a client).
    pub fn endpoint(self) -> Option<Endpoint> {
        match self {
            Requester::Client => None,
            Requester::Host => Some(Endpoint::Host),
            Requester::Soc => Some(Endpoint::Soc),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verb {
    Read,
    Write,
    Send,
}

impl Verb {
    pub fn name(self) -> &'static str {
        match self {
            Verb::Read => "READ",
            Verb::Write => "WRITE",
            Verb::Send => "SEND",
        }
    }

    pub fn parse(text: &str) -> Option<Verb> {
        match text.trim().to_ascii_uppercase().as_str() {
            "READ" => Some(Verb::Read),
            "WRITE" => Some(Verb::Write),
            "SEND" | "RECV" | "SEND/RECV" => Some(Verb::Send),
            _ => None,
        }
    }
}

/// A validated flow.
#[derive(Clone, Debug, PartialEq)]
pub struct Flow {
    pub path: CommPath,
    pub verb: Verb,
    pub payload_bytes: f64,
    /// Fraction of the mix's requests (all shares sum to 1).
    pub share: f64,
    pub machines: f64,
    pub threads: f64,
    pub doorbell_batch: f64,
    pub address_range_bytes: f64,
    pub offered_mpps: Option<f64>,
}

fn positive_int(value: Option<f64>, default: f64, field: &str, idx: usize) -> std::result::Result<f64, ModelError> {
    match value {
        None => Ok(default),
        Some(v) if v.is_finite() && v >= 1.0 && v.fract() == 0.0 => Ok(v),
        Some(v) => Err(ModelError::Scenario(format!(
            "flow {idx}: {field} must be an integer >= 1, got {v}"
        ))),
    }
}

impl Request {
    pub fn from_json(text: &str) -> std::result::Result<Request, ModelError> {
        serde_json::from_str(text).map_err(|e| ModelError::Scenario(format!("offpath request: {e}")))
    }

    pub fn mix_mode(&self) -> std::result::Result<MixMode, ModelError> {
        match self.mix.as_deref().map(str::trim) {
            None | Some("shares") => Ok(MixMode::Shares),
            Some("max_min") => Ok(MixMode::MaxMin),
            Some(other) => Err(ModelError::Scenario(format!(
                "offpath request: unknown mix '{other}' (known: shares, max_min)"
            ))),
        }
    }

    /// Validates the flows and normalises their shares.
    pub fn flows(&self) -> std::result::Result<Vec<Flow>, ModelError> {
        if self.flows.is_empty() {
            return Err(ModelError::Scenario("offpath request: no flows".into()));
        }
        let mut flows = Vec::with_capacity(self.flows.len());
        for (idx, spec) in self.flows.iter().enumerate() {
            let path = CommPath::parse(&spec.path).ok_or_else(|| {
                ModelError::Scenario(format!(
                    "flow {idx}: unknown path '{}' (known: client->host, client->soc, host->soc, soc->host)",
                    spec.path
                ))
            })?;
            let verb = Verb::parse(&spec.verb).ok_or_else(|| {
                ModelError::Scenario(format!(
                    "flow {idx}: unknown verb '{}' (known: READ, WRITE, SEND)",
                    spec.verb
                ))
            })?;
            let n = spec.payload_bytes;
            if !n.is_finite() || n < 0.0 || n.fract() != 0.0 || n > MAX_PAYLOAD_BYTES {
                return Err(ModelError::Scenario(format!(
                    "flow {idx}: payload_bytes must be an integer in [0, 1 GiB], got {n}"
                )));
            }
            let share = spec.share.unwrap_or(1.0);
            if !share.is_finite() || share <= 0.0 {
                return Err(ModelError::Scenario(format!(
                    "flow {idx}: share must be > 0, got {share}"
                )));
            }
            let (machines_default, threads_default) = path.requester().default_parallelism();
            let machines = positive_int(spec.machines, machines_default, "machines", idx)?;
            let threads = positive_int(spec.threads, threads_default, "threads", idx)?;
            let doorbell_batch = positive_int(spec.doorbell_batch, 1.0, "doorbell_batch", idx)?;
            let address_range_bytes = spec.address_range_bytes.unwrap_or(DEFAULT_ADDRESS_RANGE_BYTES);
            if !address_range_bytes.is_finite() || address_range_bytes <= 0.0 {
                return Err(ModelError::Scenario(format!(
                    "flow {idx}: address_range_bytes must be > 0, got {address_range_bytes}"
                )));
            }
            if let Some(o) = spec.offered_mpps {
                if !o.is_finite() || o <= 0.0 {
                    return Err(ModelError::Scenario(format!(
                        "flow {idx}: offered_mpps must be > 0, got {o}"
                    )));
                }
            }
            flows.push(Flow {
                path,
                verb,
                payload_bytes: n,
                share,
                machines,
                threads,
                doorbell_batch,
                address_range_bytes,
                offered_mpps: spec.offered_mpps,
            });
        }
        // Independent closed-loop requesters (max_min) with no share given: the NIC serves its
        // queue pairs round-robin, so a saturated resource splits in proportion to each flow's
        // QPs (one per requester thread: machines x threads), not equally per flow.
        if self.mix_mode()? == MixMode::MaxMin && self.flows.iter().all(|f| f.share.is_none()) {
            for f in &mut flows {
                f.share = f.machines * f.threads;
            }
        }
        let total: f64 = flows.iter().map(|f| f.share).sum();
        for f in &mut flows {
            f.share /= total;
        }
        Ok(flows)
    }
}

/// Per-link, per-direction PCIe packet rates [M TLP/s].
#[derive(Clone, Debug, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct PcieMpps {
    pub pcie0_up: f64,
    pub pcie0_down: f64,
    pub pcie1_up: f64,
    pub pcie1_down: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct FlowResult {
    pub path: &'static str,
    pub verb: &'static str,
    pub payload_bytes: f64,
    pub share: f64,
    pub gbps: f64,
    pub mpps: f64,
    /// `None` (JSON null) when the offered load saturates the mix.
    pub latency_us: Option<f64>,
    pub posting_latency_us: f64,
    pub saturated: bool,
    pub pcie_mpps: PcieMpps,
    /// Only the TLPs carrying data (DMA writes, read completions): the seed's Table 3 count.
    pub pcie_data_mpps: PcieMpps,
    /// What stops this flow from going faster (the mix's bottleneck with `mix = "shares"`).
    pub bottleneck: &'static str,
}

#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Advice {
    pub id: &'static str,
    pub text: String,
    /// The change to the mix the advice asks for, where it is one flow field (`advise` runs the
    /// changed mix as its what-if); absent when the change is not one field.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change: Option<FlowChange>,
}

/// One field of one flow of the mix, set to a value: `in` (the address range \[B\]), `batch`
/// (requests per doorbell), `size` (the payload \[B\]) or `@` (an offered load \[Gb/s\] of payload:
/// a bound on the flow), as the flow grammar of `nicbench paths` names them.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct FlowChange {
    /// Index of the flow in the mix.
    pub flow: usize,
    pub field: &'static str,
    pub value: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Result {
    pub nic: String,
    /// "shares" or "max_min".
    pub mix: &'static str,
    pub flows: Vec<FlowResult>,
    pub total_gbps: f64,
    pub total_mpps: f64,
    pub pcie_mpps: PcieMpps,
    /// Data-carrying TLPs only, summed over flows (see [`FlowResult::pcie_data_mpps`]).
    pub pcie_data_mpps: PcieMpps,
    pub bottleneck: &'static str,
    pub bottleneck_utilization: f64,
    pub utilization: BTreeMap<&'static str, f64>,
    pub advice: Vec<Advice>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flows_of(json: &str) -> std::result::Result<Vec<Flow>, String> {
        Request::from_json(json)
            .and_then(|r| r.flows())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn test_parse_defaults_and_shares() {
        let flows = flows_of(
            r#"{"nic":"bluefield2","flows":[
                {"path":"client->soc","verb":"read","payload_bytes":4096,"share":3},
                {"path":"soc->host","verb":"SEND/RECV","payload_bytes":0}]}"#,
        )
        .expect("valid");
        assert_eq!(flows[0].path, CommPath::ClientSoc);
        assert_eq!(flows[0].verb, Verb::Read);
        assert_eq!((flows[0].machines, flows[0].threads), (11.0, 12.0));
        assert_eq!((flows[1].machines, flows[1].threads), (1.0, 8.0));
        assert_eq!(flows[1].verb, Verb::Send);
        assert!((flows[0].share - 0.75).abs() < 1e-12 && (flows[1].share - 0.25).abs() < 1e-12);
        assert_eq!(flows[0].address_range_bytes, DEFAULT_ADDRESS_RANGE_BYTES);
        assert_eq!(flows[0].doorbell_batch, 1.0);
    }

    #[test]
    fn test_bad_input_errors_name_the_field() {
        let cases = [
            (r#"{"nic":"x","flows":[]}"#, "no flows"),
            (
                r#"{"nic":"x","flows":[{"path":"client->nic","verb":"READ","payload_bytes":64}]}"#,
                "unknown path 'client->nic'",
            ),
            (
                r#"{"nic":"x","flows":[{"path":"client->host","verb":"CAS","payload_bytes":64}]}"#,
                "unknown verb 'CAS'",
            ),
            (
                r#"{"nic":"x","flows":[{"path":"client->host","verb":"READ","payload_bytes":-1}]}"#,
                "payload_bytes",
            ),
            (
                r#"{"nic":"x","flows":[{"path":"client->host","verb":"READ","payload_bytes":1e12}]}"#,
                "payload_bytes",
            ),
            (
                r#"{"nic":"x","flows":[{"path":"client->host","verb":"READ","payload_bytes":64.5}]}"#,
                "payload_bytes",
            ),
            (
                r#"{"nic":"x","flows":[{"path":"client->host","verb":"READ","payload_bytes":64,"share":0}]}"#,
                "share",
            ),
            (
                r#"{"nic":"x","flows":[{"path":"client->host","verb":"READ","payload_bytes":64,"threads":0}]}"#,
                "threads",
            ),
            (
                r#"{"nic":"x","flows":[{"path":"client->host","verb":"READ","payload_bytes":64,"doorbell_batch":2.5}]}"#,
                "doorbell_batch",
            ),
            (
                r#"{"nic":"x","flows":[{"path":"client->host","verb":"READ","payload_bytes":64,"address_range_bytes":0}]}"#,
                "address_range_bytes",
            ),
            (
                r#"{"nic":"x","flows":[{"path":"client->host","verb":"READ","payload_bytes":64,"offered_mpps":-3}]}"#,
                "offered_mpps",
            ),
            (
                r#"{"nic":"x","flows":[{"path":"client->host","verb":"READ","payload_bytes":64,"colour":1}]}"#,
                "unknown field",
            ),
            (
                r#"{"nic":"x","flows":[{"path":"client->host","verb":"READ"}]}"#,
                "payload_bytes",
            ),
            ("not json", "offpath request"),
        ];
        for (json, want) in cases {
            let msg = flows_of(json).err().unwrap_or_default();
            assert!(msg.contains(want), "{json}: {msg}");
            assert!(!msg.contains('\n'), "one line: {msg}");
        }
    }
}
