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
