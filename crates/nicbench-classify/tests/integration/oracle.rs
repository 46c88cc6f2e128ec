//! Brute-force reference classifier: walks every rule's pattern over the `ParsedFrame`
//! with the rules crate's `Field::matches`, independently of the key layout and tables.

use nicbench_classify::{Fate, Verdict};
use nicbench_rules::{Action, Item, MacAddr, Rule};
use nicbench_wire::parse::{Ip, Layers, ParsedFrame, Tunnel, L4};

fn ok<T: nicbench_rules::model::FieldBits>(f: &Option<nicbench_rules::Field<T>>, v: T) -> bool {
    f.as_ref().is_none_or(|f| f.matches(v))
}

fn item_matches(item: &Item, l: &Layers, vlan_i: usize, mpls_i: usize) -> bool {
    match item {
        Item::Eth(i) => l.eth.is_some_and(|e| {
            ok(&i.dst, MacAddr(e.dst))
                && ok(&i.src, MacAddr(e.src))
                && ok(&i.ether_type, e.ethertype)
                && ok(&i.has_vlan, (l.vlan_count > 0) as u8)
        }),
        Item::Vlan(i) => l.vlans.get(vlan_i).copied().flatten().is_some_and(|v| {
            let tci = ((v.pcp as u16) << 13) | ((v.dei as u16) << 12) | v.vid;
            ok(&i.tci, tci)
                && ok(&i.inner_type, v.inner_ethertype)
                && ok(&i.has_more_vlan, ((vlan_i + 1) < l.vlan_count as usize) as u8)
        }),
        Item::Mpls(i) => l
            .mpls
            .get(mpls_i)
            .copied()
            .flatten()
            .is_some_and(|m| ok(&i.label, m.label) && ok(&i.tc, m.tc) && ok(&i.s, m.bottom_of_stack as u8)),
        Item::Ipv4(i) => match l.ip {
            Some(Ip::V4(h)) => {
                let frag = ((h.dont_frag as u16) << 14) | ((h.more_frags as u16) << 13) | h.frag_offset;
                ok(&i.version_ihl, 0x40 | h.ihl)
                    && ok(&i.tos, h.tos)
                    && ok(&i.packet_id, h.id)
                    && ok(&i.fragment_offset, frag)
                    && ok(&i.ttl, h.ttl)
                    && ok(&i.proto, h.proto)
                    && ok(&i.src, h.src)
                    && ok(&i.dst, h.dst)
            }
            _ => false,
        },
        Item::Ipv6(i) => match l.ip {
            Some(Ip::V6(h)) => {
                ok(&i.tc, h.traffic_class)
                    && ok(&i.flow_label, h.flow_label)
                    && ok(&i.proto, h.header_next_header)
                    && ok(&i.hop_limit, h.hop_limit)
                    && ok(&i.src, h.src)
                    && ok(&i.dst, h.dst)
                    && ok(&i.has_frag_ext, h.fragment.is_some() as u8)
            }
            _ => false,
        },
        Item::Tcp(i) => {
            matches!(l.l4, Some(L4::Tcp(t)) if ok(&i.src, t.src_port) && ok(&i.dst, t.dst_port) && ok(&i.flags, t.flags))
        }
        Item::Udp(i) => matches!(l.l4, Some(L4::Udp(u)) if ok(&i.src, u.src_port) && ok(&i.dst, u.dst_port)),
        Item::Sctp(i) => {
            matches!(l.l4, Some(L4::Sctp(s)) if ok(&i.src, s.src_port) && ok(&i.dst, s.dst_port) && ok(&i.tag, s.vtag) && ok(&i.cksum, 0))
        }
        Item::Icmp(i) => {
            matches!(l.l4, Some(L4::Icmpv4(c)) if ok(&i.icmp_type, c.icmp_type) && ok(&i.code, c.code) && ok(&i.ident, 0) && ok(&i.seq, 0))
        }
        Item::Icmp6(i) => matches!(l.l4, Some(L4::Icmpv6(c)) if ok(&i.icmp_type, c.icmp_type) && ok(&i.code, c.code)),
        Item::Vxlan(_) | Item::Gre(_) | Item::GreKey(_) => unreachable!("tunnel items are matched by the walk"),
    }
}

/// Whether `rule`'s pattern matches the frame (rte_flow walk: outer, tunnel, inner).
pub fn rule_matches(rule: &Rule, f: &ParsedFrame) -> bool {
    let mut layers: Option<&Layers> = Some(&f.outer);
    let (mut vlan_i, mut mpls_i) = (0, 0);
    for item in &rule.pattern {
        match item {
            Item::Vxlan(i) => {
                let Some(Tunnel::Vxlan { vni, .. }) = f.tunnel else {
                    return false;
                };
                if !(ok(&i.vni, vni) && ok(&i.last_rsvd, 0)) {
                    return false;
                }
                layers = f.inner.as_ref();
                (vlan_i, mpls_i) = (0, 0);
            }
            Item::Gre(i) => {
                let Some(Tunnel::Gre(g)) = f.tunnel else { return false };
                let word = ((g.checksum_present as u16) << 15)
                    | ((g.key.is_some() as u16) << 13)
                    | ((g.seq.is_some() as u16) << 12)
                    | g.version as u16;
                if !(ok(&i.c_rsvd0_ver, word) && ok(&i.protocol, g.protocol)) {
                    return false;
                }
                layers = f.inner.as_ref();
                (vlan_i, mpls_i) = (0, 0);
            }
            Item::GreKey(i) => match f.tunnel {
                Some(Tunnel::Gre(g)) if g.key.is_some_and(|k| ok(&i.value, k)) => {}
                _ => return false,
            },
            other => {
                let Some(l) = layers else { return false };
                if !item_matches(other, l, vlan_i, mpls_i) {
                    return false;
                }
                match other {
                    Item::Vlan(_) => vlan_i += 1,
                    Item::Mpls(_) => mpls_i += 1,
                    _ => {}
                }
            }
        }
    }
    true
}

/// The reference result: (verdict, rule index per group traversed, mark).
pub fn classify(rules: &[(usize, &Rule)], f: &ParsedFrame, start: u32) -> (Verdict, Vec<Option<usize>>, Option<u32>) {
    let mut group = start;
    let mut path = Vec::new();
    let mut mark = None;
    for _ in 0..=rules.len() + 1 {
        // Rules are given in insertion order: the first of the best priority wins.
        let best = rules
            .iter()
            .filter(|(_, r)| r.attr.group == group && rule_matches(r, f))
            .min_by_key(|(seq, r)| (r.attr.priority, *seq));
        path.push(best.map(|b| b.0));
        let Some((_, r)) = best else {
            return (Verdict::Unmatched, path, mark);
        };
        if let Some(m) = r
            .actions
            .iter()
            .find_map(|a| if let Action::Mark { id } = a { Some(*id) } else { None })
        {
            mark = Some(m);
        }
        let fate = r.actions.iter().find(|a| a.is_fate());
        match fate {
            Some(Action::Jump { group: g }) => group = *g,
            Some(Action::Queue { index }) => return (Verdict::Fate(Fate::Queue { index: *index }), path, mark),
            Some(Action::Drop) => return (Verdict::Fate(Fate::Drop), path, mark),
            Some(Action::Rss(_)) => return (Verdict::Fate(Fate::Rss), path, mark),
            Some(Action::PortId { id }) => return (Verdict::Fate(Fate::PortId { id: *id }), path, mark),
            Some(Action::Passthru) => return (Verdict::Fate(Fate::Passthru), path, mark),
            _ => return (Verdict::Fate(Fate::NoFate), path, mark),
        }
    }
    panic!("oracle walked more groups than rules: cycle");
}
