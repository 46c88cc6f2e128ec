"""Real peer: every rule `nicbench rules gen` and `nicbench rules convert --to testpmd` write (the
same native writer, called here in-process; from tc flower and ClassBench) must
be accepted by dpdk-testpmd's own flow parser (DPDK 22.11, Debian `dpdk-dev`); a line it must
reject is rejected (the oracle can say no).

No NIC is needed: the null PMD has no rte_flow ops, so a line the parser accepts ends in "Caught
PMD error ... Function not implemented", and a rejected one prints nothing in `--cmdline-file`
mode. After every line, `flow flush <10000+i>` prints "Invalid port <10000+i>": a numbered marker
that maps the output back to line i (as crates/nicbench-rules/tests/testpmd_oracle.rs does for the
parser's corpus). One testpmd process for all files."""

from __future__ import annotations

import os
import subprocess

import pytest
from helpers import peer

from nicbench.rules import convert_rules, generate_rules

MARKER_BASE = 10_000

TC = """\
tc filter add dev eth0 ingress protocol ip prio 1 flower dst_ip 10.0.0.0/24 ip_proto udp dst_port 80 action drop
tc filter add dev eth0 ingress protocol ip prio 2 flower src_ip 192.168.1.7 ip_proto tcp src_port 1000-2000 action drop
tc filter add dev eth0 ingress protocol ipv6 prio 3 flower dst_ip 2001:db8::/32 ip_proto udp action drop
"""
# ClassBench filter lines (as in shared/data/classbench): prefixes, port ranges, protocol, flags.
CLASSBENCH = (
    "@176.19.181.33/32\t90.145.23.162/32\t0 : 65535\t1550 : 1550\t0x06/0xFF\t0x0000/0x0200\t\n"
    "@10.0.0.0/8\t192.168.0.0/16\t1024 : 65535\t53 : 53\t0x11/0xFF\t0x0000/0x0000\t\n"
    "@0.0.0.0/0\t0.0.0.0/0\t0 : 65535\t0 : 65535\t0x00/0x00\t0x0000/0x0000\t\n"
)
BAD_LINE = "flow create 0 ingress pattern eth / ipv4 src iz 10.0.0.1 / end actions drop / end"


def parser_verdicts(lines: list[str], workdir) -> list[bool]:
    """For each line: did testpmd's parser accept it?"""
    script = workdir / "cmds.txt"
    script.write_text("".join(f"{line}\nflow flush {MARKER_BASE + k}\n" for k, line in enumerate(lines)) + "quit\n")
    proc = subprocess.run(
        [
            "timeout",
            "120",
            peer("dpdk-testpmd", "dpdk-dev"),
            "--no-huge",
            "-m",
            "256",
            "--no-pci",
            "--vdev",
            "net_null0",
            "--log-level=error",
            f"--file-prefix=nicbench_py_{os.getpid()}",
            "--",
            "-i",
            "--total-num-mbufs=2048",
            f"--cmdline-file={script}",
        ],
        capture_output=True,
        text=True,
    )
    accepted: list[bool | None] = [None] * len(lines)
    seen = False
    for line in proc.stderr.splitlines():
        if "Caught PMD error" in line:
            seen = True
        elif line.strip().startswith("Invalid port "):
            number = line.strip().removeprefix("Invalid port ")
            if number.isdigit() and 0 <= int(number) - MARKER_BASE < len(lines):
                accepted[int(number) - MARKER_BASE] = seen
            seen = False
    missing = [k for k, a in enumerate(accepted) if a is None]
    assert not missing, f"no testpmd marker for lines {missing[:5]} (exit {proc.returncode}): {proc.stderr[-2000:]}"
    return accepted


@pytest.mark.peer
def test_generated_and_converted_rules_are_valid_testpmd(tmp_path):
    files = []
    for kind, groups in (("exact5", 4), ("acl", 0), ("fw", 2), ("ipc", 0)):
        files.append(tmp_path / f"{kind}.flow")
        assert generate_rules(kind, 150, groups, str(files[-1]), seed=9) >= 150
    for name, text in (("rules.tc", TC), ("rules.classbench", CLASSBENCH)):
        source = tmp_path / name
        source.write_text(text)
        files.append(tmp_path / f"{name}.flow")
        assert convert_rules(str(source), "testpmd", str(files[-1])) == 3
    lines = [line for f in files for line in f.read_text().splitlines() if line.startswith("flow ")]
    assert len(lines) >= 4 * 150 + 6
    verdicts = parser_verdicts(lines + [BAD_LINE], tmp_path)
    assert verdicts[-1] is False, "testpmd accepted a line with a typo: the oracle cannot tell"
    rejected = [line for line, ok in zip(lines, verdicts) if not ok]
    assert not rejected, f"{len(rejected)} lines testpmd rejects, e.g. {rejected[:3]}"
