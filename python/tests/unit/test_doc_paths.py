"""Every path into the repository that README.md and docs/ name exists (a file moved or removed
leaves a pointer nobody can follow), and so does every one the code's own documentation names:
Python docstrings and comments, Rust `//!` and `///` doc comments. BENCHMARKS.md and FUZZING.md are
logs: their history may name code that is gone on purpose."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PATH = re.compile(r"(?<![\w./-])((?:crates|python|scripts|studies|profiles|experiments|benches|docs)/[\w./-]+)")


def _named_paths(text: str) -> set[str]:
    out = set()
    for m in PATH.finditer(text):
        p = m.group(1).rstrip(".,;:")
        if any(c in text[m.end() : m.end() + 1] for c in "<*{"):  # a placeholder or pattern follows
            continue
        out.add(p)
    return out


def test_paths_named_in_the_docs_exist():
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    missing = [
        f"{d.relative_to(ROOT)}: {p}"
        for d in docs
        for p in sorted(_named_paths(d.read_text()))
        if not (ROOT / p).exists()
    ]
    assert not missing, "paths named in the docs that do not exist:\n" + "\n".join(missing)


# Where the code lives (build output and the venv are not the project's).
PYTHON_DIRS = ("python", "benches", "scripts", "studies")
RUST_DIRS = ("crates", "fuzz")
SKIP = {"target", ".venv", "build", "__pycache__"}
# Named on purpose although not in the checkout: what a command writes on the machine it measures.
WRITTEN_BY_NICBENCH = {"profiles/flowmeter-local.toml"}  # nicbench calibrate flowmeter-local
# Named before they are written (issue 34's deliverables); each goes from here when it lands.
NOT_YET_WRITTEN: set[str] = set()  # paths a doc names before the change that writes them lands


def _sources(dirs: tuple[str, ...], suffix: str) -> list[Path]:
    return [
        p for d in dirs for p in sorted((ROOT / d).rglob(f"*{suffix}")) if not SKIP & set(p.relative_to(ROOT).parts)
    ]


def python_doc_text(source: str) -> str:
    """The docstrings (module, class, function) and the comments of a Python source."""
    docs = [
        ast.get_docstring(n, clean=False) or ""
        for n in ast.walk(ast.parse(source))
        if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    comments = [t.string for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type == tokenize.COMMENT]
    return "\n".join(docs + comments)


def rust_doc_text(source: str) -> str:
    """The `//!` and `///` doc comments of a Rust source."""
    return "\n".join(line.strip()[3:] for line in source.splitlines() if line.strip().startswith(("//!", "///")))


def test_paths_named_in_code_docs_exist():
    named = [(f, _named_paths(python_doc_text(f.read_text()))) for f in _sources(PYTHON_DIRS, ".py")]
    named += [(f, _named_paths(rust_doc_text(f.read_text()))) for f in _sources(RUST_DIRS, ".rs")]
    missing = [
        f"{f.relative_to(ROOT)}: {p}"
        for f, paths in named
        for p in sorted(paths)
        if not (ROOT / p).exists() and p not in WRITTEN_BY_NICBENCH | NOT_YET_WRITTEN
    ]
    assert not missing, "paths named in docstrings and doc comments that do not exist:\n" + "\n".join(missing)


def test_not_yet_written_is_not_written():
    written = sorted(p for p in NOT_YET_WRITTEN if (ROOT / p).exists())
    assert not written, f"remove from NOT_YET_WRITTEN (they exist now): {', '.join(written)}"


def test_code_docs_are_read_and_code_is_not():
    py = 'X = "docs/in-a-string.md"\n\n\ndef f():\n    """See docs/gone.md."""\n    return 1  # and python/gone.py\n'
    assert _named_paths(python_doc_text(py)) == {"docs/gone.md", "python/gone.py"}
    rs = '//! Module: docs/a.md\n/// Item: crates/b.rs\n// plain: docs/c.md\nlet s = "docs/d.md";\n'
    assert _named_paths(rust_doc_text(rs)) == {"docs/a.md", "crates/b.rs"}


def test_a_missing_path_is_found():
    found = _named_paths("see `crates/nicbench-x/src/gone.rs`, and studies/<study>/x")
    assert found == {"crates/nicbench-x/src/gone.rs"}
