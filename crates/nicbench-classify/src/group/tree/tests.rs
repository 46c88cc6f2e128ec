use super::build::{entry_of, project};
use super::*;
use crate::compile::compile;
use nicbench_rules::model::{EthItem, Ipv4Item, TcpItem, UdpItem};
use nicbench_rules::{Action, Attr, Field, Item, Rule};
use rand::{Rng, SeedableRng};
use std::net::Ipv4Addr;

fn rule(prio: u32, src: (Ipv4Addr, u32), dports: (u16, u16)) -> Arc<CompiledRule> {
    let r = Rule {
        attr: Attr {
            priority: prio,
            ..Default::default()
        },
        pattern: vec![
            Item::Eth(EthItem::default()),
            Item::Ipv4(Ipv4Item {
                src: Field::prefix(src.0, src.1),
                ..Default::default()
            }),
            Item::Tcp(TcpItem {
                dst: Some(Field::range(dports.0, dports.1)),
                ..Default::default()
            }),
        ],
        actions: vec![Action::Drop],
    };
    Arc::new(compile(&r).unwrap())
}

/// Rule entries that make every member of `t` valid.
fn entries_for(t: &Tree, slots: usize) -> Vec<RuleEntry> {
    let mut rules = vec![RuleEntry::FREE; slots];
    for (slot, r) in t.members.iter() {
        rules[*slot as usize].tree = t.id;
        rules[*slot as usize].rule = Some(r.clone());
    }
    rules
}

#[test]
fn test_project_prefix_and_range_exactly() {
    let r = rule(0, (Ipv4Addr::new(10, 1, 0, 0), 16), (1000, 2000));
    assert_eq!(project(&r, 0), (0x0a01_0000, 0x0a01_ffff, true));
    assert_eq!(project(&r, 1), (0, u32::MAX, true));
    assert_eq!(project(&r, 3), (1000, 2000, true));
    assert_eq!(
        project(&r, 4),
        (0, 255, true),
        "a tcp item sets the presence bit, not the protocol"
    );
    let (_, c, exact) = entry_of(&r).unwrap();
    assert!(exact);
    assert_eq!((c.src_lo, c.src_span), (0x0a01_0000, 0xffff));
    assert_eq!((c.dport_lo, c.dport_span), (1000, 1000));
    assert_ne!(c.hi_mask, 0, "presence bits are checked inline");
}

#[test]
fn test_check_agrees_with_the_rule() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    for i in 0..300u32 {
        let lo: u16 = rng.random_range(0..60000);
        let r = rule(
            i,
            (
                Ipv4Addr::from(rng.random::<u32>() & 0xffff_0000),
                rng.random_range(0..=24),
            ),
            (lo, lo + rng.random_range(0..5000)),
        );
        let (_, c, exact) = entry_of(&r).unwrap();
        assert!(exact);
        for _ in 0..50 {
            let proto = [6u8, 17, 1][rng.random_range(0..3)];
            let src = if rng.random() {
                Ipv4Addr::from(c.src_lo.wrapping_add(rng.random_range(0..=c.src_span)))
            } else {
                Ipv4Addr::from(rng.random::<u32>())
            };
            let dport = if rng.random() {
                c.dport_lo.wrapping_add(rng.random_range(0..=c.dport_span))
            } else {
                rng.random()
            };
            let key = PacketKey::ipv4_5tuple(src, Ipv4Addr::from(rng.random::<u32>()), rng.random(), dport, proto, 64);
            assert_eq!(c.matches(&Fields::of(&key)), r.matches(&key), "rule {i} key {key:?}");
        }
    }
}

#[test]
fn test_build_splits_and_keeps_rank_order() {
    let rules: Vec<TreeInput> = (0..200u32)
        .map(|i| {
            (
                i,
                (i as u64) << 32,
                rule(
                    i,
                    (Ipv4Addr::from(0x0a00_0000 + (i << 8)), 24),
                    (i as u16 * 10, i as u16 * 10 + 5),
                ),
            )
        })
        .collect();
    let t = build(1, rules);
    assert_eq!(t.subtrees.len(), 1);
    assert!(!t.subtrees[0].root.is_leaf(), "200 rules do not fit one leaf");
    for st in t.subtrees.iter() {
        for n in st.children.iter().chain([&st.root]).filter(|n| n.is_leaf()) {
            let items = st.leaf_items(n);
            assert!(items.windows(2).all(|w| w[0] < w[1]), "leaf items ascend");
            assert!(
                items.len() <= super::build::Params::default().binth,
                "distinct /24s separate"
            );
        }
    }
    assert!(t.rules.windows(2).all(|w| w[0].rank < w[1].rank));
}

/// Random overlapping rules (prefixes, port ranges, tcp/udp/any) and keys, half of them
/// on a rule's corner.
fn random_set(seed: u64, count: u32) -> (Vec<TreeInput>, Vec<PacketKey>) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut rules: Vec<TreeInput> = Vec::new();
    for i in 0..count {
        let src = Field::prefix(
            Ipv4Addr::from(rng.random::<u32>() & 0x0fff_ffff),
            rng.random_range(0..=8) * 4,
        );
        let dst = Field::prefix(
            Ipv4Addr::from(rng.random::<u32>()),
            [0, 8, 16, 24, 32][rng.random_range(0..5)],
        );
        let (lo, hi): (u16, u16) = match rng.random_range(0..3) {
            0 => (0, u16::MAX),
            1 => (1024, u16::MAX),
            _ => {
                let lo = rng.random_range(0..1000);
                (lo, lo + rng.random_range(0..50))
            }
        };
        let l4 = match rng.random_range(0..3) {
            0 => Item::Tcp(TcpItem {
                dst: Some(Field::range(lo, hi)),
                ..Default::default()
            }),
            1 => Item::Udp(UdpItem {
                src: Some(Field::range(lo, hi)),
                ..Default::default()
            }),
            _ => Item::Eth(EthItem::default()),
        };
        let mut pattern = vec![
            Item::Eth(EthItem::default()),
            Item::Ipv4(Ipv4Item {
                src,
                dst,
                ..Default::default()
            }),
        ];
        if !matches!(l4, Item::Eth(_)) {
            pattern.push(l4);
        }
        let prio = rng.random_range(0..50);
        let r = Rule {
            attr: Attr {
                priority: prio,
                ..Default::default()
            },
            pattern,
            actions: vec![Action::Drop],
        };
        rules.push((i, ((prio as u64) << 32) | i as u64, Arc::new(compile(&r).unwrap())));
    }
    let keys: Vec<PacketKey> = (0..4000)
        .map(|_| {
            let (_, _, r) = &rules[rng.random_range(0..rules.len())];
            let mut k = PacketKey::ipv4_5tuple(
                Ipv4Addr::from(rng.random::<u32>() & 0x0fff_ffff),
                Ipv4Addr::from(rng.random::<u32>()),
                rng.random_range(0..1100),
                rng.random_range(0..1100),
                [6u8, 17, 50][rng.random_range(0..3)],
                64,
            );
            // Half the keys: the fields of a random rule's intervals.
            if rng.random() {
                let (e, _, _) = entry_of(r).unwrap();
                k.words[0] = e.lo[0] as u64;
                k.words[1] = e.lo[1] as u64;
            }
            k
        })
        .collect();
    (rules, keys)
}

/// The tree's single and burst lookups find the best live matching rule a linear scan
/// finds; returns how many keys hit.
fn assert_agrees(t: &Tree, rules: &[TreeInput], entries: &[RuleEntry], keys: &[PacketKey], what: &str) -> usize {
    let live = |slot: u32| entries[slot as usize].tree == t.id;
    let mut burst_best = vec![(u64::MAX, u32::MAX); keys.len()];
    for (chunk, out) in keys
        .chunks(super::super::BURST)
        .zip(burst_best.chunks_mut(super::super::BURST))
    {
        let refs: Vec<&PacketKey> = chunk.iter().collect();
        t.lookup_burst(&refs, entries, out);
    }
    let mut hits = 0;
    for (k, burst) in keys.iter().zip(&burst_best) {
        let want = rules
            .iter()
            .filter(|(s, _, r)| live(*s) && r.matches(k))
            .map(|(s, rank, _)| (*rank, *s))
            .min()
            .unwrap_or((u64::MAX, u32::MAX));
        let mut got = (u64::MAX, u32::MAX);
        t.lookup(k, entries, &mut got);
        assert_eq!(got, want, "{what}: {k:?}");
        assert_eq!(*burst, want, "{what}: burst {k:?}");
        hits += (want.1 != u32::MAX) as usize;
    }
    hits
}

/// Random overlapping rules: the tree agrees with a linear scan, with the vector and the
/// scalar leaf check, and skips a rule whose entry no longer carries the tree's id.
#[test]
fn test_lookup_agrees_with_linear_scan() {
    let (rules, keys) = random_set(11, 600);
    let mut t = build(7, rules.clone());
    let mut entries = entries_for(&t, rules.len());
    entries[5].tree = NO_TREE; // deleted since the build
    for avx2 in [false, t.avx2] {
        t.avx2 = avx2;
        let hits = assert_agrees(&t, &rules, &entries, &keys, if avx2 { "avx2" } else { "scalar" });
        assert!(hits > keys.len() / 4, "the keys hit rules ({hits})");
    }
}

/// Thin leaves (deep trees), fat leaves of up to eight blocks (a second scan pass), a
/// budget so small that the build partitions and then gives up cutting: all agree with
/// the linear scan, also with a third of the rules deleted since the build (matches that
/// are not valid resume the scan, into later blocks).
#[test]
fn test_lookup_agrees_across_leaf_sizes() {
    let (rules, keys) = random_set(12, 500);
    let d = super::build::Params::default();
    for p in [
        super::build::Params { binth: 4, ..d },
        super::build::Params { binth: 64, ..d },
        super::build::Params {
            binth: 8,
            items_per_rule: 1,
            small_fallback: false,
            ..d
        },
    ] {
        let mut t = super::build::build_with(3, rules.clone(), &p);
        let max_blocks = t
            .subtrees
            .iter()
            .flat_map(|st| st.children.iter().chain([&st.root]).map(move |n| st.blocks_of(n).len()))
            .max()
            .unwrap_or(0);
        if p.binth == 64 {
            assert!(max_blocks > 2, "fat leaves span several blocks ({max_blocks})");
        }
        let mut entries = entries_for(&t, rules.len());
        for e in entries.iter_mut().step_by(3) {
            e.tree = NO_TREE;
        }
        for avx2 in [false, t.avx2] {
            t.avx2 = avx2;
            assert_agrees(&t, &rules, &entries, &keys, &format!("{p:?} avx2 {avx2}"));
        }
    }
}

/// A small group that does not fit one tree with the given knobs is built as one tree
/// with the small-set knobs (not partitioned), and agrees with the linear scan.
#[test]
fn test_small_group_is_one_tree_when_it_would_split() {
    let (rules, keys) = random_set(13, 400);
    let d = super::build::Params::default();
    let split = super::build::build_with(
        4,
        rules.clone(),
        &super::build::Params {
            binth: 8,
            items_per_rule: 1,
            small_fallback: false,
            ..d
        },
    );
    assert!(
        split.subtrees.len() > 1,
        "a tight budget partitions ({})",
        split.subtrees.len()
    );
    let mut t = super::build::build_with(
        4,
        rules.clone(),
        &super::build::Params {
            binth: 8,
            items_per_rule: 1,
            ..d
        },
    );
    assert_eq!(t.subtrees.len(), 1, "the small-set attempt fits one tree");
    let mut entries = entries_for(&t, rules.len());
    for e in entries.iter_mut().step_by(4) {
        e.tree = NO_TREE;
    }
    for avx2 in [false, t.avx2] {
        t.avx2 = avx2;
        assert_agrees(&t, &rules, &entries, &keys, &format!("small set, avx2 {avx2}"));
    }
}

/// Forty copies of one match-all rule cannot be cut apart: one leaf of five blocks. With
/// the first 27 deleted, the answer is lane 3 of the leaf's fourth block.
#[test]
fn test_invalid_matches_resume_in_later_blocks() {
    let rules: Vec<TreeInput> = (0..40u32)
        .map(|i| (i, i as u64, rule(0, (Ipv4Addr::UNSPECIFIED, 0), (0, u16::MAX))))
        .collect();
    let mut t = build(9, rules.clone());
    assert_eq!(t.subtrees.len(), 1);
    assert_eq!(
        t.subtrees[0].blocks_of(&t.subtrees[0].root).len(),
        5,
        "one leaf, blocks of eight"
    );
    let mut entries = entries_for(&t, rules.len());
    for e in entries.iter_mut().take(27) {
        e.tree = NO_TREE;
    }
    let key = PacketKey::ipv4_5tuple(Ipv4Addr::new(1, 2, 3, 4), Ipv4Addr::new(5, 6, 7, 8), 1, 2, 6, 64);
    for avx2 in [false, t.avx2] {
        t.avx2 = avx2;
        let mut got = (u64::MAX, u32::MAX);
        t.lookup(&key, &entries, &mut got);
        assert_eq!(got, (27, 27));
        let mut burst = [(u64::MAX, u32::MAX); 3];
        t.lookup_burst(&[&key, &key, &key], &entries, &mut burst);
        assert_eq!(burst, [(27, 27); 3]);
        // A better rank already found elsewhere stops the scan.
        let mut better = (5, 1000);
        t.lookup(&key, &entries, &mut better);
        assert_eq!(better, (5, 1000));
    }
}

/// Leaves with the same rules share their blocks, empty leaves use the sentinel block 0,
/// and every leaf's lanes hold its rules in ascending order, padded with no-index lanes.
#[test]
fn test_leaves_are_shared_and_packed_in_order() {
    let (rules, _) = random_set(13, 400);
    let t = super::build::build_with(
        1,
        rules,
        &super::build::Params {
            binth: 8,
            ..Default::default()
        },
    );
    for st in t.subtrees.iter() {
        assert_eq!(st.blocks[0], leaf::Block::EMPTY);
        assert_eq!(st.idx.len(), st.blocks.len() * LANES);
        let mut by_list: std::collections::HashMap<Vec<u32>, u32> = std::collections::HashMap::new();
        let mut leaves = 0;
        for n in st.children.iter().chain([&st.root]).filter(|n| n.is_leaf()) {
            leaves += 1;
            let items = st.leaf_items(n);
            assert!(items.windows(2).all(|w| w[0] < w[1]), "lanes ascend");
            if items.is_empty() {
                assert_eq!(st.blocks_of(n).start, 0, "an empty leaf tests the sentinel");
                continue;
            }
            let lanes = &st.idx[st.blocks_of(n).start * LANES..st.blocks_of(n).end * LANES];
            assert!(
                lanes[items.len()..].iter().all(|&i| i == leaf::NO_INDEX),
                "padding after the rules"
            );
            assert_eq!(*by_list.entry(items).or_insert(n.a), n.a, "one copy per distinct leaf");
        }
        let packed: usize = by_list.keys().map(|l| l.len().div_ceil(LANES)).sum();
        assert_eq!(
            st.blocks.len(),
            packed + 1,
            "blocks = distinct leaves + the sentinel ({leaves} leaves)"
        );
    }
}

/// The descent's child index: BMI1 `bextr` and the portable shift-and-mask agree on every
/// cut shape (shift, width, dimension) and are 0 on a leaf, whatever its block count.
#[test]
fn child_index_bextr_matches_portable() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(20);
    let bmi = leaf::have_avx2();
    for _ in 0..20_000 {
        let mut f = Fields::default();
        for d in 0..DIMS {
            f.d[d] = rng.random();
        }
        let dim = rng.random_range(0..DIMS);
        let bits = rng.random_range(1..=23u32);
        let shift = rng.random_range(0..32u32);
        let n = Node::cut(dim, shift, bits, 7);
        let want = ((f.d[dim] as u64 >> shift) & ((1u64 << bits) - 1)) as u32;
        assert_eq!(n.child_index(&f, false), want, "{n:?}");
        assert_eq!(n.child_index(&f, bmi), want, "{n:?} bmi {bmi}");
        assert!((want as usize) < n.fanout());
        let count = rng.random_range(0..=COUNT_MASK);
        let l = Node::leaf(rng.random(), count);
        assert!(l.is_leaf() && !n.is_leaf());
        assert_eq!(l.block_count(), count as usize);
        assert_eq!((l.child_index(&f, false), l.child_index(&f, bmi)), (0, 0), "{l:?}");
    }
}

impl SubTree {
    /// The rule indices of leaf `n`, in lane order.
    fn leaf_items(&self, n: &Node) -> Vec<u32> {
        self.blocks_of(n)
            .flat_map(|b| self.idx[b * LANES..(b + 1) * LANES].iter().copied())
            .filter(|&i| i != leaf::NO_INDEX)
            .collect()
    }
}

mod shape {
    use super::*;

    impl Tree {
        pub(crate) fn describe(&self) -> String {
            let mut s = format!(
                "{} entries, {} full-check;",
                self.rules.len(),
                self.rules.iter().filter(|e| e.full_check != 0).count()
            );
            for st in self.subtrees.iter() {
                let leaves: Vec<usize> = st
                    .children
                    .iter()
                    .filter(|n| n.is_leaf())
                    .map(|n| st.leaf_items(n).len())
                    .collect();
                let max = leaves.iter().max().copied().unwrap_or(0);
                let avg = leaves.iter().sum::<usize>() as f64 / leaves.len().max(1) as f64;
                s += &format!(
                    " [best {} nodes {} blocks {} leaf avg {avg:.1} max {max}]",
                    st.best_rank >> 32,
                    st.children.len(),
                    st.blocks.len()
                );
            }
            s
        }
    }

    /// (subtrees visited, cut nodes visited, leaf entries scanned) per key, averaged; and
    /// (levels a burst walks, whole-leaf entries) per key and subtree visited.
    fn walk_stats(t: &Tree, keys: &[PacketKey]) -> (f64, f64, f64, f64, f64) {
        let (mut sts, mut nodes, mut scanned, mut levels, mut leaf_len) = (0usize, 0usize, 0usize, 0usize, 0usize);
        for burst in keys.chunks(32) {
            for st in t.subtrees.iter() {
                let depth = burst
                    .iter()
                    .map(|k| {
                        let f = Fields::of(k);
                        let (mut n, mut d) = (&st.root, 0);
                        while !n.is_leaf() {
                            d += 1;
                            n = st.child(n, &f, leaf::have_avx2());
                        }
                        leaf_len += st.leaf_items(n).len();
                        d
                    })
                    .max()
                    .unwrap_or(0);
                levels += depth * burst.len();
            }
        }
        for key in keys {
            let f = Fields::of(key);
            let mut best = u64::MAX;
            for st in t.subtrees.iter() {
                if st.best_rank >= best {
                    break;
                }
                sts += 1;
                let mut n = &st.root;
                while !n.is_leaf() {
                    nodes += 1;
                    n = st.child(n, &f, leaf::have_avx2());
                }
                for b in st.blocks_of(n) {
                    scanned += 1;
                    let m = st.blocks[b].mask_scalar(&f);
                    if m != 0 {
                        let i = st.idx[b * LANES + m.trailing_zeros() as usize];
                        best = best.min(t.rules[i as usize].rank);
                        break;
                    }
                }
            }
        }
        let k = keys.len() as f64;
        let kst = k * t.subtrees.len() as f64;
        (
            sts as f64 / k,
            nodes as f64 / k,
            scanned as f64 / k,
            levels as f64 / kst,
            leaf_len as f64 / kst,
        )
    }

    #[test]
    #[ignore = "prints tree shapes and walk statistics of the ClassBench sets"]
    fn print_classbench_shapes() {
        let Some(dir) = nicbench_testenv::classbench_or_skip("print_classbench_shapes") else {
            return;
        };
        for name in ["acl1_1k", "fw1_1k", "ipc1_1k", "acl1_10k", "fw1_10k", "ipc1_10k"] {
            if std::env::var("TREE_SETS").is_ok_and(|w| !w.split(',').any(|w| name.contains(w))) {
                continue;
            }
            let path = dir.join(name);
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let filters = nicbench_rules::classbench::parse_file(&text, name).unwrap();
            let input: Vec<TreeInput> = filters
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    (
                        i as u32,
                        (i as u64) << 32,
                        Arc::new(compile(&f.to_rule(i as u32)).unwrap()),
                    )
                })
                .collect();
            let env = |k: &str, d: usize| std::env::var(k).ok().and_then(|v| v.parse().ok()).unwrap_or(d);
            let d = super::build::Params::default();
            let p = super::build::Params {
                binth: env("TREE_BINTH", d.binth),
                max_cut_bits: env("TREE_BITS", d.max_cut_bits as usize) as u32,
                spfac: env("TREE_SPFAC", d.spfac),
                items_per_rule: env("TREE_ITEMS", d.items_per_rule),
                small_fallback: env("TREE_SMALL", d.small_fallback as usize) != 0,
            };
            let t0 = std::time::Instant::now();
            let t = super::build::build_with(1, input, &p);
            let build_time = t0.elapsed();
            let keys = crate::workload::keys_of(&crate::workload::trace(&filters, 1 << 16, 42));
            let (sts, nodes, scanned, levels, leaf_len) = walk_stats(&t, &keys);
            let rules = entries_for(&t, filters.len());
            // Keys rebuilt 32 at a time in a buffer that stays in L1, as the reader does from
            // compact 5-tuples: the trace's 14 MiB of keys would measure memory bandwidth.
            let tuples: Vec<crate::FiveTuple> = keys
                .iter()
                .map(|k| crate::FiveTuple {
                    frame_bytes: 64,
                    ..crate::FiveTuple::of_key(k)
                })
                .collect();
            let mut buf = [PacketKey::default(); 32];
            let mut best = vec![(u64::MAX, u32::MAX); 32];
            let mut pass = || {
                for c in tuples.chunks(32) {
                    for (k, tu) in buf.iter_mut().zip(c) {
                        tu.write_key(k);
                    }
                    let refs: [&PacketKey; 32] = std::array::from_fn(|i| &buf[i]);
                    best.iter_mut().for_each(|b| *b = (u64::MAX, u32::MAX));
                    t.lookup_burst(&refs[..c.len()], &rules, &mut best);
                    std::hint::black_box(&best);
                }
            };
            pass();
            // Thread CPU time: the machine is shared, wall time would measure its load.
            let cpu_s = || {
                let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
                // SAFETY: clock_gettime writes the timespec it is given.
                unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
                ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
            };
            let reps: usize = std::env::var("TREE_REPS")
                .ok()
                .and_then(|r| r.parse().ok())
                .unwrap_or(5);
            let t0 = cpu_s();
            for _ in 0..reps {
                pass();
            }
            let mpps = (reps * keys.len()) as f64 / (cpu_s() - t0) / 1e6;
            eprintln!(
                "{name}: built in {build_time:?}; per key {sts:.2} subtrees, {nodes:.2} cut nodes, {scanned:.2} leaf blocks (per subtree: burst walks {levels:.1} levels, whole leaf {leaf_len:.1}); tree alone {mpps:.2} Mpps (CPU time); {} B/rule\n   {}",
                t.memory_bytes() / filters.len().max(1),
                t.describe()
            );
        }
    }
}
