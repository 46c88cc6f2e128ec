//! The study's advices (seed 004, §3–§4), each triggered by the mechanism it is about:
//! the model's own demands and utilisations for the mix, never by a size threshold.
//!
//! - `avoid_skewed_soc_writes` (Advice #1): a flow writes SoC memory (no DDIO) within a
//!   range that maps to fewer DRAM banks than the SoC has, and the SoC banks are busy.
//! - `segment_large_reads` (Advice #2/#3): a DMA of some flow overflows the completion /
//!   relay buffer (head-of-line blocking).
//! - `bound_h2s_to_p_minus_n` (§4): host↔SoC traffic shares the mix with client traffic
//!   and carries more than P − N (PCIe minus network bandwidth), or holds client traffic
//!   back on a PCIe direction both use.
//! - `doorbell_batching_soc_only` (Advice #4): a SoC requester bound by its MMIO posting
//!   without batching, or a host requester that batches and posts slower for it.
//! - `use_paths_1_and_2_concurrently` (§4): client traffic to one endpoint is bound by the
//!   NIC cores that endpoint can use, while the other endpoint's reserved cores idle.

use super::demand::{Demand, Resource};
use super::params::OffpathParams;
use super::pcie;
use super::request::{Advice, Flow, FlowChange, Requester};
use super::solve::{Limit, Solution};

fn is_pcie(r: Resource) -> bool {
    matches!(
        r,
        Resource::Pcie0Up | Resource::Pcie0Down | Resource::Pcie1Up | Resource::Pcie1Down
    )
}

pub fn advise(p: &OffpathParams, flows: &[Flow], demands: &[Demand], sol: &Solution) -> Vec<Advice> {
    let mut out = Vec::new();
    let flow_gbps = |i: usize| sol.rates[i] * flows[i].payload_bytes * 8.0 / 1e9;

    // Advice #1.
    let soc_banks = p.soc_dram_channels * p.soc_dram_banks_per_channel;
    if sol.utilization[Resource::SocDram.index()] >= 0.5 {
        if let Some((i, banks)) = demands
            .iter()
            .enumerate()
            .filter_map(|(i, d)| d.soc_write_banks.filter(|&b| b < soc_banks).map(|b| (i, b)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
        {
            out.push(Advice {
                id: "avoid_skewed_soc_writes",
                text: format!(
                    "flow {i} ({} {}) writes a {:.0}-byte address range of SoC memory, which has no DDIO: it maps to {banks:.0} of {soc_banks:.0} DRAM banks (SoC DRAM {:.0}% busy); spread the writes over at least {:.0} KiB or write to host memory",
                    flows[i].path.name(),
                    flows[i].verb.name(),
                    flows[i].address_range_bytes,
                    100.0 * sol.utilization[Resource::SocDram.index()],
                    soc_banks * p.soc_dram_interleave_bytes / 1024.0
                ),
                change: Some(FlowChange {
                    flow: i,
                    field: "in",
                    value: soc_banks * p.soc_dram_interleave_bytes,
                }),
            });
        }
    }

    // Advice #2 / #3.
    if let Some((i, d)) = demands
        .iter()
        .enumerate()
        .filter(|(_, d)| d.overflow_tlps > 0.0)
        .max_by(|a, b| a.1.overflow_tlps.total_cmp(&b.1.overflow_tlps))
    {
        let tlps = d.overflow_tlps + p.completion_buffer_entries;
        let segment = (flows[i].payload_bytes * p.completion_buffer_entries / tlps).floor();
        out.push(Advice {
            id: "segment_large_reads",
            text: format!(
                "flow {i} ({} {} of {:.0} B) needs {tlps:.0} TLPs per transfer in a {:.0}-entry completion buffer: the NIC core is head-of-line blocked; segment requests into at most {:.0} KiB",
                flows[i].path.name(),
                flows[i].verb.name(),
                flows[i].payload_bytes,
                p.completion_buffer_entries,
                segment / 1024.0
            ),
            change: Some(FlowChange {
                flow: i,
                field: "size",
                value: segment,
            }),
        });
    }

    // §4: P − N.
    let intra_gbps: f64 = (0..flows.len())
        .filter(|&i| flows[i].path.is_intra())
        .map(flow_gbps)
        .sum();
    let has_client = flows.iter().any(|f| !f.path.is_intra());
    let p_minus_n = pcie::link_gbps(p) - p.network_ports * p.network_port_gbps;
    // Either ③ already carries more than P − N, or client traffic is held back by a PCIe
    // direction (instead of the network) that ③ also loads: ③ is the hidden bottleneck (§4).
    let client_pcie_bound = (0..flows.len()).any(|i| {
        !flows[i].path.is_intra()
            && matches!(sol.flow_limits[i], Limit::Resource(r) if is_pcie(r)
                && (0..flows.len()).any(|j| flows[j].path.is_intra() && demands[j].load[r.index()] > 0.0))
    });
    if has_client && flows.iter().any(|f| f.path.is_intra()) && (intra_gbps > p_minus_n.max(0.0) || client_pcie_bound) {
        // The change, where the bound is one field: the busiest ③ flow offered its part of P − N
        // (all of it when it is the only one). Not when ③ is already within P − N (the client flows
        // are PCIe-bound all the same, and a bound of P − N would change nothing) or P − N ≤ 0.
        let busiest = (0..flows.len())
            .filter(|&i| flows[i].path.is_intra())
            .max_by(|&a, &b| flow_gbps(a).total_cmp(&flow_gbps(b)));
        let change = busiest
            .filter(|_| p_minus_n > 0.0 && intra_gbps > p_minus_n * (1.0 + 1e-9))
            .map(|i| FlowChange {
                flow: i,
                field: "@",
                value: p_minus_n * flow_gbps(i) / intra_gbps,
            });
        let (link, network) = (pcie::link_gbps(p), p.network_ports * p.network_port_gbps);
        let text = if change.is_some() || p_minus_n <= 0.0 {
            format!(
                "host<->SoC flows carry {intra_gbps:.1} Gb/s and cross PCIe1 twice, stealing it from client traffic: bound them to P - N = {link:.0} - {network:.0} = {p_minus_n:.0} Gb/s"
            )
        } else {
            // Within P − N, and still the clients stop at a PCIe direction ③ loads: P − N counts the
            // link's raw rate, and the TLP headers of both crossings take the rest.
            format!(
                "host<->SoC flows carry {intra_gbps:.1} Gb/s, within P - N = {link:.0} - {network:.0} = {p_minus_n:.0} Gb/s, and still hold client traffic below line rate on PCIe (each crossing's TLP headers count too): bound them lower"
            )
        };
        out.push(Advice {
            id: "bound_h2s_to_p_minus_n",
            text,
            change,
        });
    }

    // Advice #4.
    let mut db_text = Vec::new();
    let mut db_change = None;
    for (i, (f, d)) in flows.iter().zip(demands).enumerate() {
        let bound = sol.rates[i] >= 0.99 * d.requester_rate;
        match f.path.requester() {
            Requester::Soc
                if f.doorbell_batch <= 1.0 && bound && d.requester_rate_batch32 > 1.05 * d.requester_rate =>
            {
                db_change.get_or_insert(FlowChange {
                    flow: i,
                    field: "batch",
                    value: 32.0,
                });
                db_text.push(format!(
                    "flow {i} ({}) is bound by SoC MMIO posting: enable doorbell batching on the SoC (batch 32 posts {:.1}x faster)",
                    f.path.name(),
                    d.requester_rate_batch32 / d.requester_rate
                ));
            }
            Requester::Host if f.doorbell_batch > 1.0 && d.requester_rate < d.requester_rate_no_batch => {
                db_change.get_or_insert(FlowChange {
                    flow: i,
                    field: "batch",
                    value: 1.0,
                });
                db_text.push(format!(
                    "flow {i} ({}) batches {:.0} requests per doorbell on the host, where the NIC's WQE fetch over PCIe0 costs more than it saves ({:.0}% slower posting): disable it on the host side",
                    f.path.name(),
                    f.doorbell_batch,
                    100.0 * (1.0 - d.requester_rate / d.requester_rate_no_batch)
                ));
            }
            _ => {}
        }
    }
    if !db_text.is_empty() {
        out.push(Advice {
            id: "doorbell_batching_soc_only",
            text: db_text.join("; "),
            change: db_change,
        });
    }

    // §4: ①+②.
    if p.soc_present() {
        let to_host = flows
            .iter()
            .any(|f| !f.path.is_intra() && f.path.responder() == super::request::Endpoint::Host);
        let to_soc = flows
            .iter()
            .any(|f| !f.path.is_intra() && f.path.responder() == super::request::Endpoint::Soc);
        let endpoint_bound = matches!(
            sol.limit,
            Limit::Resource(Resource::NicCoresHost) | Limit::Resource(Resource::NicCoresSoc)
        );
        if to_host != to_soc && endpoint_bound {
            let (now, other) = if to_host { ("host", "SoC") } else { ("SoC", "host") };
            let frac = p.nic_core_endpoint_fraction;
            out.push(Advice {
                id: "use_paths_1_and_2_concurrently",
                text: format!(
                    "client requests to the {now} only are bound by the {:.0}% of NIC cores one endpoint can use; sending part of them to the {other} (paths 1 and 2 concurrently) unlocks the reserved cores (up to {:.2}x)",
                    100.0 * frac,
                    1.0 / frac
                ),
                change: None,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::offpath::tests::run;

    fn ids(nic: &str, flows: &str) -> Vec<&'static str> {
        run(nic, flows).advice.iter().map(|a| a.id).collect()
    }

    fn f(path: &str, verb: &str, n: u64, extra: &str) -> String {
        format!(r#"{{"path":"{path}","verb":"{verb}","payload_bytes":{n}{extra}}}"#)
    }

    /// Each advice: (id, mixes that must trigger it, mixes that must not).
    #[test]
    fn test_each_advice_triggered_by_its_case_only() {
        let mib16 = 16 << 20;
        let cases: Vec<(&str, Vec<String>, Vec<String>)> = vec![
            (
                "avoid_skewed_soc_writes",
                vec![format!(
                    "[{}]",
                    f("client->soc", "WRITE", 64, r#","address_range_bytes":1536"#)
                )],
                vec![
                    format!("[{}]", f("client->soc", "WRITE", 64, "")),
                    format!("[{}]", f("client->host", "WRITE", 64, r#","address_range_bytes":1536"#)),
                    format!("[{}]", f("client->soc", "READ", 64, r#","address_range_bytes":1536"#)),
                ],
            ),
            (
                "segment_large_reads",
                vec![
                    format!("[{}]", f("client->soc", "READ", mib16, "")),
                    format!("[{}]", f("host->soc", "WRITE", mib16, "")),
                ],
                vec![
                    format!("[{}]", f("client->soc", "READ", 4096, "")),
                    format!("[{}]", f("client->host", "READ", mib16, "")),
                    format!("[{}]", f("client->soc", "WRITE", mib16, "")),
                ],
            ),
            (
                "bound_h2s_to_p_minus_n",
                vec![format!(
                    "[{},{},{}]",
                    f("client->host", "READ", 4096, r#","share":0.45"#),
                    f("client->host", "WRITE", 4096, r#","share":0.45"#),
                    f("host->soc", "WRITE", 65536, r#","share":0.1"#)
                )],
                vec![
                    format!("[{}]", f("host->soc", "WRITE", 65536, "")),
                    format!(
                        "[{},{}]",
                        f("client->host", "READ", 4096, r#","share":0.99"#),
                        f("host->soc", "WRITE", 64, r#","share":0.01"#)
                    ),
                    format!(
                        "[{},{}]",
                        f("client->host", "READ", 4096, ""),
                        f("client->soc", "WRITE", 4096, "")
                    ),
                ],
            ),
            (
                "doorbell_batching_soc_only",
                vec![
                    format!("[{}]", f("soc->host", "READ", 64, "")),
                    format!("[{}]", f("host->soc", "READ", 64, r#","doorbell_batch":16"#)),
                ],
                vec![
                    format!("[{}]", f("soc->host", "READ", 64, r#","doorbell_batch":32"#)),
                    format!("[{}]", f("host->soc", "READ", 64, "")),
                    format!("[{}]", f("client->host", "READ", 64, r#","doorbell_batch":16"#)),
                    // Not bound by posting: batching would not help.
                    format!("[{}]", f("soc->host", "WRITE", 262144, "")),
                ],
            ),
            (
                "use_paths_1_and_2_concurrently",
                vec![
                    format!("[{}]", f("client->host", "READ", 64, "")),
                    format!("[{}]", f("client->soc", "WRITE", 64, "")),
                ],
                vec![
                    format!("[{}]", f("client->host", "READ", 4096, "")),
                    format!(
                        "[{},{}]",
                        f("client->host", "READ", 64, ""),
                        f("client->soc", "READ", 64, "")
                    ),
                ],
            ),
        ];
        for (id, positive, negative) in &cases {
            for mix in positive {
                let got = ids("bluefield2", mix);
                assert!(got.contains(id), "{id} not triggered by {mix}: {got:?}");
            }
            for mix in negative {
                let got = ids("bluefield2", mix);
                assert!(!got.contains(id), "{id} triggered by neutral {mix}: {got:?}");
            }
        }
        // The RNIC baseline has no SoC: no endpoint reservation to unlock.
        assert!(ids("connectx6-rnic", &format!("[{}]", f("client->host", "READ", 64, ""))).is_empty());
        // A neutral mix gets no advice at all.
        assert!(ids("bluefield2", &format!("[{}]", f("client->host", "WRITE", 65536, ""))).is_empty());
    }

    #[test]
    fn test_p_minus_n_when_h2s_holds_clients_back_on_pcie() {
        // Independent requesters (max_min), §4's setup (five client machines, 24 host threads):
        // ③ H2S gets less than P − N, but the client READs now stop at PCIe1 (down), which H2S
        // also loads, instead of the network: the hidden bottleneck.
        let id = "bound_h2s_to_p_minus_n";
        let has = |flows: &[String]| {
            crate::offpath::tests::run_mix("max_min", flows)
                .advice
                .iter()
                .any(|a| a.id == id)
        };
        let (clients, threads) = (r#","machines":5"#, r#","threads":24"#);
        assert!(has(&[
            f("client->host", "READ", 4096, clients),
            f("host->soc", "READ", 4096, threads)
        ]));
        assert!(!has(&[
            f("client->host", "READ", 4096, ""),
            f("client->soc", "WRITE", 4096, "")
        ]));
        assert!(!has(&[
            f("client->host", "READ", 4096, ""),
            f("host->soc", "READ", 64, "")
        ]));
    }

    #[test]
    fn test_p_minus_n_change_bounds_the_h2s_flow_and_is_not_asked_again_once_followed() {
        let id = "bound_h2s_to_p_minus_n";
        let client = f("client->host", "READ", 4096, "");
        let advice_of = |r: &crate::offpath::request::Result| r.advice.iter().find(|a| a.id == id).cloned();
        let before = crate::offpath::tests::run_mix("max_min", &[client.clone(), f("host->soc", "WRITE", 65536, "")]);
        let change = advice_of(&before)
            .and_then(|a| a.change)
            .expect("a bound on the H2S flow");
        assert_eq!((change.flow, change.field), (1, "@"));
        assert!(change.value > 0.0 && change.value < before.flows[1].gbps, "{change:?}");
        // Followed: H2S offered exactly the bound (requests of 64 KiB), the clients get the PCIe back.
        let offered = format!(r#","offered_mpps":{}"#, change.value * 1e9 / 8.0 / 65536.0 / 1e6);
        let after = crate::offpath::tests::run_mix("max_min", &[client, f("host->soc", "WRITE", 65536, &offered)]);
        assert!(
            after.flows[0].gbps > 1.5 * before.flows[0].gbps,
            "{} -> {}",
            before.flows[0].gbps,
            after.flows[0].gbps
        );
        assert!(
            advice_of(&after).is_none_or(|a| a.change.is_none() && a.text.contains("within P - N")),
            "{:?}",
            advice_of(&after)
        );
    }

    #[test]
    fn test_advice_texts_carry_the_numbers() {
        let r = run(
            "bluefield2",
            &format!(
                "[{},{},{}]",
                f("client->host", "READ", 4096, r#","share":0.45"#),
                f("client->host", "WRITE", 4096, r#","share":0.45"#),
                f("host->soc", "WRITE", 65536, r#","share":0.1"#)
            ),
        );
        let text = r
            .advice
            .iter()
            .find(|a| a.id == "bound_h2s_to_p_minus_n")
            .map(|a| a.text.clone())
            .unwrap_or_default();
        // P − N = 252 − 200 = 52 Gb/s (the seed's 56 uses the nominal 256 Gb/s).
        assert!(text.contains("P - N = 252 - 200 = 52 Gb/s"), "{text}");
        let seg = run("bluefield2", &format!("[{}]", f("client->soc", "READ", 16 << 20, "")));
        let text = seg
            .advice
            .iter()
            .find(|a| a.id == "segment_large_reads")
            .map(|a| a.text.clone())
            .unwrap_or_default();
        // The phenomenological threshold: 73,728 completions of 128 B = 9 MiB (seed §3.2 "above 9 MB").
        assert!(text.contains("at most 9216 KiB"), "{text}");
    }
}
