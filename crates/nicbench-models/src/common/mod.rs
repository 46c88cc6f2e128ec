//! Parameter groups and formulas several device models share, each defined once: a model that
//! has the block composes the group into its parameter set (see [`crate::profile::params`]).
//!
//! - [`pcie`]: the PCIe link to the host and what a packet's DMA costs on it ([`PcieParams`]),
//!   read by the ConnectX, ConnectX eSwitch and Agilio models; its link and TLP arithmetic is
//!   also the off-path model's.

pub mod pcie;

pub use pcie::PcieParams;
