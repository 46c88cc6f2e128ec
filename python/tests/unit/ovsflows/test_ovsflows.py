"""`nicbench.ovsflows`: OpenFlow files and dpctl/dump-flows text through the Rust parsers and
writers, and how the CLI reports their errors (one line with file:line:col, exit 2)."""

from __future__ import annotations

import json

import pytest

from nicbench.errors import NicbenchError, RuleError
from nicbench.ovsflows import format_dpflows, load_openflow, openflow_summary, parse_dpflows

RULES = """\
# PVP-style rules, ports by name as ovs-ofctl allows
priority=100,in_port=dpdk0,ip,nw_src=10.0.0.1,nw_dst=20.0.0.1,actions=output:vhost0
priority=100,in_port=vhost0,ip,nw_src=20.0.0.1,nw_dst=10.0.0.1,actions=output:dpdk0
table=1,priority=10,tcp,tp_dst=80,actions=mod_vlan_vid:7,resubmit(,2)
"""

# Lines as OVS 3.1's userspace datapath prints them (dpctl/dump-flows).
DUMP = (
    "flow-dump from the main thread:\n"
    "recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth_type(0x0800)"
    ",ipv4(src=10.0.0.2/255.0.0.0,frag=no), packets:3, bytes:180, used:0.512s, actions:2\n"
    "recirc_id(0),in_port(2),eth(),eth_type(0x8100),vlan(vid=5/0xf,pcp=2)"
    ",encap(eth_type(0x86dd),ipv6(src=2001:db8::1,dst=2001:db8::/ffff:ffff::,proto=17,frag=first)"
    ",udp(src=1)), packets:0, bytes:0, used:never, actions:push_vlan(vid=7,pcp=1),1,2\n"
)


def test_load_openflow_reads_tables_ports_and_fields(tmp_path):
    path = tmp_path / "pvp.of"
    path.write_text(RULES)
    rules = load_openflow(path)
    assert [r["line"] for r in rules] == [2, 3, 4]
    first = rules[0]["rule"]
    assert first["priority"] == 100 and first["table"] == 0
    assert first["matches"]["in_port"] == {"name": "dpdk0"}
    assert {"field": "nw_src", "value": 0x0A000001, "mask": 0xFFFFFFFF} in first["matches"]["fields"]
    assert first["actions"] == [{"action": "output", "port": {"name": "vhost0"}}]
    third = rules[2]["rule"]
    assert third["actions"][0] == {"action": "set_field", "field": "vlan_tci", "value": 0x1007, "mask": 0x1FFF}
    assert third["actions"][1] == {"action": "resubmit", "port": None, "table": 2}
    assert openflow_summary(rules) == {
        "rules": 3,
        "tables": {0: 2, 1: 1},
        "priorities": 2,
        "actions": {"output": 2, "resubmit": 1, "set_field": 1},
    }


def test_load_openflow_error_names_file_line_column(tmp_path):
    path = tmp_path / "bad.of"
    path.write_text("ip,actions=drop\nip,nw_srx=1.2.3.4,actions=drop\ntcp,tp_dst=99999,actions=drop\n")
    with pytest.raises(RuleError) as err:
        load_openflow(path)
    message = str(err.value)
    assert message.startswith(f"{path}:2:4: unknown match field 'nw_srx' (allowed: table, priority")
    assert message.endswith("(and 1 more error)")
    with pytest.raises(OSError):
        load_openflow(tmp_path / "missing.of")


def test_dpflows_round_trip_and_big_masks():
    flows = parse_dpflows(DUMP, "dump.txt")
    assert len(flows) == 2
    assert flows[0]["packets"] == 3 and flows[0]["used"] == "0.512s"
    assert {"field": "nw_src", "value": 0x0A000002, "mask": 0xFF000000} in flows[0]["keys"]
    v6 = next(k for k in flows[1]["keys"] if k["field"] == "ipv6_dst")
    assert v6["mask"] == 0xFFFFFFFF << 96  # 128-bit values cross the JSON boundary intact
    assert flows[1]["other_keys"] == ["eth()"]
    assert format_dpflows(flows) == "".join(line + "\n" for line in DUMP.splitlines()[1:])
    # Edit a flow in Python and write it: the writer follows OVS's formats.
    flows[0]["keys"] = [k for k in flows[0]["keys"] if k["field"] != "nw_src"]
    flows[0]["placement"] = {"offloaded": True, "dp": "tc"}
    assert format_dpflows(flows[:1]) == (
        "recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth_type(0x0800),"
        "ipv4(frag=no), packets:3, bytes:180, used:0.512s, offloaded:yes, dp:tc, "
        "actions:2\n"
    )


def test_dpflows_errors():
    with pytest.raises(RuleError, match=r"^dump.txt:1:14: in_port\(p1\): datapath ports must be numbers"):
        parse_dpflows("recirc_id(0),in_port(p1), packets:0, bytes:0, actions:2", "dump.txt")
    with pytest.raises(NicbenchError, match="invalid configuration"):
        format_dpflows([{"keys": "not a list"}])
    with pytest.raises(RuleError, match="cannot be written as one action"):
        flow = parse_dpflows("in_port(1), packets:0, bytes:0, actions:2")[0]
        flow["actions"] = [{"action": "other", "text": "a,b"}]
        format_dpflows([flow])


def test_cli_openflow_summary_and_one_line_errors(cli, tmp_path):
    path = tmp_path / "pvp.of"
    path.write_text(RULES)
    proc = cli("rules", "openflow", str(path), "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["tables"] == {"0": 2, "1": 1}
    proc = cli("rules", "openflow", str(path))
    assert proc.returncode == 0 and "nicbench vswitch --openflow" in " ".join(proc.stdout.split())
    bad = tmp_path / "bad.of"
    bad.write_text("ip,actions=output:1,frobnicate\n")
    proc = cli("rules", "openflow", str(bad))
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"nicbench: error: {bad}:1:21: unknown action 'frobnicate' (allowed: output:PORT, output(port=PORT), "
        "a port number, drop, normal, in_port, controller, local, flood, all, mod_dl_src:, mod_dl_dst:, "
        "mod_nw_src:, mod_nw_dst:, mod_nw_tos:, mod_nw_ecn:, mod_nw_ttl:, mod_tp_src:, mod_tp_dst:, "
        "mod_vlan_vid:, mod_vlan_pcp:, set_field:V->FIELD, push_vlan:TPID, strip_vlan, pop_vlan, set_tunnel:, "
        "set_tunnel64:, resubmit:PORT, resubmit(PORT,TABLE), goto_table:T, ct(...), dec_ttl; a port given by name "
        "needs output:NAME)"
    ]
    # rules check (rte_flow syntaxes) recognises the file and points to where it belongs.
    proc = cli("rules", "check", str(path))
    assert proc.returncode == 2
    assert "Open vSwitch OpenFlow rules" in proc.stderr and "nicbench vswitch --openflow" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
