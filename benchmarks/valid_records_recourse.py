"""PrivRecourse's end points as records: valid, constrained from the query, and re-checked.

Issue 19, target b (PrivRecourse's part): at epsilon 1, the share of
returned end points that are valid records (categories among the declared
levels, integer columns integral, every numeric column within its declared
bounds, immutable columns equal to the query's, increasing columns at least
and decreasing ones at most the query's; each must be 100%), the flip ratio
re-checked by the black box (the share of returned end points it gives the
favourable class; aim >= 0.9), and the coverage (the share of denied
queries that get a verified end point at all; PrivRecourse answers the
others with a missing row, never with a point that does not flip).

Every check reads the returned DataFrame and the query DataFrame only, with
the black box's own ``predict``: nothing is taken from PrivRecourse's
internals.

Two tables:

- **Adult, raw** (the bundled ``load_adult(as_frame=True)``: 14 columns, 8 of
  them categorical, with their missing values): PrivRecourse is fitted on
  the 32,561 training rows, with ``adult_schema(drop=())`` (the public
  levels of adult.names, the public ranges) as ``categories`` and
  ``bounds`` (so no DP bounds);
  ``sex`` and ``race`` immutable, ``age`` and ``education-num`` increasing.
  The black box is a column-selecting Pipeline (a ColumnTransformer that
  one-hot encodes the categorical columns by name and passes the numeric
  ones through a StandardScaler, then a LogisticRegression) trained on the
  first half of the test split: disjoint from PrivRecourse's rows, so the
  whole epsilon goes to the clustering. The queries are the rows of the
  second half of the test split that the black box denies (>50K is
  favourable), the first ``--queries`` of them.
- **Breast cancer** (scikit-learn's bundled WDBC: 569 rows, 30 numeric
  columns): the bounds declared are the minimum and maximum printed in the
  dataset's public description (``DESCR``'s summary statistics table, parsed
  here), not read from the rows. A seeded shuffle splits the rows in two
  halves: PrivRecourse is fitted on the first (284 rows), an MLP black box
  (StandardScaler + MLPClassifier(32, 16)) on the second; the queries are
  the rows of the second half the black box calls malignant (benign is
  favourable). ``mean texture`` is declared immutable, ``worst radius`` and
  ``worst concave points`` decreasing (the way to benign): they exercise
  the checks (the table has no integer or categorical column).

Each table is run with its constraints and with none: the second row is what
the DP clustering alone allows, so the coverage the constraints cost shows.

Each seed gives one row per table (``random_state=seed``: reproducible noise,
for a benchmark only). Run::

    python benchmarks/valid_records_recourse.py [--seeds 5] [--queries 500]

It prints a table and saves ``benchmarks/results/valid_records_recourse.json``
(with ``_run_record``'s commit, date, versions, machine and command).
:func:`recourse_rows` returns the rows for a joint table.
"""

import argparse
import json
import re
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from skdpx import PrivRecourse
from skdpx.datasets import adult_schema, load_adult

from _run_record import run_info, save, start as record_start

RESULTS = Path(__file__).parent / "results" / "valid_records_recourse.json"
CHECKS = ("categories", "integers", "bounds", "immutables", "monotone")


def validity(queries, out, box, favorable, *, categories, bounds, immutable=(),
             increasing=(), decreasing=()):
    """The checks of target b on the returned end points (DataFrames in, shares out).

    Parameters
    ----------
    queries, out : DataFrame
        The queries and PrivRecourse's ``transform`` of them (a row of
        missing values where there is no end point).
    box : classifier
        The black box, fed the returned rows as they are.
    favorable : label
    categories : dict {column: levels}
    bounds : dict {column: (lower, upper)}
    immutable, increasing, decreasing : list of column names

    Returns
    -------
    dict
        ``returned`` (end points), ``coverage`` (returned / queries), one
        share per check of :data:`CHECKS` (over the returned end points; NaN
        when none), and ``flip_ratio`` (the share the black box gives
        ``favorable``).
    """
    got = out.notna().all(axis=1).to_numpy()
    row = {"queries": int(len(queries)), "returned": int(got.sum()),
           "coverage": float(got.mean()) if len(got) else float("nan")}
    if not got.any():
        row.update({c: float("nan") for c in CHECKS + ("flip_ratio",)})
        return row
    end, q = out[got], queries[got]
    ok = {}
    ok["categories"] = np.logical_and.reduce(
        [end[c].isin(list(levels)).to_numpy() for c, levels in categories.items()]
        or [np.ones(len(end), dtype=bool)])
    integer_columns = [c for c in queries.columns if pd.api.types.is_integer_dtype(queries[c])]
    # integral values, in an integer dtype (numpy's, or pandas' nullable Int64 when
    # the returned frame has missing rows)
    ok["integers"] = np.logical_and.reduce(
        [(end[c].astype(float) == np.rint(end[c].astype(float))).to_numpy()
         & pd.api.types.is_integer_dtype(end[c]) for c in integer_columns]
        or [np.ones(len(end), dtype=bool)])
    ok["bounds"] = np.logical_and.reduce(
        [end[c].astype(float).between(lo, hi).to_numpy() for c, (lo, hi) in bounds.items()]
        or [np.ones(len(end), dtype=bool)])

    def same(c):
        return (end[c].astype(object).to_numpy() == q[c].astype(object).to_numpy())

    ok["immutables"] = np.logical_and.reduce([same(c) for c in immutable]
                                             or [np.ones(len(end), dtype=bool)])
    ok["monotone"] = np.logical_and.reduce(
        [(end[c].astype(float) >= q[c].astype(float)).to_numpy() for c in increasing]
        + [(end[c].astype(float) <= q[c].astype(float)).to_numpy() for c in decreasing]
        or [np.ones(len(end), dtype=bool)])
    for c in CHECKS:
        row[c] = float(np.mean(ok[c]))
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*feature names.*")
        row["flip_ratio"] = float(np.mean(np.asarray(box.predict(end)) == favorable))
    return row


# ------------------------------------------------------------------ Adult

def _adult():
    train = load_adult(as_frame=True)
    test = load_adult(subset="test", as_frame=True)
    schema = adult_schema(drop=())
    half = len(test.data) // 2
    box_X, box_y = test.data.iloc[:half], test.target.iloc[:half]
    box = make_pipeline(
        ColumnTransformer([
            ("categorical", OneHotEncoder(handle_unknown="ignore"), list(schema.categories)),
            ("numeric", StandardScaler(), list(schema.bounds)),
        ]),
        LogisticRegression(max_iter=1000),
    ).fit(box_X, box_y)
    pool = test.data.iloc[half:]
    queries = pool[box.predict(pool) == 0]
    return train.data, queries, box


ADULT_CONSTRAINTS = dict(immutable=["sex", "race"], increasing=["age", "education-num"])
CANCER_CONSTRAINTS = dict(immutable=["mean texture"],
                          decreasing=["worst radius", "worst concave points"])
NO_CONSTRAINTS = dict(immutable=[], increasing=[], decreasing=[])


def _label(constraints):
    parts = [f"{k} {', '.join(v)}" for k, v in constraints.items() if v]
    return "; ".join(parts) or "none"


def adult_rows(*, epsilon=1.0, seeds=range(3), n_queries=500, constraints=ADULT_CONSTRAINTS):
    """One row per seed: PrivRecourse on raw Adult, a disjoint column-selecting Pipeline."""
    X, queries, box = _adult()
    queries = queries.iloc[:n_queries]
    schema = adult_schema(drop=())  # the 14 raw columns, fnlwgt included
    categories, bounds = schema.categories, schema.bounds
    constraints = {**NO_CONSTRAINTS, **constraints}
    rows = []
    for seed in seeds:
        t0 = time.perf_counter()
        rec = PrivRecourse(box, epsilon=epsilon, bounds=bounds, categories=categories,
                           immutable_features=constraints["immutable"],
                           increasing_features=constraints["increasing"],
                           decreasing_features=constraints["decreasing"],
                           random_state=seed).fit(X)
        fit_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        out = rec.transform(queries)
        query_s = time.perf_counter() - t0
        row = {"table": "adult (raw)", "method": "PrivRecourse", "epsilon": epsilon,
               "constraints": _label(constraints), "seed": seed,
               "nodes": int(len(rec.cluster_centers_)),
               "candidates": int(len(rec.candidates_)), "fit_s": round(fit_s, 2),
               "query_ms": round(1e3 * query_s / max(len(queries), 1), 3)}
        row.update(validity(queries, out, box, 1, categories=categories, bounds=bounds,
                            **constraints))
        rows.append(row)
    return rows


# ------------------------------------------------------------------ breast cancer

def breast_cancer_bounds(data):
    """The public (min, max) of each column, parsed from the dataset's description."""
    text = data.DESCR[data.DESCR.index("Summary Statistics"):]
    pairs = re.findall(r"^[a-z ()]+:\s+([0-9.]+)\s+([0-9.]+)\s*$", text, flags=re.M)
    if len(pairs) != len(data.feature_names):  # pragma: no cover
        raise RuntimeError("could not read the summary statistics of load_breast_cancer")
    return {name: (float(lo), float(hi)) for name, (lo, hi) in zip(data.feature_names, pairs)}


def breast_cancer_rows(*, epsilon=1.0, seeds=range(3), constraints=CANCER_CONSTRAINTS):
    """One row per seed: PrivRecourse on half of WDBC, an MLP on the other half."""
    data = load_breast_cancer(as_frame=True)
    bounds = breast_cancer_bounds(data)
    constraints = {**NO_CONSTRAINTS, **constraints}
    rows = []
    for seed in seeds:
        order = np.random.RandomState(seed).permutation(len(data.target))
        mine, theirs = order[: len(order) // 2], order[len(order) // 2:]
        X, y = data.data.iloc[mine], data.target.iloc[mine]
        box = make_pipeline(StandardScaler(), MLPClassifier((32, 16), max_iter=2000,
                                                            random_state=seed))
        box.fit(data.data.iloc[theirs], data.target.iloc[theirs])
        pool = data.data.iloc[theirs]
        queries = pool[box.predict(pool) == 0]
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="PrivRecourse: .* cannot fill")
            rec = PrivRecourse(box, epsilon=epsilon, bounds=bounds,
                               immutable_features=constraints["immutable"],
                               increasing_features=constraints["increasing"],
                               decreasing_features=constraints["decreasing"],
                               random_state=seed).fit(X)
        fit_s = time.perf_counter() - t0
        out = rec.transform(queries)
        row = {"table": "breast cancer", "method": "PrivRecourse", "epsilon": epsilon,
               "constraints": _label(constraints), "seed": seed,
               "nodes": int(len(rec.cluster_centers_)),
               "candidates": int(len(rec.candidates_)), "fit_s": round(fit_s, 2),
               "box_accuracy": float(box.score(X, y))}
        row.update(validity(queries, out, box, 1, categories={}, bounds=bounds, **constraints))
        rows.append(row)
    return rows


def recourse_rows(*, epsilon=1.0, seeds=range(3), n_queries=500):
    """PrivRecourse's rows of the target b table (Adult, then breast cancer).

    Each table twice: with its constraints, and with none (what the DP
    clustering alone allows: the coverage the constraints cost).
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="random_state=")
        warnings.filterwarnings("ignore", message="accountant=None")
        return (adult_rows(epsilon=epsilon, seeds=seeds, n_queries=n_queries)
                + adult_rows(epsilon=epsilon, seeds=seeds, n_queries=n_queries,
                             constraints=NO_CONSTRAINTS)
                + breast_cancer_rows(epsilon=epsilon, seeds=seeds)
                + breast_cancer_rows(epsilon=epsilon, seeds=seeds, constraints=NO_CONSTRAINTS))


def summary(rows):
    """Mean over seeds per table, as printed.

    A seed that returns no end point counts 0 in ``coverage`` and NaN in the
    checks and ``flip_ratio`` (left out of their means; see the JSON rows).
    """
    frame = pd.DataFrame(rows)
    cols = ["queries", "nodes", "candidates", "coverage", *CHECKS, "flip_ratio"]
    return frame.groupby(["table", "method", "epsilon", "constraints"], sort=False)[cols].mean()


def markdown(table):
    """A markdown table of :func:`summary` (no tabulate needed)."""
    flat = table.reset_index()
    head = "| " + " | ".join(flat.columns) + " |"
    rule = "|" + "---|" * len(flat.columns)
    body = ["| " + " | ".join(f"{v:.3f}" if isinstance(v, float) else str(v) for v in row)
            + " |" for row in flat.itertuples(index=False)]
    return "\n".join([head, rule, *body])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--epsilon", type=float, default=1.0)
    args = parser.parse_args()
    started, t0 = record_start(), time.perf_counter()
    rows = recourse_rows(epsilon=args.epsilon, seeds=range(args.seeds), n_queries=args.queries)
    table = summary(rows)
    print(f"\n### PrivRecourse: valid records and flips (epsilon {args.epsilon:g}, "
          f"{args.seeds} seeds, means)\n")
    print(markdown(table))
    save(RESULTS, {"rows": rows, "summary": json.loads(table.reset_index().to_json(
        orient="records")), "run": run_info(started, time.perf_counter() - t0, packages=("pandas",))})
    print(f"\nsaved {RESULTS}")


if __name__ == "__main__":
    main()
