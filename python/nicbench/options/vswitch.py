"""The virtual OVS datapath's options: `nicbench vswitch`'s and `nicbench vswitch megaflows`'s flags and
the `ovs-pvp.run` and `vswitch.megaflows` targets' parameters (see `nicbench.options`).

`PVP_OPTIONS` is Red Hat PVP with the user's rules and trace (the `ovs-pvp` model); `MEGAFLOW_OPTIONS` is
the datapath alone (the `vswitch` model). A `port` is one `NAME=vxlan,...` spec (`nicbench.vswitch.
parse_port_spec`): the command line may repeat `--port`, a spec gives one. Port names are checked as the
rules need them (`check_port_name`), in both.
"""

from __future__ import annotations

from typing import Any

from nicbench import models, pvp
from nicbench.errors import NicbenchError
from nicbench.options import Option, Options, Spell, param_spelling
from nicbench.vswitch import TC_POLICIES

__all__ = [
    "PVP_OPTIONS",
    "MEGAFLOW_OPTIONS",
    "TC_POLICIES",
    "check_port_name",
    "check",
    "pvp_kwargs",
    "megaflow_kwargs",
]

_PORT_NAMES = ("uplink", "vm_port", "in_port")


def check_port_name(text: str) -> str | None:
    """Why `text` cannot be a switch port's name as OpenFlow rules write it (`p0`, `vm`, `dpdk0`: a
    name with a space, ',' or '=' could not appear in a rule, and an empty one names nothing); None
    when it can."""
    if not text or any(c in ",=" or c.isspace() for c in text):
        return f"{text!r} is not a port name (allowed: a name such as p0 or vm, without spaces, ',' or '=')"
    return None


def _rules(help_text: str) -> Option:
    return Option(
        "openflow", "str", None, help_text, flag="--openflow", none_word="none", path=True, cli_metavar="RULES"
    )


def _port_spec(help_text: str) -> Option:
    return Option(
        "port",
        "str",
        None,
        help_text,
        flag="--port",
        none_word="none",
        cli_metavar="NAME=vxlan,OPTS",
        cli_multiple=True,
        cli_default=(),
    )


_TC_POLICY = Option("tc_policy", "choice", "none", "OVS's tc-policy.", flag="--tc-policy", choices=TC_POLICIES)

PVP_OPTIONS = Options(
    [
        Option(
            "nic",
            "str",
            "connectx5-25g",
            "The OVS-TC offload NIC of the PVP testbed: connectx5-25g, agilio-cx-25g or a .toml path.",
            flag="--nic",
            cli_metavar="NIC",
            profile_kinds=models.profile_kinds("ovs-pvp"),
        ),
        _rules("OpenFlow rules for both directions: ovs-ofctl add-flow lines or dump-flows output."),
        Option(
            "trace",
            "str",
            None,
            "Packets arriving on the uplink (pcap, file order).",
            flag="--trace",
            none_word="none",
            path=True,
            cli_metavar="PCAP",
        ),
        Option("uplink", "str", "p0", "The physical port's name in the rules.", flag="--uplink", cli_metavar="PORT"),
        Option(
            "vm_port",
            "str",
            "vm",
            "The VM's port (VF representor) name in the rules; the VM returns each packet on it.",
            flag="--vm-port",
            cli_metavar="PORT",
        ),
        _TC_POLICY,
        Option(
            "offered",
            "rate_bps",
            None,
            "Offered rate on the wire (25Gbps); default: the port's line rate.",
            flag="--offered",
            none_word="line",
        ),
        Option(
            "flow_order",
            "choice",
            "round-robin",
            "Order of the flows' packets at the NIC: round-robin (the trace replayed in a loop, one packet "
            "per flow per turn, as a generator incrementing addresses) or random (independent references).",
            flag="--flow-order",
            choices=pvp.FLOW_ORDERS,
        ),
        _port_spec(
            "A VXLAN port (see `nicbench vswitch megaflows --help`) with underlay=the uplink: the trace is "
            "VXLAN, decapsulated on the way in, the VM's packets encapsulated on the way out."
        ),
    ]
)

MEGAFLOW_OPTIONS = Options(
    [
        _rules("OpenFlow rules: ovs-ofctl add-flow lines or dump-flows output (or a JSON list of OfRule values)."),
        Option(
            "trace",
            "str",
            None,
            "Packets, taken in file order (pcap).",
            flag="--pcap",
            none_word="none",
            path=True,
            cli_metavar="PCAP",
        ),
        Option(
            "in_port",
            "str",
            "p0",
            "Port the packets arrive on. Ports are the names the rules use plus this one, numbered 1, 2, ... "
            "in name order (OpenFlow and datapath), and br0 (LOCAL, datapath 100).",
            flag="--in-port",
            cli_metavar="PORT",
        ),
        Option(
            "nic",
            "str",
            None,
            "Offload the megaflows to this OVS-TC NIC (hw-offload=true); none: no offload.",
            flag="--nic",
            cli_metavar="NIC",
            none_word="none",
            profile_kinds=models.profile_kinds("vswitch"),
        ),
        _TC_POLICY,
        Option(
            "no_staged_lookup", "bool", False, "Un-wildcard without OVS's staged lookup.", flag="--no-staged-lookup"
        ),
        Option(
            "no_prefix_tries",
            "bool",
            False,
            "Un-wildcard without OVS's nw_src/nw_dst prefix tries.",
            flag="--no-prefix-tries",
        ),
        Option("no_ports_trie", "bool", False, "Un-wildcard without OVS's ports trie.", flag="--no-ports-trie"),
        Option(
            "handler_threads",
            "int",
            None,
            "OVS's n-handler-threads: the threads that set up flows (upcall_us each, in turn); default: the "
            "host profile's host_datapath_cores.",
            flag="--handler-threads",
            none_word="default",
            minimum=1,
            maximum=1024,
        ),
        _port_spec(
            "A VXLAN port, as OVS's userspace tunnelling sets it up: NAME=vxlan,remote_ip=IP,local_ip=IP,"
            "underlay=PORT[,key=flow|VNI][,dst_port=4789][,remote_mac=MAC][,local_mac=MAC]. local_ip is the "
            "underlay bridge's IP and underlay its physical port (an --in-port of that name receives VXLAN "
            "packets and decapsulates them); the MACs (default 00:00:00:00:00:00) only show in tnl_push. "
            "Output to NAME encapsulates. Repeatable on the command line (one underlay)."
        ),
    ]
)


def check(values: dict[str, Any], spell: Spell = param_spelling) -> str | None:
    """What is wrong with these option values, named as the caller spells them; None when they can run:
    both files given, port names a rule can hold, an offered load the NIC's port can carry."""
    if not values.get("openflow") or not values.get("trace"):
        return f"give {spell('openflow')} RULES and {spell('trace')} PCAP"
    for name in _PORT_NAMES:
        if name in values:
            problem = check_port_name(str(values[name]))
            if problem:
                return f"{spell(name)}: {problem}"
    offered = values.get("offered")  # PVP only: the megaflow table has no offered load
    if offered is not None:
        try:
            pvp.check_offered(values["nic"], offered / 1e9, f"{spell('offered')} {offered / 1e9:g}Gbps")
        except NicbenchError as exc:
            return str(exc)
    return None


def _tunnels(values: dict[str, Any]) -> list[dict[str, Any]] | None:
    from nicbench import vswitch

    specs = values.get("port") or ()
    if isinstance(specs, str):
        specs = (specs,)
    return [vswitch.parse_port_spec(s) for s in specs] or None


def pvp_kwargs(values: dict[str, Any]) -> dict[str, Any]:
    """`vswitch.pvp_through_datapath`'s keyword arguments from option values (the files are positional)."""
    offered = values.get("offered")
    return {
        "nic": values["nic"],
        "uplink": values["uplink"],
        "vm_port": values["vm_port"],
        "tc_policy": values["tc_policy"],
        "offered_gbps": None if offered is None else offered / 1e9,
        "flow_order": values["flow_order"],
        "tunnels": _tunnels(values),
    }


def megaflow_kwargs(values: dict[str, Any]) -> dict[str, Any]:
    """`vswitch.megaflows`'s keyword arguments from option values (the files are positional)."""
    threads = values.get("handler_threads")
    return {
        "cache": None if threads is None else {"handler_threads": int(threads)},
        "in_port": values["in_port"],
        "nic": values["nic"],
        "tc_policy": values["tc_policy"],
        "tunnels": _tunnels(values),
        "lookup": {
            "staged_lookup": not values["no_staged_lookup"],
            "prefix_tries": not values["no_prefix_tries"],
            "ports_trie": not values["no_ports_trie"],
        },
    }
