"""`nicbench gen --for-rules`: traffic that meets a chosen share of a rule file's rules, checked by
`classify` (the software classifier) and by the virtual ConnectX-5 (`simulate`), and the rules no
frame can meet named with their reason."""

from __future__ import annotations

import json

import pytest

# A jump into group 1, four rules there (one shadowed by a wider one before it), a rule in a group
# no rule jumps to, an SCTP rule the generator cannot write, and a catch-all.
RULES = (
    "flow create 0 ingress pattern eth / ipv4 / end actions jump group 1 / end\n"
    "flow create 0 group 1 ingress pattern eth / ipv4 src is 10.0.0.1 / udp dst is 53 / end"
    " actions queue index 3 / end\n"
    "flow create 0 group 1 priority 1 ingress pattern eth / ipv4 dst spec 192.168.0.0 dst prefix 16 / end"
    " actions queue index 1 / end\n"
    "flow create 0 group 1 priority 2 ingress pattern eth / ipv4 dst spec 192.168.7.0 dst prefix 24 / end"
    " actions drop / end\n"
    "flow create 0 group 1 priority 3 ingress pattern eth / ipv4 / tcp dst spec 1000 dst last 2000 dst mask 0xffff"
    " / end actions drop / end\n"
    "flow create 0 group 9 ingress pattern eth / ipv4 / end actions drop / end\n"
    "flow create 0 group 1 priority 4 ingress pattern eth / ipv4 / sctp / end actions drop / end\n"
    "flow create 0 group 1 priority 5 ingress pattern eth / end actions queue index 0 / end\n"
)


def gen_for(cli, tmp_path, rules, *extra):
    out = tmp_path / "t.pcap"
    proc = cli("gen", "--for-rules", str(rules), "--size", "64", "--packets", "2000", "-o", str(out), "--json", *extra)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout), out


def classify(cli, rules, pcap):
    proc = cli("classify", "--rules", str(rules), "--pcap", str(pcap), "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_every_reachable_rule_is_met_and_each_unreachable_one_has_its_reason(cli, tmp_path):
    rules = tmp_path / "r.flow"
    rules.write_text(RULES)
    out, pcap = gen_for(cli, tmp_path, rules)
    assert (out["rules_total"], out["rules_reachable"], out["rules_met"]) == (8, 5, 5)
    reasons = {m["line"]: m["kind"] for m in out["unreachable"]}
    assert reasons == {4: "shadowed", 6: "unreachable", 7: "header"}
    assert "line 3 takes its packets first" in next(m["reason"] for m in out["unreachable"] if m["line"] == 4)
    report = classify(cli, rules, pcap)
    assert report["rules_matched"] == out["rules_met"]
    assert sorted(r["line"] for r in report["rules"]) == [1, 2, 3, 5, 8]
    assert report["unmatched"] == 0


@pytest.mark.parametrize("share", [0.1, 0.5, 1.0])
def test_classify_matches_the_share_asked_of_a_generated_rule_set(cli, tmp_path, share):
    rules = tmp_path / "r.flow"
    proc = cli("rules", "gen", "--kind", "exact5", "--count", "400", "--groups", "2", "-o", str(rules))
    assert proc.returncode == 0, proc.stderr
    out, pcap = gen_for(cli, tmp_path, rules, "--hit-share", str(share), "--zipf", "1.2")
    total = out["rules_total"]
    # The share asked, up to the jump rules of the last target's path (two groups here).
    assert share * total <= out["rules_met"] <= share * total + 3
    report = classify(cli, rules, pcap)
    assert report["rules_matched"] == out["rules_met"]
    assert report["rules_total"] == total


def test_simulate_counts_the_rules_the_traffic_met(cli, tmp_path):
    rules = tmp_path / "r.flow"
    assert cli("rules", "gen", "--count", "300", "--groups", "2", "-o", str(rules)).returncode == 0
    out, pcap = gen_for(cli, tmp_path, rules, "--hit-share", "0.5")
    proc = cli("simulate", "--nic", "connectx5", "--rules", str(rules), "--trace", str(pcap), "--json")
    assert proc.returncode == 0, proc.stderr
    met = json.loads(proc.stdout)["model"]["rules_met"]
    assert (met["total"], met["matched"]) == (out["rules_total"], out["rules_met"])
    # Traffic for no rule: only the layout's catch-alls and jumps, and the output says so.
    other = tmp_path / "other.pcap"
    assert cli("gen", "--flows", "100", "--packets", "1000", "-o", str(other)).returncode == 0
    proc = cli("simulate", "--nic", "connectx5", "--rules", str(rules), "--trace", str(other))
    assert proc.returncode == 0, proc.stderr
    assert "none met" in " ".join(proc.stdout.split())
    report = classify(cli, rules, other)
    assert report["rules_with_fields_matched"] == 0 and report["rules_matched"] > 0


def test_the_text_output_names_the_share_and_the_reasons(cli, tmp_path):
    rules = tmp_path / "r.flow"
    rules.write_text(RULES)
    proc = cli("gen", "--for-rules", str(rules), "--size", "64", "--packets", "100", "-o", str(tmp_path / "t.pcap"))
    assert proc.returncode == 0, proc.stderr
    text = " ".join(proc.stdout.split())
    assert "rules met: 5 of 8 (62.5%; asked 100.0%; 5 reachable by any frame)" in text
    assert f"{rules}:6: no chain of jump rules leads to its group 9" in text
    assert "only 5 of 8 can be met" in text
