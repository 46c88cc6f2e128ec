"""`nicbench simulate` / `nicbench calibrate` (in-process, on the native model)."""

from __future__ import annotations

import json

import jsonschema
import pytest
from click.testing import CliRunner

from nicbench import connectx
from nicbench.cli.calibrate import calibrate
from nicbench.cli.common import NicbenchGroup
from nicbench.cli.connectx import COMMANDS, parse_install_rate, sparkline


@pytest.fixture
def nicbench_cli():
    group = NicbenchGroup("nicbench")
    for command in (*COMMANDS, calibrate):
        group.add_command(command)
    return lambda *args: CliRunner().invoke(group, list(args))


def test_simulate_json_has_the_contract_fields(nicbench_cli):
    r = nicbench_cli("simulate", "--nic", "connectx5", "--generated", "60000", "--gen",
                     "flows=10000,size=1500,rate=100Gbps", "--duration", "20ms", "--bin", "2ms", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    jsonschema.validate(out, connectx.contract_schema("result"))
    assert set(out["latency_us"]) >= {"p1", "p25", "p50", "p75", "p99", "p999", "max"}
    # 60,000 rules fill Table 0 past its knee (PAM'21 Fig. 2a): forwarding collapses.
    assert out["loss_ratio"] > 0.9 and len(out["timeline"]) == 10
    assert out["model"]["root_table_occupancy"] == pytest.approx(60000 / 65536)


def test_simulate_human_output_with_install_and_sparkline(nicbench_cli):
    r = nicbench_cli("simulate", "--install-batch", "1k", "--install-start", "20ms", "--duration", "200ms",
                     "--bin", "10ms")
    assert r.exit_code == 0, r.output
    assert "virtual connectx5" in r.output and "rule updates" in r.output
    assert "rx Gbps over time" in r.output and "█" in r.output and "batch of 1000" in r.output


def test_simulate_rate_install_and_overrides(nicbench_cli):
    def rx(*extra):
        r = nicbench_cli("simulate", "--install-rate", "10k/s", "--install-core", "same", "--duration", "20ms",
                         "--json", *extra)
        assert r.exit_code == 0, r.output
        return json.loads(r.output)["rx_gbps"]

    # A same-core installer takes core time from forwarding; 10x costlier root inserts take 10x more.
    cheap, dear = rx("--set", "root_insert_ipv4_us=1"), rx("--set", "root_insert_ipv4_us=10")
    assert cheap > dear


@pytest.mark.parametrize("args, needle", [
    (("--rules", "x.flow", "--generated", "5"), "either --rules"),
    (("--install-rate", "fast"), "--install-rate"),
    (("--gen", "flows=many"), "flows"),
    (("--set", "x"), "NAME=VALUE"),
    (("--duration", "soon"), "duration"),
])
def test_simulate_bad_options_exit_2_with_one_line(nicbench_cli, args, needle):
    r = nicbench_cli("simulate", *args)
    assert r.exit_code == 2 and needle in r.output and "Traceback" not in r.output


def test_calibrate_command_prints_parameters_and_errors(nicbench_cli, tmp_path):
    from test_calibrate import mini_study, start_profile

    study = mini_study(tmp_path)
    profile = start_profile(tmp_path / "p")
    args = ("calibrate", str(profile), "--study", str(study.dir), "--jobs", "1", "--sweeps", "1",
            "--param", "fixed_latency_ns")
    before = profile.read_text()
    r = nicbench_cli(*args, "--dry-run")
    assert r.exit_code == 0, r.output
    assert "fixed_latency_ns" in r.output and "validation" in r.output and "NOT written" in r.output
    assert profile.read_text() == before, "--dry-run leaves the profile alone"
    j = nicbench_cli(*args, "--no-validate", "--json")
    assert j.exit_code == 0, j.output
    out = json.loads(j.output)
    assert out["written"] and set(out["summary"]) == {"calibration"}
    assert profile.read_text() != before


def test_sparkline_and_rate_parsing():
    assert sparkline([0, 50, 100], top=100) == " ▅█"
    assert len(sparkline(list(range(1000)), width=40)) == 40
    assert parse_install_rate("100k/s") == 100_000 and parse_install_rate("2500") == 2500
