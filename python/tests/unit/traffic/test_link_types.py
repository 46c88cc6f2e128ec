"""Captures of every link type nicbench decodes give the flows they hold, in every command that
reads a pcap; any other link type is refused by name and number (issue 17: cooked and loopback
captures were read as Ethernet: 0 flows, "EtherType 0x0200").

The oracle: the IP packets are built by scapy from known 5-tuples, wrapped in each link-layer
header as libpcap documents it (tcpdump.org/linktypes.html) — tcpdump (libpcap) reads those
5-tuples back from every fixture — and the commands must find the same 5-tuples, as for the same
packets in Ethernet frames."""

from __future__ import annotations

import json
import re
import struct
import subprocess
from pathlib import Path

import pytest
from helpers import peer, python_module, run_cli

scapy_all = python_module("scapy.all", "scapy")

# (source port, destination port) of the flows; each sent PACKETS_PER_FLOW times.
FLOWS = [(1000 + i, 53 if i % 2 else 80) for i in range(6)]
PACKETS_PER_FLOW = 3


def ip_packets() -> list[bytes]:
    IP, UDP, Raw = scapy_all.IP, scapy_all.UDP, scapy_all.Raw
    return [
        bytes(IP(src="10.0.0.1", dst=f"10.1.0.{i}") / UDP(sport=sport, dport=dport) / Raw(b"x" * 20))
        for _ in range(PACKETS_PER_FLOW)
        for i, (sport, dport) in enumerate(FLOWS)
    ]


def sll2(ip: bytes) -> bytes:
    # protocol, reserved, interface index, ARPHRD_ETHER, PACKET_HOST, address length 6, address (8 B)
    return struct.pack(">HHIHBB8s", 0x0800, 0, 2, 1, 0, 6, b"\x02\x00\x00\x00\x00\x01\x00\x00") + ip


def sll(ip: bytes) -> bytes:
    # packet type, ARPHRD_ETHER, address length, address (8 B), protocol
    return struct.pack(">HHH8sH", 0, 1, 6, b"\x02\x00\x00\x00\x00\x01\x00\x00", 0x0800) + ip


def ethernet(ip: bytes) -> bytes:
    return b"\x02\x00\x00\x00\x00\x02" + b"\x02\x00\x00\x00\x00\x01" + b"\x08\x00" + ip


LINK_TYPES = {
    # name: (LINKTYPE_* value, how a record wraps an IP packet)
    "EN10MB": (1, ethernet),
    "LINUX_SLL2": (276, sll2),
    "LINUX_SLL": (113, sll),
    "NULL (little-endian host)": (0, lambda ip: struct.pack("<I", 2) + ip),
    "NULL (big-endian host)": (0, lambda ip: struct.pack(">I", 2) + ip),
    "LOOP": (108, lambda ip: struct.pack(">I", 2) + ip),
    "RAW": (101, lambda ip: ip),
}


def write_pcap(path: Path, linktype: int, records: list[bytes]) -> Path:
    out = bytearray(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, linktype))
    for i, data in enumerate(records):
        out += struct.pack("<IIII", 1, i, len(data), len(data)) + data
    path.write_bytes(bytes(out))
    return path


def json_of(*args: str) -> dict:
    proc = run_cli(*args, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module", params=list(LINK_TYPES), ids=list(LINK_TYPES))
def capture(request, tmp_path_factory) -> Path:
    linktype, wrap = LINK_TYPES[request.param]
    path = tmp_path_factory.mktemp("linktypes") / "capture.pcap"
    return write_pcap(path, linktype, [wrap(ip) for ip in ip_packets()])


@pytest.mark.peer
def test_tcpdump_reads_the_same_flows_from_the_fixture(capture):
    """libpcap (tcpdump -r) decodes each record to the 5-tuple it was built from: the fixtures'
    link-layer headers are what libpcap expects, so the other tests check nicbench, not the fixture."""
    out = subprocess.run(
        [peer("tcpdump"), "-r", str(capture), "-nn", "-q"], capture_output=True, text=True, check=True
    ).stdout
    seen = re.findall(r"IP 10\.0\.0\.1\.(\d+) > 10\.1\.0\.\d+\.(\d+): UDP", out)
    assert len(seen) == len(FLOWS) * PACKETS_PER_FLOW, out[:500]
    assert {(int(s), int(d)) for s, d in seen} == set(FLOWS)


def test_pcap_info_finds_the_flows(capture):
    info = json_of("pcap", "info", str(capture))
    assert info["packets"] == len(FLOWS) * PACKETS_PER_FLOW
    assert info["flows"] == len(FLOWS)
    assert not info.get("unparsed")
    assert info["protocols"] == {"IPv4/UDP": len(FLOWS) * PACKETS_PER_FLOW}


def test_rss_hashes_every_packet(capture):
    report = json_of("rss", str(capture), "--queues", "4")
    assert report["unhashed"] == 0
    assert report["flows"] == len(FLOWS)


def test_flows_meters_every_flow(capture):
    stats = json_of("flows", str(capture))
    assert stats["flows"] == len(FLOWS)
    assert stats["non_ip_packets"] == 0


def test_classify_matches_by_port(capture, tmp_path):
    rules = tmp_path / "r.flow"
    # No `eth` item: records of the non-Ethernet link types carry no Ethernet header to match.
    rules.write_text("flow create 0 ingress pattern ipv4 / udp dst is 53 / end actions drop / end\n")
    report = json_of("classify", "--rules", str(rules), "--pcap", str(capture))
    dns_flows = sum(dport == 53 for _, dport in FLOWS)
    assert report["dropped"] == dns_flows * PACKETS_PER_FLOW
    assert report["unmatched"] == (len(FLOWS) - dns_flows) * PACKETS_PER_FLOW


@pytest.mark.parametrize(("linktype", "name"), [(105, "IEEE802_11"), (127, "IEEE802_11_RADIOTAP"), (4242, "unknown")])
@pytest.mark.parametrize("command", [["pcap", "info"], ["rss", "--queues", "4"], ["flows"]], ids=" ".join)
def test_other_link_types_refused_by_name_and_number(tmp_path, linktype, name, command):
    path = write_pcap(tmp_path / "other.pcap", linktype, [b"\x00" * 40])
    proc = run_cli(
        *command[: 2 if command[0] == "pcap" else 1], str(path), *command[2 if command[0] == "pcap" else 1 :]
    )
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("nicbench: error: ")
    assert f"link type {name} ({linktype}) is not supported" in lines[0]
    assert "LINUX_SLL2 (276)" in lines[0]  # says what is allowed
