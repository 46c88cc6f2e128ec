"""The oracle tests' rules are written once in `ovs-ofctl add-flows` syntax (what real OVS reads);
nicbench reads the same text with its own OpenFlow parser (nicbench-rules), so a case tests the
parser and the datapath together."""

from __future__ import annotations

import itertools
from pathlib import Path

_SERIAL = itertools.count()


def to_of_rules(text: str, folder: Path) -> Path:
    """The rules written to a file in `folder` (the virtual datapath reads rule files)."""
    path = Path(folder) / f"rules-{next(_SERIAL)}.of"
    path.write_text(text)
    return path
