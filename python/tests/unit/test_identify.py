"""Standard errors of a fit (`nicbench.calibrate.identify`) on Jacobians worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from nicbench.calibrate.fit import FitParam
from nicbench.calibrate.identify import identifiability


def _certainty(jac: np.ndarray, residuals: np.ndarray):
    params = [FitParam("a", 1.0, 0.01, 100.0, log=True), FitParam("b", 2.0, 0.01, 100.0, log=True)]
    values = {"a": 1.0, "b": 2.0}
    influences = {"a": [0, 1, 2], "b": [0, 1, 2]}
    return identifiability(None, params, values, None, influences, precomputed=(residuals, jac))


def test_a_well_posed_fit_has_the_textbook_errors():
    # Three points, two log-scale parameters, orthogonal columns: var(u_j) = 1 / |column j|^2.
    jac = np.array([[2.0, 0.0], [0.0, 4.0], [0.0, 0.0]])
    out = _certainty(jac, np.zeros(3))
    assert out["a"].constrained and out["b"].constrained
    assert out["a"].sigma == pytest.approx(1.0 * math.expm1(0.5))
    assert out["b"].sigma == pytest.approx(2.0 * math.expm1(0.25))


def test_a_nearly_flat_direction_gives_an_unbounded_error_not_an_overflow():
    """A few-shot fit on 7 points of one figure once crashed with OverflowError here: a direction the
    data barely see (singular value 1e-5 of 1) makes sigma_u ~ 1e5 on a log scale."""
    jac = np.array([[1.0, 1.0], [1.0, 1.0 + 1e-5], [1.0, 1.0]])
    out = _certainty(jac, np.full(3, 0.1))
    assert any(math.isinf(c.sigma) for c in out.values())
    assert not any(c.constrained for c in out.values())
