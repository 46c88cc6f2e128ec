//! The OpenFlow rule file of a run, read once, here: `ovs-ofctl add-flow(s)` lines or
//! `ovs-ofctl dump-flows` output (parsed by `nicbench_rules::openflow`, errors with
//! `file:line:col`), or a JSON list of [`OfRule`] values (the file starts with `[`).
//!
//! JSON rules carry their `u128` values (IPv6 addresses and masks) as plain JSON integers, read
//! exactly: serde_json reads 128-bit integers wherever the type says `u128`, except through the
//! buffer serde reads an internally tagged enum with (`OfAction`, tagged by `action`), which holds
//! no 128-bit integer. So an action is first kept as raw JSON text and read once its tag is known:
//! a `set_field` (the only action with `u128`s) straight into its fields, every other one by
//! `OfAction`'s own serde.

use std::path::Path;

use nicbench_rules::openflow::{self, OfAction, OfField, OfMatch, OfRule};
use nicbench_rules::ruleset;
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::ModelError;

/// The rules of `path` (see the module doc); a file without rules is refused, as for every rule file.
pub fn load(path: &str) -> Result<Vec<OfRule>, ModelError> {
    let rules_error = |msg: String| ModelError::Rules(msg);
    ruleset::refuse_special_file(Path::new(path), path).map_err(|e| rules_error(e.to_string()))?;
    let text = std::fs::read_to_string(path).map_err(|e| {
        rules_error(match e.kind() {
            std::io::ErrorKind::InvalidData => format!(
                "{path}: not a text file (OpenFlow rules are text: ovs-ofctl add-flows or dump-flows lines, or a JSON list)"
            ),
            _ => format!("{path}: cannot read the OpenFlow rules: {}", io_reason(&e)),
        })
    })?;
    let text = ruleset::strip_bom(&text);
    if text.trim_start().starts_with('[') {
        return from_json(text, path).map_err(rules_error);
    }
    let report = openflow::parse_file_all(text, path);
    if let Some(first) = report.errors.first() {
        // The OpenFlow parser would only say "missing 'actions='" at the first line of another syntax.
        if let Some(syntax) = rte_flow_syntax(text) {
            return Err(rules_error(format!(
                "{path}: {syntax} rules, not OpenFlow (ovs-ofctl syntax): 'nicbench rules check {path}' reads them, \
                 and classify/simulate --rules run them"
            )));
        }
        let more = match report.errors.len() {
            1 => String::new(),
            2 => " (and 1 more error)".into(),
            n => format!(" (and {} more errors)", n - 1),
        };
        return Err(rules_error(format!("{first}{more}")));
    }
    if report.parsed.is_empty() {
        return Err(rules_error(format!(
            "{path}: no rules in the file (it is empty or holds only blank lines and comments); a rule file needs \
             at least one rule"
        )));
    }
    Ok(report.parsed.into_iter().map(|(_, rule)| rule).collect())
}

/// An I/O error's reason without Rust's " (os error N)" (what `strerror` says).
fn io_reason(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" (os error ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// The rte_flow syntax of the first rule line (testpmd, tc flower, ClassBench), if it is one of them.
fn rte_flow_syntax(text: &str) -> Option<&'static str> {
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))?;
    [
        ("flow create", "testpmd 'flow create'"),
        ("tc filter", "tc flower"),
        ("@", "ClassBench"),
    ]
    .into_iter()
    .find(|(start, _)| first.starts_with(start))
    .map(|(_, name)| name)
}

/// [`OfRule`] as JSON, its actions read as the module doc says.
#[derive(Deserialize)]
struct RuleJson {
    table: u8,
    priority: u16,
    cookie: u64,
    idle_timeout_s: u16,
    hard_timeout_s: u16,
    matches: OfMatch,
    actions: Vec<Box<RawValue>>,
}

#[derive(Deserialize)]
struct Tag<'a> {
    action: &'a str,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SetFieldJson<'a> {
    #[allow(dead_code)] // the tag, read by `Tag`
    action: &'a str,
    field: OfField,
    value: u128,
    mask: u128,
}

fn from_json(text: &str, path: &str) -> Result<Vec<OfRule>, String> {
    let at = |e: serde_json::Error| {
        let message = e.to_string();
        let message = message
            .rsplit_once(" at line ")
            .map_or(message.as_str(), |(m, _)| m)
            .to_string();
        format!(
            "{path}:{}:{}: not a JSON list of OpenFlow rules ({message})",
            e.line(),
            e.column()
        )
    };
    let rules: Vec<RuleJson> = serde_json::from_str(text).map_err(at)?;
    if rules.is_empty() {
        return Err(format!(
            "{path}: no rules in the file (an empty JSON list); a rule file needs at least one rule"
        ));
    }
    let action = |raw: &RawValue| -> Result<OfAction, serde_json::Error> {
        let tag: Tag = serde_json::from_str(raw.get())?;
        if tag.action != "set_field" {
            return serde_json::from_str(raw.get());
        }
        let s: SetFieldJson = serde_json::from_str(raw.get())?;
        Ok(OfAction::SetField {
            field: s.field,
            value: s.value,
            mask: s.mask,
        })
    };
    rules
        .into_iter()
        .enumerate()
        .map(|(i, r)| {
            let actions = r.actions.iter().enumerate().map(|(j, raw)| {
                action(raw).map_err(|e| format!("{path}: rule {i}: action {j}: not an OpenFlow action ({e})"))
            });
            Ok(OfRule {
                table: r.table,
                priority: r.priority,
                cookie: r.cookie,
                idle_timeout_s: r.idle_timeout_s,
                hard_timeout_s: r.hard_timeout_s,
                matches: r.matches,
                actions: actions.collect::<Result<_, _>>()?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(name: &str, text: &str) -> String {
        let dir = std::env::temp_dir().join(format!("nicbench-vswitch-rules-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join(name);
        std::fs::write(&path, text).expect("write");
        path.display().to_string()
    }

    fn err(path: &str) -> String {
        load(path).err().map(|e| e.to_string()).unwrap_or_default()
    }

    #[test]
    fn test_json_rules_carry_u128_values_exactly_and_equal_the_text_rules() {
        let text = "priority=10,ipv6,ipv6_dst=2001:db8::2,actions=set_field:2001:db8::9->ipv6_dst,output:1\n\
                    priority=5,ip,actions=dec_ttl,output:2\n";
        let from_text = load(&write("r.of", text)).expect("text rules");
        // The serde form of the parsed rules is the JSON format, u128s as JSON integers.
        let json = serde_json::to_string_pretty(&from_text).expect("json");
        assert!(
            json.contains(&0x2001_0db8_0000_0000_0000_0000_0000_0009u128.to_string()),
            "{json}"
        );
        assert_eq!(load(&write("r.json", &json)).expect("json rules"), from_text);
        assert!(matches!(
            from_text[0].actions[0],
            OfAction::SetField { field: OfField::Ipv6Dst, value, .. } if value == 0x2001_0db8_0000_0000_0000_0000_0000_0009
        ));
    }

    #[test]
    fn test_errors_name_the_file_the_place_and_what_is_allowed() {
        let msg = err(&write("bad.json", "[\n  {\"table\": 0,\n  oops}\n]"));
        assert!(
            msg.starts_with("rules: ")
                && msg.contains("bad.json:3:3: not a JSON list of OpenFlow rules (key must be a string)"),
            "{msg}"
        );
        let msg = err(&write("empty.json", " []"));
        assert!(
            msg.contains("empty.json: no rules in the file (an empty JSON list)"),
            "{msg}"
        );
        let msg = err(&write("act.json", "[{\"table\": 0, \"priority\": 1, \"cookie\": 0, \"idle_timeout_s\": 0, \
            \"hard_timeout_s\": 0, \"matches\": {\"in_port\": null, \"fields\": []}, \"actions\": [{\"action\": \"warp\"}]}]"));
        assert!(
            msg.contains("act.json: rule 0: action 0: not an OpenFlow action (unknown variant `warp`"),
            "{msg}"
        );
        let msg = err(&write("empty.of", "# only a comment\n\n"));
        assert!(msg.contains("empty.of: no rules in the file (it is empty"), "{msg}");
        let msg = err(&write(
            "tc.of",
            "tc filter add dev eth0 ingress protocol ip flower action drop\n",
        ));
        assert!(
            msg.contains("tc.of: tc flower rules, not OpenFlow (ovs-ofctl syntax)"),
            "{msg}"
        );
        let msg = err(&write("two.of", "priority=x,actions=drop\npriority=y,actions=drop\n"));
        assert!(
            msg.contains("two.of:1:") && msg.ends_with(" (and 1 more error)"),
            "{msg}"
        );
        let msg = err(&write("nope.of", "x").replace("nope.of", "missing.of"));
        assert!(
            msg.contains("missing.of: cannot read the OpenFlow rules: No such file or directory"),
            "{msg}"
        );
        let binary = write("bin.of", "");
        std::fs::write(&binary, [0xff, 0xfe, 0, 1]).expect("write");
        assert!(
            err(&binary).contains("bin.of: not a text file (OpenFlow rules are text"),
            "{}",
            err(&binary)
        );
        // A BOM (Windows editors) is no part of the first rule, in either format.
        assert_eq!(
            load(&write("bom.of", "\u{feff}priority=1,actions=drop\n"))
                .map(|r| r.len())
                .ok(),
            Some(1)
        );
    }
}
