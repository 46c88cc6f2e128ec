"""Every command takes `--json` (the README's promise): the whole click tree, walked from `nicbench`,
each leaf command checked, so a new command without it fails here rather than in a user's script."""

from __future__ import annotations

import json

import click
from click.testing import CliRunner

from nicbench.cli import main

# Leaf commands (as typed after `nicbench`) where a JSON answer would make no sense, each with why.
# Empty: every command so far answers with JSON, even those that only write a file (a summary of
# what was written). Add an entry only with its reason.
NO_JSON: dict[str, str] = {}


def leaf_commands(group: click.Group, ctx: click.Context, prefix: tuple[str, ...] = ()):
    """(path, command) for every command under `group` that is not itself a group."""
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None, f"{' '.join((*prefix, name))} is listed but cannot be loaded"
        path = (*prefix, name)
        if isinstance(command, click.Group):
            yield from leaf_commands(command, click.Context(command, parent=ctx, info_name=name), path)
        else:
            yield path, command


def test_every_leaf_command_has_a_json_option():
    leaves = dict(leaf_commands(main, click.Context(main, info_name="nicbench")))
    # The walk reached the sub-groups (an empty walk would pass anything).
    assert ("results", "export") in leaves and ("rules", "check") in leaves and len(leaves) > 20
    without = sorted(
        " ".join(path)
        for path, command in leaves.items()
        if not any("--json" in p.opts for p in command.params if isinstance(p, click.Option))
    )
    assert without == sorted(NO_JSON), f"commands without --json: {without}"
    for path in NO_JSON:  # an exemption for a command that is gone, or has --json now, is stale
        assert tuple(path.split()) in leaves


def test_results_export_json_says_what_was_written(tmp_path):
    spec = tmp_path / "noop.toml"
    spec.write_text('[experiment]\nname = "export-json"\ntarget = "synthetic.noop"\nrepeat = 2\n[sweep]\nx = [1, 2]\n')
    runner = CliRunner()
    root = tmp_path / "r"
    assert runner.invoke(main, ["run", str(spec), "--results", str(root), "--jobs", "1", "--json"]).exit_code == 0
    out = tmp_path / "all.parquet"
    done = runner.invoke(main, ["results", "export", str(root / "export-json"), "-o", str(out), "--json"])
    assert done.exit_code == 0, done.output
    answer = json.loads(done.stdout)
    import pandas as pd

    written = pd.read_parquet(out)
    assert (answer["experiment"], answer["output"], answer["format"]) == ("export-json", str(out), "parquet")
    assert answer["rows"] == len(written) == 2 * 2 * 2  # 2 points × 2 repetitions × 2 records (noop's)
    assert answer["columns"] == list(written.columns) and "status" in answer["columns"]


def test_results_export_json_without_a_file_is_refused(tmp_path):
    """Without -o the CSV is stdout: --json there is one error line, exit 2, not JSON mixed into CSV."""
    done = CliRunner().invoke(main, ["results", "export", str(tmp_path / "none"), "--json"])
    assert done.exit_code == 2
    assert "--json needs -o FILE" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert json.loads(done.stdout)["exit_code"] == 2  # under --json the error is also JSON on stdout
