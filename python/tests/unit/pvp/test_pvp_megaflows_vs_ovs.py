"""The PVP model's default input against real Open vSwitch (userspace datapath, OVS 3.1): the seed's rule
set (two OpenFlow rules per flow, exact IPv4 src/dst, one per ingress port) makes OVS build exactly two
exact megaflows per flow, one mask per ingress port, which is `pvp_megaflows(flows)`; the counts OVS
reports, fed to the model, predict what the default predicts.

Needs root (veth pairs), `ovsdb-server`, `ovs-vswitchd`, `ovs-vsctl`, `ovs-ofctl`, `ovs-appctl` (Debian
openvswitch-switch): missing ones fail under CI=true, else skip with the reason. The test starts its own
daemons in a private folder (unique bridge and veth names) and stops them by their pidfiles."""

from __future__ import annotations

import os
import re
import signal
import socket
import struct
import subprocess
import time
from collections import defaultdict
from pathlib import Path

import pytest
from helpers import missing, peer

from nicbench import pvp

FLOWS = 40


def _ip_checksum(header: bytes) -> int:
    total = sum(struct.unpack(f"!{len(header) // 2}H", header))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def _frame(src: str, dst: str) -> bytes:
    payload = b"\x00" * 18
    udp = struct.pack("!HHHH", 1024, 2048, 8 + len(payload), 0) + payload
    ip = struct.pack(
        "!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0x4000, 64, 17, 0, socket.inet_aton(src), socket.inet_aton(dst)
    )
    ip = ip[:10] + struct.pack("!H", _ip_checksum(ip)) + ip[12:]
    return b"\x02\x00\x00\x00\x00\x02" + b"\x02\x00\x00\x00\x00\x01" + b"\x08\x00" + ip + udp


def _flow(i: int) -> tuple[str, str]:
    return f"10.0.{i // 200}.{i % 200 + 1}", f"20.0.{i // 200}.{i % 200 + 1}"


class Ovs:
    """ovsdb-server + ovs-vswitchd in `folder`, a netdev bridge with two veth-backed ports."""

    def __init__(self, folder: Path):
        tag = f"{os.getpid() % 100000}"
        self.dir, self.bridge = folder, f"pvp{tag}"
        self.hosts, self.ports = (f"pa{tag}", f"pb{tag}"), (f"pa{tag}p", f"pb{tag}p")
        self.env = {
            **os.environ,
            **{k: str(folder) for k in ("OVS_RUNDIR", "OVS_LOGDIR", "OVS_DBDIR", "OVS_SYSCONFDIR")},
        }
        self.db = f"unix:{folder}/db.sock"

    def sh(self, *args: str) -> str:
        return subprocess.run(args, env=self.env, check=True, capture_output=True, text=True, timeout=30).stdout

    def start(self) -> None:
        d = self.dir
        self.sh("ovsdb-tool", "create", f"{d}/conf.db", "/usr/share/openvswitch/vswitch.ovsschema")
        self.sh(
            "ovsdb-server",
            f"{d}/conf.db",
            f"--remote=punix:{d}/db.sock",
            f"--pidfile={d}/ovsdb.pid",
            "--detach",
            f"--log-file={d}/ovsdb.log",
        )
        self.sh("ovs-vsctl", f"--db={self.db}", "--no-wait", "init")
        self.sh("ovs-vswitchd", self.db, f"--pidfile={d}/vswitchd.pid", "--detach", f"--log-file={d}/vswitchd.log")
        self.sh(
            "ovs-vsctl",
            f"--db={self.db}",
            "add-br",
            self.bridge,
            "--",
            "set",
            "bridge",
            self.bridge,
            "datapath_type=netdev",
        )
        for host, port in zip(self.hosts, self.ports):
            self.sh("ip", "link", "add", host, "type", "veth", "peer", "name", port)
            self.sh("ip", "link", "set", host, "up")
            self.sh("ip", "link", "set", port, "up")
            self.sh("ovs-vsctl", f"--db={self.db}", "add-port", self.bridge, port)

    def stop(self) -> None:
        for pidfile in ("vswitchd.pid", "ovsdb.pid"):
            try:
                os.kill(int((self.dir / pidfile).read_text().strip()), signal.SIGTERM)
            except (OSError, ValueError):
                pass
        for host in self.hosts:
            subprocess.run(["ip", "link", "del", host], capture_output=True)

    def appctl(self, *args: str) -> str:
        ctl = next(self.dir.glob("ovs-vswitchd.*.ctl"))
        return self.sh("ovs-appctl", "-t", str(ctl), *args)


@pytest.fixture
def ovs(tmp_path):
    for tool in ("ovsdb-tool", "ovsdb-server", "ovs-vswitchd", "ovs-vsctl", "ovs-ofctl", "ovs-appctl"):
        peer(tool, "openvswitch-switch")
    if os.geteuid() != 0:
        missing("root needed to create veth pairs for the OVS peer")
    o = Ovs(tmp_path)
    try:
        o.start()
    except subprocess.CalledProcessError as exc:
        o.stop()
        missing(f"cannot start Open vSwitch here: {exc.stderr.strip()[:200]}")
    yield o
    o.stop()


def test_pvp_rules_become_two_exact_megaflows_per_flow_one_mask_per_ingress(ovs, tmp_path):
    rules = tmp_path / "pvp.of"
    a, b = ovs.ports
    lines = []
    for i in range(FLOWS):
        src, dst = _flow(i)
        lines.append(f"priority=10,in_port={a},ip,nw_src={src},nw_dst={dst},actions=output:{b}")
        lines.append(f"priority=10,in_port={b},ip,nw_src={src},nw_dst={dst},actions=output:{a}")
    rules.write_text("\n".join(lines) + "\n")
    ovs.sh("ovs-ofctl", "add-flows", ovs.bridge, str(rules))
    for host in ovs.hosts:  # the generator into the uplink, the VM back through its VF
        with socket.socket(socket.AF_PACKET, socket.SOCK_RAW) as s:
            s.bind((host, 0))
            for i in range(FLOWS):
                s.send(_frame(*_flow(i)))
    deadline = time.monotonic() + 10
    while True:
        dump = [ln for ln in ovs.appctl("dpctl/dump-flows").splitlines() if "eth_type(0x0800)" in ln]
        if len(dump) >= 2 * FLOWS or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    per_port: dict[str, list[str]] = defaultdict(list)
    for ln in dump:
        key = ln.split(", packets:")[0]
        port = re.search(r"in_port\(([^)]+)\)", key).group(1)
        per_port[port].append(key)
    assert len(per_port) == 2, dump
    counts = {}
    for port, keys in per_port.items():
        # The mask of a megaflow: its fields with values blanked (a "/mask" would remain).
        masks = {re.sub(r"in_port\([^)]*\)", "in_port(*)", re.sub(r"=([^,/)]+)", "=*", k)) for k in keys}
        assert len(masks) == 1, masks
        (mask,) = masks
        assert "ipv4(src=*,dst=*" in mask and "/" not in mask.split("ipv4(")[1], mask  # exact src and dst
        counts[port] = len(keys)
    assert sorted(counts.values()) == [FLOWS, FLOWS]
    # The model's default input is what OVS built; fed with OVS's counts it predicts the same.
    from_ovs = {
        "masks": [
            {"ingress": ingress, "megaflows": n, "offloaded": n}
            for ingress, n in zip(("uplink", "vf"), counts.values())
        ]
    }
    assert [m["megaflows"] for m in pvp.pvp_megaflows(FLOWS)["masks"]] == list(counts.values())
    for nic in ("connectx5-25g", "agilio-cx-25g"):
        assert pvp.predict(nic, FLOWS, 64, megaflows=from_ovs)["mpps"] == pvp.predict(nic, FLOWS, 64)["mpps"]
