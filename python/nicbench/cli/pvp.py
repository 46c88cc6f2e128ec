"""`nicbench pvp`: Red Hat PVP (PHY-VM-PHY) through an OVS-TC offload NIC (seed 002 testbed).

    nicbench pvp --nic agilio-cx-25g --flows 64k --size 64
    nicbench pvp --nic connectx5-25g --flows 16k --size 78 --vxlan --json
    nicbench pvp --nic connectx5-25g --flows 10k --megaflows counts.json   # the datapath's megaflows

Prints the packet rate back at the generator (Mpps, Gb/s), loss, unloaded latency, the stage that
limits the rate (wire, NIC, PCIe, the VM's core, the host's software datapath), what the NIC
offloaded or refused (and why), host cores busy, and the NIC's mechanism (steering-cache hit rate,
or the flow-processing threads' bounds). `--megaflows FILE`: a JSON `{"masks": [{"ingress":
"uplink"|"vf", "megaflows": N, "offloaded": N, "decap": false, "encap": false}, ...]}`, as the
virtual OVS datapath counts them; default: the seed's rule set (two exact megaflows per flow).
Bad input: one line `nicbench: error: ...`, exit code 2.
"""

from __future__ import annotations

import json
from typing import Any

import click
from rich.table import Table

from nicbench import models
from nicbench.cli.common import (
    emit_json,
    fail,
    fmt_number,
    json_option,
    parse_overrides,
    stdout_console,
    table_options,
)
from nicbench.inputs import PARSER_LIMITS, parser_limit, read_input_text
from nicbench.options import flag_spelling
from nicbench.options import pvp as options
from nicbench.options.pvp import OPTIONS

__all__ = ["pvp", "COMMANDS"]


def _megaflows(path: str | None) -> dict[str, Any] | None:
    if path is None:
        return None
    try:
        doc = json.loads(read_input_text(path, "megaflow counts file"))
    except OSError as exc:
        fail(f"--megaflows {path}: {exc.strerror}")
    except json.JSONDecodeError as exc:
        fail(f"--megaflows {path}:{exc.lineno}:{exc.colno}: not JSON: {exc.msg}")
    except UnicodeDecodeError:
        fail(f'--megaflows {path}: not a text (JSON) file, e.g. {{"masks": [...]}}')
    except PARSER_LIMITS as exc:  # after JSONDecodeError, a ValueError too
        fail(f"--megaflows {path}: not a megaflow counts file: {parser_limit(exc)}")
    problem = megaflow_load_problem(doc)
    if problem:
        fail(f"--megaflows {path}: {problem}")
    return doc


def megaflow_load_problem(doc: Any) -> str | None:
    """What is wrong with a megaflow-counts document, in the file's terms (`masks[0].megaflows: -5 is
    less than the minimum of 0`), checked against the model's own request schema (`MegaflowLoad`,
    docs/contracts/pvp.request.schema.json) so the message never points into the internal request."""
    import jsonschema

    schema = models.contract_schema("pvp", "request")
    load = {"$defs": schema["$defs"], **schema["$defs"]["MegaflowLoad"]}
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(load).iter_errors(doc))
    if error is None:
        return None
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path).lstrip(".")
    allowed = '{"masks": [{"ingress": "uplink"|"vf", "megaflows": N, "offloaded": N, "decap": false, "encap": false}]}'
    message = error.message if len(error.message) <= 160 else error.message[:160] + "…"  # it quotes the value
    return f"{where + ': ' if where else ''}{message} (expected {allowed})"


@click.command()
@table_options([OPTIONS[name] for name in ("nic", "flows", "size", "vxlan", "datapath", "flow_order", "gbps")])
@click.option(
    "--megaflows",
    "megaflows_path",
    default=None,
    metavar="FILE",
    help="JSON megaflow counts per mask from the datapath (default: the seed's PVP rule set).",
)
@click.option("--set", "sets", multiple=True, metavar="NAME=VALUE", help="Override a profile parameter.")
@json_option
def pvp(megaflows_path: str | None, sets: tuple[str, ...], as_json: bool, **values: Any) -> None:
    """Predict Red Hat PVP through an OVS-TC offload NIC: rate, loss, offloads, host cores.

    Gb/s is on the wire, as every nicbench command reports it: frames plus Ethernet's 20 B of
    preamble, SFD and gap per frame (line rate reads as the port's speed; the JSON's `gbps` is the
    frame bits alone). The latency is unloaded (no queueing), one packet around the loop as the model
    adds it up: both ports' serialization, the NIC's lookups in both passes, the PCIe crossings (to
    the VM and back: the NIC's writes, the doorbell, its descriptor and packet reads, three DMA
    round trips of pcie_dma_read_ns; one more crossing per kernel datapath pass), the VM's
    forwarding and any software datapath passes. The JSON's `latency_parts_us` has each part."""
    from nicbench import pvp as model

    nic = values["nic"]
    overrides = parse_overrides(sets, nic)
    problem = options.check(values, flag_spelling(OPTIONS), overrides)
    if problem:
        fail(problem)
    result = model.predict(
        nic,
        values["flows"],
        values["size"],
        **options.predict_kwargs(values),
        megaflows=_megaflows(megaflows_path),
        overrides=overrides,
    )
    if as_json:
        emit_json(result)
        return
    # The heading as its own line: as the two-column table's title it wrapped at the table's ~34 columns.
    stdout_console.print(
        f"{result['nic']} ({result['datapath']}): Red Hat PVP, {result['flows']:,} flows, "
        f"{result['wire_frame_bytes']} B on the wire",
        highlight=False,
        soft_wrap=True,
    )
    table = Table()
    table.add_column("")
    table.add_column("value", justify="right")
    rows = [
        ("offered Mpps", result["offered_mpps"]),
        ("received Mpps", result["mpps"]),
        ("received Gb/s (on the wire)", result["line_gbps"]),
        ("loss %", result["loss"] * 100),
        ("latency µs (unloaded, see --help)", result["latency_us"]),
        ("host cores busy", result["host_cores_busy"]),
        ("megaflows offloaded", result["megaflows_offloaded"]),
        ("megaflows in software", result["megaflows_software"]),
    ]
    for name, value in rows:
        table.add_row(name, f"{value:,}" if isinstance(value, int) else fmt_number(value))
    stdout_console.print(table)
    limits = ", ".join(
        f"{k} {fmt_number(v, 3)}" for k, v in sorted(result["limits_mpps"].items(), key=lambda kv: kv[1])
    )
    stdout_console.print(f"limited by: [bold]{result['bottleneck']}[/] (stage limits, Mpps: {limits})", highlight=False)
    parts = ", ".join(f"{k} {fmt_number(v, 3)}" for k, v in result["latency_parts_us"].items() if v > 0)
    stdout_console.print(f"latency µs by part: {parts}", highlight=False)
    if result["detail"]:
        stdout_console.print(
            "NIC: " + ", ".join(f"{k} {fmt_number(v)}" for k, v in result["detail"].items()), highlight=False
        )
    for r in result["refused"]:
        stdout_console.print(
            f"refused: mask {r['mask']}: {r['megaflows']:,} megaflows ({r['reason']})", highlight=False
        )


# Each command's first help sentence, read by `nicbench --help` without importing this module.
SUMMARIES = {
    "pvp": "Predict Red Hat PVP through an OVS-TC offload NIC: rate, loss, offloads, host cores.",
}
COMMANDS = [pvp]
