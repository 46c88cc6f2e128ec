"""Fixtures of the virtual-NIC tests: a FAKE native engine (tests only, see fake_engine.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import fake_engine  # noqa: E402

REPO = Path(__file__).resolve().parents[4]
PAM21 = REPO / "studies" / "pam21"


@pytest.fixture
def fake_native(monkeypatch, tmp_path):
    """nicbench._native with the fake vnic_* functions; profiles in a temporary folder."""
    profiles = tmp_path / "profiles"
    fake_engine.write_profile(profiles, "connectx5")
    monkeypatch.setenv("NICBENCH_PROFILES", str(profiles))
    fake_engine.install(monkeypatch)
    return fake_engine
