"""The inputs the fuzz targets found (FUZZING.md, issue 38), kept as files in fixtures/fuzz: each is
refused by the loader the CLI calls with the project's error (a traceback before), and a seeded
mutation run of the repo's own specs and profiles sees no other exception (a few seconds; the long
campaigns are `scripts/fuzz.sh`, not part of the test suite)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from nicbench.calibrate.measurements import load_measurements
from nicbench.cli.pvp import _megaflows
from nicbench.errors import NicbenchError
from nicbench.experiments.spec import load_spec
from nicbench.units import UnitError
from nicbench.vocab.errors import SpecError
from nicbench.vocab.study import load_study

FUZZ = Path(__file__).resolve().parents[1] / "fixtures" / "fuzz"
REPO = Path(__file__).resolve().parents[3]
PROJECT_ERRORS = (NicbenchError, SpecError, UnitError)


@pytest.mark.parametrize(
    ("name", "fragment"),
    [("spec-nested.toml", "nested too deeply"), ("spec-huge-int.toml", "more than 4300 digits")],
)
def test_spec_past_the_parser_limits(name, fragment):
    with pytest.raises(SpecError, match=fragment):
        load_spec(FUZZ / name)


@pytest.mark.parametrize(
    ("name", "fragment"),
    [("megaflows-nested.json", "nested too deeply"), ("megaflows-huge-int.json", "more than 4300 digits")],
)
def test_megaflows_past_the_parser_limits(name, fragment):
    with pytest.raises(NicbenchError, match=fragment):
        _megaflows(str(FUZZ / name))


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("measurements-digitized-no-x-unit.csv", "nor a digitized figure"),
        ("measurements-digitized-bad-y.csv", "cannot map this digitized figure"),
        ("measurements-fig-3-unknown-series.csv", "cannot map this digitized figure"),
        # A bad byte past the first 8 KiB (the header read decodes one buffer) was a UnicodeDecodeError.
        ("measurements-bad-utf8-past-8k.csv", "not a text"),
    ],
)
def test_measurements_the_readers_could_not_take(name, fragment):
    with pytest.raises(NicbenchError, match=fragment):
        load_measurements([FUZZ / name], load_study(REPO / "studies" / "pam21"))


def _mutants(text: bytes, rng: random.Random, count: int):
    """Byte flips, cuts and splices of `text`: what a fuzzer's first mutations look like."""
    for _ in range(count):
        b = bytearray(text)
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(b) + 1)
            op = rng.randrange(4)
            if op == 0 and b:
                b[min(at, len(b) - 1)] = rng.randrange(256)
            elif op == 1:
                del b[at : at + rng.randint(1, 40)]
            elif op == 2:
                b[at:at] = rng.choice([b"[", b"{", b'"', b"=", b"\n", b"nan", b"1e999", b"-", b"#"]) * rng.randint(1, 3)
            else:
                src = rng.randrange(len(b) + 1)
                b[at:at] = b[src : src + rng.randint(1, 60)]
        yield bytes(b)


def test_mutated_specs_raise_only_project_errors(tmp_path):
    rng = random.Random(38)
    seeds = sorted((REPO / "experiments").glob("*.toml")) + sorted((REPO / "studies").glob("*/experiments/*.toml"))[:6]
    path = tmp_path / "spec.toml"
    for seed in seeds:
        for mutant in _mutants(seed.read_bytes(), rng, 12):
            path.write_bytes(mutant)
            try:
                load_spec(path).points()
            except PROJECT_ERRORS:
                pass


def test_mutated_profiles_raise_only_project_errors_and_write_back(tmp_path):
    """Profiles are parsed in Rust (the `profile_toml` fuzz target); calibrate's Python side reads
    them again by text (integer literals) and writes fitted values back by text edit: on a mutant
    that loads, writing each parameter's own value back loads to the same values (to the 6
    significant digits a fitted value is written with)."""
    from nicbench import profiles
    from nicbench.calibrate.profile import read_params, write_fitted

    rng = random.Random(38)
    path = tmp_path / "p.toml"
    for seed in sorted((REPO / "profiles").glob("*.toml"))[:5]:
        for mutant in _mutants(seed.read_bytes(), rng, 20):
            path.write_bytes(mutant)
            try:
                params = read_params(path)
                values = {n: p.value for n, p in params.items()}
                write_fitted(path, values, "fitted: fuzz regression")
            except PROJECT_ERRORS:
                continue
            again = {n: t["value"] for n, t in profiles.load(path)["param"].items()}
            assert again == pytest.approx(values, rel=1e-5), mutant
