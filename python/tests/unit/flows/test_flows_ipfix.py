"""IPFIX export (`--ipfix`) read back by a real collector: nfcapd + nfdump (Debian `nfdump`).

nicbench exports uni-directional IPFIX records (one per direction that has packets); nfcapd
stores them as plain flows. SIGTERM makes nfcapd close (flush and rename) its current file.
"""

from __future__ import annotations

import csv
import io
import json
import signal
import socket
import subprocess
import time

import pytest
from flows_corpus import scenario_ipv6, scenario_tcp, scenario_udp, write_pcap
from helpers import require_tool, run_cli

from nicbench.flows import load_records

pytestmark = pytest.mark.peer


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def udp_port_bound(port: int) -> bool:
    """Is something listening on 127.0.0.1:port (UDP)? Read /proc like `ss -uln` does."""
    with open("/proc/net/udp") as f:
        return any(line.split()[1] == f"0100007F:{port:04X}" for line in list(f)[1:])


def test_ipfix_export_read_back_by_nfcapd(tmp_path):
    require_tool("nfcapd")
    require_tool("nfdump")
    pcap = write_pcap(tmp_path / "mix.pcap", sorted(scenario_tcp() + scenario_udp() + scenario_ipv6(),
                                                    key=lambda p: p[0]))
    port = free_udp_port()
    flow_dir = tmp_path / "nfcapd"
    flow_dir.mkdir()
    collector = subprocess.Popen(["nfcapd", "-b", "127.0.0.1", "-p", str(port), "-w", str(flow_dir), "-t", "60"],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 5
        while not udp_port_bound(port):
            assert collector.poll() is None, collector.stdout.read()
            assert time.monotonic() < deadline, "nfcapd did not start listening"
            time.sleep(0.05)
        out = tmp_path / "mix.csv"
        proc = run_cli("flows", str(pcap), "-o", str(out), "--ipfix", f"127.0.0.1:{port}", "--json")
        assert proc.returncode == 0, proc.stderr
        stats = json.loads(proc.stdout)
        time.sleep(0.3)  # let nfcapd drain its socket before it is told to stop
    finally:
        collector.send_signal(signal.SIGTERM)
        collector.wait(timeout=10)
    dump = subprocess.run(["nfdump", "-R", str(flow_dir), "-o", "csv", "-q"], capture_output=True, text=True,
                          timeout=30)
    assert dump.returncode == 0, dump.stderr
    lines = [line for line in dump.stdout.splitlines() if line and line[0].isdigit()]
    header = "ts,te,td,sa,da,sp,dp,pr,flg,fwd,stos,ipkt,ibyt".split(",")
    flows = [dict(zip(header, row)) for row in csv.reader(io.StringIO("\n".join(lines)))]

    records = load_records(out)
    expected = []  # one uni-directional flow per direction that has packets
    for r in records:
        expected.append((r["SrcAddr"], r["DstAddr"], r["Sport"], r["Dport"], r["SrcPkts"], r["SrcBytes"]))
        if r["DstPkts"]:
            expected.append((r["DstAddr"], r["SrcAddr"], r["Dport"], r["Sport"], r["DstPkts"], r["DstBytes"]))
    got = [(f["sa"], f["da"], int(f["sp"]), int(f["dp"]), int(f["ipkt"]), int(f["ibyt"])) for f in flows]
    assert sorted(got) == sorted(expected)
    assert sum(int(f["ipkt"]) for f in flows) == stats["packets"]
    assert sum(int(f["ibyt"]) for f in flows) == stats["bytes"]
