"""Fixtures of the off-path tests: a FAKE native model (tests only, see fake_offpath.py). Tests that
do not ask for `fake_model` run the real native model on the committed profiles."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import fake_offpath  # noqa: E402


@pytest.fixture
def fake_model(monkeypatch, tmp_path):
    """nicbench._native.offpath_predict replaced by the fake; fake profiles in a temporary folder."""
    monkeypatch.setenv("NICBENCH_PROFILES", str(fake_offpath.write_profiles(tmp_path / "profiles")))
    fake_offpath.install(monkeypatch)
    return fake_offpath
