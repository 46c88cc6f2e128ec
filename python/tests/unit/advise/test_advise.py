"""`nicbench advise` (issue 37): each advice appears on an input built to trigger it and not on one
that does not; every advice shown is reproduced by its own command; its seed quote is in the seed."""

from __future__ import annotations

import json
import os
import re
import shlex
import unicodedata
from pathlib import Path

import pytest
from cli_process import run_forked
from helpers import chromium_rendered_sizes

from nicbench.cli.advice import advise
from nicbench.cli.advice.whatifs import WHATIFS
from nicbench.rules import generate_rules
from nicbench.traffic import GenConfig, generate_pcap_for_rules
from nicbench.units import Rate

SEEDS = Path(__file__).resolve().parents[4].parent / "shared" / "seeds"
SCHEMA = Path(__file__).resolve().parents[4] / "docs" / "cli" / "advise.schema.json"
TIMEOUT_S = 120.0


@pytest.fixture(scope="module")
def full_root(tmp_path_factory) -> dict[str, str]:
    """60,000 exact rules in group 0 (Table 0 at 92%) and 100 Gbps of 1500 B that meets every one."""
    d = tmp_path_factory.mktemp("advise")
    rules = d / "r60k.flow"
    generate_rules("exact5", 60_000, 0, str(rules), seed=3)
    trace = d / "t60k.pcap"
    config = GenConfig(flows=60_000, size=1500, rate=Rate(100e9, "bps"), duration_ns=20_000_000, seed=3)
    generate_pcap_for_rules(config, str(rules), str(trace))
    small = d / "r1k.flow"
    generate_rules("exact5", 1_000, 0, str(small), seed=3)
    return {"rules": str(rules), "trace": str(trace), "small": str(small), "dir": str(d)}


def _ids(report: dict, nic: int = 0) -> list[str]:
    return [a["id"] for a in report["nics"][nic]["advice"]]


def _json(args: list[str]) -> dict:
    proc = run_forked([*args, "--json"], TIMEOUT_S)
    assert proc is not None and proc.returncode == 0, proc and proc.stderr[-2000:]
    return json.loads(proc.stdout)


def _schema_errors(report: dict) -> list[str]:
    """Where `report`, as `advise --json` prints it, departs from docs/cli/advise.schema.json."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text()))
    return [
        f"{'/'.join(map(str, e.path))}: {e.message[:200]}"
        for e in validator.iter_errors(json.loads(json.dumps(report)))
    ]


def _assert_reproduced(report: dict, tolerance: float = 1e-9) -> None:
    """Each advice's printed command, run as a user runs it, gives the advice's predicted numbers."""
    for n in report["nics"]:
        for a in n["advice"]:
            words = shlex.split(a["command"])
            assert words[:2] == ["nicbench", "simulate"], a["command"]
            got = _json(words[1:])
            for key, published in (
                ("rx_gbps", a["predicted"]["rx_gbps"]),
                ("loss_ratio", a["predicted"]["loss_ratio"]),
            ):
                assert got[key] == pytest.approx(published, rel=tolerance, abs=1e-12), (a["id"], key)


def test_full_root_table_collapse_and_its_advice(full_root):
    """Issue 37's first case: the collapse predicted, Table 0 named, the move to group 1 on top, its
    gain reproduced by its own command (within 2%)."""
    report = advise(
        ["connectx5"], out_dir=Path(full_root["dir"]) / "whatifs", rules=full_root["rules"], trace=full_root["trace"]
    )
    nic = report["nics"][0]
    assert nic["predicted"]["bottleneck"] == "root_table"
    assert nic["predicted"]["root_table_occupancy"] > 0.85
    assert nic["predicted"]["rx_gbps"] < 1.0
    top = nic["advice"][0]
    assert top["id"] == "rules_in_non_root_table"
    assert top["predicted"]["rx_gbps"] > 95.0
    _assert_reproduced(report, tolerance=0.02)


def test_no_move_advice_on_a_table_0_that_is_fine(full_root):
    report = advise(["connectx5"], out_dir=Path(full_root["dir"]) / "whatifs-small", rules=full_root["small"])
    assert "rules_in_non_root_table" not in _ids(report)


def test_same_core_updates_get_the_distinct_core_and_group_1_advice_on_three_nics(tmp_path):
    report = advise(
        ["connectx5", "connectx6", "bluefield1"],
        out_dir=tmp_path,
        updates="insert 20k/s same-core",
        duration="10ms",
    )
    assert [n["nic"] for n in report["nics"]] == ["connectx5", "connectx6", "bluefield1"]
    for n in report["nics"]:
        ids = [a["id"] for a in n["advice"]]
        assert "install_from_distinct_core" in ids and "install_in_non_root_table" in ids, (n["nic"], ids)
        assert n["predicted"]["loss_ratio"] > 0.1
        assert n["predicted"]["install_achieved_rules_per_s"] < n["predicted"]["install_requested_rules_per_s"]
        assert n["bottleneck"]["name"] == n["predicted"]["bottleneck"] and n["bottleneck"]["parameters"]
        assert n["placement"]["root_table_occupancy"] == n["predicted"]["root_table_occupancy"]
    assert _schema_errors(report) == []
    _assert_reproduced(report)


def test_distinct_core_group_1_updates_get_neither(tmp_path):
    report = advise(["connectx5"], out_dir=tmp_path, updates="insert 20k/s distinct-core group 1", duration="10ms")
    ids = _ids(report)
    assert "install_from_distinct_core" not in ids and "install_in_non_root_table" not in ids, ids


def test_modify_gets_the_in_place_update_and_insert_does_not(tmp_path):
    modify = advise(["connectx5"], out_dir=tmp_path, updates="modify 10k/s distinct-core group 1", duration="10ms")
    insert = advise(["connectx5"], out_dir=tmp_path, updates="insert 10k/s distinct-core group 1", duration="10ms")
    assert "in_place_update" in _ids(modify), modify["nics"][0]
    advice = next(a for a in modify["nics"][0]["advice"] if a["id"] == "in_place_update")
    assert advice["gain"]["updates_share"] > 0.01
    assert "in_place_update" not in _ids(insert)


def test_small_frames_on_one_core_get_more_cores_and_a_light_load_does_not(tmp_path):
    heavy = advise(["connectx5"], out_dir=tmp_path, gen="size=64,rate=100Gbps", duration="2ms")
    light = advise(["connectx5"], out_dir=tmp_path, gen="size=1500,rate=10Gbps", duration="2ms")
    assert "spread_over_cores" in _ids(heavy)
    assert _ids(light) == []
    _assert_reproduced(heavy)


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["advise", "--nic", "bluefield2"], "modelled by nicbench paths: give --flow"),
        (["advise", "--nic", "napatech-nt100", "--gen", "ipv6=true"], "the flow-meter model takes flows"),
        (["advise", "--updates", "insert fast"], "--updates: 'fast' is not an operation"),
        (["advise", "--updates", "insert 10k/s batch 5"], "give either a rate (20k/s) or 'batch N'"),
    ],
)
def test_bad_input_is_one_line(args, fragment):
    proc = run_forked(args, TIMEOUT_S)
    assert proc is not None and proc.returncode == 2, proc and proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and fragment in lines[0], proc.stderr


def _norm(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).replace("-\n", "")
    return re.sub(r"\s+", " ", text).strip().lower()


@pytest.mark.parametrize("whatif", [w for w in WHATIFS if w.source.startswith("seed ")], ids=lambda w: w.id)
def test_seed_quote_is_on_the_lines_it_names(whatif):
    m = re.match(r"seed (\d{3}) lines? (\d+)(?:-(\d+))?: '(.+)'$", whatif.source)
    assert m, whatif.source
    files = sorted(SEEDS.glob(f"{m[1]}_*.txt"))
    if not files and os.environ.get("CI") != "true":
        pytest.skip(f"the seed texts are not at {SEEDS}")
    assert files, f"CI: the seed texts are missing at {SEEDS}"
    lines = files[0].read_text().splitlines(keepends=True)
    first, last = int(m[2]), int(m[3] or m[2])
    assert _norm(m[4]) in _norm("".join(lines[first - 1 : last])), (whatif.id, m[4])


def test_lint_names_what_mlx5_does_not_implement_by_line_and_a_full_table_0(full_root, tmp_path):
    rules = tmp_path / "sctp.flow"
    rules.write_text(
        "flow create 0 ingress pattern eth / ipv4 / udp dst is 53 / end actions queue index 0 / end\n"
        "flow create 0 ingress pattern eth / ipv4 / sctp dst is 9 / end actions drop / end\n"
    )
    report = advise(["connectx5"], out_dir=tmp_path, rules=str(rules), duration="1ms")
    lint = report["nics"][0]["lint"]
    assert [(item["line"], item["what"].split(":")[0]) for item in lint] == [(2, "item 'sctp'")], lint
    assert "mlx5.ini" in lint[0]["source"]
    full = advise(["connectx5"], out_dir=tmp_path, rules=full_root["rules"], trace=full_root["trace"])
    assert any("Table 0 at 9" in item["what"] for item in full["nics"][0]["lint"]), full["nics"][0]["lint"]


def test_lint_seed_quote_is_on_its_lines():
    from nicbench.cli.advice import lint

    files = sorted(SEEDS.glob("000_*.txt"))
    if not files and os.environ.get("CI") != "true":
        pytest.skip(f"the seed texts are not at {SEEDS}")
    source = next(
        i["source"] for i in lint("connectx5", None, {"root_table_occupancy": 0.9}) if i["source"].startswith("seed")
    )
    m = re.match(r"seed 000 lines (\d+)-(\d+): '(.+)'$", source)
    lines = files[0].read_text().splitlines(keepends=True)
    assert _norm(m[3]) in _norm("".join(lines[int(m[1]) - 1 : int(m[2])]))


def test_openflow_dec_ttl_on_two_offload_nics(tmp_path):
    """Issue 37: an OpenFlow file whose flows use dec_ttl through connectx5-25g and agilio-cx-25g: which
    megaflows each NIC refuses and why, and the what-if without the refused action, reproduced."""
    from nicbench.traffic import generate_pcap

    rules = tmp_path / "ttl.of"
    rules.write_text("in_port=p0,ip,actions=dec_ttl,output:vm\nin_port=vm,ip,actions=output:p0\n")
    trace = tmp_path / "t.pcap"
    generate_pcap(GenConfig(flows=100, size=64, rate=Rate(25e9, "bps"), duration_ns=None, packets=2000), str(trace))
    report = advise(["connectx5-25g", "agilio-cx-25g"], out_dir=tmp_path, openflow=str(rules), trace=str(trace))
    cx, agilio = report["nics"]
    assert any("cannot match nw_ttl" in item["what"] for item in cx["lint"]), cx["lint"]
    assert agilio["lint"] == [] and _ids(report, 1) == []
    top = cx["advice"][0]
    assert top["id"] == "offload_without_unmatchable_action" and "dec_ttl" in top["change"]
    assert "dec_ttl" not in Path(top["argv"][top["argv"].index("--openflow") + 1]).read_text()
    assert top["predicted"]["megaflows_software"] == 0
    assert cx["placement"]["refusals"] == cx["predicted"]["refusals"] and _schema_errors(report) == []
    got = _json(shlex.split(top["command"])[1:])
    assert got["pvp"]["gbps"] == pytest.approx(top["predicted"]["rx_gbps"], rel=1e-9)


def test_bluefield2_skewed_soc_writes_get_the_seed_advice_with_its_gain(tmp_path):
    """Issue 37: a BlueField-2 mix with skewed SoC writes gets seed 004's Advice #1 through the same
    interface: the changed mix run, its gain predicted, its command reproducing it."""
    report = advise([], out_dir=tmp_path, flows=("client->soc WRITE 64B in 1536B",))
    nic = report["nics"][0]
    assert nic["nic"] == "bluefield2"
    assert "avoid_skewed_soc_writes" in [a["id"] for a in nic["model_advice"]]
    advice = next(a for a in nic["advice"] if a["id"] == "avoid_skewed_soc_writes")
    assert advice["gain"]["rx_gbps"] > 0 and " in " in advice["argv"][-1]
    assert nic["bottleneck"]["name"] == "soc_dram" and _schema_errors(report) == []
    got = _json(shlex.split(advice["command"])[1:])
    assert got["total_gbps"] == pytest.approx(advice["predicted"]["rx_gbps"], rel=1e-9)


def test_bluefield2_mix_without_skew_gets_no_skew_advice(tmp_path):
    report = advise(["bluefield2"], out_dir=tmp_path, flows=("client->soc WRITE 64B in 1MiB",))
    assert "avoid_skewed_soc_writes" not in _ids(report)


def test_schema_refuses_what_the_documentation_does_not_promise():
    """The schema bites: a NIC without its placement, an advice without its command, an unknown key."""
    lint = {"line": None, "what": "x", "source": "the model"}
    predicted = {"rx_gbps": 1.0, "rx_mpps": 1.0, "offered_gbps": 1.0, "loss_ratio": 0.0, "bottleneck": None}
    bottleneck = {"name": None, "what": None, "parameters": {}, "utilization": None}
    nic = {
        "nic": "connectx5",
        "command": "nicbench simulate --nic connectx5",
        "argv": ["--nic", "connectx5"],
        "predicted": predicted,
        "bottleneck": bottleneck,
        "placement": {"root_table_occupancy": 0.1},
        "lint": [lint],
        "model_advice": [],
        "advice": [],
        "notes": [],
    }
    assert _schema_errors({"nics": [nic]}) == []
    assert _schema_errors({"nics": [{k: v for k, v in nic.items() if k != "placement"}]})
    gain = {"rx_gbps": 1.0, "rx_share_of_offered": 0.1, "client_share": 0.0, "loss_points": 0.0, "updates_share": 0.0}
    advice = {"id": "a", "because": "b", "source": "c", "change": "d", "argv": [], "predicted": predicted, "gain": gain}
    assert _schema_errors({"nics": [{**nic, "advice": [advice]}]})
    assert _schema_errors({"nics": [{**nic, "extra": 1}]})


def test_cli_side_by_side_and_report_page_rendered_by_chromium(tmp_path):
    page = tmp_path / "advise.html"
    proc = run_forked(
        [
            "advise",
            "--nic",
            "connectx5",
            "--nic",
            "connectx6",
            "--updates",
            "insert 20k/s same-core",
            "--duration",
            "5ms",
            "--whatif-dir",
            str(tmp_path),
            "--report",
            str(page),
        ],
        TIMEOUT_S,
    )
    assert proc is not None and proc.returncode == 0, proc and proc.stderr
    assert "connectx5" in proc.stdout and "connectx6" in proc.stdout and "run: nicbench simulate" in proc.stdout
    text = page.read_text()
    assert text.count("data:image/png;base64,") == 2 and "install_from_distinct_core" in text
    assert not re.search(r'<(img|script|link)[^>]+(src|href)="https?:', text)
    rendered = chromium_rendered_sizes(page)
    assert len(rendered) == 2 and all(w > 100 and h > 100 for w, h in rendered), rendered


def test_a_what_if_that_trades_traffic_for_updates_is_not_advice():
    from nicbench.cli.advice import _helps

    def gain(rx: float, loss: float, updates: float, client: float = 0.0) -> dict[str, float]:
        return {"rx_share_of_offered": rx, "loss_points": loss, "updates_share": updates, "client_share": client}

    assert _helps(gain(0.5, 50.0, 0.0))
    assert _helps(gain(0.0, 0.0, 0.05))
    assert not _helps(gain(-0.03, -3.0, 0.05))
    assert not _helps(gain(0.005, 0.1, 0.0))
    # Client traffic for intra-machine traffic at the same total is advice; at a lower total it is not.
    assert _helps(gain(0.0, 0.0, 0.0, client=0.5))
    assert not _helps(gain(-0.2, 0.0, 0.0, client=0.5))


def test_flow_meter_short_of_cores_gets_the_cores_it_needs_and_a_light_load_does_not(tmp_path):
    heavy = advise(["napatech-nt100"], out_dir=tmp_path, gen="flows=16k,size=64,rate=100Gbps", cores=8, duration="20ms")
    light = advise(
        ["napatech-nt100"], out_dir=tmp_path, gen="flows=16k,size=1500,rate=10Gbps", cores=8, duration="20ms"
    )
    advice = next(a for a in heavy["nics"][0]["advice"] if a["id"] == "meter_on_more_cores")
    assert advice["predicted"]["loss_ratio"] == 0 and int(advice["argv"][advice["argv"].index("--cores") + 1]) > 8
    assert _ids(light) == []
    assert heavy["nics"][0]["placement"] == {"cores": 8, "processes_per_core": 1} and _schema_errors(heavy) == []
    got = _json(shlex.split(advice["command"])[1:])
    assert got["drop_ratio_steady"] == pytest.approx(advice["predicted"]["loss_ratio"], abs=1e-12)


def test_smt_flow_meters_get_physical_cores(tmp_path):
    report = advise(
        ["napatech-nt100"], out_dir=tmp_path, gen="flows=16k,size=64,rate=100Gbps", cores=4, smt=True, duration="20ms"
    )
    assert "cores_not_smt_threads" in _ids(report)


@pytest.mark.parametrize(
    ("flow", "advice_id", "absent_for"),
    [
        ("client->soc READ 64B", "use_paths_1_and_2_concurrently", "client->soc READ 1MiB"),
        ("client->soc READ 16MiB", "segment_large_reads", "client->soc READ 4KiB"),
    ],
)
def test_bluefield2_path_choice_and_large_reads(tmp_path, flow, advice_id, absent_for):
    report = advise(["bluefield2"], out_dir=tmp_path, flows=(flow,))
    assert advice_id in _ids(report), report["nics"][0]
    advice = next(a for a in report["nics"][0]["advice"] if a["id"] == advice_id)
    got = _json(shlex.split(advice["command"])[1:])
    assert got["total_gbps"] == pytest.approx(advice["predicted"]["rx_gbps"], rel=1e-9)
    assert advice_id not in _ids(advise(["bluefield2"], out_dir=tmp_path, flows=(absent_for,)))


def test_tunnel_slices_get_the_vlan_advice_and_vlan_slices_do_not(tmp_path):
    tunnel = advise(
        ["connectx5"], out_dir=tmp_path, updates="insert 10k/s distinct-core group 1 tunnel", duration="20ms"
    )
    vlan = advise(["connectx5"], out_dir=tmp_path, updates="insert 10k/s distinct-core group 1 vlan", duration="20ms")
    assert "vlan_not_tunnel_slices" in _ids(tunnel) and "vlan_not_tunnel_slices" not in _ids(vlan)
    _assert_reproduced(tunnel)


def test_h2s_beyond_p_minus_n_gets_bounded_and_clients_gain(tmp_path):
    """seed 004 §4: independent client READs beside host->SoC WRITEs that take PCIe1: bounding the
    host<->SoC flow to P - N gives the clients their PCIe back (the total barely moves); the what-if's
    command reproduces it. Within P - N already, or as one application's shares, it is not advice."""
    mix = ("client->host READ 4KiB", "host->soc WRITE 64KiB")
    report = advise(["bluefield2"], out_dir=tmp_path, flows=mix)
    nic = report["nics"][0]
    advice = next(a for a in nic["advice"] if a["id"] == "bound_h2s_to_p_minus_n")
    assert advice["gain"]["client_share"] > 0.3 and abs(advice["gain"]["rx_share_of_offered"]) < 0.01
    assert advice["predicted"]["client_gbps"] > 2 * nic["predicted"]["client_gbps"]
    got = _json(shlex.split(advice["command"])[1:])
    assert sum(f["gbps"] for f in got["flows"] if f["flow"].startswith("client")) == pytest.approx(
        advice["predicted"]["client_gbps"], rel=1e-9
    )
    assert _schema_errors(report) == []
    followed = advise(["bluefield2"], out_dir=tmp_path, flows=(mix[0], advice["argv"][-1]))
    assert "bound_h2s_to_p_minus_n" not in _ids(followed)
    shares = advise(["bluefield2"], out_dir=tmp_path, flows=(f"{mix[0]} x 80%", f"{mix[1]} x 20%"))
    assert "bound_h2s_to_p_minus_n" not in _ids(shares)
    assert any(n.startswith("bound_h2s_to_p_minus_n tried") for n in shares["nics"][0]["notes"])


def _chain(tmp_path: Path, kind: str, count: int, groups: int, rate: Rate, packets: int) -> tuple[Path, Path]:
    """`count` rules of `kind` over groups 1..`groups` chained by jumps, and 1500 B traffic meeting them."""
    rules, trace = tmp_path / f"{kind}{groups}.flow", tmp_path / f"{kind}{groups}.pcap"
    generate_rules(kind, count, groups, str(rules), seed=5)
    config = GenConfig(flows=count, size=1500, rate=rate, duration_ns=None, packets=packets, seed=5)
    generate_pcap_for_rules(config, str(rules), str(trace))
    return rules, trace


def test_a_chain_of_16_tables_gets_merged_and_the_merge_keeps_every_packets_rule(tmp_path):
    """seed 000: rules spread over 4+ tables lose throughput. A 16-table chain of exact rules (the
    PAM'21 layout) merged into one table: the advice's command reproduces its gain, and the merged
    file sends every packet of a trace that meets all the rules to the queue the chain sent it to."""
    rules, trace = _chain(tmp_path, "exact5_tcp", 40_000, 16, Rate(100e9, "bps"), 200_000)
    report = advise(["connectx5"], out_dir=tmp_path / "w", rules=str(rules), trace=str(trace))
    nic = report["nics"][0]
    advice = next(a for a in nic["advice"] if a["id"] == "merge_chained_tables")
    assert nic["predicted"]["tables_traversed_mean"] > 4 and advice["predicted"]["tables_traversed_mean"] == 2.0
    assert advice["gain"]["rx_gbps"] > 5, advice["gain"]
    _assert_reproduced(report)
    merged = advice["argv"][advice["argv"].index("--rules") + 1]
    before, after = (_json(["classify", "--rules", f, "--pcap", str(trace)]) for f in (str(rules), merged))
    assert before["queues"] == after["queues"] and before["unmatched"] == after["unmatched"] == 0
    assert after["groups_traversed"] < before["groups_traversed"] / 2


def test_chains_that_merging_would_change_are_not_merged(tmp_path):
    """ClassBench-like rules (prefixes, port ranges) over 4 tables overlap: merged they would need
    priorities, so the what-if is noted, not tried; a flat Table 0 has no chain and no note."""
    acl, trace = _chain(tmp_path, "acl", 2_000, 4, Rate(10e9, "bps"), 20_000)
    report = advise(["connectx5"], out_dir=tmp_path / "w", rules=str(acl), trace=str(trace))
    assert "merge_chained_tables" not in _ids(report)
    assert any(n.startswith("merge_chained_tables not tried: ") for n in report["nics"][0]["notes"])
    flat = tmp_path / "flat.flow"
    generate_rules("exact5", 1_000, 0, str(flat), seed=5)
    plain = advise(["connectx5"], out_dir=tmp_path / "w", rules=str(flat), gen="flows=1000,size=1500,rate=10Gbps")
    assert not any("merge_chained_tables" in n for n in plain["nics"][0]["notes"])
