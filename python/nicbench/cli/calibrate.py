"""`nicbench calibrate`: fit a profile's opaque parameters to a study (fronts `nicbench.calibrate`).

Works for every profile with a calibration study (connectx5 -> pam21, argus-host -> argus100g,
bluefield2 -> offpath, connectx5-25g and agilio-cx-25g -> ovs-offload); `flowmeter-local` instead
measures nicbench's own flow meter on this machine (`nicbench.flowhost.calibrate_local`). Bad input
is NicbenchError/ValueError: the group prints one line, exit code 2.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from nicbench.cli.common import (
    IntRange,
    NonEmptyPath,
    counted,
    emit_json,
    ensure_parent,
    first_set_off_default,
    fmt_number,
    json_option,
    print_table,
    spinner,
    stderr_console,
    stdout_console,
)

__all__ = ["calibrate", "COMMANDS"]

LOCAL_FLOWMETER = "flowmeter-local"


def _calibrate_flowmeter_local(log: Callable[[str], None], as_json: bool) -> None:
    import dataclasses

    from nicbench.flowhost import calibrate_local

    with spinner("measuring nicbench's flow meter on this machine", enabled=not as_json):
        outcome = calibrate_local(log=log)
    if as_json:
        emit_json({k: (str(v) if isinstance(v, Path) else v) for k, v in dataclasses.asdict(outcome).items()})
        return
    table = Table(title="nicbench flow meter on this machine (1 worker, 64 B)", title_justify="left")
    for col in ("flows", "measured Mpps", "measured ns/packet", "model ns/packet"):
        table.add_column(col, justify="right")
    for pt in outcome.points:
        table.add_row(
            f"{pt['flows']:,.0f}",
            fmt_number(pt["mpps"], 3),
            fmt_number(pt["packet_ns"], 3),
            fmt_number(pt["model_ns"], 3),
        )
    print_table(table)
    stdout_console.print(
        f"base {fmt_number(outcome.base_cycles_per_packet, 3)} cycles/packet, LLC hit "
        f"{fmt_number(outcome.llc_hit_ns, 3)} ns, LLC miss {fmt_number(outcome.llc_miss_ns, 3)} ns, "
        f"rms error {outcome.rms_rel_error:.1%}; wrote {outcome.path}"
    )


@click.command()
@click.argument("args", nargs=-1, metavar="[NIC]")
@click.option(
    "--base",
    default=None,
    metavar="PROFILE",
    help="Few-shot: fit a new device's profile starting from this one (with --measurements, -o).",
)
@click.option(
    "--measurements",
    "measurements",
    multiple=True,
    metavar="FILE...",
    help="Few-shot: measurement files (tidy export or digitized-figure CSV); several may follow.",
)
@click.option(
    "-o",
    "--output",
    default=None,
    type=NonEmptyPath(dir_okay=False),
    help="Few-shot: the profile to write (kept: its own datasheet parameters, if it exists).",
)
@click.option(
    "--set",
    "sets",
    multiple=True,
    metavar="NAME=VALUE",
    help="Few-shot: a datasheet difference from the base profile (never fitted; repeatable).",
)
@click.option(
    "--study",
    default=None,
    help="Study whose calibration set is fitted [default: the profile's calibration_study, else pam21].",
)
@click.option(
    "--studies",
    "studies_dir",
    type=NonEmptyPath(file_okay=False),
    default=None,
    help="Studies folder (default: $NICBENCH_STUDIES, ./studies or the checkout's).",
)
@click.option("--dry-run", is_flag=True, help="Fit and report, but do not write the profile.")
@click.option("--no-validate", is_flag=True, help="Skip the validation run of the whole reference file.")
@click.option("--param", "params", multiple=True, help="Fit only this parameter (repeatable).")
@click.option("--sweeps", type=IntRange(1, 20), default=None, help="Coordinate-descent sweeps.")
@click.option("--line-evals", type=IntRange(3, 50), default=None, help="Runs per line search.")
@click.option("--jobs", "-j", type=IntRange(1, 1024), default=None, help="Parallel runs (default: cores).")
@click.option(
    "--scheduler",
    default=None,
    metavar="tcp://HOST:PORT|local:N",
    help="Run the model evaluations as Dask tasks: a scheduler's address, or local:N to start N local "
    "worker processes (default: local processes, --jobs).",
)
@click.option(
    "--allow-saturated", is_flag=True, help="Fit even with no more independent calibration points than free parameters."
)
@json_option
def calibrate(
    args: tuple[str, ...],
    base: str | None,
    measurements: tuple[str, ...],
    output: str | None,
    sets: tuple[str, ...],
    study: str | None,
    studies_dir: str | None,
    dry_run: bool,
    no_validate: bool,
    params: tuple[str, ...],
    sweeps: int | None,
    line_evals: int | None,
    jobs: int | None,
    scheduler: str | None,
    allow_saturated: bool,
    as_json: bool,
) -> None:
    """Fit a NIC profile's opaque parameters to a study's calibration set, or to your measurements.

    Few-shot, for a device the study did not measure:

      nicbench calibrate --base connectx5 --measurements mine.csv [more.csv ...] -o mine.toml

    frees only the parameters the measurements identify (and says why), inherits the rest from the
    base profile, and writes a profile usable everywhere a profile name is (`simulate --nic
    mine.toml`). `nicbench calibrate mine.toml` repeats a recorded few-shot fit.

    `nicbench calibrate flowmeter-local` instead measures nicbench's own flow meter on this machine
    and writes `profiles/flowmeter-local.toml` (a host profile for the argus100g model).
    """
    from nicbench.calibrate import calibrate as run_calibration

    def log(line: str) -> None:
        if not as_json:
            stderr_console.print(f"[dim]{line}[/]")

    fewshot_fit = base is not None or measurements or output is not None or sets
    if study is not None and not study.strip():
        raise click.BadParameter("'' is empty (give a study name such as pam21)", param_hint="--study")
    if fewshot_fit:
        _refuse_full_fit_options("a few-shot fit (--base, --measurements, -o, --set)")
    if not fewshot_fit and len(args) != 1:
        raise click.UsageError("give one NIC profile (or --base PROFILE --measurements FILE... -o OUT.toml)")
    if not fewshot_fit and args[0] == LOCAL_FLOWMETER:
        if scheduler is not None:
            raise click.UsageError("--scheduler: calibrate flowmeter-local measures this machine; it runs here")
        _calibrate_flowmeter_local(log, as_json)
        return
    from nicbench.cli.experiments import open_cli_scheduler

    sched = open_cli_scheduler(scheduler, as_json)
    if fewshot_fit:
        _fewshot(args, base, measurements, output, sets, study, studies_dir, dry_run, jobs, log, as_json, sched)
        return
    nic = args[0]
    from nicbench.profiles import load

    if load(nic).get("fitted_on"):
        from nicbench.calibrate.fewshot import refit

        _refuse_full_fit_options(f"repeating the few-shot fit recorded in {nic}", ("study",))

        with spinner(f"refitting {nic} (minutes)", enabled=not as_json):
            outcome_fewshot = refit(
                nic, jobs=jobs, write=not dry_run, studies_dir=studies_dir, log=log, scheduler=sched
            )
        _print_fewshot(outcome_fewshot, as_json)
        return

    with spinner(f"calibrating {nic} (minutes)", enabled=not as_json):
        outcome = run_calibration(
            nic,
            study=study,
            studies_dir=studies_dir,
            write=not dry_run,
            validate=not no_validate,
            jobs=jobs,
            parameters=list(params) or None,
            sweeps=sweeps,
            line_evals=line_evals,
            allow_saturated=allow_saturated,
            log=log,
            scheduler=sched,
        )
    if as_json:
        emit_json(outcome.as_dict())
        return
    table = Table(
        title=f"fitted parameters of {outcome.profile}: {len(outcome.parameters)} free on "
        f"{outcome.points} independent calibration points",
        title_justify="left",
    )
    table.add_column("parameter", no_wrap=True, overflow="fold")  # typed back in --set/--param: never cut
    for col in ("start", "fitted", "± 1σ", "bounds", "data constrain it"):
        table.add_column(col, no_wrap=col != "data constrain it")
    for name, p in outcome.parameters.items():
        c = outcome.certainty.get(name)
        sigma = _sigma_cell(c, p)
        verdict = "–" if c is None else ("yes" if c.constrained else f"no: {c.reason}")
        if c is not None and c.constrained and abs(c.max_correlation) > 0.9:
            verdict += f" (corr {c.max_correlation:+.2f} with {c.correlated_with})"
        table.add_row(
            name,
            fmt_number(p["start"], 5),
            fmt_number(p["fitted"], 5),
            sigma,
            f"[{fmt_number(p['low'], 3)}, {fmt_number(p['high'], 3)}]",
            verdict,
        )
    print_table(table)
    errors = Table(title=f"errors on study {outcome.study}", title_justify="left")
    for col in ("set", "entries", "pass", "fail", "median |relative error|", "rms residual (tolerances)"):
        errors.add_column(col)
    for set_name, s in outcome.summary.items():
        errors.add_row(
            set_name,
            str(s["entries"]),
            str(s["passed"]),
            str(s["failed"]),
            f"{s['median_abs_rel_error']:.1%}" if math.isfinite(s["median_abs_rel_error"]) else "–",
            fmt_number(s["rms_residual"], 3),
        )
    print_table(errors)
    worst = sorted(
        (r for r in outcome.rows if r["status"] != "pass"),
        key=lambda r: -abs(r["rel_error"]) if math.isfinite(r["rel_error"]) else -math.inf,
    )[:10]
    if worst:
        t = Table(title="largest misses", title_justify="left")
        for col in ("id", "set", "metric", "published", "model", "error"):
            t.add_column(col)
        for r in worst:
            t.add_row(
                r["id"],
                r["set"],
                r["metric"],
                fmt_number(r["value"]),
                fmt_number(r["model"]),
                f"{r['rel_error']:+.0%}" if math.isfinite(r["rel_error"]) else r["status"],
            )
        print_table(t)
    for label, err in list(outcome.errors.items())[:5]:
        stderr_console.print(f"[red]failed run[/] {label}: {err}")
    stdout_console.print(
        f"{outcome.runs} runs in {outcome.elapsed_s:.1f} s; "
        + ("profile updated" if outcome.written else "profile NOT written (--dry-run)")
    )


def _sigma_cell(c: Any, p: dict[str, float]) -> str:
    """The fit's 1σ for people: wider than the parameter's bounds, it says only that (the data leave
    the parameter anywhere in them), not a 19-digit number."""
    if c is None or not math.isfinite(c.sigma):
        return "–"
    if c.sigma > p["high"] - p["low"]:
        return "> its bounds"
    return f"{fmt_number(c.sigma, 2)} ({c.rel_sigma:.0%})"


# Options of the full calibration (`calibrate NIC`) that a few-shot fit or a refit does not take.
_FULL_FIT_OPTIONS = ("params", "sweeps", "line_evals", "no_validate", "allow_saturated")


def _refuse_full_fit_options(mode: str, also: tuple[str, ...] = ()) -> None:
    """A full-fit option given to a fit that ignores it is refused, not silently dropped."""
    given = first_set_off_default((*_FULL_FIT_OPTIONS, *also))
    if given is not None:
        raise click.UsageError(
            f"{given[0]} applies to a full calibration (calibrate NIC), not to {mode}", click.get_current_context()
        )


def _fewshot(args, base, measurements, output, sets, study, studies_dir, dry_run, jobs, log, as_json, sched) -> None:
    from nicbench.calibrate.fewshot import fewshot

    if base is None or not measurements or output is None:
        raise click.UsageError("a few-shot fit needs --base PROFILE, --measurements FILE... and -o OUT.toml")
    extra = [a for a in args if not Path(a).is_file()]
    if extra:
        raise click.UsageError(f"{extra[0]}: no such measurements file (a few-shot fit takes no NIC argument)")
    if not dry_run:  # before the minute of fitting, not after it
        ensure_parent(output, "-o")
    values = {}
    for item in sets:
        name, sep, raw = item.partition("=")
        try:
            values[name.strip()] = float(raw)
        except ValueError:
            raise click.BadParameter(f"{item!r}: expected NAME=NUMBER", param_hint="--set") from None
        if not sep or not name.strip() or not math.isfinite(values[name.strip()]):
            raise click.BadParameter(f"{item!r}: expected NAME=NUMBER", param_hint="--set")
    with spinner(f"fitting {output} on {base} (minutes)", enabled=not as_json):
        outcome = fewshot(
            base,
            list(measurements) + list(args),
            output,
            sets=values,
            study=study,
            studies_dir=studies_dir,
            jobs=jobs,
            write=not dry_run,
            log=log,
            scheduler=sched,
        )
    _print_fewshot(outcome, as_json)


def _print_fewshot(outcome, as_json: bool) -> None:
    if as_json:
        emit_json(outcome.as_dict())
        return
    free = [s for s in outcome.selection if s.free]
    table = Table(
        title=f"{outcome.profile}: {counted(len(free), 'parameter')} freed on "
        f"{counted(outcome.points, 'independent measured point')} (base {outcome.base}, study "
        f"{outcome.study})",
        title_justify="left",
    )
    # Numbers in the table, the prose under it: beside a 33-character name an 80-column table has no
    # room for a sentence per row, and the name is what a user types back in --set (never cut).
    table.add_column("parameter", no_wrap=True, overflow="fold")
    for col in (outcome.base, "fitted", "± 1σ"):
        table.add_column(col, no_wrap=True, justify="right")
    for s in free:
        p, c = outcome.parameters[s.name], outcome.certainty.get(s.name)
        table.add_row(s.name, fmt_number(p["start"], 5), fmt_number(p["fitted"], 5), _sigma_cell(c, p))
    print_table(table)
    for s in free:
        c = outcome.certainty.get(s.name)
        why = s.reason if c is None or c.constrained else f"{s.reason}; after the fit: {c.reason}"
        stdout_console.print(f"freed {s.name}: {why}", highlight=False, soft_wrap=True)
    kept: dict[str, list[str]] = {}
    for s in outcome.selection:
        if not s.free:
            kept.setdefault(s.reason.split(":")[0], []).append(s.name)
    for why, names in kept.items():
        stdout_console.print(f"kept ({why}): {', '.join(names)}", highlight=False, soft_wrap=True)
    if outcome.never_freed:
        stdout_console.print(
            "never freed (the testbed's, or given for this device): " + ", ".join(outcome.never_freed),
            highlight=False,
            soft_wrap=True,
        )
    errors = Table(title="error on the measurements", title_justify="left")
    for col in ("profile", "entries", "within tolerance", "median |relative error|"):
        errors.add_column(col)
    for label, s in (("zero-shot (before the fit)", outcome.zero_shot), ("fitted", outcome.fitted)):
        errors.add_row(
            label,
            str(s["entries"]),
            str(s["passed"]),
            f"{s['median_abs_rel_error']:.1%}" if math.isfinite(s["median_abs_rel_error"]) else "–",
        )
    print_table(errors)
    for label, err in list(outcome.errors.items())[:5]:
        stderr_console.print(f"[red]failed run[/] {label}: {err}")
    stdout_console.print(
        f"{outcome.runs} runs in {outcome.elapsed_s:.1f} s; "
        + (f"wrote {outcome.profile}" if outcome.written else "profile NOT written (--dry-run)")
    )


# Each command's first help sentence, read by `nicbench --help` without importing this module.
SUMMARIES = {
    "calibrate": "Fit a NIC profile's opaque parameters to a study's calibration set, or to your measurements.",
}
COMMANDS = [calibrate]
