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

from nicbench.cli.common import FiniteFloat, IntRange, emit_json, json_option, stdout_console
from nicbench.errors import NicbenchError
from nicbench.units import parse_count, parse_duration_ns, parse_rate

__all__ = ["flowhost", "COMMANDS"]


def _fmt(v: Any, digits: int = 4) -> str:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v:
        return "–"
    return f"{v:,.{digits}g}" if abs(v) < 1e6 else f"{v:,.0f}"


@click.command()
@click.option("--nic", "card", default="napatech-nt100", show_default=True, help="Capture-NIC profile.")
@click.option("--host", default="argus-host", show_default=True,
              help="Flow-meter host profile (argus-host, flowmeter-local, or a path).")
@click.option("--cores", type=IntRange(1, 4096), default=8, show_default=True,
              help="Physical cores running flow meters.")
@click.option("--smt", is_flag=True, help="Two flow-meter processes per core (hyper-threading).")
@click.option("--flows", default="16384", show_default=True, help="Distinct flows (e.g. 16k, 1M).")
@click.option("--size", type=IntRange(64, 16384), default=750, show_default=True,
              help="Frame size in bytes, incl. FCS.")
@click.option("--rate", default="100Gbps", show_default=True,
              help="Offered rate on the wire, at most the card's line rate (100Gbps for napatech-nt100).")
@click.option("--zipf", type=FiniteFloat(0, 5), default=0.0, show_default=True,
              help="Zipf exponent of flow popularity (0: equal flows).")
@click.option("--duration", default="1s", show_default=True, help="Virtual time simulated.")
@click.option("--cores-needed", "search", is_flag=True, help="Also search the fewest cores without drops.")
@click.option("--seed", type=IntRange(0, 2**64 - 1), default=1, show_default=True, help="RNG seed (0 to 2^64-1).")
@json_option
def flowhost(card: str, host: str, cores: int, smt: bool, flows: str, size: int, rate: str, zipf: float,
             duration: str, search: bool, seed: int, as_json: bool) -> None:
    """Predict drops and per-core load of N flow-meter cores behind a virtual Napatech NIC."""
    from nicbench import flowhost as model
    from nicbench.connectx import MAX_DURATION_NS
    from nicbench.traffic import MAX_GEN_FLOWS

    try:
        n_flows = parse_count(flows, at_most=MAX_GEN_FLOWS, what="--flows")
        if n_flows < 1:
            raise NicbenchError("--flows: need at least 1 flow")
        parsed = parse_rate(rate, "--rate")
        if parsed.gbps is None:
            raise NicbenchError(f"--rate: expected a bit rate such as 100Gbps, found {rate!r}")
        rate_gbps = parsed.gbps
        link_gbps = model.above_line_rate(card, rate_gbps)
        if link_gbps is not None:  # as `simulate` does: the wire cannot carry more
            raise NicbenchError(f"--rate {rate}: above the line rate of {card} ({link_gbps:g} Gbps on the wire); "
                                f"give at most {link_gbps:g}Gbps")
        duration_ns = parse_duration_ns(duration, "--duration")
        if duration_ns > MAX_DURATION_NS:
            raise NicbenchError(f"--duration {duration}: too long: at most {MAX_DURATION_NS / 1e9:g} s of virtual time")
    except ValueError as exc:
        raise NicbenchError(str(exc)) from None
    _refuse_unmeasured_local_host(host)
    result = model.simulate(nic=card, host=host, cores=cores, processes_per_core=2 if smt else 1, flows=n_flows,
                            frame_bytes=size, rate_gbps=rate_gbps, zipf_exponent=zipf, duration_ns=duration_ns,
                            search_cores=search, seed=seed)
    if as_json:
        emit_json(result)
        return
    table = Table(title=f"{result.get('nic', card)} → {result.get('processes', cores)} × {result.get('host', host)}",
                  show_header=False, title_justify="left")
    table.add_column("what", style="bold")
    table.add_column("value")
    rows = [
        ("offered", f"{_fmt(result.get('offered_gbps'))} Gbps, {_fmt(result.get('offered_mpps'))} Mpps"),
        ("processed", f"{_fmt(result.get('processed_mpps'))} Mpps "
                      f"({_fmt(result.get('processed_mpps_per_process'))} Mpps per process)"),
        ("capacity per core", f"{_fmt(result.get('capacity_mpps_per_core'))} Mpps "
                              f"(short-term peak {_fmt(result.get('peak_mpps_per_core'))})"),
        ("dropped", f"{_fmt(100 * result.get('drop_ratio', float('nan')), 3)} % "
                    f"({result.get('dropped_packets', 0):,.0f} packets; "
                    f"NIC {_fmt(result.get('nic_dropped_mpps'))} Mpps)"),
        ("overloaded processes", _fmt(result.get("overloaded_processes"))),
        ("flows per process", f"{_fmt(result.get('flows_per_process_min'))}–{_fmt(result.get('flows_per_process_max'))}"
                              f" (imbalance {_fmt(result.get('imbalance'), 3)})"),
        ("CPU utilisation", f"mean {_fmt(result.get('cpu_util_mean'), 3)}, max {_fmt(result.get('cpu_util_max'), 3)}"),
        ("cost per packet",
         f"{_fmt(result.get('packet_ns_mean'))} ns (L2 miss {_fmt(result.get('l2_miss_ratio_mean'), 3)},"
                            f" LLC miss {_fmt(result.get('llc_miss_ratio_mean'), 3)})"),
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
        raise NicbenchError(f"--host {host}: not measured on this machine yet: run 'nicbench calibrate {host}' "
                            f"first (it measures nicbench's flow meter here and writes {path})")


# Each command's first help sentence, read by `nicbench --help` without importing this module.
SUMMARIES = {
    "flowhost": 'Predict drops and per-core load of N flow-meter cores behind a virtual Napatech NIC.',
}
COMMANDS = [flowhost]
