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
from pathlib import Path

import pytest

from nicbench.cli import COMMAND_MODULES, main

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
sys.stderr.write("PROBE " + json.dumps({{"code": code, "heavy": heavy}}) + "\\n")
"""


def probe(*args: str, cwd: Path | None = None) -> tuple[int, list[str], str]:
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, cwd=cwd)
    lines = [line for line in proc.stderr.splitlines() if line.startswith("PROBE ")]
    assert lines, f"the probe did not finish: {proc.stderr[-2000:]}"
    result = json.loads(lines[-1][len("PROBE "):])
    return result["code"], result["heavy"], proc.stdout + proc.stderr


@pytest.mark.parametrize("args", [
    ["--import-only"],
    ["--help"],
    ["--version"],
    *[[name, "--help"] for name in sorted(COMMAND_MODULES)],
], ids=lambda a: " ".join(a))
def test_help_and_import_load_no_heavy_module(args):
    code, heavy, output = probe(*args)
    assert code == 0, output
    assert heavy == [], f"`{' '.join(args)}` imported {heavy}"


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
        code, heavy, output = probe(*args)
        assert code == 0, f"`nicbench {' '.join(args)}` failed: {output[-2000:]}"
        assert heavy == [], f"`nicbench {' '.join(args)}` imported {heavy}"
    assert trace.stat().st_size > 0 and converted.read_text().count("flow create") == 20


def test_a_bad_argument_stays_one_line_and_light(tmp_path):
    code, heavy, output = probe("gen", "--rate", "fast", "-o", str(tmp_path / "x.pcap"))
    assert code == 2 and heavy == []
    assert output.splitlines()[0].startswith("nicbench: error: ") and "rate" in output.splitlines()[0]


def test_every_registered_command_resolves_and_every_exported_command_is_registered():
    import importlib

    import click

    ctx = click.Context(main, info_name="nicbench")
    for name, module in COMMAND_MODULES.items():
        command = main.get_command(ctx, name)
        assert command is not None and command.name == name, name
    for module in sorted(set(COMMAND_MODULES.values())):
        exported = {c.name for c in importlib.import_module(f"nicbench.cli.{module}").COMMANDS}
        registered = {name for name, m in COMMAND_MODULES.items() if m == module}
        assert exported == registered, f"nicbench.cli.{module}: exports {exported}, registered {registered}"
