"""The Rust crates place their tests one way (docs/contributing.md, "Conventions"): unit tests are a
`#[cfg(test)]` child module of what they test — inline `mod tests { ... }` in a file, or a file inside
the folder of a folder module (`x/mod.rs` beside `x/tests.rs`); integration tests in a crate's
`tests/`. A `#[path = ...]` test module (a sibling file that is not the module's child) is refused."""

from __future__ import annotations

import re
from pathlib import Path

CRATES = Path(__file__).resolve().parents[3] / "crates"
PATH_ATTRIBUTE = re.compile(r"^\s*#\[path\s*=", re.M)


def test_no_test_module_is_placed_with_a_path_attribute() -> None:
    sources = sorted(CRATES.rglob("*.rs"))
    assert sources, f"no Rust sources under {CRATES}"
    offenders = [str(p.relative_to(CRATES)) for p in sources if PATH_ATTRIBUTE.search(p.read_text(encoding="utf-8"))]
    assert offenders == [], f"#[path] modules (inline the tests or make the module a folder): {offenders}"


def test_a_file_module_keeps_its_tests_inline() -> None:
    """`mod tests;` (an out-of-line test module) only in a folder module's `mod.rs` or `lib.rs`, where
    the child file lives in the module's own folder."""
    out_of_line = re.compile(r"^\s*(?:pub(?:\(crate\))?\s+)?mod\s+\w*tests\s*;", re.M)
    offenders = [
        str(p.relative_to(CRATES))
        for p in sorted(CRATES.rglob("*.rs"))
        if p.name not in ("mod.rs", "lib.rs", "main.rs") and out_of_line.search(p.read_text(encoding="utf-8"))
    ]
    assert offenders == [], f"test modules outside their module's folder: {offenders}"
