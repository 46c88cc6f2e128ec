"""What the benchmark drivers print about the machine a figure was taken on (BENCHMARKS.md asks for it)."""

from __future__ import annotations

import os
import platform
from pathlib import Path


def machine_description() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Linux {platform.release()}, Python {platform.python_version()}"
