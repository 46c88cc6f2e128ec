"""What the atheris targets share: the project's own error types (the only exceptions a target lets
pass: anything else reaching the CLI is a traceback or an unhelpful line, a finding), a scratch file
per process for loaders that take a path, and the libFuzzer entry (`python TARGET.py [CORPUS]
[-max_total_time=N ...]`, libFuzzer's flags)."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import atheris

# Heavy dependencies are imported before instrumentation: coverage of nicbench and the stdlib
# parsers it calls (tomllib, csv is C, json's decoder) is what guides the fuzzer.
import click  # noqa: F401
import numpy  # noqa: F401
import rich  # noqa: F401

with atheris.instrument_imports(include=["nicbench", "tomllib"]):
    from nicbench.errors import NicbenchError
    from nicbench.units import UnitError
    from nicbench.vocab.errors import SpecError

PROJECT_ERRORS = (NicbenchError, SpecError, UnitError)

_SCRATCH = Path(tempfile.mkdtemp(prefix="nicbench-fuzz-"))


def scratch(name: str, data: bytes) -> Path:
    """`data` as the file `name` in this process's scratch folder (rewritten per input)."""
    path = _SCRATCH / name
    path.write_bytes(data)
    return path


def check_error(exc: BaseException) -> None:
    """A project error must say something (the CLI prints it as its one line)."""
    assert str(exc).strip(), f"{type(exc).__name__} with an empty message"


def main(test_one_input) -> None:
    os.environ.setdefault("NICBENCH_PROFILES", str(Path(__file__).resolve().parents[2] / "profiles"))
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
