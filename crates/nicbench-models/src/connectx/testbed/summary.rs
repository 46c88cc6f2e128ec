//! The run's result: rates over the measured time, drops, latency percentiles, per-queue
//! counts, the timeline and its events, the installer's achieved rate, and the model's own
//! view (utilization per resource, bottleneck, cache hit rate, tables traversed).

use super::{Counts, Testbed};
use crate::common::PcieParams;
use crate::connectx::request::InstallMode;
use crate::connectx::result::{
    Bottleneck, CoreResult, Event, InstallResult, ModelSummary, ParamNote, QueueCounts, RulesMet, SimStats,
};
use crate::profile::params::ParamGroup;
use crate::profile::Param;
use nicbench_sim::SimTime;
use std::collections::BTreeMap;

/// Events listed in a result (the timeline marks them all).
const MAX_EVENTS: usize = 1000;

impl Testbed {
    /// The result of a finished run (`counts` from [`Testbed::run`]; `wall_s`: its wall time).
    pub fn summary(&self, counts: &Counts, wall_s: f64) -> crate::connectx::result::Result {
        let Counts {
            packets,
            offered_packets,
            offered_wire_bytes,
            steered,
            sum_tables,
            sum_hit,
            sum_fw,
            sum_fast,
            sum_steer_latency,
            sum_pcie,
            ref dropped,
            sent_end,
            paced_max,
            ref account,
        } = *counts;
        let (p, nic, core, rx, ctl, rules_refused) =
            (&self.p, &self.nic, &self.core, &self.rx, &self.ctl, self.rules_refused);
        // Rates over the time the port sent: the duration, or longer when the port was still
        // sending a paced backlog at its end (so no rate exceeds what the link carried).
        let sent_ns = sent_end.as_ns_f64().max(self.duration_ns as f64);
        let measured_s = (sent_ns - self.warmup_ns as f64).max(1.0) * 1e-9;
        let gbps = |wire_bytes: u64| wire_bytes as f64 * 8.0 / measured_s / 1e9;
        let mpps = |pkts: u64| pkts as f64 / measured_s / 1e6;
        let counted = steered.max(1) as f64;
        let installer_busy_ns = ctl.installer.as_ref().map_or(0.0, |i| i.busy.as_ns_f64());
        let offered_pps = offered_packets as f64 / measured_s;
        let mut utilization = BTreeMap::new();
        utilization.insert("link".to_string(), gbps(offered_wire_bytes) / p.link_gbps);
        utilization.insert(
            "root_table".to_string(),
            offered_pps * sum_fw.as_ns_f64() / counted * 1e-9,
        );
        utilization.insert(
            "nic_pipeline".to_string(),
            offered_pps * sum_fast.as_ns_f64() / counted * 1e-9,
        );
        utilization.insert("pcie".to_string(), offered_pps * sum_pcie.as_ns_f64() / counted * 1e-9);
        let core_demand_ns = p.nf_packet_ns + p.nf_burst_ns / p.rx_burst_packets.max(1.0);
        let end_ns = self.duration_ns as f64;
        let same_core_install = if ctl.same_core {
            installer_busy_ns.min(end_ns) / end_ns
        } else {
            0.0
        };
        // Each core's share of the packets that reached the rings (1 with one core), and of its
        // time the same-core installer takes (on the core of queue 0).
        let arrived: u64 = core.cpus.iter().map(|c| c.arrived).sum();
        let shares: Vec<(f64, f64)> = core
            .cpus
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let share = if core.cpus.len() > 1 && arrived > 0 {
                    c.arrived as f64 / arrived as f64
                } else {
                    1.0
                };
                (
                    share,
                    if i == core.installer_cpu {
                        same_core_install
                    } else {
                        0.0
                    },
                )
            })
            .collect();
        // The busiest core: its packets at the cost of full bursts, plus the installer's share.
        let (busiest_share, busiest_install) = shares
            .iter()
            .copied()
            .max_by(|a, b| {
                (offered_pps * core_demand_ns * 1e-9 * a.0 + a.1)
                    .total_cmp(&(offered_pps * core_demand_ns * 1e-9 * b.0 + b.1))
            })
            .unwrap_or((1.0, 0.0));
        utilization.insert(
            "host_core".to_string(),
            offered_pps * core_demand_ns * 1e-9 * busiest_share + busiest_install,
        );
        let bottleneck = utilization
            .iter()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .map(|(k, _)| k.clone())
            .unwrap_or_default();
        let mean_wire_ns = if offered_packets > 0 {
            offered_wire_bytes as f64 * 8.0 / offered_packets as f64 / p.link_gbps
        } else {
            0.0
        };
        let ns_per_packet = |resource: &str| match resource {
            // The root table's firmware work and the pipeline's STE reads occupy one steering
            // engine: a packet's service is their sum, whichever share is the larger.
            "root_table" | "nic_pipeline" => (sum_fw + sum_fast).as_ns_f64() / counted,
            "pcie" => sum_pcie.as_ns_f64() / counted,
            "host_core" => core_demand_ns,
            _ => mean_wire_ns,
        };
        // The installer's share of a core does not grow with the traffic: what the cores let
        // through is what their time less that share forwards (offered / utilization would spread
        // the installer's share over the packets), the port's rate at which the first core runs
        // out of time. Only with a same-core installer (otherwise offered / utilization, the same).
        let host_core = shares.iter().any(|&(_, install)| install > 0.0).then(|| {
            let capacity_pps = shares
                .iter()
                .filter(|(share, _)| *share > 0.0)
                .map(|&(share, install)| (1.0 - install).max(0.0) / (core_demand_ns * 1e-9 * share))
                .fold(f64::INFINITY, f64::min);
            HostCore {
                capacity_mpps: if capacity_pps.is_finite() {
                    capacity_pps / 1e6
                } else {
                    0.0
                },
                installer_share: busiest_install,
            }
        });
        let bottleneck_detail = bottleneck_detail(
            &bottleneck,
            &ns_per_packet,
            offered_pps,
            &utilization,
            host_core,
            core.cpus.len(),
            &self.profile_params,
        );
        let install = ctl.installer.as_ref().map(|i| {
            let duration_s = (i.last_end - i.first_start.unwrap_or(SimTime::ZERO)).as_secs_f64();
            let requested = i.requested_before(ctl.end);
            InstallResult {
                rules: i.completed,
                duration_s,
                rate_rules_per_s: if duration_s > 0.0 {
                    i.completed as f64 / duration_s
                } else {
                    0.0
                },
                refused: i.refused,
                requested_rules_per_s: match i.spec().mode {
                    InstallMode::Rate => i.spec().rate_per_s,
                    InstallMode::Batch => None,
                },
                achieved_rules_per_s: i.achieved_rate(),
                requested,
                backlog: requested.saturating_sub(i.completed),
                saturated_s: i.saturated_since(ctl.end).map(SimTime::as_secs_f64),
            }
        });
        let events: Vec<Event> = ctl
            .log
            .iter()
            .take(MAX_EVENTS)
            .map(|(t, what)| Event {
                t_s: t.as_secs_f64(),
                what: what.clone(),
            })
            .collect();
        // Received rates: over the sending time, unless the buffers overflowed (packets dropped
        // for want of room: the NIC's buffer, an RX ring). Then the device was the bottleneck and
        // what its full buffers held when the sources stopped drains after the end, at the
        // bottleneck's rate: counted over the sending time alone it read above the bottleneck
        // (3.5% in a 10 ms run with 8 full rings). The receiving time ends at the last arrival
        // less the shortest latency (a packet's time through the device without queueing).
        let backlogged = dropped.nic + dropped.imissed > 0;
        let rx_end_ns = if backlogged && rx.packets > 0 {
            (rx.last_arrival - rx.min_latency).as_ns_f64().max(sent_ns)
        } else {
            sent_ns
        };
        let rx_s = (rx_end_ns - self.warmup_ns as f64).max(1.0) * 1e-9;
        let rx_gbps = rx.wire_bytes as f64 * 8.0 / rx_s / 1e9;
        crate::connectx::result::Result {
            nic: self.nic_name.clone(),
            offered_gbps: gbps(offered_wire_bytes),
            offered_mpps: mpps(offered_packets),
            rx_gbps,
            rx_mpps: rx.packets as f64 / rx_s / 1e6,
            tx_gbps: rx_gbps,
            rx_window_s: rx_s,
            packets: account.clone(),
            loss_ratio: if offered_packets > 0 {
                1.0 - (rx.packets as f64 / offered_packets as f64).min(1.0)
            } else {
                0.0
            },
            dropped: dropped.clone(),
            latency_us: rx.hist.summary_us(),
            queues: if self.measure_queues {
                by_queue(&rx.per_ring, &rx.per_ring_bytes, &core.queue_of_ring)
            } else {
                BTreeMap::new()
            },
            cores: if core.cpus.len() > 1 {
                core.cpus
                    .iter()
                    .enumerate()
                    .map(|(i, c)| CoreResult {
                        core: i as u32,
                        queues: c.rings.iter().map(|&r| core.queue_of_ring[r]).collect(),
                        packets: c.rings.iter().map(|&r| rx.per_ring[r]).sum(),
                        utilization: c.arrived as f64 / measured_s * core_demand_ns * 1e-9
                            + if i == core.installer_cpu {
                                same_core_install
                            } else {
                                0.0
                            },
                        busy_ratio: (c.busy.as_ns_f64() / (sent_ns - self.warmup_ns as f64).max(1.0)).min(1.0),
                    })
                    .collect()
            } else {
                Vec::new()
            },
            timeline: rx
                .timeline
                .bins()
                .into_iter()
                .filter(|b| b.t_s <= self.duration_ns as f64 * 1e-9 + 1e-12)
                .collect(),
            events,
            install,
            model: ModelSummary {
                root_table_occupancy: nic.inst.tables.occupancy(0),
                tables_traversed_mean: sum_tables as f64 / counted,
                steering_cache_hit_rate: sum_hit / counted,
                bottleneck,
                bottleneck_detail,
                utilization,
                steering_working_set_stes: nic.inst.tables.working_set_stes(),
                rules_refused,
                rules_met: nic.inst.file_rules.as_ref().map(|f| {
                    let with_fields_matched = nic
                        .file_rules_met
                        .iter()
                        .filter(|r| f.installed.get(r) == Some(&false))
                        .count() as u64;
                    RulesMet {
                        total: f.total,
                        matched: nic.file_rules_met.len() as u64,
                        with_fields: f.total - f.catch_all,
                        with_fields_matched,
                    }
                }),
                latency_floor_us: {
                    let mean_wire_bytes = if offered_packets > 0 {
                        offered_wire_bytes as f64 / offered_packets as f64
                    } else {
                        0.0
                    };
                    let mut floor = BTreeMap::new();
                    floor.insert("fixed".to_string(), self.fixed_latency_ns / 1e3);
                    floor.insert(
                        "links".to_string(),
                        2.0 * (p.link_propagation_ns + mean_wire_bytes * 8.0 / p.link_gbps) / 1e3,
                    );
                    floor.insert("steering".to_string(), sum_steer_latency.as_ns_f64() / counted / 1e3);
                    floor.insert("pcie".to_string(), sum_pcie.as_ns_f64() / counted / 1e3);
                    floor.insert("core".to_string(), (p.nf_packet_ns + p.nf_burst_ns) / 1e3);
                    floor
                },
            },
            sim: SimStats {
                packets,
                wall_s,
                sim_packets_per_s: packets as f64 / wall_s.max(1e-9),
                link_paced_max_us: paced_max.as_ns_f64() / 1e3,
            },
        }
    }
}

/// Per-ring counts summed per queue id (rings → queues in `queue_of_ring`).
/// What each resource is, and the profile parameters that set its cost per packet.
fn resource_words(resource: &str, cores: usize) -> (String, &'static [&'static str]) {
    match resource {
        "root_table" => (
            "root-table (Table 0) firmware work: collision chains and the overflow list of the NIC's \
             firmware-managed table, on the steering engine with the pipeline's STE reads"
                .into(),
            &[
                "root_lookup_ns_per_chain_entry",
                "root_overflow_ns_per_entry",
                "steering_lookup_ns",
            ],
        ),
        "nic_pipeline" => (
            "the NIC's hardware steering pipeline (non-root tables, steering cache)".into(),
            &[
                "steering_lookup_ns",
                "steering_miss_latency_ns",
                "steering_outstanding_misses",
            ],
        ),
        "pcie" => (
            "PCIe DMA of the packets to host memory".into(),
            <PcieParams as ParamGroup>::NAMES,
        ),
        "host_core" if cores > 1 => (
            format!("the busiest of the host's {cores} forwarding cores"),
            &["nf_packet_ns", "nf_burst_ns", "rx_burst_packets"],
        ),
        "host_core" => (
            "the host's forwarding core".into(),
            &["nf_packet_ns", "nf_burst_ns", "rx_burst_packets"],
        ),
        _ => ("the port's line rate".into(), &["link_gbps"]),
    }
}

/// The host's cores with a same-core installer: the rate their time less the installer's lets
/// through, and the installer's share of the busiest core.
#[derive(Clone, Copy)]
struct HostCore {
    capacity_mpps: f64,
    installer_share: f64,
}

fn bottleneck_detail(
    resource: &str,
    ns_per_packet: &dyn Fn(&str) -> f64,
    offered_pps: f64,
    utilization: &BTreeMap<String, f64>,
    host_core: Option<HostCore>,
    cores: usize,
    params: &BTreeMap<String, Param>,
) -> Bottleneck {
    let (what, names) = resource_words(resource, cores);
    let capacity_mpps = |r: &str| {
        if let (Some(h), "host_core") = (host_core, r) {
            return h.capacity_mpps;
        }
        let u = engine_demand(r, utilization);
        if u > 0.0 {
            offered_pps / u / 1e6
        } else {
            0.0
        }
    };
    let parameters = names
        .iter()
        .filter_map(|n| {
            params.get(*n).map(|p| {
                (
                    n.to_string(),
                    ParamNote {
                        value: p.value,
                        unit: p.unit.clone(),
                        provenance: p.provenance.clone(),
                    },
                )
            })
        })
        .collect();
    // The limit that would bind next: the most demanded resource that is not the bottleneck's
    // server (the root table and the pipeline are one steering engine).
    let same_server = |r: &str| r == resource || (ENGINE.contains(&r) && ENGINE.contains(&resource));
    let next = utilization
        .iter()
        .filter(|(r, _)| !same_server(r))
        .max_by(|a, b| engine_demand(a.0, utilization).total_cmp(&engine_demand(b.0, utilization)))
        .map(|(r, _)| r.clone());
    Bottleneck {
        resource: resource.to_string(),
        what,
        ns_per_packet: ns_per_packet(resource),
        capacity_mpps: capacity_mpps(resource),
        installer_share: host_core
            .filter(|_| resource == "host_core")
            .map_or(0.0, |h| h.installer_share),
        next_capacity_mpps: next.as_deref().map_or(0.0, capacity_mpps),
        next_resource: next.unwrap_or_default(),
        parameters,
    }
}

/// The resources that share the steering engine (a packet's service is the sum of their times).
const ENGINE: [&str; 2] = ["root_table", "nic_pipeline"];

/// Demand / capacity of the server behind `resource`: the steering engine's whole load for its
/// two shares, else the resource's own utilization.
fn engine_demand(resource: &str, utilization: &BTreeMap<String, f64>) -> f64 {
    if ENGINE.contains(&resource) {
        ENGINE.iter().map(|r| utilization.get(*r).copied().unwrap_or(0.0)).sum()
    } else {
        utilization.get(resource).copied().unwrap_or(0.0)
    }
}

fn by_queue(per_ring: &[u64], per_ring_bytes: &[u64], queue_of_ring: &[u16]) -> BTreeMap<String, QueueCounts> {
    let mut out: BTreeMap<String, QueueCounts> = BTreeMap::new();
    for (r, n) in per_ring.iter().enumerate() {
        let q = out.entry(queue_of_ring[r].to_string()).or_default();
        q.packets += n;
        q.bytes += per_ring_bytes[r];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::build::tests::testbed;
    use super::*;
    use crate::connectx::result::Dropped;
    use nicbench_sim::SimDuration;
    use serde_json::json;

    #[test]
    fn test_rates_utilization_and_bottleneck_from_the_counts() {
        // 2 ms measured; 100,000 packets of 1520 B on the wire offered, none received.
        let tb = testbed(json!({}));
        let counts = Counts {
            packets: 100_000,
            offered_packets: 100_000,
            offered_wire_bytes: 100_000 * 1520,
            steered: 100_000,
            sum_tables: 250_000,
            sum_hit: 50_000.0,
            sum_fw: SimDuration::from_ns(100_000 * 5),
            sum_fast: SimDuration::from_ns(100_000 * 30),
            sum_steer_latency: SimDuration::from_ns(100_000 * 40),
            sum_pcie: SimDuration::from_ns(100_000 * 10),
            dropped: Dropped {
                imissed: 1,
                nic: 2,
                rule: 3,
            },
            sent_end: SimTime::ZERO,
            paced_max: SimDuration::ZERO,
            account: Default::default(),
        };
        let r = tb.summary(&counts, 0.5);
        assert_eq!(r.offered_gbps, 100_000.0 * 1520.0 * 8.0 / 2e-3 / 1e9);
        assert_eq!(r.offered_mpps, 50.0);
        assert_eq!((r.rx_gbps, r.loss_ratio), (0.0, 1.0));
        assert_eq!(r.dropped, counts.dropped);
        assert_eq!(r.model.tables_traversed_mean, 2.5);
        assert_eq!(r.model.steering_cache_hit_rate, 0.5);
        let u = &r.model.utilization;
        // 50 Mpps × 30 ns of fast-table time per packet = 1.5, × 5 ns of firmware time = 0.25;
        // 608 Gb/s offered to a 100 Gb/s link = 6.08: the link is the bottleneck.
        assert!(
            (u["nic_pipeline"] - 1.5).abs() < 1e-12 && (u["root_table"] - 0.25).abs() < 1e-12,
            "{u:?}"
        );
        assert!(
            (u["link"] - 6.08).abs() < 1e-12 && (u["pcie"] - 0.5).abs() < 1e-12,
            "{u:?}"
        );
        assert_eq!(r.model.bottleneck, "link");
        assert_eq!(
            (r.sim.packets, r.sim.wall_s, r.sim.sim_packets_per_s),
            (100_000, 0.5, 200_000.0)
        );
        assert!(r.install.is_none() && r.events.is_empty());
        assert_eq!(r.timeline.len(), 0, "the run fills the timeline; none here");
        // The bottleneck named with its cost: 1520 B on a 100 Gb/s wire take 121.6 ns, so the
        // link lets 50 / 6.08 = 8.22 Mpps through; its parameter quoted from the profile.
        let b = &r.model.bottleneck_detail;
        assert_eq!((b.resource.as_str(), b.what.as_str()), ("link", "the port's line rate"));
        assert!(
            (b.ns_per_packet - 121.6).abs() < 1e-9 && (b.capacity_mpps - 50.0 / 6.08).abs() < 1e-9,
            "{b:?}"
        );
        assert_eq!(b.parameters["link_gbps"].value, 100.0);
        // With the link fast, the one forwarding core is next: its cost per packet is the
        // profile's per-packet time plus its share of the per-burst time.
        let mut fast_link = tb;
        fast_link.p.link_gbps = 1000.0;
        let b = fast_link.summary(&counts, 0.5).model.bottleneck_detail;
        let p = &fast_link.p;
        let per_packet = p.nf_packet_ns + p.nf_burst_ns / p.rx_burst_packets;
        assert_eq!(
            (b.resource.as_str(), b.what.as_str()),
            ("host_core", "the host's forwarding core")
        );
        assert!(
            (b.ns_per_packet - per_packet).abs() < 1e-9 && (b.capacity_mpps - 1e3 / per_packet).abs() < 1e-6,
            "{b:?}"
        );
        let cost = &b.parameters["nf_packet_ns"];
        assert!(
            cost.unit == "ns" && !cost.provenance.is_empty() && cost.value == p.nf_packet_ns,
            "{cost:?}"
        );
    }

    #[test]
    fn test_a_same_core_installer_takes_its_share_out_of_the_cores_capacity() {
        // 1500 B at 100 Gb/s (8.2 Mpps) on one core that forwards 8.4 Mpps alone, and root-table
        // inserts asked at 20,000/s from the same core: the installer takes most of the core, which
        // is the bottleneck, and what it lets through is what was received (over 100 ms: the rings'
        // backlog drains after the end at the full rate, 5% more in a 20 ms run).
        let mut tb = testbed(json!({"rules": null, "duration_ns": 100_000_000,
                                   "install": {"mode": "rate", "rate_per_s": 20_000.0, "group": 0, "core": "same"}}));
        let counts = tb.run(&mut |_| {}).expect("runs");
        let r = tb.summary(&counts, 0.0);
        let b = &r.model.bottleneck_detail;
        assert_eq!(b.resource, "host_core");
        let p = &tb.p;
        let per_packet = p.nf_packet_ns + p.nf_burst_ns / p.rx_burst_packets;
        let share = tb.ctl.installer.as_ref().expect("installer").busy.as_ns_f64() / 100e6;
        assert!(
            share > 0.5 && (b.installer_share - share).abs() < 1e-12,
            "{share} {b:?}"
        );
        let want = (1.0 - share) * 1e3 / per_packet;
        assert!((b.capacity_mpps - want).abs() < 1e-9 * want, "{b:?} vs {want}");
        assert!(
            (r.rx_mpps - b.capacity_mpps).abs() < 0.02 * b.capacity_mpps,
            "received {} vs at most {}",
            r.rx_mpps,
            b.capacity_mpps
        );
        // Spreading the installer's share over the packets (offered / utilization) read far above it.
        let spread = r.offered_mpps / r.model.utilization["host_core"];
        assert!(spread > 1.5 * r.rx_mpps, "{spread} vs {}", r.rx_mpps);
        // The installer's own account: asked 20,000/s, achieved what its re-armed timer allows.
        let i = r.install.as_ref().expect("install");
        assert_eq!(i.requested_rules_per_s, Some(20_000.0));
        assert!(i.achieved_rules_per_s < 20_000.0 && i.backlog == i.requested - i.rules && i.backlog > 1);
        assert!(i.saturated_s.is_some_and(|t| t < 1e-3), "{i:?}");
    }

    #[test]
    fn test_a_root_table_bottleneck_is_named_with_its_fitted_firmware_cost() {
        // 1500 B at 100 GbE through Table 0 holding 50,000 rules the traffic hits none of: each
        // lookup walks its bucket's collision chain in firmware (50,000 / 65,536 entries on
        // average, no overflow yet), which limits the rate below the 8.2 Mpps offered.
        let mut tb = testbed(
            json!({"rules": {"generated": {"kind": "exact5", "count": 50000, "groups": 0, "seed": 2}}, "duration_ns": 10_000_000,
                                   "traffic": {"flows": 1000, "size": {"fixed": 1500}, "rate": {"gbps": 100.0}, "seed": 5}}),
        );
        let counts = tb.run(&mut |_| {}).expect("runs");
        let r = tb.summary(&counts, 0.0);
        let b = &r.model.bottleneck_detail;
        assert_eq!(
            (r.model.bottleneck.as_str(), b.resource.as_str()),
            ("root_table", "root_table")
        );
        let chain = &b.parameters["root_lookup_ns_per_chain_entry"];
        assert!(
            chain.provenance.starts_with("fitted") && chain.value == tb.p.root_lookup_ns_per_chain_entry,
            "{chain:?}"
        );
        assert!(!b.parameters.contains_key("root_lookup_base_ns"), "latency only: {b:?}");
        let load = tb.nic.inst.tables.chain_load(0);
        assert_eq!(tb.nic.inst.tables.spilled_entries(0), 0.0);
        // (to the ps: simulated durations are integer picoseconds)
        // The engine's time per packet: the chain walk plus the root table's STE read.
        assert!(
            (b.ns_per_packet - tb.p.root_lookup_ns_per_chain_entry * load - tb.p.steering.steering_lookup_ns).abs()
                <= 1e-3,
            "{b:?}"
        );
        // Lifted, the port would bind next: 1500 B at 100 GbE is 8.22 Mpps.
        assert_eq!(b.next_resource, "link", "{b:?}");
        assert!(b.next_capacity_mpps > b.capacity_mpps, "{b:?}");
        assert!(
            (b.capacity_mpps - 1e3 / b.ns_per_packet).abs() < 1e-3 * b.capacity_mpps,
            "{b:?}"
        );
        // What the run received: the backlog its full buffers held at the end drains after it and
        // counts with its time, so the rate is not above the bottleneck's.
        assert!(
            r.rx_mpps > 0.97 * b.capacity_mpps && r.rx_mpps <= 1.002 * b.capacity_mpps,
            "{} vs {b:?}",
            r.rx_mpps
        );
    }

    #[test]
    fn test_an_empty_root_table_does_not_limit_small_frames() {
        // 64 B at line rate (148.8 Mpps) over 16 queues and 16 cores, no rules: every packet takes
        // the root table, whose lookup is one STE read of the steering pipeline; its firmware adds
        // latency, not a rate limit (seed 000 §3.1: the NIC attains ~30x the 3.5 Gbps of 64 B that
        // a collapsed root table forwards).
        let mut tb = testbed(
            json!({"rules": null, "port_queues": 16, "cores": 16, "duration_ns": 1_000_000,
                                   "traffic": {"flows": 1000, "size": {"fixed": 64}, "rate": {"gbps": 100.0}, "seed": 5}}),
        );
        let counts = tb.run(&mut |_| {}).expect("runs");
        let r = tb.summary(&counts, 0.0);
        assert_eq!(r.model.utilization["root_table"], 0.0, "{:?}", r.model.utilization);
        assert_ne!(r.model.bottleneck, "root_table");
        assert!(r.rx_mpps > 60.0, "{} Mpps, {:?}", r.rx_mpps, r.model.utilization);
        // The root table's lookup latency is in the packet's latency floor.
        assert!(
            r.model.latency_floor_us["steering"] * 1e3 >= tb.p.root_lookup_base_ns,
            "{:?}",
            r.model.latency_floor_us
        );
    }
}
