"""`nicbench rss` against an independent oracle: a bit-by-bit Toeplitz hash written here from
Microsoft's definition ("Verifying the RSS Hash Calculation", checked on its published vectors),
applied to frames that scapy built, through a round-robin indirection table indexed by the low bits."""

from __future__ import annotations

import ipaddress
import json
import random
from collections import defaultdict

import pytest
from helpers import python_module

python_module("scapy.all", "scapy")
from scapy.layers.inet import ICMP, IP, TCP, UDP  # noqa: E402
from scapy.layers.inet6 import IPv6  # noqa: E402
from scapy.layers.l2 import ARP, Ether  # noqa: E402
from scapy.utils import wrpcap  # noqa: E402

# Explicit MACs: scapy would otherwise resolve them for every frame (ARP / neighbour lookups).
ETH = {"src": "02:00:00:00:00:01", "dst": "02:00:00:00:00:02"}
MICROSOFT_KEY = bytes.fromhex("6d5a56da255b0ec24167253d43a38fb0d0ca2bcbae7b30b477cb2da38030f20c6a42b73bbeac01fa")
SYMMETRIC_KEY = bytes.fromhex("6d5a" * 20)

# Microsoft's published IPv4 vectors: (destination, source) address:port, hash of the addresses,
# hash of the addresses and ports. The hash input is source, destination (then their ports).
MICROSOFT_IPV4_VECTORS = [
    ("161.142.100.80:1766", "66.9.149.187:2794", 0x323E8FC2, 0x51CCC178),
    ("65.69.140.83:4739", "199.92.111.2:14230", 0xD718262A, 0xC626B0EA),
    ("12.22.207.184:38024", "24.19.198.95:12898", 0xD2D0A5DE, 0x5C2B394A),
    ("209.142.163.6:2217", "38.27.205.30:48228", 0x82989176, 0xAFC7327F),
    ("202.188.127.2:1303", "153.39.163.191:44251", 0x5D1809C5, 0x10E828A2),
]


def toeplitz(key: bytes, data: bytes) -> int:
    """For every set bit of the input (most significant first), XOR in the 32 key bits that
    start at that bit position."""
    key_bits = int.from_bytes(key, "big")
    key_len = len(key) * 8
    result = 0
    for i in range(len(data) * 8):
        if data[i // 8] & (0x80 >> (i % 8)):
            result ^= (key_bits >> (key_len - 32 - i)) & 0xFFFFFFFF
    return result


def rss_input(src: str, dst: str, sport: int | None, dport: int | None) -> bytes:
    data = ipaddress.ip_address(src).packed + ipaddress.ip_address(dst).packed
    if sport is not None:
        data += sport.to_bytes(2, "big") + dport.to_bytes(2, "big")
    return data


@pytest.mark.parametrize("dst, src, ip_hash, ports_hash", MICROSOFT_IPV4_VECTORS)
def test_the_oracle_gives_microsofts_vectors(dst, src, ip_hash, ports_hash):
    (daddr, dport), (saddr, sport) = (s.split(":") for s in (dst, src))
    assert toeplitz(MICROSOFT_KEY, rss_input(saddr, daddr, None, None)) == ip_hash
    assert toeplitz(MICROSOFT_KEY, rss_input(saddr, daddr, int(sport), int(dport))) == ports_hash


def biflow_trace(path) -> list:
    """Both directions of TCP/UDP flows over IPv4 and IPv6, ICMP (hashed on addresses only) and
    ARP (not hashed), with uneven packet counts per flow."""
    rng = random.Random(14)
    packets = []
    for i in range(60):
        v6 = i % 4 == 3
        a = f"2001:db8::{rng.randrange(1, 0xFFFF):x}" if v6 else f"10.{rng.randrange(256)}.{rng.randrange(256)}.{i + 1}"
        b = (
            f"2001:db8:1::{rng.randrange(1, 0xFFFF):x}"
            if v6
            else f"192.168.{rng.randrange(256)}.{rng.randrange(1, 255)}"
        )
        ip = IPv6 if v6 else IP
        l4 = TCP if i % 2 else UDP
        sport, dport = rng.randrange(1024, 65536), rng.choice([53, 80, 443, rng.randrange(1024, 65536)])
        for _ in range(1 + i % 3):
            packets.append(Ether(**ETH) / ip(src=a, dst=b) / l4(sport=sport, dport=dport))
        for _ in range(1 + i % 2):
            packets.append(Ether(**ETH) / ip(src=b, dst=a) / l4(sport=dport, dport=sport))
    packets += [Ether(**ETH) / IP(src="10.9.9.9", dst="10.8.8.8") / ICMP()] * 3
    packets += [Ether(**ETH) / ARP(psrc="10.0.0.1", pdst="10.0.0.2")] * 2
    wrpcap(str(path), packets)
    return packets


def oracle_spread(packets, key: bytes, queues: int, with_ports: bool, reta_size: int = 128) -> dict:
    per_queue_packets, per_queue_flows, unhashed = defaultdict(int), defaultdict(set), 0
    for pkt in packets:
        ip = pkt.getlayer(IP) or pkt.getlayer(IPv6)
        if ip is None:  # no hash: a NIC delivers it to queue 0
            unhashed += 1
            per_queue_packets[0] += 1
            continue
        l4 = pkt.getlayer(TCP) or pkt.getlayer(UDP)
        ports = (l4.sport, l4.dport) if (l4 is not None and with_ports) else (None, None)
        queue = (toeplitz(key, rss_input(ip.src, ip.dst, *ports)) & (reta_size - 1)) % queues
        per_queue_packets[queue] += 1
        flow_ports = (l4.sport, l4.dport) if l4 is not None else (0, 0)
        per_queue_flows[queue].add((ip.src, ip.dst, type(l4).__name__ if l4 else "icmp", *flow_ports))
    return {
        "queues": [
            {"queue": q, "packets": per_queue_packets[q], "flows": len(per_queue_flows[q])} for q in range(queues)
        ],
        "unhashed": unhashed,
    }


@pytest.mark.parametrize(
    "key_name, key, queues, fields",
    [
        ("symmetric", SYMMETRIC_KEY, 8, "ip-ports"),
        ("microsoft", MICROSOFT_KEY, 6, "ip-ports"),
        ("microsoft", MICROSOFT_KEY, 16, "ip"),
        (SYMMETRIC_KEY.hex(), SYMMETRIC_KEY, 3, "ip-ports"),
    ],
)
def test_rss_spread_matches_the_oracle(cli, tmp_path, key_name, key, queues, fields):
    trace = tmp_path / "biflows.pcap"
    packets = biflow_trace(trace)
    proc = cli("rss", str(trace), "--queues", str(queues), "--key", key_name, "--fields", fields, "--json")
    assert proc.returncode == 0, proc.stderr
    ours = json.loads(proc.stdout)
    theirs = oracle_spread(packets, key, queues, with_ports=fields == "ip-ports")
    assert ours["queues"] == theirs["queues"]
    assert (ours["packets"], ours["unhashed"]) == (len(packets), theirs["unhashed"]) == (len(packets), 2)
    counts = [q["packets"] for q in theirs["queues"]]
    assert ours["packet_imbalance"] == pytest.approx(max(counts) / (sum(counts) / queues), abs=0.005)
