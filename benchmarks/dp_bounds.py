"""How good are DP bounds (``bounds=None``)? Coverage on real tables.

For each dataset, ``--repeats`` releases of ``FitBounds`` (a quarter of
epsilon, the share an estimator spends when no bounds are declared) at each
epsilon, and per feature:

* ``median inside``: the share of features whose median lies inside the
  released bounds (the bounds are about the bulk of the data);
* ``rows inside``: the share of values not clipped;
* ``width ratio``: released width over the data's 1%-99% range (1 would be
  exact; the octave bins make 1-4 typical when the bulk is found).

Datasets: breast cancer (569 x 30, scikit-learn), Adult's six numeric columns
(32,561 rows, bundled), and Adult's numeric columns on its first 1,000 rows.
Saves ``benchmarks/results/dp_bounds.json`` (with ``_run_record``'s commit,
date, versions, machine and command) and prints a table.

Run: python benchmarks/dp_bounds.py [--repeats 20]
"""

import argparse
from pathlib import Path
import time
import warnings

import numpy as np
from sklearn.datasets import load_breast_cancer

from skdpx.datasets import load_adult
from skdpx.privacy import Commitment, FitBounds, noise_source

from _run_record import run_info, save, start

HERE = Path(__file__).resolve().parent


def _adult_numeric():
    frame = load_adult(as_frame=True).data
    return frame.select_dtypes("number").to_numpy(dtype=float)


def coverage(X, epsilon, repeats):
    lo_q, hi_q = np.quantile(X, [0.01, 0.99], axis=0)
    med = np.median(X, axis=0)
    inside_med, inside_rows, width = [], [], []
    for _ in range(repeats):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fb = FitBounds(None, X.shape[1], epsilon=epsilon, delta=1e-5,
                           relation="add_or_remove")
        lower, upper = fb.release(X, noise=noise_source(),
                                  commitment=Commitment(fb.event, "bounds"))
        inside_med.append(np.mean((lower <= med) & (med <= upper)))
        inside_rows.append(np.mean((X >= lower) & (X <= upper)))
        spread = np.where(hi_q > lo_q, hi_q - lo_q, np.nan)
        width.append(np.nanmedian((upper - lower) / spread))
    return float(np.mean(inside_med)), float(np.mean(inside_rows)), float(np.median(width))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    started, t0 = start(), time.perf_counter()
    cancer = load_breast_cancer().data
    adult = _adult_numeric()
    datasets = {"breast cancer (569 x 30)": cancer,
                f"Adult numeric ({adult.shape[0]} x {adult.shape[1]})": adult,
                f"Adult numeric, 1000 rows (1000 x {adult.shape[1]})": adult[:1000]}
    rows = []
    for name, X in datasets.items():
        for epsilon in (0.5, 1.0, 4.0):
            med, inside, width = coverage(X, epsilon, args.repeats)
            rows.append({"data": name, "epsilon": epsilon, "median_inside": med,
                         "rows_inside": inside, "width_ratio": width})
    print(f"{'data':<40} {'eps':>5} {'median inside':>14} {'rows inside':>12} {'width ratio':>12}")
    for r in rows:
        print(f"{r['data']:<40} {r['epsilon']:>5g} {r['median_inside']:>14.2f} "
              f"{r['rows_inside']:>12.2f} {r['width_ratio']:>12.2f}")
    out = HERE / "results" / "dp_bounds.json"
    save(out, {"repeats": args.repeats, "share_of_epsilon": 0.25, "rows": rows,
               "run": run_info(started, time.perf_counter() - t0, packages=())})
    print(f"saved {out}")


if __name__ == "__main__":
    main()
