"""`nicbench simulate` / `nicbench calibrate` (in-process, on the fake engine)."""

from __future__ import annotations

import json

import click
import pytest
from click.testing import CliRunner

from nicbench.cli.calibrate import calibrate
from nicbench.cli.common import NicbenchGroup
from nicbench.cli.connectx import COMMANDS, parse_install_rate, sparkline


@pytest.fixture
def nicbench_cli():
    group = NicbenchGroup("nicbench")
    for command in (*COMMANDS, calibrate):
        group.add_command(command)
    return lambda *args: CliRunner().invoke(group, list(args))


def test_simulate_json_has_the_contract_fields(fake_native, nicbench_cli):
    r = nicbench_cli("simulate", "--nic", "connectx5", "--generated", "60000", "--gen",
                     "flows=10000,size=1500,rate=100Gbps", "--duration", "100ms", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    for key in ("rx_gbps", "rx_mpps", "tx_gbps", "loss_ratio", "latency_us", "queues", "timeline"):
        assert key in out
    assert set(out["latency_us"]) >= {"p1", "p25", "p50", "p75", "p99", "p999", "max"}
    assert out["loss_ratio"] > 0.9 and len(out["timeline"]) == 10


def test_simulate_human_output_with_install_and_sparkline(fake_native, nicbench_cli):
    r = nicbench_cli("simulate", "--install-batch", "10k", "--install-start", "50ms", "--duration", "1s",
                     "--bin", "10ms")
    assert r.exit_code == 0, r.output
    assert "virtual connectx5" in r.output and "rule updates" in r.output
    assert "rx Gbps over time" in r.output and "█" in r.output and "batch of 10000 starts" in r.output


def test_simulate_rate_install_and_overrides(fake_native, nicbench_cli):
    r = nicbench_cli("simulate", "--install-rate", "10k/s", "--install-core", "same", "--duration", "50ms",
                     "--set", "root_insert_us=5", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["rx_gbps"] > 80  # 10k/s × 5 µs × 3 = 15% in the fake


@pytest.mark.parametrize("args, needle", [
    (("--rules", "x.flow", "--generated", "5"), "either --rules"),
    (("--install-rate", "fast"), "--install-rate"),
    (("--gen", "flows=many"), "flows"),
    (("--set", "x"), "NAME=VALUE"),
    (("--duration", "soon"), "duration"),
])
def test_simulate_bad_options_exit_2_with_one_line(fake_native, nicbench_cli, args, needle):
    r = nicbench_cli("simulate", *args)
    assert r.exit_code == 2 and needle in r.output and "Traceback" not in r.output


def test_simulate_without_engine_is_a_clear_error(nicbench_cli, monkeypatch):
    import nicbench._native as native

    monkeypatch.delattr(native, "vnic_simulate", raising=False)
    r = nicbench_cli("simulate", "--duration", "10ms")
    assert r.exit_code == 2 and "make develop" in r.output


def test_calibrate_command_prints_parameters_and_errors(fake_native, nicbench_cli, tmp_path):
    from test_calibrate import _mini_study

    from conftest import fake_engine

    study = _mini_study(tmp_path, fake_native)
    profile = fake_engine.write_profile(tmp_path / "p", "fakecx", knee=0.7)
    r = nicbench_cli("calibrate", str(profile), "--study", str(study.dir), "--jobs", "1", "--sweeps", "1",
                     "--dry-run")
    assert r.exit_code == 0, r.output
    assert "root_table_knee_occupancy" in r.output and "validation" in r.output and "NOT written" in r.output
    assert "value = 0.7" in profile.read_text(), "--dry-run leaves the profile alone"
    j = nicbench_cli("calibrate", str(profile), "--study", str(study.dir), "--jobs", "1", "--sweeps", "1",
                     "--no-validate", "--json")
    assert j.exit_code == 0, j.output
    out = json.loads(j.output)
    assert out["written"] and set(out["summary"]) == {"calibration"}


def test_sparkline_and_rate_parsing():
    assert sparkline([0, 50, 100], top=100) == " ▅█"
    assert len(sparkline(list(range(1000)), width=40)) == 40
    assert parse_install_rate("100k/s") == 100_000 and parse_install_rate("2500") == 2500
