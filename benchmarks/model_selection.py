"""Private hyperparameter search against the usual ways of tuning (issue 20, item 4).

DPLocallyLinearClassifier on Adult (bundled, ``skdpx.datasets``) and on the
hospital data (Diabetes 130-US, ``../shared/data/diabetes130``, see
``benchmarks/_hospital.py``), at a total epsilon of 2, delta 1e-5. Four ways
to end up with one model:

(a) the default estimator at epsilon 2;
(b) the best candidate in hindsight: every candidate of the grid fitted at
    epsilon 2 on all training rows, the best picked by TEST accuracy, per
    seed (a non-private selection that sees the test set: an upper bound on
    what any tuning of this grid picks). Its honest cost is the composition
    of all the candidates' fits (their planned events, composed with PLD at
    delta 1e-5);
(c) scikit-learn's ``GridSearchCV`` (``--cv`` folds, 3) over the same grid,
    every fit at epsilon 2, with its honest composed cost (``price_search``:
    every fold's fit and the refit, at delta 1e-5). Its validation scores
    and its choice are exact values computed from private rows, accounted
    nowhere: that cost understates what it releases;
(d) ``DPRandomSearchCV`` at a total epsilon of 2, delta 1e-5, everything
    included (training, DP accuracy scores on a 20 % holdout, the selection,
    and the refit of the selected candidate with half of the budget), over
    the grid as its pool (``n_iter`` = 12: the mean number of runs). Three
    times: with a logarithmic number of runs (truncated negative binomial,
    ``eta=0``: the cheapest per run, but it stops after one or two runs 38 %
    of the time at mean 12; the default when this benchmark was written),
    with a Poisson number of runs (about 12 runs every time, for a little
    less budget per run; now the default), and with Poisson runs and no
    refit (the best run's model). Reported: the pick's test accuracy, its
    parameters, the ledger's total, and that total recomputed with
    dp_accounting alone (:func:`recompute`).

The grid (12 candidates, the default among them): ``learning_rate`` in
{0.1, 0.3, 1.0} x ``max_grad_norm`` in {0.3, 1.0} x ``epochs`` in {5, 20}.
A pilot (2 seeds, one parameter moved at a time from the defaults, at
epsilon 2 and 0.7, the per-run budget of a search being about 0.5) found
that the DP-SGD step (learning rate times clipping norm), the training
length and the batch size move the accuracy most (hospital: 0.558 at
max_grad_norm=0.1, 0.592 at learning_rate=0.03, 0.597 at epochs=2, 0.620 at
the defaults, 0.6215 at learning_rate=1; Adult: 0.834 to 0.847), while
``n_maps``, ``beta`` and the optimizer move it by less than 0.2 points. The
grid crosses the two DP-SGD knobs with the training length: it holds
candidates clearly worse than the defaults (small steps, short training),
the defaults, and larger steps that may be better; epochs=5 also makes half
of the candidates four times cheaper to fit. The pilot looked at the test
sets of the very data searched here: the grid is an unaccounted,
non-private choice made after looking at the data, the same for all four
methods.

One explainer, searched: DPLimeExplainer on Adult (black box:
HistGradientBoostingClassifier on the second half of the test split; the
private explanation rows: the training split) over ``max_iter`` in {30,
100, 300} x ``radius`` in {0.5, 1, 2} (``epsilon_per_query`` 0.1), scored
by ``DPLimeFidelity`` on 10 public selection queries (the search's score is
public: no noise, every run explains the queries, which is its spend) and
measured on 20 other public test queries (explained within each
explainer's cap), 2,000 public reference points: (a), (b) and (d) as above
(no (c): GridSearchCV needs a scorer on private folds, which DPLime does
not have).

The test rows are never used by (a), (c) or (d) to choose anything.
Accuracies are means and standard deviations over ``--seeds`` seeds (each
seed: the estimators' noise, the search's split, number of runs, draws and
score noise). Seeded noise makes the fits reproducible and is therefore not
a release to publish (``PrivacyLeakWarning``, silenced here).

Usage: ``python benchmarks/model_selection.py [--seeds 3] [--parts adult
hospital lime] [--cv 3] [--jobs 1] [--quick]``. ``--quick``: one seed,
Adult only, cv=2 (a smoke run of a few minutes). Writes (updates)
``benchmarks/results/model_selection.json``, each part with the
``_run_record`` of the run that last wrote it (``run``: commit, date,
versions, machine, command; an earlier run that added to it in
``earlier_runs``). Runtime with ``--seeds 3`` on
one core: about 6 min for Adult, 15 min for the hospital data, 3 min for
the explainer on a quiet machine (12 min on a busy one; measured on 2
shared cores: 32 min in all); ``--jobs 2`` runs the fits of (b) and (c) on
two cores. ``--parts`` runs a part alone and ``--searches`` adds private
searches to saved results.
"""

import argparse
import json
import os
import sys
import time
import warnings

import numpy as np
from scipy.special import logsumexp
from dp_accounting import ComposedDpEvent, GaussianDpEvent
from dp_accounting.dp_event import RepeatAndSelectDpEvent
from dp_accounting.rdp import RdpAccountant
from dp_accounting.rdp import rdp_privacy_accountant as rdp_lib
from joblib import Parallel, delayed
from sklearn.model_selection import GridSearchCV, ParameterGrid

from skdpx.datasets import encode_adult, load_adult
from skdpx.explain import DPLimeExplainer
from skdpx.locally_linear import DPLocallyLinearClassifier
from skdpx.model_selection import DPRandomSearchCV, price_search
from skdpx.privacy import FitCount, PrivacyLedger, compute_epsilon

sys.path.insert(0, os.path.dirname(__file__))
from _run_record import run_info, save, start as record_start  # noqa: E402

RESULTS = os.path.join(os.path.dirname(__file__), "results", "model_selection.json")
EPSILON = 2.0
DELTA = 1e-5
RELATION = "add_or_remove"
#: The searched grid (the defaults are learning_rate=0.3, max_grad_norm=1.0, epochs=20).
GRID = {"learning_rate": [0.1, 0.3, 1.0], "max_grad_norm": [0.3, 1.0], "epochs": [5, 20]}
DEFAULT = {"learning_rate": 0.3, "max_grad_norm": 1.0, "epochs": 20}
#: The private searches run, all at a total epsilon of 2, the refit with half of it: a
#: logarithmic number of runs (negative binomial, eta=0: the cheapest per run, but
#: P[K <= 2] is 38 % at mean 12; the default until main's ff8650b, which these results
#: prompted), a Poisson number of runs (about n_iter runs every time, for a little less
#: per run; the default now), and Poisson without the refit (the best run's model,
#: fitted on the training part with the whole per-run budget).
SEARCHES = {"logarithmic runs (eta=0)": {"selection": "negative_binomial"},
            "Poisson runs (default)": {"selection": "poisson"},
            "Poisson runs, no refit": {"selection": "poisson", "refit": False}}


# --------------------------------------------------------------------------- data
def _adult():
    train, test = load_adult(subset="train"), load_adult(subset="test")
    enc, enc_test = encode_adult(train.data), encode_adult(test.data)
    return dict(X=enc.data, y=train.target, X_test=enc_test.data, y_test=test.target,
                bounds=enc.bounds, name="Adult")


def _hospital():
    from _hospital import load_hospital

    h = load_hospital()
    return dict(X=h.data, y=h.target, X_test=h.data_test, y_test=h.target_test,
                bounds=h.bounds, name="Hospital (Diabetes 130-US)")


DATASETS = {"adult": _adult, "hospital": _hospital}
PARTS = ("adult", "hospital", "lime")


#: Fits counted by the benchmark: a private search does not publish its number of runs
#: (given K, the best of K runs is not private), so the benchmark counts its
#: estimator's fits itself (the search's runs in this process: n_jobs=1).
_FITS = {"n": 0}


class _CountedLLC(DPLocallyLinearClassifier):
    """DPLocallyLinearClassifier that counts its fits (the benchmark's instrument)."""

    def fit(self, X, y):
        _FITS["n"] += 1
        return super().fit(X, y)


class _CountedLime(DPLimeExplainer):
    """DPLimeExplainer that counts its fits (the benchmark's instrument)."""

    def fit(self, X, y=None):
        _FITS["n"] += 1
        return super().fit(X, y)


def _runs(search, fits_before):
    """The number of runs a fitted search made: its fits minus the refit."""
    return _FITS["n"] - fits_before - (1 if search.refit else 0)


def _estimator(ds, seed, **params):
    """The benchmark's estimator: public bounds and classes declared, epsilon 2."""
    return DPLocallyLinearClassifier(epsilon=EPSILON, delta=DELTA, bounds=ds["bounds"],
                                     classes=[0, 1], random_state=seed).set_params(**params)


def _planned_event(est, X, y, n_rows=None):
    """The DpEvent a fit of ``est`` on (X, y) will commit (public facts only).

    ``n_rows``: the public count it plans with (a search gives its fits a share of its
    DP row count: they release none of their own). None: a fit on its own, which
    releases a DP count of its rows first (``FixedLossDpEvent``, in the event) and plans
    from it; planned here at the count's expected value, ``len(X)``.
    """
    count = FitCount(epsilon=est.epsilon, relation=RELATION, n_rows=n_rows)
    if count.private:
        count.n = float(len(X))
    plan = est._plan_fit(est._validate_fit(X, y), RELATION, count).event
    return plan if count.event is None else ComposedDpEvent([count.event, plan])


def _stats(values):
    values = np.asarray(values, dtype=float)
    return {"mean": float(values.mean()), "std": float(values.std()),
            "values": [float(v) for v in values]}


def _key(params):
    return ", ".join(f"{k}={params[k]:g}" for k in sorted(params))


# ---------------------------------------------------------------------- methods
def _fit_score(ds, seed, params):
    return _estimator(ds, seed, **params).fit(ds["X"], ds["y"]).score(ds["X_test"], ds["y_test"])


def hindsight(ds, seeds, candidates, jobs=1):
    """(a) and (b): every candidate at epsilon 2 on all training rows, per seed."""
    X, y = ds["X"], ds["y"]
    scores = Parallel(n_jobs=jobs)(delayed(_fit_score)(ds, seed, params)
                                   for seed in seeds for params in candidates)
    acc = np.asarray(scores).reshape(len(seeds), len(candidates)).T
    events = [_planned_event(_estimator(ds, 0, **p), X, y) for p in candidates]
    total = compute_epsilon(ComposedDpEvent(events), DELTA)
    default = candidates.index(DEFAULT)
    per_seed_best = acc.argmax(axis=0)
    by_mean = int(acc.mean(axis=1).argmax())
    return {
        "candidates": {_key(p): _stats(acc[i]) for i, p in enumerate(candidates)},
        "default": _stats(acc[default]),
        "best": {
            "test_accuracy": _stats(acc[per_seed_best, range(len(seeds))]),
            "params_per_seed": [candidates[i] for i in per_seed_best],
            "best_on_mean": {"params": candidates[by_mean], "test_accuracy": _stats(acc[by_mean])},
            "epsilon_total": float(total),
            "epsilon_basic": EPSILON * len(candidates),
            "n_fits": len(candidates),
        },
    }


def grid_search(ds, seeds, cv, jobs=1):
    """(c): GridSearchCV, each fit at epsilon 2; its composed cost from price_search."""
    X, y = ds["X"], ds["y"]
    accs, picks = [], []
    for seed in seeds:
        search = GridSearchCV(_estimator(ds, seed), GRID, cv=cv, refit=True,
                              n_jobs=jobs).fit(X, y)
        accs.append(search.score(ds["X_test"], ds["y_test"]))
        picks.append({k: search.best_params_[k] for k in GRID})
    price = price_search(GridSearchCV(_estimator(ds, None), GRID, cv=cv, refit=True), X, y)
    return {
        "test_accuracy": _stats(accs),
        "params_per_seed": picks,
        "cv": cv,
        "n_fits": price.n_fits,
        "epsilon_total": float(price.epsilon_at(DELTA)),
        "epsilon_total_at_summed_delta": float(price.epsilon),
        "summed_delta": float(price.delta),
        "epsilon_basic": float(price.epsilon_basic),
        "unaccounted": "its exact validation scores (cv_results_) and the choice made from them",
    }


#: Renyi orders of the independent recomputation: dp_accounting's defaults
#: and a finer grid below 20 (where the optimum of a search at epsilon 2 lies).
ORDERS = sorted(set(rdp_lib.DEFAULT_RDP_ORDERS) | set(np.round(np.arange(1.05, 20, 0.05), 2)))


def _rdp(event):
    """The Renyi curve of a dp_accounting event over ORDERS (dp_accounting's RdpAccountant)."""
    acc = RdpAccountant(ORDERS)
    acc.compose(event)
    return np.asarray(acc._rdp, dtype=float)


def recompute(plan, fits, refits, pool):
    """The search's total epsilon at delta, recomputed with dp_accounting alone.

    ``fits`` and ``refits``: each candidate's run event (its fit on the
    training part at the per-run budget, with what its scoring spends) and
    its refit event, rebuilt by the caller from the estimators' own plans
    (public facts: the number of rows, the parameters, the bounds), not from
    skdpx's accounting; ``candidate_events_match`` checks the runs against
    the search's plan (equal Renyi curves). The score is a Gaussian with the
    recorded noise multiplier. The Renyi curves come from dp_accounting's
    ``RdpAccountant``. A run draws a candidate uniformly: its curve is at
    most the log-mean-exp of the candidates' curves (``exp((a - 1) D_a)`` is
    jointly convex), and at most their maximum (looser, ``"max"``); on a
    holdout split a row is in one part, so a run costs at most the larger of
    that and the score's curve. Then dp_accounting's repeat-and-select bound
    (Papernot & Steinke, Theorem 2: the formula its ``RepeatAndSelectDpEvent``
    is accounted with) at the recorded mean and shape, plus the worst
    refit's curve, converted at ``delta``. When one candidate's run
    dominates every other curve at every order, the ``"max"`` bound is also
    computed end to end by ``RdpAccountant`` on the event
    ``RepeatAndSelectDpEvent(that run) + worst refit`` (``epsilon_event``).
    """
    assert plan.n_folds == 1, "the recomputation covers a holdout split"
    curves = [_rdp(e) for e in fits]
    same = [np.allclose(c, _rdp(e), rtol=1e-9, atol=1e-12)
            for c, e in zip(curves, plan.candidate_events)]
    if plan.score_noise_multiplier is not None:
        curves.append(_rdp(GaussianDpEvent(plan.score_noise_multiplier)))
    refit_curves = [_rdp(e) for e in refits]
    orders = np.asarray(ORDERS)
    # the uniform mixture of the fits: exp((a-1) D_a) is jointly convex, so the mixture's
    # curve is at most the log-mean-exp of the candidates' (and at most their maximum)
    mixture = logsumexp((orders - 1) * np.asarray(curves[:len(fits)]), axis=0,
                        b=1 / len(fits)) / (orders - 1)
    out = {"candidate_events_match": all(same)}
    for name, fit_curve in (("mixture", mixture), ("max", np.max(curves[:len(fits)], axis=0))):
        run = np.maximum(fit_curve, curves[-1]) if len(curves) > len(fits) else fit_curve
        total = rdp_lib._compute_rdp_repeat_and_select(ORDERS, run, plan.mean_runs, plan.shape)
        if refits:
            total = total + np.max(refit_curves, axis=0)
        # the search's DP row count adds its epsilon (basic composition)
        out[f"epsilon_curve_{name}"] = float(rdp_lib.compute_epsilon(ORDERS, total, plan.delta)[0]
                                             + plan.count_epsilon)
    run = np.max(curves, axis=0)
    dom = [i for i, c in enumerate(curves[:len(fits)]) if np.all(c >= run - 1e-12)]
    rdom = [i for i, c in enumerate(refit_curves) if np.all(c >= np.max(refit_curves, 0) - 1e-12)]
    if dom and (not refits or rdom):
        event = RepeatAndSelectDpEvent(fits[dom[0]], plan.mean_runs, plan.shape)
        if refits:
            event = ComposedDpEvent([event, refits[rdom[0]]])
        out["epsilon_event"] = float(RdpAccountant(ORDERS).compose(event).get_epsilon(plan.delta)
                                     + plan.count_epsilon)
        out["dominating_candidate"] = pool[dom[0]]
    out["epsilon"] = out["epsilon_curve_mixture"]
    return out


def recompute_llc(search, ds):
    """:func:`recompute` for a search over DPLocallyLinearClassifier: every candidate's
    fit planned again at the search's budgets, with the search's DP count: its
    training part's share ``n_train`` for a run, the whole count for the refit (a plan
    reads the rows' schema only)."""
    plan = search.search_plan_
    X, y = ds["X"], ds["y"]
    pool = search.cv_results_["params"]

    def planned(params, eps, n_rows):
        est = _estimator(ds, None, **params).set_params(epsilon=eps, delta=plan.candidate_delta)
        return _planned_event(est, X, y, n_rows=n_rows)

    fits = [planned(p, plan.candidate_epsilon, plan.n_train) for p in pool]
    refits = [planned(p, plan.refit_epsilon, plan.n_rows) for p in pool] if search.refit else []
    return recompute(plan, fits, refits, pool)


def dp_search(ds, seeds, candidates, **options):
    """(d): DPRandomSearchCV at a total epsilon of 2, recorded in a capped ledger."""
    X, y = ds["X"], ds["y"]
    accs, picks, ledger_eps, runs, plans, recomputed, dp_scores = [], [], [], [], [], [], []
    for seed in seeds:
        ledger = PrivacyLedger(epsilon=EPSILON, delta=DELTA)
        counted = _CountedLLC(**_estimator(ds, None).get_params())
        before = _FITS["n"]
        search = DPRandomSearchCV(
            counted, GRID, n_iter=len(candidates), epsilon=EPSILON, delta=DELTA,
            accountant=ledger, random_state=seed, **options).fit(X, y)
        accs.append(search.score(ds["X_test"], ds["y_test"]))
        picks.append(search.best_params_)
        ledger_eps.append(ledger.epsilon_spent)
        runs.append(_runs(search, before))
        dp_scores.append(search.best_score_)
        plan = search.search_plan_
        plans.append({"candidate_epsilon": plan.candidate_epsilon,
                      "refit_epsilon": plan.refit_epsilon,
                      "score_noise_multiplier": plan.score_noise_multiplier,
                      "planned_epsilon": plan.epsilon, "count_epsilon": plan.count_epsilon,
                      "n_rows": plan.n_rows, "n_train": plan.n_train,
                      "n_validation": plan.n_validation})
        recomputed.append(recompute_llc(search, ds))
    return {
        "options": options,
        "test_accuracy": _stats(accs),
        "params_per_seed": picks,
        "dp_score_per_seed": [float(v) for v in dp_scores],
        "epsilon_ledger": _stats(ledger_eps),
        "delta": DELTA,
        "n_runs_per_seed": runs,
        "n_runs_note": "counted by the benchmark (its estimator's fits); the search does not "
                       "publish it",
        "mean_runs": len(candidates),
        "selection": options.get("selection"),
        "plan_per_seed": plans,
        "recomputed_per_seed": recomputed,
        "epsilon_recomputed": max(r["epsilon"] for r in recomputed),
    }


# -------------------------------------------------------------- the explainer
#: DPLimeExplainer's grid: the gradient steps of an answer and the explanations'
#: radius (the defaults: max_iter=100, radius=1.0; epsilon_per_query stays 0.1).
LIME_GRID = {"max_iter": [30, 100, 300], "radius": [0.5, 1.0, 2.0]}
LIME_DEFAULT = {"max_iter": 100, "radius": 1.0}
LIME_QUERIES = {"selection": 10, "test": 20, "reference": 2000}


def lime_data():
    """Adult for the explainer: the black box, the private rows, the public points.

    Black box: HistGradientBoostingClassifier on the second half of the test
    split (disjoint from the explained rows, as the guarantee needs). Private
    explanation rows: the training split. Public points, from the first half
    of the test split (disjoint sets): the queries the search selects on,
    the test queries, and the reference points where the fidelity compares
    the explanations with the black box.
    """
    from sklearn.ensemble import HistGradientBoostingClassifier

    ds = _adult()
    half = len(ds["X_test"]) // 2
    public, X_model, y_model = ds["X_test"][:half], ds["X_test"][half:], ds["y_test"][half:]
    black_box = HistGradientBoostingClassifier(random_state=0).fit(X_model, y_model)
    n_sel, n_test, n_ref = LIME_QUERIES.values()
    idx = np.random.RandomState(0).choice(half, n_sel + n_test + n_ref, replace=False)
    return dict(X=ds["X"], bounds=ds["bounds"], black_box=black_box,
                black_box_accuracy=float(black_box.score(public, ds["y_test"][:half])),
                selection=public[idx[:n_sel]], test=public[idx[n_sel:n_sel + n_test]],
                reference=public[idx[n_sel + n_test:]])


def _explainer(lime, seed, **params):
    return DPLimeExplainer(lime["black_box"], epsilon=EPSILON, delta=DELTA, bounds=lime["bounds"],
                           random_state=seed).set_params(**params)


def _fidelity(lime, seed, params, scorer):
    return scorer.public_score(_explainer(lime, seed, **params).fit(lime["X"]))


def lime_section(lime, seeds, jobs=1, searches=None, previous=None):
    """DPLimeExplainer: (a), (b) and (d) by the fidelity on the public test queries.

    Every explainer's quality is its fidelity (DPLimeFidelity) on the test
    queries, which it explains within its own cap (part of its cost). (b)'s
    cost: every candidate explaining the test queries at a cap of 2. (d): the
    search selects on DPLimeFidelity over the selection queries (public:
    every run explains them, which is the run's spend, no score noise), the
    refit's whole cap is prepaid in the search's event, and the refitted
    explainer answers the test queries within it.
    """
    from skdpx.model_selection import DPLimeFidelity

    test = DPLimeFidelity(lime["test"], X_reference=lime["reference"])
    select = DPLimeFidelity(lime["selection"], X_reference=lime["reference"])
    candidates = list(ParameterGrid(LIME_GRID))
    # without a refit the search keeps the best run's released explainer: no black box
    # left, nothing it can still answer interactively, so no fidelity to measure
    labels = [k for k in (searches or SEARCHES) if SEARCHES[k].get("refit", True)]
    if searches is not None and previous is not None and previous.get("seeds") == seeds:
        for label in labels:
            previous["dp_search"][label] = lime_search(lime, seeds, candidates, select, test,
                                                       **SEARCHES[label])
        return previous
    scores = Parallel(n_jobs=jobs)(delayed(_fidelity)(lime, seed, params, test)
                                   for seed in seeds for params in candidates)
    fid = np.asarray(scores).reshape(len(seeds), len(candidates)).T
    events = []
    for p in candidates:
        est = _explainer(lime, None, **p)
        events.append(est._plan_queries(len(lime["test"])))
    per_seed_best = fid.argmax(axis=0)
    res = {
        "grid": LIME_GRID, "default_params": LIME_DEFAULT, "queries": LIME_QUERIES,
        "black_box": "HistGradientBoostingClassifier (second half of the Adult test split)",
        "black_box_accuracy": lime["black_box_accuracy"],
        "candidates": {_key(p): _stats(fid[i]) for i, p in enumerate(candidates)},
        "default": _stats(fid[candidates.index(LIME_DEFAULT)]),
        # what the default explainer spends on the test queries (its cap is 2)
        "default_epsilon": float(compute_epsilon(events[candidates.index(LIME_DEFAULT)], DELTA)),
        "hindsight": {
            "test_fidelity": _stats(fid[per_seed_best, range(len(seeds))]),
            "params_per_seed": [candidates[i] for i in per_seed_best],
            "epsilon_total": float(compute_epsilon(ComposedDpEvent(events), DELTA)),
            "epsilon_basic": EPSILON * len(candidates), "n_fits": len(candidates),
        },
    }
    res["dp_search"] = {label: lime_search(lime, seeds, candidates, select, test,
                                           **SEARCHES[label]) for label in labels}
    return res


def lime_search(lime, seeds, candidates, select, test, **options):
    """(d) for the explainer: DPRandomSearchCV on the fidelity over the selection queries."""
    X = lime["X"]
    fids, picks, ledger_eps, runs, plans, recomputed = [], [], [], [], [], []
    for seed in seeds:
        ledger = PrivacyLedger(epsilon=EPSILON, delta=DELTA)
        before = _FITS["n"]
        search = DPRandomSearchCV(
            _CountedLime(lime["black_box"], bounds=lime["bounds"]), LIME_GRID,
            n_iter=len(candidates), scoring=select, epsilon=EPSILON, delta=DELTA,
            accountant=ledger, random_state=seed, **options).fit(X)
        fids.append(test.public_score(search.best_estimator_))
        picks.append(search.best_params_)
        ledger_eps.append(ledger.epsilon_spent)
        runs.append(_runs(search, before))
        plan = search.search_plan_
        plans.append({"candidate_epsilon": plan.candidate_epsilon,
                      "refit_epsilon": plan.refit_epsilon, "planned_epsilon": plan.epsilon})
        pool = search.cv_results_["params"]

        def planned(params, eps, n_queries, n_rows):
            est = _explainer(lime, None, **params).set_params(epsilon=eps,
                                                              delta=plan.candidate_delta)
            return ComposedDpEvent([_planned_event(est, X, None, n_rows=n_rows),
                                    est._plan_queries(n_queries)])

        # with the search's DP count (a run: the training part's share; the refit: all)
        fits = [planned(p, plan.candidate_epsilon, len(lime["selection"]), plan.n_train)
                for p in pool]
        refits = [planned(p, plan.refit_epsilon, 2**31, plan.n_rows) for p in pool]
        recomputed.append(recompute(plan, fits, refits, pool))
    return {
        "options": options, "test_fidelity": _stats(fids), "params_per_seed": picks,
        "epsilon_ledger": _stats(ledger_eps), "n_runs_per_seed": runs,
        "plan_per_seed": plans, "recomputed_per_seed": recomputed,
        "epsilon_recomputed": max(r["epsilon"] for r in recomputed),
    }


def print_lime(res, n_rows, n_seeds):
    print(f"\nDPLimeExplainer on Adult: {n_rows:,} private explanation rows, black box "
          f"{res['black_box']} (accuracy {res['black_box_accuracy']:.3f}); fidelity on "
          f"{res['queries']['test']} public test queries, {n_seeds} seed(s)")
    print(f"{'method':<50} {'test fidelity':<17} {'total eps':>9}  selection")
    print(_row("(a) default, cap epsilon 2", res["default"], f"{res['default_epsilon']:.2f}",
               f"none (the {res['queries']['test']} test answers' spend)"))
    b = res["hindsight"]
    print(_row(f"(b) best of {b['n_fits']} in hindsight, each cap 2", b["test_fidelity"],
               f"{b['epsilon_total']:.2f}",
               f"on the TEST queries, unaccounted ({b['n_fits']} explainers' test answers "
               "composed)"))
    for label, d in res["dp_search"].items():
        print(_row(f"(d) DPRandomSearchCV, {label}", d["test_fidelity"],
                   f"{d['epsilon_ledger']['mean']:.2f}",
                   f"DP (public queries: no score noise; dp_accounting recomputed: "
                   f"{d['epsilon_recomputed']:.2f}; runs {d['n_runs_per_seed']})"))
    for label, d in res["dp_search"].items():
        gap_b = d["test_fidelity"]["mean"] - b["test_fidelity"]["mean"]
        gap_a = d["test_fidelity"]["mean"] - res["default"]["mean"]
        print(f"  (d) {label}: {gap_b:+.3f} fidelity from (b), {gap_a:+.3f} from (a); picks "
              + "; ".join(_key(p) for p in d["params_per_seed"]))


# ------------------------------------------------------------------------ output
def _row(name, acc, cost, note):
    return f"{name:<50} {acc['mean']:.4f} ± {acc['std']:.4f}  {cost:>9}  {note}"


def print_table(name, n_train, n_test, res, n_seeds):
    print(f"\n{name}: {n_train:,} training rows, {n_test:,} test rows; "
          f"DPLocallyLinearClassifier, delta={DELTA:g}, {n_seeds} seed(s)")
    print(f"{'method':<50} {'test accuracy':<17} {'total eps':>9}  selection")
    print(_row("(a) default, epsilon 2", res["default"], f"{EPSILON:.2f}", "none"))
    b = res["hindsight"]
    print(_row(f"(b) best of {b['n_fits']} in hindsight, each at eps 2", b["test_accuracy"],
               f"{b['epsilon_total']:.2f}",
               f"on the TEST set, unaccounted ({b['n_fits']} fits composed; sum "
               f"{b['epsilon_basic']:.3g})"))
    c = res.get("gridsearchcv")
    if c is not None:
        print(_row(f"(c) GridSearchCV cv={c['cv']}, each fit at eps 2", c["test_accuracy"],
                   f"{c['epsilon_total']:.2f}",
                   f"exact CV scores, unaccounted ({c['n_fits']} fits composed; sum "
                   f"{c['epsilon_basic']:.3g})"))
    for label, d in res.get("dp_search", {}).items():
        print(_row(f"(d) DPRandomSearchCV, {label}", d["test_accuracy"],
                   f"{d['epsilon_ledger']['mean']:.2f}",
                   f"DP, in the ledger (dp_accounting recomputed: "
                   f"{d['epsilon_recomputed']:.2f}; per run eps "
                   f"{d['plan_per_seed'][0]['candidate_epsilon']:.2f}; runs "
                   f"{d['n_runs_per_seed']})"))
    for label, d in res.get("dp_search", {}).items():
        gap_b = 100 * (d["test_accuracy"]["mean"] - b["test_accuracy"]["mean"])
        gap_a = 100 * (d["test_accuracy"]["mean"] - res["default"]["mean"])
        ok = gap_b >= -1 and gap_a >= 0 and d["epsilon_ledger"]["mean"] <= EPSILON + 1e-9
        print(f"  target, (d) {label}: {gap_b:+.2f} points from (b) (>= -1), {gap_a:+.2f} from "
              f"(a) (>= 0), total epsilon {max(d['epsilon_ledger']['values']):.3f} (<= 2): "
              f"{'met' if ok else 'NOT met'}; picks "
              + "; ".join(_key(p) for p in d["params_per_seed"]))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--cv", type=int, default=3, help="GridSearchCV's folds (c)")
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS),
                        help="what to run; the results of the others already in --out are kept")
    parser.add_argument("--quick", action="store_true",
                        help="one seed, Adult only, cv=2 (a smoke run)")
    parser.add_argument("--searches", nargs="+", choices=list(SEARCHES), default=None,
                        help="run only these private searches (d) and keep (a)-(c) and the "
                        "other searches already in --out for the same seeds")
    parser.add_argument("--jobs", type=int, default=1,
                        help="processes for the fits of (b), (c) and the explainer's (b) (joblib); "
                        "the private searches run in this process")
    parser.add_argument("--out", default=RESULTS)
    args = parser.parse_args(argv)
    if args.quick:
        args.seeds, args.parts, args.cv = 1, ["adult"], 2
    warnings.simplefilter("ignore")
    seeds = list(range(args.seeds))
    candidates = list(ParameterGrid(GRID))
    assert DEFAULT in candidates
    out = {}
    if os.path.exists(args.out):
        with open(args.out) as fh:
            out = json.load(fh)
    out.update({"epsilon": EPSILON, "delta": DELTA, "grid": GRID, "default": DEFAULT,
                "estimator": "DPLocallyLinearClassifier"})
    out.setdefault("datasets", {})
    started, start = record_start(), time.perf_counter()
    cpu = time.process_time()
    for key in args.parts:
        t0, c0 = time.perf_counter(), time.process_time()
        if key == "lime":
            lime = lime_data()
            res = lime_section(lime, seeds, args.jobs, args.searches,
                               out.get("explainer"))
            res["seeds"] = seeds
            # summed over the runs that made it (a fresh result has none yet)
            res["seconds"] = res.get("seconds", 0.0) + time.perf_counter() - t0
            res["cpu_seconds"] = res.get("cpu_seconds", 0.0) + time.process_time() - c0
            _record(res, started, t0)
            out["explainer"] = res
            print_lime(res, len(lime["X"]), len(seeds))
            print(f"({res['seconds']:.0f} s, {res['cpu_seconds']:.0f} s of CPU)", flush=True)
            _write(out, args.out)
            continue
        ds = DATASETS[key]()
        res = out["datasets"].get(key)
        if args.searches is None or res is None or res.get("seeds") != seeds:
            res = {"n_train": len(ds["y"]), "n_test": len(ds["y_test"]), "seeds": seeds}
            h = hindsight(ds, seeds, candidates, args.jobs)
            res["default"] = h["default"]
            res["candidates"] = h["candidates"]
            res["hindsight"] = h["best"]
            res["gridsearchcv"] = grid_search(ds, seeds, args.cv, args.jobs)
            res["dp_search"], res["seconds"], res["cpu_seconds"] = {}, 0.0, 0.0
        for label in args.searches or SEARCHES:
            res["dp_search"][label] = dp_search(ds, seeds, candidates, **SEARCHES[label])
        res["seconds"] += time.perf_counter() - t0  # summed over the runs that made it
        res["cpu_seconds"] += time.process_time() - c0
        _record(res, started, t0)
        out["datasets"][key] = res
        print_table(ds["name"], res["n_train"], res["n_test"], res, len(seeds))
        print(f"({res['seconds']:.0f} s, {res['cpu_seconds']:.0f} s of CPU)", flush=True)
        _write(out, args.out)  # after each part: a later failure keeps it
    print(f"\n{time.perf_counter() - start:.0f} s in all ({time.process_time() - cpu:.0f} s of "
          f"CPU in this process); wrote {args.out}")


def _record(res, started, t0):
    """Give a part the record of this run; the run that last wrote it goes to ``earlier_runs``."""
    if "run" in res:
        res.setdefault("earlier_runs", []).append(res["run"])
    res["run"] = run_info(started, time.perf_counter() - t0,
                          packages=("dp-accounting", "joblib"))


def _write(out, path):
    save(path, out, default=float)


if __name__ == "__main__":
    main()
