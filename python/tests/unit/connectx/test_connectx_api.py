"""nicbench.connectx: scenario builders (checked against the model's contract schema), --gen parsing,
overrides, result flattening, timeline analysis."""

from __future__ import annotations

import json
import math

import jsonschema
import pytest

from nicbench import connectx, models, profiles
from nicbench.errors import NicbenchError
from nicbench.units import Rate


def test_parse_gen_reads_every_key():
    cfg = connectx.parse_gen("flows=20k,size=64,rate=8Mpps,ipv6=true,proto=tcp,zipf=1.1,vlan=7,vxlan=42,seed=3")
    assert (cfg.flows, cfg.size, cfg.rate, cfg.ipv6, cfg.proto) == (20_000, 64, Rate(8e6, "pps"), True, "tcp")
    assert (cfg.zipf_s, cfg.vlan, cfg.vxlan_vni, cfg.seed) == (1.1, 7, 42, 3)


def test_parse_gen_defaults_and_pick_list():
    cfg = connectx.parse_gen("")
    assert (cfg.flows, cfg.size, cfg.rate) == (10_000, 1500, Rate(100e9, "bps"))
    assert connectx.parse_gen("size=64;594;1518").size == [64, 594, 1518]


@pytest.mark.parametrize(
    "text, needle",
    [
        ("flows", "KEY=VALUE"),
        ("speed=1", "unknown key"),
        ("rate=fast", "rate"),
        ("proto=sctp", "udp or tcp"),
        ("flows=0", "at least 1"),
        ("ipv6=maybe", "true or false"),
    ],
)
def test_parse_gen_errors_say_what_is_wrong(text, needle):
    with pytest.raises(NicbenchError, match=needle):
        connectx.parse_gen(text)


def test_scenario_follows_the_contract():
    sc = connectx.scenario(
        rules=connectx.generated_rules(65536, 0),
        duration_ns=10**9,
        traffic=connectx.parse_gen(""),
        install=connectx.rate_install(1e4, core="distinct"),
        overrides={"x": 1.0},
    )
    assert "profiles_dir" not in sc, "the one profile loader decides where profiles are"
    assert sc["rules"] == {"generated": {"kind": "exact5", "count": 65536, "groups": 0, "seed": 1, "hit_fraction": 0.0}}
    assert sc["traffic"]["size"] == {"fixed": 1500} and sc["traffic"]["rate"] == {"gbps": 100.0}
    assert sc["traffic"]["duration_ns"] is None, "the scenario's duration bounds the stream"
    assert sc["install"]["mode"] == "rate" and sc["install"]["core"] == "distinct" and "count" not in sc["install"]
    assert sc["measure"] == {"timeline_bin_ns": 10_000_000, "latency": True, "queues": True, "generator": "play"}
    jsonschema.validate(json.loads(json.dumps(sc)), models.contract_schema("connectx", "request"))
    replay = connectx.scenario(
        rules=connectx.generated_rules(1, 0),
        duration_ns=10**6,
        traffic=connectx.parse_gen(""),
        generator="timed_replay",
    )
    jsonschema.validate(json.loads(json.dumps(replay)), models.contract_schema("connectx", "request"))
    with pytest.raises(NicbenchError, match="play, timed_replay"):
        connectx.scenario(
            rules=connectx.generated_rules(1, 0), duration_ns=10**6, traffic=connectx.parse_gen(""), generator="pktgen"
        )


def test_rate_install_wakes_per_period_with_the_periods_share():
    """An installer that wakes once per period installs rate × period rules back to back (PAM'21's
    nic-live.npf: RULES = RPS / FREQ every 1/FREQ, FREQ = min(1000, RPS)); below one per period, one."""
    assert connectx.rate_install(10_000, period_ns=1_000_000)["burst"] == 10
    assert connectx.rate_install(500_000, period_ns=1_000_000)["burst"] == 500
    assert "burst" not in connectx.rate_install(500, period_ns=1_000_000)
    assert "burst" not in connectx.rate_install(10_000)
    with pytest.raises(NicbenchError, match="must not be negative"):
        connectx.rate_install(10_000, period_ns=-1)
    sc = connectx.scenario(
        rules=connectx.generated_rules(0, 1),
        duration_ns=20_000_000,
        traffic=connectx.parse_gen("flows=100,size=1500,rate=5Mpps"),
        install=connectx.rate_install(50_000, group=1, period_ns=1_000_000),
    )
    jsonschema.validate(json.loads(json.dumps(sc)), models.contract_schema("connectx", "request"))
    bunched, spread = (
        connectx.simulate(sc),
        connectx.simulate({**sc, "install": connectx.rate_install(50_000, group=1)}),
    )
    # The same operations, the same rate kept; bunched, they stall the core longer at a time.
    assert bunched["install"]["rules"] == pytest.approx(spread["install"]["rules"], rel=0.05)
    assert bunched["latency_us"]["max"] > spread["latency_us"]["max"]


@pytest.mark.parametrize(
    "build",
    [
        lambda: connectx.scenario(
            rules=connectx.generated_rules(10, 4, kind="acl", hit_fraction=0.5),
            duration_ns=5,
            traffic=connectx.parse_gen(
                "flows=7,size=imix,rate=8Mpps,ipv6=true,proto=tcp,zipf=1.1,vlan=7,vxlan=42,seed=3"
            ),
            warmup_ns=1,
            seed=9,
        ),
        lambda: connectx.scenario(
            rules={"file": "rules.flow"},
            duration_ns=5,
            trace="t.pcap",
            latency=False,
            install=connectx.batch_install(
                100, start_ns=3, group=2, core="same", op="update_inplace", match="tunnel", actions=3
            ),
        ),
        lambda: connectx.scenario(
            rules={"text": "flow create 0 ..."},
            duration_ns=5,
            traffic=connectx.parse_gen("size=64-1518,rate=1Gbps"),
            install=connectx.rate_install(5.0, count=3, op="delete", match="vlan"),
        ),
    ],
)
def test_every_builder_output_is_valid_against_the_schema(build):
    jsonschema.validate(json.loads(json.dumps(build())), models.contract_schema("connectx", "request"))


def test_schema_refuses_what_the_model_refuses():
    schema = models.contract_schema("connectx", "request")
    sc = connectx.scenario(rules=connectx.generated_rules(0), duration_ns=1, traffic=connectx.parse_gen(""))
    with pytest.raises(jsonschema.ValidationError, match="'colour' was unexpected"):
        jsonschema.validate({**json.loads(json.dumps(sc)), "colour": "red"}, schema)
    with pytest.raises(NicbenchError, match="unknown field `colour`"):
        connectx.simulate({**sc, "colour": "red"})


def test_a_result_is_valid_against_the_result_schema():
    sc = connectx.scenario(
        rules=connectx.generated_rules(100, 2),
        duration_ns=2_000_000,
        traffic=connectx.parse_gen(""),
        install=connectx.rate_install(1e5, group=1, core="distinct"),
        timeline_bin_ns=1_000_000,
    )
    result = connectx.simulate(sc)
    jsonschema.validate(result, models.contract_schema("connectx", "result"))
    assert [b["t_s"] for b in result["timeline"]] == [0.001, 0.002]


def test_scenario_rejects_bad_input():
    with pytest.raises(NicbenchError, match="exactly one traffic source"):
        connectx.scenario(rules=connectx.generated_rules(0), duration_ns=1, traffic=None, trace=None)
    with pytest.raises(NicbenchError, match="core"):
        connectx.batch_install(10, core="other")
    with pytest.raises(NicbenchError, match="positive"):
        connectx.rate_install(0)
    with pytest.raises(NicbenchError, match="≥ 0"):
        connectx.generated_rules(-1)


def test_simulate_applies_overrides_beneath_the_scenario():
    """Context overrides (calibration) apply to every run; the scenario's own overrides win over them."""

    def p50(overrides=None):
        sc = connectx.scenario(
            rules=connectx.generated_rules(10),
            duration_ns=2_000_000,
            overrides=overrides,
            traffic=connectx.parse_gen("flows=100,size=1500,rate=1Gbps"),
        )
        return connectx.simulate(sc)["latency_us"]["p50"]

    base = p50()
    with profiles.parameter_overrides({"fixed_latency_ns": 137_000.0}):
        raised = p50()
        assert p50({"fixed_latency_ns": 37_000.0}) == pytest.approx(raised - 100.0, abs=0.2)
    default_latency_us = profiles.load("connectx5")["param"]["fixed_latency_ns"]["value"] / 1e3
    assert raised == pytest.approx(base + 137.0 - default_latency_us, abs=0.2)
    assert p50() == base, "the block ended: overrides gone"
    sc = connectx.scenario(
        rules=connectx.generated_rules(0), duration_ns=1, traffic=connectx.parse_gen(""), overrides={"a": 1.0}
    )
    assert "overrides" not in connectx.scenario(
        rules=connectx.generated_rules(0), duration_ns=1, traffic=connectx.parse_gen("")
    )
    with profiles.parameter_overrides({"b": 2.0}):
        with pytest.raises(NicbenchError, match="unknown parameter 'a'"):
            connectx.simulate(sc)
    assert sc["overrides"] == {"a": 1.0}, "the caller's scenario is not changed"


def test_result_metrics_flatten_and_tolerate_missing_fields():
    m = connectx.result_metrics(
        {
            "offered_gbps": 100.0,
            "rx_gbps": 30.0,
            "dropped": {"imissed": 5, "nic": 2},
            "latency_us": {"p50": 10.0},
            "install": {"rules": 10, "duration_s": 0.5, "rate_rules_per_s": 20.0},
        }
    )
    assert m["rx_drop_gbps"] == 70.0 and m["dropped_packets"] == 7.0
    assert m["latency_p50_us"] == 10.0 and math.isnan(m["latency_p99_us"])
    assert m["install_rate_krules_s"] == pytest.approx(0.02)
    assert math.isnan(m["root_table_occupancy"]) and math.isnan(m["sim_mpps"])


def test_timeline_stats_measures_outage_and_recovery():
    bins = [{"t_s": round(0.1 * (i + 1), 3), "rx_gbps": 100.0} for i in range(80)]
    for b in bins:
        if 2.1 < b["t_s"] <= 4.1:
            b["rx_gbps"] = 0.01
    stats = connectx.timeline_stats({"offered_gbps": 100.0, "timeline": bins}, event_s=2.1)
    assert stats["outage_s"] == pytest.approx(2.0)
    assert stats["recovered"] == 1.0 and stats["rx_gbps_before"] == 100.0 and stats["rx_gbps_min"] == 0.01
    bins[-1]["rx_gbps"] = 0.0
    assert connectx.timeline_stats({"offered_gbps": 100.0, "timeline": bins}, event_s=2.1)["recovered"] == 0.0
    assert math.isnan(connectx.timeline_stats({"offered_gbps": 100.0}, event_s=1.0)["outage_s"])
