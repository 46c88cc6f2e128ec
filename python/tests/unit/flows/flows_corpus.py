"""Raw-frame builders and the correctness corpus for the flow-meter tests (no scapy: plain `struct`).

Every scenario is a list of `(timestamp_s, frame_bytes)`; `write_pcap` writes a classic microsecond
pcap. Frames carry valid IPv4/TCP/UDP/ICMP checksums so that no peer drops them as corrupt.
"""

from __future__ import annotations

import ipaddress
import struct
from pathlib import Path

MAC_A = bytes.fromhex("020000000001")
MAC_B = bytes.fromhex("020000000002")
ETH_IPV4, ETH_IPV6 = 0x0800, 0x86DD
TCP_FIN, TCP_SYN, TCP_RST, TCP_PSH, TCP_ACK = 0x01, 0x02, 0x04, 0x08, 0x10

Packet = tuple[float, bytes]


def _checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def _l4(proto: int, src: str, dst: str, segment: bytes, csum_offset: int) -> bytes:
    """Fill in the L4 checksum over the IPv4/IPv6 pseudo-header."""
    s, d = ipaddress.ip_address(src), ipaddress.ip_address(dst)
    if s.version == 4:
        pseudo = s.packed + d.packed + struct.pack("!BBH", 0, proto, len(segment))
    else:
        pseudo = s.packed + d.packed + struct.pack("!IxxxB", len(segment), proto)
    csum = _checksum(pseudo + segment) if proto != 1 else _checksum(segment)
    if proto == 17 and csum == 0:
        csum = 0xFFFF
    return segment[:csum_offset] + struct.pack("!H", csum) + segment[csum_offset + 2 :]


def ip_frame(src: str, dst: str, proto: int, l4: bytes, forward: bool = True) -> bytes:
    """Ethernet + IPv4/IPv6 header around an L4 segment (checksum already set)."""
    s, d = ipaddress.ip_address(src), ipaddress.ip_address(dst)
    macs = MAC_B + MAC_A if forward else MAC_A + MAC_B
    if s.version == 4:
        header = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), 1, 0x4000, 64, proto, 0, s.packed, d.packed)
        header = header[:10] + struct.pack("!H", _checksum(header)) + header[12:]
        return macs + struct.pack("!H", ETH_IPV4) + header + l4
    header = struct.pack("!IHBB16s16s", 6 << 28, len(l4), proto if proto != 1 else 58, 64, s.packed, d.packed)
    return macs + struct.pack("!H", ETH_IPV6) + header + l4


def _payload(length: int) -> bytes:
    # Printable text, not zeros: Argus classifies some all-zero UDP payloads as the UDT protocol ("udt").
    pattern = b"nicbench flow meter test payload. "
    return (pattern * (length // len(pattern) + 1))[:length]


def udp(src: str, sport: int, dst: str, dport: int, payload_len: int = 32, payload: bytes | None = None) -> bytes:
    body = _payload(payload_len) if payload is None else payload
    seg = struct.pack("!HHHH", sport, dport, 8 + len(body), 0) + body
    return ip_frame(src, dst, 17, _l4(17, src, dst, seg, 6))


def tcp(
    src: str, sport: int, dst: str, dport: int, flags: int, seq: int = 0, ack: int = 0, payload_len: int = 0
) -> bytes:
    seg = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF, 5 << 4, flags, 65535, 0, 0)
    seg += bytes(payload_len)
    return ip_frame(src, dst, 6, _l4(6, src, dst, seg, 16))


def icmp_echo(src: str, dst: str, ident: int, seq: int, reply: bool = False, payload_len: int = 56) -> bytes:
    v6 = ipaddress.ip_address(src).version == 6
    kind = (129 if reply else 128) if v6 else (0 if reply else 8)
    seg = struct.pack("!BBHHH", kind, 0, 0, ident, seq) + bytes(payload_len)
    if v6:
        return ip_frame(src, dst, 1, _l4(58, src, dst, seg, 2))
    return ip_frame(src, dst, 1, _l4(1, src, dst, seg, 2))


def write_pcap(path: Path, packets: list[Packet]) -> Path:
    """Classic pcap (microsecond timestamps, Ethernet link type), packets in the order given."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for ts, frame in packets:
            sec = int(ts)
            usec = int(round((ts - sec) * 1e6))
            f.write(struct.pack("<IIII", sec, usec, len(frame), len(frame)) + frame)
    return path


# ---------------------------------------------------------------------------------------------
# Scenarios. Times start at T0 (a plausible epoch) so that tools printing dates are happy.

T0 = 1_700_000_000.0


def tcp_session(
    client: str,
    cport: int,
    server: str,
    sport: int,
    t: float,
    *,
    data_up: int = 3,
    data_down: int = 2,
    close: str = "fin",
) -> list[Packet]:
    """Handshake, `data_up` client segments of 100 B, `data_down` server segments of 1000 B, then
    FIN/FIN/ACK (`close="fin"`) or a server RST (`close="rst"`). 10 ms between packets."""
    out: list[Packet] = []
    c_seq, s_seq = 1000, 5000

    def add(frame: bytes) -> None:
        out.append((t + 0.01 * len(out), frame))

    add(tcp(client, cport, server, sport, TCP_SYN, c_seq))
    add(tcp(server, sport, client, cport, TCP_SYN | TCP_ACK, s_seq, c_seq + 1))
    c_seq, s_seq = c_seq + 1, s_seq + 1
    add(tcp(client, cport, server, sport, TCP_ACK, c_seq, s_seq))
    for _ in range(data_up):
        add(tcp(client, cport, server, sport, TCP_PSH | TCP_ACK, c_seq, s_seq, 100))
        c_seq += 100
    for _ in range(data_down):
        add(tcp(server, sport, client, cport, TCP_PSH | TCP_ACK, s_seq, c_seq, 1000))
        s_seq += 1000
    if close == "rst":
        add(tcp(server, sport, client, cport, TCP_RST | TCP_ACK, s_seq, c_seq))
    else:
        add(tcp(client, cport, server, sport, TCP_FIN | TCP_ACK, c_seq, s_seq))
        add(tcp(server, sport, client, cport, TCP_FIN | TCP_ACK, s_seq, c_seq + 1))
        add(tcp(client, cport, server, sport, TCP_ACK, c_seq + 1, s_seq + 1))
    return out


def scenario_tcp() -> list[Packet]:
    """Two TCP sessions closed by FIN handshake, one reset by the server, one SYN never answered."""
    pkts = tcp_session("10.0.0.1", 40000, "10.0.0.2", 80, T0)
    pkts += tcp_session("10.0.0.3", 40001, "10.0.0.2", 443, T0 + 0.5, data_up=5, data_down=7)
    pkts += tcp_session("10.0.0.4", 40002, "10.0.0.5", 22, T0 + 1.0, data_up=1, data_down=1, close="rst")
    pkts += [(T0 + 1.5, tcp("10.0.0.6", 40003, "10.0.0.7", 8080, TCP_SYN, 77))]
    return sorted(pkts, key=lambda p: p[0])


def scenario_udp() -> list[Packet]:
    """UDP both directions (initiator sends 4, responder 3), a one-way flow, and a flow whose first
    packet comes from the higher address (direction must follow the first sender, not the order of
    addresses)."""
    pkts: list[Packet] = []
    for i in range(4):
        pkts.append((T0 + 0.1 * i, udp("10.0.1.1", 5000, "10.0.1.2", 6000, 100)))
    for i in range(3):
        pkts.append((T0 + 0.05 + 0.1 * i, udp("10.0.1.2", 6000, "10.0.1.1", 5000, 400)))
    for i in range(5):
        pkts.append((T0 + 0.02 + 0.1 * i, udp("10.0.1.3", 7000, "10.0.1.4", 7001, 64)))
    pkts.append((T0 + 0.3, udp("10.0.1.200", 9100, "10.0.1.9", 9101, 20)))
    pkts.append((T0 + 0.35, udp("10.0.1.9", 9101, "10.0.1.200", 9100, 30)))
    pkts.append((T0 + 0.36, udp("10.0.1.200", 9100, "10.0.1.9", 9101, 40)))
    return sorted(pkts, key=lambda p: p[0])


def scenario_icmp() -> list[Packet]:
    """ICMP echo request/reply pairs (4 pings) between two hosts."""
    pkts: list[Packet] = []
    for i in range(4):
        pkts.append((T0 + i * 0.5, icmp_echo("10.0.2.1", "10.0.2.2", 0x1234, i)))
        pkts.append((T0 + i * 0.5 + 0.001, icmp_echo("10.0.2.2", "10.0.2.1", 0x1234, i, reply=True)))
    return pkts


def scenario_ipv6() -> list[Packet]:
    """A TCP session and a two-way UDP flow over IPv6."""
    pkts = tcp_session("2001:db8::1", 50000, "2001:db8::2", 443, T0, data_up=2, data_down=4)
    for i in range(3):
        pkts.append((T0 + 0.2 + 0.1 * i, udp("2001:db8::10", 5353, "2001:db8::20", 5354, 200)))
    for i in range(2):
        pkts.append((T0 + 0.25 + 0.1 * i, udp("2001:db8::20", 5354, "2001:db8::10", 5353, 50)))
    return sorted(pkts, key=lambda p: p[0])


def scenario_idle_split() -> list[Packet]:
    """A UDP flow silent for 45 s (> UDP idle timeout 30 s): two records. A TCP flow silent for 90 s
    (> TCP idle timeout 60 s) after its handshake and data, without FIN: two records."""
    pkts: list[Packet] = []
    for i in range(3):
        pkts.append((T0 + i, udp("10.0.3.1", 1111, "10.0.3.2", 2222, 80)))
    for i in range(2):
        pkts.append((T0 + 47 + i, udp("10.0.3.1", 1111, "10.0.3.2", 2222, 80)))
    session = tcp_session("10.0.3.3", 33333, "10.0.3.4", 80, T0, data_up=2, data_down=2)[:-3]
    pkts += session
    pkts += [
        (T0 + 91 + 0.01 * i, tcp("10.0.3.3", 33333, "10.0.3.4", 80, TCP_PSH | TCP_ACK, 9000 + i, 1, 100))
        for i in range(2)
    ]
    return sorted(pkts, key=lambda p: p[0])


def scenario_long_flow() -> list[Packet]:
    """A UDP flow with one packet per second in each direction for 150 s: longer than the 60 s active
    (status) interval, so it is reported in several records whose sum is the flow."""
    pkts: list[Packet] = []
    for i in range(150):
        pkts.append((T0 + i, udp("10.0.4.1", 4000, "10.0.4.2", 4001, 50)))
        pkts.append((T0 + i + 0.5, udp("10.0.4.2", 4001, "10.0.4.1", 4000, 150)))
    return pkts


def scenario_tcp_midstream() -> list[Packet]:
    """TCP flows whose handshake was not captured: one where the server (port 80) speaks first, one
    where the client does. No SYN tells who initiated."""
    return [
        (T0, tcp("10.0.8.2", 80, "10.0.8.1", 40000, TCP_PSH | TCP_ACK, 1, 1, 500)),
        (T0 + 0.1, tcp("10.0.8.1", 40000, "10.0.8.2", 80, TCP_ACK, 1, 501)),
        (T0 + 0.2, tcp("10.0.9.1", 40000, "10.0.9.2", 80, TCP_PSH | TCP_ACK, 1, 1, 300)),
        (T0 + 0.3, tcp("10.0.9.2", 80, "10.0.9.1", 40000, TCP_ACK, 1, 301)),
    ]


def dns_message(txid: int, response: bool) -> bytes:
    """A minimal DNS query/response for `example.org A` (header + question; the answer is omitted)."""
    flags = 0x8180 if response else 0x0100
    question = b"\x07example\x03org\x00" + struct.pack("!HH", 1, 1)
    return struct.pack("!HHHHHH", txid, flags, 1, 0, 0, 0) + question


def scenario_dns() -> list[Packet]:
    """Two DNS transactions (ids 0x1111, 0x2222) on the SAME UDP 5-tuple, each query + response:
    Argus keys UDP/53 also by transaction id, so they are two flows."""
    pkts: list[Packet] = []
    for i, txid in enumerate((0x1111, 0x2222)):
        pkts.append((T0 + i, udp("10.0.11.1", 33000, "10.0.11.2", 53, payload=dns_message(txid, False))))
        pkts.append((T0 + i + 0.01, udp("10.0.11.2", 53, "10.0.11.1", 33000, payload=dns_message(txid, True))))
    return pkts


SCENARIOS = {
    "tcp": scenario_tcp,
    "udp": scenario_udp,
    "icmp": scenario_icmp,
    "ipv6": scenario_ipv6,
    "idle_split": scenario_idle_split,
    "long_flow": scenario_long_flow,
    "tcp_midstream": scenario_tcp_midstream,
    "dns": scenario_dns,
}
