"""The virtual Open vSwitch datapath (issue 16): OpenFlow rules + a pcap → megaflows.

The native model (`nicbench_models::vswitch`, run through `nicbench.models.run_json("vswitch", ...)`)
takes ONE request and returns ONE result (schemas: `models.contract_schema("vswitch", "request")` /
`("vswitch", "result")`): the OpenFlow pipeline on OVS's
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

import gc
import json
import re
from collections.abc import Iterable
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from nicbench import models
from nicbench.errors import NicbenchError
from nicbench.inputs import read_input_text

__all__ = [
    "pvp_through_datapath",
    "mask_load",
    "megaflows",
    "build_request",
    "request_json",
    "gc_paused",
    "load_openflow",
    "default_ports",
    "DEFAULT_COSTS",
    "NICS",
    "TC_POLICIES",
    "OFPP_LOCAL",
    "parse_port_spec",
    "tunnel_setup",
    "VXLAN_PORT_KEYS",
]

NICS = ("agilio-cx-25g", "connectx5-25g")
TC_POLICIES = ("none", "skip_sw", "skip_hw")
OFPP_LOCAL = 0xFFFE

# Host costs. None of these is measured by nicbench yet: each is an order-of-magnitude
# assumption, said so, to be replaced by a measurement (or a calibration) of the host at hand.
DEFAULT_COSTS: dict[str, dict[str, Any]] = {
    "sw_packet_ns": {
        "value": 1000.0,
        "unit": "ns",
        "provenance": "assumption, not measured: ~1 Mpps per core for the kernel datapath's per-packet "
        "work (order of magnitude); override with a measurement",
    },
    "upcall_us": {
        "value": 20.0,
        "unit": "us",
        "provenance": "assumption, not measured: a handler's classifier walk + flow install per upcall "
        "(order of magnitude); override with a measurement",
    },
    "revalidate_flow_us": {
        "value": 2.0,
        "unit": "us",
        "provenance": "assumption, not measured: per flow per revalidator dump (order of "
        "magnitude); override with a measurement",
    },
}


def load_openflow(path: str | Path) -> list[dict[str, Any]]:
    """OpenFlow rules from FILE: `ovs-ofctl add-flow`/`add-flows` lines or `ovs-ofctl dump-flows`
    output (parsed by nicbench-rules), or a JSON list of `OfRule` values when the file starts
    with '['."""
    p = Path(path)
    try:
        text = read_input_text(p, "rule file")
    except UnicodeDecodeError:
        raise NicbenchError(
            f"{p}: not a text file (OpenFlow rules are text: ovs-ofctl add-flows or dump-flows lines, or a JSON list)"
        ) from None
    except OSError as exc:
        raise NicbenchError(f"{p}: cannot read the OpenFlow rules: {exc.strerror or exc}") from None
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

    rules = list(rules)
    for r in rules:
        for a in r.get("actions", []):
            visit(a.get("port"))
    return names | matched_in_ports(rules)


def matched_in_ports(rules: Iterable[dict[str, Any]]) -> set[str]:
    """The port names the rules match on (`in_port=NAME`)."""
    return {
        m["in_port"]["name"]
        for r in rules
        if isinstance((m := r.get("matches") or {}).get("in_port"), dict) and isinstance(m["in_port"].get("name"), str)
    }


def default_ports(rules: list[dict[str, Any]], in_port: str, bridge: str = "br0") -> list[dict[str, Any]]:
    """Ports for the names the rules use (sorted: OpenFlow and datapath numbers 1, 2, ...) and the
    bridge's LOCAL port (OpenFlow 65534, datapath 100, as OVS's dummy datapath numbers them)."""
    names = sorted(_port_names(rules) | {in_port} - {bridge})
    ports = [{"name": n, "ofport": i + 1, "dp_port": i + 1} for i, n in enumerate(names)]
    return [{"name": bridge, "ofport": OFPP_LOCAL, "dp_port": 100}, *ports]


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


def tunnel_setup(
    specs: list[dict[str, Any]], rules: list[dict[str, Any]], bridge: str = "br0"
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The bridge's ports (as `default_ports` numbers them: the names the rules use and the VXLAN ports,
    in name order, OpenFlow and datapath 1, 2, ...; LOCAL datapath 100), each VXLAN port with its options
    and its UDP port as datapath number (as OVS's userspace datapath numbers tunnel ports), and the
    underlay the specs share: its physical port on the first free datapath number, its LOCAL port 101."""
    first = specs[0]
    for s in specs[1:]:
        for k in ("local_ip", "underlay", "local_mac"):
            if s[k] != first[k]:
                raise NicbenchError(
                    f"--port {s['name']}: {k} {s[k]!r} differs from {first['name']}'s {first[k]!r} "
                    "(one underlay bridge is modelled)"
                )
    names = sorted((_port_names(rules) | {s["name"] for s in specs}) - {bridge, first["underlay"]})
    by_spec = {s["name"]: s for s in specs}
    ports: list[dict[str, Any]] = [{"name": bridge, "ofport": OFPP_LOCAL, "dp_port": 100}]
    for i, name in enumerate(names):
        port: dict[str, Any] = {"name": name, "ofport": i + 1, "dp_port": i + 1}
        if name in by_spec:
            s = by_spec[name]
            port["dp_port"] = s["dst_port"]
            port["tunnel"] = {"remote_ip": s["remote_ip"], "dst_port": s["dst_port"], "remote_mac": s["remote_mac"]}
            if s["key"] is not None:
                port["tunnel"]["key"] = s["key"]
        ports.append(port)
    used = {p["dp_port"] for p in ports}
    phy_dp = next(n for n in range(1, 1 << 16) if n not in used and n != 101)
    underlay = {
        "port": first["underlay"],
        "dp_port": phy_dp,
        "bridge_dp_port": 101,
        "ip": first["local_ip"],
        "mac": first["local_mac"],
    }
    return ports, underlay


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


def megaflows(
    rules: list[dict[str, Any]],
    pcap: str | Path,
    *,
    in_port: str,
    ports: list[dict[str, Any]] | None = None,
    underlay: dict[str, Any] | None = None,
    nic: str | None = None,
    tc_policy: str = "none",
    hw_offload: bool | None = None,
    lookup: dict[str, Any] | None = None,
    cache: dict[str, Any] | None = None,
    costs: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Runs the packets of PCAP (file order, all received on IN_PORT) through the rules; returns
    the result dict (megaflows with `text` in dpctl/dump-flows syntax, refusals, upcalls, host cost).

    `hw_offload` defaults to on when a `nic` is given. `lookup` switches OVS's classifier
    refinements (`staged_lookup`, `prefix_tries`, `ports_trie`, `prefix_fields`); `cache` the
    revalidator settings (`max_idle_ms`, `flow_limit`, ...). With VXLAN ports (`ports` entries with
    `tunnel` options) `underlay` is the bridge they send through (`tunnel_setup` builds both); packets
    arriving on the underlay's port are decapsulated when they are VXLAN to its IP."""
    request = build_request(
        rules,
        pcap,
        in_port=in_port,
        ports=ports,
        underlay=underlay,
        nic=nic,
        tc_policy=tc_policy,
        hw_offload=hw_offload,
        lookup=lookup,
        cache=cache,
        costs=costs,
    )
    with gc_paused():
        return models.run_json("vswitch", request_json(request))


_DIGIT_RUNS = re.compile(r"\d{20,}")


def request_json(request: dict[str, Any]) -> str:
    """The request as the model reads it: integers of 2^64 and more (IPv6 addresses and masks) in
    the rules as decimal strings, since JSON numbers that wide lose precision on the way to the
    model's u128 fields. The rules are rebuilt only when the text has such a number (2^64 has 20
    digits; a tun_id mask, 2^64 - 1, too): an IPv4 rule set of 100K rules is serialized once."""
    text = json.dumps(request)
    if any(int(run) >= 1 << 64 for run in set(_DIGIT_RUNS.findall(text))):
        text = json.dumps({**request, "rules": _wide_ints_walk(request["rules"])})
    return text


def _wide_ints_walk(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _wide_ints_walk(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_wide_ints_walk(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1 << 64:
        return str(value)
    return value


def build_request(
    rules: list[dict[str, Any]],
    pcap: str | Path,
    *,
    in_port: str,
    ports: list[dict[str, Any]] | None = None,
    underlay: dict[str, Any] | None = None,
    nic: str | None = None,
    tc_policy: str = "none",
    hw_offload: bool | None = None,
    lookup: dict[str, Any] | None = None,
    cache: dict[str, Any] | None = None,
    costs: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The request `megaflows` sends (the `vswitch.request` contract, serialized by `request_json`),
    with nicbench's defaults."""
    if nic is not None and nic not in NICS:
        raise NicbenchError(f"nic {nic!r} is not known (nics: {', '.join(NICS)})")
    if tc_policy not in TC_POLICIES:
        raise NicbenchError(f"tc-policy {tc_policy!r} is not one of {', '.join(TC_POLICIES)}")
    request = {
        "rules": rules,
        "ports": ports if ports is not None else default_ports(rules, in_port),
        "pcap": str(pcap),
        "in_port": in_port,
        "underlay": underlay,
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
    flower priority on the ingress port), as the PVP model's `MaskLoad`s for `ingress`. A tunnel-key
    megaflow is a decap, one ending in `tnl_push` an encap; a `tnl_pop` megaflow is left out: it is the
    userspace datapath's decap step, which under OVS-TC the kernel's VXLAN port does (no tc rule of its
    own; the tunnel-key megaflow's rule takes the decap to the NIC)."""
    masks: dict[tuple, dict[str, Any]] = {}
    for mf in result["megaflows"]:
        if not mf["installed"]:
            continue
        texts = [a.get("text", "") for a in mf["flow"]["actions"] if a.get("action") == "tunnel"]
        if any(t.startswith("tnl_pop(") for t in texts):
            continue
        decap = any(k["field"] == "tun_id" for k in mf["flow"]["keys"])
        encap = any(t.startswith("tnl_push(") for t in texts)
        signature = tuple(sorted((k["field"], str(k["mask"])) for k in mf["flow"]["keys"]))
        entry = masks.setdefault(
            (signature, decap, encap),
            {"ingress": ingress, "megaflows": 0, "offloaded": 0, "decap": decap, "encap": encap},
        )
        entry["megaflows"] += 1
        entry["offloaded"] += bool(mf["flow"]["placement"].get("offloaded"))
    return list(masks.values())


def _inner_frames(trace: str | Path, out: Path) -> None:
    """Writes the trace's frames with every VXLAN frame decapsulated (what the VM receives), same
    timestamps, as a nanosecond pcap."""
    import struct

    from nicbench.packets import parse_frame
    from nicbench.traces import read_packets

    with open(out, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 1))
        for ts, frame in read_packets(str(trace)):
            parsed = parse_frame(frame)
            if "Vxlan" in (parsed.get("tunnel") or {}):
                frame = frame[parsed["outer"]["payload_offset"] + 8 :]
            f.write(struct.pack("<IIII", ts // 1_000_000_000, ts % 1_000_000_000, len(frame), len(frame)) + frame)


def pvp_through_datapath(
    rules: list[dict[str, Any]],
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
    """Red Hat PVP with the user's rules and packets: the trace arrives on `uplink`, and the VM (a
    forwarding loop that returns each packet unchanged, as testpmd in the seed's guest) sends it back
    in on `vm_port`. Both passes run through the virtual OVS datapath with the NIC's offload
    decision; the megaflows they install, counted per mask and ingress, are the PVP model's load,
    with the trace's flows and mean frame size; `flow_order` (see `nicbench.pvp.FLOW_ORDERS`) is how the
    flows' packets take turns at the NIC. With `tunnels` (parsed `--port NAME=vxlan,...` specs whose
    underlay is `uplink`) the trace is VXLAN: the uplink pass decapsulates, the VM gets and returns the
    inner frames, the rules encapsulate them; the PVP model runs with `vxlan` and the inner frame size
    (the seed's Fig. 9 sizes are inner frames). Returns {"datapath": {...}, "pvp": {...}}."""
    import tempfile

    from nicbench import pvp
    from nicbench.traces import pcap_info

    info = pcap_info(str(pcap))
    if not info["packets"]:
        raise NicbenchError(f"{pcap}: the trace has no packets")
    ports, underlay = None, None
    if tunnels:
        ports, underlay = tunnel_setup(tunnels, rules)
        if underlay["port"] != uplink:
            raise NicbenchError(
                f"--port {tunnels[0]['name']}: underlay={underlay['port']!r} must be the uplink "
                f"{uplink!r} (the VXLAN trace arrives on it)"
            )
    with tempfile.TemporaryDirectory(prefix="nicbench-pvp-") as tmp, gc_paused():
        vm_pcap: str | Path = pcap
        if tunnels:
            vm_pcap = Path(tmp) / "inner.pcap"
            _inner_frames(pcap, vm_pcap)
        passes = {}
        for ingress, port, trace in (("uplink", uplink, pcap), ("vf", vm_port, vm_pcap)):
            passes[ingress] = megaflows(
                rules, trace, in_port=port, ports=ports, underlay=underlay, nic=nic, tc_policy=tc_policy
            )
        vm_info = pcap_info(str(vm_pcap))
    load = {"masks": [m for ingress, r in passes.items() for m in mask_load(r, ingress)]}
    for ingress, port in (("uplink", uplink), ("vf", vm_port)):
        forwarding = any(
            a.get("action") == "output" for mf in passes[ingress]["megaflows"] for a in mf["flow"]["actions"]
        )
        if not forwarding:
            raise NicbenchError(
                f"no packet arriving on {port!r} ({ingress}) is forwarded: the rules drop them "
                "(a PVP loop needs rules for both directions: uplink -> VM and VM -> uplink)"
            )
    frame_bytes = max(64, round(vm_info["bytes"] / vm_info["packets"]) + 4)  # captured frames lack the 4 B FCS
    flows = max(1, int(vm_info["flows"]))
    prediction = pvp.predict(
        nic, flows, frame_bytes, vxlan=bool(tunnels), megaflows=load, offered_gbps=offered_gbps, flow_order=flow_order
    )
    return {"datapath": passes, "load": load, "frame_bytes": frame_bytes, "flows": flows, "pvp": prediction}
