"""A second real peer for the flow meter's own mode (`nicbench flows`, not `--compat argus`):
nfdump's pcap flow builder (`nfpcapd -r`, read back with `nfdump -o csv`).

nfpcapd builds uni-directional flows and counts IP bytes (no Ethernet header); nicbench records
are bidirectional and count the 14 B Ethernet header too. Record boundaries differ by design
(timeouts: nfpcapd 300 s active / 60 s idle; ICMP: nfdump keys by type/code, nicbench by
addresses), so what is compared is what both must agree on whatever the boundaries: per direction
of every flow, the packets and the IP bytes, over the whole correctness corpus."""

from __future__ import annotations

import csv
import io
import subprocess
from collections import defaultdict

import pytest
from flows_corpus import SCENARIOS
from helpers import peer

from nicbench.flows import load_records, meter

pytestmark = pytest.mark.peer

ETHERNET_HEADER_BYTES = 14
NFDUMP_CSV = "ts,te,td,sa,da,sp,dp,pr".split(",")  # then flg, fwd, stos, ipkt, ibyt, ...
PROTOCOLS = {"TCP": "tcp", "UDP": "udp", "ICMP": "icmp", "ICMP6": "icmp"}


def direction_key(proto: str, src: str, dst: str, sport, dport) -> tuple:
    # ICMP: nicbench keys by addresses only; nfdump puts type.code into the destination port.
    return (proto, src, dst) if proto == "icmp" else (proto, src, dst, int(sport), int(dport))


def nfpcapd_directions(pcap, workdir) -> dict:
    """(proto, src, dst[, sport, dport]) → [packets, IP bytes], from nfpcapd + nfdump."""
    flow_dir = workdir / f"{pcap.stem}.nfcapd"
    flow_dir.mkdir()
    built = subprocess.run(
        [peer("nfpcapd", "nfdump"), "-r", str(pcap), "-w", str(flow_dir)], capture_output=True, text=True, timeout=60
    )
    assert built.returncode == 0, built.stderr
    dump = subprocess.run(
        [peer("nfdump"), "-R", str(flow_dir), "-o", "csv", "-q"], capture_output=True, text=True, timeout=60
    )
    assert dump.returncode == 0, dump.stderr
    totals: dict = defaultdict(lambda: [0, 0])
    for row in csv.reader(io.StringIO(dump.stdout)):
        if not row or not row[0][:1].isdigit():
            continue
        f = dict(zip(NFDUMP_CSV, row))
        packets, ip_bytes = int(row[11]), int(row[12])
        key = direction_key(PROTOCOLS[f["pr"]], f["sa"], f["da"], f["sp"], f["dp"])
        totals[key][0] += packets
        totals[key][1] += ip_bytes
    return {k: tuple(v) for k, v in totals.items()}


def nicbench_directions(pcap, workdir) -> dict:
    """The same from nicbench's records: each record split into its two directions, L2 bytes out."""
    out = workdir / f"{pcap.stem}.csv"
    stats = meter(pcap, out=out)
    totals: dict = defaultdict(lambda: [0, 0])
    for r in load_records(out):
        for src, dst, sport, dport, packets, l2_bytes in (
            (r["SrcAddr"], r["DstAddr"], r["Sport"], r["Dport"], r["SrcPkts"], r["SrcBytes"]),
            (r["DstAddr"], r["SrcAddr"], r["Dport"], r["Sport"], r["DstPkts"], r["DstBytes"]),
        ):
            if packets:
                key = direction_key(r["Proto"], src, dst, sport, dport)
                totals[key][0] += packets
                totals[key][1] += l2_bytes - ETHERNET_HEADER_BYTES * packets
    assert sum(v[0] for v in totals.values()) == stats["packets"] - stats["non_ip_packets"]
    return {k: tuple(v) for k, v in totals.items()}


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_every_direction_has_the_packets_and_bytes_nfpcapd_counts(scenario, corpus, tmp_path):
    theirs = nfpcapd_directions(corpus[scenario], tmp_path)
    ours = nicbench_directions(corpus[scenario], tmp_path)
    assert ours == theirs
    assert theirs, "nfpcapd saw no flow: the comparison would be empty"
