"""Every model of the native registry is complete: its contracts are committed, the one binding
function runs it, an experiment target runs it, a Python front builds its requests and a command
runs it, and its generated docs page is current.

This is the check behind docs/contributing.md's "adding a model": a model registered in
`crates/nicbench-models/src/lib.rs` without the rest fails here, naming what is missing.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from nicbench import models
from nicbench.errors import NicbenchError

ROOT = Path(__file__).resolve().parents[3]
CONTRACTS = ROOT / "docs" / "contracts"
PAGES = ROOT / "docs" / "models"


def test_the_registry_lists_the_models_with_their_declarations():
    names = models.names()
    assert {"connectx", "offpath", "flowhost", "pvp", "vswitch"} <= set(names)
    assert len(names) == len(set(names))
    for entry in models.registry():
        assert entry["summary"] and entry["rust_type"].startswith("nicbench_models::"), entry
        assert entry["contracts"] == [f"{entry['name']}.request", f"{entry['name']}.result"]


@pytest.mark.parametrize("name", models.names())
def test_each_model_has_its_contracts_committed(name):
    for which in models.CONTRACTS:
        path = CONTRACTS / f"{name}.{which}.schema.json"
        assert path.is_file(), f"{path} missing: NICBENCH_BLESS=1 cargo test -p nicbench-models contract"
        assert json.loads(path.read_text()) == models.contract_schema(name, which), f"{path} is stale"


@pytest.mark.parametrize("name", models.names())
def test_the_one_binding_function_runs_each_model(name):
    # A field no contract has reaches the model's own request parser, which names it: the binding
    # dispatched to that model (and refuses unknown fields, as the schemas say).
    with pytest.raises(NicbenchError, match="unknown field `no_such_field`"):
        models.run(name, {"no_such_field": 1})
    with pytest.raises(NicbenchError, match="no model 'warp'"):
        models.run("warp", {})


@pytest.mark.parametrize("name", models.names())
def test_each_model_has_an_experiment_target(name):
    from nicbench.experiments.targets import all_targets

    assert any(t.split(".", 1)[0] == name for t in all_targets()), (
        f"no experiment target '{name}.*' (python/nicbench/experiments/targets/{name}.py)"
    )


@pytest.mark.parametrize("name", models.names())
def test_each_model_has_a_python_front_and_a_command(name):
    from importlib import import_module

    from nicbench.cli import COMMANDS

    front = models.front(name)
    assert front, f"no python/nicbench/{name}.py and no module lists {name!r} in its MODELS"
    import_module(f"nicbench.{front}")
    assert any(module == front for module, _ in COMMANDS.values()), (
        f"no command of model {name!r}: python/nicbench/cli/{front}.py with SUMMARIES and COMMANDS"
    )


@pytest.mark.parametrize("name", models.names())
def test_each_model_has_a_current_docs_page(name):
    import importlib.util

    spec = importlib.util.spec_from_file_location("model_pages", ROOT / "scripts" / "model_pages.py")
    pages = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pages)
    entry = next(e for e in models.registry() if e["name"] == name)
    want = pages.page(entry, ROOT)
    path = PAGES / f"{name}.md"
    if os.environ.get("NICBENCH_BLESS") == "1":
        PAGES.mkdir(exist_ok=True)
        path.write_text(want, encoding="utf-8")
    assert path.is_file(), f"{path} missing: python scripts/model_pages.py docs/models"
    assert path.read_text(encoding="utf-8") == want, f"{path} is stale: python scripts/model_pages.py docs/models"


def test_no_page_or_contract_of_a_model_that_is_gone():
    names = set(models.names())
    for path in PAGES.glob("*.md"):
        assert path.stem in names, f"{path} documents no registered model"
    for path in CONTRACTS.glob("*.schema.json"):
        assert path.name.split(".", 1)[0] in names, f"{path} is no registered model's contract"
