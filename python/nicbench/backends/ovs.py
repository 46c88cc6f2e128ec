"""The `ovs` backend: Red Hat PVP's rules and traffic through a real Open vSwitch on this machine.

For a `pvp.run` point it starts a private OVS (`ovs_sandbox.OvsSandbox`: userspace `netdev`
datapath on veth pairs in its own network namespace, no hardware offload), installs the two
OpenFlow rules per flow Red Hat's PVP test installs (exact IPv4 source and destination: one from
the uplink `p0` to the VM port `p1`, one back), sends the point's flows as PVP's TRex does (UDP
frames of the point's size, flow i from 10.0.0.0 + i to 20.0.0.0 + i, in turn) on the uplink's veth
(AF_PACKET), and measures what came out of the VM port: received packets per second, loss, the
megaflows OVS built (`dpctl/dump-flows`), flows and the dynamic flow limit (`upcall/show`), upcalls
(flow setups and failures) and cache hits (`dpif-netdev/pmd-stats-show`). The VM's
return pass is not run: this is one pass through the datapath. `nic` and `datapath` are recorded
as the point says but do not change what is measured: this machine's software datapath.
"""

from __future__ import annotations

import ipaddress
import json
import math
import os
import platform
import shutil
import struct
import subprocess
import sys
import time
from typing import Any

from nicbench.backends import Backend
from nicbench.backends.ovs_sandbox import TOOLS, OvsSandbox
from nicbench.traffic import WIRE_OVERHEAD_BYTES
from nicbench.vocab.params import Param

__all__ = ["OvsBackend", "pvp_rules"]

_SETTLE_S = 0.3


_SRC_BASE = int(ipaddress.IPv4Address("10.0.0.0"))
_DST_BASE = int(ipaddress.IPv4Address("20.0.0.0"))
_MACS = bytes.fromhex("020000000002020000000001")


def _flow_ips(i: int) -> tuple[str, str]:
    return str(ipaddress.IPv4Address(_SRC_BASE + i)), str(ipaddress.IPv4Address(_DST_BASE + i))


def _ipv4_checksum(header: bytes) -> int:
    total = sum(struct.unpack(f"!{len(header) // 2}H", header))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def pvp_frames(flows: int, frame_bytes: int) -> list[bytes]:
    """One UDP frame per flow, `frame_bytes` on the wire with FCS (the kernel adds no FCS on veth)."""
    length = max(frame_bytes - 4, 60)
    out = []
    for i in range(flows):
        src, dst = ipaddress.IPv4Address(_SRC_BASE + i).packed, ipaddress.IPv4Address(_DST_BASE + i).packed
        total = length - 14
        header = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, 0, 0, 64, 17, 0, src, dst)
        header = header[:10] + struct.pack("!H", _ipv4_checksum(header)) + header[12:]
        udp = struct.pack("!HHHH", 1024, 1024, total - 20, 0)
        out.append(_MACS + b"\x08\x00" + header + udp + bytes(total - 28))
    return out


def pvp_rules(flows: int) -> str:
    """Red Hat PVP's two OpenFlow rules per flow: uplink (port 1) to VM (port 2), and back."""
    lines = []
    for src, dst in map(_flow_ips, range(flows)):
        lines.append(f"priority=10,in_port=1,ip,nw_src={src},nw_dst={dst},actions=output:2")
        lines.append(f"priority=10,in_port=2,ip,nw_src={dst},nw_dst={src},actions=output:1")
    return "\n".join(lines) + "\n"


class OvsBackend(Backend):
    name = "ovs"
    doc = "a real Open vSwitch (userspace datapath, veth pairs in a private network namespace) on this machine"
    params = (
        Param(
            "ovs_packets",
            "count",
            200_000,
            "frames replayed per run (cycling over the flows)",
            minimum=1,
            maximum=100_000_000,
        ),
        Param("ovs_rate", "rate_pps", None, "sender pacing ('max': as fast as the sender goes)", none_word="max"),
    )

    def why_not(self, target_name: str, params: dict[str, Any]) -> str | None:
        if target_name != "pvp.run":
            return f"the ovs backend runs pvp.run points, not {target_name}"
        if params.get("vxlan"):
            return "the ovs backend does not set up VXLAN tunnel ports: run its points with vxlan = false"
        if params.get("gbps") is not None:
            return 'the ovs backend sends at its own rate (ovs_rate): run its points with gbps = "line"'
        missing = [t for t in TOOLS if shutil.which(t) is None]
        if missing:
            return f"{', '.join(missing)} not found (the ovs backend needs Open vSwitch: package openvswitch-switch)"
        if os.geteuid() != 0:
            return "the ovs backend needs root (it creates a network namespace and veth pairs)"
        return None

    def run(self, target: Any, p: dict[str, Any], ctx: Any) -> dict[str, float]:
        packets = max(int(p["ovs_packets"]), 1)
        flows = int(p["flows"])
        frames = pvp_frames(flows, int(p["size"]))
        rules = pvp_rules(flows)
        with OvsSandbox(ports=2) as ovs:
            frames_file = ovs.dir / "pvp.frames"  # in the run directory: removed with it, even after SIGKILL
            frames_file.write_bytes(b"".join(frames))
            ovs.add_flows(rules)
            rx0 = ovs.rx_packets("g1")
            rate = p.get("ovs_rate")
            sender = ovs.sh(
                sys.executable,
                "-m",
                "nicbench.backends.replay",
                str(frames_file),
                str(len(frames[0])),
                "g0",
                str(packets),
                str(float(rate) if rate else 0.0),
                ns=True,
                timeout=3600,
            )
            sent = json.loads(sender.strip().splitlines()[-1])
            time.sleep(_SETTLE_S)
            received = ovs.rx_packets("g1") - rx0
            megaflows = ovs.megaflows()
            upcalls = ovs.upcall_show()
            pmd = ovs.pmd_stats()
        elapsed = max(sent["elapsed_s"], 1e-9)
        frame_wire_bits = (int(p["size"]) + WIRE_OVERHEAD_BYTES) * 8
        mpps = received / elapsed / 1e6
        rules_installed = rules.count("\n")
        ctx.record("ovs_sent_mpps", sent["sent"] / elapsed / 1e6, "Mpps")
        ctx.record("ovs_rules", float(rules_installed), "rules")
        ctx.record("ovs_flow_limit", upcalls.get("flow_limit", math.nan), "flows")
        ok, failed = pmd.get("miss with success upcall", math.nan), pmd.get("miss with failed upcall", math.nan)
        ctx.record("ovs_upcalls", ok + failed, "")
        ctx.record("ovs_flow_setups", ok, "flows")
        ctx.record("ovs_failed_upcalls", failed, "")
        ctx.record("ovs_datapath_packets", pmd.get("packets received", math.nan), "packets")
        ctx.record("ovs_megaflow_hits", pmd.get("megaflow hits", math.nan), "packets")
        return {
            "mpps": mpps,
            "gbps": mpps * frame_wire_bits / 1e3,
            "offered_mpps": sent["sent"] / elapsed / 1e6,
            "loss": 1.0 - received / sent["sent"] if sent["sent"] else math.nan,
            "megaflows_software": float(len(megaflows)),
            "megaflows_offloaded": 0.0,
        }

    def environment(self) -> dict[str, str]:
        def version(tool: str) -> str:
            try:
                out = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=10).stdout
            except OSError:
                return "not found"
            return (out.splitlines() or ["unknown"])[0]

        return {
            "backend": self.name,
            "system": "Open vSwitch, userspace (netdev) datapath, hw-offload off",
            "ovs_vswitchd": version("ovs-vswitchd"),
            "kernel": platform.release(),
            "ports": "veth pairs in a private network namespace (driver veth)",
        }
