"""A private Open vSwitch 3.1 for oracle tests: ovsdb-server + ovs-vswitchd with
`--enable-dummy=override` in a temporary directory, one bridge `br0` on the dummy (userspace)
datapath with dummy ports p0 (OpenFlow 1) and p1 (OpenFlow 2). No kernel module, no veths, no
traffic leaves the process: packets are injected with `netdev-dummy/receive`.

Daemons are stopped by their pidfiles; the directory is removed."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from helpers import peer

class Ovs:
    def __init__(self) -> None:
        for tool in ("ovsdb-tool", "ovsdb-server", "ovs-vsctl", "ovs-vswitchd", "ovs-ofctl", "ovs-appctl"):
            peer(tool, "openvswitch-switch")
        self.tmp = tempfile.TemporaryDirectory(prefix="nicbench-ovs-")
        self.dir = Path(self.tmp.name)
        d = str(self.dir)
        self.env = {**os.environ, "OVS_RUNDIR": d, "OVS_LOGDIR": d, "OVS_DBDIR": d, "OVS_SYSCONFDIR": d}
        self.db = f"unix:{d}/db.sock"
        self._run("ovsdb-tool", "create", f"{d}/conf.db")  # the installed vswitch schema (ovsdb-tool's default)
        self._run("ovsdb-server", f"{d}/conf.db", f"--remote=punix:{d}/db.sock", f"--pidfile={d}/ovsdb.pid",
                  "--detach", f"--log-file={d}/ovsdb.log")
        self._run("ovs-vsctl", f"--db={self.db}", "--no-wait", "init")
        self._run("ovs-vswitchd", self.db, "--enable-dummy=override", f"--pidfile={d}/vswitchd.pid", "--detach",
                  f"--log-file={d}/vswitchd.log")
        self._run("ovs-vsctl", f"--db={self.db}", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy",
                  "--", "add-port", "br0", "p0", "--", "set", "interface", "p0", "type=dummy", "ofport_request=1",
                  "--", "add-port", "br0", "p1", "--", "set", "interface", "p1", "type=dummy", "ofport_request=2")
        pid = (self.dir / "vswitchd.pid").read_text().strip()
        self.ctl = str(self.dir / f"ovs-vswitchd.{pid}.ctl")

    def _run(self, *args: str, stdin: str | None = None) -> str:
        done = subprocess.run(args, env=self.env, capture_output=True, text=True, input=stdin, timeout=30)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    def appctl(self, *args: str) -> str:
        return self._run("ovs-appctl", "-t", self.ctl, *args)

    def ports(self) -> list[dict]:
        """The bridge's ports as nicbench's request wants them (name, OpenFlow and datapath numbers)."""
        out = []
        for m in re.finditer(r"^\s+(\S+) (\d+)/(\d+):", self.appctl("dpif/show"), re.M):
            out.append({"name": m[1], "ofport": int(m[2]), "dp_port": int(m[3])})
        return out

    def reset(self, flows_text: str) -> None:
        """Only `flows_text`'s rules, an empty datapath and an empty MAC table."""
        self._run("ovs-ofctl", "del-flows", "br0")
        # Not dpctl/del-flows: the handlers' flow keys (ukeys, by the packet's hash) would survive it and an
        # identical packet in the next case would find its ukey and install no flow.
        self.appctl("revalidator/purge")
        self.appctl("fdb/flush", "br0")
        self._run("ovs-ofctl", "add-flows", "br0", "-", stdin=flows_text)

    def receive(self, port: str, frame: bytes) -> None:
        self.appctl("netdev-dummy/receive", port, frame.hex())

    def dump_flows(self) -> list[str]:
        return [line for line in self.appctl("dpctl/dump-flows").splitlines() if line and not line.startswith("flow-dump")]

    def trace_megaflow(self, flow: str) -> str:
        out = self.appctl("ofproto/trace", "br0", flow)
        return next((line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("Megaflow:")), "")

    def stop(self) -> None:
        for name in ("vswitchd.pid", "ovsdb.pid"):
            pidfile = self.dir / name
            try:
                os.kill(int(pidfile.read_text().strip()), signal.SIGTERM)
            except (OSError, ValueError):
                pass
        time.sleep(0.2)
        self.tmp.cleanup()
