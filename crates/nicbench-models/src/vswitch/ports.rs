//! The bridge's ports when a request does not list them: the names the rules use, numbered in
//! name order (OpenFlow and datapath 1, 2, ...), and the bridge's LOCAL port (OpenFlow 65534,
//! datapath 100, as OVS's dummy datapath numbers them); with VXLAN ports, the underlay bridge
//! they send through.
//!
//! VXLAN ports as OVS's userspace datapath numbers them: a tunnel port's datapath number is its
//! UDP port; the underlay's physical port takes the first free datapath number, its LOCAL port
//! 101. One underlay bridge is modelled: every VXLAN port names the same one.

use std::collections::BTreeSet;
use std::net::Ipv4Addr;

use nicbench_rules::openflow::{OfAction, OfRule, PortRef};
use serde::{Deserialize, Serialize};

use super::pipeline::{PortInfo, OFPP_LOCAL};
use super::tunnel::{Underlay, VxlanOptions, VXLAN_PORT};
use crate::ModelError;

/// The OpenFlow bridge's name (its LOCAL port).
pub const BRIDGE: &str = "br0";
/// Datapath numbers of the bridges' LOCAL ports (OVS's dummy datapath).
const BRIDGE_DP_PORT: u32 = 100;
const UNDERLAY_BRIDGE_DP_PORT: u32 = 101;

fn default_dst_port() -> u16 {
    VXLAN_PORT
}

fn zero_mac() -> String {
    "00:00:00:00:00:00".into()
}

/// A VXLAN port of the bridge and the underlay it sends through (`nicbench vswitch --port
/// NAME=vxlan,remote_ip=R,local_ip=L,underlay=PHY[,key=..][,dst_port=..][,remote_mac=..][,local_mac=..]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VxlanPort {
    pub name: String,
    pub remote_ip: Ipv4Addr,
    /// The underlay bridge's IP: outer destination on decap, outer source on encap.
    pub local_ip: Ipv4Addr,
    /// The underlay's physical port (packets arriving on it are decapsulated).
    pub underlay: String,
    /// A fixed VNI; absent for `key=flow`.
    #[serde(default)]
    pub key: Option<u64>,
    #[serde(default = "default_dst_port")]
    pub dst_port: u16,
    #[serde(default = "zero_mac")]
    pub remote_mac: String,
    /// The underlay bridge's MAC.
    #[serde(default = "zero_mac")]
    pub local_mac: String,
}

/// The port names the rules use: `in_port=NAME` matches, `output:NAME` and `resubmit(NAME,..)`.
pub fn rule_port_names(rules: &[OfRule]) -> BTreeSet<String> {
    let mut names = matched_in_ports(rules);
    for r in rules {
        for a in &r.actions {
            if let OfAction::Output { port: PortRef::Name(n) }
            | OfAction::Resubmit {
                port: Some(PortRef::Name(n)),
                ..
            } = a
            {
                names.insert(n.clone());
            }
        }
    }
    names
}

/// The port names the rules match on (`in_port=NAME`).
pub fn matched_in_ports(rules: &[OfRule]) -> BTreeSet<String> {
    rules
        .iter()
        .filter_map(|r| match &r.matches.in_port {
            Some(PortRef::Name(n)) => Some(n.clone()),
            _ => None,
        })
        .collect()
}

fn local_port() -> PortInfo {
    PortInfo {
        name: BRIDGE.into(),
        ofport: OFPP_LOCAL,
        dp_port: BRIDGE_DP_PORT,
        tunnel: None,
    }
}

/// The ports for a run whose packets arrive on `in_port`: the rules' names and `in_port` (a name
/// of the bridge itself is its LOCAL port), numbered in name order.
pub fn default_ports(rules: &[OfRule], in_port: &str) -> Vec<PortInfo> {
    let mut names = rule_port_names(rules);
    if in_port != BRIDGE {
        names.insert(in_port.to_string());
    }
    let numbered = names.into_iter().zip(1u32..).map(|(name, n)| PortInfo {
        name,
        ofport: n,
        dp_port: n,
        tunnel: None,
    });
    std::iter::once(local_port()).chain(numbered).collect()
}

/// The ports and the underlay bridge of a run with VXLAN ports `tunnels` (at least one): the
/// rules' names and the tunnels' in name order (the bridge's and the underlay's port left out),
/// each VXLAN port on its UDP port as datapath number.
pub fn tunnel_ports(tunnels: &[VxlanPort], rules: &[OfRule]) -> Result<(Vec<PortInfo>, Underlay), ModelError> {
    let first = tunnels
        .first()
        .ok_or_else(|| ModelError::Scenario("tunnels: empty (give at least one VXLAN port)".into()))?;
    for t in &tunnels[1..] {
        let differs = [
            ("local_ip", t.local_ip.to_string(), first.local_ip.to_string()),
            ("underlay", t.underlay.clone(), first.underlay.clone()),
            ("local_mac", t.local_mac.clone(), first.local_mac.clone()),
        ]
        .into_iter()
        .find(|(_, mine, theirs)| mine != theirs);
        if let Some((what, mine, theirs)) = differs {
            return Err(ModelError::Scenario(format!(
                "tunnels: '{}': {what} {mine} differs from '{}''s {theirs} (one underlay bridge is modelled)",
                t.name, first.name
            )));
        }
    }
    let mut names = rule_port_names(rules);
    names.extend(tunnels.iter().map(|t| t.name.clone()));
    names.remove(BRIDGE);
    names.remove(&first.underlay);
    let mut ports = vec![local_port()];
    for (name, n) in names.into_iter().zip(1u32..) {
        let tunnel = tunnels.iter().find(|t| t.name == name);
        ports.push(PortInfo {
            dp_port: tunnel.map_or(n, |t| u32::from(t.dst_port)),
            tunnel: tunnel.map(|t| VxlanOptions {
                remote_ip: t.remote_ip,
                key: t.key,
                dst_port: t.dst_port,
                remote_mac: t.remote_mac.clone(),
            }),
            name,
            ofport: n,
        });
    }
    let phy_dp = (1..=u32::from(u16::MAX))
        .find(|n| *n != UNDERLAY_BRIDGE_DP_PORT && ports.iter().all(|p| p.dp_port != *n))
        .ok_or_else(|| ModelError::Scenario("tunnels: no free datapath port number for the underlay".into()))?;
    let underlay = Underlay {
        port: first.underlay.clone(),
        dp_port: phy_dp,
        bridge_dp_port: UNDERLAY_BRIDGE_DP_PORT,
        ip: first.local_ip,
        mac: first.local_mac.clone(),
    };
    Ok((ports, underlay))
}

#[cfg(test)]
mod tests {
    use super::*;
    use nicbench_rules::openflow::parse_file;

    fn rules(text: &str) -> Vec<OfRule> {
        parse_file(text, "t.of").expect("rules")
    }

    fn names(ports: &[PortInfo]) -> Vec<(&str, u32, u32)> {
        ports.iter().map(|p| (p.name.as_str(), p.ofport, p.dp_port)).collect()
    }

    #[test]
    fn test_default_ports_are_the_rules_names_and_the_in_port_in_name_order() {
        let r = rules("in_port=vm,ip,actions=output:p0\nip,actions=resubmit(p9,1)\n");
        assert_eq!(
            names(&default_ports(&r, "eth1")),
            [
                ("br0", 65534, 100),
                ("eth1", 1, 1),
                ("p0", 2, 2),
                ("p9", 3, 3),
                ("vm", 4, 4)
            ]
        );
        assert_eq!(names(&default_ports(&r, "br0")).len(), 4, "br0 is the LOCAL port");
        assert_eq!(matched_in_ports(&r).into_iter().collect::<Vec<_>>(), ["vm"]);
    }

    #[test]
    fn test_vxlan_ports_sit_on_their_udp_port_and_the_underlay_on_the_first_free_number() {
        let r = rules("in_port=vx,tun_id=100,ip,actions=output:vm\nin_port=vm,ip,actions=output:vx\n");
        let vx = VxlanPort {
            name: "vx".into(),
            remote_ip: Ipv4Addr::new(172, 31, 1, 2),
            local_ip: Ipv4Addr::new(172, 31, 1, 1),
            underlay: "p0".into(),
            key: None,
            dst_port: 4789,
            remote_mac: zero_mac(),
            local_mac: zero_mac(),
        };
        let (ports, underlay) = tunnel_ports(std::slice::from_ref(&vx), &r).expect("ports");
        assert_eq!(names(&ports), [("br0", 65534, 100), ("vm", 1, 1), ("vx", 2, 4789)]);
        assert_eq!(
            (underlay.port.as_str(), underlay.dp_port, underlay.bridge_dp_port),
            ("p0", 2, 101)
        );
        let other = VxlanPort {
            name: "vy".into(),
            local_ip: Ipv4Addr::new(172, 31, 1, 9),
            ..vx.clone()
        };
        let msg = tunnel_ports(&[vx, other], &r)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            msg.contains("'vy': local_ip 172.31.1.9 differs from 'vx''s 172.31.1.1"),
            "{msg}"
        );
    }
}
