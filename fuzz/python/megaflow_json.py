"""Fuzz target: a megaflow counts file (`nicbench pvp --megaflows FILE`: `{"masks": [{"ingress":
"uplink", "megaflows": N, "offloaded": N, "decap": false, "encap": false}, ...]}`, what `nicbench
vswitch --json` derives) read as the command reads it (`cli.pvp._megaflows`: the JSON text), then
the PVP model's request (Python's JSON out, the Rust model's serde in) and run, on the
connectx5-25g profile.

Checks: only the project's errors; a result's figures are finite, and its megaflow counts are the
file's (offloaded + software = the masks' megaflows)."""

from __future__ import annotations

import math

import atheris
from harness import PROJECT_ERRORS, check_error, main, scratch

with atheris.instrument_imports(include=["nicbench", "json"]):
    from nicbench import pvp
    from nicbench.cli.pvp import _megaflows


def test_one_input(data: bytes) -> None:
    path = scratch("megaflows.json", data)
    try:
        doc = _megaflows(str(path))
        result = pvp.predict("connectx5-25g", 1024, 64, megaflows=doc)
    except PROJECT_ERRORS as exc:
        check_error(exc)
        return
    for key in ("mpps", "gbps", "loss", "latency_us", "host_cores_busy"):
        assert math.isfinite(result[key]), (key, result[key])
    if doc is None:  # JSON null: no megaflows given, the seed's (the model's default)
        return
    total = sum(m["megaflows"] for m in doc["masks"])
    assert result["megaflows_offloaded"] + result["megaflows_software"] == total, (result, doc)


if __name__ == "__main__":
    main(test_one_input)
