//! Flow meter configuration: compatibility mode, timeouts, table bound,
//! workers. Every time is packet time in nanoseconds.

use std::fmt;
use std::str::FromStr;

use crate::error::FlowError;

const SECOND_NS: u64 = 1_000_000_000;

/// Whose semantics the meter follows by default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Compat {
    /// nicbench's own defaults: bytes as captured.
    #[default]
    Nicbench,
    /// Argus 3.0 (`argus -X -S 60`): wire bytes, UDP/53 keyed by DNS
    /// transaction id, ICMP echo keyed by identifier and sequence, idle
    /// timeouts TCP 60 s / UDP 30 s / ICMP 5 s checked only at status
    /// boundaries, status intervals aligned to the flow's first packet,
    /// mid-stream TCP oriented by port (checked against argus 3.0.8).
    Argus,
}

impl FromStr for Compat {
    type Err = FlowError;
    fn from_str(text: &str) -> Result<Compat, FlowError> {
        match text.to_ascii_lowercase().as_str() {
            "nicbench" => Ok(Compat::Nicbench),
            "argus" => Ok(Compat::Argus),
            other => Err(FlowError::Config(format!(
                "unknown compat mode {other:?} (nicbench, argus)"
            ))),
        }
    }
}

impl fmt::Display for Compat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Compat::Nicbench => "nicbench",
            Compat::Argus => "argus",
        })
    }
}

/// What "bytes" means in records and stats. Both include the L2 header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ByteCount {
    /// The bytes as captured (pcap caplen).
    #[default]
    Captured,
    /// The frame length on the wire (pcap orig_len), as Argus counts.
    Wire,
}

/// Idle timeouts per protocol and the active (status) interval, in packet time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Timeouts {
    pub tcp_idle_ns: u64,
    pub udp_idle_ns: u64,
    /// ICMP and ICMPv6.
    pub icmp_idle_ns: u64,
    pub other_idle_ns: u64,
    /// A flow whose current record is this old emits it and continues in a
    /// new record (Argus `-S`); `None`: records end only with the flow.
    pub active_ns: Option<u64>,
}

impl Default for Timeouts {
    /// Argus' defaults: TCP 60 s, UDP 30 s, ICMP 5 s, other 30 s, status 60 s.
    fn default() -> Self {
        Timeouts {
            tcp_idle_ns: 60 * SECOND_NS,
            udp_idle_ns: 30 * SECOND_NS,
            icmp_idle_ns: 5 * SECOND_NS,
            other_idle_ns: 30 * SECOND_NS,
            active_ns: Some(60 * SECOND_NS),
        }
    }
}

impl Timeouts {
    /// The same idle timeout for every protocol (`--idle 60s --active 30s`).
    pub fn uniform_idle(idle_ns: u64, active_ns: Option<u64>) -> Timeouts {
        Timeouts {
            tcp_idle_ns: idle_ns,
            udp_idle_ns: idle_ns,
            icmp_idle_ns: idle_ns,
            other_idle_ns: idle_ns,
            active_ns,
        }
    }
}

/// Everything a flow-meter run needs. Build from [`MeterConfig::nicbench`] or
/// [`MeterConfig::argus`] and override fields.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct MeterConfig {
    pub compat: Compat,
    pub timeouts: Timeouts,
    /// Maximum number of active flows over all workers; each worker holds at
    /// most `ceil(max_flows / workers)`. A new flow in a full table evicts the
    /// least-recently-seen flow (its record is emitted, `evicted` counts it).
    pub max_flows: usize,
    /// Worker threads behind symmetric RSS; 1 runs inline, without a dispatcher.
    pub workers: usize,
    pub byte_count: ByteCount,
    /// Key flows also by the outermost VLAN id.
    pub key_vlan: bool,
    /// Key VXLAN flows by VNI + inner 5-tuple (else the VNI is dropped from the key).
    pub key_vni: bool,
    /// Key UDP flows with port 53 on either side also by the DNS transaction id (Argus).
    pub dns_txid: bool,
    /// Key ICMP/ICMPv6 echo flows also by echo identifier and sequence number
    /// (Argus 3.0.8: one flow per request/reply pair).
    pub key_icmp_id: bool,
    /// Packets per dispatcher → worker batch.
    pub batch_packets: usize,
}

/// Default table bound (flows over all workers).
pub const DEFAULT_MAX_FLOWS: usize = 1 << 20;
/// Most workers a run may use.
pub const MAX_WORKERS: usize = 64;

impl Default for MeterConfig {
    fn default() -> Self {
        MeterConfig::nicbench()
    }
}

impl MeterConfig {
    pub fn nicbench() -> MeterConfig {
        MeterConfig {
            compat: Compat::Nicbench,
            timeouts: Timeouts::default(),
            max_flows: DEFAULT_MAX_FLOWS,
            workers: 1,
            byte_count: ByteCount::Captured,
            key_vlan: true,
            key_vni: true,
            dns_txid: false,
            key_icmp_id: false,
            batch_packets: 256,
        }
    }

    pub fn argus() -> MeterConfig {
        MeterConfig {
            compat: Compat::Argus,
            byte_count: ByteCount::Wire,
            dns_txid: true,
            key_icmp_id: true,
            ..MeterConfig::nicbench()
        }
    }

    pub fn for_compat(compat: Compat) -> MeterConfig {
        match compat {
            Compat::Nicbench => MeterConfig::nicbench(),
            Compat::Argus => MeterConfig::argus(),
        }
    }

    /// Flows each worker's table may hold.
    pub fn max_flows_per_worker(&self) -> usize {
        self.max_flows.div_ceil(self.workers.max(1))
    }

    pub fn validate(&self) -> Result<(), FlowError> {
        if !(1..=MAX_WORKERS).contains(&self.workers) {
            return Err(FlowError::Config(format!(
                "workers must be 1..={MAX_WORKERS}, got {}",
                self.workers
            )));
        }
        // Slot indices are u32 with one value reserved.
        if self.max_flows == 0 || self.max_flows >= (u32::MAX as usize) / 2 {
            return Err(FlowError::Config(format!(
                "max_flows must be 1..2^31, got {}",
                self.max_flows
            )));
        }
        if self.batch_packets == 0 || self.batch_packets > 65_536 {
            return Err(FlowError::Config(format!(
                "batch_packets must be 1..=65536, got {}",
                self.batch_packets
            )));
        }
        let t = &self.timeouts;
        if [t.tcp_idle_ns, t.udp_idle_ns, t.icmp_idle_ns, t.other_idle_ns].contains(&0) || t.active_ns == Some(0) {
            return Err(FlowError::Config("timeouts must be > 0".into()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_presets_differ_where_documented() {
        let n = MeterConfig::nicbench();
        let a = MeterConfig::argus();
        assert_eq!((n.byte_count, n.dns_txid), (ByteCount::Captured, false));
        assert_eq!((a.byte_count, a.dns_txid), (ByteCount::Wire, true));
        assert_eq!(a.timeouts.udp_idle_ns, 30 * SECOND_NS);
        assert_eq!(a.timeouts.icmp_idle_ns, 5 * SECOND_NS);
        assert_eq!(a.timeouts.active_ns, Some(60 * SECOND_NS));
        assert_eq!(MeterConfig::for_compat("ARGUS".parse().unwrap()), a);
        assert!("bogus".parse::<Compat>().is_err());
    }

    #[test]
    fn test_validate_rejects_impossible() {
        assert!(MeterConfig::nicbench().validate().is_ok());
        assert!(MeterConfig {
            workers: 0,
            ..MeterConfig::nicbench()
        }
        .validate()
        .is_err());
        assert!(MeterConfig {
            max_flows: 0,
            ..MeterConfig::nicbench()
        }
        .validate()
        .is_err());
        let mut c = MeterConfig::nicbench();
        c.timeouts.active_ns = Some(0);
        assert!(c.validate().is_err());
        assert_eq!(
            MeterConfig {
                workers: 3,
                max_flows: 10,
                ..c
            }
            .max_flows_per_worker(),
            4
        );
    }
}
