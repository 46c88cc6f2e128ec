"""`nicbench flows`: output formats, symmetric dispatch to workers, summary, and bad input.

Most commands run in-process (click's CliRunner, same code path as the entry point) to keep this
file fast; the worker test and the truncated-pcap test go through the real `python -m nicbench.cli`.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest
from click.testing import CliRunner
from flows_corpus import T0, scenario_tcp, scenario_udp, tcp_session, udp, write_pcap
from helpers import run_cli

from nicbench.cli import main
from nicbench.flows import RECORD_COLUMNS, load_records, meter


def invoke(*args: str):
    """Run `nicbench ARGS` in-process; the result has exit_code, stdout and stderr."""
    return CliRunner().invoke(main, [str(a) for a in args])


def bidirectional_pcap(path, flows: int = 256):
    """`flows` UDP flows with 3 packets one way and 2 back, plus 32 TCP sessions."""
    pkts = []
    for i in range(flows):
        a, b = f"10.1.{i // 250}.{i % 250 + 1}", f"172.16.{i % 7}.{i % 200 + 1}"
        sport, dport = 10000 + i, 20000 + (i * 7) % 1000
        for j in range(3):
            pkts.append((T0 + i * 1e-3 + j * 1e-4, udp(a, sport, b, dport, 40 + j)))
        for j in range(2):
            pkts.append((T0 + i * 1e-3 + 5e-5 + j * 1e-4, udp(b, dport, a, sport, 60)))
    for i in range(32):
        pkts += tcp_session(f"10.9.0.{i + 1}", 30000 + i, "10.9.1.1", 80, T0 + 0.5 + i * 0.01)
    return write_pcap(path, sorted(pkts, key=lambda p: p[0]))


def test_both_directions_land_on_the_same_worker(tmp_path):
    pcap = bidirectional_pcap(tmp_path / "bidir.pcap")
    out = tmp_path / "bidir.csv"
    proc = run_cli("flows", str(pcap), "--workers", "4", "-o", str(out), "--json")
    assert proc.returncode == 0, proc.stderr
    stats = json.loads(proc.stdout)
    records = load_records(out)
    # One record per flow, each holding both directions: no direction was metered on another worker.
    assert len(records) == stats["records"] == stats["flows"] == 256 + 32
    assert all(r["SrcPkts"] > 0 and r["DstPkts"] > 0 for r in records)
    assert len({(r["Proto"], r["SrcAddr"], r["Sport"], r["DstAddr"], r["Dport"]) for r in records}) == len(records)
    workers = stats["workers"]
    assert len(workers) == 4 and all(w["flows"] > 0 for w in workers)
    by_worker = Counter(r["Worker"] for r in records)
    assert [by_worker[i] for i in range(4)] == [w["flows"] for w in workers]
    assert sum(w["packets"] for w in workers) == stats["packets"] == 256 * 5 + 32 * 11
    assert stats["imbalance"] == pytest.approx(max(w["packets"] for w in workers) / (stats["packets"] / 4), rel=1e-6)


def test_formats_hold_the_same_records(tmp_path):
    pcap = write_pcap(tmp_path / "mix.pcap", sorted(scenario_tcp() + scenario_udp(), key=lambda p: p[0]))
    loaded = {}
    for suffix in ("csv", "jsonl", "parquet"):
        out = tmp_path / f"mix.{suffix}"
        res = invoke("flows", pcap, "-o", out)
        assert res.exit_code == 0, res.output
        loaded[suffix] = sorted(load_records(out), key=lambda r: (r["StartTime"], r["SrcAddr"]))
    assert list(loaded["csv"][0]) == list(RECORD_COLUMNS)
    assert loaded["csv"] == loaded["jsonl"] == loaded["parquet"]
    assert len(loaded["csv"]) == 7
    # --format wins over the suffix.
    out = tmp_path / "records.out"
    assert invoke("flows", pcap, "-o", out, "--format", "jsonl").exit_code == 0
    assert len(load_records(out, "jsonl")) == 7


def test_summary_table_and_python_api(tmp_path):
    pcap = bidirectional_pcap(tmp_path / "b.pcap", flows=64)
    res = invoke("flows", pcap, "--workers", "2")
    assert res.exit_code == 0, res.output
    for word in ("packets", "flows", "evicted", "imbalance", "Mpps", "workers"):
        assert word in res.stdout
    stats = meter(pcap, workers=2, idle="10s", active="off", max_flows="1k")
    assert stats["packets"] == 64 * 5 + 32 * 11 and stats["flows"] == 96
    assert stats["config"]["udp_idle_ns"] == stats["config"]["tcp_idle_ns"] == 10_000_000_000
    assert stats["config"]["active_ns"] is None and stats["config"]["max_flows"] == 1000


def test_max_flows_evictions_are_counted_not_lost(tmp_path):
    pcap = bidirectional_pcap(tmp_path / "b.pcap", flows=200)
    out = tmp_path / "e.csv"
    stats = meter(pcap, max_flows=16, out=out)
    records = load_records(out)
    assert stats["evicted"] > 0
    assert sum(r["EndReason"] == "evicted" for r in records) == stats["evicted"]
    assert sum(r["TotPkts"] for r in records) == stats["packets"]


def test_ipfix_to_a_port_nobody_listens_on_exports_and_says_so(tmp_path):
    """UDP export carries on when the collector's host answers ICMP port unreachable (the next send
    reports it as ECONNREFUSED): every message is sent, the records are all written, a note asks
    whether a collector listens."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:  # a port that is closed again at once
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    pcap = bidirectional_pcap(tmp_path / "b.pcap", flows=600)  # ~1,300 records: several messages
    out = tmp_path / "r.csv"
    res = invoke("flows", pcap, "-o", out, "--ipfix", f"127.0.0.1:{port}")
    assert res.exit_code == 0, res.output
    stats = meter(pcap, ipfix=f"127.0.0.1:{port}")
    assert stats["ipfix_messages_sent"] > 2 and 0 < stats["ipfix_messages_refused"] < stats["ipfix_messages_sent"]
    assert "is a collector listening there?" in res.stderr
    assert sum(r["TotPkts"] for r in load_records(out)) == 600 * 5 + 32 * 11


def test_missing_file(tmp_path):
    res = invoke("flows", tmp_path / "nope.pcap", "-o", tmp_path / "x.csv")
    assert res.exit_code == 2
    assert res.stderr.startswith("nicbench: error:") and "nope.pcap" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "x.csv").exists()


def test_truncated_pcap_is_an_error_naming_the_capture_with_no_summary_and_no_file(tmp_path):
    """A capture that cannot be read to its end is not a result: one error line naming the capture,
    the packet and its byte offset; no summary of what came before, no record file (issue 38)."""
    pkts = scenario_udp()
    full = write_pcap(tmp_path / "full.pcap", pkts).read_bytes()
    cut = tmp_path / "cut.pcap"
    cut.write_bytes(full[:-10])  # the last record loses its tail
    out = tmp_path / "cut.csv"
    proc = run_cli("flows", str(cut), "-o", str(out))
    assert proc.returncode == 2
    assert proc.stdout == ""
    [error] = proc.stderr.splitlines()
    assert error.startswith(f"nicbench: error: {cut}: packet {len(pkts) - 1} at byte offset "), error
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cut.pcap", "full.pcap"]


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--idle", "soon"], "idle"),
        (["--active", "-3s"], "active"),
        (["--max-flows", "lots"], "count"),
        (["-o", "flows.txt"], "format"),
        (["--duration", "5s"], "live"),
        (["--ipfix", "no-port-here"], "no-port-here"),
    ],
)
def test_bad_options(tmp_path, args, needle):
    pcap = write_pcap(tmp_path / "u.pcap", scenario_udp())
    args = [a if a != "flows.txt" else str(tmp_path / a) for a in args]
    res = invoke("flows", pcap, *args)
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith("nicbench: error:") and needle in res.stderr, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


def test_no_input_or_both(tmp_path):
    assert invoke("flows").exit_code == 2
    pcap = write_pcap(tmp_path / "u.pcap", scenario_udp())
    assert invoke("flows", pcap, "--live", "lo").exit_code == 2
