//! nicbench-traffic: a seeded, deterministic traffic generator.
//!
//! A [`TrafficConfig`] describes N distinct flows (IPv4/IPv6, UDP/TCP,
//! optional VLAN tag and VXLAN encapsulation), a frame-size mix (fixed, list,
//! uniform range, IMIX), flow popularity (uniform or Zipf), an offered rate
//! (Gb/s counting preamble+IFG, Mpps, or unpaced) and a stop condition.
//! [`TrafficGen`] turns it into a packet stream consumed in process
//! (one packet, a caller buffer, or a batch of 32/256), and [`write_pcap`]
//! writes it to a nanosecond pcap; [`write_pcap_for_frames`] does the same over flows given
//! as frames (traffic for a rule file). Both write a file only when the whole stream is
//! written ([`atomic`]).
//!
//! Conventions (shared with `nicbench_wire::builder`): frame sizes include the
//! 4 B FCS, emitted/captured bytes do not; each frame costs 20 B more on the
//! wire. Invariant: the whole stream — flows, bytes, timestamps — is a pure
//! function of the config (seeded ChaCha8), so runs reproduce bit for bit.
//!
//! ```
//! use nicbench_traffic::{TrafficConfig, TrafficGen, SizeSpec, Rate};
//! let config = TrafficConfig { flows: 4, size: SizeSpec::Fixed(128), rate: Rate::Gbps(10.0),
//!                              packets: Some(3), ..TrafficConfig::default() };
//! let mut generator = TrafficGen::new(&config).unwrap();
//! let mut ts = Vec::new();
//! while let Some(p) = generator.next_packet() {
//!     assert_eq!(p.data.len(), 124);
//!     ts.push(p.meta.ts_ns);
//! }
//! assert_eq!(ts, [0, 118, 237]); // (128 + 20) * 8 / 10 = 118.4 ns apart
//! ```

pub mod atomic;
pub mod config;
pub mod error;
pub mod flows;
pub mod frames;
pub mod generator;
pub mod output;
pub mod pacing;

pub use config::{Popularity, Proto, Rate, SizeSpec, TrafficConfig};
pub use error::TrafficError;
pub use frames::write_pcap_for_frames;
pub use generator::{Packet, PacketBatch, PacketMeta, Summary, TrafficGen};
pub use output::write_pcap;
