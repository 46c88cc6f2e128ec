"""Fixtures for the flow-meter tests: the generated correctness corpus and real Argus runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from flows_corpus import SCENARIOS, write_pcap

import nicbench._native as native

if not hasattr(native, "flows_meter"):
    pytest.skip("this build of nicbench._native has no flow meter (run maturin develop)", allow_module_level=True)


@pytest.fixture(scope="session")
def corpus(tmp_path_factory) -> dict[str, Path]:
    """Scenario name → small generated pcap (see flows_corpus.py)."""
    root = tmp_path_factory.mktemp("flows_corpus")
    return {name: write_pcap(root / f"{name}.pcap", build()) for name, build in SCENARIOS.items()}
