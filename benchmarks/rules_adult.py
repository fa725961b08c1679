"""Rules a person can declare, on raw Adult at epsilon 1 (issue 39, target a, rules part).

DPCounterfactualGenerator and PrivRecourse are fitted on the 32,561 raw
training rows (``load_adult(as_frame=True)``) with the public schema
(``adult_schema(drop=())``) and the realistic rules of issue 39:

- immutable: ``sex``, ``race``, ``fnlwgt``, ``native-country``,
  ``relationship``, ``marital-status``;
- increasing: ``age`` and ``education``, the latter an ordered categorical
  (its levels in the Census order, Preschool < ... < Doctorate, declared as a
  pandas ``CategoricalDtype(ordered=True)``);
- ``education`` linked to ``education-num`` (the Census code of each level,
  1 to 16: public);
- feasibility: a Female is not a Husband.

The black box is a column-selecting Pipeline (one-hot + StandardScaler +
LogisticRegression) trained on the first half of the test split, disjoint
from the private rows; the queries are the first ``--queries`` rows of the
second half that it denies (no missing value). Every returned record (DPC's
counterfactuals; every point of PrivRecourse's paths) is checked against
the rules from the returned DataFrame and the query alone (nothing read from
the estimators' internals): ``broken`` must be 0. Also reported: DPC's flip
ratio (valid counterfactuals / queries) and how each stage found them, and
PrivRecourse's success (queries with a verified path / queries).

Run::

    python benchmarks/rules_adult.py [--seeds 3] [--queries 100]

It saves ``benchmarks/results/rules_adult.json`` (with ``_run_record``'s
commit, date, versions, machine and command).
"""

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from skdpx import DPCounterfactualGenerator, PrivRecourse
from skdpx.datasets import adult_schema, load_adult

from _run_record import run_info, save, start as record_start

RESULTS = Path(__file__).parent / "results" / "rules_adult.json"

#: the Census order of the education levels (education-num 1 to 16): public
EDUCATION = ["Preschool", "1st-4th", "5th-6th", "7th-8th", "9th", "10th", "11th", "12th",
             "HS-grad", "Some-college", "Assoc-voc", "Assoc-acdm", "Bachelors", "Masters",
             "Prof-school", "Doctorate"]
NUMBER = {level: i + 1 for i, level in enumerate(EDUCATION)}
IMMUTABLE = ["sex", "race", "fnlwgt", "native-country", "relationship", "marital-status"]
INCREASING = ["age", "education"]


def not_a_female_husband(df):
    """The feasibility rule: a Female is not a Husband (a mask over records)."""
    return ~((df["sex"] == "Female") & (df["relationship"] == "Husband"))


RULES = dict(immutable_features=IMMUTABLE, increasing_features=INCREASING,
             linked_features=[("education", "education-num", NUMBER)],
             feasibility=not_a_female_husband)
#: what could be said before these rules (issue 39's starting point): the same
#: immutables, age and education-num increasing, nothing else
BEFORE = dict(immutable_features=IMMUTABLE, increasing_features=["age", "education-num"])


def _ordered(frame):
    return frame.assign(education=frame["education"].astype(str).astype(
        pd.CategoricalDtype(EDUCATION, ordered=True)))


def data(n_queries):
    """The private rows, the queries and the black box (disjoint from the rows)."""
    train = load_adult(as_frame=True)
    test = load_adult(subset="test", as_frame=True)
    schema = adult_schema(drop=())
    half = len(test.data) // 2
    box = make_pipeline(
        ColumnTransformer([
            ("categorical", OneHotEncoder(handle_unknown="ignore"), list(schema.categories)),
            ("numeric", StandardScaler(), list(schema.bounds)),
        ]),
        LogisticRegression(max_iter=1000),
    ).fit(_ordered(test.data.iloc[:half]), test.target.iloc[:half])
    pool = _ordered(test.data.iloc[half:])
    pool = pool[pool.notna().all(axis=1)]
    queries = pool[box.predict(pool) == 0].iloc[:n_queries]
    return _ordered(train.data), queries, box


def broken(queries, records):
    """Per record (a row of missing values: none), whether it breaks a rule
    relative to its query (``queries`` row i is the query of ``records`` row i)."""
    there = records.notna().all(axis=1).to_numpy()
    q, r = queries[there].reset_index(drop=True), records[there].reset_index(drop=True)
    out = np.zeros(len(r), dtype=bool)
    for c in IMMUTABLE:
        out |= r[c].astype(object).to_numpy() != q[c].astype(object).to_numpy()
    out |= r["age"].to_numpy(dtype=float) < q["age"].to_numpy(dtype=float)
    rank_r = r["education"].astype(object).map(NUMBER).to_numpy(dtype=float)
    rank_q = q["education"].astype(object).map(NUMBER).to_numpy(dtype=float)
    out |= rank_r < rank_q
    want = np.where(rank_r == rank_q, q["education-num"].to_numpy(dtype=float), rank_r)
    out |= r["education-num"].to_numpy(dtype=float) != want
    out |= ~not_a_female_husband(r).to_numpy(dtype=bool)
    full = np.zeros(len(records), dtype=bool)
    full[there] = out
    return full


def run(seed, X, queries, box, epsilon, rules="rules"):
    schema = adult_schema(drop=())
    common = dict(epsilon=epsilon, bounds=schema.bounds, categories=schema.categories,
                  random_state=seed, **(RULES if rules == "rules" else BEFORE))
    rows = []
    t0 = time.perf_counter()
    dpc = DPCounterfactualGenerator(box, **common).fit(X)
    result = dpc.explain(queries)
    records = result.counterfactual_records
    bad = broken(queries, records)
    found_by = result.meta["found_by"]
    rows.append({"method": "DPC", "rules": rules, "seed": seed, "epsilon": epsilon,
                 "queries": int(len(queries)), "returned": int(result.valid.sum()),
                 "flip_ratio": float(result.valid.mean()),
                 "latent_share": float(found_by.get("latent", 0) / len(queries)),
                 "found_by": {k: int(v) for k, v in found_by.items()},
                 "broken": int(bad.sum()),
                 "box_flips": float(np.mean(box.predict(records[result.valid]) == 1))
                 if result.valid.any() else float("nan"),
                 "seconds": round(time.perf_counter() - t0, 1)})
    t0 = time.perf_counter()
    rec = PrivRecourse(box, **common).fit(X)
    paths = rec.explain(queries)
    owners, points = [], []
    for i in np.flatnonzero(paths.success):
        owners += [i] * (len(paths.paths[i]) - 1)
        points.append(paths.paths[i][1:])
    points = np.vstack(points) if points else np.empty((0, rec.schema_.n_encoded))
    bad_points = broken(queries.iloc[owners], rec.schema_.records(points, *rec.bounds_))
    ends = paths.counterfactual_records
    rows.append({"method": "PrivRecourse", "rules": rules, "seed": seed, "epsilon": epsilon,
                 "queries": int(len(queries)), "returned": int(paths.success.sum()),
                 "success": float(paths.success.mean()), "path_points": int(len(points)),
                 "nodes": int(len(rec.cluster_centers_)),
                 # every point of every path (the end points are their last points)
                 "broken": int(bad_points.sum()),
                 "broken_ends": int(broken(queries, ends).sum()),
                 "box_flips": float(np.mean(box.predict(ends[paths.success]) == 1))
                 if paths.success.any() else float("nan"),
                 "seconds": round(time.perf_counter() - t0, 1)})
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--epsilon", type=float, default=1.0)
    args = parser.parse_args()
    started = record_start()
    t0 = time.perf_counter()
    X, queries, box = data(args.queries)
    rows = []
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="random_state=")
        warnings.filterwarnings("ignore", message="accountant=None")
        for seed in range(args.seeds):
            for rules in ("rules", "before"):
                for row in run(seed, X, queries, box, args.epsilon, rules):
                    print({k: v for k, v in row.items() if k != "found_by"}, flush=True)
                    rows.append(row)
    summary = []
    for rules in ("rules", "before"):
        for method, key in (("DPC", "flip_ratio"), ("PrivRecourse", "success")):
            mine = [r for r in rows if r["method"] == method and r["rules"] == rules]
            values = [r[key] for r in mine]
            summary.append({"method": method, "rules": rules, "rate": float(np.mean(values)),
                            "worst": float(np.min(values)), "seeds": len(mine),
                            "broken": int(sum(r["broken"] for r in mine)),
                            "returned": int(sum(r["returned"] for r in mine)),
                            "latent_share": (float(np.mean([r["latent_share"] for r in mine]))
                                             if method == "DPC" else None)})
    print(summary)
    save(RESULTS, {"rules": {"immutable": IMMUTABLE, "increasing": INCREASING,
                             "linked": "education -> education-num (Census codes)",
                             "feasibility": "not (sex == Female and relationship == Husband)"},
                   "rows": rows, "summary": summary,
                   "run": run_info(started, time.perf_counter() - t0, packages=())})


if __name__ == "__main__":
    main()
