"""The `dpdk` backend: a `connectx.forward` point run by `dpdk-testpmd` on DPDK devices, a
`connectx.install_rate` point by `dpdk-test-flow-perf` (nicbench.backends.flow_perf).

The point's rule set (the PAM'21 layout nicbench generates: `rules`, `groups`, `kind`) is written
as testpmd `flow create` commands, then testpmd forwards (`io` mode, port 0 ↔ port 1) for
`dpdk_seconds` and is stopped; what it printed is parsed: rules created and refused (with the PMD's
reason), packets received, transmitted and missed per port. On this machine the ports are DPDK's
null PMD (`--vdev net_null0,net_null1`, no NIC, no hugepages): the forwarding counts are real (the
null PMD hands out empty mbufs as fast as the core asks, so they measure testpmd's own loop on this
CPU), and every `flow create` is refused by the device ("Function not implemented"): recorded as
refused, never faked. `nic`, the traffic parameters and the offered rate are recorded as the point
says; they do not change what is measured.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from nicbench.backends import Backend
from nicbench.backends.flow_perf import FLOW_PERF, install_rate, why_not_flow_perf
from nicbench.vocab.params import Param

__all__ = ["DpdkBackend", "parse_flow_results", "parse_forward_stats", "parse_port_stats", "TESTPMD"]

TESTPMD = "dpdk-testpmd"
_READY = "Read CLI commands from"
_FLOW_OK = re.compile(r"^Flow rule #(\d+) created", re.M)
_FLOW_ERR = re.compile(r"port_flow_complain\(\): Caught PMD error type (\d+) \(([^)]*)\): (.*)$", re.M)
_NIC_STATS = re.compile(
    r"NIC statistics for port (\d+)\s+#+\s*\n\s*RX-packets: (\d+)\s+RX-missed: (\d+)\s+RX-bytes:\s+(\d+)\s*\n"
    r"\s*RX-errors: (\d+)\s*\n\s*RX-nombuf:\s+(\d+)\s*\n\s*TX-packets: (\d+)\s+TX-errors: (\d+)\s+TX-bytes:\s+(\d+)"
)
_ACCUMULATED = re.compile(
    r"Accumulated forward statistics for all ports\+*\s*\n\s*RX-packets: (\d+)\s+"
    r"RX-dropped: (\d+)\s+RX-total: (\d+)\s*\n"
    r"\s*TX-packets: (\d+)\s+TX-dropped: (\d+)\s+TX-total: (\d+)"
)


def parse_flow_results(text: str) -> dict[str, Any]:
    """`flow create` outcomes in testpmd's output: created, refused and the first refusal's reason."""
    errors = _FLOW_ERR.findall(text)
    reason = f"{errors[0][1]}: {errors[0][2].strip()}" if errors else ""
    return {"created": len(_FLOW_OK.findall(text)), "refused": len(errors), "reason": reason}


def parse_port_stats(text: str) -> dict[int, dict[str, int]]:
    """`show port stats all`: per port RX/TX packets, bytes, missed, errors, nombuf (the last report)."""
    out: dict[int, dict[str, int]] = {}
    for m in _NIC_STATS.finditer(text):
        names = ("rx_packets", "rx_missed", "rx_bytes", "rx_errors", "rx_nombuf", "tx_packets", "tx_errors", "tx_bytes")
        out[int(m[1])] = dict(zip(names, (int(v) for v in m.groups()[1:])))
    return out


def parse_forward_stats(text: str) -> dict[str, int]:
    """The `stop` command's accumulated forward statistics for all ports."""
    m = _ACCUMULATED.search(text)
    if not m:
        return {}
    names = ("rx_packets", "rx_dropped", "rx_total", "tx_packets", "tx_dropped", "tx_total")
    return dict(zip(names, (int(v) for v in m.groups())))


class DpdkBackend(Backend):
    name = "dpdk"
    doc = "dpdk-testpmd forwarding on DPDK devices (here: the null PMD, no NIC needed)"
    params = (
        Param("dpdk_seconds", "float", 2.0, "how long testpmd forwards [s]", minimum=0.1, maximum=600.0),
        Param("dpdk_vdev", "choice", "net_null", "the ports' virtual device driver", choices=("net_null",)),
        Param(
            "dpdk_flow_cores",
            "int",
            1,
            "cores inserting/deleting rules (dpdk-test-flow-perf --cores)",
            minimum=1,
            maximum=64,
        ),
    )

    def why_not(self, target_name: str, params: dict[str, Any]) -> str | None:
        if target_name == "connectx.install_rate":
            return why_not_flow_perf(params)
        if target_name != "connectx.forward":
            return f"the dpdk backend runs connectx.forward and connectx.install_rate points, not {target_name}"
        if params.get("rules_file") or params.get("trace"):
            return "the dpdk backend runs generated rule sets and testpmd's own traffic (no rules_file, no trace)"
        if params.get("install_rate") is not None or params.get("install_batch") is not None:
            return "the dpdk backend installs no rules while forwarding (no install_rate, no install_batch)"
        if params.get("cores", 1) != 1 or params.get("queues", 1) != 1 or params.get("queue_map") is not None:
            return "the dpdk backend forwards with one core and one queue (cores = 1, queues = 1, no queue_map)"
        if shutil.which(TESTPMD) is None:
            return f"{TESTPMD} not found (the dpdk backend needs DPDK: package dpdk-dev)"
        if shutil.which("stdbuf") is None:
            return "stdbuf not found (coreutils)"
        return None

    def run(self, target: Any, p: dict[str, Any], ctx: Any) -> dict[str, float]:
        if target.name == "connectx.install_rate":
            return install_rate(p, ctx)
        from nicbench.rules import generate_rules

        seconds = float(p["dpdk_seconds"])
        with tempfile.TemporaryDirectory(prefix="nbdpdk-") as tmp:
            cmds = Path(tmp) / "commands.txt"
            rules = Path(tmp) / "rules.flow"
            lines: list[str] = []
            if int(p["rules"]) > 0:
                generate_rules(p["kind"], int(p["rules"]), int(p["groups"]), str(rules), seed=ctx.seed % (1 << 63))
                lines = [ln for ln in rules.read_text().splitlines() if ln.startswith("flow create")]
            cmds.write_text("\n".join([*lines, "start"]) + "\n")
            out, elapsed = _run_testpmd(cmds, seconds, Path(tmp))
        flows = parse_flow_results(out)
        fwd = parse_forward_stats(out)
        ports = parse_port_stats(out)
        if not fwd:
            raise RuntimeError(f"{TESTPMD} printed no forward statistics: {out.strip().splitlines()[-1:]}")
        ctx.record("dpdk_flow_rules", float(len(lines)), "rules")
        ctx.record("dpdk_flow_rules_created", float(flows["created"]), "rules")
        ctx.record("dpdk_flow_rules_refused", float(flows["refused"]), "rules")
        ctx.record("dpdk_forward_s", elapsed, "s")
        for port, stats in sorted(ports.items()):
            ctx.record(f"dpdk_port{port}_rx_missed", float(stats["rx_missed"]), "packets")
            ctx.record(f"dpdk_port{port}_rx_nombuf", float(stats["rx_nombuf"]), "packets")
        rx_mpps = fwd["rx_packets"] / elapsed / 1e6
        return {
            "rx_mpps": rx_mpps,
            "dropped_packets": float(fwd["rx_dropped"] + fwd["tx_dropped"]),
            "dropped_imissed": float(sum(s["rx_missed"] for s in ports.values())) if ports else math.nan,
        }

    def environment(self) -> dict[str, str]:
        return {
            "backend": self.name,
            "system": "dpdk-testpmd, io forwarding, ports: DPDK null PMD (net_null0/1); "
            "rule insertion: dpdk-test-flow-perf on net_null0",
            "dpdk_testpmd": shutil.which(TESTPMD) or "not found",
            "dpdk_test_flow_perf": shutil.which(FLOW_PERF) or "not found",
        }


def _run_testpmd(cmds: Path, seconds: float, workdir: Path) -> tuple[str, float]:
    """Runs testpmd on the command file, lets it forward `seconds` after the file is read, stops it;
    returns its output and the forwarding time measured here."""
    # Line-buffered: testpmd's stdout is a pipe here, and the "commands read" line must arrive when
    # printed, to start the clock (stdbuf, coreutils).
    # EAL keeps a run's state under /var/run/dpdk/<file-prefix>: two runs at once (two workers of a
    # sweep, two sweeps) each need their own, and id() alone repeats across forked workers.
    argv = [
        "stdbuf",
        "-oL",
        TESTPMD,
        "--no-huge",
        "-m",
        "1024",
        "--no-pci",
        "--vdev",
        "net_null0",
        "--vdev",
        "net_null1",
        "--log-level=error",
        f"--file-prefix=nbdpdk{os.getpid()}-{id(cmds)}",
        "--",
        "-i",
        "--total-num-mbufs=8192",
        f"--cmdline-file={cmds}",
    ]
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=workdir
    )
    chunks: list[str] = []
    ready = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            chunks.append(line)
            if _READY in line:
                ready.set()
        ready.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        if not ready.wait(timeout=600):
            raise RuntimeError(f"{TESTPMD} did not finish reading its commands in 600 s")
        started = time.monotonic()
        time.sleep(seconds)
        assert proc.stdin is not None
        proc.stdin.write("show port stats all\nstop\nquit\n")
        proc.stdin.flush()
        elapsed = time.monotonic() - started
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    reader.join(timeout=10)
    return "".join(chunks), elapsed
