//! Building a testbed from a scenario and a profile: the traffic source, the installed rules,
//! every flow classified, the rings empty, the installer scheduled.

use super::control::Control;
use super::host::{Core, CoreCost, Cpu, Rx, Wire};
use super::nic::{state_without_epoch, FlowState, Nic};
use super::{DRAIN, UNKNOWN};
use crate::connectx::control::Installer;
use crate::connectx::params::ConnectxParams;
use crate::connectx::request::{InstallCore, Request};
use crate::connectx::setup::{install, Flows};
use crate::connectx::traffic::Source;
use crate::error::ModelError;
use crate::profile::{Param, Profile};
use ahash::AHashMap;
use nicbench_classify::{Classifier, QueueResolver};
use nicbench_rules::model::Action;
use nicbench_sim::{LatencyHistogram, SimDuration, SimTime, Timeline};
use nicbench_traffic::Rate;
use nicbench_wire::builder::WIRE_OVERHEAD_BYTES;
use std::collections::BTreeMap;

/// Everything a run needs, before it starts.
pub struct Testbed {
    pub(super) p: ConnectxParams,
    /// The profile's name (reported as the result's `nic`).
    pub(super) nic_name: String,
    pub(super) duration_ns: u64,
    pub(super) warmup_ns: u64,
    pub(super) measure_queues: bool,
    /// The fixed latency outside the modeled queues for the scenario's generator setup \[ns\].
    pub(super) fixed_latency_ns: f64,
    pub(super) source: Source,
    pub(super) nic: Nic,
    pub(super) core: Core,
    pub(super) rx: Rx,
    pub(super) ctl: Control,
    /// Pre-installed rules refused by full firmware tables.
    pub(super) rules_refused: u64,
    /// The profile's parameters with unit and provenance (quoted when naming the bottleneck).
    pub(super) profile_params: BTreeMap<String, Param>,
    /// Advance the NF core lazily and take the fast lane when it is idle (the normal mode); off,
    /// the core is advanced at every packet — slower, the same results (a test checks it).
    pub(super) defer_core: bool,
    /// Skip drawing each generated packet's flow when no rule can change during the run and
    /// every flow takes the same path, queue and fate (the flow cannot matter); off, flows
    /// are drawn — slower, the same results (a test checks it).
    pub(super) flow_blind: bool,
}

impl Testbed {
    /// Validates the scenario, reads the profile's parameters, installs the rules and
    /// classifies every known flow.
    pub fn build(scn: &Request, profile: &Profile) -> Result<Testbed, ModelError> {
        scn.validate()?;
        let p: ConnectxParams = profile.params()?;
        check_line_rate(scn, p.link_gbps)?;
        let source = Source::new(scn)?;
        let flows = Flows {
            keys: source.keys().to_vec(),
            flow_keys: source.flow_keys().to_vec(),
        };
        let mut inst = install(scn.rules.as_ref(), &flows, &p)?;
        inst.tables.round_robin = scn.trace.is_none()
            && scn
                .traffic
                .as_ref()
                .is_some_and(|t| t.popularity == nicbench_traffic::Popularity::RoundRobin);
        let rules_refused = inst.refused;
        let n_flows = flows.keys.len();
        let reader = inst.classifier.reader();
        // Every rss action is checked here, before the run (the installer adds queue rules only).
        let rss =
            QueueResolver::new(&inst.classifier, scn.port_queues).map_err(|e| ModelError::Rules(e.to_string()))?;
        let cpu_of_queue = scn
            .queue_map
            .as_ref()
            .map(|map| queue_table(map, &inst.classifier))
            .transpose()?;
        let mut nic = Nic {
            inst,
            reader,
            rss,
            keys: flows.keys,
            flows: vec![
                FlowState {
                    epoch: UNKNOWN,
                    path: UNKNOWN,
                    queue: 0,
                    drop: false
                };
                n_flows
            ],
            paths: Vec::new(),
            path_ids: AHashMap::new(),
            probe_cache: AHashMap::new(),
            epoch: 0,
            fresh_flows: 0,
            first_fresh: state_without_epoch(0, 0, false),
            mixed: false,
            hit_rate: 1.0,
            timing_dirty: true,
            last_refresh: SimTime::ZERO,
            pending: Vec::new(),
            last_apply: None,
            fw_pps: 0.0,
            fw_window_packets: 0,
            fw_window_start: SimTime::ZERO,
            file_rules_met: Default::default(),
        };
        let end = SimTime::from_ns(scn.duration_ns);
        let ctl = Control::new(
            scn.install
                .as_ref()
                .map(|s| Installer::new(s, &p, &mut nic.inst.tables)),
            scn.install.as_ref().is_some_and(|s| s.core == InstallCore::Same),
            end,
        );
        for f in 0..n_flows {
            nic.classify(f);
        }
        nic.refresh(SimTime::ZERO);
        let fixed_latency_ns = scn.measure.generator.fixed_latency_ns(&p);
        let rx = Rx {
            warmup: SimTime::from_ns(scn.warmup_ns),
            window_end: end + DRAIN,
            return_time: SimDuration::from_ns_f64(p.link_propagation_ns + fixed_latency_ns),
            wire: Wire::new(p.link_gbps),
            packets: 0,
            wire_bytes: 0,
            last_arrival: SimTime::ZERO,
            min_latency: SimDuration::MAX,
            hist: LatencyHistogram::new(),
            timeline: Timeline::new(SimDuration::from_ns(scn.measure.timeline_bin_ns)),
            per_ring: Vec::new(),
            per_ring_bytes: Vec::new(),
            latency: scn.measure.latency,
            late: Vec::new(),
        };
        let core = Core {
            rings: Vec::new(),
            ring_of_queue: vec![0; 1 << 16],
            queue_of_ring: Vec::new(),
            cpu_of_ring: Vec::new(),
            pos_in_cpu: Vec::new(),
            cpus: (0..scn.cores.max(1)).map(|_| Cpu::new()).collect(),
            installer_cpu: cpu_of_queue.as_ref().map_or(0, |t| t[0] as usize),
            cpu_of_queue,
            burst: p.rx_burst_packets.max(1.0) as usize,
            cost: CoreCost {
                per_burst: SimDuration::from_ns_f64(p.nf_burst_ns),
                per_packet: SimDuration::from_ns_f64(p.nf_packet_ns),
            },
        };
        Ok(Testbed {
            p,
            nic_name: profile.name.clone(),
            duration_ns: scn.duration_ns,
            warmup_ns: scn.warmup_ns,
            measure_queues: scn.measure.queues,
            fixed_latency_ns,
            source,
            nic,
            core,
            rx,
            ctl,
            rules_refused,
            profile_params: profile.params.clone(),
            defer_core: true,
            flow_blind: true,
        })
    }
}

/// The scenario's queue map as a flat table (queue id → core), after checking that every queue
/// a rule names (`queue index`, an `rss` action's `queues`) is mapped; the port's own queues
/// are checked by [`Request::validate`], and the installer's rules use queue 0.
fn queue_table(map: &BTreeMap<u16, u32>, classifier: &Classifier) -> Result<Vec<u32>, ModelError> {
    for id in classifier.rule_ids() {
        let Some(info) = classifier.rule_info(id) else { continue };
        for action in &info.actions {
            let named: Vec<u16> = match action {
                Action::Queue { index } => vec![*index],
                Action::Rss(rss) => rss.queues.clone().unwrap_or_default(),
                _ => continue,
            };
            if let Some(q) = named.into_iter().find(|q| !map.contains_key(q)) {
                return Err(ModelError::Scenario(format!(
                    "queue_map: queue {q}, which a rule in group {} sends packets to, has no core (mapped: {})",
                    info.group,
                    map.keys().map(|q| q.to_string()).collect::<Vec<_>>().join(", ")
                )));
            }
        }
    }
    let mut table = vec![u32::MAX; 1 << 16];
    for (q, c) in map {
        table[usize::from(*q)] = *c;
    }
    Ok(table)
}

/// A generator cannot send faster than its port: generated traffic above the link's line rate
/// (frame + 20 B of preamble and gap per frame) is refused. A trace replayed faster than the
/// link is paced by it instead (see [`super::run`]).
fn check_line_rate(scn: &Request, link_gbps: f64) -> Result<(), ModelError> {
    let Some(t) = scn.traffic.as_ref().filter(|_| scn.trace.is_none()) else {
        return Ok(());
    };
    let wire_bits = (t.size.mean_bytes() + f64::from(WIRE_OVERHEAD_BYTES)) * 8.0;
    let (asked, gbps) = match t.rate {
        Rate::Gbps(g) => (format!("{g} Gb/s"), g),
        Rate::Mpps(m) => (format!("{m} Mpps"), m * 1e6 * wire_bits / 1e9),
        Rate::Unlimited => return Ok(()),
    };
    // A relative slack for rates written with rounding (100 Gb/s given as 100.0000001).
    if gbps > link_gbps * (1.0 + 1e-6) {
        let max_mpps = link_gbps * 1e9 / wire_bits / 1e6;
        return Err(ModelError::Scenario(format!(
            "traffic.rate: {asked} is above the port's line rate of {link_gbps} Gb/s (frame + 20 B of preamble and \
             gap per frame: at most {max_mpps:.3} Mpps at this size); allowed: up to {link_gbps} Gb/s"
        )));
    }
    Ok(())
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::connectx::params::tests::test_params;
    use crate::profile::tests::dir;
    use serde_json::json;

    pub(crate) fn scenario(extra: serde_json::Value) -> Request {
        let mut s = json!({
            "nic": "connectx5",
            "duration_ns": 2_000_000,
            "traffic": {"flows": 100, "size": {"fixed": 1500}, "rate": {"gbps": 100.0}, "seed": 5},
            "rules": {"generated": {"kind": "exact5", "count": 1000, "groups": 2, "seed": 2, "hit_fraction": 0.5}},
        });
        if let (Some(obj), Some(add)) = (s.as_object_mut(), extra.as_object()) {
            obj.extend(add.clone());
        }
        Request::from_json(&s.to_string()).expect("scenario")
    }

    pub(crate) fn testbed(extra: serde_json::Value) -> Testbed {
        let profile = Profile::load("connectx5", &dir()).expect("profile");
        Testbed::build(&scenario(extra), &profile).expect("builds")
    }

    #[test]
    fn test_build_classifies_every_flow_and_installs_the_rules() {
        let tb = testbed(json!({}));
        assert_eq!(tb.nic.flows.len(), 100);
        assert!(
            tb.nic.flows.iter().all(|f| f.epoch == 0 && f.path != UNKNOWN),
            "every flow classified"
        );
        // hit_fraction 0.5: half the flows match an exact rule in a chained table, half the default rule.
        let paths: std::collections::BTreeSet<u32> = tb.nic.flows.iter().map(|f| f.path).collect();
        assert!(paths.len() >= 2, "{paths:?}");
        // The PAM'21 layout: the 1000 exact rules spread over tables 1..2, each table ending in its
        // default rule, and Table 0 holding the jump to Table 1.
        assert_eq!(
            tb.nic.inst.tables.group_entries(1) + tb.nic.inst.tables.group_entries(2),
            1000 + 2
        );
        assert_eq!(tb.nic.inst.tables.group_entries(0), 1);
        assert!(tb.core.rings.is_empty() && tb.core.cpus[0].queued == 0 && tb.rx.packets == 0);
        assert_eq!(tb.rx.wire, Wire::new(test_params().link_gbps));
        assert!(tb.ctl.installer.is_none() && tb.ctl.next_due.is_none());
        assert_eq!(tb.nic_name, "connectx5");
    }

    #[test]
    fn test_a_timed_replay_adds_its_latency_to_every_packet_and_nothing_else() {
        let run = |generator: &str| {
            let mut tb = testbed(json!({"measure": {"generator": generator}}));
            let counts = tb.run(&mut |_| {}).expect("runs");
            tb.summary(&counts, 0.0)
        };
        let (play, replay) = (run("play"), run("timed_replay"));
        let extra_us = test_params().timed_replay_latency_ns / 1e3;
        assert!(extra_us > 1.0, "the profile's timed replay adds latency: {extra_us} us");
        for (a, b) in [
            (play.latency_us.p1, replay.latency_us.p1),
            (play.latency_us.p50, replay.latency_us.p50),
            (play.latency_us.p99, replay.latency_us.p99),
            (play.latency_us.mean, replay.latency_us.mean),
        ] {
            // The histogram's resolution is 2^-8 of the value.
            assert!((b - a - extra_us).abs() <= 0.01 * b, "{a} + {extra_us} us != {b}");
        }
        assert_eq!((play.rx_mpps, play.loss_ratio), (replay.rx_mpps, replay.loss_ratio));
        assert!(
            (play.model.latency_floor_us["fixed"] + extra_us - replay.model.latency_floor_us["fixed"]).abs() < 1e-9,
            "the latency floor names the setup's fixed latency"
        );
        let bad = Request::from_json(
            &json!({"nic": "connectx5", "duration_ns": 1000, "measure": {"generator": "pktgen"}}).to_string(),
        );
        assert!(
            bad.is_err_and(|e| e.to_string().contains("play")),
            "unknown setups are refused"
        );
    }

    #[test]
    fn test_install_bursts_are_refused_outside_rate_mode_and_their_range() {
        let refusal = |install: serde_json::Value| {
            let traffic = json!({"flows": 10, "size": {"fixed": 1500}, "rate": {"gbps": 10.0}});
            Request::from_json(
                &json!({"nic": "connectx5", "duration_ns": 1000, "traffic": traffic, "install": install}).to_string(),
            )
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
        };
        let rate = |burst: u64| json!({"mode": "rate", "rate_per_s": 1000.0, "burst": burst});
        assert!(refusal(rate(0)).contains("allowed 1 to"), "{}", refusal(rate(0)));
        assert!(refusal(rate(1 << 23)).contains("allowed 1 to"));
        assert_eq!(refusal(rate(7)), "");
        let batch = json!({"mode": "batch", "count": 10, "burst": 2});
        assert!(refusal(batch.clone()).contains("rate mode only"), "{}", refusal(batch));
    }

    #[test]
    fn test_generated_traffic_above_the_line_rate_is_refused_with_the_line_rate() {
        let profile = Profile::load("connectx5", &dir()).expect("profile");
        let build = |rate: serde_json::Value| {
            Testbed::build(
                &scenario(json!({"traffic": {"flows": 10, "size": {"fixed": 1500}, "rate": rate}})),
                &profile,
            )
            .err()
            .map(|e| e.to_string())
        };
        let msg = build(json!({"gbps": 200.0})).unwrap_or_default();
        assert!(
            msg.contains("200 Gb/s is above the port's line rate of 100 Gb/s"),
            "{msg}"
        );
        // 1500 B + 20 B at 100 Gb/s is 8.22 Mpps: 9 Mpps is too much, 8 is fine.
        let msg = build(json!({"mpps": 9.0})).unwrap_or_default();
        assert!(msg.contains("at most 8.224 Mpps"), "{msg}");
        assert_eq!(build(json!({"mpps": 8.0})), None);
        assert_eq!(build(json!({"gbps": 100.0})), None);
    }

    #[test]
    fn test_build_schedules_the_installer_on_its_core() {
        let tb = testbed(json!({"install": {"mode": "batch", "count": 10, "start_ns": 500, "core": "same"}}));
        assert!(tb.ctl.same_core);
        assert_eq!(tb.ctl.same_core_due(SimTime::MAX), Some(SimTime::from_ns(500)));
        assert_eq!(tb.ctl.same_core_due(SimTime::from_ns(499)), None);
        let tb = testbed(
            json!({"install": {"mode": "rate", "rate_per_s": 1000.0, "start_ns": 3_000_000, "core": "distinct"}}),
        );
        assert!(!tb.ctl.same_core && tb.ctl.same_core_due(SimTime::MAX).is_none());
        // The distinct-core installer's first operation would start after the end of the run:
        // only the rate window's timer is on the queue.
        assert_eq!(tb.ctl.queue.len(), 1);
        let tb = testbed(
            json!({"install": {"mode": "rate", "rate_per_s": 1000.0, "start_ns": 1_000_000, "core": "distinct"}}),
        );
        assert_eq!(tb.ctl.queue.len(), 2);
    }

    #[test]
    fn test_build_refuses_bad_input() {
        let profile = Profile::load("bluefield2", &dir()).expect("profile");
        let err = Testbed::build(&scenario(json!({})), &profile)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("not the connectx model"), "{err}");
    }
}
