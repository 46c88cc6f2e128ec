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
    bridge = "br0"

    def __init__(self, dummy_flag: str = "--enable-dummy=override") -> None:
        for tool in ("ovsdb-tool", "ovsdb-server", "ovs-vsctl", "ovs-vswitchd", "ovs-ofctl", "ovs-appctl"):
            peer(tool, "openvswitch-switch")
        self.tmp = tempfile.TemporaryDirectory(prefix="nicbench-ovs-")
        self.dir = Path(self.tmp.name)
        d = str(self.dir)
        self.env = {**os.environ, "OVS_RUNDIR": d, "OVS_LOGDIR": d, "OVS_DBDIR": d, "OVS_SYSCONFDIR": d}
        self.db = f"unix:{d}/db.sock"
        self._run("ovsdb-tool", "create", f"{d}/conf.db")  # the installed vswitch schema (ovsdb-tool's default)
        self._run(
            "ovsdb-server",
            f"{d}/conf.db",
            f"--remote=punix:{d}/db.sock",
            f"--pidfile={d}/ovsdb.pid",
            "--detach",
            f"--log-file={d}/ovsdb.log",
        )
        self._run("ovs-vsctl", f"--db={self.db}", "--no-wait", "init")
        self._run(
            "ovs-vswitchd",
            self.db,
            *dummy_flag.split(),
            f"--pidfile={d}/vswitchd.pid",
            "--detach",
            f"--log-file={d}/vswitchd.log",
        )
        pid = (self.dir / "vswitchd.pid").read_text().strip()
        self.ctl = str(self.dir / f"ovs-vswitchd.{pid}.ctl")
        self._add_bridges()

    def _add_bridges(self) -> None:
        self._run(
            "ovs-vsctl",
            f"--db={self.db}",
            "add-br",
            "br0",
            "--",
            "set",
            "bridge",
            "br0",
            "datapath_type=dummy",
            "--",
            "add-port",
            "br0",
            "p0",
            "--",
            "set",
            "interface",
            "p0",
            "type=dummy",
            "ofport_request=1",
            "--",
            "add-port",
            "br0",
            "p1",
            "--",
            "set",
            "interface",
            "p1",
            "type=dummy",
            "ofport_request=2",
        )

    def _run(self, *args: str, stdin: str | None = None) -> str:
        done = subprocess.run(args, env=self.env, capture_output=True, text=True, input=stdin, timeout=30)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    def appctl(self, *args: str) -> str:
        return self._run("ovs-appctl", "-t", self.ctl, *args)

    def ports(self) -> list[dict]:
        """The bridge's ports as nicbench's request wants them (name, OpenFlow and datapath numbers)."""
        return self.bridge_ports(self.bridge)

    def bridge_ports(self, bridge: str) -> list[dict]:
        """One bridge's ports from `dpif/show` (its section: lines indented under `  BRIDGE:`)."""
        out, inside = [], False
        for line in self.appctl("dpif/show").splitlines():
            if re.match(r"^  \S+:$", line):
                inside = line.strip() == f"{bridge}:"
                continue
            m = re.match(r"^\s{4}(\S+) (\d+)/(\d+):", line)
            if inside and m:
                out.append({"name": m[1], "ofport": int(m[2]), "dp_port": int(m[3])})
        return out

    def reset(self, flows_text: str) -> None:
        """Only `flows_text`'s rules, an empty datapath and an empty MAC table."""
        self._run("ovs-ofctl", "del-flows", self.bridge)
        # Not dpctl/del-flows: the handlers' flow keys (ukeys, by the packet's hash) would survive it and an
        # identical packet in the next case would find its ukey and install no flow.
        self.appctl("revalidator/purge")
        self.appctl("fdb/flush")  # every bridge's MAC table
        self._run("ovs-ofctl", "add-flows", self.bridge, "-", stdin=flows_text)

    def receive(self, port: str, frame: bytes) -> None:
        self.appctl("netdev-dummy/receive", port, frame.hex())

    def dump_flows(self) -> list[str]:
        return [
            line for line in self.appctl("dpctl/dump-flows").splitlines() if line and not line.startswith("flow-dump")
        ]

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


class OvsTunnels(Ovs):
    """OVS's userspace tunnelling (Documentation/howto/userspace-tunneling.rst) on the dummy datapath:
    br-int (the OpenFlow bridge: p1, OpenFlow 1, and the VXLAN port vx, OpenFlow 2, remote_ip REMOTE_IP,
    key=flow) and br-phy (the underlay: p0, and the endpoint's IP LOCAL_IP/24 and MAC LOCAL_MAC on the
    bridge, a route to the remote network, the remote MAC in the neighbour cache; OVS's default NORMAL
    rule). `--enable-dummy` without `=override`: overriding turns the vxlan port into a dummy one too.
    `options:local_ip` is left out: with it, OVS 3.1 failed to route the encapsulated packet here
    ("native tunnel routing failed")."""

    bridge = "br-int"
    LOCAL_IP, REMOTE_IP = "172.31.1.1", "172.31.1.2"
    LOCAL_MAC, REMOTE_MAC = "aa:55:aa:55:00:00", "aa:55:aa:55:00:02"
    # A second VXLAN port with a fixed key (options:key=123) to another endpoint.
    KEYED_IP, KEYED_MAC, KEYED_VNI = "172.31.1.3", "aa:55:aa:55:00:03", 123

    def __init__(self) -> None:
        super().__init__("--enable-dummy --disable-system --disable-system-route")

    def _add_bridges(self) -> None:
        self._run(
            "ovs-vsctl",
            f"--db={self.db}",
            "add-br",
            "br-phy",
            "--",
            "set",
            "bridge",
            "br-phy",
            "datapath_type=dummy",
            f"other-config:hwaddr={self.LOCAL_MAC}",
            "--",
            "add-port",
            "br-phy",
            "p0",
            "--",
            "set",
            "interface",
            "p0",
            "type=dummy",
            "ofport_request=1",
        )
        self._run(
            "ovs-vsctl",
            f"--db={self.db}",
            "add-br",
            "br-int",
            "--",
            "set",
            "bridge",
            "br-int",
            "datapath_type=dummy",
            "--",
            "add-port",
            "br-int",
            "p1",
            "--",
            "set",
            "interface",
            "p1",
            "type=dummy",
            "ofport_request=1",
            "--",
            "add-port",
            "br-int",
            "vx",
            "--",
            "set",
            "interface",
            "vx",
            "type=vxlan",
            f"options:remote_ip={self.REMOTE_IP}",
            "options:key=flow",
            "ofport_request=2",
            "--",
            "add-port",
            "br-int",
            "vk",
            "--",
            "set",
            "interface",
            "vk",
            "type=vxlan",
            f"options:remote_ip={self.KEYED_IP}",
            f"options:key={self.KEYED_VNI}",
            "ofport_request=3",
        )
        self.appctl("netdev-dummy/ip4addr", "br-phy", f"{self.LOCAL_IP}/24")
        self.appctl("ovs/route/add", f"{self.LOCAL_IP}/24", "br-phy")
        self.appctl("tnl/arp/set", "br-phy", self.REMOTE_IP, self.REMOTE_MAC)
        self.appctl("tnl/arp/set", "br-phy", self.KEYED_IP, self.KEYED_MAC)

    def underlay(self) -> dict:
        """nicbench's `underlay` for this setup (numbers from `dpif/show`)."""
        phy = {p["name"]: p for p in self.bridge_ports("br-phy")}
        return {
            "port": "p0",
            "dp_port": phy["p0"]["dp_port"],
            "bridge_dp_port": phy["br-phy"]["dp_port"],
            "ip": self.LOCAL_IP,
            "mac": self.LOCAL_MAC,
        }

    def ports(self) -> list[dict]:
        """br-int's ports, the VXLAN port with its options."""
        out = self.bridge_ports("br-int")
        for p in out:
            if p["name"] == "vx":
                p["tunnel"] = {"remote_ip": self.REMOTE_IP, "dst_port": 4789, "remote_mac": self.REMOTE_MAC}
            if p["name"] == "vk":
                p["tunnel"] = {
                    "remote_ip": self.KEYED_IP,
                    "key": self.KEYED_VNI,
                    "dst_port": 4789,
                    "remote_mac": self.KEYED_MAC,
                }
        return out
