"""`nicbench vswitch --port vx=vxlan,...`: Red Hat PVP with VXLAN through the virtual OVS datapath.
The load it hands the PVP model must be the seed's Fig. 9 structure (line 234: per flow one rule in,
one rule out, one VNI per rule): per flow one decap megaflow on the uplink and one encap megaflow on
the VF, the userspace datapath's shared `tnl_pop` megaflow left out (no tc rule of its own under
OVS-TC). On both NICs, which offload all of them, the prediction then equals the study's Fig. 9
spec (`pvp.predict(..., vxlan=True)` with its default load)."""

from __future__ import annotations

import json

from helpers import forked_cli, paced, python_module

scapy_all = python_module("scapy.all", "scapy")

FLOWS = 6
PORT = "vx=vxlan,remote_ip=172.31.1.2,local_ip=172.31.1.1,underlay=p0"


def _files(tmp_path):
    rules = []
    frames = []
    for i in range(FLOWS):
        src, dst = f"10.0.{i}.1", f"20.0.{i}.1"
        rules.append(f"priority=10,in_port=vx,tun_id={2 * i + 1},ip,nw_src={src},nw_dst={dst},actions=output:vm")
        rules.append(f"priority=10,in_port=vm,ip,nw_src={src},nw_dst={dst},actions=set_tunnel:{2 * i + 2},output:vx")
        inner = bytes(scapy_all.Ether() / scapy_all.IP(src=src, dst=dst) / scapy_all.TCP() / (b"\0" * 20))
        frames.append(
            scapy_all.Ether(dst="00:00:00:00:00:00")
            / scapy_all.IP(src="172.31.1.2", dst="172.31.1.1")
            / scapy_all.UDP(sport=5555, dport=4789)
            / (b"\x08\x00\x00\x00" + (2 * i + 1).to_bytes(3, "big") + b"\x00" + inner)
        )
    (tmp_path / "fig9.of").write_text("\n".join(rules) + "\n")
    scapy_all.wrpcap(str(tmp_path / "vxlan.pcap"), paced(frames * 3))
    return tmp_path / "fig9.of", tmp_path / "vxlan.pcap", len(inner)


def test_pvp_vxlan_load_is_fig9_structure_and_agilio_matches_the_spec(tmp_path):
    from nicbench import pvp

    rules, pcap, inner_len = _files(tmp_path)
    done = forked_cli(
        "vswitch",
        "--nic",
        "agilio-cx-25g",
        "--openflow",
        str(rules),
        "--trace",
        str(pcap),
        "--uplink",
        "p0",
        "--port",
        PORT,
        "--json",
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["flows"] == FLOWS and out["frame_bytes"] == inner_len + 4
    assert sorted(
        (m["ingress"], m["megaflows"], m["offloaded"], m["decap"], m["encap"]) for m in out["load"]["masks"]
    ) == [("uplink", FLOWS, FLOWS, True, False), ("vf", FLOWS, FLOWS, False, True)]
    pops = [mf for mf in out["datapath"]["uplink"]["megaflows"] if "tnl_pop(4789)" in mf["text"]]
    assert len(pops) == 1, "one underlay megaflow pops every flow"
    spec = pvp.predict("agilio-cx-25g", FLOWS, inner_len + 4, vxlan=True)
    assert out["pvp"]["mpps"] == spec["mpps"]


def test_pvp_vxlan_connectx5_offloads_decap_and_encap(tmp_path):
    """The ConnectX-5 takes both directions (seed 002 lines 152, 234): the encap megaflows match the
    inner ECN bits (`nw_tos`), which mlx5's FLOW_DISSECTOR_KEY_IP matched since before kernel 4.15
    (docs/vswitch.md); so the NIC, not the host, sets the rate, as in the fig9 spec."""
    from nicbench import pvp

    rules, pcap, inner_len = _files(tmp_path)
    done = forked_cli(
        "vswitch",
        "--nic",
        "connectx5-25g",
        "--openflow",
        str(rules),
        "--trace",
        str(pcap),
        "--uplink",
        "p0",
        "--port",
        PORT,
        "--json",
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert sorted(
        (m["ingress"], m["megaflows"], m["offloaded"], m["decap"], m["encap"]) for m in out["load"]["masks"]
    ) == [("uplink", FLOWS, FLOWS, True, False), ("vf", FLOWS, FLOWS, False, True)]
    assert out["datapath"]["vf"]["refusals"] == {}
    spec = pvp.predict("connectx5-25g", FLOWS, inner_len + 4, vxlan=True)
    assert out["pvp"]["mpps"] == spec["mpps"]


def test_pvp_vxlan_underlay_must_be_the_uplink(tmp_path):
    rules, pcap, _ = _files(tmp_path)
    done = forked_cli("vswitch", "--openflow", str(rules), "--trace", str(pcap), "--uplink", "p9", "--port", PORT)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "nicbench: error: --port vx: underlay='p0' must be the uplink 'p9' (the VXLAN trace arrives on it)"
    )
