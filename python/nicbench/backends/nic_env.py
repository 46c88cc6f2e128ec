"""The NIC in a backend's environment: model and firmware from `ethtool -i IFACE` and `devlink dev info`.

`nic_environment(iface)` runs both where they exist and returns flat `experiment.json` entries
(`nic_driver`, `nic_firmware`, `nic_bus`, `nic_psid`, `nic_fw_running`, `nic_fw_stored`,
`nic_board_serial`); tools or devices that are missing leave their entries out (a virtual NIC has no
firmware). The parsers read the tools' text output (`ethtool -i`: "key: value" lines; `devlink dev
info`: a device handle line, then indented "key value" lines and `versions:` → `fixed:` / `running:`
/ `stored:` sections).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

__all__ = ["parse_ethtool_info", "parse_devlink_info", "nic_environment", "rdma_netdevs"]

_TIMEOUT_S = 10.0


def parse_ethtool_info(text: str) -> dict[str, str]:
    """`ethtool -i IFACE`: its "key: value" lines (empty values kept as "")."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.strip().partition(":")
        if sep and key and " " not in key:
            out[key] = value.strip()
    return out


def parse_devlink_info(text: str) -> dict[str, dict[str, Any]]:
    """`devlink dev info`: per device handle (e.g. `pci/0000:08:00.0`), its attributes (`driver`,
    `serial_number`, ...) and `versions` as {"fixed": {...}, "running": {...}, "stored": {...}}."""
    devices: dict[str, dict[str, Any]] = {}
    current: dict[str, Any] | None = None
    section: str | None = None
    section_indent = 0
    in_versions = False
    for raw in text.splitlines():
        if not raw.strip():
            continue
        indent = len(raw) - len(raw.lstrip())
        line = raw.strip()
        if indent == 0 and line.endswith(":"):
            current = devices.setdefault(line[:-1], {"versions": {}})
            in_versions, section = False, None
        elif current is None:
            continue
        elif line == "versions:":
            in_versions, section = True, None
        elif in_versions and line.endswith(":") and " " not in line:
            section, section_indent = line[:-1], indent
            current["versions"].setdefault(section, {})
        elif in_versions and section is not None and indent > section_indent:
            key, _, value = line.partition(" ")
            current["versions"][section][key] = value.strip()
        else:
            in_versions = False
            key, _, value = line.partition(" ")
            current[key] = value.strip()
    return devices


def _run(argv: list[str]) -> str:
    if shutil.which(argv[0]) is None:
        return ""
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return proc.stdout if proc.returncode == 0 else ""


def nic_environment(iface: str, prefix: str = "nic") -> dict[str, str]:
    """The NIC behind `iface` as environment entries (`<prefix>_driver`, `<prefix>_firmware`, ...)."""
    env: dict[str, str] = {}
    info = parse_ethtool_info(_run(["ethtool", "-i", iface]))
    for key, name in (("driver", "driver"), ("firmware-version", "firmware"), ("bus-info", "bus")):
        if info.get(key):
            env[f"{prefix}_{name}"] = info[key]
    bus = info.get("bus-info", "")
    if bus and ":" in bus:
        handle = f"pci/{bus}"
        dev = parse_devlink_info(_run(["devlink", "dev", "info", handle])).get(handle, {})
        versions = dev.get("versions", {})
        for value, name in (
            (versions.get("fixed", {}).get("fw.psid"), "psid"),
            (versions.get("running", {}).get("fw.version"), "fw_running"),
            (versions.get("stored", {}).get("fw.version"), "fw_stored"),
            (dev.get("board.serial_number"), "board_serial"),
        ):
            if value:
                env[f"{prefix}_{name}"] = value
    return env


def rdma_netdevs(device: str, root: Path = Path("/sys/class/infiniband")) -> list[str]:
    """The network interfaces of an RDMA device (its PCI function's `net/`), sorted."""
    net = root / device / "device" / "net"
    return sorted(p.name for p in net.iterdir()) if net.is_dir() else []
