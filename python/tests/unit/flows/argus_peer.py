"""Run the real Argus 3.0 (`argus`, `ra`, `racluster`) on a pcap and read its records as dicts."""

from __future__ import annotations

import csv
import io
import subprocess
from pathlib import Path

from helpers import peer

RA_FIELDS = "stime ltime dur proto saddr sport dir daddr dport spkts dpkts sbytes dbytes state".split()


def _port(text: str) -> int | str:
    # ICMP "ports" are printed as hex type/code and id (e.g. 0x0008); keep them as strings.
    text = text.strip()
    return int(text) if text.isdigit() else text


def run_argus(pcaps: list[Path], workdir: Path) -> dict[Path, Path]:
    """`argus -X -S 60 -r pcap -w OUT.argus` for every pcap, all at once (Argus idles ~1 s before it
    exits, so running them in parallel keeps the tests fast). Returns pcap → .argus file.

    `-X` ignores /etc/argus.conf (its 5 s status interval would split flows); `-S 60` is the active
    interval nicbench's Argus mode uses."""
    peer("argus", "argus-server")
    outs = {pcap: workdir / f"{pcap.stem}.argus" for pcap in pcaps}
    procs = []
    for pcap, out in outs.items():
        out.unlink(missing_ok=True)  # argus -w appends to an existing file
        procs.append(
            subprocess.Popen(
                ["argus", "-X", "-S", "60", "-r", str(pcap), "-w", str(out)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
        )
    for proc in procs:
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
    return outs


def read_argus(argus_file: Path, merge: bool = False) -> list[dict]:
    """Records of an Argus file via `ra` (status records as emitted) or `racluster` (merged per
    flow), as dicts with ra's column names. Management records (`man`) are dropped."""
    reader = peer("racluster" if merge else "ra", "argus-client")
    text = subprocess.run(
        [reader, "-n", "-u", "-c", ",", "-r", str(argus_file), "-s", *RA_FIELDS],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    records = []
    for row in csv.DictReader(io.StringIO(text)):
        if row["Proto"] == "man":
            continue
        records.append(
            {
                "StartTime": float(row["StartTime"]),
                "LastTime": float(row["LastTime"]),
                "Proto": row["Proto"],
                "SrcAddr": row["SrcAddr"],
                "Sport": _port(row["Sport"]),
                "Dir": row["Dir"].strip(),
                "DstAddr": row["DstAddr"],
                "Dport": _port(row["Dport"]),
                "SrcPkts": int(row["SrcPkts"]),
                "DstPkts": int(row["DstPkts"]),
                "SrcBytes": int(row["SrcBytes"]),
                "DstBytes": int(row["DstBytes"]),
                "State": row["State"],
            }
        )
    return records
