"""scripts/sync_inherited.py: a stale inherited copy takes the base's value and provenance, nothing else
in the file changes, and a few-shot profile is refused."""

from __future__ import annotations

import importlib.util
import shutil
import tomllib

from helpers import REPO

SCRIPT = REPO / "scripts" / "sync_inherited.py"


def _load(monkeypatch, folder):
    monkeypatch.setenv("NICBENCH_PROFILES", str(folder))
    spec = importlib.util.spec_from_file_location("sync_inherited", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_a_refit_base_is_copied_into_the_inherited_parameters_only(tmp_path, monkeypatch):
    folder = tmp_path / "profiles"
    shutil.copytree(REPO / "profiles", folder)
    base = folder / "connectx5.toml"
    base.write_text(
        base.read_text().replace(
            "[param.steering_cache_entries]\nvalue = ", "[param.steering_cache_entries]\nvalue = 12345.5 #", 1
        )
    )
    before = (folder / "connectx5-25g.toml").read_text()
    sync = _load(monkeypatch, folder)
    assert sync.sync("connectx5-25g") == [
        f"connectx5-25g.steering_cache_entries: "
        f"{tomllib.loads(before)['param']['steering_cache_entries']['value']!r} -> "
        "12345.5"
    ]
    after = (folder / "connectx5-25g.toml").read_text()
    assert tomllib.loads(after)["param"]["steering_cache_entries"]["value"] == 12345.5
    changed = [(a, b) for a, b in zip(before.splitlines(), after.splitlines()) if a != b]
    assert len(changed) == 1 and changed[0][1] == "value = 12345.5"
    assert sync.sync("connectx5-25g") == []
    assert sync.main(["connectx6"]) == 2
