#!/usr/bin/env python3
"""Generate studies/offpath/reference.toml: the published numbers of Wei et al. (seed 004).

Source: the seed text only (shared/seeds/004_52904a23a2e180c2.txt; no digitized plots exist for
this paper). One entry per published number the model can produce, with quote and location, so
the file stands alone. Numbers that are inputs (testbed, specs), cited from other papers,
duplicates of another entry, or lost in the text extraction are listed in SKIPPED with why.

Encoding of the text's forms:
- "X Gbps", "X M reqs/s", "X Mpps": the metric at the point (relative tolerance).
- "a-b% higher/lower than": two entries on an `offpath.compare` point sweeping the figure's
  payloads: the min and max of the change (ratio - 1), absolute tolerance in fractions (±0.05 =
  5 percentage points): the published ends of the range ARE the numbers.
- "a-b x": tput_ratio_min/max (relative tolerance).
- "the bottleneck is the network / PCIe / ...": bottleneck_<class> = 1 (absolute 0.5: exact).
- "similar / hardly affected / the same": change = 0 with an absolute tolerance.
- The study's advices: advice_<id> = 1 on the case the seed gives it for.

The calibration subset (set = "calibration", `CALIBRATION` below) pins each opaque mechanism
with one or two numbers; everything else validates. Deterministic.

    python3 studies/offpath/make_reference.py            # writes studies/offpath/reference.toml
    python3 studies/offpath/make_reference.py --out FILE
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from nicbench.experiments.reference_file import render_references

HERE = Path(__file__).resolve().parent
SEED = "shared/seeds/004_52904a23a2e180c2.txt"
BF2, RNIC = "bluefield2", "connectx6-rnic"

TPUT_REL = 0.15  # absolute throughputs and packet rates
LAT_REL = 0.20  # absolute latencies
RATIO_REL = 0.15  # "n x" ratios
ARITH_REL = 0.05  # Table 3 arithmetic (exact PCIe packet counts)
CHANGE_ABS = 0.05  # ends of "a-b%" ranges: ±5 percentage points
WIDE_ABS = 0.08  # ends of wide ranges (3-36%, 4-27%) and "up to" claims on ratios of mixes
ZERO_ABS = 0.05  # "similar", "hardly affected", "almost the same"
FLAG_ABS = 0.5  # 0/1 indicators (bottleneck, advice)

L = {
    "s21": f"{SEED}, §2.1 RDMA-capable NICs (Issue #1)",
    "s21b": f"{SEED}, §2.1 RDMA-capable NICs",
    "s31l": f"{SEED}, §3.1 Communication from Client to Host, Latency (Fig. 4)",
    "s31t": f"{SEED}, §3.1 Communication from Client to Host, Throughput (Fig. 4)",
    "s31b": f"{SEED}, §3.1 Communication from Client to Host, Bottleneck (Fig. 5b)",
    "s32l": f"{SEED}, §3.2 Communication from Client to SoC, Latency (Fig. 4)",
    "s32t": f"{SEED}, §3.2 Communication from Client to SoC, Throughput (Fig. 4)",
    "s32b": f"{SEED}, §3.2 Communication from Client to SoC, Bottleneck (Fig. 5b)",
    "fig7": f"{SEED}, §3.2 Advice #1 (Fig. 7)",
    "fig8": f"{SEED}, §3.2 Advice #2 (Fig. 8)",
    "s33l": f"{SEED}, §3.3 Communication between SoC and Host, Latency (Fig. 10a)",
    "s33t": f"{SEED}, §3.3 Communication between SoC and Host, Throughput (Fig. 4)",
    "s33b": f"{SEED}, §3.3 Communication between SoC and Host, Bottleneck (Fig. 5b)",
    "fig9": f"{SEED}, §3.3 Advice #3 (Fig. 9, Table 3)",
    "fig10": f"{SEED}, §3.3 Advice #4 (Fig. 10b)",
    "s4a": f"{SEED}, §4 Concurrent communication with the host and the SoC (①+②)",
    "s4b": f"{SEED}, §4 Concurrent inter- and intra-machine communication (①/②+③)",
    "s4c": f"{SEED}, §4 Bottleneck and Takeaways",
}

REFS: list[dict] = []


def ref(id_: str, quote: str, loc: str, experiment: str, where: dict, metric: str, value: float, unit: str,
        tolerance: dict) -> None:
    REFS.append({"id": id_, "quote": quote, "location": L[loc], "experiment": f"offpath-{experiment}",
                 "where": where, "metric": metric, "statistic": "median", "value": float(value), "unit": unit,
                 "tolerance": tolerance, "set": "validation"})


def rel(x: float) -> dict:
    return {"relative": x}


def ab(x: float) -> dict:
    return {"absolute": x}


def single(nic: str, path: str, verb: str, payload: int, **extra) -> dict:
    return {"nic": nic, "path": path, "verb": verb, "payload": payload, **extra}


def flag(id_: str, quote: str, loc: str, experiment: str, where: dict, cls: str) -> None:
    ref(id_, quote, loc, experiment, where, f"bottleneck_{cls}", 1.0, "", ab(FLAG_ABS))


# --- §2.1: host CPU vs NIC cores ---------------------------------------------------------------------------------
ref("rnic-send-host-cpu-87mpps", "saturating a 24-core server can only achieve 87 million packets per second (Mpps) "
    "on a 200 Gbps RNIC (ConnectX-6) (two-sided SEND/RECV echo, small messages)", "s21", "fig4",
    single(RNIC, "client->host", "SEND", 64), "mpps", 87.0, "Mpps", rel(TPUT_REL))
flag("rnic-send-bottleneck-host-cpu", "Distributed systems need non-trivial CPU resources to saturate a "
     "high-bandwidth NIC when using two-sided RDMA primitives (24 cores: 87 Mpps)", "s21", "fig4",
     single(RNIC, "client->host", "SEND", 64), "host_cpu")
ref("rnic-nic-cores-195mpps", "while NIC cores can process more than 195 Mpps (0 B READs, no DMA)", "s21", "sec4",
    {"label": "rnic-zero-read"}, "a_mpps_max", 195.0, "Mpps", rel(TPUT_REL))
ref("rnic-latency-2us", "RDMA ... is a low latency (2 µs) ... network protocol (RNIC ① READ, 64 B)", "s21b", "fig4",
    single(RNIC, "client->host", "READ", 64), "latency_us", 2.0, "us", rel(0.25))
ref("rnic-small-latency-1-2us", "which is non-trivial for small RDMA requests (1-2 µs) (RNIC ① WRITE, 64 B: "
    "within 1-2 µs)", "s31l", "fig4", single(RNIC, "client->host", "WRITE", 64), "latency_us", 1.5, "us", ab(0.5))

# --- §3.1 client -> host: SNIC ① vs RNIC ① -------------------------------------------------------------------------
for verb, lo, hi in (("read", 0.15, 0.30), ("write", 0.15, 0.21), ("send", 0.06, 0.09)):
    q = (f"for READ, WRITE, and SEND/RECV, SNIC ① has 15-30%, 15-21%, and 6-9% higher latency than RNIC ①, "
         f"respectively ({verb.upper()}, payloads 16 B-4 KiB)")
    ref(f"lat-snic1-vs-rnic1-{verb}-min", q + f": the {lo:.0%} end", "s31l", "fig4-ranges",
        {"label": f"lat-snic1-vs-rnic1-{verb}"}, "lat_change_min", lo, "", ab(CHANGE_ABS))
    ref(f"lat-snic1-vs-rnic1-{verb}-max", q + f": the {hi:.0%} end", "s31l", "fig4-ranges",
        {"label": f"lat-snic1-vs-rnic1-{verb}"}, "lat_change_max", hi, "", ab(CHANGE_ABS))
ref("lat-increase-read-0.6us", "READ has a higher absolute latency increase than WRITE (0.6 µs vs. 0.4 µs) because "
    "READ passes the PCIe twice (SNIC ① − RNIC ①, READ)", "s31l", "fig4-ranges",
    {"label": "lat-snic1-vs-rnic1-read"}, "lat_diff_us_median", 0.6, "us", ab(0.15))
ref("lat-increase-write-0.4us", "READ has a higher absolute latency increase than WRITE (0.6 µs vs. 0.4 µs) "
    "(SNIC ① − RNIC ①, WRITE)", "s31l", "fig4-ranges", {"label": "lat-snic1-vs-rnic1-write"}, "lat_diff_us_median",
    0.4, "us", ab(0.15))
for verb, lo, hi, tol in (("read", 0.19, 0.26, CHANGE_ABS), ("write", 0.15, 0.22, CHANGE_ABS),
                          ("send", 0.03, 0.36, WIDE_ABS)):
    q = (f"for READ, WRITE, and SEND/RECV, SNIC ① has 19-26%, 15-22%, and 3-36% lower throughput than RNIC ① for "
         f"payloads less than 512 bytes ({verb.upper()}, 16-256 B)")
    ref(f"tput-snic1-vs-rnic1-{verb}-min", q + f": the {hi:.0%} end", "s31t", "fig4-ranges",
        {"label": f"tput-snic1-vs-rnic1-{verb}"}, "tput_change_min", -hi, "", ab(tol))
    ref(f"tput-snic1-vs-rnic1-{verb}-max", q + f": the {lo:.0%} end", "s31t", "fig4-ranges",
        {"label": f"tput-snic1-vs-rnic1-{verb}"}, "tput_change_max", -lo, "", ab(tol))
ref("tput-snic1-vs-rnic1-large-similar", "The result of larger requests is similar to using RNIC since the network "
    "bandwidth becomes the bottleneck (READ and WRITE, 16 KiB)", "s31t", "fig4-ranges",
    {"label": "tput-snic1-vs-rnic1-large"}, "tput_change_min", 0.0, "", ab(ZERO_ABS))
for verb in ("READ", "WRITE"):
    flag(f"snic1-large-{verb.lower()}-bottleneck-network", "The lowest bandwidth limit of NIC, PCIe1, and PCIe0 will "
         "first become the bottleneck ... On our testbed, Bluefield-2's 200 Gbps NIC is the performance bottleneck "
         f"({verb}, 16 KiB)", "s31b", "fig4", single(BF2, "client->host", verb, 16384), "network")
ref("rnic-16k-saturates", "using requests with payloads larger than 16 KB is enough to saturate a 200 Gbps RNIC "
    "(RNIC ① READ 16 KiB; saturation = the 191 Gbps the seed measures at the network limit)", "fig8", "fig4",
    single(RNIC, "client->host", "READ", 16384), "gbps", 191.0, "Gbps", rel(0.10))
ref("fig5b-snic1-same-direction-read", "if both clients send the same type of requests (either READ or WRITE), only "
    "about 190 Gbps is reached (SNIC ①, 4 KB READ+READ)", "s31b", "fig5b",
    {"nic": BF2, "flows": "client->host READ {payload}; client->host READ {payload}"}, "total_gbps", 190.0, "Gbps",
    rel(TPUT_REL))
ref("fig5b-snic1-same-direction-write", "if both clients send the same type of requests (either READ or WRITE), "
    "only about 190 Gbps is reached (SNIC ①, 4 KB WRITE+WRITE)", "s31b", "fig5b",
    {"nic": BF2, "flows": "client->host WRITE {payload}; client->host WRITE {payload}"}, "total_gbps", 190.0,
    "Gbps", rel(TPUT_REL))
ref("fig5b-snic1-opposite-364", "if two clients send READ and WRITE requests separately, a total of 364 Gbps "
    "bandwidth is reached on a 200 Gbps NIC (see READ+WRITE of SNIC ①)", "s31b", "fig5b",
    {"nic": BF2, "flows": "client->host READ {payload}; client->host WRITE {payload}"}, "total_gbps", 364.0, "Gbps",
    rel(TPUT_REL))

# --- §3.2 client -> SoC ------------------------------------------------------------------------------------------
ref("lat-snic2-vs-snic1-read-14pct", "the latency of READ decreases by up to 14% due to without passing through "
    "PCIe0 (SNIC ② vs SNIC ①, READ, 16 B-4 KiB)", "s32l", "fig4-ranges", {"label": "lat-snic2-vs-snic1-read"},
    "lat_change_min", -0.14, "", ab(CHANGE_ABS))
ref("lat-snic2-vs-rnic1-read-min", "but is still 4-15% higher than RNIC since it still needs to pass through the "
    "PCIe switch (READ): the 4% end", "s32l", "fig4-ranges", {"label": "lat-snic2-vs-rnic1-read"}, "lat_change_min",
    0.04, "", ab(CHANGE_ABS))
ref("lat-snic2-vs-rnic1-read-max", "but is still 4-15% higher than RNIC since it still needs to pass through the "
    "PCIe switch (READ): the 15% end", "s32l", "fig4-ranges", {"label": "lat-snic2-vs-rnic1-read"}, "lat_change_max",
    0.15, "", ab(CHANGE_ABS))
ref("lat-snic2-vs-snic1-write-similar-min", "For WRITE, SNIC ② provides similar performance to SNIC ① due to "
    "asynchronously sending completion (latency, lowest change over 16 B-4 KiB)", "s32l", "fig4-ranges",
    {"label": "lat-snic2-vs-snic1-write"}, "lat_change_min", 0.0, "", ab(ZERO_ABS))
ref("lat-snic2-vs-snic1-write-similar-max", "For WRITE, SNIC ② provides similar performance to SNIC ① (latency, "
    "highest change over 16 B-4 KiB)", "s32l", "fig4-ranges", {"label": "lat-snic2-vs-snic1-write"},
    "lat_change_max", 0.0, "", ab(ZERO_ABS))
ref("lat-snic2-vs-snic1-send-min", "For SEND/RECV, SNIC ② has 21-30% higher latency than SNIC ①, due to the lower "
    "computing power of SoC: the 21% end", "s32l", "fig4-ranges", {"label": "lat-snic2-vs-snic1-send"},
    "lat_change_min", 0.21, "", ab(CHANGE_ABS))
ref("lat-snic2-vs-snic1-send-max", "For SEND/RECV, SNIC ② has 21-30% higher latency than SNIC ①: the 30% end",
    "s32l", "fig4-ranges", {"label": "lat-snic2-vs-snic1-send"}, "lat_change_max", 0.30, "", ab(CHANGE_ABS))
ref("tput-snic2-vs-snic1-1.08x", "For READ and WRITE, due to less cross-PCIe penalties, SNIC 2 has better throughput "
    "than SNIC 1, reaching 1.08-1.48x for payloads less than 512 bytes: the 1.08x end", "s32t", "fig4-ranges",
    {"label": "tput-snic2-vs-snic1-rw"}, "tput_ratio_min", 1.08, "", rel(RATIO_REL))
ref("tput-snic2-vs-snic1-1.48x", "SNIC 2 has better throughput than SNIC 1, reaching 1.08-1.48x for payloads less "
    "than 512 bytes: the 1.48x end (also the abstract's 'up to 1.48x faster than to the host')", "s32t",
    "fig4-ranges", {"label": "tput-snic2-vs-snic1-rw"}, "tput_ratio_max", 1.48, "", rel(RATIO_REL))
ref("tput-snic2-vs-snic1-send-64pct", "Finally, for SEND/RECV, the throughput drops by up to 64%, again due to the "
    "wimpy SoC cores (SNIC ② vs SNIC ①, < 512 B)", "s32t", "fig4-ranges", {"label": "tput-snic2-vs-snic1-send"},
    "tput_change_min", -0.64, "", ab(WIDE_ABS))
flag("snic2-send-bottleneck-soc-cpu", "for SEND/RECV, the throughput drops by up to 64%, again due to the wimpy SoC "
     "cores (SNIC ② SEND, 64 B)", "s32t", "fig4", single(BF2, "client->soc", "SEND", 64), "soc_cpu")
flag("snic2-large-bottleneck-network", "since SNIC 2 only flows through NIC and PCIe1, the bottleneck is their lower "
     "bandwidth limit, which is still Bluefield-2's 200 Gbps NIC (READ, 16 KiB)", "s32b", "fig4",
     single(BF2, "client->soc", "READ", 16384), "network")
ref("fig5b-snic2-same-direction", "the performance of SNIC ② is also similar to that of SNIC ①, namely the total of "
    "400 Gbps and 200 Gbps bandwidth for opposite direction and same direction (READ+READ, 4 KB; SNIC ①: about "
    "190 Gbps)", "s32b", "fig5b", {"nic": BF2, "flows": "client->soc READ {payload}; client->soc READ {payload}"},
    "total_gbps", 190.0, "Gbps", rel(TPUT_REL))
ref("fig5b-snic2-opposite", "the performance of SNIC ② is also similar to that of SNIC ①, namely the total of "
    "400 Gbps ... for opposite direction (READ+WRITE, 4 KB; SNIC ①: 364 Gbps)", "s32b", "fig5b",
    {"nic": BF2, "flows": "client->soc READ {payload}; client->soc WRITE {payload}"}, "total_gbps", 364.0, "Gbps",
    rel(TPUT_REL))

# Fig. 7: address-range skew (64 B assumed)
ref("fig7-soc-write-48k-77.9", "For WRITE, the throughput of SNIC ② using SoC cores drops to 22.7 M reqs/s (from "
    "77.9 M reqs/s) when address range decreases [from 48 KB to 1.5 KB]: the 48 KB point", "fig7", "fig7",
    single(BF2, "client->soc", "WRITE", 64, address_range=49152), "mpps", 77.9, "Mpps", rel(TPUT_REL))
ref("fig7-soc-write-1.5k-22.7", "For WRITE, the throughput of SNIC ② using SoC cores drops to 22.7 M reqs/s ... "
    "[at a 1.5 KB address range]", "fig7", "fig7", single(BF2, "client->soc", "WRITE", 64, address_range=1536),
    "mpps", 22.7, "Mpps", rel(TPUT_REL))
ref("fig7-soc-read-48k-85", "the throughput of SNIC ② drops from 85 M reqs/s to 50 M reqs/s when decreasing the range "
    "from 48 KB to 1.5 KB (READ): the 48 KB point", "fig7", "fig7",
    single(BF2, "client->soc", "READ", 64, address_range=49152), "mpps", 85.0, "Mpps", rel(TPUT_REL))
ref("fig7-soc-read-1.5k-50", "the throughput of SNIC ② drops from 85 M reqs/s to 50 M reqs/s when decreasing the "
    "range from 48 KB to 1.5 KB (READ): the 1.5 KB point", "fig7", "fig7",
    single(BF2, "client->soc", "READ", 64, address_range=1536), "mpps", 50.0, "Mpps", rel(TPUT_REL))
ref("fig7-host-write-unaffected", "In contrast, the performance ... using Host CPU cores is hardly affected when DDIO "
    "is enabled (host memory, WRITE, 1.5 KB vs 48 KB)", "fig7", "fig10-ranges", {"label": "db-range-skew-host"},
    "tput_change_min", 0.0, "", ab(ZERO_ABS))
flag("fig7-soc-write-bottleneck-soc-dram", "DRAM requires to utilize all memory modules concurrently, while LLC can "
     "tolerate skewed access better (SoC memory, no DDIO: WRITE, 1.5 KB range)", "fig7", "fig7",
     single(BF2, "client->soc", "WRITE", 64, address_range=1536), "soc_dram")
ref("fig7-advice-avoid-skew", "Advice #1: Avoid skewed memory accesses (WRITE to SoC memory, 1.5 KB range)", "fig7",
    "fig7", single(BF2, "client->soc", "WRITE", 64, address_range=1536), "advice_avoid_skewed_soc_writes", 1.0, "",
    ab(FLAG_ABS))

# Fig. 8: large READs to the SoC
ref("fig8-host-pcie-46.7", "the NIC can issue 46.7 million PCIe packets per second to the host (SNIC ①) "
    "(READ, 1 MiB; the busiest PCIe link direction)", "fig8", "fig8", single(BF2, "client->host", "READ", 1 << 20),
    "pcie_mpps_max", 46.7, "Mpps", rel(0.10))
ref("fig8-host-191gbps", "The aggregated bandwidth reaches 191 Gbps, bottlenecked by the network (SNIC ① READ, 1 MiB)",
    "fig8", "fig8", single(BF2, "client->host", "READ", 1 << 20), "gbps", 191.0, "Gbps", rel(0.10))
flag("fig8-host-bottleneck-network", "The aggregated bandwidth reaches 191 Gbps, bottlenecked by the network "
     "(SNIC ① READ, 1 MiB)", "fig8", "fig8", single(BF2, "client->host", "READ", 1 << 20), "network")
ref("fig8-soc-pcie-186-before", "for READ requests with payloads larger than 9 MB payloads, the throughput of issuing "
    "PCIe packets to SoC (SNIC ②) drops dramatically to less than 120 Mpps (from 186 Mpps): 186 Mpps below the "
    "threshold (8 MiB)", "fig8", "fig8", single(BF2, "client->soc", "READ", 8 << 20), "pcie_mpps_max", 186.0, "Mpps",
    rel(0.10))
ref("fig8-soc-pcie-186-1mib", "... drops dramatically to less than 120 Mpps (from 186 Mpps) (SNIC ② READ, 1 MiB)",
    "fig8", "fig8", single(BF2, "client->soc", "READ", 1 << 20), "pcie_mpps_max", 186.0, "Mpps", rel(0.10))
ref("fig8-soc-pcie-below-120", "for READ requests with payloads larger than 9 MB payloads, the throughput of issuing "
    "PCIe packets to SoC (SNIC ②) drops dramatically to less than 120 Mpps (16 MiB; encoded as 100-120 Mpps)", "fig8",
    "fig8", single(BF2, "client->soc", "READ", 16 << 20), "pcie_mpps_max", 110.0, "Mpps", ab(10.0))
ref("fig8-soc-write-unaffected", "Note that WRITE requests are not affected since DMA does not wait for the "
    "completion (SNIC ② WRITE, 16 MiB: still at the network limit of 191 Gbps)", "fig8", "fig8",
    single(BF2, "client->soc", "WRITE", 16 << 20), "gbps", 191.0, "Gbps", rel(0.10))
ref("fig8-advice-segment", "Advice #2: Avoid large READ requests ... the request should be proactively segmented into "
    "smaller ones (SNIC ② READ, 16 MiB)", "fig8", "fig8", single(BF2, "client->soc", "READ", 16 << 20),
    "advice_segment_large_reads", 1.0, "", ab(FLAG_ABS))

# --- §3.3 SoC <-> host --------------------------------------------------------------------------------------------
ref("lat-h2s-vs-snic2-min", "The latency in the opposite direction (from the host to SoC, SNIC ③ H2S) is reduced but "
    "still 4-17% higher than SNIC ② (READ): the 4% end", "s33l", "fig4-ranges", {"label": "lat-h2s-vs-snic2-read"},
    "lat_change_min", 0.04, "", ab(CHANGE_ABS))
ref("lat-h2s-vs-snic2-max", "... still 4-17% higher than SNIC ② (READ): the 17% end", "s33l", "fig4-ranges",
    {"label": "lat-h2s-vs-snic2-read"}, "lat_change_max", 0.17, "", ab(CHANGE_ABS))
for verb, tol in (("READ", TPUT_REL), ("WRITE", 0.25), ("SEND", 0.25)):
    similar = "" if verb == "READ" else f" ({verb}: 'For WRITE and SEND/RECV, the results are similar')"
    ref(f"s2h-{verb.lower()}-small-29mreqs", "the READ throughput of SNIC ③ only reaches 29 M reqs/s and 51.2 M reqs/s "
        f"for S2H and H2S, respectively (payloads less than 512 bytes: 64 B){similar}", "s33t", "fig4",
        single(BF2, "soc->host", verb, 64), "mpps", 29.0, "Mpps", rel(tol))
    ref(f"h2s-{verb.lower()}-small-51.2mreqs", "the READ throughput of SNIC ③ only reaches 29 M reqs/s and 51.2 M reqs/s "
        f"for S2H and H2S, respectively (64 B){similar}", "s33t", "fig4", single(BF2, "host->soc", verb, 64), "mpps",
        51.2, "Mpps", rel(tol))
for path in ("soc->host", "host->soc"):
    flag(f"{'s2h' if path == 'soc->host' else 'h2s'}-small-bottleneck-requester", "For requests with payloads less "
         "than 512 bytes, the throughput of SNIC ③ (both S2H and H2S) is bottlenecked by the requester's processor "
         "(READ, 64 B)", "s33t", "fig4", single(BF2, path, "READ", 64), "requester")
    flag(f"{'s2h' if path == 'soc->host' else 'h2s'}-large-bottleneck-pcie", "For larger requests, the throughput is "
         "restricted by the PCIe bandwidth (READ, 256 KiB)", "s33t", "fig9", single(BF2, path, "READ", 256 << 10),
         "pcie")
ref("fig5b-h2s-204gbps", "the peak bandwidth of SNIC ③ is slightly higher than SNIC ① and ② (204 Gbps vs. 191 Gbps) "
    "(H2S READ, 4 KB, single direction)", "s33b", "fig5b", {"nic": BF2, "flows": "host->soc READ {payload}"},
    "total_gbps", 204.0, "Gbps", rel(0.10))
flag("fig5b-h2s-bottleneck-pcie", "communication between host and SoC is bottlenecked by PCIe bandwidth (256 Gbps) "
     "rather than the uninvolved NIC (200 Gbps) (H2S READ, 4 KB)", "s33b", "fig5b",
     {"nic": BF2, "flows": "host->soc READ {payload}"}, "pcie")
ref("fig5b-h2s-opposite-same", "For packets flowing in opposite directions, SNIC ③ can only achieve the same results "
    "instead of reaching twice the limit (H2S READ+WRITE, 4 KB: about 204 Gbps)", "s33b", "fig5b",
    {"nic": BF2, "flows": "host->soc READ {payload}; host->soc WRITE {payload}"}, "total_gbps", 204.0, "Gbps",
    rel(TPUT_REL))
ref("fig9-s2h-256k-204gbps", "for sending 256 KB READ requests from SoC to the host, the bandwith reaches 204 Gbps",
    "fig9", "fig9", single(BF2, "soc->host", "READ", 256 << 10), "gbps", 204.0, "Gbps", rel(0.10))
ref("fig9-s2h-256k-320mpps", "for sending 256 KB READ requests from SoC to the host ... the NIC transfers about 320 M "
    "PCIe packets per second (measured with the NIC's hardware counters: every TLP on the NIC's own link PCIe1, both "
    "directions; the seed reads it as confirming its 293 Mpps estimate, so PCIe0 is not in it)", "fig9", "fig9",
    single(BF2, "soc->host", "READ", 256 << 10), "pcie1_mpps", 320.0, "Mpps", rel(TPUT_REL))
for path in ("soc->host", "host->soc"):
    for verb in ("READ", "WRITE"):
        tag = "s2h" if path == "soc->host" else "h2s"
        ref(f"fig9-{tag}-{verb.lower()}-collapse-100", "As shown in Figure 9(a), the READ/WRITE performance of SNIC 3 "
            f"collapses to about 100 Gbps for large requests ({tag.upper()} {verb}, 16 MiB)", "fig9", "fig9",
            single(BF2, path, verb, 16 << 20), "gbps", 100.0, "Gbps", rel(0.20))
ref("fig9-collapse-48pct", "communications with it can cause up to 48% bandwidth degradation due to performance "
    "anomalies (abstract; ③ collapse: 100 vs 191 Gbps -> S2H READ 16 MiB vs SNIC ① at the network limit)", "fig9",
    "fig9", single(BF2, "soc->host", "READ", 16 << 20), "gbps", 191.0 * (1 - 0.48), "Gbps", rel(0.20))
ref("derived-s2h-pcie1-down-195", "Suppose we transfer data at 200 Gbps from SoC to the host. The SoC cores first "
    "transfer 195 M PCIe packets per second (pps) to the NIC (PCIe1) (128 B MTU data TLPs: PCIe1 towards the NIC; "
    "Table 3 counts data TLPs only, so does the model's metric)",
    "fig9", "derived", {"label": "s2h-200g-vs-snic1"}, "a_pcie1_down_data_mpps", 195.0, "Mpps", rel(ARITH_REL))
ref("derived-s2h-pcie0-up-49", "and fi-nally, the switch forwards 49 Mpps through PCIe0 (512 B MTU data TLPs to the "
    "host)", "fig9", "derived", {"label": "s2h-200g-vs-snic1"}, "a_pcie0_up_data_mpps", 49.0, "Mpps", rel(ARITH_REL))
ref("derived-s2h-pcie1-up-49", "then the NIC forwards data back to the PCIe switch via PCIe1 again with 49 Mpps (the "
    "host supports 512 B MTU) (Table 3 omits control TLPs, e.g. the NIC's read requests to SoC memory, which also go "
    "up PCIe1: the model's data-TLP count is compared)", "fig9", "derived", {"label": "s2h-200g-vs-snic1"},
    "a_pcie1_up_data_mpps", 49.0, "Mpps", rel(ARITH_REL))
ref("derived-s2h-293mpps", "Therefore, SmartNIC should process at least 293 Mpps for transferring data at 200 Gbps "
    "(sum of the data TLPs over PCIe links and directions, as Table 3: without the read requests the model also "
    "counts, 342 Mpps in all)", "fig9", "derived", {"label": "s2h-200g-vs-snic1"}, "a_pcie_data_mpps_total",
    293.0, "Mpps", rel(ARITH_REL))
ref("derived-6x-snic1", "which is 6x and 1.5x higher than SNIC ① and SNIC ②, respectively: 6x (same 200 Gbps over "
    "①; the seed's arithmetic: ③'s data TLPs on all links, 293, vs ①'s on one link, 49 Mpps — the packets the NIC "
    "issues, as Fig. 8b's 46.7 Mpps)", "fig9", "derived", {"label": "s2h-200g-vs-snic1"}, "pcie_data_ratio_max", 6.0,
    "", rel(ARITH_REL))
ref("derived-1.5x-snic2", "which is 6x and 1.5x higher than SNIC ① and SNIC ②, respectively: 1.5x (same 200 Gbps "
    "over ②: 293 vs ②'s 195 Mpps of data TLPs on PCIe1)", "fig9", "derived", {"label": "s2h-200g-vs-snic2"},
    "pcie_data_ratio_max", 1.5, "", rel(ARITH_REL))

# Fig. 10: doorbell batching (64 B READs assumed)
ref("fig10-db-soc-2.7x", "when sending a batch of READs to the host, DB improves the SoC performance by 2.7-4.6x for "
    "batch sizes 16-80: the 2.7x end", "fig10", "fig10-ranges", {"label": "db-soc-16-80"}, "tput_ratio_min", 2.7, "",
    rel(RATIO_REL))
ref("fig10-db-soc-4.6x", "DB improves the SoC performance by 2.7-4.6x for batch sizes 16-80: the 4.6x end", "fig10",
    "fig10-ranges", {"label": "db-soc-16-80"}, "tput_ratio_max", 4.6, "", rel(RATIO_REL))
for batch, drop in ((16, 0.09), (32, 0.07), (48, 0.06)):
    ref(f"fig10-db-host-{batch}", "For batch sizes of 16, 32, and 48, DB decreases the throughput of host-SoC "
        f"communication by 9%, 7%, and 6%, respectively (host side, batch {batch})", "fig10", "fig10-ranges",
        {"label": f"db-host-{batch}"}, "tput_change_min", -drop, "", ab(0.03))
for nic_tag in ("snic1", "rnic1"):
    for end in ("min", "max"):
        ref(f"fig10-db-{nic_tag}-2-30pct-{end}", "for RNIC ① and SNIC ①, DB is always helpful and can bring 2-30% "
            f"performance improvement ({nic_tag.upper()}, batch 16-80: the {end} gain lies in 2-30%, encoded as "
            "16% ± 14 points)", "fig10", "fig10-ranges", {"label": f"db-{nic_tag}"}, f"tput_change_{end}", 0.16, "",
            ab(0.14))
ref("fig10-advice-db-soc-only", "Advice #4: Enable doorbell batching carefully ... critical for SNIC ③ at the SoC side, "
    "but is negative at the host side for small batch sizes (H2S READ, batch 16)", "fig10", "fig10",
    single(BF2, "host->soc", "READ", 64, doorbell_batch=16), "advice_doorbell_batching_soc_only", 1.0, "",
    ab(FLAG_ABS))

# --- §4 concurrency -----------------------------------------------------------------------------------------------
ref("mix12-vs-lower-read-1.45x", "For READ, WRITE, and SEND/RECV, SNIC ①+② outperforms the lower of them by up to "
    "1.45x, 1.50x, ... (READ)", "s4a", "sec4", {"label": "mix12-vs-lower-read"}, "tput_ratio_max", 1.45, "",
    rel(RATIO_REL))
ref("mix12-vs-lower-write-1.50x", "SNIC ①+② outperforms the lower of them by up to 1.45x, 1.50x, ... (WRITE)", "s4a",
    "sec4", {"label": "mix12-vs-lower-write"}, "tput_ratio_max", 1.50, "", rel(RATIO_REL))
ref("zero-read-12-vs-1-13pct", "Both cases (SNIC ①+② and SNIC ②+①) offer similar performance, with 4-13% and 5-10% "
    "higher throughput than using SNIC 1 or SNIC 2 alone (0 B READ, saturated: the 13% end vs ①)", "s4a", "sec4",
    {"label": "zero-read-12-vs-1"}, "tput_change_max", 0.13, "", ab(CHANGE_ABS))
ref("zero-read-12-vs-2-10pct", "... with 4-13% and 5-10% higher throughput than using SNIC 1 or SNIC 2 alone (0 B READ, "
    "saturated: the 10% end vs ②)", "s4a", "sec4", {"label": "zero-read-12-vs-2"}, "tput_change_max", 0.10, "",
    ab(CHANGE_ABS))
ref("zero-write-same", "For WRTIE, all results are almost the same (0 B WRITE, ①+② vs ① alone)", "s4a", "sec4",
    {"label": "zero-write-12-vs-1"}, "tput_change_max", 0.0, "", ab(ZERO_ABS))
ref("zero-read-sum-alone-352", "the aggregated throughput of the two paths (SNIC ① and SNIC ②) is much higher than "
    "concurrently using them (352 Mpps vs. 195 Mpps): 352 Mpps, each path alone summed", "s4a", "sec4",
    {"label": "zero-read-sum-alone"}, "b_mpps_max", 352.0, "Mpps", rel(TPUT_REL))
ref("zero-read-concurrent-195", "(352 Mpps vs. 195 Mpps): 195 Mpps, ① and ② concurrently (0 B READ)", "s4a", "sec4",
    {"label": "zero-read-sum-alone"}, "a_mpps_max", 195.0, "Mpps", rel(TPUT_REL))
flag("zero-read-bottleneck-nic-cores", "All requests use 0B payload to avoid issuing any DMA ... five requester "
     "machines are sufficient to saturate NIC cores (SNIC ① READ, 0 B)", "s4a", "fig5b",
     {"nic": BF2, "flows": "client->host READ 0B"}, "nic_cores")
flag("zero-read-mix-bottleneck-nic-cores", "the aggregated throughput of the two paths ... is much higher than "
     "concurrently using them (352 Mpps vs. 195 Mpps), indicating that most NIC cores are still shared (①+② READ, "
     "0 B)", "s4a", "fig5b", {"nic": BF2, "flows": "client->host READ 0B; client->soc READ 0B"}, "nic_cores")
for verb, lo, hi, tol in (("read", 0.07, 0.15, CHANGE_ABS), ("write", 0.04, 0.27, WIDE_ABS),
                          ("send", 0.09, 0.14, CHANGE_ABS)):
    q = ("for READ, WRITE, and SEND/RECV, the throughput of small requests (less than 512 bytes) drops 7-15%, 4-27%, "
         f"and 9-14%, by comparing SNIC ① and SNIC ①+③(H2S) ({verb.upper()}, SNIC ①'s share)")
    ref(f"mix13-drop-{verb}-max", q + f": the {hi:.0%} end", "s4b", "sec4", {"label": f"mix13-vs-1-{verb}"},
        "tput_change_min", -hi, "", ab(tol))
    ref(f"mix13-drop-{verb}-min", q + f": the {lo:.0%} end", "s4b", "sec4", {"label": f"mix13-vs-1-{verb}"},
        "tput_change_max", -lo, "", ab(tol))
ref("mix13-large-similar", "For large requests, the performance is always bottlenecked by the network bandwidth, "
    "resulting in similar results (SNIC ① with ③ H2S vs alone, READ and WRITE, 16 KiB)", "s4b", "sec4",
    {"label": "mix13-vs-1-large"}, "tput_change_min", 0.0, "", ab(ZERO_ABS))
ref("fig5b-mix12-opposite-400", "For SNIC ①+②, each part has the same bottleneck (the NIC), so the bandwidth limit is "
    "400 Gbps (bi-directional) (① READ + ② WRITE, 4 KB)", "s4c", "fig5b",
    {"nic": BF2, "flows": "client->host READ {payload}; client->soc WRITE {payload}"}, "total_gbps", 400.0, "Gbps",
    rel(TPUT_REL))
flag("fig5b-mix13-bottleneck-pcie", "For SNIC ①+③, it is bottlenecked by SNIC ③, which is limited on the "
     "uni-direction of PCIe (256 Gbps) since it occupies both directions of PCIe1 (① READ + ③ H2S READ, 4 KB)",
     "s4c", "fig5b", {"nic": BF2, "flows": "client->host READ {payload}; host->soc READ {payload}"}, "pcie")
ref("fig5b-456", "the aggregated bandwidth can achieve 456 Gbps if we restrict the bandwidth of data transfer on SNIC ③ "
    "to 56 Gbps (① READ + ① WRITE + ③ H2S WRITE offered at 56 Gbps, 4 KB, independent requesters)", "s4c", "fig5b",
    {"nic": BF2, "flows": "client->host READ {payload}; client->host WRITE {payload}; "
                          "host->soc WRITE {payload} @ 56Gbps"}, "total_gbps", 456.0, "Gbps", rel(0.10))
ref("advice-p-minus-n", "the bandwidth used by SNIC 3 should no larger than P - N ... On our testbed, it should be "
    "56 Gbps (① READ + ③ H2S READ: the advice applies)", "s4c", "fig5b",
    {"nic": BF2, "flows": "client->host READ {payload}; host->soc READ {payload}"}, "advice_bound_h2s_to_p_minus_n",
    1.0, "", ab(FLAG_ABS))
ref("advice-use-1-and-2", "Sending requests from clients to the host and the SoC concurrently (SNIC ①+②) can best "
    "utilize NIC cores to handle small RDMA requests (READ, 64 B, ① alone: the advice applies)", "s4c", "fig4",
    single(BF2, "client->host", "READ", 64), "advice_use_paths_1_and_2_concurrently", 1.0, "", ab(FLAG_ABS))

# Numbers of the seed that are not model outputs (kept here so the list is complete).
SKIPPED = [
    "§2.1: RDMA 200 Gbps, 400 Gbps ConnectX-7; 2.27x CPU cores from 25 to 100 Gbps [18] — specs / cited, not measured",
    "§2.2: on-board memory 4-64 GB — spec",
    "Table 1/2, §2.4: 2x100 Gbps ports, 8 A72 cores at 2.75 GHz, 16 GB DDR4-1600, PCIe 4.0 x16 256 Gbps, testbed "
    "machines (3 SRV, 20 CLI, 12-core CPUs, DDR4-2933/1600), 10 GB address space, eleven requester machines — "
    "model inputs (profile parameters / request defaults), not results",
    "§3.1: PCIe switch one-way overhead 150-200 ns [36] — a model input (profile), not a result",
    "§3.1: two requesters with 12 threads each, 4 KB packets (Fig. 5b) — scenario inputs",
    "§3.1 Takeaways: 'up to 36% and 30% in throughput and latency' — the same numbers as the 3-36% and 15-30% entries",
    "§3.2: 1 vs 8 DRAM channels — profile inputs; '9 MB' — the threshold is encoded by the 8 MiB and 16 MiB entries",
    "§3.2 Fig. 7 WRITE quote: the seed text reads 'drops to 22.7 M reqs/s (rom 77.9 M reqs/s) when address range "
    "decreases to 48 KB (from 1.5 KB)' — the ranges are swapped in the extraction (READ: 'from 48 KB to 1.5 KB'); "
    "encoded as 77.9 at 48 KB and 22.7 at 1.5 KB",
    "§3.2: 'SNIC ② READ even observably higher than RNIC ①', 'WRITE SNIC ② still lower than RNIC ①' — no number",
    "§3.3: 'S2H collapses earlier than H2S', 'SoC suffers a high MMIO latency' (Fig. 10a) — no number",
    "§3.3: 256 Gbps PCIe, 200 Gbps NIC — inputs; '191 Gbps' of ①/② — the fig8-host-191gbps entry",
    "§4: SEND/RECV gain of ①+② over the lower path — the number is lost in the text extraction ('1.45x 1.50x 1')",
    "§4: the 4% and 5% lower ends of '4-13% and 5-10%' — they depend on how many requester machines are added "
    "(Fig. 11's x axis, not in the text); the model's saturated mix gives the upper ends",
    "§4: 'five requester machines', '24 requester threads' — scenario inputs; P = 256 and N = 200 Gbps — inputs; "
    "P - N = 56 Gbps — arithmetic on inputs (the advice entry checks the model applies it)",
    "§5: Bluefield-3 400 Gbps, PCIe 5.0 — another NIC, not modelled",
]

# The calibration subset: one or two numbers per opaque mechanism.
CALIBRATION = {
    "zero-read-sum-alone-352",  # NIC-core rate per endpoint
    "zero-read-concurrent-195",  # NIC cores shared across endpoints
    "lat-increase-read-0.6us",  # PCIe switch + PCIe1 latency (READ crosses twice)
    "s2h-read-small-29mreqs",  # SoC MMIO posting cost
    "h2s-read-small-51.2mreqs",  # host MMIO posting cost
    "fig7-soc-write-1.5k-22.7",  # SoC DRAM bank concurrency (writes)
    "fig7-soc-read-1.5k-50",  # SoC DRAM bank concurrency (reads)
    "fig8-soc-pcie-below-120",  # completion buffer / head-of-line blocking
    "fig9-s2h-read-collapse-100",  # ③ collapse
    "fig9-s2h-256k-204gbps",  # PCIe efficiency over ③
    "fig10-db-soc-2.7x",  # SoC-side doorbell batching
    "fig10-db-host-16",  # host-side doorbell batching penalty
    "tput-snic2-vs-snic1-send-64pct",  # SoC cores for two-sided messages
    "lat-snic2-vs-snic1-send-max",  # SoC software path of a two-sided echo (no DDIO; latency only)
}


def build() -> list[dict]:
    entries = [dict(e) for e in REFS]
    ids = Counter(e["id"] for e in entries)
    dup = [i for i, n in ids.items() if n > 1]
    if dup:
        raise SystemExit(f"make_reference: duplicate ids {dup}")
    unknown = CALIBRATION - set(ids)
    if unknown:
        raise SystemExit(f"make_reference: calibration ids not defined: {sorted(unknown)}")
    for e in entries:
        e["set"] = "calibration" if e["id"] in CALIBRATION else "validation"
    return entries


def render(entries: list[dict]) -> str:
    header = [
        "# Off-path SmartNIC (Wei et al., seed 004) reference values — GENERATED by studies/offpath/make_reference.py;",
        "# do not edit by hand.",
        "#",
        f"# Source: the seed text ({SEED}); the paper's plots are not digitized, so every entry is a number",
        "# written in the text. Tolerances: throughput/packet rates ±15% (network-limited peaks ±10%), latency ±20%,",
        "# 'n x' ratios ±15%, Table 3 arithmetic ±5%; ends of 'a-b%' ranges ±5 percentage points (wide ranges ±8);",
        "# 'similar' = change 0 ± 5 points; bottleneck/advice indicators exact (0/1 ± 0.5).",
        "# Assumptions (not in the text): Fig. 4 payloads 16 B-16 KiB (latency ranges over 16 B-4 KiB, '< 512 B'",
        "# throughput ranges over 16-256 B); Fig. 7 and Fig. 10 use 64 B requests; 'large' = 16 MiB in Fig. 8/9.",
        "# set = \"calibration\": fitted by `nicbench calibrate bluefield2`; \"validation\": never fitted.",
        "#",
        "# Seed numbers that are not entries (why):",
        *(f"#   - {s}" for s in SKIPPED),
    ]
    return render_references(header, entries, round_digits=6)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=HERE / "reference.toml")
    args = ap.parse_args()
    entries = build()
    args.out.write_text(render(entries))
    sets = Counter(e["set"] for e in entries)
    print(f"wrote {len(entries)} references to {args.out} " + ", ".join(f"{k}: {v}" for k, v in sorted(sets.items())))


if __name__ == "__main__":
    main()
