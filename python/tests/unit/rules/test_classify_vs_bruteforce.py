"""`nicbench classify` on published ClassBench filter sets (shared/data/classbench) against a
brute-force oracle written here from the ClassBench format: a packet belongs to the first line
whose source and destination prefixes, port ranges (TCP/UDP) and protocol value/mask all match.
Packets are built by scapy, most of them inside a randomly chosen rule (as ClassBench's
trace_generator does), the rest random, so both hits deep in the file and misses occur."""

from __future__ import annotations

import ipaddress
import json
import random
from collections import Counter
from dataclasses import dataclass

import pytest
from helpers import classbench_file, python_module

python_module("scapy.all", "scapy")
from scapy.layers.inet import ICMP, IP, TCP, UDP  # noqa: E402
from scapy.layers.l2 import Ether  # noqa: E402
from scapy.packet import Raw  # noqa: E402
from scapy.utils import wrpcap  # noqa: E402

ETH = {"src": "02:00:00:00:00:01", "dst": "02:00:00:00:00:02"}  # explicit: no MAC resolution by scapy


@dataclass(frozen=True)
class Filter:
    line: int
    src: ipaddress.IPv4Network
    dst: ipaddress.IPv4Network
    sport: tuple[int, int]
    dport: tuple[int, int]
    proto: int
    proto_mask: int

    def matches(self, src: int, dst: int, proto: int, sport: int | None, dport: int | None) -> bool:
        """Addresses as integers (the prefix test is a masked compare)."""
        if src & int(self.src.netmask) != int(self.src.network_address):
            return False
        if dst & int(self.dst.netmask) != int(self.dst.network_address):
            return False
        if proto & self.proto_mask != self.proto & self.proto_mask:
            return False
        if sport is None:  # no ports: only a rule that allows every port matches
            return self.sport == (0, 65535) and self.dport == (0, 65535)
        return self.sport[0] <= sport <= self.sport[1] and self.dport[0] <= dport <= self.dport[1]


def first_match(filters: list[Filter], header: tuple) -> int | None:
    src, dst, *rest = header
    src_int, dst_int = int(ipaddress.ip_address(src)), int(ipaddress.ip_address(dst))
    return next((f.line for f in filters if f.matches(src_int, dst_int, *rest)), None)


def read_filters(path) -> list[Filter]:
    """`@src/len <TAB> dst/len <TAB> lo : hi <TAB> lo : hi <TAB> proto/mask <TAB> flags/mask`."""
    filters = []
    for number, text in enumerate(path.read_text().splitlines(), start=1):
        if not text.strip():
            continue
        src, dst, sport, dport, proto = text.lstrip("@").split("\t")[:5]
        value, mask = (int(v, 16) for v in proto.split("/"))
        filters.append(
            Filter(
                number,
                ipaddress.ip_network(src, strict=False),
                ipaddress.ip_network(dst, strict=False),
                tuple(int(v) for v in sport.split(":")),
                tuple(int(v) for v in dport.split(":")),
                value,
                mask,
            )
        )
    return filters


def address_in(net: ipaddress.IPv4Network, rng: random.Random) -> str:
    return str(net.network_address + rng.randrange(net.num_addresses))


def header_in(rule: Filter, rng: random.Random) -> tuple:
    proto = rule.proto if rule.proto_mask else rng.choice([1, 6, 17])
    ports = (rng.randint(*rule.sport), rng.randint(*rule.dport)) if proto in (6, 17) else (None, None)
    return address_in(rule.src, rng), address_in(rule.dst, rng), proto, *ports


def random_header(rng: random.Random) -> tuple:
    proto = rng.choice([1, 6, 17, 47])
    ports = (rng.randrange(65536), rng.randrange(65536)) if proto in (6, 17) else (None, None)
    src, dst = (str(ipaddress.IPv4Address(rng.getrandbits(32))) for _ in range(2))
    return src, dst, proto, *ports


def frame(src: str, dst: str, proto: int, sport: int | None, dport: int | None):
    if proto == 6:
        return Ether(**ETH) / IP(src=src, dst=dst) / TCP(sport=sport, dport=dport, flags="A")
    if proto == 17:
        return Ether(**ETH) / IP(src=src, dst=dst) / UDP(sport=sport, dport=dport)
    if proto == 1:
        return Ether(**ETH) / IP(src=src, dst=dst) / ICMP()
    return Ether(**ETH) / IP(src=src, dst=dst, proto=proto) / Raw(b"\0" * 8)


@pytest.mark.parametrize("name", ["acl1_1k", "fw1_1k", "ipc1_1k"])
def test_classify_agrees_with_first_match(cli, tmp_path, name):
    rules_file = classbench_file(name)
    filters = read_filters(rules_file)
    rng = random.Random(name)
    headers = [header_in(rng.choice(filters), rng) for _ in range(500)] + [random_header(rng) for _ in range(100)]
    expected = Counter(first_match(filters, h) for h in headers)
    pcap = tmp_path / "trace.pcap"
    wrpcap(str(pcap), [frame(*h) for h in headers])
    proc = cli("classify", "--rules", str(rules_file), "--pcap", str(pcap), "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["packets"] == len(headers)
    assert report["unmatched"] == expected.pop(None, 0)
    assert {r["line"]: r["hits"] for r in report["rules"]} == dict(expected)
    assert len(expected) > 100  # hits spread over many lines of the file, not a few defaults
