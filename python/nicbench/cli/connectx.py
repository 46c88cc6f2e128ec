"""`nicbench simulate`: the virtual ConnectX NICs on the command line (fronts `nicbench.connectx`).

Commands exported for registration in `nicbench.cli`: `simulate` (see `COMMANDS`).
Bad options and bad input are NicbenchError/ValueError: the group prints one line, exit code 2.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import click
from rich.table import Table

from nicbench.cli.common import (
    IntRange,
    emit_json,
    first_set_off_default,
    fmt_number,
    json_option,
    parse_overrides,
    progress_bar,
    stderr_console,
    stdout_console,
    table_options,
)
from nicbench.errors import NicbenchError
from nicbench.options import connectx as options
from nicbench.options import flag_spelling
from nicbench.options.connectx import OPTIONS, parse_install_rate
from nicbench.units import parse_duration_ns

__all__ = [
    "simulate",
    "COMMANDS",
    "sparkline",
    "parse_install_rate",
    "bottleneck_line",
    "installer_line",
    "packets_line",
]

_BLOCKS = "▁▂▃▄▅▆▇█"


def sparkline(values: list[float], top: float | None = None, width: int = 60) -> str:
    """A one-line text chart: `values` averaged into at most `width` cells, scaled to `top`."""
    vals = [v if isinstance(v, (int, float)) and math.isfinite(v) else 0.0 for v in values]
    if not vals:
        return ""
    if len(vals) > width:
        step = len(vals) / width
        vals = [
            sum(vals[int(i * step) : max(int(i * step) + 1, int((i + 1) * step))])
            / max(1, int((i + 1) * step) - int(i * step))
            for i in range(width)
        ]
    top = top if top and top > 0 else max(vals) or 1.0
    out = []
    for v in vals:
        if v <= top * 0.005:
            out.append(" ")
        else:
            out.append(_BLOCKS[min(len(_BLOCKS) - 1, int(v / top * (len(_BLOCKS) - 1) + 0.5))])
    return "".join(out)


# The table's options `simulate` has, in --help order (`--seed`, `--set`, `--gen`, `--json` are its own).
_TABLE_FLAGS = ("nic", "rules_file", "rules", "groups", "trace")
_INSTALL_FLAGS = (
    "install_rate",
    "install_batch",
    "install_start",
    "install_period",
    "install_core",
    "install_group",
    "install_op",
    "install_match",
    "install_actions",
    "cores",
    "queue_map",
    "duration",
    "warmup",
    "bin",
)


def _options(names: tuple[str, ...]) -> list:
    return [OPTIONS[name] for name in names]


def with_default_timing(values: dict[str, Any]) -> dict[str, Any]:
    """`values` with the duration (by the traffic: a trace's length) and the timeline bin filled in
    where the command line left them out."""
    values = dict(values)
    if values["duration"] is None:
        values["duration"] = _default_duration_ns(values["trace"])
    if values["bin"] is None:
        values["bin"] = max(1, min(_DEFAULT_BIN_NS, values["duration"] // _MIN_DEFAULT_BINS))
    return values


def run_simulation(
    values: dict[str, Any],
    gen_spec: str | None,
    seed: int,
    sets: tuple[str, ...],
    progress: Callable[[float], None] | None = None,
) -> dict[str, Any]:
    """What `nicbench simulate` computes for its parsed options (`values`, as click passes them): the
    model's result. `advise` runs its what-ifs through this, so each one's printed command reproduces
    it. `progress`: called with the virtual seconds done."""
    from nicbench import connectx

    if values["rules_file"] and values["rules"] is not None:
        raise NicbenchError("give either --rules FILE or --generated N, not both")
    if values["trace"] and gen_spec:
        raise NicbenchError("give either --trace PCAP or --gen SPEC, not both")
    _refuse_ignored(values["rules"] is None, ("groups",), "--generated N (the generated rules' tables)")
    if gen_spec is not None and not gen_spec.strip():
        raise NicbenchError(
            "--gen: empty; give KEY=VALUE pairs such as flows=10000,size=1500,rate=100Gbps, "
            "or leave --gen out for those defaults"
        )
    values = with_default_timing(values)
    trace = values["trace"]
    traffic = None if trace else connectx.parse_gen(gen_spec or "", seed=seed)
    problem = options.check(values, flag_spelling(OPTIONS))
    if problem:
        raise NicbenchError(problem)
    nic = values["nic"]
    sc = connectx.scenario(
        nic=nic,
        rules=options.rules(values, values["groups"], seed),
        duration_ns=values["duration"],
        traffic=traffic,
        trace=trace,
        install=options.installer(values),
        seed=seed,
        warmup_ns=values["warmup"],
        timeline_bin_ns=values["bin"],
        overrides=parse_overrides(sets, nic),
        generator=values["generator"],
        **options.topology(values, flag_spelling(OPTIONS)),
    )
    try:
        return connectx.simulate(sc, progress=(lambda ns: progress(ns / 1e9)) if progress else None)
    except NicbenchError as exc:
        # The model names its scenario's field; the user wrote --gen (or took its default).
        text = str(exc)
        if text.startswith("scenario: traffic.rate: "):
            raise NicbenchError("--gen rate: " + text.removeprefix("scenario: traffic.rate: ")) from None
        raise


@click.command()
@table_options(_options(_TABLE_FLAGS))
@click.option(
    "--gen",
    "gen_spec",
    default=None,
    help="Generated traffic: flows=10000,size=1500,rate=100Gbps (default when no --trace).",
)
@table_options(_options(_INSTALL_FLAGS))
@click.option("--seed", type=IntRange(0, 2**64 - 1), default=1, show_default=True, help="RNG seed (0 to 2^64-1).")
@click.option("--set", "sets", multiple=True, metavar="NAME=VALUE", help="Override a profile parameter.")
@table_options(_options(("queues", "generator")))
@json_option
def simulate(gen_spec: str | None, seed: int, sets: tuple[str, ...], as_json: bool, **values: Any) -> None:
    """Run traffic through a virtual NIC with pre-installed rules (and optional rule updates)."""
    values = with_default_timing(values)
    with progress_bar("simulating", total=values["duration"] / 1e9, enabled=not as_json, unit="s") as update:
        result = run_simulation(values, gen_spec, seed, sets, progress=update)
    nic = values["nic"]
    if as_json:
        emit_json(result)
        return
    _print_result(nic, result, warmup_ns=values["warmup"] or 0)
    paced_us = (result.get("sim") or {}).get("link_paced_max_us") or 0.0
    if paced_us > 1.0:
        stderr_console.print(
            f"note: the traffic came faster than the port's line rate; the port paced it (the longest "
            f"wait for the line: {fmt_number(paced_us)} µs), so offered and received are what the "
            "link carried and latency starts when a packet left the port"
        )


# Where a packet that did not come back was dropped, in the user's terms.
_DROP_CAUSES = (
    ("rule", "your rules' drop action"),
    ("nic", "NIC packet buffer full"),
    ("imissed", "RX ring full (imissed)"),
)


def bottleneck_line(detail: dict[str, Any]) -> str:
    """The limiting resource in words: what it is, its cost per packet, the rate it allows, and the
    profile parameters behind it with their provenance (`model.bottleneck_detail` of a result)."""
    if not detail.get("resource"):
        return ""
    params = "; ".join(
        f"{name} = {fmt_number(p.get('value'))} {p.get('unit', '')} ({p.get('provenance', '')})"
        for name, p in (detail.get("parameters") or {}).items()
    )
    # A same-core installer's share of the core is not the traffic's: the rate left is what the rest forwards.
    share = detail.get("installer_share") or 0.0
    installer = f" (the same-core installer takes {fmt_number(share * 100, 3)} % of it)" if share > 0 else ""
    nxt = detail.get("next_resource")
    then = f"; next limit: {nxt}, at most {fmt_number(detail.get('next_capacity_mpps'))} Mpps" if nxt else ""
    return (
        f"{detail['resource']}: {detail.get('what', '')}, {fmt_number(detail.get('ns_per_packet'))} ns/packet, "
        f"at most {fmt_number(detail.get('capacity_mpps'))} Mpps with this traffic{installer}{then}"
        + (f" — {params}" if params else "")
    )


def _seconds_text(s: Any) -> str:
    """A time for people: seconds from 1 s up, milliseconds below (0.0256 s reads as 25.6 ms)."""
    if not isinstance(s, (int, float)) or not math.isfinite(s):
        return "–"
    return f"{fmt_number(s)} s" if s == 0 or abs(s) >= 1 else f"{fmt_number(s * 1e3)} ms"


def installer_line(inst: dict[str, Any]) -> str:
    """What was asked of the installer against what it did (`install` of a result): the asked and achieved
    rates, the operations asked for by the end but not started, and since when it could not keep up."""
    asked = inst.get("requested_rules_per_s")
    backlog = inst.get("backlog") or 0
    if asked is None:
        # A batch asks for everything at once: only a batch the run ended inside says more than the count.
        if not backlog:
            return ""
        return (
            f"asked a batch of {fmt_number(inst.get('requested'))} rule operations, "
            f"{fmt_number(inst.get('rules'))} started by the end, backlog {fmt_number(backlog)}"
        )
    achieved = inst.get("achieved_rules_per_s") or 0.0
    share = f" ({fmt_number(achieved / asked * 100, 3)} %)" if asked > 0 else ""
    saturated = inst.get("saturated_s")
    state = (
        f"saturated from {_seconds_text(saturated)} (every operation since then started more than one period late)"
        if saturated is not None
        else "kept up"
    )
    return (
        f"asked {fmt_number(asked)} rules/s, achieved {fmt_number(achieved)} rules/s{share}, "
        f"backlog {fmt_number(backlog)} at the end; {state}"
    )


def packets_line(packets: dict[str, Any]) -> str:
    """Where the measured packets went (`packets` of a result): offered = delivered + dropped + in flight."""
    dropped = packets.get("dropped") or {}
    where = packets.get("in_flight") or {}
    in_flight = packets.get("in_flight_at_end") or 0
    parts = [f"{label} {fmt_number(where.get(key, 0))}" for key, label in _IN_FLIGHT if where.get(key)]
    inside = f" ({', '.join(parts)})" if in_flight else ""
    return (
        f"offered {fmt_number(packets.get('offered'))} = delivered {fmt_number(packets.get('delivered'))} "
        f"+ dropped {fmt_number(sum(dropped.values()))} + in flight at the end {fmt_number(in_flight)}{inside}"
    )


# Where a packet still in the testbed at the end of the drain was.
_IN_FLIGHT = (
    ("nic", "in the NIC"),
    ("rx_rings", "in rx rings"),
    ("returning", "on the way back"),
)


def _drops_by_cause(result: dict[str, Any]) -> str:
    """Packets not received, by cause: the rules' own drops (intended), the NIC buffer and the RX rings
    (overload)."""
    dropped = result.get("dropped") or {}
    return ", ".join(f"{label} {fmt_number(dropped.get(key, 0))}" for key, label in _DROP_CAUSES)


# The timeline's default bin, and the bins a shorter run gets at least (10 ms made a 10 ms run one bar).
_DEFAULT_BIN_NS = 10_000_000
_MIN_DEFAULT_BINS = 20


def _refuse_ignored(ignored: bool, names: tuple[str, ...], needs: str) -> None:
    """Options given on the command line that this run would ignore are refused, naming what they need."""
    given = first_set_off_default(names) if ignored else None
    if given is not None:
        raise NicbenchError(f"{given[0]} {given[1]} applies only with {needs}")


def _default_duration_ns(trace: str | None) -> int:
    """A trace runs for its own span (first to last packet, plus one mean gap so that N packets fill N
    slots); generated traffic for 1 s."""
    if trace is None:
        return parse_duration_ns("1s")
    from nicbench.traces import pcap_info

    info = pcap_info(trace)
    packets, span = int(info.get("packets") or 0), int(info.get("duration_ns") or 0)
    if packets == 0:
        raise NicbenchError(f"{trace}: the trace has no packets")
    return max(1, span + (span // (packets - 1) if packets > 1 else 0))


def _print_result(nic: str, result: dict[str, Any], warmup_ns: int = 0) -> None:
    table = Table(title=f"virtual {nic}", show_header=False, title_justify="left")
    table.add_column("what", style="bold")
    table.add_column("value")
    table.add_row(
        "offered", f"{fmt_number(result.get('offered_gbps'))} Gbps, {fmt_number(result.get('offered_mpps'))} Mpps"
    )
    table.add_row(
        "received",
        f"{fmt_number(result.get('rx_gbps'))} Gbps, {fmt_number(result.get('rx_mpps'))} Mpps "
        f"(tx {fmt_number(result.get('tx_gbps'))} Gbps) over {_seconds_text(result.get('rx_window_s'))}",
    )
    packets = result.get("packets") or {}
    if packets:
        # The account covers the measured packets: those sent during a warm-up are in none of its terms.
        warmup = f" (sent after the {_seconds_text(warmup_ns / 1e9)} warm-up)" if warmup_ns else ""
        table.add_row("packets", packets_line(packets) + warmup)
    loss = result.get("loss_ratio")
    table.add_row(
        "not received",
        f"{fmt_number(loss * 100 if isinstance(loss, (int, float)) else loss)} % of offered, "
        "by cause: " + _drops_by_cause(result),
    )
    lat = result.get("latency_us") or {}
    if lat:
        table.add_row(
            "latency [µs]",
            "  ".join(
                f"{k} {fmt_number(lat.get(k))}" for k in ("p1", "p25", "p50", "p75", "p99", "p999", "max") if k in lat
            ),
        )
    floor = (result.get("model") or {}).get("latency_floor_us") or {}
    if floor:
        parts = "  ".join(f"{k} {fmt_number(v, 3)}" for k, v in floor.items())
        table.add_row(
            "latency floor [µs]",
            f"{fmt_number(sum(floor.values()), 4)} = {parts} (fixed: the testbed outside the "
            "modelled queues, fitted; above the floor: queueing)",
        )
    inst = result.get("install")
    if inst:
        table.add_row(
            "rule updates",
            f"{fmt_number(inst.get('rules'))} rules in {fmt_number(inst.get('duration_s'))} s "
            f"({fmt_number(inst.get('rate_rules_per_s'))} rules/s)",
        )
        asked = installer_line(inst)
        if asked:
            table.add_row("installer", asked)
    model = result.get("model") or {}
    if model:
        table.add_row(
            "model",
            "  ".join(
                f"{k} {v}" if isinstance(v, str) else f"{k} {fmt_number(v)}"
                for k, v in model.items()
                if not isinstance(v, dict) and k != "rules_met"
            ),
        )
        met = model.get("rules_met")
        if met:
            table.add_row(
                "rules met",
                f"{met['matched']:,} of the file's {met['total']:,} ({met['matched'] / max(met['total'], 1):.1%}); "
                f"with a match field {met['with_fields_matched']:,} of {met['with_fields']:,}"
                + (
                    " [yellow](none met: only catch-alls or nothing; `nicbench gen --for-rules FILE` writes traffic "
                    "that meets them)[/]"
                    if met["with_fields"] and not met["with_fields_matched"]
                    else ""
                ),
            )
        for k, v in model.items():
            if isinstance(v, dict) and k not in ("latency_floor_us", "bottleneck_detail", "rules_met"):
                table.add_row(f"model {k}", "  ".join(f"{kk} {fmt_number(vv, 3)}" for kk, vv in v.items()))
        limit = bottleneck_line(model.get("bottleneck_detail") or {})
        if limit:
            table.add_row("bottleneck", limit)
    for c in result.get("cores") or []:
        table.add_row(
            f"core {c['core']}",
            f"queues {', '.join(map(str, c['queues'])) or '-'}  "
            f"forwarded {fmt_number(c['packets'])}  "
            # Load: its packets at the cost of full bursts; busy: the share of
            # the run it worked (bursts as they came: small ones cost more).
            f"load {fmt_number(c['utilization'], 3)} at full bursts  "
            f"busy {fmt_number(c['busy_ratio'], 3)} of the run",
        )
    queues = result.get("queues") or {}
    if queues:
        ordered = sorted(queues.items(), key=lambda kv: int(kv[0]))
        shown = ordered[:16]
        more = f" (+{len(ordered) - 16} more)" if len(ordered) > 16 else ""
        table.add_row("rx queue packets", "  ".join(f"{q}: {c['packets']:,}" for q, c in shown) + more)
        table.add_row("rx queue bytes", "  ".join(f"{q}: {c['bytes']:,}" for q, c in shown) + more)
    sim = result.get("sim") or {}
    if sim:
        table.add_row(
            "simulation",
            f"{fmt_number(sim.get('packets'))} packets in {fmt_number(sim.get('wall_s'), 3)} s wall "
            f"({fmt_number((sim.get('sim_packets_per_s') or math.nan) / 1e6, 3)} M packets/s)",
        )
    stdout_console.print(table)
    timeline = result.get("timeline") or []
    if timeline:
        values = [row.get("rx_gbps") for row in timeline if isinstance(row, dict)]
        end = timeline[-1].get("t_s", math.nan) if isinstance(timeline[-1], dict) else math.nan
        top = result.get("offered_gbps")
        stdout_console.print(
            f"rx Gbps over time (0–{fmt_number(end, 3)} s, full height = offered {fmt_number(top)} Gbps):"
        )
        stdout_console.print(f"[cyan]|{sparkline(values, top)}|[/]")
    for ev in result.get("events") or []:
        if isinstance(ev, dict):
            stdout_console.print(f"  t = {fmt_number(ev.get('t_s'), 4)} s: {ev.get('what', '')}")


# Each command's first help sentence, read by `nicbench --help` without importing this module.
SUMMARIES = {
    "simulate": "Run traffic through a virtual NIC with pre-installed rules (and optional rule updates).",
}
COMMANDS = [simulate]
