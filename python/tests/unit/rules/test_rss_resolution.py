"""`rss` actions resolved to queues per packet, in `classify` and in `simulate`, against an oracle
written here: a bit-by-bit Toeplitz hash from Microsoft's definition ("Verifying the RSS Hash
Calculation", checked on its published vector first), the hash input built from the packet's
headers as the mlx5 PMD selects them (types → fields), and the indirection table the mlx5 PMD
builds from a queue list (the list repeated over 512 entries unless its length is a power of two).
Packets come from scapy, so nicbench's generator, parser and Toeplitz are not in the oracle."""

from __future__ import annotations

import ipaddress
import json
import random
from collections import defaultdict

import pytest
from helpers import python_module

python_module("scapy.all", "scapy")
from scapy.layers.inet import IP, TCP, UDP  # noqa: E402
from scapy.layers.inet6 import IPv6  # noqa: E402
from scapy.layers.l2 import Ether  # noqa: E402
from scapy.utils import wrpcap  # noqa: E402

ETH = {"src": "02:00:00:00:00:01", "dst": "02:00:00:00:00:02"}
MICROSOFT_KEY = bytes.fromhex("6d5a56da255b0ec24167253d43a38fb0d0ca2bcbae7b30b477cb2da38030f20c6a42b73bbeac01fa")
# DPDK drivers/net/mlx5/mlx5_rxq.c `rss_hash_default_key` (used when a rule gives no key).
MLX5_DEFAULT_KEY = bytes.fromhex("2cc681d15bdbf4f7fca28319db1a3e946b9e38d92c9c03d1ad9944a7d9563d59063c25f3fc1fdc2a")
_KEY_RNG = random.Random(17)
USER_KEY = bytes(_KEY_RNG.randrange(256) for _ in range(40))


def toeplitz(key: bytes, data: bytes) -> int:
    """For every set bit of the input (most significant first), XOR in the 32 key bits that start
    at that bit position."""
    key_bits, key_len, result = int.from_bytes(key, "big"), len(key) * 8, 0
    for i in range(len(data) * 8):
        if data[i // 8] & (0x80 >> (i % 8)):
            result ^= (key_bits >> (key_len - 32 - i)) & 0xFFFFFFFF
    return result


def test_the_oracle_gives_microsofts_vector():
    data = ipaddress.ip_address("66.9.149.187").packed + ipaddress.ip_address("161.142.100.80").packed
    assert toeplitz(MICROSOFT_KEY, data) == 0x323E8FC2
    assert toeplitz(MICROSOFT_KEY, data + (2794).to_bytes(2, "big") + (1766).to_bytes(2, "big")) == 0x51CCC178


def mlx5_queue(queues: list[int], hash_value: int) -> int:
    """The mlx5 PMD's table: n entries if n is a power of two, else 512; entry i = queues[i mod n]."""
    size = len(queues) if len(queues) & (len(queues) - 1) == 0 else 512
    return queues[(hash_value % size) % len(queues)]


def fields(pkt, types: set[str], symmetric: bool = False) -> bytes:
    """The hash input mlx5 builds: the addresses if the packet's IP version has a type, the ports if
    it is also UDP (TCP) with a UDP (TCP) type; `*-only` keeps one side; nothing applies → empty."""
    ip = pkt[IP] if IP in pkt else pkt[IPv6] if IPv6 in pkt else None
    v4 = {"ipv4", "ipv4-udp", "ipv4-tcp", "ipv4-other", "ipv4-frag", "ip"}
    v6 = {"ipv6", "ipv6-udp", "ipv6-tcp", "ipv6-other", "ipv6-frag", "ipv6-ex", "ip"}
    if ip is None or not (types & (v4 if IP in pkt else v6)):
        return b""
    l3_src = "l3-dst-only" not in types or "l3-src-only" in types
    l3_dst = "l3-src-only" not in types or "l3-dst-only" in types
    src, dst = ipaddress.ip_address(ip.src).packed, ipaddress.ip_address(ip.dst).packed
    if symmetric and l3_src and l3_dst:  # rte_eth_hash_function: src, dst replaced by xor(src, dst)
        src = dst = bytes(a ^ b for a, b in zip(src, dst))
    out = (src if l3_src else b"") + (dst if l3_dst else b"")
    l4 = (
        pkt[UDP]
        if UDP in pkt and types & {"ipv4-udp", "ipv6-udp"}
        else pkt[TCP]
        if TCP in pkt and types & {"ipv4-tcp", "ipv6-tcp"}
        else None
    )
    if l4 is not None:
        sport, dport = l4.sport, l4.dport
        if symmetric:
            sport = dport = sport ^ dport
        out += sport.to_bytes(2, "big") + dport.to_bytes(2, "big")
    return out


def expected(pkts, pick) -> dict[str, dict[str, int]]:
    """Per-queue packets and bytes when `pick(pkt)` gives each packet's queue."""
    out: dict[str, dict[str, int]] = defaultdict(lambda: {"packets": 0, "bytes": 0})
    for p in pkts:
        q = out[str(pick(p))]
        q["packets"] += 1
        q["bytes"] += len(p)
    return dict(out)


def mixed_packets(seed: int = 5, n_flows: int = 300) -> list:
    """IPv4/UDP flows (most), IPv4/TCP and IPv6/UDP ones, 1–3 packets each, sizes varied."""
    rng = random.Random(seed)
    pkts = []
    for i in range(n_flows):
        sport, dport = rng.randrange(1, 65536), rng.randrange(1, 65536)
        pad = b"x" * rng.randrange(0, 200)
        if i % 10 == 8:
            l3 = IP(src=f"10.{rng.randrange(256)}.{rng.randrange(256)}.1", dst="192.0.2.9") / TCP(
                sport=sport, dport=dport
            )
        elif i % 10 == 9:
            l3 = IPv6(src=f"2001:db8::{rng.randrange(1 << 16):x}", dst="2001:db8:1::1") / UDP(sport=sport, dport=dport)
        else:
            l3 = IP(
                src=str(ipaddress.IPv4Address(rng.getrandbits(32))), dst=str(ipaddress.IPv4Address(rng.getrandbits(32)))
            ) / UDP(sport=sport, dport=dport)
        pkts += [Ether(**ETH) / l3 / pad] * rng.randrange(1, 4)
    rng.shuffle(pkts)
    for i, p in enumerate(pkts):
        p.time = 1.0 + i * 1e-6  # 1 µs apart: the simulated NIC is nowhere near loaded
    return pkts


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    pkts = mixed_packets()
    path = tmp_path_factory.mktemp("rss") / "mixed.pcap"
    wrpcap(str(path), pkts)
    return path, pkts


def classify_queues(cli, tmp_path, rule: str, pcap, *extra: str) -> dict:
    rules = tmp_path / "rss.flow"
    rules.write_text(rule + "\n")
    proc = cli("classify", "--rules", str(rules), "--pcap", str(pcap), "--json", *extra)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["queues"]


def simulate_result(cli, tmp_path, rule: str, pcap, *extra: str) -> dict:
    rules = tmp_path / "rss.flow"
    rules.write_text(rule + "\n")
    proc = cli("simulate", "--rules", str(rules), "--trace", str(pcap), "--duration", "5ms", "--json", *extra)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


RULE_DONE_WHEN = (
    "flow create 0 ingress group 0 pattern eth / ipv4 / end actions rss queues 0 1 2 3 end "
    f"types ipv4-udp end key {USER_KEY.hex()} / end"
)


def test_ipv4_udp_rule_matches_the_oracle_in_classify_and_simulate(cli, tmp_path, trace):
    pcap, pkts = trace
    queues = [0, 1, 2, 3]

    def pick(p):
        if IP not in p:  # IPv6 matches no rule: the port's default RSS over one queue
            return 0
        return mlx5_queue(queues, toeplitz(USER_KEY, fields(p, {"ipv4-udp"})))

    want = expected(pkts, pick)
    assert len([q for q in want if q != "0"]) == 3, "the oracle spreads over all four queues"
    assert classify_queues(cli, tmp_path, RULE_DONE_WHEN, pcap) == want
    result = simulate_result(cli, tmp_path, RULE_DONE_WHEN, pcap)
    # The same shape as classify's; the simulated wire carries the 4-byte FCS that captures leave out.
    assert result["queues"] == {
        q: {"packets": c["packets"], "bytes": c["bytes"] + 4 * c["packets"]} for q, c in want.items()
    }
    assert "queue_bytes" not in result
    # IPv4/TCP packets hash their addresses only (the ports' type, ipv4-tcp, is not given):
    # hashing their ports too would put some elsewhere.
    tcp = [p for p in pkts if TCP in p]
    with_ports = [mlx5_queue(queues, toeplitz(USER_KEY, fields(p, {"ipv4-udp", "ipv4-tcp"}))) for p in tcp]
    assert with_ports != [pick(p) for p in tcp]


def test_l3_src_only_hashes_the_source_and_ports(cli, tmp_path, trace):
    pcap, pkts = trace
    rule = RULE_DONE_WHEN.replace("types ipv4-udp end", "types ipv4-udp l3-src-only end")
    types = {"ipv4-udp", "l3-src-only"}
    want = expected(pkts, lambda p: mlx5_queue([0, 1, 2, 3], toeplitz(USER_KEY, fields(p, types))) if IP in p else 0)
    assert want != expected(
        pkts, lambda p: mlx5_queue([0, 1, 2, 3], toeplitz(USER_KEY, fields(p, {"ipv4-udp"}))) if IP in p else 0
    )
    assert classify_queues(cli, tmp_path, rule, pcap) == want


def test_non_power_of_two_queue_list_follows_the_512_entry_table(cli, tmp_path, trace):
    pcap, pkts = trace
    queues = [5, 1, 7]
    rule = RULE_DONE_WHEN.replace("queues 0 1 2 3 end", "queues 5 1 7 end")
    hashes = {id(p): toeplitz(USER_KEY, fields(p, {"ipv4-udp"})) for p in pkts if IP in p}
    want = expected(pkts, lambda p: mlx5_queue(queues, hashes[id(p)]) if IP in p else 0)
    # `hash mod 3` without the table would differ: the test can tell the two apart.
    assert want != expected(pkts, lambda p: queues[hashes[id(p)] % 3] if IP in p else 0)
    assert classify_queues(cli, tmp_path, rule, pcap) == want
    result = simulate_result(cli, tmp_path, rule, pcap)
    assert {q: c["packets"] for q, c in result["queues"].items()} == {q: c["packets"] for q, c in want.items()}


def test_symmetric_toeplitz_puts_both_directions_on_one_queue(cli, tmp_path, trace):
    _, pkts = trace
    udp4 = [p for p in pkts if IP in p and UDP in p]
    reverse = [
        Ether(**ETH)
        / IP(src=p[IP].dst, dst=p[IP].src)
        / UDP(sport=p[UDP].dport, dport=p[UDP].sport)
        / bytes(p[UDP].payload)
        for p in udp4
    ]
    fwd_pcap, rev_pcap = tmp_path / "fwd.pcap", tmp_path / "rev.pcap"
    wrpcap(str(fwd_pcap), udp4)
    wrpcap(str(rev_pcap), reverse)
    rule = RULE_DONE_WHEN.replace("actions rss", "actions rss func symmetric_toeplitz")
    fwd = classify_queues(cli, tmp_path, rule, fwd_pcap)
    assert fwd == expected(udp4, lambda p: mlx5_queue([0, 1, 2, 3], toeplitz(USER_KEY, fields(p, {"ipv4-udp"}, True))))
    assert classify_queues(cli, tmp_path, rule, rev_pcap) == fwd
    # Plain Toeplitz with this key splits directions: the symmetric result is not a coincidence.
    assert classify_queues(cli, tmp_path, RULE_DONE_WHEN, rev_pcap) != classify_queues(
        cli, tmp_path, RULE_DONE_WHEN, fwd_pcap
    )


def test_a_rule_without_key_uses_the_mlx5_default_key(cli, tmp_path, trace):
    pcap, pkts = trace
    rule = RULE_DONE_WHEN.replace(f" key {USER_KEY.hex()}", "")
    want = expected(
        pkts, lambda p: mlx5_queue([0, 1, 2, 3], toeplitz(MLX5_DEFAULT_KEY, fields(p, {"ipv4-udp"}))) if IP in p else 0
    )
    assert want != expected(
        pkts, lambda p: mlx5_queue([0, 1, 2, 3], toeplitz(MICROSOFT_KEY, fields(p, {"ipv4-udp"}))) if IP in p else 0
    )
    assert classify_queues(cli, tmp_path, rule, pcap) == want


def test_unmatched_packets_follow_the_ports_default_rss(cli, tmp_path, trace):
    pcap, pkts = trace
    # Matches nothing in the trace: every packet goes through the port's default RSS (types ip,
    # default key) over --queues 4 — IPv6 ones included.
    rule = "flow create 0 ingress pattern eth / ipv4 / udp dst is 1 / end actions queue index 9 / end"
    want = expected(pkts, lambda p: mlx5_queue([0, 1, 2, 3], toeplitz(MLX5_DEFAULT_KEY, fields(p, {"ip"}))))
    assert classify_queues(cli, tmp_path, rule, pcap, "--queues", "4") == want
    result = simulate_result(cli, tmp_path, rule, pcap, "--queues", "4")
    assert {q: c["packets"] for q, c in result["queues"].items()} == {q: c["packets"] for q, c in want.items()}
    assert classify_queues(cli, tmp_path, rule, pcap) == expected(pkts, lambda p: 0), "one queue by default"


@pytest.mark.parametrize(
    "action, message",
    [
        ("rss func simple_xor queues 0 1 end", "simple_xor"),
        ("rss key 6d5a6d5a6d5a6d5a queues 0 1 end", "exactly 40"),
        ("rss key_len 64 queues 0 1 end", "exactly 40"),
    ],
)
@pytest.mark.parametrize("command", ["classify", "simulate"])
def test_actions_the_mlx5_pmd_refuses_are_one_line_errors(cli, tmp_path, trace, action, message, command):
    pcap, _ = trace
    rules = tmp_path / "bad.flow"
    rules.write_text(
        "flow create 0 ingress pattern eth / ipv6 / end actions drop / end\n"
        f"flow create 0 ingress pattern eth / end actions {action} / end\n"
    )
    source = ["--pcap", str(pcap)] if command == "classify" else ["--trace", str(pcap), "--duration", "1ms"]
    proc = cli(command, "--rules", str(rules), *source)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("nicbench: error:") and f"{rules}:2:" in lines[0], proc.stderr
    assert message in lines[0]
