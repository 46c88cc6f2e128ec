//! Arbitrary text through the testpmd, tc, ClassBench, OpenFlow and dpctl parsers and whole-file
//! loading (`ruleset::load`: BOM, reversed ranges, jump cycles): no panic, errors of one line, and what parses as testpmd, OpenFlow or dpctl writes back to text that parses to
//! the same rule or flow.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nicbench_rules::ruleset::{self, Syntax};
use nicbench_rules::{classbench, openflow, tc, testpmd};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = classbench::parse_file_all(text, "fuzz");
    let mut devices = tc::DeviceTable::new();
    let _ = tc::parse_file_all(text, "fuzz", &mut devices);
    // Whole-file loading: BOM, the whole-set checks (reversed ranges, jump cycles), error display
    // with long tokens cut.
    for syntax in [Syntax::Testpmd, Syntax::Tc, Syntax::ClassBench] {
        if let Err(errors) = ruleset::load(text, "fuzz", syntax, true) {
            for e in errors {
                assert!(!e.to_string().contains('\n'), "an error is one line: {e}");
            }
        }
    }
    for line in text.lines() {
        if let Ok(rule) = testpmd::parse_rule(line) {
            let written = rule.to_string();
            let again = testpmd::parse_rule(&written).expect("written rule parses");
            assert_eq!(again, rule, "round trip of {line:?} via {written:?}");
        }
        if let Ok(rule) = openflow::parse_rule(line) {
            if let Ok(written) = openflow::rule_to_string(&rule) {
                let again = openflow::parse_rule(&written).expect("written OpenFlow rule parses");
                assert_eq!(again, rule, "round trip of {line:?} via {written:?}");
            }
        }
        if let Ok(flow) = openflow::parse_dp_flow(line) {
            if let Ok(written) = openflow::dp_flow_to_string(&flow) {
                let again = openflow::parse_dp_flow(&written).expect("written datapath flow parses");
                assert_eq!(again, flow, "round trip of {line:?} via {written:?}");
            }
        }
    }
});
