"""`nicbench pvp`: the real entry point, its JSON and its one-line errors (exit code 2)."""

from __future__ import annotations

import json

import pytest
from helpers import run_cli


def test_json_reports_rate_offloads_and_the_limiting_stage():
    out = run_cli("pvp", "--nic", "agilio-cx-25g", "--flows", "64k", "--size", "64", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["flows"] == 64_000 and doc["megaflows_offloaded"] == 128_000
    assert doc["bottleneck"] == "nic" and 0 < doc["mpps"] < doc["offered_mpps"]
    assert doc["host_cores_busy"] == 0.0


def test_megaflows_file_and_table_output(tmp_path):
    counts = tmp_path / "counts.json"
    counts.write_text(
        json.dumps(
            {
                "masks": [
                    {"ingress": "uplink", "megaflows": 1000, "offloaded": 1000},
                    {"ingress": "vf", "megaflows": 1000, "offloaded": 0},
                ]
            }
        )
    )
    out = run_cli("pvp", "--flows", "1000", "--megaflows", str(counts))
    assert out.returncode == 0, out.stderr
    assert "megaflows in software" in out.stdout and "limited by:" in out.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (("--flows", "0"), "'--flows': expected a count such as 10000, 10k or 1M from 1 to 268,435,456, found '0'"),
        (("--flows", "12q"), "'--flows': expected a count"),
        (("--size", "32"), "'--size': expected a size such as 1500B or 64KiB from 64B to 9,018B, found '32'"),
        (("--nic", "connectx5"), "has no OVS offload"),
        (("--datapath", "ovs"), "Invalid value for '--datapath'"),
        (("--set", "nope=1"), "nope"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, message):
    out = run_cli("pvp", *args)
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("nicbench: error:") and message in lines[0], out.stderr


def test_bad_megaflows_file_names_file_line_and_column(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"masks": [\n')
    out = run_cli("pvp", "--megaflows", str(bad))
    assert out.returncode == 2 and f"{bad}:2:1: not JSON" in out.stderr
