"""Ctrl-C: `nicbench flows` stops, flushes every active flow, writes everything, exits 130.

The capture is streamed through a FIFO at a bounded rate, so the run is still going when SIGINT
arrives however fast the meter is; the packets the meter had read must all be in the output.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
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
        caplen = int.from_bytes(pcap_bytes[offset + 8:offset + 12], "little")
        frame = pcap_bytes[offset + RECORD_HEADER_BYTES:offset + RECORD_HEADER_BYTES + caplen]
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


def test_sigint_flushes_every_flow(tmp_path):
    pcap = tmp_path / "big.pcap"
    cfg = nicbench.GenConfig(flows=5000, size=64, rate=Rate(1e9, "bps"), duration_ns=None, packets=200_000, seed=5)
    nicbench.generate_pcap(cfg, str(pcap))
    data = pcap.read_bytes()
    fifo = tmp_path / "live.pcap"
    os.mkfifo(fifo)
    out = tmp_path / "flows.csv"
    proc = subprocess.Popen([sys.executable, "-m", "nicbench.cli", "flows", str(fifo), "--workers", "2", "-o", str(out),
                             "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_ctrl_c_as_in_a_shell)

    reading = threading.Event()

    def feed() -> None:
        # ~4 MB/s: the whole file would take ~4 s; SIGINT comes ~0.5 s after the meter opened it.
        try:
            with open(fifo, "wb") as f:  # returns once the meter has opened the FIFO
                reading.set()
                for start in range(0, len(data), 40_000):
                    f.write(data[start:start + 40_000])
                    f.flush()
                    time.sleep(0.01)
        except BrokenPipeError:
            pass  # the meter stopped reading: expected after SIGINT

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    assert reading.wait(timeout=30), "nicbench never opened the capture"
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=20)
    writer.join(timeout=10)
    assert proc.returncode == 130, stderr
    assert "interrupted" in stderr
    stats = json.loads(stdout)
    assert stats["interrupted"] is True
    assert 0 < stats["packets"] < 200_000
    records = load_records(out)
    assert sum(r["TotPkts"] for r in records) == stats["packets"]
    assert sum(r["TotBytes"] for r in records) == stats["bytes"]
    assert len(records) == stats["records"]
    assert len({(r["SrcAddr"], r["Sport"], r["DstAddr"], r["Dport"]) for r in records}) == distinct_flows(
        data, stats["packets"])
