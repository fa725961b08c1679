"""Bad input, tried on every estimator: the error it gets and what it spends.

Each case runs on a fresh estimator with its defaults (only ``random_state``
left at None and a shared ``PrivacyLedger``), on a small well-separated
problem. "clear" means scikit-learn's or skdpx's own error types
(``ValueError`` and its ``InvalidParameterError``, ``TypeError``,
``NotFittedError``, ``BudgetError``); anything else (``IndexError``,
``KeyError``, ``ZeroDivisionError``...) counts as a raw traceback. "spent"
is the number of events the ledger recorded for the refused call.

Saves ``benchmarks/results/bad_input.json`` and prints the table.

Run: python benchmarks/bad_input.py
"""

import json
from pathlib import Path
import warnings

import numpy as np
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression

from skdpx.counterfactual import DPCounterfactualGenerator
from skdpx.explain import DPLimeExplainer
from skdpx.linear import DPLocallyLinearClassifier
from skdpx.privacy import BudgetError, PrivacyLedger, gaussian_mechanism, laplace_mechanism
from skdpx.recourse import PrivRecourse

HERE = Path(__file__).resolve().parent
CLEAR = (ValueError, TypeError, NotFittedError, BudgetError)


def problem(n=200, d=4, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    return rng.normal(size=(n, d)) + 2.0 * y[:, None], y


X, Y = problem()
X_OTHER, Y_OTHER = problem(seed=1)  # the black box's own rows
BLACK_BOX = LogisticRegression().fit(X_OTHER, Y_OTHER)

MAKERS = {
    "DPLocallyLinearClassifier": lambda **kw: DPLocallyLinearClassifier(**kw),
    "DPLimeExplainer": lambda **kw: DPLimeExplainer(BLACK_BOX, **kw),
    "DPCounterfactualGenerator": lambda **kw: DPCounterfactualGenerator(BLACK_BOX, **kw),
    "PrivRecourse": lambda **kw: PrivRecourse(**kw),
}


def _nan():
    Xn = X.copy()
    Xn[3, 1] = np.nan
    return Xn


FIT_CASES = {
    "NaN in X": lambda: (_nan(), Y, {}),
    "inf in X": lambda: (np.where(X > 3, np.inf, X), Y, {}),
    "empty X": lambda: (X[:0], Y[:0], {}),
    "1-D X": lambda: (X[:, 0], Y, {}),
    "strings in X": lambda: (np.array([["a"] * 4] * 200, dtype=object), Y, {}),
    "2 rows": lambda: (X[:2], Y[:2], {}),
    "9 rows": lambda: (X[:9], Y[:9], {}),
    "one class": lambda: (X, np.zeros_like(Y), {}),
    "bounds=(0, 0)": lambda: (X, Y, {"bounds": (0, 0)}),
    "bounds lower > upper": lambda: (X, Y, {"bounds": (1, 0)}),
    "bounds of 3 for 4 features": lambda: (X, Y, {"bounds": ([0] * 3, [1] * 3)}),
    "bounds=None, delta=0": lambda: (X, Y, {"delta": 0.0}),
    "epsilon=0": lambda: (X, Y, {"epsilon": 0.0}),
    "delta=1": lambda: (X, Y, {"delta": 1.0}),
    "labels outside classes": lambda: (X, Y + 5, {"classes": [0, 1]}),
    "classes with 1 label": lambda: (X, Y, {"classes": [1]}),
    "bounds=None, epsilon_per_query 0.9": lambda: (X, Y, {"epsilon_per_query": 0.9}),
}

QUERY_CASES = {
    "query with NaN": lambda: _nan()[:5],
    "query of 3 features": lambda: X[:5, :3],
    "empty query": lambda: X[:0],
}


def run(call, ledger):
    before = len(ledger)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            call()
            outcome, message = "accepted", ""
        except Exception as exc:  # noqa: BLE001 - we classify every error
            outcome = type(exc).__name__ + ("" if isinstance(exc, CLEAR) else " (RAW)")
            message = str(exc).splitlines()[0][:90] if str(exc) else ""
    return outcome, message, len(ledger) - before


def main():
    rows = []
    for name, make in MAKERS.items():
        params = make().get_params()
        for case, build in FIT_CASES.items():
            Xc, yc, kw = build()
            if any(k not in params for k in kw):
                continue  # a parameter this estimator does not have
            if case.startswith(("labels outside", "classes with")) and (
                    "classes" not in params or name in ("DPLimeExplainer",)):
                continue
            if case.startswith(("labels outside", "classes with", "one class")) and name in (
                    "DPCounterfactualGenerator", "DPLimeExplainer"):
                continue  # with a black box, the labels are its outputs: y is not read
            ledger = PrivacyLedger()
            est = make(accountant=ledger, **kw)
            outcome, message, spent = run(lambda: est.fit(Xc, yc), ledger)
            rows.append({"estimator": name, "input": case, "outcome": outcome,
                         "message": message, "spent": spent})
        ledger = PrivacyLedger()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = make(accountant=ledger, bounds=(-6, 8)).fit(X, Y)
        for case, build in QUERY_CASES.items():
            method = "predict" if name == "DPLocallyLinearClassifier" else "explain"
            outcome, message, spent = run(lambda: getattr(est, method)(build()), ledger)
            rows.append({"estimator": name, "input": f"{method}: {case}", "outcome": outcome,
                         "message": message, "spent": spent})
    for mech, call in {"gaussian_mechanism([])": lambda led: gaussian_mechanism(
            [], epsilon=1.0, delta=1e-5, sensitivity=1.0, ledger=led),
            "laplace_mechanism([])": lambda led: laplace_mechanism(
            [], epsilon=1.0, sensitivity=1.0, ledger=led)}.items():
        ledger = PrivacyLedger()
        outcome, message, spent = run(lambda: call(ledger), ledger)
        rows.append({"estimator": "privacy core", "input": mech, "outcome": outcome,
                     "message": message, "spent": spent})

    print(f"| estimator | input | error | spent | message |\n|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['estimator']} | {r['input']} | {r['outcome']} | {r['spent']} | "
              f"{r['message']} |")
    raw = sum("(RAW)" in r["outcome"] for r in rows)
    spent = sum(r["spent"] > 0 and r["outcome"] != "accepted" for r in rows)
    accepted = [f"{r['estimator']}: {r['input']}" for r in rows if r["outcome"] == "accepted"]
    print(f"\n{len(rows)} cases: {raw} raw tracebacks, {spent} refused inputs that spent; "
          f"accepted: {accepted or 'none'}")
    out = HERE / "results" / "bad_input.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"rows": rows, "raw_tracebacks": raw,
                               "refused_but_spent": spent, "accepted": accepted}, indent=2))
    print(f"saved {out}")


if __name__ == "__main__":
    main()
