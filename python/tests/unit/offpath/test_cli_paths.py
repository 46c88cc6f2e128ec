"""`nicbench paths`: JSON keys, human output, exit code 2 on bad flows."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from helpers import forked_cli

from nicbench import offpath
from nicbench.cli import main

FLOWS = ["--flow", "client->soc READ 4KiB x 80%", "--flow", "host->soc WRITE 64KiB x 20%"]


def _invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def test_json_has_the_documented_keys():
    res = _invoke("paths", "--nic", "bluefield2", *FLOWS, "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert {
        "nic",
        "flows",
        "total_gbps",
        "total_mpps",
        "bottleneck",
        "bottleneck_utilization",
        "utilization",
        "advice",
    } <= set(doc)
    assert len(doc["flows"]) == 2
    for f in doc["flows"]:
        assert {"gbps", "mpps", "latency_us", "flow", "path", "verb", "payload_bytes"} <= set(f)
    assert doc["flows"][0]["flow"] == "client->soc READ 4KiB x 80%"
    assert doc["total_gbps"] == pytest.approx(sum(f["gbps"] for f in doc["flows"]))
    assert [a["id"] for a in doc["advice"]] == [a["id"] for a in offpath.predict("bluefield2", FLOWS[1::2])["advice"]]


def test_human_output_names_bottleneck_and_advice():
    res = _invoke("paths", "--flow", "client->soc WRITE 64B in 1536B")
    assert res.exit_code == 0, res.output
    assert "bottleneck: soc_dram" in res.output and "avoid_skewed_soc_writes" in res.output


def test_mix_default_follows_the_shares_and_the_option_overrides_it():
    # Shares given: one application's request mix; none: independent requesters.
    def mix(*args):
        res = _invoke("paths", *args, "--json")
        assert res.exit_code == 0, res.output
        return json.loads(res.output)["mix"]

    assert mix(*FLOWS) == "shares"
    assert mix("--flow", "client->host READ 64B", "--flow", "host->soc READ 64B") == "max_min"
    assert mix(*FLOWS, "--mix", "max_min") == "max_min"
    assert _invoke("paths", *FLOWS, "--mix", "fifo").exit_code == 2


def test_overrides_reach_the_model():
    def gbps(*extra):
        res = _invoke("paths", "--flow", "client->host READ 64KiB", "--json", *extra)
        assert res.exit_code == 0, res.output
        return json.loads(res.output)["total_gbps"]

    # Half the ports' usable rate (2 x 100 Gb/s) caps a 64 KiB READ that ran faster than 100 Gb/s.
    base = gbps()
    assert gbps("--set", "network_efficiency=0.5") <= 100.0 < base
    res = _invoke("paths", "--flow", "client->host READ 64B", "--set", "warp_factor=9")
    assert res.exit_code == 2 and "--set warp_factor: not a parameter of profile bluefield2" in res.output


def test_bad_flow_exits_2_with_one_line_naming_the_token():
    res = forked_cli("paths", "--flow", "client->soc READ 4KiB x 80%", "--flow", "host->sock WRITE 64KiB")
    assert res.returncode == 2
    assert res.stderr.startswith("nicbench: error:") and "'host->sock'" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


def test_missing_flow_is_a_usage_error():
    res = forked_cli("paths")
    assert res.returncode == 2 and "--flow" in res.stderr


def test_real_model_json():
    res = forked_cli("paths", "--nic", "bluefield2", *FLOWS, "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    # The README's example, as printed there (Gb/s, M req/s, µs, posting µs per flow).
    shown = [
        (round(f["gbps"], 2), round(f["mpps"], 4), round(f["latency_us"], 2), round(f["posting_latency_us"], 3))
        for f in doc["flows"]
    ]
    assert shown == [(45.03, 1.3742, 2.75, 0.43), (180.12, 0.3435, 7.79, 0.572)]
    assert doc["bottleneck"] == "pcie1_down"
    assert doc["utilization"]["pcie1_down"] == doc["bottleneck_utilization"] == 1.0
    assert [a["id"] for a in doc["advice"]] == ["bound_h2s_to_p_minus_n"]
    # One application's request mix: requests in the ratio of the shares; Gb/s = requests × payload.
    assert doc["flows"][0]["mpps"] / doc["flows"][1]["mpps"] == pytest.approx(0.8 / 0.2)
    for f in doc["flows"]:
        assert f["gbps"] == pytest.approx(f["mpps"] * f["payload_bytes"] * 8 / 1e3)
    assert doc["total_gbps"] == pytest.approx(sum(f["gbps"] for f in doc["flows"]))


def test_real_model_rnic_rejects_soc_paths():
    res = forked_cli("paths", "--nic", "connectx6-rnic", "--flow", "client->soc READ 64B")
    assert res.returncode == 2 and res.stderr.startswith("nicbench: error:")
    assert "client->soc" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    ok = forked_cli("paths", "--nic", "connectx6-rnic", "--flow", "client->host READ 64B", "--json")
    assert ok.returncode == 0, ok.stderr
    rnic = json.loads(ok.stdout)
    # Model output today (one endpoint: its pool is all of the cores, reported as nic_cores).
    assert (round(rnic["flows"][0]["mpps"], 2), rnic["bottleneck"]) == (92.3, "nic_cores")


def test_real_model_max_min_keeps_independent_clients_fast():
    # Seed §4: five client machines saturate ①; 24 host threads on ③ cost ① only a part of its rate,
    # as independent requesters (max_min, the default without shares), not half of it.
    alone = json.loads(forked_cli("paths", "--flow", "client->host READ 64B machines 5", "--json").stdout)
    both = json.loads(
        forked_cli(
            "paths", "--flow", "client->host READ 64B machines 5", "--flow", "host->soc READ 64B threads 24", "--json"
        ).stdout
    )
    assert both["mix"] == "max_min"
    drop = 1 - both["flows"][0]["mpps"] / alone["flows"][0]["mpps"]
    assert 0.0 < drop < 0.3, drop
