"""`nicbench flowhost`: how many cores a flow-metering deployment behind a capture NIC needs.

The virtual Napatech NT100 hashes the traffic symmetrically into one stream per flow-meter
process; each process runs on a host core whose per-packet cost comes from the host profile
(`argus-host`, calibrated on the 100G Argus study, or `flowmeter-local`, nicbench's own flow
meter measured on this machine by `nicbench calibrate flowmeter-local`).
"""

from __future__ import annotations

from typing import Any

import click
from rich.table import Table

from nicbench.cli.common import IntRange, emit_json, json_option, stdout_console, table_options
from nicbench.errors import NicbenchError
from nicbench.options import flag_spelling
from nicbench.options import flowhost as options
from nicbench.options.flowhost import OPTIONS

__all__ = ["flowhost", "COMMANDS"]


def _fmt(v: Any, digits: int = 4) -> str:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v:
        return "–"
    return f"{v:,.{digits}g}" if abs(v) < 1e6 else f"{v:,.0f}"


def run_flowhost(values: dict[str, Any], seed: int) -> dict[str, Any]:
    """What `nicbench flowhost` computes for its option values (`advise` runs its what-ifs through it)."""
    from nicbench import flowhost as model

    problem = options.check(values, flag_spelling(OPTIONS))
    if problem:
        raise NicbenchError(problem)
    _refuse_unmeasured_local_host(values["host"])
    return model.simulate(options.request(values, seed))


@click.command()
@table_options([OPTIONS[name] for name in ("card", "host", "cores")])
@click.option("--smt", is_flag=True, help="Two flow-meter processes per core (hyper-threading).")
@table_options([OPTIONS[name] for name in ("flows", "size", "rate", "zipf", "duration", "search_cores")])
@click.option("--seed", type=IntRange(0, 2**64 - 1), default=1, show_default=True, help="RNG seed (0 to 2^64-1).")
@json_option
def flowhost(smt: bool, seed: int, as_json: bool, **given: Any) -> None:
    """Predict drops and per-core load of N flow-meter cores behind a virtual Napatech NIC."""
    values = {o.name: o.default for o in OPTIONS}
    values.update(given, processes_per_core=2 if smt else 1)
    card, host, cores, search = values["card"], values["host"], values["cores"], values["search_cores"]
    result = run_flowhost(values, seed)
    if as_json:
        emit_json(result)
        return
    table = Table(
        title=f"{result.get('nic', card)} → {result.get('processes', cores)} × {result.get('host', host)}",
        show_header=False,
        title_justify="left",
    )
    table.add_column("what", style="bold")
    table.add_column("value")
    rows = [
        ("offered", f"{_fmt(result.get('offered_gbps'))} Gbps, {_fmt(result.get('offered_mpps'))} Mpps"),
        (
            "processed",
            f"{_fmt(result.get('processed_mpps'))} Mpps "
            f"({_fmt(result.get('processed_mpps_per_process'))} Mpps per process)",
        ),
        (
            "capacity per core",
            f"{_fmt(result.get('capacity_mpps_per_core'))} Mpps "
            f"(short-term peak {_fmt(result.get('peak_mpps_per_core'))})",
        ),
        (
            "dropped",
            f"{_fmt(100 * result.get('drop_ratio', float('nan')), 3)} % "
            f"({result.get('dropped_packets', 0):,.0f} packets; "
            f"NIC {_fmt(result.get('nic_dropped_mpps'))} Mpps)",
        ),
        ("overloaded processes", _fmt(result.get("overloaded_processes"))),
        (
            "flows per process",
            f"{_fmt(result.get('flows_per_process_min'))}–{_fmt(result.get('flows_per_process_max'))}"
            f" (imbalance {_fmt(result.get('imbalance'), 3)})",
        ),
        ("CPU utilisation", f"mean {_fmt(result.get('cpu_util_mean'), 3)}, max {_fmt(result.get('cpu_util_max'), 3)}"),
        (
            "cost per packet",
            f"{_fmt(result.get('packet_ns_mean'))} ns (L2 miss {_fmt(result.get('l2_miss_ratio_mean'), 3)},"
            f" LLC miss {_fmt(result.get('llc_miss_ratio_mean'), 3)})",
        ),
    ]
    if search:
        rows.append(("cores needed (no drops)", _fmt(result.get("cores_needed"))))
    for what, value in rows:
        table.add_row(what, value)
    stdout_console.print(table)


def _refuse_unmeasured_local_host(host: str) -> None:
    """`--host flowmeter-local` before `nicbench calibrate flowmeter-local` wrote its profile: say how to
    make it (the model would only list the profiles there are)."""
    from nicbench import profiles
    from nicbench.flowhost import LOCAL_PROFILE

    path = profiles.profiles_dir() / f"{host}.toml"
    if host == LOCAL_PROFILE and not path.is_file():
        raise NicbenchError(
            f"--host {host}: not measured on this machine yet: run 'nicbench calibrate {host}' "
            f"first (it measures nicbench's flow meter here and writes {path})"
        )


# Each command's first help sentence, read by `nicbench --help` without importing this module.
SUMMARIES = {
    "flowhost": "Predict drops and per-core load of N flow-meter cores behind a virtual Napatech NIC.",
}
COMMANDS = [flowhost]
