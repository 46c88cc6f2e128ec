"""Running `nicbench simulate` command lines in-process for `advise`: each scenario, the user's and
every what-if, is a `simulate` argument list, parsed by the command's own option parser and run by
the function the command runs (`cli.connectx.run_simulation`). The command an advice prints is that
argument list, so running it reproduces the advice's numbers exactly."""

from __future__ import annotations

import shlex
from typing import Any

import click

from nicbench.errors import NicbenchError


def run(argv: list[str]) -> dict[str, Any]:
    """The model's result for `nicbench simulate ARGV`."""
    from nicbench.cli.connectx import run_simulation, simulate

    try:
        ctx = simulate.make_context("simulate", list(argv))
    except click.ClickException as exc:
        raise NicbenchError(f"simulate {shlex.join(argv)}: {exc.format_message()}") from None
    params = dict(ctx.params)
    gen_spec, seed, sets = params.pop("gen_spec"), params.pop("seed"), params.pop("sets")
    params.pop("as_json")
    with ctx:  # the command's own context: its checks read which options were given
        return run_simulation(params, gen_spec, seed, sets)


def command(argv: list[str]) -> str:
    """The shell command that runs `argv` (quoted as a shell reads it)."""
    return "nicbench simulate " + shlex.join(argv)


def outcome(result: dict[str, Any]) -> dict[str, Any]:
    """What a user compares between scenarios, from a simulate result."""
    model = result.get("model") or {}
    latency = result.get("latency_us") or {}
    install = result.get("install") or {}
    detail = model.get("bottleneck_detail") or {}
    return {
        "rx_gbps": result.get("rx_gbps"),
        "rx_mpps": result.get("rx_mpps"),
        "offered_gbps": result.get("offered_gbps"),
        "loss_ratio": result.get("loss_ratio"),
        "latency_p50_us": latency.get("p50"),
        "latency_p99_us": latency.get("p99"),
        "bottleneck": model.get("bottleneck"),
        "bottleneck_what": detail.get("what"),
        "bottleneck_parameters": detail.get("parameters") or {},
        "root_table_occupancy": model.get("root_table_occupancy"),
        "tables_traversed_mean": model.get("tables_traversed_mean"),
        "rules_refused": model.get("rules_refused"),
        "install_requested_rules_per_s": install.get("requested_rules_per_s"),
        "install_achieved_rules_per_s": install.get("achieved_rules_per_s"),
        "install_backlog": install.get("backlog"),
    }
