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
    temp = partial_path(target)
    try:
        yield temp
        os.replace(temp, target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
