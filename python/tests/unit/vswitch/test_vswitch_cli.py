"""`nicbench vswitch megaflows` as a user runs it: megaflows in dpctl/dump-flows syntax, offload
refusals with their reason, JSON, and one-line errors with exit code 2. Expected megaflows are
worked out by hand from OVS's classifier rules (and the same rules are checked against real OVS in
python/tests/peers/test_vswitch_vs_ovs.py)."""

from __future__ import annotations

import json

from helpers import forked_cli, paced, python_module

from nicbench import models

scapy_all = python_module("scapy.all", "scapy")

RULES = """priority=100,ip,nw_src=10.0.0.0/8,actions=output:p1
priority=50,ip,nw_ttl=7,actions=output:p1
"""


def _files(tmp_path):
    rules = tmp_path / "rules.of"
    rules.write_text(RULES)
    e = scapy_all.Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    frames = [
        e / scapy_all.IP(src="192.168.0.1", dst="1.1.1.1", ttl=7) / scapy_all.UDP(),
        e / scapy_all.IP(src="10.1.1.1", dst="1.1.1.1") / scapy_all.UDP(),
        e / scapy_all.IP(src="10.1.1.1", dst="1.1.1.2") / scapy_all.UDP(),
    ]
    pcap = tmp_path / "t.pcap"
    scapy_all.wrpcap(str(pcap), paced(frames))
    return rules, pcap


def test_megaflows_printed_as_dpctl_dump_flows(tmp_path):
    rules, pcap = _files(tmp_path)
    done = forked_cli("vswitch", "megaflows", "--openflow", str(rules), "--pcap", str(pcap), "--in-port", "p0")
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("recirc_id")]
    # 192.168.0.1: the nw_src trie (10/8) decides on the first bit; the ttl rule matches (all 8 bits).
    assert lines[0].startswith(
        "recirc_id(0),in_port(1),eth_type(0x0800),ipv4(src=128.0.0.0/128.0.0.0,ttl=7,frag=no), packets:0"
    ), lines[0]
    assert lines[0].endswith("actions:2")
    # 10.1.1.1 and 10.1.1.2: one megaflow (10/8 exact, the ttl subtable never probed), hit once.
    assert lines[1].startswith(
        "recirc_id(0),in_port(1),eth_type(0x0800),ipv4(src=10.0.0.0/255.0.0.0,frag=no), packets:1, bytes:42"
    ), lines[1]
    assert len(lines) == 2
    assert "3 packets, 2 megaflows, 2 upcalls" in done.stdout


def test_offload_refusal_reason_per_nic(tmp_path):
    rules, pcap = _files(tmp_path)
    cx5 = forked_cli("vswitch", "megaflows", "--openflow", str(rules), "--pcap", str(pcap), "--nic", "connectx5-25g")
    # The packets arrive on p0 (the default): the first megaflow matched nw_ttl, which ConnectX-5
    # on kernel 4.15 cannot match; the second is offloaded.
    assert cx5.returncode == 0, cx5.stderr
    assert "offloaded:no, dp:tc, actions:2  # not offloaded: mlx5_core: cannot match nw_ttl" in cx5.stdout
    assert "offloaded:yes, dp:tc" in cx5.stdout
    agilio = forked_cli(
        "vswitch", "megaflows", "--openflow", str(rules), "--pcap", str(pcap), "--nic", "agilio-cx-25g", "--json"
    )
    result = json.loads(agilio.stdout)
    assert result["offloaded_flows"] == 2 and result["refusals"] == {}
    skip_sw = forked_cli(
        "vswitch",
        "megaflows",
        "--openflow",
        str(rules),
        "--pcap",
        str(pcap),
        "--nic",
        "connectx5-25g",
        "--tc-policy",
        "skip_sw",
        "--json",
    )
    flows = json.loads(skip_sw.stdout)["megaflows"]
    assert [f["flow"]["placement"] for f in flows] == [
        {"offloaded": False, "dp": "ovs"},
        {"offloaded": True, "dp": "tc"},
    ]


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    rules, pcap = _files(tmp_path)
    missing = forked_cli("vswitch", "megaflows", "--openflow", str(tmp_path / "none.json"), "--pcap", str(pcap))
    assert missing.returncode == 2 and missing.stderr.startswith("nicbench: error: ") and "none.json" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1
    bad = tmp_path / "bad.json"
    bad.write_text('[\n  {"table": 0,\n  oops}\n]')
    parsed = forked_cli("vswitch", "megaflows", "--openflow", str(bad), "--pcap", str(pcap))
    assert parsed.returncode == 2 and f"{bad}:3:3:" in parsed.stderr, parsed.stderr
    bad_policy = forked_cli("vswitch", "megaflows", "--openflow", str(rules), "--pcap", str(pcap), "--tc-policy", "x")
    assert bad_policy.returncode == 2 and "skip_sw" in bad_policy.stderr and "Traceback" not in bad_policy.stderr
    nopcap = forked_cli("vswitch", "megaflows", "--openflow", str(rules), "--pcap", str(tmp_path / "x.pcap"))
    assert nopcap.returncode == 2 and "x.pcap" in nopcap.stderr, nopcap.stderr


def test_api_names_the_rule_with_an_unknown_port(tmp_path):
    import pytest

    from nicbench import vswitch
    from nicbench.errors import NicbenchError

    rules, pcap = _files(tmp_path)
    ports = [{"name": "p0", "ofport": 1, "dp_port": 1}]
    with pytest.raises(NicbenchError, match=r"rule 0: port 'p1' is not on the bridge \(ports: p0\)"):
        vswitch.megaflows(rules, pcap, in_port="p0", ports=ports)
    with pytest.raises(NicbenchError, match="nics: agilio-cx-25g, connectx5-25g"):
        vswitch.megaflows(rules, pcap, in_port="p0", nic="bluefield")


def test_request_and_result_follow_the_contract(tmp_path):
    import jsonschema

    from nicbench import vswitch

    rules, pcap = _files(tmp_path)
    request = vswitch.build_request(rules, pcap, in_port="p0", nic="agilio-cx-25g")
    jsonschema.validate(request, models.contract_schema("vswitch", "request"))
    result = vswitch.megaflows(rules, pcap, in_port="p0", nic="agilio-cx-25g")
    jsonschema.validate(result, models.contract_schema("vswitch", "result"))
    assert all(p["provenance"] for p in result["costs"].values())
    assert result["caps"]["sources"], "the NIC's capabilities carry their provenance"


def test_vxlan_port_decap_and_encap_from_the_cli(tmp_path):
    """`--port vx=vxlan,...`: VXLAN frames arriving on the underlay port are popped (one underlay
    megaflow) and their inner packets matched by VNI; output to vx pushes the header. The expected
    lines are what OVS 3.1 printed for the same setup (python/tests/peers/test_vswitch_tunnels_vs_ovs.py
    checks the datapath against OVS itself)."""
    rules = tmp_path / "vx.of"
    rules.write_text(
        "priority=10,in_port=vx,tun_id=100,ip,actions=output:vm\n"
        "priority=10,in_port=vm,ip,actions=set_tunnel:101,output:vx\n"
    )
    e = scapy_all.Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    inner = bytes(e / scapy_all.IP(src="10.0.0.1", dst="20.0.0.1") / scapy_all.UDP(sport=1, dport=2))
    outer = (
        scapy_all.Ether(src="aa:55:aa:55:00:02", dst="aa:55:aa:55:00:00")
        / scapy_all.IP(src="172.31.1.2", dst="172.31.1.1")
        / scapy_all.UDP(sport=5555, dport=4789)
        / (b"\x08\x00\x00\x00" + (100).to_bytes(3, "big") + b"\x00" + inner)
    )
    scapy_all.wrpcap(str(tmp_path / "under.pcap"), paced([outer, outer]))
    scapy_all.wrpcap(str(tmp_path / "vm.pcap"), [scapy_all.Ether(inner)])
    port = (
        "vx=vxlan,remote_ip=172.31.1.2,local_ip=172.31.1.1,underlay=p0,key=flow,"
        "remote_mac=aa:55:aa:55:00:02,local_mac=aa:55:aa:55:00:00"
    )
    decap = forked_cli(
        "vswitch",
        "megaflows",
        "--openflow",
        str(rules),
        "--pcap",
        str(tmp_path / "under.pcap"),
        "--in-port",
        "p0",
        "--port",
        port,
    )
    assert decap.returncode == 0, decap.stderr
    lines = [line for line in decap.stdout.splitlines() if "actions:" in line]
    # Ports: vm (OpenFlow 1, dp 1), vx (OpenFlow 2, dp 4789); the underlay's p0 is dp 2 (the first free),
    # its LOCAL port dp 101.
    assert lines[0] == (
        "recirc_id(0),in_port(2),eth(src=aa:55:aa:55:00:02,dst=aa:55:aa:55:00:00),eth_type(0x0800),"
        "ipv4(dst=172.31.1.1,proto=17,frag=no),udp(dst=4789), packets:1, bytes:92, used:0.000s, "
        "actions:tnl_pop(4789)"
    ), lines
    assert lines[1].startswith(
        "tunnel(tun_id=0x64,src=172.31.1.2,dst=172.31.1.1,flags(-df+csum+key)),recirc_id(0),"
        "in_port(4789),eth_type(0x0800),ipv4(frag=no), packets:1"
    ), lines
    assert lines[1].endswith("actions:1"), lines
    encap = forked_cli(
        "vswitch",
        "megaflows",
        "--openflow",
        str(rules),
        "--pcap",
        str(tmp_path / "vm.pcap"),
        "--in-port",
        "vm",
        "--port",
        port,
        "--nic",
        "agilio-cx-25g",
    )
    assert encap.returncode == 0, encap.stderr
    line = next(line for line in encap.stdout.splitlines() if "actions:" in line)
    assert "ipv4(tos=0/0x3,frag=no)" in line and "offloaded:yes" in line, line
    assert line.endswith(
        "actions:tnl_push(tnl_port(4789),header(size=50,type=4,eth(dst=aa:55:aa:55:00:02,"
        "src=aa:55:aa:55:00:00,dl_type=0x0800),ipv4(src=172.31.1.1,dst=172.31.1.2,proto=17,tos=0,"
        "ttl=64,frag=0x4000),udp(src=0,dst=4789,csum=0x0),vxlan(flags=0x8000000,vni=0x65)),"
        "out_port(101)),2"
    ), line


def test_in_port_no_rule_matches_is_noted(tmp_path):
    """Packets on a port that no rule matches only meet the rules without an in_port match, as in OVS
    (not an error); a note names the ports the rules do match, since that is usually a typo."""
    rules, pcap = _files(tmp_path)
    rules.write_text("priority=100,in_port=eth1,ip,actions=output:eth2\npriority=1,actions=drop\n")
    typo = forked_cli("vswitch", "megaflows", "--openflow", str(rules), "--pcap", str(pcap), "--in-port", "eht1")
    assert typo.returncode == 0, typo.stderr
    assert "no rule matches in_port=eht1 (the rules match in_port eth1)" in typo.stderr
    assert "actions:drop" in typo.stdout
    right = forked_cli("vswitch", "megaflows", "--openflow", str(rules), "--pcap", str(pcap), "--in-port", "eth1")
    assert right.returncode == 0 and "no rule matches" not in right.stderr
    assert "in_port(1)" in right.stdout and "actions:2" in right.stdout  # eth1, eth2: ports 1, 2 by name


def test_flow_set_up_line_json_and_handler_threads(tmp_path):
    """The flow set-up as the CLI reports it. Three packets of one flow 1 µs apart (upcall_us 6.4 µs
    in the default host): one upcall installs the flow at 6.4 µs, the two packets before that are
    duplicate upcalls; `--handler-threads` sets the threads (default: the host's 8 datapath cores),
    and a bad count is one line, exit 2."""
    rules = tmp_path / "rules.of"
    rules.write_text("priority=10,ip,actions=output:p1\n")
    frame = scapy_all.Ether() / scapy_all.IP(src="10.0.0.1", dst="10.0.0.2") / scapy_all.UDP()
    pcap = tmp_path / "burst.pcap"
    scapy_all.wrpcap(str(pcap), paced([frame] * 3, gap_s=1e-6))
    args = ("vswitch", "megaflows", "--openflow", str(rules), "--pcap", str(pcap))
    text = forked_cli(*args)
    assert text.returncode == 0, text.stderr
    line = text.stdout.strip().splitlines()[-1]
    assert line.startswith("flow set-up: 3 upcalls handled (2 duplicate, 0 lost) by 8 handler threads"), line
    assert "1 flows set up (156,250/s)" in line and "flow limit 200,000" in line, line
    two = forked_cli(*args, "--handler-threads", "2", "--json")
    assert two.returncode == 0, two.stderr
    s = json.loads(two.stdout)["flow_setup"]
    assert (s["handler_threads"], s["upcalls_handled"], s["duplicate_upcalls"], s["flows_set_up"]) == (2, 3, 2, 1)
    assert abs(s["handler_busy_s"] - 3 * 6.4e-6) < 1e-12, s
    bad = forked_cli(*args, "--handler-threads", "0")
    assert bad.returncode == 2 and bad.stderr.startswith("nicbench: error: "), bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1 and "--handler-threads" in bad.stderr
