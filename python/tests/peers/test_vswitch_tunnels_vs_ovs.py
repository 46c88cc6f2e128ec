"""VXLAN tunnel ports: nicbench's virtual OVS datapath against real Open vSwitch 3.1 (the oracle).

OVS's userspace tunnelling on the dummy datapath (`OvsTunnels`): br-int holds the OpenFlow rules, a
VM-side port p1 and the VXLAN port vx (key=flow); br-phy holds the physical port p0 and the tunnel
endpoint's IP. VXLAN frames injected on p0 are decapsulated (`tnl_pop` on the underlay megaflow, then
a megaflow with the tunnel key for the inner packet); frames on p1 that the rules `set_tunnel` and
send to vx are encapsulated (`tnl_push`). The same rules, ports and frames go to nicbench
(`--port vx=vxlan,...` on the CLI); `dpctl/dump-flows` must equal nicbench's megaflows line for line
as multisets (keys with masks, packet counts, actions), every known difference listed and counted.

The rule sets follow the seed's Fig. 9 (seed 002 line 234): two exact IPv4 rules per flow, one in
(decap, matching the flow's VNI) and one out (encap with the flow's other VNI), one VNI per rule.
"""

from __future__ import annotations

import collections

import pytest
from helpers import paced, python_module

from peers.of_rules import to_of_rules
from peers.ovs_peer import OvsTunnels
from peers.test_vswitch_vs_ovs import comparable

scapy_all = python_module("scapy.all", "scapy")
Ether, IP, TCP, UDP = scapy_all.Ether, scapy_all.IP, scapy_all.TCP, scapy_all.UDP

FLOWS = 4


def inner(src: str, dst: str, dport: int = 80) -> bytes:
    return bytes(
        Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
        / IP(src=src, dst=dst)
        / TCP(sport=1000, dport=dport, flags="S")
        / (b"x" * 8)
    )


def vxlan(
    vni: int,
    frame: bytes,
    *,
    tos: int = 0,
    csum: bool = True,
    dst: str = OvsTunnels.LOCAL_IP,
    udp_dst: int = 4789,
    src: str = OvsTunnels.REMOTE_IP,
    src_mac: str = OvsTunnels.REMOTE_MAC,
) -> bytes:
    """An outer frame from the remote endpoint (its MAC and IP) to the underlay bridge. The VXLAN
    header is written by hand: scapy's VXLAN layer sets the GPE next-protocol bits, which OVS's
    VXLAN port refuses."""
    udp = UDP(sport=5555, dport=udp_dst)
    if not csum:
        udp.chksum = 0
    header = b"\x08\x00\x00\x00" + vni.to_bytes(3, "big") + b"\x00"
    return bytes(
        Ether(src=src_mac, dst=OvsTunnels.LOCAL_MAC)
        / IP(src=src, dst=dst, tos=tos, flags="DF")
        / udp
        / (header + frame)
    )


def fig9_rules(flows: int) -> str:
    """Fig. 9's rule set: per flow one rule in (its VNI, exact IPv4 src/dst, to the VM) and one out
    (exact IPv4 src/dst back, encapsulated with the next VNI); each rule its own VNI."""
    lines = []
    for i in range(flows):
        vm, remote = f"20.0.{i}.1", f"10.0.{i}.1"
        lines.append(f"priority=10,in_port=vx,tun_id={100 + 2 * i},ip,nw_src={remote},nw_dst={vm},actions=output:p1")
        lines.append(
            f"priority=10,in_port=p1,ip,nw_src={vm},nw_dst={remote},actions=set_tunnel:{101 + 2 * i},output:vx"
        )
    return "\n".join(lines) + "\n"


# case → (rules, port the frames arrive on, frames)
CASES: dict[str, tuple[str, str, list[bytes]]] = {
    "fig9_decap": (
        fig9_rules(FLOWS),
        "p0",
        [vxlan(100 + 2 * i, inner(f"10.0.{i}.1", f"20.0.{i}.1")) for i in range(FLOWS)] * 2,
    ),
    "fig9_encap": (fig9_rules(FLOWS), "p1", [inner(f"20.0.{i}.1", f"10.0.{i}.1") for i in range(FLOWS)] * 2),
    "decap_misses_and_tunnel_metadata": (
        fig9_rules(2) + "priority=1,in_port=vx,actions=drop\n",
        "p0",
        [
            vxlan(100, inner("10.0.0.1", "20.0.0.1")),
            vxlan(100, inner("10.0.0.1", "20.0.0.1"), csum=False),  # -csum: its own megaflow
            vxlan(102, inner("10.0.1.1", "20.0.1.1"), tos=0x20),  # tunnel tos printed
            vxlan(999, inner("10.0.0.1", "20.0.0.1")),  # no rule for the VNI
            vxlan(100, inner("10.0.9.1", "20.0.0.1")),  # VNI right, addresses not
            vxlan(100, inner("10.0.0.1", "20.0.0.1"), udp_dst=53),  # UDP to the endpoint, not VXLAN
            vxlan(100, inner("10.0.0.1", "20.0.0.1"), dst="172.31.1.9"),  # VXLAN to another IP
            bytes(
                Ether(src=OvsTunnels.REMOTE_MAC, dst=OvsTunnels.LOCAL_MAC)
                / IP(src=OvsTunnels.REMOTE_IP, dst=OvsTunnels.LOCAL_IP)
                / TCP(sport=5, dport=4789)
            ),  # TCP to the endpoint
            vxlan(100, inner("10.0.0.1", "20.0.0.1")),
        ],
    ),
    "encap_rewrites_and_ecn": (
        "priority=10,in_port=p1,tcp,actions=set_tunnel:7,mod_nw_dst:10.9.9.9,output:vx\n"
        "priority=5,in_port=p1,ip,actions=set_tunnel:8,output:vx\n",
        "p1",
        [
            inner("20.0.0.1", "10.0.0.1"),
            bytes(Ether() / IP(src="20.0.0.2", dst="10.0.0.1", tos=0x03) / UDP()),
            bytes(Ether() / IP(src="20.0.0.3", dst="10.0.0.1", tos=0x01) / UDP()),
            inner("20.0.0.5", "10.0.0.1"),
        ],
    ),
    "fixed_key_port": (
        "priority=10,in_port=vk,ip,actions=output:p1\npriority=10,in_port=p1,ip,actions=output:vk\n",
        "p0",
        [
            vxlan(
                OvsTunnels.KEYED_VNI,
                inner("10.0.0.1", "20.0.0.1"),
                src=OvsTunnels.KEYED_IP,
                src_mac=OvsTunnels.KEYED_MAC,
            ),
            vxlan(
                OvsTunnels.KEYED_VNI,
                inner("10.0.0.2", "20.0.0.1"),
                src=OvsTunnels.KEYED_IP,
                src_mac=OvsTunnels.KEYED_MAC,
            ),
            # A VNI no port accepts (vk's key is fixed): popped, then dropped without a megaflow.
            vxlan(7, inner("10.0.0.1", "20.0.0.1"), src=OvsTunnels.KEYED_IP, src_mac=OvsTunnels.KEYED_MAC),
        ],
    ),
    "fixed_key_encap": (
        "priority=10,in_port=p1,ip,actions=set_tunnel:5,output:vk\n",
        "p1",
        [
            inner("20.0.0.1", "10.0.0.1"),
            inner("20.0.0.2", "10.0.0.1"),
            bytes(Ether() / IP(src="20.0.0.3", dst="10.0.0.1", tos=0x01) / UDP()),
        ],
    ),  # ECN 1: its own megaflow
}

# Known differences between nicbench and OVS 3.1 on these cases: case → (count, why). Empty: none.
KNOWN_DIFFERENCES: dict[str, tuple[int, str]] = {}


@pytest.fixture(scope="module")
def ovs():
    o = OvsTunnels()
    yield o
    o.stop()


def run_both(ovs: OvsTunnels, tmp_path, name: str, nic: str | None = None) -> tuple[list, list, dict]:
    from nicbench import vswitch

    rules_text, in_port, frames = CASES[name]
    ovs.reset(rules_text)
    for f in frames:
        ovs.receive(in_port, f)
    theirs = [comparable(line) for line in ovs.dump_flows()]
    pcap = tmp_path / f"{name}.pcap"
    scapy_all.wrpcap(str(pcap), paced([Ether(f) for f in frames]))
    result = vswitch.megaflows(
        to_of_rules(rules_text, tmp_path), pcap, in_port=in_port, ports=ovs.ports(), underlay=ovs.underlay(), nic=nic
    )
    ours = [
        comparable(mf["text"].replace(", offloaded:yes, dp:tc", "").replace(", offloaded:no, dp:ovs", ""))
        for mf in result["megaflows"]
        if mf["installed"]
    ]
    return ours, theirs, result


@pytest.mark.parametrize("name", sorted(CASES))
def test_tunnel_megaflows_equal_ovs(ovs, tmp_path, name):
    ours, theirs, _ = run_both(ovs, tmp_path, name)
    only_ours = collections.Counter(ours) - collections.Counter(theirs)
    only_theirs = collections.Counter(theirs) - collections.Counter(ours)
    differences = sum(only_ours.values()) + sum(only_theirs.values())
    expected, why = KNOWN_DIFFERENCES.get(name, (0, ""))
    assert differences == expected, (
        f"{name}: {differences} differing megaflows (expected {expected}{': ' + why if why else ''})\n"
        f"only nicbench: {sorted(only_ours)}\nonly OVS: {sorted(only_theirs)}"
    )
    assert len(theirs) >= 2, "each case installs several megaflows"


def test_fig9_shape_one_pop_flow_and_one_flow_per_vni(ovs, tmp_path):
    """What the oracle showed, stated apart so a change in OVS or nicbench reads plainly: decap is one
    underlay megaflow (`tnl_pop`) shared by every flow plus one tunnel megaflow per VNI; encap is one
    megaflow per flow ending in `tnl_push(...)` and the physical port."""
    _, decap, _ = run_both(ovs, tmp_path, "fig9_decap")
    assert sum("tnl_pop(4789)" in actions for _, _, actions in decap) == 1
    assert sorted(k.split("tun_id=")[1].split(",")[0] for k, _, _ in decap if "tun_id=" in k) == sorted(
        hex(100 + 2 * i) for i in range(FLOWS)
    )
    _, encap, _ = run_both(ovs, tmp_path, "fig9_encap")
    assert len(encap) == FLOWS and all(a.startswith("tnl_push(tnl_port(4789)") for _, _, a in encap)


def test_tunnel_megaflows_offload_on_both_nics(ovs, tmp_path):
    """Both NICs offload VXLAN with OVS-TC in the seed (line 309, FEATURES "VXLAN": V for the Agilio;
    lines 152 and 234: both NICs ran the VXLAN PVP). The model takes every decap (tnl_pop,
    tunnel-key match) and encap (tnl_push) megaflow on both. The encap ones match the inner ECN bits
    (`ipv4(tos=0/0x3)`, seen on OVS 3.1 above): the Agilio's appendix lists IPv4 matching, and mlx5's
    `__parse_cls_flower` took FLOW_DISSECTOR_KEY_IP's tos before kernel 4.15 (offload.rs)."""
    for nic in ("agilio-cx-25g", "connectx5-25g"):
        for name in ("fig9_decap", "fig9_encap"):
            _, _, result = run_both(ovs, tmp_path, name, nic=nic)
            installed = [mf for mf in result["megaflows"] if mf["installed"]]
            refused = {mf["reason"] for mf in installed if not mf["flow"]["placement"]["offloaded"]}
            assert installed and not refused, (nic, name, refused)
