"""The datapath's experiment targets: `vswitch.megaflows` and `ovs-pvp.run` take a rule file and a trace by
path, and their metrics are the models' results flattened (the same numbers as the CLI's `--json`)."""

from __future__ import annotations

import json

from helpers import forked_cli, paced, python_module

from nicbench.experiments.targets import RunContext, get_target

scapy_all = python_module("scapy.all", "scapy")

RULES = """table=0,priority=10,in_port=p0,ip,nw_src=10.0.0.0/8,actions=output:vm
table=0,priority=10,in_port=vm,ip,actions=output:p0
table=0,priority=0,actions=drop
"""


def _files(tmp_path):
    rules = tmp_path / "pvp.of"
    rules.write_text(RULES)
    e = scapy_all.Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    frames = [
        e / scapy_all.IP(src=f"10.0.0.{i + 1}", dst="20.0.0.1") / scapy_all.UDP(sport=1000 + i, dport=53) / (b"\0" * 18)
        for i in range(12)
    ]
    scapy_all.wrpcap(str(tmp_path / "t.pcap"), paced(frames))
    return rules, tmp_path / "t.pcap"


def _run(name, **params):
    t = get_target(name)
    return t.run({**t.defaults(), **params}, RunContext(seed=1, rep=0, target=t))


def _metrics(rows):
    return {m: v for m, v, _unit, t in rows if t is None}


def test_ovs_pvp_run_gives_the_cli_numbers(tmp_path):
    rules, pcap = _files(tmp_path)
    got = _metrics(_run("ovs-pvp.run", openflow=str(rules), trace=str(pcap), nic="agilio-cx-25g"))
    done = forked_cli("vswitch", "--nic", "agilio-cx-25g", "--openflow", str(rules), "--trace", str(pcap), "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert got["mpps"] == out["pvp"]["mpps"] and got["flows"] == out["flows"] == 12
    assert (got["uplink_megaflows"], got["vf_megaflows"], got["megaflows_offloaded"]) == (1, 1, 2)


def test_vswitch_megaflows_takes_the_rule_file_by_path(tmp_path):
    rules, pcap = _files(tmp_path)
    got = _metrics(_run("vswitch.megaflows", openflow=str(rules), trace=str(pcap), nic="connectx5-25g"))
    assert (got["packets"], got["megaflows"], got["offloaded_flows"], got["upcalls"]) == (12, 1, 1, 1)
