"""`nicbench run SPEC --backend dpdk`: dpdk-testpmd on DPDK's null PMD, and the parsers of its output.

- The parsers read testpmd's real output (a run of this backend on this machine, kept as
  `fixtures/dpdk/testpmd-net-null.txt`: DPDK 22.11, two net_null ports, one rejected `flow create`):
  the numbers they return are the ones printed there.
- They also read testpmd's output on ConnectX hardware, published (each fixture is the verbatim
  console text of its source):
  - `fixtures/dpdk/testpmd-mlx5-txonly.txt`, `testpmd-mlx5-rxonly.txt`: `show port stats 0` of
    dpdk-testpmd (DPDK 21.11) on an mlx5 port (devargs `mprq_en=1,txq_inline_mpw=128,...`; the same
    repository's `saturation-test.sh` shows `ethtool -i`: mlx5_core, firmware 28.42.1000, a
    ConnectX-7), txonly and rxonly at ~182-188 Mpps: GitHub sigitp-git/ubuntu-mlnx-dpdk,
    `working-tx-rx-optimized-testpmd-config.sh` (commit 1479a8be01e8b28ea87b4e564e46d026349812d2).
  - `fixtures/dpdk/testpmd-mellanox-cmdline-file.txt`: testpmd creating 500 flow rules from a
    `--cmdline-file` on two 10 Gbps ports whose MAC addresses are Mellanox's (OUI 7C:FE:90): DPDK's
    testpmd guide, doc/guides/testpmd_app_ug/testpmd_funcs.rst, "Command File Functions" (the guide
    elides rules #2 to #497 with "...", so 4 creations are printed; the command file's folder is
    left out of the two lines that name it, nothing else is changed).
- A connectx.forward spec runs unchanged with `--backend dpdk`: its records say `backend = dpdk`, the
  rules the null PMD cannot take are counted as refused (never as installed), and the forwarding
  counts are testpmd's own.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from helpers import peer

from nicbench.backends.dpdk import parse_flow_results, parse_forward_stats, parse_port_stats
from nicbench.experiments import load_results

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "dpdk"
FIXTURE = FIXTURES / "testpmd-net-null.txt"

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
    assert parse_flow_results(text) == {
        "created": 0,
        "refused": 1,
        "reason": "cause unspecified: Function not implemented: Function not implemented",
    }
    assert parse_forward_stats(text) == {
        "rx_packets": 38106752,
        "rx_dropped": 0,
        "rx_total": 38106752,
        "tx_packets": 38106752,
        "tx_dropped": 0,
        "tx_total": 38106752,
    }
    ports = parse_port_stats(text)
    assert sorted(ports) == [0, 1]
    assert ports[0]["rx_packets"] == 19420608 and ports[1]["tx_packets"] == 19051552
    assert all(p["rx_missed"] == 0 and p["rx_nombuf"] == 0 for p in ports.values())


def test_parsers_read_testpmd_output_published_from_connectx_hardware():
    tx = parse_port_stats((FIXTURES / "testpmd-mlx5-txonly.txt").read_text())
    assert tx == {
        0: {
            "rx_packets": 0,
            "rx_missed": 0,
            "rx_bytes": 0,
            "rx_errors": 0,
            "rx_nombuf": 0,
            "tx_packets": 272966271670,
            "tx_errors": 0,
            "tx_bytes": 17469841388288,
        }
    }
    rx = parse_port_stats((FIXTURES / "testpmd-mlx5-rxonly.txt").read_text())
    assert rx[0]["rx_packets"] == 264851673444 and rx[0]["rx_bytes"] == 16950507100416
    assert rx[0]["rx_missed"] == 0 and rx[0]["tx_packets"] == 0
    created = parse_flow_results((FIXTURES / "testpmd-mellanox-cmdline-file.txt").read_text())
    assert created == {"created": 4, "refused": 0, "reason": ""}


def test_a_forward_spec_runs_on_testpmd_over_null_ports(tmp_path):
    peer("dpdk-testpmd", "dpdk-dev")
    spec = tmp_path / "fwd.toml"
    spec.write_text(SPEC)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "nicbench.cli",
            "run",
            str(spec),
            "--backend",
            "dpdk",
            "--set",
            "dpdk_seconds=0.3",
            "--results",
            str(tmp_path / "r"),
            "--jobs",
            "1",
        ],
        capture_output=True,
        text=True,
    )
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
    spec.write_text(SPEC.replace("size = 1500", 'size = 1500\ntrace = "t.pcap"'))
    proc = subprocess.run(
        [sys.executable, "-m", "nicbench.cli", "run", str(spec), "--backend", "dpdk", "--results", str(tmp_path / "r")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "no rules_file, no trace" in proc.stderr, proc.stderr
