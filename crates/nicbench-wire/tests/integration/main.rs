//! Integration tests of nicbench-wire against independent implementations, one file per behaviour.

mod rss_vs_dpdk;
