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

Besides the wall time, each call's CPU seconds are read here and in every
worker (psutil): "free cores" = CPU here + the busiest worker's CPU, the wall
time the call would take with a free core per process, i.e. the speed-up the
code allows apart from what other programs leave of the machine.

The settings alternate within each repetition (same machine state); the
median of the repetitions is reported, and the ratios to n_jobs=1. Each
runs twice: with the BLAS threads numpy has by default (what a user gets),
and with this process limited to one BLAS thread (threadpoolctl), as joblib
limits each loky worker (cpu_count // n_jobs threads): the parallelism alone. On a busy
machine, OpenBLAS's threads in small products are much slower than one.

Run: nice -n 10 python benchmarks/parallel.py [--reps 3] [--m 20000] [--d 20] [--queries 64]
     [--out benchmarks/results/parallel.json]
(``--out``: the results, with ``_run_record``'s commit, date, versions, machine
and command; without it nothing is saved.)

Saved runs (medians of 3, n_jobs=2 against 1, wall time, one BLAS thread):
``parallel.json`` (--m 200000, 2026-11-26 16:59 UTC, commit 7426751, load
average 0.6-0.9, the machine otherwise idle): DPLime's explain 0.63 (1.19 s
against 0.75 s), the search 0.68, the ceiling 0.58; ``parallel_m20000.json``
(the defaults, a minute earlier): DPLime 1.47 (an explain of 0.14 s is too
short for the dispatch), the search 0.71, the ceiling 0.55;
``parallel_loaded.json`` (the defaults, earlier that day at load average
3-7): no speed-up (DPLime 1.04, the search 1.48, the ceiling 1.42).
"""

import argparse
import time
import warnings

import joblib
import numpy as np
import psutil
from threadpoolctl import threadpool_limits
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression

from skdpx import DPLocallyLinearClassifier
from skdpx.explain import DPLimeExplainer
from skdpx.model_selection import DPRandomSearchCV
from skdpx.privacy import PrivacyLedger

from _run_record import run_info, save, start


def _cpu_of_workers():
    """CPU seconds (user + system) of each process below this one (loky's workers)."""
    out = {}
    for child in psutil.Process().children(recursive=True):
        try:
            t = child.cpu_times()
            out[child.pid] = t.user + t.system
        except psutil.Error:
            pass
    return out


def _timed(call):
    """Wall seconds of ``call()``, and its CPU seconds: here, and in the busiest worker.

    ``cpu here + busiest worker`` is the wall time the call would take with a
    free core per process (no waiting for other programs): on a shared
    machine, the parallel speed-up the code allows, apart from the cores
    the other programs leave.
    """
    before, cpu = _cpu_of_workers(), time.process_time()
    t = time.perf_counter()
    call()
    wall = time.perf_counter() - t
    cpu = time.process_time() - cpu
    after = _cpu_of_workers()
    workers = [after[p] - before.get(p, 0.0) for p in after]
    return {"wall": wall, "cpu_here": cpu, "cpu_busiest_worker": max(workers, default=0.0),
            "cpu_workers": sum(workers)}


def _dplime(X, model, Q, n_jobs, strategy="basic"):
    exp = DPLimeExplainer(model, epsilon=1e6, delta=1e-6, epsilon_per_query=0.5, bounds=(0, 1),
                          accountant=PrivacyLedger(), strategy=strategy, n_jobs=n_jobs).fit(X)
    out = _timed(lambda: exp.explain(Q))
    assert (np.array(exp.history_["phase"]) == "interactive").all()
    return out


def _search(X, y, n_jobs, seed):
    clf = DPLocallyLinearClassifier(bounds=(-5, 5), classes=[0, 1], batch_size=512, epochs=4)
    search = DPRandomSearchCV(clf, {"learning_rate": [0.05, 0.1, 0.3, 1.0], "n_maps": [1, 2, 4]},
                              n_iter=8, epsilon=2.0, accountant=PrivacyLedger(), n_jobs=n_jobs,
                              random_state=seed)
    return _timed(lambda: search.fit(X, y))


def _busy(seed):
    """Pure CPU work (no data sent): what two workers can gain on this machine now."""
    a = np.random.default_rng(seed).random((300, 300))
    for _ in range(60):
        a = a @ a
        a /= np.abs(a).max()
    return float(a.sum())


def _ceiling(n_jobs):
    return _timed(lambda: joblib.Parallel(n_jobs=n_jobs)(joblib.delayed(_busy)(i)
                                                         for i in range(4)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--m", type=int, default=20_000)
    ap.add_argument("--d", type=int, default=20)
    ap.add_argument("--queries", type=int, default=64)
    ap.add_argument("--search-rows", type=int, default=20_000)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    started, t_start = start(), time.perf_counter()
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
    print(f"search n_jobs=2, cold workers: {cold['wall']:.3f} s", flush=True)
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
        print(f"rep {rep}: " + "; ".join(f"{k} n_jobs={s}: {v[s][-1]['wall']:.3f} s"
                                         for k, v in times.items() for s in settings), flush=True)
    out = {"settings": vars(args), "results": {}}
    out["results"]["search_n_jobs_2_cold_workers"] = cold
    for name, runs in times.items():
        res = {}
        for setting in settings:
            med = {k: float(np.median([r[k] for r in runs[setting]])) for k in runs[setting][0]}
            # with a free core per process: cpu here + the busiest worker's
            med["free_cores"] = float(np.median([r["cpu_here"] + r["cpu_busiest_worker"]
                                                 for r in runs[setting]]))
            res[setting] = med
        ratios = {
            "wall_2_to_1": res["2"]["wall"] / res["1"]["wall"],
            "wall_2_to_1_one_blas_thread":
                res["2 (1 BLAS thread)"]["wall"] / res["1 (1 BLAS thread)"]["wall"],
            "free_cores_2_to_1_one_blas_thread":
                res["2 (1 BLAS thread)"]["free_cores"] / res["1 (1 BLAS thread)"]["free_cores"],
            "cpu_total_2_to_1_one_blas_thread":
                (res["2 (1 BLAS thread)"]["cpu_here"] + res["2 (1 BLAS thread)"]["cpu_workers"])
                / res["1 (1 BLAS thread)"]["cpu_here"],
        }
        out["results"][name] = {"median": res, "ratios": ratios, "runs": runs}
        print(f"{name}: " + "; ".join(
            f"n_jobs={s}: wall {r['wall']:.3f} s, free cores {r['free_cores']:.3f} s"
            for s, r in res.items()) + "\n    ratios " + ", ".join(
            f"{k} {v:.2f}" for k, v in ratios.items()))
    if args.out:
        out["run"] = run_info(started, time.perf_counter() - t_start,
                              packages=("joblib", "psutil", "threadpoolctl"))
        save(args.out, out)


if __name__ == "__main__":
    main()
