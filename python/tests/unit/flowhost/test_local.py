"""`calibrate_local`: nicbench's own flow meter measured here, written as a flow-host profile."""

from __future__ import annotations

import pytest

from nicbench import _native, flowhost

pytestmark = pytest.mark.skipif(not hasattr(_native, "flows_meter"), reason="flow meter not built")


def test_calibrate_local_writes_a_usable_profile(tmp_path):
    seen = []
    out = flowhost.calibrate_local(tmp_path, flow_counts=(64, 4096, 65536), min_packets=30_000,
                                   packets_per_flow=2, repeats=1, work_dir=tmp_path, log=seen.append)
    assert out.path == tmp_path / "flowmeter-local.toml" and out.path.is_file()
    assert [p["flows"] for p in out.points] == [64, 4096, 65536]
    assert all(p["mpps"] > 0 for p in out.points) and len(seen) == 4
    prof = flowhost.profile(str(out.path))
    assert prof["name"] == "flowmeter-local" and prof["kind"] == "flowhost"
    assert prof["param"]["base_cycles_per_packet"]["provenance"].startswith("fitted: calibrate_local")
    # The model runs on it and answers the user's question: cores for 64 B at 100G.
    r = flowhost.simulate(host=str(out.path), cores=1, frame_bytes=64, search_cores=True,
                          duration_ns=200_000_000, window_ns=50_000_000)
    assert r["cores_needed"] is None or r["cores_needed"] >= 1
    assert not list(tmp_path.glob("*.pcap")), "temporary pcaps are removed"


def test_calibrate_local_rejects_bad_flow_counts(tmp_path):
    with pytest.raises(flowhost.NicbenchError, match="flow_counts"):
        flowhost.calibrate_local(tmp_path, flow_counts=(0,))
