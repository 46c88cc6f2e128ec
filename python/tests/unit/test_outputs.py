"""`nicbench.outputs.atomic_output`: a file appears whole under its name or not at all (issue 38)."""

from __future__ import annotations

import pytest

from nicbench.outputs import atomic_output


def test_a_finished_block_puts_the_file_under_its_name(tmp_path):
    target = tmp_path / "out.csv"
    target.write_text("old")
    with atomic_output(target) as tmp:
        assert tmp.parent == tmp_path and tmp.name.startswith(".out.csv.partial-")
        tmp.write_text("new")
        assert target.read_text() == "old", "the target is replaced only at the end"
    assert target.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["out.csv"]


@pytest.mark.parametrize("error", [ValueError("bad input"), KeyboardInterrupt()])
def test_a_failed_block_leaves_nothing_and_an_older_file_as_it_was(tmp_path, error):
    for before in (None, "old"):
        target = tmp_path / "out.csv"
        if before is not None:
            target.write_text(before)
        with pytest.raises(type(error)), atomic_output(target) as tmp:
            tmp.write_text("half")
            raise error
        left = [p.name for p in tmp_path.iterdir()]
        assert left == ([] if before is None else ["out.csv"])
        if before is not None:
            assert target.read_text() == before
