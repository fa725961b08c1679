"""DPC's ``n_counterfactuals``: how different a query's alternatives are (Adult, the rules).

Issue 39 asks for ``n_counterfactuals`` per query, diverse as DiCE's
``total_CFs``. This measures, on the setup of ``benchmarks/rules_adult.py``
(raw Adult, a disjoint logistic-regression Pipeline, its first denied test
rows as queries, the issue's rules: six immutables, age and education
increasing, education linked to education-num, no Female Husband), for
``n_counterfactuals=k``:

- ``valid``: the share of the ``n * k`` rows returned as counterfactuals;
- ``diversity``: DiCE's measure, the mean L2 distance between two
  alternatives of one query (scaled to the unit cube of the public bounds,
  one-hot blocks as they are), over the queries with two or more;
- ``proximity``: the mean distance of an alternative to its query; the
  ratio ``diversity / proximity`` (near 0: the alternatives are one point);
- ``distinct_changes``: per query, the number of distinct sets of changed
  columns among its alternatives over their number (1: each alternative
  changes other columns);
- ``found_by``: the stages that found them.

Prints a table and saves ``benchmarks/results/dpc_diversity.json``, which
doc/benchmarks/dpc.rst renders.

Run: python benchmarks/dpc_diversity.py [--seeds 3] [--queries 60] [--k 3]
"""

import argparse
import time
import warnings
from pathlib import Path

import numpy as np

from skdpx import DPCounterfactualGenerator
from skdpx.datasets import adult_schema

from _run_record import run_info, save, start as record_start
from rules_adult import RULES, data

RESULTS = Path(__file__).parent / "results" / "dpc_diversity.json"


def measure(dpc, result, queries, k):
    """The diversity figures of one explain (``k`` rows per query)."""
    n = len(queries)
    scaler = dpc._scaler()
    cf = np.asarray(result.counterfactuals, dtype=float)
    scaled = scaler.transform(cf).reshape(n, k, -1)
    query = scaler.transform(dpc.schema_.encode(queries))
    valid = np.asarray(result.valid).reshape(n, k)
    records = result.counterfactual_records.astype(object).to_numpy().reshape(n, k, -1)
    q = queries.astype(object).to_numpy()
    changed = records.astype(str) != q[:, None, :].astype(str)  # (n, k, columns)
    pairs, near, distinct = [], [], []
    for i in np.flatnonzero(valid.sum(axis=1) >= 2):  # a loop over queries, not rows
        v = np.flatnonzero(valid[i])
        alt = scaled[i][v]
        gap = np.linalg.norm(alt[:, None] - alt[None], axis=2)
        pairs.append(gap[np.triu_indices(len(v), 1)].mean())
        near.append(np.linalg.norm(alt - query[i], axis=1).mean())
        distinct.append(len({tuple(row) for row in changed[i, v]}) / len(v))
    return {"valid": float(valid.mean()), "queries_with_two": len(pairs),
            "diversity": float(np.mean(pairs)) if pairs else float("nan"),
            "proximity": float(np.mean(near)) if near else float("nan"),
            "ratio": float(np.mean(pairs) / np.mean(near)) if pairs else float("nan"),
            "distinct_changes": float(np.mean(distinct)) if distinct else float("nan"),
            "found_by": {key: int(v) for key, v in result.meta["found_by"].items()}}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--epsilon", type=float, nargs="+", default=[1.0, 0.025])
    args = parser.parse_args()
    started = record_start()
    t0 = time.perf_counter()
    X, queries, box = data(args.queries)
    schema = adult_schema(drop=())
    rows = []
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="random_state=")
        warnings.filterwarnings("ignore", message="accountant=None")
        for epsilon in args.epsilon:
            for seed in range(args.seeds):
                t = time.perf_counter()
                dpc = DPCounterfactualGenerator(
                    box, epsilon=epsilon, bounds=schema.bounds, categories=schema.categories,
                    random_state=seed, n_counterfactuals=args.k, **RULES).fit(X)
                row = {"epsilon": epsilon, "seed": seed, "k": args.k,
                       **measure(dpc, dpc.explain(queries), queries, args.k),
                       "seconds": round(time.perf_counter() - t, 1)}
                print(row, flush=True)
                rows.append(row)
    print("| epsilon | seeds | valid | diversity | proximity | ratio | distinct changes |")
    summary = []
    for epsilon in args.epsilon:
        mine = [r for r in rows if r["epsilon"] == epsilon]
        s = {"epsilon": epsilon, "seeds": len(mine),
             **{key: float(np.mean([r[key] for r in mine]))
                for key in ("valid", "diversity", "proximity", "ratio", "distinct_changes")}}
        summary.append(s)
        print(f"| {epsilon:g} | {s['seeds']} | {s['valid']:.3f} | {s['diversity']:.3f} | "
              f"{s['proximity']:.3f} | {s['ratio']:.2f} | {s['distinct_changes']:.2f} |")
    save(RESULTS, {"settings": vars(args), "rows": rows, "summary": summary,
                   "run": run_info(started, time.perf_counter() - t0, packages=())})


if __name__ == "__main__":
    main()
