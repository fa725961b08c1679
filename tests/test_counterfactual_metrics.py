"""Flipping ratio and average distance of counterfactuals (Yang et al. 2022, eqs. 20-21)."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from skdpx.metrics import average_distance, flip_ratio

from ._helpers import CountingEstimator


@pytest.fixture(scope="module")
def black_box():
    """A logistic regression whose decision boundary is x0 + x1 = 0 (labels 0 and 1)."""
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, size=(200, 2))
    y = (X.sum(axis=1) > 0).astype(int)
    clf = LogisticRegression(C=1e4).fit(X, y)
    # far from the boundary the predictions are unambiguous
    assert list(clf.predict([[2.0, 2.0], [-2.0, -2.0]])) == [1, 0]
    return clf


POS, NEG = [2.0, 2.0], [-2.0, -2.0]
NAN = [np.nan, np.nan]


def test_flip_ratio_counts_the_desired_class(black_box):
    C = np.array([POS, POS, NEG, POS, NEG])
    assert flip_ratio(black_box, C, 1) == pytest.approx(3 / 5)
    assert flip_ratio(black_box, C, 0) == pytest.approx(2 / 5)
    assert flip_ratio(black_box, C, 2) == 0.0  # a class the model never predicts


def test_flip_ratio_returns_a_python_float_in_unit_interval(black_box):
    r = flip_ratio(black_box, np.array([POS, NEG]), 1)
    assert type(r) is float and r == 0.5
    assert flip_ratio(black_box, np.array([POS, POS]), 1) == 1.0


def test_flip_ratio_nan_rows_fail_and_are_not_predicted(black_box):
    est = CountingEstimator(black_box)
    C = np.array([POS, NAN, POS, [np.nan, 2.0], NEG])
    assert flip_ratio(est, C, 1) == pytest.approx(2 / 5)  # denominator: all 5 queries
    assert len(est.seen) == 1
    np.testing.assert_array_equal(est.seen[0], [POS, POS, NEG])


def test_flip_ratio_all_nan_is_zero_without_predicting(black_box):
    est = CountingEstimator(black_box)
    assert flip_ratio(est, np.full((3, 2), np.nan), 1) == 0.0
    assert est.seen == []


def test_flip_ratio_per_query_desired_class(black_box):
    C = np.array([POS, NEG, POS, NAN, NEG])
    desired = np.array([1, 0, 0, 1, 1])
    # rows 0, 1 flip; row 2 predicted 1 != 0; row 3 missing; row 4 predicted 0 != 1
    assert flip_ratio(black_box, C, desired) == pytest.approx(2 / 5)
    assert flip_ratio(black_box, C, list(desired)) == pytest.approx(2 / 5)
    # the alignment with the NaN row dropped must stay row for row
    assert flip_ratio(black_box, C, [1, 0, 1, 0, 0]) == pytest.approx(4 / 5)


def test_flip_ratio_string_labels():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    clf = LogisticRegression().fit(X, np.array(["no", "no", "yes", "yes"]))
    C = np.array([[3.0], [0.0], [np.nan]])
    assert flip_ratio(clf, C, "yes") == pytest.approx(1 / 3)
    assert flip_ratio(clf, C, ["yes", "no", "no"]) == pytest.approx(2 / 3)


def test_flip_ratio_errors(black_box):
    with pytest.raises(ValueError, match="empty"):
        flip_ratio(black_box, np.empty((0, 2)), 1)
    with pytest.raises(ValueError, match="2-D"):
        flip_ratio(black_box, np.array(POS), 1)
    with pytest.raises(ValueError, match="desired_class"):
        flip_ratio(black_box, np.array([POS, NEG]), [1, 0, 1])
    with pytest.raises(ValueError, match="desired_class"):
        flip_ratio(black_box, np.array([POS, NEG]), [[1, 0]])


def test_average_distance_hand_computed():
    Q = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, -1.0]])
    C = np.array([[3.0, 4.0], [1.0, 2.0], [0.0, 1.0]])
    # L2: 5, 1, sqrt(8); L1: 7, 1, 4
    assert average_distance(Q, C) == pytest.approx((5 + 1 + np.sqrt(8)) / 3)
    assert average_distance(Q, C, ord=1) == pytest.approx(4.0)
    assert average_distance(Q, C, ord=np.inf) == pytest.approx((4 + 1 + 2) / 3)
    assert type(average_distance(Q, C)) is float


def test_average_distance_skips_nan_rows_and_applies_valid():
    Q = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [0.0, 0.0]])
    C = np.array([[3.0, 4.0], [np.nan, np.nan], [2.0, 3.0], [0.0, np.nan]])
    assert average_distance(Q, C) == pytest.approx(3.0)  # rows 0 and 2
    assert average_distance(Q, C, valid=[False, True, True, True]) == pytest.approx(1.0)
    assert average_distance(Q, C, valid=np.array([True, True, True, True])) == pytest.approx(3.0)


def test_average_distance_nan_when_no_row_counts():
    Q = np.zeros((2, 2))
    assert np.isnan(average_distance(Q, np.full((2, 2), np.nan)))
    assert np.isnan(average_distance(Q, np.ones((2, 2)), valid=[False, False]))
    assert np.isnan(average_distance(Q, np.array([NAN, [1.0, 1.0]]), valid=[True, False]))


def test_average_distance_with_flip_ratio_validity(black_box):
    """The usual pairing: AD over the counterfactuals that really flip the black box."""
    Q = np.array([[-1.0, -1.0], [-1.0, -1.0], [-1.0, -1.0]])
    C = np.array([POS, [-1.0, -2.0], NAN])
    found = ~np.isnan(C).any(axis=1)
    flips = np.zeros(3, dtype=bool)
    flips[found] = black_box.predict(C[found]) == 1
    assert flip_ratio(black_box, C, 1) == pytest.approx(1 / 3)
    assert average_distance(Q, C, valid=flips) == pytest.approx(np.sqrt(18))


def test_average_distance_errors():
    Q = np.zeros((3, 2))
    with pytest.raises(ValueError, match="shape"):
        average_distance(Q, np.zeros((3, 3)))
    with pytest.raises(ValueError, match="shape"):
        average_distance(Q, np.zeros((2, 2)))
    with pytest.raises(ValueError, match="empty"):
        average_distance(np.empty((0, 2)), np.empty((0, 2)))
    with pytest.raises(ValueError, match="finite"):
        average_distance(np.array([[np.nan, 0.0], [0.0, 0.0], [0.0, 0.0]]), Q)
    with pytest.raises(ValueError, match="boolean mask"):
        average_distance(Q, Q, valid=[1, 0, 1])
    with pytest.raises(ValueError, match="boolean mask"):
        average_distance(Q, Q, valid=[True, False])
    for bad in (0, 0.5, -1, "fro", None, True):
        with pytest.raises(ValueError, match="ord"):
            average_distance(Q, Q, ord=bad)
