"""DPLocallyLinearClassifier full-batch DP gradient descent on Dask and Spark (issue 42, b).

One synthetic table per size (``--sizes``, default 1e5 and 1e6, and
``--rows``, default 6M): 20 standard normal features and a binary label
from a nonlinear rule (``score = x0 + x1 / 2 - |x2| + 1/2 + 0.3 x3 x4`` plus
noise of sd 0.2: a logistic regression reaches about 0.83, two maps per
class about 0.93), written once as Parquet files of 250,000 rows under
``--parquet`` (never committed). A held-out test set of 200,000 rows from
another seed, in memory.

Each fit is ``DPLocallyLinearClassifier(batch_size=None, epsilon=1,
delta=1e-5, bounds=(-4, 4), classes=[0, 1], optimizer="adam",
learning_rate=1.0)``, i.e. full-batch DP gradient descent (one step reads
every row), on three engines:

* **memory**: the Parquet files read into a numpy array in this process
  (the time to read them is reported apart);
* **dask**: ``dask.dataframe.read_parquet`` on a ``LocalCluster`` of 2
  worker processes (one thread each), ``y`` the label Series;
* **spark**: ``spark.read.parquet`` on a ``local[2]`` session, ``y`` the
  label column's name.

On an engine, each step is one pass over the cached partitions (the rows
scaled and centred once, ``persist``), their clipped gradient sums added in
the driver, where the noise is drawn. Measured for every fit: the time of
each step (the median is reported; ``DPSGD.full_batch_step`` and
``DPSGD.step`` timed), the fit's total, and the rest of it (the passes before
the steps: the DP count, the centring sum, the persist; in memory the
validation and scaling), the peak memory of this process (the driver) and
its peak over its memory when the fit started. The sizes run in turn, and
at each size Dask, Spark and in memory one after the other (the machine
is shared: its load changes over a run, less within a size).

* **The crossover**: at every size, ``--crossover-steps`` (5) steps on each
  engine; with a fixed part F and a per-step time t per engine, an engine
  pays from ``s* = (F_engine - F_memory) / (t_memory - t_engine)`` steps on
  (never when its step is not faster).
* **Accuracy at ``--rows``**: ``--steps`` (40) full-batch steps in memory
  and on Dask (the same model up to summation order, so the same accuracy),
  ``--spark-steps`` (20) on Spark (its time per step; the run stays under
  about 20 minutes), and the in-memory DP-SGD fit with the default Poisson
  batch (256, 20 epochs, SGD at 0.3) at the same epsilon on the same rows.

Saves the figures with the run record to
``benchmarks/results/scale_llc.json``; prints the tables.

Run: nice -n 10 python benchmarks/scale_llc.py [--quick]
"""

import argparse
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _run_record import run_info, save, start
from scale import GIB, ClientSampler
from scale_engines import dask_cluster, n_partitions, spark_session
from scale_engines import write_parquet as write_engine_parquet

from skdpx.locally_linear import DPLocallyLinearClassifier
from skdpx.privacy import DPSGD

RESULTS = Path(__file__).resolve().parent / "results" / "scale_llc.json"
D = 20
FILE_ROWS = 250_000
BOUNDS = (-4.0, 4.0)
EPSILON, DELTA = 1.0, 1e-5
#: the full-batch fit (tuned on 200,000 separate rows: 40 Adam steps at 1.0 reach the
#: default Poisson DP-SGD fit's accuracy there)
FULL_BATCH = dict(batch_size=None, optimizer="adam", learning_rate=1.0, decay_every=40)


# ------------------------------------------------------------------ data


def make_rows(n, seed):
    """``n`` rows: 20 standard normal features, a label from a nonlinear rule."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, D))
    score = X[:, 0] + 0.5 * X[:, 1] - np.abs(X[:, 2]) + 0.5 + 0.3 * X[:, 3] * X[:, 4]
    y = (score + 0.2 * rng.standard_normal(n) > 0).astype(np.int64)
    return X, y


def _columns(n, seed):
    X, y = make_rows(n, seed)
    return {**{f"x{j}": X[:, j] for j in range(D)}, "label": y}


def write_parquet(folder, n_rows, seed):
    """``n_rows`` rows as Parquet files of FILE_ROWS rows (made once): x0..x19, label."""
    return write_engine_parquet(folder, n_rows, max(1, -(-n_rows // FILE_ROWS)), seed=seed,
                                make=_columns, row_group_size=FILE_ROWS)


def read_memory(files):
    import pyarrow.parquet as pq

    frames = [pq.read_table(f).to_pandas() for f in files]
    X = np.concatenate([f[[f"x{j}" for j in range(D)]].to_numpy() for f in frames])
    y = np.concatenate([f["label"].to_numpy() for f in frames])
    return X, y


def engine_data(kind, files, ctx):
    """The rows as the estimator takes them on ``kind``: (X, y)."""
    if kind == "dask":
        import dask.dataframe as dd

        frame = dd.read_parquet(files)
        return frame[[f"x{j}" for j in range(D)]], frame["label"]
    if kind == "spark":
        return ctx.read.parquet(*files), "label"
    raise ValueError(kind)


# ------------------------------------------------------------------ fits


class StepTimes:
    """The wall time of every DP-SGD step taken in the block (both kinds of step)."""

    def __enter__(self):
        self.times = []
        self._originals = {name: DPSGD.__dict__[name] for name in ("step", "full_batch_step")}

        def timed(method):
            def run(*args, **kwargs):
                t0 = time.perf_counter()
                try:
                    return method(*args, **kwargs)
                finally:
                    self.times.append(time.perf_counter() - t0)
            return run

        for name, method in self._originals.items():
            setattr(DPSGD, name, timed(method))
        return self

    def __exit__(self, *exc):
        for name, method in self._originals.items():
            setattr(DPSGD, name, method)


def fit(X, y, steps, test, **params):
    """Fit, timed: total, per step (median), the rest; peak RSS of this process; accuracy."""
    kw = {"epsilon": EPSILON, "delta": DELTA, "bounds": BOUNDS, "classes": [0, 1],
          "random_state": 0, **FULL_BATCH, "epochs": steps, **params}
    clf = DPLocallyLinearClassifier(**kw)
    load0 = os.getloadavg()[0]
    driver_start = psutil.Process().memory_info().rss
    with warnings.catch_warnings(), ClientSampler() as driver, StepTimes() as steps_run:
        warnings.simplefilter("ignore")  # the seed's PrivacyLeakWarning
        t0 = time.perf_counter()
        clf.fit(X, y)
        seconds = time.perf_counter() - t0
    times = steps_run.times
    out = {"seconds": round(seconds, 3), "steps": len(times),
           "step_median": round(statistics.median(times), 5),
           "step_min": round(min(times), 5), "step_max": round(max(times), 5),
           "steps_seconds": round(sum(times), 3),
           "rest_seconds": round(seconds - sum(times), 3),
           "driver_peak_gib": round(driver.peak / GIB, 3),
           "driver_added_gib": round((driver.peak - driver_start) / GIB, 3),
           "load": [round(load0, 2), round(os.getloadavg()[0], 2)],
           "epsilon_spent": float(clf.epsilon_spent_),
           "noise_multiplier": float(clf.noise_multiplier_),
           "batch_size": kw["batch_size"]}
    if test is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # exact score: public held-out rows
            out["accuracy"] = round(float(clf.score(*test)), 4)
    return out


def crossover(fixed_memory, step_memory, fixed_engine, step_engine):
    """Steps from which the engine's fit is faster (None: its step is not faster)."""
    if step_engine >= step_memory:
        return None
    return max(0.0, (fixed_engine - fixed_memory) / (step_memory - step_engine))


# ------------------------------------------------------------------ main


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=float, default=6e6)
    parser.add_argument("--sizes", default="1e5,1e6", help="crossover sizes below --rows")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--spark-steps", type=int, default=20,
                        help="steps of the Spark fit at --rows (its time per step; fewer "
                             "than --steps to keep the run under ~20 min)")
    parser.add_argument("--crossover-steps", type=int, default=5)
    parser.add_argument("--test-rows", type=int, default=200_000)
    parser.add_argument("--parquet", default="/tmp/skdpx_llc_parquet")
    parser.add_argument("--worker-memory", default="4GiB")
    parser.add_argument("--spark-memory", default="4g")
    parser.add_argument("--engines", default="dask,spark")
    parser.add_argument("--skip-poisson", action="store_true",
                        help="no in-memory Poisson DP-SGD fit at --rows")
    parser.add_argument("--quick", action="store_true", help="sizes 1e5, rows 5e5, 6 steps")
    parser.add_argument("--out", default=str(RESULTS))
    args = parser.parse_args(argv)
    if args.quick:
        args.rows, args.sizes, args.steps, args.crossover_steps = 5e5, "1e5", 6, 3
        args.spark_steps = 4
    started, t_start = start(), time.perf_counter()
    n_big = int(args.rows)
    sizes = sorted({int(float(s)) for s in args.sizes.split(",") if s} | {n_big})
    files = {n: write_parquet(Path(args.parquet) / f"rows_{n}", n, seed=n) for n in sizes}
    test = make_rows(args.test_rows, seed=[1, 2, 3])
    engines = [e for e in args.engines.split(",") if e]

    runs, ctx, cluster = [], {}, None
    try:
        for kind in engines:
            if kind == "dask":
                cluster, ctx[kind] = dask_cluster(args.worker_memory)
            else:
                ctx[kind] = spark_session(args.spark_memory)
            fit(*engine_data(kind, files[sizes[0]], ctx[kind]), 1, None)  # warm: workers
        # size by size, the engines and in memory one after the other (the machine is
        # shared: its load changes over a run, less within a size)
        for n in sizes:
            big = n == n_big
            for kind in engines:
                X, y = engine_data(kind, files[n], ctx[kind])
                steps = ((args.spark_steps if kind == "spark" else args.steps) if big
                         else args.crossover_steps)
                runs.append({"engine": kind, "rows": n, "partitions": n_partitions(kind, X),
                             "kind": "full batch", **fit(X, y, steps, test if big else None)})
                print(runs[-1], flush=True)
            t0 = time.perf_counter()
            X, y = read_memory(files[n])
            read_seconds = time.perf_counter() - t0
            runs.append({"engine": "memory", "rows": n, "partitions": 1, "kind": "full batch",
                         "read_seconds": round(read_seconds, 3),
                         **fit(X, y, args.steps if big else args.crossover_steps,
                               test if big else None)})
            print(runs[-1], flush=True)
            if big and not args.skip_poisson:
                # the in-memory DP-SGD fit with its defaults (Poisson batch 256, 20
                # epochs, SGD at 0.3, decay 0.8 every 5 epochs) at the same epsilon on
                # the same rows
                runs.append({"engine": "memory", "rows": n, "partitions": 1,
                             "kind": "Poisson DP-SGD (defaults)",
                             **fit(X, y, 20, test, batch_size=256, optimizer="sgd",
                                   learning_rate=0.3, decay_every=5)})
                print(runs[-1], flush=True)
            del X, y
    finally:
        if "dask" in ctx:
            ctx["dask"].close()
            cluster.close()
        if "spark" in ctx:
            ctx["spark"].stop()

    full = {(r["engine"], r["rows"]): r for r in runs if r["kind"] == "full batch"}
    crossovers = []
    for n in sizes:
        mem = full.get(("memory", n))
        for kind in engines:
            r = full.get((kind, n))
            if mem is None or r is None:
                continue
            s = crossover(mem["rest_seconds"], mem["step_median"], r["rest_seconds"],
                          r["step_median"])
            crossovers.append({"engine": kind, "rows": n,
                               "step_ratio": round(r["step_median"] / mem["step_median"], 3),
                               "fixed_extra_seconds": round(r["rest_seconds"]
                                                            - mem["rest_seconds"], 3),
                               "crossover_steps": None if s is None else round(s, 1)})

    results = {"run": run_info(started, time.perf_counter() - t_start,
                               packages=("dask", "distributed", "pyspark", "pyarrow")),
               "settings": {"features": D, "rows": n_big, "sizes": sizes,
                            "steps": args.steps, "crossover_steps": args.crossover_steps,
                            "test_rows": args.test_rows, "epsilon": EPSILON, "delta": DELTA,
                            "bounds": list(BOUNDS), "full_batch": FULL_BATCH,
                            "file_rows": FILE_ROWS, "worker_memory": args.worker_memory,
                            "spark_memory": args.spark_memory, "cores": os.cpu_count(),
                            "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS")},
               "fits": runs, "crossover": crossovers}
    save(args.out, results)

    print(f"\n{'engine':7} {'kind':26} {'rows':>9} {'parts':>5} {'steps':>6} {'s/step':>8} "
          f"{'rest s':>7} {'total s':>8} {'driver GiB':>10} {'accuracy':>8}")
    for r in runs:
        print(f"{r['engine']:7} {r['kind']:26} {r['rows']:>9} {r['partitions']:>5} "
              f"{r['steps']:>6} {r['step_median']:>8.3f} {r['rest_seconds']:>7.1f} "
              f"{r['seconds']:>8.1f} {r['driver_peak_gib']:>10.2f} "
              f"{r.get('accuracy', float('nan')):>8.4f}")
    print(f"\n{'engine':7} {'rows':>9} {'step / memory step':>18} {'extra fixed s':>13} "
          f"{'pays from (steps)':>17}")
    for c in crossovers:
        s = "never" if c["crossover_steps"] is None else f"{c['crossover_steps']:.0f}"
        print(f"{c['engine']:7} {c['rows']:>9} {c['step_ratio']:>18.2f} "
              f"{c['fixed_extra_seconds']:>13.1f} {s:>17}")
    print("saved", args.out)
    return results


if __name__ == "__main__":
    main()
