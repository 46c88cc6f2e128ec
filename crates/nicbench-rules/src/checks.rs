//! Checks on a rule set beyond each line's syntax: ranges that match nothing (`100 : 50`),
//! jumps that loop (`group 1 -> jump group 1`, cycles across groups, tc `goto chain` loops),
//! and what the mlx5 PMD refuses in a rule whatever the port (two fate actions, an RSS key
//! or hash function it does not take).
//!
//! Every tool that loads a rule file runs them ([`crate::ruleset::load`]), so `rules check`
//! refuses what `classify`, `simulate` and `rules convert` refuse; the classifier's own
//! refusal of a jump that closes a cycle at run time uses [`find_jump_cycle`] too.

use std::collections::{BTreeMap, BTreeSet};

use crate::error::ParseError;
use crate::model::Action;
use crate::ruleset::NumberedRule;

/// An edge `(from, to)` of the jump graph that closes a cycle, if the graph has a cycle.
/// A self-jump (`(1, 1)`) is a cycle.
pub fn find_jump_cycle(edges: impl IntoIterator<Item = (u32, u32)>) -> Option<(u32, u32)> {
    let mut adj: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for (a, b) in edges {
        adj.entry(a).or_default().push(b);
    }
    // Iterative DFS (a recursive one overflows the stack on a long chain of groups).
    // Colours: absent = not seen, 1 = on the stack, 2 = done.
    let mut colour: BTreeMap<u32, u8> = BTreeMap::new();
    for &root in adj.keys() {
        if colour.contains_key(&root) {
            continue;
        }
        let mut stack: Vec<(u32, usize)> = vec![(root, 0)];
        colour.insert(root, 1);
        while let Some(&mut (node, ref mut next)) = stack.last_mut() {
            let succ = adj.get(&node).map_or(&[][..], |v| v.as_slice());
            if let Some(&to) = succ.get(*next) {
                *next += 1;
                match colour.get(&to) {
                    Some(1) => return Some((node, to)),
                    Some(_) => {}
                    None => {
                        colour.insert(to, 1);
                        stack.push((to, 0));
                    }
                }
            } else {
                colour.insert(node, 2);
                stack.pop();
            }
        }
    }
    None
}

/// The first range of `rule` whose upper end is below its lower end, as
/// `"udp dst 100 : 50"` (item, field, low, high), if any.
pub fn reversed_range(rule: &crate::Rule) -> Option<String> {
    for item in &rule.pattern {
        let kind = item.kind();
        for (desc, slot) in kind.slots().iter().zip(item.to_slots().iter()) {
            if let Some(field) = slot {
                if let Some(last) = field.last {
                    if last < field.value {
                        return Some(format!("{} {} {} : {}", kind.name(), desc.name, field.value, last));
                    }
                }
            }
        }
    }
    None
}

/// Why the mlx5 PMD refuses `rule` on its own, whatever the port: a second fate action
/// (`flow_dv_validate`: "can't have 2 fate actions in same flow"; mlx5's fate actions are
/// drop, queue, rss, jump and, on the e-switch, port_id) or an `rss` action it refuses
/// ([`crate::model::RssAction::mlx5_key`]).
pub fn pmd_refusal(rule: &crate::Rule) -> Option<String> {
    let fates: Vec<&Action> = rule.actions.iter().filter(|a| a.is_fate()).collect();
    if fates.len() > 1 {
        let names: Vec<String> = fates.iter().map(|a| fate_name(a)).collect();
        return Some(format!(
            "{} fate actions ({}): a rule decides one fate, the mlx5 PMD refuses a second (\"can't have 2 fate actions in same flow\"); keep one",
            fates.len(),
            names.join(", ")
        ));
    }
    rule.actions.iter().find_map(|a| match a {
        Action::Rss(rss) => rss.mlx5_key().err().map(|e| e.to_string()),
        _ => None,
    })
}

fn fate_name(action: &Action) -> String {
    match action {
        Action::Queue { index } => format!("queue index {index}"),
        Action::Rss(_) => "rss".into(),
        Action::Jump { group } => format!("jump group {group}"),
        Action::Drop => "drop".into(),
        Action::PortId { id } => format!("port_id id {id}"),
        Action::Passthru => "passthru".into(),
        other => format!("{other:?}"),
    }
}

/// Errors of the whole-set checks, in line order: one per reversed range, and one for the
/// first jump that closes a cycle (at the line of a rule making that jump).
pub fn check_rule_set(rules: &[NumberedRule], file: &str) -> Vec<ParseError> {
    let at = |line: usize, message: String| ParseError {
        file: file.to_string(),
        line,
        column: 1,
        message,
    };
    let mut errors = Vec::new();
    for r in rules {
        if let Some(range) = reversed_range(&r.rule) {
            errors.push(at(
                r.line,
                format!("reversed range {range}: the high end is below the low end, so the rule matches nothing (write LOW : HIGH)"),
            ));
        }
        if let Some(why) = pmd_refusal(&r.rule) {
            errors.push(at(r.line, why));
        }
    }
    let edges: BTreeSet<(u32, u32)> = rules
        .iter()
        .flat_map(|r| {
            r.rule.actions.iter().filter_map(move |a| match a {
                Action::Jump { group } => Some((r.rule.attr.group, *group)),
                _ => None,
            })
        })
        .collect();
    if let Some((from, to)) = find_jump_cycle(edges.iter().copied()) {
        let line = rules
            .iter()
            .find(|r| r.rule.attr.group == from && r.rule.actions.contains(&Action::Jump { group: to }))
            .map_or(1, |r| r.line);
        let what = if from == to {
            format!("a rule in group {from} jumps to its own group")
        } else {
            format!("the jump from group {from} to group {to} closes a cycle of jumps")
        };
        errors.push(at(
            line,
            format!("{what}: a packet would loop forever; jumps must not lead back to a group already traversed"),
        ));
    }
    errors.sort_by_key(|e| e.line);
    errors
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ruleset::{load, Syntax};

    fn errors_of(text: &str, syntax: Syntax) -> Vec<String> {
        match load(text, "r", syntax, true) {
            Ok(_) => Vec::new(),
            Err(e) => e.iter().map(ToString::to_string).collect(),
        }
    }

    #[test]
    fn test_pmd_refusals_at_load_with_line() {
        let two = "flow create 0 ingress pattern eth / end actions count / end\n\
                   flow create 0 ingress pattern eth / ipv4 / udp dst is 53 / end actions drop / queue index 1 / end\n";
        let e = errors_of(two, Syntax::Testpmd);
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(e[0].starts_with("r:2:"), "{}", e[0]);
        assert!(e[0].contains("2 fate actions (drop, queue index 1)"), "{}", e[0]);
        let short_key =
            "flow create 0 ingress pattern eth / ipv4 / end actions rss key 01020304 queues 0 1 end / end\n";
        assert!(errors_of(short_key, Syntax::Testpmd)[0].contains("rss key of 4 bytes"));
        let xor = "flow create 0 ingress pattern eth / ipv4 / end actions rss func simple_xor queues 0 1 end / end\n";
        assert!(errors_of(xor, Syntax::Testpmd)[0].contains("simple_xor"));
        // One fate beside non-fate actions, and a 40-byte key, load.
        let ok = "flow create 0 ingress pattern eth / ipv4 / end actions count / mark id 1 / queue index 0 / end\n";
        assert!(errors_of(ok, Syntax::Testpmd).is_empty());
    }

    #[test]
    fn test_cycle_finder_on_known_graphs() {
        assert_eq!(find_jump_cycle([(1, 1)]), Some((1, 1)));
        assert_eq!(find_jump_cycle([(0, 1), (1, 2), (2, 3)]), None);
        assert!(find_jump_cycle([(0, 1), (1, 2), (2, 1)]).is_some());
        // A diamond is no cycle.
        assert_eq!(find_jump_cycle([(0, 1), (0, 2), (1, 3), (2, 3)]), None);
    }

    #[test]
    fn test_self_jump_and_cross_group_cycle_refused_with_line() {
        let selfloop = "flow create 0 group 1 ingress pattern eth / end actions jump group 1 / end\n";
        let e = errors_of(selfloop, Syntax::Testpmd);
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(
            e[0].starts_with("r:1:1: a rule in group 1 jumps to its own group"),
            "{e:?}"
        );
        let cross = "flow create 0 group 0 ingress pattern eth / end actions jump group 1 / end\n\
                     flow create 0 group 1 ingress pattern eth / end actions jump group 2 / end\n\
                     flow create 0 group 2 ingress pattern eth / end actions jump group 1 / end\n";
        let e = errors_of(cross, Syntax::Testpmd);
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(e[0].contains("closes a cycle"), "{e:?}");
        let chain = "flow create 0 group 0 ingress pattern eth / end actions jump group 1 / end\n\
                     flow create 0 group 1 ingress pattern eth / end actions drop / end\n";
        assert!(errors_of(chain, Syntax::Testpmd).is_empty());
    }

    #[test]
    fn test_tc_goto_chain_loop_refused() {
        let text = "tc filter add dev eth0 ingress chain 1 flower action goto chain 2\n\
                    tc filter add dev eth0 ingress chain 2 flower action goto chain 1\n";
        let e = errors_of(text, Syntax::Tc);
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(e[0].contains("cycle"), "{e:?}");
    }

    #[test]
    fn test_reversed_classbench_port_range_refused_with_line() {
        let text = "@10.0.0.0/8\t0.0.0.0/0\t0 : 65535\t100 : 50\t0x11/0xFF\n";
        let e = errors_of(text, Syntax::ClassBench);
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(e[0].starts_with("r:1:1: reversed range"), "{e:?}");
        assert!(e[0].contains("100 : 50"), "{e:?}");
        let ok = "@10.0.0.0/8\t0.0.0.0/0\t0 : 65535\t50 : 100\t0x11/0xFF\n";
        assert!(errors_of(ok, Syntax::ClassBench).is_empty());
    }
}
