//! Rule files as users have them: syntax detection, loading, a summary, and writing
//! a rule set back in another syntax. This is what `nicbench rules check|convert|gen`
//! and the simulators load rule files through.
//!
//! A file is one syntax throughout. Detection: by extension (`.flow`, `.testpmd` →
//! testpmd; `.tc` → tc; `.cb`, `.classbench` → ClassBench), else by the first line that
//! is not blank or a comment (`flow …` → testpmd, `tc …` → tc, `@…` → ClassBench).

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use serde::Serialize;

use crate::error::{ParseError, WriteError};
use crate::model::{Command, Rule};
use crate::{classbench, tc, testpmd};

/// The rule syntaxes nicbench reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Syntax {
    Testpmd,
    Tc,
    ClassBench,
}

impl Syntax {
    pub fn name(self) -> &'static str {
        match self {
            Syntax::Testpmd => "testpmd",
            Syntax::Tc => "tc",
            Syntax::ClassBench => "classbench",
        }
    }

    /// `testpmd`, `tc` or `classbench` (case-insensitive).
    pub fn from_name(name: &str) -> Option<Syntax> {
        match name.to_ascii_lowercase().as_str() {
            "testpmd" | "flow" | "rte_flow" => Some(Syntax::Testpmd),
            "tc" | "flower" | "tc-flower" => Some(Syntax::Tc),
            "classbench" | "cb" => Some(Syntax::ClassBench),
            _ => None,
        }
    }

    /// The syntax of a file, from its extension or its first meaningful line.
    pub fn detect(path: &Path, text: &str) -> Option<Syntax> {
        let by_extension = path.extension().and_then(|e| e.to_str()).and_then(|ext| match ext {
            "flow" | "testpmd" => Some(Syntax::Testpmd),
            "tc" => Some(Syntax::Tc),
            "cb" | "classbench" => Some(Syntax::ClassBench),
            _ => None,
        });
        by_extension.or_else(|| {
            let first = text
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty() && !l.starts_with('#'))?;
            if first.starts_with('@') {
                Some(Syntax::ClassBench)
            } else if first.split_whitespace().next() == Some("tc") {
                Some(Syntax::Tc)
            } else if first.split_whitespace().next() == Some("flow") {
                Some(Syntax::Testpmd)
            } else {
                None
            }
        })
    }
}

impl fmt::Display for Syntax {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One rule of a file, with the line it came from (1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NumberedRule {
    pub line: usize,
    pub rule: Rule,
}

/// A loaded rule file. `rules` are the rules that a `create` (testpmd), `add` (tc) or
/// filter line (ClassBench) installs, in file order.
#[derive(Debug, Clone)]
pub struct RuleFile {
    pub syntax: Syntax,
    pub rules: Vec<NumberedRule>,
    /// testpmd commands by kind (`create`, `validate`, `destroy`, `flush`).
    pub commands: BTreeMap<&'static str, u64>,
    /// ClassBench lines whose port limits rte_flow cannot express (the rule matches more).
    pub widened: u64,
}

/// Load a rule file's text. `keep_going`: collect every error instead of stopping at the
/// first; on any error the `Err` holds them all (at least one).
/// A UTF-8 byte-order mark at the start of the text (Windows editors write one) is skipped.
/// After the lines parse, the whole-set checks run ([`crate::checks::check_rule_set`]):
/// reversed ranges and jump cycles are errors too, with their line.
pub fn load(text: &str, file: &str, syntax: Syntax, keep_going: bool) -> Result<RuleFile, Vec<ParseError>> {
    let text = strip_bom(text);
    let out = load_lines(text, file, syntax, keep_going)?;
    check(crate::checks::check_rule_set(&out.rules, file), keep_going)?;
    Ok(out)
}

/// `text` without a leading UTF-8 byte-order mark.
pub fn strip_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

fn load_lines(text: &str, file: &str, syntax: Syntax, keep_going: bool) -> Result<RuleFile, Vec<ParseError>> {
    let mut out = RuleFile {
        syntax,
        rules: Vec::new(),
        commands: BTreeMap::new(),
        widened: 0,
    };
    match syntax {
        Syntax::Testpmd => {
            let report = testpmd::parse_file_all(text, file);
            check(report.errors, keep_going)?;
            for (line, command) in report.parsed {
                let kind = match &command {
                    Command::Create { .. } => "create",
                    Command::Validate { .. } => "validate",
                    Command::Destroy { .. } => "destroy",
                    Command::Flush { .. } => "flush",
                };
                *out.commands.entry(kind).or_default() += 1;
                if let Command::Create { rule, .. } = command {
                    out.rules.push(NumberedRule { line, rule });
                }
            }
        }
        Syntax::Tc => {
            let mut devices = tc::DeviceTable::new();
            let report = tc::parse_file_all(text, file, &mut devices);
            check(report.errors, keep_going)?;
            out.rules = report
                .parsed
                .into_iter()
                .map(|(line, cmd)| NumberedRule { line, rule: cmd.rule })
                .collect();
        }
        Syntax::ClassBench => {
            let report = classbench::parse_file_all(text, file);
            check(report.errors, keep_going)?;
            for (index, (line, filter)) in report.parsed.into_iter().enumerate() {
                out.widened += u64::from(filter.widens_in_rte_flow());
                // File order is priority order: the first line wins.
                let priority = u32::try_from(index).unwrap_or(u32::MAX);
                out.rules.push(NumberedRule {
                    line,
                    rule: filter.to_rule(priority),
                });
            }
        }
    }
    Ok(out)
}

/// Why a rule file could not be loaded by [`load_path`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadError {
    /// The file could not be read (message names the path).
    Io(String),
    /// Neither the extension nor the first line tells the syntax.
    UnknownSyntax(String),
    /// An Open vSwitch OpenFlow file ([`crate::openflow`]): not an rte_flow rule set.
    OpenFlow(String),
    /// The file holds no rule (empty, or only blank lines and comments): every tool reading
    /// a rule file needs at least one, and an empty file is almost always the wrong file.
    NoRules(String),
    /// Parse errors: at least one, every one with `keep_going`.
    Parse(Vec<ParseError>),
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Io(msg) => f.write_str(msg),
            LoadError::OpenFlow(path) => write!(
                f,
                "{path}: Open vSwitch OpenFlow rules (ovs-ofctl syntax), not rte_flow rules: they run on the \
                 virtual OVS datapath (nicbench vswitch --openflow FILE); 'nicbench rules openflow FILE' summarises them"
            ),
            LoadError::NoRules(path) => write!(
                f,
                "{path}: no rules in the file (it is empty or holds only blank lines and comments); a rule file \
                 needs at least one rule"
            ),
            LoadError::UnknownSyntax(path) => write!(
                f,
                "{path}: cannot tell the rule syntax (testpmd 'flow create …', tc 'tc filter add …' or ClassBench '@…'); \
                 pass --syntax"
            ),
            LoadError::Parse(errors) => {
                let lines: Vec<String> = errors.iter().map(ToString::to_string).collect();
                f.write_str(&lines.join("\n"))
            }
        }
    }
}

impl std::error::Error for LoadError {}

/// Reads a rule file, detects its syntax unless `syntax` is given ([`Syntax::detect`]) and
/// parses it ([`load`]): the one way every tool loads a rule file from disk.
pub fn load_path(path: &Path, syntax: Option<Syntax>, keep_going: bool) -> Result<RuleFile, LoadError> {
    let name = path.display().to_string();
    refuse_special_file(path, &name)?;
    let text = std::fs::read_to_string(path).map_err(|e| match e.kind() {
        // A capture or another binary file named as rules: say what was expected.
        std::io::ErrorKind::InvalidData => LoadError::Io(format!(
            "{name}: not a text file (a rule file is UTF-8 text: testpmd, tc flower, ClassBench or OpenFlow)"
        )),
        _ => LoadError::Io(format!("{name}: {e}")),
    })?;
    let text = strip_bom(&text);
    if text
        .lines()
        .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
    {
        return Err(LoadError::NoRules(name));
    }
    let syntax = match syntax {
        Some(s) => s,
        None => match Syntax::detect(path, text) {
            Some(s) => s,
            None if crate::openflow::looks_like_openflow(text) => return Err(LoadError::OpenFlow(name)),
            None => return Err(LoadError::UnknownSyntax(name)),
        },
    };
    let file = load(text, &name, syntax, keep_going).map_err(LoadError::Parse)?;
    // testpmd commands other than `flow create` (validate, destroy, flush) are read but add no rule.
    if file.rules.is_empty() && file.commands.is_empty() {
        return Err(LoadError::NoRules(name));
    }
    Ok(file)
}

/// A rule file must be a file: reading a named pipe with no writer would wait forever, a
/// device or a socket is never a rule file (a directory is refused by the read itself). `name`
/// names the file in the message. Also for rule files read elsewhere (the virtual OVS datapath's
/// OpenFlow files).
pub fn refuse_special_file(path: &Path, name: &str) -> Result<(), LoadError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let Ok(meta) = std::fs::metadata(path) else {
            return Ok(());
        }; // the read names the problem
        let t = meta.file_type();
        let what = if t.is_fifo() {
            "a named pipe (FIFO)"
        } else if t.is_socket() {
            "a socket"
        } else if t.is_char_device() || t.is_block_device() {
            "a device"
        } else {
            return Ok(());
        };
        return Err(LoadError::Io(format!(
            "{name}: {what}, not a rule file: give a regular file (rule files are read whole)"
        )));
    }
    #[allow(unreachable_code)]
    Ok(())
}

fn check(mut errors: Vec<ParseError>, keep_going: bool) -> Result<(), Vec<ParseError>> {
    if errors.is_empty() {
        return Ok(());
    }
    if !keep_going {
        errors.truncate(1);
    }
    Err(errors)
}

/// What a rule set contains, for `nicbench rules check`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RuleSetSummary {
    pub rules: u64,
    /// Rules per group (table).
    pub groups: BTreeMap<u32, u64>,
    /// Rules per match type: the items with the fields they constrain, e.g.
    /// `eth / ipv4(src,dst) / udp(src,dst)`; `~` marks a masked (prefix) field and
    /// `..` a range.
    pub match_types: BTreeMap<String, u64>,
    /// Rules per action kind (a rule with several actions counts in each).
    pub actions: BTreeMap<String, u64>,
    /// Distinct priorities used.
    pub priorities: u64,
}

/// Summarize a rule set.
pub fn summarize<'a>(rules: impl IntoIterator<Item = &'a Rule>) -> RuleSetSummary {
    let mut s = RuleSetSummary::default();
    let mut priorities = std::collections::BTreeSet::new();
    for rule in rules {
        s.rules += 1;
        *s.groups.entry(rule.attr.group).or_default() += 1;
        *s.match_types.entry(match_type(rule)).or_default() += 1;
        for action in &rule.actions {
            *s.actions.entry(action_kind(action)).or_default() += 1;
        }
        priorities.insert(rule.attr.priority);
    }
    s.priorities = priorities.len() as u64;
    s
}

/// `eth / ipv4(src,dst~) / udp(dst..)`: item kinds and the fields they constrain.
pub fn match_type(rule: &Rule) -> String {
    if rule.pattern.is_empty() {
        return "(any)".to_string();
    }
    let parts: Vec<String> = rule
        .pattern
        .iter()
        .map(|item| {
            let kind = item.kind();
            let fields: Vec<String> = kind
                .slots()
                .iter()
                .zip(item.to_slots().iter())
                .filter_map(|(desc, slot)| {
                    let field = slot.as_ref()?;
                    let full_mask = desc.default_mask;
                    let suffix = if field.last.is_some() {
                        ".."
                    } else if field.mask != full_mask {
                        "~"
                    } else {
                        ""
                    };
                    Some(format!("{}{suffix}", desc.name))
                })
                .collect();
            if fields.is_empty() {
                kind.name().to_string()
            } else {
                format!("{}({})", kind.name(), fields.join(","))
            }
        })
        .collect();
    parts.join(" / ")
}

/// The action's testpmd keyword (`queue`, `jump`, `rss`, …).
pub fn action_kind(action: &crate::Action) -> String {
    use crate::Action as A;
    match action {
        A::Queue { .. } => "queue",
        A::Rss(_) => "rss",
        A::Jump { .. } => "jump",
        A::Drop => "drop",
        A::Mark { .. } => "mark",
        A::Count => "count",
        A::PortId { .. } => "port_id",
        A::Passthru => "passthru",
        A::SetMacSrc { .. } => "set_mac_src",
        A::SetMacDst { .. } => "set_mac_dst",
        A::SetIpv4Src { .. } => "set_ipv4_src",
        A::SetIpv4Dst { .. } => "set_ipv4_dst",
        A::SetIpv6Src { .. } => "set_ipv6_src",
        A::SetIpv6Dst { .. } => "set_ipv6_dst",
        A::SetTpSrc { .. } => "set_tp_src",
        A::SetTpDst { .. } => "set_tp_dst",
        A::DecTtl => "dec_ttl",
        A::OfPushVlan { .. } => "of_push_vlan",
        A::OfPopVlan => "of_pop_vlan",
        A::OfSetVlanVid { .. } => "of_set_vlan_vid",
        A::OfSetVlanPcp { .. } => "of_set_vlan_pcp",
        A::VxlanEncap { .. } => "vxlan_encap",
        A::VxlanDecap => "vxlan_decap",
    }
    .to_string()
}

/// Write rules in `syntax`, one command per line. testpmd lines are `flow create PORT …`;
/// tc lines attach to `dev` (port ids of `port_id` actions name devices `port<N>`).
pub fn write(rules: &[Rule], syntax: Syntax, port: u16, dev: &str) -> Result<String, WriteError> {
    write_with(rules, syntax, port, dev, |_| String::new())
}

/// [`write`] for the rules of a file: an error names the file and line of the rule that
/// cannot be written (`r.flow:12: tc cannot express …`).
pub fn write_numbered(
    rules: &[NumberedRule],
    file: &str,
    syntax: Syntax,
    port: u16,
    dev: &str,
) -> Result<String, WriteError> {
    let plain: Vec<Rule> = rules.iter().map(|r| r.rule.clone()).collect();
    write_with(&plain, syntax, port, dev, |i| format!("{file}:{}: ", rules[i].line))
}

fn write_with(
    rules: &[Rule],
    syntax: Syntax,
    port: u16,
    dev: &str,
    place: impl Fn(usize) -> String,
) -> Result<String, WriteError> {
    let place = &place;
    let at = |i: usize| move |e: WriteError| WriteError(format!("{}{}", place(i), e.0));
    let mut out = String::with_capacity(rules.len() * 96);
    match syntax {
        Syntax::Testpmd => {
            for (i, rule) in rules.iter().enumerate() {
                out.push_str(
                    &testpmd::command_to_string(&Command::Create {
                        port,
                        rule: rule.clone(),
                    })
                    .map_err(at(i))?,
                );
                out.push('\n');
            }
        }
        Syntax::Tc => {
            let mut devices = tc::DeviceTable::with_names([dev.to_string()]);
            let max_port = rules
                .iter()
                .flat_map(|r| r.actions.iter())
                .filter_map(|a| match a {
                    crate::Action::PortId { id } => Some(*id),
                    _ => None,
                })
                .max();
            if let Some(max) = max_port {
                for id in 1..=max {
                    devices.port_id(&format!("port{id}"));
                }
            }
            for (i, rule) in rules.iter().enumerate() {
                let cmd = tc::TcCommand {
                    dev: dev.to_string(),
                    rule: rule.clone(),
                    skip_sw: false,
                    skip_hw: false,
                };
                out.push_str(&tc::command_to_string(&cmd, &devices).map_err(at(i))?);
                out.push('\n');
            }
        }
        Syntax::ClassBench => {
            return Err(WriteError(
                "writing ClassBench filter sets is not supported; convert to testpmd or tc".into(),
            ))
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TESTPMD: &str = "# two rules\n\
        flow create 0 group 0 priority 1 ingress pattern eth / ipv4 src is 10.0.0.1 / udp dst is 53 / end actions queue index 2 / count / end\n\
        flow create 0 group 1 priority 0 ingress pattern eth / ipv4 dst spec 10.0.0.0 dst mask 255.255.255.0 / end actions jump group 2 / end\n\
        flow destroy 0 rule 0\n";

    #[test]
    fn test_a_file_without_rules_is_refused_by_name_whatever_the_syntax() {
        let dir = std::env::temp_dir().join(format!("nicbench-norules-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        for (name, text, syntax) in [
            ("empty.flow", "", None),
            ("comments.flow", "# nothing yet\n\n   \n", None),
            ("bom.tc", "\u{feff}\n# a tc file to fill\n", Some(Syntax::Tc)),
            ("empty.cb", "", Some(Syntax::ClassBench)),
        ] {
            let path = dir.join(name);
            std::fs::write(&path, text).expect("write");
            let err = load_path(&path, syntax, false).expect_err(name);
            assert_eq!(err, LoadError::NoRules(path.display().to_string()), "{name}");
            assert!(
                err.to_string().ends_with(
                    "no rules in the file (it is empty or holds only blank lines and comments); \
                                              a rule file needs at least one rule"
                ),
                "{err}"
            );
        }
        // A testpmd file of commands only (no `flow create`) is still a file of rules to check.
        let path = dir.join("destroy.flow");
        std::fs::write(&path, "flow destroy 0 rule 0\n").expect("write");
        assert!(load_path(&path, None, false).is_ok_and(|f| f.rules.is_empty() && f.commands["destroy"] == 1));
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn test_detect_by_extension_and_content() {
        assert_eq!(Syntax::detect(Path::new("a.flow"), ""), Some(Syntax::Testpmd));
        assert_eq!(Syntax::detect(Path::new("a.tc"), ""), Some(Syntax::Tc));
        assert_eq!(
            Syntax::detect(
                Path::new("acl1_1k"),
                "@1.2.3.4/32 0.0.0.0/0 0 : 65535 0 : 65535 0x06/0xFF"
            ),
            Some(Syntax::ClassBench)
        );
        assert_eq!(
            Syntax::detect(Path::new("rules.txt"), "\n# c\ntc filter add dev eth0 ingress"),
            Some(Syntax::Tc)
        );
        assert_eq!(Syntax::detect(Path::new("rules.txt"), TESTPMD), Some(Syntax::Testpmd));
        assert_eq!(Syntax::detect(Path::new("rules.txt"), "hello"), None);
    }

    #[test]
    fn test_load_path_reads_detects_and_parses() {
        let dir = std::env::temp_dir().join(format!("nicbench-load-path-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("tmp");
        let good = dir.join("rules.txt");
        std::fs::write(&good, TESTPMD).expect("write");
        let file = load_path(&good, None, false).expect("loads");
        assert_eq!((file.syntax, file.rules.len()), (Syntax::Testpmd, 2));
        let unknown = dir.join("hello.txt");
        std::fs::write(&unknown, "hello\n").expect("write");
        let err = load_path(&unknown, None, false).expect_err("no syntax");
        assert_eq!(err, LoadError::UnknownSyntax(unknown.display().to_string()));
        assert!(err.to_string().ends_with("pass --syntax"), "{err}");
        // A given syntax wins over detection: ClassBench cannot read testpmd lines.
        let err = load_path(&good, Some(Syntax::ClassBench), true).expect_err("not classbench");
        assert!(
            matches!(&err, LoadError::Parse(errors) if errors.len() == 3 && errors[0].line == 2),
            "{err:?}"
        );
        let err = load_path(&dir.join("missing.flow"), None, false).expect_err("no file");
        assert!(
            matches!(&err, LoadError::Io(m) if m.contains("missing.flow")),
            "{err:?}"
        );
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn test_load_and_summarize_testpmd() {
        let file = load(TESTPMD, "r.flow", Syntax::Testpmd, false).expect("parses");
        assert_eq!(file.rules.len(), 2);
        assert_eq!(file.rules[0].line, 2);
        assert_eq!(file.commands.get("destroy"), Some(&1));
        let s = summarize(file.rules.iter().map(|r| &r.rule));
        assert_eq!(s.rules, 2);
        assert_eq!(s.groups.get(&0), Some(&1));
        assert_eq!(s.groups.get(&1), Some(&1));
        assert_eq!(s.match_types.get("eth / ipv4(src) / udp(dst)"), Some(&1));
        assert_eq!(s.match_types.get("eth / ipv4(dst~)"), Some(&1));
        assert_eq!(s.actions.get("queue"), Some(&1));
        assert_eq!(s.actions.get("jump"), Some(&1));
    }

    #[test]
    fn test_first_error_vs_keep_going() {
        let bad = "flow create 0 pattern eth / ipv9 / end actions drop / end\nflow create 0 pattern eth / end actions dropp / end\n";
        let first = load(bad, "bad.flow", Syntax::Testpmd, false).unwrap_err();
        assert_eq!(first.len(), 1);
        assert_eq!(first[0].line, 1);
        let all = load(bad, "bad.flow", Syntax::Testpmd, true).unwrap_err();
        assert_eq!(all.len(), 2);
        assert_eq!(all[1].line, 2);
        assert!(all[1].column > 1);
    }

    #[test]
    fn test_convert_testpmd_to_tc_and_back() {
        let src = "flow create 0 priority 3 ingress pattern eth / ipv4 dst spec 10.0.0.0 dst mask 255.255.255.0 / udp dst is 80 / end actions drop / end\n";
        let file = load(src, "r.flow", Syntax::Testpmd, false).expect("parses");
        let rules: Vec<Rule> = file.rules.into_iter().map(|r| r.rule).collect();
        let tc_text = write(&rules, Syntax::Tc, 0, "eth0").expect("tc can express it");
        assert!(tc_text.starts_with("tc filter add dev eth0 ingress"), "{tc_text}");
        let back = load(&tc_text, "r.tc", Syntax::Tc, false).expect("tc output parses");
        assert_eq!(back.rules[0].rule, rules[0]);
        let testpmd_text = write(&rules, Syntax::Testpmd, 0, "eth0").expect("testpmd");
        let again = load(&testpmd_text, "r.flow", Syntax::Testpmd, false).expect("parses");
        assert_eq!(again.rules[0].rule, rules[0]);
    }

    #[test]
    fn test_tc_cannot_express_queue() {
        let src = "flow create 0 ingress pattern eth / end actions queue index 1 / end\n";
        let rules: Vec<Rule> = load(src, "r.flow", Syntax::Testpmd, false)
            .expect("parses")
            .rules
            .into_iter()
            .map(|r| r.rule)
            .collect();
        let err = write(&rules, Syntax::Tc, 0, "eth0").unwrap_err();
        assert!(err.to_string().contains("queue"), "{err}");
    }

    #[test]
    fn test_convert_error_names_file_and_line() {
        let src = "# comment\nflow create 0 ingress pattern eth / end actions drop / end\n\
                   flow create 0 ingress pattern eth / end actions queue index 1 / end\n";
        let file = load(src, "r.flow", Syntax::Testpmd, false).expect("parses");
        let err = write_numbered(&file.rules, "r.flow", Syntax::Tc, 0, "eth0").unwrap_err();
        assert!(err.to_string().starts_with("r.flow:3: "), "{err}");
    }

    #[test]
    fn test_bom_accepted_by_load_and_detection() {
        let src = "\u{feff}flow create 0 ingress pattern eth / end actions drop / end\n";
        assert_eq!(
            load(src, "r", Syntax::Testpmd, false)
                .expect("a BOM is skipped")
                .rules
                .len(),
            1
        );
        assert_eq!(
            Syntax::detect(
                Path::new("r.txt"),
                strip_bom("\u{feff}@1.0.0.0/8 0.0.0.0/0 0 : 1 0 : 1 0x00/0x00")
            ),
            Some(Syntax::ClassBench)
        );
    }
}
