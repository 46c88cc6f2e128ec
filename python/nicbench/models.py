"""Every device model through one entry point: the native registry (`nicbench_models::MODELS`).

    from nicbench import models
    result = models.run("offpath", {"nic": "bluefield2", "flows": [...]})
    models.contract_schema("offpath", "request")       # the JSON Schema the request must meet
    [m["name"] for m in models.registry()]             # connectx, offpath, flowhost, pvp, vswitch

A model's request and result are defined once, by its Rust serde types; the schemas are
`docs/contracts/<model>.request.schema.json` / `.result.schema.json`. The per-model modules
(`nicbench.connectx`, `nicbench.offpath`, ...) build requests with nicbench's defaults and call
`run`; nothing here names a model.

Invariant: `run` never changes its request; bad input raises `NicbenchError` with one line naming
what and where.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from typing import Any

from nicbench import _native

__all__ = ["run", "run_json", "contract_schema", "registry", "limits", "names", "CONTRACTS"]

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


def limits(model: str) -> dict[str, int]:
    """The caps `model` holds a request to, by name (`max_cores`, ...): what the CLI and the targets
    state and check before a run, defined once by the model."""
    for m in registry():
        if m["name"] == model:
            return dict(m["limits"])
    raise KeyError(f"no model {model!r} (models: {', '.join(names())})")


def names() -> tuple[str, ...]:
    """The models' names, in registry order."""
    return tuple(m["name"] for m in registry())
