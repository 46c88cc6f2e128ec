"""Ctrl-C: `nicbench flows` stops, flushes every active flow, writes everything, exits 130.

The capture is streamed through a FIFO: a prefix, then (after SIGINT) a trickle, so the run is
still going when SIGINT arrives however fast the meter is; the packets the meter had read must all
be in the output.
"""

from __future__ import annotations

import array
import fcntl
import json
import os
import signal
import subprocess
import sys
import termios
import threading
import time

import nicbench
from nicbench.flows import load_records
from nicbench.units import Rate

PCAP_HEADER_BYTES, RECORD_HEADER_BYTES = 24, 16


def distinct_flows(pcap_bytes: bytes, packets: int) -> int:
    """Distinct unordered IPv4/UDP 5-tuples among the first `packets` records of a classic pcap
    (the generator's frames: Ethernet + IPv4 without options)."""
    seen, offset = set(), PCAP_HEADER_BYTES
    for _ in range(packets):
        caplen = int.from_bytes(pcap_bytes[offset + 8 : offset + 12], "little")
        frame = pcap_bytes[offset + RECORD_HEADER_BYTES : offset + RECORD_HEADER_BYTES + caplen]
        a, b = frame[26:30] + frame[34:36], frame[30:34] + frame[36:38]
        seen.add((min(a, b), max(a, b)))
        offset += RECORD_HEADER_BYTES + caplen
    return len(seen)


def _ctrl_c_as_in_a_shell() -> None:
    """The child gets SIGINT as from an interactive shell: default disposition, not blocked.
    Ignored or blocked signals are inherited across exec, and in the full suite the pytest
    process can carry either (the meter then never sees the Ctrl-C and exits 0)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def record_boundary(pcap_bytes: bytes, packets: int) -> int:
    """Byte offset just after the first `packets` records of a classic pcap."""
    offset = PCAP_HEADER_BYTES
    for _ in range(packets):
        offset += RECORD_HEADER_BYTES + int.from_bytes(pcap_bytes[offset + 8 : offset + 12], "little")
    return offset


def pipe_bytes_unread(fd: int) -> int:
    """Bytes written to a pipe/FIFO that its reader has not read yet (FIONREAD, either end)."""
    buf = array.array("i", [0])
    fcntl.ioctl(fd, termios.FIONREAD, buf)
    return buf[0]


def test_sigint_flushes_every_flow(tmp_path):
    """Events, not timing: the meter first reads PREFIX_PACKETS whole records through a FIFO, and
    only once the FIFO is empty (all read) does it get SIGINT; then the rest trickles in one record
    at a time (the meter checks its stop flag between packets, and a reader blocked on an empty
    FIFO needs data to wake up), far slower than the meter reads."""
    prefix_packets, total_packets = 20_000, 200_000
    pcap = tmp_path / "big.pcap"
    cfg = nicbench.GenConfig(
        flows=5000, size=64, rate=Rate(1e9, "bps"), duration_ns=None, packets=total_packets, seed=5
    )
    nicbench.generate_pcap(cfg, str(pcap))
    data = pcap.read_bytes()
    prefix_end = record_boundary(data, prefix_packets)
    trickle_bytes = 64  # about one record of this trace (16 B header + 60 B frame) per write
    fifo = tmp_path / "live.pcap"
    os.mkfifo(fifo)
    out = tmp_path / "flows.csv"
    proc = subprocess.Popen(
        [sys.executable, "-m", "nicbench.cli", "flows", str(fifo), "--workers", "2", "-o", str(out), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_ctrl_c_as_in_a_shell,
    )

    prefix_read, interrupted, failure = threading.Event(), threading.Event(), []

    def feed() -> None:
        try:
            with open(fifo, "wb", buffering=0) as f:  # returns once the meter has opened the FIFO
                f.write(data[:prefix_end])
                deadline = time.monotonic() + 60
                while pipe_bytes_unread(f.fileno()):
                    if time.monotonic() > deadline:
                        raise AssertionError(f"the meter left {pipe_bytes_unread(f.fileno())} B unread for 60 s")
                    time.sleep(0.005)  # bounded poll on the FIFO's fill level
                prefix_read.set()
                interrupted.wait(timeout=60)
                for start in range(prefix_end, len(data), trickle_bytes):
                    f.write(data[start : start + trickle_bytes])
                    time.sleep(0.005)
        except BrokenPipeError:
            pass  # the meter stopped reading: expected after SIGINT
        except Exception as exc:  # reported by the test, not lost in the thread
            failure.append(exc)
            prefix_read.set()

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    assert prefix_read.wait(timeout=90) and not failure, failure
    assert proc.poll() is None, proc.communicate()[1]
    proc.send_signal(signal.SIGINT)
    interrupted.set()
    stdout, stderr = proc.communicate(timeout=60)
    writer.join(timeout=10)
    assert not failure, failure
    assert proc.returncode == 130, stderr
    assert "interrupted" in stderr
    stats = json.loads(stdout)
    assert stats["interrupted"] is True
    # Nothing read before the Ctrl-C is lost; the input was not read to its end.
    assert prefix_packets <= stats["packets"] < total_packets
    records = load_records(out)
    assert sum(r["TotPkts"] for r in records) == stats["packets"]
    assert sum(r["TotBytes"] for r in records) == stats["bytes"]
    assert len(records) == stats["records"]
    assert len({(r["SrcAddr"], r["Sport"], r["DstAddr"], r["Dport"]) for r in records}) == distinct_flows(
        data, stats["packets"]
    )
