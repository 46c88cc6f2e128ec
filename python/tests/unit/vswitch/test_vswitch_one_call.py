"""`nicbench vswitch --openflow R --trace T --nic agilio-cx-25g` with a VXLAN trace crosses into the native
module once, and Python never opens the rule file: the `ovs-pvp` model reads it (issue 34). Counted in
process, through click's test runner: every function of `nicbench._native` wrapped with a counter, and
Python's ways of opening a file (`builtins.open`, `io.open`, `os.open`) with a recorder of the paths."""

from __future__ import annotations

import builtins
import io
import json
import os
from collections import Counter

from helpers import paced, python_module

scapy_all = python_module("scapy.all", "scapy")

FLOWS = 5
PORT = "vx=vxlan,remote_ip=172.31.1.2,local_ip=172.31.1.1,underlay=p0"


def _files(tmp_path):
    rules, frames = [], []
    for i in range(FLOWS):
        src, dst = f"10.0.{i}.1", f"20.0.{i}.1"
        rules.append(f"priority=10,in_port=vx,tun_id={2 * i + 1},ip,nw_src={src},nw_dst={dst},actions=output:vm")
        rules.append(f"priority=10,in_port=vm,ip,nw_src={src},nw_dst={dst},actions=set_tunnel:{2 * i + 2},output:vx")
        inner = bytes(scapy_all.Ether() / scapy_all.IP(src=src, dst=dst) / scapy_all.UDP() / (b"\0" * 30))
        frames.append(
            scapy_all.Ether(dst="00:00:00:00:00:00")
            / scapy_all.IP(src="172.31.1.2", dst="172.31.1.1")
            / scapy_all.UDP(sport=5555, dport=4789)
            / (b"\x08\x00\x00\x00" + (2 * i + 1).to_bytes(3, "big") + b"\x00" + inner)
        )
    (tmp_path / "fig9.of").write_text("\n".join(rules) + "\n")
    scapy_all.wrpcap(str(tmp_path / "vxlan.pcap"), paced(frames * 2))
    return tmp_path / "fig9.of", tmp_path / "vxlan.pcap", len(inner)


def test_vxlan_pvp_is_one_native_call_and_python_never_opens_the_rule_file(tmp_path, monkeypatch):
    from click.testing import CliRunner

    import nicbench.cli.vswitch  # noqa: F401 (loading it lists the NIC profiles for --nic's choices)
    from nicbench import _native
    from nicbench.cli import main

    rules, pcap, inner_len = _files(tmp_path)
    calls: Counter[str] = Counter()

    def counted(name, fn):
        def wrapper(*args, **kwargs):
            calls[name] += 1
            return fn(*args, **kwargs)

        return wrapper

    for name in dir(_native):
        fn = getattr(_native, name)
        if callable(fn) and not isinstance(fn, type):  # functions, not the exception classes
            monkeypatch.setattr(_native, name, counted(name, fn))
    opened: list[str] = []

    def recording(fn):
        def wrapper(file, *args, **kwargs):
            if isinstance(file, (str, bytes, os.PathLike)):
                opened.append(os.fsdecode(file))
            return fn(file, *args, **kwargs)

        return wrapper

    monkeypatch.setattr(builtins, "open", recording(builtins.open))
    monkeypatch.setattr(io, "open", recording(io.open))
    monkeypatch.setattr(os, "open", recording(os.open))
    result = CliRunner().invoke(
        main,
        ["vswitch", "--openflow", str(rules), "--trace", str(pcap), "--nic", "agilio-cx-25g", "--port", PORT, "--json"],
    )
    assert result.exit_code == 0, result.output
    assert calls == {"model_run": 1}, calls
    assert str(rules) not in opened and str(pcap) not in opened, opened
    out = json.loads(result.output)
    # The run was the VXLAN one: decap on the uplink, encap on the VF, the inner frame size.
    assert sorted((m["ingress"], m["megaflows"], m["decap"], m["encap"]) for m in out["load"]["masks"]) == [
        ("uplink", FLOWS, True, False),
        ("vf", FLOWS, False, True),
    ]
    assert out["frame_bytes"] == inner_len + 4 and out["flows"] == FLOWS
    assert out["datapath"]["vf"]["bytes"] == 2 * FLOWS * inner_len
