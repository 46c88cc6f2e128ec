"""The foundation commands' JSON outputs agree with what was generated."""

from __future__ import annotations

import json

import pytest


def test_gen_info_rss_json(cli, tmp_path):
    trace = tmp_path / "t.pcap"
    proc = cli(
        "gen", "--flows", "500", "--size", "64", "--rate", "10Gbps", "--duration", "1ms", "-o", str(trace), "--json"
    )
    assert proc.returncode == 0, proc.stderr
    gen = json.loads(proc.stdout)
    # 64 B at 10 Gbps: (64 + 20) * 8 = 672 bits, one frame every 67.2 ns; the frames that start
    # within 1 ms are those at 0, 67.2, ..., 14,880 × 67.2 = 999,936 ns: 14,881.
    assert (gen["packets"], gen["first_ts_ns"], gen["last_ts_ns"]) == (14881, 0, 999_936)
    info = json.loads(cli("pcap", "info", str(trace), "--json").stdout)
    assert info["packets"] == gen["packets"]
    assert info["flows"] == 500
    assert info["bytes"] == gen["packets"] * 60
    assert info["protocols"] == {"IPv4/UDP": gen["packets"]}
    assert abs(info["wire_gbps"] - 10.0) < 0.01
    rss = json.loads(cli("rss", str(trace), "--queues", "4", "--json").stdout)
    assert sum(q["packets"] for q in rss["queues"]) == gen["packets"]
    assert sum(q["flows"] for q in rss["queues"]) == 500
    counts = [q["packets"] for q in rss["queues"]]
    assert rss["packet_imbalance"] == pytest.approx(max(counts) / (sum(counts) / 4), abs=0.005)


def test_gen_ipv6_tcp_vlan_vxlan_zipf(cli, tmp_path):
    trace = tmp_path / "t.pcap"
    common = [
        "gen",
        "--flows",
        "64",
        "--ipv6",
        "--proto",
        "tcp",
        "--vlan",
        "100",
        "--vxlan",
        "42",
        "--zipf",
        "1.1",
        "--rate",
        "1Mpps",
        "--packets",
        "5000",
        "-o",
        str(trace),
        "--json",
    ]
    # IMIX's 64 B frames cannot hold these headers: a clear error, not a silent resize.
    proc = cli(*common, "--size", "imix")
    assert proc.returncode == 2 and "132 B" in proc.stderr
    proc = cli(*common, "--size", "200,594,1518")
    assert proc.returncode == 0, proc.stderr
    info = json.loads(cli("pcap", "info", str(trace), "--json").stdout)
    assert info["packets"] == 5000
    assert info["protocols"] == {"VXLAN IPv6/TCP": 5000}
    used = {row["label"] for row in info["size_histogram"] if row["packets"]}
    assert used == {"128-255", "512-1023", "1024-1518"}


def test_symmetric_key_keeps_biflows_together(cli, tmp_path):
    """A trace with both directions of each flow: symmetric RSS puts both on one queue."""
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether
    from scapy.utils import wrpcap

    pkts = []
    for i in range(200):
        a, b = f"10.0.{i // 250}.{i % 250 + 1}", f"192.168.{i // 250}.{i % 250 + 1}"
        pkts.append(Ether() / IP(src=a, dst=b) / UDP(sport=1000 + i, dport=2000 + i))
        pkts.append(Ether() / IP(src=b, dst=a) / UDP(sport=2000 + i, dport=1000 + i))
    trace = tmp_path / "bi.pcap"
    wrpcap(str(trace), pkts)
    sym = json.loads(cli("rss", str(trace), "--queues", "16", "--key", "symmetric", "--json").stdout)
    # Each queue holds whole biflows: per-queue unidirectional flow counts are all even.
    assert all(q["flows"] % 2 == 0 for q in sym["queues"])
    ms = json.loads(cli("rss", str(trace), "--queues", "16", "--key", "microsoft", "--json").stdout)
    assert any(q["flows"] % 2 for q in ms["queues"]), "the Microsoft key should split some biflows"


def test_summary_lines_stay_whole_in_a_pipe(tmp_path):
    """Piped into a file or grep, a one-line summary longer than 80 columns stays one line (rich
    would wrap it at the 80 columns it assumes off a terminal), and rss's heading is not wrapped to
    its narrow table's width."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "COLUMNS": "80"}

    def run(*args: str) -> list[str]:
        proc = subprocess.run([sys.executable, "-m", "nicbench.cli", *args], capture_output=True, text=True, env=env)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.splitlines()

    trace = tmp_path / "a-trace-with-a-rather-long-name.pcap"
    lines = run("gen", "--flows", "300", "--size", "64", "--packets", "2000", "-o", str(trace))
    assert len(lines) == 1 and len(lines[0]) > 80 and lines[0].endswith(" Mpps"), lines
    lines = run("rss", str(trace), "--queues", "4")
    assert lines[0].startswith(f"RSS of {trace} over 4 queues (key symmetric, ip-ports, RETA 128)"), lines[0]
    summary = [line for line in lines if line.startswith("imbalance (max/mean)")]
    assert len(summary) == 1 and summary[0].endswith("without IP header (0.0%)"), lines
    lines = run("flows", str(trace))
    assert lines[0].startswith("2,000 packets") and lines[0].endswith("compat nicbench)"), lines[0]


def test_pcap_info_reads_a_short_trace_at_the_rate_gen_wrote(cli, tmp_path):
    """10 frames at 100 Gbps span 9 gaps: the rate counts one slot per packet (it read 111 Gbps,
    above the line rate, from bytes over last − first)."""
    trace = tmp_path / "ten.pcap"
    gen = json.loads(
        cli("gen", "--packets", "10", "--size", "1500", "--rate", "100Gbps", "-o", str(trace), "--json").stdout
    )
    info = json.loads(cli("pcap", "info", str(trace), "--json").stdout)
    assert info["packets"] == gen["packets"] == 10
    assert info["wire_gbps"] == pytest.approx(100.0, rel=1e-3)
    assert info["mpps"] == pytest.approx(gen["mpps"], rel=1e-3)


def test_progress_figures_in_the_work_unit():
    """A progress bar's done/total: MB for files (not 396361752/1243421952), virtual seconds with
    digits (a 10 ms run is not 0/0), grouped counts, '?' for an open total."""
    from nicbench.cli.common import done_of_total

    assert done_of_total(396_361_752, 1_243_421_952, "B") == "396.4/1,243.4 MB"
    assert done_of_total(0.004, 0.01, "s") == "0.004/0.01 s"
    assert done_of_total(8224, 82_237, "packets") == "8,224/82,237 packets"
    assert done_of_total(822_369, None, "packets") == "822,369/? packets"
    assert done_of_total(3, 10) == "3/10"


def test_simulate_timeline_has_bins_for_a_short_run(cli):
    """The default bin is 10 ms, or a 20th of a run shorter than 200 ms: the README's 10 ms runs drew
    one bar."""

    def bins(*args: str) -> list[float]:
        proc = cli("simulate", "--gen", "flows=100,size=1500,rate=10Gbps", *args, "--json")
        assert proc.returncode == 0, proc.stderr
        return [b["t_s"] for b in json.loads(proc.stdout)["timeline"]]

    assert bins("--duration", "10ms") == pytest.approx([0.0005 * (i + 1) for i in range(20)])
    assert len(bins("--duration", "300ms")) == 30
    assert len(bins("--duration", "10ms", "--bin", "5ms")) == 2
