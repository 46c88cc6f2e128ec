"""The Red Hat PVP testbed around an OVS-offload NIC (seed 002), from Python.

The model (`nicbench_models::pvp`, run through `nicbench.models.run("pvp", ...)`) takes ONE request and
returns ONE result, both defined by their Rust serde types (schemas: `models.contract_schema("pvp",
"request")` / `("pvp", "result")`):

    request  = {"nic": "connectx5-25g", "flows": 16384, "frame_bytes": 64, "vxlan": false,
                "offered_gbps": 25.0, "datapath": "tc-offload",      # or "kernel", "dpdk"
                "flow_order": "round-robin",                          # or "random"
                "megaflows": {"masks": [{"ingress": "uplink", "megaflows": 16384, "offloaded": 16384,
                                         "decap": false, "encap": false}, ...]},   # default: the seed's PVP
                "overrides": {...}}
    result   = {"mpps", "gbps", "line_gbps", "loss", "latency_us", "latency_parts_us": {...}, "bottleneck",
                "limits_mpps": {...},
                "megaflows_offloaded", "megaflows_software", "masks_offloaded", "refused": [...],
                "host_cores_busy", "nic_service_ns", "detail": {...}, ...}

`megaflows` is what the virtual OVS datapath decides (which megaflows exist, their masks, which the NIC
took); without it the request stands for the seed's rule sets: two exact IPv4 OpenFlow rules per flow, so
two megaflows per flow, one mask per direction, all offloadable (`pvp_megaflows`).

Invariants: `predict` never changes its arguments; calibration overrides set with
`nicbench.profiles.parameter_overrides()` apply beneath the call's own `overrides`, and only for
parameters the request's profile declares.
"""

from __future__ import annotations

from typing import Any

from nicbench import models
from nicbench.errors import NicbenchError
from nicbench.profiles import overrides_for
from nicbench.traffic import line_rate_mpps  # noqa: F401 (part of this module's API, as before)

__all__ = ["DATAPATHS", "FLOW_ORDERS", "predict", "request", "pvp_megaflows", "line_rate_mpps"]

# The NICs are profiles (`nicbench.vswitch.nics()`: the profiles of the kinds the model reads).
DATAPATHS = ("tc-offload", "kernel", "dpdk")
# The order of the flows' packets: round-robin (the seed's TRex, addresses incremented per packet; a
# replayed trace repeats its order too) or random (independent references).
FLOW_ORDERS = ("round-robin", "random")


def pvp_megaflows(flows: int, vxlan: bool = False) -> dict[str, Any]:
    """The seed's PVP megaflows: one exact megaflow per flow and direction, all offloaded."""
    return {
        "masks": [
            {"ingress": "uplink", "megaflows": flows, "offloaded": flows, "decap": vxlan, "encap": False},
            {"ingress": "vf", "megaflows": flows, "offloaded": flows, "decap": False, "encap": vxlan},
        ]
    }


def check_offered(nic: str, offered_gbps: float | None, option: str, overrides: dict[str, float] | None = None) -> None:
    """An offered load above the NIC's port is refused naming the option and the line rate (the model
    would name its own field, `offered_gbps`)."""
    if offered_gbps is None:
        return
    from nicbench.profiles import above_link

    link = above_link(offered_gbps, nic, overrides, slack=0.0)  # the model's own test: offered <= link
    if link is not None:
        raise NicbenchError(
            f"{option}: above the line rate of {nic} ({link:g} Gbps on the wire); "
            f"give at most {link:g} Gbps, or leave it out for the line rate"
        )


def request(
    nic: str,
    flows: int,
    frame_bytes: int = 64,
    *,
    vxlan: bool = False,
    offered_gbps: float | None = None,
    datapath: str | None = None,
    flow_order: str | None = None,
    megaflows: dict[str, Any] | None = None,
    overrides: dict[str, float] | None = None,
    context_overrides: bool = True,
) -> dict[str, Any]:
    """The request JSON object (calibration overrides merged in unless `context_overrides` is False)."""
    if datapath is not None and datapath not in DATAPATHS:
        raise NicbenchError(f"pvp: unknown datapath {datapath!r} (allowed: {', '.join(DATAPATHS)})")
    out: dict[str, Any] = {"nic": str(nic), "flows": int(flows), "frame_bytes": int(frame_bytes), "vxlan": bool(vxlan)}
    if offered_gbps is not None:
        out["offered_gbps"] = float(offered_gbps)
    if datapath is not None:
        out["datapath"] = datapath
    if flow_order is not None:
        if flow_order not in FLOW_ORDERS:
            raise NicbenchError(f"pvp: unknown flow order {flow_order!r} (allowed: {', '.join(FLOW_ORDERS)})")
        out["flow_order"] = flow_order
    if megaflows is not None:
        out["megaflows"] = megaflows
    merged = {**(overrides_for(str(nic)) if context_overrides else {}), **(overrides or {})}
    if merged:
        out["overrides"] = merged
    return out


def predict(nic: str, flows: int, frame_bytes: int = 64, **kwargs: Any) -> dict[str, Any]:
    """Throughput, loss, latency, offload counts and host cores of one PVP run (see the module doc).

    Bad input raises `NicbenchError` (a ValueError) with a one-line message."""
    return models.run("pvp", request(nic, flows, frame_bytes, **kwargs))
