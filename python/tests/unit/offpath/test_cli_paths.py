"""`nicbench paths`: JSON keys, human output, exit code 2 on bad flows."""

from __future__ import annotations

import json

from click.testing import CliRunner
from helpers import run_cli

from nicbench.cli import main

FLOWS = ["--flow", "client->soc READ 4KiB x 80%", "--flow", "host->soc WRITE 64KiB x 20%"]


def _invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def test_json_has_the_documented_keys(fake_model):
    res = _invoke("paths", "--nic", "bluefield2", *FLOWS, "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert {"nic", "flows", "total_gbps", "total_mpps", "bottleneck", "bottleneck_utilization", "utilization",
            "advice"} <= set(doc)
    assert len(doc["flows"]) == 2
    for f in doc["flows"]:
        assert {"gbps", "mpps", "latency_us", "flow", "path", "verb", "payload_bytes"} <= set(f)
    assert doc["flows"][0]["flow"] == "client->soc READ 4KiB x 80%"
    assert doc["total_gbps"] == sum(f["gbps"] for f in doc["flows"])
    assert isinstance(doc["advice"], list)


def test_human_output_names_bottleneck_and_advice(fake_model):
    res = _invoke("paths", "--flow", "client->soc WRITE 64B in 1536B")
    assert res.exit_code == 0, res.output
    assert "bottleneck:" in res.output and "avoid_skewed_soc_writes" in res.output


def test_overrides_reach_the_model(fake_model):
    res = _invoke("paths", "--flow", "client->host READ 64B", "--set", "nic_core_mpps=100", "--json")
    assert res.exit_code == 0, res.output
    assert fake_model.CALLS[-1]["overrides"] == {"nic_core_mpps": 100.0}


def test_bad_flow_exits_2_with_one_line_naming_the_token():
    res = run_cli("paths", "--flow", "client->soc READ 4KiB x 80%", "--flow", "host->sock WRITE 64KiB")
    assert res.returncode == 2
    assert res.stderr.startswith("nicbench: error:") and "'host->sock'" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


def test_missing_flow_is_a_usage_error():
    res = run_cli("paths")
    assert res.returncode == 2 and "--flow" in res.stderr


def test_real_model_json(real_model):
    res = run_cli("paths", "--nic", "bluefield2", *FLOWS, "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["bottleneck"] and doc["total_gbps"] > 0
    assert all(f["gbps"] > 0 and f["latency_us"] > 0 for f in doc["flows"])


def test_real_model_rnic_rejects_soc_paths(real_model):
    res = run_cli("paths", "--nic", "connectx6-rnic", "--flow", "client->soc READ 64B")
    assert res.returncode == 2 and res.stderr.startswith("nicbench: error:")
