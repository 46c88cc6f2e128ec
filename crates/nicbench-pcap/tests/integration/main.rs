//! Integration tests of nicbench-pcap: one binary, files named by behaviour.

mod fixtures;
mod garbage;
mod mapped;
mod pcapng;
mod roundtrip;
mod truncation;
mod vs_libpcap;
