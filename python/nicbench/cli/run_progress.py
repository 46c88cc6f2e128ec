"""The experiment runner's progress, as a rich bar (`nicbench run`, `nicbench reproduce`).

Apart from `cli/experiments.py` because subclassing the runner's `Progress` imports the runner,
and with it pandas and pyarrow: only the commands that run experiments should pay for that.
"""

from __future__ import annotations

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from nicbench.cli.common import stderr_console
from nicbench.experiments import runner as runner_mod
from nicbench.experiments.designs.base import RunOutcome, RunRequest
from nicbench.experiments.spec import Spec

__all__ = ["RichProgress"]


class RichProgress(runner_mod.Progress):
    """A rich bar with ETA on an interactive stderr; failures always get one line each.

    The status column shows the last run's state, the failures so far and, under Dask, the
    workers alive."""

    def __init__(self, enabled: bool = True):
        self.enabled = enabled and stderr_console.is_terminal
        self.bar: Progress | None = None
        self.task = None
        self.done = 0
        self.failed = 0
        self.alive: int | None = None
        self.state = ""

    def start(self, spec: Spec, total_runs: int) -> None:
        self.done = 0
        self.failed = 0
        if not self.enabled:
            return
        self.bar = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            TaskProgressColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[status]}"),
            console=stderr_console.console,
            transient=False,
        )
        self.bar.start()
        self.task = self.bar.add_task(spec.name, total=total_runs, status="")

    def run_done(self, request: RunRequest, outcome: RunOutcome) -> None:
        self.done += 1
        if outcome.status != "ok":
            self.failed += 1
            point = ", ".join(f"{k}={v}" for k, v in request.params.items())
            first = (outcome.error or "").splitlines()[0] if outcome.error else "failed"
            stderr_console.print(
                f"[red]✗[/] run {request.key[:10]} (rep {request.rep}; {point}): {first}",
                highlight=False,
                soft_wrap=True,
            )
        if self.bar is not None:
            self.state = "cached" if outcome.cached else outcome.status
            total = self.bar.tasks[0].total or 0
            self.bar.update(self.task, completed=self.done, total=max(total, self.done), status=self._status())

    def workers(self, alive: int) -> None:
        self.alive = alive
        if self.bar is not None:
            self.bar.update(self.task, status=self._status())

    def _status(self) -> str:
        parts = [self.state] if self.state else []
        if self.failed:
            parts.append(f"{self.failed} failed")
        if self.alive is not None:
            parts.append(f"{self.alive} workers")
        return ", ".join(parts)

    def finish(self, summary: runner_mod.RunSummary) -> None:
        if self.bar is not None:
            self.bar.update(self.task, completed=self.done, total=self.done, status="done")
            self.bar.stop()
            self.bar = None
