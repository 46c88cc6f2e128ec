//! The biflow record a flow meter emits, modelled on Argus' (`ra`) fields.
//!
//! Invariants: `key` is oriented with the initiator as source (TCP: the SYN
//! sender; otherwise the first sender); `src_*` counters belong to packets
//! sent by `key.src`. A record holds at least one packet, and
//! `first_ns <= last_ns`.

use std::fmt;

use nicbench_wire::FlowKey;

/// TCP handshake/teardown events seen over a flow's life (bit set).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct FlowState(pub u8);

impl FlowState {
    /// A SYN without ACK.
    pub const SYN: u8 = 0x01;
    /// A SYN with ACK.
    pub const SYN_ACK: u8 = 0x02;
    pub const FIN: u8 = 0x04;
    pub const RST: u8 = 0x08;
    /// The initiator sent a packet after the SYN-ACK (handshake completed).
    pub const ESTABLISHED: u8 = 0x10;

    pub fn contains(self, bits: u8) -> bool {
        self.0 & bits == bits
    }
}

/// Why a record was emitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// No packet for the protocol's idle timeout: the flow ended.
    Idle,
    /// The status interval elapsed; the flow continues in the next record.
    Active,
    /// The table was full and this was the least-recently-seen flow.
    Evicted,
    /// End of input, stop flag, or duration: every active flow is flushed.
    Flushed,
    /// A new TCP SYN on a flow that had seen FIN or RST (port reuse).
    Restarted,
}

impl EndReason {
    pub fn as_str(self) -> &'static str {
        match self {
            EndReason::Idle => "idle",
            EndReason::Active => "active",
            EndReason::Evicted => "evicted",
            EndReason::Flushed => "flushed",
            EndReason::Restarted => "restarted",
        }
    }
}

/// One biflow record (a whole flow, or one status interval of a long flow).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct FlowRecord {
    /// Oriented: `src` is the initiator. VLAN/VNI only when keyed by them.
    pub key: FlowKey,
    /// DNS transaction id, when UDP/53 flows are keyed by it.
    pub dns_txid: Option<u16>,
    /// ICMP echo identifier, when echo flows are keyed by it.
    pub icmp_id: Option<u16>,
    /// First packet of this record [ns since the epoch].
    pub first_ns: u64,
    /// Last packet of this record \[ns\].
    pub last_ns: u64,
    pub src_pkts: u64,
    pub dst_pkts: u64,
    /// Bytes sent by the source, L2 header included (see `ByteCount`).
    pub src_bytes: u64,
    pub dst_bytes: u64,
    /// OR of the TCP flag bytes the source sent (0 for non-TCP).
    pub src_tcp_flags: u8,
    pub dst_tcp_flags: u8,
    /// Handshake events seen over the flow's life, not reset by status splits.
    pub state: FlowState,
    /// Smallest packet of this record \[bytes\].
    pub min_pkt_bytes: u32,
    /// Largest packet of this record \[bytes\].
    pub max_pkt_bytes: u32,
    /// Type and code of the flow's first ICMP/ICMPv6 packet.
    pub icmp_type: Option<u8>,
    pub icmp_code: Option<u8>,
    pub end: EndReason,
    /// 0 for a flow's first record, then 1, 2, … after status splits.
    pub seq: u32,
    /// Index of the worker that metered the flow.
    pub worker: u16,
}

const PROTO_TCP: u8 = 6;
const PROTO_UDP: u8 = 17;
const PROTO_ICMP: u8 = 1;
const PROTO_ICMPV6: u8 = 58;

impl FlowRecord {
    pub fn tot_pkts(&self) -> u64 {
        self.src_pkts + self.dst_pkts
    }

    pub fn tot_bytes(&self) -> u64 {
        self.src_bytes + self.dst_bytes
    }

    pub fn dur_ns(&self) -> u64 {
        self.last_ns.saturating_sub(self.first_ns)
    }

    /// Mean packet size over both directions \[bytes\].
    pub fn mean_pkt_bytes(&self) -> f64 {
        match self.tot_pkts() {
            0 => 0.0,
            n => self.tot_bytes() as f64 / n as f64,
        }
    }

    /// `->` only the source sent, `<-` only the destination, `<->` both.
    pub fn dir_str(&self) -> &'static str {
        match (self.src_pkts > 0, self.dst_pkts > 0) {
            (true, true) => "<->",
            (false, true) => "<-",
            _ => "->",
        }
    }

    /// Argus-like state: see the crate's contract for the rules.
    pub fn state_str(&self) -> &'static str {
        let both = self.src_pkts > 0 && self.dst_pkts > 0;
        match self.key.proto {
            PROTO_TCP => {
                let s = self.state;
                if s.contains(FlowState::RST) {
                    "RST"
                } else if s.contains(FlowState::FIN) {
                    "FIN"
                } else if s.contains(FlowState::ESTABLISHED) || (!s.contains(FlowState::SYN) && both) {
                    "CON"
                } else if s.contains(FlowState::SYN_ACK) {
                    "ACC"
                } else if s.contains(FlowState::SYN) {
                    "REQ"
                } else {
                    "INT"
                }
            }
            PROTO_ICMP | PROTO_ICMPV6 => match self.icmp_type {
                Some(8) | Some(128) => "ECO",
                Some(0) | Some(129) => "ECR",
                _ if both => "CON",
                _ => "INT",
            },
            _ if both => "CON",
            _ => "INT",
        }
    }
}

/// Protocol name as `ra` prints it (`tcp`, `udp`, `icmp`, `ipv6-icmp`…), else the number.
pub fn proto_name(proto: u8) -> ProtoName {
    ProtoName(proto)
}

/// Display adapter for [`proto_name`].
pub struct ProtoName(u8);

impl fmt::Display for ProtoName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            PROTO_TCP => f.write_str("tcp"),
            PROTO_UDP => f.write_str("udp"),
            PROTO_ICMP => f.write_str("icmp"),
            PROTO_ICMPV6 => f.write_str("ipv6-icmp"),
            132 => f.write_str("sctp"),
            47 => f.write_str("gre"),
            50 => f.write_str("esp"),
            other => write!(f, "{other}"),
        }
    }
}

/// TCP flags as letters in the order `FSRPAUEC` (tcpdump's letters), e.g. `SA`.
pub fn tcp_flags_str(flags: u8) -> String {
    const LETTERS: [(u8, char); 8] = [
        (0x01, 'F'),
        (0x02, 'S'),
        (0x04, 'R'),
        (0x08, 'P'),
        (0x10, 'A'),
        (0x20, 'U'),
        (0x40, 'E'),
        (0x80, 'C'),
    ];
    LETTERS
        .iter()
        .filter(|(bit, _)| flags & bit != 0)
        .map(|&(_, c)| c)
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::net::{IpAddr, Ipv4Addr};

    pub(crate) fn sample_record() -> FlowRecord {
        FlowRecord {
            key: FlowKey {
                src: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
                dst: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)),
                proto: 6,
                src_port: 40000,
                dst_port: 80,
                vlan: None,
                vni: None,
            },
            dns_txid: None,
            icmp_id: None,
            first_ns: 1_700_000_000_000_000_000,
            last_ns: 1_700_000_001_500_000_000,
            src_pkts: 3,
            dst_pkts: 2,
            src_bytes: 200,
            dst_bytes: 300,
            src_tcp_flags: 0x13,
            dst_tcp_flags: 0x12,
            state: FlowState(FlowState::SYN | FlowState::SYN_ACK | FlowState::ESTABLISHED | FlowState::FIN),
            min_pkt_bytes: 60,
            max_pkt_bytes: 200,
            icmp_type: None,
            icmp_code: None,
            end: EndReason::Idle,
            seq: 0,
            worker: 0,
        }
    }

    #[test]
    fn test_derived_fields() {
        let r = sample_record();
        assert_eq!((r.tot_pkts(), r.tot_bytes(), r.dur_ns()), (5, 500, 1_500_000_000));
        assert_eq!(r.mean_pkt_bytes(), 100.0);
        assert_eq!(r.dir_str(), "<->");
        assert_eq!(r.state_str(), "FIN");
        let syn_only = FlowRecord {
            dst_pkts: 0,
            dst_bytes: 0,
            state: FlowState(FlowState::SYN),
            ..r
        };
        assert_eq!((syn_only.dir_str(), syn_only.state_str()), ("->", "REQ"));
        let acc = FlowRecord {
            state: FlowState(FlowState::SYN | FlowState::SYN_ACK),
            ..r
        };
        assert_eq!(acc.state_str(), "ACC");
        let udp = FlowRecord {
            key: FlowKey { proto: 17, ..r.key },
            dst_pkts: 0,
            ..r
        };
        assert_eq!(udp.state_str(), "INT");
    }

    #[test]
    fn test_names() {
        assert_eq!(tcp_flags_str(0x12), "SA");
        assert_eq!(tcp_flags_str(0x11), "FA");
        assert_eq!(tcp_flags_str(0), "");
        assert_eq!(proto_name(58).to_string(), "ipv6-icmp");
        assert_eq!(proto_name(89).to_string(), "89");
    }
}
