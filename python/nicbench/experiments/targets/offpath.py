"""Off-path SmartNIC targets: the Wei et al. (seed 004) experiments on the analytic off-path model.

- `offpath.single`  one flow (path, verb, payload, doorbell batch, address range, requesters):
                    peak throughput, latency, posting latency, PCIe packet rates per link and
                    direction, the bottleneck (one 0/1 metric per class of resource) and the advice.
- `offpath.mix`     several concurrent flows (`mix`: max_min = independent requesters, the seed's runs;
                    shares = one application's request mix) (`flows` in the `nicbench paths` syntax, `;`-separated,
                    with `{payload}` / `{verb}` placeholders): totals and per-flow numbers.
- `offpath.compare` configuration `a` vs `b` over a sweep of values substituted for `{x}` (and verbs
                    for `{verb}`): min/max of the throughput (requests/s; `gbps_change_*`: bandwidth) and
                    latency ratios and changes, so both ends of a published range ("15-30% higher
                    latency") are model outputs.

Every prediction goes through `nicbench.offpath.predict`, which applies calibration overrides.

Invariant: a run's result depends only on its parameters and the profiles (the model is analytic
and deterministic: `ctx.seed` is unused, one repetition suffices).
"""

from __future__ import annotations

import math
import statistics
from typing import Any

from nicbench import offpath
from nicbench.errors import NicbenchError
from nicbench.experiments.targets import RunContext, target
from nicbench.experiments.targets import finite_or_nan as _num
from nicbench.options.offpath import OPTIONS
from nicbench.vocab.params import Param

VERSION = "3"  # 2: `mix` parameter (max_min default for several flows), data-TLP metrics; 3: gbps_change_*
MAX_FLOW_METRICS = 3  # flow0_* .. flow2_* in offpath.mix

_BOTTLENECK_METRICS = {
    **{f"bottleneck_{c}": "" for c in offpath.BOTTLENECK_CLASSES},
    "bottleneck_code": "",
    "bottleneck_utilization": "",
}
_ADVICE_METRICS = {f"advice_{a}": "" for a in offpath.ADVICE_IDS}
_PCIE_METRICS = {
    **{f"{link}_mpps": "Mpps" for link in offpath.PCIE_LINKS},
    "pcie_mpps_total": "Mpps",
    "pcie_mpps_max": "Mpps",
    "pcie1_mpps": "Mpps",
    **{f"{link}_data_mpps": "Mpps" for link in offpath.PCIE_LINKS},
    "pcie_data_mpps_total": "Mpps",
    "pcie_data_mpps_max": "Mpps",
}
_COMMON_METRICS = {**_PCIE_METRICS, **_BOTTLENECK_METRICS, **_ADVICE_METRICS}

_SINGLE_METRICS = {
    "gbps": "Gbps",
    "mpps": "Mpps",
    "latency_us": "us",
    "posting_latency_us": "us",
    "saturated": "",
    **_COMMON_METRICS,
}
_MIX_METRICS = {
    "total_gbps": "Gbps",
    "total_mpps": "Mpps",
    "latency_us": "us",
    **{
        f"flow{i}_{m}": u
        for i in range(MAX_FLOW_METRICS)
        for m, u in (("gbps", "Gbps"), ("mpps", "Mpps"), ("latency_us", "us"))
    },
    **_COMMON_METRICS,
}
_COMPARE_METRICS = {
    **{
        f"{q}_{end}": ""
        for q in (
            "tput_ratio",
            "tput_change",
            "gbps_change",
            "lat_ratio",
            "lat_change",
            "pcie_ratio",
            "pcie_data_ratio",
        )
        for end in ("min", "max")
    },
    **{f"lat_diff_us_{end}": "us" for end in ("min", "max", "median")},
    **{f"{side}_mpps_{end}": "Mpps" for side in ("a", "b") for end in ("min", "max")},
    "a_gbps_max": "Gbps",
    "b_gbps_max": "Gbps",
    **{f"a_{link}_mpps": "Mpps" for link in offpath.PCIE_LINKS},
    "a_pcie_mpps_total": "Mpps",
    "b_pcie_mpps_total": "Mpps",
    **{f"a_{link}_data_mpps": "Mpps" for link in offpath.PCIE_LINKS},
    "a_pcie_data_mpps_total": "Mpps",
    "b_pcie_data_mpps_max": "Mpps",
    "points": "",
}


def _ratio(a: float, b: float) -> float:
    return a / b if math.isfinite(a) and math.isfinite(b) and b != 0 else math.nan


def common_metrics(result: dict[str, Any]) -> dict[str, float]:
    """PCIe packet rates, bottleneck indicators and advice indicators of one model response."""
    out: dict[str, float] = {}
    pcie = result.get("pcie_mpps") or {}
    for link in offpath.PCIE_LINKS:
        out[f"{link}_mpps"] = _num(pcie.get(link))
    rates = [out[f"{link}_mpps"] for link in offpath.PCIE_LINKS if math.isfinite(out[f"{link}_mpps"])]
    out["pcie_mpps_total"] = sum(rates) if rates else math.nan
    out["pcie_mpps_max"] = max(rates) if rates else math.nan
    # The NIC's own link (PCIe1, both directions): what the NIC "transfers" (seed §3.3 counters).
    out["pcie1_mpps"] = out["pcie1_up_mpps"] + out["pcie1_down_mpps"]
    # Data-carrying TLPs only (DMA writes, completions): the seed's Table 3 arithmetic.
    data = result.get("pcie_data_mpps") or {}
    for link in offpath.PCIE_LINKS:
        out[f"{link}_data_mpps"] = _num(data.get(link))
    drates = [out[f"{link}_data_mpps"] for link in offpath.PCIE_LINKS if math.isfinite(out[f"{link}_data_mpps"])]
    out["pcie_data_mpps_total"] = sum(drates) if drates else math.nan
    out["pcie_data_mpps_max"] = max(drates) if drates else math.nan
    cls = offpath.bottleneck_class(result.get("bottleneck"))
    for c in offpath.BOTTLENECK_CLASSES:
        out[f"bottleneck_{c}"] = 1.0 if cls == c else 0.0
    out["bottleneck_code"] = (
        float(offpath.BOTTLENECK_CLASSES.index(cls) + 1) if cls in offpath.BOTTLENECK_CLASSES else math.nan
    )
    out["bottleneck_utilization"] = _num(result.get("bottleneck_utilization"))
    given = {a.get("id") for a in result.get("advice") or [] if isinstance(a, dict)}
    for a in offpath.ADVICE_IDS:
        out[f"advice_{a}"] = 1.0 if a in given else 0.0
    return out


def _flows(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in result.get("flows") or [] if isinstance(f, dict)]


def _mean(values: list[float]) -> float:
    finite = [v for v in values if math.isfinite(v)]
    return sum(finite) / len(finite) if finite and len(finite) == len(values) else math.nan


def _fill(template: str, **values: Any) -> str:
    out = template
    for key, value in values.items():
        out = out.replace("{" + key + "}", str(value))
    return out


def _nic_param(default: str = offpath.DEFAULT_NIC, name: str = "nic") -> Param:
    return OPTIONS["nic"].param(name, default=default, help="profile name (profiles/<nic>.toml) or path to a .toml")


def _mix_param() -> Param:
    # The seed's concurrent runs are independent requesters (clients, host threads): max_min.
    return OPTIONS["mix"].param()


@target(
    "offpath.single",
    params=[
        _nic_param(),
        *OPTIONS.params("path", "verb", "payload", "doorbell_batch", "address_range", "threads", "machines", "offered"),
    ],
    metrics=_SINGLE_METRICS,
    version=VERSION,
    backends=("virtual", "perftest"),
)
def single(p: dict, ctx: RunContext) -> dict:
    """Wei et al. Fig. 4/7/8/9/10: one flow on one path; peak throughput, latency, PCIe, bottleneck."""
    flow = offpath.Flow(
        path=p["path"],
        verb=p["verb"],
        payload_bytes=p["payload"],
        doorbell_batch=p["doorbell_batch"],
        address_range_bytes=p["address_range"],
        threads=p["threads"],
        machines=p["machines"],
        offered_mpps=None if p["offered"] is None else p["offered"] / 1e6,
    )
    result = offpath.predict(p["nic"], [flow])
    f = _flows(result)[0] if _flows(result) else {}
    out = {
        "gbps": _num(f.get("gbps")),
        "mpps": _num(f.get("mpps")),
        "latency_us": _num(f.get("latency_us")),
        "posting_latency_us": _num(f.get("posting_latency_us")),
        "saturated": 1.0 if f.get("saturated") else 0.0,
    }
    out.update(common_metrics(result))
    return out


@target(
    "offpath.mix",
    params=[
        _nic_param(),
        OPTIONS["flows"].param(
            help="flows separated by ';' (nicbench paths syntax); {payload} and {verb} are substituted"
        ),
        OPTIONS["payload"].param(default=4096, help="substituted for {payload} (bytes)"),
        OPTIONS["verb"].param(help="substituted for {verb}"),
        _mix_param(),
    ],
    metrics=_MIX_METRICS,
    version=VERSION,
)
def mix(p: dict, ctx: RunContext) -> dict:
    """Wei et al. Fig. 4 (①+②, ①+③), Fig. 5b, §4: concurrent flows solved jointly."""
    flows = offpath.parse_flows(_fill(p["flows"], payload=f"{p['payload']}B", verb=p["verb"]))
    result = offpath.predict(p["nic"], flows, mix=p["mix"])
    per = _flows(result)
    out = {
        "total_gbps": _num(result.get("total_gbps")),
        "total_mpps": _num(result.get("total_mpps")),
        "latency_us": _mean([_num(f.get("latency_us")) for f in per]),
    }
    for i in range(MAX_FLOW_METRICS):
        f = per[i] if i < len(per) else {}
        out[f"flow{i}_gbps"] = _num(f.get("gbps"))
        out[f"flow{i}_mpps"] = _num(f.get("mpps"))
        out[f"flow{i}_latency_us"] = _num(f.get("latency_us"))
    out.update(common_metrics(result))
    return out


def _side(
    nic: str, flows: list[offpath.Flow], mode: str, select: str, mix: str, context: bool = True
) -> dict[str, float]:
    """Throughput (M req/s), goodput, latency and PCIe total of one side of a comparison.

    mode `joint`: the flows together; `min_alone` / `max_alone` / `sum_alone`: each flow alone, then
    the lowest / the highest / the sum of their throughputs (the seed's "the lower of them", "each of
    them", "the aggregated throughput of the two paths"). select `first`: the first flow's numbers
    instead of the totals. `context`: whether calibration overrides apply (only to the point's own
    device, see `compare`).
    """
    if mode == "joint":
        result = offpath.predict(nic, flows, mix=mix, context_overrides=context)
        per = _flows(result)
        if select == "first":
            f = per[0] if per else {}
            mpps, gbps, lat = _num(f.get("mpps")), _num(f.get("gbps")), _num(f.get("latency_us"))
        else:
            mpps, gbps = _num(result.get("total_mpps")), _num(result.get("total_gbps"))
            lat = _mean([_num(f.get("latency_us")) for f in per])
        return {"mpps": mpps, "gbps": gbps, "latency_us": lat, **common_metrics(result)}
    alone = [_side(nic, [f], "joint", "total", mix, context) for f in flows]
    pick = {"min_alone": min, "max_alone": max}.get(mode, sum)
    key = pick(range(len(alone)), key=lambda i: alone[i]["mpps"]) if mode != "sum_alone" else None
    return {
        "mpps": pick(a["mpps"] for a in alone),
        "gbps": alone[key]["gbps"] if key is not None else sum(a["gbps"] for a in alone),
        "latency_us": alone[key]["latency_us"] if key is not None else _mean([a["latency_us"] for a in alone]),
        "pcie_mpps_total": alone[key]["pcie_mpps_total"]
        if key is not None
        else sum(a["pcie_mpps_total"] for a in alone),
        "pcie_data_mpps_total": alone[key]["pcie_data_mpps_total"]
        if key is not None
        else sum(a["pcie_data_mpps_total"] for a in alone),
        "pcie_data_mpps_max": alone[key]["pcie_data_mpps_max"]
        if key is not None
        else max(a["pcie_data_mpps_max"] for a in alone),
    }


def _ends(values: list[float], prefix: str) -> dict[str, float]:
    finite = [v for v in values if math.isfinite(v)]
    complete = bool(finite) and len(finite) == len(values)
    return {
        f"{prefix}_min": min(finite) if complete else math.nan,
        f"{prefix}_max": max(finite) if complete else math.nan,
    }


def _list(text: str, what: str) -> list[str]:
    items = [s.strip() for s in text.split(",") if s.strip()]
    if not items:
        raise NicbenchError(f"offpath.compare {what}: expected a comma-separated list, found {text!r}")
    return items


@target(
    "offpath.compare",
    params=[
        Param("label", "str", "", "name of the comparison (selects the point in reference.toml)"),
        # Side a's profile is the point's `nic`: `nicbench calibrate` fits the points of its device and
        # leaves the others (e.g. the RNIC baseline) alone, so side b takes calibration overrides
        # only when it names the same profile.
        _nic_param(name="nic"),
        _nic_param(name="b_nic"),
        Param("a", "str", "client->soc {verb} {x}", "flows of configuration a ({x}, {verb} substituted)"),
        Param("b", "str", "client->host {verb} {x}", "flows of configuration b"),
        Param(
            "b_mode",
            "choice",
            "joint",
            "b's flows together, or each alone: the lower / the higher / the sum",
            choices=("joint", "min_alone", "max_alone", "sum_alone"),
        ),
        Param(
            "select",
            "choice",
            "total",
            "compare the totals, or the first flow of each side",
            choices=("total", "first"),
        ),
        Param("values", "str", "0", "comma-separated values for {x} (e.g. payloads 16,32,64 or batch sizes)"),
        Param("verbs", "str", "READ", "comma-separated verbs for {verb}"),
        _mix_param(),
    ],
    metrics=_COMPARE_METRICS,
    version=VERSION,
)
def compare(p: dict, ctx: RunContext) -> dict:
    """Wei et al. ranges ("SNIC ① has 15-30% higher latency than RNIC ①"): a vs b over a sweep."""
    verbs = _list(p["verbs"], "verbs")
    for v in verbs:
        if v.upper() not in offpath.VERBS:
            raise NicbenchError(f"offpath.compare verbs: unknown verb {v!r} (verbs: {', '.join(offpath.VERBS)})")
    values = _list(p["values"], "values")
    rows = []
    for verb in verbs:
        for x in values:
            a_flows = offpath.parse_flows(_fill(p["a"], x=x, verb=verb.upper()))
            b_flows = offpath.parse_flows(_fill(p["b"], x=x, verb=verb.upper()))
            a = _side(p["nic"], a_flows, "joint", p["select"], p["mix"])
            b = _side(
                p["b_nic"],
                b_flows,
                p["b_mode"],
                p["select"],
                p["mix"],
                context=offpath.same_profile(p["b_nic"], p["nic"]),
            )
            rows.append((a, b))
    tput = [_ratio(a["mpps"], b["mpps"]) for a, b in rows]
    # Bandwidth, for sides with different payloads ("WRITE at 16 MiB is not affected" vs 1 MiB).
    goodput = [_ratio(a["gbps"], b["gbps"]) for a, b in rows]
    lat = [_ratio(a["latency_us"], b["latency_us"]) for a, b in rows]
    diff = [a["latency_us"] - b["latency_us"] for a, b in rows]
    pcie = [_ratio(a["pcie_mpps_total"], b["pcie_mpps_total"]) for a, b in rows]
    # Table 3's comparison: all data TLPs of a vs those b's NIC issues on its busiest link direction
    # (the seed compares ③'s 293 Mpps with ①'s 49 and ②'s 195 Mpps, one link each).
    pcie_data = [_ratio(a["pcie_data_mpps_total"], b["pcie_data_mpps_max"]) for a, b in rows]
    out: dict[str, float] = {}
    out.update(_ends(tput, "tput_ratio"))
    out.update(_ends([t - 1.0 for t in tput], "tput_change"))
    out.update(_ends([g - 1.0 for g in goodput], "gbps_change"))
    out.update(_ends(lat, "lat_ratio"))
    out.update(_ends([t - 1.0 for t in lat], "lat_change"))
    out.update(_ends(pcie, "pcie_ratio"))
    out.update(_ends(pcie_data, "pcie_data_ratio"))
    out.update(_ends(diff, "lat_diff_us"))
    finite = [d for d in diff if math.isfinite(d)]
    out["lat_diff_us_median"] = statistics.median(finite) if finite and len(finite) == len(diff) else math.nan
    for side, idx in (("a", 0), ("b", 1)):
        out.update(_ends([r[idx]["mpps"] for r in rows], f"{side}_mpps"))
        gb = [r[idx]["gbps"] for r in rows if math.isfinite(r[idx]["gbps"])]
        out[f"{side}_gbps_max"] = max(gb) if gb else math.nan
        pc = [r[idx]["pcie_mpps_total"] for r in rows if math.isfinite(r[idx]["pcie_mpps_total"])]
        out[f"{side}_pcie_mpps_total"] = max(pc) if pc else math.nan
    first_a = rows[0][0]
    for link in offpath.PCIE_LINKS:
        out[f"a_{link}_mpps"] = first_a.get(f"{link}_mpps", math.nan)
        out[f"a_{link}_data_mpps"] = first_a.get(f"{link}_data_mpps", math.nan)
    out["a_pcie_data_mpps_total"] = first_a.get("pcie_data_mpps_total", math.nan)
    out["b_pcie_data_mpps_max"] = rows[0][1].get("pcie_data_mpps_max", math.nan)
    out["points"] = float(len(rows))
    return out
