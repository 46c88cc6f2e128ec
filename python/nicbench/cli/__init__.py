"""The `nicbench` command line.

Thin by design: each sub-module parses options, calls the library and renders
either rich tables (default) or JSON (`--json`). Every command exits with code 2
and a one-line `nicbench: error: ...` on bad arguments or bad input, and with code 130
and a one-line `nicbench: interrupted: <what is kept>` on Ctrl-C (`common.NicbenchGroup`).

Each sub-module is named for the API module it fronts (`traffic`, `traces`, `rules`,
`connectx`, `calibrate`, `flows`, `offpath`, `flowhost`, `pvp`, `vswitch`, `experiments`) and
lists its commands in `COMMANDS`, their one-line summaries in `SUMMARIES`. The group imports a
sub-module only when one of its commands runs or shows its help, so `nicbench gen` never loads
the experiment harness (pandas, pyarrow) or the reports (matplotlib).
"""

from __future__ import annotations

from importlib import import_module
from pathlib import Path

import click

from nicbench import __version__
from nicbench.cli.common import SHORT_HELP_CHARS, NicbenchGroup
from nicbench.literals import module_literal


def _summaries() -> dict[str, tuple[str, str]]:
    """Command name -> (the sub-module that defines it, the first sentence of its help), read from each
    sub-module's `SUMMARIES` literal without importing the module (a new command module needs no
    entry here; a test checks the summaries against the commands' own help)."""
    found: dict[str, tuple[str, str]] = {}
    for path in sorted(Path(__file__).parent.glob("*.py")):
        for name, summary in (module_literal(path.read_text(encoding="utf-8"), "SUMMARIES") or {}).items():
            found[name] = (path.stem, summary)
    return found


# Command name as users type it -> (the sub-module of nicbench.cli that defines it, the first
# sentence of its help). The summaries let `nicbench --help` list every command without
# importing one.
COMMANDS = _summaries()


class LazyGroup(NicbenchGroup):
    """Lists every command from `COMMANDS` and imports a command's module on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *COMMANDS})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        command = super().get_command(ctx, name)
        if command is None and name in COMMANDS:
            module_name = f"nicbench.cli.{COMMANDS[name][0]}"
            by_name = {c.name: c for c in import_module(module_name).COMMANDS}
            if name not in by_name:  # a registry/module mismatch is a bug, not a user error
                raise RuntimeError(f"{module_name} does not export a command {name!r}")
            command = by_name[name]
            self.add_command(command)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # click's own listing, but from the summaries: stand-ins carry a command's name and help.
        names = self.list_commands(ctx)
        if not names:
            return
        rows = []
        for name in names:
            loaded = super().get_command(ctx, name)
            command = loaded or click.Command(name, help=COMMANDS[name][1])
            if not command.hidden:
                rows.append((name, command.get_short_help_str(SHORT_HELP_CHARS)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="nicbench")
def main() -> None:
    """nicbench: virtual (Smart)NICs and fast software packet-processing parts."""
