"""The virtual Open vSwitch datapath (issue 16): OpenFlow rules + a pcap → megaflows, and Red Hat PVP
through it with your rules and trace.

Two native models, each ONE request in and ONE result out, run through `nicbench.models` (schemas:
`models.contract_schema("vswitch" | "ovs-pvp", "request" | "result")`):

- `megaflows` (`nicbench_models::vswitch`): the OpenFlow pipeline on OVS's classifier, the megaflows it
  installs (their masks are the header bits the lookups consulted, un-wildcarded as OVS 3.1 does: staged
  lookup, prefix tries, ports trie), upcalls, revalidators, and with `nic=` the tc-flower offload decision
  per megaflow.
- `pvp_through_datapath` (`nicbench_models::ovs_pvp`, the `ovs-pvp` model): both PVP passes through the
  datapath, the NIC's offload decision, the megaflows per mask and the PVP model's rate, in one call.

    from nicbench import vswitch
    result = vswitch.megaflows("rules.of", "t.pcap", in_port="p0", nic="agilio-cx-25g")
    for mf in result["megaflows"]:
        print(mf["text"])          # dpctl/dump-flows syntax

Rules are a rule FILE, read once by the model: `ovs-ofctl add-flow` lines, `ovs-ofctl dump-flows` output,
or a JSON list of `OfRule` values (nicbench_rules::openflow) when it starts with '['. The NICs are profiles
(`nics()`): their offload capabilities and the host's costs are in `profiles/<nic>.toml`. Invariants: no
function changes its arguments; bad input raises `NicbenchError` with one line naming what and where.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from nicbench import models, profiles
from nicbench.errors import NicbenchError
from nicbench.profiles import overrides_for

__all__ = [
    "pvp_through_datapath",
    "pvp_request",
    "megaflows",
    "build_request",
    "gc_paused",
    "nics",
    "TC_POLICIES",
    "parse_port_spec",
    "VXLAN_PORT_KEYS",
    "PVP_MODEL",
    "MODELS",
]

# The registry's name of PVP through the datapath (`nicbench_models::ovs_pvp`).
PVP_MODEL = "ovs-pvp"
# The native models this module fronts (`nicbench.models.front`): the datapath alone, and PVP through it.
MODELS = ("vswitch", "ovs-pvp")

TC_POLICIES = ("none", "skip_sw", "skip_hw")


def nics() -> tuple[str, ...]:
    """The OVS-TC offload NICs: the profiles of the kinds the model reads (its registry entry), sorted (from
    the profiles folder: a new profile of those kinds is a new NIC)."""
    return tuple(sorted({name for kind in models.profile_kinds(PVP_MODEL) for name in profiles.names(kind)}))


# `--port NAME=vxlan,...` keys: the tunnel's own options, then the underlay bridge it sends through.
VXLAN_PORT_KEYS = ("remote_ip", "local_ip", "underlay", "key", "dst_port", "remote_mac", "local_mac")
_ZERO_MAC = "00:00:00:00:00:00"


def _ipv4(text: str, what: str) -> str:
    import ipaddress

    try:
        return str(ipaddress.IPv4Address(text))
    except ValueError:
        raise NicbenchError(f"{what}: {text!r} is not an IPv4 address (such as 172.31.1.2)") from None


def _mac(text: str, what: str) -> str:
    import re

    if not re.fullmatch(r"[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}", text):
        raise NicbenchError(
            f"{what}: {text!r} is not a MAC address (six hex bytes with ':', such as aa:55:aa:55:00:01)"
        )
    return text.lower()


def parse_port_spec(text: str) -> dict[str, Any]:
    """`NAME=vxlan,remote_ip=R,local_ip=L,underlay=PHY[,key=flow|N][,dst_port=4789][,remote_mac=M][,local_mac=M]`
    → {"name", "remote_ip", "local_ip", "underlay", "key" (None: flow), "dst_port", "remote_mac", "local_mac"}."""
    where = f"--port {text!r}"
    head, _, rest = text.partition(",")
    name, eq, kind = head.partition("=")
    if not eq or not name:
        raise NicbenchError(f"{where}: expected NAME=vxlan,remote_ip=...,local_ip=...,underlay=PORT")
    if kind != "vxlan":
        raise NicbenchError(f"{where}: port type {kind!r} is not modelled (allowed: vxlan)")
    opts: dict[str, str] = {}
    for item in filter(None, rest.split(",")):
        k, eq, v = item.partition("=")
        if not eq or k not in VXLAN_PORT_KEYS:
            raise NicbenchError(f"{where}: {item!r} is not KEY=VALUE with KEY one of {', '.join(VXLAN_PORT_KEYS)}")
        opts[k] = v
    missing = [k for k in ("remote_ip", "local_ip", "underlay") if k not in opts]
    if missing:
        raise NicbenchError(
            f"{where}: {', '.join(missing)} missing (a vxlan port needs remote_ip, local_ip and underlay)"
        )
    key_text = opts.get("key", "flow")
    key: int | None = None
    if key_text != "flow":
        try:
            key = int(key_text, 0)
        except ValueError:
            key = -1
        if not 0 <= key < 1 << 24:
            raise NicbenchError(f"{where}: key {key_text!r} is not 'flow' or a VNI from 0 to 16777215")
    try:
        dst_port = int(opts.get("dst_port", "4789"), 0)
    except ValueError:
        dst_port = -1
    if not 1 <= dst_port <= 65535:
        raise NicbenchError(f"{where}: dst_port {opts.get('dst_port')!r} is not a UDP port from 1 to 65535")
    return {
        "name": name,
        "remote_ip": _ipv4(opts["remote_ip"], f"{where}: remote_ip"),
        "local_ip": _ipv4(opts["local_ip"], f"{where}: local_ip"),
        "underlay": opts["underlay"],
        "key": key,
        "dst_port": dst_port,
        "remote_mac": _mac(opts.get("remote_mac", _ZERO_MAC), f"{where}: remote_mac"),
        "local_mac": _mac(opts.get("local_mac", _ZERO_MAC), f"{where}: local_mac"),
    }


@contextmanager
def gc_paused():
    """Python's cyclic GC paused: a result of 100K megaflows is millions of acyclic dicts, and the
    collector would otherwise walk them again and again while they are built (a third of the time
    of a 16K-flow `nicbench vswitch` run)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def build_request(
    rules: str | Path,
    pcap: str | Path,
    *,
    in_port: str,
    ports: list[dict[str, Any]] | None = None,
    underlay: dict[str, Any] | None = None,
    tunnels: list[dict[str, Any]] | None = None,
    nic: str | None = None,
    tc_policy: str = "none",
    hw_offload: bool | None = None,
    lookup: dict[str, Any] | None = None,
    cache: dict[str, Any] | None = None,
    overrides: dict[str, float] | None = None,
) -> dict[str, Any]:
    """The request `megaflows` sends (the `vswitch.request` contract); what is not given is left to the model's
    defaults (ports: the names the rules use, see `megaflows`)."""
    request: dict[str, Any] = {"openflow": str(rules), "pcap": str(pcap), "in_port": in_port, "tc_policy": tc_policy}
    for key, value in (
        ("ports", ports),
        ("underlay", underlay),
        ("tunnels", tunnels),
        ("nic", nic),
        ("hw_offload", hw_offload),
        ("lookup", lookup),
        ("cache", cache),
        ("overrides", overrides),
    ):
        if value is not None:
            request[key] = value
    return request


def megaflows(
    rules: str | Path,
    pcap: str | Path,
    *,
    in_port: str,
    ports: list[dict[str, Any]] | None = None,
    underlay: dict[str, Any] | None = None,
    tunnels: list[dict[str, Any]] | None = None,
    nic: str | None = None,
    tc_policy: str = "none",
    hw_offload: bool | None = None,
    lookup: dict[str, Any] | None = None,
    cache: dict[str, Any] | None = None,
    overrides: dict[str, float] | None = None,
) -> dict[str, Any]:
    """Runs the packets of PCAP (file order, all received on IN_PORT) through the rules of file RULES; returns
    the result dict (megaflows with `text` in dpctl/dump-flows syntax, refusals, upcalls, host cost).

    Ports: `ports` as given, else the names the rules use and IN_PORT in name order (OpenFlow and datapath
    1, 2, ...) and br0 (LOCAL, datapath 100); with `tunnels` (`parse_port_spec` results) the VXLAN ports
    join them on their UDP port and the underlay bridge they send through is derived (or give `ports` with
    `tunnel` options and `underlay`). Packets arriving on the underlay's port are decapsulated when they are
    VXLAN to its IP. `hw_offload` defaults to on when a `nic` is given. `lookup` switches OVS's classifier
    refinements (`staged_lookup`, `prefix_tries`, `ports_trie`, `prefix_fields`); `cache` the revalidator
    settings (`max_idle_ms`, `flow_limit`, ...) and the handlers' (`handler_threads`); `overrides` the NIC's (or
    host's) profile parameters, such as the host costs `sw_packet_ns`, `upcall_us`, `revalidate_flow_us`,
    `upcall_queue`, `host_datapath_cores`. `flow_setup` reports the handlers' work (docs/vswitch.md).
    `in_port_unmatched` is set when no rule matches IN_PORT while rules match other ports (those)."""
    request = build_request(
        rules,
        pcap,
        in_port=in_port,
        ports=ports,
        underlay=underlay,
        tunnels=tunnels,
        nic=nic,
        tc_policy=tc_policy,
        hw_offload=hw_offload,
        lookup=lookup,
        cache=cache,
        overrides=overrides,
    )
    with gc_paused():
        return models.run("vswitch", request)


def pvp_request(
    rules: str | Path,
    pcap: str | Path,
    *,
    nic: str,
    uplink: str,
    vm_port: str,
    tc_policy: str = "none",
    offered_gbps: float | None = None,
    flow_order: str = "round-robin",
    tunnels: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The request `pvp_through_datapath` sends (the `ovs-pvp.request` contract), calibration overrides merged in."""
    for t in tunnels or ():
        if t["underlay"] != uplink:  # named by the --port option the spec came from
            raise NicbenchError(
                f"--port {t['name']}: underlay={t['underlay']!r} must be the uplink {uplink!r} "
                "(the VXLAN trace arrives on it)"
            )
    request: dict[str, Any] = {
        "openflow": str(rules),
        "trace": str(pcap),
        "nic": str(nic),
        "uplink": uplink,
        "vm_port": vm_port,
        "tunnels": list(tunnels or ()),
        "tc_policy": tc_policy,
        "flow_order": flow_order,
    }
    if offered_gbps is not None:
        request["offered_gbps"] = float(offered_gbps)
    overrides = overrides_for(str(nic))
    if overrides:
        request["overrides"] = overrides
    return request


def pvp_through_datapath(
    rules: str | Path,
    pcap: str | Path,
    *,
    nic: str,
    uplink: str,
    vm_port: str,
    tc_policy: str = "none",
    offered_gbps: float | None = None,
    flow_order: str = "round-robin",
    tunnels: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Red Hat PVP with the rules of file RULES and the packets of PCAP, in one native call: the trace arrives
    on `uplink`, and the VM (a forwarding loop that returns each packet unchanged, as testpmd in the seed's
    guest) sends it back in on `vm_port`. Both passes run through the virtual OVS datapath with the NIC's
    offload decision; the megaflows they install, counted per mask and ingress, are the PVP model's load,
    with the VM's flows and mean frame size; `flow_order` (see `nicbench.pvp.FLOW_ORDERS`) is how the flows'
    packets take turns at the NIC. With `tunnels` (parsed `--port NAME=vxlan,...` specs whose underlay is
    `uplink`) the trace is VXLAN: the uplink pass decapsulates, the VM gets and returns the inner frames, the
    rules encapsulate them; the PVP model runs with `vxlan` and the inner frame size (the seed's Fig. 9 sizes
    are inner frames). Returns {"datapath": {"uplink": ..., "vf": ...}, "load": ..., "frame_bytes", "flows",
    "pvp": ...}."""
    request = pvp_request(
        rules,
        pcap,
        nic=nic,
        uplink=uplink,
        vm_port=vm_port,
        tc_policy=tc_policy,
        offered_gbps=offered_gbps,
        flow_order=flow_order,
        tunnels=tunnels,
    )
    with gc_paused():
        return models.run(PVP_MODEL, request)
