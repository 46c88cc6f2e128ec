"""Shared fixtures: a CLI runner and small generated traces."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest
from cli_process import run_forked

import nicbench
from nicbench.units import Rate


# Longest a command of the `cli` fixture may run [s]: far above any of these tests' commands; reached,
# the command is killed and the test fails naming it (a hang, not a slow machine).
CLI_TIMEOUT_S = 300


@pytest.fixture
def cli():
    """`cli("gen", ...)`: `nicbench ARGS` in a process of its own (exit code, stdout, stderr), forked
    from a server that imported the CLI once (cli_process), so a test of many commands does not pay an
    interpreter's start-up for each. `helpers.run_cli` runs the installed entry point itself."""
    def run(*args: str) -> subprocess.CompletedProcess:
        proc = run_forked(list(args), CLI_TIMEOUT_S)
        assert proc is not None, f"`nicbench {shlex.join(args)}` still running after {CLI_TIMEOUT_S} s"
        return proc

    return run


@pytest.fixture(scope="session")
def small_trace(tmp_path_factory) -> Path:
    """2,000 packets of 1,000 UDP/IPv4 flows, 128 B frames, 10 Gbps."""
    path = tmp_path_factory.mktemp("traces") / "small.pcap"
    cfg = nicbench.GenConfig(flows=1000, size=128, rate=Rate(10e9, "bps"), duration_ns=None, packets=2000, seed=3)
    nicbench.generate_pcap(cfg, str(path))
    return path
