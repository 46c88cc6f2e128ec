"""`nicbench run SPEC --backend dpdk`: dpdk-testpmd on DPDK's null PMD, and the parsers of its output.

- The parsers read testpmd's real output (a run of this backend on this machine, kept as
  `fixtures/dpdk/testpmd-net-null.txt`: DPDK 22.11, two net_null ports, one rejected `flow create`):
  the numbers they return are the ones printed there.
- A connectx.forward spec runs unchanged with `--backend dpdk`: its records say `backend = dpdk`, the
  rules the null PMD cannot take are counted as refused (never as installed), and the forwarding
  counts are testpmd's own.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers import peer

from nicbench.backends.dpdk import parse_flow_results, parse_forward_stats, parse_port_stats
from nicbench.experiments import load_results

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "dpdk" / "testpmd-net-null.txt"

SPEC = """
[experiment]
name = "fwd"
target = "connectx.forward"
repeat = 1
[params]
size = 1500
[sweep]
rules = [0, 50]
"""


def test_parsers_read_the_numbers_testpmd_printed():
    text = FIXTURE.read_text()
    assert parse_flow_results(text) == {"created": 0, "refused": 1,
                                        "reason": "cause unspecified: Function not implemented: Function not implemented"}
    assert parse_forward_stats(text) == {"rx_packets": 38106752, "rx_dropped": 0, "rx_total": 38106752,
                                         "tx_packets": 38106752, "tx_dropped": 0, "tx_total": 38106752}
    ports = parse_port_stats(text)
    assert sorted(ports) == [0, 1]
    assert ports[0]["rx_packets"] == 19420608 and ports[1]["tx_packets"] == 19051552
    assert all(p["rx_missed"] == 0 and p["rx_nombuf"] == 0 for p in ports.values())


def test_a_forward_spec_runs_on_testpmd_over_null_ports(tmp_path):
    peer("dpdk-testpmd", "dpdk-dev")
    spec = tmp_path / "fwd.toml"
    spec.write_text(SPEC)
    proc = subprocess.run([sys.executable, "-m", "nicbench.cli", "run", str(spec), "--backend", "dpdk", "--set",
                           "dpdk_seconds=0.3", "--results", str(tmp_path / "r"), "--jobs", "1"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    df = load_results(tmp_path / "r" / "fwd--dpdk")
    assert set(df["backend"]) == {"dpdk"} and set(df["status"]) == {"ok"}
    m = df[df["t"].isna()].pivot_table(index="rules", columns="metric", values="value")
    assert list(m["dpdk_flow_rules"]) == [0, 50]
    assert list(m["dpdk_flow_rules_created"]) == [0, 0]  # the null PMD has no rte_flow: nothing is installed
    assert list(m["dpdk_flow_rules_refused"]) == [0, 50]
    assert (m["rx_mpps"] > 0).all() and (m["dpdk_forward_s"] >= 0.3).all()


def test_points_the_dpdk_backend_cannot_run_are_refused(tmp_path):
    spec = tmp_path / "fwd.toml"
    spec.write_text(SPEC.replace('size = 1500', 'size = 1500\ntrace = "t.pcap"'))
    proc = subprocess.run([sys.executable, "-m", "nicbench.cli", "run", str(spec), "--backend", "dpdk", "--results",
                           str(tmp_path / "r")], capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "no rules_file, no trace" in proc.stderr, proc.stderr
