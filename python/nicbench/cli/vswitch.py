"""`nicbench vswitch`: the virtual Open vSwitch datapath.

`nicbench vswitch megaflows --openflow RULES --pcap TRACE` prints the megaflows OVS would
install for the trace's packets (file order), in `ovs-appctl dpctl/dump-flows` syntax, and with
`--nic` where each would run (offloaded to the NIC or not, and why).
"""

from __future__ import annotations

import click

from nicbench import vswitch as model
from nicbench.cli.common import (
    NonEmptyPath,
    PortName,
    WholeHelpGroup,
    emit_json,
    fail,
    json_option,
    spinner,
    stderr_console,
    stdout_console,
)

__all__ = ["vswitch", "COMMANDS"]

# The OVS-TC NICs: the profiles of the kinds the model reads, listed when this module loads (the
# command itself then makes one native call).
_NICS = list(model.nics())


@click.group(cls=WholeHelpGroup, invoke_without_command=True)
@click.option(
    "--nic",
    type=click.Choice(_NICS),
    default="connectx5-25g",
    show_default=True,
    help="The OVS-TC offload NIC of the PVP testbed.",
)
@click.option(
    "--openflow",
    "openflow",
    type=NonEmptyPath(dir_okay=False),
    help="OpenFlow rules for both directions: ovs-ofctl add-flow lines or dump-flows output.",
)
@click.option("--trace", type=NonEmptyPath(dir_okay=False), help="Packets arriving on the uplink (pcap, file order).")
@click.option(
    "--uplink", type=PortName(), default="p0", show_default=True, help="The physical port's name in the rules."
)
@click.option(
    "--vm-port",
    type=PortName(),
    default="vm",
    show_default=True,
    help="The VM's port (VF representor) name in the rules; the VM returns each packet on it.",
)
@click.option("--tc-policy", type=click.Choice(model.TC_POLICIES), default="none", show_default=True)
@click.option("--offered", "offered_text", default=None, help="Offered rate (25Gbps); default: the port's line rate.")
@click.option(
    "--flow-order",
    type=click.Choice(["round-robin", "random"]),
    default="round-robin",
    show_default=True,
    help="Order of the flows' packets at the NIC: round-robin (the trace replayed in a loop, one packet "
    "per flow per turn, as a generator incrementing addresses) or random (independent references).",
)
@click.option(
    "--port",
    "port_specs",
    multiple=True,
    metavar="NAME=vxlan,OPTS",
    help="A VXLAN port (see `nicbench vswitch megaflows --help`) with underlay=the uplink: the trace is "
    "VXLAN, decapsulated on the way in, the VM's packets encapsulated on the way out.",
)
@json_option
@click.pass_context
def vswitch(
    ctx: click.Context,
    nic: str,
    openflow: str | None,
    trace: str | None,
    uplink: str,
    vm_port: str,
    tc_policy: str,
    offered_text: str | None,
    flow_order: str,
    port_specs: tuple[str, ...],
    as_json: bool,
) -> None:
    """The virtual Open vSwitch datapath in front of an OVS-TC offload NIC.

    Without a subcommand: Red Hat PVP with YOUR rules and packets. The trace arrives on --uplink and
    the VM sends every packet back on --vm-port; both passes go through the virtual OVS datapath, the
    NIC takes or refuses each megaflow, and the megaflows per mask drive the PVP model: received Mpps
    and Gb/s, loss, latency, the limiting stage, megaflows offloaded (and why not), upcalls, host cores.

    \b
    nicbench vswitch --nic agilio-cx-25g --openflow rules.of --trace t.pcap
    nicbench vswitch megaflows --openflow rules.of --pcap t.pcap   # the megaflows themselves
    nicbench vswitch megaflows --openflow vx.of --pcap vxlan.pcap --in-port p0 \\
        --port vx=vxlan,remote_ip=172.31.1.2,local_ip=172.31.1.1,underlay=p0   # VXLAN decap/encap
    """
    if ctx.invoked_subcommand is not None:
        return
    if openflow is None or trace is None:
        fail("vswitch: give --openflow RULES and --trace PCAP (or a subcommand: megaflows)")
    offered = None
    if offered_text is not None:
        from nicbench.units import UnitError, parse_rate

        try:
            offered = parse_rate(offered_text).gbps
        except UnitError as exc:
            fail(f"--offered: {exc}")
        if offered is None:
            fail(f"--offered: give a bit rate such as 25Gbps, found {offered_text!r}")
        from nicbench.pvp import check_offered

        check_offered(nic, offered, f"--offered {offered_text}")
    tunnels = [model.parse_port_spec(t) for t in port_specs] or None
    with model.gc_paused(), spinner(f"walking {trace} through the virtual datapath", enabled=not as_json):
        out = model.pvp_through_datapath(
            openflow,
            trace,
            nic=nic,
            uplink=uplink,
            vm_port=vm_port,
            tc_policy=tc_policy,
            offered_gbps=offered,
            flow_order=flow_order,
            tunnels=tunnels,
        )
    if as_json:
        emit_json(out)
        return
    _print_pvp(out, nic)


def _print_pvp(out: dict, nic: str) -> None:
    p = out["pvp"]
    console = stdout_console
    console.print(f"[bold]{nic}[/bold], Red Hat PVP, {out['flows']:,} flows, {out['frame_bytes']} B frames")
    console.print(
        f"received  {p['mpps']:.2f} Mpps, {p['gbps']:.2f} Gb/s  (loss {p['loss']:.1%}, "
        f"latency {p['latency_us']:.1f} us unloaded), limited by: {p['bottleneck']}"
    )
    for ingress, r in out["datapath"].items():
        installed = [m for m in r["megaflows"] if m["installed"]]
        offloaded = sum(bool(m["flow"]["placement"].get("offloaded")) for m in installed)
        rate = r.get("upcalls_per_s")
        console.print(
            f"{ingress:7} megaflows {len(installed):,} ({offloaded:,} offloaded), upcalls {r['upcalls']:,}"
            + (f" ({rate:,.0f}/s)" if rate is not None else "")
        )
        for reason, n in r.get("refusals", {}).items():
            console.print(f"        not offloaded {n}x: {reason}")
    console.print(f"host cores busy {p['host_cores_busy']:.2f}")


@vswitch.command()
@click.option(
    "--openflow",
    "openflow",
    required=True,
    type=NonEmptyPath(dir_okay=False),
    help="OpenFlow rules: ovs-ofctl add-flow lines or dump-flows output (or a JSON list of OfRule values).",
)
@click.option("--pcap", required=True, type=NonEmptyPath(dir_okay=False), help="Packets, taken in file order.")
@click.option(
    "--in-port",
    type=PortName(),
    default="p0",
    show_default=True,
    help="Port the packets arrive on. Ports are the names the rules use plus this one, numbered 1, 2, ... "
    "in name order (OpenFlow and datapath), and br0 (LOCAL, datapath 100).",
)
@click.option(
    "--nic", type=click.Choice(_NICS), default=None, help="Offload the megaflows to this NIC (hw-offload=true)."
)
@click.option("--tc-policy", type=click.Choice(model.TC_POLICIES), default="none", show_default=True)
@click.option("--no-staged-lookup", is_flag=True, help="Un-wildcard without OVS's staged lookup.")
@click.option("--no-prefix-tries", is_flag=True, help="Un-wildcard without OVS's nw_src/nw_dst prefix tries.")
@click.option("--no-ports-trie", is_flag=True, help="Un-wildcard without OVS's ports trie.")
@click.option(
    "--port",
    "port_specs",
    multiple=True,
    metavar="NAME=vxlan,OPTS",
    help="A VXLAN port, as OVS's userspace tunnelling sets it up: NAME=vxlan,remote_ip=IP,local_ip=IP,"
    "underlay=PORT[,key=flow|VNI][,dst_port=4789][,remote_mac=MAC][,local_mac=MAC]. local_ip is the "
    "underlay bridge's IP and underlay its physical port (an --in-port of that name receives VXLAN "
    "packets and decapsulates them); the MACs (default 00:00:00:00:00:00) only show in tnl_push. "
    "Output to NAME encapsulates. Repeatable (one underlay).",
)
@json_option
def megaflows(
    openflow: str,
    pcap: str,
    in_port: str,
    nic: str | None,
    tc_policy: str,
    no_staged_lookup: bool,
    no_prefix_tries: bool,
    no_ports_trie: bool,
    port_specs: tuple[str, ...],
    as_json: bool,
) -> None:
    """Print the megaflows a trace installs, in dpctl/dump-flows syntax."""
    lookup = {
        "staged_lookup": not no_staged_lookup,
        "prefix_tries": not no_prefix_tries,
        "ports_trie": not no_ports_trie,
    }
    tunnels = [model.parse_port_spec(t) for t in port_specs] or None
    with model.gc_paused(), spinner(f"walking {pcap} through the virtual datapath", enabled=not as_json):
        result = model.megaflows(
            openflow, pcap, in_port=in_port, tunnels=tunnels, nic=nic, tc_policy=tc_policy, lookup=lookup
        )
    matched = result.pop("in_port_unmatched", None)
    if matched:
        # as in OVS, not an error (the packets meet only rules without an in_port match), but
        # usually a typo or the default p0 where the rules name other ports
        stderr_console.print(
            f"note: no rule matches in_port={in_port} (the rules match in_port "
            f"{', '.join(matched)}); --in-port names the packets' port",
            highlight=False,
            soft_wrap=True,
        )
    if as_json:
        emit_json(result)
        return
    for mf in result["megaflows"]:
        line = mf["text"]
        if mf.get("reason"):
            line += f"  # not offloaded: {mf['reason']}"
        click.echo(line)
    console = stdout_console
    rate = result.get("upcalls_per_s")
    console.print(
        f"[dim]{result['packets']:,} packets, {len(result['megaflows']):,} megaflows, "
        f"{result['upcalls']:,} upcalls"
        + (f" ({rate:,.1f}/s)" if rate is not None else "")
        + (f", host cores busy {result['host_cores_busy']:.3g}" if result.get("host_cores_busy") is not None else "")
        + "[/dim]"
    )
    for reason, n in result.get("refusals", {}).items():
        console.print(f"[dim]refused {n}×: {reason}[/dim]")


# Each command's first help sentence, read by `nicbench --help` without importing this module.
SUMMARIES = {
    "vswitch": "The virtual Open vSwitch datapath in front of an OVS-TC offload NIC.",
}
COMMANDS = [vswitch]
