//! Actions (rte_flow `RTE_FLOW_ACTION_TYPE_*`) and the RSS configuration.

use super::field::MacAddr;
use serde::{Deserialize, Serialize};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// One action of a rule. Actions run in list order; the fate actions are `Queue`, `Rss`,
/// `Jump`, `Drop`, `PortId` and `Passthru`.
///
/// The RSS configuration and the VXLAN tunnel are boxed: inline they made every action 88
/// bytes, where the common ones need 8.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Action {
    /// Deliver to one rx queue.
    Queue {
        index: u16,
    },
    /// Spread over queues by hash.
    Rss(Box<RssAction>),
    /// Continue matching in another group (table).
    Jump {
        group: u32,
    },
    Drop,
    /// Attach a 32-bit mark to the packet (mbuf FDIR id, skb mark in tc).
    Mark {
        id: u32,
    },
    /// Count hits (packets and bytes) of the rule.
    Count,
    /// Send to another DPDK port (tc: `mirred egress redirect dev`).
    PortId {
        id: u32,
    },
    /// Let the packet continue as if no rule matched (tc: `pass`).
    Passthru,
    SetMacSrc {
        mac: MacAddr,
    },
    SetMacDst {
        mac: MacAddr,
    },
    SetIpv4Src {
        addr: Ipv4Addr,
    },
    SetIpv4Dst {
        addr: Ipv4Addr,
    },
    SetIpv6Src {
        addr: Ipv6Addr,
    },
    SetIpv6Dst {
        addr: Ipv6Addr,
    },
    /// Rewrite the L4 (TCP/UDP) source port.
    SetTpSrc {
        port: u16,
    },
    SetTpDst {
        port: u16,
    },
    /// Decrement IPv4 TTL / IPv6 hop limit.
    DecTtl,
    OfPushVlan {
        ethertype: u16,
    },
    OfPopVlan,
    /// testpmd does not range-check the VID, so it is kept as 16 bits.
    OfSetVlanVid {
        vid: u16,
    },
    OfSetVlanPcp {
        pcp: u8,
    },
    /// VXLAN encapsulation. testpmd takes the tunnel from a separate `set vxlan` command
    /// (`tunnel: None`); tc `tunnel_key set` gives it inline.
    VxlanEncap {
        tunnel: Option<Box<VxlanTunnel>>,
    },
    VxlanDecap,
}

/// Outer headers of a VXLAN encapsulation; absent parts are left to the device defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct VxlanTunnel {
    pub src_ip: Option<IpAddr>,
    pub dst_ip: Option<IpAddr>,
    pub vni: Option<u32>,
    pub dst_port: Option<u16>,
}

/// RSS action. `None` means "not given" (the port's defaults apply), which differs from an
/// explicitly empty list (`types end`, `queues end`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RssAction {
    pub func: Option<RssFunc>,
    /// Encapsulation level to hash on (0 = PMD default, 1 = outermost).
    pub level: Option<u32>,
    /// Hash types, in the order given (testpmd names; groups such as `ip` kept as written).
    pub types: Option<Vec<RssType>>,
    /// Hash key bytes (at most 64).
    pub key: Option<Vec<u8>>,
    /// Key length \[bytes\] given by `key_len` after any `key` (0..=64). testpmd's `key`
    /// sets the length to the key's; a later `key_len` overrides it (cuts the key, or
    /// pads it with zero bytes), an earlier one is overridden by `key` (`None` then).
    /// Without a `key`, the PMD's default key is used whatever the length says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_len: Option<u32>,
    pub queues: Option<Vec<u16>>,
}

/// The key length the mlx5 PMD accepts \[bytes\] (`MLX5_RSS_HASH_KEY_LEN`).
pub const MLX5_RSS_KEY_BYTES: usize = 40;

/// Why the mlx5 PMD refuses an `rss` action whatever the port it goes to
/// (`mlx5_flow_validate_action_rss`, DPDK 22.11). One definition for the rule-set checks
/// (`rules check`, every loader) and the classifier's RSS resolution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RssRefusal {
    #[error("rss func simple_xor is not modelled: the ConnectX XOR hash has no public definition and the mlx5 PMD refuses it (use toeplitz, symmetric_toeplitz or default)")]
    SimpleXor,
    #[error("rss key of {len_bytes} bytes: the mlx5 PMD takes exactly {MLX5_RSS_KEY_BYTES} (MLX5_RSS_HASH_KEY_LEN)")]
    KeyLength { len_bytes: usize },
}

impl RssAction {
    /// The key the action hashes with, `None` for the PMD's default key, or why mlx5
    /// refuses the action. testpmd's key buffer is zeroed, so `key_len` beyond the key pads
    /// with zeros; a `key_len` without a key is accepted only if it is 0 or 40.
    pub fn mlx5_key(&self) -> Result<Option<Vec<u8>>, RssRefusal> {
        if self.func == Some(RssFunc::SimpleXor) {
            return Err(RssRefusal::SimpleXor);
        }
        let key = match (&self.key, self.key_len) {
            (Some(key), Some(len)) => {
                let mut k = key.clone();
                k.resize(len as usize, 0);
                k
            }
            (Some(key), None) => key.clone(),
            (None, Some(len)) if len != 0 && len as usize != MLX5_RSS_KEY_BYTES => {
                return Err(RssRefusal::KeyLength {
                    len_bytes: len as usize,
                })
            }
            (None, _) => return Ok(None),
        };
        if key.len() != MLX5_RSS_KEY_BYTES {
            return Err(RssRefusal::KeyLength { len_bytes: key.len() });
        }
        Ok(Some(key))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RssFunc {
    Default,
    Toeplitz,
    SimpleXor,
    SymmetricToeplitz,
}

impl RssFunc {
    pub const ALL: [RssFunc; 4] = [
        RssFunc::Default,
        RssFunc::Toeplitz,
        RssFunc::SimpleXor,
        RssFunc::SymmetricToeplitz,
    ];
    pub fn name(self) -> &'static str {
        match self {
            RssFunc::Default => "default",
            RssFunc::Toeplitz => "toeplitz",
            RssFunc::SimpleXor => "simple_xor",
            RssFunc::SymmetricToeplitz => "symmetric_toeplitz",
        }
    }
}

macro_rules! rss_types {
    ($($variant:ident = $name:literal),* $(,)?) => {
        /// An RSS hash type as testpmd names it (DPDK 22.11 `rss_type_table`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum RssType { $($variant),* }
        impl RssType {
            pub const ALL: &'static [RssType] = &[$(RssType::$variant),*];
            /// The testpmd token.
            pub fn name(self) -> &'static str { match self { $(RssType::$variant => $name),* } }
            pub fn from_name(name: &str) -> Option<RssType> {
                match name { $($name => Some(RssType::$variant),)* _ => None }
            }
        }
    };
}

rss_types! {
    All = "all", None = "none", Ip = "ip", Udp = "udp", Tcp = "tcp", Sctp = "sctp",
    Tunnel = "tunnel", Vlan = "vlan", Ipv4 = "ipv4", Ipv4Frag = "ipv4-frag",
    Ipv4Tcp = "ipv4-tcp", Ipv4Udp = "ipv4-udp", Ipv4Sctp = "ipv4-sctp", Ipv4Other = "ipv4-other",
    Ipv6 = "ipv6", Ipv6Frag = "ipv6-frag", Ipv6Tcp = "ipv6-tcp", Ipv6Udp = "ipv6-udp",
    Ipv6Sctp = "ipv6-sctp", Ipv6Other = "ipv6-other", L2Payload = "l2-payload",
    Ipv6Ex = "ipv6-ex", Ipv6TcpEx = "ipv6-tcp-ex", Ipv6UdpEx = "ipv6-udp-ex", Port = "port",
    Vxlan = "vxlan", Geneve = "geneve", Nvgre = "nvgre", Gtpu = "gtpu", Eth = "eth",
    SVlan = "s-vlan", CVlan = "c-vlan", Esp = "esp", Ah = "ah", L2tpv3 = "l2tpv3",
    Pfcp = "pfcp", Pppoe = "pppoe", Ecpri = "ecpri", Mpls = "mpls", Ipv4Chksum = "ipv4-chksum",
    L4Chksum = "l4-chksum", L2tpv2 = "l2tpv2", L3Pre96 = "l3-pre96", L3Pre64 = "l3-pre64",
    L3Pre56 = "l3-pre56", L3Pre48 = "l3-pre48", L3Pre40 = "l3-pre40", L3Pre32 = "l3-pre32",
    L2DstOnly = "l2-dst-only", L2SrcOnly = "l2-src-only", L4DstOnly = "l4-dst-only",
    L4SrcOnly = "l4-src-only", L3DstOnly = "l3-dst-only", L3SrcOnly = "l3-src-only",
}

impl Action {
    /// Whether the action decides where the packet goes.
    pub fn is_fate(&self) -> bool {
        matches!(
            self,
            Action::Queue { .. }
                | Action::Rss(_)
                | Action::Jump { .. }
                | Action::Drop
                | Action::PortId { .. }
                | Action::Passthru
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_rss_type_names_unique_and_round_trip() {
        for &t in RssType::ALL {
            assert_eq!(RssType::from_name(t.name()), Some(t));
        }
        let mut names: Vec<_> = RssType::ALL.iter().map(|t| t.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), RssType::ALL.len());
        assert_eq!(RssType::from_name("bogus"), None);
    }

    #[test]
    fn test_fate() {
        assert!(Action::Drop.is_fate());
        assert!(!Action::Count.is_fate());
    }
}
