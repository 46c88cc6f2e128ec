"""The `nicbench` command line.

Thin by design: each sub-module parses options, calls the library and renders
either rich tables (default) or JSON (`--json`). Every command exits with code 2
and a one-line `nicbench: error: ...` on bad arguments or bad input.

Each sub-module is named for the API module it fronts (`traffic`, `traces`, `rules`,
`connectx`, `calibrate`, `flows`, `offpath`, `flowhost`, `experiments`) and lists its
commands in `COMMANDS`. The group imports a sub-module only when one of its commands
runs or shows its help, so `nicbench gen` never loads the experiment harness (pandas,
pyarrow) or the reports (matplotlib).
"""

from __future__ import annotations

from importlib import import_module

import click

from nicbench import __version__
from nicbench.cli.common import NicbenchGroup

# Command name as users type it -> the sub-module of nicbench.cli that defines it.
COMMAND_MODULES = {
    "run": "experiments", "check": "experiments", "report": "experiments", "results": "experiments",
    "reproduce": "experiments",
    "gen": "traffic",
    "pcap": "traces", "rss": "traces",
    "rules": "rules", "classify": "rules",
    "simulate": "connectx",
    "calibrate": "calibrate",
    "flows": "flows",
    "paths": "offpath",
    "flowhost": "flowhost",
}


class LazyGroup(NicbenchGroup):
    """Lists every command by name and imports a command's module on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *COMMAND_MODULES})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        command = super().get_command(ctx, name)
        if command is None and name in COMMAND_MODULES:
            module = import_module(f"nicbench.cli.{COMMAND_MODULES[name]}")
            by_name = {c.name: c for c in module.COMMANDS}
            if name not in by_name:  # a registry/module mismatch is a bug, not a user error
                raise RuntimeError(f"nicbench.cli.{COMMAND_MODULES[name]} does not export a command {name!r}")
            command = by_name[name]
            self.add_command(command)
        return command


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="nicbench")
def main() -> None:
    """nicbench: virtual (Smart)NICs and fast software packet-processing parts."""
