"""Fuzz target: a measurements file (`nicbench calibrate --base P --measurements FILE -o OUT`)
through `load_measurements`, what the few-shot fit calls on it, for study pam21 (the base
profile connectx5's): the header decides tidy records (experiment, metric, value, the points'
parameters, unit) or digitized figure points (the study's make_reference.py maps them).

Checks: only the project's errors; every reference made is finite and names an experiment of the
study."""

from __future__ import annotations

import functools
import math
from pathlib import Path

import atheris
from harness import PROJECT_ERRORS, check_error, main, scratch

with atheris.instrument_imports(include=["nicbench", "tomllib"]):
    from nicbench.calibrate import measurements
    from nicbench.vocab.study import load_study

STUDY = load_study(Path(__file__).resolve().parents[2] / "studies" / "pam21")
EXPERIMENTS = {Path(p).stem for p in STUDY.experiments}
# The study's specs are read once, not per input: the loader reads the same files every time, and
# what is fuzzed is the CSV (the spec loader has its own target).
measurements.load_spec = functools.cache(measurements.load_spec)


def test_one_input(data: bytes) -> None:
    path = scratch("m.csv", data)
    try:
        refs = measurements.load_measurements([path], STUDY)
    except PROJECT_ERRORS as exc:
        check_error(exc)
        return
    for r in refs:
        assert math.isfinite(r.value), r
        assert r.experiment.startswith("pam21-"), r


if __name__ == "__main__":
    main(test_one_input)
