"""Full factorial design: every point of the sweep, every repetition (NPF's fullexp)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nicbench.experiments.designs.base import Design, Task, make_request, single_run

if TYPE_CHECKING:  # pragma: no cover
    from nicbench.experiments.spec import Spec


class FullFactorial(Design):
    kind = "full"

    def describe(self) -> str:
        return "full factorial"

    def tasks(self, spec: Spec, points: list[dict[str, Any]], reps: list[int]) -> list[Task]:
        return [single_run(make_request(spec.target, spec.seed, p, rep)) for p in points for rep in reps]
