"""Zero-loss throughput search (RFC 2544 / NFVbench NDR-PDR): binary search on the offered rate.

For every point of the sweep and every repetition, and for each loss target (default NDR
0.001% and PDR 0.1%, as NFVbench), find the highest offered rate whose loss is at most the
target. Loss is computed against what was *actually offered*, from the target's offered and
received packet counts, not from the requested rate.

Search: try `hi` (line rate) first; if it passes, that is the answer. Otherwise bisect
between the highest passing rate (initially `lo`) and the lowest failing one, until the
interval is at most `resolution` or `max_iterations` runs were made. Every probe is an
ordinary run in the store (so an interrupted search resumes by replaying stored probes);
the result is stored as derived records `<name>_rate`, `<name>_loss`, `<name>_gap` (the
remaining interval) and `<name>_iterations` with `search = <name>`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from nicbench.experiments.designs.base import Derived, Design, RunOutcome, Task, make_request
from nicbench.experiments.keys import derive_seed, run_key
from nicbench.units import UnitError
from nicbench.vocab.errors import SpecError
from nicbench.vocab.params import Param

if TYPE_CHECKING:  # pragma: no cover
    from nicbench.experiments.spec import Spec
    from nicbench.experiments.targets import Target

NFVBENCH_LOSS_TARGETS = {"ndr": 0.001 / 100, "pdr": 0.1 / 100}


class ZeroLossSearch(Design):
    kind = "zero_loss"
    options = ("param", "lo", "hi", "resolution", "max_iterations", "loss")

    def __init__(
        self,
        param: str,
        hi: float,
        lo: float = 0.0,
        resolution: float = 0.01,
        relative_resolution: bool = True,
        max_iterations: int = 20,
        loss: dict[str, float] | None = None,
        unit: str = "",
    ):
        self.param = param
        self.lo = lo
        self.hi = hi
        self.resolution = resolution
        self.relative_resolution = relative_resolution
        self.max_iterations = max_iterations
        self.loss = dict(loss or NFVBENCH_LOSS_TARGETS)
        self.unit = unit

    @classmethod
    def _from_table(cls, table: dict[str, Any], file: str, target: Target) -> ZeroLossSearch:
        name = table.get("param", target.rate_param)
        if name is None:
            raise SpecError.at(file, "design.param", f"target {target.name} has no rate parameter; name one")
        param = target.param(name)
        if param is None or param.kind not in ("rate_bps", "rate_pps"):
            raise SpecError.at(file, "design.param", f"expected a rate parameter of {target.name}, found {name!r}")
        if target.offered_metric not in target.metrics or target.received_metric not in target.metrics:
            raise SpecError.at(
                file, "design.kind", f"target {target.name} does not report offered and received packets"
            )
        bound = Param(name, param.kind)

        def rate(key: str, default: Any = None) -> float:
            raw = table.get(key, default)
            if raw is None:
                raise SpecError.at(file, f"design.{key}", f"expected {bound.expected()} (required)")
            try:
                return float(bound.parse(raw)) if raw != 0 else 0.0
            except UnitError as exc:
                raise SpecError.at(file, f"design.{key}", str(exc)) from None

        hi = rate("hi")
        lo = rate("lo", 0)
        if lo >= hi:
            raise SpecError.at(file, "design.lo", "expected lo below hi")
        raw_res = table.get("resolution", "1%")
        relative = isinstance(raw_res, str) and raw_res.strip().endswith("%")
        try:
            resolution = Param("resolution", "fraction").parse(raw_res) if relative else rate("resolution")
        except UnitError as exc:
            raise SpecError.at(file, "design.resolution", f"{exc} (or a percentage of hi such as 1%)") from None
        if resolution <= 0:
            raise SpecError.at(file, "design.resolution", "expected a positive resolution")
        iterations = table.get("max_iterations", 20)
        if not isinstance(iterations, int) or isinstance(iterations, bool) or not 1 <= iterations <= 64:
            raise SpecError.at(file, "design.max_iterations", f"expected an integer in 1..64, found {iterations!r}")
        raw_loss = table.get("loss", None)
        loss = dict(NFVBENCH_LOSS_TARGETS)
        if raw_loss is not None:
            if not isinstance(raw_loss, dict) or not raw_loss:
                raise SpecError.at(file, "design.loss", 'expected a table such as { ndr = "0.001%", pdr = "0.1%" }')
            loss = {}
            for k, v in raw_loss.items():
                try:
                    loss[k] = Param(k, "fraction").parse(v)
                except UnitError as exc:
                    raise SpecError.at(file, f"design.loss.{k}", str(exc)) from None
        return cls(
            param=name,
            hi=hi,
            lo=lo,
            resolution=resolution,
            relative_resolution=relative,
            max_iterations=iterations,
            loss=loss,
            unit=param.unit,
        )

    def check(self, spec: Spec) -> None:
        if self.param in spec.swept:
            raise SpecError.at(
                spec.file, f"sweep.{self.param}", "the zero-loss search sets this parameter itself; do not sweep it"
            )

    @property
    def resolution_abs(self) -> float:
        return self.resolution * self.hi if self.relative_resolution else self.resolution

    def tasks(self, spec: Spec, points: list[dict[str, Any]], reps: list[int]) -> list[Task]:
        return [
            self._search(spec, point, rep, name, target_loss)
            for point in points
            for rep in reps
            for name, target_loss in self.loss.items()
        ]

    def estimated_runs(self, n_points: int, n_reps: int) -> int:
        steps = min(self.max_iterations, 1 + max(1, math.ceil(math.log2(self.hi / self.resolution_abs))))
        return n_points * n_reps * len(self.loss) * steps

    def describe(self) -> str:
        targets = ", ".join(f"{k} ≤ {v:.4%}" for k, v in self.loss.items())
        return f"zero-loss search on {self.param} ({targets})"

    def _search(self, spec: Spec, point: dict[str, Any], rep: int, name: str, target_loss: float) -> Task:
        target = spec.target
        base = dict(point)
        base[self.param] = None
        lo, hi = self.lo, self.hi
        best: float | None = None
        best_loss = math.nan
        rate = hi
        iterations = 0
        failed_error: str | None = None
        while iterations < self.max_iterations:
            params = dict(point)
            params[self.param] = float(f"{rate:.12g}")  # stable keys across resumes
            # Same seed for every probe of a search: same traffic, only the rate differs.
            outcome: RunOutcome = yield make_request(
                target, spec.seed, params, rep, seed_point=base, needs_outcome=True
            )
            iterations += 1
            if outcome.status != "ok":
                failed_error = outcome.error
                break
            offered = outcome.metrics.get(target.offered_metric, math.nan)
            received = outcome.metrics.get(target.received_metric, math.nan)
            loss = (offered - received) / offered if offered > 0 else math.nan
            if loss <= target_loss:
                best, best_loss, lo = rate, loss, rate
                if rate >= self.hi:
                    hi = rate
                    break
            else:
                hi = rate
            if hi - lo <= self.resolution_abs:
                break
            rate = (lo + hi) / 2
        seed = derive_seed(spec.seed, target.key_point(base), rep)
        key = "search-" + run_key(
            target.name,
            target.version,
            {**target.key_point(base), "_search": name, "_design": repr(vars(self))},
            rep,
            seed,
        )
        gap = (hi - lo) if best is not None else math.nan
        rows = [
            (f"{name}_rate", best if best is not None else math.nan, self.unit, None),
            (f"{name}_loss", best_loss, "", None),
            (f"{name}_gap", gap, self.unit, None),
            (f"{name}_iterations", float(iterations), "", None),
        ]
        if failed_error is not None:
            return [
                Derived(
                    key=key,
                    params=base,
                    rep=rep,
                    seed=seed,
                    search=name,
                    rows=[],
                    error=f"search {name}: a probe failed: {failed_error}",
                )
            ]
        return [Derived(key=key, params=base, rep=rep, seed=seed, search=name, rows=rows)]
