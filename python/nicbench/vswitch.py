"""The virtual Open vSwitch datapath (issue 16): OpenFlow rules + a pcap → megaflows.

The native model (`nicbench_models::vswitch`) takes ONE request JSON and returns ONE result
(schemas: `contract_schema("request")` / `("result")`): the OpenFlow pipeline on OVS's
classifier, the megaflows it installs (their masks are the header bits the lookups
consulted, un-wildcarded as OVS 3.1 does: staged lookup, prefix tries, ports trie), upcalls,
revalidators, and with `nic=` the tc-flower offload decision per megaflow.

    from nicbench import vswitch
    result = vswitch.megaflows(rules, "t.pcap", in_port="p0", nic="agilio-cx-25g")
    for mf in result["megaflows"]:
        print(mf["text"])          # dpctl/dump-flows syntax

Rules are `OfRule` values as JSON (nicbench_rules::openflow); `load_openflow` reads a file of
them. Invariants: `megaflows` never changes its arguments; bad input raises `NicbenchError`
with one line naming what and where.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

from nicbench import _native
from nicbench.errors import NicbenchError
from nicbench.inputs import read_input_text

__all__ = ["pvp_through_datapath", "mask_load", "megaflows", "build_request", "load_openflow", "default_ports", "contract_schema", "DEFAULT_COSTS", "NICS", "TC_POLICIES",
           "OFPP_LOCAL"]

NICS = ("agilio-cx-25g", "connectx5-25g")
TC_POLICIES = ("none", "skip_sw", "skip_hw")
OFPP_LOCAL = 0xFFFE

# Host costs. None of these is measured by nicbench yet: each is an order-of-magnitude
# assumption, said so, to be replaced by a measurement (or a calibration) of the host at hand.
DEFAULT_COSTS: dict[str, dict[str, Any]] = {
    "sw_packet_ns": {"value": 1000.0, "unit": "ns",
                     "provenance": "assumption, not measured: ~1 Mpps per core for the kernel datapath's per-packet "
                                   "work (order of magnitude); override with a measurement"},
    "upcall_us": {"value": 20.0, "unit": "us",
                  "provenance": "assumption, not measured: a handler's classifier walk + flow install per upcall "
                                "(order of magnitude); override with a measurement"},
    "revalidate_flow_us": {"value": 2.0, "unit": "us",
                           "provenance": "assumption, not measured: per flow per revalidator dump (order of "
                                         "magnitude); override with a measurement"},
}


def contract_schema(which: str) -> dict[str, Any]:
    """The JSON Schema of the model's `request` or `result` (generated from the Rust types)."""
    return json.loads(_native.contract_schema(f"vswitch.{which}"))


def load_openflow(path: str | Path) -> list[dict[str, Any]]:
    """OpenFlow rules from FILE: `ovs-ofctl add-flow`/`add-flows` lines or `ovs-ofctl dump-flows`
    output (parsed by nicbench-rules), or a JSON list of `OfRule` values when the file starts
    with '['."""
    p = Path(path)
    try:
        text = read_input_text(p, "rule file")
    except (OSError, UnicodeDecodeError) as exc:
        raise NicbenchError(f"{p}: cannot read the OpenFlow rules: {getattr(exc, 'strerror', None) or exc}") from None
    if not text.lstrip().startswith("["):
        from nicbench.ovsflows import load_openflow as parse_text

        return [entry["rule"] for entry in parse_text(p)]
    try:
        rules = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NicbenchError(f"{p}:{exc.lineno}:{exc.colno}: not a JSON list of OpenFlow rules ({exc.msg})") from None
    if not isinstance(rules, list):
        raise NicbenchError(f"{p}:1:1: expected a JSON list of OpenFlow rules, found {type(rules).__name__}")
    if not rules:
        raise NicbenchError(f"{p}: no rules in the file (an empty JSON list); a rule file needs at least one rule")
    return rules


def _port_names(rules: Iterable[dict[str, Any]]) -> set[str]:
    names: set[str] = set()

    def visit(port: Any) -> None:
        if isinstance(port, dict) and isinstance(port.get("name"), str):
            names.add(port["name"])

    for r in rules:
        visit((r.get("matches") or {}).get("in_port"))
        for a in r.get("actions", []):
            visit(a.get("port"))
    return names


def default_ports(rules: list[dict[str, Any]], in_port: str, bridge: str = "br0") -> list[dict[str, Any]]:
    """Ports for the names the rules use (sorted: OpenFlow and datapath numbers 1, 2, ...) and the
    bridge's LOCAL port (OpenFlow 65534, datapath 100, as OVS's dummy datapath numbers them)."""
    names = sorted(_port_names(rules) | {in_port} - {bridge})
    ports = [{"name": n, "ofport": i + 1, "dp_port": i + 1} for i, n in enumerate(names)]
    return [{"name": bridge, "ofport": OFPP_LOCAL, "dp_port": 100}, *ports]


def megaflows(rules: list[dict[str, Any]], pcap: str | Path, *, in_port: str, ports: list[dict[str, Any]] | None = None,
              nic: str | None = None, tc_policy: str = "none", hw_offload: bool | None = None,
              lookup: dict[str, Any] | None = None, cache: dict[str, Any] | None = None,
              costs: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """Runs the packets of PCAP (file order, all received on IN_PORT) through the rules; returns
    the result dict (megaflows with `text` in dpctl/dump-flows syntax, refusals, upcalls, host cost).

    `hw_offload` defaults to on when a `nic` is given. `lookup` switches OVS's classifier
    refinements (`staged_lookup`, `prefix_tries`, `ports_trie`, `prefix_fields`); `cache` the
    revalidator settings (`max_idle_ms`, `flow_limit`, ...)."""
    request = build_request(rules, pcap, in_port=in_port, ports=ports, nic=nic, tc_policy=tc_policy,
                            hw_offload=hw_offload, lookup=lookup, cache=cache, costs=costs)
    return json.loads(_native.vswitch_simulate(json.dumps(request)))


def _wide_ints_as_strings(value: Any) -> Any:
    """A copy of `value` with integers of 2^64 and more (IPv6 addresses and masks) as decimal
    strings: JSON numbers that wide lose precision on the way to the model's u128 fields."""
    if isinstance(value, dict):
        return {k: _wide_ints_as_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_wide_ints_as_strings(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1 << 64:
        return str(value)
    return value


def build_request(rules: list[dict[str, Any]], pcap: str | Path, *, in_port: str,
                  ports: list[dict[str, Any]] | None = None, nic: str | None = None, tc_policy: str = "none",
                  hw_offload: bool | None = None, lookup: dict[str, Any] | None = None,
                  cache: dict[str, Any] | None = None,
                  costs: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """The request `megaflows` sends (the `vswitch.request` contract), with nicbench's defaults."""
    if nic is not None and nic not in NICS:
        raise NicbenchError(f"nic {nic!r} is not known (nics: {', '.join(NICS)})")
    if tc_policy not in TC_POLICIES:
        raise NicbenchError(f"tc-policy {tc_policy!r} is not one of {', '.join(TC_POLICIES)}")
    request = {
        "rules": _wide_ints_as_strings(rules),
        "ports": ports if ports is not None else default_ports(rules, in_port),
        "pcap": str(pcap),
        "in_port": in_port,
        "lookup": lookup or {},
        "cache": cache or {},
        "hw_offload": bool(nic) if hw_offload is None else hw_offload,
        "tc_policy": tc_policy,
        "nic": nic,
        "costs": {**DEFAULT_COSTS, **(costs or {})},
    }
    return request


def mask_load(result: dict[str, Any], ingress: str) -> list[dict[str, Any]]:
    """The installed megaflows of one run, counted per mask (the set of (field, mask) pairs: one tc
    flower priority on the ingress port), as the PVP model's `MaskLoad`s for `ingress`."""
    masks: dict[tuple, dict[str, Any]] = {}
    for mf in result["megaflows"]:
        if not mf["installed"]:
            continue
        signature = tuple(sorted((k["field"], str(k["mask"])) for k in mf["flow"]["keys"]))
        entry = masks.setdefault(signature, {"ingress": ingress, "megaflows": 0, "offloaded": 0,
                                             "decap": False, "encap": False})
        entry["megaflows"] += 1
        entry["offloaded"] += bool(mf["flow"]["placement"].get("offloaded"))
    return list(masks.values())


def pvp_through_datapath(rules: list[dict[str, Any]], pcap: str | Path, *, nic: str, uplink: str, vm_port: str,
                         tc_policy: str = "none", offered_gbps: float | None = None,
                         flow_order: str = "round-robin") -> dict[str, Any]:
    """Red Hat PVP with the user's rules and packets: the trace arrives on `uplink`, and the VM (a
    forwarding loop that returns each packet unchanged, as testpmd in the seed's guest) sends it back
    in on `vm_port`. Both passes run through the virtual OVS datapath with the NIC's offload
    decision; the megaflows they install, counted per mask and ingress, are the PVP model's load,
    with the trace's flows and mean frame size; `flow_order` (see `nicbench.pvp.FLOW_ORDERS`) is how the
    flows' packets take turns at the NIC. Returns {"datapath": {...}, "pvp": {...}}."""
    from nicbench import pvp
    from nicbench.traces import pcap_info

    info = pcap_info(str(pcap))
    if not info["packets"]:
        raise NicbenchError(f"{pcap}: the trace has no packets")
    passes = {}
    for ingress, port in (("uplink", uplink), ("vf", vm_port)):
        passes[ingress] = megaflows(rules, pcap, in_port=port, nic=nic, tc_policy=tc_policy)
    load = {"masks": [m for ingress, r in passes.items() for m in mask_load(r, ingress)]}
    for ingress, port in (("uplink", uplink), ("vf", vm_port)):
        forwarding = [mf for mf in passes[ingress]["megaflows"]
                      if any(a.get("action") == "output" for a in mf["flow"]["actions"])]
        if not forwarding:
            raise NicbenchError(f"no packet arriving on {port!r} ({ingress}) is forwarded: the rules drop them "
                                "(a PVP loop needs rules for both directions: uplink -> VM and VM -> uplink)")
    frame_bytes = max(64, round(info["bytes"] / info["packets"]) + 4)  # captured frames lack the 4 B FCS
    prediction = pvp.predict(nic, max(1, int(info["flows"])), frame_bytes, megaflows=load, offered_gbps=offered_gbps,
                             flow_order=flow_order)
    return {"datapath": passes, "load": load, "frame_bytes": frame_bytes, "flows": int(info["flows"]), "pvp": prediction}
