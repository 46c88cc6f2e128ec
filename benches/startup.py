"""Command-line start-up: `python benches/startup.py [--runs 10] [--against REV]` (also `make bench-startup`).

Times `nicbench --help`, `--version`, `gen --help` and `import nicbench` in fresh interpreters and
prints the minimum (the issue's measure) and the median of the runs. With `--against REV`, the
same commands run from that commit's Python sources (`git archive`, with this checkout's native
module and venv) in the same loop, interleaved and in alternating order, so that both sides see
the same machine load.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine import machine_description

REPO = Path(__file__).resolve().parents[1]
CASES = {
    "nicbench --help": ["-c", "from nicbench.cli import main; main(prog_name='nicbench')", "--help"],
    "nicbench --version": ["-c", "from nicbench.cli import main; main(prog_name='nicbench')", "--version"],
    "nicbench gen --help": ["-c", "from nicbench.cli import main; main(prog_name='nicbench')", "gen", "--help"],
    "import nicbench": ["-c", "import nicbench"],
}


def python_tree_at(rev: str, into: Path) -> Path:
    """The package sources of commit REV under `into`, with this checkout's built native module."""
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev, "python"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    for native in (REPO / "python" / "nicbench").glob("_native*.so"):
        shutil.copy2(native, into / "python" / "nicbench" / native.name)
    return into / "python"


def wall_s(source: Path, args: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": str(source)}  # ahead of the venv's editable install
    t0 = time.perf_counter()
    subprocess.run([sys.executable, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t0


def main() -> int:
    parser = argparse.ArgumentParser(prog="python benches/startup.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--against", metavar="REV", default=None, help="also time this commit's sources")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        sides = {"now": REPO / "python"}
        if args.against:
            sides[args.against] = python_tree_at(args.against, Path(tmp))
        print(f"# machine: {machine_description()}; load average {os.getloadavg()[0]:.2f} before")
        times: dict[tuple[str, str], list[float]] = {}
        for round_ in range(args.runs):
            order = list(sides) if round_ % 2 == 0 else list(reversed(sides))
            for case, argv in CASES.items():
                for side in order:
                    times.setdefault((case, side), []).append(wall_s(sides[side], argv))
        print(f"# load average {os.getloadavg()[0]:.2f} after; {args.runs} runs each")
    for (case, side), ts in times.items():
        print(f"{case:22} {side:10} min {1000 * min(ts):7.1f} ms   median {1000 * statistics.median(ts):7.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
