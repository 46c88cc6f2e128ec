"""nicbench.vnic: scenario builders, --gen parsing, result flattening, timeline analysis."""

from __future__ import annotations

import json
import math

import pytest

from nicbench import vnic
from nicbench.errors import NicbenchError
from nicbench.units import Rate


def test_parse_gen_reads_every_key():
    cfg = vnic.parse_gen("flows=20k,size=64,rate=8Mpps,ipv6=true,proto=tcp,zipf=1.1,vlan=7,vxlan=42,seed=3")
    assert (cfg.flows, cfg.size, cfg.rate, cfg.ipv6, cfg.proto) == (20_000, 64, Rate(8e6, "pps"), True, "tcp")
    assert (cfg.zipf_s, cfg.vlan, cfg.vxlan_vni, cfg.seed) == (1.1, 7, 42, 3)


def test_parse_gen_defaults_and_pick_list():
    cfg = vnic.parse_gen("")
    assert (cfg.flows, cfg.size, cfg.rate) == (10_000, 1500, Rate(100e9, "bps"))
    assert vnic.parse_gen("size=64;594;1518").size == [64, 594, 1518]


@pytest.mark.parametrize("text, needle", [("flows", "KEY=VALUE"), ("speed=1", "unknown key"),
                                          ("rate=fast", "rate"), ("proto=sctp", "udp or tcp"),
                                          ("flows=0", "at least 1"), ("ipv6=maybe", "true or false")])
def test_parse_gen_errors_say_what_is_wrong(text, needle):
    with pytest.raises(NicbenchError, match=needle):
        vnic.parse_gen(text)


def test_scenario_follows_the_contract(tmp_path, monkeypatch):
    monkeypatch.setenv("NICBENCH_PROFILES", str(tmp_path))
    sc = vnic.scenario(rules=vnic.generated_rules(65536, 0), duration_ns=10**9, traffic=vnic.parse_gen(""),
                       install=vnic.rate_install(1e4, core="distinct"), overrides={"x": 1.0})
    assert sc["profiles_dir"] == str(tmp_path)
    assert sc["rules"] == {"generated": {"kind": "exact5", "count": 65536, "groups": 0, "seed": 1,
                                         "hit_fraction": 0.0}}
    assert sc["traffic"]["size"] == {"fixed": 1500} and sc["traffic"]["rate"] == {"gbps": 100.0}
    assert sc["traffic"]["duration_ns"] is None, "the scenario's duration bounds the stream"
    assert sc["install"]["mode"] == "rate" and sc["install"]["core"] == "distinct" and "count" not in sc["install"]
    assert sc["measure"] == {"timeline_bin_ns": 10_000_000, "latency": True, "queues": True}
    json.dumps(sc)  # serializable as is


def test_scenario_rejects_bad_input():
    with pytest.raises(NicbenchError, match="exactly one traffic source"):
        vnic.scenario(rules={}, duration_ns=1, traffic=None, trace=None)
    with pytest.raises(NicbenchError, match="core"):
        vnic.batch_install(10, core="other")
    with pytest.raises(NicbenchError, match="positive"):
        vnic.rate_install(0)
    with pytest.raises(NicbenchError, match="≥ 0"):
        vnic.generated_rules(-1)


def test_simulate_without_engine_says_how_to_get_it(monkeypatch):
    import nicbench._native as native

    monkeypatch.delattr(native, "vnic_simulate", raising=False)
    with pytest.raises(NicbenchError, match="make develop"):
        vnic.simulate({"nic": "connectx5"})


def test_simulate_applies_overrides_beneath_the_scenario(fake_native, monkeypatch):
    seen = []
    real = fake_native.vnic_simulate
    monkeypatch.setattr("nicbench._native.vnic_simulate", lambda s, p=None: (seen.append(json.loads(s)), real(s, p))[1])
    sc = vnic.scenario(rules=vnic.generated_rules(10), duration_ns=10**8, traffic=vnic.parse_gen(""),
                       overrides={"chain_lookup_ns": 5.0})
    with vnic.parameter_overrides({"chain_lookup_ns": 1.0, "base_latency_us": 40.0}):
        result = vnic.simulate(sc)
    assert seen[0]["overrides"] == {"chain_lookup_ns": 5.0, "base_latency_us": 40.0}
    assert "overrides" not in vnic.scenario(rules={}, duration_ns=1, traffic=vnic.parse_gen(""))
    assert sc["overrides"] == {"chain_lookup_ns": 5.0}, "the caller's scenario is not changed"
    assert result["latency_us"]["p50"] == pytest.approx(40.0)


def test_result_metrics_flatten_and_tolerate_missing_fields():
    m = vnic.result_metrics({"offered_gbps": 100.0, "rx_gbps": 30.0, "dropped": {"imissed": 5, "nic": 2},
                             "latency_us": {"p50": 10.0}, "install": {"rules": 10, "duration_s": 0.5,
                                                                      "rate_rules_per_s": 20.0}})
    assert m["rx_drop_gbps"] == 70.0 and m["dropped_packets"] == 7.0
    assert m["latency_p50_us"] == 10.0 and math.isnan(m["latency_p99_us"])
    assert m["install_rate_krules_s"] == pytest.approx(0.02)
    assert math.isnan(m["root_table_occupancy"]) and math.isnan(m["sim_mpps"])


def test_timeline_stats_measures_outage_and_recovery():
    bins = [{"t_s": round(0.1 * (i + 1), 3), "rx_gbps": 100.0} for i in range(80)]
    for b in bins:
        if 2.1 < b["t_s"] <= 4.1:
            b["rx_gbps"] = 0.01
    stats = vnic.timeline_stats({"offered_gbps": 100.0, "timeline": bins}, event_s=2.1)
    assert stats["outage_s"] == pytest.approx(2.0)
    assert stats["recovered"] == 1.0 and stats["rx_gbps_before"] == 100.0 and stats["rx_gbps_min"] == 0.01
    bins[-1]["rx_gbps"] = 0.0
    assert vnic.timeline_stats({"offered_gbps": 100.0, "timeline": bins}, event_s=2.1)["recovered"] == 0.0
    assert math.isnan(vnic.timeline_stats({"offered_gbps": 100.0}, event_s=1.0)["outage_s"])
