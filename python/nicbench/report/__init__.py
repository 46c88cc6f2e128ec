"""Figures and HTML reports from stored experiment records (never from a live run).

- `experiment_report(results/<experiment>, out.html)`: one self-contained page.
- `study_report(study, pages, reports/<study>/index.html)`: a study's index with its
  published-vs-nicbench comparison, pass/fail and median absolute error per set.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nicbench.report.html import ExperimentPage, experiment_report, study_report

__all__ = ["experiment_report", "study_report", "ExperimentPage"]


def __getattr__(name: str) -> Any:
    # PEP 562: `html` pulls in matplotlib and pandas; importing a light sub-module
    # (e.g. `nicbench.report.compare`) should not pay for them.
    if name in __all__:
        from nicbench.report import html

        value = getattr(html, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'nicbench.report' has no attribute {name!r}")
