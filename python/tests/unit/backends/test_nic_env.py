"""NIC model and firmware in a backend's environment: `ethtool -i` and `devlink dev info` parsed.

This machine has no NIC with firmware, so the parsers read published outputs (`fixtures/nic_env/`,
each file names its source): `ethtool -i` of a ConnectX-4 Lx and `devlink dev info` of a two-port
mlx5 NIC from the netdev mailing list. The parsed values must be the printed ones; the collector
run on an interface without firmware (here: `lo`) records no firmware.
"""

from __future__ import annotations

from pathlib import Path

from nicbench.backends import nic_env
from nicbench.backends.nic_env import nic_environment, parse_devlink_info, parse_ethtool_info, rdma_netdevs

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "nic_env"


def test_ethtool_i_of_a_connectx4_lx():
    info = parse_ethtool_info((FIXTURES / "ethtool-i-connectx4lx.txt").read_text())
    assert info["driver"] == "mlx5_core" and info["version"] == "5.10.0+"
    assert info["firmware-version"] == "14.21.2328 (MT_2470112034)"
    assert info["bus-info"] == "0000:3b:00.0" and info["expansion-rom-version"] == ""
    assert info["supports-priv-flags"] == "yes" and len(info) == 10


def test_devlink_dev_info_of_a_two_port_mlx5():
    devices = parse_devlink_info((FIXTURES / "devlink-dev-info-mlx5.txt").read_text())
    assert list(devices) == ["pci/0000:08:00.0", "auxiliary/mlx5_core.eth.0", "pci/0000:08:00.1"]
    port0 = devices["pci/0000:08:00.0"]
    assert port0["driver"] == "mlx5_core" and port0["board.serial_number"] == "MT2314XZ00YA"
    assert port0["function.uid"] == "MT2314XZ00YAMLNXS0D0F0"
    assert port0["versions"] == {
        "fixed": {"fw.psid": "MT_0000000894"},
        "running": {"fw.version": "28.41.1000", "fw": "28.41.1000"},
        "stored": {"fw.version": "28.41.1000", "fw": "28.41.1000"},
    }
    assert devices["auxiliary/mlx5_core.eth.0"] == {"versions": {}, "driver": "mlx5_core.eth"}
    assert devices["pci/0000:08:00.1"]["versions"]["running"]["fw.version"] == "28.41.1000"


def test_the_collector_joins_both_tools(monkeypatch):
    outputs = {
        "ethtool": (FIXTURES / "ethtool-i-connectx4lx.txt").read_text(),
        "devlink": (FIXTURES / "devlink-dev-info-mlx5.txt").read_text().replace("0000:08:00.0", "0000:3b:00.0"),
    }
    calls = []

    def fake_run(argv):
        calls.append(argv)
        return outputs[argv[0]]

    monkeypatch.setattr(nic_env, "_run", fake_run)
    env = nic_environment("enp59s0f0", prefix="nic")
    assert calls == [["ethtool", "-i", "enp59s0f0"], ["devlink", "dev", "info", "pci/0000:3b:00.0"]]
    assert env == {
        "nic_driver": "mlx5_core",
        "nic_firmware": "14.21.2328 (MT_2470112034)",
        "nic_bus": "0000:3b:00.0",
        "nic_psid": "MT_0000000894",
        "nic_fw_running": "28.41.1000",
        "nic_fw_stored": "28.41.1000",
        "nic_board_serial": "MT2314XZ00YA",
    }


def test_an_interface_without_firmware_records_none(tmp_path):
    env = nic_environment("lo")
    assert "nic_firmware" not in env and "nic_psid" not in env
    assert rdma_netdevs("mlx5_0", root=tmp_path) == []
    (tmp_path / "mlx5_0" / "device" / "net" / "enp1s0f0np0").mkdir(parents=True)
    assert rdma_netdevs("mlx5_0", root=tmp_path) == ["enp1s0f0np0"]
