"""Every path into the repository that README.md and docs/ name exists (a file moved or removed
leaves a pointer nobody can follow). BENCHMARKS.md and FUZZING.md are logs: their history may name
code that is gone on purpose."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PATH = re.compile(r"(?<![\w./-])((?:crates|python|scripts|studies|profiles|experiments|benches|docs)/[\w./-]+)")


def _named_paths(text: str) -> set[str]:
    out = set()
    for m in PATH.finditer(text):
        p = m.group(1).rstrip(".,;:")
        if any(c in text[m.end():m.end() + 1] for c in "<*{"):  # a placeholder or pattern follows
            continue
        out.add(p)
    return out


def test_paths_named_in_the_docs_exist():
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    missing = [f"{d.relative_to(ROOT)}: {p}" for d in docs for p in sorted(_named_paths(d.read_text()))
               if not (ROOT / p).exists()]
    assert not missing, "paths named in the docs that do not exist:\n" + "\n".join(missing)


def test_a_missing_path_is_found():
    assert _named_paths("see `crates/nicbench-x/src/gone.rs`, and studies/<study>/x") == {"crates/nicbench-x/src/gone.rs"}
