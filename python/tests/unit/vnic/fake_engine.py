"""A FAKE virtual-NIC engine for tests only: follows the scenario/result JSON contract
(briefs/G_contract.md) with a tiny closed-form toy model, so the Python side (targets,
study, CLI, calibration) can be tested without the Rust engine. Never shipped.

Toy model (parameters from a profile TOML `[param.NAME]` tables, then `overrides`):
root table collapses above `root_table_knee_occupancy`; each chained table costs
`chain_lookup_ns`; a same-core batch stalls forwarding for count × per-rule cost.
"""

from __future__ import annotations

import json
import math
import random
import tomllib
from pathlib import Path

DEFAULTS = {
    "root_table_capacity": 65536.0,
    "root_table_knee_occupancy": 0.85,
    "chain_lookup_ns": 10.0,
    "root_insert_us": 25.0,
    "nonroot_insert_us": 2.0,
    "base_latency_us": 30.0,
}

PROFILE_TOML = """# fake profile for tests
[nic]
name = "fakecx"
link_gbps = 100

[param.root_table_capacity]
value = 65536
unit = "entries"
provenance = "seed 000, §2.1"

[param.root_table_knee_occupancy]
value = {knee}
unit = ""
provenance = "fitted: initial guess"
fitted = true

[param.chain_lookup_ns]
value = {chain}
unit = "ns"
provenance = "fitted: initial guess"
fitted = true
min = 1.0
max = 100.0

[param.root_insert_us]
value = 25.0
unit = "us"
provenance = "fitted: initial guess"
fitted = true

[param.nonroot_insert_us]
value = 2.0
unit = "us"
provenance = "datasheet"

[param.base_latency_us]
value = 30.0
unit = "us"
provenance = "fitted: initial guess"
fitted = true
"""


def write_profile(folder: Path, name: str = "fakecx", knee: float = 0.85, chain: float = 10.0) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.toml"
    path.write_text(PROFILE_TOML.replace("{knee}", repr(knee)).replace("{chain}", repr(chain)))
    return path


def _params(scenario: dict) -> dict:
    params = dict(DEFAULTS)
    nic = scenario.get("nic", "connectx5")
    path = Path(nic) if str(nic).endswith(".toml") else Path(scenario.get("profiles_dir", ".")) / f"{nic}.toml"
    if path.is_file():
        doc = tomllib.loads(path.read_text())
        for name, table in doc.get("param", {}).items():
            params[name] = float(table["value"])
    elif nic not in ("connectx5", "connectx6"):
        raise ValueError(f"unknown NIC profile {nic!r}")
    for k, v in (scenario.get("overrides") or {}).items():
        if k not in params:
            raise ValueError(f"overrides: unknown parameter {k!r}")
        params[k] = float(v)
    return params


def _offered(traffic: dict) -> tuple[float, float]:
    size = traffic["size"]["fixed"] if isinstance(traffic.get("size"), dict) and "fixed" in traffic["size"] else 1500
    rate = traffic.get("rate") or {}
    if "gbps" in rate:
        gbps = float(rate["gbps"])
        mpps = gbps * 1e3 / ((size + 20) * 8)
    else:
        mpps = float(rate["mpps"])
        gbps = mpps * (size + 20) * 8 / 1e3
    return gbps, mpps


def vnic_simulate(scenario_json: str, progress=None) -> str:
    sc = json.loads(scenario_json)
    p = _params(sc)
    rng = random.Random(sc.get("seed", 1))
    duration_s = sc["duration_ns"] / 1e9
    gbps, mpps = _offered(sc["traffic"]) if sc.get("traffic") else (10.0, 1.0)
    gen = (sc.get("rules") or {}).get("generated", {"count": 0, "groups": 0})
    count, groups = gen["count"], gen["groups"]
    occ = count / p["root_table_capacity"] if groups == 0 else 1 / p["root_table_capacity"]
    if groups == 0:  # a smooth collapse around the knee (logistic), so fits have gradients
        z = min(50.0, (occ - p["root_table_knee_occupancy"]) / 0.01)
        cap = 100.0 / (1.0 + 5000.0 * math.exp(z) / (1.0 + math.exp(z)))
        latency = p["base_latency_us"] * 100.0 / cap
    else:
        cap = 100.0 / max(1.0, groups * p["chain_lookup_ns"] / 40.0)
        latency = p["base_latency_us"] * (1 + 0.6 * max(0, groups - 1))
    rx = min(gbps, cap) * (1 + rng.uniform(-0.002, 0.002))
    install = sc.get("install")
    per_rule_s = (p["root_insert_us"] if (install or {}).get("group", 0) == 0 else p["nonroot_insert_us"]) * 1e-6
    if install and install.get("match") == "ipv6":
        per_rule_s *= 0.9
    if install and install.get("op") == "update":
        per_rule_s *= 2
    bin_s = sc["measure"]["timeline_bin_ns"] / 1e9
    timeline, events, install_out = [], [], None
    stall = (0.0, 0.0)
    if install:
        start_s = install.get("start_ns", 0) / 1e9
        if install["mode"] == "batch":
            n = install["count"]
            dur = n * per_rule_s
            if install["core"] == "same" and n >= 1000:
                stall = (start_s, start_s + dur)
            events.append({"t_s": start_s, "what": f"batch of {n} starts"})
            install_out = {"rules": n, "duration_s": dur, "rate_rules_per_s": n / dur}
        else:
            rate = install["rate_per_s"]
            if install["core"] == "same":
                rx *= max(0.0, 1 - rate * per_rule_s * 3)
                latency *= 1 + rate * per_rule_s * 4
            n = int(rate * (duration_s - start_s))
            install_out = {"rules": n, "duration_s": duration_s - start_s, "rate_rules_per_s": rate}
    nbins = max(1, int(round(duration_s / bin_s)))
    total = 0.0
    for i in range(nbins):
        t1 = (i + 1) * bin_s
        t0 = t1 - bin_s
        down = max(0.0, min(t1, stall[1]) - max(t0, stall[0])) / bin_s
        v = rx * (1 - down)
        total += v * bin_s
        timeline.append({"t_s": round(t1, 9), "rx_gbps": v, "rx_mpps": v / gbps * mpps if gbps else 0.0,
                         "event": None})
        if progress is not None and i % 100 == 0:
            progress(int(t1 * 1e9))
    rx_mean = total / (nbins * bin_s)
    lost = (gbps - rx_mean) / gbps * mpps * 1e6 * duration_s if gbps else 0.0
    lat = {k: latency * f for k, f in (("p1", 0.6), ("p25", 0.85), ("p50", 1.0), ("p75", 1.2), ("p99", 1.6),
                                       ("p999", 2.0), ("max", 3.0), ("mean", 1.05))}
    result = {
        "offered_gbps": gbps, "offered_mpps": mpps, "rx_gbps": rx_mean, "rx_mpps": rx_mean / gbps * mpps,
        "tx_gbps": rx_mean, "loss_ratio": max(0.0, 1 - rx_mean / gbps) if gbps else 0.0,
        "dropped": {"imissed": lost, "nic": 0}, "latency_us": lat, "queues": {"0": int(rx_mean / gbps * mpps * 1e6)},
        "timeline": timeline, "events": events, "install": install_out,
        "model": {"root_table_occupancy": min(occ, 1.0), "tables_traversed_mean": max(1, groups),
                  "steering_cache_hit_rate": 0.99, "bottleneck": "link"},
        "sim": {"packets": int(mpps * 1e6 * duration_s), "wall_s": 0.001, "sim_packets_per_s": 1e9},
    }
    if not math.isfinite(result["rx_gbps"]):  # pragma: no cover
        raise ValueError("fake engine bug")
    return json.dumps(result)


def vnic_profile(name_or_path: str) -> str:
    path = Path(name_or_path)
    doc = tomllib.loads(path.read_text()) if path.is_file() else {"param": {}}
    return json.dumps({"name": path.stem, "parameters": doc.get("param", {})})


def vnic_profiles() -> list[str]:
    return ["connectx5", "connectx6"]


def install(monkeypatch) -> None:
    """Patch nicbench._native with this fake (tests only)."""
    import nicbench._native as native

    monkeypatch.setattr(native, "vnic_simulate", vnic_simulate, raising=False)
    monkeypatch.setattr(native, "vnic_profile", vnic_profile, raising=False)
    monkeypatch.setattr(native, "vnic_profiles", vnic_profiles, raising=False)
