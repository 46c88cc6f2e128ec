"""Bad arguments and bad input: exit code 2 and one line on stderr, never a traceback."""

import pytest


def assert_one_line_error(proc, *needles):
    assert proc.returncode == 2, proc.stderr
    lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
    assert "Traceback" not in proc.stderr
    joined = " ".join(lines).lower()
    for needle in needles:
        assert needle.lower() in joined, proc.stderr


def test_gen_bad_rate(cli, tmp_path):
    proc = cli("gen", "--rate", "fast", "-o", str(tmp_path / "x.pcap"))
    assert_one_line_error(proc, "rate")
    assert len(proc.stderr.strip().splitlines()) == 1


def test_gen_size_too_small_for_headers(cli, tmp_path):
    proc = cli(
        "gen",
        "--size",
        "64",
        "--ipv6",
        "--proto",
        "tcp",
        "--vxlan",
        "42",
        "--packets",
        "10",
        "-o",
        str(tmp_path / "x.pcap"),
    )
    assert_one_line_error(proc, "64")
    assert len(proc.stderr.strip().splitlines()) == 1


def test_gen_unknown_option(cli, tmp_path):
    proc = cli("gen", "--bogus", "-o", str(tmp_path / "x.pcap"))
    assert proc.returncode == 2
    assert "bogus" in proc.stderr


def test_gen_unwritable_output(cli):
    proc = cli("gen", "--packets", "10", "-o", "/nonexistent-dir/x.pcap")
    assert_one_line_error(proc, "/nonexistent-dir/x.pcap")


def test_pcap_info_missing_file(cli):
    proc = cli("pcap", "info", "/no/such/file.pcap")
    assert_one_line_error(proc, "/no/such/file.pcap")
    assert len(proc.stderr.strip().splitlines()) == 1


def test_pcap_info_not_a_pcap(cli, tmp_path):
    bogus = tmp_path / "bogus.pcap"
    bogus.write_bytes(b"this is not a capture file at all" * 4)
    proc = cli("pcap", "info", str(bogus))
    assert_one_line_error(proc, "magic")


def test_rss_bad_key(cli, small_trace):
    proc = cli("rss", str(small_trace), "--queues", "4", "--key", "abcd")
    assert_one_line_error(proc, "40 or 52")


@pytest.mark.parametrize("queues", ["0", "-3"])
def test_rss_bad_queue_count(cli, small_trace, queues):
    proc = cli("rss", str(small_trace), "--queues", queues)
    assert proc.returncode == 2


@pytest.mark.parametrize(
    "args, needle",
    [
        (["calibrate", "--base", "connectx5", "-o", "x.toml"], "--measurements"),
        (["calibrate", "--base", "connectx5", "--measurements", "/no/such.csv", "-o", "x.toml"], "/no/such.csv"),
        (["calibrate", "--base", "connectx5", "--measurements", "README.md", "-o", "x.toml", "--set", "a=b"], "--set"),
        (["calibrate", "--base", "connectx5", "--measurements", "README.md", "-o", "x.toml"], "neither a tidy record"),
        (["calibrate", "--base", "nosuchnic", "--measurements", "README.md", "-o", "x.toml"], "nosuchnic"),
        (["calibrate"], "give one nic profile"),
    ],
)
def test_fewshot_calibrate_bad_input(cli, args, needle):
    proc = cli(*args)
    assert_one_line_error(proc, needle)
    assert len(proc.stderr.strip().splitlines()) == 1


def test_flowhost_local_host_before_it_was_measured(tmp_path):
    """The README's `nicbench flowhost --host flowmeter-local` before `nicbench calibrate flowmeter-local`:
    the error says to run the calibration, and where it writes the profile."""
    import os
    import shutil
    import subprocess
    import sys

    from helpers import REPO

    for name in ("napatech-nt100", "argus-host"):
        shutil.copy(REPO / "profiles" / f"{name}.toml", tmp_path)
    env = {**os.environ, "NICBENCH_PROFILES": str(tmp_path)}
    run = [sys.executable, "-m", "nicbench.cli", "flowhost", "--cores", "1", "--duration", "10ms"]
    proc = subprocess.run([*run, "--host", "flowmeter-local"], capture_output=True, text=True, env=env)
    assert_one_line_error(
        proc,
        "--host flowmeter-local: not measured on this machine yet: run 'nicbench calibrate flowmeter-local' first",
        str(tmp_path / "flowmeter-local.toml"),
    )
    proc = subprocess.run([*run, "--host", "argus-host"], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr


def test_rules_check_json_error_has_error_and_exit_code(cli, tmp_path):
    """Under --json a bad rule file gives the report with its errors AND the README's
    {"error": ..., "exit_code": 2} keys, so a script tests every command's output the same way."""
    import json

    bad = tmp_path / "bad.flow"
    bad.write_text(
        "flow create 0 ingress pattern eth / end actions dropp / end\n"
        "flow create 0 ingress pattern eth / ipv5 / end actions drop / end\n"
    )
    proc = cli("rules", "check", str(bad), "--keep-going", "--json")
    assert proc.returncode == 2
    out = json.loads(proc.stdout)
    assert out["exit_code"] == 2 and out["error"].startswith(f"{bad}:1:49: unknown action 'dropp'")
    assert len(out["errors"]) == 2 and len(proc.stderr.splitlines()) == 2
    good = tmp_path / "good.flow"
    good.write_text("flow create 0 ingress pattern eth / end actions drop / end\n")
    out = json.loads(cli("rules", "check", str(good), "--json").stdout)
    assert "error" not in out and out["errors"] == []
