"""DP permutation importance on Adult and diabetes130 (issue 40, target b).

Black boxes: HistGradientBoostingClassifier (categorical columns from their
pandas dtype) trained on other rows than the explained ones:

* Adult: trained on the test split (16,281 rows); the private rows are the
  training split (32,561 rows), 13 features (``fnlwgt`` left out, as
  :func:`~skdpx.datasets.adult_schema` does), bounds and levels from
  ``adult_schema``;
* diabetes130 (``benchmarks/_hospital.py``, read from ``/work/shared/data``;
  target: readmitted at all): the raw columns as a DataFrame (8 integer
  counts clipped to ``NUMERIC_RANGES``, the age bracket's ordinal 0..9, 8
  categoricals over ``CATEGORIES``; 17 features), a seeded split of the
  rows: ``--model-rows`` to train on, ``--rows`` private rows.

Released by ``skdpx.inspection.permutation_importance`` (scoring
"accuracy", scikit-learn's default for a classifier; ``n_repeats=5``,
delta 1e-6, secure noise) at total epsilon 1 and 0.1 with the DP marginal
replacement (the default), ``--seeds`` releases each; the public-domain
(uniform) replacement without noise, for its bias. Measured: the Spearman
rank correlation of ``importances_mean`` with scikit-learn's exact
``sklearn.inspection.permutation_importance`` (same scorer, same rows,
``n_repeats=5``) and with the noiseless version of the same replacement
scheme (epsilon=inf: the exact marginal, no noise), which separates the
scheme's bias from the noise; and, for context, scikit-learn's own rank
correlation between two of its seeds (its shuffles' randomness).

Run: python benchmarks/permutation_importance.py [--seeds 2] [--rows 20000]
     [--jobs 2] [--tasks adult diabetes130]
     [--out benchmarks/results/permutation_importance.json]
(benchmarks/results/permutation_importance_diabetes130.json: --tasks diabetes130
--seeds 8, more releases of the quicker data set.)
"""

import argparse
import os
import time
import warnings

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from scipy.stats import spearmanr
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.inspection import permutation_importance as sk_permutation_importance

from skdpx.datasets import adult_schema, load_adult
from skdpx.inspection import permutation_importance

from _run_record import run_info, save, start

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                       "permutation_importance.json")
DELTA = 1e-6
N_REPEATS = 5
SCORING = "accuracy"
#: (replacement, epsilon) of the DP releases (the uniform replacement is measured
#: without noise only: its bias against scikit-learn's is the point)
SETTINGS = (("marginal", 1.0), ("marginal", 0.1))


def load_adult_task():
    X_private, y_private = load_adult(subset="train", as_frame=True, return_X_y=True)
    X_model, y_model = load_adult(subset="test", as_frame=True, return_X_y=True)
    X_private, X_model = (X.drop(columns="fnlwgt") for X in (X_private, X_model))
    schema = adult_schema()
    return X_model, y_model, X_private, y_private, dict(bounds=schema["bounds"],
                                                        categories=schema["categories"])


def load_hospital_task(rows, model_rows):
    import _hospital as h

    raw = h._read(h.HOSPITAL_DIR / h.FILENAME)
    df = pd.DataFrame({col: np.clip(pd.to_numeric(raw[col], errors="coerce")
                                    .fillna(lo).astype(int), lo, hi)
                       for col, (lo, hi) in h.NUMERIC_RANGES.items()})
    df["age"] = pd.Categorical(raw["age"], categories=h.AGE_BRACKETS).codes.clip(0).astype(int)
    for col, levels in h.CATEGORIES.items():  # "?" or an unlisted value: missing
        values = raw[col].str.strip()
        df[col] = pd.Categorical(values.where(values.isin(levels)), categories=levels)
    y = raw[h.TARGET].isin(h.POSITIVE).to_numpy().astype(int)
    order = np.random.default_rng(0).permutation(len(df))
    model, private = order[:model_rows], order[model_rows:model_rows + rows]
    bounds = dict(h.NUMERIC_RANGES, age=(0, len(h.AGE_BRACKETS) - 1))
    public = dict(bounds=bounds, categories={c: list(v) for c, v in h.CATEGORIES.items()})
    return (df.iloc[model], y[model], df.iloc[private].reset_index(drop=True), y[private],
            public)


def run(task, black_box, X, y, public, kind, replacement=None, epsilon=None, seed=0):
    """One computation: scikit-learn's exact importances, or one of ours."""
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # uncapped, each release its own run
        if kind == "sklearn":
            r = sk_permutation_importance(black_box, X, y, scoring=SCORING,
                                          n_repeats=N_REPEATS, random_state=seed)
            out = {"importances_mean": r.importances_mean.tolist()}
        else:
            r = permutation_importance(black_box, X, y, scoring=SCORING, n_repeats=N_REPEATS,
                                       replacement=replacement, epsilon=epsilon, delta=DELTA,
                                       random_state=seed if np.isinf(epsilon) else None,
                                       **public)
            out = {"importances_mean": r.importances_mean.tolist(),
                   "importances_std": r.importances_std.tolist(),
                   "noise_std": r.noise_std.tolist(), "n_rows": float(r.n_rows),
                   "feature_names": [str(f) for f in r.feature_names]}
    # epsilon None: scikit-learn's, or the noiseless scheme (epsilon=inf)
    out.update(task=task, kind=kind, replacement=replacement,
               epsilon=None if epsilon is None or np.isinf(epsilon) else float(epsilon),
               seed=seed,
               seconds=round(time.perf_counter() - t, 1))
    print(f"{task:>11} {kind:>7} {replacement or '':>8} eps={epsilon} seed={seed}: "
          f"{out['seconds']:.0f} s", flush=True)
    return out


def rho(a, b):
    return float(spearmanr(a, b)[0])


def summarise(task, runs):
    sk = [r for r in runs if r["kind"] == "sklearn"]
    exact = sk[0]["importances_mean"]
    noiseless = {r["replacement"]: r["importances_mean"] for r in runs
                 if r["kind"] == "skdpx" and r["epsilon"] is None}
    rows = [{"task": task, "replacement": rep + ", noiseless", "epsilon": None,
             "rho_sklearn_mean": rho(noiseless[rep], exact), "rho_sklearn_min": None,
             "rho_noiseless_mean": 1.0, "rho_noiseless_min": None, "releases": 1}
            for rep in sorted(noiseless)]
    for replacement, epsilon in SETTINGS:
        rel = [r for r in runs if r["kind"] == "skdpx" and r["replacement"] == replacement
               and r["epsilon"] == epsilon]
        to_sk = [rho(r["importances_mean"], exact) for r in rel]
        to_own = [rho(r["importances_mean"], noiseless[replacement]) for r in rel]
        rows.append({"task": task, "replacement": replacement, "epsilon": epsilon,
                     "rho_sklearn_mean": float(np.mean(to_sk)),
                     "rho_sklearn_min": float(np.min(to_sk)),
                     "rho_noiseless_mean": float(np.mean(to_own)),
                     "rho_noiseless_min": float(np.min(to_own)), "releases": len(rel),
                     "mean_noise_std": float(np.mean([np.mean(r["noise_std"]) for r in rel]))})
    rows.append({"task": task, "replacement": "sklearn's, another seed", "epsilon": None,
                 "rho_sklearn_mean": rho(sk[1]["importances_mean"], exact),
                 "rho_sklearn_min": None, "rho_noiseless_mean": None,
                 "rho_noiseless_min": None, "releases": 1})
    for row in rows:
        print(f"{task:>11} {row['replacement']:>22} eps={row['epsilon']}: rank corr. with "
              f"sklearn {row['rho_sklearn_mean']:.3f}"
              + ("" if row["rho_sklearn_min"] is None else f" (min {row['rho_sklearn_min']:.3f})")
              + ("" if row["rho_noiseless_mean"] is None
                 else f", with the noiseless scheme {row['rho_noiseless_mean']:.3f}"))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--model-rows", type=int, default=30000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--tasks", nargs="+", default=["adult", "diabetes130"])
    parser.add_argument("--out", default=RESULTS)
    args = parser.parse_args()
    started, t0 = start(), time.perf_counter()

    loaders = {"adult": load_adult_task,
               "diabetes130": lambda: load_hospital_task(args.rows, args.model_rows)}
    tasks = {task: loaders[task]() for task in args.tasks}
    jobs, meta = [], {}
    for task, (X_model, y_model, X, y, public) in tasks.items():
        black_box = HistGradientBoostingClassifier(categorical_features="from_dtype",
                                                   random_state=0).fit(X_model, y_model)
        meta[task] = {"private_rows": int(len(X)), "model_rows": int(len(X_model)),
                      "features": [str(c) for c in X.columns],
                      "black_box_accuracy_on_private_rows":
                          float(black_box.score(X, y))}
        common = (task, black_box, X, y, public)
        jobs += [delayed(run)(*common, "sklearn", seed=s) for s in (0, 1)]
        jobs += [delayed(run)(*common, "skdpx", replacement=rep, epsilon=np.inf, seed=0)
                 for rep in ("marginal", "uniform")]
        jobs += [delayed(run)(*common, "skdpx", replacement=rep, epsilon=eps, seed=s)
                 for rep, eps in SETTINGS for s in range(args.seeds)]
    runs = Parallel(n_jobs=args.jobs)(jobs)
    rows = []
    for task in tasks:
        rows += summarise(task, [r for r in runs if r["task"] == task])
    results = {"settings": {"scoring": SCORING, "n_repeats": N_REPEATS, "delta": DELTA,
                            "dp_settings": [list(s) for s in SETTINGS], "seeds": args.seeds,
                            "black_box": "HistGradientBoostingClassifier(categorical_features="
                                         "'from_dtype', random_state=0) on other rows",
                            "tasks": meta},
               "rows": rows, "runs": runs}
    results["run"] = run_info(started, time.perf_counter() - t0, packages=("scipy",))
    save(args.out, results)
    print(f"saved {args.out}")


if __name__ == "__main__":
    main()
