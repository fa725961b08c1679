"""Memory of a fit: peak RSS against the size of X, and a 1e7 x 50 fit under a 7 GiB limit.

Issue 36, the memory items. Each fit runs in its own subprocess (one BLAS /
OpenMP thread), on X = standard normal rows x 50 columns, float64 (1e6 rows:
400 MB; 1e7: 4 GB), generated in the subprocess, with the black box a
LogisticRegression fitted there on 20,000 separate public rows:

* ``dplime``: ``DPLimeExplainer(black_box, epsilon=2, epsilon_per_query=0.5,
  max_iter=20, bounds=None)`` (DP bounds, then the labels), ``fit(X)`` and
  ``explain`` of 3 queries (basic);
* ``recourse``: ``PrivRecourse(black_box, epsilon=2, n_clusters=20,
  max_iter=2, bounds=None)``, ``fit(X)``;
* ``recourse_dpsgd`` (1e6 rows only): the same with ``estimator=None`` (its
  logistic regression trained on (X, y) by DP-SGD: 10 epochs of batches of
  m / 40 rows, 400 steps);
* ``dplime_declared``, ``recourse_declared``: ``dplime`` and ``recourse``
  with declared bounds (-5, 5) (no DP bounds: the fit's first pass is the
  clipping and scaling).

All at delta 1e-6 (DPLime) or 1e-5 (PrivRecourse), with a seeded
``random_state`` (reproducible; the warning is silenced) and a
``PrivacyLedger`` as ``accountant``, whose ``epsilon_spent`` is recorded
whatever the fit's outcome (what a fit that fails after its commit has
spent).

Measured in the subprocess: its resident memory (``/proc/self/statm``)
before X is made (Python, numpy, scikit-learn, skdpx, the black box) and
after, and its peak (``ru_maxrss``) at the end; reported as
``(peak - RSS after X) / X.nbytes`` (what the fit adds on top of X: the
issue's "peak RSS / size of X") and ``(peak - RSS before X) / X.nbytes`` (X
included). With ``--limit-gib`` (7), the 1e7 fits run under
``resource.setrlimit(RLIMIT_AS, 7 GiB)`` set before X is made: pass or fail
(the error) and wall time.

"before" is the code of ``--before`` (423cf95, the commit before issue 36's
memory work), exported with ``git archive`` into a temporary folder; "after"
is this checkout. Saves to ``benchmarks/results/memory.json`` (``--out``)
with the run record; prints the table.

Run: nice -n 10 python benchmarks/memory.py [--quick]
"""

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import io
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from _run_record import commit, run_info, save, start  # noqa: E402

RESULTS = HERE / "results" / "memory.json"
D = 50
GIB = 2**30


def _rss():
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def child(case, m, limit_gib):
    """One fit, in this (sub)process: prints a JSON line of what it measured."""
    import warnings

    import numpy as np
    from sklearn.linear_model import LogisticRegression

    from skdpx import DPLimeExplainer, PrivRecourse
    from skdpx.privacy import PrivacyLedger

    warnings.simplefilter("ignore")  # the seeded random_state's and DP bounds' warnings
    public = np.random.default_rng(1).standard_normal((20_000, D))
    box = LogisticRegression().fit(public, (public[:, 0] + public[:, 1] > 0).astype(int))
    queries = public[:3]
    if limit_gib:
        limit = int(limit_gib * GIB)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    ledger = PrivacyLedger(epsilon=10.0, delta=1e-4)
    out = {"case": case, "rows": m, "columns": D, "limit_gib": limit_gib}
    rss_before_x = _rss()
    t0 = time.perf_counter()
    try:
        X = np.random.default_rng(0).standard_normal((m, D))
        y = (X[:, 0] + X[:, 1] > 0).astype(np.int64) if case == "recourse_dpsgd" else None
        out["x_seconds"] = round(time.perf_counter() - t0, 2)
        out["x_nbytes"] = X.nbytes
        rss_after_x = _rss()
        peak_before_fit = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        t1 = time.perf_counter()
        bounds = (-5.0, 5.0) if case.endswith("_declared") else None
        if case.startswith("dplime"):
            est = DPLimeExplainer(box, epsilon=2.0, delta=1e-6, epsilon_per_query=0.5,
                                  max_iter=20, bounds=bounds, accountant=ledger,
                                  random_state=0)
            est.fit(X)
            values = est.explain(queries).values
            out["finite_answers"] = bool(np.isfinite(values).all())
        else:
            est = PrivRecourse(None if case == "recourse_dpsgd" else box, epsilon=2.0,
                               delta=1e-5, n_clusters=20, max_iter=2, bounds=bounds,
                               accountant=ledger, random_state=0)
            est.fit(X, y)
            out["n_nodes"] = int(len(est.cluster_centers_))
        out["ok"] = True
        out["fit_seconds"] = round(time.perf_counter() - t1, 2)
    except MemoryError as exc:
        out["ok"] = False
        out["error"] = f"MemoryError: {str(exc)[:200]}"
        out["fit_seconds"] = round(time.perf_counter() - t1, 2) if "x_nbytes" in out else None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    out["epsilon_spent"] = round(ledger.epsilon_spent, 4)
    out["rss_before_x_gib"] = rss_before_x / GIB
    if "x_nbytes" in out:
        out["rss_after_x_gib"] = rss_after_x / GIB
        out["peak_before_fit_gib"] = peak_before_fit / GIB
        out["peak_gib"] = peak / GIB
        out["peak_over_x"] = (peak - rss_after_x) / X.nbytes
        out["peak_with_x_over_x"] = (peak - rss_before_x) / X.nbytes
    print("RESULT " + json.dumps(out), flush=True)


def export(commit_id):
    """The code of ``commit_id`` in a temporary folder (``git archive``)."""
    folder = tempfile.mkdtemp(prefix="skdpx_before_")
    data = subprocess.run(["git", "archive", commit_id], cwd=ROOT, check=True,
                          capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(folder)
    return folder


def run(src, case, m, limit_gib, timeout):
    env = dict(os.environ, PYTHONPATH=str(src), OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1")
    cmd = [sys.executable, str(HERE / "memory.py"), "--child", case, "--m", str(m),
           "--limit-gib", str(limit_gib or 0)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=src, capture_output=True, text=True,
                          timeout=timeout)
    wall = time.perf_counter() - t0
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if lines:
        out = json.loads(lines[-1][len("RESULT "):])
    else:  # died (e.g. killed, or an error other than MemoryError)
        tail = proc.stderr.strip().splitlines()[-1:] or ["no output"]
        out = {"case": case, "rows": m, "ok": False, "error": tail[0][:200],
               "returncode": proc.returncode}
    out["wall_seconds"] = round(wall, 1)
    return out


def print_table(results):
    print(f"\n{'code':<7} {'case':<15} {'rows':>9} {'limit':>6} {'ok':>4} {'fit s':>7} "
          f"{'eps spent':>9} {'peak-X / X':>11} {'peak / X':>9}  error")
    for r in results["runs"]:
        limit = f"{r['limit_gib']:g}G" if r.get("limit_gib") else "-"
        ratio = f"{r['peak_over_x']:.2f}" if "peak_over_x" in r else "-"
        total = f"{r['peak_with_x_over_x']:.2f}" if "peak_with_x_over_x" in r else "-"
        fit = f"{r['fit_seconds']:.1f}" if r.get("fit_seconds") is not None else "-"
        print(f"{r['code']:<7} {r['case']:<15} {r['rows']:>9.0e} {limit:>6} "
              f"{'yes' if r['ok'] else 'NO':>4} {fit:>7} {r.get('epsilon_spent', '-'):>9} "
              f"{ratio:>11} {total:>9}  {r.get('error', '')[:70]}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--m", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--rows", type=float, default=1e6, help="the ratio's rows")
    parser.add_argument("--large-rows", type=float, default=1e7,
                        help="the rows fitted under --limit-gib (0: none)")
    parser.add_argument("--limit-gib", type=float, default=7.0)
    parser.add_argument("--before", default="423cf95")
    parser.add_argument("--codes", nargs="+", default=["before", "after"])
    parser.add_argument("--cases", nargs="+",
                        default=["dplime", "recourse", "recourse_dpsgd", "dplime_declared",
                                 "recourse_declared"],
                        help="what to run; the runs of other cases saved in --out are kept")
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--quick", action="store_true", help="1e5 rows, 1e6 under 1 GiB")
    parser.add_argument("--out", default=str(RESULTS))
    args = parser.parse_args(argv)
    if args.child:
        child(args.child, args.m, args.limit_gib or None)
        return
    if args.quick:
        args.rows, args.large_rows, args.limit_gib = 1e5, 1e6, 1.5
        if args.out == str(RESULTS):
            args.out = str(RESULTS.with_name("memory_quick.json"))
    started = start()
    t0 = time.perf_counter()
    sources = {"after": ROOT}
    if "before" in args.codes:
        sources["before"] = Path(export(args.before))
    results = {"settings": {"columns": D, "rows": int(args.rows),
                            "large_rows": int(args.large_rows), "limit_gib": args.limit_gib,
                            "before": args.before, "after": commit()},
               "runs": []}
    try:
        plan = [(code, case, int(args.rows), None) for case in args.cases
                for code in args.codes]
        if args.large_rows:
            plan += [(code, case, int(args.large_rows), args.limit_gib)
                     for case in args.cases if case != "recourse_dpsgd"
                     for code in args.codes]
        for code, case, m, limit in plan:
            out = run(sources[code], case, m, limit, args.timeout)
            out["code"] = code
            out["commit"] = results["settings"][code]  # the code's commit (of this run)
            results["runs"].append(out)
            print_table({"runs": [out]})
    finally:
        if "before" in sources:
            shutil.rmtree(sources["before"], ignore_errors=True)
    record = run_info(started, time.perf_counter() - t0, packages=("psutil",))
    record["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    record["cases"] = args.cases
    out = Path(args.out)
    if out.is_file():  # keep the saved runs of the cases not run now
        saved = json.loads(out.read_text())
        if saved["settings"]["before"] == results["settings"]["before"]:
            kept = [r for r in saved["runs"] if r["case"] not in args.cases]
            results["runs"] = kept + results["runs"]
            results["earlier_runs"] = saved.get("earlier_runs", []) + [saved["run"]]
    results["run"] = record
    print_table(results)
    save(args.out, results)
    print(f"\nsaved {args.out}")


if __name__ == "__main__":
    main()
