"""One machine's fixed costs and memory (issue 23): before and after, side by side.

Each measurement runs in a fresh Python process (so a calibration is not
already cached, as in a user's first fit), once with the code of this checkout
and once with the code of another checkout given by ``--before`` (e.g. a git
worktree of the commit before the change), interleaved, ``--repeats`` times.
The table shows the median and the minimum of each; the minimum is the
steadier figure on a shared machine, and so is the process's CPU time
(``cpu_*``: all its threads), which time-sharing with other processes does
not inflate.

Parts:

* ``calibration``: ``calibrate_noise`` for DPLocallyLinearClassifier's
  DP-SGD on MNIST (epsilon 2, delta 1e-5, batch 500 of 60,000 rows, 1 epoch,
  the centring release as prior), from scratch.
* ``llc``: a whole DPLocallyLinearClassifier fit on MNIST (M = 30, D' = 300,
  batch 500, ``--epochs``), DP (epsilon 2) and non-private (epsilon inf), and
  their ratio. Each fit runs in a fresh process of its own, the two in
  alternating order, so that both pay a first fit's costs (until 2026-11-26
  both ran in one process, the DP fit first, which charged the process's
  first-touch costs, about 1.5 s, to the DP fit). Each fit's CPU time is also
  split by phase: ``cpu_plan_*`` (planning the spend: the calibrations),
  ``cpu_train_*`` (the DP-SGD loop) and ``cpu_data_*`` (the rest of the work
  on the data: scaling, centring, the projection's setup). MNIST is read from
  ../shared/data/mnist (or $SKDPX_MNIST_DIR); it is not bundled.
* ``recourse``: a PrivRecourse fit on 10,000 synthetic rows x 20, epsilon 1,
  declared bounds: training its own DP logistic regression (first fit in the
  process, and again with the calibration cached) and with a fitted black box.
* ``dplime``: DPLimeExplainer at m = 300,000, d = 50: fit, then 32 queries;
  the time per query, the peak of traced numpy memory during ``explain``
  (tracemalloc) and the process's peak resident memory.
* ``first_fit`` (issue 41): ``import skdpx`` in a fresh process
  (``import_skdpx``: numpy, scikit-learn and the rest with it;
  ``import_skdpx_own``: skdpx alone, in another fresh process that imported
  numpy, scipy.stats, scikit-learn's base and linear models first), then
  three PrivRecourse fits on 10,000 synthetic rows x 20 with a fitted black
  box, epsilon 1: ``first``, ``second``, ``third`` and ``ratio`` (first /
  second; the issue's target: at most 1.1). ``gc_first`` and ``gc_second``:
  the seconds each fit spent in full (generation 2) garbage collections. One
  unrecorded run per checkout comes first, so that neither pays for
  compiling its ``.pyc`` files.

Run: python benchmarks/fixed_costs.py --before /path/to/old/checkout
     [--repeats 3] [--epochs 1] [--pause 5] [--parts calibration llc recourse dplime]
     [--out benchmarks/results/fixed_costs.json]

Saves ``benchmarks/results/fixed_costs.json`` (or ``--out``); the first-fit
run of issue 41 is ``--parts first_fit --out
benchmarks/results/fixed_costs_first_fit.json``.
"""

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import time
import tracemalloc
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "fixed_costs.json"
PARTS = ("calibration", "llc", "recourse", "dplime", "first_fit")
#: The parts run by default (first_fit has its own results file).
DEFAULT_PARTS = ("calibration", "llc", "recourse", "dplime")


# ------------------------------------------------------------- the workers
# Run in a fresh process with PYTHONPATH set to the checkout being measured.

def _calibration(args):
    from skdpx.privacy import calibrate_noise, gaussian_event

    t, c = time.perf_counter(), time.process_time()
    z_mean = calibrate_noise(0.1 * 2.0, 1e-5)
    z = calibrate_noise(2.0, 1e-5, steps=120 * args.epochs, sample_rate=500 / 60000,
                        prior=gaussian_event(z_mean))
    return {"seconds": time.perf_counter() - t, "cpu_seconds": time.process_time() - c,
            "noise_multiplier": z}


def _llc(args):
    sys.path.insert(0, str(HERE))
    from _mnist import BOUNDS, load_mnist
    from _run_record import timed_methods

    from skdpx.locally_linear import DPLocallyLinearClassifier

    X, y, _, _ = load_mnist()
    out = {}
    for label, eps in (("private", 2.0), ("non_private", math.inf)):
        if args.llc_fit not in (None, label):
            continue
        clf = DPLocallyLinearClassifier(
            epsilon=eps, n_maps=30, projection_dim=300, beta=0.1, batch_size=500,
            epochs=args.epochs, learning_rate=1.0, max_grad_norm=1.0, bounds=BOUNDS, delta=1e-5)
        t, c = time.perf_counter(), time.process_time()
        with timed_methods(DPLocallyLinearClassifier, ("_plan_spend", "_private_fit", "_train"),
                           clock=time.process_time) as phases:
            clf.fit(X, y)
        out[label] = time.perf_counter() - t
        out["cpu_" + label] = time.process_time() - c
        # CPU seconds by phase: the spend's plan (calibration), the training
        # loop, and the rest of the fit's work on the data (scaling, views)
        out[f"cpu_plan_{label}"] = phases["_plan_spend"]
        out[f"cpu_train_{label}"] = phases["_train"]
        out[f"cpu_data_{label}"] = phases["_private_fit"] - phases["_train"]
    return out


def _recourse_problem():
    """PrivRecourse's problem of the fixed-cost parts: 10,000 rows x 20 in [-1, 1], a
    logistic black box on 500 of them; (X, y, bounds, black_box)."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    n, d = 10_000, 20
    X = rng.uniform(-1, 1, size=(n, d))
    y = (X @ rng.normal(size=d) > 0).astype(int)
    bounds = (-np.ones(d), np.ones(d))
    return X, y, bounds, LogisticRegression().fit(X[:500], y[:500])


def _recourse(args):
    from skdpx import PrivRecourse

    X, y, bounds, black_box = _recourse_problem()
    out = {}
    for label, estimator in (("own_model_first", None), ("own_model_cached", None),
                             ("black_box", black_box)):
        t, c = time.perf_counter(), time.process_time()
        PrivRecourse(estimator=estimator, epsilon=1.0, bounds=bounds, classes=[0, 1]).fit(X, y)
        out[label] = time.perf_counter() - t
        out["cpu_" + label] = time.process_time() - c
    return out


def _dplime(args):
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    from skdpx import DPLimeExplainer

    m, d, n_queries = 300_000, 50, 32
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(m, d))
    w = rng.normal(size=d)
    black_box = LogisticRegression().fit(X[:2000], (X[:2000] @ w > 0).astype(int))
    queries = rng.uniform(-1, 1, size=(n_queries, d))
    explainer = DPLimeExplainer(black_box, epsilon=1000.0, epsilon_per_query=1.0,
                                bounds=(-np.ones(d), np.ones(d)))
    t = time.perf_counter()
    explainer.fit(X)
    fit = time.perf_counter() - t
    tracemalloc.start()
    t, c = time.perf_counter(), time.process_time()
    explainer.explain(queries)
    elapsed, cpu = time.perf_counter() - t, time.process_time() - c
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"fit_seconds": fit, "ms_per_query": 1000 * elapsed / n_queries,
            "cpu_ms_per_query": 1000 * cpu / n_queries,
            "explain_peak_mib": peak / 2**20,
            "max_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "data_mib": X.nbytes / 2**20}


def _first_fit(args):
    import gc
    import importlib

    if args.import_only:
        for name in ("numpy", "scipy.stats", "sklearn.base", "sklearn.linear_model"):
            importlib.import_module(name)

    t, c = time.perf_counter(), time.process_time()
    import skdpx
    out = {"import_skdpx": time.perf_counter() - t, "cpu_import_skdpx": time.process_time() - c}
    if args.import_only:
        return {"import_skdpx_own": out["import_skdpx"],
                "cpu_import_skdpx_own": out["cpu_import_skdpx"]}

    X, y, bounds, black_box = _recourse_problem()
    full_gc, started = [0.0], [0.0]

    def watch(phase, info):
        if info["generation"] == 2:
            if phase == "start":
                started[0] = time.perf_counter()
            else:
                full_gc[0] += time.perf_counter() - started[0]

    gc.callbacks.append(watch)
    for label in ("first", "second", "third"):
        full_gc[0] = 0.0
        t, c = time.perf_counter(), time.process_time()
        skdpx.PrivRecourse(estimator=black_box, epsilon=1.0, bounds=bounds,
                           classes=[0, 1]).fit(X, y)
        out[label] = time.perf_counter() - t
        out["cpu_" + label] = time.process_time() - c
        out["gc_" + label] = full_gc[0]
    gc.callbacks.remove(watch)
    out["ratio"] = out["first"] / out["second"]
    out["cpu_ratio"] = out["cpu_first"] / out["cpu_second"]
    return out


WORKERS = {"calibration": _calibration, "llc": _llc, "recourse": _recourse, "dplime": _dplime,
           "first_fit": _first_fit}


# -------------------------------------------------------------- the parent

def _run(part, checkout, args, rep=0):
    if part == "llc":
        # each fit in a fresh process of its own (the first fit in a process
        # pays first-touch costs: reading MNIST's pages, lazy imports), in
        # alternating order
        fits = ["private", "non_private"][::1 if rep % 2 == 0 else -1]
        out = {}
        for fit in fits:
            out.update(_run_worker(part, checkout, args, "--llc-fit", fit))
        out["ratio"] = out["private"] / out["non_private"]
        out["cpu_ratio"] = out["cpu_private"] / out["cpu_non_private"]
        return out
    if part == "first_fit":
        # skdpx's own import time in a process of its own, after its dependencies
        return {**_run_worker(part, checkout, args),
                **_run_worker(part, checkout, args, "--import-only")}
    return _run_worker(part, checkout, args)


def _run_worker(part, checkout, args, *extra):
    # Freed memory is handed back to this virtual machine's host about 2 s
    # after a process exits, and touching it again is slow (about 3 s of CPU
    # per GiB, against 0.15 s for memory the host still backs): a fit that
    # starts right after another would inherit some of its memory warm. A
    # pause makes every fit start equally cold.
    time.sleep(args.pause)
    env = dict(os.environ, PYTHONPATH=str(checkout), PYTHONWARNINGS="ignore")
    cmd = [sys.executable, "-W", "ignore", str(Path(__file__).resolve()), "--worker", part,
           "--epochs", str(args.epochs), *extra]
    done = subprocess.run(cmd, env=env, cwd="/", capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _summary(runs):
    keys = [k for k, v in runs[0].items() if isinstance(v, (int, float))]
    return {k: {"median": statistics.median(r[k] for r in runs),
                "min": min(r[k] for r in runs)} for k in keys}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", help="a checkout of the code before the change")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--parts", nargs="+", default=list(DEFAULT_PARTS), choices=PARTS)
    parser.add_argument("--worker", choices=PARTS, help=argparse.SUPPRESS)
    parser.add_argument("--llc-fit", choices=("private", "non_private"), help=argparse.SUPPRESS)
    parser.add_argument("--import-only", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--pause", type=float, default=5.0,
                        help="seconds to wait before each measured process (default 5)")
    parser.add_argument("--out", default=str(RESULTS))
    args = parser.parse_args()
    if args.worker:
        warnings.simplefilter("ignore")
        print(json.dumps(WORKERS[args.worker](args)))
        return
    sys.path.insert(0, str(HERE))
    from _run_record import run_info, save
    from _run_record import start as record_start

    after = HERE.parent
    versions = {"after": after} | ({"before": Path(args.before)} if args.before else {})
    started, t0 = record_start(), time.perf_counter()
    if "first_fit" in args.parts:
        for checkout in versions.values():  # unrecorded: compiles the .pyc files
            _run(part="first_fit", checkout=checkout, args=args)
    loads = [os.getloadavg()[0]]
    raw = {part: {v: [] for v in versions} for part in args.parts}
    for rep in range(args.repeats):
        for part in args.parts:
            for name, checkout in versions.items():
                raw[part][name].append(_run(part, checkout, args, rep))
                print(f"[{rep}] {part:11s} {name:6s} {json.dumps(raw[part][name][-1])}",
                      flush=True)
        loads.append(os.getloadavg()[0])
    summary = {part: {v: _summary(runs) for v, runs in by.items()} for part, by in raw.items()}
    print(f"\n{'part':12s} {'measure':18s} " + " ".join(f"{v + ' (med/min)':>22s}" for v in versions))
    for part, by in summary.items():
        for key in by["after"]:
            cells = " ".join(f"{by[v][key]['median']:>11.3f}/{by[v][key]['min']:<10.3f}"
                             for v in versions)
            print(f"{part:12s} {key:18s} {cells}")
    before_commit = None
    if args.before:
        before_commit = subprocess.run(["git", "-C", args.before, "rev-parse", "HEAD"],
                                       capture_output=True, text=True).stdout.strip() or None
    save(args.out, {
        "benchmark": "fixed_costs",
        **run_info(started, time.perf_counter() - t0, packages=("dp-accounting", "opendp")),
        "before_commit": before_commit,
        "settings": {"repeats": args.repeats, "epochs": args.epochs, "parts": args.parts,
                     "pause": args.pause},
        "load_average": loads,
        "summary": summary,
        "runs": raw,
    })


if __name__ == "__main__":
    main()
