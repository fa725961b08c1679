"""Scale on Dask: PrivRecourse and DPLimeExplainer fitted on data held by Dask workers.

Issue 23, item 3. A distributed ``LocalCluster`` of 2 worker processes, one
thread and ``memory_limit="1GiB"`` each (the setting of ``tests/conftest.py``),
and the client in this process. Measured:

1. ``PrivRecourse.fit`` (``estimator`` = a LogisticRegression fitted on 20,000
   separate public synthetic rows; epsilon 1, delta 1e-5, ``n_clusters="auto"``,
   ``max_iter=2``; bounds declared as (-5, 5), and ``bounds=None``: DP bounds,
   one more pass) and ``DPLimeExplainer.fit`` + ``explain`` of 32 queries, at
   ``--rows`` rows x 20 columns (6M and 20M): wall time, the peak resident
   memory (RSS) of each worker process (a sampler thread in each worker,
   every 20 ms) and the peak RSS of this client process (a sampler thread,
   every 10 ms, per phase; ``ru_maxrss`` over all the Dask phases too).
2. The same fits in memory (numpy rows in this process) at ``--memory-rows``
   (1M), side by side in the same run, and the Dask path on the same number
   of rows: their ratio.
3. DPLimeExplainer's cost per query against m: in memory at ``--lime-m``
   (1e5, 3e5, 1e6), on Dask at ``--lime-dask-m`` (1e6, 6e6, 2e7; at 2e7 its
   persisted rows, 3.4 GB, exceed the workers' 2 GiB, so Dask must spill
   part of them to the workers' disk).
4. How the Dask fit's cost grows with the rows (``--memory-rows`` and
   ``--rows``) and with the workers (1 against 2 workers at
   ``--workers-rows``, 6M, streamed; a 1-worker cluster of 1 GiB made for it).
5. The latency of one map-reduce round trip on the cluster
   (:func:`skdpx.utils._dask.partition_sum` of a block's row count, over the
   6M rows streamed, over them persisted, and over a persisted 1,000 x 20
   array), against one in-memory DP-SGD step of DPLocallyLinearClassifier
   (``--dpsgd-rows`` x 784 synthetic rows in [0, 1], 10 classes, n_maps=30,
   projection_dim=300, batch 500, two epochs (as at MNIST's 20, the rows are
   projected once before the loop; under two epochs each step projects its
   own batch); the training loop's time over its steps): DP-SGD needs one
   synchronous round trip per step (MNIST, 20 epochs of batch 500: 2,400
   steps).

The data never exist in the client. Each Dask table is generated lazily in
the workers, ``dask.array.random.default_rng(seed)`` with a fixed seed per
chunk of ``--chunk-rows`` rows (the same values on every pass), so each pass
of a fit generates its chunks again in the workers and drops them: the data
are *streamed*, never held whole. 20M x 20 float64 is 3.2 GB, more than the
2 GiB of the two workers, so it cannot be persisted; 6M x 20 (0.96 GB) is
also fitted *persisted* (``X.persist()``: the workers hold it, 0.48 GB
each), the issue's target case: the client's peak stays under 0.8 GiB while
the workers hold 6M x 20. Generating a chunk costs about as much as reading
it from disk: the streamed rows' time includes it (the "pass" row of the
round-trip table is one streamed pass that does nothing else).

Timings are repeated ``--repeats`` times, interleaved (every phase once, then
again), and the median reported; the load average is recorded before and
after each phase: the machine has 2 cores shared with other jobs, so the
figures are upper bounds of an idle machine's.

Saves every figure with the run record (date, commit, versions, machine,
command) to ``benchmarks/results/scale.json`` (``--out``), which the docs
render (doc/scale.rst); prints the tables.

Run: nice -n 10 python benchmarks/scale.py [--quick] [--parts recourse lime dpsgd]
(``--parts``: a part run alone updates that part of the saved file.)
Measured on 2026-11-26 on a 2-core machine: the saved results took 378 s
for ``--parts recourse dpsgd`` (load average 0.4-2.6) and 135 s for
``--parts lime --lime-dask-m 1e6 6e6 2e7 --large-rows 1e6`` (DPLime's m =
1e6, 6e6 and 2e7 timed once); ``--quick`` (1M and 2M rows, one repetition)
took 95 s at load 3-5.
"""

import argparse
import json
import logging
import os
import re
import resource
import statistics
import sys
import threading
import time
import warnings
from pathlib import Path

import dask.array as da
import distributed
import numpy as np
import psutil
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _run_record import commit, run_info, save, start, timed_methods

from skdpx import DPLimeExplainer, PrivRecourse
from skdpx.locally_linear import DPLocallyLinearClassifier
from skdpx.utils._engine import partition_sum

RESULTS = Path(__file__).resolve().parent / "results" / "scale.json"
D = 20
BOUNDS = (-5.0, 5.0)
GIB = 2.0 ** 30
N_PUBLIC = 20_000
PARTS = ("recourse", "lime", "dpsgd")
#: MNIST's DP-SGD in the paper's setting: 20 epochs of batch 500 over 60,000 rows
MNIST_STEPS = 20 * 60_000 // 500


# ------------------------------------------------------------------ memory samplers


def _worker_sampler(dask_worker, interval=0.02):
    """Start (once) a thread in a worker that keeps the peak RSS of its process."""
    if getattr(dask_worker, "_scale_peak", None) is not None:
        return True
    proc = psutil.Process()
    dask_worker._scale_peak = [proc.memory_info().rss]

    def loop():
        while True:
            rss = proc.memory_info().rss
            dask_worker._scale_peak[0] = max(dask_worker._scale_peak[0], rss)
            time.sleep(interval)

    threading.Thread(target=loop, daemon=True, name="scale-rss").start()
    return True


def _worker_reset(dask_worker):
    """Reset a worker's peak to its RSS now; return that RSS."""
    rss = psutil.Process().memory_info().rss
    dask_worker._scale_peak[0] = rss
    return rss


def _worker_peak(dask_worker):
    return dask_worker._scale_peak[0]


class ClientSampler:
    """The peak RSS of this (the client) process over a block, sampled every 10 ms."""

    def __init__(self, interval=0.01):
        self.interval = interval
        self.proc = psutil.Process()

    def __enter__(self):
        self.peak = self.proc.memory_info().rss
        self._stop = threading.Event()

        def loop():
            while not self._stop.is_set():
                self.peak = max(self.peak, self.proc.memory_info().rss)
                self._stop.wait(self.interval)

        self._thread = threading.Thread(target=loop, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.proc.memory_info().rss)


def measure(client, fn):
    """Run ``fn()``; its wall time, the client's and each worker's peak RSS, the load."""
    workers = None
    if client is not None:
        client.run(_worker_sampler)
        base = client.run(_worker_reset)
    load0 = os.getloadavg()[0]
    with ClientSampler() as sampler:
        t0 = time.perf_counter()
        out = fn()
        seconds = time.perf_counter() - t0
    if client is not None:
        peaks = client.run(_worker_peak)
        workers = {"peak_gib": [round(peaks[a] / GIB, 3) for a in sorted(peaks)],
                   "at_start_gib": [round(base[a] / GIB, 3) for a in sorted(base)]}
    return {"seconds": seconds, "client_peak_gib": round(sampler.peak / GIB, 3),
            "workers": workers, "load": [round(load0, 2), round(os.getloadavg()[0], 2)]}, out


# ------------------------------------------------------------------ data


def quiet_close(client, cluster):
    """Close a client and its cluster without the workers' heartbeat errors in the log."""
    logging.getLogger("distributed").setLevel(logging.CRITICAL)
    client.close()
    cluster.close()
    logging.getLogger("distributed").setLevel(logging.WARNING)


def dask_table(n, chunk_rows, seed):
    """n x 20 standard normal rows, generated lazily in the workers (a seed per chunk)."""
    return da.random.default_rng(seed).standard_normal((n, D), chunks=(chunk_rows, D))


def numpy_table(n, seed):
    """The same distribution in memory (this process)."""
    return np.random.default_rng(seed).standard_normal((n, D))


def black_box():
    """A LogisticRegression fitted on separate public synthetic rows (seed 12345)."""
    rng = np.random.default_rng(12345)
    X = rng.standard_normal((N_PUBLIC, D))
    w = np.linspace(-1, 1, D)
    y = (X @ w + 0.5 * rng.standard_normal(N_PUBLIC) > 0.3).astype(int)
    return LogisticRegression(max_iter=500).fit(X, y)


def queries(n_queries):
    """Public query points (seed 777)."""
    return np.random.default_rng(777).standard_normal((n_queries, D))


# ------------------------------------------------------------------ the fits


def fit_recourse(box, X, bounds):
    rec = PrivRecourse(estimator=box, epsilon=1.0, delta=1e-5, bounds=bounds, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # random_state and bounds=None PrivacyLeakWarnings
        rec.fit(X)
    return {"n_clusters": int(rec.n_clusters_), "nodes": len(rec.cluster_centers_),
            "epsilon_spent": float(rec.epsilon_spent_)}


def fit_lime(box, X, Q):
    """DPLimeExplainer fit and explain of the queries Q (epsilon 0.1 each)."""
    lime = DPLimeExplainer(box, epsilon=0.1 * len(Q) + 0.5, epsilon_per_query=0.1,
                           bounds=BOUNDS, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        lime.fit(X)
        t1 = time.perf_counter()
        lime.explain(Q)
        t2 = time.perf_counter()
    return {"fit_seconds": t1 - t0, "explain_seconds": t2 - t1,
            "approximation": lime.approximation_, "epsilon_spent": float(lime.epsilon_spent_)}


def persist(client, held, n, chunk_rows):
    """Persist the n-row table in the workers (kept in ``held["X"]``)."""
    held["X"] = client.persist(dask_table(n, chunk_rows, seed=n))
    distributed.wait(held["X"])


def round_trip(X, repeats):
    """Median seconds of partition_sum of each block's row count (the data read, nothing
    computed): one map-reduce round trip."""
    def count(block):
        return np.array([len(block)])

    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        total = partition_sum(count, X)
        times.append(time.perf_counter() - t0)
    assert int(total[0]) == X.shape[0]
    return times


def dpsgd_step(n, epochs=1):
    """One in-memory DP-SGD step of DPLocallyLinearClassifier (MNIST's setting, synthetic)."""
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(n, 784))
    y = rng.integers(0, 10, n)
    with timed_methods(DPLocallyLinearClassifier, ("_train",)) as times, \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = DPLocallyLinearClassifier(n_maps=30, projection_dim=300, beta=0.1,
                                        batch_size=500, epochs=epochs, bounds=(0.0, 1.0),
                                        epsilon=2.0, delta=1e-5, learning_rate=1.0,
                                        random_state=0).fit(X, y)
    return {"rows": n, "features": 784, "n_maps": 30, "projection_dim": 300, "batch_size": 500,
            "epochs": epochs, "steps": int(clf.n_steps_), "loop_seconds": times["_train"],
            "seconds_per_step": times["_train"] / clf.n_steps_}


# ------------------------------------------------------------------ main


def describe(name):
    """The phase's name as fields: what ran, where, on how many rows and workers."""
    kind = "round trip" if name.startswith("round trip") else name.split()[0]
    where = ("memory" if " memory " in name else "dask persisted" if "persisted" in name
             else "dask streamed" if "dask" in name or kind == "persist" else None)
    bounds = ("declared" if "bounds declared" in name else "None (DP bounds)"
              if "bounds=None" in name else None)
    workers = 0 if where == "memory" else 1 if name.endswith("1 worker") else 2
    return {"kind": kind, "where": where, "rows": int(re.search(r"[nm]=(\d+)", name)[1]),
            "bounds": bounds, "n_workers": workers}


def _median(runs, key="seconds"):
    return statistics.median(r[key] for r in runs)


def summarize(runs):
    """Median time; the max over runs of the client's and workers' peaks."""
    out = {"seconds": _median(runs), "seconds_all": [round(r["seconds"], 2) for r in runs],
           "client_peak_gib": max(r["client_peak_gib"] for r in runs),
           "load": [r["load"] for r in runs]}
    if runs[0]["workers"] is not None:
        out["worker_peak_gib"] = [max(r["workers"]["peak_gib"][i] for r in runs)
                                  for i in range(len(runs[0]["workers"]["peak_gib"]))]
        out["worker_at_start_gib"] = runs[0]["workers"]["at_start_gib"]
    extra = {k: v for k, v in runs[0].items() if k not in ("seconds", "client_peak_gib",
                                                           "workers", "load")}
    for k in ("fit_seconds", "explain_seconds"):
        if k in extra:
            extra[k] = statistics.median(r[k] for r in runs)
    out.update(extra)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=float, nargs="+", default=[6e6, 20e6])
    parser.add_argument("--memory-rows", type=float, default=1e6)
    parser.add_argument("--persist-rows", type=float, default=6e6,
                        help="the Dask table also fitted persisted (0: none)")
    parser.add_argument("--workers-rows", type=float, default=6e6)
    parser.add_argument("--lime-m", type=float, nargs="+", default=[1e5, 3e5, 1e6])
    parser.add_argument("--lime-dask-m", type=float, nargs="+", default=[1e6, 6e6, 2e7])
    parser.add_argument("--queries", type=int, default=32)
    parser.add_argument("--large-rows", type=float, default=1e7,
                        help="tables of at least this many rows are timed once only")
    parser.add_argument("--chunk-rows", type=int, default=250_000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--dpsgd-rows", type=int, default=60_000)
    parser.add_argument("--quick", action="store_true",
                        help="1M and 2M rows, one repetition: a check in under 2 minutes")
    parser.add_argument("--blas-threads", type=int, default=1,
                        help="BLAS threads of this process (threadpoolctl); the Dask workers "
                             "run 1 (distributed's default); 0: leave as is")
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS),
                        help="what to run; a part run alone updates that part of --out")
    parser.add_argument("--out", default=str(RESULTS))
    args = parser.parse_args(argv)
    if args.quick:
        args.rows, args.memory_rows, args.persist_rows = [1e6, 2e6], 2e5, 1e6
        args.workers_rows, args.lime_m, args.lime_dask_m = 1e6, [1e5], [2e5]
        args.repeats, args.dpsgd_rows, args.chunk_rows = 1, 6_000, 100_000
        if args.out == str(RESULTS):
            args.out = str(RESULTS.with_name("scale_quick.json"))
    if args.blas_threads:
        # the in-memory paths run here; on a loaded 2-core machine, multi-threaded OpenBLAS
        # spins against the other jobs (DPLime's explain measured 30-70x slower with 2
        # threads than with 1 at m = 3e5 under load 4): one thread, as each Dask worker has
        threadpool_limits(args.blas_threads)
    rows = [int(r) for r in args.rows]
    n_mem = int(args.memory_rows)
    n_persist = int(args.persist_rows)
    started = start()
    t_start = time.perf_counter()

    box = black_box()
    Q = queries(args.queries)
    results = {"settings": {
        "columns": D, "chunk_rows": args.chunk_rows, "rows": rows, "memory_rows": n_mem,
        "persist_rows": n_persist, "workers_rows": int(args.workers_rows),
        "lime_m_memory": [int(m) for m in args.lime_m],
        "lime_m_dask": [int(m) for m in args.lime_dask_m], "queries": args.queries,
        "repeats": args.repeats, "quick": args.quick,
        "cluster": "distributed.LocalCluster(n_workers=2, threads_per_worker=1, "
                   "processes=True, memory_limit='1GiB')",
        "data": "standard normal, dask.array.random.default_rng(seed) per chunk, generated "
                "in the workers on each pass (streamed) unless said persisted",
        "recourse": "PrivRecourse(estimator=LogisticRegression fitted on 20,000 public "
                    "synthetic rows, epsilon=1, delta=1e-5, n_clusters='auto', max_iter=2, "
                    "random_state=0); bounds=(-5, 5) declared, or None (DP bounds)",
        "lime": f"DPLimeExplainer(same black box, epsilon_per_query=0.1, bounds=(-5, 5), "
                f"random_state=0).fit(X).explain({args.queries} public queries)",
        "blas_threads_client": args.blas_threads or "default",
        "memory": "peak RSS: a sampler thread in each worker (20 ms) and in the client "
                  "(10 ms), per phase",
    }}

    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       memory_limit="1GiB", dashboard_address=None)
    client = distributed.Client(cluster)
    client.run(_worker_sampler)
    results["settings"]["blas_threads_workers"] = sorted(set(client.run(
        lambda: os.environ.get("OPENBLAS_NUM_THREADS", "default")).values()))
    print(f"cluster: {len(client.scheduler_info()['workers'])} workers; "
          f"load {os.getloadavg()}", flush=True)
    phases = {}  # name -> list of runs

    def run(name, fn, on=client):
        meas, out = measure(on, fn)
        if isinstance(out, dict):
            meas.update(out)
        meas.update(describe(name))
        phases.setdefault(name, []).append(meas)
        w = meas["workers"]["peak_gib"] if meas["workers"] else "-"
        print(f"  {name:<44} {meas['seconds']:8.2f} s  client {meas['client_peak_gib']:.3f} "
              f"GiB  workers {w}  load {meas['load']}", flush=True)

    tables = {n: dask_table(n, args.chunk_rows, seed=n) for n in {n_mem, *rows}}
    lime_dask = {int(m): dask_table(int(m), args.chunk_rows, seed=int(m))
                 for m in args.lime_dask_m}
    small = client.persist(dask_table(1000, 500, seed=1))
    distributed.wait(small)
    lime_supported = {}

    def lime_on_dask(X):
        try:
            return fit_lime(box, X, Q)
        except (TypeError, ValueError) as exc:
            lime_supported["error"] = f"{type(exc).__name__}: {exc}"
            raise

    parts = set(args.parts)
    for rep in range(args.repeats):
        print(f"repetition {rep + 1}/{args.repeats}", flush=True)
        if "recourse" in parts:
            # ---- Dask, streamed
            for n in [n_mem, *rows]:
                if rep and n >= args.large_rows:
                    continue  # too long to repeat: once only
                X = tables[n]
                run(f"recourse dask streamed bounds declared n={n}",
                    lambda X=X: fit_recourse(box, X, BOUNDS))
                run(f"recourse dask streamed bounds=None n={n}",
                    lambda X=X: fit_recourse(box, X, None))
                run(f"pass dask streamed n={n}", lambda X=X: {"round_trips": round_trip(X, 1)})
            # ---- Dask, persisted: the workers hold the rows
            if n_persist:
                held = {}
                run(f"persist n={n_persist}",
                    lambda held=held: persist(client, held, n_persist, args.chunk_rows))
                Xp = held.pop("X")
                run(f"recourse dask persisted bounds declared n={n_persist}",
                    lambda X=Xp: fit_recourse(box, X, BOUNDS))
                run(f"recourse dask persisted bounds=None n={n_persist}",
                    lambda X=Xp: fit_recourse(box, X, None))
                run(f"round trip persisted n={n_persist}",
                    lambda X=Xp: {"round_trips": round_trip(X, 10)})
                client.cancel(Xp)
                del Xp
            run("round trip persisted n=1000", lambda: {"round_trips": round_trip(small, 20)})
        if "lime" in parts:
            # ---- DPLime on Dask: its fit scales, labels and persists the rows in the workers
            for m, X in lime_dask.items():
                if "error" in lime_supported:
                    break
                if rep and m >= args.large_rows:
                    continue  # too long to repeat: once only
                try:
                    run(f"lime dask streamed m={m}", lambda X=X: lime_on_dask(X))
                except (TypeError, ValueError):
                    print(f"  DPLimeExplainer on Dask: {lime_supported['error']}", flush=True)
        if rep == 0:
            # every Dask phase has run once and nothing in memory yet: the client's
            # lifetime peak so far is the Dask phases' peak
            results["client_ru_maxrss_gib_dask_phases"] = round(
                resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / GIB, 3)
        # ---- in memory (this process), the same estimator
        if "recourse" in parts:
            Xm = numpy_table(n_mem, seed=n_mem)
            run(f"recourse memory bounds declared n={n_mem}",
                lambda X=Xm: fit_recourse(box, X, BOUNDS), on=None)
            run(f"recourse memory bounds=None n={n_mem}",
                lambda X=Xm: fit_recourse(box, X, None), on=None)
            del Xm
        if "lime" in parts:
            for m in args.lime_m:
                if rep and m >= args.large_rows:
                    continue
                Xm = numpy_table(int(m), seed=int(m))
                run(f"lime memory m={int(m)}", lambda X=Xm: fit_lime(box, X, Q), on=None)
                del Xm

    n_w = int(args.workers_rows)
    quiet_close(client, cluster)
    if "recourse" in parts:
        # ---- 1 worker against 2, at workers_rows (streamed)
        Xw = tables.get(n_w, dask_table(n_w, args.chunk_rows, seed=n_w))
        cluster1 = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                            memory_limit="1GiB", dashboard_address=None)
        client1 = distributed.Client(cluster1)
        client1.run(_worker_sampler)
        run(f"recourse dask streamed bounds declared n={n_w} 1 worker",
            lambda: fit_recourse(box, Xw, BOUNDS), on=client1)
        quiet_close(client1, cluster1)

    if "dpsgd" in parts:
        # ---- one in-memory DP-SGD step
        meas, step = measure(None, lambda: dpsgd_step(args.dpsgd_rows, epochs=2))
        results["dpsgd_step"] = {**step, "client_peak_gib": meas["client_peak_gib"]}
        print(f"  DP-SGD step in memory: {step['seconds_per_step'] * 1e3:.1f} ms "
              f"({step['steps']} steps, {args.dpsgd_rows} x 784)", flush=True)

    results["phases"] = {name: summarize(runs) for name, runs in phases.items()}
    if "lime" in parts:
        results["lime_on_dask"] = lime_supported.get("error", "supported")
    results["client_ru_maxrss_gib_whole_run"] = round(
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / GIB, 3)
    record = run_info(started, time.perf_counter() - t_start,
                      packages=("dask", "distributed", "psutil"))
    record["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    record["parts"] = sorted(parts)
    out = Path(args.out)
    if parts != set(PARTS) and out.is_file():
        # a part run alone: update that part of the saved results
        saved = json.loads(out.read_text())
        kinds = {"recourse": {"recourse", "pass", "persist", "round trip"}, "lime": {"lime"},
                 "dpsgd": set()}
        dropped = set().union(*(kinds[pt] for pt in parts))
        phases_saved = {k: v for k, v in saved["phases"].items() if v["kind"] not in dropped}
        saved["phases"] = {**phases_saved, **results["phases"]}
        if "lime" in parts:
            for key in ("lime_m_memory", "lime_m_dask", "queries", "lime"):
                saved["settings"][key] = results["settings"][key]
        for key in ("dpsgd_step", "lime_on_dask"):
            if key in results:
                saved[key] = results[key]
        for key in ("client_ru_maxrss_gib_dask_phases", "client_ru_maxrss_gib_whole_run"):
            saved.setdefault("parts_client_ru_maxrss", {})[key + " (" + "+".join(
                sorted(parts)) + ")"] = results[key]
        saved.setdefault("part_runs", []).append(record)
        results = saved
    else:
        results["run"] = record
    results["derived"] = derive(results)
    print_tables(results)
    save(args.out, results)
    print(f"\nsaved {args.out} ({record['seconds']:.0f} s, commit {commit()})")


def derive(results):
    """Ratios and per-step overheads from the phases' medians."""
    p = results["phases"]
    st = results["settings"]
    rows, n_mem, n_persist, n_w = (st["rows"], st["memory_rows"], st["persist_rows"],
                                   st["workers_rows"])

    def sec(name):
        return p[name]["seconds"] if name in p else None

    out = {}
    for b in ("bounds declared", "bounds=None"):
        mem = sec(f"recourse memory {b} n={n_mem}")
        if mem is None:
            continue
        out[b] = {f"dask_streamed_over_memory_n={n}":
                  sec(f"recourse dask streamed {b} n={n}") / mem for n in [n_mem, *rows]}
        out[b].update({f"seconds_per_million_rows_streamed_n={n}":
                       sec(f"recourse dask streamed {b} n={n}") / (n / 1e6)
                       for n in [n_mem, *rows]})
        out[b][f"seconds_per_million_rows_memory_n={n_mem}"] = mem / (n_mem / 1e6)
        if n_persist:
            out[b][f"dask_persisted_over_memory_n={n_persist}"] = (
                sec(f"recourse dask persisted {b} n={n_persist}") / mem)
    one = sec(f"recourse dask streamed bounds declared n={n_w} 1 worker")
    two = sec(f"recourse dask streamed bounds declared n={n_w}")
    if one and two:
        out["one_over_two_workers"] = one / two
    rts = {}
    for n in (1000, n_persist):
        name = f"round trip persisted n={n}"
        if n and name in p:
            rts[f"persisted n={n}"] = statistics.median(p[name]["round_trips"])
    if "dpsgd_step" in results and rts:
        step = results["dpsgd_step"]["seconds_per_step"]
        out["dpsgd"] = {
            "in_memory_seconds_per_step": step,
            "round_trip_seconds": rts,
            "mnist_steps": MNIST_STEPS,
            "overhead_seconds_for_mnist": {k: v * MNIST_STEPS for k, v in rts.items()},
            "round_trip_over_step": {k: v / step for k, v in rts.items()},
        }
    return out


def print_tables(results):
    p = results["phases"]
    print(f"\n{'phase':<52} {'s (median)':>10} {'client GiB':>10} {'worker peak GiB':>18}")
    for name, s in p.items():
        w = ", ".join(f"{x:.2f}" for x in s.get("worker_peak_gib", [])) or "-"
        print(f"{name:<52} {s['seconds']:>10.2f} {s['client_peak_gib']:>10.3f} {w:>18}")
        if s["kind"] == "lime":
            print(f"{'':<8}fit {s['fit_seconds']:.2f} s, explain {s['explain_seconds']:.2f} s: "
                  f"{s['explain_seconds'] / results['settings']['queries'] * 1e3:.0f} ms per "
                  "query")
    d = results["derived"]
    print("\nratios:")
    for b in ("bounds declared", "bounds=None"):
        for k, v in d.get(b, {}).items():
            print(f"  {b}: {k} = {v:.3f}")
    if "one_over_two_workers" in d:
        print(f"  1 worker / 2 workers = {d['one_over_two_workers']:.2f}")
    if "dpsgd" in d:
        dp = d["dpsgd"]
        print(f"\nDP-SGD: one in-memory step {dp['in_memory_seconds_per_step'] * 1e3:.1f} ms; "
              "a round trip on the cluster:")
        for k, v in dp["round_trip_seconds"].items():
            print(f"  {k}: {v * 1e3:.1f} ms = {dp['round_trip_over_step'][k]:.1f}x a step; "
                  f"{dp['overhead_seconds_for_mnist'][k]:.0f} s over MNIST's "
                  f"{dp['mnist_steps']} steps")
    for key in ("client_ru_maxrss_gib_dask_phases", "client_ru_maxrss_gib_whole_run",
                "parts_client_ru_maxrss", "lime_on_dask"):
        if key in results:
            print(f"{key}: {results[key]}")


if __name__ == "__main__":
    main()
