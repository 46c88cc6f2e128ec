"""A bad command line (unknown command or option, missing or invalid value) gets the same
one line as bad input: `nicbench: error: <command>: <what> (see '<command> --help')`, exit 2,
at the top level and in nested groups; a bare group still prints its help."""

from __future__ import annotations

import pytest
from helpers import run_cli


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["gen", "--bogus"], "nicbench: error: gen: No such option '--bogus' (see 'nicbench gen --help')"),
        (["--bogus"], "nicbench: error: No such option '--bogus' (see 'nicbench --help')"),
        (["nosuchcommand"], "nicbench: error: No such command 'nosuchcommand' (see 'nicbench --help')"),
        (["rules", "nosuch"], "nicbench: error: rules: No such command 'nosuch' (see 'nicbench rules --help')"),
        (["pcap", "info"], "nicbench: error: pcap info: Missing argument 'FILE' (see 'nicbench pcap info --help')"),
        (["rss", "x.pcap"], "nicbench: error: rss: Missing option '--queues' (see 'nicbench rss --help')"),
        (
            ["rules", "convert", "x.flow", "--to", "xx"],
            "nicbench: error: rules convert: Invalid value for '--to': 'xx' is not one of 'testpmd', 'tc' "
            "(see 'nicbench rules convert --help')",
        ),
        # Integers beyond what the Rust side takes were Python OverflowError tracebacks (issue 17).
        (
            ["rules", "gen", "--seed", "-1", "-o", "x.flow"],
            "nicbench: error: rules gen: Invalid value for '--seed': -1 (allowed: 0 to 18446744073709551615) "
            "(see 'nicbench rules gen --help')",
        ),
        (
            ["rules", "convert", "x.flow", "--to", "testpmd", "--port", "70000"],
            "nicbench: error: rules convert: Invalid value for '--port': 70000 (allowed: 0 to 65535) "
            "(see 'nicbench rules convert --help')",
        ),
        (
            ["rss", "x.pcap", "--queues", "4", "--reta-size", "-5"],
            "nicbench: error: rss: Invalid value for '--reta-size': -5 (allowed: 64 to 512) "
            "(see 'nicbench rss --help')",
        ),
        (
            ["gen", "--seed", "18446744073709551616", "-o", "x.pcap"],
            "nicbench: error: gen: Invalid value for '--seed': 18446744073709551616 (allowed: "
            "0 to 18446744073709551615) (see 'nicbench gen --help')",
        ),
        (
            ["run", "x.toml", "--jobs", "0"],
            "nicbench: error: run: Invalid value for '--jobs' / '-j': 0 (allowed: 1 to 1024) "
            "(see 'nicbench run --help')",
        ),
        (
            ["run", "x.toml", "--limit-points", "0"],
            "nicbench: error: run: Invalid value for '--limit-points': 0 (allowed: at least 1) "
            "(see 'nicbench run --help')",
        ),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else "",
)
def test_usage_error_is_one_line_and_exit_2(args, line):
    proc = run_cli(*args)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    assert proc.stderr.splitlines() == [line]


@pytest.mark.parametrize("args", [[], ["rules"]], ids=["nicbench", "nicbench rules"])
def test_a_bare_group_prints_its_help(args):
    proc = run_cli(*args)
    assert proc.returncode == 2
    assert "Usage:" in proc.stdout + proc.stderr and "Commands:" in proc.stdout + proc.stderr
    assert "nicbench: error" not in proc.stderr
