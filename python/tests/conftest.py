"""Shared fixtures: a CLI runner and small generated traces."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import forked_cli

import nicbench
from nicbench.units import Rate


@pytest.fixture
def cli():
    """`cli("gen", ...)`: `helpers.forked_cli`, a process of its own per command without an
    interpreter's start-up; `helpers.run_cli` runs the installed entry point itself."""
    return forked_cli


@pytest.fixture(scope="session")
def small_trace(tmp_path_factory) -> Path:
    """2,000 packets of 1,000 UDP/IPv4 flows, 128 B frames, 10 Gbps."""
    path = tmp_path_factory.mktemp("traces") / "small.pcap"
    cfg = nicbench.GenConfig(flows=1000, size=128, rate=Rate(10e9, "bps"), duration_ns=None, packets=2000, seed=3)
    nicbench.generate_pcap(cfg, str(path))
    return path
