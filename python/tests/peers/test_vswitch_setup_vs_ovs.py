"""Flow set-up in nicbench's virtual OVS against this machine's real Open vSwitch 3.1.

The same N exact 5-tuple UDP rules and one packet per rule (every packet a new flow) go through a
private ovs-vswitchd (userspace datapath, dummy ports polled by one PMD thread:
`peers.ovs_peer.measure_setup`) and through `nicbench vswitch megaflows`. Compared:

- the upcalls: N in both (every packet misses once; nothing lost, no duplicates: the real OVS takes
  the packets one batch at a time, nicbench gets them one per 10 µs, slower than it sets them up);
- the set-up rate of one thread [upcalls/s]: the real OVS's from its own cycles per upcall on the
  PMD thread (`dpif-netdev/pmd-perf-show`, not the injection's wall-clock rate, which
  `netdev-dummy/receive` bounds), nicbench's from a trace offered faster than one handler thread
  sets flows up (packets 1 ns apart, a queue that holds them all): the flows it set up per second.

The ratio virtual / real is printed and must lie in RATE_BAND. The virtual rate is
1 / upcall_us of the default host profile (connectx5-25g), whose value was measured the same way
(scripts/measure_ovs_setup.py): the test fails when this machine's OVS no longer sets flows up at
that rate, or when the handler model's rate is not its thread's capacity.
"""

from __future__ import annotations

import pytest

from peers.ovs_peer import Ovs, exact_udp_rules, measure_setup, udp_flow_frames

pytestmark = pytest.mark.peer

N = 3000
# The set-up cost on this 2-core VM varies from run to run and from day to day: 6.4 µs per upcall
# when upcall_us was measured (2026-12-02), 10.7-15.8 µs on 2026-12-03 (virtual/real 1.66-2.47,
# a clean clone's CI 2.18). The fastest of MEASUREMENTS runs is compared, within a factor of 3.
RATE_BAND = (1 / 3, 3.0)
MEASUREMENTS = 3


def _pcap(path, frames: list[bytes], gap_ns: int) -> None:
    import struct

    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 1))  # nanosecond pcap, Ethernet
        for i, frame in enumerate(frames):
            ts = i * gap_ns
            f.write(struct.pack("<IIII", ts // 10**9, ts % 10**9, len(frame), len(frame)) + frame)


def _virtual(tmp_path, rules: str, frames: list[bytes], gap_ns: int) -> dict:
    from nicbench import vswitch

    (tmp_path / "rules.of").write_text(rules)
    pcap = tmp_path / f"t{gap_ns}.pcap"
    _pcap(pcap, frames, gap_ns)
    return vswitch.megaflows(
        tmp_path / "rules.of",
        pcap,
        in_port="p0",
        ports=[{"name": "p0", "ofport": 1, "dp_port": 1}, {"name": "p1", "ofport": 2, "dp_port": 2}],
        cache={"handler_threads": 1},  # the real OVS's upcalls all run on its one PMD thread
        overrides={"upcall_queue": 1e6},  # nothing lost: the real OVS lost none (asserted)
    )


def test_flow_set_up_rate_and_upcalls_equal_the_real_ovs(tmp_path):
    runs = []
    for _ in range(MEASUREMENTS):  # a fresh daemon each: one run's flow keys must not meet the next
        ovs = Ovs(pmd=True)
        try:
            runs.append(measure_setup(ovs, N))
        finally:
            ovs.stop()
    for run in runs:
        miss = run["miss_pass"]
        assert miss["packets"] == N and miss["lost_upcalls"] == 0 and miss["failed_upcalls"] == 0, miss
        assert run["hit_pass"]["upcalls"] == 0, "the second pass hits the flows the first set up"
        assert run["datapath_flows"] == N
    # Other work on the shared cores only slows the PMD thread (more cycles per upcall): its
    # capacity is the fastest of the runs.
    real = max(runs, key=lambda r: r["setup_per_s_one_thread"])
    miss = real["miss_pass"]
    rules, frames = exact_udp_rules(N, sport=real["sport"]), udp_flow_frames(N, real["sport"])

    paced = _virtual(tmp_path, rules, frames, 10_000)  # one packet per 10 µs: below the set-up capacity
    s = paced["flow_setup"]
    assert (paced["upcalls"], s["duplicate_upcalls"], s["lost_upcalls"], s["flows_set_up"]) == (N, 0, 0, N), s
    assert miss["upcalls"] == paced["upcalls"], (miss, paced["upcalls"])

    flood = _virtual(tmp_path, rules, frames, 1)  # faster than one thread sets flows up
    virtual_rate = flood["flow_setup"]["setup_per_s"]
    real_rate = real["setup_per_s_one_thread"]
    ratio = virtual_rate / real_rate
    print(
        f"upcalls: real {miss['upcalls']}, virtual {paced['upcalls']}; set-up rate of one thread: real "
        f"{real_rate:,.0f}/s ({real['us_per_upcall']:.2f} us/upcall, miss-hit {real['miss_minus_hit_us']:.2f} us; "
        f"injection {real['wall_upcalls_per_s']:,.0f}/s), virtual {virtual_rate:,.0f}/s "
        f"(upcall_us {flood['costs']['upcall_us']['value']}): virtual/real = {ratio:.2f}"
    )
    assert RATE_BAND[0] <= ratio <= RATE_BAND[1], ratio
    assert flood["flow_setup"]["handler_utilization"] > 0.9, flood["flow_setup"]
