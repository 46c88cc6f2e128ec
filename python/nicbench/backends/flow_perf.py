"""`dpdk-test-flow-perf` for the `dpdk` backend: a `connectx.install_rate` point as flow-perf arguments,
and flow-perf's report parsed.

The point's batch is one flow-perf run: `rules` → `--rules-count` and `--rules-batch` (the whole batch
is one window, as PAM'21 times one batch), `group` → `--group` (flow-perf then adds its own group-0
rule jumping there, as PAM'21's Table 1 layout), `match` → flow items, `actions` → that many flow-perf
actions, `op = delete` → `--deletion-rate` (the rate of deleting the batch just inserted), and the
backend's `dpdk_flow_cores` → `--cores` (rules split evenly over the cores). flow-perf varies the outer
IPv4/IPv6 source per rule; the other fields are fixed. flow-perf has no rule update: `update` and
`update_inplace` points are refused before anything starts.

What flow-perf prints (DPDK 22.11, app/test-flow-perf/main.c: `insert_flows`, `destroy_flows`,
`dump_used_cpu_time`, `print_flow_error`) is parsed into per-core and total rates. The totals are
flow-perf's two: "Latency" (all rules over the slowest core's time: when the batch is done) and
"Throughput" (all rules over the mean core time). When the device refuses a rule flow-perf prints
"Flow can't be created <type> message: <reason>" and exits: that is the answer recorded (refused,
with the reason), never a rate.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

__all__ = [
    "FLOW_PERF",
    "flow_perf_args",
    "install_rate",
    "parse_flow_perf",
    "run_flow_perf",
    "why_not_flow_perf",
    "ITEMS",
    "ACTIONS",
]

FLOW_PERF = "dpdk-test-flow-perf"

# nicbench's match types as flow-perf items (flow-perf varies the outer IP source per rule).
ITEMS = {
    "ipv4": ("ether", "ipv4"),
    "ipv6": ("ether", "ipv6"),
    "vlan": ("ether", "vlan", "ipv4"),
    "tunnel": ("ether", "ipv4", "udp", "vxlan"),
}
# `actions = n` takes the first n: a fate (queue) first, then actions that need no extra device setup
# (no meters, no hairpin queues, no encap data).
ACTIONS = ("queue", "mark", "count", "set-tag", "set-meta", "dec-ttl", "set-src-mac", "set-dst-mac")
# How long one flow-perf run may take before it is stopped [s] (a batch of 65,536 rules takes well
# under a second on a ConnectX: PAM'21 Fig. 5; the null device refuses the first rule at once).
TIMEOUT_S = 600.0
_NOTED: set[str] = set()

_NUM = r"([0-9]+(?:\.[0-9]+)?|inf|nan|-nan)"
_CORE_RATE = re.compile(
    r"^:: Port (\d+) :: Core (\d+) :: Rules (insertion|deletion) rate -> " + _NUM + r" K Rule/Sec", re.M
)
_CORE_TIME = re.compile(
    r"^:: Port (\d+) :: Core (\d+) :: The time for "
    r"(?:creating (\d+) in rules|deleting (\d+) rules is) " + _NUM + " seconds",
    re.M,
)
_TOTAL_RATE = re.compile(
    r":: \[(Latency|Throughput) \| (Insertion|Deletion)\] All Cores :: Port (\d+) :: "
    r"Total (?:flows insertion|deletion) rate -> " + _NUM + r" K Rules/Sec"
)
_TOTAL_TIME = re.compile(
    r":: \[(Latency|Throughput) \| (Insertion|Deletion)\] All Cores :: Port (\d+) :: "
    r"The (?:average )?time for (?:creating|deleting) (\d+) rules is " + _NUM + " seconds"
)
_FIRST = re.compile(r":: First Flow Latency :: Port (\d+) :: First flow installed in " + _NUM + " milliseconds")
_REFUSED = re.compile(r"^Flow can't be (created|deleted) (-?\d+) message: (.*)$", re.M)
_OPS = {"insertion": "insert", "Insertion": "insert", "deletion": "delete", "Deletion": "delete"}


def _float(text: str) -> float:
    return float("nan") if text in ("nan", "-nan") else float(text)


def parse_flow_perf(text: str) -> dict[str, Any]:
    """flow-perf's report: per port, per core and in total, the insertion and deletion rates [K rules/s]
    and times [s]; the first flow's latency [ms]; and a refusal (`refused`: the operation and the
    device's reason) when flow-perf stopped at a rule the device did not take."""
    cores: dict[tuple[int, int, str], dict[str, float]] = {}
    for m in _CORE_RATE.finditer(text):
        cores.setdefault((int(m[1]), int(m[2]), _OPS[m[3]]), {})["rate_krules_s"] = _float(m[4])
    for m in _CORE_TIME.finditer(text):
        op = "insert" if m[3] is not None else "delete"
        entry = cores.setdefault((int(m[1]), int(m[2]), op), {})
        entry["rules"] = float(m[3] if m[3] is not None else m[4])
        entry["seconds"] = _float(m[5])
    totals: dict[tuple[int, str], dict[str, float]] = {}
    # Only the flows' totals: with meters flow-perf prints a "Meters:" block of the same lines first.
    flows_part = text.split("\nFlows:\n")[-1] if "\nFlows:\n" in text else text
    for m in _TOTAL_RATE.finditer(flows_part):
        totals.setdefault((int(m[3]), _OPS[m[2]]), {})[f"{m[1].lower()}_krules_s"] = _float(m[4])
    for m in _TOTAL_TIME.finditer(flows_part):
        entry = totals.setdefault((int(m[3]), _OPS[m[2]]), {})
        entry["rules"] = float(m[4])
        entry[f"{m[1].lower()}_s"] = _float(m[5])
    first = {int(m[1]): _float(m[2]) for m in _FIRST.finditer(text)}
    refusal = _REFUSED.search(text)
    refused = (
        {"op": "insert" if refusal[1] == "created" else "delete", "type": int(refusal[2]), "reason": refusal[3].strip()}
        if refusal
        else None
    )
    return {
        "cores": [{"port": p, "core": c, "op": op, **v} for (p, c, op), v in sorted(cores.items())],
        "totals": [{"port": p, "op": op, **v} for (p, op), v in sorted(totals.items())],
        "first_flow_ms": first,
        "refused": refused,
    }


def why_not_flow_perf(params: dict[str, Any]) -> str | None:
    """Why flow-perf cannot run this connectx.install_rate point, or None."""
    ops = {params.get("op", "insert"), params.get("versus_op", "none")} - {"none"}
    if ops - {"insert", "delete"}:
        return f"{FLOW_PERF} measures insertion and deletion, not {', '.join(sorted(ops - {'insert', 'delete'}))}"
    actions = int(params.get("actions", 1))
    if actions > len(ACTIONS):
        return f"{FLOW_PERF} rules here take at most {len(ACTIONS)} actions ({', '.join(ACTIONS)}), not {actions}"
    cores = int(params.get("dpdk_flow_cores", 1))
    if cores + 1 > (os.cpu_count() or 1):  # flow-perf wants more lcores than inserting cores
        return f"dpdk_flow_cores = {cores}: {FLOW_PERF} needs {cores + 1} CPUs, this machine has {os.cpu_count()}"
    if shutil.which(FLOW_PERF) is None:
        return f"{FLOW_PERF} not found (the dpdk backend needs DPDK: package dpdk-dev)"
    if shutil.which("stdbuf") is None:
        return "stdbuf not found (coreutils)"
    return None


def flow_perf_args(*, rules: int, group: int, match: str, actions: int, op: str, cores: int) -> list[str]:
    """flow-perf's own arguments (after `--`) for one batch."""
    args = [
        "--ingress",
        f"--group={group}",
        *(f"--{item}" for item in ITEMS[match]),
        *(f"--{action}" for action in ACTIONS[:actions]),
        f"--rules-count={rules}",
        f"--rules-batch={rules}",
        f"--cores={cores}",
    ]
    if op == "delete":
        args.append("--deletion-rate")
    return args


def run_flow_perf(args: list[str], *, cores: int, vdev: str = "net_null0") -> tuple[str, int]:
    """Runs flow-perf on one virtual device (no hugepages, no PCI) with `cores` + 1 lcores (flow-perf
    refuses to start with fewer); returns what it printed and its exit code."""
    # Line-buffered stdout and stderr (stdbuf): the refusal goes to stdout and the exit notice to
    # stderr; unbuffered, their order in the combined output would be the pipe buffers', not flow-perf's.
    with tempfile.TemporaryDirectory(prefix="nbflowperf-") as tmp:
        argv = [
            "stdbuf",
            "-oL",
            "-eL",
            FLOW_PERF,
            "--no-huge",
            "-m",
            "512",
            "--no-pci",
            "--vdev",
            vdev,
            "-l",
            f"0-{cores}",
            "--log-level=error",
            f"--file-prefix=nbfp{os.getpid()}",
            "--",
            *args,
        ]
        proc = subprocess.run(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=Path(tmp),
            timeout=TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
    return proc.stdout, proc.returncode


def _measure(p: dict[str, Any], ctx: Any, *, op: str, match: str, tag: str) -> dict[str, float]:
    """One flow-perf run of the point's batch; the batch's operation measured (`tag` prefixes the
    extra records of the comparison run)."""
    cores = int(p["dpdk_flow_cores"])
    args = flow_perf_args(
        rules=int(p["rules"]), group=int(p["group"]), match=match, actions=int(p["actions"]), op=op, cores=cores
    )
    text, code = run_flow_perf(args, cores=cores)
    report = parse_flow_perf(text)
    if report["refused"] is not None:
        refused = report["refused"]
        # The device's answer: recorded as refused, no rate (flow-perf stops at the first refused rule).
        ctx.record(f"dpdk_flow{tag}_rules_refused", 1.0, "rules")
        note = (
            f"nicbench: note: {FLOW_PERF} on net_null0: the device refused flow "
            f"{'creation' if refused['op'] == 'insert' else 'deletion'} ({refused['reason']}): no rate measured"
        )
        if note not in _NOTED:  # once per process, not once per point
            _NOTED.add(note)
            print(note, file=sys.stderr)
        return {"install_rules": 0.0, "install_s": math.nan, "install_rate_krules_s": math.nan, "install_complete": 0.0}
    totals = {t["op"]: t for t in report["totals"] if t["port"] == 0}
    if code != 0 or op not in totals:
        last = text.strip().splitlines()[-2:]
        raise RuntimeError(f"{FLOW_PERF} exited with code {code} without a {op} rate: {' / '.join(last)}")
    for c in report["cores"]:
        if c["port"] == 0 and "rate_krules_s" in c:
            ctx.record(f"dpdk_flow{tag}_core{c['core']}_{c['op']}_krules_s", c["rate_krules_s"], "krules/s")
    for name, t in totals.items():
        ctx.record(f"dpdk_flow{tag}_{name}_krules_s", t["latency_krules_s"], "krules/s")
        ctx.record(f"dpdk_flow{tag}_{name}_throughput_krules_s", t["throughput_krules_s"], "krules/s")
    if 0 in report["first_flow_ms"]:
        ctx.record(f"dpdk_flow{tag}_first_ms", report["first_flow_ms"][0], "ms")
    done = totals[op]
    return {
        "install_rules": done["rules"],
        "install_s": done["latency_s"],
        "install_rate_krules_s": done["latency_krules_s"],
        "install_complete": 1.0 if done["rules"] >= int(p["rules"]) else 0.0,
    }


def install_rate(p: dict[str, Any], ctx: Any) -> dict[str, float]:
    """A connectx.install_rate point measured by flow-perf (the `dpdk` backend's answer): the batch's
    rate is flow-perf's "Latency" total (all rules over the slowest core's time)."""
    out = _measure(p, ctx, op=p["op"], match=p["match"], tag="")
    out["rate_ratio"] = math.nan
    out["sim_wall_s"] = math.nan  # nothing simulated
    if p["versus_match"] != "none" or p["versus_op"] != "none":
        other = _measure(
            p,
            ctx,
            op=p["op"] if p["versus_op"] == "none" else p["versus_op"],
            match=p["match"] if p["versus_match"] == "none" else p["versus_match"],
            tag="_versus",
        )
        a, b = out["install_rate_krules_s"], other["install_rate_krules_s"]
        out["rate_ratio"] = a / b if math.isfinite(a) and math.isfinite(b) and b > 0 else math.nan
    return out
