"""DP scorers of private model selection (issue 20, item 2).

* on exact (noise-free) sums, ``finalize`` gives scikit-learn's score;
* the stated L2 sensitivity is the largest change of the column sums over
  brute-force neighbours (a row added, removed or replaced, with adversarial
  rows in the pool), and it is attained (tight);
* ``finalize`` stays in the score's range on noisy sums;
* ``get_dp_scorer`` resolves names, instances and defaults, and refuses the rest.
"""

import itertools
import math

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.metrics import accuracy_score, balanced_accuracy_score, log_loss

from skdpx.model_selection import (
    DPAccuracy,
    DPBalancedAccuracy,
    DPLogLoss,
    DPScorer,
    get_dp_scorer,
)

RELATIONS = ("add_or_remove", "replace_one")


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
    assert bal.finalize(np.array([0.0, 0.0, -1.0, -2.0]), 0) == 0.5  # no class seen: chance
    # a noisy count in [1/2, 1) divides as 1 (no amplified noise): (0.3/1 + 1/2 + 0/4 + 1/2) / 2
    assert bal.finalize(np.array([0.3, 0.0, 0.6, 4.0]), 5) == pytest.approx(0.65)
    assert 0.0 <= DPAccuracy().finalize([1e6], 10) <= 1.0
    assert DPAccuracy().finalize([-1e6], 10) == 0.0
    assert DPAccuracy().finalize([3.0], 0) == 1.0  # no rows: pure noise, clipped
    ll = DPLogLoss(max_loss=2.0)
    assert ll.finalize([1e6], 10) == -2.0 and ll.finalize([-1e6], 10) == 0.0
    with pytest.raises(ValueError, match="2 \\* n_classes"):
        bal.finalize(np.zeros(3), 3)


def test_labels_outside_the_classes_and_declared_classes():
    model = _TableClassifier(classes=(0, 1, 2)).fit()
    X = np.array([[1.0, 0, 0], [0, 1.0, 0]])
    y = np.array([0, 7])
    assert DPAccuracy().contributions(model, X, y).ravel().tolist() == [0.5, -0.5]
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
    with pytest.raises(ValueError, match="'balanced_accuracy', 'neg_log_loss'"):
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
