//! Measuring the classifier where it runs: lookup rate on one core, and the lookup rate
//! while rules are updated at a target rate — from another core, or interleaved on the
//! lookup core itself (the software analogue of PAM'21 Fig. 4).
//!
//! Updates are in-place modifies of existing rules, alternating each rule between its
//! original actions and `drop`, applied as atomic batches every tick (~200 µs; at most
//! [`MAX_UPDATES_PER_BATCH`] a batch). The rate is held by a due-count against the wall
//! clock, so a slow update path shows as a lower achieved rate rather than a stretched run.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nicbench_rules::{Action, Rule};

use crate::{Batch, Classifier, Outcome, PacketKey, Reader, RuleId};

/// Lookups per burst, as a DPDK rx burst.
const BURST: usize = 32;
/// Most updates applied in one batch, a little over a tick's worth at 1M/s. A late updater
/// catches up in several such batches rather than one ever larger one: a batch of 10K
/// planned operations no longer fits the caches, each update gets slower, and the updater
/// falls further behind (measured: 1.1 µs per update and ~0.85M/s at a 1M/s target with a
/// 10K cap, 0.75 µs and 1M/s with this one).
pub const MAX_UPDATES_PER_BATCH: usize = 256;

/// Where the updating thread runs relative to the lookups.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UpdatePlacement {
    /// A second thread updates while this one looks up.
    OtherCore,
    /// One thread alternates lookup bursts and update batches.
    SameCore,
}

#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct LookupLoad {
    pub packets: u64,
    pub elapsed_s: f64,
    /// Lookups per second \[Mpps\].
    pub lookup_mpps: f64,
    /// Updates applied per second (0 without updates).
    pub updates_per_s: f64,
    /// Updates applied in the run.
    pub updates: u64,
}

fn mpps(packets: u64, elapsed: Duration) -> f64 {
    packets as f64 / elapsed.as_secs_f64().max(1e-9) / 1e6
}

/// Looks `keys` up in bursts, over and over, until `stop` is set or `duration` passes.
fn lookup_until(reader: &Reader, keys: &[PacketKey], duration: Duration, stop: &AtomicBool) -> (u64, Duration) {
    let mut out = vec![Outcome::START; BURST];
    let start = Instant::now();
    let mut done = 0u64;
    'outer: loop {
        for burst in keys.chunks(BURST) {
            reader.lookup_burst(burst, &mut out[..burst.len()]);
            done += burst.len() as u64;
            if done % 4096 < BURST as u64 && (stop.load(Ordering::Relaxed) || start.elapsed() >= duration) {
                break 'outer;
            }
        }
    }
    std::hint::black_box(&out);
    (done, start.elapsed())
}

/// Lookup rate of `keys` on one core, for at least `duration`.
pub fn lookup_rate(classifier: &Classifier, keys: &[PacketKey], duration: Duration) -> LookupLoad {
    if keys.is_empty() {
        return LookupLoad::default();
    }
    let reader = classifier.reader();
    let (packets, elapsed) = lookup_until(&reader, keys, duration, &AtomicBool::new(false));
    LookupLoad {
        packets,
        elapsed_s: elapsed.as_secs_f64(),
        lookup_mpps: mpps(packets, elapsed),
        updates_per_s: 0.0,
        updates: 0,
    }
}

/// Alternates rule `i` between its original actions and `drop`. As a real controller
/// would, it hands the classifier owned rules, in one batch buffer it refills
/// ([`Classifier::apply_from`]) rather than a new one per tick.
struct Modifier<'a> {
    ids: &'a [RuleId],
    rules: &'a [Rule],
    next: usize,
    batch: Batch,
}

impl<'a> Modifier<'a> {
    fn new(ids: &'a [RuleId], rules: &'a [Rule]) -> Self {
        Modifier {
            ids,
            rules,
            next: 0,
            batch: Batch::new(),
        }
    }

    /// Applies the next `count` modifies as one batch.
    fn apply(&mut self, classifier: &mut Classifier, count: usize) -> Result<(), crate::UpdateError> {
        self.batch.updates.reserve(count);
        for _ in 0..count {
            let (id, rule) = nth_modify(self.ids, self.rules, self.next);
            self.batch.modify(id, rule);
            self.next += 1;
        }
        classifier.apply_from(&mut self.batch).map(drop)
    }
}

/// The `k`-th modify of the updater's sequence over rules `ids` (installed from `rules`):
/// rule `k mod n`, alternately with `drop` and with its own actions, as an owned rule.
pub fn nth_modify(ids: &[RuleId], rules: &[Rule], k: usize) -> (RuleId, Rule) {
    let j = k % ids.len();
    let src = &rules[j];
    // Build the new rule directly (no clone of actions about to be replaced).
    let actions = if (k / ids.len()) % 2 == 0 {
        vec![Action::Drop]
    } else {
        src.actions.clone()
    };
    (
        ids[j],
        Rule {
            attr: src.attr.clone(),
            pattern: src.pattern.clone(),
            actions,
        },
    )
}

/// How many updates are due `elapsed` into the run at `rate_per_s`, beyond `applied`.
fn due(rate_per_s: f64, elapsed: Duration, applied: u64) -> usize {
    let due = (rate_per_s * elapsed.as_secs_f64()) as u64;
    (due.saturating_sub(applied) as usize).min(MAX_UPDATES_PER_BATCH)
}

/// Modifies rules `ids` (installed from `rules`, same order) of `classifier` at
/// `rate_per_s` for `duration`, on this thread; returns the updates applied and the time
/// taken. The updater of [`lookups_while_updating`]'s other-core runs, public so that a
/// control can run the same load on a classifier no reader uses.
pub fn modify_at_rate(
    classifier: &mut Classifier,
    ids: &[RuleId],
    rules: &[Rule],
    rate_per_s: f64,
    duration: Duration,
) -> Result<(u64, Duration), crate::UpdateError> {
    assert_eq!(ids.len(), rules.len(), "one rule per id");
    let mut modifier = Modifier::new(ids, rules);
    let mut applied = 0u64;
    let start = Instant::now();
    while !ids.is_empty() && start.elapsed() < duration {
        let count = due(rate_per_s, start.elapsed(), applied);
        if count == 0 {
            std::thread::sleep(Duration::from_micros(200));
            continue;
        }
        modifier.apply(classifier, count)?;
        applied += count as u64;
    }
    Ok((applied, start.elapsed()))
}

/// Lookup rate while rules `ids` (installed from `rules`, same order) are modified at
/// `rate_per_s`, for `duration`. Returns the lookup rate and the update rate achieved.
pub fn lookups_while_updating(
    classifier: &mut Classifier,
    ids: &[RuleId],
    rules: &[Rule],
    keys: Arc<Vec<PacketKey>>,
    rate_per_s: f64,
    placement: UpdatePlacement,
    duration: Duration,
) -> Result<LookupLoad, crate::UpdateError> {
    assert_eq!(ids.len(), rules.len(), "one rule per id");
    if keys.is_empty() || ids.is_empty() {
        return Ok(LookupLoad::default());
    }
    match placement {
        UpdatePlacement::OtherCore => {
            let stop = Arc::new(AtomicBool::new(false));
            let (reader, lookup_keys, lookup_stop) = (classifier.reader(), keys.clone(), stop.clone());
            // The lookup thread runs until told to stop; the run length is this thread's.
            let handle = std::thread::spawn(move || lookup_until(&reader, &lookup_keys, Duration::MAX, &lookup_stop));
            let result = modify_at_rate(classifier, ids, rules, rate_per_s, duration);
            stop.store(true, Ordering::Relaxed);
            let (packets, elapsed) = handle.join().expect("lookup thread");
            let (applied, took) = result?;
            Ok(LookupLoad {
                packets,
                elapsed_s: elapsed.as_secs_f64(),
                lookup_mpps: mpps(packets, elapsed),
                updates_per_s: applied as f64 / took.as_secs_f64(),
                updates: applied,
            })
        }
        UpdatePlacement::SameCore => {
            let mut modifier = Modifier::new(ids, rules);
            let mut applied = 0u64;
            let reader = classifier.reader();
            let mut out = vec![Outcome::START; BURST];
            let start = Instant::now();
            let mut packets = 0u64;
            // 256 bursts (8192 lookups) between update checks: ~0.3–1 ms of work.
            let mut bursts = keys.chunks(BURST).cycle();
            while start.elapsed() < duration {
                for burst in bursts.by_ref().take(256) {
                    reader.lookup_burst(burst, &mut out[..burst.len()]);
                    packets += burst.len() as u64;
                }
                // Everything due, in batches of at most MAX_UPDATES_PER_BATCH (a rate the
                // core cannot sustain leaves the lookups nothing until the run ends).
                loop {
                    let count = due(rate_per_s, start.elapsed(), applied);
                    if count == 0 || start.elapsed() >= duration {
                        break;
                    }
                    modifier.apply(classifier, count)?;
                    applied += count as u64;
                }
            }
            std::hint::black_box(&out);
            let elapsed = start.elapsed();
            Ok(LookupLoad {
                packets,
                elapsed_s: elapsed.as_secs_f64(),
                lookup_mpps: mpps(packets, elapsed),
                updates_per_s: applied as f64 / elapsed.as_secs_f64(),
                updates: applied,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    //! Functional checks only: rates depend on the machine and its load, so they are
    //! measured by the benches (`cargo bench -p nicbench-classify`), never asserted here.
    use super::*;
    use crate::workload::exact5;
    use crate::{ClassifierConfig, Fate, Verdict};

    /// Keys of `keys` whose lookup drops the packet.
    fn dropped(c: &Classifier, keys: &[PacketKey]) -> usize {
        let reader = c.reader();
        keys.iter()
            .filter(|k| matches!(reader.lookup(k).verdict, Verdict::Fate(Fate::Drop)))
            .count()
    }

    /// Rules of exact5 that the `n` first modifies of [`nth_modify`]'s sequence leave
    /// dropping: update k flips rule k % rules, to drop on even passes over the rules and
    /// back on odd ones, so the first n % rules rules hold the last pass's state and the
    /// others the pass before's.
    fn expected_drops(n: usize, rules: usize) -> usize {
        let (passes, rem) = (n / rules, n % rules);
        if passes % 2 == 0 {
            rem
        } else {
            rules - rem
        }
    }

    #[test]
    fn test_lookup_rate_checks_the_clock_every_4096_lookups() {
        // 1000 keys in bursts of 32 (31 full and one of 8 per pass): with no time to run,
        // the loop stops at the first check, which comes when 4096 lookups are done
        // (4000 after four passes + 3 bursts).
        let (rules, keys) = exact5(1000, 1);
        let (c, _) = Classifier::with_rules(ClassifierConfig::default(), rules).expect("rules load");
        let load = lookup_rate(&c, &keys, Duration::ZERO);
        assert_eq!(load.packets, 4096, "{load:?}");
        assert_eq!(load.updates, 0);
        assert_eq!(load.lookup_mpps, load.packets as f64 / load.elapsed_s.max(1e-9) / 1e6);
        assert_eq!(
            lookup_rate(&c, &[], Duration::from_secs(1)).packets,
            0,
            "no keys, no lookups"
        );
    }

    #[test]
    fn test_due_follows_the_rate_and_caps_a_batch() {
        // 20K/s: 100 due after 5 ms, none once they are applied (or more were).
        assert_eq!(due(20_000.0, Duration::from_millis(5), 0), 100);
        assert_eq!(due(20_000.0, Duration::from_millis(5), 40), 60);
        assert_eq!(due(20_000.0, Duration::from_millis(5), 100), 0);
        assert_eq!(due(20_000.0, Duration::from_millis(5), 150), 0);
        // A late updater catches up in batches of at most MAX_UPDATES_PER_BATCH.
        assert_eq!(due(20_000.0, Duration::from_secs(1), 0), MAX_UPDATES_PER_BATCH);
        assert_eq!(due(20_000.0, Duration::from_secs(1), 20_000 - 7), 7);
    }

    #[test]
    fn test_nth_modify_alternates_drop_and_the_original_actions() {
        let (rules, _) = exact5(3, 4);
        let ids: Vec<RuleId> = (0..3).map(|s| RuleId::new(s, 0)).collect();
        for k in 0..12 {
            let (id, rule) = nth_modify(&ids, &rules, k);
            assert_eq!(id, ids[k % 3], "k {k}");
            assert_eq!(
                (&rule.attr, &rule.pattern),
                (&rules[k % 3].attr, &rules[k % 3].pattern),
                "k {k}"
            );
            let want = if (k / 3) % 2 == 0 {
                vec![Action::Drop]
            } else {
                rules[k % 3].actions.clone()
            };
            assert_eq!(rule.actions, want, "k {k}");
        }
    }

    #[test]
    fn test_modifier_batches_leave_the_expected_rules_dropping() {
        const RULES: usize = 500;
        let (rules, keys) = exact5(RULES, 2);
        // exact5 sends every key to a distinct rule.
        assert_eq!(keys.len(), RULES);
        let (mut c, ids) = Classifier::with_rules(ClassifierConfig::default(), rules.clone()).expect("rules load");
        let mut modifier = Modifier::new(&ids, &rules);
        let mut applied = 0;
        // Batch sizes that end mid-pass, on a pass boundary and past it.
        for count in [256, 44, 200, 256, 256, 1] {
            modifier.apply(&mut c, count).expect("modifies apply");
            applied += count;
            assert_eq!(dropped(&c, &keys), expected_drops(applied, RULES), "after {applied}");
            assert_eq!(c.len(), RULES);
        }
    }

    #[test]
    fn test_updates_while_looking_up_change_outcomes_as_counted() {
        const RULES: usize = 500;
        const RATE_PER_S: f64 = 20_000.0;
        let (rules, keys) = exact5(RULES, 2);
        for placement in [UpdatePlacement::OtherCore, UpdatePlacement::SameCore] {
            let (mut c, ids) = Classifier::with_rules(ClassifierConfig::default(), rules.clone()).expect("rules load");
            let load = lookups_while_updating(
                &mut c,
                &ids,
                &rules,
                Arc::new(keys.clone()),
                RATE_PER_S,
                placement,
                Duration::from_millis(100),
            )
            .expect("updates apply");
            // The updater is never ahead of its schedule (it may fall behind on a busy
            // machine: how far is the benches' business).
            assert!(load.updates_per_s <= RATE_PER_S, "{placement:?}: {load:?}");
            if placement == UpdatePlacement::OtherCore {
                // The lookup thread checks for the stop only every 4096 lookups.
                assert!(load.packets >= 4096, "{placement:?}: {load:?}");
            }
            // Every update the run counted, and no other, reached the rules.
            assert_eq!(
                dropped(&c, &keys),
                expected_drops(load.updates as usize, RULES),
                "{placement:?}: {load:?}"
            );
        }
        let (mut c, ids) = Classifier::with_rules(ClassifierConfig::default(), rules.clone()).expect("rules load");
        let none = lookups_while_updating(
            &mut c,
            &ids,
            &rules,
            Arc::new(Vec::new()),
            RATE_PER_S,
            UpdatePlacement::SameCore,
            Duration::from_secs(1),
        )
        .expect("nothing to apply");
        assert_eq!((none.packets, none.updates), (0, 0), "no keys: nothing runs");
    }
}
