"""The rule for missing inputs (helpers.py): under CI=true a missing peer tool, data file or test
package FAILS the test naming what is missing; outside CI the test is skipped with that reason."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from helpers import REPO, classbench_dir, classbench_file, peer, python_module

NO_TOOL = "nicbench-no-such-tool-7f3a"


@pytest.fixture(params=["true", "false"])
def ci(request, monkeypatch) -> bool:
    monkeypatch.setenv("CI", request.param)
    return request.param == "true"


def outcome(ci: bool):
    """What a missing input raises: pytest's Failed under CI, its Skipped outside."""
    return pytest.fail.Exception if ci else pytest.skip.Exception


def test_missing_peer_tool_names_the_tool_and_its_package(ci):
    with pytest.raises(outcome(ci)) as info:
        peer(NO_TOOL, "nicbench-peers")
    assert f"peer tool {NO_TOOL} not on PATH (Debian package nicbench-peers" in str(info.value)
    assert ("CI=true" in str(info.value)) == ci


def test_present_peer_tool_is_its_path(ci):
    path = peer("sh")
    assert os.path.basename(path) == "sh" and os.access(path, os.X_OK)


def test_missing_classbench_file_names_where_it_looked(ci, monkeypatch, tmp_path):
    monkeypatch.setenv("NICBENCH_CLASSBENCH", str(tmp_path / "nowhere"))
    with pytest.raises(outcome(ci)) as info:
        classbench_file("acl1_1k")
    assert f"ClassBench data not found at {tmp_path / 'nowhere' / 'acl1_1k'}" in str(info.value)


def test_classbench_is_found_beside_the_checkout_or_by_override(monkeypatch, tmp_path):
    monkeypatch.delenv("NICBENCH_CLASSBENCH", raising=False)
    assert classbench_dir() == REPO.parent / "shared" / "data" / "classbench"
    (tmp_path / "acl1_1k").write_text("@1.2.3.4/32 0.0.0.0/0 0 : 65535 0 : 65535 0x06/0xFF\n")
    monkeypatch.setenv("NICBENCH_CLASSBENCH", str(tmp_path))
    assert classbench_file("acl1_1k") == tmp_path / "acl1_1k"


def test_missing_python_package(ci):
    with pytest.raises(outcome(ci)) as info:
        python_module("nicbench_no_such_module", "no-such-package")
    assert "Python package no-such-package cannot be imported" in str(info.value)


def run_pytest(test_file, ci: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}  # this run's test, not the child's
    env.update(CI=ci, PYTHONPATH=str(REPO / "python" / "tests"))
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-ra",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(test_file.parent),
            str(test_file),
        ],
        capture_output=True,
        text=True,
        cwd=test_file.parent,
        env=env,
    )


def test_the_rule_end_to_end_in_a_pytest_run(tmp_path):
    """A real pytest run of a test that needs a missing tool: exit 1 naming it under CI=true;
    exit 0 with the reason in the summary outside CI."""
    test_file = tmp_path / "test_needs_tool.py"
    test_file.write_text(f"from helpers import peer\n\n\ndef test_peer():\n    peer('{NO_TOOL}')\n")
    in_ci = run_pytest(test_file, "true")
    assert in_ci.returncode == 1, in_ci.stdout
    assert (
        f"FAILED test_needs_tool.py::test_peer - Failed: test_needs_tool.py::test_peer: peer tool {NO_TOOL} not on PATH"
    ) in in_ci.stdout
    outside = run_pytest(test_file, "false")
    assert outside.returncode == 0, outside.stdout
    assert f"test_needs_tool.py::test_peer: peer tool {NO_TOOL} not on PATH" in outside.stdout


def test_a_missing_test_package_at_import_time(tmp_path):
    """At a module's top level (a test dependency imported for the whole file): a collection
    error naming the package under CI=true (pytest stops: the environment is broken), a skip of
    the module outside."""
    test_file = tmp_path / "test_needs_package.py"
    test_file.write_text(
        'from helpers import python_module\n\npython_module("nicbench_no_such_module", '
        '"no-such-package")\n\n\ndef test_nothing():\n    pass\n'
    )
    in_ci = run_pytest(test_file, "true")
    assert in_ci.returncode == 2, in_ci.stdout
    assert "ERROR test_needs_package.py - Failed: Python package no-such-package cannot be imported" in in_ci.stdout
    outside = run_pytest(test_file, "false")
    assert outside.returncode == 5, outside.stdout  # 5: no test ran (the only module was skipped)
    assert "1 skipped" in outside.stdout and "Python package no-such-package cannot be imported" in outside.stdout
