"""DPLocallyLinearClassifier's memory on MNIST: peak RSS and fit time, before and after.

Issue 41, item 2 (target b): the fit's memory is capped at any number of
epochs. Before (``--before``, dac4a95), a fit whose rows are used twice or
more (epochs >= 2) held the whole (n, M, D') float32 projection (2.1 GB for
MNIST at M = 30, D' = 300); after, it never forms the projection (the
forward pass and the gradients go through ``R_m`` on the batch) and keeps
only the views' squared norms (M float32 a row, computed once in blocks of
``PROJECTION_BLOCK_BYTES``).

Each fit runs in its own subprocess (one BLAS / OpenMP thread), on the
60,000 MNIST training rows (float64, as ``_mnist.load_mnist`` gives them):
the paper's model (M = 30, D' = 300, batch 500, beta 0.1), epsilon 2,
delta 1e-5, learning rate 1, ``random_state`` 0, ``--epochs`` (5) epochs.
Measured in the subprocess: its resident memory (``/proc/self/statm``)
after the data are loaded, its peak (``ru_maxrss``) after the fit, the fit's
wall time and CPU time, and the test accuracy (the two codes' models agree
within float32 rounding, so their accuracies should match). The codes run
interleaved, ``--repeats`` times each.

Opacus' figure (ghost clipping on the same MNIST fit, 1,904 MiB peak) is the
one quoted in issue 41; it was not measured here (torch and opacus are not
installed with skdpx).

"before" is the code of ``--before`` exported with ``git archive`` into a
temporary folder; "after" is this checkout. Saves to
``benchmarks/results/llc_memory.json`` (``--out``) with the run record;
prints the table.

Run: python benchmarks/llc_memory.py [--epochs 5] [--repeats 2]
"""

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from _run_record import commit, run_info, save, start  # noqa: E402
from memory import export  # noqa: E402  (one git-archive export for both)

RESULTS = HERE / "results" / "llc_memory.json"
MIB = 2**20
#: Opacus (ghost clipping) on the same MNIST fit, as quoted in issue 41 (not measured here).
OPACUS_PEAK_MIB = 1904
MODEL = dict(n_maps=30, projection_dim=300, beta=0.1, batch_size=500, epsilon=2.0,
             delta=1e-5, learning_rate=1.0, max_grad_norm=1.0, random_state=0)


def _rss():
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def child(epochs):
    """One fit, in this (sub)process: prints a JSON line of what it measured."""
    import warnings

    from _mnist import BOUNDS, load_mnist
    from skdpx.locally_linear import DPLocallyLinearClassifier

    warnings.simplefilter("ignore")  # the seeded random_state's warning
    X, y, X_test, y_test = load_mnist()
    rss_data = _rss()
    clf = DPLocallyLinearClassifier(epochs=epochs, bounds=BOUNDS, **MODEL)
    t0, c0 = time.perf_counter(), time.process_time()
    clf.fit(X, y)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    out = {"epochs": epochs, "fit_seconds": seconds, "fit_cpu_seconds": cpu,
           "rss_after_data_mib": rss_data / MIB, "peak_rss_mib": peak / MIB,
           "peak_over_data_mib": (peak - rss_data) / MIB, "n_steps": int(clf.n_steps_),
           "accuracy": float(clf.score(X_test, y_test))}
    print("RESULT " + json.dumps(out), flush=True)


def run(src, epochs, timeout):
    env = dict(os.environ, PYTHONPATH=str(src), OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1")
    cmd = [sys.executable, str(HERE / "llc_memory.py"), "--child", "--epochs", str(epochs)]
    proc = subprocess.run(cmd, env=env, cwd=src, capture_output=True, text=True,
                          timeout=timeout)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if not lines:
        tail = proc.stderr.strip().splitlines()[-1:] or ["no output"]
        return {"epochs": epochs, "error": tail[0][:200], "returncode": proc.returncode}
    out = json.loads(lines[-1][len("RESULT "):])
    out["load_average"] = [round(x, 2) for x in os.getloadavg()]
    return out


def summary(runs):
    """Per code: the median peak and fit time; after / before and against Opacus."""
    import statistics

    rows = {}
    for code in ("before", "after"):
        ok = [r for r in runs if r["code"] == code and "peak_rss_mib" in r]
        if ok:
            rows[code] = {"peak_rss_mib": statistics.median(r["peak_rss_mib"] for r in ok),
                          "peak_over_data_mib": statistics.median(
                              r["peak_over_data_mib"] for r in ok),
                          "fit_seconds": statistics.median(r["fit_seconds"] for r in ok),
                          "fit_cpu_seconds": statistics.median(r["fit_cpu_seconds"] for r in ok),
                          "accuracy": [r["accuracy"] for r in ok], "n_runs": len(ok)}
    if len(rows) == 2:
        rows["ratio_after_before"] = {
            key: rows["after"][key] / rows["before"][key]
            for key in ("peak_rss_mib", "fit_seconds", "fit_cpu_seconds")}
    if "after" in rows:
        rows["after_peak_over_opacus"] = rows["after"]["peak_rss_mib"] / OPACUS_PEAK_MIB
    return rows


def print_table(results):
    print(f"\n{'code':<7} {'epochs':>6} {'peak RSS MiB':>12} {'peak-data MiB':>13} "
          f"{'fit s':>7} {'CPU s':>7} {'accuracy':>8} {'load':>16}")
    for r in results["runs"]:
        if "peak_rss_mib" not in r:
            print(f"{r['code']:<7} {r['epochs']:>6}  error: {r.get('error')}")
            continue
        print(f"{r['code']:<7} {r['epochs']:>6} {r['peak_rss_mib']:>12.0f} "
              f"{r['peak_over_data_mib']:>13.0f} {r['fit_seconds']:>7.1f} "
              f"{r['fit_cpu_seconds']:>7.1f} {r['accuracy']:>8.4f} {str(r['load_average']):>16}")
    s = results.get("summary", {})
    if "ratio_after_before" in s:
        ratio = s["ratio_after_before"]
        print(f"after / before (medians): peak RSS {ratio['peak_rss_mib']:.2f}, fit time "
              f"{ratio['fit_seconds']:.2f}, CPU time {ratio['fit_cpu_seconds']:.2f}")
    if "after_peak_over_opacus" in s:
        print(f"after's peak / Opacus' {OPACUS_PEAK_MIB} MiB (issue 41's figure, not measured "
              f"here): {s['after_peak_over_opacus']:.2f}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--epochs", type=float, default=5)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--before", default="dac4a95")
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--out", default=str(RESULTS))
    args = parser.parse_args(argv)
    if args.child:
        child(args.epochs)
        return
    started = start()
    t0 = time.perf_counter()
    sources = {"after": ROOT, "before": Path(export(args.before))}
    results = {"settings": {"model": MODEL, "epochs": args.epochs, "repeats": args.repeats,
                            "bounds": [0.0, 255.0], "before": args.before, "after": commit(),
                            "opacus_peak_mib": OPACUS_PEAK_MIB,
                            "opacus_source": "issue 41 (ghost clipping, same MNIST fit); "
                                             "not measured in this run"},
               "runs": []}
    try:
        for _ in range(args.repeats):
            for code in ("before", "after"):
                out = run(sources[code], args.epochs, args.timeout)
                out["code"] = code
                results["runs"].append(out)
                print_table({"runs": [out]})
    finally:
        shutil.rmtree(sources["before"], ignore_errors=True)
    results["summary"] = summary(results["runs"])
    record = run_info(started, time.perf_counter() - t0, packages=())
    record["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    results["run"] = record
    print_table(results)
    save(args.out, results)
    print(f"\nsaved {args.out}")


if __name__ == "__main__":
    main()
