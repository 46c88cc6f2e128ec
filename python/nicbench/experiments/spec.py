"""Experiment spec files (TOML): what to run, over which points, how often, what to plot.

    [experiment]
    name = "gen-rate"              # results go to results/<name>/
    target = "gen.rate"            # a registered target (see targets/)
    description = "..."
    repeat = 5                     # repetitions per point (default 5, as PAM'21)
    seed = 1                       # every run's seed derives from this
    metrics = ["mpps", "gbps"]     # keep only these (default: all the target reports)
    timeout = "10min"              # per run: a run past it is stopped, stored as failed (default 600 s)

    [params]                       # fixed parameters (checked against the target's schema)
    flows = "10k"

    [sweep]                        # crossed axes (full factorial)
    size = [64, 128, 256, 512, 1024, 1518]
    flows = "1-10000 x10"          # ranges: "1-16", "0-1 step 0.1", "1000-65536 x2"

    [[zip]]                        # axes that vary together (equal lengths): one more crossed axis
    packets = ["1k", "10k"]
    duration = ["1ms", "10ms"]

    [[override]]                   # per-point overrides
    where = { size = 64 }
    set = { packets = "1M" }

    [design]                       # full (default) | random | zero_loss (see designs/)
    kind = "full"

    [[figure]]                     # see nicbench.report.figures
    kind = "line"; x = "size"; y = "mpps"; hue = "flows"; logx = true

    include = ["../fragments/pam21-testbed.toml"]   # first line: shared fragments (see below)

Includes: `include` (a file or a list of files, relative to the spec that names them; a fragment
may include others, relative to itself) is merged before anything is checked: the fragments in
order, each over the ones before it, then the spec's own keys over all of them. Tables (`[params]`,
`[sweep]`, `[experiment]`, inline tables) merge key by key; arrays of tables (`[[figure]]`,
`[[zip]]`, `[[override]]`) are concatenated, the fragments' first; any other value (a number, a
string, a list of values such as a sweep's) is replaced whole. A key cannot be removed. An include
cycle or a missing fragment is a one-line SpecError naming the file. The spec stored with its
results (`spec.toml`, which `nicbench report` reads) is the merged one; `Spec.includes` lists the
fragments read (their content is part of the experiment: an edited fragment is an edited spec).

Every value is parsed and checked by the target's parameter schema before anything runs;
a mistake raises `SpecError("FILE: key 'sweep.rate': expected a rate such as 100Gbps, found 'fast'")`.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nicbench.backends import with_backend
from nicbench.experiments.axes import axis_values
from nicbench.experiments.designs import DESIGNS, Design, FullFactorial, ZeroLossSearch
from nicbench.experiments.keys import point_key
from nicbench.experiments.targets import Target, get_target
from nicbench.inputs import PARSER_LIMITS, parser_limit, read_input_text
from nicbench.toml_parser import tomllib
from nicbench.units import UnitError, parse_duration_ns
from nicbench.vocab.errors import SpecError
from nicbench.vocab.params import Param
from nicbench.vocab.records import RESERVED_NAMES

__all__ = [
    "Spec",
    "FigureSpec",
    "load_spec",
    "parse_spec",
    "parse_timeout_s",
    "FIGURE_KINDS",
    "DEFAULT_REPEAT",
    "DEFAULT_TIMEOUT_S",
]

DEFAULT_REPEAT = 5
# Per-run timeout [s]: far above any run of the shipped studies (the longest take seconds), so
# only a hung run reaches it.
DEFAULT_TIMEOUT_S = 600.0
# Longest per-run timeout: the in-process deadline is a SIGALRM timer, which cannot be set past
# ~1e10 s (an OverflowError that failed every run); a year is as good as no timeout.
MAX_TIMEOUT_S = 365 * 86_400.0
FIGURE_KINDS = ("line", "box", "timeseries", "cdf", "heatmap")
STAT_NAMES = ("mean", "median", "min", "max", "p1", "p25", "p50", "p75", "p99")
# The longest experiment name [characters]: it names the results folder (`<name>--<backend>`), and
# a file name has at most 255 bytes (NAME_MAX), less the suffix and a temp prefix.
MAX_NAME_CHARS = 200
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_TOP_KEYS = ("experiment", "params", "sweep", "zip", "override", "design", "figure")
INCLUDE_KEY = "include"
_EXPERIMENT_KEYS = ("name", "target", "description", "repeat", "seed", "metrics", "timeout")
_FIGURE_KEYS = ("kind", "x", "y", "z", "hue", "logx", "logy", "title", "stat", "where", "name")


@dataclass(frozen=True)
class FigureSpec:
    kind: str
    x: str | None = None
    y: str | None = None
    z: str | None = None
    hue: str | None = None
    logx: bool = False
    logy: bool = False
    title: str = ""
    stat: str = "mean"
    where: dict[str, Any] = field(default_factory=dict)
    name: str = ""


@dataclass
class Spec:
    file: str
    text: str
    name: str
    target: Target
    description: str
    repeat: int
    seed: int
    metrics: list[str] | None
    fixed: dict[str, Any]  # every parameter not swept: defaults, then [params]
    axes: list[tuple[tuple[str, ...], list[tuple[Any, ...]]]]
    overrides: list[tuple[dict[str, Any], dict[str, Any]]]
    design: Design
    figures: list[FigureSpec]
    limit_points: int | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S  # per run [s]
    # Repetitions the spec file declares, when `repeat` overrides them (`--repeat`).
    declared_repeat: int | None = None
    # The fragments merged in (`include`), resolved paths in the order they were read.
    includes: list[str] = field(default_factory=list)

    @property
    def fewer_repetitions(self) -> bool:
        """Whether the run asks for fewer repetitions than the file declares: it stores part of the
        sweep (more repetitions store all of it, and then some)."""
        return self.declared_repeat is not None and self.repeat < self.declared_repeat

    @property
    def swept(self) -> list[str]:
        return [name for names, _ in self.axes for name in names]

    def points(self) -> list[dict[str, Any]]:
        """Every point: the cross product of the axes, overrides applied, duplicates dropped."""
        seen: set[str] = set()
        out: list[dict[str, Any]] = []
        for combo in itertools.product(*(values for _, values in self.axes)):
            point = dict(self.fixed)
            for (names, _), values in zip(self.axes, combo):
                point.update(zip(names, values))
            for where, changes in self.overrides:
                if all(point.get(k) == v for k, v in where.items()):
                    point.update(changes)
            key = point_key(point)
            if key not in seen:
                seen.add(key)
                out.append(point)
        if self.limit_points is not None:
            out = out[: self.limit_points]
        return out

    def run_points(self) -> list[dict[str, Any]]:
        """The points the design runs (a random subset picks some)."""
        points = self.points()
        choose = getattr(self.design, "choose", None)
        return choose(points) if choose else points

    def estimated_runs(self) -> int:
        return self.design.estimated_runs(len(self.points()), self.repeat)

    def metric_names(self) -> set[str]:
        names = set(self.target.metrics) | set(self.design_metrics())
        return names

    def design_metrics(self) -> list[str]:
        if isinstance(self.design, ZeroLossSearch):
            return [f"{n}_{m}" for n in self.design.loss for m in ("rate", "loss", "gap", "iterations")]
        return []

    def param_unit(self, name: str) -> str:
        p = self.target.param(name)
        return p.unit if p else ""

    def parse_params(self, raw: dict[str, Any], prefix: str) -> dict[str, Any]:
        """Parse `name → text` with the target's schema (for `--only`, reference selectors, ...).
        Errors read `{prefix}{name}: ...`, e.g. prefix `"--only "` or `"reference x: where."`."""
        values: dict[str, Any] = {}
        for name, text in raw.items():
            p = self.target.param(name)
            if p is None:
                raise SpecError(f"{prefix}{name}: {self.target.no_such_param(name)}")
            try:
                values[name] = p.parse(text)
            except UnitError as exc:
                raise SpecError(f"{prefix}{name}: {exc}") from None
        return values


def load_spec(
    path: str | Path,
    *,
    repeat: int | None = None,
    sets: dict[str, str] | None = None,
    limit_points: int | None = None,
    backend: str | None = None,
) -> Spec:
    """Read and check a spec file. `sets` overrides fixed parameters (and unsweeps them); `backend`
    answers the runs with another backend than the target's default (nicbench.backends)."""
    path = Path(path)
    try:
        text = read_input_text(path, "spec file")
    except UnicodeDecodeError:
        raise SpecError(f"{path}: not a text (TOML) file") from None
    return parse_spec(text, str(path), repeat=repeat, sets=sets, limit_points=limit_points, backend=backend)


def parse_spec(
    text: str,
    file: str = "<spec>",
    *,
    repeat: int | None = None,
    sets: dict[str, str] | None = None,
    limit_points: int | None = None,
    backend: str | None = None,
) -> Spec:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"{file}: not valid TOML: {exc}") from None
    except PARSER_LIMITS as exc:
        raise SpecError(f"{file}: not a spec: {parser_limit(exc)}") from None
    doc, includes = _with_includes(doc, file, ())
    if includes:  # stored with the results as one file, which `nicbench report` reads again
        text = merged_text(doc, file, includes)
    for key in doc:
        if key not in _TOP_KEYS:
            raise SpecError.at(file, key, f"unknown section (expected one of {', '.join(_TOP_KEYS)})")
    exp = _table(doc, "experiment", file, required=True)
    for key in exp:
        if key not in _EXPERIMENT_KEYS:
            raise SpecError.at(
                file, f"experiment.{key}", f"unknown key (expected one of {', '.join(_EXPERIMENT_KEYS)})"
            )
    name = exp.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        shown = name if not isinstance(name, str) or len(name) <= 60 else name[:60] + "…"
        raise SpecError.at(
            file, "experiment.name", f"expected a name of letters, digits, '.', '_', '-', found {shown!r}"
        )
    if len(name) > MAX_NAME_CHARS:
        raise SpecError.at(
            file,
            "experiment.name",
            f"{name[:40]}… has {len(name):,} characters: at most {MAX_NAME_CHARS} (the name is a results "
            "folder's, and a file name has at most 255 bytes, with room kept for a backend suffix)",
        )
    target_name = exp.get("target")
    if not isinstance(target_name, str):
        raise SpecError.at(
            file, "experiment.target", f"expected a target name such as 'gen.rate', found {target_name!r}"
        )
    try:
        target = get_target(target_name)
    except SpecError as exc:
        raise type(exc)(f"{file}: key 'experiment.target': {exc}") from None
    try:
        target = with_backend(target, backend)
    except ValueError as exc:
        raise SpecError(f"{file}: --backend: {exc}") from None
    declared = exp.get("repeat", DEFAULT_REPEAT)
    reps = declared if repeat is None else repeat
    if not isinstance(reps, int) or isinstance(reps, bool) or not 1 <= reps <= 100_000:
        raise SpecError.at(file, "experiment.repeat", f"expected a whole number of repetitions ≥ 1, found {reps!r}")
    seed = exp.get("seed", 1)
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise SpecError.at(file, "experiment.seed", f"expected an integer, found {seed!r}")
    metrics = exp.get("metrics")
    if metrics is not None and (not isinstance(metrics, list) or not all(isinstance(m, str) for m in metrics)):
        raise SpecError.at(file, "experiment.metrics", "expected a list of metric names")
    try:
        timeout_s = parse_timeout_s(exp.get("timeout", DEFAULT_TIMEOUT_S))
    except UnitError as exc:
        raise SpecError.at(file, "experiment.timeout", str(exc)) from None

    def at(key: str, message: str) -> SpecError:
        # A --set is the command line's, not a key of the file: named first, the spec after.
        if key.startswith("--set "):
            return SpecError(f"{key}: {message} (spec {file})")
        return SpecError.at(file, key, message)

    def param(key: str, name: str) -> Param:
        p = target.param(name)
        if p is None:
            raise at(key, target.no_such_param(name))
        return p

    def value(key: str, name: str, raw: Any) -> Any:
        try:
            return param(key, name).parse(raw)
        except UnitError as exc:
            raise at(key, str(exc)) from None

    # Axes: [sweep] (each key one axis) and [[zip]] (each table one axis of tuples).
    axes: list[tuple[tuple[str, ...], list[tuple[Any, ...]]]] = []
    for name_, raw in _table(doc, "sweep", file).items():
        key = f"sweep.{name_}"
        try:
            values = axis_values(raw, param(key, name_))
        except UnitError as exc:
            raise SpecError.at(file, key, str(exc)) from None
        axes.append(((name_,), [(v,) for v in values]))
    for i, group in enumerate(_list_of_tables(doc, "zip", file)):
        columns: list[list[Any]] = []
        for name_, raw in group.items():
            key = f"zip[{i}].{name_}"
            try:
                columns.append(axis_values(raw, param(key, name_)))
            except UnitError as exc:
                raise SpecError.at(file, key, str(exc)) from None
        lengths = {len(c) for c in columns}
        if len(lengths) > 1:
            raise SpecError.at(file, f"zip[{i}]", f"zipped axes need equal lengths, found {sorted(lengths)}")
        if columns:
            axes.append((tuple(group), list(zip(*columns))))
    swept = [n for names, _ in axes for n in names]
    if len(set(swept)) != len(swept):
        dup = sorted({n for n in swept if swept.count(n) > 1})
        raise SpecError.at(file, f"sweep.{dup[0]}", "parameter swept twice (in [sweep] and/or [[zip]])")

    fixed = target.defaults()
    for name_, raw in _table(doc, "params", file).items():
        fixed[name_] = value(f"params.{name_}", name_, raw)
    for name_, raw in (sets or {}).items():
        fixed[name_] = value(f"--set {name_}", name_, raw)
        axes = [(names, vals) for names, vals in axes if name_ not in names]
    for p in target.params:
        if p.required and fixed.get(p.name) is None and p.name not in swept:
            raise SpecError.at(file, f"params.{p.name}", f"required by {target.name}: {p.expected()}")
    for name_ in list(fixed):
        if name_ in RESERVED_NAMES:  # pragma: no cover - a target bug, not a user one
            raise SpecError(f"target {target.name}: parameter name {name_!r} is reserved")

    overrides = []
    for i, table in enumerate(_list_of_tables(doc, "override", file)):
        where, changes = table.get("where"), table.get("set")
        if not isinstance(where, dict) or not isinstance(changes, dict) or set(table) - {"where", "set"}:
            raise SpecError.at(file, f"override[{i}]", "expected where = { param = value } and set = { param = value }")
        overrides.append(
            (
                {k: value(f"override[{i}].where.{k}", k, v) for k, v in where.items()},
                {k: value(f"override[{i}].set.{k}", k, v) for k, v in changes.items()},
            )
        )

    design_table = _table(doc, "design", file)
    kind = design_table.get("kind", "full")
    if kind not in DESIGNS:
        raise SpecError.at(file, "design.kind", f"expected one of {', '.join(DESIGNS)}, found {kind!r}")
    design = DESIGNS[kind].from_table(design_table, file, target) if design_table else FullFactorial()

    spec = Spec(
        file=file,
        text=text,
        name=name,
        target=target,
        description=str(exp.get("description", "")),
        repeat=reps,
        seed=seed,
        metrics=metrics,
        fixed=fixed,
        axes=axes,
        overrides=overrides,
        design=design,
        figures=[],
        limit_points=limit_points,
        timeout_s=timeout_s,
        declared_repeat=declared if isinstance(declared, int) else None,
        includes=[str(p) for p in includes],
    )
    design.check(spec)
    known_metrics = spec.metric_names()
    for m in metrics or []:
        if m not in target.metrics:
            raise SpecError.at(
                file,
                "experiment.metrics",
                f"target {target.name} reports no metric {m!r} (it reports: {', '.join(target.metrics)})",
            )
    spec.figures = [
        _figure(t, i, file, spec, known_metrics) for i, t in enumerate(_list_of_tables(doc, "figure", file))
    ]
    return spec


def parse_timeout_s(value: Any) -> float:
    """A per-run timeout [s]: a number of seconds (600) or a duration ("10min", "30s")."""
    if isinstance(value, bool):
        raise UnitError(f"expected a timeout such as 600 (seconds) or 10min, found {value!r}")
    if isinstance(value, str):
        text = value.strip()
        try:
            seconds = float(text)
        except ValueError:
            seconds = parse_duration_ns(text) / 1e9
    elif isinstance(value, (int, float)):
        seconds = float(value)
    else:
        raise UnitError(f"expected a timeout such as 600 (seconds) or 10min, found {value!r}")
    if not (math.isfinite(seconds) and seconds > 0):
        raise UnitError(f"a timeout must be a finite number of seconds > 0, found {value!r}")
    if seconds > MAX_TIMEOUT_S:
        raise UnitError(f"a timeout is at most 365 days ({MAX_TIMEOUT_S:,.0f} s), found {value!r}")
    return seconds


def _figure(table: dict[str, Any], i: int, file: str, spec: Spec, metrics: set[str]) -> FigureSpec:
    key = f"figure[{i}]"
    for k in table:
        if k not in _FIGURE_KEYS:
            raise SpecError.at(file, f"{key}.{k}", f"unknown key (expected one of {', '.join(_FIGURE_KEYS)})")
    kind = table.get("kind")
    if kind not in FIGURE_KINDS:
        raise SpecError.at(file, f"{key}.kind", f"expected one of {', '.join(FIGURE_KINDS)}, found {kind!r}")
    params = {p.name for p in spec.target.params}

    def need(field_: str, what: str, allowed: set[str]) -> str:
        v = table.get(field_)
        if v not in allowed:
            raise SpecError.at(
                file, f"{key}.{field_}", f"expected {what} (one of {', '.join(sorted(allowed))}), found {v!r}"
            )
        return v

    x = y = z = None
    if kind in ("line", "box"):
        x, y = need("x", "a parameter", params), need("y", "a metric", metrics)
    elif kind == "timeseries":
        y = need("y", "a metric", metrics)
        x = "t"
    elif kind == "cdf":
        x = need("x", "a metric", metrics)
    elif kind == "heatmap":
        x, y, z = need("x", "a parameter", params), need("y", "a parameter", params), need("z", "a metric", metrics)
    hue = table.get("hue")
    if hue is not None and hue not in params:
        raise SpecError.at(
            file, f"{key}.hue", f"expected a parameter (one of {', '.join(sorted(params))}), found {hue!r}"
        )
    stat = table.get("stat", "mean")
    if stat not in STAT_NAMES:
        raise SpecError.at(file, f"{key}.stat", f"expected one of {', '.join(STAT_NAMES)}, found {stat!r}")
    where = table.get("where", {})
    if not isinstance(where, dict):
        raise SpecError.at(file, f"{key}.where", "expected a table { param = value }")
    parsed_where = {}
    for k, v in where.items():
        p = spec.target.param(k)
        if p is None:
            raise SpecError.at(file, f"{key}.where.{k}", spec.target.no_such_param(k))
        try:
            parsed_where[k] = p.parse(v)
        except UnitError as exc:
            raise SpecError.at(file, f"{key}.where.{k}", str(exc)) from None
    for flag in ("logx", "logy"):
        if not isinstance(table.get(flag, False), bool):
            raise SpecError.at(file, f"{key}.{flag}", "expected true or false")
    name = table.get("name") or f"{i + 1:02d}-{kind}-{y or x}"
    return FigureSpec(
        kind=kind,
        x=x,
        y=y,
        z=z,
        hue=hue,
        logx=table.get("logx", False),
        logy=table.get("logy", False),
        title=str(table.get("title", "")),
        stat=stat,
        where=parsed_where,
        name=re.sub(r"[^A-Za-z0-9._-]+", "_", str(name)),
    )


def _table(doc: dict, key: str, file: str, required: bool = False) -> dict[str, Any]:
    value = doc.get(key)
    if value is None:
        if required:
            raise SpecError.at(file, key, f"missing [{key}] table")
        return {}
    if not isinstance(value, dict):
        raise SpecError.at(file, key, f"expected a [{key}] table")
    return value


def _list_of_tables(doc: dict, key: str, file: str) -> list[dict[str, Any]]:
    value = doc.get(key, [])
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(t, dict) for t in value):
        raise SpecError.at(file, key, f"expected [[{key}]] tables")
    return value


def _with_includes(doc: dict[str, Any], file: str, chain: tuple[Path, ...]) -> tuple[dict[str, Any], list[Path]]:
    """`doc` with the fragments its `include` names merged beneath it (see the module doc), and the
    fragment files read. `chain`: the files that include this one (a cycle back to one is an error)."""
    raw = doc.pop(INCLUDE_KEY, None)
    if raw is None:
        return doc, []
    names = [raw] if isinstance(raw, str) else raw
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n.strip() for n in names):
        raise SpecError.at(
            file,
            INCLUDE_KEY,
            "expected a TOML file or a list of them, relative to this spec, "
            f'such as ["../fragments/testbed.toml"], found {raw!r}',
        )
    here = Path(file).resolve() if Path(file).is_file() else None
    folder = here.parent if here is not None else Path.cwd()
    chain = chain + ((here,) if here is not None and here not in chain else ())
    merged: dict[str, Any] = {}
    read: list[Path] = []
    for name in names:
        path = (folder / name).resolve()
        if path in chain:
            loop = " → ".join(str(p) for p in (*chain[chain.index(path) :], path))
            raise SpecError.at(file, INCLUDE_KEY, f"{name}: an include cycle ({loop})")
        try:
            text = read_input_text(path, "included spec fragment")
        except UnicodeDecodeError:
            raise SpecError.at(file, INCLUDE_KEY, f"{name}: not a text (TOML) file ({path})") from None
        except (OSError, ValueError) as exc:  # missing, unreadable, a folder
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise SpecError.at(file, INCLUDE_KEY, f"{name}: {reason} ({path})") from None
        try:
            fragment = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise SpecError(f"{path} (included by {file}): not valid TOML: {exc}") from None
        except PARSER_LIMITS as exc:
            raise SpecError(f"{path} (included by {file}): not a spec fragment: {parser_limit(exc)}") from None
        fragment, nested = _with_includes(fragment, str(path), chain)
        merged = _merge(merged, fragment)
        read += [p for p in (path, *nested) if p not in read]
    return _merge(merged, doc), read


def _is_table_array(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def _merge(under: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """`over` merged onto `under`: tables key by key, arrays of tables concatenated (`under`'s first),
    any other value of `over` replacing `under`'s."""
    out = dict(under)
    for key, value in over.items():
        below = out.get(key)
        if isinstance(value, dict) and isinstance(below, dict):
            out[key] = _merge(below, value)
        elif _is_table_array(value) and _is_table_array(below):
            out[key] = [*below, *value]
        else:
            out[key] = value
    return out


def merged_text(doc: dict[str, Any], file: str, includes: list[Path]) -> str:
    """A merged spec as one TOML file, saying what it was merged from."""
    import tomli_w

    header = [f"# {file}, its includes merged in (nicbench writes this file):"]
    header += [f"#   {path}" for path in includes]
    return "\n".join(header) + "\n" + tomli_w.dumps(doc)
