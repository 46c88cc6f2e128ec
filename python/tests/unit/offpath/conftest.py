"""Fixtures of the off-path tests: a FAKE native model (tests only, see fake_offpath.py), or the real one."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import fake_offpath  # noqa: E402

REPO = Path(__file__).resolve().parents[4]
OFFPATH = REPO / "studies" / "offpath"


def has_real_model() -> bool:
    from nicbench import _native

    return hasattr(_native, "offpath_predict") and (REPO / "profiles" / "bluefield2.toml").is_file()


@pytest.fixture
def fake_model(monkeypatch, tmp_path):
    """nicbench._native.offpath_predict replaced by the fake; fake profiles in a temporary folder."""
    monkeypatch.setenv("NICBENCH_PROFILES", str(fake_offpath.write_profiles(tmp_path / "profiles")))
    fake_offpath.install(monkeypatch)
    return fake_offpath


@pytest.fixture
def real_model():
    if not has_real_model():
        pytest.skip("the native off-path model (nicbench._native.offpath_predict + profiles/bluefield2.toml) "
                    "is not built: run `make develop`")
