//! RSS resolved to a receive queue per packet, as the mlx5 PMD (DPDK 22.11) programs a
//! ConnectX for an rte_flow `rss` action, and for the port's default RSS.
//!
//! An [`RssQueuePicker`] is built once per action (the Toeplitz tables and the indirection
//! table are precomputed) and then picks a queue from a [`PacketKey`]:
//!
//! - **Fields** (`flow_dv_hashfields_set`, `drivers/net/mlx5/mlx5_flow_dv.c`): the L3
//!   addresses are hashed when the packet's IP version has a type in the action (any of
//!   `ipv4`, `ipv4-frag`, `ipv4-tcp`, `ipv4-udp`, `ipv4-other` for IPv4; the `ipv6*` ones
//!   for IPv6); the ports when, in addition, the packet is UDP and a UDP type is given
//!   (`ipv4-udp`, `ipv6-udp`, `ipv6-udp-ex`), or TCP and a TCP type. `l3-src-only` /
//!   `l3-dst-only` / `l4-src-only` / `l4-dst-only` keep one side (both given: both sides,
//!   as `rte_eth_rss_hf_refine` clears the pair). A packet whose IP version has no type
//!   (or no IP header) hashes no field: the hash is 0 and the packet goes to the first
//!   entry of the table, the action's first queue — what mlx5 does ("There is no match
//!   between the RSS types and the L3 protocol": `hash_fields = 0`).
//!   Types absent or empty mean `ip` (mlx5: "RSS type 0 indicates default RSS type
//!   (RTE_ETH_RSS_IP)"; testpmd also fills in its own default `rss_hf = RTE_ETH_RSS_IP`).
//!   SCTP ports are not hashed (mlx5 has no SCTP hash fields).
//! - **Input**: the selected fields in the Microsoft order (source address, destination
//!   address, source port, destination port), network byte order.
//! - **Function**: `default` and `toeplitz` are Toeplitz. `symmetric_toeplitz` follows
//!   `rte_eth_hash_function`'s definition: "src, dst will be replaced by xor(src, dst)"
//!   (with one side only, that side XOR 0). `simple_xor` is refused: ConnectX's XOR is an
//!   "inverted XOR8" with a re-ordered table (Linux mlx5e, `ETH_RSS_HASH_XOR`) with no
//!   public bit-level definition, and the mlx5 PMD refuses it.
//! - **Key**: the action's key cut or zero-padded to `key_len` (testpmd's buffer is
//!   zeroed); absent: [`MLX5_DEFAULT_KEY`]. mlx5 takes exactly 40 bytes
//!   (`MLX5_RSS_HASH_KEY_LEN`: "RSS hash key too small/too large"), and a `key_len` without a
//!   key only if it is 0 or 40.
//! - **Queues**: [`Reta::mlx5_of_queues`]; absent: the port's queues 0..N-1 (testpmd's
//!   default `queue_num = nb_rxq`).
//! - **Level**: 0 and 1 hash the outermost headers (mlx5's default), 2 and more the
//!   encapsulated ones.

use crate::classifier::Classifier;
use crate::compile::Fate;
use crate::key::{presence, PacketKey, INNER_BASE, PRESENCE_SHIFT, W_DST_HI, W_DST_LO, W_L4, W_SRC_HI, W_SRC_LO};
use crate::state::{Outcome, RuleId, Verdict};
use ahash::AHashMap;
use nicbench_rules::model::{RssAction, RssFunc, RssRefusal, RssType};
use nicbench_rules::Action;
use nicbench_wire::rss::{Reta, RssError, Toeplitz, MLX5_DEFAULT_KEY};

/// Why an `rss` action cannot be resolved as the mlx5 PMD would.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RssSetupError {
    /// Refused whatever the port: the same check as every rule loader's.
    #[error(transparent)]
    Refused(#[from] RssRefusal),
    #[error("rss queues: {0}")]
    Queues(RssError),
    #[error("the port needs at least one rx queue")]
    NoPortQueues,
}

/// Which fields an action hashes, per IP version and L4 protocol.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct HashTypes {
    ipv4: bool,
    ipv6: bool,
    udp: bool,
    tcp: bool,
    l3_src: bool,
    l3_dst: bool,
    l4_src: bool,
    l4_dst: bool,
}

impl HashTypes {
    /// testpmd's type names as bits of `RTE_ETH_RSS_*`, grouped the way mlx5 reads them.
    fn of(types: &[RssType]) -> HashTypes {
        use RssType as T;
        let mut t = HashTypes::default();
        let (mut l3_src_only, mut l3_dst_only, mut l4_src_only, mut l4_dst_only) = (false, false, false, false);
        for &ty in types {
            match ty {
                T::Ipv4 | T::Ipv4Frag | T::Ipv4Other => t.ipv4 = true,
                T::Ipv4Tcp => (t.ipv4, t.tcp) = (true, true),
                T::Ipv4Udp => (t.ipv4, t.udp) = (true, true),
                T::Ipv6 | T::Ipv6Frag | T::Ipv6Other | T::Ipv6Ex => t.ipv6 = true,
                T::Ipv6Tcp | T::Ipv6TcpEx => (t.ipv6, t.tcp) = (true, true),
                T::Ipv6Udp | T::Ipv6UdpEx => (t.ipv6, t.udp) = (true, true),
                // RTE_ETH_RSS_IP / _UDP / _TCP (testpmd's "ip", "udp", "tcp").
                T::Ip => (t.ipv4, t.ipv6) = (true, true),
                T::Udp => (t.ipv4, t.ipv6, t.udp) = (true, true, true),
                T::Tcp => (t.ipv4, t.ipv6, t.tcp) = (true, true, true),
                T::All => (t.ipv4, t.ipv6, t.udp, t.tcp) = (true, true, true, true),
                T::L3SrcOnly => l3_src_only = true,
                T::L3DstOnly => l3_dst_only = true,
                T::L4SrcOnly => l4_src_only = true,
                T::L4DstOnly => l4_dst_only = true,
                // Types mlx5 does not hash on for Toeplitz RSS (L2, tunnels, SCTP, ...).
                _ => {}
            }
        }
        if !(t.ipv4 || t.ipv6 || t.udp || t.tcp) {
            // mlx5: "RSS type 0 indicates default RSS type (RTE_ETH_RSS_IP)".
            (t.ipv4, t.ipv6) = (true, true);
        }
        // rte_eth_rss_hf_refine: SRC_ONLY and DST_ONLY together mean both.
        (t.l3_src, t.l3_dst) = if l3_src_only == l3_dst_only {
            (true, true)
        } else {
            (l3_src_only, l3_dst_only)
        };
        (t.l4_src, t.l4_dst) = if l4_src_only == l4_dst_only {
            (true, true)
        } else {
            (l4_src_only, l4_dst_only)
        };
        t
    }
}

/// Picks the queue of one `rss` action (or of the port's default RSS) for a packet.
#[derive(Clone, Debug)]
pub struct RssQueuePicker {
    toeplitz: Toeplitz,
    reta: Reta,
    types: HashTypes,
    symmetric: bool,
    /// First key word of the hashed level.
    base: usize,
}

impl RssQueuePicker {
    /// The picker for `action` on a port with `port_queues` rx queues.
    pub fn new(action: &RssAction, port_queues: u16) -> Result<RssQueuePicker, RssSetupError> {
        let key = action.mlx5_key()?.unwrap_or_else(|| MLX5_DEFAULT_KEY.to_vec());
        let symmetric = action.func == Some(RssFunc::SymmetricToeplitz);
        let queues: Vec<u16> = match &action.queues {
            Some(q) => q.clone(),
            None if port_queues == 0 => return Err(RssSetupError::NoPortQueues),
            None => (0..port_queues).collect(),
        };
        let reta = Reta::mlx5_of_queues(&queues).map_err(RssSetupError::Queues)?;
        let toeplitz = Toeplitz::new(&key).expect("a 40-byte key is in range");
        let types = HashTypes::of(action.types.as_deref().unwrap_or(&[]));
        let base = if action.level.unwrap_or(0) >= 2 { INNER_BASE } else { 0 };
        Ok(RssQueuePicker {
            toeplitz,
            reta,
            types,
            symmetric,
            base,
        })
    }

    /// The port's default RSS over `port_queues` queues: default key, types `ip`, Toeplitz.
    pub fn port_default(port_queues: u16) -> Result<RssQueuePicker, RssSetupError> {
        if port_queues == 0 {
            return Err(RssSetupError::NoPortQueues);
        }
        RssQueuePicker::new(&RssAction::default(), port_queues)
    }

    /// The Toeplitz input the NIC builds for `key` (at most 36 bytes), and its length.
    fn input(&self, key: &PacketKey) -> ([u8; 36], usize) {
        let w = &key.words[self.base..];
        let p = (w[W_L4] >> PRESENCE_SHIFT) & 0xffff;
        let t = self.types;
        let mut out = [0u8; 36];
        let mut len = 0;
        let (l3_bytes, src, dst): (usize, u128, u128) = if p & presence::IPV4 != 0 && t.ipv4 {
            (4, u128::from(w[W_SRC_LO] as u32), u128::from(w[W_DST_LO] as u32))
        } else if p & presence::IPV6 != 0 && t.ipv6 {
            let wide = |lo: usize, hi: usize| (u128::from(w[hi]) << 64) | u128::from(w[lo]);
            (16, wide(W_SRC_LO, W_SRC_HI), wide(W_DST_LO, W_DST_HI))
        } else {
            // No field applies: mlx5 hashes nothing (hash 0, first table entry).
            return (out, 0);
        };
        let (src, dst) = self.sym(src, dst, t.l3_src, t.l3_dst);
        for (take, value) in [(t.l3_src, src), (t.l3_dst, dst)] {
            if take {
                out[len..len + l3_bytes].copy_from_slice(&value.to_be_bytes()[16 - l3_bytes..]);
                len += l3_bytes;
            }
        }
        let ports = (p & presence::UDP != 0 && t.udp) || (p & presence::TCP != 0 && t.tcp);
        if ports {
            let (sp, dp) = (u128::from(w[W_L4] as u16), u128::from((w[W_L4] >> 16) as u16));
            let (sp, dp) = self.sym(sp, dp, t.l4_src, t.l4_dst);
            for (take, value) in [(t.l4_src, sp), (t.l4_dst, dp)] {
                if take {
                    out[len..len + 2].copy_from_slice(&(value as u16).to_be_bytes());
                    len += 2;
                }
            }
        }
        (out, len)
    }

    /// rte_eth_hash_function SYMMETRIC_TOEPLITZ: "src, dst will be replaced by xor(src, dst)"
    /// when both are hashed (one side alone is XORed with zero: unchanged).
    #[inline]
    fn sym(&self, src: u128, dst: u128, take_src: bool, take_dst: bool) -> (u128, u128) {
        if self.symmetric && take_src && take_dst {
            (src ^ dst, src ^ dst)
        } else {
            (src, dst)
        }
    }

    /// The RSS hash of a packet.
    pub fn hash(&self, key: &PacketKey) -> u32 {
        let (input, len) = self.input(key);
        self.toeplitz.hash(&input[..len])
    }

    /// The receive queue of a packet.
    #[inline]
    pub fn queue(&self, key: &PacketKey) -> u16 {
        self.reta.queue(self.hash(key))
    }
}

/// An `rss` action that cannot be resolved, with the rule it is in.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("rule in group {group} with priority {priority}: {source}")]
pub struct RssRuleError {
    /// The rule (`None`: the port's default RSS).
    pub rule: Option<RuleId>,
    pub group: u32,
    pub priority: u32,
    #[source]
    pub source: RssSetupError,
}

/// The receive queue of every outcome: `queue` actions give theirs, `rss` actions go
/// through their rule's [`RssQueuePicker`], and packets no rule sends anywhere (unmatched,
/// a rule without a fate, `passthru`) through the port's default RSS, as a NIC delivers
/// them. Dropped packets and those sent to another port have no queue.
#[derive(Clone, Debug)]
pub struct QueueResolver {
    port_queues: u16,
    port: RssQueuePicker,
    by_rule: AHashMap<RuleId, RssQueuePicker>,
}

impl QueueResolver {
    /// Pickers for every `rss` rule installed in `classifier`, built now so that a bad action
    /// is reported before any packet; `port_queues`: the port's rx queues (default RSS).
    pub fn new(classifier: &Classifier, port_queues: u16) -> Result<QueueResolver, RssRuleError> {
        let port = RssQueuePicker::port_default(port_queues).map_err(|source| RssRuleError {
            rule: None,
            group: 0,
            priority: 0,
            source,
        })?;
        let mut resolver = QueueResolver {
            port_queues,
            port,
            by_rule: AHashMap::new(),
        };
        for id in classifier.rule_ids() {
            resolver.picker(classifier, id)?;
        }
        Ok(resolver)
    }

    /// The picker of rule `id` (built on first use: rules installed later), `None` when the
    /// rule has no `rss` fate.
    fn picker(&mut self, classifier: &Classifier, id: RuleId) -> Result<Option<&RssQueuePicker>, RssRuleError> {
        if !self.by_rule.contains_key(&id) {
            let Some(info) = classifier.rule_info(id) else {
                return Ok(None);
            };
            // The first fate action decides (compile::fate_of).
            let Some(Action::Rss(rss)) = info.actions.iter().find(|a| a.is_fate()) else {
                return Ok(None);
            };
            let picker = RssQueuePicker::new(rss, self.port_queues).map_err(|source| RssRuleError {
                rule: Some(id),
                group: info.group,
                priority: info.priority,
                source,
            })?;
            self.by_rule.insert(id, picker);
        }
        Ok(self.by_rule.get(&id))
    }

    /// The queue `outcome` delivers the packet with `key` to, `None` for drops and other ports.
    pub fn queue(
        &mut self,
        classifier: &Classifier,
        outcome: &Outcome,
        key: &PacketKey,
    ) -> Result<Option<u16>, RssRuleError> {
        Ok(match outcome.verdict {
            Verdict::Fate(Fate::Queue { index }) => Some(index),
            Verdict::Fate(Fate::Drop | Fate::PortId { .. }) => None,
            Verdict::Fate(Fate::Rss) => match outcome.rule {
                Some(id) => match self.picker(classifier, id)? {
                    Some(p) => Some(p.queue(key)),
                    None => Some(self.port.queue(key)),
                },
                None => Some(self.port.queue(key)),
            },
            Verdict::Unmatched | Verdict::Fate(Fate::NoFate | Fate::Passthru) => Some(self.port.queue(key)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn udp(src: [u8; 4], dst: [u8; 4], sp: u16, dp: u16) -> PacketKey {
        PacketKey::ipv4_5tuple(Ipv4Addr::from(src), Ipv4Addr::from(dst), sp, dp, 17, 64)
    }

    fn action(types: &[RssType], queues: &[u16]) -> RssAction {
        RssAction {
            types: Some(types.to_vec()),
            queues: Some(queues.to_vec()),
            ..Default::default()
        }
    }

    #[test]
    fn test_fields_follow_types() {
        let k = udp([66, 9, 149, 187], [161, 142, 100, 80], 2794, 1766);
        let t = Toeplitz::new(&MLX5_DEFAULT_KEY).unwrap();
        let all = [66, 9, 149, 187, 161, 142, 100, 80, 0x0a, 0xea, 0x06, 0xe6];
        let p = RssQueuePicker::new(&action(&[RssType::Ipv4Udp], &[0, 1]), 1).unwrap();
        assert_eq!(p.hash(&k), t.hash(&all));
        let p = RssQueuePicker::new(&action(&[RssType::Ipv4], &[0, 1]), 1).unwrap();
        assert_eq!(p.hash(&k), t.hash(&all[..8]), "ipv4 alone: addresses only");
        let p = RssQueuePicker::new(&action(&[RssType::Ipv4Udp, RssType::L3SrcOnly], &[0, 1]), 1).unwrap();
        assert_eq!(p.hash(&k), t.hash(&[66, 9, 149, 187, 0x0a, 0xea, 0x06, 0xe6]));
        let p = RssQueuePicker::new(
            &action(&[RssType::Ipv4Udp, RssType::L3SrcOnly, RssType::L3DstOnly], &[0, 1]),
            1,
        )
        .unwrap();
        assert_eq!(p.hash(&k), t.hash(&all), "both only-flags: both sides");
        // TCP with a UDP type: addresses only; IPv6 types on IPv4: nothing, queue 0's entry.
        let tcp = PacketKey::ipv4_5tuple(Ipv4Addr::new(1, 2, 3, 4), Ipv4Addr::new(5, 6, 7, 8), 1, 2, 6, 64);
        let p = RssQueuePicker::new(&action(&[RssType::Ipv4Udp], &[0, 1]), 1).unwrap();
        assert_eq!(p.hash(&tcp), t.hash(&[1, 2, 3, 4, 5, 6, 7, 8]));
        let p = RssQueuePicker::new(&action(&[RssType::Ipv6Udp], &[5, 6]), 1).unwrap();
        assert_eq!((p.hash(&k), p.queue(&k)), (0, 5));
    }

    #[test]
    fn test_level_picks_outer_or_inner_headers() {
        use nicbench_wire::builder::{FrameSpec, L4Spec, VxlanSpec};
        let spec = FrameSpec {
            ip_src: Ipv4Addr::new(10, 1, 2, 3).into(),
            ip_dst: Ipv4Addr::new(10, 4, 5, 6).into(),
            l4: L4Spec::Udp {
                src_port: 1111,
                dst_port: 2222,
            },
            vxlan: Some(VxlanSpec::new(42)),
            frame_size_bytes: 128,
            ..FrameSpec::default()
        };
        let key = PacketKey::from_ethernet(&spec.build().unwrap());
        let t = Toeplitz::new(&MLX5_DEFAULT_KEY).unwrap();
        // Outer: VTEPs 192.168.0.1 → 192.168.0.2, UDP 49152 → 4789.
        let outer = [192, 168, 0, 1, 192, 168, 0, 2, 0xc0, 0x00, 0x12, 0xb5];
        let inner = [10, 1, 2, 3, 10, 4, 5, 6, 0x04, 0x57, 0x08, 0xae];
        for (level, want) in [(None, outer), (Some(1), outer), (Some(2), inner)] {
            let a = RssAction {
                level,
                ..action(&[RssType::Ipv4Udp], &[0, 1])
            };
            assert_eq!(
                RssQueuePicker::new(&a, 1).unwrap().hash(&key),
                t.hash(&want),
                "level {level:?}"
            );
        }
    }

    #[test]
    fn test_symmetric_gives_both_directions_one_hash() {
        let a = RssAction {
            func: Some(RssFunc::SymmetricToeplitz),
            ..action(&[RssType::Ipv4Udp], &[0, 1, 2])
        };
        let p = RssQueuePicker::new(&a, 1).unwrap();
        let plain = RssQueuePicker::new(&action(&[RssType::Ipv4Udp], &[0, 1, 2]), 1).unwrap();
        let (fwd, rev) = (
            udp([10, 0, 0, 1], [10, 9, 8, 7], 1000, 53),
            udp([10, 9, 8, 7], [10, 0, 0, 1], 53, 1000),
        );
        assert_eq!(p.hash(&fwd), p.hash(&rev));
        assert_ne!(plain.hash(&fwd), plain.hash(&rev));
    }

    #[test]
    fn test_key_len_func_and_queue_errors() {
        let short = RssAction {
            key: Some(vec![0x6d; 8]),
            ..Default::default()
        };
        assert_eq!(
            RssQueuePicker::new(&short, 4).unwrap_err(),
            RssSetupError::Refused(RssRefusal::KeyLength { len_bytes: 8 })
        );
        let padded = RssAction {
            key: Some(vec![0x6d; 8]),
            key_len: Some(40),
            ..Default::default()
        };
        assert!(
            RssQueuePicker::new(&padded, 4).is_ok(),
            "key_len pads with zeros as testpmd's buffer does"
        );
        let too_long = RssAction {
            key_len: Some(64),
            ..Default::default()
        };
        assert_eq!(
            RssQueuePicker::new(&too_long, 4).unwrap_err(),
            RssSetupError::Refused(RssRefusal::KeyLength { len_bytes: 64 })
        );
        let key_len_only = RssAction {
            key_len: Some(40),
            ..Default::default()
        };
        let default = RssQueuePicker::port_default(4).unwrap();
        let k = udp([1, 1, 1, 1], [2, 2, 2, 2], 3, 4);
        assert_eq!(
            RssQueuePicker::new(&key_len_only, 4).unwrap().hash(&k),
            default.hash(&k)
        );
        let xor = RssAction {
            func: Some(RssFunc::SimpleXor),
            ..Default::default()
        };
        assert_eq!(
            RssQueuePicker::new(&xor, 4).unwrap_err(),
            RssSetupError::Refused(RssRefusal::SimpleXor)
        );
        assert!(RssQueuePicker::new(&action(&[], &[]), 4).is_err());
        assert_eq!(
            RssQueuePicker::port_default(0).unwrap_err(),
            RssSetupError::NoPortQueues
        );
    }
}
