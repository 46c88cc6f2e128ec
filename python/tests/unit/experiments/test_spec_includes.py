"""Spec includes: `include = [...]` merges shared fragments beneath a spec, relative to the file that
names them; cycles and missing fragments are one-line errors naming the file."""

from __future__ import annotations

import json
import tomllib

import pytest
from harness_cli import assert_one_line_error, harness

from nicbench.experiments.spec import load_spec, parse_spec
from nicbench.vocab.errors import SpecError

FRAGMENT = """
[experiment]
repeat = 2
description = "from the fragment"

[params]
capacity = "10Gbps"
rate = "5Gbps"

[sweep]
size = [64, 128, 256]

[[figure]]
kind = "line"
x = "size"
y = "loss"
title = "the fragment's figure"
"""

SPEC = """
include = ["../fragments/noop.toml"]

[experiment]
name = "with-include"
target = "synthetic.loss"

[params]
rate = "20Gbps"

[[figure]]
kind = "line"
x = "size"
y = "loss"
title = "the spec's figure"
"""


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "fragments").mkdir()
    (tmp_path / "specs").mkdir()
    (tmp_path / "fragments" / "noop.toml").write_text(FRAGMENT)
    spec = tmp_path / "specs" / "with.toml"
    spec.write_text(SPEC)
    return tmp_path


def test_fragments_merge_beneath_the_spec(tree):
    spec = load_spec(tree / "specs" / "with.toml")
    # Tables key by key, the spec's own keys winning; the fragment's sweep and repeat come through.
    assert spec.repeat == 2 and spec.description == "from the fragment"
    assert (spec.fixed["capacity"], spec.fixed["rate"]) == (10e9, 20e9)
    assert [p["size"] for p in spec.points()] == [64, 128, 256]
    # Arrays of tables are concatenated, the fragment's first.
    assert [f.title for f in spec.figures] == ["the fragment's figure", "the spec's figure"]
    assert spec.includes == [str((tree / "fragments" / "noop.toml").resolve())]
    # The text stored with the results is the merged spec: it parses alone, to the same spec.
    assert "include" not in tomllib.loads(spec.text)
    again = parse_spec(spec.text, str(tree / "elsewhere.toml"))
    assert (again.fixed, again.points(), [f.title for f in again.figures]) == (
        spec.fixed,
        spec.points(),
        [f.title for f in spec.figures],
    )


def test_a_list_value_is_replaced_whole_and_fragments_include_fragments(tree):
    (tree / "fragments" / "base.toml").write_text('[params]\ncapacity = "30Gbps"\n[sweep]\nsize = [512, 1024]\n')
    (tree / "fragments" / "mid.toml").write_text('include = "base.toml"\n[params]\nrate = "2Gbps"\n')
    spec = tree / "specs" / "nested.toml"
    spec.write_text(
        'include = ["../fragments/mid.toml"]\n[experiment]\nname = "n"\ntarget = "synthetic.loss"\n'
        "[sweep]\nsize = [1500]\n"
    )
    loaded = load_spec(spec)
    assert (loaded.fixed["capacity"], loaded.fixed["rate"]) == (30e9, 2e9)
    assert [p["size"] for p in loaded.points()] == [1500]
    assert [p.rsplit("/", 1)[1] for p in loaded.includes] == ["mid.toml", "base.toml"]


def test_later_fragments_win_over_earlier_ones(tree):
    (tree / "fragments" / "a.toml").write_text('[params]\ncapacity = "3Gbps"\nrate = "1Gbps"\n')
    (tree / "fragments" / "b.toml").write_text('[params]\ncapacity = "4Gbps"\n')
    spec = tree / "specs" / "two.toml"
    spec.write_text(
        'include = ["../fragments/a.toml", "../fragments/b.toml"]\n'
        '[experiment]\nname = "t"\ntarget = "synthetic.loss"\n'
    )
    loaded = load_spec(spec)
    assert (loaded.fixed["capacity"], loaded.fixed["rate"]) == (4e9, 1e9)


def test_a_cycle_is_one_error_naming_the_files(tree):
    (tree / "fragments" / "a.toml").write_text('include = ["b.toml"]\n')
    (tree / "fragments" / "b.toml").write_text('include = ["a.toml"]\n')
    spec = tree / "specs" / "cycle.toml"
    spec.write_text('include = ["../fragments/a.toml"]\n[experiment]\nname = "c"\ntarget = "synthetic.loss"\n')
    with pytest.raises(SpecError, match="include cycle") as exc:
        load_spec(spec)
    assert "a.toml" in str(exc.value) and "b.toml" in str(exc.value)
    itself = tree / "specs" / "self.toml"
    itself.write_text('include = ["self.toml"]\n[experiment]\nname = "s"\ntarget = "synthetic.loss"\n')
    assert_one_line_error(harness("check", str(itself)), str(itself), "key 'include'", "include cycle")


@pytest.mark.parametrize(
    ("include", "needle"),
    [
        ('["../fragments/nope.toml"]', "nope.toml: No such file or directory"),
        ('["../fragments"]', "fragments"),
        ("[1]", "expected a TOML file or a list of them"),
        ("[]", "expected a TOML file or a list of them"),
    ],
)
def test_a_bad_include_is_one_line_naming_the_file(tree, include, needle):
    spec = tree / "specs" / "bad.toml"
    spec.write_text(f'include = {include}\n[experiment]\nname = "b"\ntarget = "synthetic.loss"\n')
    assert_one_line_error(harness("check", str(spec)), str(spec), "key 'include'", needle)


def test_a_fragment_with_bad_toml_names_the_fragment(tree):
    (tree / "fragments" / "noop.toml").write_text("[params\n")
    assert_one_line_error(harness("check", str(tree / "specs" / "with.toml")), "noop.toml", "not valid TOML")


def test_an_edited_fragment_reruns_what_it_changes(tree):
    """A run's key comes from its parameters: a fragment that changes one changes those points (they
    run), as an edit of the spec itself would; the stored spec follows the fragment."""
    results = tree / "results"
    spec = tree / "specs" / "with.toml"

    def run() -> int:
        proc = harness("run", str(spec), "--results", str(results), "--json")
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)["executed"]

    assert run() == 6
    assert run() == 0
    fragment = tree / "fragments" / "noop.toml"
    fragment.write_text(FRAGMENT.replace('capacity = "10Gbps"', 'capacity = "30Gbps"'))
    assert run() == 6
    assert 'capacity = "30Gbps"' in (results / "with-include" / "spec.toml").read_text()
