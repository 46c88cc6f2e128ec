//! Real peer: Open vSwitch 3.1 (Debian `openvswitch-switch`).
//!
//! - `ovs-ofctl parse-flow` prints OVS's own reading of an OpenFlow rule in OVS's canonical
//!   syntax; nicbench must read that print-out and the original line as the same rule
//!   (field by field, after both went through nicbench's normalization), on a varied corpus.
//!   Lines both reject, and lines nicbench rejects on purpose, are checked both ways.
//! - A private `ovs-vswitchd` with the userspace datapath and `type=dummy` ports (no kernel
//!   module, no veths; packets injected with `netdev-dummy/receive`, as OVS's own test suite
//!   does): rules with port names are installed, `dump-flows` must read back as the same
//!   rules; packets build megaflows, and `dpctl/dump-flows` must parse and be written back
//!   byte for byte; flows nicbench writes must be accepted by `dpctl/add-flow` and read back
//!   with the same keys. VXLAN through OVS's userspace native tunnelling: the encap
//!   (`tnl_push`), decap (`tnl_pop`) and tunnel-keyed megaflows parse and write back.

use nicbench_rules::openflow::{self, DpFlow, OfRule, PortRef};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const PACKAGE: &str = "openvswitch-switch";

fn corpus(name: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus").join(name)).expect("corpus file")
}

fn command_lines(text: &str) -> Vec<(usize, &str)> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .map(|(i, l)| (i + 1, l))
        .collect()
}

fn tools_or_skip(test: &str, tools: &[&str]) -> bool {
    tools
        .iter()
        .all(|t| nicbench_testenv::tool_or_skip(test, t, PACKAGE).is_some())
}

/// `ovs-ofctl parse-flow` of one line in each protocol that can express it (OpenFlow 1.5,
/// which prints `set_field` forms, and the protocol ovs-ofctl picks by default, usually
/// NXM): the flow in add-flow syntax, or OVS's error. The protocols can differ in what they
/// keep: OpenFlow 1.5's VLAN_VID cannot say "no VLAN" with the PCP bits exact, so
/// `vlan_tci=0` prints `vlan_tci=0x0000/0x1fff` there and `vlan_tci=0x0000` in NXM
/// (equivalent: an untagged packet's TCI is 0); nicbench must agree with one of them.
fn ovs_parse_flow(line: &str) -> Result<Vec<String>, String> {
    let mut readings = Vec::new();
    let mut error = String::new();
    for args in [&["-O", "OpenFlow15", "parse-flow"][..], &["parse-flow"][..]] {
        let out = Command::new("ovs-ofctl")
            .args(args)
            .arg(line)
            .output()
            .expect("run ovs-ofctl");
        if !out.status.success() {
            error = String::from_utf8_lossy(&out.stderr).trim().to_string();
            continue;
        }
        let stdout = String::from_utf8_lossy(&out.stdout);
        let mod_line = stdout
            .lines()
            .find(|l| l.contains("FLOW_MOD"))
            .ok_or_else(|| format!("no FLOW_MOD in {stdout}"))?;
        let body = mod_line
            .split_once(": ADD ")
            .ok_or_else(|| format!("not an ADD: {mod_line}"))?
            .1;
        // The flow-mod print-out names a few things differently from add-flow.
        let pieces: Vec<String> = body
            .split(' ')
            .filter(|p| !p.is_empty())
            .map(|p| {
                for (from, to) in [
                    ("table:", "table="),
                    ("cookie:", "cookie="),
                    ("idle:", "idle_timeout="),
                    ("hard:", "hard_timeout="),
                ] {
                    if let Some(rest) = p.strip_prefix(from) {
                        return format!("{to}{rest}");
                    }
                }
                p.to_string()
            })
            .collect();
        readings.push(pieces.join(","));
    }
    if readings.is_empty() {
        Err(error)
    } else {
        Ok(readings)
    }
}

/// Whether one of OVS's readings, read by nicbench, is `ours`.
fn agrees(readings: &[String], ours: &OfRule) -> bool {
    readings.iter().any(|t| openflow::parse_rule(t).as_ref() == Ok(ours))
}

#[test]
fn openflow_reading_agrees_with_ovs_ofctl() {
    const TEST: &str = "openflow_reading_agrees_with_ovs_ofctl";
    if !tools_or_skip(TEST, &["ovs-ofctl"]) {
        return;
    }
    let mut problems = Vec::new();
    let valid = corpus("openflow_valid.of");
    let lines = command_lines(&valid);
    assert!(lines.len() >= 30, "the corpus is varied");
    for (no, line) in &lines {
        let ours = match openflow::parse_rule(line) {
            Ok(r) => r,
            Err(e) => {
                problems.push(format!("valid:{no}: nicbench rejects: {e}\n  {line}"));
                continue;
            }
        };
        match ovs_parse_flow(line) {
            Err(e) => problems.push(format!("valid:{no}: ovs-ofctl rejects: {e}\n  {line}")),
            Ok(readings) if !agrees(&readings, &ours) => problems.push(format!(
                "valid:{no}: readings differ\n  line: {line}\n  ovs:  {readings:?}\n  nicbench: {ours:?}\n  via ovs:  {:?}",
                readings.iter().map(|t| openflow::parse_rule(t)).collect::<Vec<_>>()
            )),
            Ok(_) => {}
        }
        // nicbench's own canonical text means the same thing to OVS.
        let written = openflow::rule_to_string(&ours).expect("write");
        match ovs_parse_flow(&written) {
            Ok(readings) if agrees(&readings, &ours) => {}
            other => problems.push(format!(
                "valid:{no}: OVS reads nicbench's text differently: {written}\n  {other:?}"
            )),
        }
    }
    for (file, ovs_accepts) in [("openflow_invalid.of", false), ("openflow_stricter.of", true)] {
        let text = corpus(file);
        for (no, line) in command_lines(&text) {
            if openflow::parse_rule(line).is_ok() {
                problems.push(format!("{file}:{no}: nicbench accepts\n  {line}"));
            }
            let ovs = ovs_parse_flow(line);
            if ovs.is_ok() != ovs_accepts {
                problems.push(format!(
                    "{file}:{no}: ovs-ofctl accepts={}, expected {ovs_accepts}: {ovs:?}\n  {line}",
                    ovs.is_ok()
                ));
            }
        }
    }
    // The one way nicbench is more lenient: `output(port=P)` without `max_len` (the brief's
    // spelling of output) means output:P to nicbench; ovs-ofctl 3.1 only takes the
    // parenthesized form with max_len (a truncating output, which nicbench refuses).
    let lenient = "actions=output(port=2)";
    assert!(openflow::parse_rule(lenient).is_ok());
    assert!(
        ovs_parse_flow(lenient).is_err(),
        "ovs-ofctl now accepts {lenient}: drop this note"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A private ovsdb-server + ovs-vswitchd (userspace datapath, dummy ports), stopped on drop.
struct Ovs {
    dir: PathBuf,
}

impl Ovs {
    fn start(tag: &str) -> Ovs {
        let dir = std::env::temp_dir().join(format!("nbovs{}{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        let ovs = Ovs { dir };
        let d = ovs.dir.display().to_string();
        ovs.ok("ovsdb-tool", &["create", &format!("{d}/conf.db")]);
        ovs.ok(
            "ovsdb-server",
            &[
                &format!("{d}/conf.db"),
                &format!("--remote=punix:{d}/db.sock"),
                &format!("--pidfile={d}/ovsdb.pid"),
                &format!("--unixctl={d}/ovsdb.ctl"),
                "--detach",
                &format!("--log-file={d}/ovsdb.log"),
            ],
        );
        ovs.vsctl(&["--no-wait", "init"]);
        ovs.ok(
            "ovs-vswitchd",
            &[
                &format!("unix:{d}/db.sock"),
                // Dummy ports and datapath beside the real port types, so that VXLAN ports
                // get OVS's userspace native tunnelling (tnl_push / tnl_pop).
                "--enable-dummy",
                "--disable-system",
                &format!("--pidfile={d}/vswitchd.pid"),
                &format!("--unixctl={d}/vswitchd.ctl"),
                "--detach",
                &format!("--log-file={d}/vswitchd.log"),
            ],
        );
        let mut args = vec![
            "add-br",
            "br0",
            "--",
            "set",
            "bridge",
            "br0",
            "datapath_type=dummy",
            "fail-mode=secure",
            "protocols=OpenFlow10,OpenFlow13,OpenFlow15",
        ];
        let ports: Vec<String> = (1..=3).map(|i| format!("p{i}")).collect();
        let sets: Vec<[String; 3]> = ports
            .iter()
            .enumerate()
            .map(|(i, p)| [p.clone(), "type=dummy".to_string(), format!("ofport_request={}", i + 1)])
            .collect();
        let mut owned: Vec<String> = Vec::new();
        for s in &sets {
            owned.extend(["--".into(), "add-port".into(), "br0".into(), s[0].clone()]);
            owned.extend([
                "--".into(),
                "set".into(),
                "interface".into(),
                s[0].clone(),
                s[1].clone(),
                s[2].clone(),
            ]);
        }
        args.extend(owned.iter().map(String::as_str));
        ovs.vsctl(&args);
        ovs
    }

    fn cmd(&self, bin: &str, args: &[&str]) -> Output {
        let d = &self.dir;
        Command::new(bin)
            .args(args)
            .env("OVS_RUNDIR", d)
            .env("OVS_LOGDIR", d)
            .env("OVS_DBDIR", d)
            .env("OVS_SYSCONFDIR", d)
            .output()
            .unwrap_or_else(|e| panic!("run {bin}: {e}"))
    }

    fn ok(&self, bin: &str, args: &[&str]) -> String {
        let out = self.cmd(bin, args);
        assert!(
            out.status.success(),
            "{bin} {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn vsctl(&self, args: &[&str]) -> String {
        let db = format!("--db=unix:{}/db.sock", self.dir.display());
        let mut a = vec![db.as_str(), "--timeout=10"];
        a.extend_from_slice(args);
        self.ok("ovs-vsctl", &a)
    }

    fn appctl(&self, args: &[&str]) -> String {
        let t = format!("{}/vswitchd.ctl", self.dir.display());
        let mut a = vec!["-t", t.as_str()];
        a.extend_from_slice(args);
        self.ok("ovs-appctl", &a)
    }

    /// `dpctl/dump-flows` once it shows `n` flows (upcalls are handled asynchronously).
    fn dump_when(&self, n: usize, extra: &[&str]) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut args = vec!["dpctl/dump-flows"];
        args.extend_from_slice(extra);
        loop {
            let text = self.appctl(&args);
            let count = text.lines().filter(|l| !l.starts_with("flow-dump")).count();
            if count >= n || Instant::now() > deadline {
                return text;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Ovs {
    fn drop(&mut self) {
        // Stop exactly our two daemons, through their own control sockets.
        for ctl in ["vswitchd.ctl", "ovsdb.ctl"] {
            let _ = Command::new("ovs-appctl")
                .arg("-t")
                .arg(self.dir.join(ctl))
                .arg("exit")
                .output();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Rules with ports by name, as users write them for `ovs-ofctl add-flows`.
const BRIDGE_RULES: &str = "\
priority=100,in_port=p1,ip,nw_src=10.0.0.0/8,actions=output:p2
priority=90,in_port=p1,dl_vlan=5,actions=strip_vlan,output:p2
priority=80,in_port=p1,tcp,tp_dst=80,actions=mod_nw_dst:192.168.1.1,output:p3
priority=70,in_port=p1,udp,actions=resubmit(,1)
table=1,priority=10,udp,tp_src=53,actions=mod_vlan_vid:7,mod_vlan_pcp:2,output:p3
table=1,priority=0,actions=drop
priority=60,in_port=p1,ct_state=-trk,tcp,actions=ct(zone=5,table=3)
table=3,priority=10,ct_state=+trk+new,tcp,actions=ct(commit,zone=5),output:p2
priority=50,in_port=p1,ipv6,actions=output:p3
priority=40,in_port=p1,icmp,icmp_type=8,actions=output:p2
priority=1,actions=drop
";

/// Packets in `netdev-dummy/receive` flow syntax, and how many megaflows they make at least.
const PACKETS: &[&str] = &[
    "eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=10.0.0.2,dst=192.168.0.1,proto=17,tos=0,ttl=64,frag=no),udp(src=8,dst=9)",
    "eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x8100),vlan(vid=5,pcp=3),encap(eth_type(0x0800),ipv4(src=11.0.0.2,dst=192.168.0.1,proto=6,tos=0,ttl=64,frag=no),tcp(src=8,dst=9))",
    "eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=12.0.0.1,dst=192.168.0.9,proto=6,tos=0,ttl=64,frag=no),tcp(src=1000,dst=80)",
    "eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=12.0.0.1,dst=192.168.0.9,proto=17,tos=0,ttl=64,frag=no),udp(src=53,dst=5353)",
    "eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=13.0.0.1,dst=192.168.0.9,proto=6,tos=0,ttl=64,frag=no),tcp(src=1000,dst=22),tcp_flags(syn)",
    "eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x86dd),ipv6(src=2001:db8::1,dst=2001:db8::2,label=0,proto=17,tclass=0,hlimit=64,frag=no),udp(src=1,dst=2)",
    "eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=14.0.0.1,dst=192.168.0.9,proto=1,tos=0,ttl=64,frag=no),icmp(type=8,code=0)",
    "eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0806),arp(sip=14.0.0.1,tip=14.0.0.2,op=1,sha=50:54:00:00:00:05,tha=00:00:00:00:00:00)",
];

fn port_numbers(rule: &OfRule) -> OfRule {
    let num = |p: &PortRef| match p {
        PortRef::Name(n) => PortRef::Number(n.trim_start_matches('p').parse().expect("pN")),
        other => other.clone(),
    };
    let mut r = rule.clone();
    r.matches.in_port = r.matches.in_port.as_ref().map(num);
    for a in &mut r.actions {
        if let openflow::OfAction::Output { port } = a {
            *port = num(port);
        }
    }
    r
}

/// OpenFlow 1.0's `mod_vlan_vid:V` / `mod_vlan_pcp:P` push a tag when the packet has none
/// (`push_vlan_if_needed`); nicbench reads them as `SetField{VlanTci, ..}` with the CFI
/// ("present") bit in the mask and set, meaning "tagged afterwards". OpenFlow 1.3+ cannot say
/// "push if needed", so OVS prints such a rule as `push_vlan:0x8100,set_field:V->vlan_vid`
/// when its match does not guarantee a tag (and the set_field alone when it does). This
/// maps that print-out back, for comparing a 1.3+ dump with the rules as installed.
fn mod_vlan_vid_as_of10(rule: &OfRule) -> OfRule {
    use openflow::{OfAction, OfField};
    let mut r = rule.clone();
    let mut out = Vec::new();
    let mut i = 0;
    while i < r.actions.len() {
        let is_push = r.actions[i] == OfAction::PushVlan { tpid: 0x8100 };
        let next_sets_vid = matches!(
            r.actions.get(i + 1),
            Some(OfAction::SetField {
                field: OfField::VlanTci,
                mask: 0x1fff | 0xf000,
                ..
            })
        );
        if is_push && next_sets_vid {
            i += 1; // keep the set_field only
        }
        out.push(r.actions[i].clone());
        i += 1;
    }
    r.actions = out;
    r
}

fn strip_volatile(f: &DpFlow) -> DpFlow {
    DpFlow {
        ufid: None,
        other_keys: Vec::new(),
        placement: Default::default(),
        dp_extra_info: None,
        ..f.clone()
    }
}

#[test]
fn real_vswitchd_rules_and_megaflows_round_trip() {
    const TEST: &str = "real_vswitchd_rules_and_megaflows_round_trip";
    if !tools_or_skip(
        TEST,
        &[
            "ovsdb-tool",
            "ovsdb-server",
            "ovs-vswitchd",
            "ovs-vsctl",
            "ovs-ofctl",
            "ovs-appctl",
        ],
    ) {
        return;
    }
    let ovs = Ovs::start("a");
    let rules_file = ovs.dir.join("rules.of");
    std::fs::write(&rules_file, BRIDGE_RULES).expect("write rules");
    ovs.ok("ovs-ofctl", &["add-flows", "br0", &rules_file.display().to_string()]);

    // OpenFlow: what the bridge holds reads back as what was installed (ports by number
    // with --no-names, by name with --names).
    let ours: Vec<OfRule> = openflow::parse_file(BRIDGE_RULES, "rules.of").expect("parse rules");
    let key = |r: &OfRule| (r.table, std::cmp::Reverse(r.priority));
    let mut want_numbers: Vec<OfRule> = ours.iter().map(port_numbers).collect();
    let mut want_names = ours.clone();
    want_numbers.sort_by_key(key);
    want_names.sort_by_key(key);
    // OpenFlow 1.3/1.5 dumps print OXM forms (set_field:4103->vlan_vid, OFPST_FLOW reply).
    for (args, want) in [
        (&["dump-flows", "--no-names", "br0"][..], &want_numbers),
        (&["dump-flows", "--names", "br0"][..], &want_names),
        (
            &["-O", "OpenFlow13", "dump-flows", "--no-names", "br0"][..],
            &want_numbers,
        ),
        (&["-O", "OpenFlow15", "dump-flows", "--names", "br0"][..], &want_names),
    ] {
        let flag = args.join(" ");
        let dump = ovs.ok("ovs-ofctl", args);
        let mut got = openflow::parse_file(&dump, "dump-flows").unwrap_or_else(|e| panic!("{e}\n{dump}"));
        if args[0] == "-O" {
            got = got.iter().map(mod_vlan_vid_as_of10).collect();
        }
        got.sort_by_key(key);
        assert_eq!(&got, want, "dump-flows {flag}:\n{dump}");
    }

    // Datapath: megaflows built by real upcalls.
    for p in PACKETS {
        ovs.appctl(&["netdev-dummy/receive", "p1", p]);
    }
    let dump = ovs.dump_when(PACKETS.len(), &[]);
    let flows = openflow::parse_dp_flows(&dump, "dpctl").unwrap_or_else(|e| panic!("{e}\n{dump}"));
    assert!(flows.len() >= PACKETS.len(), "{dump}");
    let lines: Vec<&str> = dump.lines().filter(|l| !l.starts_with("flow-dump")).collect();
    for (f, line) in flows.iter().zip(&lines) {
        assert_eq!(openflow::dp_flow_to_string(f).expect("write"), *line);
    }
    // What the megaflows say, read through nicbench's types.
    use openflow::{DpAction, FieldMatch, OfField};
    let has = |f: &DpFlow, field: OfField, value: u128, mask: u128| {
        f.masked_keys().contains(&FieldMatch { field, value, mask })
    };
    assert!(
        flows.iter().any(
            |f| has(f, OfField::NwSrc, 0x0a00_0000, 0xff00_0000) && f.actions == vec![DpAction::Output { port: 2 }]
        ),
        "{dump}"
    );
    assert!(
        flows
            .iter()
            .any(|f| has(f, OfField::VlanTci, 0x7005, 0xffff) && f.actions.contains(&DpAction::PopVlan)),
        "{dump}"
    );
    assert!(
        flows.iter().any(|f| f.actions.contains(&DpAction::Set {
            field: OfField::NwDst,
            value: 0xc0a8_0101,
            mask: 0xffff_ffff
        })),
        "{dump}"
    );
    assert!(
        flows
            .iter()
            .any(|f| f.actions.iter().any(|a| matches!(a, DpAction::Ct { .. }))),
        "{dump}"
    );
    assert!(
        flows.iter().any(|f| f
            .actions
            .iter()
            .any(|a| matches!(a, DpAction::PushVlan { tci, .. } if tci & 0xfff == 7))),
        "{dump}"
    );

    // Verbose dump: same flows (ufid, dp:, wildcarded keys and extra info aside).
    let verbose = ovs.dump_when(flows.len(), &["-m", "--no-names"]);
    let vflows = openflow::parse_dp_flows(&verbose, "dpctl -m").unwrap_or_else(|e| panic!("{e}\n{verbose}"));
    assert!(
        vflows
            .iter()
            .all(|f| f.ufid.is_some() && f.placement.dp.as_deref() == Some("ovs")),
        "{verbose}"
    );
    let mut a: Vec<String> = flows.iter().map(|f| format!("{:?}", strip_volatile(f))).collect();
    let mut b: Vec<String> = vflows.iter().map(|f| format!("{:?}", strip_volatile(f))).collect();
    a.sort();
    b.sort();
    assert_eq!(a, b);

    // nicbench's writer: OVS accepts its flows and reads the same keys. `dpctl/add-flow`
    // wants the eth() key present even when wildcarded (dumps leave it out), and refuses
    // ct_state keys on this datapath ("updating flow table (Invalid argument)"): those flows
    // are counted, not compared.
    ovs.appctl(&["dpctl/del-flows"]);
    let mut added = Vec::new();
    let mut refused_ct = 0;
    for f in &flows {
        let line = openflow::dp_flow_to_string(f).expect("write");
        let (keys, rest) = line.split_once(", packets:").expect("keys");
        let actions = rest.split_once("actions:").expect("actions").1;
        let keys = if keys.contains("eth(") {
            keys.to_string()
        } else {
            keys.replacen("eth_type(", "eth(),eth_type(", 1)
        };
        let t = format!("{}/vswitchd.ctl", ovs.dir.display());
        let out = ovs.cmd("ovs-appctl", &["-t", &t, "dpctl/add-flow", &keys, actions]);
        if out.status.success() {
            added.push(f);
        } else if f.keys.iter().any(|k| k.field == OfField::CtState) {
            refused_ct += 1;
        } else {
            panic!(
                "dpctl/add-flow {keys} {actions}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    assert!(
        added.len() >= flows.len() - refused_ct && added.len() >= 5,
        "{} added, {refused_ct} refused",
        added.len()
    );
    let again = openflow::parse_dp_flows(&ovs.dump_when(added.len(), &[]), "dpctl").expect("parse");
    let mut x: Vec<String> = added
        .iter()
        .map(|f| format!("{:?}{:?}", f.masked_keys(), f.actions))
        .collect();
    let mut y: Vec<String> = again
        .iter()
        .map(|f| format!("{:?}{:?}", f.masked_keys(), f.actions))
        .collect();
    x.sort();
    y.sort();
    assert_eq!(x, y);
}

/// A VXLAN packet from the underlay peer 1.1.2.92 to 1.1.2.88 (VNI `vni`), as bytes: outer
/// Ethernet to `dst_mac`, IPv4 (valid checksum: tnl_pop checks it), UDP 4789, VXLAN, and an
/// inner Ethernet/IPv4/UDP frame.
fn vxlan_frame(dst_mac: [u8; 6], vni: u32) -> Vec<u8> {
    fn ipv4(src: [u8; 4], dst: [u8; 4], payload: &[u8]) -> Vec<u8> {
        let mut h = vec![0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 17, 0, 0];
        h[2..4].copy_from_slice(&((20 + payload.len()) as u16).to_be_bytes());
        h.extend_from_slice(&src);
        h.extend_from_slice(&dst);
        let mut sum: u32 = h.chunks(2).map(|w| u16::from_be_bytes([w[0], w[1]]) as u32).sum();
        while sum > 0xffff {
            sum = (sum >> 16) + (sum & 0xffff);
        }
        h[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
        h.extend_from_slice(payload);
        h
    }
    fn udp(src: u16, dst: u16, payload: &[u8]) -> Vec<u8> {
        let mut u = Vec::new();
        u.extend_from_slice(&src.to_be_bytes());
        u.extend_from_slice(&dst.to_be_bytes());
        u.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
        u.extend_from_slice(&[0, 0]);
        u.extend_from_slice(payload);
        u
    }
    let mut inner = vec![0x50, 0x54, 0, 0, 0, 0x05, 0x50, 0x54, 0, 0, 0, 0x09, 0x08, 0x00];
    inner.extend(ipv4([10, 0, 0, 9], [10, 0, 0, 2], &udp(8, 9, &[0; 8])));
    let mut vx = vec![0x08, 0, 0, 0];
    vx.extend_from_slice(&(vni << 8).to_be_bytes());
    vx.extend(inner);
    let mut frame = dst_mac.to_vec();
    frame.extend_from_slice(&[0xf8, 0xbc, 0x12, 0x44, 0x34, 0xb6, 0x08, 0x00]);
    frame.extend(ipv4([1, 1, 2, 92], [1, 1, 2, 88], &udp(51283, 4789, &vx)));
    frame
}

#[test]
fn real_vxlan_megaflows_round_trip() {
    const TEST: &str = "real_vxlan_megaflows_round_trip";
    if !tools_or_skip(
        TEST,
        &[
            "ovsdb-tool",
            "ovsdb-server",
            "ovs-vswitchd",
            "ovs-vsctl",
            "ovs-ofctl",
            "ovs-appctl",
        ],
    ) {
        return;
    }
    let ovs = Ovs::start("vx");
    // Underlay bridge brx (IP 1.1.2.88, peer 1.1.2.92 resolved by hand) with physical port p0;
    // br0's VXLAN port vx0 (ofport 4) with the VNI from the flow, as OVS's tunnel tests do.
    ovs.vsctl(&[
        "add-br",
        "brx",
        "--",
        "set",
        "bridge",
        "brx",
        "datapath_type=dummy",
        "--",
        "add-port",
        "brx",
        "p0",
        "--",
        "set",
        "interface",
        "p0",
        "type=dummy",
        "--",
        "add-port",
        "br0",
        "vx0",
        "--",
        "set",
        "interface",
        "vx0",
        "type=vxlan",
        "options:remote_ip=1.1.2.92",
        "options:key=flow",
        "ofport_request=4",
    ]);
    ovs.appctl(&["netdev-dummy/ip4addr", "brx", "1.1.2.88/24"]);
    ovs.appctl(&["ovs/route/add", "1.1.2.92/24", "brx"]);
    ovs.appctl(&["tnl/arp/set", "brx", "1.1.2.92", "f8:bc:12:44:34:b6"]);
    ovs.ok("ovs-ofctl", &["add-flow", "brx", "actions=normal"]);
    let rules = "priority=10,in_port=p3,ip,actions=set_tunnel:42,output:vx0\npriority=10,in_port=vx0,tun_id=42,actions=output:p3\n";
    for line in rules.lines() {
        openflow::parse_rule(line).expect("nicbench reads the rule");
        ovs.ok("ovs-ofctl", &["add-flow", "br0", line]);
    }
    ovs.appctl(&[
        "netdev-dummy/receive",
        "p3",
        "eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=10.0.0.2,dst=10.0.0.9,proto=17,tos=0,ttl=64,frag=no),udp(src=8,dst=9)",
    ]);
    let mac_text = ovs.vsctl(&["get", "interface", "brx", "mac_in_use"]);
    let mac: Vec<u8> = mac_text
        .trim()
        .trim_matches('"')
        .split(':')
        .map(|b| u8::from_str_radix(b, 16).expect("mac"))
        .collect();
    let frame = vxlan_frame(mac.try_into().expect("6 bytes"), 42);
    let hex: String = frame.iter().map(|b| format!("{b:02x}")).collect();
    ovs.appctl(&["netdev-dummy/receive", "p0", &hex]);
    // encap, underlay decap (tnl_pop), and the tunnel-keyed flow after decap.
    let dump = ovs.dump_when(3, &[]);
    let flows = openflow::parse_dp_flows(&dump, "dpctl").unwrap_or_else(|e| panic!("{e}\n{dump}"));
    let lines: Vec<&str> = dump.lines().filter(|l| !l.starts_with("flow-dump")).collect();
    for (f, line) in flows.iter().zip(&lines) {
        assert_eq!(openflow::dp_flow_to_string(f).expect("write"), *line);
    }
    use openflow::{DpAction, OfField};
    let tnl = |f: &DpFlow, prefix: &str| {
        f.actions
            .iter()
            .any(|a| matches!(a, DpAction::Tunnel { text } if text.starts_with(prefix)))
    };
    assert!(
        flows.iter().any(|f| tnl(f, "tnl_push(")
            && f.actions
                .iter()
                .any(|a| matches!(a, DpAction::Tunnel { text } if text.contains("vni=0x2a")))),
        "{dump}"
    );
    assert!(flows.iter().any(|f| tnl(f, "tnl_pop(")), "{dump}");
    assert!(
        flows
            .iter()
            .any(|f| f.keys.iter().any(|k| k.field == OfField::TunId && k.value == 42)
                && f.keys
                    .iter()
                    .any(|k| k.field == OfField::TunSrc && k.value == 0x0101_025c)),
        "{dump}"
    );
    let verbose = ovs.dump_when(flows.len(), &["-m", "--no-names"]);
    let vflows = openflow::parse_dp_flows(&verbose, "dpctl -m").unwrap_or_else(|e| panic!("{e}\n{verbose}"));
    let mut a: Vec<String> = flows.iter().map(|f| format!("{:?}", strip_volatile(f))).collect();
    let mut b: Vec<String> = vflows.iter().map(|f| format!("{:?}", strip_volatile(f))).collect();
    a.sort();
    b.sort();
    assert_eq!(a, b);
}
