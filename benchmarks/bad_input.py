"""Bad input, tried on every public entry point: the error it gets and what it spends.

Each case runs on a fresh estimator with its defaults (only ``random_state``
left at None and a shared ``PrivacyLedger``), on a small well-separated
problem. "clear" means scikit-learn's or skdpx's own error types
(``ValueError`` and its ``InvalidParameterError``, ``TypeError``,
``NotFittedError``, ``BudgetError``); anything else (``IndexError``,
``KeyError``, ``ZeroDivisionError``...) counts as a raw traceback. "spent"
is the number of events the ledger recorded for the refused call.

Since issue 36 (target a) the cases are also generated as cross products of
entry points and bad values (``BAD``: -1, 0, NaN, inf, a wrong type, True, a
string, an empty list): every constructor parameter of the four estimators,
of ``DPGridSearchCV``/``DPRandomSearchCV`` and every argument of
``privacy_utility_curve``, fit inputs of other dtypes and shapes, queries
of the wrong width/dtype/shape, black boxes that break (or are slow), the
mechanisms and calibrations of ``skdpx.privacy``, ``PrivacyLedger``'s
arguments and file paths, the public functions of ``skdpx.attacks`` and the
result objects (``plot``, indexing, ``from_json``, ``to_frame``). A case that
runs longer than ``TIMEOUT`` seconds is stopped and marked "timeout". An
answer holding NaN (a float array or number returned, or an explanation's
values) is "accepted (NaN answer)".

Saves ``benchmarks/results/bad_input.json`` (with ``_run_record``'s date,
commit, versions and machine) and prints the table.

Run: python benchmarks/bad_input.py
"""

import json
import os
from pathlib import Path
import signal
import sys
import tempfile
import time
import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import numpy as np
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression

from skdpx.counterfactual import DPCounterfactualGenerator
from skdpx.explain import DPLimeExplainer
from skdpx.locally_linear import DPLocallyLinearClassifier
from skdpx.exceptions import LedgerDetachedError, LedgerIntegrityError
from skdpx.privacy import BudgetError, PrivacyLedger, gaussian_mechanism, laplace_mechanism
from skdpx.recourse import PrivRecourse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _run_record import run_info, save, start  # noqa: E402

HERE = Path(__file__).resolve().parent
CLEAR = (ValueError, TypeError, NotFittedError, BudgetError, LedgerIntegrityError,
         LedgerDetachedError)


def _clear(exc):
    """Whether ``exc`` is a clear error: the library's or scikit-learn's kinds, or
    an OSError the ledger raised for its file (it names the path and says that
    nothing was spent; a bare ``open()`` error does neither)."""
    if isinstance(exc, CLEAR):
        return True
    return (isinstance(exc, OSError) and exc.filename is not None
            and "nothing was spent" in str(exc).lower())


def _refused_on_count(message):
    """A search or curve that refused on its DP row count: the count's share was
    spent (its message says so); how many rows there are is private, so this is
    not knowable before the commit (doc/model_selection.rst)."""
    return "row count's epsilon" in message and "nothing else was" in message


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
        if mode == "slow (10 ms a call)":
            time.sleep(0.01)
            return good
        if mode == "negative probabilities":
            return -np.abs(good) if good.dtype.kind == "f" else good
        if mode == "complex":
            return good.astype(complex) + 1j
        if mode == "list":
            return good.tolist()
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


BOX_MODES = ["raises", "NaN", "inf", "None", "1-D", "3 columns", "strings", "one row too few",
             "slow (10 ms a call)", "negative probabilities", "complex", "list"]
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
    # issue 36 (target a): other dtypes and shapes
    "int X": lambda: (np.round(X).astype(int), Y, {}),
    "float32 X": lambda: (X.astype(np.float32), Y, {}),
    "bool X": lambda: (X > 1, Y, {}),
    "complex X": lambda: (X + 1j, Y, {}),
    "object X of numbers": lambda: (X.astype(object), Y, {}),
    "nested list X": lambda: (X.tolist(), Y.tolist(), {}),
    "sparse X": lambda: (__import__("scipy.sparse").sparse.csr_matrix(X), Y, {}),
    "3-D X": lambda: (X.reshape(200, 2, 2), Y, {}),
    "X None": lambda: (None, Y, {}),
    "scalar X": lambda: (1.0, Y, {}),
    "NaN in y": lambda: (X, np.where(np.arange(200) == 3, np.nan, Y.astype(float)), {}),
    "string y": lambda: (X, np.where(Y == 1, "yes", "no"), {}),
    "float y (0.5 steps)": lambda: (X, Y * 0.5, {}),
    "2-D y": lambda: (X, np.c_[Y, Y], {}),
    "1 feature": lambda: (X[:, :1], Y, {}),
    "all-constant X": lambda: (np.zeros_like(X), Y, {}),
}

QUERY_CASES = {
    "query with NaN": lambda: _nan()[:5],
    "query of 3 features": lambda: X[:5, :3],
    "empty query": lambda: X[:0],
    # issue 36 (target a)
    "query of 5 features": lambda: np.c_[X[:5], X[:5, :1]],
    "query with inf": lambda: np.where(X[:5] > 1, np.inf, X[:5]),
    "query of strings": lambda: np.full((5, 4), "a", dtype=object),
    "1-D query": lambda: X[0],
    "3-D query": lambda: X[:4].reshape(2, 2, 4),
    "list query": lambda: X[:5].tolist(),
    "None query": lambda: None,
    "complex query": lambda: X[:5] + 1j,
    "bool query": lambda: X[:5] > 1,
    "scalar query": lambda: 1.0,
    "query outside the bounds (1e6)": lambda: np.full((5, 4), 1e6),
}


TIMEOUT = 20  # seconds a case may run


class _Timeout(BaseException):
    """Raised by the alarm in a case that runs longer than ``TIMEOUT``."""


def _alarm(signum, frame):
    raise _Timeout


def _nan_plain(result):
    """Whether a plain answer (a float, a float array) holds NaN."""
    if isinstance(result, (float, np.floating)):
        return bool(np.isnan(result))
    if isinstance(result, np.ndarray) and result.dtype.kind in "fc":
        return bool(np.isnan(result).any())
    return False


def run(call, ledger, after_commit=False):
    """(outcome, first line of the message, events recorded). ``after_commit``: an
    error whose message does not say what was spent is marked "(not saying spent)"."""
    before = len(ledger)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, TIMEOUT)
        try:
            result = call()
            signal.setitimer(signal.ITIMER_REAL, 0)
            outcome, message = "accepted", ""
            try:
                nan = (_nan_answers(result) if result is not None and hasattr(result, "meta")
                       and hasattr(result, "n_features") else _nan_plain(result))
            except Exception:  # noqa: BLE001 - a result we cannot read is no NaN answer
                nan = False
            if nan:
                outcome = "accepted (NaN answer)"
        except _Timeout:
            outcome, message = f"timeout (> {TIMEOUT} s)", ""
        except Exception as exc:  # noqa: BLE001 - we classify every error
            signal.setitimer(signal.ITIMER_REAL, 0)
            outcome = type(exc).__name__ + ("" if _clear(exc) else " (RAW)")
            if after_commit and "spent" not in str(exc):
                outcome += " (not saying spent)"
            if _refused_on_count(str(exc)):
                outcome += " (on its DP row count)"
            message = str(exc).splitlines()[0][:90] if str(exc) else ""
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            plt.close("all")
    try:
        spent = len(ledger) - before
    except Exception:  # noqa: BLE001
        spent = 0
    return outcome, message, spent


# ------------------------------------------------------------------ issue 36 (target a)
BAD = {"-1": -1, "0": 0, "NaN": float("nan"), "inf": float("inf"),
       "wrong type (object())": object(), "True": True, "string 'x'": "x", "empty list": []}
CLASSES = {
    "DPLocallyLinearClassifier": (DPLocallyLinearClassifier, {}),
    "DPLimeExplainer": (DPLimeExplainer, {"estimator": BLACK_BOX}),
    "DPCounterfactualGenerator": (DPCounterfactualGenerator, {"estimator": BLACK_BOX}),
    "PrivRecourse": (PrivRecourse, {}),
}


def _row(rows, entry, case, call, ledger=None, after_commit=False):
    ledger = PrivacyLedger() if ledger is None else ledger
    outcome, message, spent = run(call, ledger, after_commit=after_commit)
    rows.append({"estimator": entry, "input": case, "outcome": outcome, "message": message,
                 "spent": spent})


def _answer(est):
    return est.predict(X[:3]) if hasattr(est, "predict") and not hasattr(est, "explain") \
        else est.explain(X[:3])


def constructor_cases(rows):
    """Every constructor parameter of the four estimators x BAD: fit, then answer."""
    for name, (cls, base) in CLASSES.items():
        params = sorted(cls(**base).get_params())
        for param in params:
            for label, value in BAD.items():
                ledger = PrivacyLedger()
                kw = {**base, "accountant": ledger}
                if param != "bounds":
                    kw["bounds"] = (-6, 8)
                kw[param] = value

                def call(kw=kw):
                    return _answer(cls(**kw).fit(X, Y))
                _row(rows, name, f"{param}={label}", call, ledger)


def _search(kind, ledger, **kw):
    from skdpx.model_selection import DPGridSearchCV, DPRandomSearchCV

    est = kw.pop("estimator", DPLocallyLinearClassifier(epochs=1, bounds=(-6, 8)))
    space = kw.pop("space", {"beta": [0.5, 1.0]})
    base = {"accountant": ledger, "random_state": 0}
    if kind == "DPGridSearchCV":
        return DPGridSearchCV(est, space, **{**base, **kw})
    return DPRandomSearchCV(est, space, **{"n_iter": 2, **base, **kw})


SEARCH_PARAMS = ["estimator", "space", "n_iter", "scoring", "epsilon", "delta", "accountant",
                 "cv", "refit", "refit_share", "selection", "eta", "n_jobs", "random_state"]


def search_cases(rows):
    """DPGridSearchCV/DPRandomSearchCV: every parameter x BAD, and bad fit data;
    privacy_utility_curve: every argument x BAD, and bad fit data."""
    from skdpx.model_selection import privacy_utility_curve

    for kind in ("DPGridSearchCV", "DPRandomSearchCV"):
        pname = "param_grid" if kind == "DPGridSearchCV" else "param_distributions"
        for param in SEARCH_PARAMS:
            for label, value in BAD.items():
                ledger = PrivacyLedger()

                def call(param=param, value=value, ledger=ledger, kind=kind):
                    return _search(kind, ledger, **{param: value}).fit(X, Y).predict(X[:3])
                _row(rows, kind, f"{pname if param == 'space' else param}={label}", call,
                     ledger)
        for case, build in FIT_CASES.items():
            Xc, yc, kw = build()
            if kw:
                continue
            ledger = PrivacyLedger()
            _row(rows, kind, f"fit: {case}",
                 lambda Xc=Xc, yc=yc, ledger=ledger, kind=kind: _search(kind, ledger).fit(Xc, yc),
                 ledger)
    curve_args = ["estimator", "X", "y", "epsilons", "delta", "scoring", "X_val", "y_val",
                  "cv", "accountant", "return_estimators", "n_jobs", "random_state"]
    for param in curve_args:
        for label, value in BAD.items():
            ledger = PrivacyLedger()
            kw = {"estimator": DPLocallyLinearClassifier(epochs=1, bounds=(-6, 8)), "X": X,
                  "y": Y, "epsilons": [0.5, 1.0], "accountant": ledger, "random_state": 0}
            if param == "y_val":
                kw["X_val"] = X_OTHER
            kw[param] = value
            if param == "X_val":
                kw["y_val"] = Y_OTHER
            _row(rows, "privacy_utility_curve", f"{param}={label}",
                 lambda kw=kw: privacy_utility_curve(**kw).scores, ledger)
    for case, build in FIT_CASES.items():
        Xc, yc, kw = build()
        if kw:
            continue
        ledger = PrivacyLedger()
        _row(rows, "privacy_utility_curve", f"fit: {case}",
             lambda Xc=Xc, yc=yc, ledger=ledger: privacy_utility_curve(
                 DPLocallyLinearClassifier(epochs=1, bounds=(-6, 8)), Xc, yc,
                 epsilons=[0.5, 1.0], accountant=ledger, random_state=0).scores, ledger)


def mechanism_cases(rows):
    """The mechanisms and calibrations of skdpx.privacy: every argument x BAD."""
    from skdpx import privacy as P

    entries = {
        "gaussian_mechanism": (P.gaussian_mechanism, {"value": np.ones(3), "epsilon": 1.0,
                               "delta": 1e-5, "sensitivity": 1.0, "random_state": 0,
                               "label": "g"}),
        "laplace_mechanism": (P.laplace_mechanism, {"value": np.ones(3), "epsilon": 1.0,
                              "sensitivity": 1.0, "random_state": 0, "label": "l"}),
        "exponential_mechanism": (P.exponential_mechanism, {"utility": np.arange(3.0),
                                  "epsilon": 1.0, "sensitivity": 1.0, "monotonic": False,
                                  "random_state": 0, "label": "e"}),
        "calibrate_noise": (P.calibrate_noise, {"epsilon": 1.0, "delta": 1e-5, "steps": 1,
                            "sample_rate": 1.0, "accounting": "pld"}),
        "gaussian_epsilon": (P.gaussian_epsilon, {"noise_multiplier": 1.0, "delta": 1e-5,
                             "steps": 1, "sample_rate": 1.0, "accounting": "pld"}),
        "calibrate_laplace": (P.calibrate_laplace, {"epsilon": 1.0, "delta": 0.0, "steps": 1}),
        "laplace_epsilon": (P.laplace_epsilon, {"noise_multiplier": 1.0, "delta": 0.0,
                            "steps": 1}),
    }
    for name, (fn, base) in entries.items():
        takes_ledger = name.endswith("mechanism")
        for param in [*base, *(["ledger"] if takes_ledger else [])]:
            for label, value in BAD.items():
                ledger = PrivacyLedger()
                kw = {**base, **({"ledger": ledger} if takes_ledger else {}), param: value}
                _row(rows, f"privacy.{name}", f"{param}={label}",
                     lambda fn=fn, kw=kw: fn(**kw), ledger)
    for case, build in {"value=[]": lambda led: P.gaussian_mechanism(
            [], epsilon=1.0, delta=1e-5, sensitivity=1.0, ledger=led),
            "utility=[]": lambda led: P.exponential_mechanism(
            [], epsilon=1.0, sensitivity=1.0, ledger=led),
            "utility with NaN": lambda led: P.exponential_mechanism(
            [0.0, np.nan], epsilon=1.0, sensitivity=1.0, ledger=led),
            "utility with inf": lambda led: P.exponential_mechanism(
            [0.0, np.inf], epsilon=1.0, sensitivity=1.0, ledger=led),
            "value of strings": lambda led: P.laplace_mechanism(
            np.array(["a", "b"]), epsilon=1.0, sensitivity=1.0, ledger=led),
            "2-D value with NaN": lambda led: P.gaussian_mechanism(
            np.full((2, 2), np.nan), epsilon=1.0, delta=1e-5, sensitivity=1.0, ledger=led),
            # extreme noise with sampling: the PLD grid overflowed or asked for 364 TiB
            **{f"gaussian_epsilon(noise_multiplier={z:g}, sampled)": (
                lambda led, z=z: P.gaussian_epsilon(z, 1e-5, steps=10, sample_rate=0.1))
               for z in (1e-300, 1e-5, 1e200, np.inf)},
            }.items():
        ledger = PrivacyLedger()
        _row(rows, "privacy core", case, lambda build=build, ledger=ledger: build(ledger), ledger)


def ledger_cases(rows):
    """PrivacyLedger's arguments x BAD, and bad file paths: build, then one spend."""
    from skdpx import privacy as P

    def spend_on(kw):
        led = PrivacyLedger(**kw)
        return P.gaussian_mechanism(1.0, epsilon=0.1, delta=1e-7, sensitivity=1.0,
                                    random_state=0, ledger=led)

    tmp = Path(tempfile.mkdtemp(prefix="skdpx_bad_input_"))
    cwd = os.getcwd()
    os.chdir(tmp)  # path="x" makes a ledger file ./x: not in the checkout
    try:
        for param in ["epsilon", "delta", "path", "accountant", "relation"]:
            for label, value in BAD.items():
                _row(rows, "PrivacyLedger", f"{param}={label}",
                     lambda kw={"epsilon": 5.0, param: value}: spend_on(kw))
    finally:
        os.chdir(cwd)
    (tmp / "text.db").write_text("not a ledger\n")
    (tmp / "empty.db").write_bytes(b"")
    paths = {"path: a directory": str(tmp), "path: missing folder": str(tmp / "no" / "l.db"),
             "path: /dev/null": "/dev/null", "path: a text file": str(tmp / "text.db"),
             "path: an empty file": str(tmp / "empty.db"), "path: bytes": bytes(tmp / "b.db"),
             "path: with a NUL": str(tmp) + "/a\0b.db", "path: ''": "",
             "path: a Path object": tmp / "p.db", "path: '~' folder": "~/"}
    for case, path in paths.items():
        _row(rows, "PrivacyLedger", case,
             lambda path=path: spend_on({"epsilon": 5.0, "path": path}))


def attack_cases(rows):
    """The public functions of skdpx.attacks: every argument x BAD."""
    from skdpx import attacks as A

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        target = DPLocallyLinearClassifier(epochs=1, bounds=(-6, 8), random_state=0).fit(X, Y)
    data = {"X_members": X[:40], "y_members": Y[:40], "X_non_members": X_OTHER[:40],
            "y_non_members": Y_OTHER[:40]}
    entries = {
        "membership_inference": (A.membership_inference, {"target": target, **data,
                                 "signal": "loss", "queries": None, "shadow_data": None,
                                 "n_shadows": 1, "random_state": 0}),
        "attribute_inference": (A.attribute_inference, {"target": target, **data,
                                "feature": 0, "values": [-1.0, 1.0, 3.0], "signal": "loss",
                                "queries": None, "prior": False, "random_state": 0}),
        "explanation_probe": (A.explanation_probe, {"reference": None}),
    }
    for name, (fn, base) in entries.items():
        for param in base:
            for label, value in BAD.items():
                _row(rows, f"attacks.{name}", f"{param}={label}",
                     lambda fn=fn, kw={**base, param: value}: fn(**kw))

    def extraction(**kw):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            explainer = DPLimeExplainer(BLACK_BOX, bounds=(-6, 8), accountant=PrivacyLedger(),
                                        random_state=0).fit(X, Y)
        base = {"explainer": explainer, "black_box": BLACK_BOX, "X_pool": X_OTHER[:60],
                "X_test": X_OTHER[60:100], "n_queries": (10,), "strategies": ("queries",),
                "random_state": 0}
        return A.model_extraction(**{**base, **kw})

    for param in ["explainer", "black_box", "X_pool", "X_test", "y_test", "n_queries",
                  "strategies", "surrogate", "n_surrogates", "bounds", "random_state"]:
        for label, value in BAD.items():
            _row(rows, "attacks.model_extraction", f"{param}={label}",
                 lambda kw={param: value}: extraction(**kw))


def result_cases(rows):
    """The result objects of the three explainers: plot, indexing, from_json and to_frame
    with bad arguments."""
    results = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ("DPLimeExplainer", "DPCounterfactualGenerator", "PrivRecourse"):
            est = MAKERS[name](accountant=PrivacyLedger(), bounds=(-6, 8), random_state=0)
            results[name] = est.fit(X, Y).explain(X[:3])
    second = {"DPLimeExplainer": "top_k", "DPCounterfactualGenerator": "top_k",
              "PrivRecourse": "features"}
    frame_arg = {"DPLimeExplainer": "grouped", "DPCounterfactualGenerator": "original",
                 "PrivRecourse": None}
    for name, res in results.items():
        kind = type(res).__name__
        other = next(r for n, r in results.items() if n != name)
        for label, value in BAD.items():
            _row(rows, kind, f"plot(index={label})", lambda res=res, v=value: res.plot(index=v))
            _row(rows, kind, f"plot({second[name]}={label})",
                 lambda res=res, v=value, k=second[name]: res.plot(**{k: v}))
            _row(rows, kind, f"plot(ax={label})", lambda res=res, v=value: res.plot(ax=v))
            _row(rows, kind, f"result[{label}]", lambda res=res, v=value: res[v])
            _row(rows, kind, f"from_json({label})",
                 lambda res=res, v=value: type(res).from_json(v))
            if frame_arg[name]:
                _row(rows, kind, f"to_frame({frame_arg[name]}={label})",
                     lambda res=res, v=value, k=frame_arg[name]: res.to_frame(**{k: v}))
            else:
                _row(rows, kind, f"to_frame({label})", lambda res=res, v=value: res.to_frame(v))
        good = json.loads(res.to_json())
        some_key = next(iter(good))
        for case, text in {"'{'": "{", "'[]'": "[]", "'{}'": "{}", "'null'": "null",
                           f"another result's JSON ({type(other).__name__})": other.to_json(),
                           f"JSON without '{some_key}'": json.dumps(
                               {k: v for k, v in good.items() if k != some_key}),
                           "JSON with every value null": json.dumps(dict.fromkeys(good)),
                           "bytes of the JSON": res.to_json().encode()}.items():
            _row(rows, kind, f"from_json({case})",
                 lambda res=res, text=text: type(res).from_json(text))
        for case, key in {"result[99]": 99, "result[-99]": -99, "result[1.5]": 1.5,
                          "result['a']": "a", "result[None]": None,
                          "result[[0, 99]]": [0, 99]}.items():
            _row(rows, kind, case, lambda res=res, key=key: res[key])
        _row(rows, kind, "plot(index=99)", lambda res=res: res.plot(index=99))


def extended_cases(rows):
    """Everything issue 36 (target a) adds, in order."""
    for section in (constructor_cases, search_cases, mechanism_cases, ledger_cases,
                    attack_cases, result_cases):
        t0 = time.perf_counter()
        before = len(rows)
        section(rows)
        print(f"  {section.__name__}: {len(rows) - before} cases, "
              f"{time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)


def main():
    started, t0 = start(), time.perf_counter()
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
        methods = (["predict", "predict_proba", "decision_function"]
                   if name == "DPLocallyLinearClassifier" else ["explain"])
        for method in methods:
            if not hasattr(est, method):
                continue
            for case, build in QUERY_CASES.items():
                outcome, message, spent = run(lambda: getattr(est, method)(build()), ledger)
                rows.append({"estimator": name, "input": f"{method}: {case}",
                             "outcome": outcome, "message": message, "spent": spent})
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
    extended_cases(rows)

    print("| estimator | input | error | spent | message |\n|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['estimator']} | {r['input']} | {r['outcome']} | {r['spent']} | "
              f"{r['message']} |")
    raw = sum("(RAW)" in r["outcome"] for r in rows)
    spent = sum(r["spent"] > 0 and not r["outcome"].startswith("accepted")
                and "(on its DP row count)" not in r["outcome"] for r in rows)
    on_count = sum("(on its DP row count)" in r["outcome"] for r in rows)
    accepted = [f"{r['estimator']}: {r['input']}" for r in rows
                if r["outcome"].startswith("accepted")]
    nan = sum(r["outcome"] == "accepted (NaN answer)" for r in rows)
    silent = sum("(not saying spent)" in r["outcome"] for r in rows)
    print(f"\n{len(rows)} cases: {raw} raw tracebacks, {spent} refused inputs that spent, "
          f"{on_count} refused on their DP row count (its share spent, as designed), "
          f"{nan} accepted with NaN answers, {silent} errors after the commit not saying spent; "
          f"accepted: {accepted or 'none'}")
    counts = {}
    for r in rows:
        counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
    timeouts = sum(r["outcome"].startswith("timeout") for r in rows)
    print(f"{timeouts} timeouts; outcomes: {dict(sorted(counts.items()))}")
    out = HERE / "results" / "bad_input.json"
    save(out, {"run": run_info(started, time.perf_counter() - t0, packages=()),
               "cases": len(rows), "outcomes": dict(sorted(counts.items())),
               "rows": rows, "raw_tracebacks": raw,
               "refused_but_spent": spent, "refused_on_dp_count": on_count,
               "nan_answers": nan,
               "after_commit_not_saying_spent": silent, "timeouts": timeouts,
               "accepted": accepted})
    print(f"saved {out}")


if __name__ == "__main__":
    main()
