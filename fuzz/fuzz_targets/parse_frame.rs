//! Fuzz target: arbitrary bytes through every parser entry point.
//!
//! Checks, besides "never panics": the fast flow-key path agrees with the
//! general parser, the into-variant agrees with the by-value one, offsets stay
//! inside the frame, canonical keys are direction-independent, and where the
//! flow-headers fast path answers, the general parser decoded the whole frame
//! (but for its documented ICMP timestamp exception) to the same key and
//! transport offset.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nicbench_wire::parse::{flow_headers, flow_key, parse_ethernet, parse_ethernet_into, parse_ip, ParsedFrame};
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

    if let Some(h) = flow_headers(data) {
        // Its one documented difference: ICMP timestamps not 20 bytes long.
        let odd_timestamp = !h.v6 && matches!(h.icmp, Some((13 | 14, 0))) && h.l4.len() != 20;
        if !odd_timestamp {
            assert_eq!(parsed.stop, None);
        }
        assert_eq!(parsed.tunnel, None);
        let key = key.expect("a frame the fast path reads has a key");
        assert_eq!((h.proto, h.src_port, h.dst_port, h.vlan), (key.proto, key.src_port, key.dst_port, key.vlan));
        assert_eq!(h.v6, key.is_ipv6());
        let l4_at = h.l4.as_ptr() as usize - data.as_ptr() as usize;
        assert_eq!(l4_at, parsed.outer.l4_offset);
        assert!(l4_at + h.l4.len() <= data.len());
    }

    let raw = parse_ip(data);
    let _ = FlowKey::from_frame(&raw);
});
