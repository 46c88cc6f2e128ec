"""A FAKE off-path model for tests only: follows the request/response JSON contract (the serde
types `Request` and `Response` of the nicbench-models crate's offpath module) with a tiny
closed-form toy, so the Python side (targets, study, CLI, calibration plumbing) is tested apart
from the model's numbers. Never shipped.

Toy: each flow gets share × X requests/s; X is the largest rate no resource exceeds (network per
direction 200 Gbps, PCIe1 per direction 256 Gbps, NIC cores `nic_core_mpps` per endpoint and
195 Mpps in all, requester caps 29 / 51.2 Mpps for ③ S2H / H2S). Latency: fixed per path.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

PROFILE = """# fake off-path profile for tests
name = "{name}"
kind = "offpath"
calibration_study = "offpath"

[param.nic_core_mpps]
value = {cores}
unit = "Mpps"
provenance = "fitted: offpath calibration set"
min = 50.0
max = 400.0

[param.network_gbps]
value = 200.0
unit = "Gbps"
provenance = "seed 004, Table 1"
"""
SOC_ONLY = """
[param.soc_requester_mpps]
value = 29.0
unit = "Mpps"
provenance = "fitted: offpath calibration set"
"""

LATENCY_US = {"client->host": 2.0, "client->soc": 1.8, "host->soc": 2.5, "soc->host": 4.0}
REQUESTER_MPPS = {"client->host": 1e9, "client->soc": 1e9, "host->soc": 51.2}
CALLS: list[dict] = []


def write_profiles(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bluefield2.toml").write_text(PROFILE.format(name="bluefield2", cores=176.0) + SOC_ONLY)
    (folder / "connectx6-rnic.toml").write_text(PROFILE.format(name="connectx6-rnic", cores=230.0))
    return folder


def _params(req: dict) -> dict:
    nic = req["nic"]
    path = Path(nic) if str(nic).endswith(".toml") else Path(req.get("profiles_dir", ".")) / f"{nic}.toml"
    if not path.is_file():
        raise ValueError(f"unknown profile {nic!r}")
    doc = tomllib.loads(path.read_text())
    params = {k: float(v["value"]) for k, v in doc["param"].items()}
    for k, v in (req.get("overrides") or {}).items():
        if k not in params:
            raise ValueError(f"unknown override {k!r}")
        params[k] = float(v)
    return params


def offpath_predict(request_json: str) -> str:
    req = json.loads(request_json)
    CALLS.append(req)
    params = _params(req)
    flows = req["flows"]
    if not flows:
        raise ValueError("empty flows")
    for f in flows:
        if f["path"] not in LATENCY_US or f["verb"] not in ("READ", "WRITE", "SEND"):
            raise ValueError(f"unknown path/verb {f['path']} {f['verb']}")
        if "soc" in f["path"] and "soc_requester_mpps" not in params:
            raise ValueError("SoC path on a NIC without SoC")
    shares = [float(f.get("share", 1.0)) for f in flows]
    shares = [s / sum(shares) for s in shares]
    caps = {"nic_cores": 195.0 / 1.0, "network_in": 200.0, "network_out": 200.0, "pcie1_up": 256.0,
            "pcie1_down": 256.0, "requester": 1e9}
    demand = {k: 0.0 for k in caps}
    for f, s in zip(flows, shares):
        bits = max(f["payload_bytes"], 1) * 8 / 1e3  # Gbit per M requests
        demand["nic_cores"] += s
        demand["network_in" if f["verb"] != "READ" else "network_out"] += s * bits
        demand["pcie1_up" if f["verb"] != "READ" else "pcie1_down"] += s * bits
        cap = params.get("soc_requester_mpps", 29.0) if f["path"] == "soc->host" else REQUESTER_MPPS[f["path"]]
        demand["requester"] = max(demand["requester"], s / cap * 1e9)
    demand["nic_cores"] *= 195.0 / min(195.0, params["nic_core_mpps"] * len({f["path"] for f in flows}))
    rates = {k: caps[k] / d for k, d in demand.items() if d > 0}
    bottleneck = min(rates, key=rates.get)
    x = rates[bottleneck]
    offered = [f.get("offered_mpps") for f in flows]
    out_flows = []
    for f, s, o in zip(flows, shares, offered):
        mpps = min(s * x, o) if o else s * x
        gbps = mpps * f["payload_bytes"] * 8 / 1e3
        tlps = mpps * max(1, -(-f["payload_bytes"] // 512))
        out_flows.append({"path": f["path"], "verb": f["verb"], "payload_bytes": f["payload_bytes"], "share": s,
                          "gbps": gbps, "mpps": mpps, "latency_us": LATENCY_US[f["path"]],
                          "posting_latency_us": 0.3, "saturated": False,
                          "pcie_mpps": {"pcie0_up": tlps, "pcie0_down": tlps, "pcie1_up": tlps, "pcie1_down": tlps}})
    advice = []
    if any(f["path"] == "client->soc" and f["verb"] == "WRITE" and (f.get("address_range_bytes") or 1e10) < 65536
           for f in flows):
        advice.append({"id": "avoid_skewed_soc_writes", "text": "skewed writes to SoC memory"})
    if any(f["path"] == "client->soc" and f["verb"] == "READ" and f["payload_bytes"] > 9 << 20 for f in flows):
        advice.append({"id": "segment_large_reads", "text": "segment large READs"})
    util = {k: demand[k] * x / caps[k] for k in caps}
    return json.dumps({"nic": req["nic"], "mix": req.get("mix", "shares"), "flows": out_flows, "total_gbps": sum(f["gbps"] for f in out_flows),
                       "total_mpps": sum(f["mpps"] for f in out_flows),
                       "pcie_mpps": {k: sum(f["pcie_mpps"][k] for f in out_flows) for k in
                                     ("pcie0_up", "pcie0_down", "pcie1_up", "pcie1_down")},
                       "bottleneck": bottleneck, "bottleneck_utilization": 1.0, "utilization": util,
                       "advice": advice})


def install(monkeypatch) -> None:
    from nicbench import _native

    CALLS.clear()
    monkeypatch.setattr(_native, "offpath_predict", offpath_predict, raising=False)
