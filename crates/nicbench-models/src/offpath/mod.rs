//! Off-path SmartNIC model (BlueField-2 and its ConnectX-6 RNIC baseline; seed 004,
//! Wei et al., "A Comprehensive Study on Off-path SmartNIC").
//!
//! ```text
//!  clients ══ network_in/out (2×100G) ══ NIC cores (contexts; share per endpoint)
//!                                            │ PCIe1 (up: NIC→switch, down: switch→NIC)
//!                                        PCIe switch ── SoC: 8×A72, 1-channel DRAM, MTU 128 B
//!                                            │ PCIe0 (up: switch→host, down: host→switch)
//!                                        host: 24 cores, LLC/DDIO, 8-channel DRAM, MTU 512 B
//!  paths: ① client->host  ② client->soc  ③ host->soc (H2S) / soc->host (S2H, PCIe1 twice)
//! ```
//!
//! - [`params`]: typed parameters of `profiles/{bluefield2,connectx6-rnic}.toml`.
//! - [`request`]: the request/response contract (JSON; schema in `docs/contracts/`).
//! - [`pcie`]: TLP arithmetic per link and direction.
//! - [`demand`]: what one request of a flow costs every resource; latency segments.
//! - [`solve`]: joint bottleneck of a mix; M/D/1 wait at an offered load.
//! - [`advice`]: the study's advices, triggered by the mechanisms.
//!
//! Invariants: analytic and pure (a prediction is a function of request + profile);
//! every number comes from the profile (no published result is looked up); every
//! parameter can be overridden by name for calibration.

pub mod advice;
pub mod demand;
pub mod params;
pub mod pcie;
pub mod request;
pub mod solve;

pub use demand::{Demand, Resource};
pub use params::OffpathParams;
pub use request::{CommPath, Flow, Request, Verb};

use crate::error::ModelError;
use crate::model::{Model, ProfileKind};
use crate::profile::{profiles_dir, Profile};
use request::{FlowResult, PcieMpps};
use std::collections::BTreeMap;

/// The `kind` of the profiles this model reads.
pub const KIND: &str = "offpath";

/// The off-path SmartNIC model in the registry: a [`Request`] (a mix of flows) in, a
/// [`request::Result`] out. Analytic: it reports no progress.
pub struct Offpath;

impl Model for Offpath {
    const NAME: &'static str = "offpath";
    const SUMMARY: &'static str =
        "BlueField-2 off-path SmartNIC and ConnectX-6 RNIC: RDMA paths over NIC cores, PCIe and the SoC (Wei et al.)";
    const PROFILE_KINDS: &'static [&'static str] = &[KIND];
    type Request = Request;
    type Result = request::Result;

    fn request_from_json(text: &str) -> Result<Request, ModelError> {
        Request::from_json(text)
    }

    fn run(request: &Request, _progress: &mut dyn FnMut(u64)) -> Result<request::Result, ModelError> {
        predict(request)
    }
}

/// The `offpath` profile kind: the parameters of [`OffpathParams`].
pub const PROFILE_KIND: ProfileKind = ProfileKind {
    name: KIND,
    check: |p| p.params::<OffpathParams>().map(drop),
};

/// Loads the request's profile (with overrides) and predicts the mix.
pub fn predict(request: &Request) -> Result<request::Result, ModelError> {
    let mut profile = Profile::load(&request.nic, &profiles_dir(request.profiles_dir.as_deref()))?;
    profile.apply_overrides(&request.overrides)?;
    let params: OffpathParams = profile.params()?;
    let flows = request.flows()?;
    predict_flows(&profile.name, &params, &flows, request.mix_mode()?)
}

fn pcie_mpps(tlps: &[f64; 4], rate: f64) -> PcieMpps {
    use pcie::LinkDir;
    let at = |d: LinkDir| tlps[d.index()] * rate / 1e6;
    PcieMpps {
        pcie0_up: at(LinkDir::Pcie0Up),
        pcie0_down: at(LinkDir::Pcie0Down),
        pcie1_up: at(LinkDir::Pcie1Up),
        pcie1_down: at(LinkDir::Pcie1Down),
    }
}

/// Predicts validated flows with typed parameters.
pub fn predict_flows(
    nic: &str,
    params: &OffpathParams,
    flows: &[Flow],
    mode: solve::MixMode,
) -> Result<request::Result, ModelError> {
    let demands = flows
        .iter()
        .map(|f| demand::demand(params, f))
        .collect::<Result<Vec<_>, _>>()?;
    let sol = solve::solve(flows, &demands, mode)?;
    let mut total_tlps = [0.0; 4];
    let mut total_data_tlps = [0.0; 4];
    let results: Vec<FlowResult> = flows
        .iter()
        .zip(&demands)
        .enumerate()
        .map(|(i, (f, d))| {
            let rate = sol.rates[i];
            for (t, x) in total_tlps.iter_mut().zip(d.pcie.tlps.iter()) {
                *t += x * rate;
            }
            for (t, x) in total_data_tlps.iter_mut().zip(d.pcie.data_tlps.iter()) {
                *t += x * rate;
            }
            FlowResult {
                path: f.path.name(),
                verb: f.verb.name(),
                payload_bytes: f.payload_bytes,
                share: f.share,
                gbps: rate * f.payload_bytes * 8.0 / 1e9,
                mpps: rate / 1e6,
                latency_us: sol.latency_ns[i].map(|ns| ns / 1e3),
                posting_latency_us: d.posting_ns / 1e3,
                saturated: sol.saturated[i],
                pcie_mpps: pcie_mpps(&d.pcie.tlps, rate),
                pcie_data_mpps: pcie_mpps(&d.pcie.data_tlps, rate),
                bottleneck: sol.flow_limits[i].name(),
            }
        })
        .collect();
    let mut utilization: BTreeMap<&'static str, f64> = Resource::ALL
        .iter()
        .map(|r| (r.name(), sol.utilization[r.index()]))
        .collect();
    utilization.insert("requester", sol.requester_utilization);
    let bottleneck_utilization = match sol.limit {
        solve::Limit::Resource(r) => sol.utilization[r.index()],
        solve::Limit::Requester => sol.requester_utilization,
        solve::Limit::OfferedLoad => sol.utilization.iter().copied().fold(0.0, f64::max),
    };
    let mode_name = match mode {
        solve::MixMode::Shares => "shares",
        solve::MixMode::MaxMin => "max_min",
    };
    Ok(request::Result {
        nic: nic.to_string(),
        mix: mode_name,
        total_gbps: results.iter().map(|r| r.gbps).sum(),
        total_mpps: results.iter().map(|r| r.mpps).sum(),
        flows: results,
        pcie_mpps: pcie_mpps(&total_tlps, 1.0),
        pcie_data_mpps: pcie_mpps(&total_data_tlps, 1.0),
        bottleneck: sol.limit.name(),
        bottleneck_utilization,
        utilization,
        advice: advice::advise(params, flows, &demands, &sol),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::tests::dir as profiles_dir;

    /// Predicts `flows` (JSON array text) on `nic` with `overrides` (JSON object text).
    pub(crate) fn run_with(nic: &str, flows: &str, overrides: &str) -> request::Result {
        let json = format!(
            r#"{{"nic":"{nic}","profiles_dir":"{}","overrides":{overrides},"flows":{flows}}}"#,
            profiles_dir().display()
        );
        let request = Request::from_json(&json).unwrap_or_else(|e| panic!("{json}: {e}"));
        predict(&request).unwrap_or_else(|e| panic!("{json}: {e}"))
    }

    pub(crate) fn run(nic: &str, flows: &str) -> request::Result {
        run_with(nic, flows, "{}")
    }

    fn one(nic: &str, path: &str, verb: &str, n: u64) -> request::Result {
        run(
            nic,
            &format!(r#"[{{"path":"{path}","verb":"{verb}","payload_bytes":{n}}}]"#),
        )
    }

    #[test]
    #[ignore = "prints the sample table of the report"]
    fn print_samples() {
        for verb in ["READ", "WRITE", "SEND"] {
            for n in [0u64, 64, 512, 4096, 65536, 262144, 16 << 20] {
                let mut line = format!("{verb:5} {n:>9}");
                for (nic, path) in [
                    ("connectx6-rnic", "client->host"),
                    ("bluefield2", "client->host"),
                    ("bluefield2", "client->soc"),
                    ("bluefield2", "host->soc"),
                    ("bluefield2", "soc->host"),
                ] {
                    let r = one(nic, path, verb, n);
                    line += &format!(
                        " | {:6.1}G {:6.1}M {:5.2}us {:>14}",
                        r.total_gbps,
                        r.total_mpps,
                        r.flows[0].latency_us.unwrap_or(f64::NAN),
                        r.bottleneck
                    );
                }
                println!("{line}");
            }
        }
    }

    fn flow_json(path: &str, verb: &str, n: u64, extra: &str) -> String {
        format!(r#"{{"path":"{path}","verb":"{verb}","payload_bytes":{n}{extra}}}"#)
    }

    #[test]
    fn test_bottleneck_per_case() {
        let kib = 1024;
        let cases: [(&str, &str, &str, u64, &str, &str); 12] = [
            // 0-B READs return before PCIe: only NIC cores work (§4).
            ("connectx6-rnic", "client->host", "READ", 0, "", "nic_cores"),
            // Small READs: NIC cores stalled on PCIe round trips (§3.1); one endpoint's share.
            ("bluefield2", "client->host", "READ", 64, "", "nic_cores_host"),
            ("bluefield2", "client->soc", "READ", 64, "", "nic_cores_soc"),
            // Large requests: the 200 Gbps network (§3.1 "Bluefield-2's 200 Gbps NIC is the bottleneck").
            ("bluefield2", "client->host", "READ", 4 * kib, "", "network_out"),
            ("bluefield2", "client->soc", "WRITE", 64 * kib, "", "network_in"),
            // Skewed WRITEs to SoC memory: DRAM banks (Fig. 7).
            (
                "bluefield2",
                "client->soc",
                "WRITE",
                64,
                r#","address_range_bytes":1536"#,
                "soc_dram",
            ),
            // Huge READs to SoC memory: head-of-line blocked NIC cores (§3.2).
            ("bluefield2", "client->soc", "READ", 16 * kib * kib, "", "nic_cores_soc"),
            // Small host↔SoC requests: the requester's processor (§3.3).
            ("bluefield2", "host->soc", "READ", 64, "", "requester"),
            ("bluefield2", "soc->host", "READ", 64, "", "requester"),
            // Larger host↔SoC requests: PCIe1 (uni-directional PCIe, §3.3).
            ("bluefield2", "soc->host", "WRITE", 256 * kib, "", "pcie1_down"),
            // Two-sided: responder CPUs (§2.1, §3.2).
            ("connectx6-rnic", "client->host", "SEND", 64, "", "host_cpu"),
            ("bluefield2", "client->soc", "SEND", 64, "", "soc_cpu"),
        ];
        for (nic, path, verb, n, extra, want) in cases {
            let r = run(nic, &format!("[{}]", flow_json(path, verb, n, extra)));
            assert_eq!(
                r.bottleneck, want,
                "{nic} {path} {verb} {n} {extra}: {:?}",
                r.utilization
            );
            assert!((r.bottleneck_utilization - 1.0).abs() < 1e-9, "{nic} {path} {verb} {n}");
            assert!(r.utilization.values().all(|&u| u <= 1.0 + 1e-9), "{:?}", r.utilization);
        }
    }

    #[test]
    fn test_seed_shapes_single_paths() {
        let gbps = |nic, path, verb, n| one(nic, path, verb, n).total_gbps;
        let mpps = |nic, path, verb, n| one(nic, path, verb, n).total_mpps;
        // §3.1: SNIC 1 READ/WRITE small throughput below the RNIC's (seed: 19–26%, 15–22%; the
        // study's predictions: READ -32%, a known miss, WRITE within the range), READ losing more.
        let read_drop =
            1.0 - mpps("bluefield2", "client->host", "READ", 64) / mpps("connectx6-rnic", "client->host", "READ", 64);
        assert!((0.15..0.40).contains(&read_drop), "{read_drop}");
        let write_drop =
            1.0 - mpps("bluefield2", "client->host", "WRITE", 64) / mpps("connectx6-rnic", "client->host", "WRITE", 64);
        assert!(
            (0.10..0.25).contains(&write_drop) && write_drop < read_drop,
            "{write_drop}"
        );
        // §3.2: SNIC 2 READ beats SNIC 1 (1.08–1.48x; the study's ±15% on the upper end). (The seed's
        // "even observably higher than RNIC ①" is a study prediction the fitted profile misses: 0.93x.)
        let two_over_one =
            mpps("bluefield2", "client->soc", "READ", 64) / mpps("bluefield2", "client->host", "READ", 64);
        assert!((1.08..1.48 * 1.15).contains(&two_over_one), "{two_over_one}");
        // §3.1/Fig. 8a: large requests reach ~191 Gbps (network bound).
        for path in ["client->host", "client->soc"] {
            let g = gbps("bluefield2", path, "WRITE", 65536);
            assert!((185.0..200.0).contains(&g), "{path}: {g}");
        }
        // §3.2/Fig. 8: READ to SoC collapses for huge payloads, READ to host does not.
        let big = 32u64 << 20;
        assert!(
            gbps("bluefield2", "client->soc", "READ", big) < 0.7 * gbps("bluefield2", "client->soc", "READ", 4 << 20)
        );
        assert!(gbps("bluefield2", "client->host", "READ", big) > 185.0);
        // §3.3/Fig. 9: path 3 reaches ~204 Gbps at 256 KB and collapses towards ~100 Gbps for large ones.
        let s2h = gbps("bluefield2", "soc->host", "READ", 256 << 10);
        assert!((190.0..215.0).contains(&s2h), "{s2h}");
        for verb in ["READ", "WRITE"] {
            let g = gbps("bluefield2", "host->soc", verb, 32 << 20);
            assert!(g < 130.0, "{verb}: {g}");
        }
        // §3.3: 51.2 and 29 M READ/s for H2S and S2H with small payloads (calibration entries, ±3%).
        assert!((mpps("bluefield2", "host->soc", "READ", 64) / 51.2 - 1.0).abs() < 0.03);
        assert!((mpps("bluefield2", "soc->host", "READ", 64) / 29.0 - 1.0).abs() < 0.03);
    }

    #[test]
    fn test_seed_shapes_latency() {
        let lat = |nic, path, verb, n| {
            one(nic, path, verb, n).flows[0]
                .latency_us
                .expect("closed loop has a latency")
        };
        // §3.1: SNIC 1 adds ~0.6 us to READ and ~0.4 us to WRITE (switch + PCIe1 each way).
        let read_extra =
            lat("bluefield2", "client->host", "READ", 64) - lat("connectx6-rnic", "client->host", "READ", 64);
        let write_extra =
            lat("bluefield2", "client->host", "WRITE", 64) - lat("connectx6-rnic", "client->host", "WRITE", 64);
        assert!(
            (0.45..0.75).contains(&read_extra) && (0.2..0.5).contains(&write_extra),
            "{read_extra} {write_extra}"
        );
        assert!(read_extra > write_extra);
        // §3.2: READ to SoC is faster than to the host but slower than the RNIC.
        let soc = lat("bluefield2", "client->soc", "READ", 64);
        assert!(
            soc < lat("bluefield2", "client->host", "READ", 64)
                && soc > lat("connectx6-rnic", "client->host", "READ", 64)
        );
        // §3.3: S2H READ latency is the highest; H2S is above SNIC 2.
        let s2h = lat("bluefield2", "soc->host", "READ", 64);
        let h2s = lat("bluefield2", "host->soc", "READ", 64);
        assert!(s2h > h2s && h2s > soc, "{s2h} {h2s} {soc}");
        // Fig. 10a: posting from the SoC takes longer than from the host.
        let post = |path| one("bluefield2", path, "READ", 64).flows[0].posting_latency_us;
        assert!(post("soc->host") > post("host->soc"));
    }

    #[test]
    fn test_concurrent_paths() {
        let pair = |a: String, b: String| run("bluefield2", &format!("[{a},{b}]"));
        let kib4 = 4096;
        // Fig. 5b: READ+WRITE (opposite directions) ~364 Gbps; same direction ~190 Gbps.
        let opposite = pair(
            flow_json("client->host", "READ", kib4, ""),
            flow_json("client->host", "WRITE", kib4, ""),
        );
        let same = pair(
            flow_json("client->host", "READ", kib4, ""),
            flow_json("client->soc", "READ", kib4, ""),
        );
        assert!((350.0..400.0).contains(&opposite.total_gbps), "{}", opposite.total_gbps);
        assert!((180.0..200.0).contains(&same.total_gbps), "{}", same.total_gbps);
        // Path 3 uses both directions of PCIe1: opposite directions do not double it.
        let p3 = pair(
            flow_json("host->soc", "READ", 65536, ""),
            flow_json("host->soc", "WRITE", 65536, ""),
        );
        assert!(
            p3.total_gbps < 215.0 && p3.bottleneck.starts_with("pcie1"),
            "{} {}",
            p3.total_gbps,
            p3.bottleneck
        );
        // §4: 0-B READs to host and SoC together beat one path (seed: 4–13%): alone, a path
        // uses its endpoint's reserved fraction of the cores; together, all of them.
        let alone = one("bluefield2", "client->host", "READ", 0).total_mpps;
        let both = pair(
            flow_json("client->host", "READ", 0, ""),
            flow_json("client->soc", "READ", 0, ""),
        )
        .total_mpps;
        let host_fraction = crate::offpath::demand::tests::bf2().nic_core_endpoint_fraction;
        assert!(
            both / alone > 1.04 && (both / alone - 1.0 / host_fraction).abs() < 1e-6,
            "{both} {alone}"
        );
        assert!((both / 195.0 - 1.0).abs() < 0.02, "{both}"); // a calibration entry (seed §4)
                                                              // §4: small READs to both endpoints beat the slower path by up to 1.45x (the study's ±15%)
                                                              // and the faster one too ("typically faster than each of them").
        let r1 = one("bluefield2", "client->host", "READ", 64).total_mpps;
        let r2 = one("bluefield2", "client->soc", "READ", 64).total_mpps;
        let r12 = pair(
            flow_json("client->host", "READ", 64, ""),
            flow_json("client->soc", "READ", 64, ""),
        )
        .total_mpps;
        assert!(r12 > r2 && (1.3..1.45 * 1.15).contains(&(r12 / r1)), "{r1} {r2} {r12}");
        // §4: adding H2S traffic to saturated path-1 clients costs them throughput (small requests).
        let p1 = one("bluefield2", "client->host", "WRITE", 64).flows[0].mpps;
        let mixed = pair(
            flow_json("client->host", "WRITE", 64, r#","share":0.8"#),
            flow_json("host->soc", "WRITE", 64, r#","share":0.2"#),
        );
        assert!(mixed.flows[0].mpps < 0.95 * p1, "{} {p1}", mixed.flows[0].mpps);
    }

    #[test]
    fn test_offered_load_queueing_and_saturation() {
        let at = |mpps: f64| {
            run(
                "bluefield2",
                &format!(
                    "[{}]",
                    flow_json("client->soc", "READ", 64, &format!(r#","offered_mpps":{mpps}"#))
                ),
            )
        };
        let idle = at(1.0);
        let busy = at(70.0);
        let peak = one("bluefield2", "client->soc", "READ", 64);
        assert_eq!(idle.bottleneck, "offered_load");
        assert!((idle.total_mpps - 1.0).abs() < 1e-9);
        let (l_idle, l_busy) = (
            idle.flows[0].latency_us.expect("finite"),
            busy.flows[0].latency_us.expect("finite"),
        );
        let l_peak = peak.flows[0].latency_us.expect("closed loop");
        assert!(l_idle > l_peak && l_idle - l_peak < 0.01, "{l_idle} {l_peak}");
        // M/D/1 at the NIC cores: rho = 70/85 → W = rho·S / (2(1 − rho)), S = 1/85 M/s.
        let rho = 70.0 / peak.total_mpps;
        let want = rho / (peak.total_mpps * 1e6) / (2.0 * (1.0 - rho)) * 1e6;
        assert!((l_busy - l_peak - want).abs() < 1e-6, "{l_busy} {l_peak} {want}");
        let over = at(100.0);
        assert!(over.flows[0].saturated && over.flows[0].latency_us.is_none());
        assert!((over.total_mpps - peak.total_mpps).abs() < 1e-6);
        assert!(!idle.flows[0].saturated);
    }

    #[test]
    fn test_json_contract_and_errors() {
        let dir = profiles_dir().display().to_string();
        let ok = crate::model::run_json::<Offpath>(
            &format!(
                r#"{{"nic":"bluefield2","profiles_dir":"{dir}","flows":[{}]}}"#,
                flow_json("soc->host", "READ", 4096, r#","doorbell_batch":16,"threads":2"#)
            ),
            &mut |_| {},
        )
        .expect("valid");
        let v: serde_json::Value = serde_json::from_str(&ok).expect("json");
        for key in [
            "nic",
            "flows",
            "total_gbps",
            "total_mpps",
            "bottleneck",
            "bottleneck_utilization",
            "utilization",
            "advice",
            "pcie_mpps",
        ] {
            assert!(v.get(key).is_some(), "{key}: {ok}");
        }
        let f = &v["flows"][0];
        for key in [
            "path",
            "verb",
            "payload_bytes",
            "gbps",
            "mpps",
            "latency_us",
            "posting_latency_us",
            "saturated",
            "pcie_mpps",
        ] {
            assert!(f.get(key).is_some(), "{key}");
        }
        for key in ["pcie0_up", "pcie0_down", "pcie1_up", "pcie1_down"] {
            assert!(f["pcie_mpps"][key].as_f64().is_some_and(|x| x > 0.0), "{key}");
        }
        assert_eq!(
            v["utilization"].as_object().map(|o| o.len()),
            Some(Resource::ALL.len() + 1)
        );
        let err = |json: String| {
            crate::model::run_json::<Offpath>(&json, &mut |_| {})
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        let flows = format!("[{}]", flow_json("client->soc", "READ", 64, ""));
        let cases = [
            (
                format!(r#"{{"nic":"nope","profiles_dir":"{dir}","flows":{flows}}}"#),
                "'nope' not found",
            ),
            (
                format!(r#"{{"nic":"connectx6-rnic","profiles_dir":"{dir}","flows":{flows}}}"#),
                "plain RNIC",
            ),
            (
                format!(r#"{{"nic":"connectx5","profiles_dir":"{dir}","flows":{flows}}}"#),
                "not the offpath model",
            ),
            (
                format!(r#"{{"nic":"bluefield2","profiles_dir":"{dir}","overrides":{{"bogus":1}},"flows":{flows}}}"#),
                "unknown parameter 'bogus'",
            ),
            (
                format!(
                    r#"{{"nic":"bluefield2","profiles_dir":"{dir}","flows":[{}]}}"#,
                    flow_json("client->soc", "ATOMIC", 64, "")
                ),
                "unknown verb",
            ),
        ];
        for (json, want) in cases {
            let msg = err(json);
            assert!(msg.contains(want) && !msg.contains('\n'), "{want}: {msg}");
        }
    }

    #[test]
    fn test_overrides_change_the_prediction() {
        let flows = format!("[{}]", flow_json("client->soc", "READ", 16 << 20, ""));
        let base = run("bluefield2", &flows);
        let bigger = run_with("bluefield2", &flows, r#"{"completion_buffer_entries": 262144}"#);
        assert!(
            bigger.total_gbps > 185.0 && base.total_gbps < 150.0,
            "{} {}",
            bigger.total_gbps,
            base.total_gbps
        );
        assert_eq!(bigger.bottleneck, "network_out");
    }

    pub(crate) fn run_mix(mode: &str, flows: &[String]) -> request::Result {
        let json = format!(
            r#"{{"nic":"bluefield2","profiles_dir":"{}","mix":"{mode}","flows":[{}]}}"#,
            profiles_dir().display(),
            flows.join(",")
        );
        predict(&Request::from_json(&json).expect("json")).expect("valid")
    }

    #[test]
    fn test_max_min_mix() {
        // §4: 0-B READs to host and SoC by independent requesters share the NIC cores.
        let both = run_mix(
            "max_min",
            &[
                flow_json("client->host", "READ", 0, ""),
                flow_json("client->soc", "READ", 0, ""),
            ],
        );
        assert_eq!(both.mix, "max_min");
        assert!((both.total_mpps / 195.0 - 1.0).abs() < 0.02 && (both.flows[0].mpps - both.flows[1].mpps).abs() < 1e-6);
        assert_eq!(both.bottleneck, "nic_cores");
        // A requester-bound flow freezes; the other takes the rest (here, with equal weights given:
        // H2S posting at 51.2 M/s cannot use its fair half, the client flow grows until the NIC
        // cores saturate).
        let mixed = run_mix(
            "max_min",
            &[
                flow_json("client->soc", "READ", 0, r#","share":0.5"#),
                flow_json("host->soc", "READ", 0, r#","share":0.5"#),
            ],
        );
        assert_eq!(mixed.flows[1].bottleneck, "requester");
        // The host's posting rate, fitted to the seed's 51.2 M READ/s (a calibration entry).
        assert!(
            (mixed.flows[1].mpps / 51.2 - 1.0).abs() < 0.02,
            "{}",
            mixed.flows[1].mpps
        );
        assert!(mixed.flows[0].mpps > mixed.flows[1].mpps && mixed.flows[0].bottleneck.starts_with("nic_cores"));
        let shares = run_mix(
            "shares",
            &[
                flow_json("client->soc", "READ", 0, ""),
                flow_json("host->soc", "READ", 0, ""),
            ],
        );
        assert!(mixed.total_mpps > shares.total_mpps);
        // No share given: weights = queue pairs (round-robin QP arbitration). 5 client machines
        // x 12 threads vs 24 host threads: 60:24 while both grow; the client flow keeps the
        // larger part of the saturated NIC cores (seed §4: ① drops only 7-27% when ③ starts).
        let qp = run_mix(
            "max_min",
            &[
                flow_json("client->host", "READ", 64, r#","machines":5"#),
                flow_json("host->soc", "READ", 64, ""),
            ],
        );
        assert!((qp.flows[0].share - 60.0 / 84.0).abs() < 1e-12, "{}", qp.flows[0].share);
        let alone = run_mix("max_min", &[flow_json("client->host", "READ", 64, r#","machines":5"#)]);
        let drop = 1.0 - qp.flows[0].mpps / alone.flows[0].mpps;
        assert!(
            (0.0..0.2).contains(&drop) && qp.flows[1].mpps < qp.flows[0].mpps,
            "{drop}"
        );
        // One flow alone: both modes agree.
        let a = run_mix("max_min", &[flow_json("client->host", "WRITE", 4096, "")]);
        let b = run_mix("shares", &[flow_json("client->host", "WRITE", 4096, "")]);
        assert!((a.total_gbps - b.total_gbps).abs() < 1e-6 && a.bottleneck == b.bottleneck);
        let bad = format!(
            r#"{{"nic":"bluefield2","mix":"fifo","flows":[{}]}}"#,
            flow_json("client->host", "READ", 0, "")
        );
        let msg = crate::model::run_json::<Offpath>(&bad, &mut |_| {})
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(msg.contains("unknown mix 'fifo'"), "{msg}");
    }

    #[test]
    #[ignore = "prints the seed's concurrency scenarios"]
    fn print_concurrency() {
        let show = |name: &str, mode: &str, flows: &[String]| {
            let r = run_mix(mode, flows);
            let per: Vec<String> = r
                .flows
                .iter()
                .map(|f| format!("{} {} {:.1}G {:.1}M [{}]", f.path, f.verb, f.gbps, f.mpps, f.bottleneck))
                .collect();
            println!(
                "{name:28} {mode:7} total {:6.1}G {:6.1}M {:14} | {}",
                r.total_gbps,
                r.total_mpps,
                r.bottleneck,
                per.join(" | ")
            );
        };
        for mode in ["shares", "max_min"] {
            for verb in ["READ", "WRITE", "SEND"] {
                show(
                    &format!("1+2 {verb} 64"),
                    mode,
                    &[
                        flow_json("client->host", verb, 64, ""),
                        flow_json("client->soc", verb, 64, ""),
                    ],
                );
                show(
                    &format!("1 {verb} 64"),
                    mode,
                    &[flow_json("client->host", verb, 64, "")],
                );
                show(
                    &format!("1+3 {verb} 64"),
                    mode,
                    &[
                        flow_json("client->host", verb, 64, ""),
                        flow_json("host->soc", verb, 64, ""),
                    ],
                );
            }
            show(
                "1 R+W 4K",
                mode,
                &[
                    flow_json("client->host", "READ", 4096, ""),
                    flow_json("client->host", "WRITE", 4096, ""),
                ],
            );
            show(
                "1R+1W+3W 64K",
                mode,
                &[
                    flow_json("client->host", "READ", 65536, ""),
                    flow_json("client->host", "WRITE", 65536, ""),
                    flow_json("host->soc", "WRITE", 65536, ""),
                ],
            );
        }
    }
}
