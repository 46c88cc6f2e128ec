"""`nicbench run SPEC --backend ovs`: a real Open vSwitch measured, its records, and its cleanup.

- A pvp.run spec runs unchanged on the ovs backend: the records say `backend = ovs`, come from a
  real ovs-vswitchd (megaflows it built, its flow setups) and go to `<experiment>--ovs`.
- Nothing is left behind: no namespace, no run directory, no daemon — also after the run is killed
  with SIGKILL: the next sandbox finds the leftovers and removes them.
- Points the backend cannot run are refused in one line before anything starts.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from helpers import peer

from nicbench.backends.ovs_sandbox import PREFIX, OvsSandbox, remove_leftovers
from nicbench.experiments import load_results

pytestmark = pytest.mark.peer

SPEC = """
[experiment]
name = "pvp-ovs"
target = "pvp.run"
repeat = 1
[params]
size = 64
[sweep]
flows = {flows}
"""


def _needs_ovs() -> None:
    for tool in ("ovsdb-server", "ovs-vswitchd", "ovs-vsctl", "ovs-ofctl", "ovs-appctl"):
        peer(tool, "openvswitch-switch")
    if os.geteuid() != 0:
        pytest.skip("the ovs backend needs root (network namespaces)")


def _ours() -> tuple[list[str], list[str]]:
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
    dirs = [p.name for p in Path(tempfile.gettempdir()).glob(f"{PREFIX}*")]
    return [n for n in netns if n.startswith(PREFIX)], dirs


def _cli(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nicbench.cli", *args], capture_output=True, text=True, **kw)


def test_a_pvp_spec_runs_on_real_ovs_and_cleans_up(tmp_path):
    _needs_ovs()
    remove_leftovers()
    spec = tmp_path / "pvp.toml"
    spec.write_text(SPEC.format(flows="[10, 200]"))  # the spec as for the virtual NICs; backend settings by --set
    proc = _cli(
        "run",
        str(spec),
        "--backend",
        "ovs",
        "--set",
        "ovs_packets=3000",
        "--results",
        str(tmp_path / "r"),
        "--jobs",
        "1",
    )
    assert proc.returncode == 0, proc.stderr
    df = load_results(tmp_path / "r" / "pvp-ovs--ovs")
    assert set(df["backend"]) == {"ovs"} and set(df["status"]) == {"ok"}
    scalar = df[df["t"].isna()].pivot_table(index="flows", columns="metric", values="value")
    # OVS built megaflows for the flows it saw (one exact IPv4 pair per flow: at most `flows`), set each
    # up with an upcall, and forwarded packets out of the VM port.
    assert (scalar["megaflows_software"] > 0).all() and (scalar["megaflows_software"] <= scalar.index).all()
    assert (scalar["ovs_flow_setups"] >= scalar["megaflows_software"]).all()
    assert (scalar["ovs_rules"] == 2 * scalar.index).all()
    assert (scalar["mpps"] > 0).all() and ((scalar["loss"] >= 0) & (scalar["loss"] <= 1)).all()
    meta = json.loads((tmp_path / "r" / "pvp-ovs--ovs" / "experiment.json").read_text())
    assert meta["backend"] == "ovs" and "Open vSwitch" in meta["environment"]["ovs_vswitchd"]
    assert _ours() == ([], [])
    # The virtual run's report draws the real OVS beside the model, as its own series.
    assert _cli("run", str(spec), "--results", str(tmp_path / "r"), "--jobs", "1").returncode == 0
    spec_with_figure = spec.read_text() + '[[figure]]\nkind = "line"\nx = "flows"\ny = "mpps"\nhue = "nic"\n'
    spec.write_text(spec_with_figure)
    assert _cli("run", str(spec), "--results", str(tmp_path / "r"), "--jobs", "1").returncode == 0
    proc = _cli("report", str(tmp_path / "r" / "pvp-ovs"), "-o", str(tmp_path / "rep" / "index.html"))
    assert proc.returncode == 0, proc.stderr
    page = (tmp_path / "rep" / "index.html").read_text()
    assert "Also drawn" in page and "ovs (this machine)" in page


def test_a_sigkilled_run_leaves_leftovers_the_next_sandbox_removes(tmp_path):
    _needs_ovs()
    remove_leftovers()
    spec = tmp_path / "pvp.toml"
    spec.write_text(SPEC.format(flows="[100]"))
    # 50M frames: still sending when it is killed.
    run = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "nicbench.cli",
            "run",
            str(spec),
            "--backend",
            "ovs",
            "--set",
            "ovs_packets=50M",
            "--results",
            str(tmp_path / "r"),
            "--jobs",
            "1",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not _ours()[0]:
        time.sleep(0.2)
    netns, dirs = _ours()
    assert netns and dirs, "the run never started its sandbox"
    time.sleep(1.0)  # daemons up
    vswitchd_pid = int((Path(tempfile.gettempdir()) / dirs[0] / "vswitchd.pid").read_text())
    os.killpg(run.pid, signal.SIGKILL)
    run.wait(timeout=30)
    assert _ours()[0], "SIGKILL cannot clean up: the namespace is still there"
    with OvsSandbox(ports=1) as ovs:
        assert set(ovs.removed_leftovers) >= set(netns) | set(dirs)
        assert ovs.appctl("version")  # the new sandbox works
    assert _ours() == ([], [])
    with pytest.raises(ProcessLookupError):
        os.kill(vswitchd_pid, 0)


def test_points_the_backend_cannot_run_are_refused_before_anything_starts(tmp_path):
    spec = tmp_path / "pvp.toml"
    spec.write_text(SPEC.format(flows="[10]") + "vxlan = [true]\n")
    proc = _cli("run", str(spec), "--backend", "ovs", "--results", str(tmp_path / "r"))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "VXLAN" in proc.stderr and not (tmp_path / "r" / "pvp-ovs--ovs" / "runs").exists()
    proc = _cli("run", str(spec), "--backend", "dpdk-on-mars", "--results", str(tmp_path / "r"))
    assert proc.returncode == 2 and "has no backend 'dpdk-on-mars' (it has: virtual, ovs)" in proc.stderr
