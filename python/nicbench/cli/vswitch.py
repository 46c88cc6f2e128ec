"""`nicbench vswitch`: the virtual Open vSwitch datapath.

`nicbench vswitch megaflows --openflow RULES --pcap TRACE` prints the megaflows OVS would
install for the trace's packets (file order), in `ovs-appctl dpctl/dump-flows` syntax, and with
`--nic` where each would run (offloaded to the NIC or not, and why).
"""

from __future__ import annotations

import click

from nicbench.cli.common import emit_json, json_option, stdout_console

__all__ = ["vswitch", "COMMANDS"]


@click.group()
def vswitch() -> None:
    """The virtual Open vSwitch datapath: megaflows, upcalls, offload to a NIC."""


@vswitch.command()
@click.option("--openflow", "openflow", required=True, type=click.Path(dir_okay=False),
              help="OpenFlow rules: ovs-ofctl add-flow lines or dump-flows output (or a JSON list of OfRule values).")
@click.option("--pcap", required=True, type=click.Path(dir_okay=False), help="Packets, taken in file order.")
@click.option("--in-port", default="p0", show_default=True,
              help="Port the packets arrive on. Ports are the names the rules use plus this one, numbered 1, 2, ... "
                   "in name order (OpenFlow and datapath), and br0 (LOCAL, datapath 100).")
@click.option("--nic", type=click.Choice(["agilio-cx-25g", "connectx5-25g"]), default=None,
              help="Offload the megaflows to this NIC (hw-offload=true).")
@click.option("--tc-policy", type=click.Choice(["none", "skip_sw", "skip_hw"]), default="none", show_default=True)
@click.option("--no-staged-lookup", is_flag=True, help="Un-wildcard without OVS's staged lookup.")
@click.option("--no-prefix-tries", is_flag=True, help="Un-wildcard without OVS's nw_src/nw_dst prefix tries.")
@click.option("--no-ports-trie", is_flag=True, help="Un-wildcard without OVS's ports trie.")
@json_option
def megaflows(openflow: str, pcap: str, in_port: str, nic: str | None, tc_policy: str, no_staged_lookup: bool,
              no_prefix_tries: bool, no_ports_trie: bool, as_json: bool) -> None:
    """Print the megaflows a trace installs, in dpctl/dump-flows syntax."""
    from nicbench import vswitch as model

    rules = model.load_openflow(openflow)
    lookup = {"staged_lookup": not no_staged_lookup, "prefix_tries": not no_prefix_tries, "ports_trie": not no_ports_trie}
    result = model.megaflows(rules, pcap, in_port=in_port, nic=nic, tc_policy=tc_policy, lookup=lookup)
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
    console.print(f"[dim]{result['packets']} packets, {len(result['megaflows'])} megaflows, {result['upcalls']} upcalls"
                  + (f" ({rate:,.1f}/s)" if rate is not None else "")
                  + (f", host cores busy {result['host_cores_busy']:.3g}" if result.get("host_cores_busy") is not None else "")
                  + "[/dim]")
    for reason, n in result.get("refusals", {}).items():
        console.print(f"[dim]refused {n}×: {reason}[/dim]")


COMMANDS = [vswitch]
