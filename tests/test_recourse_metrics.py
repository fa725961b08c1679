"""Recourse path metrics (Pentyala et al. 2023, section 5.2) and CARLA's yNN and redundancy."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KernelDensity, NearestNeighbors

from skdpx import RecoursePaths
from skdpx.metrics import path_density, path_distance, path_manifold_distance, redundancy, ynn

from ._helpers import CountingEstimator

# two unit steps: PL0 = PL1 = PL2 = (1 + 1) / 2 = 1
SQUARE = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0]])
# one step (3, 4) then a step of length 0: PL2 = 5 / 2, PL1 = 7 / 2, PL0 = 2 / 2 = 1
STALL = np.array([[0.0, 0.0], [3.0, 4.0], [3.0, 4.0]])
# one step (3, 4): PL2 = 5, PL1 = 7, PL0 = 2
JUMP = np.array([[0.0, 0.0], [3.0, 4.0]])


def _recourse_paths(paths, success):
    return RecoursePaths([p[0] for p in paths], paths, cost=np.zeros(len(paths)),
                         success=success, epsilon_spent=1.0, delta_spent=0.0)


# --- path_distance -------------------------------------------------------------------

@pytest.mark.parametrize("path, expected", [
    (SQUARE, {0: 1.0, 1: 1.0, 2: 1.0}),
    (STALL, {0: 1.0, 1: 3.5, 2: 2.5}),
    (JUMP, {0: 2.0, 1: 7.0, 2: 5.0}),
])
def test_path_distance_hand_values(path, expected):
    for ord_, value in expected.items():
        assert path_distance([path], ord=ord_) == pytest.approx(value)
    assert path_distance([path]) == pytest.approx(expected[2])  # ord=2 by default


def test_path_distance_averages_per_path_then_over_paths():
    # per path: 1 and 5, mean 3 (pooling the three steps would give 7 / 3)
    value = path_distance([SQUARE, JUMP])
    assert type(value) is float
    assert value == pytest.approx(3.0)


def test_path_distance_l0_ignores_differences_below_tolerance():
    path = np.array([[0.0, 0.0, 0.0], [1e-12, 2.0, 0.0], [1e-12, 2.0, 1.0 + 1e-12]])
    assert path_distance([path], ord=0) == pytest.approx((1 + 1) / 2)


def test_path_distance_skips_paths_holding_only_the_query():
    assert path_distance([SQUARE, np.array([[7.0, 7.0]]), JUMP]) == pytest.approx(3.0)


# --- path_manifold_distance ----------------------------------------------------------

def test_path_manifold_distance_zero_when_points_are_rows_of_X():
    X = np.array([[1.0, 0.0], [1.0, 1.0], [9.0, 9.0]])
    # the query (0, 0) is at distance 1 from X but is not a point of the path
    assert path_manifold_distance([SQUARE], X) == 0.0


def test_path_manifold_distance_hand_value_is_l1():
    X = np.array([[1.0, 0.0], [1.0, 1.0]])
    # points (1, 0.5) -> 0.5 and (2, 2) -> L1 distance 2 to (1, 1) (L2 would be sqrt 2)
    path_a = np.array([[0.0, 0.0], [1.0, 0.5], [2.0, 2.0]])
    path_b = np.array([[5.0, 5.0], [1.0, 3.0]])  # -> 2 to (1, 1)
    assert path_manifold_distance([path_a], X) == pytest.approx(1.25)
    assert path_manifold_distance([path_a, path_b], X) == pytest.approx((1.25 + 2.0) / 2)


def test_path_manifold_distance_nn_shortcut_matches_X():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(50, 3))
    paths = [rng.normal(size=(k, 3)) for k in (2, 4, 5)]
    nn = NearestNeighbors(n_neighbors=3, metric="manhattan").fit(X)
    expected = path_manifold_distance(paths, X)
    assert path_manifold_distance(paths, nn=nn) == pytest.approx(expected)
    nn_minkowski = NearestNeighbors(metric="minkowski", p=1).fit(X)
    assert path_manifold_distance(paths, nn=nn_minkowski) == pytest.approx(expected)


def test_path_manifold_distance_rejects_a_bad_nn():
    X = np.array([[1.0, 0.0], [1.0, 1.0]])
    with pytest.raises(ValueError, match="manhattan"):
        path_manifold_distance([SQUARE], nn=NearestNeighbors().fit(X))  # Euclidean
    with pytest.raises(ValueError, match="fitted"):
        path_manifold_distance([SQUARE], nn=NearestNeighbors(metric="manhattan"))
    with pytest.raises(ValueError, match="features"):
        path_manifold_distance([SQUARE], nn=NearestNeighbors(metric="manhattan").fit(np.ones((3, 3))))
    with pytest.raises(ValueError, match="X or a fitted"):
        path_manifold_distance([SQUARE])


# --- path_density --------------------------------------------------------------------

def test_path_density_is_the_per_path_mean_of_score_samples():
    rng = np.random.RandomState(1)
    X = rng.normal(size=(40, 2))
    path_a = np.array([[0.0, 0.0], [0.5, 0.0], [1.0, 1.0], [2.0, 1.0]])
    path_b = np.array([[3.0, 3.0], [1.0, -1.0]])
    for bandwidth in ("scott", 0.7):
        kde = KernelDensity(kernel="gaussian", bandwidth=bandwidth).fit(X)
        expected = (np.mean(kde.score_samples(path_a[1:])) + kde.score_samples(path_b[1:])[0]) / 2
        assert path_density([path_a, path_b], X, bandwidth=bandwidth) == pytest.approx(expected)
    assert path_density([path_a, path_b], X) == pytest.approx(
        path_density([path_a, path_b], X, bandwidth="scott"))


def test_path_density_prefers_paths_through_dense_regions():
    rng = np.random.RandomState(2)
    X = np.concatenate([rng.normal(0.0, 0.3, size=(100, 2)), rng.normal(4.0, 0.3, size=(100, 2))])
    through_data = np.array([[0.0, 0.0], [0.2, 0.1], [4.0, 4.0]])
    through_gap = np.array([[0.0, 0.0], [2.0, 2.0], [4.0, 4.0]])
    assert path_density([through_data], X) > path_density([through_gap], X) + 1.0


def test_path_density_kde_shortcut_matches_X():
    rng = np.random.RandomState(3)
    X = rng.normal(size=(30, 3))
    paths = [rng.normal(size=(k, 3)) for k in (2, 3, 6)]
    kde = KernelDensity(kernel="gaussian", bandwidth=0.8).fit(X)
    expected = path_density(paths, X, bandwidth=0.8)
    assert path_density(paths, kde=kde) == pytest.approx(expected)
    assert path_density(paths, X, bandwidth=0.8, kde=kde) == pytest.approx(expected)


def test_path_density_rejects_a_bad_kde():
    with pytest.raises(ValueError, match="fitted"):
        path_density([SQUARE], kde=KernelDensity())
    with pytest.raises(ValueError, match="features"):
        path_density([SQUARE], kde=KernelDensity().fit(np.ones((3, 3))))
    with pytest.raises(ValueError, match="X or a fitted"):
        path_density([SQUARE])


# --- RecoursePaths input -------------------------------------------------------------

def test_recourse_paths_input_uses_only_successful_paths():
    X = np.array([[1.0, 0.0], [1.0, 1.0]])
    failed = np.array([[5.0, 5.0], [20.0, 20.0], [40.0, -40.0]])  # far from X and long steps
    rp = _recourse_paths([SQUARE, failed, JUMP], success=[True, False, True])
    assert path_distance(rp, ord=1) == pytest.approx(path_distance([SQUARE, JUMP], ord=1))
    assert path_distance(rp, ord=1) == pytest.approx((1.0 + 7.0) / 2)
    assert path_manifold_distance(rp, X) == pytest.approx(path_manifold_distance([SQUARE, JUMP], X))
    assert path_density(rp, X, bandwidth=1.0) == pytest.approx(
        path_density([SQUARE, JUMP], X, bandwidth=1.0))
    # the failed path would change every value if it were used
    everything = [SQUARE, failed, JUMP]
    assert path_distance(everything, ord=1) != pytest.approx(path_distance(rp, ord=1))
    assert path_manifold_distance(everything, X) != pytest.approx(path_manifold_distance(rp, X))
    assert path_density(everything, X, bandwidth=1.0) != pytest.approx(
        path_density(rp, X, bandwidth=1.0))


def test_recourse_paths_without_a_successful_path_is_an_error():
    rp = _recourse_paths([SQUARE, np.array([[2.0, 2.0]])], success=[False, False])
    X = np.array([[1.0, 0.0], [1.0, 1.0]])
    for call in (lambda: path_distance(rp), lambda: path_manifold_distance(rp, X),
                 lambda: path_density(rp, X)):
        with pytest.raises(ValueError, match="no successful path"):
            call()


# --- path input errors ---------------------------------------------------------------

def test_paths_with_only_queries_are_an_error():
    with pytest.raises(ValueError, match="no path has a point"):
        path_distance([np.array([[0.0, 0.0]]), np.array([[1.0, 1.0]])])
    with pytest.raises(ValueError, match="no path has a point"):
        path_distance(_recourse_paths([np.array([[0.0, 0.0]])], success=[True]))


@pytest.mark.parametrize("bad_ord", [3, -1, 0.5, True, "l1", np.inf])
def test_path_distance_bad_ord(bad_ord):
    with pytest.raises(ValueError, match="ord must be 0, 1 or 2"):
        path_distance([SQUARE], ord=bad_ord)


def test_mismatched_features_are_an_error():
    X3 = np.zeros((4, 3))
    with pytest.raises(ValueError, match="features"):
        path_manifold_distance([SQUARE], X3)
    with pytest.raises(ValueError, match="features"):
        path_density([SQUARE], X3)
    with pytest.raises(ValueError, match="features"):
        path_distance([SQUARE, np.zeros((2, 3))])


@pytest.mark.parametrize("paths", [[], SQUARE, [np.zeros((0, 2))], [[0.0, 1.0]],
                                   [np.array([[0.0, 0.0], [np.nan, 1.0]])]])
def test_malformed_paths_are_an_error(paths):
    with pytest.raises(ValueError):
        path_distance(paths)


# --- ynn -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def x0_model():
    """A logistic regression that thresholds x0 at 0 and all but ignores x1."""
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, size=(200, 2))
    clf = LogisticRegression(C=1e4).fit(X, (X[:, 0] > 0).astype(int))
    assert list(clf.predict([[1.0, 0.0], [1.0, 0.5], [1.0, -0.5], [-1.0, 0.5], [-1.0, 0.0]])) == [1, 1, 1, 0, 0]
    return clf


# the data on a line; the model gives class 1 to x0 > 0
LINE = np.array([[-2.0, 0.0], [-1.0, 0.0], [0.5, 0.0], [1.0, 0.0], [2.0, 0.0]])


def test_ynn_hand_value(x0_model):
    C = np.array([[1.6, 0.0],    # neighbours (k=2): 2, 1 -> both class 1, agree 2
                  [0.1, 0.0],    # 0.5, 1 (-1 is 1.1 away) -> agree 2
                  [-0.4, 0.0]])  # predicted 0; neighbours 0.5 (0.9 away), -1 (0.6 away) -> agree 1
    assert ynn(C, LINE, x0_model, n_neighbors=2) == pytest.approx((2 + 2 + 1) / 6)
    assert ynn(C[:1], LINE, x0_model, n_neighbors=2) == 1.0
    # with every row as neighbour: class 1 for 3 of the 5 rows
    assert ynn(C[:1], LINE, x0_model, n_neighbors=5) == pytest.approx(3 / 5)


def test_ynn_skips_nan_rows_and_predicts_in_two_batches(x0_model):
    est = CountingEstimator(x0_model)
    C = np.array([[1.6, 0.0], [np.nan, 0.0], [-0.4, 0.0]])
    assert ynn(C, LINE, est, n_neighbors=2) == pytest.approx((2 + 1) / 4)
    assert len(est.seen) == 2
    np.testing.assert_array_equal(est.seen[0], [[1.6, 0.0], [-0.4, 0.0]])
    assert not np.isnan(est.seen[1]).any() and len(est.seen[1]) <= len(LINE)


def test_ynn_errors(x0_model):
    with pytest.raises(ValueError, match="no counterfactual"):
        ynn(np.full((2, 2), np.nan), LINE, x0_model)
    with pytest.raises(ValueError, match="features"):
        ynn(np.ones((2, 3)), LINE, x0_model)
    for k in (0, 6, 2.5, True):
        with pytest.raises(ValueError, match="n_neighbors"):
            ynn(np.ones((2, 2)), LINE, x0_model, n_neighbors=k)


# --- redundancy ----------------------------------------------------------------------

def test_redundancy_counts_unneeded_changes(x0_model):
    Q = np.array([[-1.0, 0.0], [-1.0, 0.0], [-1.0, 0.0]])
    C = np.array([[1.0, 0.5],    # x1's change is not needed: 1
                  [1.0, 0.0],    # only x0 changes and it is needed: 0 (x1 is unchanged)
                  [1.0, -0.5]])  # 1
    assert redundancy(Q[:1], C[:1], x0_model) == 1.0
    assert redundancy(Q[1:2], C[1:2], x0_model) == 0.0
    assert redundancy(Q, C, x0_model) == pytest.approx(2 / 3)


def test_redundancy_needed_changes_count_zero():
    # the boundary x0 + x1 = 0: from (-1, -1) to (0.6, 0.6) both changes are needed
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, size=(200, 2))
    clf = LogisticRegression(C=1e4).fit(X, (X.sum(axis=1) > 0).astype(int))
    Q = np.array([[-1.0, -1.0], [-1.0, -1.0]])
    C = np.array([[0.6, 0.6], [2.0, 2.0]])  # the second: either change alone suffices
    assert list(clf.predict(np.array([[0.6, 0.6], [-1.0, 0.6], [0.6, -1.0], [-1.0, 2.0]]))) == [1, 0, 0, 1]
    assert redundancy(Q[:1], C[:1], clf) == 0.0
    assert redundancy(Q, C, clf) == pytest.approx((0 + 2) / 2)


def test_redundancy_skips_nan_rows_and_predicts_once(x0_model):
    est = CountingEstimator(x0_model)
    Q = np.array([[-1.0, 0.0], [-1.0, 0.0], [-1.0, 0.0]])
    C = np.array([[1.0, 0.5], [np.nan, np.nan], [1.0, 0.0]])
    assert redundancy(Q, C, est) == pytest.approx((1 + 0) / 2)
    assert len(est.seen) == 1
    assert not np.isnan(est.seen[0]).any()


def test_redundancy_errors(x0_model):
    Q = np.zeros((2, 2))
    with pytest.raises(ValueError, match="no counterfactual"):
        redundancy(Q, np.full((2, 2), np.nan), x0_model)
    with pytest.raises(ValueError, match="differ in shape"):
        redundancy(Q, np.ones((2, 3)), x0_model)
    with pytest.raises(ValueError, match="finite"):
        redundancy(np.array([[np.nan, 0.0], [0.0, 0.0]]), np.ones((2, 2)), x0_model)
