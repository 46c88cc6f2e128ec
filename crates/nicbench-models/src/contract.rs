//! The request/result contract of every model, as JSON Schemas generated from the serde types
//! (the one definition of each contract).
//!
//! `docs/contracts/<name>.schema.json` in the repository are these schemas (a test fails when
//! they are stale; `NICBENCH_BLESS=1` rewrites them), and Python reads them through the binding
//! (`nicbench._native.contract_schema(name)`) to check what it builds.

use schemars::{schema_for, Schema};

/// Every contract by name: `<model>.<request|result>`.
pub const CONTRACTS: &[&str] = &[
    "connectx.scenario",
    "connectx.result",
    "offpath.request",
    "offpath.response",
    "flowhost.request",
    "flowhost.result",
    "pvp.request",
    "pvp.response",
    "vswitch.request",
    "vswitch.result",
];

/// The JSON Schema of a contract (see [`CONTRACTS`]), or `None` for an unknown name.
pub fn schema(name: &str) -> Option<Schema> {
    Some(match name {
        "connectx.scenario" => schema_for!(crate::connectx::Scenario),
        "connectx.result" => schema_for!(crate::connectx::SimResult),
        "offpath.request" => schema_for!(crate::offpath::Request),
        "offpath.response" => schema_for!(crate::offpath::Response),
        "flowhost.request" => schema_for!(crate::flowhost::Request),
        "flowhost.result" => schema_for!(crate::flowhost::FlowHostResult),
        "pvp.request" => schema_for!(crate::pvp::Request),
        "pvp.response" => schema_for!(crate::pvp::Response),
        "vswitch.request" => schema_for!(crate::vswitch::Request),
        "vswitch.result" => schema_for!(crate::vswitch::VswitchResult),
        _ => return None,
    })
}

/// [`schema`] as pretty JSON with a trailing newline (the committed files' form).
pub fn schema_json(name: &str) -> Option<String> {
    schema(name).map(|s| serde_json::to_string_pretty(&s).expect("a schema serializes") + "\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_every_contract_has_a_schema_with_its_fields() {
        for name in CONTRACTS {
            let v: serde_json::Value = serde_json::from_str(&schema_json(name).expect("known")).expect("json");
            assert_eq!(v["type"], "object", "{name}");
            assert!(v["properties"].as_object().is_some_and(|p| p.len() >= 3), "{name}: {v}");
        }
        let scenario: serde_json::Value =
            serde_json::from_str(&schema_json("connectx.scenario").expect("known")).expect("json");
        let required: Vec<&str> = scenario["required"]
            .as_array()
            .expect("required")
            .iter()
            .filter_map(|r| r.as_str())
            .collect();
        assert_eq!(required, ["nic", "duration_ns"], "only what has no default is required");
        assert_eq!(
            scenario["additionalProperties"], false,
            "unknown fields are refused (deny_unknown_fields)"
        );
        assert!(schema("nope.request").is_none());
    }
}
