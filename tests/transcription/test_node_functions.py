"""The user's symbolic functions of a DynamicOptimizationProblem: a list of expressions is
stacked, and a result of the wrong size or type is one error naming the function."""

from __future__ import annotations

import numpy as np
import pytest

from collocnode import Constraint
from collocnode.transcription._nlp.node_functions import build_node_functions


@pytest.mark.parametrize(
    "changes, error, match",
    [
        (
            dict(dynamics=lambda x, p, u, t: [x[0], x[0]]),
            ValueError,
            r"^dynamics must return \(1, 1\), got shape \(2, 1\)",
        ),
        (
            dict(dynamics=lambda x, p, u, t: None),
            TypeError,
            r"^dynamics must return a CasADi expression or a list of them, got None",
        ),
        (
            dict(lagrange=lambda x, p, u, t: [x[0], x[0]]),
            ValueError,
            r"^lagrange must return \(1, 1\), got shape \(2, 1\)",
        ),
        (
            dict(path=Constraint.make("path", lambda x, p, u, t: [x[0], x[0]], 1)),
            ValueError,
            r"^path constraint must return \(1, 1\), got shape \(2, 1\)",
        ),
    ],
)
def test_a_user_function_of_the_wrong_size_or_type_is_one_clear_error(
    changes, error, match, make_dop
):
    with pytest.raises(error, match=match):
        build_node_functions(make_dop(**changes))


def test_a_list_of_expressions_is_stacked_into_a_column(make_dop):
    two = make_dop(n_states=2, n_params=0, dynamics=lambda x, p, u, t: [x[1], -x[0]])
    values = build_node_functions(two).values
    # inputs x, p, u, t, h, w; the first output is the collocation residual part -h f
    residual = values(np.array([1.0, 2.0]), np.zeros(0), np.zeros(0), 0.0, 1.0, 0.0)[0]
    np.testing.assert_allclose(np.asarray(residual).ravel(), [-2.0, 1.0])
