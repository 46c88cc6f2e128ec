"""Device profiles of every model: where they are, what they hold, and calibration overrides.

One loader reads profiles for every model (Rust, `nicbench_models::profile`); this module is its
Python front. A profile is `profiles/<name>.toml` with a `kind` (the model that reads it:
`connectx`, `offpath`, `flowhost`) and one `[param.NAME]` table per parameter (value, unit,
provenance, optional `fitted` and `bounds`).

- `profiles_dir()`: `$NICBENCH_PROFILES`, else the profiles this installation carries (decided by
  the loader, which `nicbench.data_files` tells where the installed ones are).
- `resolve(name_or_path)`: the file a name or path refers to (`NicbenchError` naming the known
  profiles if none); `load(...)`: the profile as a dict; `names(kind)`: the profiles of a model.
- `parameter_overrides({...})`: a `with` block in which every model call applies these parameter
  values beneath the call's own `overrides` (the calibration's hook); `current_overrides()`.

Invariants: Python never decides which profiles folder is in use (it only tells the loader where
the installed ones are) or re-parses their TOML to learn what they declare; overrides never change the caller's dicts.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
from collections.abc import Iterator, Mapping
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

from nicbench import _native

__all__ = [
    "KINDS",
    "profiles_dir",
    "resolve",
    "load",
    "names",
    "declared",
    "facts",
    "parameter_overrides",
    "current_overrides",
    "link_gbps",
    "above_link",
]

KINDS = ("connectx", "offpath", "flowhost", "connectx-eswitch", "agilio")

# The default is read-only: every change sets a new mapping (parameter_overrides), none edits one in place.
_OVERRIDES: contextvars.ContextVar[Mapping[str, float]] = contextvars.ContextVar(
    "nicbench_overrides", default=MappingProxyType({})
)


def profiles_dir() -> Path:
    """The profiles folder: `$NICBENCH_PROFILES`, else the installed profiles (nicbench.data_files)."""
    return Path(_native.profiles_dir())


def resolve(name_or_path: str | Path) -> Path:
    """The file a profile name (`connectx5`) or path (`my.toml`, `dir/x`) refers to."""
    return Path(_native.profile_path(str(name_or_path)))


def load(name_or_path: str | Path) -> dict[str, Any]:
    """A profile as the models read it: name, kind, description, calibration_study and `param`
    (name → value, unit, provenance, fitted, bounds). Bad profiles raise `NicbenchError`."""
    return json.loads(_native.profile_json(str(name_or_path)))


def link_gbps(name_or_path: str | Path, overrides: dict[str, float] | None = None) -> float | None:
    """A device's line rate [Gbps on the wire] (its `link_gbps`, unless `overrides` set it), or None
    when the profile cannot be read or has none (the model then says why)."""
    if overrides and "link_gbps" in overrides:
        return float(overrides["link_gbps"])
    try:
        return float(load(name_or_path)["param"]["link_gbps"]["value"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def above_link(
    wire_gbps: float, name_or_path: str | Path, overrides: dict[str, float] | None = None, *, slack: float = 1e-6
) -> float | None:
    """The device's line rate when `wire_gbps` exceeds it (the wire cannot carry more: a caller refuses
    such a rate rather than label a run with a rate it did not have), else None. `slack`, relative,
    lets rates written with rounding through: the model's own (connectx 1e-6, flowhost 1e-9), so
    that what is refused here is what the model would refuse."""
    link = link_gbps(name_or_path, overrides)
    return link if link is not None and wire_gbps > link * (1 + slack) else None


def names(kind: str | None = None) -> list[str]:
    """Names of the profiles in the profiles folder, of one model `kind` or all."""
    return list(_native.profile_names(kind))


def declared(name_or_path: str | Path) -> frozenset[str]:
    """The parameter names a profile declares (empty if it cannot be loaded: the model says why)."""
    try:
        return facts(name_or_path)[1]
    except (OSError, ValueError):
        return frozenset()


def facts(name_or_path: str | Path) -> tuple[str, frozenset[str]]:
    """A profile's kind and the parameter names it declares, read once per file version (a study
    names its profiles hundreds of times). Bad profiles raise `NicbenchError` or `OSError`."""
    path = resolve(name_or_path)
    return _facts(str(path), path.stat().st_mtime_ns)


@lru_cache(maxsize=64)
def _facts(path: str, mtime_ns: int) -> tuple[str, frozenset[str]]:
    del mtime_ns  # part of the cache key only: a re-written profile (calibration) is read again
    profile = load(path)
    return profile["kind"], frozenset(profile["param"])


@contextlib.contextmanager
def parameter_overrides(values: dict[str, float]) -> Iterator[None]:
    """Apply profile parameter overrides to every model call in the block (nestable)."""
    token = _OVERRIDES.set({**_OVERRIDES.get(), **values})
    try:
        yield
    finally:
        _OVERRIDES.reset(token)


def current_overrides() -> dict[str, float]:
    """The overrides active in this context (every model's Python wrapper applies them)."""
    return dict(_OVERRIDES.get())


def overrides_for(profile: str) -> dict[str, float]:
    """The active overrides that `profile` declares (all of them when it declares none, so that an
    unknown name is still refused by the model)."""
    active = current_overrides()
    if not active:
        return {}
    names = declared(profile)
    return {k: v for k, v in active.items() if k in names} if names else active
