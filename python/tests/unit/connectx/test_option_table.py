"""One option table for `nicbench simulate` and the `connectx.*` targets (issue 34): a spec sets and
sweeps what the command line takes, both parse a value the same way, and the runs stored before the
table keep their keys and seeds."""

from __future__ import annotations

import click
import pytest
from helpers import forked_cli, run_spec_records

from nicbench.cli.connectx import simulate
from nicbench.experiments.designs.base import make_request
from nicbench.experiments.keys import derive_seed, run_identity
from nicbench.experiments.spec import parse_spec
from nicbench.experiments.targets import get_target
from nicbench.options import SAME
from nicbench.options.connectx import OPTIONS


def harness(*args: str):
    return forked_cli(*args)


def assert_one_line_error(proc, *needles: str) -> None:
    lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
    assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("nicbench: error:"), proc.stderr
    for needle in needles:
        assert needle in lines[0], proc.stderr


# The acceptance case: 64 B frames at 100 Gb/s spread by the port's RSS over 8 queues, polled by
# 1 or 8 forwarding cores; one core is the bottleneck. A few ms of virtual time: fast.
CORES_SPEC = """
[experiment]
name = "cores-sweep"
target = "connectx.forward"
repeat = 1

[params]
rules = 0
size = 64
rate = "100Gbps"
flows = 1000
queues = 8
duration = "2ms"

[sweep]
cores = [1, 8]
"""


def test_a_spec_sweeps_cores_on_connectx_forward_and_the_points_differ(tmp_path):
    df = run_spec_records(tmp_path, CORES_SPEC, "cores-sweep", executed=2)
    rx = df[df["metric"] == "rx_mpps"].set_index("cores")["value"]
    offered = df[df["metric"] == "offered_mpps"].set_index("cores")["value"]
    assert sorted(rx.index) == [1, 8]
    # One core forwards well below what it is offered; eight forward much more (until the NIC's root-table
    # lookup limits them, see test_cli_connectx.py).
    assert rx[1] < 0.6 * offered[1], (rx.to_dict(), offered.to_dict())
    assert rx[8] > 1.5 * rx[1], rx.to_dict()


def test_every_simulate_option_from_the_table_is_a_connectx_forward_parameter_with_its_default():
    forward = get_target("connectx.forward")
    own = {"gen_spec", "seed", "sets", "as_json"}  # composite or the run's own: --gen, --seed, --set, --json
    cli = {p.name: p for p in simulate.params if isinstance(p, click.Option)}
    assert set(cli) - own == {o.name for o in OPTIONS.flagged()}
    for option in OPTIONS.flagged():
        param = forward.param(option.name)
        assert param is not None, option.name
        assert (param.kind, param.minimum, param.maximum, param.choices) == (
            option.kind,
            option.minimum,
            option.maximum,
            option.choices,
        ), option.name
        shown = cli[option.name].default
        assert shown == (option.default if option.cli_default is SAME else option.cli_default), option.name


@pytest.mark.parametrize(
    ("flag", "key", "value", "needle"),
    [
        ("--cores", "cores", "0", "expected an integer such as 16 from 1 to 1,024, found"),
        ("--queues", "queues", "70000", "from 1 to 65,535"),
        ("--install-op", "install_op", "upsert", "one of 'insert', 'delete', 'update', 'update_inplace'"),
    ],
)
def test_a_bad_value_reads_the_same_in_a_spec_and_on_the_command_line(tmp_path, flag, key, value, needle):
    cli = harness("simulate", flag, value, "--duration", "1ms")
    assert_one_line_error(cli, flag, needle)
    spec = tmp_path / "bad.toml"
    spec.write_text(f'[experiment]\nname = "bad"\ntarget = "connectx.forward"\n[params]\n{key} = "{value}"\n')
    assert_one_line_error(harness("check", str(spec)), f"params.{key}", needle)


def test_rules_between_options_name_them_as_the_caller_spells_them(tmp_path):
    assert_one_line_error(
        harness("simulate", "--cores", "2", "--queues", "2", "--queue-map", "0:0,1:2", "--duration", "1ms"),
        "--queue-map: queue 1 on core 2, but --cores is 2",
    )
    spec = tmp_path / "map.toml"
    spec.write_text(
        '[experiment]\nname = "map"\ntarget = "connectx.forward"\nrepeat = 1\n'
        '[params]\nqueues = 2\nqueue_map = "0:0,1:2"\nduration = "1ms"\n[sweep]\ncores = [2, 4]\n'
    )
    # Refused before anything runs (the point with 2 cores), in the spec's names.
    run = harness("run", str(spec), "--results", str(tmp_path / "r"))
    assert_one_line_error(run, "queue_map: queue 1 on core 2, but cores is 2")
    assert not (tmp_path / "r" / "map").exists() or not any((tmp_path / "r" / "map").rglob("*.parquet"))
    spec.write_text('[experiment]\nname = "inst"\ntarget = "connectx.forward"\n[params]\ninstall_core = "distinct"\n')
    assert_one_line_error(
        harness("run", str(spec), "--results", str(tmp_path / "r")),
        "install_core distinct applies only with an installer: install_rate RATE or install_batch N",
    )


def test_connectx_forward_runs_an_installer_as_simulate_does():
    forward = get_target("connectx.forward")
    from nicbench.experiments.targets import RunContext

    point = {
        **forward.defaults(),
        "duration": 30_000_000,
        "install_batch": 50,
        "install_start": 5_000_000,
        "install_core": "distinct",
    }
    assert forward.why_not(point) is None
    rows = forward.run(point, RunContext(seed=3, rep=0, target=forward))
    metrics = {m: v for m, v, _, t in rows if t is None}
    assert metrics["install_rules"] == 50
    # Without an installer the install metrics are not recorded at all (what the runs before recorded).
    plain = forward.run({**forward.defaults(), "duration": 5_000_000}, RunContext(seed=3, rep=0, target=forward))
    assert "install_rules" not in {m for m, *_ in plain}


def test_parameters_added_at_their_defaults_leave_run_keys_and_seeds_as_they_were():
    """The added parameters at their defaults are left out of the key point: a spec that does not name
    them gets the seed and identity computed over the parameters the target had before."""
    for name in ("connectx.forward", "connectx.batch_install", "connectx.rate_install"):
        target = get_target(name)
        assert target.added, name
        point = target.defaults()
        before = {k: v for k, v in point.items() if k not in target.added}
        request = make_request(target, 1, point, 0)
        assert request.seed == derive_seed(1, before, 0)
        assert request.identity == run_identity(target.name, target.version, before, 0, request.seed)
        # Off its default, an added parameter is part of the key (another point, another seed).
        other = make_request(target, 1, {**point, "cores": 2}, 0)
        assert other.seed != request.seed and other.identity != request.identity
    spec = parse_spec(CORES_SPEC)
    one, eight = spec.points()
    assert "cores" not in spec.target.key_point(one) and spec.target.key_point(eight)["cores"] == 8
    assert spec.target.key_point(one)["queues"] == 8
    assert make_request(spec.target, spec.seed, eight, 0).seed != make_request(spec.target, spec.seed, one, 0).seed


def test_the_cores_cap_is_the_models_own():
    from nicbench import connectx
    from nicbench.errors import NicbenchError

    sc = connectx.scenario(rules=connectx.generated_rules(0), duration_ns=1_000_000, traffic=connectx.parse_gen(""))
    most = connectx.MAX_CORES
    with pytest.raises(NicbenchError, match=rf"cores: got {most + 1}, allowed 1..={most}\b"):
        connectx.simulate({**sc, "cores": connectx.MAX_CORES + 1})
    assert OPTIONS["cores"].maximum == connectx.MAX_CORES
