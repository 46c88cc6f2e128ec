"""Fixtures for the flow-meter tests: the generated correctness corpus and real Argus runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from flows_corpus import SCENARIOS, write_pcap


@pytest.fixture(scope="session")
def corpus(tmp_path_factory) -> dict[str, Path]:
    """Scenario name → small generated pcap (see flows_corpus.py)."""
    root = tmp_path_factory.mktemp("flows_corpus")
    return {name: write_pcap(root / f"{name}.pcap", build()) for name, build in SCENARIOS.items()}
