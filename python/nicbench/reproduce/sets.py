"""Which study-wide `--set NAME=VALUE` applies to which spec: a spec takes the settings its target has."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from nicbench.experiments.targets import get_target
from nicbench.toml_parser import tomllib

if TYPE_CHECKING:
    from nicbench.vocab.study import Study

__all__ = ["target_params", "sets_for", "check_sets_apply"]


def target_params(spec_path: Path) -> set[str]:
    """Parameter names of the target a spec file names (empty if it cannot be read: load_spec will say why)."""
    try:
        name = tomllib.loads(Path(spec_path).read_text())["experiment"]["target"]
        return {p.name for p in get_target(name).params}
    except (OSError, KeyError, TypeError, ValueError):
        return set()


def sets_for(spec_path: Path, sets: dict[str, str] | None) -> dict[str, str] | None:
    """A study-wide `--set` applies to the experiments whose target has that parameter."""
    if not sets:
        return sets
    params = target_params(spec_path)
    return {k: v for k, v in sets.items() if k in params}


def check_sets_apply(studies: list[Study], sets: dict[str, str] | None) -> None:
    """Every `--set NAME` must apply to at least one experiment, so a typo is an error, not a no-op."""
    if not sets:
        return
    known: set[str] = set()
    for study in studies:
        for spec_path in study.experiments:
            known |= target_params(spec_path)
    unknown = sorted(set(sets) - known)
    if unknown:
        raise ValueError(
            f"--set {', '.join(unknown)}: no experiment of the selected studies has "
            f"{'this parameter' if len(unknown) == 1 else 'these parameters'}"
        )
