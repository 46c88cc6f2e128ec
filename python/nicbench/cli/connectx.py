"""`nicbench simulate` and `nicbench calibrate`: the virtual NICs on the command line.

Commands exported for registration in `nicbench.cli`: `simulate`, `calibrate` (see `COMMANDS`).
Bad options and bad input are NicbenchError/ValueError: the group prints one line, exit code 2.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable

import click
from rich.table import Table

from nicbench.cli.common import emit_json, json_option, parse_overrides, progress_bar, stderr_console, stdout_console
from nicbench.errors import NicbenchError
from nicbench.units import parse_count, parse_duration_ns

__all__ = ["simulate", "calibrate", "COMMANDS", "sparkline", "parse_install_rate"]

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
            return float(s[:-1]) * (1e3 if s[-1] == "k" else 1e6)
        return float(s)
    except ValueError:
        raise NicbenchError(f"--install-rate: expected a rate such as 100k/s, found {text!r}") from None


@click.command()
@click.option("--nic", default="connectx5", show_default=True, help="Profile name (see profiles/) or a .toml path.")
@click.option("--rules", "rules_file", type=click.Path(dir_okay=False), default=None,
              help="Pre-installed rules: a testpmd `flow create` or tc flower file.")
@click.option("--generated", default=None, help="Pre-installed generated exact-match rules instead (65536, 2M).")
@click.option("--groups", type=click.IntRange(0, 64), default=0, show_default=True,
              help="With --generated: 0 = all in Table 0; T = spread over Tables 1..T (PAM'21 layout).")
@click.option("--trace", type=click.Path(dir_okay=False), default=None, help="Replay this pcap at its timestamps.")
@click.option("--gen", "gen_spec", default=None,
              help="Generated traffic: flows=10000,size=1500,rate=100Gbps (default when no --trace).")
@click.option("--install-rate", default=None, help="Insert rules at this rate during the run (100k/s).")
@click.option("--install-batch", default=None, help="Insert one batch of this many rules (10k) at --install-start.")
@click.option("--install-start", default="0s", show_default=True, help="When the installer starts (virtual time).")
@click.option("--install-core", type=click.Choice(["same", "distinct"]), default="same", show_default=True,
              help="Installer on the forwarding core or on a distinct core.")
@click.option("--install-group", type=click.IntRange(0, 64), default=0, show_default=True, help="Target table.")
@click.option("--install-op", type=click.Choice(["insert", "delete", "update", "update_inplace"]), default="insert",
              show_default=True)
@click.option("--install-match", type=click.Choice(["ipv4", "ipv6", "vlan", "tunnel"]), default="ipv4",
              show_default=True)
@click.option("--install-actions", type=click.IntRange(1, 16), default=1, show_default=True)
@click.option("--duration", default="1s", show_default=True, help="Virtual time to simulate.")
@click.option("--warmup", default="0s", show_default=True, help="Virtual time before measuring.")
@click.option("--bin", "bin_", default="10ms", show_default=True, help="Throughput timeline bin.")
@click.option("--seed", type=int, default=1, show_default=True)
@click.option("--set", "sets", multiple=True, metavar="NAME=VALUE", help="Override a profile parameter.")
@json_option
def simulate(nic: str, rules_file: str | None, generated: str | None, groups: int, trace: str | None,
             gen_spec: str | None, install_rate: str | None, install_batch: str | None, install_start: str,
             install_core: str, install_group: int, install_op: str, install_match: str, install_actions: int,
             duration: str, warmup: str, bin_: str, seed: int, sets: tuple[str, ...], as_json: bool) -> None:
    """Run traffic through a virtual NIC with pre-installed rules (and optional rule updates)."""
    from nicbench import vnic

    if rules_file and generated:
        raise NicbenchError("give either --rules FILE or --generated N, not both")
    if trace and gen_spec:
        raise NicbenchError("give either --trace PCAP or --gen SPEC, not both")
    if install_rate and install_batch:
        raise NicbenchError("give either --install-rate or --install-batch, not both")
    rules = {"file": rules_file} if rules_file else vnic.generated_rules(parse_count(generated or "0"), groups,
                                                                          seed=seed)
    start_ns = 0 if install_start.strip() in ("0", "0s") else parse_duration_ns(install_start)
    common = dict(start_ns=start_ns, group=install_group, core=install_core, op=install_op, match=install_match,
                  actions=install_actions)
    install = None
    if install_rate:
        install = vnic.rate_install(parse_install_rate(install_rate), **common)
    elif install_batch:
        install = vnic.batch_install(parse_count(install_batch), **common)
    traffic = None if trace else vnic.parse_gen(gen_spec or "", seed=seed)
    duration_ns = parse_duration_ns(duration)
    warmup_ns = 0 if warmup.strip() in ("0", "0s") else parse_duration_ns(warmup)
    sc = vnic.scenario(nic=nic, rules=rules, duration_ns=duration_ns, traffic=traffic, trace=trace, install=install,
                       seed=seed, warmup_ns=warmup_ns, timeline_bin_ns=parse_duration_ns(bin_),
                       overrides=parse_overrides(sets))
    with progress_bar("simulating", total=duration_ns / 1e9, enabled=not as_json) as update:
        result = vnic.simulate(sc, progress=lambda ns: update(ns / 1e9))
    if as_json:
        emit_json(result)
        return
    _print_result(nic, result)


def _fmt(v: Any, digits: int = 4) -> str:
    if isinstance(v, (int, float)) and math.isfinite(v):
        return f"{v:,.{digits}g}" if abs(v) < 1e6 else f"{v:,.0f}"
    return "–"


def _print_result(nic: str, result: dict[str, Any]) -> None:
    table = Table(title=f"virtual {nic}", show_header=False, title_justify="left")
    table.add_column("what", style="bold")
    table.add_column("value")
    table.add_row("offered", f"{_fmt(result.get('offered_gbps'))} Gbps, {_fmt(result.get('offered_mpps'))} Mpps")
    table.add_row("received", f"{_fmt(result.get('rx_gbps'))} Gbps, {_fmt(result.get('rx_mpps'))} Mpps "
                              f"(tx {_fmt(result.get('tx_gbps'))} Gbps)")
    loss = result.get("loss_ratio")
    dropped = result.get("dropped") or {}
    table.add_row("loss", f"{_fmt(loss * 100 if isinstance(loss, (int, float)) else loss)} %  "
                  + ", ".join(f"{k} {_fmt(v)}" for k, v in dropped.items()))
    lat = result.get("latency_us") or {}
    if lat:
        table.add_row("latency [µs]", "  ".join(f"{k} {_fmt(lat.get(k))}" for k in
                                               ("p1", "p25", "p50", "p75", "p99", "p999", "max") if k in lat))
    inst = result.get("install")
    if inst:
        table.add_row("rule updates", f"{_fmt(inst.get('rules'))} rules in {_fmt(inst.get('duration_s'))} s "
                                      f"({_fmt(inst.get('rate_rules_per_s'))} rules/s)")
    model = result.get("model") or {}
    if model:
        table.add_row("model", "  ".join(f"{k} {v}" if isinstance(v, str) else f"{k} {_fmt(v)}"
                                         for k, v in model.items() if not isinstance(v, dict)))
        for k, v in model.items():
            if isinstance(v, dict):  # e.g. utilization per resource
                table.add_row(f"model {k}", "  ".join(f"{kk} {_fmt(vv, 3)}" for kk, vv in v.items()))
    queues = result.get("queues") or {}
    if queues:
        shown = list(queues.items())[:8]
        more = f" (+{len(queues) - 8} more)" if len(queues) > 8 else ""
        table.add_row("queues [packets]", "  ".join(f"{q}: {_fmt(n)}" for q, n in shown) + more)
    sim = result.get("sim") or {}
    if sim:
        table.add_row("simulation", f"{_fmt(sim.get('packets'))} packets in {_fmt(sim.get('wall_s'), 3)} s wall "
                                    f"({_fmt((sim.get('sim_packets_per_s') or math.nan) / 1e6, 3)} M packets/s)")
    stdout_console.print(table)
    timeline = result.get("timeline") or []
    if timeline:
        values = [row.get("rx_gbps") for row in timeline if isinstance(row, dict)]
        end = timeline[-1].get("t_s", math.nan) if isinstance(timeline[-1], dict) else math.nan
        top = result.get("offered_gbps")
        stdout_console.print(f"rx Gbps over time (0–{_fmt(end, 3)} s, full height = offered {_fmt(top)} Gbps):")
        stdout_console.print(f"[cyan]|{sparkline(values, top)}|[/]")
    for ev in result.get("events") or []:
        if isinstance(ev, dict):
            stdout_console.print(f"  t = {_fmt(ev.get('t_s'), 4)} s: {ev.get('what', '')}")


LOCAL_FLOWMETER = "flowmeter-local"


def _calibrate_flowmeter_local(log: Callable[[str], None], as_json: bool) -> None:
    import dataclasses

    from nicbench.flowhost import calibrate_local

    outcome = calibrate_local(log=log)
    if as_json:
        emit_json({k: (str(v) if isinstance(v, Path) else v) for k, v in dataclasses.asdict(outcome).items()})
        return
    table = Table(title="nicbench flow meter on this machine (1 worker, 64 B)", title_justify="left")
    for col in ("flows", "measured Mpps", "measured ns/packet", "model ns/packet"):
        table.add_column(col, justify="right")
    for pt in outcome.points:
        table.add_row(f"{pt['flows']:,.0f}", _fmt(pt["mpps"], 3), _fmt(pt["packet_ns"], 3), _fmt(pt["model_ns"], 3))
    stdout_console.print(table)
    stdout_console.print(f"base {_fmt(outcome.base_cycles_per_packet, 3)} cycles/packet, LLC hit "
                         f"{_fmt(outcome.llc_hit_ns, 3)} ns, LLC miss {_fmt(outcome.llc_miss_ns, 3)} ns, "
                         f"rms error {outcome.rms_rel_error:.1%}; wrote {outcome.path}")


@click.command()
@click.argument("nic")
@click.option("--study", default=None,
              help="Study whose calibration set is fitted [default: the profile's calibration_study, else pam21].")
@click.option("--studies", "studies_dir", type=click.Path(file_okay=False), default=None,
              help="Studies folder (default: $NICBENCH_STUDIES, ./studies or the checkout's).")
@click.option("--dry-run", is_flag=True, help="Fit and report, but do not write the profile.")
@click.option("--no-validate", is_flag=True, help="Skip the validation run of the whole reference file.")
@click.option("--param", "params", multiple=True, help="Fit only this parameter (repeatable).")
@click.option("--sweeps", type=click.IntRange(1, 20), default=None, help="Coordinate-descent sweeps.")
@click.option("--line-evals", type=click.IntRange(3, 50), default=None, help="Runs per line search.")
@click.option("--jobs", "-j", type=click.IntRange(1, 1024), default=None, help="Parallel runs (default: cores).")
@json_option
def calibrate(nic: str, study: str | None, studies_dir: str | None, dry_run: bool, no_validate: bool,
              params: tuple[str, ...], sweeps: int | None, line_evals: int | None, jobs: int | None,
              as_json: bool) -> None:
    """Fit NIC's opaque profile parameters to a study's calibration set (least squares).

    `nicbench calibrate flowmeter-local` instead measures nicbench's own flow meter on this machine
    and writes `profiles/flowmeter-local.toml` (a host profile for the argus100g model).
    """
    from nicbench.calibrate import calibrate as run_calibration

    def log(line: str) -> None:
        if not as_json:
            stderr_console.print(f"[dim]{line}[/]")

    if nic == LOCAL_FLOWMETER:
        _calibrate_flowmeter_local(log, as_json)
        return

    outcome = run_calibration(nic, study=study, studies_dir=studies_dir, write=not dry_run, validate=not no_validate,
                              jobs=jobs, parameters=list(params) or None, sweeps=sweeps, line_evals=line_evals,
                              log=log)
    if as_json:
        emit_json(outcome.as_dict())
        return
    table = Table(title=f"fitted parameters of {outcome.profile}", title_justify="left")
    for col in ("parameter", "start", "fitted", "bounds"):
        table.add_column(col)
    for name, p in outcome.parameters.items():
        table.add_row(name, _fmt(p["start"], 5), _fmt(p["fitted"], 5), f"[{_fmt(p['low'], 3)}, {_fmt(p['high'], 3)}]")
    stdout_console.print(table)
    errors = Table(title=f"errors on study {outcome.study}", title_justify="left")
    for col in ("set", "entries", "pass", "fail", "median |relative error|", "rms residual (tolerances)"):
        errors.add_column(col)
    for set_name, s in outcome.summary.items():
        errors.add_row(set_name, str(s["entries"]), str(s["passed"]), str(s["failed"]),
                       f"{s['median_abs_rel_error']:.1%}" if math.isfinite(s["median_abs_rel_error"]) else "–",
                       _fmt(s["rms_residual"], 3))
    stdout_console.print(errors)
    worst = sorted((r for r in outcome.rows if r["status"] != "pass"),
                   key=lambda r: -abs(r["rel_error"]) if math.isfinite(r["rel_error"]) else -math.inf)[:10]
    if worst:
        t = Table(title="largest misses", title_justify="left")
        for col in ("id", "set", "metric", "published", "model", "error"):
            t.add_column(col)
        for r in worst:
            t.add_row(r["id"], r["set"], r["metric"], _fmt(r["value"]), _fmt(r["model"]),
                      f"{r['rel_error']:+.0%}" if math.isfinite(r["rel_error"]) else r["status"])
        stdout_console.print(t)
    for label, err in list(outcome.errors.items())[:5]:
        stderr_console.print(f"[red]failed run[/] {label}: {err}")
    stdout_console.print(f"{outcome.runs} runs in {outcome.elapsed_s:.1f} s; "
                         + ("profile updated" if outcome.written else "profile NOT written (--dry-run)"))


COMMANDS = [simulate, calibrate]
