"""`nicbench rules check|convert|gen` as a user runs them."""

from __future__ import annotations

import json

from helpers import classbench_file

GOOD = (
    "# a small, real-world-style rule file\n"
    "flow create 0 group 0 priority 0 ingress pattern eth / ipv4 / end actions jump group 1 / end\n"
    "flow create 0 group 1 priority 1 ingress pattern eth / ipv4 src is 10.0.0.1"
    " dst spec 10.0.0.0 dst mask 255.255.255.0 / udp dst is 4789 / vxlan vni is 42"
    " / end actions queue index 3 / count / end\n"
    "flow create 0 group 1 priority 2 ingress pattern eth / ipv4 / tcp dst is 80 / end actions drop / end\n"
)

BAD = """\
flow create 0 ingress pattern eth / ipv4 src is 10.0.0.1 / end actions queue index 1 / end
flow create 0 ingress pattern eth / ipv4 src iz 10.0.0.1 / end actions queue index 1 / end
flow create 0 ingress pattern eth / end actions dropp / end
"""


def test_check_counts_groups_match_types_and_actions(cli, tmp_path):
    rules = tmp_path / "good.flow"
    rules.write_text(GOOD)
    proc = cli("rules", "check", str(rules), "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    s = report["summary"]
    assert report["syntax"] == "testpmd" and report["errors"] == []
    assert s["rules"] == 3
    assert s["groups"] == {"0": 1, "1": 2}
    assert s["actions"]["jump"] == 1 and s["actions"]["queue"] == 1 and s["actions"]["drop"] == 1
    assert s["match_types"]["eth / ipv4(src,dst~) / udp(dst) / vxlan(vni)"] == 1


def test_check_first_error_has_line_and_column(cli, tmp_path):
    rules = tmp_path / "bad.flow"
    rules.write_text(BAD)
    proc = cli("rules", "check", str(rules))
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1
    assert f"{rules}:2:" in lines[0] and "iz" in lines[0]
    assert "Traceback" not in proc.stderr


def test_check_keep_going_reports_every_error(cli, tmp_path):
    rules = tmp_path / "bad.flow"
    rules.write_text(BAD)
    proc = cli("rules", "check", str(rules), "--keep-going")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 2
    assert f"{rules}:2:" in lines[0] and f"{rules}:3:" in lines[1]


def test_check_undetectable_syntax(cli, tmp_path):
    rules = tmp_path / "rules.txt"
    rules.write_text("hello world\n")
    proc = cli("rules", "check", str(rules))
    assert proc.returncode == 2 and "--syntax" in proc.stderr


def test_convert_to_tc_and_back_is_identity(cli, tmp_path):
    src = tmp_path / "r.flow"
    src.write_text(
        "flow create 0 priority 3 ingress pattern eth / ipv4 dst spec 10.0.0.0 dst mask 255.255.255.0 "
        "/ udp dst is 80 / end actions drop / end\n"
    )
    tc = tmp_path / "r.tc"
    back = tmp_path / "back.flow"
    assert cli("rules", "convert", str(src), "--to", "tc", "-o", str(tc)).returncode == 0
    assert "flower" in tc.read_text() and "dst_port 80" in tc.read_text()
    assert cli("rules", "convert", str(tc), "--to", "testpmd", "-o", str(back)).returncode == 0
    first = json.loads(cli("rules", "check", str(src), "--json").stdout)["summary"]
    again = json.loads(cli("rules", "check", str(back), "--json").stdout)["summary"]
    assert first == again


def test_conversions_keep_precedence(cli, tmp_path):
    # testpmd priority 0 is tc prio 1 (tc's first; prio 0 would ask the kernel for one, which puts the
    # filter below those already there), so every converted filter names its prio.
    src = tmp_path / "r.flow"
    src.write_text(
        "flow create 0 priority 0 ingress pattern eth / ipv4 dst is 10.0.0.1 / end actions drop / end\n"
        "flow create 0 priority 1 ingress pattern eth / ipv4 / end actions passthru / end\n"
    )
    proc = cli("rules", "convert", str(src), "--to", "tc")
    assert proc.returncode == 0, proc.stderr
    assert [" prio 1 " in line or " prio 2 " in line for line in proc.stdout.splitlines()] == [True, True]
    assert " prio 1 " in proc.stdout.splitlines()[0]
    # tc filters added without prio get the kernel's automatic ones (49152, then one below the lowest), so
    # the LAST one added matches first: in testpmd it gets the better (lower) priority.
    tc = tmp_path / "auto.tc"
    tc.write_text(
        "tc filter add dev eth0 ingress protocol ip flower dst_ip 10.0.0.1 action drop\n"
        "tc filter add dev eth0 ingress protocol ip flower action pass\n"
    )
    proc = cli("rules", "convert", str(tc), "--to", "testpmd")
    assert proc.returncode == 0, proc.stderr
    first, second = proc.stdout.splitlines()
    assert " priority 49151 " in first and " priority 49150 " in second, proc.stdout


def test_convert_unexpressible_is_a_clear_error(cli, tmp_path):
    src = tmp_path / "r.flow"
    src.write_text("flow create 0 ingress pattern eth / end actions queue index 1 / end\n")
    proc = cli("rules", "convert", str(src), "--to", "tc")
    assert proc.returncode == 2 and "queue" in proc.stderr


def test_gen_pam21_layout(cli, tmp_path):
    out = tmp_path / "chain.flow"
    proc = cli("rules", "gen", "--kind", "exact5", "--count", "1000", "--groups", "4", "--seed", "5", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    s = json.loads(cli("rules", "check", str(out), "--json").stdout)["summary"]
    # 1000 rules over groups 1..4, a group-0 jump, and one default per group.
    assert s["rules"] == 1000 + 1 + 4
    assert s["groups"]["0"] == 1
    assert all(abs(s["groups"][str(g)] - 251) <= 1 for g in range(1, 5))
    assert s["actions"]["jump"] == 1 + 3
    # The summary line and --json keep --count apart from the layout's own rules.
    assert "1,005 rules" in proc.stdout
    assert "1,000 exact5 rules over groups 1..4, plus 5 jump and default" in proc.stdout
    again = json.loads(
        cli("rules", "gen", "--count", "1000", "--groups", "4", "--seed", "5", "-o", str(out), "--json").stdout
    )
    assert (again["rules"], again["count"], again["layout_rules"]) == (1005, 1000, 5)


def test_gen_root_table_only(cli, tmp_path):
    out = tmp_path / "root.flow"
    assert cli("rules", "gen", "--count", "2k", "--groups", "0", "-o", str(out)).returncode == 0
    s = json.loads(cli("rules", "check", str(out), "--json").stdout)["summary"]
    assert s["groups"] == {"0": 2000}


def test_classbench_file_checks(cli):
    acl = classbench_file("acl1_1k")
    proc = cli("rules", "check", str(acl), "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["syntax"] == "classbench"
    assert report["summary"]["rules"] == sum(1 for line in acl.read_text().splitlines() if line.strip())
