"""Figures and HTML reports from stored experiment records (never from a live run).

- `experiment_report(results/<experiment>, out.html)`: one self-contained page.
- `study_report(study, pages, reports/<study>/index.html)`: a study's index with its
  published-vs-nicbench comparison, pass/fail and median absolute error per set.
"""

from __future__ import annotations

from nicbench.report.html import ExperimentPage, experiment_report, study_report

__all__ = ["experiment_report", "study_report", "ExperimentPage"]
