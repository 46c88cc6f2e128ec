"""The light front: `import nicbench`, `nicbench --help` and the trace/rule/path commands load
neither pandas, pyarrow nor matplotlib (they cost ~1 s of start-up; only the experiment harness
and the reports need them). Each case runs in a fresh interpreter and reports `sys.modules`,
so an eager import anywhere on the path (package, CLI group, command module) fails here.
Start-up time itself is measured in BENCHMARKS.md, never asserted.
"""

from __future__ import annotations

import json
import subprocess
import sys

import click
import pytest

from nicbench.cli import COMMANDS, LazyGroup, main
from nicbench.cli.common import WholeHelpGroup

HEAVY = ("pandas", "pyarrow", "matplotlib")

# Runs the real command line in-process, then prints its exit code and the heavy modules loaded.
PROBE = f"""
import json, sys
code = 0
if sys.argv[1:] != ["--import-only"]:
    from nicbench.cli import main
    try:
        main(sys.argv[1:], prog_name="nicbench")
    except SystemExit as exc:
        code = exc.code or 0
else:
    import nicbench
heavy = sorted(m for m in sys.modules if m.split(".")[0] in {set(HEAVY)!r})
cli = sorted(m for m in sys.modules if m.startswith("nicbench.cli."))
sys.stderr.write("PROBE " + json.dumps({{"code": code, "heavy": heavy, "cli": cli}}) + "\\n")
"""


def probe(*args: str) -> dict:
    """Exit code, heavy modules and nicbench.cli sub-modules loaded, and the output of `nicbench ARGS`."""
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True)
    lines = [line for line in proc.stderr.splitlines() if line.startswith("PROBE ")]
    assert lines, f"the probe did not finish: {proc.stderr[-2000:]}"
    return {**json.loads(lines[-1][len("PROBE ") :]), "output": proc.stdout + proc.stderr}


@pytest.mark.parametrize(
    "args",
    [
        ["--import-only"],
        ["--help"],
        ["--version"],
        *[[name, "--help"] for name in sorted(COMMANDS)],
    ],
    ids=lambda a: " ".join(a),
)
def test_help_and_import_load_no_heavy_module(args):
    r = probe(*args)
    assert r["code"] == 0, r["output"]
    assert r["heavy"] == [], f"`{' '.join(args)}` imported {r['heavy']}"
    # The listing comes from the registry; a command's help loads only that command's module.
    expected = (
        {"nicbench.cli.common"}
        if args[0].startswith("-")
        else {"nicbench.cli.common", f"nicbench.cli.{COMMANDS[args[0]][0]}"}
    )
    assert set(r["cli"]) <= expected, r["cli"]


def test_commands_run_without_heavy_modules(tmp_path):
    trace, rules, converted = tmp_path / "t.pcap", tmp_path / "r.flow", tmp_path / "c.flow"
    runs = [
        ["gen", "--flows", "50", "--size", "128", "--packets", "200", "-o", str(trace)],
        ["pcap", "info", str(trace), "--json"],
        ["rss", str(trace), "--queues", "4", "--json"],
        ["rules", "gen", "--count", "20", "-o", str(rules)],
        ["rules", "check", str(rules), "--json"],
        ["rules", "convert", str(rules), "--to", "testpmd", "-o", str(converted)],
        ["classify", "--rules", str(rules), "--pcap", str(trace), "--json"],
        ["paths", "--nic", "bluefield2", "--flow", "client->soc READ 4KiB", "--json"],
    ]
    for args in runs:  # in order: later runs read the files earlier ones wrote
        r = probe(*args)
        assert r["code"] == 0, f"`nicbench {' '.join(args)}` failed: {r['output'][-2000:]}"
        assert r["heavy"] == [], f"`nicbench {' '.join(args)}` imported {r['heavy']}"
    assert trace.stat().st_size > 0 and converted.read_text().count("flow create") == 20


def test_a_bad_argument_stays_one_line_and_light(tmp_path):
    r = probe("gen", "--rate", "fast", "-o", str(tmp_path / "x.pcap"))
    assert r["code"] == 2 and r["heavy"] == []
    first = r["output"].splitlines()[0]
    assert first.startswith("nicbench: error: ") and "rate" in first


def test_every_registered_command_resolves_and_every_exported_command_is_registered():
    import importlib

    ctx = click.Context(main, info_name="nicbench")
    for name in COMMANDS:
        command = main.get_command(ctx, name)
        assert command is not None and command.name == name, name
    for module in sorted({m for m, _ in COMMANDS.values()}):
        exported = {c.name for c in importlib.import_module(f"nicbench.cli.{module}").COMMANDS}
        registered = {name for name, (m, _) in COMMANDS.items() if m == module}
        assert exported == registered, f"nicbench.cli.{module}: exports {exported}, registered {registered}"


@pytest.mark.parametrize("width", [50, 80, 120])
def test_the_listing_from_the_registry_equals_the_commands_own_help(width):
    # A fresh group has loaded nothing and lists from the summaries; the eager one holds the real commands.
    fresh = LazyGroup(name="nicbench", callback=main.callback, params=main.params, help=main.help)
    real = [main.get_command(click.Context(main), name) for name in COMMANDS]
    eager = WholeHelpGroup(name="nicbench", callback=main.callback, params=main.params, help=main.help, commands=real)

    def rendered(group: click.Group) -> str:
        return group.get_help(click.Context(group, info_name="nicbench", terminal_width=width, max_content_width=width))

    assert rendered(fresh) == rendered(eager)
    assert all(name in rendered(fresh) for name in COMMANDS)
    assert "..." not in rendered(fresh).split("Commands:")[1]  # each summary whole, wrapped, not cut
