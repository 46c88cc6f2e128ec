"""`nicbench vswitch` (no subcommand): Red Hat PVP with the user's rules and trace. The virtual OVS
datapath decides the megaflows of both passes (uplink -> VM, VM -> uplink); their counts per mask
and what the NIC took must be exactly what the PVP model is then given, and the rate must follow
from them (offloaded: NIC or VM bound; refused: the host's software datapath, with host cores busy)."""

from __future__ import annotations

import json

from helpers import forked_cli, paced, python_module

scapy_all = python_module("scapy.all", "scapy")

# One rule per direction, as Red Hat PVP installs them; ttl decides nothing for offload on Agilio.
PVP_RULES = """table=0,priority=10,in_port=p0,ip,nw_src=10.0.0.0/8,actions=output:vm
table=0,priority=10,in_port=vm,ip,actions=output:p0
table=0,priority=0,actions=drop
"""


def _files(tmp_path, flows: int = 20):
    rules = tmp_path / "pvp.of"
    rules.write_text(PVP_RULES)
    e = scapy_all.Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    frames = [
        e / scapy_all.IP(src=f"10.0.0.{i + 1}", dst="20.0.0.1") / scapy_all.UDP(sport=1000 + i, dport=53) / (b"\0" * 18)
        for i in range(flows)
    ]
    pcap = tmp_path / "t.pcap"
    scapy_all.wrpcap(str(pcap), paced(frames))
    return rules, pcap


def _run(tmp_path, *extra):
    rules, pcap = _files(tmp_path)
    done = forked_cli("vswitch", "--openflow", str(rules), "--trace", str(pcap), "--json", *extra)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_both_passes_build_the_pvp_load_and_the_rate_follows_from_it(tmp_path):
    from nicbench import pvp

    out = _run(tmp_path, "--nic", "agilio-cx-25g")
    # One mask per ingress: the uplink rule's nw_src/8 (prefix trie) and the VM rule's in_port only.
    assert sorted((m["ingress"], m["megaflows"], m["offloaded"]) for m in out["load"]["masks"]) == [
        ("uplink", 1, 1),
        ("vf", 1, 1),
    ]
    assert out["flows"] == 20 and out["frame_bytes"] == 64
    # The same load given to the PVP model directly gives the same prediction.
    direct = pvp.predict("agilio-cx-25g", 20, 64, megaflows=out["load"])
    assert out["pvp"]["mpps"] == direct["mpps"] and out["pvp"]["bottleneck"] == direct["bottleneck"]
    assert out["pvp"]["host_cores_busy"] == 0


def test_skip_hw_puts_every_megaflow_on_the_host(tmp_path):
    offloaded = _run(tmp_path, "--nic", "agilio-cx-25g")
    software = _run(tmp_path, "--nic", "agilio-cx-25g", "--tc-policy", "skip_hw")
    assert all(m["offloaded"] == 0 for m in software["load"]["masks"])
    assert software["pvp"]["bottleneck"] == "host_datapath"
    assert software["pvp"]["host_cores_busy"] > 0
    assert software["pvp"]["mpps"] < offloaded["pvp"]["mpps"]


def test_missing_inputs_and_a_one_way_rule_set_are_one_line_errors(tmp_path):
    rules, pcap = _files(tmp_path)
    done = forked_cli("vswitch", "--openflow", str(rules))
    assert done.returncode == 2 and done.stderr.startswith("nicbench: error: vswitch: give --openflow")
    one_way = tmp_path / "one_way.of"
    one_way.write_text("priority=10,in_port=p0,ip,actions=output:vm\npriority=0,actions=drop\n")
    done = forked_cli("vswitch", "--openflow", str(one_way), "--trace", str(pcap))
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "arriving on 'vm'" in done.stderr
