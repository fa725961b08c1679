"""A refusal reveals nothing private (issue 35, item 3).

The attacker knows every other row. Whether a fit raises, what it says, what
it warns and which attributes it sets must then not depend on the value of
one private row: a NaN or infinite cell, a cell that is not a number, a
categorical value that is not declared, a label that is not a declared class
(or none), a black box that raises or returns NaN on that row. Each is
neutralised by a rule on that row alone (doc/privacy.rst, "A refusal
reveals nothing"), and the neutralised row stays within the sensitivity the
noise is calibrated for.

Neighbouring fits are compared on the same number of rows (D plus a usable
row, D plus an unusable one), so that what they test is the refusal alone;
what depends on the number of rows is issue 35's item 1.
"""

import math
import warnings

import numpy as np
import pytest

from skdpx import DPCounterfactualGenerator, DPLocallyLinearClassifier, PrivRecourse
from skdpx.explain import DPLimeExplainer
from skdpx.explain._outputs import row_labels
from skdpx.model_selection import DPAccuracy, DPGridSearchCV
from skdpx.privacy import PrivacyLedger
from skdpx.privacy._bounds import octave_counts

from ._estimators import make_estimator, small_problem

#: a label no message may show (its repr is np.int64(987654321))
CANARY_LABEL = 987654321
#: the black boxes below fail on a row whose first feature is exactly this
CANARY_VALUE = 7.25


class CanaryBox:
    """A fitted binary classifier that fails on the canary row, as ``mode`` says.

    "raise": raises, with the row in its message; "nan": NaN probabilities
    and a NaN label for it; both warn first, showing the row. Elsewhere:
    class 1 iff the features' sum > 3.
    """

    def __init__(self, mode):
        self.mode = mode
        self.classes_ = np.array([0, 1])

    def _check(self, X):
        X = np.asarray(X, dtype=float)
        canary = X[:, 0] == CANARY_VALUE
        if canary.any():  # a warning that would tell the row is there
            warnings.warn(f"the row {X[canary][0]!r} looks odd", UserWarning)
        if canary.any() and self.mode == "raise":
            raise ValueError(f"cannot score the row {X[canary][0]!r}")
        return X, canary

    def predict_proba(self, X):
        X, canary = self._check(X)
        p = 1.0 / (1.0 + np.exp(-(X.sum(axis=1) - 3.0)))
        P = np.column_stack([1.0 - p, p])
        P[canary] = np.nan
        return P

    def predict(self, X):
        X, canary = self._check(X)
        out = (X.sum(axis=1) > 3.0).astype(float)
        out[canary] = np.nan
        return out


def _fit_and_record(est, X, y, *, explain=None):
    """Fit (and explain public queries): (exception or None, warning messages, attribute
    names, the answers' phases and whether they are all finite)."""
    answers = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            est.fit(X, y)
            if explain is not None:
                result = est.explain(explain)
                answers = list(result.phase), bool(np.isfinite(result.values).all())
            error = None
        except Exception as exc:  # noqa: BLE001 (what a user would see)
            error = exc
    return error, sorted({str(w.message) for w in caught}), sorted(vars(est)), answers


def _messages(error, warned):
    return ([f"{type(error).__name__}: {error}"] if error is not None else []) + list(warned)


# --------------------------------------------------------------------------
# (a) no message shows a private label
# --------------------------------------------------------------------------
LABELLED = [DPLocallyLinearClassifier, DPCounterfactualGenerator, PrivRecourse]


@pytest.mark.parametrize("cls", LABELLED, ids=lambda c: c.__name__)
def test_no_message_shows_an_undeclared_label(cls):
    X, y = small_problem()
    y = y.copy()
    y[7] = CANARY_LABEL
    error, warned, *_ = _fit_and_record(make_estimator(cls, classes=[0, 1]), X, y)
    assert error is None, error  # 4ef86d4: "... (e.g. np.int64(987654321))"
    for message in _messages(error, warned):
        assert str(CANARY_LABEL) not in message


@pytest.mark.parametrize("cls", LABELLED, ids=lambda c: c.__name__)
def test_a_one_class_refusal_shows_no_label(cls):
    # classes=None and one label present: refused (the label set is read from y),
    # but the message does not show the label (4ef86d4: "got 1 class: np.int64(...)")
    X, _ = small_problem()
    y = np.full(len(X), CANARY_LABEL)
    error, warned, *_ = _fit_and_record(make_estimator(cls), X, y)
    assert isinstance(error, ValueError) and "two classes" in str(error)
    for message in _messages(error, warned):
        assert str(CANARY_LABEL) not in message


def test_an_undeclared_category_is_neither_shown_nor_counted():
    pd = pytest.importorskip("pandas")
    X, y = small_problem()
    frame = pd.DataFrame(X, columns=list("abcd"))
    frame["colour"] = np.where(y == 1, "red", "blue").astype(object)
    frame.loc[7, "colour"] = "canary-level"
    est = DPLocallyLinearClassifier(epsilon=5.0, bounds={c: (-10.0, 10.0) for c in "abcd"},
                                    categories={"colour": ["red", "blue"]}, classes=[0, 1],
                                    batch_size=1000, epochs=5, random_state=0)
    error, warned, *_ = _fit_and_record(est, frame, y)
    assert error is None, error  # 4ef86d4: "column 'colour' has 1 value(s) that are not ..."
    for message in warned:
        assert "canary-level" not in message and "1 value" not in message


# --------------------------------------------------------------------------
# (b) a fit on D + an unusable row behaves as one on D + a usable row
# --------------------------------------------------------------------------
def _with_row(X, y, row, label):
    return np.vstack([X, row]), np.append(np.asarray(y, dtype=float), label)


def _good_row(d):
    return np.full(d, 1.5)


def _bad_rows(d):
    """name -> (row, label): each unusable in its own way (label 1 is a usable one)."""
    nan = _good_row(d)
    nan[1] = np.nan
    inf = _good_row(d)
    inf[0] = -np.inf
    return {
        "NaN cell": (nan, 1.0),
        "infinite cell": (inf, 1.0),
        "missing label": (_good_row(d), np.nan),
        "undeclared label": (_good_row(d), float(CANARY_LABEL)),
    }


ESTIMATORS = {
    "DPLocallyLinearClassifier": lambda: make_estimator(DPLocallyLinearClassifier,
                                                        classes=[0, 1]),
    "DPCounterfactualGenerator": lambda: make_estimator(DPCounterfactualGenerator,
                                                        classes=[0, 1]),
    "PrivRecourse": lambda: make_estimator(PrivRecourse, classes=[0, 1]),
    # labels given as y (estimator=None): a missing label is neutral
    "DPLimeExplainer": lambda: make_estimator(DPLimeExplainer),
}

NEIGHBOURS = [
    pytest.param(name, case, id=f"{name}-{case}")
    for name in ESTIMATORS for case in _bad_rows(4)
    # DPLimeExplainer's y is numbers to explain, not classes
    if not (name == "DPLimeExplainer" and case == "undeclared label")
]


def _same_behaviour(make, D_good, D_bad, explain=None):
    ledgers = PrivacyLedger(), PrivacyLedger()
    good = _fit_and_record(make(ledgers[0]), *D_good, explain=explain)
    bad = _fit_and_record(make(ledgers[1]), *D_bad, explain=explain)
    assert good[0] is None, good[0]
    assert bad[0] is None, bad[0]
    assert good[1] == bad[1]  # the same warnings
    assert good[2] == bad[2]  # the same fitted attributes
    assert good[3] == bad[3]  # answers of the same phases, finite (not NaN) in both
    assert [label for label, _ in ledgers[0].events] == [label for label, _ in ledgers[1].events]


@pytest.mark.parametrize("name, case", NEIGHBOURS)
def test_an_unusable_row_is_neutralised_not_refused(name, case):
    X, y = small_problem()
    row, label = _bad_rows(X.shape[1])[case]
    explain = X[:2] if name == "DPLimeExplainer" else None

    def make(ledger):
        return ESTIMATORS[name]().set_params(accountant=ledger)

    _same_behaviour(make, _with_row(X, y, _good_row(X.shape[1]), 1.0),
                    _with_row(X, y, row, label), explain=explain)


def test_a_cell_that_is_not_a_number_is_neutralised_not_refused():
    X, y = small_problem()
    good, bad = X.astype(object), X.astype(object)
    bad[3, 1] = "high"  # 4ef86d4: "could not convert string to float: 'high'"
    _same_behaviour(lambda ledger: make_estimator(DPLocallyLinearClassifier, classes=[0, 1],
                                                  accountant=ledger), (good, y), (bad, y))


def _frame(X, *, cell=None):
    """``X`` as a DataFrame with a categorical column "job"; ``cell`` = (column, value)
    puts one private value in the last row."""
    import pandas as pd

    F = pd.DataFrame(X, columns=[f"x{i}" for i in range(X.shape[1])])
    F["job"] = np.where(np.arange(len(F)) % 3 == 0, "a", "b")
    if cell is not None:
        F[cell[0]] = F[cell[0]].astype(object)
        F.loc[len(F) - 1, cell[0]] = cell[1]
    return F


FRAME_BOUNDS = {f"x{i}": (-10.0, 10.0) for i in range(4)}


def test_a_word_in_a_column_its_bounds_declare_numeric_is_neutralised_not_refused():
    # one "?" makes pandas infer the column's dtype as object: the bounds still
    # declare it numeric (before: "column 'x1' is not numeric", a refusal on one row)
    X, y = small_problem()

    def make(ledger):
        return make_estimator(DPLocallyLinearClassifier, classes=[0, 1], accountant=ledger,
                              bounds=FRAME_BOUNDS, categories={"job": ["a", "b"]})

    _same_behaviour(make, (_frame(X), y), (_frame(X, cell=("x1", "?")), y))


@pytest.mark.parametrize("cell", [("x1", np.nan), ("x1", "?"), ("job", "z"), ("job", None)],
                         ids=["NaN", "word", "undeclared level", "None level"])
@pytest.mark.parametrize("search", [False, True], ids=["pipeline", "search"])
def test_a_pipelines_encoder_does_not_refuse_a_private_row(cell, search):
    # the encoder's fit_transform encodes the rows a DP fit trains on, so it judges
    # each cell alone (before: the search and the pipeline raised on these rows)
    from sklearn.pipeline import Pipeline

    from skdpx.preprocessing import PublicSchemaEncoder

    X, y = small_problem()

    def make(ledger):
        pipe = Pipeline([
            ("enc", PublicSchemaEncoder(bounds=FRAME_BOUNDS, categories={"job": ["a", "b"]})),
            ("clf", make_estimator(DPLocallyLinearClassifier, classes=[0, 1], bounds=(0, 1),
                                   accountant=None if search else ledger))])
        if not search:
            return pipe
        return DPGridSearchCV(pipe, {"clf__n_maps": [1, 2]}, epsilon=4.0, accountant=ledger,
                              random_state=0)

    _same_behaviour(make, (_frame(X), y), (_frame(X, cell=cell), y))


BLACK_BOXES = [
    pytest.param(cls, mode, id=f"{cls.__name__}-{mode}")
    for cls in (DPLimeExplainer, DPCounterfactualGenerator) for mode in ("raise", "nan")
]


@pytest.mark.parametrize("cls, mode", BLACK_BOXES)
def test_a_black_box_failing_on_a_private_row_is_not_a_refusal(cls, mode):
    X, y = small_problem()
    canary = _good_row(X.shape[1])
    canary[0] = CANARY_VALUE
    explain = X[:2] if cls is DPLimeExplainer else None

    def make(ledger):
        return make_estimator(cls, estimator=CanaryBox(mode), accountant=ledger)

    # 4ef86d4: the fit raises the black box's error (which shows the row)
    _same_behaviour(make, _with_row(X, y, _good_row(X.shape[1]), 1.0),
                    _with_row(X, y, canary, 1.0), explain=explain)


def test_a_black_box_failing_on_the_public_probe_is_refused_before_spending():
    X, y = small_problem()
    for cls in (DPLimeExplainer, DPCounterfactualGenerator):
        ledger = PrivacyLedger()
        # the probe: the middle of the declared bounds (-10, 10), i.e. 0 everywhere
        box = CanaryBox("raise")
        box.predict_proba = box.predict = _always_raises
        with pytest.raises(ValueError):
            make_estimator(cls, estimator=box, accountant=ledger).fit(X, y)
        assert len(ledger) == 0


def _always_raises(X):
    raise RuntimeError("this black box is broken")


def test_a_search_scores_a_row_it_cannot_score_as_absent():
    X, y = small_problem(n_samples=80)
    X = X.copy()
    X[5, 2] = np.nan
    y = y.astype(float)
    y[6] = CANARY_LABEL
    search = DPGridSearchCV(
        make_estimator(DPLocallyLinearClassifier, classes=[0, 1], epochs=5),
        {"n_maps": [1, 2]}, epsilon=10.0, delta=1e-5, cv=0.25, random_state=0)
    error, warned, *_ = _fit_and_record(search, X, y)
    assert error is None, error
    for message in warned:
        assert str(CANARY_LABEL) not in message


# --------------------------------------------------------------------------
# (c) the neutralised row stays within the sensitivity
# --------------------------------------------------------------------------
def test_a_missing_cell_is_the_bounds_midpoint_within_the_bounds():
    from skdpx.privacy import fill_nonfinite

    rng = np.random.default_rng(0)
    lower, upper = np.array([-1.0, 0.0, 17.0]), np.array([1.0, 5.0, 90.0])
    X = rng.uniform(lower, upper, size=(50, 3))
    holes = rng.random(X.shape) < 0.3
    X[holes] = rng.choice([np.nan, np.inf, -np.inf], size=holes.sum())
    filled = fill_nonfinite(X, lower, upper)
    assert np.all((filled >= lower) & (filled <= upper))
    middle = np.broadcast_to((lower + upper) / 2, X.shape)
    np.testing.assert_array_equal(filled[holes], middle[holes])
    np.testing.assert_array_equal(filled[~holes], X[~holes])


def test_dp_bounds_count_a_row_with_missing_cells_at_most_once_per_feature():
    rng = np.random.default_rng(1)
    D = rng.normal(size=(40, 5)) * 100
    row = np.array([[np.nan, np.inf, -np.inf, 3.0, np.nan]])
    change = octave_counts(np.vstack([D, row])) - octave_counts(D)
    assert np.all(change >= 0) and np.all(change.sum(axis=1) <= 1)
    np.testing.assert_array_equal(change.sum(axis=1), [0, 0, 0, 1, 0])  # its finite cell
    assert np.linalg.norm(change) <= math.sqrt(D.shape[1])  # the sensitivity sqrt(d)


@pytest.mark.parametrize("mode", ["raise", "nan"])
def test_a_row_the_black_box_fails_on_gets_the_neutral_labels(mode):
    from skdpx.explain._outputs import private_row_labels

    X, _ = small_problem()
    X = X.copy()
    X[[4, 33], 0] = CANARY_VALUE
    labels = private_row_labels("probability", np.array([0, 1]), (0.0, 1.0), CanaryBox(mode),
                                lambda idx: X[idx], len(X))
    assert labels.shape == (len(X), 2) and np.all(np.abs(labels) <= 1.0)
    np.testing.assert_array_equal(labels[[4, 33]], 0.0)  # P = 1/2: the middle of the range
    rest = np.setdiff1d(np.arange(len(X)), [4, 33])
    np.testing.assert_array_equal(labels[rest], row_labels(
        "probability", np.array([0, 1]), (0.0, 1.0), CanaryBox(mode), X[rest]))


def test_map_rows_bisects_only_where_a_chunk_fails():
    from skdpx.utils._blackbox import map_rows

    calls = []

    def func(idx):
        calls.append(len(idx))
        if np.isin(idx, [3, 700]).any():
            raise ValueError("no")
        return idx * 2.0

    out = map_rows(func, 1000, fill=np.float64(-1.0))
    expected = np.arange(1000) * 2.0
    expected[[3, 700]] = -1.0
    np.testing.assert_array_equal(out, expected)
    assert calls[0] == 1000 and len(calls) <= 2 * 2 * math.ceil(math.log2(1000)) + 1
    assert len(map_rows(lambda idx: idx * 1.0, 1000, fill=np.float64(0))) == 1000


def _fitted_coef(X, y, **params):
    est = make_estimator(DPLocallyLinearClassifier, epsilon=np.inf, classes=[0, 1], **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y)


def test_a_dropped_row_contributes_nothing_to_the_model():
    # non-private fits (no noise), seeded: the same batches on the same number of rows
    X, y = small_problem()
    a = _fitted_coef(*_with_row(X, y, np.full(4, 9.0), CANARY_LABEL))
    b = _fitted_coef(*_with_row(X, y, np.full(4, -9.0), np.nan))
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)
    np.testing.assert_array_equal(a.center_, b.center_)
    # a usable row there does move it: the comparison has power
    c = _fitted_coef(*_with_row(X, y, np.full(4, 9.0), 1.0))
    assert not np.allclose(a.coef_, c.coef_)


def test_a_missing_cell_is_fitted_as_the_midpoint():
    X, y = small_problem()
    hole, mid = np.full(4, 2.0), np.full(4, 2.0)
    hole[2], mid[2] = np.nan, 0.0  # the middle of the bounds (-10, 10)
    a = _fitted_coef(*_with_row(X, y, hole, 1.0))
    b = _fitted_coef(*_with_row(X, y, mid, 1.0))
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.predict_proba(np.vstack([hole, mid])),
                                  b.predict_proba(np.vstack([mid, mid])))


def test_a_row_the_black_box_cannot_label_enters_no_prototype():
    X, y = small_problem()
    X = X.copy()
    X[[4, 9], 0] = CANARY_VALUE
    for mode in ("raise", "nan"):
        est = make_estimator(DPCounterfactualGenerator, epsilon=np.inf,
                             estimator=CanaryBox(mode))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, y)
        # exact counts at epsilon = inf: every row but the two is in one class
        assert est.prototype_counts_.sum() == len(X) - 2


def test_a_row_that_scoring_fails_on_contributes_zero():
    from skdpx.model_selection._runs import _row_contributions

    X, y = small_problem()
    model = _fitted_coef(X, y)

    class Flaky(DPAccuracy):
        def contributions(self, estimator, X, y):
            if np.isin(np.asarray(X)[:, 0], X_all[[2, 11], 0]).any():
                raise RuntimeError("no")
            return super().contributions(estimator, X, y)

    X_all = X
    out = _row_contributions(Flaky(), model, X, y)
    exact = DPAccuracy().contributions(model, X, y)
    np.testing.assert_array_equal(out[[2, 11]], 0.0)
    rest = np.setdiff1d(np.arange(len(X)), [2, 11])
    np.testing.assert_array_equal(out[rest], exact[rest])
    assert np.all(np.abs(out) <= DPAccuracy().sensitivity("add_or_remove"))


def test_a_missing_value_in_a_query_is_the_midpoint():
    # queries are public, but the same rule holds there (scikit-learn's allow_nan tag)
    X, y = small_problem()
    hole, mid = X[:3].copy(), X[:3].copy()
    hole[1, 2], mid[1, 2] = np.nan, 0.0  # the middle of the bounds (-10, 10)
    hole[2, 0], mid[2, 0] = -np.inf, 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = make_estimator(DPLocallyLinearClassifier, classes=[0, 1]).fit(X, y)
        np.testing.assert_array_equal(clf.predict_proba(hole), clf.predict_proba(mid))
        rec = make_estimator(PrivRecourse, classes=[0, 1]).fit(X, y)
        np.testing.assert_array_equal(rec.transform(hole), rec.transform(mid))
        lime = make_estimator(DPLimeExplainer).fit(X, y)
        first = lime.explain(mid)
        again = lime.explain(hole)  # the same points: the answers are reused
        assert list(again.phase) == ["reused"] * 3
        np.testing.assert_array_equal(again.values, first.values)


class _GradientRecorder:
    """A one-step DP-SGD engine stand-in that records every row's gradient norm."""

    max_steps, sample_rate, max_grad_norm = 1, 1.0, 1.0

    def __init__(self, n_rows):
        self.n_rows = n_rows
        self.n_samples = n_rows  # the public planning count a real engine carries

    def bind(self, noise, commitment):
        return self

    def train(self, per_sample, params, optimizer, **schedule):
        grads = per_sample(np.arange(self.n_rows))
        self.norms = np.sqrt(grads.sq_norms())
        grads.weighted_sum(np.ones(self.n_rows))
        return self


CODES = np.array([0, 1, -1, 1, -1, 0, 1])


def test_a_row_without_a_usable_label_has_no_gradient_in_the_model():
    from skdpx.locally_linear._locally_linear import _views

    rng = np.random.default_rng(0)
    U = rng.uniform(-0.5, 0.5, size=(len(CODES), 3))
    k, m = 2, 2
    W = rng.normal(size=(1, 3, k * m)).astype(np.float32)
    b = np.zeros((1, k * m), dtype=np.float32)
    engine = _GradientRecorder(len(CODES))
    DPLocallyLinearClassifier(n_maps=m)._train(engine, _views(U, None, 2, norms=True), CODES,
                                               k, m, W, b)
    assert np.all(engine.norms[CODES < 0] == 0) and np.all(engine.norms[CODES >= 0] > 0)


def test_a_missing_label_drops_its_row_only():
    # pandas' NA has no truth value: compared with a class it once failed the
    # comparison of every row, and every row was dropped (a Dask string column's
    # missing label is NA)
    from skdpx.privacy import label_codes

    pd = pytest.importorskip("pandas")
    y = np.array(["a", pd.NA, "b", None, math.nan, "c", "a"], dtype=object)
    assert label_codes(np.array(["a", "b"]), y).tolist() == [0, -1, 1, -1, -1, -1, 0]
    assert label_codes([0, 1], np.array([1, pd.NA, 0.0], dtype=object)).tolist() == [1, -1, 0]


def test_a_row_without_a_usable_label_has_no_gradient_in_privrecourse_model():
    from skdpx.recourse._model import train_dp_logistic

    X01 = np.random.default_rng(1).uniform(size=(len(CODES), 3))
    engine = _GradientRecorder(len(CODES))
    train_dp_logistic(X01, CODES, np.array([0, 1]), engine)
    assert np.all(engine.norms[CODES < 0] == 0) and np.all(engine.norms[CODES >= 0] > 0)


def test_explain_global_does_not_show_a_label_outside_the_classes():
    X, y = small_problem()
    clf = _fitted_coef(X, y)
    labels = y.copy()
    labels[3] = CANARY_LABEL
    with pytest.raises(ValueError, match="outside classes_") as refused:
        clf.explain_global(X, labels)
    assert str(CANARY_LABEL) not in str(refused.value)


@pytest.mark.parametrize("dask", [False, True], ids=["numpy", "dask"])
def test_a_y_of_another_length_is_refused_without_the_number_of_rows(dask):
    # scikit-learn's message prints both lengths ("[61, 60]"): the number of rows
    # is private under add-or-remove
    X, y = small_problem(n_samples=61)
    if dask:
        da = pytest.importorskip("dask.array")
        X = da.from_array(X, chunks=20)
    ledger = PrivacyLedger()
    # (DPLimeExplainer takes Dask collections; its y is the numbers it explains)
    with pytest.raises(ValueError, match="different numbers of rows") as refused:
        make_estimator(DPLimeExplainer, accountant=ledger).fit(X, y[:60].astype(float))
    assert "61" not in str(refused.value) and "60" not in str(refused.value)
    assert ledger.events == []
