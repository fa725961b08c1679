"""The costs quoted in doc/model_selection.rst, computed (nothing is fitted).

A 3 x 3 grid over DPLocallyLinearClassifier on Adult's training rows
(encoded with its public schema, full-batch DP-SGD):

* scikit-learn's GridSearchCV with 5 folds, each fit at epsilon 1
  (``price_search``: 45 fold fits + the refit, composed; its scores and its
  choice are not in the price: they are not DP at any epsilon);
* the 9 DP fits of a loop scored on public validation rows, at epsilon 0.5 each;
* DPGridSearchCV at a total epsilon of 2 (``price``): how the budget is split;
* how the split changes with ``n_iter``, ``selection``, ``eta``, ``cv`` and
  ``refit_share``.

The number of rows is private under add-or-remove: a fit (and a private
search) releases a DP count first and plans from it. Prices are made at a
public stand-in for that count, Adult's published number of training rows
(32,561): ``price(X, y, n_rows=n)``; a fitted search plans from its own DP
count, within its epsilon whatever the count. scikit-learn's GridSearchCV
is priced as ``price_search`` prices it under add-or-remove: each fit's own
DP count, then the rest at its cap.

Run: ``python benchmarks/model_selection_costs.py`` (about a minute). Writes
``benchmarks/results/model_selection_costs.json`` (with ``_run_record``'s
commit, date, versions, machine and command).
"""

import math
import pathlib
import time
import warnings

import numpy as np
from scipy import stats
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, ParameterGrid

from skdpx import DPLocallyLinearClassifier
from skdpx.datasets import encode_adult, load_adult
from skdpx.model_selection import DPGridSearchCV, price_search
from skdpx.privacy import ComposedDpEvent, FitCount, PrivacyLedger, compute_epsilon
from skdpx.privacy._selection import run_distribution

from _run_record import run_info, save, start

warnings.simplefilter("ignore")  # seeded, uncapped: no release is made here

GRID = {"learning_rate": [0.3, 1.0, 3.0], "n_maps": [1, 2, 3]}
DELTA = 1e-5


def p_tried(selection, mean, eta, n_candidates):
    """P(a given candidate of the pool is drawn by at least one run): public arithmetic."""
    shape, gamma = run_distribution(selection, mean, eta)
    k = np.arange(0, 20000)
    if math.isinf(shape):
        pmf = stats.poisson.pmf(k, mean)
    elif gamma == 1.0:
        pmf = (k == 1).astype(float)
    elif shape == 0:
        pmf = np.where(k > 0, (1 - gamma) ** k / (np.maximum(k, 1) * -math.log(gamma)), 0.0)
    else:
        pmf = np.where(k > 0, stats.nbinom.pmf(k, shape, gamma), 0.0)
        pmf /= pmf.sum()
    miss = (1 - 1 / n_candidates) ** k
    return float(np.sum(pmf * (1 - miss))), float(pmf[:4].sum())


def main():
    started, t_start = start(), time.perf_counter()
    train = load_adult(subset="train")
    X, y = encode_adult(train.data).data, train.target
    n = len(X)
    clf = DPLocallyLinearClassifier(bounds=(0, 1), classes=[0, 1], batch_size=None, epochs=40,
                                    epsilon=1.0, delta=DELTA)
    out = {"n_rows": n, "grid": GRID, "delta": DELTA}

    # -- scikit-learn's GridSearchCV, every fit at epsilon 1
    t = time.perf_counter()
    price = price_search(GridSearchCV(clf, GRID, cv=5), X, y)
    # what the ledger records if every fit's DP count comes out at its expected value
    # (its fold's size): each fit's count, then the plan that count selects (not a price:
    # the counts are random, and the price bounds every plan they can select by its cap)
    expected = []
    fits = [(params, n - n // 5) for params in ParameterGrid(GRID) for _ in range(5)]
    for params, rows in fits + [(ParameterGrid(GRID)[0], n)]:  # the folds, then one refit
        est = clone(clf).set_params(**params)
        count = FitCount(epsilon=1.0, relation="add_or_remove")
        count.n = float(rows)
        expected += [count.event,
                     est._plan_fit(est._validate_fit(X, y), "add_or_remove", count).event]
    out["gridsearchcv"] = {
        "n_fits": price.n_fits, "epsilon": price.epsilon, "delta": price.delta,
        "epsilon_at_1e-5": price.epsilon_at(DELTA), "epsilon_basic": price.epsilon_basic,
        "epsilon_at_expected_counts": compute_epsilon(ComposedDpEvent(expected), price.delta),
        "seconds": time.perf_counter() - t,
    }
    ledger = PrivacyLedger(epsilon=2.0, delta=DELTA)
    try:
        price.check(ledger)
        out["gridsearchcv"]["refused_by_cap_2"] = False
    except Exception as err:  # BudgetError: the search would run out of budget
        out["gridsearchcv"]["refused_by_cap_2"] = type(err).__name__
    g = out["gridsearchcv"]
    print(f"GridSearchCV, 3x3 grid, 5 folds, epsilon=1 per fit: {g['n_fits']} fits, "
          f"epsilon={g['epsilon']:.2f} at delta={g['delta']:.2g} "
          f"(epsilon={g['epsilon_at_1e-5']:.2f} at delta=1e-5; sum {g['epsilon_basic']:.0f}; "
          f"the ledger records {g['epsilon_at_expected_counts']:.2f} if every count is its "
          "expected value), plus exact scores and an exact choice (not DP)")

    # -- public validation rows: 9 DP fits at epsilon 0.5 on the private rows, scored for free
    events = []
    for params in ParameterGrid(GRID):
        est = clone(clf).set_params(epsilon=0.5, **params)
        # each fit's own DP row count (5% of its epsilon), then its plan from the count
        # (at the public stand-in n)
        count = FitCount(epsilon=0.5, relation="add_or_remove")
        count.n = float(n)
        events += [count.event,
                   est._plan_fit(est._validate_fit(X, y), "add_or_remove", count).event]
    n_fits = len(events) // 2
    loop = {"n_fits": n_fits, "epsilon": compute_epsilon(ComposedDpEvent(events), DELTA),
            "epsilon_at_sum_of_deltas": compute_epsilon(ComposedDpEvent(events),
                                                        n_fits * DELTA)}
    out["public_validation_loop"] = loop
    print(f"9 DP fits at epsilon 0.5 scored on public rows: epsilon={loop['epsilon']:.2f} at "
          f"delta=1e-5 ({loop['epsilon_at_sum_of_deltas']:.2f} at {n_fits * DELTA:g})")

    # -- DPGridSearchCV at a total epsilon of 2, and its knobs
    def plan(**kw):
        t = time.perf_counter()
        p = DPGridSearchCV(clf, GRID, epsilon=2.0, delta=DELTA, **kw).price(X, y, n_rows=n)
        tried, at_most_3 = p_tried(p.selection, p.mean_runs, kw.get("eta", 0.0), p.n_candidates)
        row = {"params": kw, "epsilon": p.epsilon, "p_best_tried": tried,
               "p_at_most_3_runs": at_most_3, "candidate_epsilon": p.candidate_epsilon,
               "refit_epsilon": p.refit_epsilon, "mean_runs": p.mean_runs,
               "score_noise_multiplier": p.score_noise_multiplier,
               # the DP accuracy 1/2 + S / N at an accuracy of 1/2: the centred sum's noise
               # over the validation rows a run's score sums over (all of them with folds);
               # at accuracy p the count's noise adds: sqrt(1 + 4 (p - 1/2)^2) times this
               "score_std_accuracy": (None if p.score_noise_multiplier is None else
                                      p.score_noise_multiplier * p.score_sensitivity
                                      / p.n_validation),
               "count_epsilon": p.count_epsilon,
               "n_train": p.n_train, "n_validation": p.n_validation,
               "seconds": time.perf_counter() - t}
        print(f"  {str(kw):42s} total {p.epsilon:.3f}; each run's fit at epsilon "
              f"{p.candidate_epsilon:.3f}; refit {p.refit_epsilon}; score noise "
              f"{row['score_noise_multiplier'] and round(row['score_noise_multiplier'], 2)} "
              f"(accuracy std {row['score_std_accuracy'] and round(row['score_std_accuracy'], 4)}); "
              f"P(a given candidate tried) {tried:.2f}, P(K <= 3) {at_most_3:.2f}")
        return row

    print("DPGridSearchCV(epsilon=2), the same grid:")
    out["dpgridsearchcv"] = [
        plan(),
        plan(n_iter=3), plan(n_iter=20), plan(n_iter=27),
        plan(selection="negative_binomial"), plan(selection="geometric"),
        plan(selection="negative_binomial", eta=1.0),
        plan(cv=5),
        plan(refit_share=0.3), plan(refit_share=0.7), plan(refit=False),
    ]
    path = pathlib.Path(__file__).parent / "results" / "model_selection_costs.json"
    out["run"] = run_info(started, time.perf_counter() - t_start, packages=("dp-accounting",))
    save(path, out, default=str)
    print(f"written {path}")


if __name__ == "__main__":
    main()
