"""The `perftest` backend: an `offpath.single` point measured by perftest (`ib_{read,write,send}_{bw,lat}`).

The point's verb picks the tool, `payload` → `-s`, `threads` → `-q` (one queue pair per requester
thread; perftest drives them from one process), `doorbell_batch` → `--post_list` (requests posted per
doorbell), and the backend's `perftest_inline` → `-I`. The bandwidth tool runs for `perftest_seconds`
(`-D`) and gives `gbps` (BW average, `--report_gbits`) and `mpps` (MsgRate); the latency tool runs
`perftest_iterations` (`-n`: only then does perftest print percentiles) and gives `latency_us`
(t_avg: perftest reports half the round trip for SEND/WRITE, the whole READ). The path is where the
responder runs: `--set perftest_server=ADDRESS` names a responder started by hand with the same
arguments (printed in the record's command); without it the backend starts the responder on this
machine (loopback through the device). `nic` is recorded as the point says; it does not change what is
measured. Points perftest cannot express (several machines, an address range, an offered load, payload
0) and a machine without an RDMA device or without perftest are refused in one line before anything
starts. This machine has no RDMA device: the parsers are tested on published outputs.
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from nicbench.backends import Backend
from nicbench.backends.nic_env import nic_environment, rdma_netdevs
from nicbench.vocab.params import Param

__all__ = ["PerftestBackend", "bw_gbps", "parse_perftest", "perftest_args", "rdma_devices", "TOOLS"]

TOOLS = {(verb, kind): f"ib_{verb.lower()}_{kind}" for verb in ("READ", "WRITE", "SEND") for kind in ("bw", "lat")}
SYS_INFINIBAND = Path("/sys/class/infiniband")
_TIMEOUT_S = 600.0
# A column name in perftest's result header: `#bytes`, `#iterations`, `BW peak[Gb/sec]`,
# `99.9% percentile[usec]`, `t_avg[usec]`, `MsgRate[Mpps]` (older perftest: `iterations`).
_COLUMN = re.compile(r"#\w+|[\w.%]+(?: \w+)?\[[^\]]*\]|\w+")
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")


def parse_perftest(text: str) -> list[dict[str, float]]:
    """The result rows of a perftest report, one dict per row keyed by the header's column names
    (e.g. `#bytes`, `BW average[Gb/sec]`, `MsgRate[Mpps]`, `t_typical[usec]`). Lines between the
    header and the rows that are not all numbers (perftest's CPU-frequency warnings) are skipped."""
    rows: list[dict[str, float]] = []
    header: list[str] | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#bytes"):
            header = _COLUMN.findall(stripped)
            continue
        if header is None:
            continue
        values = stripped.split()
        if len(values) == len(header) and all(_NUMBER.match(v) for v in values):
            rows.append({name: float(v) for name, v in zip(header, values)})
        elif stripped.startswith("---") and rows:
            header = None  # the table ended
    return rows


def rdma_devices(root: Path = SYS_INFINIBAND) -> list[str]:
    """RDMA devices on this machine (`/sys/class/infiniband/*`), sorted."""
    return sorted(p.name for p in root.iterdir()) if root.is_dir() else []


def perftest_args(p: dict[str, Any], kind: str, device: str) -> list[str]:
    """The perftest arguments (both sides) of a point, for the bandwidth (`bw`) or latency (`lat`) tool."""
    args = ["-d", device, "-s", str(int(p["payload"])), "-F", "-p", str(int(p["perftest_port"]))]
    if int(p["perftest_inline"]) > 0:
        args += ["-I", str(int(p["perftest_inline"]))]
    if kind == "bw":
        args += ["-q", str(int(p["threads"] or 1)), "-D", f"{float(p['perftest_seconds']):g}", "--report_gbits"]
        if int(p["doorbell_batch"]) > 1:
            args += ["--post_list", str(int(p["doorbell_batch"]))]
    else:
        args += ["-n", str(int(p["perftest_iterations"]))]
    return args


def _column(row: dict[str, float], prefix: str) -> float:
    for name, value in row.items():
        if name.startswith(prefix):
            return value
    return math.nan


def bw_gbps(row: dict[str, float], prefix: str = "BW average") -> float:
    """A bandwidth column in Gb/s: perftest prints Gb/sec with --report_gbits, else MB/sec with
    MB = 2^20 bytes (its MsgRate x size agrees with that: 64 B at 2.545853 Mpps is 155.38 MB/sec)."""
    for name, value in row.items():
        if name.startswith(prefix):
            if name.endswith("[Gb/sec]"):
                return value
            if name.endswith("[MB/sec]"):
                return value * 1048576 * 8 / 1e9
    return math.nan


class PerftestBackend(Backend):
    name = "perftest"
    doc = "perftest (ib_*_bw / ib_*_lat) on an RDMA device"
    params = (
        Param("perftest_device", "str", "", "RDMA device (-d; empty: the first in /sys/class/infiniband)"),
        Param("perftest_server", "str", "", "the responder's address (empty: started on this machine)"),
        Param(
            "perftest_inline", "int", 0, "inline data size (-I) [bytes]; 0: perftest's default", minimum=0, maximum=4096
        ),
        Param(
            "perftest_seconds", "float", 5.0, "how long the bandwidth test runs (-D) [s]", minimum=1.0, maximum=600.0
        ),
        Param("perftest_iterations", "int", 10000, "latency test iterations (-n)", minimum=10, maximum=10_000_000),
        Param(
            "perftest_port",
            "int",
            18515,
            "TCP port the two sides exchange their QP data on (-p)",
            minimum=1024,
            maximum=65535,
        ),
    )

    def why_not(self, target_name: str, params: dict[str, Any]) -> str | None:
        if target_name != "offpath.single":
            return f"the perftest backend runs offpath.single points, not {target_name}"
        if (params.get("machines") or 1) > 1:
            return "one perftest client is one requester machine: machines must be 1 or none"
        for name, what in (("address_range", "address range"), ("offered", "offered load")):
            if params.get(name) is not None:
                return f"perftest cannot set an {what} ({name} must be none)"
        if int(params.get("payload", 1)) < 1:
            return "perftest sends at least 1 byte (payload 0)"
        tool = TOOLS[(params.get("verb", "READ"), "bw")]
        if not rdma_devices():
            return f"no RDMA device ({SYS_INFINIBAND} is empty or missing): the perftest backend needs one"
        missing = [t for t in (tool, tool.replace("_bw", "_lat")) if shutil.which(t) is None]
        if missing:
            return f"{', '.join(missing)} not found (the perftest backend needs package perftest)"
        return None

    def run(self, target: Any, p: dict[str, Any], ctx: Any) -> dict[str, float]:
        device = p["perftest_device"] or rdma_devices()[0]
        bw = parse_perftest(_run_pair(TOOLS[(p["verb"], "bw")], perftest_args(p, "bw", device), p["perftest_server"]))
        lat = parse_perftest(
            _run_pair(TOOLS[(p["verb"], "lat")], perftest_args(p, "lat", device), p["perftest_server"])
        )
        if not bw or not lat:
            raise RuntimeError(f"perftest printed no result row ({'bandwidth' if not bw else 'latency'} test)")
        b, lt = bw[-1], lat[-1]
        ctx.record("perftest_bw_peak_gbps", bw_gbps(b, "BW peak"), "Gbps")
        for name, prefix in (
            ("min", "t_min"),
            ("max", "t_max"),
            ("typical", "t_typical"),
            ("p99", "99%"),
            ("p999", "99.9%"),
        ):
            ctx.record(f"perftest_lat_{name}_us", _column(lt, prefix), "us")
        out = {"gbps": bw_gbps(b), "mpps": _column(b, "MsgRate"), "latency_us": _column(lt, "t_avg")}
        return {k: v for k, v in out.items() if k in target.metrics}

    def environment(self) -> dict[str, str]:
        """The RDMA devices, and for each its NIC's driver, model (PSID) and firmware from `ethtool -i`
        and `devlink dev info` on its network interface (entries `nic_<device>_*`)."""
        env = {
            "backend": self.name,
            "system": "perftest on an RDMA device",
            "rdma_devices": ", ".join(rdma_devices()) or "none",
        }
        for dev in rdma_devices():
            for iface in rdma_netdevs(dev)[:1]:
                env.update(nic_environment(iface, prefix=f"nic_{dev}"))
        env["perftest"] = shutil.which("ib_read_bw") or "not found"
        return env


def _run_pair(tool: str, args: list[str], server: str) -> str:
    """Runs the requester (and, without `server`, the responder here first); returns the requester's output."""
    responder = None
    if not server:
        responder = subprocess.Popen([tool, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1.0)  # the responder listens on its port before the requester connects
    try:
        proc = subprocess.run([tool, *args, server or "localhost"], capture_output=True, text=True, timeout=_TIMEOUT_S)
    finally:
        if responder is not None:
            try:
                responder.wait(timeout=30)
            except subprocess.TimeoutExpired:
                responder.kill()
                responder.wait()
    if proc.returncode != 0:
        last = (proc.stderr or proc.stdout).strip().splitlines()[-1:]
        raise RuntimeError(f"{tool} exited with code {proc.returncode}: {' '.join(last)}")
    return proc.stdout
