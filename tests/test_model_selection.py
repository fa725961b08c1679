"""scikit-learn's searches over skdpx estimators: their fits priced, their exact scores warned about (issue 18, 7).

* a search is priced before it starts (candidates x folds + refit), at the
  fits' caps or, given the rows where their number is public (replace-one),
  at their planned spends, and a ledger that cannot pay for all of it is
  refused before anything is spent; under add-or-remove (the number of rows
  private) each fit's own DP row count exactly and the rest at its cap, and
  nothing in the price depends on the number of rows;
* exact scores on private folds are unaccounted releases, and say so
  (``PrivacyLeakWarning``);
* a joblib worker that cannot reach an in-memory ledger fails with a message
  that names the sqlite ledger, visible in scikit-learn's "All the N fits
  failed" error.
"""

import warnings

from dp_accounting.pld import common as pld_common
from dp_accounting.pld import privacy_loss_distribution as pld
import numpy as np
import pytest
from scipy.stats import expon, loguniform, uniform
from sklearn.model_selection import GridSearchCV, KFold, RandomizedSearchCV
from sklearn.multiclass import OneVsRestClassifier
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler

from skdpx import DPLimeExplainer, DPLocallyLinearClassifier, PrivRecourse
from skdpx.model_selection import price_search
from skdpx.privacy import (
    COUNT_SHARE,
    BudgetError,
    FixedLossDpEvent,
    PrivacyLedger,
    PrivacyLeakWarning,
    event_to_json,
    fixed_loss_event,
)

from ._helpers import run_python

DELTA = 1e-5


@pytest.fixture(autouse=True)
def _quiet_scores():
    # each test that is about a warning asks for it; the rest need not see it
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*no ledger accounts for", category=PrivacyLeakWarning)
        yield


def _problem(n=240, d=3, seed=0):
    # at most 256 rows: DP-SGD's batch is all the rows, so its calibration is fast
    rng = np.random.RandomState(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    y = (X[:, 0] + 0.3 * X[:, 1] > 0).astype(int)
    return X, y


def _clf(ledger=None, **params):
    params = {"bounds": (-1, 1), "epochs": 2, "delta": DELTA, **params}
    return DPLocallyLinearClassifier(accountant=ledger, **params)


def _recorded(ledger):
    return sorted(event_to_json(event) for _, event in ledger.events)


# --------------------------------------------------------------------------
# 1. The price: candidates x folds + refit
# --------------------------------------------------------------------------
def test_price_counts_candidates_folds_and_refit():
    grid = {"epsilon": [0.5, 1.0, 2.0], "n_maps": [1, 2]}
    price = price_search(GridSearchCV(_clf(), grid, cv=3))
    assert (price.n_candidates, price.n_splits, price.n_fits) == (6, 3, 19)
    assert not price.exact  # no rows given: each fit at its cap
    # each fold's fit at its candidate's own cap, in the search's order; the refit at the worst
    assert [f.epsilon for f in price.fits] == [0.5] * 6 + [1.0] * 6 + [2.0] * 6 + [2.0]
    assert [f.split for f in price.fits[:4]] == [0, 1, 2, 0]
    assert price.fits[-1].split is None and price.fits[-1].params["epsilon"] == 2.0
    assert price.epsilon_basic == pytest.approx(3 * 2 * (0.5 + 1.0 + 2.0) + 2.0)
    assert price.delta == pytest.approx(19 * DELTA)
    assert price.epsilon <= price.epsilon_basic

    # refit=False, a splitter, an estimator with its grid, epsilon set through a Pipeline
    pipe = make_pipeline(_clf())
    price = price_search(pipe, param_grid={"dplocallylinearclassifier__epsilon": [0.5, 1.0]},
                         cv=KFold(4), refit=False)
    assert price.n_fits == 8 and price.epsilon_basic == pytest.approx(4 * 1.5)
    assert all(f.steps == ("dplocallylinearclassifier",) for f in price.fits)
    frame = price.to_frame()
    assert list(frame["epsilon"]) == [0.5] * 4 + [1.0] * 4


def test_price_of_an_estimator_takes_the_searchs_parameters_only_once():
    with pytest.raises(TypeError, match="with an estimator only"):
        price_search(GridSearchCV(_clf(), {}), cv=3)
    with pytest.raises(TypeError, match="GridSearchCV, a RandomizedSearchCV or an estimator"):
        price_search("not an estimator")


# --------------------------------------------------------------------------
# 2. Given the rows: the very spends the search records
# --------------------------------------------------------------------------
def test_price_under_add_or_remove_is_the_counts_and_the_caps():
    # the number of rows is private: each fit releases its own DP count (priced
    # exactly) and plans the rest from it (priced at its cap); nothing in the
    # price depends on the number of rows, and the ledger stays below it
    X, y = _problem()
    ledger = PrivacyLedger()
    search = GridSearchCV(_clf(ledger), {"epsilon": [0.5, 1.0], "n_maps": [1, 2]}, cv=3)
    price = price_search(search, X, y)
    assert not price.exact and price.n_fits == 13
    for fit in price.fits:
        eps = fit.params["epsilon"] if fit.params else 1.0
        assert fit.count_epsilon == pytest.approx(COUNT_SHARE * eps)
        assert event_to_json(fixed_loss_event(fit.count_epsilon)) in event_to_json(fit.event)
    # the same price with one row more or less, or without the rows
    for other in (price_search(search, X[:-1], y[:-1]), price_search(search)):
        assert [event_to_json(f.event) for f in other.fits] == \
            [event_to_json(f.event) for f in price.fits]
        assert other.epsilon == price.epsilon
    assert len(ledger) == 0  # pricing spends nothing
    search.fit(X, y)
    counts = [event.epsilon for _, event in ledger.events
              if isinstance(event, FixedLossDpEvent)]
    for fit in price.fits[:12]:  # the folds' counts, exactly as priced
        counts.remove(next(c for c in counts if c == pytest.approx(fit.count_epsilon)))
    # the refit's: its candidate's, chosen during the search (the price takes the worst)
    assert len(counts) == 1 and counts[0] <= price.fits[-1].count_epsilon + 1e-12
    assert counts[0] == pytest.approx(COUNT_SHARE * search.best_params_["epsilon"])
    assert len(ledger) == 2 * 13  # each fit: its count, then the rest
    assert ledger.epsilon_spent <= price.epsilon + 1e-12
    assert ledger.delta_spent == pytest.approx(price.delta)
    with pytest.raises(ValueError, match="counts its splits from the rows"):
        from sklearn.model_selection import LeaveOneOut
        price_search(GridSearchCV(_clf(), {}, cv=LeaveOneOut()), X, y)


def test_exact_price_is_what_the_search_records_where_the_rows_are_public():
    # replace-one: the number of rows (and the folds' sizes) is public, and a fit
    # that spends only what it plans is priced at that very plan
    from sklearn.frozen import FrozenEstimator
    from sklearn.linear_model import LogisticRegression

    X, y = _problem()
    ledger = PrivacyLedger(relation="replace_one")
    box = FrozenEstimator(LogisticRegression().fit(X, y))
    rec = PrivRecourse(box, n_clusters=5, bounds=(-1, 1), delta=DELTA, accountant=ledger)
    search = GridSearchCV(rec, {"epsilon": [0.5, 1.0], "n_clusters": [4, 5]}, cv=3,
                          scoring=lambda est, X, y: 0.0)
    price = price_search(search, X, y)
    assert price.exact and price.n_fits == 13
    assert all(f.count_epsilon == 0 for f in price.fits)
    assert len(ledger) == 0  # pricing spends nothing
    search.fit(X, y)
    # the 12 fold fits: the same events, one by one
    folds = sorted(event_to_json(f.event) for f in price.fits[:12])
    refit = _recorded(ledger)
    for event in folds:
        refit.remove(event)
    assert len(refit) == 1
    # the refit's candidate was chosen during the search: priced at the worst,
    # and the ledger's total is the price of the candidate it chose
    options = {event_to_json(o.event): total for o, total in price.refit_totals}
    assert max(options.values()) == price.epsilon
    assert ledger.epsilon_spent == pytest.approx(options[refit[0]], rel=1e-9)
    assert ledger.epsilon_spent <= price.epsilon + 1e-12
    assert ledger.delta_spent == pytest.approx(price.delta)


def test_check_refuses_a_search_the_ledger_cannot_pay_for():
    # Before: with a capped ledger the folds spent the budget and the refit was
    # refused, leaving no model. The price sees it before anything is spent.
    X, y = _problem()
    search = lambda ledger, refit=True: GridSearchCV(_clf(ledger, epsilon=1.0), {}, cv=3,
                                                      refit=refit)
    folds_only = price_search(search(None, refit=False), X, y).epsilon
    whole = price_search(search(None), X, y).epsilon
    assert folds_only < whole

    ledger = PrivacyLedger(epsilon=(folds_only + whole) / 2)
    price = price_search(search(ledger), X, y)
    with pytest.raises(BudgetError, match="cannot pay for the search"):
        price.check()
    assert len(ledger) == 0
    price_search(search(ledger, refit=False), X, y).check(ledger)  # the folds alone fit
    # (under add-or-remove each fit's rest is priced at its cap, well above what its
    # plan spends, so a ledger between the two prices may still pay for the search:
    # the price is an upper bound, and the check conservative)

    ledger = PrivacyLedger(epsilon=whole)
    price_search(search(ledger), X, y).check()
    search(ledger).fit(X, y)
    assert len(ledger) == 2 * 4  # each fit: its DP row count, then the rest
    assert ledger.epsilon_spent <= whole


def test_check_needs_one_ledger():
    price = price_search(GridSearchCV(_clf(), {"epsilon": [1.0]}, cv=2))
    with pytest.raises(ValueError, match="pass the ledger that pays"):
        price.check()
    with pytest.raises(TypeError, match="PrivacyLedger"):
        price.check(object())
    price.check(PrivacyLedger(epsilon=3.0, delta=1e-4))
    with pytest.raises(BudgetError):
        price.check(PrivacyLedger(epsilon=2.5, delta=1e-4))
    # the caps' deltas add up: a ledger capped at one fit's delta cannot pay for three
    with pytest.raises(BudgetError):
        price.check(PrivacyLedger(epsilon=100.0, delta=DELTA))


# --------------------------------------------------------------------------
# 3. Composing caps: never above the sum, tighter for many small fits
# --------------------------------------------------------------------------
def test_caps_compose_as_the_worst_epsilon_delta_mechanisms():
    price = price_search(GridSearchCV(_clf(epsilon=0.1, delta=1e-6), {}, cv=KFold(29)))
    assert price.n_fits == 30 and price.epsilon_basic == pytest.approx(3.0)
    # each fit: its DP row count (0.005, added as it is, as the ledger adds it), then the
    # rest at its cap; the rests' optimal composition of 30 (0.095, 1e-6)-DP mechanisms,
    # from dp_accounting
    count = COUNT_SHARE * 0.1
    one = pld.from_privacy_parameters(
        pld_common.DifferentialPrivacyParameters(0.1 - count, 1e-6),
        value_discretization_interval=1e-4)
    reference = one.self_compose(30).get_epsilon_for_delta(1e-4) + 30 * count
    assert price.epsilon_at(1e-4) == pytest.approx(reference, rel=1e-9)
    assert price.epsilon_at(1e-4) < 0.8 * price.epsilon_basic
    assert price.epsilon <= price.epsilon_basic
    assert price.epsilon_at(price.delta) == pytest.approx(price.epsilon)
    # a cap's delta is not free: below the deltas' sum there is no guarantee
    assert price.epsilon_at(1e-5) == np.inf


# --------------------------------------------------------------------------
# 4. RandomizedSearchCV: its own draws, or its worst
# --------------------------------------------------------------------------
def test_random_search_candidates_are_the_searchs_own():
    X, y = _problem(n=120)
    state = np.random.RandomState(7)
    search = RandomizedSearchCV(_clf(PrivacyLedger()), {"epsilon": loguniform(0.3, 3)},
                                n_iter=3, cv=2, random_state=state)
    before = state.get_state()[1].copy()
    price = price_search(search)
    np.testing.assert_array_equal(state.get_state()[1], before)  # not consumed
    search.fit(X, y)
    drawn = [p["epsilon"] for p in search.cv_results_["params"]]
    assert [f.params["epsilon"] for f in price.fits if f.split == 0] == drawn
    assert [f.epsilon for f in price.fits[:-1]] == [e for e in drawn for _ in range(2)]


def test_random_search_without_a_seed_is_priced_at_its_worst():
    price = price_search(RandomizedSearchCV(_clf(), {"epsilon": uniform(0.5, 1.0),
                                                     "learning_rate": uniform(0.1, 1)},
                                            n_iter=4, cv=2))
    assert price.n_fits == 9
    assert all(f.epsilon == 1.5 and f.params is None for f in price.fits)  # uniform(0.5, 1): [0.5, 1.5]
    # lists: n_iter is cut to the grid's size, as the search cuts it
    price = price_search(RandomizedSearchCV(_clf(), {"epsilon": [0.5, 1.0]}, n_iter=5, cv=2))
    assert price.n_candidates == 2 and price.epsilon_basic == pytest.approx(5 * 1.0)
    with pytest.raises(ValueError, match="no finite upper end"):
        price_search(RandomizedSearchCV(_clf(), {"epsilon": expon()}, n_iter=2, cv=2))


# --------------------------------------------------------------------------
# 5. What a fit fits: Pipelines, steps outside any ledger, caps for explainers
# --------------------------------------------------------------------------
def test_pipeline_steps_are_found_and_other_learners_named():
    X, y = _problem()
    grid = {"clf__epsilon": [0.5, 1.0]}
    scaled = Pipeline([("scale", StandardScaler()), ("clf", _clf())])
    with pytest.warns(PrivacyLeakWarning, match=r"\['scale'\] are not skdpx estimators"):
        price = price_search(GridSearchCV(scaled, grid, cv=2), X, y)
    # behind a transformer, the step's input is not the search's rows: its cap
    assert not price.exact and price.unaccounted_steps == ["scale"]
    assert price.epsilon_basic == pytest.approx(2 * 1.5 + 1.0)

    stateless = Pipeline([("id", FunctionTransformer()), ("skip", "passthrough"),
                          ("clf", _clf())])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        price = price_search(GridSearchCV(stateless, grid, cv=2), X, y)
    assert price.unaccounted_steps == []
    assert not [w for w in caught if "not skdpx estimators" in str(w.message)]
    direct = Pipeline([("skip", "passthrough"), ("clf", _clf())])
    # add-or-remove: the fit's own count, then the rest at its cap (the rows' number private)
    fits = price_search(GridSearchCV(direct, grid, cv=2), X, y).fits
    assert [f.count_epsilon for f in fits] == pytest.approx([COUNT_SHARE * 0.5] * 2
                                                            + [COUNT_SHARE * 1.0] * 3)

    with pytest.raises(ValueError, match="OneVsRestClassifier.*a number of times"):
        price_search(GridSearchCV(OneVsRestClassifier(_clf()), {}, cv=2))


def test_an_explainer_is_priced_at_its_cap():
    # DPLimeExplainer spends on queries, up to its cap: the cap bounds each fit
    X, y = _problem(n=60)
    lime = DPLimeExplainer(epsilon=2.0, delta=1e-6, bounds=(-1, 1))
    price = price_search(GridSearchCV(lime, {"epsilon_per_query": [0.5, 1.0]}, cv=2), X, y)
    assert not price.exact and all(f.epsilon == 2.0 for f in price.fits)
    assert price.n_fits == 5


# --------------------------------------------------------------------------
# 6. Exact scores are unaccounted releases, and say so
# --------------------------------------------------------------------------
def test_scores_on_private_rows_warn():
    X, y = _problem(n=120)
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        clf = _clf(PrivacyLedger()).fit(X, y)
        with pytest.warns(PrivacyLeakWarning,
                          match="score's accuracies.*no ledger accounts for.*private selection"):
            accuracy = clf.score(X, y)
        assert 0.0 <= accuracy <= 1.0
        # scikit-learn's default scorer is score(): a search still works, and warns
        search = GridSearchCV(_clf(PrivacyLedger()), {"n_maps": [1, 2]}, cv=2)
        with pytest.warns(PrivacyLeakWarning, match="no ledger accounts for"):
            search.fit(X, y)
        assert search.best_params_["n_maps"] in (1, 2)
        with pytest.warns(PrivacyLeakWarning, match=r"validation scores \(cv_results_\)"):
            price_search(search)


# --------------------------------------------------------------------------
# 7. A worker cannot reach an in-memory ledger: a message that says what to do
# --------------------------------------------------------------------------
def test_worker_processes_and_an_in_memory_ledger_fail_readably():
    X, y = _problem(n=60)
    ledger = PrivacyLedger()
    search = GridSearchCV(_clf(ledger), {"n_maps": [1, 2]}, cv=2, n_jobs=2)
    with pytest.warns(UserWarning, match=r"n_jobs=2 .*PrivacyLedger\(path="):
        price_search(search)
    # worker processes forked (scikit-learn's default, loky, spawns them: the same
    # error, after a slower start; tests/test_ledger.py runs it), from a fresh
    # interpreter: a process forked from a pytest-xdist worker inherits its
    # channel and its threads
    message, spent = run_python(_FORKED_SEARCH).strip().split("\n---\n")
    # what the user sees names the way out
    assert "All the 4 fits failed" in message
    assert "LedgerDetachedError" in message
    assert "PrivacyLedger(path='budget.sqlite'" in message
    assert "sqlite file" in message
    assert spent == "0"


_FORKED_SEARCH = """
import warnings
import joblib
from sklearn.model_selection import GridSearchCV
from skdpx.privacy import PrivacyLedger
from tests.test_model_selection import _clf, _problem
warnings.simplefilter("ignore")
X, y = _problem(n=60)
ledger = PrivacyLedger()
search = GridSearchCV(_clf(ledger), {"n_maps": [1, 2]}, cv=2, n_jobs=2)
try:
    with joblib.parallel_backend("multiprocessing", n_jobs=2):
        search.fit(X, y)
except ValueError as error:
    print(error)
print("---")
print(len(ledger))
"""
