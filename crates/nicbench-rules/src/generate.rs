//! Seeded synthetic rule sets for benchmarks and the PAM'21 group-chain study.
//!
//! - `Exact5`: distinct exact IPv4 5-tuples (TCP or UDP), all at priority 0.
//! - `Acl`, `Fw`, `Ipc`: ClassBench-like filters (prefixes on src/dst, port ranges), built
//!   as [`ClassBenchFilter`]s and mapped like a ClassBench file; rule `i` has rank `i`
//!   (earlier = higher priority). `Acl` has mostly long prefixes and exact destination
//!   ports, `Fw` more wildcards and ranges, `Ipc` draws each rule from one of the two.
//!   A wildcard protocol only comes with wildcard ports, so no rule widens in rte_flow.
//!
//! Layout (PAM'21): `groups == 0` puts every rule in group 0 (the root table).
//! `groups == T >= 1` puts rule `i` in group `1 + i % T` (uniform), adds a group-0 rule
//! `eth → jump group 1`, and in each group `g` a lowest-priority default `eth → jump g+1`;
//! the default of group `T` forwards to queue 0. Output order: the group-0 rule, the
//! generated rules, then the defaults of groups 1..=T. Matched rules go to
//! `queue i % GENERATED_QUEUES`. The same (kind, count, groups, seed) gives the same set.

use crate::classbench::ClassBenchFilter;
use crate::model::{Action, Attr, EthItem, Field, Ipv4Item, Item, Rule, TcpItem, UdpItem};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::net::Ipv4Addr;

/// Most rules one generated set may have: 2^22 (`nicbench rules gen`; the ConnectX model's cap on
/// the rules a run pre-installs or operates on is the same number).
pub const MAX_RULES: usize = 1 << 22;

/// Number of rx queues the generated rules spread over.
pub const GENERATED_QUEUES: u16 = 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RuleSetKind {
    Exact5,
    /// Exact 5-tuples, all TCP: one mask (one matcher) per table, as the PAM'21 authors'
    /// generator writes them (`gen_flows.py` of the nic-bench/experiments repository: `ipv4 src is / dst is /
    /// tcp src is / dst is`); `Exact5` draws TCP or UDP per rule, two masks per table.
    Exact5Tcp,
    Acl,
    Fw,
    Ipc,
}

impl RuleSetKind {
    /// Every kind with the name rule files, specs and commands use (the one table of them).
    pub const ALL: [(&'static str, RuleSetKind); 5] = [
        ("exact5", RuleSetKind::Exact5),
        ("exact5_tcp", RuleSetKind::Exact5Tcp),
        ("acl", RuleSetKind::Acl),
        ("fw", RuleSetKind::Fw),
        ("ipc", RuleSetKind::Ipc),
    ];

    /// The kind's name (`exact5`, `acl`, `fw`, `ipc`).
    pub fn name(self) -> &'static str {
        RuleSetKind::ALL
            .iter()
            .find(|(_, k)| *k == self)
            .map_or("exact5", |(n, _)| n)
    }
}

impl std::str::FromStr for RuleSetKind {
    type Err = String;

    /// A kind by name, case-insensitively; the error names the kinds.
    fn from_str(text: &str) -> Result<RuleSetKind, String> {
        let lower = text.to_ascii_lowercase();
        RuleSetKind::ALL
            .iter()
            .find(|(n, _)| *n == lower)
            .map(|(_, k)| *k)
            .ok_or_else(|| {
                let names: Vec<&str> = RuleSetKind::ALL.iter().map(|(n, _)| *n).collect();
                format!("unknown rule set kind '{text}' ({})", names.join(", "))
            })
    }
}

/// `count` rules of `kind` laid out over `groups` groups (see the module doc).
pub fn generate(kind: RuleSetKind, count: usize, groups: u32, seed: u64) -> Vec<Rule> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut rules: Vec<Rule> = match kind {
        RuleSetKind::Exact5 => exact5(&mut rng, count, false),
        RuleSetKind::Exact5Tcp => exact5(&mut rng, count, true),
        _ => (0..count)
            .map(|i| {
                let style = match kind {
                    RuleSetKind::Ipc if rng.random_bool(0.5) => RuleSetKind::Fw,
                    RuleSetKind::Ipc => RuleSetKind::Acl,
                    k => k,
                };
                filter(&mut rng, style).to_rule(i as u32)
            })
            .collect(),
    };
    for (i, r) in rules.iter_mut().enumerate() {
        r.actions = vec![Action::Queue {
            index: (i % GENERATED_QUEUES as usize) as u16,
        }];
    }
    if groups == 0 {
        return rules;
    }
    let t = groups as usize;
    let mut lowest = vec![0u32; t + 1];
    for (i, r) in rules.iter_mut().enumerate() {
        let g = 1 + i % t;
        r.attr.group = g as u32;
        if !matches!(kind, RuleSetKind::Exact5 | RuleSetKind::Exact5Tcp) {
            r.attr.priority = (i / t) as u32; // rank within the group keeps the order
        }
        lowest[g] = lowest[g].max(r.attr.priority + 1);
    }
    let any = || vec![Item::Eth(EthItem::default())];
    let mut out = Vec::with_capacity(rules.len() + t + 1);
    out.push(Rule {
        attr: attr(0, 0),
        pattern: any(),
        actions: vec![Action::Jump { group: 1 }],
    });
    out.extend(rules);
    for (g, &lowest_priority) in lowest.iter().enumerate().skip(1) {
        let fate = if g == t {
            Action::Queue { index: 0 }
        } else {
            Action::Jump { group: g as u32 + 1 }
        };
        out.push(Rule {
            attr: attr(g as u32, lowest_priority),
            pattern: any(),
            actions: vec![fate],
        });
    }
    out
}

fn attr(group: u32, priority: u32) -> Attr {
    Attr {
        group,
        priority,
        ingress: true,
        ..Default::default()
    }
}

fn exact5(rng: &mut StdRng, count: usize, tcp_only: bool) -> Vec<Rule> {
    let mut seen = HashSet::with_capacity(count);
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let key: (u32, u32, u16, u16, bool) = (rng.random(), rng.random(), rng.random(), rng.random(), rng.random());
        if !seen.insert(key) {
            continue;
        }
        let (src, dst, sp, dp, tcp) = (key.0, key.1, key.2, key.3, key.4 || tcp_only);
        let ip = Ipv4Item {
            src: Some(Field::exact(Ipv4Addr::from(src))),
            dst: Some(Field::exact(Ipv4Addr::from(dst))),
            ..Default::default()
        };
        let l4 = if tcp {
            Item::Tcp(TcpItem {
                src: Some(Field::exact(sp)),
                dst: Some(Field::exact(dp)),
                flags: None,
            })
        } else {
            Item::Udp(UdpItem {
                src: Some(Field::exact(sp)),
                dst: Some(Field::exact(dp)),
            })
        };
        out.push(Rule {
            attr: attr(0, 0),
            pattern: vec![Item::Eth(EthItem::default()), Item::Ipv4(ip), l4],
            actions: Vec::new(),
        });
    }
    out
}

/// Picks from `(value, weight)` pairs.
fn pick<T: Copy>(rng: &mut StdRng, choices: &[(T, u32)]) -> T {
    let total: u32 = choices.iter().map(|c| c.1).sum();
    let mut x = rng.random_range(0..total);
    for &(v, w) in choices {
        if x < w {
            return v;
        }
        x -= w;
    }
    choices[choices.len() - 1].0
}

const WELL_KNOWN_PORTS: [u16; 12] = [20, 21, 22, 23, 25, 53, 80, 123, 161, 443, 1521, 8080];

#[derive(Clone, Copy)]
enum Ports {
    Any,
    Exact,
    Range,
}

fn ports(rng: &mut StdRng, how: Ports) -> (u16, u16) {
    match how {
        Ports::Any => (0, u16::MAX),
        Ports::Exact => {
            let p = if rng.random_bool(0.7) {
                WELL_KNOWN_PORTS[rng.random_range(0..WELL_KNOWN_PORTS.len())]
            } else {
                rng.random()
            };
            (p, p)
        }
        Ports::Range => {
            if rng.random_bool(0.5) {
                (1024, u16::MAX)
            } else {
                let lo: u16 = rng.random_range(0..60000);
                (lo, lo + rng.random_range(1..5000))
            }
        }
    }
}

fn filter(rng: &mut StdRng, style: RuleSetKind) -> ClassBenchFilter {
    let fw = style == RuleSetKind::Fw;
    let src_len: u8 = if fw {
        pick(rng, &[(0, 30), (8, 10), (16, 15), (24, 25), (32, 20)])
    } else {
        pick(rng, &[(32, 50), (28, 10), (24, 20), (16, 15), (0, 5)])
    };
    let dst_len: u8 = if fw {
        pick(rng, &[(0, 25), (16, 15), (24, 25), (29, 10), (32, 25)])
    } else {
        pick(rng, &[(32, 60), (24, 20), (16, 10), (0, 10)])
    };
    let proto: (u8, u8) = if fw {
        pick(rng, &[((6, 0xff), 50), ((17, 0xff), 35), ((0, 0), 15)])
    } else {
        pick(rng, &[((6, 0xff), 80), ((17, 0xff), 15), ((0, 0), 5)])
    };
    let (sp, dp) = if proto.1 == 0 {
        (Ports::Any, Ports::Any)
    } else if fw {
        (
            pick(rng, &[(Ports::Any, 70), (Ports::Range, 20), (Ports::Exact, 10)]),
            pick(rng, &[(Ports::Range, 40), (Ports::Exact, 40), (Ports::Any, 20)]),
        )
    } else {
        (
            pick(rng, &[(Ports::Any, 90), (Ports::Exact, 10)]),
            pick(rng, &[(Ports::Exact, 60), (Ports::Range, 20), (Ports::Any, 20)]),
        )
    };
    let addr = |rng: &mut StdRng, len: u8| {
        let mask = if len == 0 { 0 } else { u32::MAX << (32 - len as u32) };
        Ipv4Addr::from(rng.random::<u32>() & mask)
    };
    ClassBenchFilter {
        src: addr(rng, src_len),
        src_prefix_len: src_len,
        dst: addr(rng, dst_len),
        dst_prefix_len: dst_len,
        src_ports: ports(rng, sp),
        dst_ports: ports(rng, dp),
        proto: proto.0,
        proto_mask: proto.1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_root_table_layout() {
        let rules = generate(RuleSetKind::Exact5, 100, 0, 7);
        assert_eq!(rules.len(), 100);
        assert!(rules
            .iter()
            .all(|r| r.attr.group == 0 && r.attr.priority == 0 && r.pattern.len() == 3));
        let distinct: HashSet<_> = rules.iter().map(|r| r.pattern.clone()).collect();
        assert_eq!(distinct.len(), 100);
        assert_eq!(rules, generate(RuleSetKind::Exact5, 100, 0, 7), "seeded");
        assert_ne!(rules, generate(RuleSetKind::Exact5, 100, 0, 8));
    }

    #[test]
    fn test_exact5_tcp_is_one_mask() {
        let rules = generate(RuleSetKind::Exact5Tcp, 200, 2, 3);
        let l4: HashSet<_> = rules
            .iter()
            .filter(|r| r.pattern.len() == 3)
            .map(|r| std::mem::discriminant(&r.pattern[2]))
            .collect();
        assert_eq!(l4.len(), 1, "every exact rule is TCP");
        assert!(rules
            .iter()
            .filter(|r| r.pattern.len() == 3)
            .all(|r| matches!(r.pattern[2], Item::Tcp(_))));
        assert_eq!(RuleSetKind::Exact5Tcp.name(), "exact5_tcp");
    }

    #[test]
    fn test_group_chain_layout() {
        let rules = generate(RuleSetKind::Exact5, 10, 4, 1);
        assert_eq!(rules.len(), 10 + 1 + 4);
        assert_eq!(rules[0].attr.group, 0);
        assert_eq!(rules[0].actions, vec![Action::Jump { group: 1 }]);
        let per_group: Vec<usize> = (1..=4)
            .map(|g| rules[1..11].iter().filter(|r| r.attr.group == g).count())
            .collect();
        assert_eq!(per_group, vec![3, 3, 2, 2]);
        let defaults = &rules[11..];
        for (g, d) in defaults.iter().enumerate() {
            let g = g as u32 + 1;
            assert_eq!(d.attr.group, g);
            assert!(rules[1..11]
                .iter()
                .filter(|r| r.attr.group == g)
                .all(|r| r.attr.priority < d.attr.priority));
            let want = if g == 4 {
                Action::Queue { index: 0 }
            } else {
                Action::Jump { group: g + 1 }
            };
            assert_eq!(d.actions, vec![want]);
        }
    }

    #[test]
    fn test_classbench_like_kinds() {
        for kind in [RuleSetKind::Acl, RuleSetKind::Fw, RuleSetKind::Ipc] {
            let rules = generate(kind, 500, 0, 3);
            assert_eq!(rules.len(), 500);
            assert!(rules.windows(2).all(|w| w[0].attr.priority < w[1].attr.priority));
            let ranges = rules.iter().filter(|r| r.to_string().contains(" last ")).count();
            let wild_src = rules
                .iter()
                .filter(|r| matches!(&r.pattern[1], Item::Ipv4(ip) if ip.src.is_none()))
                .count();
            // Share of rules with a port range, from the weights in `filter`: Acl 0.95 (not a
            // wildcard protocol) x 0.2 (destination range) = 0.19; Fw 0.85 x (1 - 0.8 x 0.6)
            // = 0.442; Ipc half of each = 0.316. 500 rules: one standard deviation is ~0.02.
            let expected = match kind {
                RuleSetKind::Acl => 0.19,
                RuleSetKind::Fw => 0.442,
                _ => 0.316,
            };
            let share = ranges as f64 / rules.len() as f64;
            assert!(
                (share - expected).abs() < 0.06,
                "{kind:?}: {ranges} of 500 rules have a port range"
            );
            if kind == RuleSetKind::Fw {
                assert!(wild_src > 100, "fw has many wildcards: {wild_src}");
            }
            for r in rules.iter().take(50) {
                assert_eq!(&crate::testpmd::parse_rule(&r.to_string()).unwrap(), r);
            }
        }
        let chained = generate(RuleSetKind::Acl, 100, 3, 3);
        assert_eq!(chained.len(), 104);
    }

    /// The module's promise: a wildcard protocol only comes with wildcard ports, so no
    /// generated filter loses a port constraint when mapped to rte_flow.
    #[test]
    fn test_no_generated_filter_widens_in_rte_flow() {
        let mut rng = StdRng::seed_from_u64(5);
        for style in [RuleSetKind::Acl, RuleSetKind::Fw] {
            let filters: Vec<ClassBenchFilter> = (0..5000).map(|_| filter(&mut rng, style)).collect();
            assert!(filters.iter().all(|f| !f.widens_in_rte_flow()), "{style:?}");
            // ...and the wildcard protocol does occur (Acl 5%, Fw 15% of filters).
            let wild = filters.iter().filter(|f| f.proto_mask == 0).count();
            let expected = if style == RuleSetKind::Acl { 250.0 } else { 750.0 };
            assert!(
                (wild as f64 - expected).abs() < expected * 0.25,
                "{style:?}: {wild} wildcard protocols"
            );
        }
    }
}
