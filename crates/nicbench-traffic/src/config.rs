//! Generator configuration: what the flows look like, how big the frames are,
//! which flows are popular, how fast packets go, and when to stop.
//!
//! The struct deserializes with serde (`#[serde(default)]`: every field is
//! optional), e.g. in JSON:
//! `{"flows": 1000, "size": {"uniform": {"min": 64, "max": 1518}},
//!   "popularity": {"zipf": {"s": 1.1}}, "rate": {"gbps": 100.0}, "packets": 1000000}`
//! or `"size": "imix"`, `"rate": "unlimited"`.
//!
//! Sizes are Ethernet frame sizes including the 4 B FCS (RFC 2544 convention,
//! see `nicbench_wire::builder`). [`TrafficConfig::validate`] checks what does
//! not depend on the flows; frame-size-vs-header checks happen when the
//! generator builds its templates.

use serde::{Deserialize, Serialize};

use crate::error::TrafficError;

/// Upper bound on `flows`: keeps the flow table (~150 B per flow incl. its
/// header template) within a few GB.
pub const MAX_FLOWS: u32 = 1 << 24;

/// Simple IMIX: frame sizes and their weights (7:4:1 of 64/594/1518 B).
pub const IMIX: [(u32, u32); 3] = [(64, 7), (594, 4), (1518, 1)];

/// Transport protocol of the generated flows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Proto {
    #[default]
    Udp,
    /// TCP segments with ACK set (mid-connection data).
    Tcp,
}

/// Frame-size distribution (sizes include FCS) \[B\].
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SizeSpec {
    Fixed(u32),
    /// Each packet picks one entry uniformly at random.
    List(Vec<u32>),
    /// Uniform over `min..=max`.
    Uniform {
        min: u32,
        max: u32,
    },
    /// 64/594/1518 B with weights 7:4:1, picked at random per packet.
    Imix,
}

impl Default for SizeSpec {
    fn default() -> Self {
        SizeSpec::Fixed(64)
    }
}

impl SizeSpec {
    /// The sizes a stream can contain at the extremes (for validation and buffers).
    pub fn min_max(&self) -> Result<(u32, u32), TrafficError> {
        match self {
            SizeSpec::Fixed(s) => Ok((*s, *s)),
            SizeSpec::List(sizes) => {
                let min = sizes.iter().copied().min().ok_or(TrafficError::EmptySizeList)?;
                let max = sizes.iter().copied().max().ok_or(TrafficError::EmptySizeList)?;
                Ok((min, max))
            }
            SizeSpec::Uniform { min, max } if min > max => Err(TrafficError::InvalidSizeRange { min: *min, max: *max }),
            SizeSpec::Uniform { min, max } => Ok((*min, *max)),
            SizeSpec::Imix => Ok((IMIX[0].0, IMIX[2].0)),
        }
    }

    /// Mean frame size \[B\] of the distribution.
    pub fn mean_bytes(&self) -> f64 {
        match self {
            SizeSpec::Fixed(s) => f64::from(*s),
            SizeSpec::List(sizes) if sizes.is_empty() => 0.0,
            SizeSpec::List(sizes) => sizes.iter().map(|&s| f64::from(s)).sum::<f64>() / sizes.len() as f64,
            SizeSpec::Uniform { min, max } => (f64::from(*min) + f64::from(*max)) / 2.0,
            SizeSpec::Imix => {
                let total: u32 = IMIX.iter().map(|(_, w)| w).sum();
                IMIX.iter().map(|&(s, w)| f64::from(s * w)).sum::<f64>() / f64::from(total)
            }
        }
    }
}

/// Which flow each packet belongs to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Popularity {
    /// Every flow equally likely.
    #[default]
    Uniform,
    /// Flow `i` (0-based) has probability ∝ 1/(i+1)^s: flow 0 is the most popular.
    Zipf { s: f64 },
    /// The flows take turns: packet `k` belongs to flow `k mod flows` (a generator that
    /// increments the addresses per packet, as TRex's field engine with `op="inc"` and the
    /// PAM'21 authors' `gen_flows.py` loops do): every flow equally often, a cyclic scan.
    RoundRobin,
}

/// Offered rate.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Rate {
    /// Line rate in Gbit/s counting wire bytes: frame (incl. FCS) + 20 B preamble/IFG.
    Gbps(f64),
    /// Packets per second, in millions.
    Mpps(f64),
    /// No pacing: every timestamp is `start_ns`.
    Unlimited,
}

impl Default for Rate {
    fn default() -> Self {
        Rate::Gbps(100.0)
    }
}

/// Everything the generator needs; see the module doc for the serde form.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct TrafficConfig {
    /// Number of distinct flows (distinct 5-tuples).
    pub flows: u32,
    pub ipv6: bool,
    pub proto: Proto,
    /// 802.1Q tag on every frame (outermost header).
    pub vlan: Option<u16>,
    /// VXLAN-encapsulate every frame with this VNI.
    pub vxlan_vni: Option<u32>,
    pub size: SizeSpec,
    pub popularity: Popularity,
    pub rate: Rate,
    /// Stop before the first packet starting at or after `start_ns + duration_ns`.
    pub duration_ns: Option<u64>,
    /// Stop after this many packets.
    pub packets: Option<u64>,
    pub seed: u64,
    /// Timestamp of the first packet \[ns\].
    pub start_ns: u64,
}

impl Default for TrafficConfig {
    /// 1024 IPv4/UDP flows, 64 B frames, uniform popularity, 100 Gb/s, seed 1,
    /// no stop condition (an endless stream; `write_pcap` needs one).
    fn default() -> Self {
        TrafficConfig {
            flows: 1024,
            ipv6: false,
            proto: Proto::Udp,
            vlan: None,
            vxlan_vni: None,
            size: SizeSpec::default(),
            popularity: Popularity::default(),
            rate: Rate::default(),
            duration_ns: None,
            packets: None,
            seed: 1,
            start_ns: 0,
        }
    }
}

fn check_positive(value: f64, unit: &'static str) -> Result<(), TrafficError> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(TrafficError::InvalidRate { value, unit })
    }
}

impl TrafficConfig {
    /// Packets a run will produce, when bounded (for progress bars): the packet limit and/or
    /// what the rate fits in the duration at the mean frame size (wire bytes = frame + 20 B).
    pub fn expected_packets(&self) -> Option<u64> {
        let by_time = match (self.duration_ns, self.rate) {
            (Some(d), Rate::Mpps(m)) => Some((m * 1e6 * d as f64 / 1e9) as u64),
            (Some(d), Rate::Gbps(g)) => {
                let bits = (self.size.mean_bytes() + f64::from(nicbench_wire::builder::WIRE_OVERHEAD_BYTES)) * 8.0;
                Some((g * 1e9 * d as f64 / 1e9 / bits) as u64)
            }
            _ => None,
        };
        match (self.packets, by_time) {
            (Some(p), Some(t)) => Some(p.min(t)),
            (p, t) => p.or(t),
        }
    }

    /// Checks everything that does not need the flows' headers.
    pub fn validate(&self) -> Result<(), TrafficError> {
        if self.flows == 0 {
            return Err(TrafficError::NoFlows);
        }
        if self.flows > MAX_FLOWS {
            return Err(TrafficError::TooManyFlows { flows: self.flows });
        }
        match self.rate {
            Rate::Gbps(g) => check_positive(g, "Gbps")?,
            Rate::Mpps(m) => check_positive(m, "Mpps")?,
            Rate::Unlimited if self.duration_ns.is_some() && self.packets.is_none() => {
                return Err(TrafficError::DurationWithoutRate)
            }
            Rate::Unlimited => {}
        }
        if let Popularity::Zipf { s } = self.popularity {
            if !(s.is_finite() && s > 0.0) {
                return Err(TrafficError::InvalidZipf { s });
            }
        }
        self.size.min_max()?;
        Ok(())
    }

    /// Whether the stream ends on its own.
    pub fn is_finite(&self) -> bool {
        self.packets.is_some() || (self.duration_ns.is_some() && self.rate != Rate::Unlimited)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_defaults_validate() {
        let c = TrafficConfig::default();
        assert!(c.validate().is_ok());
        assert!(!c.is_finite());
    }

    #[test]
    fn test_bad_values_have_clear_messages() {
        let base = TrafficConfig::default();
        let msg = |c: TrafficConfig| c.validate().map(|_| String::new()).unwrap_or_else(|e| e.to_string());
        assert_eq!(
            msg(TrafficConfig {
                flows: 0,
                ..base.clone()
            }),
            "flows must be at least 1"
        );
        assert_eq!(
            msg(TrafficConfig {
                rate: Rate::Gbps(0.0),
                ..base.clone()
            }),
            "rate must be a finite number > 0, got 0 Gbps"
        );
        assert_eq!(
            msg(TrafficConfig {
                rate: Rate::Mpps(f64::NAN),
                ..base.clone()
            }),
            "rate must be a finite number > 0, got NaN Mpps"
        );
        assert_eq!(
            msg(TrafficConfig {
                popularity: Popularity::Zipf { s: -1.0 },
                ..base.clone()
            }),
            "Zipf exponent s must be a finite number > 0, got -1"
        );
        assert_eq!(
            msg(TrafficConfig {
                size: SizeSpec::List(vec![]),
                ..base.clone()
            }),
            "size list is empty"
        );
        assert_eq!(
            msg(TrafficConfig {
                size: SizeSpec::Uniform { min: 100, max: 99 },
                ..base.clone()
            }),
            "uniform size range has min 100 B > max 99 B"
        );
        assert!(matches!(
            TrafficConfig {
                rate: Rate::Unlimited,
                duration_ns: Some(1),
                ..base.clone()
            }
            .validate(),
            Err(TrafficError::DurationWithoutRate)
        ));
        assert!(matches!(
            TrafficConfig {
                flows: MAX_FLOWS + 1,
                ..base
            }
            .validate(),
            Err(TrafficError::TooManyFlows { .. })
        ));
    }

    #[test]
    fn test_expected_packets() {
        let base = TrafficConfig {
            duration_ns: Some(1_000_000),
            ..TrafficConfig::default()
        };
        // 64 B at 100 Gb/s: 148.8 Mpps, 148,809 packets in 1 ms.
        assert_eq!(base.expected_packets(), Some(148_809));
        let capped = TrafficConfig {
            packets: Some(1000),
            ..base.clone()
        };
        assert_eq!(capped.expected_packets(), Some(1000));
        let pps = TrafficConfig {
            rate: Rate::Mpps(2.0),
            ..base.clone()
        };
        assert_eq!(pps.expected_packets(), Some(2000));
        let endless = TrafficConfig {
            duration_ns: None,
            rate: Rate::Unlimited,
            ..base
        };
        assert_eq!(endless.expected_packets(), None);
    }

    #[test]
    fn test_imix_mean() {
        // (7*64 + 4*594 + 1518) / 12 = 4342 / 12
        assert!((SizeSpec::Imix.mean_bytes() - 4342.0 / 12.0).abs() < 1e-9);
        assert_eq!(SizeSpec::Imix.min_max().ok(), Some((64, 1518)));
    }

    #[test]
    fn test_deserialize_json() {
        let json = r#"{"flows": 10, "ipv6": true, "proto": "tcp", "vlan": 7,
            "size": {"uniform": {"min": 64, "max": 1518}},
            "popularity": {"zipf": {"s": 1.1}}, "rate": {"mpps": 10.0},
            "packets": 5, "seed": 9}"#;
        let c: TrafficConfig = serde_json::from_str(json).expect("valid json");
        assert_eq!(c.flows, 10);
        assert_eq!(c.proto, Proto::Tcp);
        assert_eq!(c.vlan, Some(7));
        assert_eq!(c.size, SizeSpec::Uniform { min: 64, max: 1518 });
        assert_eq!(c.popularity, Popularity::Zipf { s: 1.1 });
        assert_eq!(c.rate, Rate::Mpps(10.0));
        assert_eq!((c.packets, c.seed, c.start_ns), (Some(5), 9, 0));
        let imix: TrafficConfig = serde_json::from_str(r#"{"size": "imix", "rate": "unlimited"}"#).expect("json");
        assert_eq!((imix.size, imix.rate), (SizeSpec::Imix, Rate::Unlimited));
        assert!(
            serde_json::from_str::<TrafficConfig>(r#"{"flowz": 1}"#).is_err(),
            "unknown fields rejected"
        );
    }
}
