//! Building a run: the traffic's flows, the pre-installed rules in the software
//! classifier (functional path) and in the steering tables (timing path).
//!
//! Invariant (functional and timing paths agree): the timing model counts every
//! installed rule in its table and matcher; the classifier holds every rule that can
//! decide a flow's fate. For the generated `exact5` PAM'21 layout the random 5-tuples
//! (2^97 values) are not materialized: the chance that one equals one of the traffic's
//! flows is below 1e-20, so they are counted per matcher only, and the `hit_fraction`
//! rules (exact copies of traffic flows) plus the jump/default rules go to the
//! classifier. Other rule sets (ClassBench-like kinds, files, text) are installed whole.

use super::params::ConnectxParams;
use super::request::{GeneratedRules, RulesSpec};
use super::steering::{MatcherId, Tables};
use crate::error::ModelError;
use ahash::AHashMap;
use nicbench_classify::{Classifier, ClassifierConfig, PacketKey, RuleId};
use nicbench_rules::generate::{generate, RuleSetKind, GENERATED_QUEUES};
use nicbench_rules::model::{EthItem, Ipv4Item, Ipv6Item, TcpItem, UdpItem};
use nicbench_rules::ruleset::{self, Syntax};
use nicbench_rules::{Action, Attr, Field, Item, Rule};
use nicbench_wire::FlowKey;
use std::net::IpAddr;
use std::path::Path;

/// The mask signature of a rule (its matcher) and whether flows differ under it.
pub fn rule_signature(rule: &Rule) -> (String, bool) {
    fn strip(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(map) => {
                if map.contains_key("mask") {
                    map.remove("value");
                    map.remove("last");
                }
                map.values_mut().for_each(strip);
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut value = serde_json::to_value(&rule.pattern).unwrap_or_default();
    strip(&mut value);
    let varies = match &value {
        serde_json::Value::Array(items) => items.iter().any(|item| {
            let fields = item
                .as_object()
                .map_or(0, |o| o.keys().filter(|k| k.as_str() != "type").count());
            item.get("type").and_then(|t| t.as_str()) != Some("eth") && fields > 0
        }),
        _ => false,
    };
    (value.to_string(), varies)
}

fn attr(group: u32, priority: u32) -> Attr {
    Attr {
        group,
        priority,
        ingress: true,
        ..Default::default()
    }
}

/// An exact rule on a flow's addresses, protocol and ports.
pub fn exact_flow_rule(flow: &FlowKey, group: u32, priority: u32, queue: u16) -> Rule {
    let l3 = match (flow.src, flow.dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => Item::Ipv4(Ipv4Item {
            src: Some(Field::exact(s)),
            dst: Some(Field::exact(d)),
            ..Default::default()
        }),
        (IpAddr::V6(s), IpAddr::V6(d)) => Item::Ipv6(Box::new(Ipv6Item {
            src: Some(Field::exact(s)),
            dst: Some(Field::exact(d)),
            ..Default::default()
        })),
        // Mixed families do not occur in generated flows; match on IPv4 presence only.
        _ => Item::Ipv4(Ipv4Item::default()),
    };
    let l4 = if flow.proto == 6 {
        Item::Tcp(TcpItem {
            src: Some(Field::exact(flow.src_port)),
            dst: Some(Field::exact(flow.dst_port)),
            flags: None,
        })
    } else {
        Item::Udp(UdpItem {
            src: Some(Field::exact(flow.src_port)),
            dst: Some(Field::exact(flow.dst_port)),
        })
    };
    Rule {
        attr: attr(group, priority),
        pattern: vec![Item::Eth(EthItem::default()), l3, l4],
        actions: vec![Action::Queue { index: queue }],
    }
}

/// The traffic's flows as the classifier sees them.
pub struct Flows {
    pub keys: Vec<PacketKey>,
    /// Flow keys where known (generated traffic), for `hit_fraction` rules.
    pub flow_keys: Vec<FlowKey>,
}

/// Rules of the target group that updates can delete or modify.
#[derive(Default)]
pub struct GroupTargets {
    /// Classifier rules (e.g. `hit_fraction` rules): id, rule, matcher.
    pub functional: Vec<(RuleId, Rule, MatcherId)>,
    /// Counted-only entries per matcher.
    pub counted: Vec<(MatcherId, u64)>,
}

/// The installed state at the start of a run.
pub struct Installed {
    pub classifier: Classifier,
    pub tables: Tables,
    pub rule_matcher: AHashMap<RuleId, MatcherId>,
    pub targets: AHashMap<u32, GroupTargets>,
    /// Rules the firmware refused because the table was full.
    pub refused: u64,
    /// The user's rule file (a `File` or `Text` spec): what the traffic can meet of it.
    pub file_rules: Option<FileRules>,
}

/// The rules of a user's rule file as installed, to count what the traffic meets.
pub struct FileRules {
    /// Rules in the file, refused ones included.
    pub total: u64,
    /// Rules that constrain no field (a layout's catch-alls), refused ones included.
    pub catch_all: u64,
    /// The installed ones: id → constrains no field.
    pub installed: AHashMap<RuleId, bool>,
}

fn rules_error(e: impl std::fmt::Display) -> ModelError {
    ModelError::Rules(e.to_string())
}

/// Refuses, with the file and line, an `rss` action the mlx5 PMD would refuse (the queues
/// are resolved later, by the testbed, with the port's queue count).
fn check_rss_actions(file: &str, rules: &[ruleset::NumberedRule]) -> Result<(), ModelError> {
    for n in rules {
        if let Some(Action::Rss(rss)) = n.rule.actions.iter().find(|a| a.is_fate()) {
            nicbench_classify::RssQueuePicker::new(rss, 1)
                .map_err(|e| ModelError::Rules(format!("{file}:{}: {e}", n.line)))?;
        }
    }
    Ok(())
}

/// Loads the rule spec into the classifier and the tables.
pub fn install(spec: Option<&RulesSpec>, flows: &Flows, params: &ConnectxParams) -> Result<Installed, ModelError> {
    let mut functional: Vec<Rule> = Vec::new();
    let from_file = matches!(spec, Some(RulesSpec::File(_) | RulesSpec::Text(_)));
    // (group, signature, priority, varies, count) of counted-only entries.
    let mut counted: Vec<(u32, String, u32, bool, u64)> = Vec::new();
    match spec {
        None => {}
        Some(RulesSpec::Generated(g)) if matches!(g.kind, RuleSetKind::Exact5 | RuleSetKind::Exact5Tcp) => {
            generated_exact5(g, flows, &mut functional, &mut counted)?;
        }
        Some(RulesSpec::Generated(g)) => {
            let count = usize::try_from(g.count).map_err(rules_error)?;
            functional = generate(g.kind, count, g.groups, g.seed);
        }
        Some(RulesSpec::File(path)) => {
            let file = ruleset::load_path(Path::new(path), None, false).map_err(rules_error)?;
            check_rss_actions(path, &file.rules)?;
            functional = file.rules.into_iter().map(|n| n.rule).collect();
        }
        Some(RulesSpec::Text(text)) => {
            // Inline text is testpmd `flow create` lines (the scenario contract).
            let file = ruleset::load(text, "<text>", Syntax::Testpmd, false)
                .map_err(|errors| rules_error(ruleset::LoadError::Parse(errors)))?;
            check_rss_actions("<text>", &file.rules)?;
            functional = file.rules.into_iter().map(|n| n.rule).collect();
        }
    }
    let file_counts = from_file.then(|| {
        (
            functional.len() as u64,
            functional.iter().filter(|r| r.is_catch_all()).count() as u64,
        )
    });
    let mut tables = Tables::new(params);
    let mut totals: AHashMap<MatcherId, u64> = AHashMap::new();
    let mut counted_totals: AHashMap<MatcherId, u64> = AHashMap::new();
    let mut targets: AHashMap<u32, GroupTargets> = AHashMap::new();
    let mut refused = 0u64;
    let capacity = params.root_table_capacity as u64;
    for (group, sig, prio, varies, n) in &counted {
        let id = tables.matcher(*group, sig, *prio, *varies);
        *counted_totals.entry(id).or_default() += n;
        targets.entry(*group).or_default().counted.push((id, *n));
    }
    let matchers: Vec<MatcherId> = functional
        .iter()
        .map(|r| {
            let (sig, varies) = rule_signature(r);
            tables.matcher(r.attr.group, &sig, r.attr.priority, varies)
        })
        .collect();
    // Firmware tables refuse rules beyond their capacity (classifier rules first: they
    // stand for the generated rules the traffic hits).
    let mut fw_used: AHashMap<u32, u64> = AHashMap::new();
    let mut kept_rules = Vec::with_capacity(functional.len());
    let mut kept_matchers = Vec::with_capacity(functional.len());
    for (rule, id) in functional.into_iter().zip(matchers) {
        let group = rule.attr.group;
        if tables.is_fw_group(group) {
            let used = fw_used.entry(group).or_default();
            if *used >= capacity {
                refused += 1;
                continue;
            }
            *used += 1;
        }
        *totals.entry(id).or_default() += 1;
        kept_rules.push(rule);
        kept_matchers.push(id);
    }
    let mut counted_ids: Vec<MatcherId> = counted_totals.keys().copied().collect();
    counted_ids.sort_unstable();
    for id in counted_ids {
        let group = tables.matchers[id as usize].group;
        if tables.is_fw_group(group) {
            let used = fw_used.entry(group).or_default();
            let n = counted_totals.entry(id).or_default();
            let fit = (*n).min(capacity.saturating_sub(*used));
            refused += *n - fit;
            *n = fit;
            *used += fit;
        }
        *totals.entry(id).or_default() += counted_totals.get(&id).copied().unwrap_or(0);
    }
    let config = ClassifierConfig {
        count: false,
        ..ClassifierConfig::default()
    };
    let (classifier, ids) = Classifier::with_rules(config, kept_rules.iter().cloned()).map_err(rules_error)?;
    let file_rules = file_counts.map(|(total, catch_all)| FileRules {
        total,
        catch_all,
        installed: ids
            .iter()
            .zip(&kept_rules)
            .map(|(id, r)| (*id, r.is_catch_all()))
            .collect(),
    });
    let mut rule_matcher = AHashMap::with_capacity(ids.len());
    for ((id, rule), m) in ids.into_iter().zip(kept_rules).zip(kept_matchers) {
        rule_matcher.insert(id, m);
        targets
            .entry(rule.attr.group)
            .or_default()
            .functional
            .push((id, rule, m));
    }
    let mut sorted: Vec<_> = totals.into_iter().collect();
    sorted.sort_unstable();
    for (id, n) in sorted {
        tables.set_entries(id, n);
    }
    Ok(Installed {
        classifier,
        tables,
        rule_matcher,
        targets,
        refused,
        file_rules,
    })
}

/// The PAM'21 layout of `nicbench_rules::generate` for `exact5`, with `hit_fraction`.
fn generated_exact5(
    g: &GeneratedRules,
    flows: &Flows,
    functional: &mut Vec<Rule>,
    counted: &mut Vec<(u32, String, u32, bool, u64)>,
) -> Result<(), ModelError> {
    let hits = ((g.hit_fraction * flows.keys.len() as f64).round() as u64).min(g.count);
    if hits > 0 && flows.flow_keys.len() < hits as usize {
        return Err(ModelError::Rules(
            "hit_fraction needs generated traffic (flow keys)".into(),
        ));
    }
    let t = u64::from(g.groups);
    let group_of = |i: u64| if t == 0 { 0 } else { 1 + (i % t) as u32 };
    let per_group = |grp: u32| -> u64 {
        match g.count.checked_div(t) {
            None => g.count,
            Some(base) => base + u64::from(u64::from(grp - 1) < g.count % t),
        }
    };
    // Template rules give the two masks `generate` uses (TCP or UDP 5-tuples, ~half each; TCP
    // only for `exact5_tcp`).
    let probe = |proto: u8| FlowKey {
        src: IpAddr::from([10, 0, 0, 1]),
        dst: IpAddr::from([10, 0, 0, 2]),
        proto,
        src_port: 1,
        dst_port: 2,
        vlan: None,
        vni: None,
    };
    let (tcp_sig, _) = rule_signature(&exact_flow_rule(&probe(6), 0, 0, 0));
    let (udp_sig, _) = rule_signature(&exact_flow_rule(&probe(17), 0, 0, 0));
    if t > 0 {
        functional.push(Rule {
            attr: attr(0, 0),
            pattern: vec![Item::Eth(EthItem::default())],
            actions: vec![Action::Jump { group: 1 }],
        });
    }
    let mut hits_in = vec![0u64; t as usize + 1];
    for j in 0..hits {
        let grp = group_of(j);
        let queue = (j % u64::from(GENERATED_QUEUES)) as u16;
        functional.push(exact_flow_rule(&flows.flow_keys[j as usize], grp, 0, queue));
        hits_in[grp as usize] += 1;
    }
    let groups: Vec<u32> = if t == 0 { vec![0] } else { (1..=g.groups).collect() };
    for grp in groups {
        let n = per_group(grp).saturating_sub(hits_in[grp as usize]);
        if g.kind == RuleSetKind::Exact5Tcp {
            // One mask per table (the PAM'21 authors' rules are all TCP 5-tuples).
            counted.push((grp, tcp_sig.clone(), 0, true, n));
        } else {
            counted.push((grp, tcp_sig.clone(), 0, true, n / 2));
            counted.push((grp, udp_sig.clone(), 0, true, n - n / 2));
        }
        if t > 0 {
            let fate = if u64::from(grp) == t {
                Action::Queue { index: 0 }
            } else {
                Action::Jump { group: grp + 1 }
            };
            functional.push(Rule {
                attr: attr(grp, 1),
                pattern: vec![Item::Eth(EthItem::default())],
                actions: vec![fate],
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connectx::params::tests::test_params;
    use nicbench_classify::Verdict;

    fn flows(n: u32) -> Flows {
        let config = nicbench_traffic::TrafficConfig {
            flows: n,
            size: nicbench_traffic::SizeSpec::Fixed(128),
            ..Default::default()
        };
        let gen = nicbench_traffic::TrafficGen::new(&config).expect("config");
        let flow_keys = gen.flows().to_vec();
        let keys = flow_keys
            .iter()
            .map(|k| PacketKey::from_ethernet(&nicbench_traffic::flows::frame_spec(k, 128).build().expect("frame")))
            .collect();
        Flows { keys, flow_keys }
    }

    #[test]
    fn test_signature_ignores_values() {
        let f = flows(2);
        let (a, va) = rule_signature(&exact_flow_rule(&f.flow_keys[0], 1, 0, 0));
        let (b, _) = rule_signature(&exact_flow_rule(&f.flow_keys[1], 1, 0, 3));
        assert_eq!(a, b);
        assert!(va);
        let default = Rule {
            attr: attr(1, 1),
            pattern: vec![Item::Eth(EthItem::default())],
            actions: vec![],
        };
        let (d, vd) = rule_signature(&default);
        assert_ne!(a, d);
        assert!(!vd);
    }

    #[test]
    fn test_counted_layout_agrees_with_generate() {
        // The functional classification of the traffic equals the one with the full set.
        let f = flows(50);
        let spec = GeneratedRules {
            kind: RuleSetKind::Exact5,
            count: 400,
            groups: 4,
            seed: 3,
            hit_fraction: 0.0,
        };
        let inst = install(Some(&RulesSpec::Generated(spec)), &f, &test_params()).expect("install");
        let (full, _) = Classifier::with_rules(ClassifierConfig::default(), generate(RuleSetKind::Exact5, 400, 4, 3))
            .expect("full");
        let (a, b) = (inst.classifier.reader(), full.reader());
        for k in &f.keys {
            let (x, y) = (a.lookup(k), b.lookup(k));
            assert_eq!((x.verdict, x.groups_traversed), (y.verdict, y.groups_traversed));
            assert_eq!(x.groups_traversed, 5);
        }
        assert_eq!((1..=4).map(|g| inst.tables.group_entries(g)).sum::<u64>(), 400 + 4);
        assert_eq!(inst.tables.group_entries(0), 1);
    }

    #[test]
    fn test_hit_fraction_and_root_capacity() {
        let f = flows(100);
        let p = test_params();
        let spec = GeneratedRules {
            kind: RuleSetKind::Exact5,
            count: 100_000,
            groups: 0,
            seed: 1,
            hit_fraction: 0.25,
        };
        let inst = install(Some(&RulesSpec::Generated(spec)), &f, &p).expect("install");
        assert_eq!(inst.tables.group_entries(0), p.root_table_capacity as u64);
        assert_eq!(inst.refused, 100_000 - p.root_table_capacity as u64);
        let r = inst.classifier.reader();
        let hit = f
            .keys
            .iter()
            .filter(|k| matches!(r.lookup(k).verdict, Verdict::Fate(_)))
            .count();
        assert_eq!(hit, 25);
    }
}
