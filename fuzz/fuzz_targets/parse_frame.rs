//! Fuzz target: arbitrary bytes through every parser entry point.
//!
//! Checks, besides "never panics": the fast flow-key path agrees with the
//! general parser, the into-variant agrees with the by-value one, offsets stay
//! inside the frame, and canonical keys are direction-independent.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nicbench_wire::parse::{flow_key, parse_ethernet, parse_ethernet_into, parse_ip, ParsedFrame};
use nicbench_wire::FlowKey;

fuzz_target!(|data: &[u8]| {
    let parsed = parse_ethernet(data);
    let mut reused = ParsedFrame::default();
    parse_ethernet_into(data, &mut reused);
    assert_eq!(parsed, reused);

    for layers in [Some(parsed.outer), parsed.inner].into_iter().flatten() {
        assert!(layers.payload_offset <= data.len());
    }
    if let Some(stop) = parsed.stop {
        assert!(stop.offset <= data.len());
    }

    let key = FlowKey::from_frame(&parsed);
    assert_eq!(flow_key(data).ok(), key);
    if let Some(key) = key {
        assert_eq!(key.canonical().0, key.reversed().canonical().0);
    }

    let raw = parse_ip(data);
    let _ = FlowKey::from_frame(&raw);
});
