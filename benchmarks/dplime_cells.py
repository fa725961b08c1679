"""DPLimeExplainer per query: per-cell sums against the exact path (issue 41, target a).

Side by side in one run, for each setting: the same explainer with
``approximation="exact"`` and ``"cells"`` (per-cell sums made at fit:
skdpx.explain._cells), the CPU time of ``fit`` and of ``explain`` per query
(one BLAS thread), and the answers' local loss under the *exact* loss
(``skdpx.explain._local_loss``) of the explanation rows:

* noiseless: each path's exact minimiser of its own loss (the limit of its
  descent; ``trust_region`` on the forms the explainer reads), the cells'
  exact local loss relative to the exact path's, per query: the
  approximation alone. An ``epsilon=inf`` fit's anchors are exact Lloyd
  centres, which no DP fit has: the same optimum is also computed with the
  anchors of the ``epsilon_per_query=1`` fit below (``..._dp_anchors``);
* at ``epsilon_per_query=1`` (DP answers with the default number of steps,
  each path its own noise): the same ratio, which also holds the noise and
  the descent (the cells' weights are smaller, so at the same public step
  size their descent moves less per step).

Settings:

* synthetic, d = 50: standard normal rows (bounds (-5, 5), as
  benchmarks/scale.py), m = 1e4, 1e5, 1e6; the black box a
  LogisticRegression fitted on separate public rows, whose gradient is
  known: the cosine of each answer to it is reported;
* Adult (104 encoded columns): the training split (32,561 rows) as it is,
  and resampled to 250,000 and 1e6 rows (drawn with replacement, seed 0); the black box a
  RandomForestClassifier on half of the test split (as
  benchmarks/dplime_adult.py), the queries rows of the other half.

lime's LimeTabularExplainer (``bench`` extra) is timed in the same run on the
synthetic rows at the largest m (``--lime-queries``, its default 5,000
perturbations a query): the non-private reference of issue 41 (~110 ms).

Run: python benchmarks/dplime_cells.py [--queries 40] [--parts synthetic adult]
Writes benchmarks/results/dplime_cells.json and prints a table.
"""

import argparse
import os
import time
import warnings

import numpy as np
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression

from skdpx.datasets import encode_adult, load_adult
from skdpx.explain import DPLimeExplainer
from skdpx.explain._local_loss import local_loss, local_loss_terms, trust_region

from _run_record import run_info, save, start

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                       "dplime_cells.json")
D, BOUNDS, DELTA = 50, (-5.0, 5.0), 1e-6


def fit(box, X, bounds, approximation, epsilon_per_query, n_queries, max_iter=None):
    epsilon = np.inf if np.isinf(epsilon_per_query) else epsilon_per_query * n_queries + 1.0
    explainer = DPLimeExplainer(box, epsilon=epsilon, delta=DELTA,
                                epsilon_per_query=epsilon_per_query, max_iter=max_iter,
                                bounds=bounds, approximation=approximation)
    t0 = time.process_time()
    explainer.fit(X)
    return explainer, time.process_time() - t0


def answers(explainer, Z):
    t0 = time.process_time()
    explainer.explain(Z)
    seconds = time.process_time() - t0
    return np.asarray(explainer.history_["explanations"][-len(Z):]), seconds / len(Z)


def compare(box, X, Z, bounds, gradient=None):
    """Both paths side by side: the approximation alone (noiseless optima), then DP answers."""
    out = {"m": int(len(X)), "d": int(X.shape[1]), "queries": int(len(Z))}
    # noiseless: each path's exact minimiser of its own loss (the descent's limit),
    # under the exact loss: what the cells change, without the noise or the steps
    optima = {}
    for approximation in ("exact", "cells"):
        explainer, _ = fit(box, X, bounds, approximation, np.inf, len(Z), max_iter=1)
        scaler = explainer._scaler()
        Zs = scaler.transform(Z)
        H, g = explainer._forms(Zs, np.ones(len(Z), dtype=int))
        optima[approximation] = trust_region(H, g, explainer.radius)
        if approximation == "exact":
            ref = local_loss_terms(Zs, scaler.transform(X), explainer._labels[:, 1])
    rel = local_loss(optima["cells"], *ref) / local_loss(optima["exact"], *ref) - 1
    out["rel_loss_noiseless"] = summary(rel)
    # DP answers at epsilon_per_query=1 (default T): the explainer as a user runs it
    phis = {}
    for approximation in ("exact", "cells"):
        explainer, fit_s = fit(box, X, bounds, approximation, 1.0, len(Z))
        assert explainer.approximation_ == approximation
        if approximation == "cells":
            # the noiseless optimum of the loss these DP anchors give (the one above
            # has the exact Lloyd centres an epsilon=inf fit gets: no DP user has them)
            H, g = explainer._forms(explainer._scaler().transform(Z), np.ones(len(Z), dtype=int))
            dp_optimum = trust_region(H, g, explainer.radius)
            out["rel_loss_noiseless_dp_anchors"] = summary(
                local_loss(dp_optimum, *ref) / local_loss(optima["exact"], *ref) - 1)
        phis[approximation], per_query = answers(explainer, Z)
        out[f"{approximation}_eps1_fit_cpu_s"] = fit_s
        out[f"{approximation}_eps1_ms_per_query"] = 1e3 * per_query
        out["n_iter"] = int(explainer.n_iter_)
    rel = local_loss(phis["cells"], *ref) / local_loss(phis["exact"], *ref) - 1
    out["rel_loss_eps1"] = summary(rel)
    out["speedup_eps1"] = out["exact_eps1_ms_per_query"] / out["cells_eps1_ms_per_query"]
    if gradient is not None:  # a cosine: the scale of the units does not enter
        grad = gradient(Z)
        for k, v in {**{f"{k}_noiseless": v for k, v in optima.items()},
                     **{f"{k}_eps1": v for k, v in phis.items()}}.items():
            cos = np.sum(v * grad, 1) / np.linalg.norm(v, axis=1) / np.linalg.norm(grad, axis=1)
            out[f"cosine_to_gradient_median_{k}"] = float(np.median(cos))
    return out


def summary(rel):
    return {"median": float(np.median(rel)), "mean": float(np.mean(rel)),
            "p90": float(np.quantile(rel, 0.9)), "max": float(rel.max()),
            "min": float(rel.min())}


def synthetic(m, n_queries, lime_queries=0):
    rng = np.random.default_rng(12345)
    w = np.linspace(-1, 1, D)
    public = rng.standard_normal((20_000, D))
    box = LogisticRegression(max_iter=500).fit(
        public, (public @ w + 0.5 * rng.standard_normal(20_000) > 0.3).astype(int))
    X = np.random.default_rng(0).standard_normal((m, D))
    Z = np.random.default_rng(777).standard_normal((n_queries, D))

    def gradient(Q):  # of 2 P(1 | x) - 1, in input units
        p = box.predict_proba(Q)[:, 1]
        return 2 * (p * (1 - p))[:, None] * box.coef_[0][None, :]

    out = compare(box, X, Z, BOUNDS, gradient)
    if lime_queries:
        out.update(lime_timing(box, X, Z[:lime_queries]))
    return out


def lime_timing(box, X, Z):
    """lime's LimeTabularExplainer on the same rows and black box (its default 5,000
    perturbations a query), CPU per query, in this run: the non-private reference."""
    from _lime import LimeReference

    t0 = time.process_time()
    reference = LimeReference(box, num_samples=5000).fit(X)
    fit_s = time.process_time() - t0
    t0 = time.process_time()
    reference.explain(Z)
    return {"lime_fit_cpu_s": fit_s, "lime_queries": int(len(Z)),
            "lime_ms_per_query": 1e3 * (time.process_time() - t0) / len(Z)}


def adult(n_queries, rows=None):
    train, test = load_adult(subset="train"), load_adult(subset="test")
    enc, enc_test = encode_adult(train.data), encode_adult(test.data)
    half = len(enc_test.data) // 2
    model = RandomForestClassifier(n_estimators=100, n_jobs=1, random_state=0).fit(
        enc_test.data[half:], test.target[half:])
    X = enc.data
    if rows is not None:
        X = X[np.random.default_rng(0).integers(0, len(X), rows)]
    return compare(model, X, enc_test.data[:n_queries], enc.bounds)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--parts", nargs="+", default=["synthetic", "adult"])
    parser.add_argument("--m", type=float, nargs="+", default=[1e4, 1e5, 1e6])
    parser.add_argument("--lime-queries", type=int, default=10,
                        help="lime's queries, timed at the largest m (0: none)")
    parser.add_argument("--out", default=RESULTS)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    started, t0 = start(), time.perf_counter()
    results = {"settings": {"queries": args.queries, "delta": DELTA,
                            "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS")},
               "runs": []}
    if "synthetic" in args.parts:
        for m in args.m:
            lime = args.lime_queries if m == max(args.m) else 0
            run = {"setting": f"synthetic d={D}", **synthetic(int(m), args.queries, lime)}
            results["runs"].append(run)
            print_run(run)
    if "adult" in args.parts:
        for rows in (None, 250_000, 1_000_000):
            run = {"setting": "adult" + ("" if rows is None else " resampled"),
                   **adult(args.queries if rows is None else args.queries // 2, rows)}
            results["runs"].append(run)
            print_run(run)
    results["run"] = run_info(started, time.perf_counter() - t0)
    save(args.out, results)
    print_table(results)
    for r in results["runs"]:
        if "lime_ms_per_query" in r:
            print(f"lime at m={r['m']}: {r['lime_ms_per_query']:.1f} ms per query "
                  f"(cells {r['cells_eps1_ms_per_query']:.2f} ms: "
                  f"{r['lime_ms_per_query'] / r['cells_eps1_ms_per_query']:.1f}x faster)")


def print_run(run):
    print(f"{run['setting']} m={run['m']}: exact {run['exact_eps1_ms_per_query']:.1f} ms, "
          f"cells {run['cells_eps1_ms_per_query']:.2f} ms per query; rel loss noiseless max "
          f"{run['rel_loss_noiseless']['max']:.4f}", flush=True)


def print_table(results):
    head = (f"{'setting':<20}{'m':>9}{'d':>5}{'exact ms/q':>12}{'cells ms/q':>12}"
            f"{'cells fit s':>12}{'rel loss noiseless (med/max)':>30}{'rel loss eps=1 (med/max)':>27}")
    print(head)
    for r in results["runs"]:
        a, b = r["rel_loss_noiseless"], r["rel_loss_eps1"]
        print(f"{r['setting']:<20}{r['m']:>9}{r['d']:>5}{r['exact_eps1_ms_per_query']:>12.1f}"
              f"{r['cells_eps1_ms_per_query']:>12.2f}{r['cells_eps1_fit_cpu_s']:>12.1f}"
              f"{a['median']:>15.4f} / {a['max']:<12.4f}{b['median']:>12.4f} / {b['max']:<12.4f}")


if __name__ == "__main__":
    main()
