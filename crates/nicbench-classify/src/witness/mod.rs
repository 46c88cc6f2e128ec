//! Packets for rules: for each rule of a set, a frame that really meets it in this classifier.
//!
//! ClassBench ships a trace generator for its filters; this is its counterpart for any rule
//! file nicbench reads, and it checks each frame by lookup instead of trusting the draw.
//!
//! A rule of group g is met by a packet that matches it, matches a chain of jump rules from
//! the start group to g, and is not taken first by a rule of higher priority on the way. For
//! each rule:
//! - up to [`CHAINS`] chains of jump rules into its group are tried (depth first, from the
//!   rule's group back to the start group, highest-priority jumps first);
//! - the constraints of the chain and of the rule are merged per header field
//!   ([`stack::Stack`]), and [`DRAWS`] frames in all (at least one per chain) satisfying them
//!   are drawn, unconstrained fields random (TCP or UDP, any port, any address), so that a
//!   wider rule of higher priority does not take every draw by accident;
//! - each frame is built, parsed and traced through the classifier: the first whose path
//!   holds the rule is its witness. A rule without one gets the reason of its last try
//!   ([`Miss`]): a header the generator does not write, constraints no packet satisfies, a
//!   group no chain reaches, a field the generator writes fixed, a rule that takes the frame
//!   first.

mod draw;
mod stack;

use std::collections::HashMap;

use nicbench_rules::{Action, Rule};
use nicbench_wire::FrameSpec;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::classifier::Classifier;
use crate::key::PacketKey;
use crate::state::RuleId;

/// Chains of jump rules tried per rule.
pub const CHAINS: usize = 8;
/// Frames drawn per rule, shared by its chains (at least one per chain).
pub const DRAWS: usize = 16;
/// Longest chain of jumps followed (the classifier keeps the group graph acyclic).
pub const MAX_CHAIN_DEPTH: usize = 64;

/// A frame that meets a rule, and every rule its lookup met on the way.
#[derive(Clone, Debug)]
pub struct Witness {
    /// The frame, at the smallest size that holds its headers.
    pub spec: FrameSpec,
    /// Indices (into the rule slice) of the rules the frame's lookup met, the target included.
    pub met: Vec<usize>,
}

/// Why no frame meets a rule.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Miss {
    /// The pattern matches a header the generator does not write.
    Header { item: String },
    /// No packet satisfies the pattern together with a chain of jumps into its group.
    Conflict { what: String },
    /// No chain of jump rules leads from the start group to the rule's group.
    Unreachable { group: u32 },
    /// The frames satisfy every field the generator sets, but the rule does not match them: it
    /// constrains a field the generator writes with a fixed value.
    Fixed { fields: Vec<String> },
    /// A rule of higher (or equal, earlier) priority in the rule's group took every frame.
    Shadowed { by: usize },
    /// Every frame's walk ended before the rule's group, at `at` (a rule index) in `group`.
    LeftEarlier { group: u32, at: Option<usize> },
}

impl Miss {
    /// The reason in words, naming other rules with `rule(index)` (e.g. their line).
    pub fn describe(&self, rule: impl Fn(usize) -> String) -> String {
        match self {
            Miss::Header { item } => format!("it needs a header the generator does not write: {item}"),
            Miss::Conflict { what } => format!("no packet satisfies it together with a jump into its group: {what}"),
            Miss::Unreachable { group } => format!("no chain of jump rules leads to its group {group}"),
            Miss::Fixed { fields } => format!(
                "it constrains {}, which the generator writes with a fixed value",
                fields.join(", ")
            ),
            Miss::Shadowed { by } => format!("{} takes its packets first", rule(*by)),
            Miss::LeftEarlier { group, at: Some(at) } => {
                format!("its packets leave earlier, at {} in group {group}", rule(*at))
            }
            Miss::LeftEarlier { group, at: None } => format!("its packets leave earlier, unmatched in group {group}"),
        }
    }
}

impl std::fmt::Display for Miss {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe(|i| format!("rule #{i}")))
    }
}

/// The jump rules into each group (rule indices), highest priority first.
fn jumps_into(rules: &[Rule]) -> HashMap<u32, Vec<usize>> {
    let mut into: HashMap<u32, Vec<usize>> = HashMap::new();
    for (i, r) in rules.iter().enumerate() {
        if let Some(Action::Jump { group }) = r.actions.iter().find(|a| a.is_fate()) {
            into.entry(*group).or_default().push(i);
        }
    }
    for list in into.values_mut() {
        // Highest priority (lowest number) first, then file order.
        list.sort_by_key(|&i| (rules[i].attr.priority, i));
    }
    into
}

/// Up to `limit` chains of jump rules (indices, from the start group inwards) into `group`.
fn chains(into: &HashMap<u32, Vec<usize>>, rules: &[Rule], start: u32, group: u32, limit: usize) -> Vec<Vec<usize>> {
    fn walk(
        into: &HashMap<u32, Vec<usize>>,
        rules: &[Rule],
        start: u32,
        group: u32,
        path: &mut Vec<usize>,
        out: &mut Vec<Vec<usize>>,
        limit: usize,
    ) {
        if out.len() >= limit {
            return;
        }
        if group == start {
            out.push(path.iter().rev().copied().collect());
            return;
        }
        if path.len() >= MAX_CHAIN_DEPTH {
            return;
        }
        for &j in into.get(&group).map(Vec::as_slice).unwrap_or_default() {
            if path.contains(&j) {
                continue;
            }
            path.push(j);
            walk(into, rules, start, rules[j].attr.group, path, out, limit);
            path.pop();
            if out.len() >= limit {
                return;
            }
        }
    }
    let mut out = Vec::new();
    walk(into, rules, start, group, &mut Vec::new(), &mut out, limit);
    out
}

/// A witness or the reason there is none, for every rule of `rules` (installed in
/// `classifier` as `ids`, in the same order). Seeded: the same inputs give the same frames.
pub fn witnesses(classifier: &Classifier, rules: &[Rule], ids: &[RuleId], seed: u64) -> Vec<Result<Witness, Miss>> {
    let start = classifier.config().start_group;
    let into = jumps_into(rules);
    let index_of: HashMap<RuleId, usize> = ids.iter().enumerate().map(|(i, id)| (*id, i)).collect();
    let reader = classifier.reader();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut frame = Vec::with_capacity(256);
    rules
        .iter()
        .enumerate()
        .map(|(target, rule)| {
            let chains = chains(&into, rules, start, rule.attr.group, CHAINS);
            if chains.is_empty() {
                return Err(Miss::Unreachable { group: rule.attr.group });
            }
            let mut last = Miss::Unreachable { group: rule.attr.group };
            for chain in &chains {
                let merged = chain
                    .iter()
                    .map(|&j| &rules[j])
                    .chain(std::iter::once(rule))
                    .try_fold(stack::Stack::default(), |mut s, r| s.merge(r).map(|()| s));
                let merged = match merged {
                    Ok(s) => s,
                    Err(miss) => {
                        last = miss;
                        continue;
                    }
                };
                for _ in 0..(DRAWS / chains.len()).max(1) {
                    let spec = match merged.draw(&mut rng) {
                        Ok(spec) => spec,
                        Err(miss) => {
                            last = miss;
                            break;
                        }
                    };
                    frame.clear();
                    if spec.build_into(&mut frame).is_err() {
                        last = Miss::Conflict {
                            what: "the drawn header values cannot be written".into(),
                        };
                        continue;
                    }
                    let (hops, _) = reader.trace(&PacketKey::from_ethernet(&frame));
                    let met: Vec<usize> = hops
                        .iter()
                        .filter_map(|h| h.rule.and_then(|r| index_of.get(&r).copied()))
                        .collect();
                    if met.contains(&target) {
                        return Ok(Witness { spec, met });
                    }
                    last = diagnose(rules, &hops, &index_of, rule);
                }
            }
            Err(last)
        })
        .collect()
}

/// The rules to send traffic to, so that the rules the traffic meets (targets and the jump
/// rules on their way) are `share` of all rules, or every rule a witness meets when that is
/// less: rules with a witness in a seeded random order, taken until the rules met reach
/// `ceil(share × rules)` (the last one's jumps may add a few more). Returns the targets, in
/// that order, and the number of rules met.
pub fn pick_targets(found: &[Result<Witness, Miss>], share: f64, seed: u64) -> (Vec<usize>, usize) {
    let want = (share.clamp(0.0, 1.0) * found.len() as f64).ceil() as usize;
    let mut order: Vec<usize> = (0..found.len()).filter(|&i| found[i].is_ok()).collect();
    order.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
    let mut met = vec![false; found.len()];
    let (mut n_met, mut targets) = (0usize, Vec::new());
    for i in order {
        if n_met >= want {
            break;
        }
        if met[i] {
            // Already met on the way to another target (a jump rule): no flow of its own.
            continue;
        }
        if let Ok(w) = &found[i] {
            for &m in &w.met {
                if !met[m] {
                    met[m] = true;
                    n_met += 1;
                }
            }
            targets.push(i);
        }
    }
    (targets, n_met)
}

/// Why a frame built for `rule` missed it, from the lookup's path.
fn diagnose(rules: &[Rule], hops: &[crate::state::Hop], index_of: &HashMap<RuleId, usize>, rule: &Rule) -> Miss {
    match hops.iter().find(|h| h.group == rule.attr.group) {
        Some(hop) => match hop.rule.and_then(|r| index_of.get(&r).copied()) {
            // A winner that outranks the rule may have taken a frame the rule matches.
            Some(by) if rules[by].attr.priority <= rule.attr.priority => Miss::Shadowed { by },
            // Nothing, or only a lower-priority rule, matched: the rule itself did not.
            _ => Miss::Fixed {
                fields: stack::Stack::fixed_fields(rule),
            },
        },
        None => {
            let last = hops.last();
            Miss::LeftEarlier {
                group: last.map_or(0, |h| h.group),
                at: last.and_then(|h| h.rule).and_then(|r| index_of.get(&r).copied()),
            }
        }
    }
}

#[cfg(test)]
mod tests;
