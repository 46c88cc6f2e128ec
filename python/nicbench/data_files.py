"""Where the files nicbench reads at run time are: device profiles, studies (their study.toml,
reference and calibration files, experiment specs, reference scripts).

The one place that finds them. `python/nicbench/data/profiles` and `python/nicbench/data/studies`
are symlinks to the checkout's `profiles/` and `studies/`; `maturin build` follows them and puts
copies into the wheel under `nicbench/data/` (pyproject.toml, `[tool.maturin] include`). So an
installed wheel reads its own copies from any directory, and a checkout (`make develop`, an
editable install) reads the checkout's folders through the symlinks. A checkout without the
symlinks (git's `core.symlinks = false` writes them as small text files) reads the checkout's
folders directly.

- `profiles()`, `studies()`: the folders. The native loader is told `profiles()` on import of
  `nicbench` (`register_native`): its own fallback is the checkout it was compiled in, which a
  wheel's user does not have. `$NICBENCH_PROFILES` and `$NICBENCH_STUDIES` still override.
- `spec(name)`: a packaged experiment spec by name (`pam21/fig2a` → `<studies>/pam21/experiments/
  fig2a.toml`); `spec_names()`: all of them.
"""

from __future__ import annotations

from pathlib import Path

from nicbench import _native

__all__ = ["profiles", "studies", "spec", "spec_names", "register_native"]

_PACKAGE = Path(__file__).resolve().parent
_PACKAGED = _PACKAGE / "data"
_CHECKOUT = _PACKAGE.parents[1]  # python/nicbench -> the checkout


def _folder(name: str) -> Path:
    # resolve(): through the checkout's symlink, messages name `<checkout>/profiles/...`, the path
    # the docs use, not python/nicbench/data/profiles/...
    packaged = (_PACKAGED / name).resolve()
    return packaged if packaged.is_dir() else _CHECKOUT / name


def profiles() -> Path:
    """The device profiles this installation carries (not `$NICBENCH_PROFILES`: see
    `nicbench.profiles.profiles_dir` for the folder in use)."""
    return _folder("profiles")


def studies() -> Path:
    """The studies this installation carries (see `nicbench.vocab.study.default_studies_dir` for
    the folder in use)."""
    return _folder("studies")


def spec_names(root: Path | None = None) -> list[str]:
    """Every packaged experiment spec as `<study>/<spec>`, sorted."""
    base = studies() if root is None else root
    return sorted(f"{p.parent.parent.name}/{p.stem}" for p in base.glob("*/experiments/*.toml"))


def spec(name: str, root: Path | None = None) -> Path | None:
    """The packaged spec `<study>/<spec>` (a `.toml` suffix may be given), or None."""
    study, sep, stem = name.removesuffix(".toml").partition("/")
    if not sep or not study or not stem or "/" in stem or study in (".", "..") or stem in (".", ".."):
        return None
    path = (studies() if root is None else root) / study / "experiments" / f"{stem}.toml"
    try:
        return path if path.is_file() else None
    except OSError:  # a name too long for the file system names no spec
        return None


def register_native() -> None:
    """Tell the native profile loader where this installation's profiles are."""
    _native.set_installed_profiles_dir(str(profiles()))
