//! VXLAN tunnel ports as OVS 3.1's userspace datapath does them ("native tunnelling"), checked
//! against real OVS (`python/tests/peers/test_vswitch_tunnels_vs_ovs.py`).
//!
//! OVS's setup (Documentation/howto/userspace-tunneling.rst): the overlay bridge (br-int) has a
//! port `type=vxlan options:remote_ip=R [options:key=flow|N]`; a second bridge (the underlay,
//! br-phy) holds the physical port and owns the tunnel endpoint's IP and MAC, with OVS's default
//! `NORMAL` rule. What the datapath then shows:
//!
//! ```text
//!  underlay pass:  recirc_id(0),in_port(PHY),eth(src=..,dst=..),eth_type(0x0800),
//!                  ipv4(dst=IP,proto=17,frag=no),udp(dst=4789)          actions:tnl_pop(4789)
//!  overlay pass:   tunnel(tun_id=VNI,src=R,dst=IP[,tos=T],flags(-df±csum+key)),recirc_id(0),
//!                  in_port(4789),...  (the inner packet, matched by br-int's rules)
//!  encap:          ... actions:tnl_push(tnl_port(4789),header(size=50,type=4,eth(..),ipv4(..),
//!                  udp(src=0,dst=4789,csum=0x0),vxlan(flags=0x8000000,vni=VNI)),out_port(BR)),PHY
//! ```
//!
//! - The underlay bridge is NORMAL: the MACs are exact, a packet goes to the bridge's own
//!   (LOCAL) port unless its destination MAC was learned on the physical port; on the way to
//!   LOCAL, OVS looks the packet up in its tunnel-port classifier (lib/tnl-ports.c: `dl_dst` =
//!   the bridge's MAC, IPv4 to its IP, UDP to the tunnel's port), staged and with a ports trie,
//!   so a miss un-wildcards only the stages reached. A hit is `tnl_pop(port)`; the popped
//!   packet goes through the datapath again (the userspace datapath does not recirculate it:
//!   `recirc_id(0)`, `in_port` = the tunnel's datapath port, which is its UDP port).
//! - The overlay pass un-wildcards the tunnel key (`tnl_wc_init`): `tun_id`, the outer
//!   addresses, the outer TOS and the flags `df`, `csum`, `key`. The userspace datapath never
//!   reports `df` (OVS prints `-df` whatever the outer header says); `csum` is a non-zero outer
//!   UDP checksum. An outer ECN of CE also un-wildcards the inner ECN bits.
//! - Output to a VXLAN port commits the packet's changes, un-wildcards the inner ECN bits (the
//!   outer TOS copies them, CE as ECT(0)) and pushes the header: the underlay bridge's MAC and
//!   IP as source, the port's `remote_ip` and its resolved MAC as destination, TTL 64, DF set,
//!   UDP source port 0 (the datapath fills it from the packet's hash). The underlay bridge then
//!   sends it from LOCAL by NORMAL: its only other port is the physical one.
//!
//! Not modelled (said plainly): IPv6 underlays, GRE/Geneve, VLAN-tagged underlay frames (the
//! decap path), several physical ports on the underlay bridge, `options:local_ip` routing (OVS
//! 3.1 with `local_ip` and a user route failed to route here; the underlay IP is the source),
//! `options:tos`/`ttl`/`df_default`, routing and ARP (the remote MAC is given), `in_key`/`out_key`.
//! The tunnel's TOS and flags have no [`OfField`]: they ride in `TunDst` above bit 32 inside the
//! model ([`TUN_META_SHIFT`]) and are printed as `tunnel(tos=..,flags(..))`.

use std::collections::HashSet;
use std::net::Ipv4Addr;

use nicbench_rules::openflow::{DpAction, DpFlow, OfField};
use serde::{Deserialize, Serialize};

use super::key::{self, Fields};
use super::megaflow::{Classifier, ClsRule, LookupConfig};

/// VXLAN's IANA UDP port (OVS's default `options:dst_port`).
pub const VXLAN_PORT: u16 = 4789;
/// Bytes of Ethernet + IPv4 + UDP + VXLAN headers a push adds.
pub const VXLAN_HEADER_BYTES: usize = 50;
/// Where the tunnel's TOS (8 bits) and flags sit in the model's `TunDst` value.
pub const TUN_META_SHIFT: u32 = 32;
const TUN_TOS_SHIFT: u32 = TUN_META_SHIFT;
/// lib/packets.h `FLOW_TNL_F_DONT_FRAGMENT`, `_CSUM`, `_KEY`, here above the TOS.
const TUN_F_DF: u128 = 1 << 40;
const TUN_F_CSUM: u128 = 1 << 41;
const TUN_F_KEY: u128 = 1 << 42;
const IP_ECN_MASK: u128 = 0x03;
const IP_ECN_CE: u128 = 0x03;
const IP_ECN_ECT_0: u128 = 0x02;

fn default_dst_port() -> u16 {
    VXLAN_PORT
}

fn zero_mac() -> String {
    "00:00:00:00:00:00".into()
}

/// A VXLAN port's options (`ovs-vsctl ... type=vxlan options:...`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VxlanOptions {
    /// `options:remote_ip`: the far tunnel endpoint.
    pub remote_ip: Ipv4Addr,
    /// `options:key`: a fixed VNI; absent for `key=flow` (the rules' `set_tunnel` chooses it).
    #[serde(default)]
    pub key: Option<u64>,
    /// `options:dst_port` (the UDP port; also the tunnel's datapath port number).
    #[serde(default = "default_dst_port")]
    pub dst_port: u16,
    /// The MAC `remote_ip` resolves to (OVS: its neighbour cache, `tnl/arp/set`); it is only
    /// printed in the pushed header.
    #[serde(default = "zero_mac")]
    pub remote_mac: String,
}

/// The underlay bridge (br-phy): one physical port, and the tunnel endpoint's IP and MAC on
/// the bridge's own port.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Underlay {
    /// The physical port's name (packets named by the request's `in_port` arrive on it).
    pub port: String,
    /// Its datapath port number.
    pub dp_port: u32,
    /// The underlay bridge's LOCAL port in the datapath (`out_port(..)` of `tnl_push`).
    pub bridge_dp_port: u32,
    /// The endpoint's IP (`netdev-dummy/ip4addr br-phy IP/len`): outer destination on decap,
    /// outer source on encap.
    pub ip: Ipv4Addr,
    /// The underlay bridge's MAC (`other-config:hwaddr`).
    pub mac: String,
}

pub fn parse_mac(text: &str) -> Result<u128, String> {
    let parts: Vec<&str> = text.split(':').collect();
    if parts.len() != 6 {
        return Err(format!("'{text}' is not a MAC address (six hex bytes with ':')"));
    }
    parts.iter().try_fold(0u128, |acc, p| {
        u8::from_str_radix(p, 16)
            .map(|b| (acc << 8) | u128::from(b))
            .map_err(|_| format!("'{text}' is not a MAC address (six hex bytes with ':')"))
    })
}

fn fmt_mac(v: u128) -> String {
    (0..6)
        .rev()
        .map(|i| format!("{:02x}", (v >> (8 * i)) & 0xff))
        .collect::<Vec<_>>()
        .join(":")
}

/// C's `%#x`: `0`, `0x20`.
fn c_hex(v: u128) -> String {
    if v == 0 {
        "0".into()
    } else {
        format!("{v:#x}")
    }
}

/// The underlay bridge and its tunnel-port classifier.
pub struct UnderlayBridge {
    pub cfg: Underlay,
    mac: u128,
    /// lib/tnl-ports.c's classifier: one rule per tunnel UDP port.
    tnl_ports: Classifier,
    dst_ports: Vec<u16>,
    /// MACs learned on the physical port (NORMAL; on upcalls only).
    learned: HashSet<u128>,
}

/// The outer headers of a VXLAN packet addressed to the endpoint.
pub struct Decap<'a> {
    pub inner: &'a [u8],
    pub vni: u64,
    pub src: u32,
    pub dst: u32,
    pub tos: u8,
    pub csum: bool,
}

impl UnderlayBridge {
    pub fn new(cfg: &Underlay, dst_ports: &[u16]) -> Result<UnderlayBridge, String> {
        use OfField::*;
        let mac = parse_mac(&cfg.mac).map_err(|e| format!("underlay mac: {e}"))?;
        let mut ports: Vec<u16> = dst_ports.to_vec();
        ports.sort_unstable();
        ports.dedup();
        let rules = ports
            .iter()
            .enumerate()
            .map(|(id, p)| {
                let (mut value, mut mask) = (Fields::default(), Fields::default());
                for (f, v) in [
                    (DlDst, mac),
                    (DlType, key::ETH_TYPE_IP),
                    (NwDst, u128::from(u32::from(cfg.ip))),
                    (NwProto, key::IPPROTO_UDP),
                    (NwFrag, 0),
                    (TpDst, u128::from(*p)),
                ] {
                    value[f] = v;
                    mask[f] = if f == NwFrag { key::NW_FRAG_MASK } else { f.full_mask() };
                }
                ClsRule {
                    priority: 0,
                    value,
                    mask,
                    id,
                }
            })
            .collect();
        // No prefix tries: tnl-ports.c sets no prefix fields on its classifier.
        let config = LookupConfig {
            prefix_tries: false,
            prefix_fields: Vec::new(),
            ..LookupConfig::default()
        };
        Ok(UnderlayBridge {
            cfg: cfg.clone(),
            mac,
            tnl_ports: Classifier::new(&config, rules),
            dst_ports: ports,
            learned: HashSet::new(),
        })
    }

    /// The underlay bridge's walk of a packet from the physical port: its wildcards and
    /// datapath actions (`tnl_pop(port)`, the LOCAL port, or drop).
    pub fn xlate(&mut self, k: &Fields) -> (Fields, Vec<DpAction>) {
        use OfField::*;
        let mut wc = Fields::default();
        for f in [RecircId, InPort, DlType, DlSrc, DlDst] {
            wc[f] = f.full_mask();
        }
        if key::is_ip_any(k) {
            wc[NwFrag] = key::NW_FRAG_MASK;
        }
        if k[VlanTci] & key::VLAN_CFI != 0 {
            wc[VlanTci] |= key::VLAN_VID_MASK | key::VLAN_CFI;
        }
        let (src, dst) = (k[DlSrc], k[DlDst]);
        if src >> 40 & 1 == 0 && src != self.mac {
            self.learned.insert(src);
        }
        if dst >> 40 & 1 == 0 && self.learned.contains(&dst) {
            return (wc, vec![DpAction::Drop]); // NORMAL: learned on the ingress port itself
        }
        let actions = match self.tnl_ports.lookup(k, &mut wc) {
            Some(r) => vec![DpAction::Tunnel {
                text: format!("tnl_pop({})", self.dst_ports[self.tnl_ports.rule(r).id]),
            }],
            None => vec![DpAction::Output {
                port: self.cfg.bridge_dp_port,
            }],
        };
        (wc, actions)
    }

    /// The `tnl_push(...)` action text of an output to `port`, for a packet whose tunnel id
    /// is `tun_id` and inner ECN `ecn` (`None`: not IP).
    pub fn push_text(&self, port: &VxlanOptions, remote_mac: u128, tun_id: u64, ecn: Option<u128>) -> String {
        let vni = port.key.unwrap_or(tun_id) & 0xff_ffff;
        let tos = match ecn {
            Some(IP_ECN_CE) => IP_ECN_ECT_0,
            Some(e) => e & IP_ECN_MASK,
            None => 0,
        };
        format!(
            "tnl_push(tnl_port({dp}),header(size={size},type=4,eth(dst={rmac},src={lmac},dl_type=0x0800),\
             ipv4(src={lip},dst={rip},proto=17,tos={tos},ttl=64,frag=0x4000),udp(src=0,dst={dp},csum=0x0),\
             vxlan(flags=0x8000000,vni={vni:#x})),out_port({br}))",
            dp = port.dst_port,
            size = VXLAN_HEADER_BYTES,
            rmac = fmt_mac(remote_mac),
            lmac = fmt_mac(self.mac),
            lip = self.cfg.ip,
            rip = port.remote_ip,
            tos = c_hex(tos),
            br = self.cfg.bridge_dp_port,
        )
    }
}

/// The outer headers of a VXLAN frame to UDP port `udp_port` (the port of the `tnl_pop` that
/// sent it here), decapsulated by `nicbench_wire`; `None` when it is not one, or when its outer
/// frame is not untagged Ethernet/IPv4 (VLAN-tagged and IPv6 underlays are not modelled).
pub fn parse_vxlan(frame: &[u8], udp_port: u16) -> Option<Decap<'_>> {
    use nicbench_wire::parse::{ethertype, Ip};
    let v = nicbench_wire::parse::decapsulate_vxlan(frame, udp_port)?;
    let Some(Ip::V4(ip)) = v.outer.ip else {
        return None;
    };
    if v.outer.vlan_count != 0 || v.outer.ethertype != ethertype::IPV4 {
        return None;
    }
    Some(Decap {
        inner: v.inner,
        vni: u64::from(v.vni),
        src: u32::from(ip.src),
        dst: u32::from(ip.dst),
        tos: ip.tos,
        csum: v.udp_checksum != 0,
    })
}

/// What a datapath action does with tunnels: the userspace datapath's `tnl_pop(PORT)` (decap,
/// the popped packet passes again from the tunnel port `PORT`) or an encap (`tnl_push(...)`, or
/// the kernel datapath's `set(tunnel(..))`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TunnelAction {
    Pop(u16),
    Push,
}

/// The [`TunnelAction`] of `a`, if it has one: the one reading of the tunnel actions' text, which
/// this module writes (`nicbench_rules` keeps `tnl_pop`/`tnl_push` as printed).
pub fn tunnel_action(a: &DpAction) -> Option<TunnelAction> {
    match a {
        DpAction::Tunnel { text } => match text.strip_prefix("tnl_pop(") {
            Some(rest) => rest.strip_suffix(')')?.parse().ok().map(TunnelAction::Pop),
            None => text.starts_with("tnl_push(").then_some(TunnelAction::Push),
        },
        DpAction::SetTunnel { .. } => Some(TunnelAction::Push),
        _ => None,
    }
}

/// The overlay key of a decapsulated packet: the inner frame's key on the tunnel's OpenFlow
/// port, with the tunnel metadata as `netdev-native-tnl.c` extracts it (no `df`).
pub fn overlay_key(d: &Decap<'_>, tunnel_ofport: u32) -> Fields {
    use OfField::*;
    let mut k = key::flow_key(d.inner, tunnel_ofport);
    k[TunId] = u128::from(d.vni);
    k[TunSrc] = u128::from(d.src);
    let flags = TUN_F_KEY | if d.csum { TUN_F_CSUM } else { 0 };
    k[TunDst] = u128::from(d.dst) | (u128::from(d.tos) << TUN_TOS_SHIFT) | flags;
    k
}

/// `tnl_wc_init`: what a packet from a tunnel port always un-wildcards.
pub fn tunnel_wildcards(k: &Fields, wc: &mut Fields) {
    use OfField::*;
    wc[TunId] = TunId.full_mask();
    wc[TunSrc] = TunSrc.full_mask();
    wc[TunDst] = TunDst.full_mask() | (0xff << TUN_TOS_SHIFT) | TUN_F_DF | TUN_F_CSUM | TUN_F_KEY;
    if key::is_ip_any(k) && (k[TunDst] >> TUN_TOS_SHIFT) & IP_ECN_MASK == IP_ECN_CE {
        wc[NwTos] |= IP_ECN_MASK;
    }
}

/// Moves the tunnel TOS and flags out of the `TunDst` key into `tunnel(tos=..,flags(..))`.
pub fn print_tunnel_meta(flow: &mut DpFlow) {
    let Some(dst) = flow.keys.iter_mut().find(|m| m.field == OfField::TunDst) else {
        return;
    };
    let (value, mask) = (dst.value, dst.mask);
    dst.value &= 0xffff_ffff;
    dst.mask &= 0xffff_ffff;
    let mut pieces = Vec::new();
    let tos = (value >> TUN_TOS_SHIFT) & 0xff;
    if tos != 0 {
        pieces.push(format!("tos={}", c_hex(tos)));
    }
    let flag = |bit: u128, name: &str| {
        if mask & bit == 0 {
            String::new()
        } else {
            format!("{}{name}", if value & bit != 0 { '+' } else { '-' })
        }
    };
    let flags = [flag(TUN_F_DF, "df"), flag(TUN_F_CSUM, "csum"), flag(TUN_F_KEY, "key")].concat();
    if !flags.is_empty() {
        pieces.push(format!("flags({flags})"));
    }
    if !pieces.is_empty() {
        flow.other_keys.push(format!("tunnel({})", pieces.join(",")));
    }
}

#[cfg(test)]
pub(crate) mod tests {
    //! Values worked out by hand from OVS 3.1's behaviour (lib/tnl-ports.c, `tnl_wc_init`,
    //! `netdev-native-tnl.c`); the whole path against real OVS is in the Python peer tests.

    use super::*;
    use crate::vswitch::key::tests::ipv4_frame;

    fn underlay() -> Underlay {
        Underlay {
            port: "p0".into(),
            dp_port: 1,
            bridge_dp_port: 2,
            ip: Ipv4Addr::new(172, 31, 1, 1),
            mac: "aa:55:aa:55:00:00".into(),
        }
    }

    /// An outer Ethernet/IPv4/UDP/VXLAN frame around `inner`, to the underlay's MAC and IP.
    pub(crate) fn vxlan_frame(vni: u32, udp_dst: u16, tos: u8, csum: u16, inner: &[u8]) -> Vec<u8> {
        let mut f = vec![0xaa, 0x55, 0xaa, 0x55, 0, 0, 0xaa, 0x55, 0xaa, 0x55, 0, 2, 0x08, 0x00];
        let total = (20 + 8 + 8 + inner.len()) as u16;
        f.extend_from_slice(&[0x45, tos, (total >> 8) as u8, total as u8, 0, 1, 0x40, 0, 64, 17, 0, 0]);
        f.extend_from_slice(&[172, 31, 1, 2, 172, 31, 1, 1]);
        f.extend_from_slice(&5555u16.to_be_bytes());
        f.extend_from_slice(&udp_dst.to_be_bytes());
        f.extend_from_slice(&(total - 20).to_be_bytes());
        f.extend_from_slice(&csum.to_be_bytes());
        f.extend_from_slice(&[0x08, 0, 0, 0]);
        f.extend_from_slice(&(vni << 8).to_be_bytes());
        f.extend_from_slice(inner);
        f
    }

    #[test]
    fn test_parse_vxlan_reads_the_outer_headers() {
        let inner = ipv4_frame([10, 0, 0, 1], [20, 0, 0, 1], 6, 1000, 80, None);
        let f = vxlan_frame(0x64, 4789, 0x20, 0xbeef, &inner);
        let d = parse_vxlan(&f, 4789).expect("vxlan");
        assert_eq!(
            (d.vni, d.src, d.dst, d.tos, d.csum),
            (0x64, 0xac1f_0102, 0xac1f_0101, 0x20, true)
        );
        assert_eq!(d.inner, &inner[..]);
        assert!(parse_vxlan(&inner, 4789).is_none(), "a TCP frame is no VXLAN frame");
        // A tunnel port on another UDP port (options:dst_port) decapsulates what the underlay popped
        // for it; the same frame is no VXLAN to 4789.
        let other = vxlan_frame(0x64, 4790, 0, 0, &inner);
        assert_eq!(parse_vxlan(&other, 4790).map(|d| d.vni), Some(0x64));
        assert!(parse_vxlan(&other, 4789).is_none());
        // VLAN-tagged underlay frames are not modelled: no decap.
        let mut tagged = f[..12].to_vec();
        tagged.extend_from_slice(&[0x81, 0x00, 0x00, 0x05]);
        tagged.extend_from_slice(&f[12..]);
        assert!(nicbench_wire::parse::decapsulate_vxlan(&tagged, 4789).is_some());
        assert!(parse_vxlan(&tagged, 4789).is_none());
    }

    fn walk(u: &mut UnderlayBridge, frame: &[u8]) -> (Fields, Vec<DpAction>) {
        u.xlate(&key::flow_key(frame, 1))
    }

    #[test]
    fn test_underlay_pops_vxlan_to_its_ip_and_unwildcards_the_stages_reached() {
        use OfField::*;
        let mut u = UnderlayBridge::new(&underlay(), &[4789]).expect("underlay");
        let inner = ipv4_frame([10, 0, 0, 1], [20, 0, 0, 1], 6, 1000, 80, None);
        let (wc, actions) = walk(&mut u, &vxlan_frame(100, 4789, 0, 0, &inner));
        assert_eq!(
            actions,
            vec![DpAction::Tunnel {
                text: "tnl_pop(4789)".into()
            }]
        );
        assert_eq!(
            (wc[NwDst], wc[NwProto], wc[TpDst], wc[NwSrc]),
            (0xffff_ffff, 0xff, 0xffff, 0)
        );
        // UDP to 53: the ports trie needs 4 bits to tell 53 (0x0035) from 4789 (0x12b5).
        let mut dns = vxlan_frame(100, 53, 0, 0, &inner);
        dns.truncate(14 + 20 + 8);
        let (wc, actions) = walk(&mut u, &dns);
        assert_eq!(actions, vec![DpAction::Output { port: 2 }]);
        assert_eq!((wc[NwDst], wc[TpDst]), (0xffff_ffff, 0xf000));
        // TCP to the endpoint: the L3 stage misses on nw_proto; no port bits.
        let tcp = ipv4_frame([172, 31, 1, 2], [172, 31, 1, 1], 6, 5, 4789, None);
        let mut tcp_to_us = tcp.clone();
        tcp_to_us[..6].copy_from_slice(&[0xaa, 0x55, 0xaa, 0x55, 0, 0]);
        let (wc, _) = walk(&mut u, &tcp_to_us);
        assert_eq!((wc[NwDst], wc[NwProto], wc[TpDst]), (0xffff_ffff, 0xff, 0));
        // Another destination MAC: the L2 stage misses, no IP bits at all.
        let (wc, actions) = walk(&mut u, &tcp);
        assert_eq!((wc[NwDst], wc[NwProto], wc[DlDst]), (0, 0, 0xffff_ffff_ffff));
        assert_eq!(actions, vec![DpAction::Output { port: 2 }]);
    }

    #[test]
    fn test_overlay_key_and_its_printed_tunnel_metadata() {
        use OfField::*;
        let inner = ipv4_frame([10, 0, 0, 1], [20, 0, 0, 1], 6, 1000, 80, None);
        let f = vxlan_frame(0x65, 4789, 0x20, 0, &inner);
        let k = overlay_key(&parse_vxlan(&f, 4789).expect("vxlan"), 2);
        let mut wc = Fields::default();
        tunnel_wildcards(&k, &mut wc);
        assert_eq!(wc[NwTos], 0, "ECN of the outer header is not CE");
        let mut flow = DpFlow {
            keys: vec![
                nicbench_rules::openflow::FieldMatch {
                    field: TunId,
                    value: k[TunId],
                    mask: wc[TunId],
                },
                nicbench_rules::openflow::FieldMatch {
                    field: TunDst,
                    value: k[TunDst] & wc[TunDst],
                    mask: wc[TunDst],
                },
            ],
            ..DpFlow::default()
        };
        print_tunnel_meta(&mut flow);
        assert_eq!(flow.keys[1].value, 0xac1f_0101);
        assert_eq!(flow.keys[1].mask, 0xffff_ffff);
        assert_eq!(
            flow.other_keys,
            vec!["tunnel(tos=0x20,flags(-df-csum+key))".to_string()]
        );
        // Outer ECN CE: the inner ECN bits are consulted.
        let ce = overlay_key(
            &parse_vxlan(&vxlan_frame(1, 4789, 0x03, 1, &inner), 4789).expect("vxlan"),
            2,
        );
        let mut wc = Fields::default();
        tunnel_wildcards(&ce, &mut wc);
        assert_eq!(wc[NwTos], 0x03);
    }

    #[test]
    fn test_push_header_as_ovs_prints_it() {
        let u = UnderlayBridge::new(&underlay(), &[4789]).expect("underlay");
        let port = VxlanOptions {
            remote_ip: Ipv4Addr::new(172, 31, 1, 2),
            key: None,
            dst_port: 4789,
            remote_mac: "aa:55:aa:55:00:02".into(),
        };
        // OVS 3.1, dummy datapath, `set_tunnel:100,output:vx` (recorded from dpctl/dump-flows).
        assert_eq!(
            u.push_text(&port, 0xaa55_aa55_0002, 100, Some(0)),
            "tnl_push(tnl_port(4789),header(size=50,type=4,eth(dst=aa:55:aa:55:00:02,src=aa:55:aa:55:00:00,\
             dl_type=0x0800),ipv4(src=172.31.1.1,dst=172.31.1.2,proto=17,tos=0,ttl=64,frag=0x4000),udp(src=0,\
             dst=4789,csum=0x0),vxlan(flags=0x8000000,vni=0x64)),out_port(2))"
        );
        // A fixed key wins over tun_id; inner CE becomes ECT(0) outside.
        let fixed = VxlanOptions { key: Some(7), ..port };
        let text = u.push_text(&fixed, 0, 100, Some(3));
        assert!(text.contains("vni=0x7") && text.contains("tos=0x2,"), "{text}");
    }
}
