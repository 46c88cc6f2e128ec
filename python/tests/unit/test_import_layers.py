"""The Python harness imports in one direction: its parts form the layers of `docs/architecture.md`.

Every import of every module under `python/nicbench` counts, wherever it is written: at the top, in a
function (a lazy import), under `if TYPE_CHECKING:`. A part is a subpackage (`nicbench.experiments`)
or a top-level module (`nicbench.units`); `nicbench` itself is the package's `__init__` (its public
names). The checks: the graph of parts has no cycle, and a part imports only parts of lower layers
(`LAYERS`, the order the architecture document draws); two parts of one layer do not import each
other. The top-level modules (the Python API over the native module) are one layer; among them only
the cycle check applies.
"""

from __future__ import annotations

import ast
import graphlib
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "nicbench"

# Lowest first. A part imports only parts of the layers before its own. API is every top-level
# module of the package (nicbench/<module>.py); NATIVE the compiled binding under all of them.
NATIVE = "_native"
API = "<top-level modules>"
LAYERS: tuple[tuple[str, ...], ...] = (
    (NATIVE,),
    (API,),
    ("vocab",),  # Param, record columns, study types, harness errors
    ("options",),  # one option table per model: CLI options and target parameters
    ("backends",),  # what answers a target's runs
    ("experiments",),  # specs, designs, runner, store, targets
    ("calibrate", "report"),  # fits on runs; figures and pages from stored records
    ("reproduce",),  # a study end to end: runs, predictions, pages
    ("nicbench",),  # the package's public names (nicbench/__init__.py)
    ("cli",),  # the commands
    ("__main__",),  # python -m nicbench
)


@dataclass(frozen=True)
class Import:
    source: str  # importing module, dotted
    target: str  # imported module (the module a `from m import name` reads, or m.name when a module)
    where: str  # file:line


def _module_name(path: Path, package: Path) -> str:
    parts = [package.name, *path.relative_to(package).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def find_imports(package: Path) -> list[Import]:
    """Every import between modules of `package` (a folder with an `__init__.py`), anywhere in a file."""
    files = sorted(package.rglob("*.py"))
    modules = {_module_name(f, package) for f in files} | {f"{package.name}.{NATIVE}"}
    out = []
    for f in files:
        name = _module_name(f, package)
        here = name if f.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(f.read_text(), str(f))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = here.split(".")[: len(here.split(".")) - (node.level - 1)]
                    base = ".".join([*up, *([node.module] if node.module else [])])
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            else:
                continue
            where = f"{f.relative_to(package.parent)}:{node.lineno}"
            out += [Import(name, t, where) for t in targets if t.split(".")[0] == package.name]
    return out


def part_of(module: str) -> str:
    """The part a dotted module belongs to: `nicbench`, a subpackage's or a top-level module's name."""
    parts = module.split(".")
    return parts[0] if len(parts) == 1 else parts[1]


def part_graph(package: Path) -> tuple[dict[str, set[str]], dict[tuple[str, str], list[str]]]:
    """Part -> the parts it imports, and the import lines behind each arrow."""
    graph: dict[str, set[str]] = defaultdict(set)
    evidence: dict[tuple[str, str], list[str]] = defaultdict(list)
    for imp in find_imports(package):
        a, b = part_of(imp.source), part_of(imp.target)
        graph[a]
        line = f"{imp.where} imports {imp.target}"
        if a != b and line not in evidence[a, b]:  # `from m import x, y`: one line
            graph[a].add(b)
            evidence[a, b].append(line)
    return dict(graph), dict(evidence)


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as exc:
        return list(exc.args[1])
    return None


def layer_of(package: Path, part: str) -> int | None:
    """The index in LAYERS of a part of `package`; None when a subpackage is in no layer."""
    if not (package / part).is_dir() and part not in ("nicbench", NATIVE, "__main__"):
        part = API
    return next((i for i, layer in enumerate(LAYERS) if part in layer), None)


def layer_violations(package: Path) -> list[str]:
    graph, evidence = part_graph(package)
    out = []
    for a in sorted(graph):
        if layer_of(package, a) is None:
            out.append(f"{a}: a subpackage in no layer (add it to LAYERS and to docs/architecture.md)")
            continue
        for b in sorted(graph[a]):
            la, lb = layer_of(package, a), layer_of(package, b)
            if lb is None or la == lb == layer_of(package, API):
                continue  # reported as a part itself / the API's modules: the cycle check only
            if lb >= la:
                how = "the same layer" if la == lb else "a higher layer"
                out += [f"{a} -> {b} ({how}): {line}" for line in evidence[a, b]]
    return out


def test_the_harness_has_no_import_cycle():
    graph, evidence = part_graph(PACKAGE)
    cycle = find_cycle(graph)  # each part is imported by the next
    assert cycle is None, (
        "import cycle "
        + " -> ".join(reversed(cycle))
        + ":\n"
        + "\n".join(line for a, b in reversed(list(zip(cycle, cycle[1:]))) for line in evidence[b, a])
    )


def test_every_import_points_down_the_layers():
    assert layer_violations(PACKAGE) == []


def documented_layers(text: str) -> list[tuple[str, ...]]:
    """The parts of each row of the layer table of docs/architecture.md, lowest first (names in
    backquotes in its second column; the Python API's row names modules, not parts: empty)."""
    section = text.split("## The Python harness's layers", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[2] for line in section.splitlines() if re.match(r"\| \d+ \|", line)]
    return [tuple(n for n in re.findall(r"`([^`]+)`", cell) if "/" not in n) for cell in reversed(rows)]


def test_the_layers_are_the_documented_ones():
    text = (PACKAGE.parents[1] / "docs" / "architecture.md").read_text()
    assert documented_layers(text) == [() if layer == (API,) else layer for layer in LAYERS]


def test_every_subpackage_has_a_layer():
    subpackages = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    assert {s for s in subpackages if layer_of(PACKAGE, s) is None} == set()


# The checks on small synthetic packages: each one fails on what it is meant to find.


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    pkg = tmp_path / "nicbench"
    for rel, text in {"__init__.py": "", **files}.items():
        path = pkg / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return pkg


def test_a_cycle_hidden_in_a_function_is_found(tmp_path):
    pkg = _tree(
        tmp_path,
        {
            "experiments/__init__.py": "",
            "experiments/run.py": "def f():\n    from nicbench.report import page\n",
            "report/__init__.py": "from nicbench.experiments.run import f\n",
        },
    )
    graph, evidence = part_graph(pkg)
    assert sorted(find_cycle(graph)) == ["experiments", "experiments", "report"]
    assert evidence["experiments", "report"] == ["nicbench/experiments/run.py:2 imports nicbench.report"]


def test_relative_and_type_checking_imports_count(tmp_path):
    pkg = _tree(
        tmp_path,
        {
            "vocab/__init__.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..backends import B\n",
            "backends/__init__.py": "from . import local\nfrom .. import vocab\n",
            "backends/local.py": "",
        },
    )
    graph, _ = part_graph(pkg)
    assert graph["vocab"] == {"backends"} and graph["backends"] == {"vocab"}
    assert find_cycle(graph) is not None
    assert layer_violations(pkg) == [
        "vocab -> backends (a higher layer): nicbench/vocab/__init__.py:3 imports nicbench.backends"
    ]


def test_an_upward_or_sideways_import_is_a_violation(tmp_path):
    pkg = _tree(
        tmp_path,
        {
            "units.py": "",
            "vocab/__init__.py": "import nicbench.units\n",
            "calibrate/__init__.py": "from nicbench.vocab import x\nfrom nicbench.report.html import page\n",
            "report/__init__.py": "",
            "report/html.py": "",
            "experiments/__init__.py": "from nicbench.reproduce import run\n",
            "reproduce/__init__.py": "",
        },
    )
    assert layer_violations(pkg) == [
        "calibrate -> report (the same layer): nicbench/calibrate/__init__.py:2 imports nicbench.report.html",
        "experiments -> reproduce (a higher layer): nicbench/experiments/__init__.py:1 imports nicbench.reproduce",
    ]


def test_a_subpackage_in_no_layer_is_named(tmp_path):
    pkg = _tree(tmp_path, {"extras/__init__.py": "from nicbench import units\n", "units.py": ""})
    assert layer_violations(pkg) == ["extras: a subpackage in no layer (add it to LAYERS and to docs/architecture.md)"]


@pytest.mark.parametrize("source", ["from nicbench import units, _native\n", "import nicbench.units as u\n"])
def test_the_api_layer_and_the_binding_are_below_the_harness(tmp_path, source):
    pkg = _tree(tmp_path, {"units.py": "", "vocab/__init__.py": source})
    graph, _ = part_graph(pkg)
    assert graph["vocab"] <= {"units", NATIVE} and layer_violations(pkg) == []
