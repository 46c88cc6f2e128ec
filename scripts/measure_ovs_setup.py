#!/usr/bin/env python3
"""Measures the flow set-up cost of this machine's real Open vSwitch (the userspace datapath,
dpif-netdev, on dummy ports polled by one PMD thread): what the virtual OVS's `upcall_us` and
`revalidate_flow_us` are taken from (profiles/connectx5-25g.toml, profiles/agilio-cx-25g.toml).

    python3 scripts/measure_ovs_setup.py [--flows N[,N...]] [--repeat R] [--json]

For each N: N exact 5-tuple UDP rules and one packet per rule (N upcalls), then the same packets
again (N megaflow hits). Printed per run: OVS's own cycles per upcall on the PMD thread
(`ovs-appctl dpif-netdev/pmd-perf-show`, PMD_CYCLES_UPCALL) in µs at the TSC's rate; the miss
pass's processing cycles minus the hit pass's per upcall (a cross-check that does not rely on
OVS's upcall counter); the wall-clock set-up rate (bounded by the injection, one
`ovs-appctl netdev-dummy/receive` call per 100 packets, not by OVS); the revalidator's dump
duration with the N flows (`ovs-appctl upcall/show`, whole ms) per flow; and the coverage
counters upcall_flow_limit_hit, dpif_flow_put, handler_duplicate_upcall, xlate_actions.

In dpif-netdev the upcall runs inline on the PMD thread that received the packet
(dp_netdev_upcall → upcall_cb in ofproto-dpif-upcall.c), not on the kernel datapath's handler
threads; the cost per upcall (classifier walk, xlate, ukey, flow put) is the same code.

Needs openvswitch-switch (`make peers`); runs a private ovs-vswitchd in a temporary directory
(python/tests/peers/ovs_peer.py) and stops it. Exit 2 on bad arguments."""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python" / "tests"))


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown CPU"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--flows", default="2000,5000,9000", help="flow counts, comma-separated (each 1..9000)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per flow count (default 3)")
    ap.add_argument("--json", action="store_true", help="print every run as JSON")
    args = ap.parse_args(argv)
    try:
        counts = [int(x) for x in args.flows.split(",")]
    except ValueError:
        ap.error(f"--flows: not a list of integers: {args.flows!r}")
    # OVS's dynamic flow limit starts at 10000 flows (ofproto-dpif-upcall.c): stay under it.
    if any(not 1 <= n <= 9000 for n in counts) or args.repeat < 1:
        ap.error("--flows: each between 1 and 9000; --repeat: at least 1")

    from peers.ovs_peer import Ovs, measure_setup

    ovs = Ovs(pmd=True)
    runs = []
    try:
        version = ovs._run("ovs-vswitchd", "--version").splitlines()[0]
        for n in counts:
            for _ in range(args.repeat):
                runs.append(measure_setup(ovs, n))
    finally:
        ovs.stop()
    if args.json:
        print(
            json.dumps(
                {"ovs": version, "cpu": cpu_model(), "cores": os.cpu_count(), "runs": runs},
                indent=1,
            )
        )
        return 0
    print(f"{version}; {cpu_model()}, TSC {runs[0]['tsc_hz'] / 1e9:.2f} GHz")
    print("flows  upcalls  us/upcall(OVS)  miss-hit us  wall upcalls/s  dump ms  us/flow dumped  limit hits")
    for r in runs:
        print(
            f"{r['flows_offered']:5d}  {r['miss_pass']['upcalls']:7d}  {r['us_per_upcall']:14.2f}  "
            f"{r['miss_minus_hit_us']:11.2f}  {r['wall_upcalls_per_s']:14.0f}  {r['dump_ms'] or -1:7d}  "
            f"{r['us_per_flow_dumped'] or float('nan'):14.2f}  {r['coverage']['upcall_flow_limit_hit']:10d}"
        )
    us = [r["us_per_upcall"] for r in runs]
    big = [r["us_per_flow_dumped"] for r in runs if r["flows_offered"] == max(counts) and r["us_per_flow_dumped"]] or [
        float("nan")
    ]
    print(
        f"median: {statistics.median(us):.2f} us per upcall on one thread "
        f"({1e6 / statistics.median(us):,.0f} set-ups/s), {statistics.median(big):.2f} us per flow dumped "
        f"(at {max(counts)} flows)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
