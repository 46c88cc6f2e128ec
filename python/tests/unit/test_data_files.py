"""nicbench.data_files: the one place that finds profiles and studies (issue 40). In a checkout they
are the checkout's folders (through python/nicbench/data's symlinks, which the wheel's copies
replace); the native loader and the study lookup use them; a study's spec is named <study>/<spec>
from any folder. The installed wheel is `make test-wheel`'s (scripts/test-wheel.sh)."""

from __future__ import annotations

import os

from helpers import REPO, forked_cli

from nicbench import data_files, profiles
from nicbench.vocab.study import default_studies_dir


def test_a_checkout_reads_its_own_folders(monkeypatch, tmp_path):
    monkeypatch.delenv("NICBENCH_PROFILES", raising=False)
    monkeypatch.delenv("NICBENCH_STUDIES", raising=False)
    monkeypatch.chdir(tmp_path)  # no ./studies here
    assert data_files.profiles() == REPO / "profiles"
    assert data_files.studies() == REPO / "studies"
    assert profiles.profiles_dir() == REPO / "profiles"  # what the native loader was told
    assert default_studies_dir() == REPO / "studies"


def test_the_symlinks_the_wheel_follows_point_into_the_checkout():
    for name in ("profiles", "studies"):
        link = REPO / "python" / "nicbench" / "data" / name
        assert link.is_symlink() and not os.path.isabs(os.readlink(link)), link
        assert link.resolve() == REPO / name


def test_the_environment_still_wins(monkeypatch, tmp_path):
    monkeypatch.setenv("NICBENCH_PROFILES", str(tmp_path))
    monkeypatch.setenv("NICBENCH_STUDIES", str(tmp_path))
    assert profiles.profiles_dir() == tmp_path
    assert default_studies_dir() == tmp_path


def test_spec_names():
    names = data_files.spec_names()
    assert "pam21/fig2a" in names and "offpath/fig4" in names
    assert data_files.spec("pam21/fig2a") == REPO / "studies" / "pam21" / "experiments" / "fig2a.toml"
    assert data_files.spec("pam21/fig2a.toml") == data_files.spec("pam21/fig2a")
    for miss in ("pam21/nope", "pam21", "pam21/../pam21/fig2a", "../studies/fig2a", "/fig2a", "x" * 5000 + "/y"):
        assert data_files.spec(miss) is None, miss


def test_check_takes_a_spec_by_name_from_any_folder(tmp_path):
    done = forked_cli("check", "pam21/fig2a", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "experiment pam21-fig2a" in done.stdout


def test_an_unknown_spec_name_names_what_is_there(tmp_path):
    done = forked_cli("check", "pam21/nope", cwd=tmp_path)
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("nicbench: error: "), done.stderr
    assert "pam21/nope: no such file" in lines[0] and "fig2a, fig2b" in lines[0]
    done = forked_cli("check", "nostudy/fig2a", cwd=tmp_path)
    assert done.returncode == 2 and "studies: argus100g, foundation, offpath, ovs-offload, pam21" in done.stderr


def test_a_file_of_that_name_wins(tmp_path):
    (tmp_path / "pam21").mkdir()
    (tmp_path / "pam21" / "fig2a").write_text("not a spec [")
    done = forked_cli("check", "pam21/fig2a", cwd=tmp_path)
    assert done.returncode == 2 and "pam21/fig2a" in done.stderr and "not valid TOML" in done.stderr
