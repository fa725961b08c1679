"""Coverage of permutation importance's noise_std with the DP marginal (issue 40).

``skdpx.inspection.permutation_importance`` with ``replacement="marginal"``
(the default) draws the replacement values from a DP histogram of each
feature; the histogram's noise moves the importance itself. ``noise_std`` is
now the total of ``score_noise_std`` (the score release's noise) and
``marginal_noise_std`` (a public bound of the marginal's). Measured here,
per feature: how often ``importances_mean +- 1.645 noise_std`` (and, for
comparison, ``+- 1.645 score_noise_std``, the former ``noise_std``) covers
the **noiseless-marginal importance** (the same scheme at ``epsilon=inf``:
the exact histogram, no noise, no threshold; its draws' randomness averaged
out over ``--references`` noiseless releases), how conservative the total
is (its mean over releases against the empirical standard deviation of
``importances_mean`` across releases), and how many features are
"distinguishable" (``importances_mean > 1.645 std``) with each std.

Tasks:

* ``logistic`` (the outside review's setup): a logistic regression trained
  on 10,000 synthetic rows, explaining 10,000 others; three standard normal
  features clipped to the declared bounds [-4, 4], ``P(y = 1) =
  sigmoid(2 x0 + x1)`` (x2 plays no part); ``neg_brier_score``,
  ``n_repeats=3``, epsilon 0.3 and 1 (delta 1e-6);
* ``adult``: the HistGradientBoostingClassifier of
  ``benchmarks/permutation_importance.py`` (trained on Adult's test split)
  explaining the training split's 32,561 rows (13 features), accuracy,
  ``n_repeats=5``, epsilon 1 and 0.1.

Each with ``n_bins`` 128 (the default) and 32, the marginal share 0.3 (the
default). Releases use secure noise; the noiseless references are seeded.

Run: python benchmarks/permutation_importance_coverage.py [--releases 40]
     [--references 10] [--tasks logistic adult] [--out ...]
"""

import argparse
import os
import time
import warnings

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression

from skdpx.inspection import permutation_importance

from _run_record import run_info, save, start

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                       "permutation_importance_coverage.json")
DELTA = 1e-6
Z90 = 1.645
#: task -> (scoring, n_repeats, epsilons)
TASKS = {"logistic": ("neg_brier_score", 3, (0.3, 1.0)),
         "adult": ("accuracy", 5, (1.0, 0.1))}
N_BINS = (128, 32)


def load_logistic():
    rng = np.random.default_rng(0)
    X = np.clip(rng.normal(0, 1, (20000, 3)), -4, 4)
    y = rng.uniform(size=20000) < 1 / (1 + np.exp(-(2 * X[:, 0] + X[:, 1])))
    model = LogisticRegression().fit(X[:10000], y[:10000])
    return model, X[10000:], y[10000:], dict(bounds=(-4, 4))


def load_adult_box():
    from permutation_importance import load_adult_task

    X_model, y_model, X, y, public = load_adult_task()
    box = HistGradientBoostingClassifier(categorical_features="from_dtype",
                                         random_state=0).fit(X_model, y_model)
    return box, X, y, public


def release(box, X, y, public, scoring, n_repeats, n_bins, epsilon, seed=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # uncapped, each release its own run
        r = permutation_importance(box, X, y, scoring=scoring, n_repeats=n_repeats,
                                   n_bins=n_bins, epsilon=epsilon, delta=DELTA,
                                   random_state=seed, **public)
    return {"importances_mean": r.importances_mean.tolist(),
            "noise_std": r.noise_std.tolist(), "score_noise_std": r.score_noise_std.tolist(),
            "marginal_noise_std": r.marginal_noise_std.tolist(),
            "feature_names": [str(f) for f in r.feature_names]}


def summarise(task, n_bins, epsilon, target, runs):
    mean = np.array([r["importances_mean"] for r in runs])
    total = np.array([r["noise_std"] for r in runs])
    score = np.array([r["score_noise_std"] for r in runs])
    marginal = np.array([r["marginal_noise_std"] for r in runs])
    err = np.abs(mean - target)
    empirical = mean.std(axis=0, ddof=1)
    return {"task": task, "n_bins": n_bins, "epsilon": epsilon, "releases": len(runs),
            "features": runs[0]["feature_names"], "target": target.tolist(),
            "coverage_total": (err <= Z90 * total).mean(axis=0).tolist(),
            "coverage_score_only": (err <= Z90 * score).mean(axis=0).tolist(),
            "mean_noise_std": total.mean(axis=0).tolist(),
            "mean_score_noise_std": score.mean(axis=0).tolist(),
            "mean_marginal_noise_std": marginal.mean(axis=0).tolist(),
            "empirical_std": empirical.tolist(),
            "rmse_to_target": np.sqrt(((mean - target) ** 2).mean(axis=0)).tolist(),
            "conservative": (total.mean(axis=0) / empirical).tolist(),
            "distinguishable_total": float((mean > Z90 * total).sum(axis=1).mean()),
            "distinguishable_score_only": float((mean > Z90 * score).sum(axis=1).mean()),
            "distinguishable_target": int((target > 0).sum())}


def print_row(s):
    print(f"\n{s['task']} n_bins={s['n_bins']} epsilon={s['epsilon']:g} "
          f"({s['releases']} releases): distinguishable features "
          f"{s['distinguishable_score_only']:.1f} (score std only) -> "
          f"{s['distinguishable_total']:.1f} (total std)")
    print(f"{'feature':>16} {'target':>8} {'cover':>6} {'before':>6} {'total std':>9} "
          f"{'score':>8} {'marginal':>8} {'emp. std':>8} {'ratio':>6}")
    for j, f in enumerate(s["features"]):
        print(f"{f[:16]:>16} {s['target'][j]:8.4f} {s['coverage_total'][j]:6.2f} "
              f"{s['coverage_score_only'][j]:6.2f} {s['mean_noise_std'][j]:9.5f} "
              f"{s['mean_score_noise_std'][j]:8.5f} {s['mean_marginal_noise_std'][j]:8.5f} "
              f"{s['empirical_std'][j]:8.5f} {s['conservative'][j]:6.1f}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--releases", type=int, default=40)
    parser.add_argument("--references", type=int, default=10)
    parser.add_argument("--tasks", nargs="+", default=list(TASKS))
    parser.add_argument("--n-bins", nargs="+", type=int, default=list(N_BINS))
    parser.add_argument("--out", default=RESULTS)
    args = parser.parse_args()
    started, t0 = start(), time.perf_counter()
    loaders = {"logistic": load_logistic, "adult": load_adult_box}
    rows, references = [], []
    for task in args.tasks:
        box, X, y, public = loaders[task]()
        scoring, n_repeats, epsilons = TASKS[task]
        common = (box, X, y, public, scoring, n_repeats)
        for n_bins in args.n_bins:
            t = time.perf_counter()
            ref = [release(*common, n_bins, np.inf, seed=s)["importances_mean"]
                   for s in range(args.references)]
            target = np.mean(ref, axis=0)
            references.append({"task": task, "n_bins": n_bins, "target": target.tolist(),
                               "draws_std": np.std(ref, axis=0, ddof=1).tolist()})
            print(f"{task} n_bins={n_bins}: {args.references} noiseless references "
                  f"{time.perf_counter() - t:.0f} s", flush=True)
            for epsilon in epsilons:
                t = time.perf_counter()
                runs = [release(*common, n_bins, epsilon) for _ in range(args.releases)]
                print(f"{task} n_bins={n_bins} epsilon={epsilon:g}: {args.releases} releases "
                      f"{time.perf_counter() - t:.0f} s", flush=True)
                rows.append(summarise(task, n_bins, epsilon, target, runs))
                rows[-1]["runs"] = runs
                print_row(rows[-1])
    results = {"settings": {"delta": DELTA, "tasks": {t: {"scoring": TASKS[t][0],
                                                          "n_repeats": TASKS[t][1]}
                                                      for t in args.tasks},
                            "marginal_share": 0.3, "releases": args.releases,
                            "references": args.references},
               "references": references, "rows": rows}
    results["run"] = run_info(started, time.perf_counter() - t0, packages=())
    save(args.out, results)
    print(f"saved {args.out}")


if __name__ == "__main__":
    main()
