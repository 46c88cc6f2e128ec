"""The target registry: what an experiment can run.

A target is a function `fn(params: dict, ctx: RunContext) -> dict[str, float] | None`
registered with `@target(name, params=[Param...], metrics={name: unit})`. It receives
canonical parameter values (see `nicbench.vocab.params`) and a `RunContext` (seed, repetition,
a seeded numpy RNG, and `record()` for time series and extra metrics). It returns its
scalar metrics; unknown metric names are an error (so a typo in a target is caught
by its first run). One module per target family; importing this package registers all.

Invariant: a target's result depends only on its parameters and `ctx.seed` (plus the
machine, for measured targets). Bump `version` when the target's meaning changes: the
store then re-runs its points.
"""

from __future__ import annotations

import importlib
import math
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nicbench.vocab.errors import UnknownTargetError
from nicbench.vocab.params import Param

__all__ = ["Target", "RunContext", "target", "get_target", "all_targets", "finite_or_nan", "FAMILIES"]

# Target families: the modules of this package, one per model or software part (a new module is a
# new family, no list to edit); imported lazily on first lookup.
FAMILIES = tuple(sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")))


@dataclass
class RunContext:
    """What a target gets besides its parameters."""

    seed: int
    rep: int
    target: Target
    rows: list[tuple[str, float, str, float | None]] = field(default_factory=list)

    @property
    def rng(self) -> np.random.Generator:
        if not hasattr(self, "_rng"):
            self._rng = np.random.default_rng(self.seed)
        return self._rng

    def record(self, metric: str, value: float, unit: str | None = None, t: float | None = None) -> None:
        """Add a record: a time-series sample when `t` (seconds) is given, else a scalar metric.

        Event markers for time-series figures are records named `event:<label>` at time `t`.
        """
        if unit is None:
            unit = self.target.metrics.get(metric, "")
        self.rows.append((metric, float(value), unit, None if t is None else float(t)))


@dataclass(frozen=True)
class Target:
    name: str
    fn: Callable[[dict[str, Any], RunContext], dict[str, float] | None]
    params: tuple[Param, ...]
    metrics: dict[str, str]  # metric -> unit
    doc: str = ""
    version: str = "1"
    # Parameter a zero-loss search varies, and the metrics it reads.
    rate_param: str | None = None
    offered_metric: str = "offered_packets"
    received_metric: str = "received_packets"
    # Backends that can answer it, the default first (nicbench.backends); the one chosen ("": default).
    backends: tuple[str, ...] = ("virtual",)
    backend: str = ""
    # Why a point cannot run (a value that is valid alone but not with the others, e.g. a rate above
    # the card's line rate), checked for every point before anything starts; None: it can.
    why_not: Callable[[dict[str, Any]], str | None] | None = None
    # Parameters the target gained after runs of it were stored: left out of a point's run key and
    # seed while they hold their default (`key_point`), so that a stored run keeps its key and seed.
    added: tuple[str, ...] = ()

    def key_point(self, point: dict[str, Any]) -> dict[str, Any]:
        """The point as its run key and seed see it: without the `added` parameters at their defaults
        (a spec that does not name them gives the keys and seeds it gave before they existed)."""
        if not self.added:
            return point
        defaults = {name: self.param(name).default for name in self.added}
        return {k: v for k, v in point.items() if not (k in defaults and v == defaults[k])}

    def param(self, name: str) -> Param | None:
        for p in self.params:
            if p.name == name:
                return p
        return None

    def no_such_param(self, name: str) -> str:
        """What is wrong with a parameter name this target does not have: the closest name, and its names."""
        import difflib

        known = [p.name for p in self.params]
        close = difflib.get_close_matches(name, known, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        return f"target {self.name} has no parameter {name!r} ({hint}it has: {', '.join(known)})"

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}

    def run(self, params: dict[str, Any], ctx: RunContext) -> list[tuple[str, float, str, float | None]]:
        """Run once; returns (metric, value, unit, t) rows. Raises whatever the target raises."""
        result = self.fn(dict(params), ctx) or {}
        rows = list(ctx.rows)
        for metric, value in result.items():
            if metric not in self.metrics:
                raise ValueError(f"target {self.name} returned undeclared metric {metric!r}")
            v = float(value)
            rows.append((metric, v if math.isfinite(v) else math.nan, self.metrics[metric], None))
        return rows


_REGISTRY: dict[str, Target] = {}
_LOADED = False


def finite_or_nan(x: Any) -> float:
    """A metric value as a float: NaN for anything missing, non-numeric or infinite."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        return math.nan
    return v if math.isfinite(v) else math.nan


def target(
    name: str,
    *,
    params: list[Param],
    metrics: dict[str, str],
    version: str = "1",
    rate_param: str | None = None,
    offered_metric: str = "offered_packets",
    received_metric: str = "received_packets",
    backends: tuple[str, ...] = ("virtual",),
    why_not: Callable[[dict[str, Any]], str | None] | None = None,
    added: tuple[str, ...] = (),
) -> Callable:
    """Register a target function under `name` (e.g. `gen.rate`). `added`: parameters added after runs
    were stored (see `Target.key_point`)."""

    def register(fn: Callable) -> Callable:
        if name in _REGISTRY:
            raise ValueError(f"target {name!r} registered twice")
        unknown = sorted(set(added) - {p.name for p in params})
        if unknown:
            raise ValueError(f"target {name!r}: added parameters {unknown} are not among its parameters")
        _REGISTRY[name] = Target(
            name=name,
            fn=fn,
            params=tuple(params),
            metrics=dict(metrics),
            doc=(fn.__doc__ or "").strip(),
            version=version,
            rate_param=rate_param,
            offered_metric=offered_metric,
            received_metric=received_metric,
            backends=tuple(backends),
            why_not=why_not,
            added=tuple(added),
        )
        return fn

    return register


def _load() -> None:
    global _LOADED
    if not _LOADED:
        _LOADED = True
        for family in FAMILIES:
            importlib.import_module(f"{__name__}.{family}")


def all_targets() -> dict[str, Target]:
    _load()
    return dict(sorted(_REGISTRY.items()))


def get_target(name: str) -> Target:
    _load()
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY)) or "none"
        raise UnknownTargetError(f"unknown target {name!r} (known targets: {known})") from None
