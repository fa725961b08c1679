"""DP scorers of private model selection (issue 20, item 2).

* on exact (noise-free) sums, ``finalize`` gives scikit-learn's score;
* the stated L2 sensitivity is the largest change of the column sums over
  brute-force neighbours (a row added, removed or replaced, with adversarial
  rows in the pool), and it is attained (tight);
* the score is a function of the noisy sums alone, never of the private
  number of validation rows (issue 35): a mean over the private ``n``
  moves twice what its noise is calibrated for on adversarial neighbours;
* ``finalize`` stays in the score's range on noisy sums;
* ``get_dp_scorer`` resolves names, instances and defaults, and refuses the rest.
"""

import itertools
import math

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
from sklearn.metrics import accuracy_score, balanced_accuracy_score, log_loss

from skdpx import CounterfactualSet, RecoursePaths
from skdpx.counterfactual import DPCounterfactualGenerator
from skdpx.explain import DPLimeExplainer
from skdpx.metrics import flip_ratio
from skdpx.model_selection import (
    DPAccuracy,
    DPBalancedAccuracy,
    DPCounterfactualScore,
    DPLimeFidelity,
    DPLogLoss,
    DPRecourseScore,
    DPScorer,
    get_dp_scorer,
)
from skdpx.privacy import (
    ComposedDpEvent,
    NonPrivateDpEvent,
    NoOpDpEvent,
    compute_epsilon,
    event_to_json,
    given_row_count,
)
from skdpx.privacy._composition import leaf_counts
from skdpx.recourse import PrivRecourse

RELATIONS = ("add_or_remove", "replace_one")

# the tests seed the noise and fit without a shared ledger on purpose
pytestmark = [pytest.mark.filterwarnings("ignore::skdpx.exceptions.PrivacyLeakWarning"),
              pytest.mark.filterwarnings("ignore::skdpx.privacy.UncappedBudgetWarning")]


class _TableClassifier(ClassifierMixin, BaseEstimator):
    """Predicts the probabilities written in X's columns (an adversary's model)."""

    def __init__(self, classes=(0, 1, 2)):
        self.classes = classes

    def fit(self, X=None, y=None):
        self.classes_ = np.asarray(self.classes)
        return self

    def predict_proba(self, X):
        return np.asarray(X, dtype=float)

    def predict(self, X):
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


def _fitted_problem(k=3, n=60, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 2))
    y = (np.digitize(X[:, 0] + 0.5 * rng.normal(size=n), [-0.5, 0.5]) % k)
    model = LogisticRegression().fit(X, y)
    return model, X, y


def _adversarial_pool(k=3):
    """Rows (X, y): for each class, certain/uncertain/impossible probabilities, every label."""
    eye = np.eye(k)
    uniform = np.full((1, k), 1.0 / k)
    tiny = np.full((k, k), 0.5 / (k - 1)) * (1 - np.eye(k)) + 0.5 * np.eye(k)
    probas = np.vstack([eye, uniform, tiny])
    X = np.repeat(probas, k, axis=0)
    y = np.tile(np.arange(k), len(probas))
    return X, y


def _sums(scorer, model, X, y):
    c = scorer.contributions(model, X, y)
    assert c.ndim == 2 and c.shape[0] == len(y)
    return c.sum(axis=0)


def _neighbour_changes(scorer, model, X, y, pool_X, pool_y):
    """L2 changes of the sums over every neighbour, recomputed on whole datasets."""
    base = _sums(scorer, model, X, y)
    changes = {"add_or_remove": [], "replace_one": []}
    for j in range(len(pool_y)):  # add a pool row
        s = _sums(scorer, model, np.vstack([X, pool_X[j:j + 1]]), np.append(y, pool_y[j]))
        changes["add_or_remove"].append(np.linalg.norm(s - base))
    for i in range(len(y)):  # remove a row
        keep = np.arange(len(y)) != i
        s = _sums(scorer, model, X[keep], y[keep])
        changes["add_or_remove"].append(np.linalg.norm(s - base))
        for j in range(len(pool_y)):  # replace it by a pool row
            X2, y2 = X.copy(), y.copy()
            X2[i], y2[i] = pool_X[j], pool_y[j]
            s = _sums(scorer, model, X2, y2)
            changes["replace_one"].append(np.linalg.norm(s - base))
    return {rel: max(v) for rel, v in changes.items()}


@pytest.mark.parametrize("scorer", [DPAccuracy(), DPBalancedAccuracy(), DPLogLoss(max_loss=3.0),
                                    DPLogLoss()])
def test_sensitivity_is_the_brute_force_maximum_and_tight(scorer):
    k = 3
    model = _TableClassifier(classes=tuple(range(k))).fit()
    pool_X, pool_y = _adversarial_pool(k)
    # the dataset: a few pool rows (adversarial), so removal and replacement are extreme too
    rng = np.random.RandomState(1)
    idx = rng.choice(len(pool_y), size=8, replace=False)
    X, y = pool_X[idx], pool_y[idx]
    worst = _neighbour_changes(scorer, model, X, y, pool_X, pool_y)
    for relation in RELATIONS:
        stated = scorer.sensitivity(relation)
        assert worst[relation] <= stated + 1e-12, (relation, worst[relation], stated)
        assert worst[relation] == pytest.approx(stated, rel=1e-9), (relation, worst[relation], stated)


# Adversarial neighbours for the normaliser (issue 35): each scorer's extreme rows
# (a row of the HIGH value, the same rows plus one of the LOW value), as rows of the
# adversary's models. ``centre`` and ``half`` are the centred statistic's (the value's
# midpoint and half-range: the add-or-remove sensitivity of its sum alone).
def _extremes():
    table = _TableClassifier(classes=(0, 1, 2)).fit()
    right, wrong = np.array([[1.0, 0.0, 0.0]]), np.array([[0.0, 1.0, 0.0]])
    cases = [
        # correct (1) / wrong (0)
        (DPAccuracy(), table, (right, [0]), (wrong, [0]), 0.5, 0.5),
        # p_y = 0 (loss L, clipped) / p_y = 1 (loss 0); greater is better: -loss
        (DPLogLoss(max_loss=3.0), table, (wrong, [0]), (right, [0]), 1.5, 1.5),
    ]
    for weight in (0.0, 0.5, 2.0):  # valid at distance 0 (1) / a failure (-w)
        high, low = (np.array([[1.0, 0.0]]), [0]), (np.array([[0.0, 0.0]]), [0])
        cases.append((DPCounterfactualScore(distance_weight=weight), _StubGenerator(), high,
                      low, (1 - weight) / 2, (1 + weight) / 2))
        cases.append((DPRecourseScore(cost_weight=weight), _StubRecourse(), high, low,
                      (1 - weight) / 2, (1 + weight) / 2))
    return cases


def _neighbours(high, low, n):
    X = np.vstack([high[0]] * n)
    y = np.repeat(high[1], n)
    return (X, y), (np.vstack([X, low[0]]), np.append(y, low[1]))


def _old_finalize(sums, n_rows, centre, lo, hi):
    """The normaliser of 69bf3a8: the centred sum over the PRIVATE number of rows."""
    return float(np.clip(centre + sums[0] / max(n_rows, 1), lo, hi))


@pytest.mark.parametrize("n", [5, 40, 600])
def test_a_score_never_divides_by_the_private_number_of_rows(n):
    # Add-or-remove neighbours: n rows of the HIGH value, and the same plus one LOW row.
    # The score is a public function of the Gaussian-noised sums, so these (the centred
    # values and the scorer's own count column) are the exact statistic the noise is
    # calibrated for: they move by at most the stated sensitivity. A score normalised
    # by the private number of rows is not such a function; in the units its noise is
    # calibrated for (the sum's sensitivity over the normaliser), it moves by
    # n / (n + 1) times the range, twice the sum's sensitivity: caught here.
    for scorer, model, high, low, centre, half in _extremes():
        D, D_plus = _neighbours(high, low, n)
        sums = [_sums(scorer, model, *d) for d in (D, D_plus)]
        # the score reads the sums alone: the same whatever n_rows it is handed
        for s in sums:
            assert len({scorer.finalize(s, m) for m in (1, n, n + 1, 10**6)}) == 1
            assert scorer.finalize(s) == scorer.finalize(s, n)
        stated = scorer.sensitivity("add_or_remove")
        assert stated == pytest.approx(math.sqrt(2) * half)
        assert np.linalg.norm(sums[1] - sums[0]) <= stated + 1e-12
        assert np.linalg.norm(sums[1] - sums[0]) == pytest.approx(stated)  # tight
        # exact sums: the exact mean (the count column counts the rows)
        lo, hi = centre - half, centre + half
        assert scorer.finalize(sums[0]) == pytest.approx(
            -hi if isinstance(scorer, DPLogLoss) else hi)
        # the old normaliser, on the same neighbours: its scores are means over the
        # private n; times the normaliser (what its noise, z * half / n, is scaled to),
        # they move by about 2 * half: twice the sensitivity half its noise was given
        old = [_old_finalize(s, len(d[1]), centre, lo, hi) for s, d in zip(sums, (D, D_plus))]
        moved = n * abs(old[1] - old[0])
        assert moved == pytest.approx(2 * half * n / (n + 1))
        assert moved > half  # the old stated sensitivity: broken
        # the balanced accuracy divides by its own noisy class counts already
    bal = DPBalancedAccuracy(classes=[0, 1, 2])
    model = _TableClassifier(classes=(0, 1, 2)).fit()
    D, D_plus = _neighbours((np.array([[1.0, 0.0, 0.0]]), [0]),
                            (np.array([[0.0, 1.0, 0.0]]), [0]), n)
    bal_sums = [_sums(bal, model, *d) for d in (D, D_plus)]
    assert np.linalg.norm(bal_sums[1] - bal_sums[0]) <= bal.sensitivity("add_or_remove")
    assert len({bal.finalize(bal_sums[1], m) for m in (None, n, n + 1)}) == 1


def test_finalize_on_exact_sums_is_sklearns_score():
    model, X, y = _fitted_problem()
    pred = model.predict(X)
    n = len(y)
    acc = DPAccuracy()
    assert acc.finalize(_sums(acc, model, X, y), n) == pytest.approx(accuracy_score(y, pred))
    bal = DPBalancedAccuracy()
    assert bal.finalize(_sums(bal, model, X, y), n) == pytest.approx(
        balanced_accuracy_score(y, pred))
    # a class absent from the validation rows is left out, as scikit-learn does
    rows = y != 2
    with pytest.warns(UserWarning, match="y_pred contains classes not in y_true"):
        expected = balanced_accuracy_score(y[rows], model.predict(X[rows]))
    assert bal.finalize(_sums(bal, model, X[rows], y[rows]), rows.sum()) == pytest.approx(expected)
    # log-loss: no probability below exp(-L) here, then with clipping
    proba = model.predict_proba(X)
    ll = DPLogLoss(max_loss=50.0)
    assert proba.min() > math.exp(-50.0)
    assert ll.finalize(_sums(ll, model, X, y), n) == pytest.approx(-log_loss(y, proba))
    L = 1.0
    ll = DPLogLoss(max_loss=L)
    p_true = proba[np.arange(n), y]
    assert (p_true < math.exp(-L)).any()  # the clipping acts
    expected = np.mean(-np.log(np.clip(p_true, math.exp(-L), 1.0)))
    assert ll.finalize(_sums(ll, model, X, y), n) == pytest.approx(-expected)
    assert ll.finalize(_sums(ll, model, X, y), n) > -log_loss(y, proba)


def test_finalize_is_robust_to_noise():
    rng = np.random.RandomState(0)
    bal = DPBalancedAccuracy()
    # noisy counts near 0 or negative for rare classes: the score stays in [0, 1]
    for _ in range(200):
        sums = rng.normal(scale=5.0, size=6)
        v = bal.finalize(sums, 3)
        assert 0.0 <= v <= 1.0
        # a noisy count near 0 or negative: the mean divides by at least 1, and is clipped
        for scorer, lo, hi in ((DPAccuracy(), 0.0, 1.0), (DPLogLoss(max_loss=2.0), -2.0, 0.0),
                               (DPRecourseScore(cost_weight=0.5), -0.5, 1.0)):
            assert lo <= scorer.finalize(rng.normal(scale=5.0, size=2)) <= hi
    assert bal.finalize(np.array([0.0, 0.0, -1.0, -2.0]), 0) == 0.5  # no class seen: chance
    # a noisy count in [1/2, 1) divides as 1 (no amplified noise): (0.3/1 + 1/2 + 0/4 + 1/2) / 2
    assert bal.finalize(np.array([0.3, 0.0, 0.6, 4.0]), 5) == pytest.approx(0.65)
    assert 0.0 <= DPAccuracy().finalize([1e6, 5.0]) <= 1.0
    assert DPAccuracy().finalize([-1e6, 5.0]) == 0.0
    assert DPAccuracy().finalize([3.0, -2.0]) == 1.0  # no rows: pure noise, clipped
    # accuracy: 1/2 + S / max(N, 1), N twice the count column
    assert DPAccuracy().finalize([2.0, 5.0]) == pytest.approx(0.5 + 2.0 / 10.0)
    assert DPAccuracy().finalize([0.2, 0.3]) == pytest.approx(0.5 + 0.2 / 1.0)  # N = 0.6 -> 1
    ll = DPLogLoss(max_loss=2.0)
    assert ll.finalize([1e6, 10.0]) == -2.0 and ll.finalize([-1e6, 10.0]) == 0.0
    with pytest.raises(ValueError, match="2 \\* n_classes"):
        bal.finalize(np.zeros(3), 3)
    with pytest.raises(ValueError, match="needs the 2 sums"):
        DPAccuracy().finalize([1.0])


def test_labels_outside_the_classes_and_declared_classes():
    model = _TableClassifier(classes=(0, 1, 2)).fit()
    X = np.array([[1.0, 0, 0], [0, 1.0, 0]])
    y = np.array([0, 7])
    assert DPAccuracy().contributions(model, X, y).tolist() == [[0.5, 0.5], [-0.5, 0.5]]
    c = DPBalancedAccuracy().contributions(model, X, y)
    assert np.array_equal(c[1], np.zeros(6))  # no slot: contributes nothing
    L = 2.0
    assert DPLogLoss(max_loss=L).contributions(model, X, y)[1, 0] == L / 2  # probability 0
    # declared classes (any order) instead of classes_
    bal = DPBalancedAccuracy(classes=["b", "a"])
    model = _TableClassifier(classes=("a", "b")).fit()
    c = bal.contributions(model, np.array([[1.0, 0.0]]), np.array(["a"]))
    assert c.tolist() == [[0.0, 0.5, 0.0, 1.0]]
    with pytest.raises(ValueError, match="at least two labels"):
        DPBalancedAccuracy(classes=["a"]).contributions(model, X, y)
    with pytest.raises(ValueError, match="public label set"):
        DPBalancedAccuracy().contributions(LogisticRegression(), X, y)


def test_dataframe_and_series_rows():
    pd = pytest.importorskip("pandas")
    model, X, y = _fitted_problem(k=2)
    Xf, ys = pd.DataFrame(X, columns=["a", "b"]), pd.Series(y)
    model = LogisticRegression().fit(Xf, ys)
    for scorer in (DPAccuracy(), DPBalancedAccuracy(), DPLogLoss()):
        assert np.allclose(scorer.contributions(model, Xf, ys),
                           scorer.contributions(model, Xf, y))


def test_get_dp_scorer():
    assert isinstance(get_dp_scorer("accuracy"), DPAccuracy)
    assert isinstance(get_dp_scorer("balanced_accuracy"), DPBalancedAccuracy)
    assert isinstance(get_dp_scorer("neg_log_loss"), DPLogLoss)
    mine = DPLogLoss(max_loss=2.0)
    assert get_dp_scorer(mine) is mine
    assert isinstance(get_dp_scorer(None, LogisticRegression()), DPAccuracy)
    with pytest.raises(ValueError, match="'balanced_accuracy', 'counterfactual', 'neg_log_loss', 'recourse'"):
        get_dp_scorer("f1")
    with pytest.raises(ValueError, match="exact scores"):
        get_dp_scorer(accuracy_score)
    with pytest.raises(ValueError, match="No default DP scoring for LinearRegression"):
        get_dp_scorer(None, LinearRegression())
    with pytest.raises(ValueError, match="No default"):
        get_dp_scorer(None)


def test_interface_and_bad_parameters():
    for scorer in (DPAccuracy(), DPBalancedAccuracy(), DPLogLoss()):
        assert isinstance(scorer, DPScorer) and isinstance(scorer.name, str)
        assert scorer.greater_is_better is True and scorer.public is False
        assert scorer.planned_event(LogisticRegression(), 100, "add_or_remove") is None
        with pytest.raises(ValueError, match="relation must be one of"):
            scorer.sensitivity("swap")
        with pytest.raises(NotImplementedError, match="public_score"):
            scorer.public_score(LogisticRegression())
        assert scorer == type(scorer)() and repr(scorer).startswith(type(scorer).__name__)
    for bad in (0, -1.0, math.inf, float("nan"), "3", True):
        with pytest.raises(ValueError, match="max_loss must be"):
            DPLogLoss(max_loss=bad).sensitivity("replace_one")
    assert DPLogLoss(max_loss=2.0) != DPLogLoss(max_loss=3.0)


# ------------------------------------------------------------------ explainers


class _StubGenerator:
    """A counterfactual generator an adversary controls: row flags set validity and distance.

    Column 0 > 1/2: the counterfactual is valid; column 1 > 1/2: it is the
    opposite corner of the unit cube (distance 1), else the query itself.
    """

    bounds_ = (np.zeros(2), np.ones(2))

    def explain(self, X, desired_class=None):
        X = np.asarray(X, dtype=float)
        valid = X[:, 0] > 0.5
        cf = np.where((X[:, 1] > 0.5)[:, None], 1.0 - X, X)
        cf[~valid] = np.nan
        return CounterfactualSet(X, cf, desired_class=np.ones(len(X)), predicted_class=valid,
                                 valid=valid, epsilon_spent=1.0, delta_spent=0.0)


class _StubRecourse:
    """Recourse an adversary controls: column 0 > 1/2 succeeds; column 1 > 1/2 zigzags."""

    bounds_ = (np.zeros(2), np.ones(2))

    def explain(self, X):
        X = np.asarray(X, dtype=float)
        success = X[:, 0] > 0.5
        paths = [np.array([q, 1 - q, q, 1 - q]) if q[1] > 0.5 else q[None] for q in X]
        return RecoursePaths(X, paths, cost=np.zeros(len(X)), success=success,
                             epsilon_spent=1.0, delta_spent=0.0)


def test_explainer_scores_measure_in_the_unit_cube_of_the_bounds():
    """Both scorers clip the points to the public bounds and scale them into the unit cube
    (:class:`~skdpx.privacy.BoundsScaler`): a constant feature (lower == upper) adds no
    distance, whatever its values, and a normalised distance stays in [0, 1]."""
    lower, upper = np.array([0.0, 10.0, 5.0]), np.array([2.0, 30.0, 5.0])
    queries = np.array([[0.0, 10.0, 5.0], [1.0, 20.0, 7.0]])
    counterfactuals = np.array([[2.0, 30.0, 5.0], [3.0, 20.0, -1.0]])  # row 1: clipped to 2
    # in the cube: (0, 0) -> (1, 1) and (0.5, 0.5) -> (1, 0.5); the constant feature: nothing
    dist = np.array([math.sqrt(2.0), 0.5]) / math.sqrt(3.0)

    class Generator:
        bounds_ = (lower, upper)

        def explain(self, X, desired_class=None):
            return CounterfactualSet(queries, counterfactuals, desired_class=np.ones(2),
                                     predicted_class=np.ones(2), valid=np.ones(2, dtype=bool),
                                     epsilon_spent=1.0, delta_spent=0.0)

    class Recourse:
        bounds_ = (lower, upper)

        def explain(self, X):
            return RecoursePaths(queries, [np.array([q, c]) for q, c in zip(queries,
                                                                            counterfactuals)],
                                 cost=np.zeros(2), success=np.ones(2, dtype=bool),
                                 epsilon_spent=1.0, delta_spent=0.0)

    for scorer, model in ((DPCounterfactualScore(distance_weight=0.5), Generator()),
                          (DPRecourseScore(cost_weight=0.5), Recourse())):
        utility = scorer.contributions(model, queries, None)[:, 0] + 0.25  # centred at 1/4
        np.testing.assert_allclose(utility, 1.0 - 0.5 * dist, rtol=0, atol=1e-15)


def _corner_pool():
    grid = np.array([0.0, 0.25, 0.75, 1.0])
    return np.array(list(itertools.product(grid, grid)))


@pytest.mark.parametrize("weight", [0.0, 0.5, 2.0])
@pytest.mark.parametrize("kind", ["counterfactual", "recourse"])
def test_explainer_scores_sensitivity_is_the_brute_force_maximum_and_tight(kind, weight):
    if kind == "counterfactual":
        scorer, model = DPCounterfactualScore(distance_weight=weight), _StubGenerator()
    else:
        scorer, model = DPRecourseScore(cost_weight=weight), _StubRecourse()
    pool_X = _corner_pool()
    pool_y = np.zeros(len(pool_X))
    idx = np.random.RandomState(2).choice(len(pool_X), size=6, replace=False)
    worst = _neighbour_changes(scorer, model, pool_X[idx], pool_y[idx], pool_X, pool_y)
    for relation in RELATIONS:
        stated = scorer.sensitivity(relation)
        assert worst[relation] <= stated + 1e-12, (relation, worst[relation], stated)
        assert worst[relation] == pytest.approx(stated, rel=1e-9), (relation, worst[relation], stated)
    # the utility's range: the score on exact sums stays in [-w, 1]
    c = scorer.contributions(model, pool_X, pool_y)
    score = scorer.finalize(c.sum(axis=0), len(pool_X))
    assert -weight <= score <= 1.0


def test_recourse_path_cost_is_its_length_in_the_unit_cube():
    class Known(_StubRecourse):
        bounds_ = (np.zeros(2), np.array([2.0, 1.0]))

        def explain(self, X):
            X = np.asarray(X, dtype=float)
            paths = [np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 0.5]]), np.array([[2.0, 1.0]]),
                     np.array([[0.0, 1.0], [2.0, 0.0]])]
            return RecoursePaths(X, paths, cost=[1.0, 0.0, np.inf], success=[True, True, False],
                                 epsilon_spent=1.0, delta_spent=0.0)

    X = np.array([[0.0, 0.0], [2.0, 1.0], [0.0, 1.0]])
    scorer = DPRecourseScore(cost_weight=1.0, X_query=X)
    # unit-cube steps (0.5, 0) and (0, 0.5): length 1, over sqrt(2); no step: 0; failure: 1
    expected = np.mean([1 - 1 / math.sqrt(2), 1.0, -1.0])
    assert scorer.public_score(Known()) == pytest.approx(expected)


@pytest.fixture(scope="module")
def black_box():
    rng = np.random.RandomState(0)
    X = rng.uniform(0, 1, size=(600, 3))
    y = (X[:, 0] + X[:, 1] > 1).astype(int)
    return X, y, LogisticRegression(C=10.0).fit(X, y)


def test_counterfactual_score_on_a_fitted_generator(black_box):
    X, y, model = black_box
    dpc = DPCounterfactualGenerator(model, epsilon=1.0, latent_dim=2, ae_method="functional",
                                    bounds=(0, 1), max_iter=20, random_state=0).fit(X[:400])
    rows = X[400:]
    result = dpc.explain(rows)
    flips = flip_ratio(model, result.counterfactuals, result.desired_class)
    assert flips > 0.5
    # distance_weight=0: the noise-free score is the flip ratio
    plain = DPCounterfactualScore(distance_weight=0.0)
    assert plain.finalize(plain.contributions(dpc, rows, None).sum(axis=0), len(rows)) == \
        pytest.approx(flips)
    # with a weight: flip ratio minus w times the mean normalised distance (1 if invalid)
    scorer = DPCounterfactualScore(distance_weight=0.5)
    contrib = scorer.contributions(dpc, rows, None)
    dist = np.linalg.norm(result.counterfactuals - rows, axis=1) / math.sqrt(3)
    dist[~result.valid] = 1.0
    assert scorer.finalize(contrib.sum(axis=0), len(rows)) == pytest.approx(
        flips - 0.5 * dist.mean())
    # each row's contribution is its own: the same whatever the batch (the sensitivity needs it)
    split = np.vstack([scorer.contributions(dpc, rows[:70], None),
                       scorer.contributions(dpc, rows[70:], None)])
    assert np.array_equal(split, contrib)
    # public queries: no rows, no noise, the same utility
    public = DPCounterfactualScore(distance_weight=0.5, X_query=rows[:50])
    assert public.public and not scorer.public
    assert public.public_score(dpc) == pytest.approx(contrib[:50, 0].mean() + 0.25)
    assert public.planned_event(dpc, 100, "add_or_remove") is None


def test_recourse_score_on_a_fitted_privrecourse(black_box):
    X, y, model = black_box
    rec = PrivRecourse(model, n_clusters=10, epsilon=2.0, bounds=(0, 1),
                       random_state=0).fit(X[:400], y[:400])
    rows = X[400:]
    result = rec.explain(rows)
    assert result.success.mean() > 0.5
    plain = DPRecourseScore(cost_weight=0.0)
    assert plain.finalize(plain.contributions(rec, rows, None).sum(axis=0), len(rows)) == \
        pytest.approx(result.success.mean())
    scorer = DPRecourseScore(cost_weight=0.5)
    contrib = scorer.contributions(rec, rows, None)
    score = scorer.finalize(contrib.sum(axis=0), len(rows))
    assert result.success.mean() - 0.5 < score < result.success.mean()
    split = np.vstack([scorer.contributions(rec, rows[:70], None),
                       scorer.contributions(rec, rows[70:], None)])
    assert np.array_equal(split, contrib)
    public = DPRecourseScore(cost_weight=0.5, X_query=rows[:50])
    assert public.public
    assert public.public_score(rec) == pytest.approx(contrib[:50, 0].mean() + 0.25)


def _lime(model, **params):
    defaults = dict(epsilon=2.0, delta=1e-6, epsilon_per_query=0.3, max_iter=10, bounds=(0, 1),
                    random_state=0)
    defaults.update(params)
    return DPLimeExplainer(model, **defaults)


@pytest.mark.parametrize("strategy", ["basic", "adaptive", "enhanced"])
@pytest.mark.parametrize("n_queries", [3, 45])
def test_lime_planned_event_bounds_the_real_spend(black_box, strategy, n_queries):
    X, y, model = black_box
    queries = np.random.RandomState(1).uniform(0, 1, size=(n_queries, 3))
    explainer = _lime(model, strategy=strategy)
    scorer = DPLimeFidelity(queries)
    plan = scorer.planned_event(explainer, n_rows=300, relation="add_or_remove")
    with given_row_count(300):  # as a search fits it: the search's count, none of its own
        explainer.fit(X[:300])
    explainer.explain(queries)
    spent = ComposedDpEvent([event for _, event in explainer.ledger_.events])
    for delta in (1e-6, 1e-3):
        planned = compute_epsilon(plan, delta)
        assert compute_epsilon(spent, delta) <= planned + 1e-9
    assert math.isfinite(compute_epsilon(plan, 1e-6, accounting="rdp"))
    if strategy == "basic":  # whole answers, capped by the explainer's own budget: exact
        assert compute_epsilon(spent, 1e-6) == pytest.approx(compute_epsilon(plan, 1e-6))
    if n_queries == 45:  # the cap binds: the plan is no more than the explainer's epsilon
        assert compute_epsilon(plan, 1e-6) <= 2.0 * (1 + 1e-9)
    else:
        assert compute_epsilon(plan, 1e-6) < 2.0


def test_lime_plan_of_no_query_and_of_a_non_private_explainer(black_box):
    _, _, model = black_box
    assert isinstance(_lime(model)._plan_queries(0), NoOpDpEvent)
    assert isinstance(_lime(model, epsilon=np.inf, epsilon_per_query=np.inf)._plan_queries(2),
                      NonPrivateDpEvent)
    with pytest.raises(ValueError, match="scores a DPLimeExplainer"):
        DPLimeFidelity(np.zeros((2, 3))).planned_event(LogisticRegression(), 10, "replace_one")


def _fidelity_by_hand(explainer, model, queries, reference):
    """1 - sum L(phi) / sum L(0), written out with loops over the few queries."""
    phi = explainer.explain(queries).values * 2.0  # probability units -> label units (bounds (0, 1))
    labels = 2.0 * model.predict_proba(reference)[:, 1] - 1.0
    loss = zero = 0.0
    for z, p in zip(queries, phi):
        r = np.linalg.norm(reference - z, axis=1)
        a = np.minimum(1.0, 1.0 / np.maximum(2.0 * r * (r + 1.0), 1e-300))  # stable weight
        loss += np.sum(a * ((reference - z) @ p - labels) ** 2)
        zero += np.sum(a * labels ** 2)
    return 1.0 - loss / zero


def test_lime_fidelity_is_the_local_loss_on_public_points(black_box):
    X, y, model = black_box
    rng = np.random.RandomState(3)
    queries, reference = rng.uniform(0, 1, size=(6, 3)), rng.uniform(0, 1, size=(200, 3))
    scorer = DPLimeFidelity(queries, X_reference=reference)
    assert scorer.public
    exact = scorer.public_score(_lime(model, epsilon=np.inf, epsilon_per_query=np.inf).fit(X))
    expected = _fidelity_by_hand(_lime(model, epsilon=np.inf, epsilon_per_query=np.inf).fit(X),
                                 model, queries, reference)
    assert exact == pytest.approx(expected, rel=1e-9)
    assert 0.0 < exact <= 1.0
    # more noise, less fidelity; a vanishing budget is worse than no explanation
    fair = scorer.public_score(_lime(model, epsilon=5.0, epsilon_per_query=0.5).fit(X))
    noisy = scorer.public_score(_lime(model, epsilon=0.05, epsilon_per_query=0.005).fit(X))
    assert exact >= fair > noisy
    assert noisy < 0.0
    # X_reference defaults to the queries
    alone = DPLimeFidelity(queries).public_score(
        _lime(model, epsilon=np.inf, epsilon_per_query=np.inf).fit(X))
    assert alone != exact and alone <= 1.0


def test_lime_fidelity_refuses_what_it_cannot_score(black_box):
    X, y, model = black_box
    scorer = DPLimeFidelity(X[:2])
    with given_row_count(50):  # 50 rows: a DP count at epsilon 1 (std 28) could refuse
        no_box = DPLimeExplainer(epsilon=1.0, bounds=(0, 1)).fit(X[:50], y[:50] * 1.0)
        fitted = _lime(model).fit(X[:50])
    with pytest.raises(ValueError, match="needs one"):
        scorer.public_score(no_box)
    with pytest.raises(ValueError, match="kernel_width"):
        DPLimeFidelity(X[:2], kernel_width=0).public_score(fitted)
    with pytest.raises(NotImplementedError, match="public=False"):
        DPCounterfactualScore().public_score(_StubGenerator())


def test_get_dp_scorer_for_explainers(black_box):
    _, _, model = black_box
    assert isinstance(get_dp_scorer(None, DPCounterfactualGenerator(model)), DPCounterfactualScore)
    assert isinstance(get_dp_scorer(None, PrivRecourse(model)), DPRecourseScore)
    assert isinstance(get_dp_scorer("counterfactual"), DPCounterfactualScore)
    assert isinstance(get_dp_scorer("recourse"), DPRecourseScore)
    with pytest.raises(ValueError, match="DPLimeFidelity\\(X_query\\)"):
        get_dp_scorer(None, DPLimeExplainer(model))
    with pytest.raises(ValueError, match="DPLimeFidelity\\(X_query\\)"):
        get_dp_scorer("lime_fidelity")
    for bad in (-1.0, math.inf, "1", None):
        with pytest.raises(ValueError, match="must be a finite number >= 0"):
            DPCounterfactualScore(distance_weight=bad).sensitivity("add_or_remove")
        with pytest.raises(ValueError, match="must be a finite number >= 0"):
            DPRecourseScore(cost_weight=bad).sensitivity("replace_one")


def test_lime_plan_covers_the_warm_start_step(black_box):
    # adaptive answers after the first 30 pay a warm-start choice on top of their steps:
    # with max_iter=2 every such answer runs both steps, 3 steps in all
    X, y, model = black_box
    queries = np.random.RandomState(4).uniform(0, 1, size=(35, 3))
    explainer = _lime(model, strategy="adaptive", max_iter=2, epsilon=50.0)
    plan = explainer._plan_queries(len(queries))
    with given_row_count(300):  # as a search fits it: the search's count, none of its own
        explainer.fit(X[:300])
    explainer.explain(queries)
    spent = ComposedDpEvent([event for _, event in explainer.ledger_.events])
    steps = sum(count for _, count in leaf_counts(event_to_json(spent)))
    assert steps == 30 * 2 + 5 * 3
    assert compute_epsilon(spent, 1e-6) <= compute_epsilon(plan, 1e-6)


def test_lime_fidelity_of_a_regressor_is_on_centred_outputs(black_box):
    X, _, _ = black_box
    target = X @ np.array([2.0, -1.0, 0.5])
    reg = Ridge(alpha=1e-3).fit(X[:300], target[:300])
    rng = np.random.RandomState(5)
    queries, reference = rng.uniform(0, 1, size=(4, 3)), rng.uniform(0, 1, size=(100, 3))
    explainer = _lime(reg, epsilon=np.inf, epsilon_per_query=np.inf,
                      output_bounds=(-1.0, 2.5)).fit(X[300:])
    fidelity = DPLimeFidelity(queries, X_reference=reference).public_score(explainer)
    # by hand: labels (t(x) - t(z)) / w, explanations back to label units (times 1 / w)
    w = 3.5
    phi = explainer.explain(queries).values / w
    t = np.clip(reg.predict(reference), -1.0, 2.5)
    tz = np.clip(reg.predict(queries), -1.0, 2.5)
    loss = zero = 0.0
    for z, p, o in zip(queries, phi, tz):
        r = np.linalg.norm(reference - z, axis=1)
        a = np.minimum(1.0, 1.0 / np.maximum(2.0 * r * (r + 1.0), 1e-300))
        labels = (t - o) / w
        loss += np.sum(a * ((reference - z) @ p - labels) ** 2)
        zero += np.sum(a * labels ** 2)
    assert fidelity == pytest.approx(1.0 - loss / zero, rel=1e-9)
    assert fidelity > 0.9  # a linear black box, explained without noise


def test_an_empty_validation_part_contributes_nothing(black_box):
    X, y, model = black_box
    empty = X[:0]
    for scorer, n_stats in ((DPAccuracy(), 2), (DPBalancedAccuracy(), 4), (DPLogLoss(), 2),
                            (DPCounterfactualScore(), 2), (DPRecourseScore(), 2)):
        c = scorer.contributions(model, empty, y[:0])
        assert c.shape == (0, n_stats)
        assert np.isfinite(scorer.finalize(c.sum(axis=0), 0))


def test_scorers_compare_by_parameters_with_arrays_and_frames():
    pd = pytest.importorskip("pandas")
    Q = np.arange(6.0).reshape(3, 2)
    assert DPLimeFidelity(Q) == DPLimeFidelity(Q.copy())
    assert DPLimeFidelity(Q) != DPLimeFidelity(Q + 1)
    assert DPCounterfactualScore(X_query=pd.DataFrame(Q)) == DPCounterfactualScore(
        X_query=pd.DataFrame(Q))
    assert DPCounterfactualScore(X_query=Q) != DPCounterfactualScore()
    assert DPRecourseScore(cost_weight=0.2) != DPRecourseScore(cost_weight=0.3)
    assert "X_query" in repr(DPRecourseScore(X_query=Q))


def test_explainer_scores_on_a_dataframe_with_a_categorical_column():
    pd = pytest.importorskip("pandas")
    from sklearn.compose import make_column_transformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    rng = np.random.RandomState(0)
    n = 500
    df = pd.DataFrame({"a": rng.uniform(0, 1, n), "b": rng.uniform(0, 1, n),
                       "c": rng.choice(["x", "y"], n)})
    y = ((df.a + df.b + 0.3 * (df.c == "x")) > 1.1).astype(int).to_numpy()
    black_box = make_pipeline(make_column_transformer((OneHotEncoder(), ["c"]),
                                                      remainder="passthrough"),
                              LogisticRegression()).fit(df, y)
    public = dict(bounds={"a": (0, 1), "b": (0, 1)}, categories={"c": ["x", "y"]},
                  random_state=0)
    train, rows = df[:300], df[300:]
    dpc = DPCounterfactualGenerator(black_box, epsilon=1.0, latent_dim=2, ae_method="functional",
                                    max_iter=20, **public).fit(train)
    scorer = DPCounterfactualScore()
    c = scorer.contributions(dpc, rows, y[300:])
    assert c.shape == (200, 2) and 0.5 < scorer.finalize(c.sum(axis=0), 200) <= 1.0
    rec = PrivRecourse(black_box, n_clusters=10, epsilon=2.0, **public).fit(train, y[:300])
    assert 0.5 < DPRecourseScore(X_query=rows[:50]).public_score(rec) <= 1.0
    lime = DPLimeExplainer(black_box, epsilon=2.0, epsilon_per_query=0.5, max_iter=20,
                           **public).fit(train)
    assert 0.0 < DPLimeFidelity(rows[:4], X_reference=rows[4:]).public_score(lime) <= 1.0
