//! Fuzz the streaming pcap/pcapng reader: any byte string must yield packets,
//! then at most one error, then `None` — never a panic, never a packet longer
//! than the caplen bound.
#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use nicbench_pcap::{L3Start, PcapSource, MAX_CAPLEN_BYTES};

fuzz_target!(|bytes: &[u8]| {
    let Ok(mut source) = PcapSource::from_reader(Cursor::new(bytes)) else {
        return;
    };
    let mut errors = 0;
    while let Some(result) = source.next_packet() {
        match result {
            Ok(packet) => {
                assert!(errors == 0, "packet after an error");
                assert!(packet.data.len() <= MAX_CAPLEN_BYTES as usize);
                // The link-layer dispatch never points past the record.
                if let L3Start::Ip(offset) = packet.linktype.l3_start(packet.data) {
                    assert!(offset <= packet.data.len());
                }
            }
            Err(err) => {
                errors += 1;
                let _ = err.to_string();
            }
        }
    }
    assert!(errors <= 1);
    assert!(source.next_packet().is_none());
    assert!(source.bytes_read() <= bytes.len() as u64);
});
