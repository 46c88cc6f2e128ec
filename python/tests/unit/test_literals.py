"""`nicbench.literals.module_literal`: a top-level literal read from source, one line or several."""

from __future__ import annotations

import pytest

from nicbench.literals import module_literal

SOURCE = '''"""doc"""

MODELS = ("vswitch", "ovs-pvp")

SUMMARIES = {
    "a": "First (with a paren).",
    "b": "Second, {braces} inside.",
}
COMMANDS = [a, b]
'''


def test_one_line_and_multi_line_literals_are_read_without_importing():
    assert module_literal(SOURCE, "MODELS") == ("vswitch", "ovs-pvp")
    assert module_literal(SOURCE, "SUMMARIES") == {"a": "First (with a paren).", "b": "Second, {braces} inside."}
    assert module_literal(SOURCE, "ABSENT") is None


def test_a_name_that_is_no_literal_is_refused():
    with pytest.raises(ValueError, match="COMMANDS = ... is not a literal"):
        module_literal(SOURCE, "COMMANDS")
