//! Pattern items: one struct per protocol, one `Option<Field>` per matchable field.
//!
//! An item whose fields are all `None` means "this protocol header must be present".
//! Field layout follows DPDK 22.11 `rte_flow_item_*`: where testpmd has a token for a whole
//! word (VLAN `tci`, GRE `c_rsvd0_ver`) the model keeps the word and the bit-field tokens
//! (`vid`, `pcp`, `c_bit` …) are views on it; where it has none (IPv6 `tc`/`flow`, MPLS
//! `label`/`tc`/`s`) each bit-field is its own model field, right-aligned.
//!
//! Every item converts to and from a fixed array of raw `Field<u128>` "slots" in field
//! declaration order; the syntaxes use that to stay table-driven.

use super::field::{Field, MacAddr};
use serde::{Deserialize, Serialize};
use std::net::{Ipv4Addr, Ipv6Addr};

/// Most fields any item has; the size of the raw slot array.
pub(crate) const MAX_SLOTS: usize = 8;
pub(crate) type RawSlots = [Option<Field<u128>>; MAX_SLOTS];

/// How a slot's values are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ValueKind {
    Dec,
    Hex,
    Mac,
    Ipv4,
    Ipv6,
}

/// A model field of an item: name, width and rte_flow's default mask (used when a rule
/// gives a spec but no mask at all for the item).
#[derive(Debug, Clone, Copy)]
pub(crate) struct SlotDesc {
    pub name: &'static str,
    pub width_bits: u32,
    pub default_mask: u128,
    pub kind: ValueKind,
}

const fn slot(name: &'static str, width_bits: u32, default_mask: u128, kind: ValueKind) -> SlotDesc {
    SlotDesc {
        name,
        width_bits,
        default_mask,
        kind,
    }
}

macro_rules! item_struct {
    ($(#[$m:meta])* $name:ident { $($(#[$fm:meta])* $field:ident : $ty:ty),* $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub struct $name {
            $($(#[$fm])* #[serde(default, skip_serializing_if = "Option::is_none")]
            pub $field: Option<Field<$ty>>,)*
        }
        impl $name {
            pub(crate) fn from_slots(slots: &RawSlots) -> Self {
                let mut it = slots.iter();
                $name { $($field: it.next().copied().flatten().map(Field::<$ty>::from_raw),)* }
            }
            pub(crate) fn to_slots(&self) -> RawSlots {
                let mut out: RawSlots = [None; MAX_SLOTS];
                let mut i = 0;
                $( out[i] = self.$field.map(Field::<$ty>::to_raw); i += 1; )*
                let _ = i;
                out
            }
        }
    };
}

item_struct!(
    /// Ethernet header.
    EthItem { dst: MacAddr, src: MacAddr, ether_type: u16,
        /// 1-bit flag: the frame carries at least one VLAN tag.
        has_vlan: u8 }
);
item_struct!(
    /// 802.1Q tag. `tci` = PCP(3) | DEI(1) | VID(12); see [`VlanItem::vid`].
    VlanItem { tci: u16, inner_type: u16,
        /// 1-bit flag: another VLAN tag follows.
        has_more_vlan: u8 }
);
item_struct!(
    /// IPv4 header.
    Ipv4Item { version_ihl: u8, tos: u8, packet_id: u16, fragment_offset: u16, ttl: u8,
        proto: u8, src: Ipv4Addr, dst: Ipv4Addr }
);
item_struct!(
    /// IPv6 header. `flow_label` is 20 bits wide.
    Ipv6Item { tc: u8, flow_label: u32, proto: u8, hop_limit: u8, src: Ipv6Addr, dst: Ipv6Addr,
        /// 1-bit flag: a fragment extension header is present.
        has_frag_ext: u8 }
);
item_struct!(
    /// TCP header.
    TcpItem { src: u16, dst: u16, flags: u8 }
);
item_struct!(
    /// UDP header.
    UdpItem { src: u16, dst: u16 }
);
item_struct!(
    /// SCTP common header.
    SctpItem { src: u16, dst: u16, tag: u32, cksum: u32 }
);
item_struct!(
    /// ICMP (v4) header.
    IcmpItem { icmp_type: u8, code: u8, ident: u16, seq: u16 }
);
item_struct!(
    /// ICMPv6 header.
    Icmp6Item { icmp_type: u8, code: u8 }
);
item_struct!(
    /// VXLAN header. `vni` is 24 bits wide.
    VxlanItem { vni: u32, last_rsvd: u8 }
);
item_struct!(
    /// GRE header. `c_rsvd0_ver` = C(bit 15) R K(13) S(12) reserved version.
    GreItem { c_rsvd0_ver: u16, protocol: u16 }
);
item_struct!(
    /// GRE key extension (testpmd item `gre_key`).
    GreKeyItem { value: u32 }
);
item_struct!(
    /// MPLS label stack entry: `label` (20 bits), `tc` (3 bits), bottom-of-stack `s` (1 bit).
    MplsItem { label: u32, tc: u8, s: u8 }
);

impl VlanItem {
    /// VLAN id part of the TCI match: (value, mask), 12 bits each.
    pub fn vid(&self) -> Option<(u16, u16)> {
        self.tci
            .map(|f| (f.value & 0x0fff, f.mask & 0x0fff))
            .filter(|&(_, m)| m != 0)
    }
    /// Priority (PCP) part of the TCI match: (value, mask), 3 bits each.
    pub fn pcp(&self) -> Option<(u8, u8)> {
        self.tci
            .map(|f| ((f.value >> 13) as u8, (f.mask >> 13) as u8))
            .filter(|&(_, m)| m != 0)
    }
}

/// One pattern item (rte_flow `RTE_FLOW_ITEM_TYPE_*`).
///
/// The IPv6 item (132 bytes, three times the next largest) is boxed so that an item is 64
/// bytes: a 5-tuple pattern then fills 3 cache lines instead of 7, which is what a rule
/// copy, and an update that hands the classifier a new rule, reads and allocates.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Item {
    Eth(EthItem),
    Vlan(VlanItem),
    Ipv4(Ipv4Item),
    Ipv6(Box<Ipv6Item>),
    Tcp(TcpItem),
    Udp(UdpItem),
    Sctp(SctpItem),
    Icmp(IcmpItem),
    Icmp6(Icmp6Item),
    Vxlan(VxlanItem),
    Gre(GreItem),
    GreKey(GreKeyItem),
    Mpls(MplsItem),
}

// What the boxing above buys; a new field that grows an item or an action past these
// shows here.
const _: () = assert!(std::mem::size_of::<Item>() <= 64);
const _: () = assert!(std::mem::size_of::<super::Action>() <= 24);

/// The protocol of an item, without its fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemKind {
    Eth,
    Vlan,
    Ipv4,
    Ipv6,
    Tcp,
    Udp,
    Sctp,
    Icmp,
    Icmp6,
    Vxlan,
    Gre,
    GreKey,
    Mpls,
}

use ValueKind::{Dec, Hex, Ipv4 as V4, Ipv6 as V6, Mac};

const ETH_SLOTS: &[SlotDesc] = &[
    slot("dst", 48, 0xffff_ffff_ffff, Mac),
    slot("src", 48, 0xffff_ffff_ffff, Mac),
    slot("ether_type", 16, 0, Hex),
    slot("has_vlan", 1, 0, Dec),
];
const VLAN_SLOTS: &[SlotDesc] = &[
    slot("tci", 16, 0x0fff, Hex),
    slot("inner_type", 16, 0, Hex),
    slot("has_more_vlan", 1, 0, Dec),
];
const IPV4_SLOTS: &[SlotDesc] = &[
    slot("version_ihl", 8, 0, Hex),
    slot("tos", 8, 0, Dec),
    slot("packet_id", 16, 0, Dec),
    slot("fragment_offset", 16, 0, Hex),
    slot("ttl", 8, 0, Dec),
    slot("proto", 8, 0, Dec),
    slot("src", 32, 0xffff_ffff, V4),
    slot("dst", 32, 0xffff_ffff, V4),
];
const IPV6_SLOTS: &[SlotDesc] = &[
    slot("tc", 8, 0, Dec),
    slot("flow_label", 20, 0, Dec),
    slot("proto", 8, 0, Dec),
    slot("hop_limit", 8, 0, Dec),
    slot("src", 128, u128::MAX, V6),
    slot("dst", 128, u128::MAX, V6),
    slot("has_frag_ext", 1, 0, Dec),
];
const TCP_SLOTS: &[SlotDesc] = &[
    slot("src", 16, 0xffff, Dec),
    slot("dst", 16, 0xffff, Dec),
    slot("flags", 8, 0, Hex),
];
const UDP_SLOTS: &[SlotDesc] = &[slot("src", 16, 0xffff, Dec), slot("dst", 16, 0xffff, Dec)];
const SCTP_SLOTS: &[SlotDesc] = &[
    slot("src", 16, 0xffff, Dec),
    slot("dst", 16, 0xffff, Dec),
    slot("tag", 32, 0, Dec),
    slot("cksum", 32, 0, Hex),
];
const ICMP_SLOTS: &[SlotDesc] = &[
    slot("icmp_type", 8, 0xff, Dec),
    slot("code", 8, 0xff, Dec),
    slot("ident", 16, 0, Dec),
    slot("seq", 16, 0, Dec),
];
const ICMP6_SLOTS: &[SlotDesc] = &[slot("icmp_type", 8, 0xff, Dec), slot("code", 8, 0xff, Dec)];
const VXLAN_SLOTS: &[SlotDesc] = &[slot("vni", 24, 0xff_ffff, Dec), slot("last_rsvd", 8, 0, Dec)];
const GRE_SLOTS: &[SlotDesc] = &[slot("c_rsvd0_ver", 16, 0, Hex), slot("protocol", 16, 0xffff, Hex)];
const GRE_KEY_SLOTS: &[SlotDesc] = &[slot("value", 32, 0xffff_ffff, Dec)];
const MPLS_SLOTS: &[SlotDesc] = &[
    slot("label", 20, 0xf_ffff, Dec),
    slot("tc", 3, 0, Dec),
    slot("s", 1, 0, Dec),
];

impl ItemKind {
    pub const ALL: [ItemKind; 13] = [
        ItemKind::Eth,
        ItemKind::Vlan,
        ItemKind::Ipv4,
        ItemKind::Ipv6,
        ItemKind::Tcp,
        ItemKind::Udp,
        ItemKind::Sctp,
        ItemKind::Icmp,
        ItemKind::Icmp6,
        ItemKind::Vxlan,
        ItemKind::Gre,
        ItemKind::GreKey,
        ItemKind::Mpls,
    ];

    /// The testpmd item name.
    pub fn name(self) -> &'static str {
        match self {
            ItemKind::Eth => "eth",
            ItemKind::Vlan => "vlan",
            ItemKind::Ipv4 => "ipv4",
            ItemKind::Ipv6 => "ipv6",
            ItemKind::Tcp => "tcp",
            ItemKind::Udp => "udp",
            ItemKind::Sctp => "sctp",
            ItemKind::Icmp => "icmp",
            ItemKind::Icmp6 => "icmp6",
            ItemKind::Vxlan => "vxlan",
            ItemKind::Gre => "gre",
            ItemKind::GreKey => "gre_key",
            ItemKind::Mpls => "mpls",
        }
    }

    /// Names of the item's model fields, in declaration order.
    pub fn field_names(self) -> Vec<&'static str> {
        self.slots().iter().map(|s| s.name).collect()
    }

    pub(crate) fn slots(self) -> &'static [SlotDesc] {
        match self {
            ItemKind::Eth => ETH_SLOTS,
            ItemKind::Vlan => VLAN_SLOTS,
            ItemKind::Ipv4 => IPV4_SLOTS,
            ItemKind::Ipv6 => IPV6_SLOTS,
            ItemKind::Tcp => TCP_SLOTS,
            ItemKind::Udp => UDP_SLOTS,
            ItemKind::Sctp => SCTP_SLOTS,
            ItemKind::Icmp => ICMP_SLOTS,
            ItemKind::Icmp6 => ICMP6_SLOTS,
            ItemKind::Vxlan => VXLAN_SLOTS,
            ItemKind::Gre => GRE_SLOTS,
            ItemKind::GreKey => GRE_KEY_SLOTS,
            ItemKind::Mpls => MPLS_SLOTS,
        }
    }
}

impl Item {
    pub fn kind(&self) -> ItemKind {
        match self {
            Item::Eth(_) => ItemKind::Eth,
            Item::Vlan(_) => ItemKind::Vlan,
            Item::Ipv4(_) => ItemKind::Ipv4,
            Item::Ipv6(_) => ItemKind::Ipv6,
            Item::Tcp(_) => ItemKind::Tcp,
            Item::Udp(_) => ItemKind::Udp,
            Item::Sctp(_) => ItemKind::Sctp,
            Item::Icmp(_) => ItemKind::Icmp,
            Item::Icmp6(_) => ItemKind::Icmp6,
            Item::Vxlan(_) => ItemKind::Vxlan,
            Item::Gre(_) => ItemKind::Gre,
            Item::GreKey(_) => ItemKind::GreKey,
            Item::Mpls(_) => ItemKind::Mpls,
        }
    }

    /// Whether the item has no field constraint (matches on protocol presence only).
    pub fn is_presence_only(&self) -> bool {
        self.to_slots().iter().all(Option::is_none)
    }

    /// The item's constrained fields as (model field name, width \[bits\], raw field), in
    /// declaration order: what a packet must carry to match it, for code that builds packets
    /// for rules rather than matching packets against them.
    pub fn constraints(&self) -> Vec<(&'static str, u32, Field<u128>)> {
        self.kind()
            .slots()
            .iter()
            .zip(self.to_slots())
            .filter_map(|(desc, raw)| raw.map(|f| (desc.name, desc.width_bits, f)))
            .collect()
    }

    pub(crate) fn to_slots(&self) -> RawSlots {
        match self {
            Item::Eth(i) => i.to_slots(),
            Item::Vlan(i) => i.to_slots(),
            Item::Ipv4(i) => i.to_slots(),
            Item::Ipv6(i) => i.to_slots(),
            Item::Tcp(i) => i.to_slots(),
            Item::Udp(i) => i.to_slots(),
            Item::Sctp(i) => i.to_slots(),
            Item::Icmp(i) => i.to_slots(),
            Item::Icmp6(i) => i.to_slots(),
            Item::Vxlan(i) => i.to_slots(),
            Item::Gre(i) => i.to_slots(),
            Item::GreKey(i) => i.to_slots(),
            Item::Mpls(i) => i.to_slots(),
        }
    }

    /// Builds an item from canonical raw slots (see [`Field::new`]).
    pub(crate) fn from_slots(kind: ItemKind, s: &RawSlots) -> Item {
        match kind {
            ItemKind::Eth => Item::Eth(EthItem::from_slots(s)),
            ItemKind::Vlan => Item::Vlan(VlanItem::from_slots(s)),
            ItemKind::Ipv4 => Item::Ipv4(Ipv4Item::from_slots(s)),
            ItemKind::Ipv6 => Item::Ipv6(Box::new(Ipv6Item::from_slots(s))),
            ItemKind::Tcp => Item::Tcp(TcpItem::from_slots(s)),
            ItemKind::Udp => Item::Udp(UdpItem::from_slots(s)),
            ItemKind::Sctp => Item::Sctp(SctpItem::from_slots(s)),
            ItemKind::Icmp => Item::Icmp(IcmpItem::from_slots(s)),
            ItemKind::Icmp6 => Item::Icmp6(Icmp6Item::from_slots(s)),
            ItemKind::Vxlan => Item::Vxlan(VxlanItem::from_slots(s)),
            ItemKind::Gre => Item::Gre(GreItem::from_slots(s)),
            ItemKind::GreKey => Item::GreKey(GreKeyItem::from_slots(s)),
            ItemKind::Mpls => Item::Mpls(MplsItem::from_slots(s)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_slots_round_trip_every_kind() {
        for kind in ItemKind::ALL {
            let descs = kind.slots();
            assert!(descs.len() <= MAX_SLOTS);
            let mut raw: RawSlots = [None; MAX_SLOTS];
            for (i, d) in descs.iter().enumerate() {
                let full = super::super::field::ones(d.width_bits);
                raw[i] = Field::<u128>::canonical(full & 0x5a5a_5a5a, full, None);
            }
            let item = Item::from_slots(kind, &raw);
            assert_eq!(item.kind(), kind);
            assert_eq!(item.to_slots(), raw, "{kind:?}");
        }
    }

    #[test]
    fn test_vlan_views() {
        let v = VlanItem {
            tci: Field::new(0x6005, 0xefff, None),
            ..Default::default()
        };
        assert_eq!(v.vid(), Some((5, 0x0fff)));
        assert_eq!(v.pcp(), Some((3, 7)));
        assert!(!Item::Vlan(v).is_presence_only());
        assert!(Item::Udp(UdpItem::default()).is_presence_only());
    }
}
