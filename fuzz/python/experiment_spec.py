"""Fuzz target: an experiment spec (`nicbench run SPEC`, `experiments/*.toml`,
`studies/*/experiments/*.toml`) through `load_spec`, the loader every command that reads a spec
calls (run, sweep, report, calibrate's study), then the sweep it declares (`points()`).

Checks: only the project's errors; a spec that loads, written back by the writer merged specs go
through (`tomli_w`, `merged_text`), loads to the same experiment (name, target, repeat, seed,
metrics, fixed values, axes, points)."""

from __future__ import annotations

import tomllib

import atheris
import tomli_w
from harness import PROJECT_ERRORS, check_error, main, scratch

with atheris.instrument_imports(include=["nicbench", "tomllib"]):
    from nicbench.experiments.spec import load_spec, parse_spec

# A sweep larger than this is not enumerated (its size is what the spec's checks bound).
MAX_POINTS_LISTED = 10_000


def summary(spec) -> str:
    """What the round trip must keep, as text: a NaN value is not equal to itself."""
    points = spec.points()
    points = points if len(points) <= MAX_POINTS_LISTED else len(points)
    return repr((spec.name, spec.target.name, spec.repeat, spec.seed, spec.metrics, spec.fixed, spec.axes, points))


def test_one_input(data: bytes) -> None:
    path = scratch("spec.toml", data)
    try:
        spec = load_spec(path)
        first = summary(spec)
    except PROJECT_ERRORS as exc:
        check_error(exc)
        return
    written = tomli_w.dumps(tomllib.loads(spec.text))
    again = parse_spec(written, str(path))
    assert summary(again) == first, f"round trip via {written!r}"


if __name__ == "__main__":
    main(test_one_input)
