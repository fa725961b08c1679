"""joblib workers (issue 23, item 4): wall time with n_jobs=1 and n_jobs=2, side by side.

a. DPLimeExplainer ("basic"): m explanation rows x d features, one explain()
   call of q new queries (the call only: the fit is not timed), n_jobs=1
   against n_jobs=2 on loky (the pool started before the timings);
b. DPRandomSearchCV over DPLocallyLinearClassifier: a whole fit (the same
   seeded search every time), n_jobs=1 against n_jobs=2; and once, first, in
   fresh workers, whose calibration caches are cold;
c. the ceiling: 4 tasks of pure CPU work (matrix products, nothing sent), the
   best ratio two workers can reach on the machine at that moment (0.5 on two
   idle cores; on a shared machine, whatever the other processes leave).

The settings alternate within each repetition (same machine state); the
median of the repetitions is reported, and the ratios to n_jobs=1. Each
runs twice: with the BLAS threads numpy has by default (what a user gets),
and with this process limited to one BLAS thread (threadpoolctl), as joblib
limits each loky worker (cpu_count // n_jobs threads): the parallelism alone. On a busy
machine, OpenBLAS's threads in small products are much slower than one.

Run: nice -n 10 python benchmarks/parallel.py [--reps 3] [--m 20000] [--d 20] [--queries 64]
     [--out benchmarks/results/parallel.json]
"""

import argparse
import json
import os
import platform
import time
import warnings

import joblib
import numpy as np
from threadpoolctl import threadpool_limits
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression

from skdpx import DPLocallyLinearClassifier
from skdpx.explain import DPLimeExplainer
from skdpx.model_selection import DPRandomSearchCV
from skdpx.privacy import PrivacyLedger


def _dplime(X, model, Q, n_jobs, strategy="basic"):
    exp = DPLimeExplainer(model, epsilon=1e6, delta=1e-6, epsilon_per_query=0.5, bounds=(0, 1),
                          accountant=PrivacyLedger(), strategy=strategy, n_jobs=n_jobs).fit(X)
    t = time.perf_counter()
    result = exp.explain(Q)
    elapsed = time.perf_counter() - t
    assert (result.phase == "interactive").all()
    return elapsed


def _search(X, y, n_jobs, seed):
    clf = DPLocallyLinearClassifier(bounds=(-5, 5), classes=[0, 1], batch_size=512, epochs=4)
    search = DPRandomSearchCV(clf, {"learning_rate": [0.05, 0.1, 0.3, 1.0], "n_maps": [1, 2, 4]},
                              n_iter=8, epsilon=2.0, accountant=PrivacyLedger(), n_jobs=n_jobs,
                              random_state=seed)
    t = time.perf_counter()
    search.fit(X, y)
    return time.perf_counter() - t


def _busy(seed):
    """Pure CPU work (no data sent): what two workers can gain on this machine now."""
    a = np.random.default_rng(seed).random((300, 300))
    for _ in range(60):
        a = a @ a
        a /= np.abs(a).max()
    return float(a.sum())


def _ceiling(n_jobs):
    t = time.perf_counter()
    joblib.Parallel(n_jobs=n_jobs)(joblib.delayed(_busy)(i) for i in range(4))
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--m", type=int, default=20_000)
    ap.add_argument("--d", type=int, default=20)
    ap.add_argument("--queries", type=int, default=64)
    ap.add_argument("--search-rows", type=int, default=20_000)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(args.m, args.d))
    w = rng.normal(size=args.d)
    model = LogisticRegression().fit(X[: args.m // 4], (X[: args.m // 4] - 0.5) @ w > 0)
    Xs, ys = make_classification(args.search_rows, 10, n_informative=6, random_state=0)

    # start the loky pool (and the workers' imports) before any timing
    joblib.Parallel(n_jobs=2)(joblib.delayed(np.sum)(i) for i in range(4))
    _dplime(X[:2000], model, rng.uniform(size=(4, args.d)), 2)

    # the first search in fresh workers: their calibration caches are cold (the
    # parent's were warmed by the search's own planning)
    cold = _search(Xs, ys, 2, seed=0)
    print(f"search n_jobs=2, cold workers: {cold:.3f} s", flush=True)
    settings = ("1", "1 (1 BLAS thread)", "2", "2 (1 BLAS thread)")
    names = ("ceiling", "dplime_basic", "search")
    times = {name: {s: [] for s in settings} for name in names}
    for rep in range(args.reps):
        for setting in settings:
            n_jobs = int(setting[0])
            with threadpool_limits(1 if "BLAS" in setting else None):
                Q = rng.uniform(size=(args.queries, args.d))
                times["dplime_basic"][setting].append(_dplime(X, model, Q, n_jobs))
                times["search"][setting].append(_search(Xs, ys, n_jobs, seed=0))
                times["ceiling"][setting].append(_ceiling(n_jobs))
        print(f"rep {rep}: " + "; ".join(f"{k} n_jobs={s}: {v[s][-1]:.3f} s"
                                         for k, v in times.items() for s in settings), flush=True)
    out = {"settings": vars(args), "cpu_count": os.cpu_count(),
           "python": platform.python_version(), "joblib": joblib.__version__,
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "results": {}}
    out["results"]["search_n_jobs_2_cold_workers_s"] = cold
    for name, runs in times.items():
        one, one_blas, two, two_blas = (float(np.median(runs[s])) for s in settings)
        out["results"][name] = {"n_jobs_1_s": one, "n_jobs_2_s": two, "ratio_2_to_1": two / one,
                                "n_jobs_1_one_blas_thread_s": one_blas,
                                "n_jobs_2_one_blas_thread_s": two_blas,
                                "ratio_2_to_1_one_blas_thread": two_blas / one_blas,
                                "runs": runs}
        print(f"{name}: n_jobs=1 {one:.3f} s, n_jobs=2 {two:.3f} s, ratio {two / one:.2f}; "
              f"one BLAS thread: {one_blas:.3f} s, {two_blas:.3f} s, "
              f"ratio {two_blas / one_blas:.2f}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
