//! The headers a frame must carry to meet a chain of rules: every rule's pattern merged per
//! header and field, then drawn into a [`FrameSpec`].
//!
//! Items before a `vxlan` item describe the outer frame, items after it the encapsulated
//! one. What the generator sets: MACs, VLAN ids (outermost tags), IPv4/IPv6 addresses, TTL /
//! hop limit, TOS / traffic class, the L4 protocol (TCP, UDP, ICMP echo), ports, TCP flags,
//! ICMP echo id and sequence, the VNI and the VXLAN outer addresses, source port and TTL.
//! Every other field is written with a fixed value; a rule that constrains one is met only if
//! that value suits it (the lookup decides).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use nicbench_rules::{Item, ItemKind, Rule};
use nicbench_wire::builder::{L4Spec, TcpFlags, VlanTags, VxlanSpec};
use nicbench_wire::FrameSpec;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::draw::{value, Cons};
use super::Miss;

/// The fields the generator sets, per item (see the module doc).
const SETTABLE: &[(ItemKind, &[&str])] = &[
    (ItemKind::Eth, &["dst", "src"]),
    (ItemKind::Ipv4, &["tos", "ttl", "src", "dst"]),
    (ItemKind::Ipv6, &["tc", "hop_limit", "src", "dst"]),
    (ItemKind::Tcp, &["src", "dst", "flags"]),
    (ItemKind::Udp, &["src", "dst"]),
    (ItemKind::Icmp, &["ident", "seq"]),
    (ItemKind::Vxlan, &["vni"]),
];

/// One Ethernet frame's headers (the outer one, or the one VXLAN carries).
#[derive(Clone, Debug, Default)]
struct Layer {
    eth: Cons,
    /// One entry per tag, outermost first.
    vlans: Vec<Cons>,
    l3: Option<ItemKind>,
    l3c: Cons,
    l4: Option<ItemKind>,
    l4c: Cons,
}

/// The merged constraints of a chain of rules.
#[derive(Clone, Debug, Default)]
pub(super) struct Stack {
    outer: Layer,
    /// `Some` once a rule matches VXLAN: the VXLAN header's constraints.
    vxlan: Option<Cons>,
    inner: Layer,
}

fn set_kind(slot: &mut Option<ItemKind>, kind: ItemKind) -> Result<(), Miss> {
    match *slot {
        Some(k) if k != kind => Err(Miss::Conflict {
            what: format!("{} and {} in the same header", k.name(), kind.name()),
        }),
        _ => {
            *slot = Some(kind);
            Ok(())
        }
    }
}

impl Stack {
    /// Adds `rule`'s pattern.
    pub(super) fn merge(&mut self, rule: &Rule) -> Result<(), Miss> {
        let (mut inner, mut tags) = (false, 0usize);
        for item in &rule.pattern {
            let kind = item.kind();
            let cons = item.constraints();
            if kind == ItemKind::Vxlan {
                if inner {
                    return Err(Miss::Header {
                        item: "second VXLAN".into(),
                    });
                }
                inner = true;
                tags = 0;
                self.vxlan.get_or_insert_with(Vec::new).extend(cons);
                continue;
            }
            let layer = if inner { &mut self.inner } else { &mut self.outer };
            match kind {
                ItemKind::Eth => layer.eth.extend(cons),
                ItemKind::Vlan => {
                    if layer.vlans.len() <= tags {
                        layer.vlans.push(Vec::new());
                    }
                    layer.vlans[tags].extend(cons);
                    tags += 1;
                }
                ItemKind::Ipv4 | ItemKind::Ipv6 => {
                    set_kind(&mut layer.l3, kind)?;
                    layer.l3c.extend(cons);
                }
                ItemKind::Tcp | ItemKind::Udp | ItemKind::Icmp | ItemKind::Icmp6 => {
                    set_kind(&mut layer.l4, kind)?;
                    layer.l4c.extend(cons);
                }
                // Handled above.
                ItemKind::Vxlan => {}
                ItemKind::Sctp | ItemKind::Gre | ItemKind::GreKey | ItemKind::Mpls => {
                    return Err(Miss::Header {
                        item: kind.name().to_uppercase(),
                    })
                }
            }
        }
        Ok(())
    }

    /// The rule's constrained fields the generator does not set freely (for [`Miss::Fixed`]);
    /// all of them when it sets every one (the lookup refused the frame all the same).
    pub(super) fn fixed_fields(rule: &Rule) -> Vec<String> {
        let fields: Vec<(String, bool)> = rule
            .pattern
            .iter()
            .flat_map(|item: &Item| {
                let kind = item.kind();
                let settable = SETTABLE.iter().find(|(k, _)| *k == kind).map_or(&[][..], |(_, n)| *n);
                item.constraints()
                    .into_iter()
                    .map(move |(name, _, _)| (format!("{}.{name}", kind.name()), settable.contains(&name)))
            })
            .collect();
        let fixed: Vec<String> = fields.iter().filter(|(_, s)| !s).map(|(l, _)| l.clone()).collect();
        if fixed.is_empty() {
            fields.into_iter().map(|(l, _)| l).collect()
        } else {
            fixed
        }
    }

    /// One frame meeting every constraint on the fields the generator sets, the rest random.
    pub(super) fn draw(&self, rng: &mut ChaCha8Rng) -> Result<FrameSpec, Miss> {
        let tunnel = self.vxlan.is_some();
        if tunnel && !self.inner.vlans.is_empty() {
            return Err(Miss::Header {
                item: "VLAN tag inside VXLAN".into(),
            });
        }
        let l = if tunnel { &self.inner } else { &self.outer };
        let mac = |cons: &Cons, name: &str, label: &str, default: [u8; 6], rng: &mut ChaCha8Rng| {
            value(cons, name, label, rng, |_| mac_bits(default)).map(bits_mac)
        };
        let defaults = FrameSpec::default();
        let eth_dst = mac(&l.eth, "dst", "eth.dst", defaults.eth_dst, rng)?;
        let eth_src = mac(&l.eth, "src", "eth.src", defaults.eth_src, rng)?;
        let ipv6 = match l.l3 {
            Some(k) => k == ItemKind::Ipv6,
            // An ether type alone picks the family.
            None => value(&l.eth, "ether_type", "eth.ether_type", rng, |_| 0x0800)? == 0x86dd,
        };
        let (l3name, ttl_name, tos_name) = if ipv6 {
            ("ipv6", "hop_limit", "tc")
        } else {
            ("ipv4", "ttl", "tos")
        };
        let width = if ipv6 { 128 } else { 32 };
        let addr = |name: &str, rng: &mut ChaCha8Rng| {
            value(&l.l3c, name, &format!("{l3name}.{name}"), rng, |r| {
                r.random::<u128>() & if width == 128 { u128::MAX } else { u128::from(u32::MAX) }
            })
            .map(|v| {
                if ipv6 {
                    IpAddr::V6(Ipv6Addr::from(v))
                } else {
                    IpAddr::V4(Ipv4Addr::from(v as u32))
                }
            })
        };
        let ip_src = addr("src", rng)?;
        let ip_dst = addr("dst", rng)?;
        let ttl = value(&l.l3c, ttl_name, &format!("{l3name}.{ttl_name}"), rng, |_| 64)? as u8;
        let tos = value(&l.l3c, tos_name, &format!("{l3name}.{tos_name}"), rng, |_| 0)? as u8;
        let l4_kind = match l.l4 {
            Some(k) => k,
            // Unconstrained: TCP or UDP at random (a wide rule of the other protocol then
            // cannot take every draw).
            None => match value(&l.l3c, "proto", &format!("{l3name}.proto"), rng, |r| {
                if r.random::<bool>() {
                    6
                } else {
                    17
                }
            })? {
                6 => ItemKind::Tcp,
                17 => ItemKind::Udp,
                1 | 58 => ItemKind::Icmp,
                p => {
                    return Err(Miss::Header {
                        item: format!("IP protocol {p}"),
                    })
                }
            },
        };
        let port = |name: &str, rng: &mut ChaCha8Rng| {
            value(&l.l4c, name, &format!("{}.{name}", l4_kind.name()), rng, |r| {
                u128::from(r.random::<u16>())
            })
            .map(|v| v as u16)
        };
        let l4 = match l4_kind {
            ItemKind::Tcp => {
                let (src, dst) = (port("src", rng)?, port("dst", rng)?);
                let flags = value(&l.l4c, "flags", "tcp.flags", rng, |_| u128::from(TcpFlags::ACK.0))? as u8;
                L4Spec::tcp(src, dst, TcpFlags(flags))
            }
            ItemKind::Udp => L4Spec::udp(port("src", rng)?, port("dst", rng)?),
            _ => L4Spec::IcmpEcho {
                id: value(&l.l4c, "ident", "icmp.ident", rng, |r| u128::from(r.random::<u16>()))? as u16,
                seq: value(&l.l4c, "seq", "icmp.seq", rng, |_| 1)? as u16,
            },
        };
        let vlan = match self.outer.vlans.as_slice() {
            [] => VlanTags::None,
            [one] => VlanTags::Single(vid(one, rng)?),
            [outer, inner] => VlanTags::Double {
                outer: vid(outer, rng)?,
                inner: vid(inner, rng)?,
            },
            _ => {
                return Err(Miss::Header {
                    item: "third VLAN tag".into(),
                })
            }
        };
        let vxlan = match &self.vxlan {
            None => None,
            Some(vx) => Some(self.vxlan_spec(vx, rng)?),
        };
        let mut spec = FrameSpec {
            eth_src,
            eth_dst,
            vlan,
            ip_src,
            ip_dst,
            ttl,
            tos,
            l4,
            vxlan,
            ..FrameSpec::default()
        };
        spec.frame_size_bytes = spec.min_frame_size_bytes();
        Ok(spec)
    }

    /// The VXLAN outer headers from the outer layer's constraints.
    fn vxlan_spec(&self, vx: &Cons, rng: &mut ChaCha8Rng) -> Result<VxlanSpec, Miss> {
        let o = &self.outer;
        if o.l3 == Some(ItemKind::Ipv6) {
            return Err(Miss::Header {
                item: "IPv6 outer header of VXLAN".into(),
            });
        }
        if o.l4.is_some_and(|k| k != ItemKind::Udp) {
            return Err(Miss::Conflict {
                what: "VXLAN rides on UDP, the pattern has another L4 header before it".into(),
            });
        }
        let base = VxlanSpec::new(value(vx, "vni", "vxlan.vni", rng, |r| u128::from(r.random::<u32>() >> 8))? as u32);
        let v4 = |name: &str, default: Ipv4Addr, rng: &mut ChaCha8Rng| {
            value(&o.l3c, name, &format!("ipv4.{name}"), rng, |_| {
                u128::from(u32::from(default))
            })
            .map(|v| Ipv4Addr::from(v as u32))
        };
        Ok(VxlanSpec {
            outer_eth_dst: bits_mac(value(&o.eth, "dst", "eth.dst", rng, |_| mac_bits(base.outer_eth_dst))?),
            outer_eth_src: bits_mac(value(&o.eth, "src", "eth.src", rng, |_| mac_bits(base.outer_eth_src))?),
            outer_ip_src: v4("src", base.outer_ip_src, rng)?,
            outer_ip_dst: v4("dst", base.outer_ip_dst, rng)?,
            outer_ttl: value(&o.l3c, "ttl", "ipv4.ttl", rng, |_| u128::from(base.outer_ttl))? as u8,
            outer_src_port: value(&o.l4c, "src", "udp.src", rng, |r| {
                u128::from(r.random_range(49152u16..=u16::MAX))
            })? as u16,
            ..base
        })
    }
}

/// A VLAN id meeting a tag's `tci` constraints (the generator writes PCP and DEI 0).
fn vid(cons: &Cons, rng: &mut ChaCha8Rng) -> Result<u16, Miss> {
    let tci = value(cons, "tci", "vlan.tci", rng, |r| {
        u128::from(r.random_range(1u16..=4094))
    })?;
    Ok((tci & 0x0fff) as u16)
}

fn mac_bits(mac: [u8; 6]) -> u128 {
    mac.iter().fold(0u128, |acc, &b| (acc << 8) | u128::from(b))
}

fn bits_mac(bits: u128) -> [u8; 6] {
    let b = (bits as u64).to_be_bytes();
    [b[2], b[3], b[4], b[5], b[6], b[7]]
}
