"""Traces written by nicbench read back identically in independent readers (scapy, tcpdump)."""

from __future__ import annotations

import re
import subprocess
from decimal import Decimal

import pytest
from helpers import peer, python_module

import nicbench
from nicbench import _native
from nicbench.units import Rate

scapy_utils = python_module("scapy.all", "scapy")  # scapy.all: rdpcap dissects with every layer loaded


@pytest.fixture(scope="module")
def mixed_trace(tmp_path_factory):
    """VLAN + IMIX + Zipf trace: exercises varying sizes and timestamps."""
    path = tmp_path_factory.mktemp("mixed") / "mixed.pcap"
    cfg = nicbench.GenConfig(
        flows=50, size="imix", rate=Rate(25e9, "bps"), duration_ns=None, packets=3000, vlan=7, zipf_s=1.2, seed=11
    )
    summary = nicbench.generate_pcap(cfg, str(path))
    assert summary["packets"] == 3000
    return path


def test_scapy_reads_identical_packets_and_timestamps(mixed_trace):
    packets = scapy_utils.rdpcap(str(mixed_trace))
    assert len(packets) == 3000
    info = nicbench.pcap_info(str(mixed_trace))
    assert info["packets"] == len(packets)
    assert info["bytes"] == sum(len(p) for p in packets)
    # Timestamps: nanosecond pcap; scapy keeps them exactly as Decimal/EDecimal.
    ts_ns = [int(Decimal(str(p.time)) * 1_000_000_000) for p in packets]
    assert ts_ns == sorted(ts_ns)
    assert ts_ns[-1] - ts_ns[0] == info["duration_ns"]
    # Byte for byte and nanosecond for nanosecond what nicbench's own reader delivers.
    mine = nicbench.read_packets(str(mixed_trace))
    assert [data for _, data in mine] == [bytes(p) for p in packets]
    assert [ts for ts, _ in mine] == ts_ns
    # Every frame parses the same in scapy and nicbench (ports, VLAN).
    for pkt in packets[:200]:
        parsed = nicbench.parse_frame(bytes(pkt))
        key = parsed["flow_key"]
        assert key["vlan"] == 7 == pkt.vlan
        assert (key["src_port"], key["dst_port"]) == (pkt.sport, pkt.dport)


def test_timestamps_follow_the_rate(tmp_path):
    """1500 B frames at 10 Gbps: (1500 + 20) * 8 bits = 1216 ns apart on the wire."""
    path = tmp_path / "paced.pcap"
    cfg = nicbench.GenConfig(flows=4, size=1500, rate=Rate(10e9, "bps"), duration_ns=None, packets=1000)
    nicbench.generate_pcap(cfg, str(path))
    packets = scapy_utils.rdpcap(str(path))
    ts_ns = [int(Decimal(str(p.time)) * 1_000_000_000) for p in packets]
    gaps = {b - a for a, b in zip(ts_ns, ts_ns[1:])}
    assert gaps == {1216}
    assert all(len(p) == 1496 for p in packets)


def test_scapy_written_pcap_reads_in_nicbench(tmp_path):
    """The other direction: a µs pcap written by scapy is read by nicbench with the same counts."""
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether

    pkts = [
        Ether() / IP(src=f"10.0.0.{i % 5 + 1}", dst="10.0.1.1") / UDP(sport=1000 + i % 5, dport=80) for i in range(100)
    ]
    for i, p in enumerate(pkts):
        p.time = 1_700_000_000 + i / 1000
    path = tmp_path / "scapy.pcap"
    scapy_utils.wrpcap(str(path), pkts)
    info = nicbench.pcap_info(str(path))
    assert info["packets"] == 100
    assert info["flows"] == 5
    assert info["duration_ns"] == 99_000_000


# One line of `tcpdump -n -e -tt --time-stamp-precision=nano` for a VLAN-tagged IPv4/UDP frame.
TCPDUMP_LINE = re.compile(
    r"^(?P<sec>\d+)\.(?P<ns>\d{9}) (?P<src_mac>\S+) > (?P<dst_mac>\S+), ethertype 802\.1Q \(0x8100\), "
    r"length (?P<length>\d+): vlan (?P<vlan>\d+), p \d+, ethertype IPv4 \(0x0800\), "
    r"(?P<src>[\d.]+)\.(?P<sport>\d+) > (?P<dst>[\d.]+)\.(?P<dport>\d+): UDP, length (?P<payload>\d+)$"
)


@pytest.mark.peer
def test_tcpdump_reads_the_same_packets(mixed_trace):
    """tcpdump (libpcap's reader and its own dissectors) as the oracle: per packet the same
    nanosecond timestamp, frame length, VLAN, addresses, ports and UDP payload length."""
    tcpdump = peer("tcpdump")
    proc = subprocess.run(
        [tcpdump, "-n", "-e", "-tt", "--time-stamp-precision=nano", "-r", str(mixed_trace)],
        capture_output=True,
        text=True,
        check=True,
    )
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert len(lines) == 3000
    mine = nicbench.read_packets(str(mixed_trace))
    for line, (ts_ns, frame) in zip(lines, mine):
        m = TCPDUMP_LINE.match(line)
        assert m, line
        parsed = nicbench.parse_frame(frame)
        key = parsed["flow_key"]
        theirs = (
            int(m["sec"]) * 1_000_000_000 + int(m["ns"]),
            int(m["length"]),
            int(m["vlan"]),
            m["src"],
            int(m["sport"]),
            m["dst"],
            int(m["dport"]),
            int(m["payload"]),
        )
        ours = (
            ts_ns,
            len(frame),
            key["vlan"],
            key["src"],
            key["src_port"],
            key["dst"],
            key["dst_port"],
            parsed["outer"]["l4"]["Udp"]["len"] - 8,
        )
        assert theirs == ours, line


def test_native_pipeline_counts_every_packet(mixed_trace):
    packets, elapsed_ns = _native.scan_pipeline(str(mixed_trace), nicbench.SYMMETRIC_KEY)
    assert packets == 3000 and elapsed_ns > 0
