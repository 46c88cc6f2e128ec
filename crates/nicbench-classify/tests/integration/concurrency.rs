//! Readers on other threads never see half a batch.

use nicbench_classify::{Batch, Classifier, Fate, PacketKey, RuleId, Verdict};
use nicbench_rules::generate::{generate, RuleSetKind};
use nicbench_rules::{Action, Item, Rule};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// Keys that hit the given exact 5-tuple rules.
fn keys_for(rules: &[Rule]) -> Vec<PacketKey> {
    rules
        .iter()
        .map(|r| {
            let (Item::Ipv4(ip), l4) = (&r.pattern[1], &r.pattern[2]) else { panic!() };
            let (sp, dp, proto) = match l4 {
                Item::Tcp(t) => (t.src.unwrap().value, t.dst.unwrap().value, 6),
                Item::Udp(u) => (u.src.unwrap().value, u.dst.unwrap().value, 17),
                _ => panic!(),
            };
            PacketKey::ipv4_5tuple(ip.src.unwrap().value, ip.dst.unwrap().value, sp, dp, proto, 64)
        })
        .collect()
}

#[test]
fn test_batches_are_atomic_for_concurrent_readers() {
    const RULES: usize = 500;
    let set = generate(RuleSetKind::Exact5, RULES, 0, 11);
    let with_queue = |q: u16| -> Vec<Rule> {
        set.iter().cloned().map(|mut r| {
            r.actions = vec![Action::Queue { index: q }];
            r
        }).collect()
    };
    let (a, b) = (with_queue(1), with_queue(2));
    let keys = Arc::new(keys_for(&set));
    let (mut c, mut ids) = Classifier::with_rules(Default::default(), a.clone()).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let bursts = Arc::new(AtomicU64::new(0));
    let readers: Vec<_> = (0..2)
        .map(|t| {
            let (r, keys, stop, bursts) = (c.reader(), keys.clone(), stop.clone(), bursts.clone());
            std::thread::spawn(move || {
                let mut out = vec![r.lookup(&keys[0]); keys.len()];
                let mut seen = [0u64; 3];
                while !stop.load(Ordering::Relaxed) {
                    // One burst = one snapshot: every packet must agree on the queue.
                    let start = (t * 97) % keys.len();
                    let n = keys.len() - start;
                    r.lookup_burst(&keys[start..], &mut out[..n]);
                    let first = out[0].verdict;
                    assert!(matches!(first, Verdict::Fate(Fate::Queue { index: 1 | 2 })), "{first:?}");
                    assert!(out[..n].iter().all(|o| o.verdict == first), "mixed snapshot");
                    if let Verdict::Fate(Fate::Queue { index }) = first {
                        seen[index as usize] += 1;
                    }
                    bursts.fetch_add(1, Ordering::Relaxed);
                }
                seen
            })
        })
        .collect();
    // The writer alternates: delete all of A + insert all of B (one batch), and back; and
    // every other round modifies every rule in place in one batch.
    let mut on_a = true;
    for round in 0..60 {
        let next = if on_a { &b } else { &a };
        if round % 2 == 0 {
            let mut batch = Batch::new();
            for &id in &ids {
                batch.delete(id);
            }
            for r in next {
                batch.insert(r.clone());
            }
            ids = c.apply(batch).unwrap();
        } else {
            let mut batch = Batch::new();
            for (id, r) in ids.iter().zip(next) {
                batch.modify(*id, r.clone());
            }
            c.apply(batch).unwrap();
        }
        on_a = !on_a;
        assert_eq!(c.len(), RULES);
    }
    stop.store(true, Ordering::Relaxed);
    let seen: Vec<[u64; 3]> = readers.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(bursts.load(Ordering::Relaxed) > 0);
    let ids_live: Vec<RuleId> = c.rule_ids();
    assert_eq!(ids_live.len(), RULES);
    eprintln!("bursts per reader by queue: {seen:?}");
}

/// Runs `readers` threads doing `check(burst outcomes)` on bursts of `keys` until the
/// writer closure returns; returns the bursts checked.
fn with_readers(c: &mut Classifier, keys: Arc<Vec<PacketKey>>, readers: usize, check: fn(&[nicbench_classify::Outcome]), write: impl FnOnce(&mut Classifier)) -> u64 {
    let stop = Arc::new(AtomicBool::new(false));
    let bursts = Arc::new(AtomicU64::new(0));
    let handles: Vec<_> = (0..readers)
        .map(|t| {
            let (r, keys, stop, bursts) = (c.reader(), keys.clone(), stop.clone(), bursts.clone());
            std::thread::spawn(move || {
                let mut out = vec![r.lookup(&keys[0]); keys.len()];
                while !stop.load(Ordering::Relaxed) {
                    let start = (t * 89) % keys.len();
                    let n = keys.len() - start;
                    r.lookup_burst(&keys[start..], &mut out[..n]);
                    check(&out[..n]);
                    bursts.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    write(c);
    stop.store(true, Ordering::Relaxed);
    for h in handles {
        h.join().expect("a reader saw a broken snapshot");
    }
    bursts.load(Ordering::Relaxed)
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
        attr: nicbench_rules::Attr { priority: 2, ..Default::default() },
        pattern: vec![Item::Eth(Default::default())],
        actions: vec![Action::Queue { index: q }],
    }
}

fn queue(o: &nicbench_classify::Outcome) -> Option<u16> {
    match o.verdict {
        Verdict::Fate(Fate::Queue { index }) => Some(index),
        _ => None,
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
    let set = generate(RuleSetKind::Exact5, RULES, 0, 12);
    let exact = |prio: u32, q: u16| exact_at(&set, prio, q);
    let (a, b) = (exact(1, 1), exact(3, 2));
    let keys = Arc::new(keys_for(&set));
    let (mut c, ids) = Classifier::with_rules(Default::default(), a.iter().cloned().chain([wildcard(8)])).unwrap();
    let (ids, wid) = (ids[..RULES].to_vec(), ids[RULES]);
    let check: fn(&[nicbench_classify::Outcome]) = |out| {
        let first = queue(&out[0]);
        assert!(matches!(first, Some(1 | 9)), "{first:?}");
        assert!(out.iter().all(|o| queue(o) == first), "mixed snapshot");
    };
    let bursts = with_readers(&mut c, keys, 2, check, |c| {
        for round in 0..80 {
            let (rules, w) = if round % 2 == 0 { (&b, wildcard(9)) } else { (&a, wildcard(8)) };
            let mut batch = Batch::new();
            batch.modify(wid, w);
            for (id, r) in ids.iter().zip(rules) {
                batch.modify(*id, r.clone());
            }
            c.apply(batch).unwrap();
        }
    });
    assert!(bursts > 0);
}

/// Single in-place modifies (no batch) are atomic too: a key never misses while its rule
/// is replaced; and the exact tables grow (rebuilds into new buffers) and reuse deleted
/// entries while readers look up. Keys of the first rules must always hit.
#[test]
fn test_single_updates_and_table_growth_never_lose_a_rule() {
    const BASE: usize = 300;
    let set = generate(RuleSetKind::Exact5, BASE + 6000, 0, 13);
    let (base, extra) = set.split_at(BASE);
    let keys = Arc::new(keys_for(base));
    let (mut c, ids) = Classifier::with_rules(Default::default(), base.to_vec()).unwrap();
    let check: fn(&[nicbench_classify::Outcome]) = |out| {
        assert!(out.iter().all(|o| queue(o).is_some()), "a base rule went missing");
    };
    let bursts = with_readers(&mut c, keys, 2, check, |c| {
        let mut extra_ids = Vec::new();
        for (i, r) in extra.iter().enumerate() {
            extra_ids.push(c.insert(r.clone()).unwrap());
            let (id, base_rule) = (ids[i % BASE], &base[i % BASE]);
            let mut m = base_rule.clone();
            m.actions = vec![Action::Queue { index: (i % 7) as u16 }];
            c.modify(id, m).unwrap();
            if i % 3 == 0 {
                c.delete(extra_ids.swap_remove(extra_ids.len() / 2)).unwrap();
            }
        }
    });
    assert!(bursts > 0);
    assert_eq!(c.len(), BASE + extra.len() - extra.len().div_ceil(3));
}

/// A lookup nested in a snapshot sees the snapshot's rule set even after the writer has
/// swapped the copies and published newer versions (left-right alone would hand the nested
/// lookup the new copy, mixed with the snapshot's older exact entries).
#[test]
fn test_lookups_nested_in_a_snapshot_keep_its_rule_set() {
    let set = generate(RuleSetKind::Exact5, 50, 0, 14);
    let exact = |prio: u32, q: u16| exact_at(&set, prio, q);
    let keys = keys_for(&set);
    let (mut c, ids) = Classifier::with_rules(Default::default(), exact(3, 2).into_iter().chain([wildcard(8)])).unwrap();
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
    assert_eq!(queue(&r.lookup(&keys[0])), Some(1), "after the snapshot: the new rule set");
}
