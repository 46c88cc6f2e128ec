"""Every device model through one entry point: the native registry (`nicbench_models::MODELS`).

    from nicbench import models
    result = models.run("offpath", {"nic": "bluefield2", "flows": [...]})
    models.contract_schema("offpath", "request")       # the JSON Schema the request must meet
    [m["name"] for m in models.registry()]             # connectx, offpath, flowhost, pvp, vswitch

A model's request and result are defined once, by its Rust serde types; the schemas are
`docs/contracts/<model>.request.schema.json` / `.result.schema.json`. The per-model modules
(`nicbench.connectx`, `nicbench.offpath`, ...) build requests with nicbench's defaults and call
`run`; nothing here names a model. A model's front is `nicbench/<model>.py`, or the module whose
`MODELS` literal names it (`nicbench/vswitch.py` fronts `vswitch` and `ovs-pvp`): `front(model)`;
its CLI module is the one of the same name, `nicbench/cli/<front>.py`.

Invariant: `run` never changes its request; bad input raises `NicbenchError` with one line naming
what and where.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from nicbench import _native
from nicbench.literals import module_literal

__all__ = ["run", "run_json", "contract_schema", "registry", "limits", "names", "front", "profile_kinds", "CONTRACTS"]

# What a model returns and what it takes: the two contracts of every model.
CONTRACTS = ("request", "result")


def run_json(model: str, request_json: str, progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Run a request given as JSON text on `model`; returns the result dict. `progress(done)` is called
    now and then from the native side, in the model's unit (simulated ns for `connectx`)."""
    return json.loads(_native.model_run(model, request_json, progress))


def run(model: str, request: dict[str, Any], progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Run one request (a dict of the model's `request` contract) on `model`; returns the result dict."""
    return run_json(model, json.dumps(request), progress)


def contract_schema(model: str, which: str) -> dict[str, Any]:
    """The JSON Schema of `model`'s `request` or `result` (generated from the Rust types)."""
    return json.loads(_native.contract_schema(f"{model}.{which}"))


@cache
def registry() -> tuple[dict[str, Any], ...]:
    """Every model: name, summary, the profile kinds its requests may name, its contracts."""
    return tuple(json.loads(_native.models_json()))


def profile_kinds(model: str) -> tuple[str, ...]:
    """The profile kinds `model`'s requests may name (its registry entry)."""
    return tuple(_entry(model)["profile_kinds"])


def _entry(model: str) -> dict[str, Any]:
    for m in registry():
        if m["name"] == model:
            return m
    raise KeyError(f"no model {model!r} (models: {', '.join(names())})")


def limits(model: str) -> dict[str, int]:
    """The caps `model` holds a request to, by name (`max_cores`, ...): what the CLI and the targets
    state and check before a run, defined once by the model."""
    return dict(_entry(model)["limits"])


def names() -> tuple[str, ...]:
    """The models' names, in registry order."""
    return tuple(m["name"] for m in registry())


_PACKAGE = Path(__file__).resolve().parent


@cache
def _declared_fronts() -> dict[str, str]:
    """Model name -> the `nicbench` module whose `MODELS = (...)` literal names it, read without
    importing any module (the CLI asks on its error path)."""
    found: dict[str, str] = {}
    for path in sorted(_PACKAGE.glob("*.py")):
        for name in module_literal(path.read_text(encoding="utf-8"), "MODELS") or ():
            found[name] = path.stem
    return found


def front(model: str) -> str | None:
    """The `nicbench` module that builds `model`'s requests (`nicbench.<front>`; its commands are in
    `nicbench.cli.<front>`), or None when the model has no Python front."""
    declared = _declared_fronts()
    if model in declared:
        return declared[model]
    return model if (_PACKAGE / f"{model}.py").is_file() else None
