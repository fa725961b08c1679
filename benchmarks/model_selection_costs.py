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

Planning (issue 41, target c: planning at most 10% of a search's CPU):
``DPRandomSearchCV`` on Adult over 12 candidates (``learning_rate`` in {0.1,
0.3, 1.0} x ``max_grad_norm`` in {0.3, 1.0} x ``epochs`` in {5, 20}, the grid
of ``benchmarks/model_selection.py``), ``n_iter=12``, epsilon 2, delta 1e-5,
a capped ledger, seed 0: a whole ``fit``, each in a fresh Python process (its
calibrations not cached, as in a user's first search), with one BLAS thread.
Measured: the process's CPU time in the search's ``_plan`` (the count's
plan: every candidate's fit and refit calibrated, the runs' budget found)
against the whole ``fit``'s, the distinct calibrations and accounting
evaluations it made, and the plan's figures (``candidate_epsilon``, the
score's noise multiplier, the planned epsilon), which a faster planning
must leave unchanged. ``--before PATH`` measures another checkout's code
(e.g. ``git worktree add /tmp/before <commit>``) the same way, interleaved
with this one's, ``--reps`` times each.

Run: ``python benchmarks/model_selection_costs.py [--parts costs planning]
[--before PATH] [--reps 3]`` (costs: about a minute; planning: about 15 s a
fit). Writes ``benchmarks/results/model_selection_costs.json`` (with
``_run_record``'s commit, date, versions, machine and command; a part run
alone replaces its own key and keeps the rest, the planning part with its
own run record).
"""

import argparse
import json
import math
import os
import pathlib
import statistics
import subprocess
import sys
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


PLAN_GRID = {"learning_rate": [0.1, 0.3, 1.0], "max_grad_norm": [0.3, 1.0], "epochs": [5, 20]}
RESULTS = pathlib.Path(__file__).parent / "results" / "model_selection_costs.json"


def planning_worker():
    """One search's fit in this process: its CPU in planning and in all (JSON on stdout).

    Run by :func:`planning` in a fresh process whose PYTHONPATH is the checkout measured."""
    from skdpx.locally_linear import DPLocallyLinearClassifier
    from skdpx.model_selection import DPRandomSearchCV
    from skdpx.privacy import _calibration, _composition

    from _run_record import timed_methods

    train = load_adult(subset="train")
    enc = encode_adult(train.data)
    X, y = enc.data, train.target
    clf = DPLocallyLinearClassifier(epsilon=2.0, delta=DELTA, bounds=enc.bounds, classes=[0, 1])
    search = DPRandomSearchCV(clf, PLAN_GRID, n_iter=12, epsilon=2.0, delta=DELTA,
                              accountant=PrivacyLedger(epsilon=2.0, delta=DELTA), random_state=0)
    owner = next(c for c in type(search).__mro__ if "_plan" in c.__dict__)
    with timed_methods(owner, ("_plan",), clock=time.process_time) as cpu:
        c = time.process_time()
        search.fit(X, y)
        total = time.process_time() - c
    plan = search.search_plan_
    print(json.dumps({
        "cpu_fit": total, "cpu_plan": cpu["_plan"], "plan_share": cpu["_plan"] / total,
        "calibrations": _calibration._calibrate_noise.cache_info().misses,
        "epsilon_evaluations": _composition._epsilon_of_leaves.cache_info().misses,
        "candidate_epsilon": plan.candidate_epsilon, "refit_epsilon": plan.refit_epsilon,
        "score_noise_multiplier": plan.score_noise_multiplier, "planned_epsilon": plan.epsilon,
        "n_candidates": plan.n_candidates}))


def planning(before, reps, before_label=None):
    """Target c: the planning's share of a search's CPU, this checkout (and ``before``)."""
    here = pathlib.Path(__file__).resolve().parent
    checkouts = {"this": str(here.parent)}
    if before:
        checkouts["before"] = str(pathlib.Path(before).resolve())
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    runs = {name: [] for name in checkouts}
    for rep in range(reps):
        for name, path in checkouts.items():
            out = subprocess.run([sys.executable, __file__, "--planning-worker"], check=True,
                                 capture_output=True, text=True,
                                 env={**env, "PYTHONPATH": f"{path}{os.pathsep}{here}"})
            runs[name].append(json.loads(out.stdout.strip().splitlines()[-1]))
            r = runs[name][-1]
            print(f"  rep {rep} {name:6s}: fit {r['cpu_fit']:.2f} s CPU, planning "
                  f"{r['cpu_plan']:.2f} s ({100 * r['plan_share']:.1f}%), "
                  f"{r['calibrations']} calibrations, {r['epsilon_evaluations']} evaluations",
                  flush=True)
    if before and before_label is None:
        found = subprocess.run(["git", "-C", checkouts["before"], "rev-parse", "--short", "HEAD"],
                               capture_output=True, text=True)
        before_label = found.stdout.strip() if found.returncode == 0 else checkouts["before"]
    result = {"setting": {"estimator": "DPLocallyLinearClassifier", "grid": PLAN_GRID,
                          "n_iter": 12, "epsilon": 2.0, "delta": DELTA, "random_state": 0,
                          "reps": reps, "checkouts": checkouts, "before_commit": before_label},
              "runs": runs, "median": {}}
    print(f"{'code':8s} {'fit CPU (s)':>12s} {'planning CPU (s)':>17s} {'share':>7s} "
          f"{'calibrations':>13s} {'evaluations':>12s}  candidate_epsilon  score noise")
    for name, rows in runs.items():
        med = {k: statistics.median(r[k] for r in rows)
               for k in ("cpu_fit", "cpu_plan", "plan_share")}
        med.update({k: rows[0][k] for k in ("calibrations", "epsilon_evaluations",
                                           "candidate_epsilon", "score_noise_multiplier",
                                           "planned_epsilon")})
        result["median"][name] = med
        print(f"{name:8s} {med['cpu_fit']:12.2f} {med['cpu_plan']:17.2f} "
              f"{100 * med['plan_share']:6.1f}% {med['calibrations']:13d} "
              f"{med['epsilon_evaluations']:12d}  {med['candidate_epsilon']!r}  "
              f"{med['score_noise_multiplier']!r}")
    if before:
        figures = ("candidate_epsilon", "refit_epsilon", "score_noise_multiplier",
                   "planned_epsilon")
        result["same_figures"] = all(r[k] == runs["before"][0][k]
                                     for rows in runs.values() for r in rows for k in figures)
        print(f"the plan's figures identical in every run: {result['same_figures']}")
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", nargs="+", choices=("costs", "planning"),
                    default=["costs", "planning"])
    ap.add_argument("--before", default=None,
                    help="another checkout whose planning is measured the same way")
    ap.add_argument("--before-label", default=None,
                    help="what --before is (default: its git commit, if it is a checkout)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--planning-worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.planning_worker:
        return planning_worker()
    saved = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    if "planning" in args.parts:
        started, t_start = start(), time.perf_counter()
        print("Planning: DPRandomSearchCV on Adult, 12 candidates (CPU, fresh processes)")
        saved["planning"] = planning(args.before, args.reps, args.before_label)
        saved["planning"]["run"] = run_info(started, time.perf_counter() - t_start,
                                            packages=("dp-accounting",))
        if "costs" not in args.parts:
            save(RESULTS, saved, default=str)
            print(f"written {RESULTS}")
            return
    costs(saved.get("planning"))


def costs(planning_result):
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
    out["run"] = run_info(started, time.perf_counter() - t_start, packages=("dp-accounting",))
    if planning_result is not None:
        out["planning"] = planning_result
    save(RESULTS, out, default=str)
    print(f"written {RESULTS}")


if __name__ == "__main__":
    main()
