"""A private Open vSwitch 3.1 for oracle tests: ovsdb-server + ovs-vswitchd with
`--enable-dummy=override` in a temporary directory, one bridge `br0` on the dummy (userspace)
datapath with dummy ports p0 (OpenFlow 1) and p1 (OpenFlow 2). No kernel module, no veths, no
traffic leaves the process: packets are injected with `netdev-dummy/receive`.

Daemons are stopped by their pidfiles; the directory is removed."""

from __future__ import annotations

import itertools
import os
import re
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from helpers import peer

# netdev-dummy's receive queue holds 100 packets (NETDEV_DUMMY_MAX_QUEUE): a larger call drops the rest.
DUMMY_RX_BATCH = 100
# What a measurement injects per call: half the queue, so the PMD thread can lag one call behind.
SETUP_BATCH = 50


class Ovs:
    bridge = "br0"

    def __init__(self, dummy_flag: str = "--enable-dummy=override", pmd: bool = False) -> None:
        self.pmd = pmd
        for tool in ("ovsdb-tool", "ovsdb-server", "ovs-vsctl", "ovs-vswitchd", "ovs-ofctl", "ovs-appctl"):
            peer(tool, "openvswitch-switch")
        self.tmp = tempfile.TemporaryDirectory(prefix="nicbench-ovs-")
        self.dir = Path(self.tmp.name)
        d = str(self.dir)
        self.env = {**os.environ, "OVS_RUNDIR": d, "OVS_LOGDIR": d, "OVS_DBDIR": d, "OVS_SYSCONFDIR": d}
        self.db = f"unix:{d}/db.sock"
        self._run("ovsdb-tool", "create", f"{d}/conf.db")  # the installed vswitch schema (ovsdb-tool's default)
        self._run(
            "ovsdb-server",
            f"{d}/conf.db",
            f"--remote=punix:{d}/db.sock",
            f"--pidfile={d}/ovsdb.pid",
            "--detach",
            f"--log-file={d}/ovsdb.log",
        )
        self._run("ovs-vsctl", f"--db={self.db}", "--no-wait", "init")
        self._run(
            "ovs-vswitchd",
            self.db,
            *dummy_flag.split(),
            f"--pidfile={d}/vswitchd.pid",
            "--detach",
            f"--log-file={d}/vswitchd.log",
        )
        pid = (self.dir / "vswitchd.pid").read_text().strip()
        self.ctl = str(self.dir / f"ovs-vswitchd.{pid}.ctl")
        self._add_bridges()

    def _add_bridges(self) -> None:
        self._run(
            "ovs-vsctl",
            f"--db={self.db}",
            "add-br",
            "br0",
            "--",
            "set",
            "bridge",
            "br0",
            "datapath_type=dummy",
            "--",
            "add-port",
            "br0",
            "p0",
            "--",
            "set",
            "interface",
            "p0",
            "type=dummy",
            "ofport_request=1",
            "--",
            "add-port",
            "br0",
            "p1",
            "--",
            "set",
            "interface",
            "p1",
            "type=dummy",
            "ofport_request=2",
        )
        if self.pmd:
            # A PMD thread (on core 1) polls the ports instead of the main thread: OVS then counts its
            # cycles (pmd-perf-metrics), the upcalls' among them.
            self.vsctl(
                "set", "Open_vSwitch", ".", "other_config:pmd-cpu-mask=0x2", "other_config:pmd-perf-metrics=true"
            )
            self.vsctl("set", "interface", "p0", "type=dummy-pmd", "--", "set", "interface", "p1", "type=dummy-pmd")

    def vsctl(self, *args: str) -> str:
        return self._run("ovs-vsctl", f"--db={self.db}", *args)

    def _run(self, *args: str, stdin: str | None = None) -> str:
        done = subprocess.run(args, env=self.env, capture_output=True, text=True, input=stdin, timeout=30)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    def appctl(self, *args: str) -> str:
        return self._run("ovs-appctl", "-t", self.ctl, *args)

    def ports(self) -> list[dict]:
        """The bridge's ports as nicbench's request wants them (name, OpenFlow and datapath numbers)."""
        return self.bridge_ports(self.bridge)

    def bridge_ports(self, bridge: str) -> list[dict]:
        """One bridge's ports from `dpif/show` (its section: lines indented under `  BRIDGE:`)."""
        out, inside = [], False
        for line in self.appctl("dpif/show").splitlines():
            if re.match(r"^  \S+:$", line):
                inside = line.strip() == f"{bridge}:"
                continue
            m = re.match(r"^\s{4}(\S+) (\d+)/(\d+):", line)
            if inside and m:
                out.append({"name": m[1], "ofport": int(m[2]), "dp_port": int(m[3])})
        return out

    def reset(self, flows_text: str) -> None:
        """Only `flows_text`'s rules, an empty datapath and an empty MAC table."""
        self._run("ovs-ofctl", "del-flows", self.bridge)
        # Not dpctl/del-flows: the handlers' flow keys (ukeys, by the packet's hash) would survive it and an
        # identical packet in the next case would find its ukey and install no flow.
        self.appctl("revalidator/purge")
        self.appctl("fdb/flush")  # every bridge's MAC table
        self._run("ovs-ofctl", "add-flows", self.bridge, "-", stdin=flows_text)

    def receive(self, port: str, frame: bytes) -> None:
        self.appctl("netdev-dummy/receive", port, frame.hex())

    def receive_many(self, port: str, frames: list[bytes], batch: int = DUMMY_RX_BATCH) -> None:
        """`frames` in order, `batch` per `netdev-dummy/receive` call (it takes several packets)."""
        for i in range(0, len(frames), batch):
            self.appctl("netdev-dummy/receive", port, *(f.hex() for f in frames[i : i + batch]))

    def dump_flows(self) -> list[str]:
        return [
            line for line in self.appctl("dpctl/dump-flows").splitlines() if line and not line.startswith("flow-dump")
        ]

    def trace_megaflow(self, flow: str) -> str:
        out = self.appctl("ofproto/trace", "br0", flow)
        return next((line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("Megaflow:")), "")

    def stop(self) -> None:
        for name in ("vswitchd.pid", "ovsdb.pid"):
            pidfile = self.dir / name
            try:
                os.kill(int(pidfile.read_text().strip()), signal.SIGTERM)
            except (OSError, ValueError):
                pass
        time.sleep(0.2)
        self.tmp.cleanup()


class OvsTunnels(Ovs):
    """OVS's userspace tunnelling (Documentation/howto/userspace-tunneling.rst) on the dummy datapath:
    br-int (the OpenFlow bridge: p1, OpenFlow 1, and the VXLAN port vx, OpenFlow 2, remote_ip REMOTE_IP,
    key=flow) and br-phy (the underlay: p0, and the endpoint's IP LOCAL_IP/24 and MAC LOCAL_MAC on the
    bridge, a route to the remote network, the remote MAC in the neighbour cache; OVS's default NORMAL
    rule). `--enable-dummy` without `=override`: overriding turns the vxlan port into a dummy one too.
    `options:local_ip` is left out: with it, OVS 3.1 failed to route the encapsulated packet here
    ("native tunnel routing failed")."""

    bridge = "br-int"
    LOCAL_IP, REMOTE_IP = "172.31.1.1", "172.31.1.2"
    LOCAL_MAC, REMOTE_MAC = "aa:55:aa:55:00:00", "aa:55:aa:55:00:02"
    # A second VXLAN port with a fixed key (options:key=123) to another endpoint.
    KEYED_IP, KEYED_MAC, KEYED_VNI = "172.31.1.3", "aa:55:aa:55:00:03", 123

    def __init__(self) -> None:
        super().__init__("--enable-dummy --disable-system --disable-system-route")

    def _add_bridges(self) -> None:
        self._run(
            "ovs-vsctl",
            f"--db={self.db}",
            "add-br",
            "br-phy",
            "--",
            "set",
            "bridge",
            "br-phy",
            "datapath_type=dummy",
            f"other-config:hwaddr={self.LOCAL_MAC}",
            "--",
            "add-port",
            "br-phy",
            "p0",
            "--",
            "set",
            "interface",
            "p0",
            "type=dummy",
            "ofport_request=1",
        )
        self._run(
            "ovs-vsctl",
            f"--db={self.db}",
            "add-br",
            "br-int",
            "--",
            "set",
            "bridge",
            "br-int",
            "datapath_type=dummy",
            "--",
            "add-port",
            "br-int",
            "p1",
            "--",
            "set",
            "interface",
            "p1",
            "type=dummy",
            "ofport_request=1",
            "--",
            "add-port",
            "br-int",
            "vx",
            "--",
            "set",
            "interface",
            "vx",
            "type=vxlan",
            f"options:remote_ip={self.REMOTE_IP}",
            "options:key=flow",
            "ofport_request=2",
            "--",
            "add-port",
            "br-int",
            "vk",
            "--",
            "set",
            "interface",
            "vk",
            "type=vxlan",
            f"options:remote_ip={self.KEYED_IP}",
            f"options:key={self.KEYED_VNI}",
            "ofport_request=3",
        )
        self.appctl("netdev-dummy/ip4addr", "br-phy", f"{self.LOCAL_IP}/24")
        self.appctl("ovs/route/add", f"{self.LOCAL_IP}/24", "br-phy")
        self.appctl("tnl/arp/set", "br-phy", self.REMOTE_IP, self.REMOTE_MAC)
        self.appctl("tnl/arp/set", "br-phy", self.KEYED_IP, self.KEYED_MAC)

    def underlay(self) -> dict:
        """nicbench's `underlay` for this setup (numbers from `dpif/show`)."""
        phy = {p["name"]: p for p in self.bridge_ports("br-phy")}
        return {
            "port": "p0",
            "dp_port": phy["p0"]["dp_port"],
            "bridge_dp_port": phy["br-phy"]["dp_port"],
            "ip": self.LOCAL_IP,
            "mac": self.LOCAL_MAC,
        }

    def ports(self) -> list[dict]:
        """br-int's ports, the VXLAN port with its options."""
        out = self.bridge_ports("br-int")
        for p in out:
            if p["name"] == "vx":
                p["tunnel"] = {"remote_ip": self.REMOTE_IP, "dst_port": 4789, "remote_mac": self.REMOTE_MAC}
            if p["name"] == "vk":
                p["tunnel"] = {
                    "remote_ip": self.KEYED_IP,
                    "key": self.KEYED_VNI,
                    "dst_port": 4789,
                    "remote_mac": self.KEYED_MAC,
                }
        return out


def exact_udp_rules(n: int, out: str = "p1", sport: int = 1000) -> str:
    """`n` exact 5-tuple UDP rules (nw_src 10.x.y.z from 10.0.0.0, to 20.0.0.1, ports `sport` → 53)."""
    return "".join(
        f"priority=10,udp,nw_src={_src(i)},nw_dst=20.0.0.1,tp_src={sport},tp_dst=53,actions=output:{out}\n"
        for i in range(n)
    )


def _src(i: int) -> str:
    return f"10.{(i >> 16) & 255}.{(i >> 8) & 255}.{i & 255}"


def udp_flow_frames(n: int, sport: int = 1000) -> list[bytes]:
    """One 64-byte UDP frame per rule of `exact_udp_rules(n, sport=sport)`, in rule order (built by
    hand: no scapy)."""
    import struct

    frames = []
    for i in range(n):
        udp = struct.pack("!HHHH", sport, 53, 16, 0) + b"x" * 8
        src = bytes(int(b) for b in _src(i).split("."))
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0, src, bytes([20, 0, 0, 1]))
        frames.append(bytes.fromhex("020000000002020000000001") + b"\x08\x00" + ip + udp + b"\0" * 4)
    return frames


def tsc_hz() -> float:
    """The TSC's rate [Hz], which OVS's PMD cycle counters count in (rdtsc; OVS built without DPDK
    prints µs as if the TSC ran at 1 Hz, so cycles are converted here): the kernel's "tsc: Detected
    ... MHz" (dmesg), else /proc/cpuinfo's "cpu MHz" when the CPU has constant_tsc."""
    try:
        log = subprocess.run(["dmesg"], capture_output=True, text=True, timeout=10).stdout
        m = re.search(r"tsc: Detected ([\d.]+) MHz", log)
        if m:
            return float(m[1]) * 1e6
    except (OSError, subprocess.SubprocessError):
        pass
    info = Path("/proc/cpuinfo").read_text()
    m = re.search(r"^cpu MHz\s*:\s*([\d.]+)", info, re.M)
    if m and "constant_tsc" in info:
        return float(m[1]) * 1e6
    raise RuntimeError("cannot tell the TSC's rate (no 'tsc: Detected' in dmesg, no constant_tsc)")


def pmd_counters(ovs: Ovs) -> dict:
    """The PMD thread's counters since the last `dpif-netdev/pmd-stats-clear`: packets, upcalls,
    lost upcalls, processing cycles, and OVS's cycles per upcall (PMD_CYCLES_UPCALL: the cycles
    spent in the upcall itself, dp_netdev_upcall → xlate → flow put, counted by the PMD around it)."""
    stats = ovs.appctl("dpif-netdev/pmd-stats-show").split("main thread:")[0]
    perf = ovs.appctl("dpif-netdev/pmd-perf-show")

    def num(pattern: str, text: str) -> float:
        m = re.search(pattern, text)
        return float(m[1]) if m else 0.0

    summary = [line for line in perf.splitlines() if line.strip()][-1].split()
    return {
        "packets": int(num(r"packets received: (\d+)", stats)),
        "upcalls": int(num(r"miss with success upcall: (\d+)", stats)),
        "failed_upcalls": int(num(r"miss with failed upcall: (\d+)", stats)),
        "lost_upcalls": int(num(r"Lost upcalls:\s+(\d+)", perf)),
        "processing_cycles": num(r"processing cycles: (\d+)", stats),
        "cycles_per_upcall": float(summary[-1]),
    }


def coverage(ovs: Ovs, names: tuple[str, ...]) -> dict[str, int]:
    """Totals of coverage counters (`coverage/show`; counters OVS never hit are 0). OVS folds the
    threads' counts in once a second, so this waits that long first."""
    time.sleep(1.1)
    out = ovs.appctl("coverage/show")
    return {n: int(m[1]) if (m := re.search(rf"^{n}\s.*total: (\d+)", out, re.M)) else 0 for n in names}


_RUNS = itertools.count()
COVERAGE = (
    "upcall_flow_limit_hit",
    "dpif_flow_put",
    "handler_duplicate_upcall",
    "xlate_actions",
    "upcall_ukey_contention",
)


def _wait_packets(ovs: Ovs, n: int, timeout_s: float = 20.0) -> dict:
    deadline = time.monotonic() + timeout_s
    while True:
        c = pmd_counters(ovs)
        if c["packets"] >= n or time.monotonic() > deadline:
            return c
        time.sleep(0.02)


def measure_setup(ovs: Ovs, n: int, batch: int = SETUP_BATCH) -> dict:
    """Flow set-up on the real OVS (userspace datapath, `Ovs(pmd=True)`): `n` exact 5-tuple rules, one
    packet per rule (every packet a new megaflow, an upcall), then the same packets again (every
    packet a megaflow hit).

    The injection (one `ovs-appctl netdev-dummy/receive` per `batch` packets, a process and a unixctl
    round trip each) runs on other threads and processes; what is measured is on the PMD thread:
    OVS's own cycles per upcall (`pmd-perf-show`), and, as a cross-check, the PMD's processing cycles
    of the miss pass minus those of the hit pass over the same packets (what a miss costs beyond a
    hit). In dpif-netdev the upcall runs inline on the PMD thread (dp_netdev_upcall), not on handler
    threads. Also: the wall-clock rate of the miss pass (set by the injection), the revalidators'
    dump duration with the `n` flows installed (`upcall/show`, whole ms) and coverage counters."""
    hz = tsc_hz()
    # A new source port each run: packets equal to an earlier run's could find that run's flow keys
    # (ukeys), which outlive `revalidator/purge` for a moment, and set up no flow.
    sport = 1000 + next(_RUNS)
    frames = udp_flow_frames(n, sport)
    ovs.reset(exact_udp_rules(n, sport=sport))
    cov0 = coverage(ovs, COVERAGE)
    ovs.appctl("dpif-netdev/pmd-stats-clear")
    t0 = time.perf_counter()
    ovs.receive_many("p0", frames, batch)
    miss = _wait_packets(ovs, n)
    wall_s = time.perf_counter() - t0
    flows = len(ovs.dump_flows())
    ovs.appctl("dpif-netdev/pmd-stats-clear")
    ovs.receive_many("p0", frames, batch)
    hit = _wait_packets(ovs, n)
    # The revalidator dumps every 500 ms: read `upcall/show` for 1.2 s and keep the dumps' durations
    # read while the flows were installed (it prints the last dump's duration, in whole ms).
    dumps, revalidators = [], 0
    for _ in range(6):
        time.sleep(0.2)
        show = ovs.appctl("upcall/show")
        current = int(re.search(r"flows\s+: \(current (\d+)\)", show)[1])
        revalidators = len(re.findall(r"^\s+\d+: \(keys \d+\)", show, re.M))
        if current >= 0.9 * n:
            dumps.append((int(re.search(r"dump duration : (\d+)ms", show)[1]), current))
    cov1 = coverage(ovs, COVERAGE)
    dump_ms, n_flows = sorted(dumps)[len(dumps) // 2] if dumps else (None, 0)
    us_per_upcall = miss["cycles_per_upcall"] / hz * 1e6
    delta_us = (miss["processing_cycles"] - hit["processing_cycles"]) / max(miss["upcalls"], 1) / hz * 1e6
    return {
        "flows_offered": n,
        "sport": sport,
        "batch": batch,
        "tsc_hz": hz,
        "miss_pass": miss,
        "hit_pass": hit,
        "datapath_flows": flows,
        "us_per_upcall": us_per_upcall,
        "setup_per_s_one_thread": 1e6 / us_per_upcall,
        "miss_minus_hit_us": delta_us,
        "wall_s": wall_s,
        "wall_upcalls_per_s": miss["upcalls"] / wall_s,
        "dump_ms": dump_ms,
        "dump_flows": n_flows,
        "revalidator_threads": revalidators,
        "us_per_flow_dumped": dump_ms * 1000 * revalidators / n_flows if dumps else None,
        "coverage": {k: cov1[k] - cov0[k] for k in COVERAGE},
    }
