//! nicbench-wire: everything nicbench knows about bytes on the wire.
//!
//! - [`parse`]: a lenient, never-panicking frame parser (Ethernet, 802.1Q/QinQ,
//!   MPLS, IPv4 with options, IPv6 with extension headers, TCP, UDP, ICMP/ICMPv6,
//!   SCTP, GRE, VXLAN with its inner frame). It parses as far as it can and says
//!   why it stopped. [`parse::decapsulate_vxlan`] is the one VXLAN decapsulation
//!   (the inner frame and the outer headers a tunnel endpoint reads).
//! - [`flowkey`]: the 5-tuple (+ VLAN, VNI) [`FlowKey`] and its canonical,
//!   direction-independent form for biflows.
//! - [`builder`]: builds frames from a [`builder::FrameSpec`]; used by the
//!   traffic generator.
//! - [`rss`]: Toeplitz hash with any key, the Microsoft and symmetric keys,
//!   and an indirection table (RETA).

pub mod builder;
pub mod flowkey;
pub mod parse;
pub mod rss;

pub use builder::{BuildError, FrameSpec, FrameTemplate, L4Spec, TemplateSet, VlanTags, VxlanSpec};
pub use flowkey::{Direction, FlowKey};
pub use parse::{flow_key, parse_ethernet, parse_ethernet_into, parse_ip, ParseStop, ParsedFrame};
pub use rss::{hash_flow, Reta, RssFields, RssInput, Toeplitz, MICROSOFT_KEY, SYMMETRIC_KEY};
