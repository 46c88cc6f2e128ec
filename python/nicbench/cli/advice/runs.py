"""Running nicbench command lines in-process for `advise`: each scenario, the user's and every
what-if, is a `simulate`, `vswitch` or `paths` argument list, parsed by that command's own option
parser and run by the function the command runs (`cli.connectx.run_simulation`, `cli.vswitch.run_pvp`,
`cli.offpath.run_paths`). The
command an advice prints is that argument list, so running it reproduces the advice's numbers."""

from __future__ import annotations

import shlex
from typing import Any

import click

from nicbench.errors import NicbenchError


def _context(command: click.Command, name: str, argv: list[str]) -> click.Context:
    try:
        return command.make_context(name, list(argv))
    except click.ClickException as exc:
        raise NicbenchError(f"{name} {shlex.join(argv)}: {exc.format_message()}") from None


def run(command: str, argv: list[str]) -> dict[str, Any]:
    """The outcome of `nicbench COMMAND ARGV`, COMMAND `simulate`, `vswitch`, `paths` or `flowhost`."""
    if command == "simulate":
        from nicbench.cli.connectx import run_simulation, simulate

        ctx = _context(simulate, "simulate", argv)
        params = dict(ctx.params)
        gen_spec, seed, sets = params.pop("gen_spec"), params.pop("seed"), params.pop("sets")
        params.pop("as_json")
        with ctx:  # the command's own context: its checks read which options were given
            return simulate_outcome(run_simulation(params, gen_spec, seed, sets))
    if command == "vswitch":
        from nicbench.cli.vswitch import run_pvp, vswitch

        ctx = _context(vswitch, "vswitch", argv)
        params = dict(ctx.params)
        params.pop("as_json")
        with ctx:
            return vswitch_outcome(run_pvp(params))
    if command == "paths":
        from nicbench.cli.offpath import paths, run_paths

        ctx = _context(paths, "paths", argv)
        params = dict(ctx.params)
        with ctx:
            return paths_outcome(run_paths(params["nic"], params["flows"], params["mix"], params["sets"]))
    if command == "flowhost":
        from nicbench.cli.flowhost import OPTIONS, flowhost, run_flowhost

        ctx = _context(flowhost, "flowhost", argv)
        params = dict(ctx.params)
        seed, smt = params.pop("seed"), params.pop("smt")
        params.pop("as_json")
        values = {o.name: o.default for o in OPTIONS}
        values.update(params, processes_per_core=2 if smt else 1)
        with ctx:
            return flowhost_outcome(run_flowhost(values, seed))
    raise ValueError(f"no runner for {command!r}")


def command_line(command: str, argv: list[str]) -> str:
    """The shell command that runs `argv` (quoted as a shell reads it)."""
    return f"nicbench {command} " + shlex.join(argv)


def simulate_outcome(result: dict[str, Any]) -> dict[str, Any]:
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


def vswitch_outcome(out: dict[str, Any]) -> dict[str, Any]:
    """What a user compares, from a `vswitch` (PVP through the virtual OVS datapath) result. Gb/s is
    the PVP model's `gbps` (frames with FCS, as simulate's rx_gbps), not the wire's line rate."""
    p = out["pvp"]
    refusals = {ingress: dict(r.get("refusals") or {}) for ingress, r in out["datapath"].items()}
    return {
        "rx_gbps": p["gbps"],
        "rx_mpps": p["mpps"],
        "offered_gbps": p["offered_mpps"] * p["gbps"] / p["mpps"] if p["mpps"] else None,
        "loss_ratio": p["loss"],
        "latency_unloaded_us": p["latency_us"],
        "bottleneck": p["bottleneck"],
        "megaflows_offloaded": p["megaflows_offloaded"],
        "megaflows_software": p["megaflows_software"],
        "host_cores_busy": p["host_cores_busy"],
        "refusals": refusals,
    }


def paths_outcome(doc: dict[str, Any]) -> dict[str, Any]:
    """What a user compares, from a `paths` (off-path SmartNIC RDMA mix) result; the model's own
    advice is kept (with each one's change to the mix, where it is one flow field)."""
    return {
        "rx_gbps": doc["total_gbps"],
        "rx_mpps": doc["total_mpps"],
        "client_gbps": sum(f["gbps"] for f in doc["flows"] if f["flow"].lower().startswith("client")),
        "offered_gbps": None,
        "loss_ratio": None,
        "bottleneck": doc["bottleneck"],
        "bottleneck_utilization": doc.get("bottleneck_utilization"),
        "flows": [{k: f[k] for k in ("flow", "gbps", "mpps", "latency_us", "bottleneck")} for f in doc["flows"]],
        "model_advice": doc.get("advice") or [],
    }


def flowhost_outcome(result: dict[str, Any]) -> dict[str, Any]:
    """What a user compares, from a `flowhost` (flow metering on N cores) result: the steady-state
    drop ratio (after the buffers filled), processed rates, and the fewest cores without drops."""
    processed_gbps = result["processed_mbps"] / 1e3
    return {
        "rx_gbps": processed_gbps,
        "rx_mpps": result["processed_mpps"],
        "offered_gbps": result["offered_gbps"],
        "loss_ratio": result["drop_ratio_steady"],
        "bottleneck": "host cores" if result["drop_ratio_steady"] > 0 else None,
        "cores": result["cores"],
        "processes_per_core": result["processes_per_core"],
        "cores_needed": result.get("cores_needed"),
        "smt_gain": result.get("smt_gain"),
    }
