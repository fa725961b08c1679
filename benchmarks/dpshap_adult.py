"""DPShapExplainer on Adult (issue 40, target c).

Black box: HistGradientBoostingClassifier (categorical columns from their
pandas dtype) trained on Adult's test split (16,281 rows); the private
background rows are the training split (32,561 rows), which the black box
never saw. Queries: ``--queries`` complete rows of the test split (public).
SHAP values of P(income > 50K) over the 14 original columns.

Measured, per query and column:

* **reference**: Kernel SHAP with a uniform random subsample of
  ``--reference-rows`` private rows as background (the full 32,561 rows
  would be 32,561 x coalitions black-box rows per query: infeasible here),
  computed with skdpx's engine and the *same* coalitions as the DP answers
  (so that the coalitions' sampling cancels in the comparison; the engine
  equals shap's KernelExplainer to 1e-6 on a shared background:
  tests/test_dpshap.py). shap's own KernelExplainer on that subsample is run
  on a few queries to report its difference to it (its own coalitions);
* **another subsample**: the same with another random subsample of as many
  rows (the reference's own sampling error);
* **noiseless**: the same coalitions with the background of
  ``dp_background(epsilon=inf)`` (the summary's own error, without noise:
  noiseless clusters and per-cluster marginals, the records drawn from them);
* **DP**: ``DPShapExplainer`` at epsilon 1 (``--seeds`` fits), 0.1 and inf.

Errors: the mean absolute error per value, and relative to the size of the
values (``sum |phi - ref| / sum |ref|`` over all queries and columns).
Coverage: the share of values whose difference to the answer with the
*noiseless last table* (the same run's clusters' counts and histograms
before their noise, recorded for evaluation only, the records drawn with
the same uniforms) lies within ``+- 1.645 std``.

Time per query, side by side in one run on the first ``--timed`` queries:
shap's KernelExplainer with ``shap.kmeans(X, 50)`` (default nsamples,
ordinal codes of the categorical columns, the model called on a DataFrame
rebuilt from them) against DPShapExplainer.explain with its defaults
(100 records, 2048 coalitions, 8 bootstrap draws of 256 coalitions for std)
and with ``n_std_draws=0``.

Run: python benchmarks/dpshap_adult.py [--queries 100] [--seeds 2] [--coalitions 256]
     [--reference-rows 100] [--timed 5] [--out benchmarks/results/dpshap_adult.json]
"""

import argparse
import os
import time
import warnings

import numpy as np
import pandas as pd
from skdpx.explain import DPShapExplainer, _dpshap
from skdpx.privacy import PrivacyLedger, _kmeans

from _run_record import run_info, save, start
from partial_dependence_adult import adult_black_box

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                       "dpshap_adult.json")
DELTA = 1e-6
N_BACKGROUND = 50


def recorded_fit(black_box, X, public, epsilon, seed, n_coalitions, n_records=100):
    """A fitted DPShapExplainer and what its noiseless twin needs (evaluation only): the
    last release's table before its noise and the records' uniforms."""
    tables, uniforms = [], []
    real = _kmeans.gaussian_release
    real_background = DPShapExplainer._background

    def recording(value, **kw):
        tables.append(np.array(value, dtype=float))
        return real(value, **kw)

    def background(self, table, sigma, u, relation):
        uniforms.append(u)
        return real_background(self, table, sigma, u, relation)

    _kmeans.gaussian_release = recording
    DPShapExplainer._background = background
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # seeded releases, uncapped ledgers: a benchmark
            est = DPShapExplainer(black_box, n_background=N_BACKGROUND, n_records=n_records,
                                  epsilon=epsilon, delta=DELTA, n_coalitions=n_coalitions,
                                  accountant=PrivacyLedger(), random_state=seed,
                                  **public).fit(X)
    finally:
        _kmeans.gaussian_release = real
        DPShapExplainer._background = real_background
    return est, (tables[-1], uniforms[-1])


def noiseless_background(est, recorded):
    """The background of the same clusters' marginals before their noise, drawn with the
    same uniforms: what the released one estimates."""
    table, uniforms = recorded
    return est._background(table, 0.0, uniforms, "add_or_remove")


def uniform_background(est, rows):
    """A background of given private rows with equal weights (the reference)."""
    return est._uniform_background(est.schema_.encode(rows), data=rows)


def errors(values, reference):
    diff = np.abs(values - reference)
    return {"mae": float(diff.mean()),
            "relative": float(diff.sum() / np.abs(reference).sum()),
            "per_query_relative_median": float(np.median(
                diff.sum(1) / np.maximum(np.abs(reference).sum(1), 1e-12)))}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--coalitions", type=int, default=256)
    parser.add_argument("--reference-rows", type=int, default=100)
    parser.add_argument("--timed", type=int, default=5)
    parser.add_argument("--shap-check", type=int, default=3)
    parser.add_argument("--out", default=RESULTS)
    args = parser.parse_args()
    started, t0 = start(), time.perf_counter()

    X_private, X_model, black_box, schema = adult_black_box()
    public = dict(bounds=schema["bounds"], categories=schema["categories"])
    queries = X_model.dropna().sample(args.queries, random_state=1)
    rng = np.random.default_rng(0)
    g = X_private.shape[1]
    design = _dpshap.shapley_design(g, args.coalitions,
                                    rng.random(_dpshap.design_shape(g, args.coalitions)))
    out = {"settings": {"queries": args.queries, "coalitions": len(design[0]),
                        "reference_rows": args.reference_rows, "n_background": N_BACKGROUND,
                        "delta": DELTA, "seeds": args.seeds, "timed_queries": args.timed,
                        "black_box": "HistGradientBoostingClassifier(categorical_features="
                                     "'from_dtype', random_state=0) on the test split",
                        "private_rows": int(len(X_private))}}

    # the noiseless k-means background and the reference, with the same coalitions
    base, _ = recorded_fit(black_box, X_private, public, np.inf, 0, args.coalitions)
    Zq = base.schema_.encode(queries)
    t = time.perf_counter()
    reference_rows = X_private.dropna().sample(args.reference_rows, random_state=2)
    reference, ref_base, _, _ = base._shap(Zq, uniform_background(base, reference_rows),
                                           design)
    print(f"reference ({args.reference_rows} rows): {time.perf_counter() - t:.0f} s", flush=True)
    kmeans_values, _, _, _ = base._shap(Zq, base.background_, design)
    out["reference_size"] = {"mean_abs_value": float(np.abs(reference).mean()),
                             "base_value": ref_base}
    # the reference's own sampling error: another random subsample of the same size
    other_rows = X_private.dropna().drop(reference_rows.index).sample(args.reference_rows,
                                                                      random_state=3)
    other, _, _, _ = base._shap(Zq, uniform_background(base, other_rows), design)
    rows = [{"background": f"another random subsample of {args.reference_rows} rows "
                           "(non-private)", "epsilon": "inf", **errors(other, reference),
             "coverage": None, "mean_std": 0.0, "n_points": args.reference_rows},
            {"background": "clusters' marginals, noiseless (epsilon=inf)", "epsilon": "inf",
             **errors(kmeans_values, reference), "coverage": None, "mean_std": 0.0,
             "n_points": len(base.background_),
             "clusters": len(base.background_.cluster_counts)}]
    categorical = np.array([c in schema["categories"] for c in X_private.columns])

    for epsilon, seeds in ((1.0, args.seeds), (0.1, 1)):
        for seed in range(seeds):
            t = time.perf_counter()
            est, table = recorded_fit(black_box, X_private, public, epsilon, 100 + seed,
                                      args.coalitions)
            values, _, phi_b, _ = est._shap(Zq, est.background_, design)
            std_design = (_dpshap.shapley_design(g, _dpshap._STD_COALITIONS,
                                                  rng.random(_dpshap.design_shape(
                                                      g, _dpshap._STD_COALITIONS)))
                          if len(design[0]) > _dpshap._STD_COALITIONS else None)
            normals = rng.standard_normal((est.n_std_draws,
                                           *est.background_._source["cells"].shape))
            std = est._std(Zq, values, phi_b, design, std_design, normals)
            noiseless, _, _, _ = est._shap(Zq, noiseless_background(est, table), design)
            covered = np.abs(values - noiseless) <= 1.645 * std
            row = {"background": f"DP (epsilon={epsilon:g}, seed {seed})",
                   "epsilon": epsilon, "seed": seed, **errors(values, reference),
                   "to_kmeans": errors(values, kmeans_values),
                   "to_noiseless_table": errors(values, noiseless),
                   "coverage": float(covered.mean()), "mean_std": float(std.mean()),
                   "coverage_numeric": float(covered[:, ~categorical].mean()),
                   "coverage_categorical": float(covered[:, categorical].mean()),
                   "n_points": len(est.background_),
                   "clusters": len(est.background_.cluster_counts),
                   "seconds": round(time.perf_counter() - t, 1)}
            rows.append(row)
            print(f"epsilon {epsilon:g} seed {seed}: relative error {row['relative']:.3f}, "
                  f"MAE {row['mae']:.4f}, coverage {row['coverage']:.3f}, "
                  f"{row['n_points']} points, {row['seconds']:.0f} s", flush=True)
    out["rows"] = rows

    # shap's KernelExplainer on the reference subsample, a few queries (its own coalitions)
    import shap

    columns = list(X_private.columns)
    cats = {c: list(schema["categories"][c]) for c in schema["categories"]}

    def to_codes(frame):
        return np.column_stack([frame[c].cat.codes.to_numpy() if c in cats
                                else frame[c].to_numpy(dtype=float) for c in columns]
                               ).astype(float)

    def f_codes(A):
        A = np.asarray(A, dtype=float)
        frame = pd.DataFrame({c: (pd.Categorical.from_codes(np.rint(A[:, j]).astype(int),
                                                            dtype=X_private[c].dtype)
                                  if c in cats else A[:, j])
                              for j, c in enumerate(columns)})
        frame = frame.astype({c: X_private[c].dtype for c in columns if c not in cats})
        return black_box.predict_proba(frame)[:, 1]

    q_codes = to_codes(queries)
    k = args.shap_check
    if k:
        t = time.perf_counter()
        ke = shap.KernelExplainer(f_codes, to_codes(reference_rows))
        theirs = np.asarray(ke.shap_values(q_codes[:k], nsamples=args.coalitions, silent=True))
        out["shap_reference_check"] = {
            "queries": k, "nsamples": args.coalitions,
            **errors(theirs, reference[:k]),
            "seconds_per_query": (time.perf_counter() - t) / k}
        print(f"shap KernelExplainer on the reference rows vs skdpx's engine: relative "
              f"{out['shap_reference_check']['relative']:.3f}", flush=True)

    # time per query, side by side
    m = args.timed
    t = time.perf_counter()
    summary = shap.kmeans(to_codes(X_private.dropna()), N_BACKGROUND)
    t_summary = time.perf_counter() - t
    ke = shap.KernelExplainer(f_codes, summary)
    t = time.perf_counter()
    theirs = np.asarray(ke.shap_values(q_codes[:m], silent=True))
    t_shap = (time.perf_counter() - t) / m
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = DPShapExplainer(black_box, n_background=N_BACKGROUND, epsilon=1.0, delta=DELTA,
                              accountant=PrivacyLedger(), **public)
        t = time.perf_counter()
        est.fit(X_private)
        t_fit = time.perf_counter() - t
    t = time.perf_counter()
    fa = est.explain(queries.iloc[:m])
    t_ours = (time.perf_counter() - t) / m
    est.set_params(n_std_draws=0)
    t = time.perf_counter()
    fa0 = est.explain(queries.iloc[:m])
    t_ours0 = (time.perf_counter() - t) / m
    out["timing"] = {
        "queries": m, "shap_kmeans_seconds": t_summary, "dp_fit_seconds": t_fit,
        "shap_kernel_kmeans50_per_query": t_shap,
        "dpshap_per_query": t_ours, "dpshap_per_query_no_std": t_ours0,
        "ratio": t_ours / t_shap, "ratio_no_std": t_ours0 / t_shap,
        "dpshap_points": len(est.background_), "dpshap_coalitions": fa.meta["coalitions"],
        "shap_kmeans50_relative_error": errors(theirs, reference[:m])["relative"],
        "dpshap_default_relative_error": errors(fa0.values, reference[:m])["relative"]}
    print(f"time per query: shap KernelExplainer + shap.kmeans(X, 50) {t_shap:.2f} s, "
          f"DPShapExplainer {t_ours:.2f} s (with std), {t_ours0:.2f} s (no std): ratio "
          f"{t_ours / t_shap:.2f} / {t_ours0 / t_shap:.2f}", flush=True)

    out["run"] = run_info(started, time.perf_counter() - t0, packages=("shap",))
    save(args.out, out)
    print(f"saved {args.out}")


if __name__ == "__main__":
    main()
