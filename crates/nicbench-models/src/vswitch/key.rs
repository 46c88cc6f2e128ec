//! The flow key OVS's classifier sees for one packet: every [`OfField`] value, taken from the
//! frame's headers as `flow_extract()` (lib/flow.c) fills `struct flow`, plus the ingress port.
//!
//! [`Fields`] is one `u128` per field (right-aligned, as in [`FieldMatch`]); the same type holds
//! a key, a mask (the megaflow's wildcards) or a rule's values.
//!
//! Invariants: fields a packet does not have are 0 (OVS zeroes them too); `vlan_tci` carries the
//! CFI/present bit 0x1000 when the frame is tagged, so 0 means "no VLAN"; ICMP type/code sit in
//! `tp_src`/`tp_dst`; a non-first fragment has no ports.

use std::ops::{Index, IndexMut};

use nicbench_rules::openflow::{FieldMatch, OfField};
use nicbench_wire::parse::{parse_ethernet, Ip, L4};

/// Every field, in [`OfField`] order (its discriminant is the index).
pub const FIELDS: [OfField; 24] = {
    use OfField::*;
    [
        RecircId, InPort, DlSrc, DlDst, DlType, VlanTci, NwSrc, NwDst, Ipv6Src, Ipv6Dst, NwProto, NwTos, NwTtl, NwFrag,
        TpSrc, TpDst, TcpFlags, TunId, TunSrc, TunDst, CtState, CtZone, CtMark, Metadata,
    ]
};

/// `nw_frag` bits (lib/flow.h `FLOW_NW_FRAG_ANY`, `FLOW_NW_FRAG_LATER`).
pub const NW_FRAG_ANY: u128 = 1;
pub const NW_FRAG_LATER: u128 = 2;
pub const NW_FRAG_MASK: u128 = 3;
/// The 802.1Q TCI bits OVS keeps: CFI/present, VID, PCP.
pub const VLAN_CFI: u128 = 0x1000;
pub const VLAN_VID_MASK: u128 = 0x0fff;

pub const ETH_TYPE_IP: u128 = 0x0800;
pub const ETH_TYPE_IPV6: u128 = 0x86dd;
pub const IPPROTO_ICMP: u128 = 1;
pub const IPPROTO_TCP: u128 = 6;
pub const IPPROTO_UDP: u128 = 17;
pub const IPPROTO_ICMPV6: u128 = 58;
pub const IPPROTO_SCTP: u128 = 132;

/// One value per [`OfField`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Fields(pub [u128; FIELDS.len()]);

impl Index<OfField> for Fields {
    type Output = u128;
    fn index(&self, f: OfField) -> &u128 {
        &self.0[f as usize]
    }
}

impl IndexMut<OfField> for Fields {
    fn index_mut(&mut self, f: OfField) -> &mut u128 {
        &mut self.0[f as usize]
    }
}

impl Fields {
    /// `self & mask`, field by field.
    pub fn and(&self, mask: &Fields) -> Fields {
        let mut out = *self;
        for (v, m) in out.0.iter_mut().zip(mask.0.iter()) {
            *v &= m;
        }
        out
    }

    /// `self |= other`, field by field (un-wildcarding).
    pub fn or_assign(&mut self, other: &Fields) {
        for (v, m) in self.0.iter_mut().zip(other.0.iter()) {
            *v |= m;
        }
    }

    pub fn is_zero(&self) -> bool {
        self.0.iter().all(|v| *v == 0)
    }

    /// Fields with a non-zero value, as (field, value).
    pub fn nonzero(&self) -> impl Iterator<Item = (OfField, u128)> + '_ {
        FIELDS.iter().map(|f| (*f, self[*f])).filter(|(_, v)| *v != 0)
    }

    /// Values and masks of the fields a set of [`FieldMatch`]es names.
    pub fn from_matches(matches: &[FieldMatch]) -> (Fields, Fields) {
        let (mut value, mut mask) = (Fields::default(), Fields::default());
        for m in matches {
            mask[m.field] |= m.mask & m.field.full_mask();
            value[m.field] = (value[m.field] & !m.mask) | (m.value & m.mask);
        }
        (value, mask)
    }
}

/// True for IPv4 or IPv6 (`is_ip_any`).
pub fn is_ip_any(key: &Fields) -> bool {
    key[OfField::DlType] == ETH_TYPE_IP || key[OfField::DlType] == ETH_TYPE_IPV6
}

/// True when the transport protocol has ports OVS extracts (TCP, UDP, SCTP).
pub fn has_ports(key: &Fields) -> bool {
    is_ip_any(key) && matches!(key[OfField::NwProto], IPPROTO_TCP | IPPROTO_UDP | IPPROTO_SCTP)
}

pub fn is_icmp_any(key: &Fields) -> bool {
    (key[OfField::DlType] == ETH_TYPE_IP && key[OfField::NwProto] == IPPROTO_ICMP)
        || (key[OfField::DlType] == ETH_TYPE_IPV6 && key[OfField::NwProto] == IPPROTO_ICMPV6)
}

fn mac(bytes: [u8; 6]) -> u128 {
    bytes.iter().fold(0u128, |acc, b| (acc << 8) | u128::from(*b))
}

/// The flow key of an Ethernet frame received on OpenFlow port `in_port`. Tunnel, conntrack and
/// pipeline metadata fields are 0 (a frame from a physical or dummy port carries none).
/// ARP/ND fields are not extracted (nicbench's parser stops at ARP); only `dl_type` says ARP.
pub fn flow_key(frame: &[u8], in_port: u32) -> Fields {
    use OfField::*;
    let parsed = parse_ethernet(frame);
    let outer = &parsed.outer;
    let mut key = Fields::default();
    key[InPort] = u128::from(in_port);
    if let Some(eth) = outer.eth {
        key[DlSrc] = mac(eth.src);
        key[DlDst] = mac(eth.dst);
    }
    if let Some(vlan) = outer.vlans[0] {
        key[VlanTci] = (u128::from(vlan.pcp) << 13) | VLAN_CFI | u128::from(vlan.vid);
    }
    key[DlType] = u128::from(outer.ethertype);
    match outer.ip {
        Some(Ip::V4(h)) => {
            key[NwSrc] = u128::from(u32::from(h.src));
            key[NwDst] = u128::from(u32::from(h.dst));
            key[NwProto] = u128::from(h.proto);
            key[NwTos] = u128::from(h.tos);
            key[NwTtl] = u128::from(h.ttl);
        }
        Some(Ip::V6(h)) => {
            key[Ipv6Src] = u128::from(h.src);
            key[Ipv6Dst] = u128::from(h.dst);
            key[NwProto] = u128::from(h.next_header);
            key[NwTos] = u128::from(h.traffic_class);
            key[NwTtl] = u128::from(h.hop_limit);
        }
        None => {}
    }
    if let Some(ip) = outer.ip {
        if ip.is_fragment() {
            key[NwFrag] = NW_FRAG_ANY | if ip.is_non_first_fragment() { NW_FRAG_LATER } else { 0 };
        }
        if !ip.is_non_first_fragment() {
            match outer.l4 {
                Some(L4::Tcp(t)) => {
                    key[TpSrc] = u128::from(t.src_port);
                    key[TpDst] = u128::from(t.dst_port);
                    key[TcpFlags] = u128::from(t.flags);
                }
                Some(L4::Udp(u)) => {
                    key[TpSrc] = u128::from(u.src_port);
                    key[TpDst] = u128::from(u.dst_port);
                }
                Some(L4::Sctp(s)) => {
                    key[TpSrc] = u128::from(s.src_port);
                    key[TpDst] = u128::from(s.dst_port);
                }
                Some(L4::Icmpv4(i)) | Some(L4::Icmpv6(i)) => {
                    key[TpSrc] = u128::from(i.icmp_type);
                    key[TpDst] = u128::from(i.code);
                }
                None => {}
            }
        }
    }
    key
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An Ethernet + optional 802.1Q + IPv4 + UDP/TCP frame, built byte by byte (checksums 0:
    /// OVS and nicbench's parser do not check them).
    pub fn ipv4_frame(src: [u8; 4], dst: [u8; 4], proto: u8, sport: u16, dport: u16, vlan: Option<u16>) -> Vec<u8> {
        let mut f = vec![0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01];
        if let Some(vid) = vlan {
            f.extend_from_slice(&[0x81, 0x00]);
            f.extend_from_slice(&vid.to_be_bytes());
        }
        f.extend_from_slice(&[0x08, 0x00]);
        let l4_len: u16 = if proto == 6 { 20 } else { 8 };
        let total = 20 + l4_len + 4;
        f.extend_from_slice(&[0x45, 0, (total >> 8) as u8, total as u8, 0, 1, 0, 0, 64, proto, 0, 0]);
        f.extend_from_slice(&src);
        f.extend_from_slice(&dst);
        f.extend_from_slice(&sport.to_be_bytes());
        f.extend_from_slice(&dport.to_be_bytes());
        if proto == 6 {
            f.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0xff, 0xff, 0, 0, 0, 0]);
        } else {
            f.extend_from_slice(&[0, (l4_len + 4) as u8, 0, 0]);
        }
        f.extend_from_slice(&[0xde, 0xad, 0xbe, 0xef]);
        f
    }

    #[test]
    fn test_fields_are_in_ofield_order() {
        for (i, f) in FIELDS.iter().enumerate() {
            assert_eq!(*f as usize, i, "{f:?}");
        }
    }

    #[test]
    fn test_flow_key_of_a_tagged_tcp_frame() {
        use OfField::*;
        let key = flow_key(&ipv4_frame([10, 0, 0, 5], [192, 168, 1, 1], 6, 1234, 80, Some(10)), 3);
        assert_eq!(key[InPort], 3);
        assert_eq!(key[DlSrc], 0x02_00_00_00_00_01);
        assert_eq!(key[DlDst], 0x02_00_00_00_00_02);
        assert_eq!(key[DlType], 0x0800);
        assert_eq!(key[VlanTci], 0x1000 | 10);
        assert_eq!(key[NwSrc], 0x0a00_0005);
        assert_eq!(key[NwDst], 0xc0a8_0101);
        assert_eq!(key[NwProto], 6);
        assert_eq!(key[NwTtl], 64);
        assert_eq!((key[TpSrc], key[TpDst]), (1234, 80));
        assert_eq!(key[TcpFlags], 0x02);
        assert_eq!(key[NwFrag], 0);
    }
}
