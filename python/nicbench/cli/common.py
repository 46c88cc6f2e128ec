"""Shared CLI plumbing: error and Ctrl-C mapping (exit codes 2 and 130), JSON output, progress bars."""

from __future__ import annotations

import json
import math
import os
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from nicbench.errors import NicbenchError
from nicbench.units import UnitError

if TYPE_CHECKING:
    from rich.console import Console


class LazyConsole:
    """A rich Console made on first use (`stdout_console.print(...)`; `.console` for rich APIs).

    Importing rich is a good part of the CLI's start-up, which `--help`, `--version` and
    `--json` runs do not need.
    """

    def __init__(self, stderr: bool = False):
        self._stderr = stderr
        self._console: Console | None = None

    @property
    def console(self) -> Console:
        if self._console is None:
            from rich.console import Console

            self._console = Console(stderr=self._stderr)
            # Off a terminal (a pipe, a file, CI) a line of text stays one line: rich would wrap it at the
            # 80 columns it assumes there and split a summary that grep or a script reads. Tables still fit
            # their width (print_table widens them).
            self._console.soft_wrap = not self._console.is_terminal
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self.console, name)


stdout_console = LazyConsole()
stderr_console = LazyConsole(stderr=True)


def ensure_parent(path: str | Path, option: str) -> None:
    """Creates the folders an output file goes into; a file in the way is an error naming the option
    and that file (mkdir alone says only 'File exists')."""
    parent = Path(path).parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        blocking = next((p for p in [parent, *parent.parents] if p.exists() and not p.is_dir()), parent)
        raise NicbenchError(f"{option} {path}: {blocking} is a file, not a folder") from None


def print_table(table: Any) -> None:
    """A rich table on stdout: fitted to a terminal; piped or redirected, at its natural width
    (rich would assume 80 columns and cut names that a script then cannot use)."""
    console = stdout_console.console
    if console.is_terminal:
        console.print(table)
        return
    from rich.console import Console
    from rich.measure import Measurement

    natural = Measurement.get(console, console.options.update(width=10_000), table).maximum
    # Console.print(width=) cannot go past the console's width: a console of the table's width
    Console(file=console.file, width=max(console.width, natural), no_color=console.no_color).print(table)


def describe_range(low: Any, high: Any, low_open: bool = False, high_open: bool = False) -> str:
    """`1 to 1024`, `at least 1`, `more than 0 and at most 1`: a number range in words."""

    def show(x: Any) -> str:
        return f"{x:g}" if isinstance(x, float) else str(x)  # a u64 seed bound stays whole

    lower = None if low is None else f"{'more than' if low_open else 'at least'} {show(low)}"
    upper = None if high is None else f"{'less than' if high_open else 'at most'} {show(high)}"
    if lower and upper:
        return f"{show(low)} to {show(high)}" if not (low_open or high_open) else f"{lower} and {upper}"
    return lower or upper or "any"


class _WordedRange:
    """A click number range worded for people, in help (`[1 to 1024]`) and errors (`0 (allowed:
    1 to 1024`), instead of click's `1<=x<=1024`."""

    min: Any
    max: Any
    min_open: bool
    max_open: bool

    def _describe_range(self) -> str:
        return describe_range(self.min, self.max, self.min_open, self.max_open)

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        try:
            return super().convert(value, param, ctx)  # type: ignore[misc]
        except click.BadParameter as exc:
            if "is not in the range" not in exc.message:
                raise
            shown = exc.message.split(" is not in the range", 1)[0]
            raise click.BadParameter(f"{shown} (allowed: {self._describe_range()})", ctx, param) from None


class IntRange(_WordedRange, click.IntRange):
    """click.IntRange, worded for people."""


# Exceptions that mean "bad input": one line, exit code 2, no traceback.
USER_ERRORS: tuple[type[BaseException], ...] = (NicbenchError, UnitError, OSError, ValueError)


class WholeHelpGroup(click.Group):
    """A group whose command list shows each command's whole first sentence, wrapped: click's
    cuts it at the terminal's width with "..." (15 of the 18 commands at 80 columns)."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit=SHORT_HELP_CHARS)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


# A command's summary in a list: its first sentence, however long (the list wraps it).
SHORT_HELP_CHARS = 1_000


class NicbenchGroup(WholeHelpGroup):
    """A click group that turns bad input into `nicbench: error: ...` and exit code 2.

    Bad input is a library error (USER_ERRORS) or a bad command line (click's UsageError: an
    unknown command or option, a missing or invalid value), at this level or in a sub-command.
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if ctx.parent is None:
            # Whether the command line asks for JSON: then errors are also a JSON object on stdout.
            # Known before any sub-command parses, so usage errors honour it too.
            ctx.meta[JSON_META_KEY] = "--json" in args
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:
            _usage_error(ctx, exc)
            raise  # not reached: _usage_error exits

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            _usage_error(ctx, exc)
        except USER_ERRORS as exc:
            report_error(ctx, with_kind_hint(one_line(exc)))
        except Interrupted as exc:
            report_interrupted(ctx, str(exc))
        except KeyboardInterrupt:
            # Native work polls for Ctrl-C (crates/nicbench-py/src/progress.rs) and every output is
            # written under a temporary name until it is complete (nicbench.outputs): nothing is left.
            report_interrupted(ctx, "no output written")


# Exit code of a command stopped by Ctrl-C: 128 + SIGINT, as shells report it.
EXIT_INTERRUPTED = 130


class Interrupted(Exception):
    """Ctrl-C stopped a command that keeps part of its work: the message says what is kept (a
    command that keeps nothing lets KeyboardInterrupt through)."""


def report_interrupted(ctx: click.Context, kept: str) -> None:
    """`nicbench: interrupted: KEPT` (one line) on stderr, exit code 130: never click's `Aborted!`
    or a traceback."""
    click.echo(f"nicbench: interrupted: {kept}", err=True)
    ctx.exit(EXIT_INTERRUPTED)


# ctx.meta key: True when the command line has --json.
JSON_META_KEY = "nicbench.json"


def report_error(ctx: click.Context, message: str) -> None:
    """Print `nicbench: error: MESSAGE` (one line) on stderr, and under --json also the JSON object
    `{"error": MESSAGE, "exit_code": 2}` on stdout (one line); exit code 2."""
    click.echo(f"nicbench: error: {message}", err=True)
    if ctx.meta.get(JSON_META_KEY):
        click.echo(json.dumps({"error": message, "exit_code": 2}))
    ctx.exit(2)


def _usage_error(ctx: click.Context, exc: click.UsageError) -> None:
    """One line naming the command, what is wrong and where the help is; exit code 2."""
    if isinstance(exc, click.exceptions.NoArgsIsHelpError):
        raise exc  # a bare group (`nicbench`, `nicbench rules`): click prints its help
    path = (exc.ctx or ctx).command_path
    command = path[len(ctx.find_root().command_path) :].strip()
    command = f"{command}: " if command else ""
    what = one_line_text(exc.format_message()).rstrip(".")
    report_error(ctx, f"{command}{what} (see '{path} --help')")


# A model refusing a profile of another kind names the kinds; which command runs that kind is the
# CLI's to say (the models know no command names).
_OTHER_KIND = re.compile(r"is for the (\S+) model, not the \S+ model")


def commands_of_kind(kind: str) -> list[str]:
    """The commands that run profiles of `kind`: those of the CLI module of the front of a model that
    reads the kind (`nicbench.models.registry()`, `models.front`; `cli/<front>.py`)."""
    from nicbench import models
    from nicbench.cli import COMMANDS

    readers = {models.front(m["name"]) for m in models.registry() if kind in m["profile_kinds"]}
    return sorted(name for name, (module, _) in COMMANDS.items() if module in readers)


def with_kind_hint(message: str) -> str:
    """`message`, plus which command runs the other profile's kind when it says a profile is of
    another model's kind."""
    m = _OTHER_KIND.search(message)
    commands = commands_of_kind(m.group(1)) if m else []
    if not commands:
        return message
    return f"{message}; the {m.group(1)} model is run by " + " and ".join(f"`nicbench {c}`" for c in commands)


def one_line(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    if isinstance(exc, OSError) and exc.filename and exc.strerror:
        text = f"{exc.filename}: {exc.strerror}"
    return one_line_text(text)


# Words longer than this are cut in error lines (a megabyte-long bad token must not be echoed whole);
# the Rust parsers cut their tokens to 40 characters already, this catches the rest.
LONG_WORD_CHARS = 200
CUT_WORD_KEEP_CHARS = 40


def one_line_text(text: str) -> str:
    words = text.split()
    return " ".join(w if len(w) <= LONG_WORD_CHARS else w[:CUT_WORD_KEEP_CHARS] + "..." for w in words)


def fail(message: str) -> None:
    """Raise a user error from inside a command."""
    raise NicbenchError(message)


# Above this size `--json` output is written without indentation: the indenting encoder is Python's
# pure-Python one (~20x slower than the C encoder that compact output uses), which made a 16K-flow
# `nicbench vswitch --json` (~75 MB) spend most of its two minutes formatting.
INDENT_MAX_CHARS = 1 << 20


def emit_json(data: Any) -> None:
    def default(o: Any) -> Any:
        if hasattr(o, "item"):  # numpy scalars
            v = o.item()
            return None if isinstance(v, float) and not math.isfinite(v) else v
        raise TypeError(f"not JSON serializable: {type(o).__name__}")

    def clean(o: Any) -> Any:
        # JSON has no NaN/inf: say null rather than emit invalid JSON.
        if isinstance(o, float) and not math.isfinite(o):
            return None
        if isinstance(o, dict):
            return {k: clean(v) for k, v in o.items()}
        if isinstance(o, (list, tuple)):
            return [clean(v) for v in o]
        return o

    try:  # most outputs hold no NaN/inf: skip the walk that replaces them
        text = json.dumps(data, allow_nan=False, default=default)
    except ValueError:
        data = clean(data)
        text = json.dumps(data, default=default)
    if len(text) <= INDENT_MAX_CHARS:
        text = json.dumps(data, indent=2, default=default, allow_nan=False)
    sys.stdout.write(text + "\n")


class FiniteFloat(click.ParamType):
    """A float option that refuses NaN and ±inf (click's FLOAT takes "nan" and "inf"), optionally
    with inclusive bounds."""

    name = "number"

    def __init__(self, min: float | None = None, max: float | None = None):  # noqa: A002 (click's names)
        self.min, self.max = min, max

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        try:
            number = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number", param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        if (self.min is not None and number < self.min) or (self.max is not None and number > self.max):
            self.fail(f"{value} (allowed: {describe_range(self.min, self.max)})", param, ctx)
        return number


class NonEmptyPath(click.Path):
    """click.Path that refuses an empty value: click takes '' as a path, which then meant "the current
    folder", "not given" (a silent default) or an error naming no file, depending on the command."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not value.strip():
            kind = "folder" if not self.file_okay else "file" if not self.dir_okay else "file or folder"
            self.fail(f"{value!r} is empty (give a {kind} name)", param, ctx)
        return super().convert(value, param, ctx)


# What `SpecFile` takes for a spec name, not a file name: `<study>/<spec>`, no `.toml`.
_SPEC_NAME = re.compile(r"[\w.-]{1,100}/[\w-][\w.-]{0,99}(?<!\.toml)")


class SpecFile(NonEmptyPath):
    """An experiment spec: a file, or a spec the installation carries named `<study>/<spec>`
    (`pam21/fig2a`: `studies/pam21/experiments/fig2a.toml` of the packaged or checkout studies,
    nicbench.data_files), so `nicbench check pam21/fig2a` works from any directory. A file of
    that name in the current folder wins."""

    def __init__(self) -> None:
        super().__init__(dir_okay=False)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        value = super().convert(value, param, ctx)
        if not isinstance(value, str) or not _SPEC_NAME.fullmatch(value) or os.path.lexists(value):
            return value  # a file name, or an existing file, folder, dangling link: load_spec says what is wrong
        from nicbench import data_files

        packaged = data_files.spec(value)
        if packaged is not None:
            return str(packaged)
        names = data_files.spec_names()
        studies = sorted({n.partition("/")[0] for n in names})
        study = value.partition("/")[0]
        in_study = [n for n in names if n.startswith(f"{study}/")]
        allowed = (
            f"{study}'s specs: {', '.join(n.partition('/')[2] for n in in_study)}"
            if in_study
            else f"studies: {', '.join(studies) or 'none'}"
        )
        self.fail(
            f"{value}: no such file, nor a packaged spec <study>/<spec> in {data_files.studies()} ({allowed})",
            param,
            ctx,
        )


def set_off_default(ctx: click.Context, name: str) -> bool:
    """Whether option `name` was given on the command line with a value other than its default: for
    options a mode ignores, refused then (a mistake) while the default given explicitly (what the
    mode does anyway) stays accepted."""
    if ctx.get_parameter_source(name) is not click.core.ParameterSource.COMMANDLINE:
        return False
    default = next((p.default for p in ctx.command.params if p.name == name), None)
    value = ctx.params[name]
    return value != default and not (isinstance(value, tuple) and not value)


def first_set_off_default(names: tuple[str, ...]) -> tuple[str, Any] | None:
    """Of the current command's options `names`, the first given off its default (`set_off_default`):
    its flag as the command line spells it (`--install-core`) and its value; None when there is none.
    For options the chosen mode ignores: the caller refuses it, saying what it needs."""
    ctx = click.get_current_context()
    for name in names:
        if set_off_default(ctx, name):
            param = next(p for p in ctx.command.params if p.name == name)
            return max(param.opts, key=len), ctx.params[name]
    return None


# Linux interface names: at most IFNAMSIZ - 1 bytes, and dev_valid_name() refuses '.', '..', '/', ':'
# and whitespace (a name tc could not take back).
IFNAME_MAX_BYTES = 15


class InterfaceName(click.ParamType):
    """A network interface name as Linux accepts it (`eth0`, `ens1f0np0`): what `tc ... dev NAME` takes."""

    name = "interface"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = str(value)
        bad = (
            not text
            or text in (".", "..")
            or len(text.encode()) > IFNAME_MAX_BYTES
            or any(c in "/:" or c.isspace() for c in text)
        )
        if bad:
            self.fail(
                f"{text!r} is not an interface name (allowed: 1 to {IFNAME_MAX_BYTES} bytes, no '/', ':' "
                "or spaces, such as eth0)",
                param,
                ctx,
            )
        return text


class PortName(click.ParamType):
    """A switch port's name as OpenFlow rules write it (`p0`, `vm`, `dpdk0`): a name with a space, ','
    or '=' could not appear in a rule, and an empty one names nothing."""

    name = "port"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = str(value)
        if not text or any(c in ",=" or c.isspace() for c in text):
            self.fail(
                f"{text!r} is not a port name (allowed: a name such as p0 or vm, without spaces, ',' or '=')",
                param,
                ctx,
            )
        return text


json_option = click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON on stdout.")


@contextmanager
def progress_bar(
    description: str, total: float | None, enabled: bool = True, unit: str = ""
) -> Iterator[Callable[[float], None]]:
    """Yield an `update(done)` callback driving a rich progress bar on stderr.

    The bar only shows on an interactive terminal, so pipes, CI logs and `--json`
    output stay clean. `unit` words the done/total figures: "B" (shown in MB), "s" (virtual
    seconds, with 3 digits: a 10 ms run is not "0/0"), or a noun for counts ("packets").
    """
    show = enabled and stderr_console.is_terminal
    if not show:
        # No bar to draw: rich.progress is not even imported (a tenth of a second of start-up
        # that `nicbench pcap info FILE > out` would pay for nothing).
        yield lambda done: None
        return
    # Imported here: only commands that run long work need it, not `nicbench --help`.
    from rich.progress import (
        BarColumn,
        Progress,
        ProgressColumn,
        TaskProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text

    class DoneColumn(ProgressColumn):
        """done/total in the work's unit (rich's MofNCompleteColumn prints 396361752/1243421952)."""

        def render(self, task: Any) -> Text:
            return Text(done_of_total(task.completed, task.total, unit), style="progress.download")

    columns = [
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TaskProgressColumn(),
        DoneColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    ]
    with Progress(*columns, console=stderr_console.console, transient=False) as progress:
        task = progress.add_task(description, total=total)

        def update(done: float) -> None:
            progress.update(task, completed=done)

        yield update
        if total is not None:
            progress.update(task, completed=total)


def done_of_total(done: float, total: float | None, unit: str = "") -> str:
    """`396.4/1,243.4 MB`, `0.004/0.01 s`, `8,224/82,237 packets`: a progress bar's figures."""

    def show(v: float) -> str:
        if unit == "B":
            return f"{v / 1e6:,.1f}"
        if unit == "s":
            return f"{v:.3g}"
        return f"{v:,.0f}"

    label = {"B": "MB"}.get(unit, unit)
    return f"{show(done)}/{'?' if total is None else show(total)}" + (f" {label}" if label else "")


@contextmanager
def spinner(description: str, enabled: bool = True) -> Iterator[None]:
    """A rich spinner with `description` on stderr while a long step with no measure of progress runs
    (loading or writing a large rule set, a calibration fit). Like `progress_bar`, only on an
    interactive terminal: pipes, CI logs and `--json` get nothing extra."""
    if not (enabled and stderr_console.is_terminal):
        yield
        return
    with stderr_console.console.status(description):
        yield


def counted(n: int, noun: str) -> str:
    """`1 point`, `24 points`, `1,000 runs`: a count and its noun, plural unless one."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def fmt_number(v: Any, digits: int = 4) -> str:
    """A number for people: whole numbers from 10^(digits-1) up, grouped (32,895, not 3.29e+04); below that
    `digits` significant digits (12.34, 0.0392); exponents only under 0.001; "0" for any zero (no "-0");
    "–" when missing or not finite."""
    if not isinstance(v, (int, float)) or not math.isfinite(v):
        return "–"
    if v == 0:
        return "0"
    magnitude = abs(v)
    if magnitude >= 10 ** (digits - 1):
        return f"{v:,.0f}"
    if magnitude >= 1e-3:
        return f"{v:,.{digits}g}"
    return f"{v:.{max(digits - 1, 0)}e}"


def parse_overrides(items: tuple[str, ...], profile: str | None = None) -> dict[str, float]:
    """`--set NAME=VALUE` options (profile parameter overrides) → {name: value}. With `profile`
    (a name or path), a NAME that is not one of its parameters is refused naming --set, the closest
    parameter and the profile's parameters (the model would only say "unknown parameter")."""
    out: dict[str, float] = {}
    for item in items:
        if "=" not in item:
            raise NicbenchError(f"--set: expected NAME=VALUE (a profile parameter), found {item!r}")
        k, v = item.split("=", 1)
        try:
            out[k.strip()] = float(v)
        except ValueError:
            raise NicbenchError(f"--set {k.strip()}: expected a number, found {v.strip()!r}") from None
        if not math.isfinite(out[k.strip()]):
            raise NicbenchError(f"--set {k.strip()}: expected a finite number, found {v.strip()!r}")
    if out and profile is not None:
        _check_profile_params(out, profile)
    return out


def _check_profile_params(overrides: dict[str, float], profile: str) -> None:
    import difflib

    from nicbench.profiles import load

    doc = load(profile)
    known = sorted(doc.get("param") or {})
    for name in overrides:
        if name in known:
            continue
        close = difflib.get_close_matches(name, known, n=3)
        hint = f"did you mean {' or '.join(repr(c) for c in close)}? " if close else ""
        if len(", ".join(known)) <= _PARAMS_LISTED_CHARS:
            listing = f"its parameters: {', '.join(known)}"
        else:  # a SmartNIC profile has ~70: the family of the name given, and where they all are
            family = name.split("_")[0] + "_"
            kin = [k for k in known if k.startswith(family)]
            listing = f"{family}*: {', '.join(kin)}; " if kin and len(", ".join(kin)) <= _PARAMS_LISTED_CHARS else ""
            listing += f"all {len(known)} in {os.path.normpath(doc.get('path', profile))}"
        raise NicbenchError(f"--set {name}: not a parameter of profile {doc.get('name', profile)} ({hint}{listing})")


# How long a list of profile parameters an error line shows in full.
_PARAMS_LISTED_CHARS = 500


class OptionValue(click.ParamType):
    """A command-line value parsed by its option's definition (`nicbench.options.Option.parse`): the
    same kind, range, choices and error wording as the spec key of that name."""

    def __init__(self, option: Any):
        self.option = option
        self.name = option.kind

    # A value's name in --help by its kind, where the option names none.
    _METAVARS = {
        "int": "INTEGER",
        "count": "COUNT",
        "float": "NUMBER",
        "fraction": "FRACTION",
        "rate_bps": "RATE",
        "rate_pps": "RATE",
        "duration_ns": "DURATION",
        "size_bytes": "BYTES",
        "str": "TEXT",
        "bool": "BOOLEAN",
    }

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str | None:
        if self.option.choices:
            return "[" + "|".join(self.option.choices) + "]"
        return self.option.cli_metavar or self._METAVARS.get(self.option.kind)

    def shell_complete(self, ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
        from click.shell_completion import CompletionItem

        if self.option.choices:
            return [CompletionItem(c) for c in self.option.choices if c.startswith(incomplete)]
        if self.option.path:
            return [CompletionItem(incomplete, type="file")]
        return []

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if self.option.path and isinstance(value, str) and not value.strip():
            self.fail(f"{value!r} is empty (give a file name)", param, ctx)
        try:
            # A profile's kind is the model's to check on the command line: it names the command that runs
            # a profile of another kind (a spec's parameter is checked as it is parsed).
            return self.option.parse(value, profile_check=False)
        except UnitError as exc:
            self.fail(str(exc), param, ctx)
        except NicbenchError as exc:  # a `cli_text` converter's, which names the option itself
            raise click.UsageError(str(exc), ctx) from None


def table_option(option: Any) -> Callable[[Callable], Callable]:
    """The click option of a table option (`nicbench.options.Option`): its flag, default (the CLI's
    own where it has one), help with the allowed range, and its parser."""
    from nicbench.options import SAME

    default = option.default if option.cli_default is SAME else option.cli_default
    allowed = option.allowed()
    text = " ".join(t for t in (option.help, f"Allowed: {allowed}." if allowed else "", option.cli_note) if t)
    if option.kind == "bool":  # a switch: given means true
        return click.option(option.flag, option.name, is_flag=True, default=bool(default), help=text)
    if option.cli_multiple:
        return click.option(
            option.flag, option.name, type=OptionValue(option), multiple=True, required=default is None, help=text
        )
    return click.option(
        option.flag, option.name, type=OptionValue(option), default=default, show_default=default is not None, help=text
    )


def table_options(options: list[Any]) -> Callable[[Callable], Callable]:
    """Decorate a command with the click options of `options`, in this order in --help."""

    def decorate(fn: Callable) -> Callable:
        for option in reversed(options):
            fn = table_option(option)(fn)
        return fn

    return decorate
