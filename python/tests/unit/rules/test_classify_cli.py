"""`nicbench classify`: per-queue counts, drops, unmatched and per-rule hits on a trace with a known answer."""

from __future__ import annotations

import json

from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Ether
from scapy.utils import wrpcap

RULES = (
    "flow create 0 group 0 priority 0 ingress pattern eth / ipv4 / end actions jump group 1 / end\n"
    "flow create 0 group 1 priority 0 ingress pattern eth / ipv4 src is 10.0.0.1 / udp dst is 53"
    " / end actions queue index 3 / count / end\n"
    "flow create 0 group 1 priority 1 ingress pattern eth / ipv4 dst spec 192.168.0.0 dst mask 255.255.0.0"
    " / end actions queue index 1 / end\n"
    "flow create 0 group 1 priority 2 ingress pattern eth / ipv4 / tcp dst spec 1000 dst last 2000 dst mask 0xffff"
    " / end actions drop / end\n"
)


def test_classify_known_answer(cli, tmp_path):
    rules = tmp_path / "rules.flow"
    rules.write_text(RULES)
    pkts = (
        [Ether() / IP(src="10.0.0.1", dst="192.168.1.1") / UDP(sport=5, dport=53)] * 7  # rule 2 beats rule 3
        + [Ether() / IP(src="10.0.0.2", dst="192.168.1.1") / UDP(sport=5, dport=53)] * 5  # rule 3
        + [Ether() / IP(src="10.0.0.2", dst="172.16.0.1") / TCP(sport=5, dport=1500)] * 4  # rule 4: drop
        + [Ether() / IP(src="10.0.0.2", dst="172.16.0.1") / TCP(sport=5, dport=2500)] * 3  # unmatched in group 1
    )
    pcap = tmp_path / "t.pcap"
    wrpcap(str(pcap), pkts)
    proc = cli("classify", "--rules", str(rules), "--pcap", str(pcap), "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["packets"] == 19
    assert report["queue_action_packets"] == {"3": 7, "1": 5}
    # Unmatched packets go to the port's default RSS: one queue by default.
    assert {q: c["packets"] for q, c in report["queues"].items()} == {"3": 7, "1": 5, "0": 3}
    sizes = [len(p) for p in pkts]
    assert report["queues"]["3"]["bytes"] == sum(sizes[:7])
    assert sum(c["bytes"] for c in report["queues"].values()) == sum(sizes) - sum(sizes[12:16])
    assert report["dropped"] == 4
    assert report["unmatched"] == 3
    hits = {r["line"]: r["hits"] for r in report["rules"]}
    assert hits == {1: 19, 2: 7, 3: 5, 4: 4}


def test_classify_jump_cycle_is_refused_with_its_line(cli, tmp_path):
    rules = tmp_path / "cycle.flow"
    rules.write_text(
        "flow create 0 group 1 ingress pattern eth / end actions jump group 2 / end\n"
        "flow create 0 group 2 ingress pattern eth / end actions jump group 1 / end\n"
    )
    pcap = tmp_path / "t.pcap"
    wrpcap(str(pcap), [Ether() / IP() / UDP()])
    proc = cli("classify", "--rules", str(rules), "--pcap", str(pcap))
    assert proc.returncode == 2
    assert f"{rules}:2:" in proc.stderr and "cycle" in proc.stderr
