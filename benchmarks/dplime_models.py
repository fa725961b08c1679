"""DPLimeExplainer on a regressor and a 3-class model, against non-private LIME (issue 19).

Two black boxes, each trained on rows disjoint from the private explanation
rows, all features in [0, 1] (public bounds by construction):

* **regressor**: ``GradientBoostingRegressor`` on Friedman #1
  (``make_friedman1``, 10 features, 5 of them used, outputs about 0 to 30),
  explained with the declared ``output_bounds=(-5, 35)``;
* **3-class**: ``HistGradientBoostingClassifier`` on a synthetic problem
  with 6 features where class 2 is ``x0 > 0.6``, class 1 is ``x1 > 0.5``
  below it, class 0 the rest (features 2-5 unused), each query explained
  for the class the black box predicts there (the default), and once for
  class 2; and ``SVC(probability=False)`` on the same data (predict only:
  its indicator of class 2 is explained; LIME gets the same indicator).

Each private answer (``strategy="basic"``, T = 100 steps, delta 1e-6, m =
``--rows`` explanation rows) is compared, per query, with

* the non-private optimum of the same local loss (``epsilon=inf``: what the
  DP answer estimates), and
* non-private LIME (``lime.lime_tabular``, continuous features, its
  coefficients converted to per unit of each feature, 5,000 samples), with
  the model's own ``predict`` / ``predict_proba`` (the explained class);

by the Pearson correlation of the attribution vectors (median over
queries), the agreement of the top feature, and the cosine. Needs the
``bench`` extra (``lime``).

Usage: ``python benchmarks/dplime_models.py [--rows 4000] [--queries 40]``
(the docs show ``--rows 3000 --queries 30``). Saves every number it prints,
with the settings, seed, runtime, date and versions, in
benchmarks/results/dplime_models.json.

Measured runtime: 273 s with ``--rows 3000 --queries 30`` on a shared,
loaded 2-core machine (2026-11-26).
"""

import argparse
import os
import time
import warnings

import numpy as np
from sklearn.datasets import make_friedman1
from sklearn.ensemble import GradientBoostingRegressor, HistGradientBoostingClassifier
from sklearn.svm import SVC

from skdpx.explain import DPLimeExplainer
from skdpx.privacy import PrivacyLedger

from _run_record import run_info, save, start

RESULTS = os.path.join(os.path.dirname(__file__), "results", "dplime_models.json")


def _lime(model, X_train, queries, *, mode, labels=None, seed=0):
    from lime.lime_tabular import LimeTabularExplainer

    explainer = LimeTabularExplainer(X_train, mode=mode, discretize_continuous=False,
                                     random_state=seed)
    std = explainer.scaler.scale_  # LIME fits on (x - mean) / std: back to per unit of x
    d = X_train.shape[1]
    out = np.zeros((len(queries), d))
    for i, z in enumerate(queries):
        if mode == "regression":
            exp = explainer.explain_instance(z, model.predict, num_features=d, num_samples=5000)
            weights = exp.local_exp[1]  # LIME stores the negated weights under 0
        else:
            k = int(labels[i])
            exp = explainer.explain_instance(z, model.predict_proba, labels=(k,),
                                             num_features=d, num_samples=5000)
            weights = exp.local_exp[k]
        for j, w in weights:
            out[i, j] = w / std[j]
    return out


class _OneHot:
    """A predict-only classifier's indicators as LIME's ``predict_proba``."""

    def __init__(self, model):
        self.model = model

    def predict_proba(self, X):
        return (self.model.predict(X)[:, None] == self.model.classes_).astype(float)


def _agreement(a, b):
    a, b = np.asarray(a), np.asarray(b)
    ac, bc = a - a.mean(axis=1, keepdims=True), b - b.mean(axis=1, keepdims=True)
    pearson = (ac * bc).sum(axis=1) / np.linalg.norm(ac, axis=1) / np.linalg.norm(bc, axis=1)
    cosine = (a * b).sum(axis=1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    top = np.argmax(np.abs(a), axis=1) == np.argmax(np.abs(b), axis=1)
    return {"pearson_median": float(np.median(pearson)), "cosine_median": float(np.median(cosine)),
            "top1_agreement": float(top.mean())}


def _explain(model, X_private, queries, epsilon_per_query, seed, **params):
    epsilon = np.inf if np.isinf(epsilon_per_query) else 1e6
    explainer = DPLimeExplainer(model, epsilon=epsilon, delta=1e-6,
                                epsilon_per_query=epsilon_per_query,
                                max_iter=2000 if np.isinf(epsilon_per_query) else 100,
                                bounds=(0, 1), accountant=PrivacyLedger(), random_state=seed,
                                **params).fit(X_private)
    return explainer


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=4000)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")  # seeded noise (benchmark), no shared ledger
    started, t_start = start(), time.perf_counter()
    rng = np.random.RandomState(args.seed)
    epsilons = [0.5, 1.0, 2.0, np.inf]
    results = {"rows": args.rows, "queries": args.queries, "seed": args.seed,
               "epsilons_per_query": [str(e) for e in epsilons], "max_iter": 100,
               "max_iter_at_inf": 2000, "delta": 1e-6, "lime_samples": 5000, "cases": {}}

    # regressor
    X, y = make_friedman1(n_samples=2 * args.rows, n_features=10, noise=0.5,
                          random_state=args.seed)
    X_model, y_model, X_private = X[:args.rows], y[:args.rows], X[args.rows:]
    reg = GradientBoostingRegressor(random_state=args.seed).fit(X_model, y_model)
    queries = rng.uniform(0.1, 0.9, size=(args.queries, 10))
    lime = _lime(reg, X_model, queries, mode="regression", seed=args.seed)
    rows = {}
    exact = None
    for eps in epsilons[::-1]:
        values = _explain(reg, X_private, queries, eps, args.seed,
                          output_bounds=(-5, 35)).explain(queries).values
        exact = values if np.isinf(eps) else exact
        rows[str(eps)] = {"vs_lime": _agreement(values, lime),
                          "vs_exact": _agreement(values, exact)}
    results["cases"]["regressor (Friedman #1, GBR, output_bounds=(-5, 35))"] = rows

    # 3-class
    X = rng.uniform(0, 1, size=(2 * args.rows, 6))
    y = np.where(X[:, 0] > 0.6, 2, np.where(X[:, 1] > 0.5, 1, 0))
    flip = rng.rand(len(y)) < 0.05
    y[flip] = rng.randint(0, 3, flip.sum())
    X_model, y_model, X_private = X[:args.rows], y[:args.rows], X[args.rows:]
    clf = HistGradientBoostingClassifier(random_state=args.seed).fit(X_model, y_model)
    queries = rng.uniform(0.1, 0.9, size=(args.queries, 6))
    svc = SVC().fit(X_model[:2000], y_model[:2000])  # predict only: the indicator
    one_hot = _OneHot(svc)
    for name, target, model in (("predicted class", None, clf), ("class 2", 2, clf),
                                ("SVC predict-only, class 2", 2, svc)):
        labels = model.predict(queries) if target is None else np.full(len(queries), target)
        lime = _lime(clf if model is clf else one_hot, X_model, queries, mode="classification",
                     labels=labels, seed=args.seed)
        rows = {}
        exact = None
        for eps in epsilons[::-1]:
            result = _explain(model, X_private, queries, eps, args.seed).explain(
                queries, target_class=target)
            assert result.meta["target_class"] == labels.tolist()
            exact = result.values if np.isinf(eps) else exact
            rows[str(eps)] = {"vs_lime": _agreement(result.values, lime),
                              "vs_exact": _agreement(result.values, exact)}
            if target == 2:
                rows[str(eps)]["feature0_top"] = float(
                    np.mean(np.argmax(np.abs(result.values), axis=1) == 0))
        kind = "" if model is svc else "HistGradientBoosting, "
        results["cases"][f"3-class ({kind}{name})"] = rows

    print(f"m = {args.rows} explanation rows, {args.queries} queries, T = 100, delta 1e-6")
    for case, rows in results["cases"].items():
        print(f"\n{case}")
        print(f"  {'eps/query':>9}  {'r LIME':>7} {'top1 LIME':>9}  {'r exact':>7} "
              f"{'top1 exact':>10}")
        for eps, row in rows.items():
            lime, ex = row["vs_lime"], row["vs_exact"]
            extra = f"  feature 0 top: {row['feature0_top']:.2f}" if "feature0_top" in row else ""
            print(f"  {eps:>9}  {lime['pearson_median']:7.3f} {lime['top1_agreement']:9.2f}  "
                  f"{ex['pearson_median']:7.3f} {ex['top1_agreement']:10.2f}{extra}")
    results["run"] = run_info(started, time.perf_counter() - t_start)
    print(f"total {results['run']['seconds']:.0f} s")
    save(RESULTS, results)
    print(f"\nsaved {RESULTS}")


if __name__ == "__main__":
    main()
