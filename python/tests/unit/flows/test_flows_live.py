"""`nicbench flows --live lo --duration ...`: capture from an interface, stop on time, flush records.

Needs CAP_NET_RAW (AF_PACKET): without it the test fails under CI=true and is skipped outside
(helpers.missing). Other traffic on `lo` may show up as extra
flows: the test only asserts about its own UDP flow.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

from helpers import missing

from nicbench.flows import load_records


def require_packet_sockets() -> None:
    """Can this process open an AF_PACKET socket (CAP_NET_RAW)? The meter needs the same."""
    try:
        socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0).close()
    except PermissionError as exc:
        missing(f"live capture needs CAP_NET_RAW (AF_PACKET socket: {exc}); run the tests as root")


def packet_socket_open(pid: int, ifindex: int) -> bool:
    """Has process `pid` an AF_PACKET socket bound to `ifindex` yet? (/proc/net/packet lists them
    by inode, with the bound interface in its Iface column.)"""
    with open("/proc/net/packet") as f:
        rows = [line.split() for line in list(f)[1:]]
    inodes = {row[-1] for row in rows if len(row) >= 9 and row[4] == str(ifindex)}
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except FileNotFoundError:
        return False
    for fd in fds:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:[") and target[8:-1] in inodes:
            return True
    return False


def test_live_loopback_counts_each_packet_once(tmp_path):
    require_packet_sockets()
    out = tmp_path / "live.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "nicbench.cli", "flows", "--live", "lo", "--duration", "3s", "-o", str(out), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    receiver = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    receiver.bind(("127.0.0.1", 0))  # a listener, so the kernel answers with no ICMP unreachable
    sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sender.bind(("127.0.0.1", 0))
    sport, dport = sender.getsockname()[1], receiver.getsockname()[1]
    try:
        # The 3 s run starts when the meter has bound its socket: send only once it has.
        deadline = time.monotonic() + 30
        while not packet_socket_open(proc.pid, socket.if_nametoindex("lo")):
            assert proc.poll() is None, f"the meter exited before capturing: {proc.communicate()[1]}"
            assert time.monotonic() < deadline, "the meter did not open its packet socket within 30 s"
            time.sleep(0.02)
        for _ in range(20):
            sender.sendto(b"x" * 100, receiver.getsockname())
        stdout, stderr = proc.communicate(timeout=20)
    finally:
        sender.close()
        receiver.close()
    assert proc.returncode == 0, stderr
    stats = json.loads(stdout)
    assert stats["interrupted"] is False
    mine = [r for r in load_records(out) if r["Proto"] == "udp" and {r["Sport"], r["Dport"]} == {sport, dport}]
    assert len(mine) == 1, mine
    assert mine[0]["Sport"] == sport and mine[0]["SrcAddr"] == "127.0.0.1"
    assert (mine[0]["SrcPkts"], mine[0]["DstPkts"]) == (20, 0)
    assert mine[0]["SrcBytes"] == 20 * (14 + 20 + 8 + 100)
