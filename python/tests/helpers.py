"""Helpers shared by the test modules (importable: pytest puts python/tests on sys.path)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest


# The checkout, and its study folders (tests read the committed files from there).
REPO = Path(__file__).resolve().parents[2]
STUDIES = REPO / "studies"

def run_cli(*args: str) -> subprocess.CompletedProcess:
    """Run the real `nicbench` entry point in a subprocess (exit codes and stderr as a user sees them)."""
    return subprocess.run([sys.executable, "-m", "nicbench.cli", *args], capture_output=True, text=True)


def require_tool(name: str) -> str:
    """Path of a peer tool, or skip with a message saying how to get it."""
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed (scripts/install-peers.sh installs it as root)")
    return path
