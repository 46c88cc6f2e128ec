"""The `nicbench` command line.

Thin by design: each sub-module parses options, calls the library and renders
either rich tables (default) or JSON (`--json`). Every command exits with code 2
and a one-line `nicbench: error: ...` on bad arguments or bad input.

Each sub-module is named for the API module it fronts (`traffic`, `traces`, `rules`,
`connectx`, `calibrate`, `flows`, `offpath`, `flowhost`, `pvp`, `experiments`) and lists its
commands in `COMMANDS`. The group imports a sub-module only when one of its commands
runs or shows its help, so `nicbench gen` never loads the experiment harness (pandas,
pyarrow) or the reports (matplotlib).
"""

from __future__ import annotations

from importlib import import_module

import click

from nicbench import __version__
from nicbench.cli.common import SHORT_HELP_CHARS, NicbenchGroup

# Command name as users type it -> (the sub-module of nicbench.cli that defines it, the first
# sentence of its help). The summaries let `nicbench --help` list every command without
# importing one; a test checks that they match the commands' own help.
COMMANDS = {
    "run": ("experiments", "Run the missing runs of SPEC's sweep (resumable: re-run after an interruption)."),
    "check": ("experiments", "Validate SPEC and print what it would run (points × repetitions)."),
    "report": ("experiments", "Write the HTML report of an experiment's results folder (results/<experiment>)."),
    "results": ("experiments", "List and export stored experiment results."),
    "reproduce": ("experiments", "Run every experiment of STUDY (or --all studies) and build the study reports "
                                 "under reports/."),
    "compare": ("experiments", "Compare two result folders of one experiment point by point; exit 1 on a "
                               "regression."),
    "gen": ("traffic", "Generate N flows at a rate and write them to a pcap."),
    "pcap": ("traces", "Inspect pcap/pcapng traces."),
    "rss": ("traces", "Per-queue packets and flows of FILE under Toeplitz RSS, and the imbalance (max/mean)."),
    "rules": ("rules",
              "Check, convert and generate rule files (testpmd, tc flower, ClassBench); summarise OpenFlow files."),
    "classify": ("rules",
                 "Per-rule hits, per-queue packets and bytes (RSS resolved as the mlx5 PMD does), dropped and "
                 "unmatched packets, and the rate achieved."),
    "simulate": ("connectx", "Run traffic through a virtual NIC with pre-installed rules (and optional rule "
                             "updates)."),
    "calibrate": ("calibrate",
                  "Fit a NIC profile's opaque parameters to a study's calibration set, or to your measurements."),
    "flows": ("flows", "Bidirectional flow records (Argus-style) from PCAP or --live IFACE, with per-worker "
                       "balance and rate."),
    "paths": ("offpath", "Predict a mix of RDMA flows on an off-path SmartNIC: throughput, latency, bottleneck, "
                         "advice."),
    "flowhost": ("flowhost", "Predict drops and per-core load of N flow-meter cores behind a virtual Napatech NIC."),
    "pvp": ("pvp", "Predict Red Hat PVP through an OVS-TC offload NIC: rate, loss, offloads, host cores."),
    "vswitch": ("vswitch", "The virtual Open vSwitch datapath in front of an OVS-TC offload NIC."),
}


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
