"""Scale on Spark and Dask from Parquet: the same fits, side by side with in memory.

Issue 42, targets a and c. One Parquet table of ``--rows`` (20M) rows x 20
standard normal features (seeded, written once to ``--parquet`` in files of
1M rows; never committed) is read by:

* **memory**: the first ``--memory-rows`` (1M) rows read into a numpy array
  in this process;
* **dask**: ``dask.dataframe.read_parquet`` on a ``LocalCluster`` of 2 worker
  processes (one thread, ``--worker-memory`` each);
* **spark**: ``spark.read.parquet`` on a ``local[2]`` session (one JVM that
  is the Spark driver and runs both executor threads; ``--spark-memory``).

Fits (as benchmarks/scale.py): ``PrivRecourse.fit`` with a LogisticRegression
fitted on 20,000 separate public rows as the black box (epsilon 1, bounds
declared (-5, 5)) and ``DPLimeExplainer.fit`` + ``explain`` of 32 public
queries (epsilon 0.1 each; at these sizes ``approximation="auto"`` takes the
per-cell sums). Each at 1M rows on all three engines and at ``--rows`` on
Dask and Spark: wall time, rows per second, and the peak resident memory of
this Python process (the driver of both engines: where the noise is drawn
and the totals arrive; a sampler thread every 10 ms), of the Dask workers
and of Spark's JVM.

Target c, the cost model: one pass (the sum of the rows' Gram matrix, the
local loss's kind of statistic) over ``--sweep-rows`` (4M) and half as many
rows, each held in 2, 4 and 8 Parquet files (1, 2 and 4 partitions per
core), on each engine (the median of ``--repeats`` after one untimed pass);
the model ``T = t0 + t_task * tasks / cores + t_row * rows / cores`` is
fitted to these six points by least squares, and its prediction of each of
them and of the 20M-row pass (out of the sample, also after one untimed
pass) is set beside the measured figure. The engines run first and the in-memory fits last, so that the
driver's peak on an engine is not raised by rows it held before.

Saves the figures with the run record to
``benchmarks/results/scale_engines.json``; prints the tables.

Run: nice -n 10 python benchmarks/scale_engines.py [--quick] [--sweep-only]
(``--sweep-only``: the passes of target c again, saved with their own run
record beside the fits of the saved file.)
"""

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _run_record import run_info, save, start
from scale import BOUNDS, D, GIB, ClientSampler, black_box, fit_lime, queries

from skdpx import PrivRecourse
from skdpx.utils._engine import partition_sum

RESULTS = Path(__file__).resolve().parent / "results" / "scale_engines.json"
FILE_ROWS = 1_000_000


# ------------------------------------------------------------------ data


def _normal_columns(n, seed):
    X = np.random.default_rng(seed).standard_normal((n, D))
    return {f"x{j}": X[:, j] for j in range(D)}


def write_parquet(folder, n_rows, n_files, seed=0, make=_normal_columns,
                  row_group_size=250_000):
    """``n_rows`` rows as ``n_files`` Parquet files (made once): ``make(n, [seed, i])``
    gives file ``i``'s columns (default: D standard normal ``x0..``)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = Path(folder)
    names = [folder / f"part-{i:04d}.parquet" for i in range(n_files)]
    if folder.exists() and sorted(folder.glob("*.parquet")) == names:
        return [str(p) for p in names]
    folder.mkdir(parents=True, exist_ok=True)
    for p in folder.glob("*.parquet"):
        p.unlink()
    rows = np.array_split(np.arange(n_rows), n_files)
    for i, (name, r) in enumerate(zip(names, rows)):
        table = pa.table(make(len(r), [seed, i]))
        pq.write_table(table, name, row_group_size=row_group_size, compression="snappy")
    return [str(p) for p in names]


def read_memory(files, n_rows):
    import pyarrow.parquet as pq

    parts, have = [], 0
    for f in files:
        t = pq.read_table(f).to_pandas().to_numpy()
        parts.append(t)
        have += len(t)
        if have >= n_rows:
            break
    return np.concatenate(parts)[:n_rows]


# ------------------------------------------------------------------ engines


def dask_cluster(memory):
    import distributed

    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, memory_limit=memory)
    return cluster, distributed.Client(cluster)


def spark_session(memory):
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return (SparkSession.builder.master("local[2]").appName("skdpx-scale")
                .config("spark.ui.enabled", "false")
                .config("spark.ui.showConsoleProgress", "false")
                .config("spark.driver.memory", memory)
                .config("spark.sql.shuffle.partitions", "2")
                # one partition per Parquet file (the sweep's 1, 2, 4 per core)
                .config("spark.sql.files.maxPartitionBytes", str(2**31 - 1))
                .config("spark.sql.files.openCostInBytes", str(2**31 - 1))
                .config("spark.sql.execution.arrow.maxRecordsPerBatch", "50000")
                .getOrCreate())


def spark_jvm():
    """Spark's JVM (a child of this process), for its RSS."""
    for child in psutil.Process().children(recursive=True):
        if "java" in child.name():
            return child
    return None


class PeakOf:
    """The peak RSS of other processes (Dask workers, Spark's JVM) over a block."""

    def __init__(self, procs, interval=0.05):
        import threading

        self.procs, self.interval, self.peak = [p for p in procs if p], interval, 0
        self._stop, self._threading = None, threading

    def _rss(self):
        total = 0
        for p in self.procs:
            try:
                total += p.memory_info().rss
            except psutil.Error:
                pass
        return total

    def __enter__(self):
        self._stop = self._threading.Event()

        def loop():
            while not self._stop.is_set():
                self.peak = max(self.peak, self._rss())
                self._stop.wait(self.interval)

        self._thread = self._threading.Thread(target=loop, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def workers_of(client):
    pids = client.run(os.getpid)
    return [psutil.Process(p) for p in pids.values()]


def engine_table(kind, files, ctx):
    if kind == "dask":
        import dask.dataframe as dd

        return dd.read_parquet(files)
    if kind == "spark":
        return ctx.read.parquet(*files)
    raise ValueError(kind)


def n_partitions(kind, X):
    if kind == "dask":
        return int(X.npartitions)
    if kind == "spark":
        return int(X.rdd.getNumPartitions())
    return 1


# ------------------------------------------------------------------ the fits


def fit_recourse(box, X):
    rec = PrivRecourse(estimator=box, epsilon=1.0, delta=1e-5, bounds=BOUNDS, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rec.fit(X)
    return {"n_clusters": int(rec.n_clusters_), "epsilon_spent": float(rec.epsilon_spent_)}


def measure(fn, others=()):
    load0 = os.getloadavg()[0]
    with ClientSampler() as driver, PeakOf(others) as rest:
        t0 = time.perf_counter()
        out = fn()
        seconds = time.perf_counter() - t0
    return {"seconds": round(seconds, 3), "driver_peak_gib": round(driver.peak / GIB, 3),
            "others_peak_gib": round(rest.peak / GIB, 3) if rest.procs else None,
            "load": [round(load0, 2), round(os.getloadavg()[0], 2)],
            **(out if isinstance(out, dict) else {})}


def _gram(block):
    return block.T @ block


def one_pass(kind, files, ctx):
    """One engine pass: the Gram matrix of the rows, summed over the partitions."""
    from sklearn.base import BaseEstimator

    from skdpx.utils._tables import validate_table

    class _Holder(BaseEstimator):  # what validate_table sets the schema on
        _accepts_distributed = True
        bounds = None

    X = validate_table(_Holder(), engine_table(kind, files, ctx), reset=True)
    return partition_sum(_gram, X)


# ------------------------------------------------------------------ cost model


def _median_run(runs):
    """The run of median time (its memory peaks with it); every time kept."""
    ordered = sorted(runs, key=lambda r: r["seconds"])
    return {**ordered[len(ordered) // 2], "seconds_all": [r["seconds"] for r in runs]}


def fit_cost_model(points, cores):
    """Least squares of T = t0 + t_task * tasks / cores + t_row * rows / cores."""
    A = np.array([[1.0, p["tasks"] / cores, p["rows"] / cores] for p in points])
    t = np.array([p["seconds"] for p in points])
    coef, *_ = np.linalg.lstsq(A, t, rcond=None)
    return {"t0": float(coef[0]), "t_task": float(coef[1]), "t_row": float(coef[2])}


def predict(model, rows, tasks, cores):
    return model["t0"] + model["t_task"] * tasks / cores + model["t_row"] * rows / cores


# ------------------------------------------------------------------ main


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=float, default=20e6)
    parser.add_argument("--memory-rows", type=float, default=1e6)
    parser.add_argument("--sweep-rows", type=float, default=4e6)
    parser.add_argument("--queries", type=int, default=32)
    parser.add_argument("--parquet", default="/tmp/skdpx_scale_parquet")
    parser.add_argument("--worker-memory", default="4GiB")
    parser.add_argument("--spark-memory", default="4g")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="2M rows, sweep 1M, one repeat")
    parser.add_argument("--sweep-only", action="store_true",
                        help="run only the passes (target c) and replace them, with their own "
                             "run record, in the saved file")
    parser.add_argument("--out", default=str(RESULTS))
    args = parser.parse_args(argv)
    if args.quick:
        args.rows, args.memory_rows, args.sweep_rows, args.repeats = 2e6, 5e5, 1e6, 1
    started, t_start = start(), time.perf_counter()
    n_big, n_mem, n_sweep = int(args.rows), int(args.memory_rows), int(args.sweep_rows)
    cores = os.cpu_count()
    files = write_parquet(Path(args.parquet) / f"rows_{n_big}", n_big,
                          max(1, n_big // FILE_ROWS))
    small = files[:max(1, -(-n_mem // FILE_ROWS))]
    # two sizes x 1, 2 and 4 files (partitions) per core: the model's rows and tasks
    sweep = {(n, k): write_parquet(Path(args.parquet) / f"sweep_{n}_{k}", n, k, seed=1)
             for n in (n_sweep // 2, n_sweep) for k in (cores, 2 * cores, 4 * cores)}
    box, Q = black_box(), queries(args.queries)

    fits, passes = [], []
    for kind in ("dask", "spark"):
        if kind == "dask":
            cluster, ctx = dask_cluster(args.worker_memory)
            others = workers_of(ctx)
        else:
            ctx = spark_session(args.spark_memory)
            others = [spark_jvm()]
        try:
            one_pass(kind, small, ctx)  # warm: imports and the executors' Python
            for (n, k), sweep_files in sweep.items():
                one_pass(kind, sweep_files, ctx)  # warm: the files read once (page cache)
                tasks = n_partitions(kind, engine_table(kind, sweep_files, ctx))
                runs = [measure(lambda: one_pass(kind, sweep_files, ctx), others)
                        for _ in range(args.repeats)]
                passes.append({"engine": kind, "rows": n, "files": k, "tasks": tasks,
                               **_median_run(runs)})
            one_pass(kind, files, ctx)  # warm, as the sweep's: the files read once
            passes.append({"engine": kind, "rows": n_big, "files": len(files),
                           "tasks": n_partitions(kind, engine_table(kind, files, ctx)),
                           **measure(lambda: one_pass(kind, files, ctx), others)})
            for rows, fs in (() if args.sweep_only else ((n_mem, small), (n_big, files))):
                X = engine_table(kind, fs, ctx)
                parts = n_partitions(kind, X)
                fits.append({"engine": kind, "rows": rows, "partitions": parts,
                             "fit": "recourse", **measure(lambda: fit_recourse(box, X), others)})
                fits.append({"engine": kind, "rows": rows, "partitions": parts, "fit": "lime",
                             **measure(lambda: fit_lime(box, X, Q), others)})
        finally:
            if kind == "dask":
                ctx.close()
                cluster.close()
            else:
                ctx.stop()
    # in memory last: the driver's peaks above are not raised by rows it once held
    if not args.sweep_only:
        X_mem = read_memory(small, n_mem)
        fits.append({"engine": "memory", "rows": n_mem, "partitions": 1, "fit": "recourse",
                     **measure(lambda: fit_recourse(box, X_mem))})
        fits.append({"engine": "memory", "rows": n_mem, "partitions": 1, "fit": "lime",
                     **measure(lambda: fit_lime(box, X_mem, Q))})
    for f in fits:
        f["rows_per_second"] = round(f["rows"] / f["seconds"])

    models = {}
    for kind in ("dask", "spark"):
        pts = [p for p in passes if p["engine"] == kind and p["rows"] != n_big]
        model = fit_cost_model(pts, cores)
        big = [p for p in passes if p["engine"] == kind and p["rows"] == n_big][0]
        checks = []
        for p in pts + [big]:
            checks.append({"rows": p["rows"], "tasks": p["tasks"],
                           "tasks_per_core": p["tasks"] / cores, "measured": p["seconds"],
                           "predicted": round(predict(model, p["rows"], p["tasks"], cores), 3)})
        models[kind] = {**model, "checks": checks}

    record = run_info(started, time.perf_counter() - t_start,
                      packages=("dask", "distributed", "pyspark", "pyarrow", "numpy",
                                "scikit-learn"))
    settings = {"features": D, "rows": n_big, "memory_rows": n_mem, "sweep_rows": n_sweep,
                "queries": args.queries, "cores": cores, "worker_memory": args.worker_memory,
                "spark_memory": args.spark_memory, "repeats": args.repeats}
    if args.sweep_only:
        # the passes of their own run (an idle machine), beside the saved fits
        with open(args.out) as handle:
            results = json.load(handle)
        results.update({"sweep_run": record, "sweep_settings": settings, "passes": passes,
                        "cost_model": models})
        fits = results["fits"]
    else:
        results = {"run": record, "settings": settings, "fits": fits, "passes": passes,
                   "cost_model": models}
    save(args.out, results)
    print(f"{'engine':7} {'fit':9} {'rows':>10} {'parts':>5} {'seconds':>8} {'rows/s':>10} "
          f"{'driver GiB':>10} {'others GiB':>10}")
    for f in fits:
        print(f"{f['engine']:7} {f['fit']:9} {f['rows']:>10} {f['partitions']:>5} "
              f"{f['seconds']:>8.1f} {f['rows_per_second']:>10} {f['driver_peak_gib']:>10} "
              f"{str(f['others_peak_gib']):>10}")
    for kind, m in models.items():
        print(f"{kind}: t0 {m['t0']:.2f} s, t_task {m['t_task']:.3f} s, "
              f"t_row {m['t_row'] * 1e6:.3f} s per 1e6 rows")
        for c in m["checks"]:
            print(f"   rows {c['rows']:>9} tasks/core {c['tasks_per_core']:>4.1f}: measured "
                  f"{c['measured']:.2f} s, predicted {c['predicted']:.2f} s")
    print("saved", args.out)
    return results


if __name__ == "__main__":
    main()
