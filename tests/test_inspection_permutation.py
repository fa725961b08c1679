"""skdpx.inspection.permutation_importance: exactness, sensitivity, noise_std, audit, bad input.

* at ``epsilon=inf`` the importances are an independent computation's (the
  same replacement draws, scikit-learn's metrics) for every supported score,
  numpy and pandas inputs; with the exact marginal they are near
  scikit-learn's permutation importance;
* the draws come from the declared domain or the (DP) marginal, one row's
  independently of the others';
* the stated sensitivities bound one row's change of the released sums and
  of the marginals' histogram (add-or-remove and replace-one), and an
  empirical audit of the release stays below the claim and catches it
  under-noised by 2x;
* ``importances_mean +- 1.645 noise_std`` covers the noiseless value about
  90% of the time: the score release's part alone (uniform replacement, fixed
  draws), and the total with the DP marginal where its public bound is
  reached; the marginal's part is the vertex maximum of its bound (brute
  force) and the parts combine in quadrature;
* bad inputs are refused before anything is spent; one ledger holds it with
  the other releases.
"""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.compose import make_column_transformer
from sklearn.dummy import DummyClassifier
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.inspection import permutation_importance as sk_permutation_importance
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.metrics import (accuracy_score, brier_score_loss, mean_absolute_error,
                             mean_squared_error)
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

from skdpx.inspection import partial_dependence, permutation_importance
from skdpx.inspection._permutation_importance import _marginal_noise_std, _PermutationImportance
from skdpx.privacy import BudgetError, PrivacyLedger, UtilityWarning, noise_source

from ._helpers import audit_gaussian

pytestmark = pytest.mark.filterwarnings("ignore::skdpx.exceptions.PrivacyLeakWarning")

_RNG = np.random.default_rng(0)
_X = _RNG.uniform(0, 1, (3000, 3))
_Y = (_X[:, 0] + 0.3 * _X[:, 1] + _RNG.normal(0, 0.1, 3000)) > 0.65
_MODEL = LogisticRegression(C=100).fit(_X[:1000], _Y[:1000])
_ROWS, _LABELS = _X[1000:], _Y[1000:]  # the private rows: the black box never saw them


def _frame(n=1200, seed=1):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"age": rng.integers(18, 80, n),
                       "hours": rng.uniform(0, 60, n),
                       "job": pd.Categorical(rng.choice(["a", "b", "c"], n, p=[0.6, 0.3, 0.1]),
                                             categories=["a", "b", "c"])})
    y = (df.age / 80 + (df.job == "b") + rng.normal(0, 0.3, n)) > 1
    return df, y.to_numpy()


def _frame_model():
    df, y = _frame(seed=2)
    return make_pipeline(make_column_transformer((OneHotEncoder(), ["job"]),
                                                 remainder="passthrough"),
                         HistGradientBoostingClassifier(max_iter=30)).fit(df, y)


_FRAME_PUBLIC = dict(bounds={"age": (18, 80), "hours": (0, 60)},
                     categories={"job": ["a", "b", "c"]})


class _Recorded:
    """Wraps ``_PermutationImportance._draws``: records the replacement draws a fit makes."""

    def __init__(self, monkeypatch):
        self.draws = []
        original = _PermutationImportance._draws

        def record(est, domains, probabilities, u):
            out = original(est, domains, probabilities, u)
            self.draws.append(out)
            return out

        monkeypatch.setattr(_PermutationImportance, "_draws", record)

    def feature(self, j):
        return np.concatenate([d[j] for d in self.draws])


def _reference(model, X, y, draws, score, replace):
    """The importances, computed independently: the recorded draws set in by ``replace``,
    scored with scikit-learn's metrics (greater is better)."""
    base = score(model, X, y)
    out = np.array([[base - score(model, replace(X, j, draws.feature(j)[:, r]), y)
                     for r in range(draws.feature(j).shape[1])]
                    for j in range(X.shape[1])])
    return out


def _replace_array(X, j, values):
    Z = X.copy()
    Z[:, j] = values
    return Z


def _replace_frame(levels):
    def replace(df, j, values):
        out = df.copy()
        name = df.columns[j]
        if name in levels:
            out[name] = pd.Categorical(np.asarray(levels[name], dtype=object)[values],
                                       dtype=df[name].dtype)
        else:
            out[name] = np.asarray(values).astype(df[name].dtype)
        return out
    return replace


def _accuracy(model, X, y):
    return accuracy_score(y, model.predict(X))


def _brier(model, X, y):
    return -brier_score_loss(y, model.predict_proba(X)[:, 1])


def _log_loss_floored(floor):
    def score(model, X, y):
        p = model.predict_proba(X)
        p_true = p[np.arange(len(y)), np.searchsorted(model.classes_, y)]
        return np.mean(np.log(np.maximum(p_true, floor)))
    return score


# --------------------------------------------------------------------------
# The non-private value: an independent computation with the same draws
# --------------------------------------------------------------------------
@pytest.mark.parametrize("scoring, score", [("accuracy", _accuracy), (None, _accuracy),
                                            ("neg_brier_score", _brier),
                                            ("neg_log_loss", _log_loss_floored(0.05))])
@pytest.mark.parametrize("replacement", ["marginal", "uniform"])
def test_exact_at_infinite_epsilon_numpy(monkeypatch, scoring, score, replacement):
    draws = _Recorded(monkeypatch)
    r = permutation_importance(_MODEL, _ROWS, _LABELS, scoring=scoring, bounds=(0, 1),
                               n_repeats=3, replacement=replacement, proba_floor=0.05,
                               epsilon=np.inf, random_state=0)
    exact = _reference(_MODEL, _ROWS, _LABELS, draws, score, _replace_array)
    np.testing.assert_allclose(r.importances, exact, atol=1e-12)
    np.testing.assert_allclose(r.importances_mean, exact.mean(axis=1), atol=1e-12)
    np.testing.assert_allclose(r.importances_std, exact.std(axis=1), atol=1e-12)
    assert np.all(r.noise_std == 0) and r.n_rows == len(_ROWS)
    assert r.baseline_score == pytest.approx(score(_MODEL, _ROWS, _LABELS))
    assert list(r.feature_names) == ["x0", "x1", "x2"]


@pytest.mark.parametrize("scoring, metric", [("neg_mean_squared_error", mean_squared_error),
                                             ("neg_mean_absolute_error", mean_absolute_error)])
def test_exact_at_infinite_epsilon_regressor(monkeypatch, scoring, metric):
    target = 3 * _X[:, 0] - _X[:, 2]
    reg = LinearRegression().fit(_X[:1000], target[:1000])
    draws = _Recorded(monkeypatch)
    r = permutation_importance(reg, _ROWS, target[1000:], scoring=scoring, bounds=(0, 1),
                               output_bounds=(-0.5, 2.5), n_repeats=2, epsilon=np.inf,
                               random_state=0)

    def score(model, X, y):  # prediction and target clipped to output_bounds
        return -metric(np.clip(y, -0.5, 2.5), np.clip(model.predict(X), -0.5, 2.5))

    exact = _reference(reg, _ROWS, target[1000:], draws, score, _replace_array)
    np.testing.assert_allclose(r.importances, exact, atol=1e-12)
    assert np.clip(reg.predict(_ROWS), -0.5, 2.5).min() == -0.5  # the clip mattered


def test_exact_at_infinite_epsilon_dataframe(monkeypatch):
    df, y = _frame()
    model = _frame_model()
    draws = _Recorded(monkeypatch)
    r = permutation_importance(model, df, y, scoring="neg_brier_score", n_repeats=2,
                               epsilon=np.inf, random_state=0, **_FRAME_PUBLIC)
    exact = _reference(model, df, y, draws, _brier, _replace_frame(_FRAME_PUBLIC["categories"]))
    np.testing.assert_allclose(r.importances, exact, atol=1e-12)
    # a categorical column is one feature (its one-hot group), named as the column
    assert list(r.feature_names) == ["age", "hours", "job"]
    assert r.importances.shape == (3, 2)


def test_close_to_scikit_learns_permutation_importance():
    # the exact marginal (epsilon=inf) stands in for scikit-learn's shuffle
    r = permutation_importance(_MODEL, _ROWS, _LABELS, bounds=(0, 1), n_repeats=10,
                               n_bins=64, epsilon=np.inf, random_state=0)
    sk = sk_permutation_importance(_MODEL, _ROWS, _LABELS, n_repeats=10, random_state=0)
    np.testing.assert_allclose(r.importances_mean, sk.importances_mean, atol=0.01)
    assert list(np.argsort(r.importances_mean)) == list(np.argsort(sk.importances_mean))


# --------------------------------------------------------------------------
# The draws: from the declared domain or the marginal, row by row
# --------------------------------------------------------------------------
def test_uniform_draws_cover_the_declared_domain(monkeypatch):
    df, y = _frame()
    draws = _Recorded(monkeypatch)
    rows = df[df.age < 30]  # rows in a corner of the domain: the draws still span it
    permutation_importance(_frame_model(), rows, y[df.age < 30], replacement="uniform",
                           n_repeats=20, epsilon=np.inf, random_state=0, **_FRAME_PUBLIC)
    age, hours, job = (draws.feature(j).ravel() for j in range(3))
    assert np.all(age == np.rint(age)) and age.min() == 18 and age.max() == 80
    assert hours.min() >= 0 and hours.max() <= 60 and hours.mean() == pytest.approx(30, abs=2)
    np.testing.assert_allclose(np.bincount(job) / len(job), [1 / 3] * 3, atol=0.03)


def test_marginal_draws_follow_the_rows_at_infinite_epsilon(monkeypatch):
    df, y = _frame(n=3000)
    draws = _Recorded(monkeypatch)
    r = permutation_importance(_frame_model(), df, y, n_repeats=5, epsilon=np.inf,
                               random_state=0, **_FRAME_PUBLIC)
    job = draws.feature(2).ravel()
    observed = df.job.value_counts(normalize=True)[["a", "b", "c"]].to_numpy()
    np.testing.assert_allclose(r.marginals[2], observed, atol=1e-12)
    np.testing.assert_allclose(np.bincount(job, minlength=3) / len(job), observed, atol=0.02)
    # an integer column with 63 values (one bin each at n_bins=128)
    age = draws.feature(0).ravel()
    assert np.all(age == np.rint(age)) and age.min() >= 18 and age.max() <= 80
    assert abs(age.mean() - df.age.mean()) < 1.0


def test_marginal_is_released_with_noise_at_a_finite_epsilon(monkeypatch):
    df, y = _frame(n=3000)
    r = permutation_importance(_frame_model(), df, y, epsilon=0.5, random_state=3,
                               **_FRAME_PUBLIC)
    exact = df.job.value_counts(normalize=True)[["a", "b", "c"]].to_numpy()
    assert not np.allclose(r.marginals[2], exact, atol=1e-9)
    np.testing.assert_allclose(r.marginals[2], exact, atol=0.05)
    assert all(np.isclose(p.sum(), 1.0) and (p >= 0).all() for p in r.marginals)


def test_small_released_counts_are_dropped_from_the_marginal():
    # rows only in the lower half of hours' bounds: the upper 64 of its 128 bins are
    # empty; their noisy counts below 2 noise stds count as 0 (clipping negatives
    # alone would leave about half of them with spurious mass)
    df, y = _frame(n=3000)
    df["hours"] = df["hours"] / 2
    r = permutation_importance(_frame_model(), df, y, epsilon=1.0, random_state=5,
                               **_FRAME_PUBLIC)
    assert np.mean(r.marginals[1][64:] == 0) > 0.9
    assert r.marginals[1][64:].sum() < 0.02


# --------------------------------------------------------------------------
# Sensitivity and the spend
# --------------------------------------------------------------------------
def _fixed_draws(est, n_rows, seed=0):
    """Replace ``est``'s draws by fixed ones: row i's are the same in every dataset."""
    rng = np.random.default_rng(seed)

    def draws(domains, probabilities, u):
        assert len(u) <= n_rows
        return [fixed[:len(u)] for fixed in table]

    table = None

    def make(data):
        nonlocal table
        domains = data.extra["domains"]
        table = [d.draw(d.widths / d.widths.sum(), rng.random((n_rows, est.n_repeats, 2)))
                 for d in domains]

    est._draws = draws
    return make


def _release(model=_MODEL, epsilon=1.0, relation="add_or_remove", **kw):
    ledger = PrivacyLedger(epsilon=10.0, delta=1e-6, relation=relation)
    est = _PermutationImportance(model, bounds=(0, 1), epsilon=epsilon, delta=1e-6,
                                 accountant=ledger, random_state=0, **kw)
    return est, ledger


def _sums_with(est, rows, labels, extra_rows, extra_labels):
    data = est._validate_fit(rows, labels)
    make = _fixed_draws(est, len(rows) + len(extra_rows))
    make(data)
    probabilities = [d.widths / d.widths.sum() for d in data.extra["domains"]]
    base = est._score_sums(data, probabilities, noise_source(0))
    out = []
    for row, label in zip(extra_rows, extra_labels):
        more = type(data)(np.vstack([data.X, row]), y=np.append(data.y, label),
                          classes=data.classes, extra=data.extra)
        out.append(est._score_sums(more, probabilities, noise_source(0)) - base)
    return out


def test_sensitivity_bounds_one_rows_change():
    # a black box that always says 1: a row labelled 1 scores 1 everywhere, one
    # labelled 0 scores 0 everywhere: centred vectors of norm sqrt(1 + p R) / 2
    always = DummyClassifier(strategy="constant", constant=True).fit(_X[:10], _Y[:10] | True)
    est, _ = _release(always, n_repeats=4, replacement="uniform")
    est.fit(_ROWS, _LABELS)
    p, R = 3, 4
    assert est.sensitivity_ == pytest.approx(math.sqrt(1 + p * R) / 2)
    changes = _sums_with(est, _ROWS[:200], _LABELS[:200], _ROWS[:2], [True, False])
    for change in changes:  # add-or-remove: one row's vector
        assert np.linalg.norm(change) <= est.sensitivity_ + 1e-9
        assert np.linalg.norm(change) > 0.99 * est.sensitivity_  # the bound is tight
    # a row whose scores move with its draws stays within it too
    for change in _sums_with(est, _ROWS[:200], _LABELS[:200], _ROWS[5:30], _LABELS[5:30]):
        assert np.linalg.norm(change) <= est.sensitivity_ + 1e-9
    rep, _ = _release(always, n_repeats=4, replacement="uniform", relation="replace_one")
    rep.fit(_ROWS, _LABELS)
    assert rep.sensitivity_ == pytest.approx(2 * est.sensitivity_)
    assert np.linalg.norm(changes[1] - changes[0]) <= rep.sensitivity_ + 1e-9
    assert np.linalg.norm(changes[1] - changes[0]) > 0.99 * rep.sensitivity_


def test_histogram_sensitivity():
    df, y = _frame(n=500)
    for relation, bound in [("add_or_remove", math.sqrt(3)), ("replace_one", math.sqrt(6))]:
        ledger = PrivacyLedger(epsilon=10.0, delta=1e-6, relation=relation)
        est = _PermutationImportance(_frame_model(), epsilon=1.0, accountant=ledger,
                                     random_state=0, **_FRAME_PUBLIC)
        est.fit(df, y)
        data = est._validate_fit(df, y)
        assert est._sensitivities(data, relation)[1] == pytest.approx(bound)
        base = est._histograms(data)
        # row 0, and a row in another bin of every feature (the worst case)
        codes = np.column_stack([d.bins(data.X) for d in data.extra["domains"]])
        k = np.flatnonzero((codes != codes[0]).all(axis=1))[0]
        one = est._histograms(type(data)(data.X[:1], extra=data.extra))
        other = est._histograms(type(data)(data.X[k:k + 1], extra=data.extra))
        change = one if relation == "add_or_remove" else one - other
        assert np.linalg.norm(change) <= bound + 1e-9
        assert base.sum() == 3 * len(df)
    assert np.linalg.norm(one - other) == pytest.approx(math.sqrt(6))  # the bound is tight


def test_spend_is_the_count_and_the_gaussian_releases():
    est, ledger = _release(epsilon=1.0)
    est.fit(_ROWS, _LABELS)
    labels = [label for label, _ in ledger.events]
    assert len(labels) == 2 and "row count" in labels[0] and "two releases" in labels[1]
    assert ledger.epsilon_spent == pytest.approx(1.0, abs=1e-3)
    assert ledger.epsilon_spent <= 1.0
    est, ledger = _release(epsilon=1.0, replacement="uniform")
    est.fit(_ROWS, _LABELS)
    assert len(ledger.events) == 2 and ledger.epsilon_spent == pytest.approx(1.0, abs=1e-3)
    # replace-one: the number of rows is public, no count is released
    est, ledger = _release(epsilon=1.0, relation="replace_one")
    est.fit(_ROWS, _LABELS)
    assert len(ledger.events) == 1 and est.n_rows_ == len(_ROWS) and est.n_rows_std_ == 0


def test_noise_std_is_the_stated_formula():
    est, _ = _release(epsilon=0.5, n_repeats=4)
    est.fit(_ROWS, _LABELS)
    n, s_n, R = est.n_rows_, est.n_rows_std_, 4
    sigma = est.noise_multiplier_ * est.sensitivity_
    expected = np.sqrt(sigma ** 2 * (1 + 1 / R) + (est.importances_mean_ * s_n) ** 2) / n
    np.testing.assert_allclose(est.score_noise_std_, expected)
    np.testing.assert_allclose(est.importances_mean_, est.importances_.mean(axis=1))


# --------------------------------------------------------------------------
# noise_std: the intervals cover the noiseless value about 90% of the time
# --------------------------------------------------------------------------
def _fit_fixed(epsilon, seed, rows, labels):
    est = _PermutationImportance(_MODEL, bounds=(0, 1), n_repeats=2, replacement="uniform",
                                 epsilon=epsilon, delta=1e-6, random_state=seed)
    make = _fixed_draws(est, len(rows))
    make(type("D", (), {"extra": {"domains": _domains_of(rows, labels)}}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(rows, labels)


def _domains_of(rows, labels):
    probe = _PermutationImportance(_MODEL, bounds=(0, 1), epsilon=np.inf)
    return probe._validate_fit(rows, labels).extra["domains"]


def test_noise_std_intervals_cover_the_noiseless_value_about_90_percent():
    rows, labels = _ROWS[:400], _LABELS[:400]
    exact = _fit_fixed(np.inf, 0, rows, labels).importances_mean_
    inside = []
    for seed in range(300):
        est = _fit_fixed(1.0, seed, rows, labels)
        inside.append(np.abs(est.importances_mean_ - exact) <= 1.645 * est.noise_std_)
    coverage = np.mean(inside)
    # 900 intervals (not independent: one baseline and one count per release); measured
    # 0.904 (0.611 with noise_std halved)
    assert 0.85 <= coverage <= 0.95, coverage


# --------------------------------------------------------------------------
# noise_std with the DP marginal: the score release's and the marginal's parts
# --------------------------------------------------------------------------
class _Below(ClassifierMixin, BaseEstimator):
    """Predicts True when x0 < 0.5: with every label True and rows uniform on [0, 1], the
    score is 1 on the lower 8 of 16 bins of x0 and 0 on the others, the vertex where the
    public bound of the marginal's noise is reached (uniform q, half the bins at L)."""

    def fit(self, X, y):
        self.classes_ = np.array([False, True])
        return self

    def predict(self, X):
        return np.asarray(X, dtype=float)[:, 0] < 0.5


_UNIFORM_ROWS = np.random.default_rng(7).uniform(0, 1, (4000, 1))


def _coupled(est, n_rows, seed=0):
    """The draws from fixed uniforms (the same in every release, the real probabilities):
    a release and the noiseless one differ by the marginal, not by their draws."""
    fixed = np.random.default_rng(seed).random((n_rows, 1, est.n_repeats, 2))
    start = [0]
    original = est._draws

    def draws(domains, probabilities, u):
        block = fixed[start[0]:start[0] + len(u)]
        start[0] = (start[0] + len(u)) % n_rows
        return original(domains, probabilities, block)

    est._draws = draws


def _fit_marginal(epsilon, seed):
    est = _PermutationImportance(_Below().fit(None, None), bounds=(0, 1), n_repeats=1,
                                 n_bins=16, epsilon=epsilon, delta=1e-6, random_state=seed)
    _coupled(est, len(_UNIFORM_ROWS), seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(_UNIFORM_ROWS, np.ones(len(_UNIFORM_ROWS), bool))


def test_noise_std_with_the_marginal_covers_the_noiseless_marginal_importance():
    # the target: the same scheme with the exact histogram (no noise, no threshold) and
    # the same draws (other draws in each release: one fixed set's local density would
    # scale the marginal's effect); the marginal's noise is most of the error here
    fits = [_fit_marginal(1.0, seed) for seed in range(300)]
    exact = [_fit_marginal(np.inf, seed).importances_mean_[0] for seed in range(300)]
    err = np.abs([f.importances_mean_[0] - e for f, e in zip(fits, exact)])
    score = np.array([f.score_noise_std_[0] for f in fits])
    marginal = np.array([f.marginal_noise_std_[0] for f in fits])
    total = np.array([f.noise_std_[0] for f in fits])
    assert np.all(marginal > 2 * score)
    coverage = np.mean(err <= 1.645 * total)
    halved = np.mean(err <= 1.645 * np.hypot(score, marginal / 2))
    dropped = np.mean(err <= 1.645 * score)
    # measured 0.897 (the marginal's part halved: 0.647, dropped: 0.400)
    assert 0.85 <= coverage <= 0.95, coverage
    assert halved < 0.78 and dropped < 0.6, (halved, dropped)


def _vertex_bound(counts, floor, sigma_h, width):
    """The marginal's bound by brute force: every vertex of [0, L]^K."""
    kept = counts[(counts >= floor) & (counts > 0)]
    q = kept / kept.sum()
    best = 0.0
    for mask in range(2 ** len(q)):
        g = width * np.array([(mask >> b) & 1 for b in range(len(q))], dtype=float)
        best = max(best, np.sum((g - q @ g) ** 2))
    return sigma_h * math.sqrt(best) / kept.sum()


def test_marginal_noise_std_is_the_vertex_maximum():
    rng = np.random.default_rng(3)
    for _ in range(20):
        counts = rng.choice([0.0, 5.0, 40.0, 300.0], 9) + rng.normal(0, 5, 9)
        counts[0] = 300.0  # (one kept bin at least)
        got = _marginal_noise_std(counts, 10.0, 5.0, 2.0)
        assert got == pytest.approx(_vertex_bound(counts, 10.0, 5.0, 2.0), rel=1e-12)
        # no point of the cube beyond it
        kept = counts[counts >= 10.0]
        q = kept / kept.sum()
        g = rng.uniform(0, 2.0, (500, len(q)))
        spread = ((g - (g @ q)[:, None]) ** 2).sum(axis=1).max()
        assert 5.0 * math.sqrt(spread) / kept.sum() <= got
    assert _marginal_noise_std([1.0, 2.0], 10.0, 5.0, 2.0) == 2.0  # nothing kept: L
    assert _marginal_noise_std([1.0, 2.0], 0.0, 0.0, 2.0) == 0.0  # no noise


def test_noise_std_parts_combine_as_documented(monkeypatch):
    import skdpx.inspection._permutation_importance as module

    calls = []
    original = module.gaussian_release

    def record(values, **kw):
        out = original(values, **kw)
        calls.append((out, kw["noise_multiplier"] * kw["sensitivity"]))
        return out

    monkeypatch.setattr(module, "gaussian_release", record)
    est, _ = _release(epsilon=0.5, n_repeats=2, n_bins=8, scoring="neg_brier_score")
    est.fit(_ROWS, _LABELS)
    (hist, sigma_h), _ = calls
    # the marginal's part from the released histogram alone (by brute force), L = 1
    expected = [_vertex_bound(c, 2 * sigma_h, sigma_h, 1.0) for c in np.split(hist, 3)]
    np.testing.assert_allclose(est.marginal_noise_std_, expected, rtol=1e-12)
    np.testing.assert_allclose(est.noise_std_, np.hypot(est.score_noise_std_,
                                                        est.marginal_noise_std_))
    # the uniform replacement has no marginal; at epsilon=inf nothing is noisy
    for kw in (dict(epsilon=0.5, replacement="uniform"), dict(epsilon=np.inf)):
        est = _PermutationImportance(_MODEL, bounds=(0, 1), delta=1e-6, random_state=0, **kw)
        est.fit(_ROWS, _LABELS)
        assert np.all(est.marginal_noise_std_ == 0)
        np.testing.assert_array_equal(est.noise_std_, est.score_noise_std_)


# --------------------------------------------------------------------------
# An empirical audit of the release
# --------------------------------------------------------------------------
_CLAIM, _DELTA = 1.0, 1e-5


def _audit(under_noise=1.0):
    always = DummyClassifier(strategy="constant", constant=True).fit(_X[:10], _Y[:10] | True)
    est = _PermutationImportance(always, bounds=(0, 1), n_repeats=2, replacement="uniform",
                                 epsilon=_CLAIM, delta=_DELTA, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(_ROWS[:300], _LABELS[:300])
    rows, labels = _ROWS[:300], np.ones(300, bool)
    data = est._validate_fit(rows, labels)
    make = _fixed_draws(est, 301)
    make(data)
    probabilities = [d.widths / d.widths.sum() for d in data.extra["domains"]]
    canary = type(data)(np.vstack([rows, [[0.5, 0.5, 0.5]]]), y=np.append(data.y, True),
                        classes=data.classes, extra=data.extra)
    sums = {"data": est._score_sums(canary, probabilities, noise_source(0)),
            "neighbour": est._score_sums(data, probabilities, noise_source(0))}
    return audit_gaussian(sums, est.noise_multiplier_ * under_noise, est.sensitivity_, _DELTA)


def test_audit_stays_below_the_claim():
    # measured 0.65 (20,000 runs a side); the uniform replacement: the scores' release
    # takes the whole Gaussian budget (epsilon 1 with the count's 0.05 as prior)
    assert _audit() < _CLAIM


def test_audit_catches_half_the_noise():
    # measured 1.74
    assert _audit(under_noise=0.5) > _CLAIM


# --------------------------------------------------------------------------
# Rows the black box fails on, labels it does not know
# --------------------------------------------------------------------------
def test_a_row_the_black_box_fails_on_is_neutral():
    class Fussy(LogisticRegression):
        def predict(self, X):
            if np.any(np.asarray(X)[:, 2] > 1.5):
                raise RuntimeError("no")
            return super().predict(X)

    fussy = Fussy(C=100).fit(_X[:1000], _Y[:1000])
    rows, labels = _ROWS[:200].copy(), _LABELS[:200]
    rows[3, 2] = 2.0  # this row fails at baseline and in every repeat but x2's
    r = permutation_importance(fussy, rows, labels, bounds=(0, 1), replacement="uniform",
                               epsilon=np.inf, random_state=0)
    assert np.isfinite(r.importances).all()
    # an unknown label is a wrong prediction, not a refusal
    odd = np.where(np.arange(200) == 7, "?", labels.astype(object))
    r = permutation_importance(_MODEL, _ROWS[:200], odd, bounds=(0, 1), epsilon=np.inf,
                               random_state=0)
    assert np.isfinite(r.importances).all()


# --------------------------------------------------------------------------
# Bad input: refused before anything is spent
# --------------------------------------------------------------------------
class _FailsOnProbe(LogisticRegression):
    def predict(self, X):
        if np.any(np.asarray(X)[:, 0] >= 0.5):
            raise RuntimeError("outside my range")
        return super().predict(X)


_BAD = [
    (dict(scoring="r2"), "not supported"),
    (dict(scoring="roc_auc"), "not supported"),
    (dict(scoring=len), "not supported"),
    (dict(scoring="neg_mean_squared_error"), "is for a regressor"),
    (dict(bounds=None), "no declared bounds"),
    (dict(bounds={"hours": (0, 60)}, frame=True), "no declared bounds"),
    (dict(frame=True, categories=None), "job"),
    (dict(delta=0.0), "delta > 0"),
    (dict(output_bounds=(0, 1)), "leave output_bounds=None"),
    (dict(model=LinearRegression().fit(_X[:100], _X[:100, 0])), "R\\^2"),
    (dict(model=LinearRegression().fit(_X[:100], _X[:100, 0]),
          scoring="neg_mean_squared_error"), "output_bounds"),
    (dict(model=LinearRegression().fit(_X[:100], _X[:100, 0]), output_bounds=(1, 0),
          scoring="neg_mean_absolute_error"), "lower < upper"),
    (dict(model=_FailsOnProbe().fit(_X[:100], _X[:100, 0] > 0.5)), "public probe"),
    (dict(y=_LABELS[:10]), "different numbers of rows"),
    (dict(model=DummyClassifier().fit(_X[:10], _Y[:10]).predict, scoring="accuracy"),
     "estimator"),
]


@pytest.mark.parametrize("kw, message", _BAD)
def test_bad_input_spends_nothing(kw, message):
    kw = dict(kw)
    frame = kw.pop("frame", False)
    model = kw.pop("model", _frame_model() if frame else _MODEL)
    X, y = _frame() if frame else (_ROWS, _LABELS)
    y = kw.pop("y", y)
    params = dict(bounds=(0, 1), epsilon=1.0, delta=1e-6)
    if frame:
        params.update(_FRAME_PUBLIC)
    params.update(kw)
    ledger = PrivacyLedger(epsilon=5.0, delta=1e-5)
    with pytest.raises(ValueError, match=message) as err:
        permutation_importance(model, X, y, accountant=ledger, **params)
    assert ledger.events == [] and ledger.epsilon_spent == 0
    if message not in ("estimator", "job"):  # (scikit-learn's, and the schema's own)
        assert "Nothing was spent" in str(err.value)


def test_one_ledger_with_the_other_releases():
    ledger = PrivacyLedger(epsilon=1.2, delta=1e-5)
    partial_dependence(_MODEL, _ROWS, 0, bounds=(0, 1), grid_resolution=4, epsilon=0.5,
                       accountant=ledger, random_state=0)
    spent = ledger.epsilon_spent
    permutation_importance(_MODEL, _ROWS, _LABELS, bounds=(0, 1), epsilon=1.0,
                           accountant=ledger, random_state=0)
    # composed on the ledger (Gaussian releases compose to less than the sum)
    assert 1.0 < ledger.epsilon_spent <= 1.5 and ledger.epsilon_spent > spent
    assert sum(label.startswith("permutation_importance") for label, _ in ledger.events) == 2
    n_events = len(ledger.events)
    with pytest.raises(BudgetError):  # over the cap: refused, nothing spent
        permutation_importance(_MODEL, _ROWS, _LABELS, bounds=(0, 1), epsilon=1.0,
                               accountant=ledger)
    assert len(ledger.events) == n_events


# --------------------------------------------------------------------------
# DataFrames: categoricals over the declared levels, dtypes kept
# --------------------------------------------------------------------------
def test_the_replaced_column_reads_the_declared_levels_not_the_rows_dtype():
    """A categorical column is replaced by a categorical over the declared levels,
    whatever categories the rows' dtype has (``astype("category")`` takes them from
    the rows): a missing level changes nothing of how the column is built, and a
    black box that cannot take a declared level is refused on public points,
    before the spend, by the same message whichever rows are given."""
    df, y = _frame()
    declared = {"job": ["a", "b", "c", "d"]}
    model = make_pipeline(make_column_transformer(
        (OneHotEncoder(handle_unknown="ignore"), ["job"]), remainder="passthrough"),
        HistGradientBoostingClassifier(max_iter=30)).fit(*_frame(seed=2))
    full = df.astype({"job": "object"}).astype({"job": "category"})
    lacking = full[full["job"] != "c"].astype({"job": "object"}).astype({"job": "category"})
    assert "c" not in lacking["job"].cat.categories
    for rows, labels in ((full, y), (lacking, y[full["job"] != "c"])):
        r = permutation_importance(model, rows, labels, bounds=_FRAME_PUBLIC["bounds"],
                                   categories=declared, replacement="uniform",
                                   epsilon=np.inf, random_state=0)
        assert np.isfinite(r.importances).all()
    messages = []
    for rows, labels in ((full, y), (lacking, y[full["job"] != "c"])):
        ledger = PrivacyLedger(epsilon=5.0, delta=1e-5)
        with pytest.raises(ValueError, match="public probe points") as err:
            permutation_importance(_frame_model(), rows, labels,
                                   bounds=_FRAME_PUBLIC["bounds"], categories=declared,
                                   replacement="uniform", accountant=ledger, random_state=0)
        assert ledger.events == []
        messages.append(str(err.value))
    assert messages[0] == messages[1]


def test_nullable_integer_and_missing_values_reach_the_black_box():
    df, y = _frame()
    df["age"] = pd.array(df["age"], dtype="Int64")
    model = HistGradientBoostingClassifier(categorical_features="from_dtype",
                                           max_iter=20).fit(*_frame(seed=3))
    df.loc[df.index[::5], "job"] = np.nan
    ledger = PrivacyLedger(epsilon=5.0, delta=1e-5)
    r = permutation_importance(model, df, y, accountant=ledger, random_state=0,
                               **_FRAME_PUBLIC)
    assert np.isfinite(r.importances_mean).all() and len(ledger.events) == 2


def test_categorical_dtype_from_the_rows_does_not_reach_the_black_box():
    # a DataFrame's categorical dtype made with astype("category") holds the rows' own
    # levels: one added row with a new declared level would shift every other row's
    # category codes. The rows reach the black box over the declared levels instead.
    from sklearn.base import BaseEstimator, ClassifierMixin

    class Codes(ClassifierMixin, BaseEstimator):
        classes_ = np.array([0, 1])

        def predict(self, X):
            return (X["c"].cat.codes.to_numpy() == 1).astype(int)

    rng = np.random.default_rng(0)
    c = rng.choice(["a", "b"], 300)
    D = pd.DataFrame({"c": pd.Series(c).astype("category"), "x": rng.uniform(0, 1, 300)})
    y = (c == "b").astype(int)
    D2 = pd.concat([D.astype({"c": object}), pd.DataFrame({"c": ["A"], "x": [0.5]})],
                   ignore_index=True).astype({"c": "category"})
    kw = dict(bounds={"x": (0, 1)}, categories={"c": ["A", "a", "b"]}, epsilon=np.inf,
              replacement="uniform", n_repeats=1, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r1 = permutation_importance(Codes(), D, y, **kw)
        r2 = permutation_importance(Codes(), D2, np.append(y, 0), **kw)
    # the baseline's sum of accuracies moves by the added row's own score at most
    assert abs(r2.baseline_score * 301 - r1.baseline_score * 300) <= 1.0 + 1e-9


def test_a_warning_names_the_function_not_the_private_class():
    # (outside review, issue 40, F5) the UtilityWarning named _PermutationImportance
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (400, 2))
    y = (X[:, 0] > 0.5).astype(int)
    model = LogisticRegression().fit(X, y)
    # seeded: the warning depends on the DP count, which secure noise left large enough
    # to say nothing in 8 runs of 200 (a flaky CI run on scikit-learn 1.6.1)
    with pytest.warns(UtilityWarning, match=r"^permutation_importance: the DP count"):
        permutation_importance(model, X[:5], y[:5], bounds=(0, 1), epsilon=0.05, n_repeats=1,
                               random_state=0)
