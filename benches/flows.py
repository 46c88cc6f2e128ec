"""Flow-meter benchmark: `python benches/flows.py` (issue 6, part 2; `make bench-flows`).

Generates pcaps (64 B and 750 B frames; 256, 16K, 64K and 1M flows; plus the issue's reference
trace, 2M packets / 50K flows), then meters each file, in the same run and from the page cache,
with nicbench (1 and 2 workers), Argus (`argus -X -S 60 -r FILE -w /dev/null`), nfpcapd
(`nfpcapd -r FILE -w DIR`) and NFStream (PyPI `nfstream`, installed into the venv on demand for
this benchmark only; skipped with a message if it cannot be installed).

Figures: wall-clock Mpps, and Mpps per core = packets / CPU seconds (user + system of the process
and its children, from getrusage), which is fair between one-thread and multi-thread tools. A
peer's fixed start-up cost (process start, Python imports for NFStream; Argus also idles ~1 s
before exiting) is measured once on a 1,000-packet trace and subtracted, so every tool is credited
with its steady-state metering rate; nicbench is timed inside Rust around the run.
nicbench's totals (packets, bytes) are checked against the pcap's; so are nfpcapd's and NFStream's
packet totals where they print them.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from machine import machine_description  # benches/machine.py (a script's folder is on sys.path)
from rich.console import Console
from rich.table import Table

from nicbench.flows import meter
from nicbench.traffic import GenConfig, generate_pcap
from nicbench.units import Rate, parse_count

# Wide enough for the table when the output goes to a file or a CI log (rich defaults to 80 columns).
console = Console(width=None if Console().is_terminal else 140)

ARGUS_REFERENCE_MPPS = 0.66  # issue 6: Argus on one core, 2M packets / 50K flows, "this kind of machine"
TARGET_RATIO_VS_ARGUS = 10.0
TARGET_MPPS_16K = 10.0


@dataclass
class Trace:
    name: str
    path: Path
    frame_bytes: int
    flows: int
    packets: int
    bytes: int


@dataclass
class Measure:
    tool: str
    trace: str
    wall_s: float
    cpu_s: float
    packets: int
    ok: bool = True
    note: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def mpps(self) -> float:
        return self.packets / self.wall_s / 1e6 if self.wall_s > 0 else float("nan")

    @property
    def mpps_per_core(self) -> float:
        return self.packets / self.cpu_s / 1e6 if self.cpu_s > 0 else float("nan")


def _cpu_s(who: int) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def timed_subprocess(cmd: list[str], **kwargs) -> tuple[float, float, subprocess.CompletedProcess]:
    """Run `cmd`; returns (wall s, CPU s of the child and its descendants, result)."""
    cpu0, t0 = _cpu_s(resource.RUSAGE_CHILDREN), time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    return time.perf_counter() - t0, _cpu_s(resource.RUSAGE_CHILDREN) - cpu0, proc


def make_trace(workdir: Path, frame_bytes: int, flows: int, packets: int) -> Trace:
    name = f"{frame_bytes}B-{_short(flows)}flows-{_short(packets)}pkts"
    path = workdir / f"{name}.pcap"
    # 100 Gbps pacing gives realistic timestamps (Argus' timers run on them); unpaced would not.
    cfg = GenConfig(flows=flows, size=frame_bytes, rate=Rate(100e9, "bps"), duration_ns=None, packets=packets, seed=7)
    summary = generate_pcap(cfg, str(path))
    return Trace(name, path, frame_bytes, flows, summary["packets"], summary["bytes"])


def _short(n: int) -> str:
    for unit, scale in (("M", 1 << 20), ("K", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale}{unit}"
    for unit, scale in (("M", 10**6), ("K", 10**3)):
        if n >= scale and n % scale == 0:
            return f"{n // scale}{unit}"
    return str(n)


def warm(trace: Trace) -> None:
    """Read the file once so that every tool reads it from the page cache."""
    with open(trace.path, "rb") as f:
        while f.read(1 << 24):
            pass


def table_size(flows: int) -> int:
    """max_flows for a trace: twice its flows, a power of two, at least 64K. The default (1M) table
    costs ~0.1 s to allocate, which would dominate short runs; a deployment sizes it to its load."""
    return max(1 << 16, 1 << (2 * flows - 1).bit_length())


def run_nicbench(trace: Trace, workers: int) -> Measure:
    cpu0, t0 = _cpu_s(resource.RUSAGE_SELF), time.perf_counter()
    stats = meter(trace.path, workers=workers, compat="argus", max_flows=table_size(trace.flows))
    wall, cpu = time.perf_counter() - t0, _cpu_s(resource.RUSAGE_SELF) - cpu0
    ok = stats["packets"] == trace.packets and stats["bytes"] == trace.bytes
    note = "" if ok else f"totals differ: {stats['packets']} pkts / {stats['bytes']} B"
    # Wall time from Rust excludes Python call overhead (~µs); use it for the rate.
    return Measure(
        f"nicbench {workers}w",
        trace.name,
        stats["elapsed_ns"] / 1e9 or wall,
        cpu,
        stats["packets"],
        ok,
        note,
        {
            "flows": stats["flows"],
            "imbalance": stats["imbalance"],
            "evicted": stats["evicted"],
            "max_flows": stats["config"]["max_flows"],
        },
    )


@dataclass
class Startup:
    """Fixed cost of one peer invocation [s], from a 1,000-packet trace."""

    wall_s: float = 0.0
    cpu_s: float = 0.0


STARTUP: dict[str, Startup] = {}


def corrected(m: Measure | None) -> Measure | None:
    """Subtract the peer's start-up cost (never below a tenth of the measure: a floor against noise)."""
    if m is None or m.tool not in STARTUP:
        return m
    s = STARTUP[m.tool]
    m.extra["raw_wall_s"], m.extra["raw_cpu_s"] = m.wall_s, m.cpu_s
    m.wall_s = max(m.wall_s - s.wall_s, m.wall_s / 10)
    m.cpu_s = max(m.cpu_s - s.cpu_s, m.cpu_s / 10)
    return m


def measure_startup(workdir: Path, peers: list[str]) -> None:
    tiny = make_trace(workdir, 64, 100, 1000)
    runners = {"argus": run_argus, "nfpcapd": run_nfpcapd, "nfstream": run_nfstream}
    for peer in peers:
        m = runners[peer](tiny)
        if m is not None and m.ok:
            STARTUP[m.tool] = Startup(m.wall_s, m.cpu_s)
    tiny.path.unlink()
    if STARTUP:
        console.print(
            "[dim]peer start-up (subtracted): "
            + ", ".join(f"{k} {v.wall_s:.2f} s wall / {v.cpu_s:.2f} s CPU" for k, v in STARTUP.items())
            + "[/]"
        )


def run_argus(trace: Trace) -> Measure | None:
    if shutil.which("argus") is None:
        return None
    wall, cpu, proc = timed_subprocess(["argus", "-X", "-S", "60", "-r", str(trace.path), "-w", "/dev/null"])
    return Measure(
        "argus",
        trace.name,
        wall,
        cpu,
        trace.packets,
        proc.returncode == 0,
        "" if proc.returncode == 0 else proc.stderr.strip()[:80],
    )


def run_nfpcapd(trace: Trace) -> Measure | None:
    if shutil.which("nfpcapd") is None:
        return None
    with tempfile.TemporaryDirectory(prefix="nfpcapd-") as out_dir:
        wall, cpu, proc = timed_subprocess(["nfpcapd", "-r", str(trace.path), "-w", out_dir])
    m = re.search(r"Processed:\s*(\d+)", proc.stdout + proc.stderr)
    processed = int(m.group(1)) if m else None
    ok = proc.returncode == 0 and processed == trace.packets
    note = "" if ok else f"rc {proc.returncode}, processed {processed}"
    return Measure("nfpcapd", trace.name, wall, cpu, trace.packets, ok, note)


_NFSTREAM_SCRIPT = """
import sys, time
from nfstream import NFStreamer
t0 = time.perf_counter()
packets = sum(f.bidirectional_packets for f in NFStreamer(source=sys.argv[1], n_meters=1, statistical_analysis=False,
                                                        splt_analysis=0, n_dissections=0))
print(packets, time.perf_counter() - t0)
"""


def nfstream_available(install: bool) -> str | None:
    """None if NFStream can be imported (installing it into this venv if asked), else why not."""
    check = [sys.executable, "-c", "import nfstream"]
    if subprocess.run(check, capture_output=True).returncode == 0:
        return None
    if not install:
        return "nfstream is not installed (--no-install)"
    console.print("[dim]installing nfstream into the venv for this benchmark (not a project dependency)…[/]")
    pip = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "nfstream"],
        capture_output=True,
        text=True,
    )
    if pip.returncode != 0 or subprocess.run(check, capture_output=True).returncode != 0:
        return "nfstream could not be installed: " + " ".join((pip.stderr or pip.stdout).split())[-160:]
    return None


def run_nfstream(trace: Trace) -> Measure:
    wall, cpu, proc = timed_subprocess([sys.executable, "-c", _NFSTREAM_SCRIPT, str(trace.path)])
    try:
        packets = int(proc.stdout.split()[0])
    except (IndexError, ValueError):
        return Measure("nfstream", trace.name, wall, cpu, trace.packets, False, proc.stderr.strip()[-80:])
    # NFStream drops nothing here but reports what it metered: the rate uses the file's packets.
    ok = packets == trace.packets
    return Measure("nfstream", trace.name, wall, cpu, trace.packets, ok, "" if ok else f"metered {packets}")


def matrix(sizes: list[int], flow_counts: list[int], packets: int, reference: bool, ref_packets: int) -> list[tuple]:
    jobs = [(s, f, max(packets, 2 * f)) for s in sizes for f in flow_counts]
    if reference:
        jobs.append((750, 50_000, ref_packets))
    return jobs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python benches/flows.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="64,750", help="frame sizes [B] (default 64,750)")
    ap.add_argument("--flows", default="256,16K,64K,1M", help="flow counts (K/M = 1024-based as in the issue)")
    ap.add_argument("--packets", default="1M", help="packets per matrix trace (at least 2 per flow)")
    ap.add_argument("--reference-packets", default="2M", help="packets of the 50K-flow reference trace")
    ap.add_argument("--no-reference", action="store_true", help="skip the 2M packets / 50K flows reference trace")
    ap.add_argument("--workers", default="1,2", help="nicbench worker counts")
    ap.add_argument("--peers", default="argus,nfpcapd,nfstream", help="peers to run ('' for none)")
    ap.add_argument("--no-install", action="store_true", help="do not pip-install nfstream when missing")
    ap.add_argument(
        "--quick", action="store_true", help="small run: 200K packets, 64 B and 750 B at 16K flows, no reference"
    )
    ap.add_argument("--workdir", default=None, help="where the pcaps go (default: a temporary directory)")
    ap.add_argument("--json", dest="json_out", default=None, help="also write the measures to this JSON file")
    args = ap.parse_args(argv)

    def counts(text: str) -> list[int]:
        out = []
        for part in text.split(","):
            part = part.strip()
            m = re.fullmatch(r"(\d+)([KM])", part)
            out.append(int(m.group(1)) * {"K": 1024, "M": 1 << 20}[m.group(2)] if m else parse_count(part))
        return out

    sizes, flow_counts = counts(args.sizes), counts(args.flows)
    packets, ref_packets = parse_count(args.packets), parse_count(args.reference_packets)
    reference = not args.no_reference
    if args.quick:
        flow_counts, packets, reference = [16384], 200_000, False
    workers = [int(w) for w in args.workers.split(",") if w.strip()]
    peers = [p.strip() for p in args.peers.split(",") if p.strip()]

    load = os.getloadavg()
    console.print(f"[bold]machine[/]: {machine_description()}; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    skipped = []
    if "argus" in peers and shutil.which("argus") is None:
        skipped.append("argus: not installed (scripts/install-peers.sh)")
    if "nfpcapd" in peers and shutil.which("nfpcapd") is None:
        skipped.append("nfpcapd: not installed (scripts/install-peers.sh)")
    if "nfstream" in peers:
        why = nfstream_available(install=not args.no_install)
        if why:
            skipped.append(why)
            peers.remove("nfstream")
    for line in skipped:
        console.print(f"[yellow]skipped[/] {line}")

    tmp = None if args.workdir else tempfile.TemporaryDirectory(prefix="bench-flows-")
    workdir = Path(args.workdir or tmp.name)
    workdir.mkdir(parents=True, exist_ok=True)
    measures: list[Measure] = []
    traces: list[Trace] = []
    try:
        measure_startup(workdir, peers)
        for frame_bytes, flows, n in matrix(sizes, flow_counts, packets, reference, ref_packets):
            trace = make_trace(workdir, frame_bytes, flows, n)
            traces.append(trace)
            warm(trace)
            row = [run_nicbench(trace, w) for w in workers]
            if "argus" in peers:
                row.append(corrected(run_argus(trace)))
            if "nfpcapd" in peers:
                row.append(corrected(run_nfpcapd(trace)))
            if "nfstream" in peers:
                row.append(corrected(run_nfstream(trace)))
            row = [m for m in row if m is not None]
            measures += row
            console.print(
                f"[dim]{trace.name}: " + ", ".join(f"{m.tool} {m.mpps_per_core:.2f}" for m in row) + " Mpps/core[/]"
            )
            trace.path.unlink()  # keep the disk footprint to one trace at a time
    finally:
        if tmp is not None:
            tmp.cleanup()
    render(traces, measures)
    if args.json_out:
        payload = {
            "machine": machine_description(),
            "load_average": load,
            "traces": [{**asdict(t), "path": str(t.path)} for t in traces],
            "measures": [{**asdict(m), "mpps": m.mpps, "mpps_per_core": m.mpps_per_core} for m in measures],
        }
        Path(args.json_out).write_text(json.dumps(payload, indent=2))
    # Exit status: nicbench's own totals must equal the pcap's; a peer's miscount is only reported.
    return 0 if all(m.ok for m in measures if m.tool.startswith("nicbench")) else 1


def render(traces: list[Trace], measures: list[Measure]) -> None:
    tools = list(dict.fromkeys(m.tool for m in measures))
    table = Table(title="flow metering, Mpps per core (packets / CPU s); wall Mpps in brackets", title_justify="left")
    table.add_column("trace")
    for tool in tools:
        table.add_column(tool, justify="right")
    table.add_column("nicbench 1w / argus", justify="right")
    table.add_column("totals", justify="center")
    for trace in traces:
        row = {m.tool: m for m in measures if m.trace == trace.name}
        cells = []
        for tool in tools:
            m = row.get(tool)
            cells.append("—" if m is None else f"{m.mpps_per_core:.2f} ({m.mpps:.2f})" + ("" if m.ok else " !"))
        one, argus = row.get("nicbench 1w"), row.get("argus")
        ratio = f"{one.mpps_per_core / argus.mpps_per_core:.1f}×" if one and argus and argus.mpps_per_core > 0 else "—"
        totals = (
            "ok"
            if all(m.ok for m in row.values())
            else "; ".join(f"{m.tool}: {m.note}" for m in row.values() if not m.ok)
        )
        table.add_row(trace.name, *cells, ratio, totals)
    console.print(table)
    one_16k = [m for m in measures if m.tool == "nicbench 1w" and "16Kflows" in m.trace]
    if one_16k:
        best = max(m.mpps_per_core for m in one_16k)
        verdict = "meets" if best >= TARGET_MPPS_16K else "misses"
        console.print(f"target ≥ {TARGET_MPPS_16K:.0f} Mpps per core at 16K flows: {best:.2f} ({verdict})")
    ratios = [
        (m.mpps_per_core / a.mpps_per_core)
        for m in measures
        if m.tool == "nicbench 1w"
        for a in measures
        if a.tool == "argus" and a.trace == m.trace and a.mpps_per_core > 0
    ]
    if ratios:
        verdict = "meets" if min(ratios) >= TARGET_RATIO_VS_ARGUS else "misses"
        console.print(
            f"target ≥ {TARGET_RATIO_VS_ARGUS:.0f}× Argus per core: {min(ratios):.1f}×–{max(ratios):.1f}× "
            f"({verdict}; the issue's Argus reference is {ARGUS_REFERENCE_MPPS} Mpps)"
        )


if __name__ == "__main__":
    sys.exit(main())
