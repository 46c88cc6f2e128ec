#!/usr/bin/env python3
"""Alternated A/B of two builds of the flow meter on the same pcap, in interleaved runs.

On a shared machine, figures taken minutes apart differ by more than most changes; this runs
every build once per round (the order rotates each round) so that they share the load.

  bin: python3 ab.py bin ROUNDS PCAP OLD_METER NEW_METER [-- WORKERS COMPAT]
       OLD/NEW_METER are builds of `examples/meter.rs` (`cargo build --release -p
       nicbench-flowmeter --example meter`, one in a checkout of the old commit, e.g. from
       `git archive OLD | tar -x -C DIR`). CPU = user + system of the whole process.
  py:  python3 ab.py py ROUNDS PCAP:FLOWS[,PCAP:FLOWS...] WORKERS[,WORKERS] OLD_DIR NEW_DIR
       OLD/NEW_DIR hold a `nicbench` package (a copy of python/nicbench with the native module
       of that build, e.g. from `maturin build --release`); each run calls nicbench.flows.meter
       in a fresh interpreter as benches/flows.py does (argus compat, table sized to the trace)
       and counts the CPU of that call only.

Prints Mpps per CPU-second, median and best, peak RSS and system time for each build; checks
that every run of every build reports the same packets and records.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys

PY_ONE = """
import json, resource, sys
from nicbench.flows import meter
path, workers, flows = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
usage = lambda: resource.getrusage(resource.RUSAGE_SELF)
before = usage()
stats = meter(path, workers=workers, compat="argus", max_flows=max(1 << 16, 1 << (2 * flows - 1).bit_length()))
after = usage()
print(json.dumps({"cpu": after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime,
                  "sys": after.ru_stime - before.ru_stime, "packets": stats["packets"],
                  "records": stats["records"], "rss_kib": after.ru_maxrss}))
"""


def run_bin(meter: str, pcap: str, args: list[str]) -> dict:
    out = subprocess.Popen([meter, "run", pcap, *args], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    text = out.stdout.read()
    _, status, usage = os.wait4(out.pid, 0)
    if status != 0:
        sys.exit(f"{meter} failed ({status})")
    stats = json.loads(text)
    return {"cpu": usage.ru_utime + usage.ru_stime, "sys": usage.ru_stime, "packets": stats["packets"],
            "records": stats["records"], "rss_kib": usage.ru_maxrss}


def run_py(package_dir: str, pcap: str, workers: int, flows: int) -> dict:
    out = subprocess.run([sys.executable, "-c", PY_ONE, pcap, str(workers), str(flows)], capture_output=True,
                         text=True, env={**os.environ, "PYTHONPATH": package_dir}, cwd="/")
    if out.returncode != 0:
        sys.exit(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def report(label: str, names: list[str], runs: dict[str, list[dict]]) -> None:
    line = [label]
    for name in names:
        ds = runs[name]
        if len({(d["packets"], d["records"]) for d in runs[names[0]] + ds}) != 1:
            sys.exit(f"{label}: packets or records differ between runs")
        cpus = [d["cpu"] for d in ds]
        packets = ds[0]["packets"]
        line.append(f"{os.path.basename(name.rstrip('/'))}: {packets / statistics.median(cpus) / 1e6:.2f} "
                    f"({packets / min(cpus) / 1e6:.2f}) Mpps/CPU-s, sys {statistics.median(d['sys'] for d in ds):.3f} s, "
                    f"peak RSS {max(d['rss_kib'] for d in ds) // 1024} MiB")
    print(" | ".join(line))


def main(argv: list[str]) -> None:
    if len(argv) < 5 or argv[0] not in ("bin", "py"):
        sys.exit(__doc__)
    mode, rounds = argv[0], int(argv[1])
    if mode == "bin":
        rest = argv[2:]
        extra = rest[rest.index("--") + 1:] if "--" in rest else ["1", "nicbench"]
        pcap, builds = rest[0], rest[1:rest.index("--")] if "--" in rest else rest[1:]
        runs: dict[str, list[dict]] = {b: [] for b in builds}
        for r in range(rounds):
            for b in builds[r % len(builds):] + builds[:r % len(builds)]:
                runs[b].append(run_bin(b, pcap, extra))
        print(f"{rounds} rounds, load {' '.join(f'{x:.1f}' for x in os.getloadavg())}; median (best)")
        report(f"{os.path.basename(pcap)} {' '.join(extra)}", builds, runs)
        return
    traces = [(p, int(f)) for p, f in (t.rsplit(":", 1) for t in argv[2].split(","))]
    workers = [int(w) for w in argv[3].split(",")]
    builds = argv[4:]
    runs_py: dict[tuple, list[dict]] = {}
    for r in range(rounds):
        for pcap, flows in traces:
            for w in workers:
                for b in builds[r % len(builds):] + builds[:r % len(builds)]:
                    runs_py.setdefault((pcap, w, b), []).append(run_py(b, pcap, w, flows))
    print(f"{rounds} rounds, load {' '.join(f'{x:.1f}' for x in os.getloadavg())}; median (best)")
    for pcap, _ in traces:
        for w in workers:
            report(f"{os.path.basename(pcap)} {w}w", builds, {b: runs_py[(pcap, w, b)] for b in builds})


if __name__ == "__main__":
    main(sys.argv[1:])
