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
from helpers import peer, run_cli

from nicbench.flows import load_records

pytestmark = pytest.mark.peer


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def udp_socket_row(port: int) -> list[str] | None:
    """The /proc/net/udp row of the socket bound to 127.0.0.1:port (as `ss -uln` reads it), or None.
    Columns: sl local rem st tx_queue:rx_queue tr retrnsmt uid timeout inode ref pointer drops."""
    with open("/proc/net/udp") as f:
        rows = [line.split() for line in list(f)[1:]]
    return next((row for row in rows if row[1] == f"0100007F:{port:04X}"), None)


def wait_until(condition, what: str, timeout_s: float = 30.0) -> None:
    """Poll `condition` until it holds (bounded: fails naming `what` after `timeout_s`)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def test_ipfix_export_read_back_by_nfcapd(tmp_path):
    peer("nfcapd", "nfdump")
    peer("nfdump")
    pcap = write_pcap(
        tmp_path / "mix.pcap", sorted(scenario_tcp() + scenario_udp() + scenario_ipv6(), key=lambda p: p[0])
    )
    port = free_udp_port()
    flow_dir = tmp_path / "nfcapd"
    flow_dir.mkdir()
    collector = subprocess.Popen(
        ["nfcapd", "-b", "127.0.0.1", "-p", str(port), "-w", str(flow_dir), "-t", "60"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:

        def listening() -> bool:
            assert collector.poll() is None, collector.stdout.read()
            return udp_socket_row(port) is not None

        wait_until(listening, "nfcapd to listen")
        out = tmp_path / "mix.csv"
        proc = run_cli("flows", str(pcap), "-o", str(out), "--ipfix", f"127.0.0.1:{port}", "--json")
        assert proc.returncode == 0, proc.stderr
        stats = json.loads(proc.stdout)
        # Every datagram is sent when the command returns: wait until nfcapd has read them all
        # (its socket's receive queue is empty) before it is told to stop.
        wait_until(lambda: udp_socket_row(port)[4].endswith(":00000000"), "nfcapd to drain its socket")
        assert int(udp_socket_row(port)[-1]) == 0, "the kernel dropped datagrams before nfcapd read them"
    finally:
        collector.send_signal(signal.SIGTERM)
        collector.wait(timeout=10)
    dump = subprocess.run(
        ["nfdump", "-R", str(flow_dir), "-o", "csv", "-q"], capture_output=True, text=True, timeout=30
    )
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
