"""The oracle tests' rules, written once in `ovs-ofctl add-flows` syntax (what real OVS reads) and
turned into nicbench's `OfRule` JSON by this small translator of exactly the subset the tests use
(unknown words raise, so a case cannot silently test less than it says). It is test scaffolding,
not nicbench's OpenFlow parser (that lives in nicbench-rules)."""

from __future__ import annotations

import ipaddress
import re
from typing import Any

# The mask a field has when written without one (nw_tos is the DSCP: the TOS byte's upper 6 bits).
FULL = {"in_port": 0xFFFFFFFF, "dl_src": (1 << 48) - 1, "dl_dst": (1 << 48) - 1, "dl_type": 0xFFFF, "vlan_tci": 0xFFFF,
        "nw_src": 0xFFFFFFFF, "nw_dst": 0xFFFFFFFF, "nw_proto": 0xFF, "nw_tos": 0xFC, "nw_ttl": 0xFF, "tp_src": 0xFFFF,
        "tp_dst": 0xFFFF, "tun_id": (1 << 64) - 1}
PROTOS = {"ip": (0x0800, None), "tcp": (0x0800, 6), "udp": (0x0800, 17), "icmp": (0x0800, 1), "arp": (0x0806, None)}
FIELD_ORDER = ["recirc_id", "in_port", "dl_src", "dl_dst", "dl_type", "vlan_tci", "nw_src", "nw_dst", "ipv6_src",
               "ipv6_dst", "nw_proto", "nw_tos", "nw_ttl", "nw_frag", "tp_src", "tp_dst", "tcp_flags", "tun_id"]


def _num(text: str) -> int:
    return int(text, 0)


def _value_mask(field: str, text: str) -> tuple[int, int]:
    value, _, mask = text.partition("/")
    if field in ("nw_src", "nw_dst"):
        net = ipaddress.ip_network(text, strict=False)
        return int(net.network_address), int(net.netmask)
    if field in ("dl_src", "dl_dst"):
        return int(value.replace(":", ""), 16), int(mask.replace(":", ""), 16) if mask else FULL[field]
    return _num(value), _num(mask) if mask else FULL[field]


def _port(text: str) -> dict[str, Any]:
    if text.isdigit():
        return {"number": int(text)}
    if text.upper() in ("LOCAL", "IN_PORT", "NORMAL", "FLOOD", "ALL", "CONTROLLER", "NONE"):
        return {"reserved": text.upper()}
    return {"name": text}


def _split_actions(text: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    return [*out, cur] if cur else out


def _action(a: str) -> dict[str, Any]:
    if a == "drop":
        return {"action": "drop"}
    if a == "normal":
        return {"action": "normal"}
    if a in ("strip_vlan", "pop_vlan"):
        return {"action": "pop_vlan"}
    if a == "dec_ttl":
        return {"action": "dec_ttl"}
    if m := re.fullmatch(r"output:(\S+)", a):
        return {"action": "output", "port": _port(m[1])}
    if m := re.fullmatch(r"push_vlan:(0x[0-9a-f]+)", a):
        return {"action": "push_vlan", "tpid": int(m[1], 16)}
    if m := re.fullmatch(r"mod_vlan_vid:(\d+)", a):
        return {"action": "set_field", "field": "vlan_tci", "value": 0x1000 | int(m[1]), "mask": 0x1FFF}
    if m := re.fullmatch(r"mod_(nw_src|nw_dst|tp_src|tp_dst|dl_src|dl_dst):(\S+)", a):
        value, _ = _value_mask(m[1], m[2])
        return {"action": "set_field", "field": m[1], "value": value, "mask": FULL[m[1]]}
    if m := re.fullmatch(r"set_tunnel:(\S+)", a):
        return {"action": "set_tunnel", "id": _num(m[1])}
    if m := re.fullmatch(r"resubmit\((\S*),(\d*)\)", a):
        return {"action": "resubmit", "port": _port(m[1]) if m[1] else None, "table": int(m[2]) if m[2] else None}
    if m := re.fullmatch(r"resubmit:(\S+)", a):
        return {"action": "resubmit", "port": _port(m[1]), "table": None}
    if m := re.fullmatch(r"goto_table:(\d+)", a):
        return {"action": "goto_table", "table": int(m[1])}
    raise ValueError(f"the test translator does not know action {a!r}")


def to_of_rule(line: str) -> dict[str, Any]:
    """One `add-flows` line → an OfRule JSON value."""
    match_text, _, actions_text = line.partition("actions=")
    rule: dict[str, Any] = {"table": 0, "priority": 32768, "cookie": 0, "idle_timeout_s": 0, "hard_timeout_s": 0}
    in_port = None
    fields: dict[str, tuple[int, int]] = {}
    for word in filter(None, (w.strip() for w in match_text.strip().rstrip(",").split(","))):
        key, _, value = word.partition("=")
        if key in ("table", "priority"):
            rule[key] = int(value)
        elif key in PROTOS:
            dl_type, proto = PROTOS[key]
            fields["dl_type"] = (dl_type, 0xFFFF)
            if proto is not None:
                fields["nw_proto"] = (proto, 0xFF)
        elif key == "in_port":
            in_port = _port(value)
        elif key == "dl_vlan":
            fields["vlan_tci"] = (0x1000 | int(value), 0x1FFF)
        elif key in FULL:
            fields[key] = _value_mask(key, value)
        else:
            raise ValueError(f"the test translator does not know match field {key!r}")
    rule["matches"] = {"in_port": in_port,
                       "fields": [{"field": f, "value": fields[f][0] & fields[f][1], "mask": fields[f][1]}
                                  for f in FIELD_ORDER if f in fields]}
    rule["actions"] = [_action(a) for a in _split_actions(actions_text.strip())]
    return rule


def to_of_rules(text: str) -> list[dict[str, Any]]:
    return [to_of_rule(line) for line in text.splitlines() if line.strip() and not line.startswith("#")]
