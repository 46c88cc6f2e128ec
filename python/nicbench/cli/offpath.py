"""`nicbench paths`: an adviser for designs on off-path SmartNICs (BlueField-2, the RNIC baseline).

    nicbench paths --nic bluefield2 --flow "client->soc READ 4KiB x 80%" --flow "host->soc WRITE 64KiB x 20%"

Prints, for the mix of flows: each flow's predicted throughput and latency, the bottleneck
resource and its utilization, the busiest resources, and the advices of Wei et al. that apply.
`--json`: per-flow `gbps`, `mpps`, `latency_us` (and more), `total_gbps`, `bottleneck`, `advice`.
`--mix`: `shares` (the flows are one application's request mix, `x SHARE` = fraction of the requests)
or `max_min` (independent requesters, each as fast as the NIC lets it); default: `shares` when some
flow gives `x SHARE`, else `max_min`.
Bad flows are NicbenchError: the group prints one line naming the bad token, exit code 2.
"""

from __future__ import annotations

import math
from typing import Any

import click
from rich.table import Table

from nicbench.cli.common import emit_json, json_option, parse_overrides, stdout_console, table_options
from nicbench.options.offpath import OPTIONS

__all__ = ["paths", "COMMANDS", "summarize"]

_TOP_RESOURCES = 5


def _num(x: Any) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def summarize(nic: str, flows: list[Any], result: dict[str, Any], mix: str | None = None) -> dict[str, Any]:
    """The `--json` document: the model's answer, flattened and labelled for people and scripts."""
    from nicbench import offpath

    per = [f for f in result.get("flows") or [] if isinstance(f, dict)]
    out_flows = []
    for i, flow in enumerate(flows):
        f = per[i] if i < len(per) else {}
        out_flows.append(
            {
                "flow": flow.label(),
                "path": flow.path,
                "verb": flow.verb,
                "payload_bytes": flow.payload_bytes,
                "share": _num(f.get("share", flow.share)),
                "gbps": _num(f.get("gbps")),
                "mpps": _num(f.get("mpps")),
                "latency_us": _num(f.get("latency_us")),
                "posting_latency_us": _num(f.get("posting_latency_us")),
                "saturated": bool(f.get("saturated", False)),
                "bottleneck": f.get("bottleneck"),
                "pcie_mpps": {k: _num(v) for k, v in (f.get("pcie_mpps") or {}).items()},
            }
        )
    util = {k: _num(v) for k, v in (result.get("utilization") or {}).items()}
    bottleneck = result.get("bottleneck")
    return {
        "nic": result.get("nic", nic),
        "mix": result.get("mix", mix),
        "flows": out_flows,
        "total_gbps": _num(result.get("total_gbps")),
        "total_mpps": _num(result.get("total_mpps")),
        "bottleneck": bottleneck,
        "bottleneck_class": offpath.bottleneck_class(bottleneck),
        "bottleneck_utilization": _num(result.get("bottleneck_utilization", util.get(bottleneck or ""))),
        "utilization": util,
        "pcie_mpps": {k: _num(v) for k, v in (result.get("pcie_mpps") or {}).items()},
        "advice": [
            {"id": a.get("id"), "text": a.get("text", ""), **({"change": a["change"]} if a.get("change") else {})}
            for a in result.get("advice") or []
            if isinstance(a, dict)
        ],
    }


def _fmt(v: float | None, digits: int = 4) -> str:
    return "–" if v is None else f"{v:,.{digits}g}"


@click.command()
@table_options([OPTIONS["nic"], OPTIONS["flows"], OPTIONS["mix"]])
@click.option("--set", "sets", multiple=True, metavar="NAME=VALUE", help="Override a profile parameter.")
@json_option
def paths(nic: str, flows: tuple[str, ...], mix: str | None, sets: tuple[str, ...], as_json: bool) -> None:
    """Predict a mix of RDMA flows on an off-path SmartNIC: throughput, latency, bottleneck, advice."""
    doc = run_paths(nic, flows, mix, sets)
    if as_json:
        emit_json(doc)
        return
    _print(doc)


def run_paths(nic: str, flow_texts: tuple[str, ...], mix: str | None, sets: tuple[str, ...]) -> dict[str, Any]:
    """What `nicbench paths` computes for its parsed options (`advise` runs its what-ifs through it)."""
    from nicbench import offpath

    flows = [flow for text in flow_texts for flow in offpath.parse_flows(text)]
    offpath.check_shares(flows)
    mix = mix or offpath.default_mix(flows)
    result = offpath.predict(nic, flows, overrides=parse_overrides(sets, nic), mix=mix)
    return summarize(nic, flows, result, mix)


def _print(doc: dict[str, Any]) -> None:
    table = Table(title=f"{doc['nic']}: predicted flows (mix: {doc['mix']})", title_justify="left")
    for col, justify in (
        ("flow", "left"),
        ("Gbps", "right"),
        ("M req/s", "right"),
        ("latency µs", "right"),
        ("posting µs", "right"),
        ("limited by", "left"),
    ):
        table.add_column(col, justify=justify)
    for f in doc["flows"]:
        table.add_row(
            f["flow"],
            _fmt(f["gbps"]),
            _fmt(f["mpps"]),
            _fmt(f["latency_us"], 3) + (" (saturated)" if f["saturated"] else ""),
            _fmt(f["posting_latency_us"], 3),
            f["bottleneck"] or "",
        )
    table.add_row(
        "[bold]total[/]", f"[bold]{_fmt(doc['total_gbps'])}[/]", f"[bold]{_fmt(doc['total_mpps'])}[/]", "", "", ""
    )
    stdout_console.print(table)
    util = doc["bottleneck_utilization"]
    stdout_console.print(
        f"bottleneck: [bold]{doc['bottleneck'] or '–'}[/]"
        + (f" at {util:.0%} utilization" if util is not None else ""),
        highlight=False,
    )
    busy = sorted(((k, v) for k, v in doc["utilization"].items() if v is not None), key=lambda kv: -kv[1])
    if busy:
        stdout_console.print(
            "busiest resources: " + ", ".join(f"{k} {v:.0%}" for k, v in busy[:_TOP_RESOURCES]), highlight=False
        )
    if doc["advice"]:
        stdout_console.print("[bold]advice[/]:")
        for a in doc["advice"]:
            stdout_console.print(f"  • [cyan]{a['id']}[/]: {a['text']}", highlight=False, soft_wrap=True)
    else:
        stdout_console.print("advice: none of the study's advices applies to this mix")


# Each command's first help sentence, read by `nicbench --help` without importing this module.
SUMMARIES = {
    "paths": "Predict a mix of RDMA flows on an off-path SmartNIC: throughput, latency, bottleneck, advice.",
}
COMMANDS = [paths]
