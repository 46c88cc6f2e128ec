//! Readers on other threads never see half a batch, and see every state the writer publishes.
//!
//! Each test starts its reader threads and its writer behind one barrier, and numbers the
//! rule-set states by the updates the writer has finished (epochs). A reader reads the epoch
//! before a burst and the number of updates begun after it: the burst may show any state in
//! that range and no other, which the test's check asserts key by key. Overlap is counted
//! from both sides and asserted: reader bursts during which an update was in flight, and
//! updates during which a reader burst was in flight or ended (the writer's count sees the
//! same overlaps from its side, so it fails only when no reader ever ran beside it); a writer
//! keeps going until both are seen, bounded by a round cap, instead of hoping a run length is
//! enough. [`Writer::settle`]
//! waits on the readers' progress (no clock): every reader completes a whole burst in the
//! state just published, so every state is seen by every reader, and the per-queue counts
//! follow from the rule sets.

use nicbench_classify::{Batch, Classifier, Fate, Outcome, PacketKey, Verdict};
use nicbench_rules::generate::{generate, RuleSetKind};
use nicbench_rules::{Action, Item, Rule};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::Barrier;

/// Keys that hit the given exact 5-tuple rules.
fn keys_for(rules: &[Rule]) -> Vec<PacketKey> {
    rules
        .iter()
        .map(|r| {
            let (Item::Ipv4(ip), l4) = (&r.pattern[1], &r.pattern[2]) else {
                panic!()
            };
            let (sp, dp, proto) = match l4 {
                Item::Tcp(t) => (t.src.unwrap().value, t.dst.unwrap().value, 6),
                Item::Udp(u) => (u.src.unwrap().value, u.dst.unwrap().value, 17),
                _ => panic!(),
            };
            PacketKey::ipv4_5tuple(ip.src.unwrap().value, ip.dst.unwrap().value, sp, dp, proto, 64)
        })
        .collect()
}

fn queue(o: &Outcome) -> Option<u16> {
    match o.verdict {
        Verdict::Fate(Fate::Queue { index }) => Some(index),
        _ => None,
    }
}

/// Updates a writer may make while waiting to see readers and writer overlap both ways.
const MAX_UPDATES: u64 = 100_000;

/// State shared by one test's readers and writer.
struct Shared {
    start: Barrier,
    stop: AtomicBool,
    /// A reader's check failed (the writer stops waiting for it).
    reader_failed: AtomicBool,
    /// Updates begun / finished by the writer; `finished` is the current epoch.
    begun: AtomicU64,
    finished: AtomicU64,
    /// Bursts looked up by all readers (counted as soon as the lookup returns, before the
    /// check, so the writer sees a burst that ended while its update ran), and those an
    /// update was in flight during.
    bursts: AtomicU64,
    bursts_during_updates: AtomicU64,
    /// Bursts begun by all readers: `started > bursts` while a lookup is in flight.
    started: AtomicU64,
    /// Per reader: 1 + the last epoch it completed a whole burst in (0: none yet).
    settled: Vec<AtomicU64>,
}

/// The writer's side: numbers its updates and counts the overlap it sees.
struct Writer<'a> {
    shared: &'a Shared,
    updates_with_bursts: u64,
}

impl Writer<'_> {
    /// Runs update `f` as the next epoch; counts it if a reader burst was in flight at its
    /// start (read after the update is marked begun: `started` first, then `bursts`, so
    /// `started > bursts` means a burst had begun and not returned at that point) or
    /// completed while it ran. The first case is what a 2-core machine under load shows: a
    /// single modify takes about a microsecond, so a burst rarely *ends* inside one when the
    /// readers share the CPUs with other tests (CI saw none in 100 000 modifies).
    fn update<T>(&mut self, f: impl FnOnce() -> T) -> T {
        self.shared.begun.fetch_add(1, SeqCst);
        let started = self.shared.started.load(SeqCst);
        let before = self.shared.bursts.load(SeqCst);
        let out = f();
        self.shared.finished.fetch_add(1, SeqCst);
        if started > before || self.shared.bursts.load(SeqCst) > before {
            self.updates_with_bursts += 1;
        }
        out
    }

    /// Waits until every reader has completed a whole burst in the current state.
    fn settle(&self) {
        let epoch = self.shared.finished.load(SeqCst);
        while self.shared.settled.iter().any(|s| s.load(SeqCst) <= epoch) {
            assert!(!self.shared.reader_failed.load(SeqCst), "a reader failed");
            std::thread::yield_now();
        }
    }

    /// Whether overlap has been seen both ways; panics past [`MAX_UPDATES`] updates.
    fn overlapped(&self) -> bool {
        let seen = self.updates_with_bursts > 0 && self.shared.bursts_during_updates.load(SeqCst) > 0;
        let updates = self.shared.finished.load(SeqCst);
        assert!(
            seen || updates < MAX_UPDATES,
            "readers and writer never overlapped in {updates} updates"
        );
        seen
    }

    /// Waits until a reader is inside a lookup, so that the next update runs while it is: on a
    /// loaded 2-core machine (the other tests of this binary run beside this one) the scheduler
    /// may otherwise keep the readers off the CPU during every update (single modifies take about
    /// a microsecond). Spins briefly, then yields the CPU to the readers, for at most 100 ms.
    fn wait_for_a_burst_in_flight(&self) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_millis(100);
        let mut spins = 0u32;
        loop {
            if self.shared.started.load(SeqCst) > self.shared.bursts.load(SeqCst) || self.shared.stop.load(SeqCst) {
                return;
            }
            if spins < 10_000 {
                spins += 1;
                std::hint::spin_loop();
            } else if std::time::Instant::now() >= deadline {
                return;
            } else {
                std::thread::yield_now();
            }
        }
    }

    fn epoch(&self) -> u64 {
        self.shared.finished.load(SeqCst)
    }
}

/// What one reader saw.
struct ReaderLog {
    bursts: u64,
    /// Bursts by the queue the check said the whole burst showed.
    per_queue: BTreeMap<u16, u64>,
    /// Epochs this reader completed a whole burst in.
    whole_epochs: BTreeSet<u64>,
}

struct Report {
    readers: Vec<ReaderLog>,
    updates: u64,
    bursts_during_updates: u64,
    updates_with_bursts: u64,
}

impl Report {
    fn assert_overlap(&self) {
        let bursts: Vec<u64> = self.readers.iter().map(|r| r.bursts).collect();
        eprintln!(
            "{} updates; reader bursts {bursts:?}, {} during an update; {} updates saw a burst in flight",
            self.updates, self.bursts_during_updates, self.updates_with_bursts
        );
        assert!(
            self.bursts_during_updates > 0,
            "no reader burst ran while an update was in flight"
        );
        assert!(self.updates_with_bursts > 0, "no update saw a reader burst in flight");
    }
}

/// Sets `stop` when dropped, so readers end even if the writer panics.
struct StopOnDrop<'a>(&'a AtomicBool);
impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, SeqCst);
    }
}

/// Flags a reader's panic, so the writer's [`Writer::settle`] does not wait for it forever.
struct FailFlag<'a>(&'a AtomicBool);
impl Drop for FailFlag<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, SeqCst);
        }
    }
}

/// Runs `readers` threads looking up bursts of `keys` (each from its own offset) while
/// `write` runs on this thread; all start at one barrier. `check(outcomes, offset, first,
/// last)` asserts a burst that may have seen states `first..=last` and returns the queue the
/// whole burst showed, if it shows one. The writer settles once before `write` runs, so every
/// reader sees the initial state.
fn with_readers(
    c: &mut Classifier,
    keys: &[PacketKey],
    readers: usize,
    check: impl Fn(&[Outcome], usize, u64, u64) -> Option<u16> + Sync,
    write: impl FnOnce(&mut Classifier, &mut Writer),
) -> Report {
    let shared = Shared {
        start: Barrier::new(readers + 1),
        stop: AtomicBool::new(false),
        reader_failed: AtomicBool::new(false),
        begun: AtomicU64::new(0),
        finished: AtomicU64::new(0),
        bursts: AtomicU64::new(0),
        bursts_during_updates: AtomicU64::new(0),
        started: AtomicU64::new(0),
        settled: (0..readers).map(|_| AtomicU64::new(0)).collect(),
    };
    let (shared, check) = (&shared, &check);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..readers)
            .map(|t| {
                let r = c.reader();
                scope.spawn(move || {
                    let _flag = FailFlag(&shared.reader_failed);
                    let offset = (t * 89) % keys.len();
                    let n = keys.len() - offset;
                    let mut out = vec![r.lookup(&keys[0]); n];
                    let mut log = ReaderLog {
                        bursts: 0,
                        per_queue: BTreeMap::new(),
                        whole_epochs: BTreeSet::new(),
                    };
                    shared.start.wait();
                    while !shared.stop.load(SeqCst) {
                        let first = shared.finished.load(SeqCst);
                        shared.started.fetch_add(1, SeqCst);
                        r.lookup_burst(&keys[offset..], &mut out);
                        shared.bursts.fetch_add(1, SeqCst);
                        let last = shared.begun.load(SeqCst);
                        if let Some(q) = check(&out, offset, first, last) {
                            *log.per_queue.entry(q).or_default() += 1;
                        }
                        if last > first {
                            shared.bursts_during_updates.fetch_add(1, SeqCst);
                        } else {
                            log.whole_epochs.insert(first);
                            shared.settled[t].store(first + 1, SeqCst);
                        }
                        log.bursts += 1;
                    }
                    log
                })
            })
            .collect();
        let mut writer = Writer {
            shared,
            updates_with_bursts: 0,
        };
        {
            let _stop = StopOnDrop(&shared.stop);
            shared.start.wait();
            writer.settle();
            write(c, &mut writer);
        }
        let logs = handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect();
        Report {
            readers: logs,
            updates: shared.finished.load(SeqCst),
            bursts_during_updates: shared.bursts_during_updates.load(SeqCst),
            updates_with_bursts: writer.updates_with_bursts,
        }
    })
}

/// Checks the two-state tests: every key of a burst shows one queue, the queue of a state
/// the burst may have seen (`queue_of(epoch)`).
fn one_queue_per_burst(out: &[Outcome], first: u64, last: u64, queue_of: impl Fn(u64) -> u16) -> Option<u16> {
    let q = queue(&out[0]);
    assert!(
        out.iter().all(|o| queue(o) == q),
        "mixed snapshot in states {first}..={last}"
    );
    let q = q.unwrap_or_else(|| panic!("{:?} in states {first}..={last}", out[0].verdict));
    assert!(
        (first..=last).any(|e| queue_of(e) == q),
        "queue {q} in states {first}..={last}"
    );
    Some(q)
}

/// For the two-state tests: every reader saw every state whole, and its whole bursts by
/// queue are at least the states of that queue (each state was seen at least once).
fn assert_every_state_seen(report: &Report, queue_of: impl Fn(u64) -> u16) {
    report.assert_overlap();
    let all: BTreeSet<u64> = (0..=report.updates).collect();
    let mut states_per_queue = BTreeMap::<u16, u64>::new();
    for e in &all {
        *states_per_queue.entry(queue_of(*e)).or_default() += 1;
    }
    for (t, log) in report.readers.iter().enumerate() {
        assert_eq!(
            log.whole_epochs, all,
            "reader {t} completed a whole burst in every state"
        );
        assert_eq!(
            log.per_queue.keys().collect::<Vec<_>>(),
            states_per_queue.keys().collect::<Vec<_>>(),
            "reader {t}: queues seen"
        );
        for (q, states) in &states_per_queue {
            assert!(
                log.per_queue[q] >= *states,
                "reader {t}: {} bursts on queue {q} for {states} states",
                log.per_queue[q]
            );
        }
        assert_eq!(
            log.per_queue.values().sum::<u64>(),
            log.bursts,
            "reader {t}: every burst showed one queue"
        );
    }
}

#[test]
fn test_batches_are_atomic_for_concurrent_readers() {
    const RULES: usize = 500;
    const MIN_BATCHES: u64 = 60;
    let set = generate(RuleSetKind::Exact5, RULES, 0, 11);
    let with_queue = |q: u16| -> Vec<Rule> {
        set.iter()
            .cloned()
            .map(|mut r| {
                r.actions = vec![Action::Queue { index: q }];
                r
            })
            .collect()
    };
    let (a, b) = (with_queue(1), with_queue(2));
    let keys = keys_for(&set);
    let (mut c, ids) = Classifier::with_rules(Default::default(), a.clone()).unwrap();
    // State k (after k batches) is A (queue 1) for even k, B (queue 2) for odd k.
    let queue_of = |epoch: u64| if epoch % 2 == 0 { 1 } else { 2 };
    let check = |out: &[Outcome], _: usize, first, last| one_queue_per_burst(out, first, last, queue_of);
    let report = with_readers(&mut c, &keys, 2, check, |c, w| {
        // Rounds go in pairs: two batches that delete every rule and insert the other set,
        // then two that modify every rule in place; so both kinds go both ways (A->B, B->A).
        let mut ids = ids;
        while w.epoch() < MIN_BATCHES || !w.overlapped() {
            let round = w.epoch();
            let next = if round % 2 == 0 { &b } else { &a };
            let mut batch = Batch::new();
            if round % 4 < 2 {
                for &id in &ids {
                    batch.delete(id);
                }
                for r in next {
                    batch.insert(r.clone());
                }
                ids = w.update(|| c.apply(batch).unwrap());
            } else {
                for (id, r) in ids.iter().zip(next) {
                    batch.modify(*id, r.clone());
                }
                w.update(|| c.apply(batch).unwrap());
            }
            assert_eq!(c.len(), RULES);
            w.settle();
        }
    });
    assert!(report.updates >= MIN_BATCHES);
    assert_every_state_seen(&report, queue_of);
    assert_eq!(c.rule_ids().len(), RULES);
}

/// `set` with every rule at `prio`, sending to queue `q`.
fn exact_at(set: &[Rule], prio: u32, q: u16) -> Vec<Rule> {
    set.iter()
        .cloned()
        .map(|mut r| {
            r.attr.priority = prio;
            r.actions = vec![Action::Queue { index: q }];
            r
        })
        .collect()
}

/// A rule matching every Ethernet frame at priority 2, sending to queue `q`.
fn wildcard(q: u16) -> Rule {
    Rule {
        attr: nicbench_rules::Attr {
            priority: 2,
            ..Default::default()
        },
        pattern: vec![Item::Eth(Default::default())],
        actions: vec![Action::Queue { index: q }],
    }
}

/// Exact rules and a wildcard rule share a group, so exact hits are ranked against it
/// (the rank cells), and every batch changes both the exact tables (in place) and the
/// left-right copies (the wildcard rule): state A — exact rules at priority 1 to queue 1,
/// wildcard at priority 2 to queue 8 — shows queue 1 on every key; state B — exact rules
/// at priority 3 to queue 2, wildcard to queue 9 — shows queue 9. A reader that mixed two
/// versions (an old entry with a new rank, an old copy with new entries) would see 2, 8
/// or both 1 and 9 in one burst.
#[test]
fn test_priority_changing_modifies_with_a_wildcard_are_atomic() {
    const RULES: usize = 400;
    const MIN_BATCHES: u64 = 80;
    let set = generate(RuleSetKind::Exact5, RULES, 0, 12);
    let exact = |prio: u32, q: u16| exact_at(&set, prio, q);
    let (a, b) = (exact(1, 1), exact(3, 2));
    let keys = keys_for(&set);
    let (mut c, ids) = Classifier::with_rules(Default::default(), a.iter().cloned().chain([wildcard(8)])).unwrap();
    let (ids, wid) = (ids[..RULES].to_vec(), ids[RULES]);
    // State k: A (queue 1) for even k, B (queue 9) for odd k.
    let queue_of = |epoch: u64| if epoch % 2 == 0 { 1 } else { 9 };
    let check = |out: &[Outcome], _: usize, first, last| one_queue_per_burst(out, first, last, queue_of);
    let report = with_readers(&mut c, &keys, 2, check, |c, w| {
        while w.epoch() < MIN_BATCHES || !w.overlapped() {
            let (rules, wc) = if w.epoch() % 2 == 0 {
                (&b, wildcard(9))
            } else {
                (&a, wildcard(8))
            };
            let mut batch = Batch::new();
            batch.modify(wid, wc);
            for (id, r) in ids.iter().zip(rules) {
                batch.modify(*id, r.clone());
            }
            w.update(|| c.apply(batch).unwrap());
            w.settle();
        }
    });
    assert!(report.updates >= MIN_BATCHES);
    assert_every_state_seen(&report, queue_of);
}

/// Single in-place modifies (no batch) are atomic too: a key never misses while its rule
/// is replaced, and shows its rule's queue before or after the modify in flight, never
/// another; and the exact tables grow (rebuilds into new buffers) and reuse deleted
/// entries while readers look up.
#[test]
fn test_single_updates_and_table_growth_never_lose_a_rule() {
    const BASE: usize = 300;
    const EXTRA: usize = 6000;
    let set = generate(RuleSetKind::Exact5, BASE + EXTRA, 0, 13);
    let (base, extra) = set.split_at(BASE);
    let keys = keys_for(base);
    let initial: Vec<u16> = base
        .iter()
        .map(|r| match r.actions[..] {
            [Action::Queue { index }] => index,
            ref other => panic!("exact5 rules send to a queue: {other:?}"),
        })
        .collect();
    // Modify i sends base rule i % BASE to queue i % 7; epochs count the modifies only
    // (inserts and deletes of the extra rules change no base key's outcome).
    let queue_after = |key: usize, modifies: u64| -> u16 {
        let m = modifies as usize;
        if m <= key {
            initial[key]
        } else {
            ((key + BASE * ((m - 1 - key) / BASE)) % 7) as u16
        }
    };
    let (mut c, ids) = Classifier::with_rules(Default::default(), base.to_vec()).unwrap();
    let check = |out: &[Outcome], offset: usize, first: u64, last: u64| -> Option<u16> {
        for (k, o) in out.iter().enumerate() {
            let key = offset + k;
            let q = queue(o).unwrap_or_else(|| panic!("base rule {key} went missing: {:?}", o.verdict));
            assert!(
                (first..=last).any(|e| queue_after(key, e) == q),
                "key {key}: queue {q} in states {first}..={last}"
            );
        }
        None
    };
    let report = with_readers(&mut c, &keys, 2, check, |c, w| {
        let mut extra_ids = Vec::new();
        let mut i = 0usize;
        while i < EXTRA || !w.overlapped() {
            if i < EXTRA {
                extra_ids.push(c.insert(extra[i].clone()).unwrap());
            }
            let mut m = base[i % BASE].clone();
            m.actions = vec![Action::Queue { index: (i % 7) as u16 }];
            if i >= EXTRA {
                w.wait_for_a_burst_in_flight();
            }
            w.update(|| c.modify(ids[i % BASE], m).unwrap());
            if i < EXTRA && i % 3 == 0 {
                c.delete(extra_ids.swap_remove(extra_ids.len() / 2)).unwrap();
            }
            if i % 500 == 0 {
                w.settle();
            }
            i += 1;
        }
    });
    report.assert_overlap();
    for (t, log) in report.readers.iter().enumerate() {
        assert!(log.whole_epochs.contains(&0), "reader {t} saw the initial state whole");
    }
    assert_eq!(c.len(), BASE + EXTRA - EXTRA.div_ceil(3));
    // After the run every base key shows its last modify's queue.
    let r = c.reader();
    for (key, k) in keys.iter().enumerate() {
        assert_eq!(queue(&r.lookup(k)), Some(queue_after(key, report.updates)), "key {key}");
    }
}

/// A lookup nested in a snapshot sees the snapshot's rule set even after the writer has
/// swapped the copies and published newer versions (left-right alone would hand the nested
/// lookup the new copy, mixed with the snapshot's older exact entries).
#[test]
fn test_lookups_nested_in_a_snapshot_keep_its_rule_set() {
    let set = generate(RuleSetKind::Exact5, 50, 0, 14);
    let exact = |prio: u32, q: u16| exact_at(&set, prio, q);
    let keys = keys_for(&set);
    let (mut c, ids) =
        Classifier::with_rules(Default::default(), exact(3, 2).into_iter().chain([wildcard(8)])).unwrap();
    let (ids, wid) = (ids[..set.len()].to_vec(), ids[set.len()]);
    let r = c.reader();
    r.with_snapshot(|snap| {
        assert_eq!(queue(&snap.lookup(&keys[0])), Some(8));
        // One batch: exact rules above the wildcard (exact tables, new version) and the
        // wildcard to queue 9 (the copies: a swap). Published while the snapshot is held.
        let mut batch = Batch::new();
        batch.modify(wid, wildcard(9));
        for (id, rule) in ids.iter().zip(exact(1, 1)) {
            batch.modify(*id, rule);
        }
        c.apply(batch).unwrap();
        for k in &keys {
            assert_eq!(queue(&snap.lookup(k)), Some(8), "the snapshot changed");
            assert_eq!(queue(&r.lookup(k)), Some(8), "a nested lookup left the snapshot");
        }
    });
    assert_eq!(
        queue(&r.lookup(&keys[0])),
        Some(1),
        "after the snapshot: the new rule set"
    );
}
