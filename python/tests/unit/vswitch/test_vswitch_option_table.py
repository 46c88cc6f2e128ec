"""One option table for `nicbench vswitch` / `vswitch megaflows` and the `ovs-pvp.run` / `vswitch.megaflows`
targets (issue 34): every flag is a target parameter with the same kind and choices, and a spec can sweep
what the command line takes."""

from __future__ import annotations

import click
import pytest
from helpers import forked_cli, run_spec_records

from nicbench.cli.vswitch import megaflows, vswitch
from nicbench.experiments.targets import get_target
from nicbench.options.vswitch import MEGAFLOW_OPTIONS, PVP_OPTIONS, check


@pytest.mark.parametrize(
    ("command", "table", "target"),
    [(vswitch, PVP_OPTIONS, "ovs-pvp.run"), (megaflows, MEGAFLOW_OPTIONS, "vswitch.megaflows")],
)
def test_every_flag_is_a_target_parameter_with_its_kind(command, table, target):
    cli = {p.name for p in command.params if isinstance(p, click.Option)} - {"as_json"}
    assert cli == {o.name for o in table.flagged()}
    spec_target = get_target(target)
    for option in table:
        param = spec_target.param(option.name)
        assert param is not None, option.name
        assert (param.kind, param.default, param.choices) == (option.kind, option.default, option.choices)


def test_a_port_name_is_refused_the_same_way_in_a_spec_and_on_the_command_line():
    values = {"openflow": "r.of", "trace": "t.pcap", "in_port": "p 0"}
    assert (
        check(values)
        == "in_port: 'p 0' is not a port name (allowed: a name such as p0 or vm, without spaces, ',' or '=')"
    )


def test_a_spec_sweeps_the_offered_load_of_ovs_pvp_run_and_the_points_differ(tmp_path):
    rules = tmp_path / "pvp.of"
    rules.write_text("in_port=p0,ip,nw_src=10.0.0.0/8,actions=output:vm\nin_port=vm,ip,actions=output:p0\n")
    trace = tmp_path / "t.pcap"
    gen = forked_cli("gen", "--flows", "100", "--size", "64", "--packets", "1000", "-o", str(trace))
    assert gen.returncode == 0, gen.stderr
    spec = f"""
[experiment]
name = "offered"
target = "ovs-pvp.run"
repeat = 1

[params]
openflow = "{rules}"
trace = "{trace}"
nic = "agilio-cx-25g"

[sweep]
offered = ["2Gbps", "8Gbps"]
"""
    df = run_spec_records(tmp_path, spec, "offered", executed=2)
    mpps = df[df["metric"] == "mpps"].set_index("offered")["value"].sort_index()
    # Below the NIC's limits the received rate is the offered one: 4x the load, 4x the packets.
    assert len(mpps) == 2 and mpps.iloc[1] == pytest.approx(4 * mpps.iloc[0], rel=1e-6), mpps.to_dict()
