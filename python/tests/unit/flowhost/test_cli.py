"""`nicbench flowhost`: the CLI over the virtual Napatech + flow-meter host model."""

from __future__ import annotations

import json

from helpers import forked_cli


def test_json_reports_drops_below_eight_cores_and_the_cores_needed():
    seven = forked_cli("flowhost", "--cores", "7", "--duration", "200ms", "--cores-needed", "--json")
    assert seven.returncode == 0, seven.stderr
    out = json.loads(seven.stdout)
    # Offered is what the Poisson arrivals of 0.2 s sent: 100 Gb/s within 0.3%.
    assert out["processes"] == 7 and abs(out["offered_gbps"] / 100.0 - 1) < 0.003, out["offered_gbps"]
    # The study's conclusion (750 B at 100G): 7 cores drop, 8 are needed and enough.
    assert (out["drops"], out["cores_needed"]) == (1, 8)
    eight = json.loads(forked_cli("flowhost", "--cores", "8", "--duration", "200ms", "--json").stdout)
    assert eight["drops"] == 0


def test_smt_runs_two_processes_per_core_and_table_output():
    res = forked_cli("flowhost", "--cores", "4", "--smt", "--duration", "100ms", "--json")
    assert json.loads(res.stdout)["processes"] == 8
    table = forked_cli("flowhost", "--cores", "2", "--duration", "100ms")
    assert table.returncode == 0 and "cost per packet" in table.stdout


def test_bad_input_is_one_line_and_exit_2():
    for args in (["--rate", "5Mpps"], ["--flows", "many"], ["--host", "no-such-host"]):
        res = forked_cli("flowhost", *args)
        assert res.returncode == 2, (args, res.stdout)
        assert res.stderr.strip().startswith("nicbench: error:") and len(res.stderr.strip().splitlines()) == 1
