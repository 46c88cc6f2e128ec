"""What designs, runner and store exchange: run requests, outcomes, derived records."""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nicbench.experiments.fingerprint import Fingerprint, fingerprint
from nicbench.experiments.keys import derive_seed, run_identity, run_key

if TYPE_CHECKING:  # pragma: no cover
    from nicbench.experiments.spec import Spec
    from nicbench.experiments.targets import Target

__all__ = ["RunRequest", "RunOutcome", "Derived", "Task", "Design", "make_request"]


@dataclass(frozen=True)
class RunRequest:
    params: dict[str, Any]
    rep: int
    seed: int
    key: str
    needs_outcome: bool = False  # True: the task reads the metrics (searches); False: fire and forget
    identity: str = ""  # the request without the code that answers it (see keys.py)
    fingerprint: Fingerprint | None = None


@dataclass
class RunOutcome:
    key: str
    status: str  # "ok" | "error"
    metrics: dict[str, float] = field(default_factory=dict)
    error: str | None = None
    cached: bool = False


@dataclass
class Derived:
    """Records a task computes from its runs (stored like a run, under its own key)."""

    key: str
    params: dict[str, Any]
    rep: int
    seed: int
    search: str | None
    rows: list[tuple[str, float, str, float | None]]
    error: str | None = None  # set when a run the task needed failed


# Yields requests, receives outcomes, returns derived records (or None).
Task = Generator[RunRequest, RunOutcome, "list[Derived] | None"]


def make_request(
    target: Target,
    spec_seed: int,
    params: dict[str, Any],
    rep: int,
    seed_point: dict[str, Any] | None = None,
    needs_outcome: bool = False,
) -> RunRequest:
    """A request with its derived seed and run key; `seed_point` (default: params) picks the seed. Both
    see the point as `target.key_point` gives it (parameters added since runs were stored, at their
    defaults, left out)."""
    keyed = target.key_point(params)
    seed = derive_seed(spec_seed, keyed if seed_point is None else target.key_point(seed_point), rep)
    fp = fingerprint(keyed)
    return RunRequest(
        params=dict(params),
        rep=rep,
        seed=seed,
        key=run_key(target.name, target.version, keyed, rep, seed, fp.digest()),
        needs_outcome=needs_outcome,
        identity=run_identity(target.name, target.version, keyed, rep, seed),
        fingerprint=fp,
    )


class Design:
    """Base class: build from the spec's `[design]` table, then make tasks."""

    kind = ""
    options: tuple[str, ...] = ()

    @classmethod
    def from_table(cls, table: dict[str, Any], file: str, target: Target) -> Design:
        from nicbench.vocab.errors import SpecError

        for key in table:
            if key != "kind" and key not in cls.options:
                allowed = ", ".join(cls.options) or "no options"
                raise SpecError.at(file, f"design.{key}", f"unknown option of design {cls.kind!r} ({allowed})")
        return cls._from_table(table, file, target)

    @classmethod
    def _from_table(cls, table: dict[str, Any], file: str, target: Target) -> Design:
        return cls()

    def check(self, spec: Spec) -> None:
        """Validate against the whole spec (raise SpecError)."""

    def tasks(self, spec: Spec, points: list[dict[str, Any]], reps: list[int]) -> list[Task]:
        raise NotImplementedError

    def estimated_runs(self, n_points: int, n_reps: int) -> int:
        return n_points * n_reps

    def describe(self) -> str:
        return self.kind


def single_run(request: RunRequest) -> Task:
    yield request
    return None
