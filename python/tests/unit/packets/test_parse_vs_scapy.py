"""scapy as an independent oracle: frames built by scapy parse to the same fields in nicbench."""

from __future__ import annotations

import pytest
from helpers import python_module

scapy_all = python_module("scapy.all", "scapy")
from scapy.contrib.mpls import MPLS  # noqa: E402
from scapy.layers.inet import ICMP, IP, TCP, UDP  # noqa: E402
from scapy.layers.inet6 import (  # noqa: E402
    ICMPv6EchoRequest,
    IPv6,
    IPv6ExtHdrDestOpt,
    IPv6ExtHdrFragment,
    IPv6ExtHdrHopByHop,
    IPv6ExtHdrRouting,
)
from scapy.layers.l2 import GRE, Dot1AD, Dot1Q, Ether  # noqa: E402
from scapy.layers.sctp import SCTP  # noqa: E402
from scapy.layers.vxlan import VXLAN  # noqa: E402
from scapy.packet import Raw  # noqa: E402

from nicbench import parse_frame  # noqa: E402

MAC_A, MAC_B = "02:00:00:00:00:01", "02:00:00:00:00:02"


def mac(text: str) -> list[int]:
    return [int(b, 16) for b in text.split(":")]


def one(variant: dict) -> tuple[str, dict]:
    """Externally tagged serde enum → (tag, fields)."""
    assert len(variant) == 1, variant
    return next(iter(variant.items()))


def check_ipv4(layers: dict, ip) -> None:
    tag, h = one(layers["ip"])
    assert tag == "V4"
    assert h["src"] == ip.src and h["dst"] == ip.dst
    assert h["proto"] == ip.proto and h["ttl"] == ip.ttl and h["tos"] == ip.tos
    assert h["ihl"] == ip.ihl and h["total_len"] == ip.len and h["id"] == ip.id


def check_ipv6(layers: dict, ip6, upper: int) -> None:
    tag, h = one(layers["ip"])
    assert tag == "V6"
    assert h["src"] == ip6.src and h["dst"] == ip6.dst
    assert h["traffic_class"] == ip6.tc and h["flow_label"] == ip6.fl and h["hop_limit"] == ip6.hlim
    assert h["next_header"] == upper


def check_ports(layers: dict, kind: str, l4) -> None:
    tag, h = one(layers["l4"])
    assert tag == kind
    assert (h["src_port"], h["dst_port"]) == (l4.sport, l4.dport)


@pytest.mark.parametrize("ttl,tos", [(64, 0), (1, 0xB8), (255, 3)])
def test_ipv4_udp(ttl, tos):
    pkt = (
        Ether(src=MAC_A, dst=MAC_B)
        / IP(src="10.1.2.3", dst="192.168.7.9", ttl=ttl, tos=tos)
        / UDP(sport=1234, dport=53)
        / Raw(b"x" * 20)
    )
    parsed, pkt = pkt_roundtrip(pkt)
    eth = parsed["outer"]["eth"]
    assert eth["src"] == mac(MAC_A) and eth["dst"] == mac(MAC_B) and eth["ethertype"] == 0x0800
    check_ipv4(parsed["outer"], pkt[IP])
    check_ports(parsed["outer"], "Udp", pkt[UDP])
    assert parsed["stop"] is None
    key = parsed["flow_key"]
    assert (key["src"], key["dst"], key["proto"], key["src_port"], key["dst_port"]) == (
        "10.1.2.3",
        "192.168.7.9",
        17,
        1234,
        53,
    )


def pkt_roundtrip(pkt) -> tuple[dict, object]:
    """(nicbench's parse, scapy's own dissection of the same bytes — computed fields filled in)."""
    data = bytes(pkt)
    parsed = parse_frame(data)
    assert parsed["frame_len"] == len(data)
    return parsed, Ether(data)


def test_ipv4_options_tcp_flags():
    from scapy.layers.inet import IPOption_RR

    pkt = (
        Ether()
        / IP(src="1.2.3.4", dst="5.6.7.8", options=[IPOption_RR(routers=["9.9.9.9"])])
        / TCP(sport=40000, dport=443, flags="SA", seq=1000, ack=2000)
    )
    parsed, pkt = pkt_roundtrip(pkt)
    check_ipv4(parsed["outer"], pkt[IP])
    tag, tcp = one(parsed["outer"]["l4"])
    assert tag == "Tcp"
    assert tcp["flags"] == int(pkt[TCP].flags) and tcp["seq"] == 1000 and tcp["ack"] == 2000
    assert one(parsed["outer"]["ip"])[1]["ihl"] > 5


def test_vlan_and_qinq():
    pkt = Ether() / Dot1AD(vlan=300, prio=5) / Dot1Q(vlan=42, prio=3) / IP(src="10.0.0.1", dst="10.0.0.2") / UDP()
    parsed, pkt = pkt_roundtrip(pkt)
    outer = parsed["outer"]
    assert outer["vlan_count"] == 2
    assert outer["vlans"][0]["vid"] == 300 and outer["vlans"][0]["pcp"] == 5 and outer["vlans"][0]["tpid"] == 0x88A8
    assert outer["vlans"][1]["vid"] == 42 and outer["vlans"][1]["pcp"] == 3
    assert parsed["flow_key"]["vlan"] == 300


def test_ipv6_extension_headers_udp():
    pkt = (
        Ether()
        / IPv6(src="2001:db8::1", dst="2001:db8::2", tc=0x20, fl=0xABCDE, hlim=7)
        / IPv6ExtHdrHopByHop()
        / IPv6ExtHdrRouting(addresses=["2001:db8::99"])
        / IPv6ExtHdrDestOpt()
        / UDP(sport=5000, dport=6000)
        / Raw(b"payload")
    )
    parsed, pkt = pkt_roundtrip(pkt)
    check_ipv6(parsed["outer"], pkt[IPv6], 17)
    check_ports(parsed["outer"], "Udp", pkt[UDP])
    assert parsed["flow_key"]["proto"] == 17


def test_ipv6_first_and_non_first_fragment():
    first = (
        Ether()
        / IPv6(src="2001:db8::1", dst="2001:db8::2")
        / IPv6ExtHdrFragment(offset=0, m=1, id=77)
        / UDP(sport=1, dport=2)
    )
    parsed, first = pkt_roundtrip(first)
    assert one(parsed["outer"]["l4"])[0] == "Udp"
    later = (
        Ether()
        / IPv6(src="2001:db8::1", dst="2001:db8::2")
        / IPv6ExtHdrFragment(offset=100, m=0, id=77, nh=17)
        / Raw(b"y" * 16)
    )
    parsed, later = pkt_roundtrip(later)
    assert parsed["outer"]["l4"] is None
    assert parsed["flow_key"]["src_port"] == 0 and parsed["flow_key"]["dst_port"] == 0


def test_icmp_and_icmpv6():
    p4, _ = pkt_roundtrip(Ether() / IP(src="1.1.1.1", dst="2.2.2.2") / ICMP(type=8, code=0))
    tag, h = one(p4["outer"]["l4"])
    assert tag == "Icmpv4" and h["icmp_type"] == 8 and h["code"] == 0
    p6, _ = pkt_roundtrip(Ether() / IPv6(src="::1", dst="::2") / ICMPv6EchoRequest())
    tag, h = one(p6["outer"]["l4"])
    assert tag == "Icmpv6" and h["icmp_type"] == 128 and h["code"] == 0
    assert p6["flow_key"]["src_port"] == 0


def test_sctp():
    pkt = Ether() / IP(src="10.0.0.1", dst="10.0.0.2") / SCTP(sport=3868, dport=2905, tag=0xDEADBEEF)
    parsed, pkt = pkt_roundtrip(pkt)
    tag, h = one(parsed["outer"]["l4"])
    assert tag == "Sctp" and (h["src_port"], h["dst_port"], h["vtag"]) == (3868, 2905, 0xDEADBEEF)


def test_vxlan_inner_frame():
    inner = Ether(src=MAC_B, dst=MAC_A) / IP(src="172.16.0.5", dst="172.16.0.6") / TCP(sport=1111, dport=2222)
    pkt = Ether() / IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=49152, dport=4789) / VXLAN(vni=42) / inner
    parsed, pkt = pkt_roundtrip(pkt)
    tag, tunnel = one(parsed["tunnel"])
    assert tag == "Vxlan" and tunnel["vni"] == 42
    check_ipv4(parsed["inner"], pkt[VXLAN][IP])
    check_ports(parsed["inner"], "Tcp", pkt[VXLAN][TCP])
    assert parsed["inner"]["eth"]["src"] == mac(MAC_B)
    key = parsed["flow_key"]
    assert key["vni"] == 42 and key["src"] == "172.16.0.5" and key["dst_port"] == 2222


def test_gre_with_key():
    pkt = (
        Ether()
        / IP(src="10.0.0.1", dst="10.0.0.2")
        / GRE(key_present=1, key=0x1234, proto=0x0800)
        / IP(src="192.168.1.1", dst="192.168.1.2")
        / UDP(sport=7, dport=9)
    )
    parsed, pkt = pkt_roundtrip(pkt)
    tag, gre = one(parsed["tunnel"])
    assert tag == "Gre" and gre["key"] == 0x1234 and gre["protocol"] == 0x0800
    check_ports(parsed["inner"], "Udp", pkt[GRE][UDP])


def test_mpls():
    pkt = (
        Ether(type=0x8847)
        / MPLS(label=1000, s=0, ttl=9)
        / MPLS(label=2000, s=1, ttl=8)
        / IP(src="10.9.9.9", dst="10.8.8.8")
        / UDP(sport=1, dport=2)
    )
    parsed, pkt = pkt_roundtrip(pkt)
    outer = parsed["outer"]
    assert outer["mpls_count"] == 2
    assert outer["mpls"][0]["label"] == 1000 and outer["mpls"][1]["label"] == 2000
    assert outer["mpls"][1]["bottom_of_stack"] is True
    check_ipv4(outer, pkt[IP])


@pytest.mark.parametrize("cut", [0, 5, 13, 14, 20, 33, 34, 40, 41])
def test_truncated_frames_stop_with_a_reason(cut):
    data = bytes(Ether() / IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=1, dport=2) / Raw(b"z" * 8))[:cut]
    parsed = parse_frame(data)
    assert parsed["stop"] is not None, f"cut at {cut} should stop early"
    assert parsed["stop_message"]
    assert parsed["stop"]["offset"] <= cut
