//! The request of the ConnectX model, a scenario (its JSON is the contract with Python; schema
//! and field docs in `docs/contracts/connectx.request.schema.json`): which NIC,
//! which traffic, which pre-installed rules, which rule updates during the run, what to
//! measure. Unknown fields are refused so a typo never silently changes an experiment.

use nicbench_rules::generate::RuleSetKind;
use nicbench_traffic::TrafficConfig;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One simulation run.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// Profile name (`<profiles_dir>/<name>.toml`) or a path to a `.toml`.
    pub nic: String,
    #[serde(default)]
    pub profiles_dir: Option<String>,
    /// Parameter name → value, replacing the profile's value (calibration).
    #[serde(default)]
    pub overrides: BTreeMap<String, f64>,
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Virtual time simulated \[ns\].
    pub duration_ns: u64,
    /// Packets generated before this time are not measured \[ns\].
    #[serde(default)]
    pub warmup_ns: u64,
    /// Generated traffic (ignored when `trace` is set).
    #[serde(default)]
    pub traffic: Option<TrafficConfig>,
    /// A pcap replayed at its timestamps (relative to its first packet).
    #[serde(default)]
    pub trace: Option<String>,
    #[serde(default)]
    pub rules: Option<RulesSpec>,
    #[serde(default)]
    pub install: Option<InstallSpec>,
    #[serde(default)]
    pub measure: MeasureSpec,
    /// Forwarding cores on the host; queue q is polled by core q mod `cores` (or as
    /// `queue_map` says), and a same-core installer runs on the core of queue 0. The PAM'21
    /// testbed: 1.
    #[serde(default = "one_core")]
    pub cores: u32,
    /// Which core polls each rx queue (queue → core), instead of q mod `cores`. Every queue
    /// the port can deliver to must be mapped (0..`port_queues` and every queue a rule names;
    /// checked when the rules are installed), each to a core below `cores`; a core may poll
    /// several queues, or none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_map: Option<BTreeMap<u16, u32>>,
    /// The port's rx queues: packets no rule sends anywhere (unmatched, no fate, `passthru`)
    /// and `rss` actions without a queue list are spread over queues 0..N-1 by the port's
    /// default RSS (the mlx5 PMD's key and table, types `ip`).
    #[serde(default = "one_queue")]
    pub port_queues: u16,
}

/// Most rules a scenario may pre-install (`rules.generated.count`) or operate on in one
/// `install` (its `count`): 2^22, the cap of `nicbench rules gen` (each is held in the
/// classifier and the steering tables; a count of 1e12 was allocated up front).
pub const MAX_RULES: u64 = nicbench_rules::generate::MAX_RULES as u64;

/// Most forwarding cores a scenario may have (a dual-socket server's worth of cores; more is a
/// unit mistake).
pub const MAX_CORES: u32 = 1024;

/// Most virtual time one run may simulate: an hour, 3,600x the CLI's default 1 s (issue 17: beyond
/// the caps runs took gigabytes or never ended).
pub const MAX_DURATION_NS: u64 = 3_600 * 1_000_000_000;

/// Most throughput-timeline bins of one run: a million (~75 B each in compact result JSON, measured:
/// ~75 MB at the cap).
pub const MAX_TIMELINE_BINS: u64 = 1_000_000;

/// Most packets one run may generate: 2^30 (7x a second of 64 B at 100 Gbps), about five minutes of
/// simulation at the ~4 M packets/s measured (`nicbench simulate --duration 100ms`: 822k packets in
/// 0.21 s).
pub const MAX_PACKETS: u64 = 1 << 30;

/// Most tables generated rules spread over, and the highest table a rule operation targets (PAM'21
/// went to 16; a few times that is still a pipeline, thousands are a unit mistake).
pub const MAX_GROUPS: u32 = 64;

/// Most actions of one operated rule (the pipeline's action list per STE is short; PAM'21 Fig. 5d
/// went to 8).
pub const MAX_ACTIONS: u32 = 16;

/// The limits above by name, as the registry exports them (`Model::LIMITS`): the CLI and the
/// experiment targets read them from there, so each is defined once, here, where it is enforced.
pub const LIMITS: &[(&str, u64)] = &[
    ("max_rules", MAX_RULES),
    ("max_cores", MAX_CORES as u64),
    ("max_duration_ns", MAX_DURATION_NS),
    ("max_timeline_bins", MAX_TIMELINE_BINS),
    ("max_packets", MAX_PACKETS),
    ("max_groups", MAX_GROUPS as u64),
    ("max_actions", MAX_ACTIONS as u64),
];

fn one_core() -> u32 {
    1
}

fn default_seed() -> u64 {
    1
}

fn one_queue() -> u16 {
    1
}

/// The pre-installed rule set.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum RulesSpec {
    Generated(GeneratedRules),
    /// A testpmd / tc / ClassBench file.
    File(String),
    /// Inline testpmd `flow create` lines.
    Text(String),
}

/// `nicbench_rules::generate` layout (PAM'21): `groups = 0` → all rules in the root table;
/// `groups = T` → tables 1..T chained by default `jump` rules.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GeneratedRules {
    #[serde(default = "default_kind", deserialize_with = "kind_from_name")]
    #[schemars(with = "RuleSetKindName")]
    pub kind: RuleSetKind,
    pub count: u64,
    #[serde(default)]
    pub groups: u32,
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Fraction of the traffic's flows that match one of the generated rules exactly.
    #[serde(default)]
    pub hit_fraction: f64,
}

/// The rule-set kinds by name (the schema of `kind`; names are read case-insensitively).
#[derive(schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)]
enum RuleSetKindName {
    Exact5,
    #[serde(rename = "exact5_tcp")]
    Exact5Tcp,
    Acl,
    Fw,
    Ipc,
}

fn default_kind() -> RuleSetKind {
    RuleSetKind::Exact5
}

fn kind_from_name<'de, D: serde::Deserializer<'de>>(d: D) -> Result<RuleSetKind, D::Error> {
    String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InstallMode {
    /// `count` rules at once from `start_ns`.
    Batch,
    /// One rule every `1 / rate_per_s` from `start_ns`.
    Rate,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InstallCore {
    /// The forwarding core installs: forwarding stops while it does.
    Same,
    /// Another core installs.
    Distinct,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InstallOp {
    Insert,
    Delete,
    /// Delete then insert (non-atomic: neither rule is installed in between).
    Update,
    /// The in-place update API.
    UpdateInplace,
}

/// How rate mode spaces its operations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Pacing {
    /// The next operation is due `1 / rate` after the previous one returned (a timer
    /// re-armed on completion, as the PAM'21 installer): slow operations lower the
    /// achieved rate, and a same-core installer takes a share `r·c / (1 + r·c)` of the core.
    #[default]
    AfterCompletion,
    /// Operation i is due at `start + i / rate` regardless of how long operations take.
    Schedule,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MatchType {
    Ipv4,
    Ipv6,
    Vlan,
    Tunnel,
}

/// Rule updates during the run (PAM'21 Fig. 3–6).
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InstallSpec {
    pub mode: InstallMode,
    /// Batch size, or the total for rate mode (default: unbounded over the run).
    #[serde(default)]
    pub count: Option<u64>,
    #[serde(default)]
    pub rate_per_s: Option<f64>,
    #[serde(default)]
    pub start_ns: u64,
    #[serde(default)]
    pub group: u32,
    #[serde(default = "default_core")]
    pub core: InstallCore,
    #[serde(default = "default_op")]
    pub op: InstallOp,
    #[serde(default = "default_match", rename = "match")]
    pub match_type: MatchType,
    #[serde(default = "default_actions")]
    pub actions: u32,
    /// Rate mode only: how operations are spaced.
    #[serde(default)]
    pub pacing: Pacing,
    /// Rate mode only: operations issued back to back each time the installer is due (at least
    /// 1). Bursts are `burst / rate_per_s` apart, as single operations are `1 / rate_per_s`:
    /// after the previous burst returned (`after_completion`, so the achieved rate is that of
    /// single operations, `1 / (cost + 1 / rate)`) or from the previous burst's due time
    /// (`schedule`, the asked rate while a burst fits in its period).
    #[serde(default = "one_op")]
    #[schemars(range(min = 1))]
    pub burst: u64,
}

fn one_op() -> u64 {
    1
}

fn default_core() -> InstallCore {
    InstallCore::Same
}
fn default_op() -> InstallOp {
    InstallOp::Insert
}
fn default_match() -> MatchType {
    MatchType::Ipv4
}
fn default_actions() -> u32 {
    1
}

/// What to measure.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MeasureSpec {
    #[serde(default = "default_bin")]
    pub timeline_bin_ns: u64,
    #[serde(default = "yes")]
    pub latency: bool,
    #[serde(default = "yes")]
    pub queues: bool,
    /// The measurement server's generator setup, which sets the fixed part of the latency.
    #[serde(default)]
    pub generator: GeneratorSetup,
}

/// How the measurement server generates and timestamps the traffic: only the fixed latency
/// outside the modeled queues differs (`fixed_latency_ns`, plus `timed_replay_latency_ns`
/// for a timed replay); the packets the model sends are the scenario's either way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GeneratorSetup {
    /// A trace held in memory, sent in a loop (PAM'21 `nic-occupancy.npf`: Fig. 2).
    #[default]
    Play,
    /// A pcap replayed at its timestamps (PAM'21 `nic-live.npf`: Figs. 3-4).
    TimedReplay,
}

impl GeneratorSetup {
    /// The fixed latency outside the modeled queues with this setup \[ns\].
    pub fn fixed_latency_ns(self, p: &super::params::ConnectxParams) -> f64 {
        match self {
            GeneratorSetup::Play => p.fixed_latency_ns,
            GeneratorSetup::TimedReplay => p.fixed_latency_ns + p.timed_replay_latency_ns,
        }
    }
}

fn default_bin() -> u64 {
    10_000_000
}
fn yes() -> bool {
    true
}

impl Default for MeasureSpec {
    fn default() -> Self {
        MeasureSpec {
            timeline_bin_ns: default_bin(),
            latency: true,
            queues: true,
            generator: GeneratorSetup::Play,
        }
    }
}

impl Request {
    pub fn from_json(text: &str) -> Result<Request, crate::ModelError> {
        let s: Request = serde_json::from_str(text).map_err(|e| crate::ModelError::Scenario(e.to_string()))?;
        s.validate()?;
        Ok(s)
    }

    pub fn validate(&self) -> Result<(), crate::ModelError> {
        let bad = |m: String| Err(crate::ModelError::Scenario(m));
        if self.duration_ns == 0 {
            return bad("duration_ns must be > 0".into());
        }
        if self.duration_ns > MAX_DURATION_NS {
            return bad(format!(
                "duration_ns: {} is too long, at most {MAX_DURATION_NS} (an hour of virtual time)",
                self.duration_ns
            ));
        }
        let bin_ns = self.measure.timeline_bin_ns.max(1);
        if self.duration_ns.div_ceil(bin_ns) > MAX_TIMELINE_BINS {
            return bad(format!(
                "measure.timeline_bin_ns: {bin_ns} over duration_ns {} makes {} bins, at most {MAX_TIMELINE_BINS}",
                self.duration_ns,
                self.duration_ns.div_ceil(bin_ns)
            ));
        }
        if let Some(traffic) = &self.traffic {
            let mut bounded = traffic.clone();
            bounded.duration_ns = Some(
                bounded
                    .duration_ns
                    .map_or(self.duration_ns, |d| d.min(self.duration_ns)),
            );
            if let Some(n) = bounded.expected_packets().filter(|n| *n > MAX_PACKETS) {
                return bad(format!("traffic: {n} packets in the run, at most {MAX_PACKETS}"));
            }
        }
        if self.port_queues == 0 {
            return bad("port_queues must be at least 1".into());
        }
        if self.warmup_ns >= self.duration_ns {
            return bad(format!(
                "warmup_ns ({}) must be < duration_ns ({})",
                self.warmup_ns, self.duration_ns
            ));
        }
        if self.cores == 0 || self.cores > MAX_CORES {
            return bad(format!("cores: got {}, allowed 1..={MAX_CORES}", self.cores));
        }
        if let Some(map) = &self.queue_map {
            if let Some((q, c)) = map.iter().find(|(_, c)| **c >= self.cores) {
                return bad(format!(
                    "queue_map: queue {q} on core {c}, but there are {} cores (allowed cores 0..={})",
                    self.cores,
                    self.cores - 1
                ));
            }
            if let Some(q) = (0..self.port_queues).find(|q| !map.contains_key(q)) {
                return bad(format!(
                    "queue_map: queue {q} of the port's {} queues has no core (map every queue 0..={})",
                    self.port_queues,
                    self.port_queues - 1
                ));
            }
        }
        if self.traffic.is_none() && self.trace.is_none() {
            return bad("either traffic or trace is required".into());
        }
        if let Some(RulesSpec::Generated(g)) = &self.rules {
            if g.count > MAX_RULES {
                return bad(format!(
                    "rules.generated.count: {} is too many, at most {MAX_RULES}",
                    g.count
                ));
            }
            if g.groups > MAX_GROUPS {
                return bad(format!(
                    "rules.generated.groups: {} tables, allowed 0 to {MAX_GROUPS}",
                    g.groups
                ));
            }
            if !(0.0..=1.0).contains(&g.hit_fraction) {
                return bad(format!(
                    "rules.generated.hit_fraction must be in [0, 1], got {}",
                    g.hit_fraction
                ));
            }
        }
        if let Some(i) = &self.install {
            if i.mode == InstallMode::Rate && !i.rate_per_s.is_some_and(|r| r.is_finite() && r > 0.0) {
                return bad("install.rate_per_s must be a number > 0 in rate mode".into());
            }
            if i.mode == InstallMode::Batch && i.count.is_none() {
                return bad("install.count is required in batch mode".into());
            }
            if i.count.is_some_and(|n| n > MAX_RULES) {
                return bad(format!(
                    "install.count: {} is too many, at most {MAX_RULES}",
                    i.count.unwrap_or_default()
                ));
            }
            if i.actions == 0 || i.actions > MAX_ACTIONS {
                return bad(format!(
                    "install.actions: {} actions, allowed 1 to {MAX_ACTIONS}",
                    i.actions
                ));
            }
            if i.group > MAX_GROUPS {
                return bad(format!("install.group: table {}, allowed 0 to {MAX_GROUPS}", i.group));
            }
            if i.burst != 1 && i.mode != InstallMode::Rate {
                return bad(format!(
                    "install.burst: {} applies to rate mode only (a batch is one burst already)",
                    i.burst
                ));
            }
            if i.burst == 0 || i.burst > MAX_RULES {
                return bad(format!(
                    "install.burst: {} operations per burst, allowed 1 to {MAX_RULES}",
                    i.burst
                ));
            }
        }
        Ok(())
    }
}
