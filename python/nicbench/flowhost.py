"""Virtual Napatech capture NIC + flow-metering host (the "100G NIC Evaluation" model).

The native model (`nicbench_models::flowhost`, run through `nicbench.models.run("flowhost", ...)`) takes
ONE request and returns ONE result, both defined by their Rust serde types (schemas:
`models.contract_schema("flowhost", "request")` / `("flowhost", "result")`, the files
`docs/contracts/flowhost.request.schema.json` / `flowhost.result.schema.json`):

    request = {"nic": "napatech-nt100", "host": "argus-host", "cores": 8, "processes_per_core": 1,
               "flows": 16384, "frame_bytes": 750, "rate_gbps": None (line rate), "zipf_exponent": 0,
               "filter_keep": 1.0, "slice_bytes": None, "duration_ns": 1e9, "bin_ns": 1e5,
               "window_ns": 1e8, "search_cores": False, "seed": 1, "overrides": {...}}
    result = simulate(request)   # offered/processed Mpps, drop_ratio, per-process loads, cores_needed...

This module adds the Python side: defaults, the calibration hook (every call merges
`nicbench.profiles.current_overrides()` beneath the request's own `overrides`, so `nicbench
calibrate argus-host` fits this model like a virtual NIC), the flattening of a result into
scalar metrics (`result_metrics`), and `calibrate_local`, which measures nicbench's own flow
meter on this machine and writes a `flowmeter-local` host profile.

Invariants: `simulate` never changes the caller's request; missing result fields become NaN
in `result_metrics`; bad requests raise `NicbenchError` with the engine's one-line message.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nicbench import _native, models
from nicbench.errors import NicbenchError
from nicbench.outputs import atomic_output
from nicbench.profiles import current_overrides, profiles_dir
from nicbench.profiles import load as load_profile

__all__ = [
    "DEFAULT_NIC",
    "DEFAULT_HOST",
    "METRICS",
    "LOCAL_PROFILE",
    "simulate",
    "result_metrics",
    "calibrate_local",
    "LocalCalibration",
    "machine_facts",
]

DEFAULT_NIC = "napatech-nt100"
DEFAULT_HOST = "argus-host"

# Scalar metrics of a result, with units (what the experiment targets report).
METRICS: dict[str, str] = {
    "offered_gbps": "Gbps",
    "offered_mpps": "Mpps",
    "captured_mpps": "Mpps",
    "nic_dropped_mpps": "Mpps",
    "filter_discarded_mpps": "Mpps",
    "processed_mpps": "Mpps",
    "processed_mbps": "Mbps",
    "processed_mbps_per_core": "Mbps",
    "processed_mpps_per_core": "Mpps",
    "processed_mpps_per_process": "Mpps",
    "processed_mpps_max_short": "Mpps",
    "capacity_mpps_per_core": "Mpps",
    "peak_mpps_per_core": "Mpps",
    "drop_ratio": "",
    "drop_ratio_steady": "",
    "overloaded_processes": "processes",
    "dropped_packets": "packets",
    "drops": "",
    "imbalance": "",
    "flows_per_process_min": "flows",
    "flows_per_process_max": "flows",
    "cpu_util_mean": "",
    "cpu_util_max": "",
    "packet_ns_mean": "ns",
    "exposed_ns_mean": "ns",
    "smt_gain": "",
    "l2_miss_ratio_mean": "",
    "llc_miss_ratio_mean": "",
    "cores_needed": "cores",
    "exceeds_host": "",
    "sim_wall_s": "s",
}


def simulate(request: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
    """Run one request (a dict and/or keyword fields); returns the result dict."""
    full = {**(request or {}), **fields}
    overrides = {**current_overrides(), **(full.get("overrides") or {})}
    if overrides:
        full["overrides"] = overrides
    for key in ("duration_ns", "bin_ns", "window_ns", "flows", "cores", "processes_per_core", "max_cores"):
        if isinstance(full.get(key), float) and math.isfinite(full[key]):
            full[key] = int(round(full[key]))
    return models.run("flowhost", full)


def above_line_rate(card: str, rate_gbps: float) -> float | None:
    """The card's line rate when `rate_gbps` exceeds it (the wire cannot carry more: refused, not
    clamped, so that no run is labelled with a rate it did not have), else None."""
    from nicbench import profiles

    return profiles.above_link(rate_gbps, card, slack=1e-9)


def result_metrics(result: dict[str, Any]) -> dict[str, float]:
    """The scalar metrics of a result (NaN where the model reported nothing, e.g. no search)."""
    out: dict[str, float] = {}
    for name in METRICS:
        v = result.get(name)
        out[name] = float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else math.nan
    return out


# --- flowmeter-local: nicbench's own flow meter, measured on this machine ------------------------------------------

LOCAL_PROFILE = "flowmeter-local"
# Cache lines of a nicbench flow record touched per packet (key + counters: one record, two lines).
_LOCAL_LINES_PER_PACKET = 2.0
_LOCAL_LLC_HIT_NS = 12.0
_DEFAULT_RECORD_BYTES = 160.0
# Latency one thread hides behind its own out-of-order window (ROB entries / issue width), which
# decides how much an SMT sibling gains; this machine's core is not identified, so Haswell's 192 / 4.
_LOCAL_OOO_HIDDEN_CYCLES = 48.0


@dataclass
class LocalCalibration:
    """What `calibrate_local` measured and fitted, and where it wrote the profile."""

    path: Path
    points: list[dict[str, float]]  # flows, packets, mpps, packet_ns, model_ns, l2_miss, llc_miss
    machine: dict[str, float]
    base_cycles_per_packet: float
    llc_hit_ns: float
    llc_miss_ns: float
    flow_create_ns: float  # per new flow (not in the profile: the study's flows are long-lived)
    record_bytes: float
    rms_rel_error: float


def _read_int(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def _cache_bytes(level: int) -> float | None:
    """Size of the cpu0 data/unified cache of `level` (sysfs), or None."""
    base = Path("/sys/devices/system/cpu/cpu0/cache")
    for index in sorted(base.glob("index*")):
        try:
            if int((index / "level").read_text()) != level or (index / "type").read_text().strip() == "Instruction":
                continue
            text = (index / "size").read_text().strip().upper()
        except (OSError, ValueError):
            continue
        scale = {"K": 1024, "M": 1024**2, "G": 1024**3}.get(text[-1:], 1)
        try:
            return float(text.rstrip("KMG")) * scale
        except ValueError:
            return None
    return None


def machine_facts() -> dict[str, float]:
    """This machine's clock, sockets, cores and cache sizes (sysfs / procfs; assumptions where unreadable)."""
    import os

    ghz, sockets = math.nan, set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "cpu MHz" and not math.isfinite(ghz):
                ghz = float(value) / 1000.0
            elif key.strip() == "physical id":
                sockets.add(value.strip())
    except (OSError, ValueError):
        pass
    max_khz = _read_int(Path("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"))
    if max_khz:
        ghz = max_khz / 1e6
    n_sockets = max(1, len(sockets))
    cores = os.cpu_count() or 1
    return {
        "cpu_ghz": ghz if math.isfinite(ghz) and ghz > 0 else 2.0,
        "sockets": float(n_sockets),
        "cores_per_socket": float(max(1, cores // n_sockets)),
        "l2_bytes_per_core": _cache_bytes(2) or 1024.0 * 1024,
        "llc_bytes_per_socket": _cache_bytes(3) or 8 * 1024.0**2,
    }


def _miss_ratios(flows: int, record_bytes: float, l2: float, llc: float) -> tuple[float, float]:
    """(m_L2, m_LLC) of one process with `flows` equal flows (the model's cache rule)."""
    m_llc = max(0.0, 1.0 - (llc / record_bytes) / flows)
    m_l2 = max(m_llc, 1.0 - (l2 / record_bytes) / flows)
    return m_l2, m_llc


def calibrate_local(
    out_dir: str | Path | None = None,
    *,
    flow_counts: tuple[int, ...] = (256, 4096, 16384, 65536, 262144),
    size: int = 64,
    packets_per_flow: int = 8,
    min_packets: int = 400_000,
    record_bytes: float | None = None,
    repeats: int = 2,
    seed: int = 1,
    work_dir: str | Path | None = None,
    log=lambda s: None,
) -> LocalCalibration:
    """Measure nicbench's flow meter (`nicbench.flows.meter`, 1 worker) on generated pcaps at several flow
    counts, fit base cost + LLC-miss cost of the host model, and write `flowmeter-local.toml`.

    The profile goes to `out_dir` (default: the profiles folder, $NICBENCH_PROFILES or the checkout's
    `profiles/`). Machine facts (clock, caches) come from sysfs; the per-packet cost model is the one of
    `argus-host` with `flow_lines_per_packet` = 2: `ns = base + 2 × [(m_L2 − m_LLC) × hit + m_LLC × miss]`,
    plus, for the benchmark only, `create × flows / packets` (new flows). base, hit, miss and create are
    fitted by non-negative least squares on the measured ns/packet. Stalls are not measured (none), and
    the out-of-order window that sets the SMT gain is assumed (Haswell's).
    """
    import tempfile

    import numpy as np

    from nicbench.flows import meter
    from nicbench.traffic import GenConfig, generate_pcap

    if not flow_counts or any(f < 1 for f in flow_counts):
        raise NicbenchError(f"flow_counts must be positive flow counts, found {flow_counts!r}")
    facts = machine_facts()
    rec = float(record_bytes or getattr(_native, "FLOW_RECORD_BYTES", _DEFAULT_RECORD_BYTES))
    points: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(dir=work_dir) as tmp:
        for flows in flow_counts:
            n = max(min_packets, packets_per_flow * flows)
            pcap = Path(tmp) / f"flows{flows}.pcap"
            generate_pcap(
                GenConfig(flows=flows, size=size, rate=None, duration_ns=None, packets=n, proto="tcp", seed=seed),
                str(pcap),
            )
            best = 0.0
            for _ in range(max(1, repeats)):  # the first run also warms the page cache
                stats = meter(str(pcap), workers=1)
                best = max(best, float(stats["packets"]) / max(float(stats["elapsed_ns"]), 1.0) * 1e3)
            pcap.unlink()
            m_l2, m_llc = _miss_ratios(flows, rec, facts["l2_bytes_per_core"], facts["llc_bytes_per_socket"])
            points.append(
                {
                    "flows": flows,
                    "packets": n,
                    "mpps": best,
                    "packet_ns": 1e3 / best,
                    "l2_miss": m_l2,
                    "llc_miss": m_llc,
                    "new_flow_share": flows / n,
                }
            )
            log(f"{flows} flows: {best:.2f} Mpps ({1e3 / best:.1f} ns/packet)")
    base_ns, hit_ns, miss_ns, create_ns = _fit_local(points)
    errors = []
    for p in points:
        p["model_ns"] = _local_model_ns(p, base_ns, hit_ns, miss_ns, create_ns)
        errors.append((p["model_ns"] - p["packet_ns"]) / p["packet_ns"])
    rms = float(np.sqrt(np.mean(np.square(errors))))
    folder = Path(out_dir) if out_dir is not None else profiles_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{LOCAL_PROFILE}.toml"
    base_cycles = base_ns * facts["cpu_ghz"]
    measured = (
        f"fitted: calibrate_local on this machine (nicbench flow meter, 1 worker, {size} B, flows "
        f"{', '.join(str(p['flows']) for p in points)}; rms error {rms:.1%})"
    )
    params = [
        ("cpu_ghz", facts["cpu_ghz"], "GHz", "this machine: cpufreq max / /proc/cpuinfo"),
        ("sockets", facts["sockets"], "sockets", "this machine: /proc/cpuinfo physical ids"),
        ("cores_per_socket", facts["cores_per_socket"], "cores", "this machine: os.cpu_count() / sockets"),
        ("smt_threads_per_core", 2.0, "threads", "assumed: 2-way SMT"),
        ("l2_bytes_per_core", facts["l2_bytes_per_core"], "B", "this machine: sysfs cpu0 cache level 2"),
        ("llc_bytes_per_socket", facts["llc_bytes_per_socket"], "B", "this machine: sysfs cpu0 cache level 3"),
        ("llc_hit_ns", hit_ns, "ns", measured),
        ("llc_miss_ns", miss_ns, "ns", measured),
        ("base_cycles_per_packet", base_cycles, "cycles", measured),
        (
            "flow_record_bytes",
            rec,
            "B",
            "nicbench-flowmeter record size"
            if record_bytes is None and hasattr(_native, "FLOW_RECORD_BYTES")
            else f"assumed: {rec:g} B per nicbench flow record",
        ),
        ("flow_lines_per_packet", _LOCAL_LINES_PER_PACKET, "lines", "assumed: key + counters, two lines per packet"),
        ("stall_interval_us", 1_000_000.0, "us", "assumed: no stalls measured (pcap benchmark)"),
        ("stall_mean_us", 0.0, "us", "assumed: no stalls measured (pcap benchmark)"),
        (
            "ooo_hidden_latency_cycles",
            _LOCAL_OOO_HIDDEN_CYCLES,
            "cycles",
            "assumed: reorder buffer / issue width of a Haswell-class core (192 / 4); not measured here",
        ),
    ]
    lines = [
        "# nicbench's own flow meter on this machine — GENERATED by nicbench.flowhost.calibrate_local;",
        "# machine-specific: do not commit.",
        f'name = "{LOCAL_PROFILE}"',
        'description = "nicbench flow meter (1 worker per core), measured on this machine"',
        'kind = "flowhost"',
        "",
    ]
    for name, value, unit, prov in params:
        lines += [
            f"[param.{name}]",
            f"value = {float(value)!r}",
            f"unit = {json.dumps(unit)}",
            f"provenance = {json.dumps(prov, ensure_ascii=False)}",
            "",
        ]
    with atomic_output(path) as tmp:
        tmp.write_text("\n".join(lines))
        load_profile(tmp)  # the models must accept what we wrote
    log(f"wrote {path}: base {base_cycles:.0f} cycles/packet, LLC miss {miss_ns:.0f} ns (rms error {rms:.1%})")
    return LocalCalibration(
        path=path,
        points=points,
        machine=facts,
        base_cycles_per_packet=base_cycles,
        llc_hit_ns=hit_ns,
        llc_miss_ns=miss_ns,
        flow_create_ns=create_ns,
        record_bytes=rec,
        rms_rel_error=rms,
    )


def _local_model_ns(p: dict[str, float], base_ns: float, hit_ns: float, miss_ns: float, create_ns: float) -> float:
    lines = _LOCAL_LINES_PER_PACKET
    return (
        base_ns
        + lines * ((p["l2_miss"] - p["llc_miss"]) * hit_ns + p["llc_miss"] * miss_ns)
        + p["new_flow_share"] * create_ns
    )


def _fit_local(points: list[dict[str, float]]) -> tuple[float, float, float, float]:
    """Non-negative least squares of ns/packet on (1, L2-only misses, LLC misses, new-flow share):
    base, LLC-hit and LLC-miss cost per line, and the cost of creating a flow (first packets in a
    pcap benchmark; the study's flows are long-lived, so the profile leaves it out)."""
    import numpy as np

    lines = _LOCAL_LINES_PER_PACKET
    cols = {
        "base": np.ones(len(points)),
        "hit": np.array([lines * (p["l2_miss"] - p["llc_miss"]) for p in points]),
        "miss": np.array([lines * p["llc_miss"] for p in points]),
        "create": np.array([p["new_flow_share"] for p in points]),
    }
    y = np.array([p["packet_ns"] for p in points])
    active = [k for k, c in cols.items() if k == "base" or np.ptp(c) > 1e-9 or np.any(c > 1e-9)]
    while True:  # active set: drop terms the fit makes negative, refit
        a = np.vstack([cols[k] for k in active]).T
        coef, *_ = np.linalg.lstsq(a, y, rcond=None)
        negative = [k for k, c in zip(active, coef) if c < 0 and k != "base"]
        if not negative:
            break
        active.remove(negative[0])
    values = dict(zip(active, (float(c) for c in coef)))
    # Unobservable terms (no point misses that cache): typical values, so the profile still predicts.
    return (
        max(values.get("base", 1.0), 1.0),
        values.get("hit", _LOCAL_LLC_HIT_NS) or _LOCAL_LLC_HIT_NS,
        values.get("miss", 90.0) or 90.0,
        values.get("create", 0.0),
    )
