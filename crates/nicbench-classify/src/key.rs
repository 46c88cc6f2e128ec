//! The compact packet key the classifier matches on: fixed-layout `u64` words
//! extracted once per packet from a [`ParsedFrame`].
//!
//! Layout: two header *levels* of [`LEVEL_WORDS`] words each (the outer frame at word 0,
//! the encapsulated frame at [`INNER_BASE`]) and two tunnel words in between. The
//! 5-tuple of a level lives in its first three words (source, destination, L4 word), so
//! the common rules touch one cache line of the key.
//!
//! Invariants:
//! - every model field of every pattern item has exactly one location (`FieldLoc`);
//!   fields of mutually exclusive headers (IPv4/IPv6 addresses, TCP/UDP/SCTP ports) share
//!   a location and are told apart by the level's presence bits;
//! - a field the packet does not have reads as 0, and so do the fields the parser does not
//!   decode (ICMP ident/seq, SCTP checksum, VXLAN reserved byte, GRE reserved bits) — the
//!   oracle in the tests uses the same convention;
//! - `frame_bytes` is the frame length used by the byte counters, not matched on.

use nicbench_rules::ItemKind;
use nicbench_wire::parse::{Ip, Layers, ParsedFrame, Tunnel, L4};
use std::net::Ipv4Addr;

/// Words per header level.
pub const LEVEL_WORDS: usize = 12;
/// First word of the tunnel header fields.
pub const TUNNEL_BASE: usize = LEVEL_WORDS;
/// First word of the encapsulated (inner) frame's fields.
pub const INNER_BASE: usize = LEVEL_WORDS + 2;
/// Words in a key.
pub const KEY_WORDS: usize = INNER_BASE + LEVEL_WORDS;

// Level-relative words.
pub(crate) const W_SRC_LO: usize = 0;
pub(crate) const W_DST_LO: usize = 1;
pub(crate) const W_L4: usize = 2;
pub(crate) const W_SRC_HI: usize = 3;
pub(crate) const W_DST_HI: usize = 4;
pub(crate) const W_ETH_DST: usize = 5;
pub(crate) const W_ETH_SRC: usize = 6;
pub(crate) const W_VLAN: usize = 7;
pub(crate) const W_MISC: usize = 8;
pub(crate) const W_MPLS: usize = 9;
pub(crate) const W_EXTRA: usize = 10;
pub(crate) const W_EXTRA2: usize = 11;
// Absolute tunnel words.
pub(crate) const W_TUN0: usize = TUNNEL_BASE;
pub(crate) const W_TUN1: usize = TUNNEL_BASE + 1;

/// Presence bits of a level: at bit `PRESENCE_SHIFT` of its L4 word.
pub(crate) const PRESENCE_SHIFT: u32 = 40;
#[allow(dead_code)] // VLAN1/MPLS1 are reached by shifting VLAN0/MPLS0
pub(crate) mod presence {
    pub const ETH: u64 = 1 << 0;
    pub const VLAN0: u64 = 1 << 1;
    pub const VLAN1: u64 = 1 << 2;
    pub const MPLS0: u64 = 1 << 3;
    pub const MPLS1: u64 = 1 << 4;
    pub const IPV4: u64 = 1 << 5;
    pub const IPV6: u64 = 1 << 6;
    pub const TCP: u64 = 1 << 7;
    pub const UDP: u64 = 1 << 8;
    pub const SCTP: u64 = 1 << 9;
    pub const ICMP: u64 = 1 << 10;
    pub const ICMP6: u64 = 1 << 11;
    /// Never set in a packet: a rule requiring it can never match.
    pub const IMPOSSIBLE: u64 = 1 << 15;
}
/// Tunnel presence bits: at bit `TUNNEL_PRESENCE_SHIFT` of the second tunnel word.
pub(crate) const TUNNEL_PRESENCE_SHIFT: u32 = 32;
pub(crate) mod tunnel_presence {
    pub const VXLAN: u64 = 1 << 0;
    pub const GRE: u64 = 1 << 1;
    pub const GRE_KEY: u64 = 1 << 2;
}

/// The compact key of one packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PacketKey {
    pub words: [u64; KEY_WORDS],
    /// Frame length \[bytes\], for the byte counters.
    pub frame_bytes: u32,
}

impl Default for PacketKey {
    fn default() -> Self {
        PacketKey {
            words: [0; KEY_WORDS],
            frame_bytes: 0,
        }
    }
}

/// Where a model field lives in the key: `width` bits at `shift` of word `word`, or, for
/// 128-bit fields, the high half in `hi_word` and the low half in `word`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FieldLoc {
    pub word: u8,
    pub shift: u8,
    pub width: u8,
    pub hi_word: Option<u8>,
}

impl FieldLoc {
    const fn at(base: usize, word: usize, shift: u32, width: u32) -> FieldLoc {
        FieldLoc {
            word: (base + word) as u8,
            shift: shift as u8,
            width: width as u8,
            hi_word: None,
        }
    }

    /// The field's value in a key.
    #[inline]
    pub fn read(&self, key: &PacketKey) -> u128 {
        match self.hi_word {
            Some(hi) => ((key.words[hi as usize] as u128) << 64) | key.words[self.word as usize] as u128,
            None => ((key.words[self.word as usize] >> self.shift) & ones64(self.width as u32)) as u128,
        }
    }

    /// Adds `value` under `mask` (both right-aligned, at most `width` bits) to per-word
    /// (mask, value) arrays.
    pub fn place(&self, mask: u128, value: u128, masks: &mut [u64; KEY_WORDS], values: &mut [u64; KEY_WORDS]) {
        match self.hi_word {
            Some(hi) => {
                masks[hi as usize] |= (mask >> 64) as u64;
                values[hi as usize] |= (value >> 64) as u64;
                masks[self.word as usize] |= mask as u64;
                values[self.word as usize] |= value as u64;
            }
            None => {
                masks[self.word as usize] |= (mask as u64) << self.shift;
                values[self.word as usize] |= (value as u64) << self.shift;
            }
        }
    }
}

/// All-ones mask of `bits` bits (`bits <= 64`).
#[inline]
pub(crate) const fn ones64(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// Location of model field `slot` of an item of `kind` at the level starting at `base`
/// (`vlan_index`/`mpls_index`: which tag of the stack). `None` for a slot index the
/// kind does not have.
pub(crate) fn field_loc(kind: ItemKind, slot: usize, base: usize, index: usize) -> Option<FieldLoc> {
    let b = base;
    let wide = |lo: usize, hi: usize| FieldLoc {
        word: (b + lo) as u8,
        shift: 0,
        width: 128,
        hi_word: Some((b + hi) as u8),
    };
    let i = index as u32;
    let loc = match (kind, slot) {
        (ItemKind::Eth, 0) => FieldLoc::at(b, W_ETH_DST, 0, 48),
        (ItemKind::Eth, 1) => FieldLoc::at(b, W_ETH_SRC, 0, 48),
        (ItemKind::Eth, 2) => FieldLoc::at(b, W_ETH_DST, 48, 16),
        (ItemKind::Eth, 3) => FieldLoc::at(b, W_MISC, 60, 1),
        (ItemKind::Vlan, 0) => FieldLoc::at(b, W_VLAN, 32 * i, 16),
        (ItemKind::Vlan, 1) => FieldLoc::at(b, W_VLAN, 32 * i + 16, 16),
        (ItemKind::Vlan, 2) => FieldLoc::at(b, W_MISC, 61 + i, 1),
        (ItemKind::Ipv4, 0) => FieldLoc::at(b, W_MISC, 0, 8),
        (ItemKind::Ipv4, 1) => FieldLoc::at(b, W_ETH_SRC, 48, 8),
        (ItemKind::Ipv4, 2) => FieldLoc::at(b, W_MISC, 8, 16),
        (ItemKind::Ipv4, 3) => FieldLoc::at(b, W_MISC, 24, 16),
        (ItemKind::Ipv4, 4) => FieldLoc::at(b, W_ETH_SRC, 56, 8),
        (ItemKind::Ipv4, 5) => FieldLoc::at(b, W_L4, 32, 8),
        (ItemKind::Ipv4, 6) => FieldLoc::at(b, W_SRC_LO, 0, 32),
        (ItemKind::Ipv4, 7) => FieldLoc::at(b, W_DST_LO, 0, 32),
        (ItemKind::Ipv6, 0) => FieldLoc::at(b, W_ETH_SRC, 48, 8),
        (ItemKind::Ipv6, 1) => FieldLoc::at(b, W_MISC, 40, 20),
        (ItemKind::Ipv6, 2) => FieldLoc::at(b, W_L4, 32, 8),
        (ItemKind::Ipv6, 3) => FieldLoc::at(b, W_ETH_SRC, 56, 8),
        (ItemKind::Ipv6, 4) => wide(W_SRC_LO, W_SRC_HI),
        (ItemKind::Ipv6, 5) => wide(W_DST_LO, W_DST_HI),
        (ItemKind::Ipv6, 6) => FieldLoc::at(b, W_MISC, 63, 1),
        (ItemKind::Tcp | ItemKind::Udp | ItemKind::Sctp, 0) => FieldLoc::at(b, W_L4, 0, 16),
        (ItemKind::Tcp | ItemKind::Udp | ItemKind::Sctp, 1) => FieldLoc::at(b, W_L4, 16, 16),
        (ItemKind::Tcp, 2) => FieldLoc::at(b, W_L4, 56, 8),
        (ItemKind::Sctp, 2) => FieldLoc::at(b, W_EXTRA, 0, 32),
        (ItemKind::Sctp, 3) => FieldLoc::at(b, W_EXTRA2, 0, 32),
        (ItemKind::Icmp | ItemKind::Icmp6, 0) => FieldLoc::at(b, W_MPLS, 48, 8),
        (ItemKind::Icmp | ItemKind::Icmp6, 1) => FieldLoc::at(b, W_MPLS, 56, 8),
        (ItemKind::Icmp, 2) => FieldLoc::at(b, W_EXTRA, 32, 16),
        (ItemKind::Icmp, 3) => FieldLoc::at(b, W_EXTRA, 48, 16),
        (ItemKind::Mpls, 0) => FieldLoc::at(b, W_MPLS, 24 * i, 20),
        (ItemKind::Mpls, 1) => FieldLoc::at(b, W_MPLS, 24 * i + 20, 3),
        (ItemKind::Mpls, 2) => FieldLoc::at(b, W_MPLS, 24 * i + 23, 1),
        (ItemKind::Vxlan, 0) => FieldLoc::at(0, W_TUN0, 0, 24),
        (ItemKind::Vxlan, 1) => FieldLoc::at(0, W_TUN0, 24, 8),
        (ItemKind::Gre, 0) => FieldLoc::at(0, W_TUN0, 32, 16),
        (ItemKind::Gre, 1) => FieldLoc::at(0, W_TUN0, 48, 16),
        (ItemKind::GreKey, 0) => FieldLoc::at(0, W_TUN1, 0, 32),
        _ => return None,
    };
    Some(loc)
}

impl PacketKey {
    /// Extracts the key of a parsed frame.
    pub fn from_frame(frame: &ParsedFrame) -> PacketKey {
        let mut key = PacketKey {
            words: [0; KEY_WORDS],
            frame_bytes: frame.frame_len.min(u32::MAX as usize) as u32,
        };
        fill_level(&mut key.words[..LEVEL_WORDS], &frame.outer);
        let mut tp = 0u64;
        match frame.tunnel {
            Some(Tunnel::Vxlan { vni, .. }) => {
                tp |= tunnel_presence::VXLAN;
                key.words[W_TUN0] |= (vni & 0xff_ffff) as u64;
            }
            Some(Tunnel::Gre(g)) => {
                tp |= tunnel_presence::GRE;
                key.words[W_TUN0] |= ((gre_c_rsvd0_ver(&g) as u64) << 32) | ((g.protocol as u64) << 48);
                if let Some(k) = g.key {
                    tp |= tunnel_presence::GRE_KEY;
                    key.words[W_TUN1] |= k as u64;
                }
            }
            None => {}
        }
        key.words[W_TUN1] |= tp << TUNNEL_PRESENCE_SHIFT;
        if let Some(inner) = &frame.inner {
            fill_level(&mut key.words[INNER_BASE..], inner);
        }
        key
    }

    /// Parses an Ethernet frame and extracts its key.
    pub fn from_ethernet(frame: &[u8]) -> PacketKey {
        PacketKey::from_frame(&nicbench_wire::parse::parse_ethernet(frame))
    }

    /// Parses a capture record of link type `linktype` (where its network layer starts:
    /// [`nicbench_pcap::LinkType::l3_start`]) and extracts its key. A record without an IP
    /// packet (ARP in a cooked capture) gets the key of no header at all.
    pub fn from_record(linktype: nicbench_pcap::LinkType, data: &[u8]) -> PacketKey {
        use nicbench_pcap::L3Start;
        match linktype.l3_start(data) {
            L3Start::Ethernet => PacketKey::from_ethernet(data),
            L3Start::Ip(offset) => PacketKey::from_frame(&nicbench_wire::parse::parse_ip(&data[offset..])),
            L3Start::NotIp => PacketKey {
                frame_bytes: data.len().min(u32::MAX as usize) as u32,
                ..PacketKey::default()
            },
        }
    }

    /// The key of an Ethernet/IPv4 packet with this 5-tuple, as the parser would see it:
    /// protocol 6/17/132 carry ports in a TCP/UDP/SCTP header, 1 is ICMP (ports ignored),
    /// anything else is bare IPv4. Used to classify ClassBench traces.
    pub fn ipv4_5tuple(
        src: Ipv4Addr,
        dst: Ipv4Addr,
        src_port: u16,
        dst_port: u16,
        proto: u8,
        frame_bytes: u32,
    ) -> PacketKey {
        let mut key = PacketKey {
            words: [0; KEY_WORDS],
            frame_bytes,
        };
        set_ipv4_5tuple(
            &mut key.words,
            u32::from(src),
            u32::from(dst),
            src_port,
            dst_port,
            proto,
        );
        key
    }
}

/// The outer L4 word of an Ethernet/IPv4 frame's key (presence bits, protocol, ports).
#[inline(always)]
pub(crate) fn ipv4_l4_word(src_port: u16, dst_port: u16, proto: u8) -> u64 {
    // One table load instead of a `match` on the protocol: a trace mixing protocols made
    // that branch mispredict on about every other packet.
    let e = L4_OF_PROTO[proto as usize] as u64;
    let ports_mask = 0u64.wrapping_sub(e >> PORTS_BIT) & 0xffff_ffff;
    let p = presence::ETH | presence::IPV4 | (e & !(1 << PORTS_BIT));
    ((proto as u64) << 32) | ((src_port as u64 | ((dst_port as u64) << 16)) & ports_mask) | (p << PRESENCE_SHIFT)
}

/// Bit of an [`L4_OF_PROTO`] entry saying the protocol has ports.
const PORTS_BIT: u32 = 15;
/// Per IPv4 protocol number: its L4 presence bit, plus bit [`PORTS_BIT`] if its header
/// starts with source and destination ports (TCP, UDP, SCTP).
const L4_OF_PROTO: [u16; 256] = {
    let mut t = [0u16; 256];
    t[6] = presence::TCP as u16 | 1 << PORTS_BIT;
    t[17] = presence::UDP as u16 | 1 << PORTS_BIT;
    t[132] = presence::SCTP as u16 | 1 << PORTS_BIT;
    t[1] = presence::ICMP as u16;
    t
};

/// Writes the words of an IPv4 5-tuple packet that are not zero. The only writer of keys
/// that [`FiveTuple::write_key`] refills, so a reused key buffer never keeps stale words.
#[inline(always)]
fn set_ipv4_5tuple(words: &mut [u64; KEY_WORDS], src: u32, dst: u32, src_port: u16, dst_port: u16, proto: u8) {
    set_ipv4_words(words, src, dst, ipv4_l4_word(src_port, dst_port, proto));
}

/// [`set_ipv4_5tuple`] with the L4 word already built ([`ipv4_l4_word`]).
#[inline(always)]
pub(crate) fn set_ipv4_words(words: &mut [u64; KEY_WORDS], src: u32, dst: u32, l4: u64) {
    words[W_SRC_LO] = src as u64;
    words[W_DST_LO] = dst as u64;
    words[W_L4] = l4;
    words[W_ETH_DST] = 0x0800 << 48;
    words[W_ETH_SRC] = 64 << 56; // ttl
    words[W_MISC] = 0x45;
}

/// An IPv4 5-tuple packet in 16 bytes (a [`PacketKey`] is 216): what a trace of packets
/// from memory should hold, so that a 64K-packet trace (1 MiB) stays in the cache instead
/// of streaming 14 MiB of keys. [`Reader::lookup_burst_tuples`](crate::Reader::lookup_burst_tuples)
/// looks them up on their 16-byte key words when the start group allows (the tuple fast
/// path, `crate::key_view`), else through the ordinary burst lookup, 32 keys at a time in a
/// key buffer that stays in L1. Its key is exactly [`PacketKey::ipv4_5tuple`]'s.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(C)]
pub struct FiveTuple {
    /// Addresses in host order (`u32::from(Ipv4Addr)`).
    pub src: u32,
    pub dst: u32,
    pub src_port: u16,
    pub dst_port: u16,
    /// Frame length \[bytes\], for the byte counters.
    pub frame_bytes: u16,
    pub proto: u8,
}

impl FiveTuple {
    pub fn new(src: Ipv4Addr, dst: Ipv4Addr, src_port: u16, dst_port: u16, proto: u8, frame_bytes: u16) -> FiveTuple {
        FiveTuple {
            src: u32::from(src),
            dst: u32::from(dst),
            src_port,
            dst_port,
            frame_bytes,
            proto,
        }
    }

    /// The tuple of a key made by [`key`](Self::key) or [`PacketKey::ipv4_5tuple`] (its inverse:
    /// the key's other words are not read; the frame length is kept to 16 bits).
    pub fn of_key(key: &PacketKey) -> FiveTuple {
        let l4 = key.words[W_L4];
        FiveTuple {
            src: key.words[W_SRC_LO] as u32,
            dst: key.words[W_DST_LO] as u32,
            src_port: l4 as u16,
            dst_port: (l4 >> 16) as u16,
            proto: (l4 >> 32) as u8,
            frame_bytes: key.frame_bytes as u16,
        }
    }

    /// The full key ([`PacketKey::ipv4_5tuple`]).
    pub fn key(&self) -> PacketKey {
        let mut key = PacketKey {
            words: [0; KEY_WORDS],
            frame_bytes: self.frame_bytes as u32,
        };
        self.write_key(&mut key);
        key
    }

    /// The key's outer L4 word ([`ipv4_l4_word`]), without writing a key.
    #[inline(always)]
    pub(crate) fn l4_word(&self) -> u64 {
        ipv4_l4_word(self.src_port, self.dst_port, self.proto)
    }

    /// Turns `key`, which must hold a key made by [`key`](Self::key) or `write_key`
    /// (its other words are zero), into this tuple's key: only the non-zero words are written.
    #[inline(always)]
    pub(crate) fn write_key(&self, key: &mut PacketKey) {
        set_ipv4_5tuple(
            &mut key.words,
            self.src,
            self.dst,
            self.src_port,
            self.dst_port,
            self.proto,
        );
        key.frame_bytes = self.frame_bytes as u32;
    }
}

/// The GRE `c_rsvd0_ver` word as the parser lets us rebuild it (reserved bits read 0).
pub(crate) fn gre_c_rsvd0_ver(g: &nicbench_wire::parse::Gre) -> u16 {
    ((g.checksum_present as u16) << 15)
        | ((g.key.is_some() as u16) << 13)
        | ((g.seq.is_some() as u16) << 12)
        | (g.version as u16 & 7)
}

fn fill_level(w: &mut [u64], l: &Layers) {
    let mut p = 0u64;
    if let Some(eth) = &l.eth {
        p |= presence::ETH;
        w[W_ETH_DST] = mac(eth.dst) | ((eth.ethertype as u64) << 48);
        w[W_ETH_SRC] = mac(eth.src);
    }
    let mut misc = 0u64;
    if l.vlan_count > 0 {
        misc |= 1 << 60;
    }
    for (i, v) in l.vlans.iter().enumerate() {
        if let Some(v) = v {
            p |= presence::VLAN0 << i;
            let tci = ((v.pcp as u64 & 7) << 13) | ((v.dei as u64) << 12) | (v.vid as u64 & 0xfff);
            w[W_VLAN] |= (tci | ((v.inner_ethertype as u64) << 16)) << (32 * i);
            if (i + 1) < l.vlan_count as usize {
                misc |= 1 << (61 + i);
            }
        }
    }
    for (i, m) in l.mpls.iter().enumerate() {
        if let Some(m) = m {
            p |= presence::MPLS0 << i;
            let e = (m.label as u64 & 0xf_ffff) | ((m.tc as u64 & 7) << 20) | ((m.bottom_of_stack as u64) << 23);
            w[W_MPLS] |= e << (24 * i);
        }
    }
    let mut l4w = 0u64;
    match &l.ip {
        Some(Ip::V4(h)) => {
            p |= presence::IPV4;
            w[W_SRC_LO] = u32::from(h.src) as u64;
            w[W_DST_LO] = u32::from(h.dst) as u64;
            w[W_ETH_SRC] |= ((h.tos as u64) << 48) | ((h.ttl as u64) << 56);
            let frag = ((h.dont_frag as u64) << 14) | ((h.more_frags as u64) << 13) | (h.frag_offset as u64 & 0x1fff);
            misc |= (0x40 | (h.ihl as u64 & 0xf)) | ((h.id as u64) << 8) | (frag << 24);
            l4w |= (h.proto as u64) << 32;
        }
        Some(Ip::V6(h)) => {
            p |= presence::IPV6;
            let (s, d) = (u128::from(h.src), u128::from(h.dst));
            w[W_SRC_LO] = s as u64;
            w[W_SRC_HI] = (s >> 64) as u64;
            w[W_DST_LO] = d as u64;
            w[W_DST_HI] = (d >> 64) as u64;
            w[W_ETH_SRC] |= ((h.traffic_class as u64) << 48) | ((h.hop_limit as u64) << 56);
            misc |= ((h.flow_label as u64 & 0xf_ffff) << 40) | ((h.fragment.is_some() as u64) << 63);
            l4w |= (h.header_next_header as u64) << 32;
        }
        None => {}
    }
    match &l.l4 {
        Some(L4::Tcp(t)) => {
            p |= presence::TCP;
            l4w |= t.src_port as u64 | ((t.dst_port as u64) << 16) | ((t.flags as u64) << 56);
        }
        Some(L4::Udp(u)) => {
            p |= presence::UDP;
            l4w |= u.src_port as u64 | ((u.dst_port as u64) << 16);
        }
        Some(L4::Sctp(s)) => {
            p |= presence::SCTP;
            l4w |= s.src_port as u64 | ((s.dst_port as u64) << 16);
            w[W_EXTRA] |= s.vtag as u64;
        }
        Some(L4::Icmpv4(i)) => {
            p |= presence::ICMP;
            w[W_MPLS] |= ((i.icmp_type as u64) << 48) | ((i.code as u64) << 56);
        }
        Some(L4::Icmpv6(i)) => {
            p |= presence::ICMP6;
            w[W_MPLS] |= ((i.icmp_type as u64) << 48) | ((i.code as u64) << 56);
        }
        None => {}
    }
    w[W_L4] = l4w | (p << PRESENCE_SHIFT);
    w[W_MISC] = misc;
}

fn mac(b: [u8; 6]) -> u64 {
    b.iter().fold(0u64, |acc, &x| (acc << 8) | x as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_ipv4_l4_word_table_matches_the_protocol_rules() {
        for proto in 0..=255u8 {
            let (l4_bit, ports) = match proto {
                6 => (presence::TCP, true),
                17 => (presence::UDP, true),
                132 => (presence::SCTP, true),
                1 => (presence::ICMP, false),
                _ => (0, false),
            };
            let want_ports = if ports { 0x1234 | (0xabcd << 16) } else { 0 };
            let want =
                ((proto as u64) << 32) | want_ports | ((presence::ETH | presence::IPV4 | l4_bit) << PRESENCE_SHIFT);
            assert_eq!(ipv4_l4_word(0x1234, 0xabcd, proto), want, "proto {proto}");
        }
    }

    #[test]
    fn test_five_tuple_key_is_ipv4_5tuple_even_in_a_reused_buffer() {
        let (a, b) = (Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(192, 168, 7, 9));
        assert_eq!(std::mem::size_of::<FiveTuple>(), 16);
        let mut buf = PacketKey::default();
        // Every protocol after every other: a reused buffer must never keep the ports of a
        // TCP packet for an ICMP one.
        for (i, proto) in [6u8, 1, 17, 47, 132, 6, 0].into_iter().enumerate() {
            let t = FiveTuple::new(a, b, 1000 + i as u16, 53, proto, 60 + i as u16);
            let want = PacketKey::ipv4_5tuple(a, b, 1000 + i as u16, 53, proto, 60 + i as u32);
            assert_eq!(t.key(), want, "proto {proto}");
            t.write_key(&mut buf);
            assert_eq!(buf, want, "proto {proto} in a reused buffer");
        }
    }

    /// Ethernet / IPv4 / UDP 10.0.0.1:1234 -> 10.0.0.2:53, 42 bytes.
    const UDP_FRAME: [u8; 42] = [
        0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0x08, 0x00, // eth
        0x45, 0x00, 0x00, 0x1c, 0x12, 0x34, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, // ipv4 ..
        10, 0, 0, 1, 10, 0, 0, 2, // addrs
        0x04, 0xd2, 0x00, 0x35, 0x00, 0x08, 0x00, 0x00, // udp
    ];

    #[test]
    fn test_extract_udp_frame() {
        let k = PacketKey::from_ethernet(&UDP_FRAME);
        assert_eq!(k.frame_bytes, 42);
        assert_eq!(k.words[W_SRC_LO], 0x0a00_0001);
        assert_eq!(k.words[W_DST_LO], 0x0a00_0002);
        let p = k.words[W_L4] >> PRESENCE_SHIFT;
        assert_eq!(p, presence::ETH | presence::IPV4 | presence::UDP);
        assert_eq!(k.words[W_L4] & 0xffff, 1234);
        assert_eq!((k.words[W_L4] >> 16) & 0xffff, 53);
        assert_eq!((k.words[W_L4] >> 32) & 0xff, 17);
        let ttl = field_loc(ItemKind::Ipv4, 4, 0, 0).unwrap().read(&k);
        assert_eq!(ttl, 64);
        let frag = field_loc(ItemKind::Ipv4, 3, 0, 0).unwrap().read(&k);
        assert_eq!(frag, 0x4000, "DF bit");
        let dst_mac = field_loc(ItemKind::Eth, 0, 0, 0).unwrap().read(&k);
        assert_eq!(dst_mac, 0x0011_2233_4455);
        // Inner level and tunnel words stay zero.
        assert!(k.words[TUNNEL_BASE..].iter().all(|&w| w == 0));
    }

    #[test]
    fn test_5tuple_key_matches_parsed_key_on_5tuple_words() {
        let parsed = PacketKey::from_ethernet(&UDP_FRAME);
        let built = PacketKey::ipv4_5tuple(Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 2), 1234, 53, 17, 42);
        assert_eq!(parsed.words[..3], built.words[..3]);
    }

    #[test]
    fn test_truncated_frame_never_panics() {
        for n in 0..UDP_FRAME.len() {
            let k = PacketKey::from_ethernet(&UDP_FRAME[..n]);
            assert_eq!(k.frame_bytes as usize, n);
        }
    }

    #[test]
    fn test_every_item_slot_has_a_location_inside_its_width() {
        for kind in ItemKind::ALL {
            for (slot, _) in kind.field_names().iter().enumerate() {
                let loc = field_loc(kind, slot, INNER_BASE, 1).unwrap_or_else(|| panic!("{kind:?} slot {slot}"));
                if loc.hi_word.is_none() {
                    assert!(loc.shift as u32 + loc.width as u32 <= 64, "{kind:?} {slot}");
                }
                assert!((loc.word as usize) < KEY_WORDS);
            }
        }
    }
}
