"""The `nicbench` command line.

Thin by design: each sub-module parses options, calls the library and renders
either rich tables (default) or JSON (`--json`). Every command exits with code 2
and a one-line `nicbench: error: ...` on bad arguments or bad input.
"""

from __future__ import annotations

import click

from nicbench import __version__
from nicbench.cli.common import NicbenchGroup


@click.group(cls=NicbenchGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="nicbench")
def main() -> None:
    """nicbench: virtual (Smart)NICs and fast software packet-processing parts."""


def _register() -> None:
    # Imported here so that `nicbench --help` stays fast and sub-modules stay independent.
    from nicbench.cli import calibrate, connectx, experiments, flowhost, flows, offpath, rules, traces, traffic

    for module in (experiments, traffic, traces, rules, connectx, calibrate, flows, offpath, flowhost):
        for command in module.COMMANDS:
            main.add_command(command)


_register()
