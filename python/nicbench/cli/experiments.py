"""`nicbench run | check | report | results | reproduce`: the experiment harness on the command line.

Commands exported for registration in `nicbench.cli`: `run`, `check`, `report`, `results`,
`reproduce` (see `COMMANDS`). Spec mistakes, unknown targets and unusable result folders
are ValueError/OSError subclasses: the group prints one line and exits with code 2.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.table import Table

from nicbench.cli.common import (
    Interrupted,
    IntRange,
    NonEmptyPath,
    SpecFile,
    WholeHelpGroup,
    counted,
    emit_json,
    ensure_parent,
    json_option,
    print_table,
    set_off_default,
    spinner,
    stderr_console,
    stdout_console,
)

if TYPE_CHECKING:
    from nicbench.experiments.runner import RunSummary

__all__ = ["run", "check", "report", "results", "reproduce", "COMMANDS"]

# What an interrupted `run` or `reproduce` keeps (`nicbench: interrupted: ...`).
RUNS_KEPT = "finished runs are stored — re-run the same command to resume"

results_option = click.option(
    "--results",
    "results_dir",
    type=NonEmptyPath(),
    default=None,
    help="Results root (default: $NICBENCH_RESULTS or ./results).",
)
jobs_option = click.option(
    "--jobs",
    "-j",
    type=IntRange(1, 1024),
    default=None,
    help="Parallel worker processes (default: number of cores; 1: in-process).",
)
scheduler_option = click.option(
    "--scheduler",
    default=None,
    metavar="tcp://HOST:PORT|local:N",
    help="Run on a Dask cluster: a scheduler's address, or local:N to start N local worker processes "
    "(default: local worker processes, --jobs).",
)
timeout_option = click.option(
    "--timeout",
    "timeout",
    default=None,
    metavar="DURATION",
    help="Per-run timeout, seconds or a duration such as 10min (default: the spec's timeout, else 600 s); "
    "a run past it is stopped and stored as failed.",
)


def _timeout_s(text: str | None) -> float | None:
    from nicbench.experiments.spec import parse_timeout_s
    from nicbench.units import UnitError

    if text is None:
        return None
    try:
        return parse_timeout_s(text)
    except UnitError as exc:
        raise click.BadParameter(str(exc), param_hint="--timeout") from None


def open_cli_scheduler(address: str | None, quiet: bool) -> Any:
    """The Dask scheduler of --scheduler (None without it); closed when the command ends."""
    if address is None:
        return None
    from nicbench.experiments.scheduler import open_scheduler

    sched = open_scheduler(address)
    click.get_current_context().call_on_close(sched.close)
    if not quiet:
        dashboard = sched.dashboard
        stderr_console.print(
            f"dask: {address}, {len(sched.workers())} workers" + (f"; dashboard {dashboard}" if dashboard else ""),
            highlight=False,
            soft_wrap=True,
        )
    return sched


def _key_values(items: tuple[str, ...], what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        if not item.strip():  # an empty --set (an unset shell variable) is a mistake, not "nothing to set"
            raise click.BadParameter(f"expected NAME=VALUE, found {item!r}", param_hint=what)
        for part in item.split(","):
            if not part.strip():  # a trailing comma: a=1,b=2,
                continue
            if "=" not in part:
                raise click.BadParameter(f"expected NAME=VALUE, found {part!r}", param_hint=what)
            k, v = part.split("=", 1)
            out[k.strip()] = v.strip()
    return out


reuse_stale_option = click.option(
    "--reuse-stale",
    is_flag=True,
    help="Answer runs from stored results made by other code or other profile/input files "
    "(stale: see `nicbench results ls`) instead of running them again.",
)


# How many of a parameter's values an error about --only lists.
_ONLY_VALUES_SHOWN = 6


def _check_only_matches(spec: Any, only_points: dict[str, Any], texts: tuple[str, ...]) -> None:
    """`--only` selecting no point of the sweep is a mistake (a typo, a unit): refused naming the
    pattern and, for each parameter it names, some of the values the sweep has."""
    from nicbench.experiments.runner import select_points

    points = spec.run_points()
    if not only_points or select_points(points, only_points):
        return
    have = []
    for name in only_points:
        values = sorted({str(p.get(name)) for p in points}, key=lambda v: (len(v), v))
        shown = ", ".join(values[:_ONLY_VALUES_SHOWN]) + (", ..." if len(values) > _ONLY_VALUES_SHOWN else "")
        have.append(f"{name} in {{{shown}}}")
    raise click.BadParameter(
        f"{','.join(texts)} matches none of the {len(points):,} points of {spec.name} "
        f"(its points have {'; '.join(have)})",
        param_hint="--only",
    )


def _print_summary(s: RunSummary) -> None:
    failed = f", [red]{s.failed} failed[/]" if s.failed else ""
    stale = f" ([yellow]{s.stale_reused} of them stale, reused[/])" if s.stale_reused else ""
    stdout_console.print(
        f"[bold]{s.experiment}[/]: {counted(s.points, 'point')}; "
        f"{counted(s.executed, 'run')} executed, {s.cached} already stored{stale}{failed} "
        f"in {s.elapsed_s:.1f} s → {s.store}",
        highlight=False,
        soft_wrap=True,
    )
    if s.workers_lost:
        stdout_console.print(
            f"  Dask workers lost during the sweep: {', '.join(s.workers_lost)}; "
            f"{s.retried} runs re-run by Dask on other workers",
            highlight=False,
            soft_wrap=True,
        )
    if s.failed:
        stdout_console.print(
            "  failed runs are recorded (exit status 1); re-run the same command to retry them",
            highlight=False,
            soft_wrap=True,
        )


@click.command()
@click.argument("spec_file", metavar="SPEC", type=SpecFile())
@click.option("--repeat", type=IntRange(1, 100_000), default=None, help="Repetitions per point (overrides the spec).")
@jobs_option
@click.option("--fresh", is_flag=True, help="Forget this experiment's stored runs and run everything again.")
@results_option
@click.option(
    "--set", "sets", multiple=True, metavar="NAME=VALUE", help="Override a parameter (e.g. --set packets=10k)."
)
@click.option("--only", multiple=True, metavar="NAME=VALUE[,...]", help="Run only points with these parameter values.")
@click.option("--rep", "reps", type=IntRange(0, None), multiple=True, help="Run only this repetition (from 0).")
@click.option("--rerun", is_flag=True, help="Run the selected runs again even if stored (replay).")
@click.option("--limit-points", type=IntRange(1, None), default=None, help="Only the first N points (smoke test).")
@reuse_stale_option
@click.option(
    "--backend",
    default=None,
    metavar="NAME",
    help="What answers the runs (default: the target's own, usually `virtual`): e.g. `ovs`, a real Open "
    "vSwitch here. Its runs go to results/<experiment>--<backend>.",
)
@scheduler_option
@timeout_option
@json_option
def run(
    spec_file: str,
    repeat: int | None,
    jobs: int | None,
    fresh: bool,
    results_dir: str | None,
    sets: tuple[str, ...],
    only: tuple[str, ...],
    reps: tuple[int, ...],
    rerun: bool,
    limit_points: int | None,
    reuse_stale: bool,
    backend: str | None,
    scheduler: str | None,
    timeout: str | None,
    as_json: bool,
) -> None:
    """Run the missing runs of SPEC's sweep (resumable: re-run after an interruption).

    SPEC is a spec file or a study's spec by name, <study>/<spec> (pam21/fig2a)."""
    from nicbench.cli.run_progress import RichProgress
    from nicbench.experiments.runner import run_experiment
    from nicbench.experiments.spec import load_spec

    spec = load_spec(
        spec_file, repeat=repeat, sets=_key_values(sets, "--set"), limit_points=limit_points, backend=backend
    )
    only_points = spec.parse_params(_key_values(only, "--only"), "--only ")
    _check_only_matches(spec, only_points, only)
    beyond = [r for r in reps if r >= spec.repeat]
    if beyond:  # a repetition the sweep does not have: stored, it would sit outside every statistic
        raise click.BadParameter(
            f"{beyond[0]}: {spec.name} has {counted(spec.repeat, 'repetition')} (0 to "
            f"{spec.repeat - 1}); --repeat N runs more",
            param_hint="--rep",
        )
    timeout_s = _timeout_s(timeout)
    fewer = spec.fewer_repetitions  # fewer repetitions than the spec's store part of its sweep
    sched = open_cli_scheduler(scheduler, as_json)
    try:
        summary = run_experiment(
            spec,
            results=results_dir,
            jobs=jobs,
            fresh=fresh,
            only=only_points or None,
            reps=list(reps) or None,
            rerun=rerun,
            progress=RichProgress(enabled=not as_json),
            prune_stale=not (fewer or sets or limit_points),
            reuse_stale=reuse_stale,
            scheduler=sched,
            timeout_s=timeout_s,
            whole_sweep=not (fewer or sets),
        )
    except KeyboardInterrupt:
        raise Interrupted(RUNS_KEPT) from None
    if as_json:
        emit_json(summary.as_dict())
    else:
        _print_summary(summary)
    if summary.failed:  # stored and retried by the next run, but a script must not go on as if all ran
        raise SystemExit(1)


@click.command()
@click.argument("spec_file", metavar="SPEC", type=SpecFile())
@click.option("--repeat", type=IntRange(1, 100_000), default=None, help="Repetitions per point (overrides the spec).")
@click.option("--set", "sets", multiple=True, metavar="NAME=VALUE", help="Override a parameter.")
@json_option
def check(spec_file: str, repeat: int | None, sets: tuple[str, ...], as_json: bool) -> None:
    """Validate SPEC and print what it would run (points × repetitions).

    SPEC is a spec file or a study's spec by name, <study>/<spec> (pam21/fig2a)."""
    from nicbench.experiments.spec import load_spec

    spec = load_spec(spec_file, repeat=repeat, sets=_key_values(sets, "--set"))
    points = spec.run_points()
    info = {
        "experiment": spec.name,
        "target": spec.target.name,
        "design": spec.design.describe(),
        "points": len(points),
        "repeat": spec.repeat,
        "runs": spec.design.estimated_runs(len(points), spec.repeat),
        "axes": {",".join(names): len(values) for names, values in spec.axes},
        "figures": [f.name for f in spec.figures],
    }
    if as_json:
        emit_json(info)
        return
    axes = " × ".join(f"{k} ({n})" for k, n in info["axes"].items()) or "no sweep"
    upto = "up to " if spec.design.kind == "zero_loss" else ""
    stdout_console.print(
        f"[green]✓[/] {spec_file}: experiment [bold]{spec.name}[/] on {spec.target.name}, {info['design']}",
        highlight=False,
        soft_wrap=True,
    )
    stdout_console.print(
        f"  {counted(info['points'], 'point')} × {counted(spec.repeat, 'repetition')} = "
        f"{upto}{counted(info['runs'], 'run')}; "
        f"axes: {axes}; {len(spec.figures)} figures",
        highlight=False,
        soft_wrap=True,
    )


@click.command()
@click.argument("exp_dir", metavar="DIR", type=NonEmptyPath(file_okay=False))
@click.option(
    "-o",
    "--output",
    type=NonEmptyPath(dir_okay=False),
    default=None,
    help="Output HTML (default: reports/<experiment>/index.html).",
)
@click.option(
    "--with",
    "others",
    multiple=True,
    metavar="OTHER_DIR",
    help="Draw another results folder of the same experiment beside DIR (another version, profile or "
    "machine), as series of its own, with a point-by-point comparison. Repeatable.",
)
@click.option(
    "--acceptable",
    default="1%",
    show_default=True,
    metavar="MARGIN",
    help="With --with: relative difference of the means that is not flagged.",
)
@json_option
def report(exp_dir: str, output: str | None, others: tuple[str, ...], acceptable: str, as_json: bool) -> None:
    """Write the HTML report of an experiment's results folder (results/<experiment>)."""
    margin = _fraction(acceptable, "--acceptable")
    _check_html_name(output, "-o")
    path = _results_folder(exp_dir)
    out = Path(output) if output else Path("reports") / path.name / "index.html"
    ensure_parent(out, "-o" if output else "the default report path")
    with_folders = [_results_folder(o, "--with") for o in others]
    with spinner(f"drawing the report of {path}", enabled=not as_json):
        page = _write_report(path, out, with_folders, margin)
    for nodata in page.empty_figures:  # on the page in the figure's place; said here too, not only counted
        stderr_console.print(
            f"report: figure {nodata['figure']} ({nodata['title']}) not drawn, no data: {nodata['reason']}",
            highlight=False,
            soft_wrap=True,
        )
    if as_json:
        emit_json(page.as_dict())
    else:
        without = f"; {len(page.empty_figures)} without data" if page.empty_figures else ""
        stdout_console.print(f"wrote {out} ({page.figures} figures{without})", highlight=False, soft_wrap=True)


def _results_folder(exp_dir: str, option: str | None = None) -> Path:
    """DIR as given, or results/DIR; an error naming DIR (and the option) when neither holds runs."""
    from nicbench.experiments.store import results_root

    path = Path(exp_dir)
    if (path / "runs").is_dir() or (path / "failed").is_dir():
        return path
    candidate = results_root() / exp_dir
    if (candidate / "runs").is_dir():
        return candidate
    where = f"{option} {exp_dir}" if option else str(exp_dir)
    raise FileNotFoundError(
        2,
        "not an experiment results folder (expected results/<experiment>/ "
        "with runs/ inside; run `nicbench run SPEC` first)",
        where,
    )


def _write_report(path: Path, out: Path, others: list[Path], margin: float, ignore: tuple[str, ...] | None = None):
    from nicbench.experiments.store import ExperimentStore
    from nicbench.report import experiment_report
    from nicbench.vocab.study import load_study

    meta = ExperimentStore(path.parent, path.name).read_json("experiment.json")
    study = load_study(meta["study"]) if meta.get("study") and Path(meta["study"]).is_dir() else None
    return experiment_report(path, out, study=study, others=others, acceptable=margin, ignore=ignore)


def _minute(stamp: object) -> str:
    """`2026-11-27T07:16:38+0000` → `2026-11-27 07:16` for the table (JSON keeps the stamp)."""
    text = str(stamp)
    return text[:16].replace("T", " ") if len(text) >= 16 and text[10:11] == "T" else text


def _runs_of_sweep(row: dict[str, Any]) -> str:
    """`12 of 120` (stored of the spec's whole sweep); just `12` when the sweep is not known."""
    if not isinstance(row["sweep_runs"], int):  # not stored (older results, a --set run): the count only
        return f"{row['runs']:,}"
    return f"{row['runs']:,} of {'' if row['sweep_runs_exact'] else '≤'}{row['sweep_runs']:,}"


@click.group(cls=WholeHelpGroup)
def results() -> None:
    """List and export stored experiment results."""


@results.command("ls")
@results_option
@json_option
def results_ls(results_dir: str | None, as_json: bool) -> None:
    """Experiments in the results root, with their runs."""
    from nicbench.experiments.store import list_experiments, results_root

    if results_dir is not None and not Path(results_dir).is_dir():  # a typo'd --results is no empty store
        raise click.BadParameter(
            f"{results_dir}: {'not a folder' if Path(results_dir).exists() else 'no such folder'}"
            " (a results root, the folder `nicbench run --results` wrote)",
            param_hint="--results",
        )
    rows = []
    for store in list_experiments(results_dir):
        meta = store.read_json("experiment.json")
        done = store.done_keys()
        rows.append(
            {
                "experiment": store.experiment,
                "target": meta.get("target"),
                "runs": len(done),
                "sweep_runs": meta.get("sweep_runs"),
                "sweep_runs_exact": meta.get("sweep_runs_exact", False),
                "stale": len(store.stale_keys() & done),
                "failed": len(store.failed_keys() - done),
                "complete": meta.get("complete", False),
                "updated": meta.get("finished") or meta.get("started"),
                "path": str(store.dir),
            }
        )
    if as_json:
        emit_json(rows)
        return
    if not rows:
        stdout_console.print(f"no experiments in {results_root(results_dir)}", highlight=False, soft_wrap=True)
        return
    table = Table(title=f"experiments in {results_root(results_dir)}", title_justify="left")
    for col in ("experiment", "target", "runs", "stale", "failed", "complete", "updated"):
        # names fold rather than lose their end: a name is pasted into `results export`
        table.add_column(
            col,
            justify="right" if col in ("runs", "stale", "failed") else "left",
            overflow="fold" if col in ("experiment", "target") else "ellipsis",
        )
    for r in rows:
        table.add_row(
            r["experiment"],
            str(r["target"]),
            _runs_of_sweep(r),
            f"{r['stale']:,}",
            str(r["failed"]),
            "yes" if r["complete"] else "no",
            _minute(r["updated"]),
        )
    print_table(table)
    if any(r["sweep_runs"] is not None and not r["sweep_runs_exact"] for r in rows):
        stdout_console.print(
            "≤: a search design's planned runs are an upper bound (it stops when it converges)",
            highlight=False,
            soft_wrap=True,
        )
    if any(r["stale"] for r in rows):
        stdout_console.print(
            "stale: stored by other code or with other profile/input files than now; "
            "`nicbench run` re-runs them (`--reuse-stale` keeps them)",
            highlight=False,
            soft_wrap=True,
        )


_EXPORT_SUFFIXES = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}


def _export_format(fmt: str | None, output: str | None) -> str:
    """--csv/--parquet, else the output's suffix; a flag that contradicts the suffix (CSV text in a
    file named .parquet) is refused rather than written."""
    named = _EXPORT_SUFFIXES.get(Path(output).suffix.lower()) if output else None
    if fmt is not None and named is not None and named != fmt:
        raise click.BadParameter(
            f"{output} is a {named} name, but --{fmt} was given: drop --{fmt} or name the file .{fmt}", param_hint="-o"
        )
    return fmt or named or "csv"


@results.command("export")
@click.argument("experiment", metavar="DIR")
@click.option("--csv", "fmt", flag_value="csv", default=None, help="CSV (default, unless -o names a .parquet file).")
@click.option("--parquet", "fmt", flag_value="parquet", help="One Parquet file (the default for -o FILE.parquet).")
@click.option(
    "-o", "--output", type=NonEmptyPath(dir_okay=False), default=None, help="Output file (default: stdout for CSV)."
)
@results_option
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="With -o: print what was written (file, format, rows, columns) as JSON on stdout.",
)
def results_export(
    experiment: str, fmt: str | None, output: str | None, results_dir: str | None, as_json: bool
) -> None:
    """Export an experiment's records (results/<experiment> or its name) as one CSV or Parquet file."""
    from nicbench.experiments.store import load_results
    from nicbench.outputs import atomic_output

    fmt = _export_format(fmt, output)
    if as_json and output is None:
        # Without -o the CSV itself is stdout: a JSON answer there would be mixed into the records.
        raise click.UsageError("--json needs -o FILE (without -o the records themselves go to stdout)")
    df = load_results(experiment, results=results_dir)
    if output is not None:
        ensure_parent(output, "-o")  # as report -o does
    if fmt == "parquet":
        if output is None:
            raise click.UsageError("--parquet needs -o FILE")
        with atomic_output(output) as tmp:
            df.to_parquet(tmp, index=False)
    elif output is None:
        click.echo(df.to_csv(index=False), nl=False)
    else:
        with atomic_output(output) as tmp:
            df.to_csv(tmp, index=False)
    if as_json:
        emit_json(
            {
                "experiment": Path(experiment).name,  # DIR or a name: the experiment's name either way
                "output": str(output),
                "format": fmt,
                "rows": len(df),
                "columns": [str(c) for c in df.columns],
            }
        )
    elif output is not None:
        stderr_console.print(f"wrote {len(df):,} records to {output}", highlight=False, soft_wrap=True)


@click.command()
@click.argument("studies", nargs=-1, metavar="[STUDY]...")
@click.option("--all", "all_", is_flag=True, help="Every study under --studies.")
@click.option(
    "--studies",
    "studies_dir",
    type=NonEmptyPath(file_okay=False),
    default=None,
    help="Folder of study folders (default: $NICBENCH_STUDIES, ./studies, or the checkout's studies/).",
)
@click.option(
    "--reports",
    "reports_dir",
    type=NonEmptyPath(file_okay=False),
    default="reports",
    show_default=True,
    help="Where the HTML reports go.",
)
@results_option
@jobs_option
@click.option("--repeat", type=IntRange(1, 100_000), default=None, help="Repetitions per point (overrides specs).")
@click.option("--limit-points", type=IntRange(1, None), default=None, help="Only the first N points of each spec.")
@click.option("--set", "sets", multiple=True, metavar="NAME=VALUE", help="Override a parameter in every spec.")
@click.option(
    "--no-predictions",
    is_flag=True,
    help="Skip the study's predictions for other devices ([predictions] in study.toml).",
)
@click.option(
    "--strict",
    is_flag=True,
    help="Exit 1 when a reference value fails or a claim does not hold, unless the study lists it in "
    "known_misses.toml (and when a listed miss passes now).",
)
@reuse_stale_option
@scheduler_option
@timeout_option
@json_option
def reproduce(
    studies: tuple[str, ...],
    all_: bool,
    studies_dir: str,
    reports_dir: str,
    results_dir: str | None,
    jobs: int | None,
    repeat: int | None,
    limit_points: int | None,
    sets: tuple[str, ...],
    no_predictions: bool,
    strict: bool,
    reuse_stale: bool,
    scheduler: str | None,
    timeout: str | None,
    as_json: bool,
) -> None:
    """Run every experiment of STUDY (or --all studies) and build the study reports under reports/.

    A study with [predictions] also runs its specs with each listed device's profile (repetitions:
    its `repeat`) and reports them as predictions, checked only against that device's own
    measurements and the source's qualitative claims about it."""
    from nicbench.cli.run_progress import RichProgress
    from nicbench.experiments.feature_matrix import summary_line as feature_matrix_line
    from nicbench.experiments.gates import gate, load_known_misses
    from nicbench.reproduce import reproduce_study, resolve_studies
    from nicbench.reproduce.sets import check_sets_apply

    outcomes = []
    gates = []
    selected = resolve_studies(list(studies), all_, studies_dir)
    overrides = _key_values(sets, "--set")
    check_sets_apply(selected, overrides)
    known = {study.name: load_known_misses(study.dir) for study in selected}  # bad file: error before running
    timeout_s = _timeout_s(timeout)
    sched = open_cli_scheduler(scheduler, as_json)
    for study in selected:
        try:
            outcome = reproduce_study(
                study,
                results=results_dir,
                reports=reports_dir,
                jobs=jobs,
                repeat=repeat,
                limit_points=limit_points,
                sets=overrides,
                progress=RichProgress(enabled=not as_json),
                predictions=not no_predictions,
                reuse_stale=reuse_stale,
                scheduler=sched,
                timeout_s=timeout_s,
            )
        except KeyboardInterrupt:
            raise Interrupted(RUNS_KEPT) from None
        outcomes.append(outcome)
        if not as_json:
            for s in outcome.runs:
                _print_summary(s)
            d = outcome.as_dict()
            refs = (
                f"{d['passed']}/{d['references']} reference values pass" if d["references"] else "no reference values"
            )
            for group, g in d["summary"].items():
                err = g["median_abs_rel_error"]
                refs += f"\n  {group}: {g['passed']}/{g['entries']} pass, median |error| " + (
                    f"{err:.1%}" if err == err else "–"
                )
            for dp in d["predictions"]:
                m, claims = dp["measurements"], dp["claims"]
                line = f"\n  prediction {dp['device']}: "
                if m["entries"]:
                    line += (
                        f"its measurements {m['passed']}/{m['entries']} pass, "
                        f"median |error| {m['median_abs_rel_error']:.1%}; "
                    )
                held = sum(c["status"] == "pass" for c in claims.values())
                line += f"claims {held}/{len(claims)} hold"
                failing = [k for k, c in claims.items() if c["status"] != "pass"]
                refs += line + (f" (not: {', '.join(failing)})" if failing else "")
            if d["feature_matrix"] is not None:
                refs += "\n  " + feature_matrix_line(d["feature_matrix"])
            stdout_console.print(
                f"study [bold]{study.name}[/]: {refs} → {outcome.index}", highlight=False, soft_wrap=True
            )
        if strict:
            gates.append(gate(outcome.as_dict(), known[study.name]))
    if as_json:
        emit_json(
            [
                {**o.as_dict(), **({"gate": g.as_dict()} if strict else {})}
                for o, g in zip(outcomes, gates or [None] * len(outcomes))
            ]
        )
    if any(s.failed for o in outcomes for s in o.all_runs()):
        raise SystemExit(1)
    if strict:
        _report_gates(gates)


def _report_gates(gates: list) -> None:
    """--strict: one line per study; exit 1 if any study has an unexpected failure or a stale known miss."""
    for g in gates:
        if g.ok:
            note = f" ({len(g.known)} known misses: {', '.join(g.known)})" if g.known else ""
            stderr_console.print(f"strict: {g.study}: ok{note}", highlight=False, soft_wrap=True)
            continue
        parts = []
        if g.unexpected:
            parts.append(f"failing and not in known_misses.toml: {', '.join(g.unexpected)}")
        if g.fixed:
            parts.append(f"listed as known misses but passing now (remove them): {', '.join(g.fixed)}")
        stderr_console.print(f"nicbench: strict: {g.study}: " + "; ".join(parts), highlight=False, soft_wrap=True)
    if not all(g.ok for g in gates):
        raise SystemExit(1)


@click.command()
@click.argument("a", metavar="[RESULTS_A", required=False)
@click.argument("b", metavar="RESULTS_B]", required=False)
@click.option(
    "--rev",
    "revs",
    multiple=True,
    metavar="REV",
    help="Instead of two folders: run --spec at two git revisions (twice --rev; '.' = this nicbench) "
    "and compare those.",
)
@click.option("--spec", "spec_file", type=NonEmptyPath(dir_okay=False), default=None, help="The spec --rev runs.")
@click.option(
    "--workdir",
    type=NonEmptyPath(file_okay=False),
    default="build/revisions",
    show_default=True,
    help="Where --rev keeps its worktrees, builds and results (reused next time).",
)
@click.option(
    "--acceptable",
    default="1%",
    show_default=True,
    metavar="MARGIN",
    help="Relative difference of the means that is not flagged (e.g. 1%, 0.5%, 0.02).",
)
@click.option(
    "--plot",
    "plot_path",
    type=NonEmptyPath(dir_okay=False),
    default=None,
    help="Also draw the relative differences per metric to this PNG.",
)
@click.option(
    "--ignore",
    multiple=True,
    metavar="PARAM",
    help="Leave a parameter out of the point's identity (e.g. --ignore nic to compare two profiles).",
)
@click.option(
    "--report",
    "report_path",
    type=NonEmptyPath(dir_okay=False),
    default=None,
    metavar="HTML",
    help="Also write the experiment's report with both results drawn as series (as `nicbench report A --with B`).",
)
@click.option("--all-rows", is_flag=True, help="Print every compared point, not only the flagged ones.")
@json_option
def compare(
    a: str | None,
    b: str | None,
    revs: tuple[str, ...],
    spec_file: str | None,
    workdir: str,
    acceptable: str,
    plot_path: str | None,
    ignore: tuple[str, ...],
    report_path: str | None,
    all_rows: bool,
    as_json: bool,
) -> None:
    """Compare two result folders of one experiment point by point; exit 1 on a regression.

    RESULTS_A and RESULTS_B are experiment folders (results/<experiment>, e.g. from two versions
    or two profiles). Per point and metric: the means over repetitions and their spread; a
    difference beyond --acceptable and beyond the repetitions' noise is better, worse, or changed
    (a metric with no known good direction). Worse or changed points are regressions."""
    from nicbench.experiments.compare import compare_results, plot_comparison

    margin = _fraction(acceptable, "--acceptable")
    _check_html_name(report_path, "--report")
    _check_image_name(plot_path)
    if revs or spec_file:
        a, b = _run_revisions(revs, spec_file, workdir, a, b, quiet=as_json)
    elif a is None or b is None:
        raise click.UsageError("expected two result folders RESULTS_A RESULTS_B, or --rev A --rev B --spec SPEC")
    elif set_off_default(click.get_current_context(), "workdir"):
        raise click.UsageError(
            f"--workdir {workdir}: applies to --rev only (comparing two result folders builds nothing)"
        )
    c = compare_results(a, b, acceptable=margin, ignore=ignore)
    if plot_path:
        plot_comparison(c, plot_path)
    if report_path:
        _write_report(_results_folder(a), Path(report_path), [_results_folder(b)], margin, ignore)
    if as_json:
        emit_json(c.as_dict())
    else:
        _print_comparison(c, all_rows)
        for written in (plot_path, report_path):
            if written:
                stdout_console.print(f"wrote {written}", highlight=False, soft_wrap=True)
    if len(c.regressions):
        raise SystemExit(1)


def _run_revisions(
    revs: tuple[str, ...], spec_file: str | None, workdir: str, a: str | None, b: str | None, quiet: bool
) -> tuple[str, str]:
    from nicbench.experiments.revisions import resolve_revision, run_at_revision
    from nicbench.experiments.spec import load_spec

    if a is not None or b is not None:
        raise click.UsageError("give either two result folders or --rev A --rev B --spec SPEC, not both")
    if len(revs) != 2 or spec_file is None:
        raise click.UsageError("--rev needs exactly two revisions (--rev A --rev B) and --spec SPEC")
    spec = load_spec(spec_file)  # a bad spec is an error before any checkout
    repo = Path.cwd()
    resolved = [resolve_revision(repo, r) for r in revs]

    def log(msg: str) -> None:
        if not quiet:
            stderr_console.print(f"compare: {msg}", highlight=False, soft_wrap=True)

    folders = [run_at_revision(repo, r, Path(spec_file), spec.name, Path(workdir), [], log) for r in resolved]
    return str(folders[0]), str(folders[1])


def _check_html_name(path: str | None, option: str) -> None:
    """A report is an HTML page: a name such as cmp.png would hold HTML under an image's name."""
    if path is not None and Path(path).suffix.lower() not in (".html", ".htm"):
        raise click.BadParameter(f"{path}: the report is an HTML page; give a name ending in .html", param_hint=option)


def _check_image_name(path: str | None) -> None:
    """--plot's format follows its suffix (matplotlib): an unknown one is refused before the comparison."""
    if path is None:
        return
    from matplotlib.backend_bases import FigureCanvasBase

    formats = FigureCanvasBase.get_supported_filetypes()
    if Path(path).suffix.lower().lstrip(".") not in formats:
        raise click.BadParameter(
            f"{path}: the plot is an image; give a name ending in "
            ".png, .svg, .pdf (or another of "
            f"{', '.join(sorted(formats))})",
            param_hint="--plot",
        )


def _fraction(text: str, option: str) -> float:
    t = text.strip()
    try:
        value = float(t[:-1]) / 100 if t.endswith("%") else float(t)
    except ValueError:
        raise click.BadParameter(f"expected a fraction like 1% or 0.01, found {text!r}", param_hint=option) from None
    if not (0 <= value < 1e6):
        raise click.BadParameter(f"expected a finite margin ≥ 0, found {text!r}", param_hint=option)
    return value


def _print_comparison(c, all_rows: bool) -> None:
    from nicbench.cli.common import fmt_number

    d = c.as_dict()
    v = d["verdicts"]
    stdout_console.print(
        f"compared {d['compared']:,} point×metric pairs (acceptable ±{c.acceptable:.2%}): "
        f"{v['same']:,} same, {v['better']:,} better, [red]{v['worse']:,} worse[/], "
        f"[yellow]{v['changed']:,} changed[/]"
        + (f"; only in A: {d['only_a']:,}, only in B: {d['only_b']:,}" if d["only_a"] or d["only_b"] else ""),
        highlight=False,
        soft_wrap=True,
    )
    shown = c.rows if all_rows else c.rows[c.rows["verdict"] != "same"]
    if shown.empty:
        return
    table = Table(title_justify="left")
    varying = [p for p in c.params if c.rows[p].nunique() > 1]  # constant parameters say nothing here
    for col in (*varying, "metric", "A mean ± sd", "B mean ± sd", "diff", "verdict"):
        table.add_column(col, justify="right" if col in ("diff",) else "left")
    for r in shown.to_dict("records"):

        def side(m, s):
            return fmt_number(m) + ("" if s != s else f" ± {fmt_number(s)}")

        table.add_row(
            *(str(r[p]) for p in varying),
            str(r["metric"]),
            side(r["a_mean"], r["a_std"]),
            side(r["b_mean"], r["b_std"]),
            f"{r['rel_diff']:+.2%}" if r["rel_diff"] == r["rel_diff"] else "–",
            r["verdict"],
        )
    print_table(table)


# Each command's first help sentence, read by `nicbench --help` without importing this module.
SUMMARIES = {
    "run": "Run the missing runs of SPEC's sweep (resumable: re-run after an interruption).",
    "check": "Validate SPEC and print what it would run (points × repetitions).",
    "report": "Write the HTML report of an experiment's results folder (results/<experiment>).",
    "results": "List and export stored experiment results.",
    "reproduce": "Run every experiment of STUDY (or --all studies) and build the study reports under reports/.",
    "compare": "Compare two result folders of one experiment point by point; exit 1 on a regression.",
}
COMMANDS = (run, check, report, results, reproduce, compare)
