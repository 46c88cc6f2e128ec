//! Compiles a [`Rule`] into per-key-word (mask, value) constraints plus exact range
//! checks, and picks its fate.
//!
//! Pattern semantics (rte_flow's, as the nicbench model reads it): items are walked from
//! the outermost header inwards. Every item requires its header to be present at the
//! current level (the n-th `vlan` item the n-th tag, the n-th `mpls` item the n-th label)
//! and every given field to match. `vxlan` and `gre` require that tunnel and move the
//! walk to the encapsulated frame; `gre_key` requires a GRE key. Layers a pattern skips
//! are not constrained (`eth / tcp` matches TCP over IPv4 or IPv6). Items must come in
//! header order (eth, vlan, mpls, ip, l4, tunnel) with at most two vlan and two mpls items
//! per level and one tunnel; other patterns are refused with [`CompileError`], because
//! the parser cannot decode what they would match. Attributes `ingress`/`egress`/`transfer`
//! are not matched (one direction is modelled).
//!
//! A field whose value has bits beyond the header field's width can never match: the rule
//! compiles to a constraint no packet meets, so it stays listed but never hits.

use crate::key::{
    field_loc, presence, tunnel_presence, FieldLoc, INNER_BASE, KEY_WORDS, PRESENCE_SHIFT, TUNNEL_PRESENCE_SHIFT, W_L4,
    W_TUN1,
};
use nicbench_rules::model::FieldBits;
use nicbench_rules::{Action, Field, Item, ItemKind, Rule};
use std::sync::Arc;

/// Why a rule cannot be installed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompileError {
    #[error("pattern item {index} ({item}) is out of header order or repeated: {why}")]
    UnsupportedPattern {
        index: usize,
        item: &'static str,
        why: &'static str,
    },
}

/// The packet's fate after the last rule of its path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(tag = "fate", rename_all = "snake_case")]
pub enum Fate {
    Queue {
        index: u16,
    },
    /// Spread by RSS; the queues are in the rule's actions.
    Rss,
    Drop,
    PortId {
        id: u32,
    },
    Passthru,
    /// The rule has no fate action (a NIC applies its default).
    NoFate,
}

/// One word of a rule's masked-equality constraints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct WordMatch {
    pub word: u8,
    pub mask: u64,
    pub value: u64,
}

/// An rte_flow range: `lo <= field & mask <= hi`, checked exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RangeMatch {
    pub loc: FieldLoc,
    pub mask: u128,
    pub lo: u128,
    pub hi: u128,
}

/// A rule ready for the tables. Immutable; shared by both copies of the classifier.
#[derive(Debug)]
pub(crate) struct CompiledRule {
    pub group: u32,
    pub priority: u32,
    /// Masked-equality constraints, one per touched word, sorted by word.
    pub words: Box<[WordMatch]>,
    pub ranges: Box<[RangeMatch]>,
    pub fate: Fate,
    pub jump: Option<u32>,
    pub mark: Option<u32>,
    pub actions: Arc<[Action]>,
}

impl CompiledRule {
    /// Whether the key meets every constraint.
    #[inline]
    pub fn matches(&self, key: &crate::PacketKey) -> bool {
        self.words
            .iter()
            .all(|w| key.words[w.word as usize] & w.mask == w.value)
            && self.ranges.iter().all(|r| {
                let v = r.loc.read(key) & r.mask;
                r.lo <= v && v <= r.hi
            })
    }

    /// Per-word mask of the bits a hash table may use for this rule: the equality masks
    /// plus, for each range, the leading bits its bounds share (every value in the range has
    /// them too).
    pub fn hashable_mask(&self) -> [u64; KEY_WORDS] {
        let mut m = [0u64; KEY_WORDS];
        for w in self.words.iter() {
            m[w.word as usize] |= w.mask;
        }
        for r in self.ranges.iter() {
            let width = r.loc.width as u32;
            let common = (r.lo ^ r.hi).leading_zeros().saturating_sub(128 - width);
            let top = if common == 0 {
                0
            } else {
                ones128(width) & !ones128(width - common)
            };
            let mut vals = [0u64; KEY_WORDS];
            r.loc.place(r.mask & top, 0, &mut m, &mut vals);
        }
        m
    }

    /// The rule's value on the key words (for hashing under a table mask ⊆ hashable mask).
    pub fn value_words(&self) -> [u64; KEY_WORDS] {
        let mut v = [0u64; KEY_WORDS];
        let mut m = [0u64; KEY_WORDS];
        for w in self.words.iter() {
            v[w.word as usize] |= w.value;
        }
        for r in self.ranges.iter() {
            r.loc.place(0, r.lo & r.mask, &mut m, &mut v);
        }
        v
    }
}

pub(crate) fn ones128(bits: u32) -> u128 {
    if bits >= 128 {
        u128::MAX
    } else {
        (1u128 << bits) - 1
    }
}

fn raw<T: FieldBits>(f: &Option<Field<T>>) -> Option<(u128, u128, Option<u128>)> {
    f.map(|f| (f.value.to_bits(), f.mask.to_bits(), f.last.map(T::to_bits)))
}

type RawField = Option<(u128, u128, Option<u128>)>;

/// Most fields an item kind has.
const MAX_ITEM_FIELDS: usize = 8;

/// The item's fields in model declaration order, as raw bits (unused tail: `None`). A
/// fixed array, not a `Vec`: compiling a rule allocates nothing per item.
pub(crate) fn item_fields(item: &Item) -> [RawField; MAX_ITEM_FIELDS] {
    let mut out = [None; MAX_ITEM_FIELDS];
    let fields: &[RawField] = match item {
        Item::Eth(i) => &[raw(&i.dst), raw(&i.src), raw(&i.ether_type), raw(&i.has_vlan)],
        Item::Vlan(i) => &[raw(&i.tci), raw(&i.inner_type), raw(&i.has_more_vlan)],
        Item::Ipv4(i) => &[
            raw(&i.version_ihl),
            raw(&i.tos),
            raw(&i.packet_id),
            raw(&i.fragment_offset),
            raw(&i.ttl),
            raw(&i.proto),
            raw(&i.src),
            raw(&i.dst),
        ],
        Item::Ipv6(i) => &[
            raw(&i.tc),
            raw(&i.flow_label),
            raw(&i.proto),
            raw(&i.hop_limit),
            raw(&i.src),
            raw(&i.dst),
            raw(&i.has_frag_ext),
        ],
        Item::Tcp(i) => &[raw(&i.src), raw(&i.dst), raw(&i.flags)],
        Item::Udp(i) => &[raw(&i.src), raw(&i.dst)],
        Item::Sctp(i) => &[raw(&i.src), raw(&i.dst), raw(&i.tag), raw(&i.cksum)],
        Item::Icmp(i) => &[raw(&i.icmp_type), raw(&i.code), raw(&i.ident), raw(&i.seq)],
        Item::Icmp6(i) => &[raw(&i.icmp_type), raw(&i.code)],
        Item::Vxlan(i) => &[raw(&i.vni), raw(&i.last_rsvd)],
        Item::Gre(i) => &[raw(&i.c_rsvd0_ver), raw(&i.protocol)],
        Item::GreKey(i) => &[raw(&i.value)],
        Item::Mpls(i) => &[raw(&i.label), raw(&i.tc), raw(&i.s)],
    };
    out[..fields.len()].copy_from_slice(fields);
    out
}

/// Header-order rank of an item within a level.
fn order(kind: ItemKind) -> u8 {
    match kind {
        ItemKind::Eth => 0,
        ItemKind::Vlan => 1,
        ItemKind::Mpls => 2,
        ItemKind::Ipv4 | ItemKind::Ipv6 => 3,
        ItemKind::Tcp | ItemKind::Udp | ItemKind::Sctp | ItemKind::Icmp | ItemKind::Icmp6 => 4,
        ItemKind::Vxlan | ItemKind::Gre => 5,
        ItemKind::GreKey => 6,
    }
}

/// A rule's constraints as per-word arrays, before anything is allocated (ranges: an empty
/// `Vec` does not allocate): enough to place an exact 5-tuple rule without compiling it.
pub(crate) struct Lowered {
    pub masks: [u64; KEY_WORDS],
    /// Already masked.
    pub values: [u64; KEY_WORDS],
    pub ranges: Vec<RangeMatch>,
    pub fate: Fate,
    pub jump: Option<u32>,
    pub mark: Option<u32>,
}

impl Lowered {
    /// `(hi_mask, hi_value, key)` if this is an exact 5-tuple rule ([`crate::group::exact`]).
    pub fn exact(&self) -> Option<(u64, u64, [u32; 3])> {
        crate::group::exact::exact_form(&self.masks, &self.values, !self.ranges.is_empty())
    }

    pub fn into_compiled(self, rule: &Rule) -> CompiledRule {
        let words: Box<[WordMatch]> = (0..KEY_WORDS)
            .filter(|&w| self.masks[w] != 0)
            .map(|w| WordMatch {
                word: w as u8,
                mask: self.masks[w],
                value: self.values[w],
            })
            .collect();
        CompiledRule {
            group: rule.attr.group,
            priority: rule.attr.priority,
            words,
            ranges: self.ranges.into_boxed_slice(),
            fate: self.fate,
            jump: self.jump,
            mark: self.mark,
            actions: rule.actions.clone().into(),
        }
    }
}

impl CompiledRule {
    /// The compiled form of an exact 5-tuple rule, from its parts (what [`compile`] gives
    /// for a rule [`lower_exact5`] accepts; a test checks).
    pub fn from_exact5(e: &Exact5, group: u32, priority: u32, actions: &[Action]) -> CompiledRule {
        const LO: u64 = 0xffff_ffff;
        let mut words = [
            WordMatch {
                word: crate::key::W_SRC_LO as u8,
                mask: LO,
                value: e.key[0] as u64,
            },
            WordMatch {
                word: crate::key::W_DST_LO as u8,
                mask: LO,
                value: e.key[1] as u64,
            },
            WordMatch {
                word: W_L4 as u8,
                mask: e.hi_mask | LO,
                value: e.hi_value | e.key[2] as u64,
            },
        ];
        words.sort_unstable_by_key(|w| w.word);
        CompiledRule {
            group,
            priority,
            words: Box::new(words),
            ranges: Box::new([]),
            fate: e.fate,
            jump: e.jump,
            mark: e.mark,
            actions: actions.into(),
        }
    }

    /// `(hi_mask, hi_value, key)` if this is an exact 5-tuple rule.
    pub fn exact(&self) -> Option<(u64, u64, [u32; 3])> {
        let mut masks = [0u64; KEY_WORDS];
        let mut values = [0u64; KEY_WORDS];
        for w in self.words.iter() {
            masks[w.word as usize] = w.mask;
            values[w.word as usize] = w.value;
        }
        crate::group::exact::exact_form(&masks, &values, !self.ranges.is_empty())
    }
}

/// An exact 5-tuple rule lowered by [`lower_exact5`]: what the exact tables need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Exact5 {
    pub hi_mask: u64,
    pub hi_value: u64,
    pub key: [u32; 3],
    pub fate: Fate,
    pub jump: Option<u32>,
    pub mark: Option<u32>,
}

/// The exact 5-tuple shape the PAM'21 workload writes — `[eth] / ipv4 src dst / tcp|udp
/// src dst`, every given field exact (full mask, no `last`), no other field, item or
/// level — lowered without the general walk, to exactly what [`lower`] then
/// [`Lowered::exact`] give (a test checks). `None` for anything else: the caller lowers
/// in full.
pub(crate) fn lower_exact5(rule: &Rule) -> Option<Exact5> {
    fn full<T: FieldBits + Copy>(f: &Option<Field<T>>, ones: u128) -> Option<u128> {
        f.filter(|f| f.last.is_none() && f.mask.to_bits() == ones)
            .map(|f| f.value.to_bits())
    }
    let mut items = rule.pattern.iter();
    let mut item = items.next()?;
    let mut p = 0u64;
    if let Item::Eth(e) = item {
        if e.dst.is_some() || e.src.is_some() || e.ether_type.is_some() || e.has_vlan.is_some() {
            return None;
        }
        p |= presence::ETH;
        item = items.next()?;
    }
    let Item::Ipv4(ip) = item else { return None };
    let others = ip.version_ihl.is_some() || ip.tos.is_some() || ip.packet_id.is_some() || ip.fragment_offset.is_some();
    if others || ip.ttl.is_some() || ip.proto.is_some() {
        return None;
    }
    let (src, dst) = (full(&ip.src, 0xffff_ffff)? as u32, full(&ip.dst, 0xffff_ffff)? as u32);
    p |= presence::IPV4;
    let (sport, dport) = match items.next()? {
        Item::Tcp(t) if t.flags.is_none() => {
            p |= presence::TCP;
            (full(&t.src, 0xffff)?, full(&t.dst, 0xffff)?)
        }
        Item::Udp(u) => {
            p |= presence::UDP;
            (full(&u.src, 0xffff)?, full(&u.dst, 0xffff)?)
        }
        _ => return None,
    };
    if items.next().is_some() {
        return None;
    }
    let (fate, jump) = fate_of(&rule.actions);
    let mark = rule.actions.iter().find_map(|a| match a {
        Action::Mark { id } => Some(*id),
        _ => None,
    });
    let hi = p << PRESENCE_SHIFT;
    Some(Exact5 {
        hi_mask: hi,
        hi_value: hi,
        key: [src, dst, (sport | (dport << 16)) as u32],
        fate,
        jump,
        mark,
    })
}

/// Compiles `rule` (see the module doc for the semantics).
#[cfg(test)]
pub(crate) fn compile(rule: &Rule) -> Result<CompiledRule, CompileError> {
    Ok(lower(rule)?.into_compiled(rule))
}

/// [`compile`] without the allocations (see [`Lowered`]).
pub(crate) fn lower(rule: &Rule) -> Result<Lowered, CompileError> {
    let mut masks = [0u64; KEY_WORDS];
    let mut values = [0u64; KEY_WORDS];
    let mut ranges = Vec::new();
    let mut base = 0usize;
    let mut last_order: i16 = -1;
    let (mut vlans, mut mplss) = (0usize, 0usize);
    let mut tunnel_seen = false;
    let mut level_presence = [0u64; 2];
    let mut tun_presence = 0u64;
    let mut impossible = false;
    for (index, item) in rule.pattern.iter().enumerate() {
        let kind = item.kind();
        let err = |why| CompileError::UnsupportedPattern {
            index,
            item: kind.name(),
            why,
        };
        let o = order(kind) as i16;
        let repeatable = matches!(kind, ItemKind::Vlan | ItemKind::Mpls);
        if o < last_order || (o == last_order && !repeatable) {
            return Err(err("items must follow header order, one per header"));
        }
        last_order = o;
        let level = (base != 0) as usize;
        let stack_index = match kind {
            ItemKind::Vlan => {
                vlans += 1;
                if vlans > 2 {
                    return Err(err("at most two vlan items per level"));
                }
                vlans - 1
            }
            ItemKind::Mpls => {
                mplss += 1;
                if mplss > 2 {
                    return Err(err("at most two mpls items per level"));
                }
                mplss - 1
            }
            _ => 0,
        };
        match kind {
            ItemKind::Eth => level_presence[level] |= presence::ETH,
            ItemKind::Vlan => level_presence[level] |= presence::VLAN0 << stack_index,
            ItemKind::Mpls => level_presence[level] |= presence::MPLS0 << stack_index,
            ItemKind::Ipv4 => level_presence[level] |= presence::IPV4,
            ItemKind::Ipv6 => level_presence[level] |= presence::IPV6,
            ItemKind::Tcp => level_presence[level] |= presence::TCP,
            ItemKind::Udp => level_presence[level] |= presence::UDP,
            ItemKind::Sctp => level_presence[level] |= presence::SCTP,
            ItemKind::Icmp => level_presence[level] |= presence::ICMP,
            ItemKind::Icmp6 => level_presence[level] |= presence::ICMP6,
            ItemKind::Vxlan | ItemKind::Gre => {
                if tunnel_seen {
                    return Err(err("only one tunnel level is decoded"));
                }
                tunnel_seen = true;
                tun_presence |= if kind == ItemKind::Vxlan {
                    tunnel_presence::VXLAN
                } else {
                    tunnel_presence::GRE
                };
            }
            ItemKind::GreKey => {
                if tun_presence & tunnel_presence::GRE == 0 {
                    return Err(err("gre_key must follow gre"));
                }
                tun_presence |= tunnel_presence::GRE_KEY;
            }
        }
        for (slot, f) in item_fields(item).into_iter().enumerate() {
            let Some((value, mask, last)) = f else { continue };
            let Some(loc) = field_loc(kind, slot, base, stack_index) else {
                continue;
            };
            let width_ones = ones128(loc.width as u32);
            match last {
                None => {
                    if value & !width_ones != 0 {
                        impossible = true;
                    }
                    loc.place(mask & width_ones, value & width_ones, &mut masks, &mut values);
                }
                Some(hi) => {
                    // `value <= packet & mask <= hi`, packet < 2^width: clamp to what exists.
                    let m = mask & width_ones;
                    let hi = hi.min(m);
                    if value > hi {
                        impossible = true;
                    } else {
                        ranges.push(RangeMatch {
                            loc,
                            mask: m,
                            lo: value,
                            hi,
                        });
                    }
                }
            }
        }
        if matches!(kind, ItemKind::Vxlan | ItemKind::Gre) {
            base = INNER_BASE;
            last_order = -1;
            vlans = 0;
            mplss = 0;
        }
    }
    if impossible {
        level_presence[0] |= presence::IMPOSSIBLE;
    }
    for (level, &p) in level_presence.iter().enumerate() {
        let w = level * INNER_BASE + W_L4;
        masks[w] |= p << PRESENCE_SHIFT;
        values[w] |= p << PRESENCE_SHIFT;
    }
    masks[W_TUN1] |= tun_presence << TUNNEL_PRESENCE_SHIFT;
    values[W_TUN1] |= tun_presence << TUNNEL_PRESENCE_SHIFT;
    for (v, m) in values.iter_mut().zip(&masks) {
        *v &= *m;
    }
    let (fate, jump) = fate_of(&rule.actions);
    let mark = rule.actions.iter().find_map(|a| match a {
        Action::Mark { id } => Some(*id),
        _ => None,
    });
    Ok(Lowered {
        masks,
        values,
        ranges,
        fate,
        jump,
        mark,
    })
}

/// The first fate action decides: a jump continues in its group.
fn fate_of(actions: &[Action]) -> (Fate, Option<u32>) {
    for a in actions {
        let fate = match a {
            Action::Queue { index } => Fate::Queue { index: *index },
            Action::Rss(_) => Fate::Rss,
            Action::Drop => Fate::Drop,
            Action::PortId { id } => Fate::PortId { id: *id },
            Action::Passthru => Fate::Passthru,
            Action::Jump { group } => return (Fate::NoFate, Some(*group)),
            _ => continue,
        };
        return (fate, None);
    }
    (Fate::NoFate, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PacketKey;
    use nicbench_rules::model::{EthItem, Ipv4Item, TcpItem, UdpItem, VlanItem, VxlanItem};
    use std::net::Ipv4Addr;

    fn rule(pattern: Vec<Item>) -> Rule {
        Rule {
            pattern,
            actions: vec![Action::Mark { id: 7 }, Action::Queue { index: 3 }],
            ..Default::default()
        }
    }

    #[test]
    fn test_compile_5tuple_with_range() {
        let r = rule(vec![
            Item::Eth(EthItem::default()),
            Item::Ipv4(Ipv4Item {
                src: Field::prefix(Ipv4Addr::new(10, 1, 0, 0), 16),
                ..Default::default()
            }),
            Item::Tcp(TcpItem {
                dst: Some(Field::range(1000, 2000)),
                ..Default::default()
            }),
        ]);
        let c = compile(&r).unwrap();
        assert_eq!(c.fate, Fate::Queue { index: 3 });
        assert_eq!(c.mark, Some(7));
        assert_eq!(c.ranges.len(), 1);
        let k = |sp, dp, proto| {
            PacketKey::ipv4_5tuple(Ipv4Addr::new(10, 1, 9, 9), Ipv4Addr::new(1, 2, 3, 4), sp, dp, proto, 60)
        };
        assert!(c.matches(&k(5, 1000, 6)));
        assert!(c.matches(&k(5, 2000, 6)));
        assert!(!c.matches(&k(5, 2001, 6)));
        assert!(!c.matches(&k(5, 1500, 17)), "udp is not tcp");
        // 1000..=2000 share no leading bits beyond 0b0000_0: 1000 = 0x3e8, 2000 = 0x7d0.
        let h = c.hashable_mask();
        assert_eq!((h[W_L4] >> 16) & 0xffff, 0xf800);
        assert_eq!(h[0], 0xffff_0000);
    }

    #[test]
    fn test_refuses_out_of_order_and_deep_stacks() {
        let e = compile(&rule(vec![
            Item::Udp(UdpItem::default()),
            Item::Eth(EthItem::default()),
        ]))
        .unwrap_err();
        assert!(matches!(e, CompileError::UnsupportedPattern { index: 1, .. }));
        let v = || Item::Vlan(VlanItem::default());
        assert!(compile(&rule(vec![Item::Eth(EthItem::default()), v(), v()])).is_ok());
        assert!(compile(&rule(vec![Item::Eth(EthItem::default()), v(), v(), v()])).is_err());
        let vx = || Item::Vxlan(VxlanItem::default());
        assert!(compile(&rule(vec![
            vx(),
            Item::Eth(EthItem::default()),
            Item::Udp(UdpItem::default()),
            vx()
        ]))
        .is_err());
    }

    #[test]
    fn test_value_beyond_width_never_matches() {
        let r = rule(vec![Item::Vxlan(VxlanItem {
            vni: Field::new(1 << 25, u32::MAX, None),
            ..Default::default()
        })]);
        let c = compile(&r).unwrap();
        let mut k = PacketKey::default();
        k.words[W_L4] = !(presence::IMPOSSIBLE << PRESENCE_SHIFT);
        k.words[W_TUN1] = u64::MAX;
        let ok = compile(&rule(vec![Item::Vxlan(VxlanItem {
            vni: Field::new(1 << 20, u32::MAX, None),
            ..Default::default()
        })]))
        .unwrap();
        assert!(!ok.matches(&k), "the key's vni bits are all ones, not 1 << 20");
        k.words[crate::key::W_TUN0] = 1 << 20;
        assert!(ok.matches(&k));
        assert!(!c.matches(&k));
    }

    #[test]
    fn test_fast_exact5_lowering_agrees_with_the_general_one() {
        let (mut rules, _) = crate::workload::exact5(200, 3);
        let n = rules.len();
        for i in 0..n {
            let mut r = rules[i].clone();
            match i % 4 {
                0 => r.pattern.remove(0), // no eth item
                1 => {
                    r.actions = vec![Action::Mark { id: 9 }, Action::Jump { group: 3 }];
                    r.pattern[0].clone()
                }
                _ => r.pattern[0].clone(),
            };
            rules.push(r);
        }
        for r in &rules {
            let l = lower(r).unwrap();
            let fast = lower_exact5(r).expect("exact shape");
            let (hi_mask, hi_value, key) = l.exact().expect("general lowering agrees it is exact");
            assert_eq!(
                fast,
                Exact5 {
                    hi_mask,
                    hi_value,
                    key,
                    fate: l.fate,
                    jump: l.jump,
                    mark: l.mark
                },
                "{r:?}"
            );
            let (a, b) = (
                compile(r).unwrap(),
                CompiledRule::from_exact5(&fast, r.attr.group, r.attr.priority, &r.actions),
            );
            assert_eq!(
                (a.group, a.priority, &a.words, a.ranges.len(), a.fate, a.jump, a.mark),
                (b.group, b.priority, &b.words, 0, b.fate, b.jump, b.mark)
            );
            assert_eq!(a.actions, b.actions);
        }
        // Shapes that are not the plain exact 5-tuple fall back to the general lowering.
        let base = &rules[0];
        let variant = |f: &dyn Fn(&mut Rule)| {
            let mut r = base.clone();
            f(&mut r);
            lower_exact5(&r)
        };
        assert!(variant(&|r| if let Item::Ipv4(ip) = &mut r.pattern[1] {
            ip.proto = Field::new(6, 0xff, None)
        })
        .is_none());
        assert!(variant(&|r| if let Item::Ipv4(ip) = &mut r.pattern[1] {
            ip.src = Field::prefix(Ipv4Addr::new(10, 0, 0, 0), 8)
        })
        .is_none());
        assert!(variant(&|r| if let Item::Eth(e) = &mut r.pattern[0] {
            e.ether_type = Field::new(0x800, 0xffff, None)
        })
        .is_none());
        assert!(variant(&|r| r.pattern.push(Item::Vxlan(VxlanItem::default()))).is_none());
        assert!(variant(&|r| match &mut r.pattern[2] {
            Item::Tcp(t) =>
                t.dst = Some(Field {
                    value: 80,
                    mask: 0xffff,
                    last: Some(90)
                }),
            Item::Udp(u) =>
                u.dst = Some(Field {
                    value: 80,
                    mask: 0xffff,
                    last: Some(90)
                }),
            _ => {}
        })
        .is_none());
        assert!(variant(&|r| r.pattern.truncate(2)).is_none(), "no L4 item");
    }

    #[test]
    fn test_jump_fate() {
        let r = Rule {
            actions: vec![Action::Count, Action::Jump { group: 4 }],
            ..Default::default()
        };
        let c = compile(&r).unwrap();
        assert_eq!((c.fate, c.jump), (Fate::NoFate, Some(4)));
        assert_eq!(compile(&Rule::default()).unwrap().fate, Fate::NoFate);
    }
}
