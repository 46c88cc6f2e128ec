"""`calibrate_local`: nicbench's own flow meter measured here, written as a flow-host profile."""

from __future__ import annotations

import math
import tomllib

import pytest

from nicbench import flowhost, profiles


def test_calibrate_local_writes_a_usable_profile(tmp_path):
    seen = []
    out = flowhost.calibrate_local(
        tmp_path,
        flow_counts=(64, 4096, 65536),
        min_packets=30_000,
        packets_per_flow=2,
        repeats=1,
        work_dir=tmp_path,
        log=seen.append,
    )
    assert out.path == tmp_path / "flowmeter-local.toml" and out.path.is_file()
    # The measured points: packet counts follow the arguments; rates are measured, so only their
    # relations are checked (ns/packet is 1000 / Mpps; the log line shows the same numbers).
    assert [(p["flows"], p["packets"]) for p in out.points] == [(64, 30_000), (4096, 30_000), (65536, 131_072)]
    for p, line in zip(out.points, seen):
        assert p["new_flow_share"] == p["flows"] / p["packets"]
        assert math.isfinite(p["mpps"]) and p["packet_ns"] == pytest.approx(1e3 / p["mpps"])
        assert line == f"{p['flows']} flows: {p['mpps']:.2f} Mpps ({p['packet_ns']:.1f} ns/packet)"
    assert len(seen) == 4 and seen[3].startswith(f"wrote {out.path}: ")
    # Cache misses grow with the flow count (the model's cache rule).
    assert [p["l2_miss"] for p in out.points] == sorted(p["l2_miss"] for p in out.points)
    # What the profile says is what was fitted, and the fit's error is the points' error.
    base_ns = out.base_cycles_per_packet / out.machine["cpu_ghz"]
    for p in out.points:
        assert p["model_ns"] == pytest.approx(
            flowhost._local_model_ns(p, base_ns, out.llc_hit_ns, out.llc_miss_ns, out.flow_create_ns)
        )
    errors = [(p["model_ns"] - p["packet_ns"]) / p["packet_ns"] for p in out.points]
    assert out.rms_rel_error == pytest.approx(math.sqrt(sum(e * e for e in errors) / len(errors)))
    param = tomllib.loads(out.path.read_text())["param"]
    assert param["base_cycles_per_packet"]["value"] == out.base_cycles_per_packet
    assert (param["llc_hit_ns"]["value"], param["llc_miss_ns"]["value"]) == (out.llc_hit_ns, out.llc_miss_ns)
    assert param["cpu_ghz"]["value"] == out.machine["cpu_ghz"]
    prof = profiles.load(str(out.path))
    assert prof["name"] == "flowmeter-local" and prof["kind"] == "flowhost"
    assert prof["param"]["base_cycles_per_packet"]["provenance"].startswith("fitted: calibrate_local")
    # The model runs on it and answers the user's question: the fewest cores without drops.
    fast = {"host": str(out.path), "frame_bytes": 64, "duration_ns": 200_000_000, "window_ns": 50_000_000}
    needed = flowhost.simulate(cores=1, search_cores=True, **fast)["cores_needed"]
    assert isinstance(needed, int) and needed >= 1
    assert flowhost.simulate(cores=needed, **fast)["drops"] == 0
    if needed > 1:
        assert flowhost.simulate(cores=needed - 1, **fast)["drops"] == 1
    assert not list(tmp_path.glob("*.pcap")), "temporary pcaps are removed"


def test_fit_recovers_the_costs_that_made_the_points():
    """Points computed from known costs (base, LLC hit, LLC miss, flow creation) fit back to them."""
    base, hit, miss, create = 20.0, 12.5, 80.0, 300.0
    points = []
    for flows in (1_000, 32_000, 128_000, 512_000, 2_000_000):
        l2_miss, llc_miss = flowhost._miss_ratios(flows, 64.0, 1 << 20, 8 << 20)
        p = {
            "flows": flows,
            "l2_miss": l2_miss,
            "llc_miss": llc_miss,
            "new_flow_share": flows / max(400_000, 8 * flows) * (1 + flows % 3),
        }
        p["packet_ns"] = flowhost._local_model_ns(p, base, hit, miss, create)
        points.append(p)
    assert flowhost._fit_local(points) == pytest.approx((base, hit, miss, create), rel=1e-9)


def test_calibrate_local_rejects_bad_flow_counts(tmp_path):
    with pytest.raises(flowhost.NicbenchError, match=r"flow_counts must be positive flow counts, found \(0,\)"):
        flowhost.calibrate_local(tmp_path, flow_counts=(0,))
