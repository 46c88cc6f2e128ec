"""`--backend dpdk` on connectx.install_rate: dpdk-test-flow-perf, its arguments and its report.

- The real output here (`fixtures/dpdk/flow-perf-net-null.txt`: DPDK 22.11's dpdk-test-flow-perf run
  by this backend on net_null0, arguments `--ingress --group=1 --ether --ipv4 --queue --mark
  --rules-count=1000 --rules-batch=1000 --cores=1 --deletion-rate`): the null PMD has no rte_flow, so
  flow-perf stops at the first rule; the parser returns that refusal with the device's reason and no rate.
- The success report: no published flow-perf output from ConnectX hardware was found (searched: DPDK
  mailing list, docs, GitHub issues). The report is written here from flow-perf's own printf formats
  (DPDK 22.11 app/test-flow-perf/main.c, `insert_flows`, `destroy_flows`, `dump_used_cpu_time`; the
  same strings are in the installed binary, checked below) with flow-perf's arithmetic (total
  "Latency" = rules / slowest core's time, "Throughput" = rules / mean core time): the parsed records
  must be the numbers printed (as `%f` prints them).
- A PAM'21 Fig. 5 style spec runs unchanged with `--backend dpdk`: records say backend = dpdk, the
  refusal is recorded (no rate), and points flow-perf cannot run are refused in one line first.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers import peer

from nicbench.backends.flow_perf import ACTIONS, flow_perf_args, parse_flow_perf
from nicbench.experiments import load_results

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "dpdk" / "flow-perf-net-null.txt"

# flow-perf's printf formats (DPDK 22.11 app/test-flow-perf/main.c), one per printed line.
CORE_RATE = ":: Port %d :: Core %d :: Rules %s rate -> %f K Rule/Sec\n"
CORE_INS_TIME = ":: Port %d :: Core %d :: The time for creating %d in rules %f seconds\n"
CORE_DEL_TIME = ":: Port %d :: Core %d :: The time for deleting %d rules is %f seconds\n"
FIRST = ":: First Flow Latency :: Port %d :: First flow installed in %f milliseconds\n"


def _totals(port: int, rules: int, times: list[float], what: str) -> str:
    """`dump_used_cpu_time`'s lines for one operation, computed as flow-perf does."""
    slowest, mean = max(times), sum(times) / len(times)
    verb, rate = (
        ("creating", "Total flows insertion rate") if what == "Insertion" else ("deleting", "Total deletion rate")
    )
    return (
        f":: [Latency | {what}] All Cores :: Port {port} :: {rate} -> {rules / slowest / 1000:f} K Rules/Sec\n"
        f":: [Latency | {what}] All Cores :: Port {port} :: The time for {verb} {rules} rules is {slowest:f} "
        "seconds\n"
        f":: [Throughput | {what}] All Cores :: Port {port} :: {rate} -> {rules / mean / 1000:f} K Rules/Sec\n"
        f":: [Throughput | {what}] All Cores :: Port {port} :: The average time for {verb} {rules} rules is "
        f"{mean:f} seconds\n"
    )


def test_the_null_device_refusal_is_parsed_as_a_refusal_without_rates():
    report = parse_flow_perf(FIXTURE.read_text())
    assert report["refused"] == {"op": "insert", "type": 1, "reason": "Function not implemented"}
    assert report["cores"] == [] and report["totals"] == [] and report["first_flow_ms"] == {}


def test_a_two_core_report_parses_into_the_printed_numbers():
    rules, ins, dele = 200_000, [0.4172, 0.3951], [0.2113, 0.2508]
    text = FIRST % (0, 0.081) + "".join(
        CORE_RATE % (0, c, "insertion", rules / 2 / t / 1000) + CORE_INS_TIME % (0, c, rules // 2, t)
        for c, t in enumerate(ins)
    )
    text += "".join(
        CORE_RATE % (0, c, "deletion", rules / 2 / t / 1000) + CORE_DEL_TIME % (0, c, rules // 2, t)
        for c, t in enumerate(dele)
    )
    text += "\nFlows:\n" + _totals(0, rules, ins, "Insertion") + _totals(0, rules, dele, "Deletion")
    report = parse_flow_perf(text)
    assert report["refused"] is None and report["first_flow_ms"] == {0: 0.081}
    printed = lambda x: float(f"{x:f}")  # noqa: E731 (what %f printed)
    assert report["cores"] == [
        {
            "port": 0,
            "core": 0,
            "op": "delete",
            "rate_krules_s": printed(rules / 2 / dele[0] / 1000),
            "rules": 100_000,
            "seconds": printed(dele[0]),
        },
        {
            "port": 0,
            "core": 0,
            "op": "insert",
            "rate_krules_s": printed(rules / 2 / ins[0] / 1000),
            "rules": 100_000,
            "seconds": printed(ins[0]),
        },
        {
            "port": 0,
            "core": 1,
            "op": "delete",
            "rate_krules_s": printed(rules / 2 / dele[1] / 1000),
            "rules": 100_000,
            "seconds": printed(dele[1]),
        },
        {
            "port": 0,
            "core": 1,
            "op": "insert",
            "rate_krules_s": printed(rules / 2 / ins[1] / 1000),
            "rules": 100_000,
            "seconds": printed(ins[1]),
        },
    ]
    ins_total, del_total = report["totals"][1], report["totals"][0]
    assert ins_total == {
        "port": 0,
        "op": "insert",
        "rules": rules,
        "latency_krules_s": printed(rules / 0.4172 / 1000),
        "latency_s": 0.4172,
        "throughput_krules_s": printed(rules / 0.40615 / 1000),
        "throughput_s": 0.40615,
    }
    assert del_total["latency_krules_s"] == printed(rules / 0.2508 / 1000) and del_total["throughput_s"] == 0.23105


def test_the_report_formats_are_the_installed_tools():
    """The formats the parser reads are in the installed flow-perf binary (so a DPDK that changed them fails here)."""
    binary = Path(peer("dpdk-test-flow-perf", "dpdk-dev")).read_bytes()
    for fmt in (
        CORE_RATE.replace("%s", "insertion"),
        CORE_RATE.replace("%s", "deletion"),
        CORE_INS_TIME,
        CORE_DEL_TIME,
        FIRST,
        "Total flows insertion rate -> %f K Rules/Sec",
        "Total deletion rate -> %f K Rules/Sec",
        "The average time for creating %d rules is %f seconds",
        "Flow can't be created %d message: %s",
    ):
        assert fmt.rstrip("\n").encode() in binary, fmt


def test_points_become_flow_perf_arguments():
    assert flow_perf_args(rules=65536, group=1, match="tunnel", actions=3, op="delete", cores=2) == [
        "--ingress",
        "--group=1",
        "--ether",
        "--ipv4",
        "--udp",
        "--vxlan",
        "--queue",
        "--mark",
        "--count",
        "--rules-count=65536",
        "--rules-batch=65536",
        "--cores=2",
        "--deletion-rate",
    ]
    assert flow_perf_args(rules=2, group=0, match="ipv6", actions=1, op="insert", cores=1)[:5] == [
        "--ingress",
        "--group=0",
        "--ether",
        "--ipv6",
        "--queue",
    ]
    assert len(set(ACTIONS)) == len(ACTIONS)


SPEC = """
[experiment]
name = "ins"
target = "connectx.install_rate"
repeat = 1
[params]
group = 1
op = "insert"
[sweep]
match = ["ipv4", "ipv6"]
rules = [2, 1000]
[[override]]
where = { match = "ipv6" }
set = { versus_match = "ipv4" }
"""


def test_an_install_rate_spec_runs_on_flow_perf_and_records_the_refusal(tmp_path):
    peer("dpdk-test-flow-perf", "dpdk-dev")
    spec = tmp_path / "ins.toml"
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
            "--results",
            str(tmp_path / "r"),
            "--jobs",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "the device refused flow creation (Function not implemented): no rate measured" in proc.stderr
    df = load_results(tmp_path / "r" / "ins--dpdk")
    assert set(df["backend"]) == {"dpdk"} and set(df["status"]) == {"ok"}
    m = df.pivot_table(index=["match", "rules"], columns="metric", values="value", dropna=False)
    assert len(m) == 4
    assert (m["dpdk_flow_rules_refused"] == 1).all() and (m["install_complete"] == 0).all()
    assert m["install_rate_krules_s"].isna().all() and m["rate_ratio"].isna().all()  # never a made-up rate
    assert (m.loc["ipv6", "dpdk_flow_versus_rules_refused"] == 1).all()


@pytest.mark.parametrize(
    "setting, says",
    [
        ("op=update", "measures insertion and deletion, not update"),
        ("actions=9", "at most 8 actions"),
        ("dpdk_flow_cores=64", "needs 65 CPUs"),
    ],
)
def test_points_flow_perf_cannot_run_are_refused_in_one_line(tmp_path, setting, says):
    spec = tmp_path / "ins.toml"
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
            setting,
            "--results",
            str(tmp_path / "r"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and says in proc.stderr, proc.stderr
