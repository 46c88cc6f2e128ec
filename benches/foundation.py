"""Foundation benchmark: `python benches/foundation.py` (also `make bench`).

Prints the figures recorded in BENCHMARKS.md. Everything is measured in this run,
on this machine: nicbench's Rust pipeline (timed inside Rust, so Python call overhead
is excluded) side by side with tcpdump and scapy on the *same* files, as ratios.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from machine import machine_description  # benches/machine.py (a script's folder is on sys.path)

from nicbench import _native
from nicbench.packets import SYMMETRIC_KEY
from nicbench.rules import generate_rules
from nicbench.traffic import GenConfig, generate_pcap, generate_pcap_for_rules
from nicbench.units import Rate


@dataclass
class Figure:
    name: str
    value: float
    unit: str
    note: str = ""


def best_of(runs: int, fn) -> list[float]:
    return [fn() for _ in range(runs)]


def gen_trace(path: Path, frame_bytes: int, packets: int, flows: int = 10_000) -> float:
    """Write a trace; returns the generator's rate in Mpps (wall time of the native call)."""
    cfg = GenConfig(flows=flows, size=frame_bytes, rate=Rate(100e9, "bps"), duration_ns=None, packets=packets)
    t0 = time.perf_counter()
    generate_pcap(cfg, str(path))
    return packets / (time.perf_counter() - t0) / 1e6


def nicbench_pipeline_mpps(path: Path, runs: int) -> float:
    """read + parse + FlowKey + Toeplitz(symmetric) per packet, one core, median of runs."""
    rates = []
    for _ in range(runs):
        packets, elapsed_ns = _native.scan_pipeline(str(path), SYMMETRIC_KEY)
        rates.append(packets / (elapsed_ns / 1e9) / 1e6)
    return statistics.median(rates)


def tcpdump_mpps(path: Path, packets: int, runs: int) -> float | None:
    tcpdump = shutil.which("tcpdump")
    if tcpdump is None:
        return None
    rates = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(
            [tcpdump, "-r", str(path), "-w", "/dev/null"],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        rates.append(packets / (time.perf_counter() - t0) / 1e6)
    return statistics.median(rates)


def scapy_mpps(path: Path, packets: int) -> float | None:
    try:
        from scapy.all import rdpcap  # scapy.all: with its dissectors loaded, as users run it
    except ImportError:
        return None
    t0 = time.perf_counter()
    got = len(rdpcap(str(path)))
    elapsed = time.perf_counter() - t0
    assert got == packets, f"scapy read {got} packets, expected {packets}"
    return packets / elapsed / 1e6


# A fresh, small interpreter starts the measured command: a child forked from this
# (large, scapy-filled) process would inherit its resident set as its high-water mark.
_RSS_PROBE = (
    "import os, subprocess, sys, time\n"
    "t0 = time.perf_counter()\n"
    "p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
    "_, status, usage = os.wait4(p.pid, 0)\n"
    "print(os.waitstatus_to_exitcode(status), usage.ru_maxrss, time.perf_counter() - t0)\n"
)


def peak_rss_mib(argv: list[str]) -> tuple[float, float]:
    """Run a command; return (peak RSS [MiB], wall seconds) of that command alone."""
    out = subprocess.run([sys.executable, "-c", _RSS_PROBE, *argv], capture_output=True, text=True, check=True)
    code, maxrss_kib, seconds = out.stdout.split()
    if int(code) != 0:
        raise RuntimeError(f"{' '.join(argv)} failed with exit code {code}")
    return int(maxrss_kib) / 1024, float(seconds)


def generator_figures(gen_packets: int) -> list[Figure]:
    """Generator writing pcap, on tmpfs when there is one: the figure is CPU + page cache, not the disk
    (a disk's dirty-page writeback throttles multi-hundred-MB writes to well below the generator's rate)."""
    shm = Path("/dev/shm")
    where = shm if shm.is_dir() and os.access(shm, os.W_OK) else Path(tempfile.gettempdir())
    figs = []
    for frame in (64, 1500):
        path = where / f"nicbench-bench-gen-{os.getpid()}-{frame}.pcap"
        try:
            rate = gen_trace(path, frame, gen_packets)
        finally:
            path.unlink(missing_ok=True)
        figs.append(
            Figure(
                f"generator writing pcap, {frame} B",
                rate,
                "Mpps",
                f"{gen_packets:,} packets, 10K flows, one core, to {where}",
            )
        )
    return figs


def for_rules_figure(workdir: Path, rules: int = 100_000, packets: int = 1_000_000) -> Figure:
    """`gen --for-rules`: a frame per rule found and checked by lookup, then the trace written."""
    path, out = workdir / "for-rules.flow", workdir / "for-rules.pcap"
    generate_rules("exact5", rules, 4, str(path), seed=1)
    cfg = GenConfig(flows=1, size=64, duration_ns=None, packets=packets, seed=1)
    start = time.perf_counter()
    met = generate_pcap_for_rules(cfg, str(path), str(out))["rules_met"]
    seconds = time.perf_counter() - start
    path.unlink()
    out.unlink()
    return Figure(
        f"gen --for-rules, {rules:,} exact5 rules over 4 groups",
        met / seconds,
        "rules met/s",
        f"{met:,} rules met, {packets:,} x 64 B written, one core, {seconds:.2f} s wall",
    )


def foundation(workdir: Path, side_packets: int, big_packets: int, runs: int, gen_packets: int) -> list[Figure]:
    figs: list[Figure] = generator_figures(gen_packets)
    figs.append(for_rules_figure(workdir))
    for frame in (64, 1500):
        trace = workdir / f"side-{frame}.pcap"
        gen_trace(trace, frame, side_packets)
        mine = nicbench_pipeline_mpps(trace, runs)
        figs.append(
            Figure(
                f"pcap read+parse+FlowKey+Toeplitz, {frame} B",
                mine,
                "Mpps",
                f"{side_packets:,} packets in page cache, one core, median of {runs}",
            )
        )
        td = tcpdump_mpps(trace, side_packets, runs)
        if td is None:
            figs.append(Figure(f"tcpdump -r -w /dev/null, {frame} B", float("nan"), "Mpps", "tcpdump not installed"))
        else:
            figs.append(Figure(f"tcpdump -r -w /dev/null, {frame} B", td, "Mpps", f"median of {runs}"))
            figs.append(Figure(f"nicbench / tcpdump, {frame} B", mine / td, "x"))
        sc = scapy_mpps(trace, side_packets) if frame == 64 else None
        if sc is not None:
            figs.append(Figure(f"scapy rdpcap, {frame} B", sc, "Mpps", "one run"))
            figs.append(Figure(f"nicbench / scapy, {frame} B", mine / sc, "x"))
        trace.unlink()

    # Flat memory on a 10M-packet trace, through the real CLI.
    nicbench = [sys.executable, "-m", "nicbench.cli"]
    big = workdir / "big.pcap"
    for label, argv in (
        (
            "gen",
            nicbench
            + [
                "gen",
                "--flows",
                "10000",
                "--size",
                "64",
                "--rate",
                "100Gbps",
                "--packets",
                str(big_packets),
                "-o",
                str(big),
            ],
        ),
        ("pcap info", nicbench + ["pcap", "info", str(big), "--json"]),
        ("rss", nicbench + ["rss", str(big), "--queues", "16", "--json"]),
    ):
        rss_mib, seconds = peak_rss_mib(argv)
        figs.append(
            Figure(
                f"peak RSS, nicbench {label}, {big_packets:,} x 64 B",
                rss_mib,
                "MiB",
                f"{seconds:.1f} s wall incl. Python start-up",
            )
        )
    figs.append(Figure("trace file size", big.stat().st_size / 2**20, "MiB"))
    big.unlink()
    return figs


def print_table(figs: list[Figure]) -> None:
    width = max(len(f.name) for f in figs)
    for f in figs:
        if f.value != f.value:
            value = "n/a"
        elif abs(f.value) < 1:
            value = f"{f.value:.4f}"
        else:
            value = f"{f.value:,.2f}"
        print(f"{f.name:<{width}}  {value:>10} {f.unit:<5} {f.note}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python benches/foundation.py", description=__doc__)
    parser.add_argument(
        "--packets", type=int, default=200_000, help="packets in the side-by-side traces (scapy reads them all)"
    )
    parser.add_argument("--big-packets", type=int, default=10_000_000, help="packets in the flat-memory trace")
    parser.add_argument("--gen-packets", type=int, default=5_000_000, help="packets in the generator measurement")
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--dir", default=None, help="scratch directory (default: a temp dir)")
    args = parser.parse_args(argv)
    print(f"# nicbench {_native.__version__} bench foundation, {time.strftime('%Y-%m-%d')}")
    print(f"# machine: {machine_description()}; load average before: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        figs = foundation(Path(tmp), args.packets, args.big_packets, args.runs, args.gen_packets)
    print_table(figs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
