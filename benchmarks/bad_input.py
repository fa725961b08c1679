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


class BrokenBox:
    """A fitted binary classifier whose outputs are ``mode``'s while ``broken``
    (issue 36: a model server that is down, NaN, inf, None, 1-D, 3 columns,
    strings, one row too few); BLACK_BOX's otherwise."""

    def __init__(self, mode, broken=True):
        self.mode, self.broken = mode, broken
        self.classes_ = BLACK_BOX.classes_

    def _out(self, rows, method):
        good = getattr(BLACK_BOX, method)(np.asarray(rows, dtype=float))
        if not self.broken:
            return good
        mode = self.mode
        if mode == "raises":
            raise RuntimeError("the model server is down")
        if mode in ("NaN", "inf"):
            return np.full(good.shape, np.nan if mode == "NaN" else np.inf)
        if mode == "None":
            return None
        if mode == "1-D":
            return good[:, 1] if good.ndim == 2 else good + 0.5
        if mode == "3 columns":
            return np.tile(good.reshape(len(good), -1)[:, :1], 3)
        if mode == "strings":
            return np.full(good.shape, "a")
        return good[:-1]  # one row too few

    def predict(self, rows):
        return self._out(rows, "predict")

    def predict_proba(self, rows):
        return self._out(rows, "predict_proba")


BOX_MODES = ["raises", "NaN", "inf", "None", "1-D", "3 columns", "strings", "one row too few"]
BOX_MAKERS = {
    "DPLimeExplainer": lambda box, **kw: DPLimeExplainer(box, **kw),
    "DPCounterfactualGenerator": lambda box, **kw: DPCounterfactualGenerator(box, **kw),
    "PrivRecourse": lambda box, **kw: PrivRecourse(box, **kw),
}


def _nan_answers(result):
    """Whether a result holds a NaN answer marked valid (interactive, valid, success)."""
    if hasattr(result, "phase"):
        return bool(np.isnan(result.values).any())
    ok = result.valid if hasattr(result, "valid") else result.success
    return bool(np.isnan(np.asarray(result.counterfactuals, dtype=float)[ok]).any())


def _frame(kind):
    import pandas as pd

    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    if kind == "string":
        df["e"] = np.where(Y == 1, "yes", "no")
    elif kind == "category":
        df["e"] = pd.Categorical(np.where(Y == 1, "yes", "no"))
    else:
        df["e"] = pd.Timestamp("2020-01-01") + pd.to_timedelta(np.arange(len(Y)), "D")
    return df

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
    # issue 36: knowable before the commit
    "DataFrame, string column, tuple bounds": lambda: (_frame("string"), Y, {"bounds": (-6, 8)}),
    "DataFrame, category column, tuple bounds": lambda: (_frame("category"), Y,
                                                         {"bounds": (-6, 8)}),
    "DataFrame, datetime column, tuple bounds": lambda: (_frame("datetime"), Y,
                                                         {"bounds": (-6, 8)}),
    "desired_class=5": lambda: (X, Y, {"desired_class": 5}),
    "n_jobs=0": lambda: (X, Y, {"n_jobs": 0}),
    "y one row too few": lambda: (X, Y[:-1], {}),
}

QUERY_CASES = {
    "query with NaN": lambda: _nan()[:5],
    "query of 3 features": lambda: X[:5, :3],
    "empty query": lambda: X[:0],
}


def run(call, ledger, after_commit=False):
    """(outcome, first line of the message, events recorded). ``after_commit``: an
    error whose message does not say what was spent is marked "(not saying spent)"."""
    before = len(ledger)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = call()
            outcome, message = "accepted", ""
            if result is not None and hasattr(result, "meta") and _nan_answers(result):
                outcome = "accepted (NaN answer)"
        except Exception as exc:  # noqa: BLE001 - we classify every error
            outcome = type(exc).__name__ + ("" if isinstance(exc, CLEAR) else " (RAW)")
            if after_commit and "spent" not in str(exc):
                outcome += " (not saying spent)"
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
            # n_jobs is read by DPLimeExplainer's answers: fit, then explain
            call = ((lambda: est.fit(Xc, yc).explain(X[:5])) if "n_jobs" in kw
                    else (lambda: est.fit(Xc, yc)))
            outcome, message, spent = run(call, ledger)
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
    # issue 36: a broken black box, found on the public probe points (fit, then explain:
    # nothing may be spent), or breaking after the fit (explain: an error saying spent)
    for name, make in BOX_MAKERS.items():
        for mode in BOX_MODES:
            ledger = PrivacyLedger()
            est = make(BrokenBox(mode), accountant=ledger, bounds=(-6, 8))
            outcome, message, spent = run(lambda: est.fit(X, Y).explain(X[:5]), ledger)
            rows.append({"estimator": name, "input": f"black box {mode}: fit, explain",
                         "outcome": outcome, "message": message, "spent": spent})
            ledger = PrivacyLedger()
            box = BrokenBox(mode, broken=False)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est = make(box, accountant=ledger, bounds=(-6, 8)).fit(X, Y)
            box.broken = True
            outcome, message, spent = run(lambda: est.explain(X[:5]), ledger, after_commit=True)
            rows.append({"estimator": name, "input": f"black box {mode} after fit: explain",
                         "outcome": outcome, "message": message, "spent": spent})
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
    accepted = [f"{r['estimator']}: {r['input']}" for r in rows
                if r["outcome"].startswith("accepted")]
    nan = sum(r["outcome"] == "accepted (NaN answer)" for r in rows)
    silent = sum("(not saying spent)" in r["outcome"] for r in rows)
    print(f"\n{len(rows)} cases: {raw} raw tracebacks, {spent} refused inputs that spent, "
          f"{nan} accepted with NaN answers, {silent} errors after the commit not saying spent; "
          f"accepted: {accepted or 'none'}")
    out = HERE / "results" / "bad_input.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"rows": rows, "raw_tracebacks": raw,
                               "refused_but_spent": spent, "nan_answers": nan,
                               "after_commit_not_saying_spent": silent,
                               "accepted": accepted}, indent=2))
    print(f"saved {out}")


if __name__ == "__main__":
    main()
