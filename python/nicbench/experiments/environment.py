"""Where a result came from: software versions, CPU, date and git commit; and study lookup."""

from __future__ import annotations

import os
import platform
import subprocess
import time
from importlib import metadata
from pathlib import Path

from nicbench.experiments.keys import code_version

__all__ = ["collect_environment", "study_of", "git_commit"]

_PACKAGES = ("numpy", "pandas", "pyarrow", "matplotlib", "click", "rich")


def collect_environment(repo_dir: str | os.PathLike | None = None) -> dict[str, str]:
    env = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "nicbench": code_version(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu": cpu_model(),
        "cores": str(os.cpu_count() or 0),
        "git_commit": git_commit(repo_dir),
    }
    for name in _PACKAGES:
        try:
            env[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return env


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def git_commit(repo_dir: str | os.PathLike | None = None) -> str:
    """`<sha>` (`+dirty` when the tree has changes), or a note when there is none."""
    cwd = str(repo_dir) if repo_dir else None
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=5
        )
        if sha.returncode != 0:
            return "no commit"
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=cwd, capture_output=True, text=True, timeout=5
        )
        return sha.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown (git not available)"


def study_of(spec_file: str | os.PathLike) -> str | None:
    """The study folder a spec belongs to (`studies/<study>/.../spec.toml`), if any."""
    path = Path(spec_file).resolve()
    for parent in path.parents:
        if (parent / "study.toml").is_file():
            return str(parent)
    return None
