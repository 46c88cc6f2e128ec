//! Shared by the benches: the crate's own workloads (see `nicbench_classify::workload`).
#![allow(unused_imports)]

pub use nicbench_classify::workload::*;
