"""Output files that appear whole or not at all (issue 38).

Every file a command writes is written under a temporary name beside its target (same folder, so
the rename stays on one file system: `.<name>.partial-<pid>`) and renamed onto the target only when
the writing succeeded. On an error or a Ctrl-C the temporary file is removed: nothing is left under
the target name, and a file that was there before is left as it was. The native writers (pcaps,
rule files) do the same in Rust (`nicbench_traffic::atomic`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["atomic_output", "partial_path"]


def partial_path(path: str | os.PathLike) -> Path:
    """The temporary name `path` is written under (as the native writers name it)."""
    target = Path(path)
    return target.with_name(f".{target.name}.partial-{os.getpid()}")


@contextmanager
def atomic_output(path: str | os.PathLike) -> Iterator[Path]:
    """Yields the temporary path to write `path`'s content to; renamed onto `path` when the block
    ends normally, removed when it raises (anything, KeyboardInterrupt included)."""
    target = Path(path)
    _check_folder(target)
    temp = partial_path(target)
    try:
        yield temp
        os.replace(temp, target)
    except BaseException as exc:
        temp.unlink(missing_ok=True)
        if isinstance(exc, Exception) and str(temp) in str(exc):
            # A writer's error about the temporary file is about the file the user asked for.
            from nicbench.errors import NicbenchError

            raise NicbenchError(str(exc).replace(str(temp), str(target))) from None
        raise


def _check_folder(target: Path) -> None:
    """The target's folder must exist and take files: checked first, so that an error names the file
    the user asked for, never the temporary name a writer would fail on."""
    from nicbench.errors import NicbenchError

    folder = target.parent
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise NicbenchError(f"{target}: cannot write it: the folder {folder} {what}")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise NicbenchError(f"{target}: cannot write it: no permission to create files in {folder}")
