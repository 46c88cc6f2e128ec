"""A private, disposable Open vSwitch: its daemons, a network namespace and veth pairs.

Layout (the RECIPES.md userspace-datapath recipe): a run directory `<tmp>/nbovs-<pid>-<n>/` holds
the database, sockets, logs and pidfiles; `ovsdb-server` serves it; `ovs-vswitchd` runs inside the
network namespace `nbovs-<pid>-<n>`, where veth pairs `g<i>` ↔ `p<i>` connect the traffic side
(`g<i>`, where nicbench sends and counts) to the bridge `br0` (`p<i>`, datapath_type=netdev, so
no kernel module and no hardware offload). IPv6 is off in the namespace so the kernel's own
neighbour discovery does not add flows.

Cleanup: `close()` (also on Ctrl-C, via the context manager) stops the daemons by their pidfiles
and deletes the namespace (with it the veths) and the directory. A run killed with SIGKILL cannot
clean up: the next sandbox removes every `nbovs-*` directory and namespace whose owner process is
gone, before it starts (`remove_leftovers`).
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

__all__ = ["OvsSandbox", "remove_leftovers", "TOOLS", "PREFIX"]

PREFIX = "nbovs-"
TOOLS = ("ovsdb-tool", "ovsdb-server", "ovs-vsctl", "ovs-vswitchd", "ovs-ofctl", "ovs-appctl", "ip")
_COUNTER = itertools.count()
_NAME = re.compile(rf"^{PREFIX}(\d+)-(\d+)$")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _kill_pidfile(pidfile: Path) -> None:
    try:
        pid = int(pidfile.read_text().strip())
    except (OSError, ValueError):
        return
    for sig, wait_s in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 1.0)):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.02)
        if not _alive(pid):
            return


def _netns_names() -> list[str]:
    done = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    return [line.split()[0] for line in done.stdout.splitlines() if line.strip()]


def remove_leftovers() -> list[str]:
    """Removes sandboxes whose owner process is gone (a SIGKILLed run); returns their names."""
    removed = []
    tmp = Path(tempfile.gettempdir())
    for d in tmp.glob(f"{PREFIX}*"):
        m = _NAME.match(d.name)
        if m and d.is_dir() and not _alive(int(m[1])):
            for pidfile in ("vswitchd.pid", "ovsdb.pid"):
                _kill_pidfile(d / pidfile)
            shutil.rmtree(d, ignore_errors=True)
            removed.append(d.name)
    for ns in _netns_names():
        m = _NAME.match(ns)
        if m and not _alive(int(m[1])):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
            if ns not in removed:
                removed.append(ns)
    return removed


class OvsSandbox:
    """`with OvsSandbox(ports=2) as ovs:` — a bridge br0 with ports p0..p{n-1} (OpenFlow 1..n)."""

    def __init__(self, ports: int = 2):
        self.name = f"{PREFIX}{os.getpid()}-{next(_COUNTER)}"
        self.dir = Path(tempfile.gettempdir()) / self.name
        self.ports = ports
        d = str(self.dir)
        self.env = {**os.environ, "OVS_RUNDIR": d, "OVS_LOGDIR": d, "OVS_DBDIR": d, "OVS_SYSCONFDIR": d}
        self.db = f"unix:{d}/db.sock"
        self.ctl = ""
        self.removed_leftovers: list[str] = []

    # -- lifecycle ------------------------------------------------------------------------------
    def __enter__(self) -> OvsSandbox:
        self.removed_leftovers = remove_leftovers()
        self.dir.mkdir(mode=0o700)
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _start(self) -> None:
        d = str(self.dir)
        self.sh("ip", "netns", "add", self.name)
        self.sh(
            "sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1", ns=True
        )
        for i in range(self.ports):
            self.sh("ip", "link", "add", f"g{i}", "type", "veth", "peer", "name", f"p{i}", ns=True)
            for dev in (f"g{i}", f"p{i}"):
                self.sh("ip", "link", "set", dev, "up", ns=True)
        self.sh("ovsdb-tool", "create", f"{d}/conf.db")
        self.sh(
            "ovsdb-server",
            f"{d}/conf.db",
            f"--remote=punix:{d}/db.sock",
            f"--pidfile={d}/ovsdb.pid",
            "--detach",
            f"--log-file={d}/ovsdb.log",
        )
        self.sh("ovs-vsctl", f"--db={self.db}", "--no-wait", "init")
        self.sh(
            "ovs-vswitchd", self.db, f"--pidfile={d}/vswitchd.pid", "--detach", f"--log-file={d}/vswitchd.log", ns=True
        )
        add = ["ovs-vsctl", f"--db={self.db}", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=netdev"]
        for i in range(self.ports):
            add += ["--", "add-port", "br0", f"p{i}", "--", "set", "interface", f"p{i}", f"ofport_request={i + 1}"]
        self.sh(*add)
        pid = (self.dir / "vswitchd.pid").read_text().strip()
        self.ctl = f"{d}/ovs-vswitchd.{pid}.ctl"

    def close(self) -> None:
        for pidfile in ("vswitchd.pid", "ovsdb.pid"):
            _kill_pidfile(self.dir / pidfile)
        if self.name in _netns_names():
            subprocess.run(["ip", "netns", "del", self.name], capture_output=True)
        shutil.rmtree(self.dir, ignore_errors=True)

    # -- commands -------------------------------------------------------------------------------
    def sh(self, *args: str, ns: bool = False, stdin: str | None = None, timeout: float = 120) -> str:
        cmd = (["ip", "netns", "exec", self.name] if ns else []) + list(args)
        done = subprocess.run(cmd, env=self.env, capture_output=True, text=True, input=stdin, timeout=timeout)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(args[:3])}: {done.stderr.strip() or done.stdout.strip()}")
        return done.stdout

    def appctl(self, *args: str) -> str:
        return self.sh("ovs-appctl", "-t", self.ctl, *args)

    def add_flows(self, text: str) -> None:
        self.sh("ovs-ofctl", "add-flows", f"unix:{self.dir}/br0.mgmt", "-", stdin=text)

    def rx_packets(self, dev: str) -> int:
        """Packets the kernel counted received on `dev` (inside the namespace)."""
        for line in self.sh("cat", "/proc/net/dev", ns=True).splitlines():
            name, _, rest = line.partition(":")
            if name.strip() == dev:
                return int(rest.split()[1])
        raise RuntimeError(f"no device {dev} in {self.name}")

    def megaflows(self) -> list[str]:
        return [
            line for line in self.appctl("dpctl/dump-flows").splitlines() if line and not line.startswith("flow-dump")
        ]

    def upcall_show(self) -> dict[str, float]:
        """`upcall/show`: flows now, their dynamic limit (revalidators lower it under load)."""
        text = self.appctl("upcall/show")
        out: dict[str, float] = {}
        m = re.search(r"flows\s*:\s*\(current (\d+)\) \(avg (\d+)\) \(max (\d+)\) \(limit (\d+)\)", text)
        if m:
            out.update(flows_current=float(m[1]), flows_max=float(m[3]), flow_limit=float(m[4]))
        return out

    def pmd_stats(self) -> dict[str, float]:
        """`dpif-netdev/pmd-stats-show`, summed over threads: packets received, emc/smc/megaflow
        hits, `miss with success upcall` (flow setups), `miss with failed upcall`, ..."""
        out: dict[str, float] = {}
        for m in re.finditer(r"^\s+([a-z][a-z. ]+?):\s+([\d.]+)\s*$", self.appctl("dpif-netdev/pmd-stats-show"), re.M):
            if not m[1].startswith("avg"):
                out[m[1]] = out.get(m[1], 0.0) + float(m[2])
        return out
