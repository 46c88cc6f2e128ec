"""`nicbench simulate` / `nicbench calibrate` (in-process, on the native model)."""

from __future__ import annotations

import json

import jsonschema
import pytest
from click.testing import CliRunner

from nicbench import models
from nicbench.cli.calibrate import calibrate
from nicbench.cli.common import NicbenchGroup, fmt_number
from nicbench.cli.connectx import COMMANDS, bottleneck_line, parse_install_rate, sparkline


@pytest.fixture
def nicbench_cli():
    group = NicbenchGroup("nicbench")
    for command in (*COMMANDS, calibrate):
        group.add_command(command)
    return lambda *args: CliRunner().invoke(group, list(args))


def test_simulate_json_has_the_contract_fields(nicbench_cli):
    r = nicbench_cli(
        "simulate",
        "--nic",
        "connectx5",
        "--generated",
        "60000",
        "--gen",
        "flows=10000,size=1500,rate=100Gbps",
        "--duration",
        "20ms",
        "--bin",
        "2ms",
        "--json",
    )
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    jsonschema.validate(out, models.contract_schema("connectx", "result"))
    assert set(out["latency_us"]) >= {"p1", "p25", "p50", "p75", "p99", "p999", "max"}
    # 60,000 rules fill Table 0 past its knee (PAM'21 Fig. 2a): forwarding collapses.
    assert out["loss_ratio"] > 0.9 and len(out["timeline"]) == 10
    assert out["model"]["root_table_occupancy"] == pytest.approx(60000 / 65536)


def test_simulate_human_output_with_install_and_sparkline(nicbench_cli):
    r = nicbench_cli(
        "simulate", "--install-batch", "1k", "--install-start", "20ms", "--duration", "200ms", "--bin", "10ms"
    )
    assert r.exit_code == 0, r.output
    assert "virtual connectx5" in r.output and "rule updates" in r.output
    assert "rx Gbps over time" in r.output and "█" in r.output and "batch of 1000" in r.output


def test_simulate_rate_install_and_overrides(nicbench_cli):
    def rx(*extra):
        r = nicbench_cli(
            "simulate", "--install-rate", "10k/s", "--install-core", "same", "--duration", "20ms", "--json", *extra
        )
        assert r.exit_code == 0, r.output
        return json.loads(r.output)["rx_gbps"]

    # A same-core installer takes core time from forwarding; 10x costlier root inserts take 10x more.
    cheap, dear = rx("--set", "root_insert_ipv4_us=1"), rx("--set", "root_insert_ipv4_us=10")
    assert cheap > dear


def test_simulate_generator_setup_and_install_period(nicbench_cli):
    """--generator timed_replay adds the profile's timed_replay_latency_ns to every latency; --install-period
    bunches a same-core installer's rules into longer stalls (any zero duration means one at a time)."""
    from nicbench import profiles

    base = ["simulate", "--gen", "flows=1000,size=1500,rate=5Mpps", "--duration", "50ms", "--json"]

    def run(*extra: str) -> dict:
        r = nicbench_cli(*base, *extra)
        assert r.exit_code == 0, r.output
        return json.loads(r.output)

    extra_us = profiles.load("connectx5")["param"]["timed_replay_latency_ns"]["value"] / 1e3
    play, replay = run(), run("--generator", "timed_replay")
    assert replay["latency_us"]["p50"] == pytest.approx(play["latency_us"]["p50"] + extra_us, rel=0.01)
    assert replay["model"]["latency_floor_us"]["fixed"] == pytest.approx(
        play["model"]["latency_floor_us"]["fixed"] + extra_us
    )
    installer = ["--install-rate", "200k/s", "--install-group", "1", "--install-core", "same"]
    one, zero, bunched = (
        run(*installer),
        run(*installer, "--install-period", "0ms"),
        run(*installer, "--install-period", "1ms"),
    )
    assert zero["latency_us"] == one["latency_us"]
    assert bunched["latency_us"]["max"] > 1.1 * one["latency_us"]["max"]


def test_no_virtual_port_receives_more_than_its_line_rate(nicbench_cli, tmp_path):
    # Generated traffic above the line rate is refused, naming the line rate ...
    r = nicbench_cli("simulate", "--gen", "flows=10,size=1500,rate=200Gbps", "--duration", "5ms")
    assert r.exit_code == 2 and "above the port's line rate of 100 Gb/s" in r.output, r.output
    # ... a trace recorded at 200 Gb/s is paced by the port: its own duration is the default, nothing
    # arrives above 100 Gb/s, the latency is the DUT's, and the pacing is reported.
    from nicbench.traffic import GenConfig, generate_pcap
    from nicbench.units import Rate

    def trace_at(gbps: float, duration_ns: int, name: str) -> str:
        path = str(tmp_path / name)
        generate_pcap(
            GenConfig(flows=20, size=1500, rate=Rate(gbps * 1e9, "bps"), duration_ns=duration_ns, seed=3), path
        )
        return path

    trace = trace_at(200.0, 1_000_000, "fast.pcap")
    r = nicbench_cli("simulate", "--trace", str(trace), "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["rx_gbps"] <= 100.0 * (1 + 1e-9) and out["offered_gbps"] == pytest.approx(100.0, rel=0.01)
    assert out["sim"]["link_paced_max_us"] == pytest.approx(1000.0, rel=0.05)
    assert out["latency_us"]["max"] < 100.0 and out["loss_ratio"] == 0.0
    # At the trace's own rate (below the line), the default duration is the trace's: offered is its rate.
    slow = trace_at(40.0, 2_000_000, "slow.pcap")
    out = json.loads(nicbench_cli("simulate", "--trace", slow, "--json").output)
    assert out["offered_gbps"] == pytest.approx(40.0, rel=0.01) and out["sim"]["link_paced_max_us"] < 1.0


def test_more_cores_forward_more_until_a_nic_limit_named_in_the_output(nicbench_cli, tmp_path):
    # Eight queues (a jump to group 1, then the low 3 bits of the source address pick the queue), polled by
    # 1 or 8 forwarding cores, 64 B at 100 Gb/s.
    rules = tmp_path / "q8.flow"
    jump = "flow create 0 ingress group 0 priority 0 pattern eth / end actions jump group 1 / end\n"
    rules.write_text(
        jump
        + "".join(
            f"flow create 0 ingress group 1 priority 0 pattern eth / ipv4 src spec 0.0.0.{k} src mask 0.0.0.7 / end "
            f"actions queue index {k} / end\n"
            for k in range(8)
        )
    )

    def run(cores: int, *extra: str) -> dict:
        r = nicbench_cli(
            "simulate",
            "--rules",
            str(rules),
            "--gen",
            "flows=1000,size=64,rate=100Gbps",
            "--duration",
            "5ms",
            "--cores",
            str(cores),
            "--json",
            *extra,
        )
        assert r.exit_code == 0, r.output
        return json.loads(r.output)

    # The cores are the limit (a root-table lookup is one STE read of the NIC's pipeline): 8 of them
    # forward > 6x one.
    one, eight = run(1), run(8)
    assert eight["rx_mpps"] >= 6 * one["rx_mpps"], (one["rx_mpps"], eight["rx_mpps"])
    assert "cores" not in one and [c["queues"] for c in eight["cores"]] == [[k] for k in range(8)]
    assert all(0 < c["busy_ratio"] <= 1 and c["packets"] > 0 for c in eight["cores"])
    assert sum(c["packets"] for c in eight["cores"]) == sum(q["packets"] for q in eight["queues"].values())
    # A Table 0 hashed into one bucket (every lookup walks the whole chain in firmware) makes the root
    # table, a NIC resource, the limit of 8 cores, and the output names it.
    costly = run(8, "--set", "root_table_buckets=1")
    assert costly["model"]["bottleneck"] == "root_table" and costly["rx_mpps"] < eight["rx_mpps"]

    # The same with no rules at all: the port's default RSS over 8 queues (the issue's case).
    def rss(cores: int) -> dict:
        r = nicbench_cli(
            "simulate",
            "--gen",
            "flows=1000,size=64,rate=100Gbps",
            "--duration",
            "5ms",
            "--queues",
            "8",
            "--cores",
            str(cores),
            "--json",
        )
        assert r.exit_code == 0, r.output
        return json.loads(r.output)

    one, eight = rss(1), rss(8)
    assert len(eight["queues"]) == 8 and eight["rx_mpps"] >= 6 * one["rx_mpps"], (one["rx_mpps"], eight["rx_mpps"])


def test_issue_17_done_when_8_cores_receive_6x_one_core_until_a_named_nic_limit(nicbench_cli):
    """The issue's own case: 64 B at 100 Gbps, RSS over 8 queues, --cores 8 vs --cores 1, profile as
    fitted. Eight cores receive at least 6x one core, or as much as the limit the output names, quoted
    with its cost and provenance from the profile file itself, and the limit that would bind next."""
    import tomllib

    from helpers import REPO

    def run(cores: int, *extra: str):
        r = nicbench_cli(
            "simulate",
            "--gen",
            "flows=10k,size=64,rate=100Gbps",
            "--queues",
            "8",
            "--cores",
            str(cores),
            "--duration",
            "5ms",
            *extra,
        )
        assert r.exit_code == 0, r.output
        return r.output

    one, eight = json.loads(run(1, "--json")), json.loads(run(8, "--json"))
    limit = eight["model"]["bottleneck_detail"]
    assert eight["model"]["bottleneck"] == limit["resource"]
    assert eight["rx_mpps"] >= min(6 * one["rx_mpps"], 0.95 * limit["capacity_mpps"]), (one["rx_mpps"], limit)
    profile = tomllib.loads((REPO / "profiles" / "connectx5.toml").read_text())["param"]
    assert limit["parameters"] and all(limit["parameters"][n] == profile[n] for n in limit["parameters"])
    assert limit["next_resource"] in eight["model"]["utilization"] and limit["next_resource"] != limit["resource"]
    assert limit["next_capacity_mpps"] >= limit["capacity_mpps"] * 0.999, limit
    # One core is itself the limit, and says so.
    assert one["model"]["bottleneck"] == one["model"]["bottleneck_detail"]["resource"] == "host_core"
    assert set(one["model"]["bottleneck_detail"]["parameters"]) == {"nf_packet_ns", "nf_burst_ns", "rx_burst_packets"}
    # The human output names it the same way, in one row, with the next limit.
    line = bottleneck_line(limit)
    assert line.startswith(f"{limit['resource']}: "), line
    assert f"{fmt_number(limit['ns_per_packet'])} ns/packet" in line
    assert f"next limit: {limit['next_resource']}" in line
    for name, param in limit["parameters"].items():
        assert f"{name} = {fmt_number(param['value'])}" in line and param["provenance"] in line
    text = run(8)
    assert "│ bottleneck " in text and f"{limit['resource']}: " in text, text


def test_a_queue_map_names_the_core_of_every_queue(nicbench_cli):
    def cores(*extra: str) -> list[dict]:
        r = nicbench_cli(
            "simulate",
            "--gen",
            "flows=2000,size=512,rate=20Gbps",
            "--queues",
            "4",
            "--cores",
            "2",
            "--duration",
            "2ms",
            "--json",
            *extra,
        )
        assert r.exit_code == 0, r.output
        out = json.loads(r.output)
        for c in out["cores"]:  # each core forwards exactly what its queues received
            assert c["packets"] == sum(out["queues"][str(q)]["packets"] for q in c["queues"])
        return out["cores"]

    assert [sorted(c["queues"]) for c in cores()] == [[0, 2], [1, 3]], "default: queue q on core q mod 2"
    assert [sorted(c["queues"]) for c in cores("--queue-map", "0:0,1:0,2:1,3:1")] == [[0, 1], [2, 3]]
    # Every queue on core 1: core 0 polls nothing.
    idle, busy = cores("--queue-map", "0:1,1:1,2:1,3:1")
    assert idle["queues"] == [] and idle["packets"] == 0 and sorted(busy["queues"]) == [0, 1, 2, 3]


@pytest.mark.parametrize(
    ("queue_map", "needle"),
    [
        ("0:0,1:0,2:1,3:2", "queue 3 on core 2, but --cores is 2"),
        ("0:0,1:0,2:1", "queue 3 of the port's 4 (--queues) has no core"),
        ("0:0,0:1,1:0,2:1,3:1", "queue 0 is mapped twice"),
        ("0:0,1:x", "expected QUEUE:CORE pairs"),
        ("70000:0", "not a queue id"),
    ],
)
def test_a_bad_queue_map_is_one_line(nicbench_cli, queue_map, needle):
    r = nicbench_cli("simulate", "--queues", "4", "--cores", "2", "--queue-map", queue_map, "--duration", "1ms")
    assert r.exit_code == 2 and needle in r.output, r.output


def test_latency_at_light_load_is_its_floor_and_the_output_says_what_it_is_made_of(nicbench_cli):
    r = nicbench_cli("simulate", "--gen", "flows=100,size=1500,rate=10Gbps", "--duration", "5ms", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    floor = out["model"]["latency_floor_us"]
    assert set(floor) == {"fixed", "links", "steering", "pcie", "core"} and all(v >= 0 for v in floor.values())
    # Unloaded: the median is the floor (within the histogram's resolution and the TX serialization).
    assert out["latency_us"]["p50"] == pytest.approx(sum(floor.values()), rel=0.02)
    human = nicbench_cli("simulate", "--gen", "flows=100,size=1500,rate=10Gbps", "--duration", "5ms").output
    assert "latency floor [µs]" in human and "fixed" in human


@pytest.mark.parametrize(
    "args, needle",
    [
        (("--rules", "x.flow", "--generated", "5"), "either --rules"),
        (("--install-rate", "fast"), "--install-rate"),
        (("--gen", "flows=many"), "flows"),
        (("--set", "x"), "NAME=VALUE"),
        (("--duration", "soon"), "duration"),
        # A profile of another model: say which command runs it.
        (("--nic", "bluefield2", "--duration", "1ms"), "run by `nicbench paths`"),
        (("--nic", "agilio-cx-25g", "--duration", "1ms"), "`nicbench pvp`"),
        (("--gen", "flows=10,size=64,rate=101Gbps", "--duration", "1ms"), "line rate of 100 Gb/s"),
    ],
)
def test_simulate_bad_options_exit_2_with_one_line(nicbench_cli, args, needle):
    r = nicbench_cli("simulate", *args)
    assert r.exit_code == 2 and needle in r.output and "Traceback" not in r.output


def test_calibrate_command_prints_parameters_and_errors(nicbench_cli, tmp_path):
    from test_calibrate import mini_study, start_profile

    study = mini_study(tmp_path)
    profile = start_profile(tmp_path / "p")
    args = (
        "calibrate",
        str(profile),
        "--study",
        str(study.dir),
        "--jobs",
        "1",
        "--sweeps",
        "1",
        "--param",
        "fixed_latency_ns",
    )
    before = profile.read_text()
    r = nicbench_cli(*args, "--dry-run")
    assert r.exit_code == 0, r.output
    assert "fixed_latency_ns" in r.output and "validation" in r.output and "NOT written" in r.output
    assert profile.read_text() == before, "--dry-run leaves the profile alone"
    j = nicbench_cli(*args, "--no-validate", "--json")
    assert j.exit_code == 0, j.output
    out = json.loads(j.output)
    assert out["written"] and set(out["summary"]) == {"calibration"}
    assert profile.read_text() != before


def test_sparkline_and_rate_parsing():
    assert sparkline([0, 50, 100], top=100) == " ▅█"
    assert len(sparkline(list(range(1000)), width=40)) == 40
    assert parse_install_rate("100k/s") == 100_000 and parse_install_rate("2500") == 2500


def _rows(output: str) -> dict[str, str]:
    """The result table's rows (what → value), wrapped cells joined again."""
    rows: dict[str, str] = {}
    last = None
    for line in output.splitlines():
        parts = line.split("│")
        if len(parts) != 4:
            continue
        what, value = parts[1].strip(), parts[2].strip()
        if what:
            last = what
            rows[last] = value
        elif last is not None:
            rows[last] += " " + value
    return rows


def test_the_packet_account_adds_up_and_the_rate_states_its_window(nicbench_cli):
    """Issue 35: 64 B at 100 Gb/s into one core for 10 ms said "received 8.385 Mpps" (83,850 packets over
    10 ms) while the rx queue counted more: the rate's window runs past the end when buffers were
    backlogged, and packets still inside were in no counter. The account adds up, and says over which
    window the rate is."""
    args = ["simulate", "--gen", "flows=10000,size=64,rate=100Gbps", "--duration", "10ms"]
    r = nicbench_cli(*args, "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    a = out["packets"]
    dropped = sum(a["dropped"].values())
    assert a["offered"] == a["delivered"] + dropped + a["in_flight_at_end"]
    assert a["in_flight_at_end"] == sum(a["in_flight"].values())
    assert a["delivered"] == sum(q["packets"] for q in out["queues"].values())
    assert a["offered"] == out["sim"]["packets"] and a["dropped"] == out["dropped"], "no warm-up: the whole run"
    assert out["rx_mpps"] * 1e6 * out["rx_window_s"] == pytest.approx(a["delivered"], rel=1e-9)
    # The core was overloaded (rings full): the window ran past the 10 ms, by the backlog's drain.
    assert out["dropped"]["imissed"] > 0 and out["rx_window_s"] > 0.01
    rows = _rows(nicbench_cli(*args).output)
    assert rows["received"].endswith(f"over {fmt_number(out['rx_window_s'] * 1e3)} ms"), rows["received"]
    assert rows["packets"] == (
        f"offered {fmt_number(a['offered'])} = delivered {fmt_number(a['delivered'])} + dropped "
        f"{fmt_number(dropped)} + in flight at the end {fmt_number(a['in_flight_at_end'])}"
    ), rows["packets"]


def test_an_installer_that_cannot_keep_up_says_so_and_the_core_it_takes_is_not_the_traffics(nicbench_cli):
    """Issue 35: 20K rules/s asked of a same-core installer printed only the 3,903 rules/s achieved, and
    the bottleneck said the core allowed 4.64 Mpps while 1.75 were received (the installer's share of
    the core was spread over the packets)."""
    args = ["simulate", "--install-rate", "20k/s", "--install-core", "same", "--duration", "200ms"]
    out = json.loads(nicbench_cli(*args, "--json").output)
    i = out["install"]
    assert i["requested_rules_per_s"] == 20_000 and i["achieved_rules_per_s"] < 0.5 * 20_000, i
    assert i["requested"] == 4_000 and i["backlog"] == i["requested"] - i["rules"] > 0, i
    assert i["saturated_s"] is not None and 0 <= i["saturated_s"] < 0.01, i
    b = out["model"]["bottleneck_detail"]
    assert b["resource"] == "host_core" and b["installer_share"] > 0.5, b
    assert out["rx_mpps"] == pytest.approx(b["capacity_mpps"], rel=0.02), (out["rx_mpps"], b)
    rows = _rows(nicbench_cli(*args).output)
    share = fmt_number(i["achieved_rules_per_s"] / 20_000 * 100, 3)
    assert rows["installer"].startswith(
        f"asked 20,000 rules/s, achieved {fmt_number(i['achieved_rules_per_s'])} rules/s ({share} %), "
        f"backlog {fmt_number(i['backlog'])} at the end; saturated from "
    ), rows["installer"]
    assert f"at most {fmt_number(b['capacity_mpps'])} Mpps" in rows["bottleneck"], rows["bottleneck"]
    assert "the same-core installer takes" in rows["bottleneck"], rows["bottleneck"]


def test_the_installer_row_says_kept_up_or_what_a_batch_left_undone():
    from nicbench.cli.connectx import installer_line

    kept = {"requested_rules_per_s": 1000.0, "achieved_rules_per_s": 1000.0, "backlog": 0, "saturated_s": None}
    assert installer_line(kept).endswith("backlog 0 at the end; kept up")
    batch = {"requested_rules_per_s": None, "requested": 500, "rules": 48, "backlog": 452}
    assert installer_line(batch) == "asked a batch of 500 rule operations, 48 started by the end, backlog 452"
    assert installer_line({**batch, "rules": 500, "backlog": 0}) == "", "a finished batch: the count says it all"
