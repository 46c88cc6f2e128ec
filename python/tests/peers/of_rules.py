"""The oracle tests' rules are written once in `ovs-ofctl add-flows` syntax (what real OVS reads);
nicbench reads the same text with its own OpenFlow parser (nicbench-rules), so a case tests the
parser and the datapath together."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from nicbench import vswitch


def to_of_rules(text: str) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "rules.of"
        path.write_text(text)
        return vswitch.load_openflow(path)
