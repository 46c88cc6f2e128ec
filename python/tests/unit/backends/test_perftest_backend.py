"""`--backend perftest` on offpath.single: perftest's command lines, its reports parsed, its refusals.

This machine has no RDMA device, so the parsers are tested on published perftest reports
(`fixtures/perftest/`, each file names its source at the top): ib_read_bw on a mlx5 ConnectX
(openucx/ucx#8852), ib_send_bw on mlx5_0 (linux-rdma/perftest#65), ib_write_bw with a post list in
Gb/s (linux-rdma/perftest#273) and ib_read_lat between two ConnectX-3 (mlx4_0). The parsed rows must
be the numbers printed there. Without an RDMA device, a perftest spec is refused in one line before
anything starts.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from nicbench.backends import perftest
from nicbench.backends.perftest import PerftestBackend, bw_gbps, parse_perftest, perftest_args, rdma_devices

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "perftest"


def test_read_bw_on_a_connectx_parses_into_the_printed_rows():
    rows = parse_perftest((FIXTURES / "read-bw-mlx5-ucx-8852.txt").read_text())
    assert [r["#bytes"] for r in rows] == [2, 4, 8, 16, 32, 64, 128]
    assert rows[5] == {
        "#bytes": 64,
        "#iterations": 1000,
        "BW peak[MB/sec]": 155.40,
        "BW average[MB/sec]": 155.39,
        "MsgRate[Mpps]": 2.545853,
    }
    assert [r["MsgRate[Mpps]"] for r in rows] == [2.450225, 2.546339, 2.556366, 2.552526, 2.550328, 2.545853, 2.539960]


def test_mb_per_s_is_mebibytes_as_the_message_rate_says():
    """Independent check of the unit: each row's MsgRate x size must give its BW average in Gb/s."""
    for row in parse_perftest((FIXTURES / "read-bw-mlx5-ucx-8852.txt").read_text()):
        from_rate = row["MsgRate[Mpps]"] * row["#bytes"] * 8 / 1e3
        assert bw_gbps(row) == pytest.approx(from_rate, rel=0.02), row


def test_send_bw_and_a_post_list_run_in_gbits():
    send = parse_perftest((FIXTURES / "send-bw-mlx5-perftest-65.txt").read_text())
    assert send == [
        {
            "#bytes": 1024,
            "#iterations": 1000,
            "BW peak[MB/sec]": 0.0,
            "BW average[MB/sec]": 5544.28,
            "MsgRate[Mpps]": 5.677340,
        }
    ]
    write = parse_perftest((FIXTURES / "write-bw-postlist-perftest-273.txt").read_text())
    assert write == [
        {
            "#bytes": 8,
            "#iterations": 224958464,
            "BW peak[Gb/sec]": 0.0,
            "BW average[Gb/sec]": 0.48,
            "MsgRate[Mpps]": 7.498617,
        }
    ]


def test_read_lat_on_connectx3_skips_the_cpu_warning_and_keeps_every_column():
    rows = parse_perftest((FIXTURES / "read-lat-mlx4-connectx3.txt").read_text())
    assert rows == [
        {
            "#bytes": 2,
            "#iterations": 1000,
            "t_min[usec]": 1.76,
            "t_max[usec]": 6.12,
            "t_typical[usec]": 1.79,
            "t_avg[usec]": 1.80,
            "t_stdev[usec]": 0.06,
            "99% percentile[usec]": 1.88,
            "99.9% percentile[usec]": 6.12,
        }
    ]


def test_a_point_becomes_perftest_arguments():
    p = {
        "payload": 4096,
        "threads": 8,
        "doorbell_batch": 16,
        "perftest_inline": 0,
        "perftest_seconds": 5.0,
        "perftest_iterations": 10000,
        "perftest_port": 18515,
    }
    assert perftest_args(p, "bw", "mlx5_0") == [
        "-d",
        "mlx5_0",
        "-s",
        "4096",
        "-F",
        "-p",
        "18515",
        "-q",
        "8",
        "-D",
        "5",
        "--report_gbits",
        "--post_list",
        "16",
    ]
    assert perftest_args({**p, "perftest_inline": 64, "threads": None}, "lat", "mlx5_1") == [
        "-d",
        "mlx5_1",
        "-s",
        "4096",
        "-F",
        "-p",
        "18515",
        "-I",
        "64",
        "-n",
        "10000",
    ]


def test_refusals_name_the_reason(tmp_path):
    b = PerftestBackend()
    assert "machines must be 1" in b.why_not("offpath.single", {"machines": 4})
    assert "offered must be none" in b.why_not("offpath.single", {"offered": 1e6})
    assert "offpath.single points, not offpath.mix" in b.why_not("offpath.mix", {})
    assert rdma_devices(tmp_path / "none") == []
    (tmp_path / "ib" / "mlx5_0").mkdir(parents=True)
    assert rdma_devices(tmp_path / "ib") == ["mlx5_0"]


class _Ctx:
    def __init__(self):
        self.rows = {}

    def record(self, metric, value, unit=None, t=None):
        self.rows[metric] = value


def test_a_point_is_answered_with_the_printed_numbers(monkeypatch):
    """The run path on published outputs (the tools stubbed): bw from perftest#65, lat from the ConnectX-3 page."""
    texts = {
        "ib_send_bw": (FIXTURES / "send-bw-mlx5-perftest-65.txt").read_text(),
        "ib_send_lat": (FIXTURES / "read-lat-mlx4-connectx3.txt").read_text(),
    }
    calls = []
    monkeypatch.setattr(perftest, "_run_pair", lambda tool, args, server: calls.append((tool, server)) or texts[tool])
    monkeypatch.setattr(perftest, "rdma_devices", lambda root=None: ["mlx5_0"])
    from nicbench.experiments.targets import get_target

    target = get_target("offpath.single")
    p = {
        "verb": "SEND",
        "payload": 1024,
        "threads": None,
        "doorbell_batch": 1,
        "perftest_device": "",
        "perftest_server": "10.0.0.2",
        "perftest_inline": 0,
        "perftest_seconds": 5.0,
        "perftest_iterations": 1000,
        "perftest_port": 18515,
    }
    ctx = _Ctx()
    out = PerftestBackend().run(target, p, ctx)
    assert calls == [("ib_send_bw", "10.0.0.2"), ("ib_send_lat", "10.0.0.2")]
    assert out == {"gbps": pytest.approx(5544.28 * 1048576 * 8 / 1e9), "mpps": 5.677340, "latency_us": 1.80}
    assert ctx.rows["perftest_lat_typical_us"] == 1.79 and ctx.rows["perftest_lat_p999_us"] == 6.12


SPEC = """
[experiment]
name = "lat"
target = "offpath.single"
repeat = 1
[params]
verb = "WRITE"
threads = 1
machines = 1
[sweep]
payload = [64, 4096]
"""


@pytest.mark.skipif(bool(rdma_devices()), reason="this test is about a machine without an RDMA device")
def test_without_an_rdma_device_a_spec_is_refused_in_one_line(tmp_path):
    spec = tmp_path / "lat.toml"
    spec.write_text(SPEC)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "nicbench.cli",
            "run",
            str(spec),
            "--backend",
            "perftest",
            "--results",
            str(tmp_path / "r"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "no RDMA device (/sys/class/infiniband is empty or missing)" in proc.stderr
    assert not (tmp_path / "r" / "lat--perftest").exists()  # refused before anything started
