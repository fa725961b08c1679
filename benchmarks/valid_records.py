"""Valid records and verified flips at epsilon 1 (issue 19, target b).

Two tables, every method at epsilon = 1 (delta = 1e-5), several seeds:

(i) **raw Adult** (``load_adult(as_frame=True)``, 13 columns: fnlwgt
    dropped; integer and categorical columns as loaded, missing categories
    included). The explainer is fitted on the training split (32,561 rows)
    with Adult's public schema (:func:`skdpx.datasets.adult_schema`: bounds
    and categories declared, never read from the rows). The black box is a
    column-selecting Pipeline (``ColumnTransformer``: numeric columns
    standardised, categorical ones one-hot by name; an MLP with 64 tanh
    units) fitted on the second half of the test split, disjoint from the
    explainer's rows. Queries: applicants of the first half of the test
    split whom the black box denies (``<=50K``); desired class ``>50K``.
    Constraints: ``sex`` and ``race`` immutable, ``age`` increasing.
(ii) **a small numeric table**: scikit-learn's breast cancer data (569 rows,
    30 numeric columns), split three ways: the explainer's private rows
    (285), the black box's (142: a Pipeline of StandardScaler and an MLP with
    32 units) and the queries (142, desired class: the other one). The
    declared bounds come from the black box's rows (public with respect to
    the explainer's), widened by 10% of their range (lower ends at 0 at
    most, the features are non-negative). The same with black boxes that
    have only ``decision_function`` (an RBF SVC, "breast cancer, SVC") or
    only ``predict`` (the MLP behind a wrapper, "breast cancer, predict").

Measured per method on the records it returns (in original units): the
share of valid records among the returned rows -- categories (a declared
level), integers (integer columns integral), bounds (numeric columns within
the declared bounds), immutables (equal to the query's), monotone (age at
least the query's) -- all must be 1.0; and the flip ratio: the share of all
queries whose returned record the black box, called again on the record
itself, puts in the desired class (a query with no record counts as a
failure); the aim is at least 0.9.

Methods are entries of ``METHODS``: a function ``(case, seed) -> records``
(a DataFrame with the case's columns, one row per query, missing values where
the method returns none), or ``-> (records, info)`` with a dict of extra
figures saved with the run. DPCounterfactualGenerator's is here; PrivRecourse's
row is added by ``METHODS["PrivRecourse"] = ...`` (its own helper), on the
same cases (:func:`adult_case`, :func:`small_case`) and checks
(:func:`check_records`).

Saves ``benchmarks/results/valid_records.json`` and prints the table; each
case keeps the ``_run_record`` (commit, date, versions, machine, command) of
the run that last wrote it (``run``; an earlier one that wrote some of its
methods' rows in ``earlier_runs``).

``--methods "DPC, latent search only"`` adds the same fits with the latent
search alone (``line_steps=0``): the search before it continued in input space.

Run: python benchmarks/valid_records.py [--seeds N] [--queries N] [--cases adult small]
[--methods NAME ...]
"""

import argparse
import json
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_breast_cancer
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.svm import SVC

from skdpx.counterfactual import DPCounterfactualGenerator
from skdpx.datasets import adult_schema, load_adult
from skdpx.privacy import PrivacyLedger

HERE = Path(__file__).resolve().parent

from _run_record import run_info, save, start as record_start  # noqa: E402
EPSILON, DELTA = 1.0, 1e-5
CHECKS = ("categories", "integers", "bounds", "immutables", "monotone")


@dataclass
class Case:
    """One table: the private rows, the black box, the queries and the public schema."""

    name: str
    X: pd.DataFrame  # the explainer's private rows
    black_box: object  # fitted on other rows
    queries: pd.DataFrame
    desired: np.ndarray  # per query
    bounds: dict
    categories: dict = field(default_factory=dict)
    immutable: list = field(default_factory=list)
    increasing: list = field(default_factory=list)
    decreasing: list = field(default_factory=list)
    classes: list = None
    note: str = ""


def adult_case(n_queries=300, seed=0):
    """Raw Adult; a column-selecting Pipeline fitted on half the test split (disjoint)."""
    schema = adult_schema()
    columns = schema.features
    train = load_adult(subset="train", as_frame=True)
    test = load_adult(subset="test", as_frame=True)
    X = train.data[columns]
    X_test, y_test = test.data[columns], np.asarray(test.target)
    half = len(X_test) // 2
    numeric = [c for c in columns if c in schema.bounds]
    categorical = [c for c in columns if c in schema.categories]
    model = make_pipeline(
        ColumnTransformer([
            ("num", StandardScaler(), numeric),
            ("cat", OneHotEncoder(categories=[schema.categories[c] for c in categorical],
                                  handle_unknown="ignore"), categorical),
        ]),
        MLPClassifier(hidden_layer_sizes=(64,), activation="tanh", max_iter=300,
                      random_state=0),
    ).fit(X_test.iloc[half:], y_test[half:])
    pool = X_test.iloc[:half]
    denied = np.flatnonzero(model.predict(pool) == 0)
    rows = np.sort(np.random.RandomState(seed).choice(denied, n_queries, replace=False))
    queries = pool.iloc[rows].reset_index(drop=True)
    accuracy = float(np.mean(model.predict(pool) == y_test[:half]))
    return Case(
        "Adult (raw)", X, model, queries, np.ones(n_queries, dtype=int),
        bounds=schema.bounds, categories=schema.categories, immutable=["sex", "race"],
        increasing=["age"], classes=[0, 1],
        note=(f"{len(X):,} private rows, {len(columns)} columns; black box: Pipeline("
              f"ColumnTransformer, MLP 64 tanh) on {len(X_test) - half:,} test rows, "
              f"accuracy {accuracy:.4f} on the other {half:,}; {n_queries} denied queries, "
              "desired >50K; sex, race immutable, age increasing"))


class PredictOnly:
    """A black box with only ``predict`` and ``classes_`` (no scores at all)."""

    def __init__(self, model):
        self.model, self.classes_ = model, model.classes_

    def predict(self, X):
        return self.model.predict(X)


def small_case(seed=0, interface="predict_proba"):
    """Breast cancer: 285 private rows, 142 for the black box, 142 queries.

    ``interface``: the black box's outputs. "predict_proba": the MLP;
    "decision_function": an RBF SVC without probabilities; "predict": the MLP
    behind :class:`PredictOnly`.
    """
    data = load_breast_cancer(as_frame=True)
    frame, y = data.data, np.asarray(data.target)
    order = np.random.RandomState(seed).permutation(len(frame))
    private, mine, query = order[:285], order[285:427], order[427:]
    X_model = frame.iloc[mine]
    if interface == "decision_function":
        model = make_pipeline(StandardScaler(), SVC()).fit(X_model, y[mine])
        name, label = "breast cancer, SVC", "Pipeline(StandardScaler, SVC): decision_function only"
    else:
        model = make_pipeline(StandardScaler(),
                              MLPClassifier(hidden_layer_sizes=(32,), max_iter=2000,
                                            random_state=0)).fit(X_model, y[mine])
        name, label = "breast cancer", "Pipeline(StandardScaler, MLP 32)"
        if interface == "predict":
            model = PredictOnly(model)
            name, label = "breast cancer, predict", label + " behind predict only"
    lo, hi = X_model.min(), X_model.max()
    bounds = {c: (float(max(lo[c] - 0.1 * (hi[c] - lo[c]), 0.0)),
                  float(hi[c] + 0.1 * (hi[c] - lo[c]))) for c in frame.columns}
    queries = frame.iloc[query].reset_index(drop=True)
    desired = 1 - model.predict(queries)
    accuracy = float(np.mean(model.predict(queries) == y[query]))
    return Case(
        name, frame.iloc[private].reset_index(drop=True), model, queries, desired,
        bounds=bounds, classes=[0, 1],
        note=(f"{len(private)} private rows, {frame.shape[1]} numeric columns; black box: "
              f"{label} on {len(mine)} other rows, accuracy "
              f"{accuracy:.4f} on the {len(query)} queries; desired: the other class"))


def dpc_records(case, seed):
    """DPCounterfactualGenerator's counterfactual records for ``case`` (defaults but the schema)."""
    dpc = DPCounterfactualGenerator(
        case.black_box, epsilon=EPSILON, delta=DELTA, bounds=case.bounds,
        categories=case.categories or None, classes=case.classes,
        immutable_features=case.immutable or None, increasing_features=case.increasing or None,
        decreasing_features=case.decreasing or None,
        accountant=PrivacyLedger(epsilon=EPSILON, delta=DELTA), random_state=seed,
    ).fit(case.X)
    result = dpc.explain(case.queries, desired_class=case.desired)
    return result.counterfactual_records, {"found_by": result.meta["found_by"]}


def dpc_latent_only_records(case, seed):
    """The same fit, the latent search alone (``line_steps=0``): what DPC returned before."""
    dpc = DPCounterfactualGenerator(
        case.black_box, epsilon=EPSILON, delta=DELTA, bounds=case.bounds,
        categories=case.categories or None, classes=case.classes,
        immutable_features=case.immutable or None, increasing_features=case.increasing or None,
        decreasing_features=case.decreasing or None, line_steps=0,
        accountant=PrivacyLedger(epsilon=EPSILON, delta=DELTA), random_state=seed,
    ).fit(case.X)
    return dpc.explain(case.queries, desired_class=case.desired).counterfactual_records


#: method name -> function (case, seed) -> records (one row per query, missing where none)
METHODS = {"DPCounterfactualGenerator": dpc_records}
#: run with --methods "DPC, latent search only" (not by default)
BASELINES = {"DPC, latent search only": dpc_latent_only_records}


def check_records(case, records):
    """Validity shares over the returned rows, and the flip ratio over all queries."""
    records = records.reset_index(drop=True)
    returned = ~records.isna().all(axis=1).to_numpy()
    got, q = records[returned], case.queries[returned]
    shares = {}

    def share(ok):
        ok = np.asarray(ok, dtype=bool)
        return float(ok.mean()) if ok.size else float("nan")

    cat_ok = np.ones(len(got), dtype=bool)
    for column, levels in case.categories.items():
        cat_ok &= got[column].isin(levels).to_numpy() & got[column].notna().to_numpy()
    shares["categories"] = share(cat_ok) if case.categories else None
    integer = [c for c in case.X.columns if case.X[c].dtype.kind in "iu"]
    int_ok = np.ones(len(got), dtype=bool)
    for column in integer:
        values = got[column].to_numpy(dtype=float)
        int_ok &= np.isfinite(values) & (values == np.rint(values))
    shares["integers"] = share(int_ok) if integer else None
    bound_ok = np.ones(len(got), dtype=bool)
    for column, (lo, hi) in case.bounds.items():
        values = got[column].to_numpy(dtype=float)
        bound_ok &= (values >= lo) & (values <= hi)
    shares["bounds"] = share(bound_ok)
    imm_ok = np.ones(len(got), dtype=bool)
    for column in case.immutable:
        imm_ok &= (got[column].astype(object).to_numpy() == q[column].astype(object).to_numpy())
    shares["immutables"] = share(imm_ok) if case.immutable else None
    mono_ok = np.ones(len(got), dtype=bool)
    for column in case.increasing:
        mono_ok &= got[column].to_numpy(dtype=float) >= q[column].to_numpy(dtype=float)
    for column in case.decreasing:
        mono_ok &= got[column].to_numpy(dtype=float) <= q[column].to_numpy(dtype=float)
    shares["monotone"] = share(mono_ok) if case.increasing or case.decreasing else None
    # the flip, re-checked by the black box on the records themselves (its input kind)
    flips = np.zeros(len(records), dtype=bool)
    if returned.any():
        rows = got.astype(case.X.dtypes.to_dict())
        flips[returned] = case.black_box.predict(rows) == case.desired[returned]
    return {"n_queries": int(len(records)), "returned": float(returned.mean()),
            "flip_ratio": float(flips.mean()), **shares}


def run_case(case, methods, seeds):
    out = {"note": case.note, "seeds": list(seeds), "methods": {}}
    for name, make in methods.items():
        runs = []
        for seed in seeds:
            t0 = time.perf_counter()
            records = make(case, seed)
            seconds = time.perf_counter() - t0
            records, info = records if isinstance(records, tuple) else (records, {})
            runs.append({"seed": int(seed), "seconds": seconds, **check_records(case, records),
                         **info})
            print(f"  {case.name:<22} {name:<27} seed {seed}: flip {runs[-1]['flip_ratio']:.3f} "
                  f"({seconds:.0f} s)", flush=True)
        out["methods"][name] = {"runs": runs, "mean": _mean(runs), "min_flip_ratio":
                                min(r["flip_ratio"] for r in runs)}
    return out


def _mean(runs):
    keys = [k for k in runs[0] if k != "seed" and not isinstance(runs[0][k], dict)]
    return {k: (None if runs[0][k] is None else float(np.nanmean([r[k] for r in runs])))
            for k in keys}


def print_table(results):
    head = (f"{'table':<22} {'method':<27} {'flip':>6} {'(min)':>6} {'returned':>8} "
            + "".join(f"{c:>11}" for c in CHECKS) + f" {'s/run':>7}")
    print(head)
    print("-" * len(head))
    for case, entry in results["cases"].items():
        for name, m in entry["methods"].items():
            mean = m["mean"]
            cells = "".join(f"{'-':>11}" if mean[c] is None else f"{mean[c]:>11.3f}"
                            for c in CHECKS)
            print(f"{case:<22} {name:<27} {mean['flip_ratio']:>6.3f} {m['min_flip_ratio']:>6.3f} "
                  f"{mean['returned']:>8.3f}{cells} {mean['seconds']:>7.0f}")


CASES = {"adult": adult_case, "small": small_case,
         "small-decision": lambda: small_case(interface="decision_function"),
         "small-predict": lambda: small_case(interface="predict")}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--queries", type=int, default=300, help="Adult queries")
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--methods", nargs="+", default=None)
    parser.add_argument("--out", default=str(HERE / "results" / "valid_records.json"))
    args = parser.parse_args(argv)
    started = record_start()
    warnings.simplefilter("ignore")  # seeded runs and per-fit ledgers, on purpose
    methods = {k: v for k, v in {**METHODS, **BASELINES}.items()
               if (k in METHODS if args.methods is None else k in args.methods)}
    results = {"epsilon": EPSILON, "delta": DELTA, "cases": {}}
    path = Path(args.out)
    if path.exists():  # keep other methods' rows (e.g. PrivRecourse's) from earlier runs
        old = json.loads(path.read_text())
        for case, entry in old.get("cases", {}).items():
            entry.setdefault("seeds", sorted({r["seed"] for m in entry["methods"].values()
                                              for r in m["runs"]}))
            results["cases"].setdefault(case, entry)
    for key in args.cases:
        case = adult_case(args.queries) if key == "adult" else CASES[key]()
        print(f"{case.name}: {case.note}", flush=True)
        t0 = time.perf_counter()
        entry = run_case(case, methods, range(args.seeds))
        old = results["cases"].get(case.name, {})
        kept = old.get("methods", {})
        entry["methods"] = {**{k: v for k, v in kept.items() if k not in entry["methods"]},
                            **entry["methods"]}
        earlier = old.get("earlier_runs", []) + ([old["run"]] if "run" in old else [])
        if kept.keys() - entry["methods"].keys() or earlier:
            entry["earlier_runs"] = earlier
        entry["run"] = run_info(started, time.perf_counter() - t0, packages=("pandas",))
        results["cases"][case.name] = entry
    save(path, results)
    print()
    print_table(results)
    return results


if __name__ == "__main__":
    main()
