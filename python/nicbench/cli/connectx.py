"""`nicbench simulate`: the virtual ConnectX NICs on the command line (fronts `nicbench.connectx`).

Commands exported for registration in `nicbench.cli`: `simulate` (see `COMMANDS`).
Bad options and bad input are NicbenchError/ValueError: the group prints one line, exit code 2.
"""

from __future__ import annotations

import math
from typing import Any

import click
from rich.table import Table

from nicbench.cli.common import (
    IntRange,
    NonEmptyPath,
    emit_json,
    first_set_off_default,
    fmt_number,
    json_option,
    parse_overrides,
    progress_bar,
    stderr_console,
    stdout_console,
)
from nicbench.errors import NicbenchError
from nicbench.units import parse_count, parse_duration_ns

__all__ = ["simulate", "COMMANDS", "sparkline", "parse_install_rate", "bottleneck_line"]

_BLOCKS = "▁▂▃▄▅▆▇█"


def sparkline(values: list[float], top: float | None = None, width: int = 60) -> str:
    """A one-line text chart: `values` averaged into at most `width` cells, scaled to `top`."""
    vals = [v if isinstance(v, (int, float)) and math.isfinite(v) else 0.0 for v in values]
    if not vals:
        return ""
    if len(vals) > width:
        step = len(vals) / width
        vals = [sum(vals[int(i * step):max(int(i * step) + 1, int((i + 1) * step))])
                / max(1, int((i + 1) * step) - int(i * step)) for i in range(width)]
    top = top if top and top > 0 else max(vals) or 1.0
    out = []
    for v in vals:
        if v <= top * 0.005:
            out.append(" ")
        else:
            out.append(_BLOCKS[min(len(_BLOCKS) - 1, int(v / top * (len(_BLOCKS) - 1) + 0.5))])
    return "".join(out)


def parse_install_rate(text: str) -> float:
    """`100k/s`, `10000/s`, `2.5k` → rules per second."""
    s = text.strip().lower().removesuffix("rules/s").removesuffix("/s").strip()
    try:
        if s and s[-1] in "km":
            rate = float(s[:-1]) * (1e3 if s[-1] == "k" else 1e6)
        else:
            rate = float(s)
    except ValueError:
        raise NicbenchError(f"--install-rate: expected a rate such as 100k/s, found {text!r}") from None
    if not (math.isfinite(rate) and rate > 0):
        raise NicbenchError(f"--install-rate: expected a positive finite rate such as 100k/s, found {text!r}")
    return rate


@click.command()
@click.option("--nic", default="connectx5", show_default=True, help="Profile name (see profiles/) or a .toml path.")
@click.option("--rules", "rules_file", type=NonEmptyPath(dir_okay=False), default=None,
              help="Pre-installed rules: a testpmd `flow create` or tc flower file.")
@click.option("--generated", default=None,
              help="Pre-installed generated exact-match rules instead (65536, 2M; at most 4,194,304).")
@click.option("--groups", type=IntRange(0, 64), default=0, show_default=True,
              help="With --generated: 0 = all in Table 0; T = spread over Tables 1..T (PAM'21 layout).")
@click.option("--trace", type=NonEmptyPath(dir_okay=False), default=None, help="Replay this pcap at its timestamps.")
@click.option("--gen", "gen_spec", default=None,
              help="Generated traffic: flows=10000,size=1500,rate=100Gbps (default when no --trace).")
@click.option("--install-rate", default=None, help="Insert rules at this rate during the run (100k/s).")
@click.option("--install-batch", default=None,
              help="Insert one batch of this many rules (10k; at most 4,194,304) at --install-start.")
@click.option("--install-start", default="0s", show_default=True, help="When the installer starts (virtual time).")
@click.option("--install-period", default="0s", show_default=True,
              help="With --install-rate: the installer wakes once per period and installs the period's rate × "
                   "period rules back to back (PAM'21's installer: 1ms); 0s: one rule at a time.")
@click.option("--install-core", type=click.Choice(["same", "distinct"]), default="same", show_default=True,
              help="Installer on the core of queue 0 (it forwards nothing while it installs) or on a distinct core "
                   "that polls no queue.")
@click.option("--install-group", type=IntRange(0, 64), default=0, show_default=True, help="Target table.")
@click.option("--install-op", type=click.Choice(["insert", "delete", "update", "update_inplace"]), default="insert",
              show_default=True)
@click.option("--install-match", type=click.Choice(["ipv4", "ipv6", "vlan", "tunnel"]), default="ipv4",
              show_default=True)
@click.option("--install-actions", type=IntRange(1, 16), default=1, show_default=True)
@click.option("--cores", type=IntRange(1, 1024), default=1, show_default=True,
              help="Forwarding cores on the host: queue q is polled by core q mod N (same-core installer: the core "
                   "of queue 0).")
@click.option("--queue-map", default=None, metavar="Q:C,...",
              help="Which core polls each queue instead of q mod N, e.g. 0:0,1:0,2:1,3:1 (every queue of --queues "
                   "and of the rules mapped, cores below --cores).")
@click.option("--duration", default=None,
              help="Virtual time to simulate [default: the trace's own duration with --trace, else 1s].")
@click.option("--warmup", default="0s", show_default=True, help="Virtual time before measuring.")
@click.option("--bin", "bin_", default=None,
              help="Throughput timeline bin [default: 10ms, or a 20th of a shorter run than 200ms].")
@click.option("--seed", type=IntRange(0, 2**64 - 1), default=1, show_default=True, help="RNG seed (0 to 2^64-1).")
@click.option("--set", "sets", multiple=True, metavar="NAME=VALUE", help="Override a profile parameter.")
@click.option("--queues", "port_queues", type=IntRange(1, 65535), default=1, show_default=True,
              help="The port's rx queues: packets no rule sends anywhere go through its default RSS over 0..N-1.")
@click.option("--generator", type=click.Choice(["play", "timed_replay"]), default="play", show_default=True,
              help="The measurement server's generator setup (fixed latency only): play = a trace looped from "
                   "memory (PAM'21 Fig. 2), timed_replay = a pcap replayed at its timestamps (Figs. 3-4).")
@json_option
def simulate(nic: str, rules_file: str | None, generated: str | None, groups: int, trace: str | None,
             gen_spec: str | None, install_rate: str | None, install_batch: str | None, install_start: str,
             install_period: str,
             install_core: str, install_group: int, install_op: str, install_match: str, install_actions: int,
             cores: int, queue_map: str | None, duration: str | None, warmup: str, bin_: str, seed: int,
             sets: tuple[str, ...], port_queues: int, generator: str, as_json: bool) -> None:
    """Run traffic through a virtual NIC with pre-installed rules (and optional rule updates)."""
    from nicbench import connectx

    if rules_file and generated:
        raise NicbenchError("give either --rules FILE or --generated N, not both")
    if trace and gen_spec:
        raise NicbenchError("give either --trace PCAP or --gen SPEC, not both")
    if install_rate is not None and install_batch is not None:
        raise NicbenchError("give either --install-rate or --install-batch, not both")
    cap = connectx.MAX_RUN_RULES
    # An empty value ('--gen ""', a shell variable that was not set) is refused, not taken as "not given".
    rules = {"file": rules_file} if rules_file else connectx.generated_rules(
        parse_count("0" if generated is None else generated, at_most=cap, what="--generated"), groups, seed=seed)
    start_ns = parse_duration_ns(install_start, "--install-start", allow_zero=True)
    common = dict(start_ns=start_ns, group=install_group, core=install_core, op=install_op, match=install_match,
                  actions=install_actions)
    install = None
    if install_rate is None and install_batch is None and start_ns:  # a start time for an installer nobody asked for
        raise NicbenchError(f"--install-start {install_start.strip()} needs an installer: add --install-rate RATE "
                            "or --install-batch N")
    _refuse_ignored(generated is None, ("groups",), "--generated N (the generated rules' tables)")
    _refuse_ignored(install_rate is None and install_batch is None,
                    ("install_core", "install_group", "install_op", "install_match", "install_actions"),
                    "an installer: --install-rate RATE or --install-batch N")
    _refuse_ignored(install_rate is None, ("install_period",), "--install-rate RATE")
    if install_rate is not None:
        period_ns = parse_duration_ns(install_period, "--install-period", allow_zero=True)
        install = connectx.rate_install(parse_install_rate(install_rate), period_ns=period_ns, **common)
    elif install_batch is not None:
        install = connectx.batch_install(parse_count(install_batch, at_most=cap, what="--install-batch", at_least=1),
                                         **common)
    if gen_spec is not None and not gen_spec.strip():
        raise NicbenchError("--gen: empty; give KEY=VALUE pairs such as flows=10000,size=1500,rate=100Gbps, "
                            "or leave --gen out for those defaults")
    traffic = None if trace else connectx.parse_gen(gen_spec or "", seed=seed)
    duration_ns = parse_duration_ns(duration, "--duration") if duration is not None else _default_duration_ns(trace)
    if install is not None and start_ns >= duration_ns:  # the installer would never run
        run = (f"--duration {duration.strip()}" if duration is not None
               else "the trace's own duration" if trace else "the default --duration 1s")
        raise NicbenchError(f"--install-start {install_start.strip()} is not before the end of the run "
                            f"({run} = {duration_ns / 1e9:g} s): the installer would never run; start it "
                            f"earlier or run longer")
    if install_rate is not None and install["rate_per_s"] * max(0, duration_ns - start_ns) / 1e9 > cap:
        raise NicbenchError(f"--install-rate: {install_rate} for {(duration_ns - start_ns) / 1e9:g} s asks for "
                            f"{install['rate_per_s'] * (duration_ns - start_ns) / 1e9:,.0f} rule operations: at most "
                            f"{cap:,} per run")
    warmup_ns = parse_duration_ns(warmup, "--warmup", allow_zero=True)
    sc = connectx.scenario(nic=nic, rules=rules, duration_ns=duration_ns, traffic=traffic, trace=trace, install=install,
                       seed=seed, warmup_ns=warmup_ns, timeline_bin_ns=_timeline_bin_ns(bin_, duration_ns),
                       overrides=parse_overrides(sets, nic), port_queues=port_queues, cores=cores, generator=generator,
                       queue_map=None if queue_map is None else connectx.parse_queue_map(queue_map, cores=cores,
                                                                                         port_queues=port_queues))
    with progress_bar("simulating", total=duration_ns / 1e9, enabled=not as_json, unit="s") as update:
        try:
            result = connectx.simulate(sc, progress=lambda ns: update(ns / 1e9))
        except NicbenchError as exc:
            # The model names its scenario's field; the user wrote --gen (or took its default).
            text = str(exc)
            if text.startswith("scenario: traffic.rate: "):
                raise NicbenchError("--gen rate: " + text.removeprefix("scenario: traffic.rate: ")) from None
            raise
    if as_json:
        emit_json(result)
        return
    _print_result(nic, result)
    paced_us = (result.get("sim") or {}).get("link_paced_max_us") or 0.0
    if paced_us > 1.0:
        stderr_console.print(f"note: the traffic came faster than the port's line rate; the port paced it (the longest "
                          f"wait for the line: {fmt_number(paced_us)} µs), so offered and received are what the "
                          "link carried and latency starts when a packet left the port")


# Where a packet that did not come back was dropped, in the user's terms.
_DROP_CAUSES = (("rule", "your rules' drop action"), ("nic", "NIC packet buffer full"),
                ("imissed", "RX ring full (imissed)"))


def bottleneck_line(detail: dict[str, Any]) -> str:
    """The limiting resource in words: what it is, its cost per packet, the rate it allows, and the
    profile parameters behind it with their provenance (`model.bottleneck_detail` of a result)."""
    if not detail.get("resource"):
        return ""
    params = "; ".join(f"{name} = {fmt_number(p.get('value'))} {p.get('unit', '')} ({p.get('provenance', '')})"
                       for name, p in (detail.get("parameters") or {}).items())
    return (f"{detail['resource']}: {detail.get('what', '')}, {fmt_number(detail.get('ns_per_packet'))} ns/packet, "
            f"at most {fmt_number(detail.get('capacity_mpps'))} Mpps with this traffic"
            + (f" — {params}" if params else ""))


def _drops_by_cause(result: dict[str, Any]) -> str:
    """Packets not received, by cause: the rules' own drops (intended), the NIC buffer and the RX rings
    (overload)."""
    dropped = result.get("dropped") or {}
    return ", ".join(f"{label} {fmt_number(dropped.get(key, 0))}" for key, label in _DROP_CAUSES)


# The timeline's default bin, and the bins a shorter run gets at least (10 ms made a 10 ms run one bar).
_DEFAULT_BIN_NS = 10_000_000
_MIN_DEFAULT_BINS = 20


def _timeline_bin_ns(bin_: str | None, duration_ns: int) -> int:
    if bin_ is not None:
        return parse_duration_ns(bin_, "--bin")
    return max(1, min(_DEFAULT_BIN_NS, duration_ns // _MIN_DEFAULT_BINS))


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


def _print_result(nic: str, result: dict[str, Any]) -> None:
    table = Table(title=f"virtual {nic}", show_header=False, title_justify="left")
    table.add_column("what", style="bold")
    table.add_column("value")
    table.add_row("offered",
                  f"{fmt_number(result.get('offered_gbps'))} Gbps, {fmt_number(result.get('offered_mpps'))} Mpps")
    table.add_row("received", f"{fmt_number(result.get('rx_gbps'))} Gbps, {fmt_number(result.get('rx_mpps'))} Mpps "
                              f"(tx {fmt_number(result.get('tx_gbps'))} Gbps)")
    loss = result.get("loss_ratio")
    table.add_row("not received", f"{fmt_number(loss * 100 if isinstance(loss, (int, float)) else loss)} % of offered, "
                  "by cause: " + _drops_by_cause(result))
    lat = result.get("latency_us") or {}
    if lat:
        table.add_row("latency [µs]", "  ".join(f"{k} {fmt_number(lat.get(k))}" for k in
                                               ("p1", "p25", "p50", "p75", "p99", "p999", "max") if k in lat))
    floor = (result.get("model") or {}).get("latency_floor_us") or {}
    if floor:
        parts = "  ".join(f"{k} {fmt_number(v, 3)}" for k, v in floor.items())
        table.add_row("latency floor [µs]",
                      f"{fmt_number(sum(floor.values()), 4)} = {parts} (fixed: the testbed outside the "
                                            "modelled queues, fitted; above the floor: queueing)")
    inst = result.get("install")
    if inst:
        table.add_row("rule updates",
                      f"{fmt_number(inst.get('rules'))} rules in {fmt_number(inst.get('duration_s'))} s "
                                      f"({fmt_number(inst.get('rate_rules_per_s'))} rules/s)")
    model = result.get("model") or {}
    if model:
        table.add_row("model", "  ".join(f"{k} {v}" if isinstance(v, str) else f"{k} {fmt_number(v)}"
                                         for k, v in model.items() if not isinstance(v, dict)))
        for k, v in model.items():
            if isinstance(v, dict) and k not in ("latency_floor_us", "bottleneck_detail"):  # e.g. utilization
                table.add_row(f"model {k}", "  ".join(f"{kk} {fmt_number(vv, 3)}" for kk, vv in v.items()))
        limit = bottleneck_line(model.get("bottleneck_detail") or {})
        if limit:
            table.add_row("bottleneck", limit)
    for c in result.get("cores") or []:
        table.add_row(f"core {c['core']}", f"queues {', '.join(map(str, c['queues'])) or '-'}  "
                                           f"forwarded {fmt_number(c['packets'])}  "
                                           # Load: its packets at the cost of full bursts; busy: the share of
                                           # the run it worked (bursts as they came: small ones cost more).
                                           f"load {fmt_number(c['utilization'], 3)} at full bursts  "
                                           f"busy {fmt_number(c['busy_ratio'], 3)} of the run")
    queues = result.get("queues") or {}
    if queues:
        ordered = sorted(queues.items(), key=lambda kv: int(kv[0]))
        shown = ordered[:16]
        more = f" (+{len(ordered) - 16} more)" if len(ordered) > 16 else ""
        table.add_row("rx queue packets", "  ".join(f"{q}: {c['packets']:,}" for q, c in shown) + more)
        table.add_row("rx queue bytes", "  ".join(f"{q}: {c['bytes']:,}" for q, c in shown) + more)
    sim = result.get("sim") or {}
    if sim:
        table.add_row("simulation",
                      f"{fmt_number(sim.get('packets'))} packets in {fmt_number(sim.get('wall_s'), 3)} s wall "
                                    f"({fmt_number((sim.get('sim_packets_per_s') or math.nan) / 1e6, 3)} M packets/s)")
    stdout_console.print(table)
    timeline = result.get("timeline") or []
    if timeline:
        values = [row.get("rx_gbps") for row in timeline if isinstance(row, dict)]
        end = timeline[-1].get("t_s", math.nan) if isinstance(timeline[-1], dict) else math.nan
        top = result.get("offered_gbps")
        stdout_console.print(f"rx Gbps over time (0–{fmt_number(end, 3)} s, "
                             f"full height = offered {fmt_number(top)} Gbps):")
        stdout_console.print(f"[cyan]|{sparkline(values, top)}|[/]")
    for ev in result.get("events") or []:
        if isinstance(ev, dict):
            stdout_console.print(f"  t = {fmt_number(ev.get('t_s'), 4)} s: {ev.get('what', '')}")


# Each command's first help sentence, read by `nicbench --help` without importing this module.
SUMMARIES = {
    "simulate": 'Run traffic through a virtual NIC with pre-installed rules (and optional rule updates).',
}
COMMANDS = [simulate]
