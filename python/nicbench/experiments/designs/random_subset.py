"""Random subset design: N points drawn without replacement from the full factorial (seeded).

The draw depends only on (design seed, the sorted point keys), so the same spec always
picks the same points, and adding repetitions never changes which points are run.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from nicbench.experiments.designs.base import Design, Task, make_request, single_run
from nicbench.experiments.keys import point_key
from nicbench.vocab.errors import SpecError

if TYPE_CHECKING:  # pragma: no cover
    from nicbench.experiments.spec import Spec
    from nicbench.experiments.targets import Target


class RandomSubset(Design):
    kind = "random"
    options = ("points", "seed")

    def __init__(self, points: int, seed: int = 1):
        self.points = points
        self.seed = seed

    @classmethod
    def _from_table(cls, table: dict[str, Any], file: str, target: Target) -> RandomSubset:
        n = table.get("points")
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise SpecError.at(file, "design.points", f"expected a number of points ≥ 1, found {n!r}")
        seed = table.get("seed", 1)
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise SpecError.at(file, "design.seed", f"expected an integer seed, found {seed!r}")
        return cls(n, seed)

    def choose(self, points: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if self.points >= len(points):
            return list(points)
        ordered = sorted(points, key=point_key)
        picked = random.Random(self.seed).sample(range(len(ordered)), self.points)
        return [ordered[i] for i in sorted(picked)]

    def tasks(self, spec: Spec, points: list[dict[str, Any]], reps: list[int]) -> list[Task]:
        return [single_run(make_request(spec.target, spec.seed, p, rep)) for p in self.choose(points) for rep in reps]

    def estimated_runs(self, n_points: int, n_reps: int) -> int:
        return min(self.points, n_points) * n_reps

    def describe(self) -> str:
        return f"random subset of {self.points} points (seed {self.seed})"
