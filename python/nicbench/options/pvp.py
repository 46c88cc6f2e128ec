"""The PVP model's options: `nicbench pvp`'s flags and the `pvp.*` targets' parameters.

`OPTIONS` is the table (see `nicbench.options`). `pvp.run` takes every option the command line has
but `--megaflows` (a file of the datapath's counts, which the `vswitch` targets derive) and `--set`;
`pvp.compare` takes them for its side a, and `b_*` for side b. `gbps` (the offered load) was added
to the targets with the table: at its default (the port's line rate) it is not part of a run's key.
"""

from __future__ import annotations

from typing import Any

from nicbench import models, pvp
from nicbench.options import Option, Options, Spell, param_spelling

__all__ = ["OPTIONS", "MAX_FLOWS", "MIN_FRAME_BYTES", "MAX_FRAME_BYTES", "check"]

# The caps and the NIC kinds the PVP model holds a request to, as the model declares them (its
# registry entry: `LIMITS` in nicbench-models pvp/request.rs, `PROFILE_KINDS` in pvp/mod.rs).
_LIMITS = models.limits("pvp")
MAX_FLOWS = _LIMITS["max_flows"]
# Frame sizes with FCS.
MIN_FRAME_BYTES = _LIMITS["min_frame_bytes"]
MAX_FRAME_BYTES = _LIMITS["max_frame_bytes"]
# Profile kinds of an OVS-offload NIC.
NIC_KINDS = models.profile_kinds("pvp")

OPTIONS = Options(
    [
        Option(
            "nic",
            "str",
            "connectx5-25g",
            "OVS-offload profile: connectx5-25g, agilio-cx-25g or a .toml path.",
            flag="--nic",
            profile_kinds=NIC_KINDS,
        ),
        Option(
            "flows",
            "count",
            16_000,
            "Flows the generator sends (10000, 64k, 1M); two OpenFlow rules per flow.",
            flag="--flows",
            cli_default="16k",
            minimum=1,
            maximum=MAX_FLOWS,
        ),
        Option(
            "size",
            "size_bytes",
            64,
            "Frame size with FCS in bytes (with --vxlan: the inner frame; the wire adds 50 B).",
            flag="--size",
            cli_default="64",
            minimum=MIN_FRAME_BYTES,
            maximum=MAX_FRAME_BYTES,
        ),
        Option("vxlan", "bool", False, "VXLAN decap towards the VM and encap back, one VNI per rule.", flag="--vxlan"),
        Option(
            "flow_order",
            "choice",
            "round-robin",
            "Order of the flows' packets: round-robin (TRex incrementing addresses, as in the seed) or random.",
            flag="--flow-order",
            choices=pvp.FLOW_ORDERS,
        ),
        Option(
            "datapath", "choice", "tc-offload", "Which OVS datapath forwards.", flag="--datapath", choices=pvp.DATAPATHS
        ),
        Option(
            "gbps",
            "float",
            None,
            "Offered load in Gb/s on the wire (default: the port's line rate).",
            flag="--gbps",
            none_word="line",
            minimum=1e-9,
            cli_metavar="NUMBER",
        ),
    ]
)


def check(
    values: dict[str, Any], spell: Spell = param_spelling, overrides: dict[str, float] | None = None
) -> str | None:
    """An offered load above the NIC's port, named as the caller spells it; None when it can run."""
    from nicbench.errors import NicbenchError

    gbps = values.get("gbps")
    try:
        pvp.check_offered(values["nic"], gbps, f"{spell('gbps')} {gbps}" if gbps is not None else "", overrides)
    except NicbenchError as exc:
        return str(exc)
    return None


def predict_kwargs(values: dict[str, Any]) -> dict[str, Any]:
    """`pvp.predict`'s keyword arguments from option values (nic, flows and size are positional)."""
    return {
        "vxlan": values["vxlan"],
        "datapath": values["datapath"],
        "flow_order": values["flow_order"],
        "offered_gbps": values.get("gbps"),
    }
