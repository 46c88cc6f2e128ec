//! Arbitrary text through the testpmd, tc and ClassBench parsers: no panic, and what
//! parses as testpmd writes back to text that parses to the same rule.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nicbench_rules::{classbench, tc, testpmd};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = classbench::parse_file_all(text, "fuzz");
    let mut devices = tc::DeviceTable::new();
    let _ = tc::parse_file_all(text, "fuzz", &mut devices);
    for line in text.lines() {
        if let Ok(rule) = testpmd::parse_rule(line) {
            let written = rule.to_string();
            let again = testpmd::parse_rule(&written).expect("written rule parses");
            assert_eq!(again, rule, "round trip of {line:?} via {written:?}");
        }
    }
});
