#!/usr/bin/env python3
"""Generate studies/argus100g/reference.toml: every published number of seed 003 the model produces.

Source: shared/seeds/003_20868234b11d5db1.txt ("100G NIC Evaluation"), text and the hyper-threading
table (the figures' values are not in the seed text; only what the text states is used).
The calibration subset (set = "calibration") pins the host's opaque parameters: the per-core rate
(core scaling), the short-term maximum (stalls), the 64 B per-core rate (base cost), the SMT split,
and the 750 B flow-table knee (record size / miss cost). Everything else is validation — notably
the 1500 B flow knee, the 7-vs-8-core drop boundary's neighbours, the hyper-threading totals and
the conclusion's core estimate.

    python3 studies/argus100g/make_reference.py            # writes reference.toml next to this file
"""

from __future__ import annotations

from pathlib import Path

from nicbench.experiments.reference_file import render_references

HERE = Path(__file__).resolve().parent
SEED = "shared/seeds/003_20868234b11d5db1.txt"
S1 = f"{SEED}, results §1 Scaling the number of cores"
S2 = f"{SEED}, results §2 Impact of the number of concurrent flow entries"
S3 = f"{SEED}, results §3 Running two threads per Core (table)"
SC = f"{SEED}, Conclusion"
MPPS_REL = 0.15  # throughput-like values: ±15%
DROPS_ABS = 0.5  # qualitative drops yes (1) / no (0)
CORES = {"size": 750, "flows": 16384}


def ref(id_, quote, location, experiment, where, metric, value, unit, tolerance, set_="validation"):
    return {"id": id_, "quote": quote, "location": location, "experiment": experiment, "where": where,
            "metric": metric, "statistic": "median", "value": value, "unit": unit, "tolerance": tolerance,
            "set": set_}


REL = {"relative": MPPS_REL}
EXACT = {"relative": 0.05}  # the hyper-threading table's per-process rates: exact measured numbers
QUAL = {"absolute": DROPS_ABS}
ADDS = "Each core adds around 2.4M pps, up to a total of 16M pps with eight cores."

REFERENCES = [
    ref("cores-offered-16mpps", "At this setting, the traffic generator produces roughly 16M packets per second.",
        S1, "argus-cores", {**CORES, "cores": 8}, "offered_mpps", 16.0, "Mpps", {"relative": 0.05}),
    ref("cores-8-no-drops", "We saw that we are able to process all packets without any drops reliably with 8 cores",
        S1, "argus-cores", {**CORES, "cores": 8}, "drops", 0.0, "", QUAL, "calibration"),
    ref("cores-8-total-16mpps", ADDS, S1, "argus-cores", {**CORES, "cores": 8}, "processed_mpps", 16.0, "Mpps",
        {"relative": 0.05}),
    ref("cores-2.5mpps-reliable", "which gives us an estimate of 2.5M pps per process / core as reliably doable",
        S1, "argus-cores", {**CORES, "cores": 8}, "capacity_mpps_per_core", 2.5, "Mpps", REL),
    ref("cores-7-drops", "The max number of pps reached during measurement with 7 or less cores (dropping packets "
        "during the run)", S1, "argus-cores", {**CORES, "cores": 7}, "drops", 1.0, "", QUAL, "calibration"),
    ref("cores-7-short-max-3mpps", "gives us an estimate of a upper, short term maximum of pps at around 3M pps",
        S1, "argus-cores", {**CORES, "cores": 7}, "processed_mpps_max_short", 3.0, "Mpps", REL, "calibration"),
    ref("cores-6-drops", "with 6 cores we are able to nearly process all packets generated. We still experience "
        "drops", S1, "argus-cores", {**CORES, "cores": 6}, "drops", 1.0, "", QUAL),
    ref("cores-6-nearly-all", "We can see that with 6 cores we are able to nearly process all packets generated "
        "(read: at least ~88% metered)", S1, "argus-cores", {**CORES, "cores": 6}, "processed_ratio", 0.95, "",
        {"absolute": 0.07}),
    ref("cores-balance", "Looking at packets processed per core, we see that the load balancing works reasonably "
        "well. (most loaded / mean stream load, 8 cores)", S1, "argus-cores", {**CORES, "cores": 8}, "imbalance",
        1.0, "", {"absolute": 0.1}),
    *[ref(f"cores-{n}-adds-2.4mpps", ADDS + f" ({n} core{'s' if n > 1 else ''}: processed Mpps per core)", S1,
          "argus-cores", {**CORES, "cores": n}, "processed_mpps_per_core", 2.4, "Mpps", REL,
          "calibration" if n == 3 else "validation") for n in range(1, 7)],
    *[ref(f"cores-{n}-drops", "The max number of pps reached during measurement with 7 or less cores (dropping "
          f"packets during the run) ({n} cores)", S1, "argus-cores", {**CORES, "cores": n}, "drops", 1.0, "", QUAL)
      for n in range(1, 6)],
    # Flow-table size, 16 cores.
    ref("flows-750-32768-no-drops", "With medium size packets we can process 32768 flows without any drops.", S2,
        "argus-flows", {"size": 750, "flows": 32768}, "drops", 0.0, "", QUAL, "calibration"),
    ref("flows-750-65536-drops", "With 65536 flows we start dropping packets in this scenario.", S2, "argus-flows",
        {"size": 750, "flows": 65536}, "drops", 1.0, "", QUAL, "calibration"),
    ref("flows-1500-131072-no-drops", "Moving to large packets (1500 bytes), we are able to process double the amount "
        "of flows without dropping packets (131072 flows).", S2, "argus-flows", {"size": 1500, "flows": 131072},
        "drops", 0.0, "", QUAL),
    ref("flows-1500-262144-drops", "We see drops when doubling this number again (262144 flows).", S2, "argus-flows",
        {"size": 1500, "flows": 262144}, "drops", 1.0, "", QUAL),
    # Hyper-threading table: 64 B, 16,384 flows, 16 cores.
    ref("ht-16-pps-per-core", "16 processes: pps/percore 4462051", S3, "argus-ht", {"processes_per_core": 1},
        "processed_mpps_per_process", 4.462051, "Mpps", EXACT, "calibration"),
    ref("ht-16-mbps-per-core", "16 processes: Mbps/core 2855", S3, "argus-ht", {"processes_per_core": 1},
        "processed_mbps_per_process", 2855.0, "Mbps", REL),
    ref("ht-16-pps-total", "16 processes: pps-total 71392816", S3, "argus-ht", {"processes_per_core": 1},
        "processed_mpps", 71.392816, "Mpps", REL),
    ref("ht-16-mbps-total", "16 processes: Mbps-total 45680", S3, "argus-ht", {"processes_per_core": 1},
        "processed_mbps", 45680.0, "Mbps", REL),
    ref("ht-32-pps-per-process", "32 (hyperthreading): pps/percore 2218373", S3, "argus-ht",
        {"processes_per_core": 2}, "processed_mpps_per_process", 2.218373, "Mpps", EXACT, "calibration"),
    ref("ht-32-mbps-per-process", "32 (hyperthreading): Mbps/core 1419", S3, "argus-ht", {"processes_per_core": 2},
        "processed_mbps_per_process", 1419.0, "Mbps", REL),
    ref("ht-32-pps-total", "32 (hyperthreading): pps-total 70987936", S3, "argus-ht", {"processes_per_core": 2},
        "processed_mpps", 70.987936, "Mpps", REL),
    ref("ht-32-mbps-total", "32 (hyperthreading): Mbps-total 45408", S3, "argus-ht", {"processes_per_core": 2},
        "processed_mbps", 45408.0, "Mbps", REL),
    ref("ht-drops", "the total compute was not sufficient to process the data without drops", S3, "argus-ht",
        {"processes_per_core": 1}, "drops", 1.0, "", QUAL),
    # Conclusion.
    ref("conclusion-750-8-cores", "with 8 cores we are able to process a 100 Gbit stream", SC, "argus-conclusion",
        {"size": 750}, "cores_needed", 8.0, "cores", {"absolute": 0.5}),
    ref("conclusion-64-80-100-cores", "Dropping to the smallest possible packet size would need more than a magnitude "
        "more compute power, so roughly about 80-100 cores, to be able to process 100Gbit without drops. "
        "(model: 2,048 flows per core, the 8-core run's per-core flow table)", SC, "argus-conclusion",
        {"size": 64, "flows_per_core": 2048}, "cores_needed", 90.0, "cores", {"absolute": 10.0}),
]

SKIPPED = [
    "Methodology §1 '256 flows against 1-8 cores' and §3 'scaling the number of flows from 256, 65536, 1048576 ... "
    "8 cores': the plan; the results sections state 16,384 flows (core scaling) and 16 cores (flows) — those are used",
    "Testbed: 16 cores @ 3.2 GHz, two NUMA nodes, 128 GB RAM, PCIe 3, 10-minute runs — model inputs (argus-host.toml), "
    "not results",
]


def render() -> str:
    header = [
        "# argus100g reference values — GENERATED by studies/argus100g/make_reference.py; do not edit by hand.",
        "#",
        f"# Source: {SEED} (\"100G NIC Evaluation\", Napatech + Argus): text and the hyper-threading table.",
        "# Tolerances: rates ±15% (the hyper-threading table's per-process rates ±5%: exact measurements); qualitative claims as drops = 1 / 0 (±0.5); cores as stated.",
        "# set = \"calibration\": fitted by `nicbench calibrate argus-host --study argus100g`; \"validation\": never fitted.",
        "# The short-term maximum uses 100 ms windows (the study does not say over what it measured).",
        "#",
        "# Seed numbers that are not entries:",
        *[f"#   - {s}" for s in SKIPPED],
    ]
    return render_references(header, REFERENCES)


if __name__ == "__main__":
    (HERE / "reference.toml").write_text(render())
    print(f"wrote {len(REFERENCES)} references to {HERE / 'reference.toml'}")
