"""Issue 36: what is knowable before the commit is checked before it; after it, a
bad black-box output is an error that says the budget was spent, never an answer.

Before the commit (nothing spent, the ledger has no event): a DataFrame column
the declared schema does not allow, with tuple bounds; a black box that fails,
or gives NaN, inf, None, misshapen or non-numeric outputs, on the public probe
points (the middle and corners of the declared bounds); ``desired_class``
outside the classes; ``n_jobs=0``; a ``y`` of another length than ``X`` given
with a black box (not read otherwise).

After the commit (the black box breaks between the probe and the rows it is
asked about): the error says the budget was spent, and no NaN answer is
returned or recorded. A black box failing on a *private* row stays
neutralised (tests/test_refusals.py).
"""


import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LinearRegression, LogisticRegression

from skdpx._sklearn_compat import InvalidParameterError
from skdpx.counterfactual import DPCounterfactualGenerator
from skdpx.explain import DPLimeExplainer
from skdpx.locally_linear import DPLocallyLinearClassifier
from skdpx.privacy import PrivacyLedger
from skdpx.recourse import PrivRecourse
from skdpx.utils._blackbox import BlackBoxOutputError

from ._estimators import make_estimator, small_problem
from ._helpers import quiet_fit as _fit

X, Y = small_problem()
BLACK_BOX = LogisticRegression().fit(X, Y)
EXPLAINERS = (DPCounterfactualGenerator, PrivRecourse, DPLimeExplainer)


class BrokenBox:
    """A binary classifier that gives ``mode``'s output where ``broken`` (all rows,
    or one method: ``only``); a good logistic regression elsewhere."""

    def __init__(self, mode, broken=True, only=None):
        self.mode, self.broken, self.only = mode, broken, only
        self.classes_ = np.array([0, 1])

    def _out(self, rows, method):
        rows = np.asarray(rows, dtype=float)
        good = getattr(BLACK_BOX, method)(rows)
        if not self.broken or (self.only is not None and method != self.only):
            return good
        n, mode = len(rows), self.mode
        if mode == "raise":
            raise RuntimeError("the model server is down")
        if mode in ("nan", "inf"):
            return np.full(good.shape, np.nan if mode == "nan" else np.inf)
        if mode == "none":
            return None
        if mode == "1-D":
            return good[:, 1] if good.ndim == 2 else good.astype(float) + 0.5
        if mode == "3 columns":
            return np.tile(good.reshape(n, -1)[:, :1], 3)
        if mode == "strings":
            return np.full(good.shape, "a")
        if mode == "one row too few":
            return good[:-1]
        if mode == "list":  # a valid output, as plain lists
            return good.tolist()
        raise AssertionError(mode)

    def predict(self, rows):
        return self._out(rows, "predict")

    def predict_proba(self, rows):
        return self._out(rows, "predict_proba")


MODES = ["raise", "nan", "inf", "none", "1-D", "3 columns", "strings", "one row too few"]


def _explainer(cls, ledger, estimator, **kw):
    return make_estimator(cls, estimator=estimator, accountant=ledger, **kw)


# --------------------------------------------------------------------------
# the declared schema: column dtypes
# --------------------------------------------------------------------------
def _frame_with(kind):
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    if kind == "string":
        df["e"] = np.where(Y == 1, "yes", "no")
    elif kind == "category":
        df["e"] = pd.Categorical(np.where(Y == 1, "yes", "no"))
    else:
        df["e"] = pd.Timestamp("2020-01-01") + pd.to_timedelta(np.arange(len(Y)), "D")
    return df


@pytest.mark.parametrize("kind", ["string", "category", "datetime"])
@pytest.mark.parametrize("cls", [DPLocallyLinearClassifier, DPCounterfactualGenerator,
                                 PrivRecourse, DPLimeExplainer], ids=lambda c: c.__name__)
def test_an_undeclared_column_with_tuple_bounds_is_refused_before_spending(cls, kind):
    # before: the whole fit was spent, then clip_to_bounds raised pandas' "could
    # not convert string to float"
    ledger = PrivacyLedger()
    est = make_estimator(cls, accountant=ledger)
    if cls is DPLocallyLinearClassifier:
        est.set_params(classes=[0, 1])
    with pytest.raises(ValueError, match="column 'e' is not numeric"):
        _fit(est, _frame_with(kind), Y)
    assert len(ledger) == 0 and not ledger.events


def test_a_declared_categorical_column_still_fits():
    ledger = PrivacyLedger()
    est = make_estimator(PrivRecourse, accountant=ledger,
                         bounds={c: (-10.0, 10.0) for c in "abcd"},
                         categories={"e": ["no", "yes"]})
    _fit(est, _frame_with("string"), Y)
    assert len(ledger) > 0


# --------------------------------------------------------------------------
# the black box on the public probe points, before the commit
# --------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("cls", EXPLAINERS, ids=lambda c: c.__name__)
def test_a_black_box_bad_on_the_probe_points_spends_nothing(cls, mode):
    # before: "raise" burned the whole epsilon; NaN, inf, strings... were accepted
    # and spent (NaN answers), or raised IndexError / AxisError after the spend
    ledger = PrivacyLedger()
    with pytest.raises(ValueError, match="Nothing was spent"):
        _fit(_explainer(cls, ledger, BrokenBox(mode)), X, Y)
    assert len(ledger) == 0 and not ledger.events


@pytest.mark.parametrize("cls", EXPLAINERS, ids=lambda c: c.__name__)
def test_a_black_box_returning_lists_is_read_as_arrays(cls):
    # DPLimeExplainer raised AttributeError ('list' object has no attribute 'shape')
    ledger = PrivacyLedger()
    est = _fit(_explainer(cls, ledger, BrokenBox("list")), X, Y)
    assert len(ledger) > 0 and est.explain(X[:3]) is not None


@pytest.mark.parametrize("mode", ["nan", "inf", "1-D", "strings", "one row too few", "raise"])
def test_dpc_probes_the_scores_that_steer_its_search(mode):
    # predict is good, predict_proba (the search's signal) is not
    ledger = PrivacyLedger()
    box = BrokenBox(mode, only="predict_proba")
    with pytest.raises(BlackBoxOutputError, match="Nothing was spent"):
        _fit(_explainer(DPCounterfactualGenerator, ledger, box), X, Y)
    assert len(ledger) == 0


def test_the_probe_points_include_the_corners_of_the_bounds():
    # a black box that only fails at the ends of the declared bounds
    class EdgeBox(BrokenBox):
        def _out(self, rows, method):
            out = getattr(BLACK_BOX, method)(np.asarray(rows, dtype=float))
            if np.abs(np.asarray(rows, dtype=float)).max() >= 10.0:
                out = np.full(out.shape, np.nan)
            return out

    for cls in EXPLAINERS:
        ledger = PrivacyLedger()
        with pytest.raises(BlackBoxOutputError, match="Nothing was spent"):
            _fit(_explainer(cls, ledger, EdgeBox("nan")), X, Y)
        assert len(ledger) == 0, cls


def test_a_regressor_with_nan_output_on_the_probe_is_refused_before_spending():
    class NaNRegressor:
        def predict(self, rows):
            return np.full(len(rows), np.nan)

    ledger = PrivacyLedger()
    est = _explainer(DPLimeExplainer, ledger, NaNRegressor(), output_bounds=(-1, 1))
    with pytest.raises(BlackBoxOutputError, match="NaN or infinite.*Nothing was spent"):
        _fit(est, X)
    assert len(ledger) == 0


# --------------------------------------------------------------------------
# after the commit: an error that says the budget was spent, never a NaN answer
# --------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("cls", [DPCounterfactualGenerator, PrivRecourse],
                         ids=lambda c: c.__name__)
def test_a_black_box_that_breaks_after_the_fit_raises_saying_the_budget_was_spent(cls, mode):
    ledger = PrivacyLedger()
    box = BrokenBox(mode, broken=False)
    est = _fit(_explainer(cls, ledger, box), X, Y)
    spent = len(ledger)
    assert spent > 0
    box.broken = True
    for method in ("explain", "transform"):
        with pytest.raises(BlackBoxOutputError, match="budget was spent"):
            getattr(est, method)(X[:5])
    assert len(ledger) == spent  # (explain spends nothing more)


@pytest.mark.parametrize("mode", ["nan", "raise", "one row too few"])
def test_privrecourse_whose_black_box_breaks_during_the_fit_says_spent(mode):
    # the DP centres are labelled after the commit: a failure there is after it
    class AfterCommit(BrokenBox):
        calls = 0

        def _out(self, rows, method):
            type(self).calls += 1
            self.broken = type(self).calls > 1  # the probe (1 call) passes
            return super()._out(rows, method)

    ledger = PrivacyLedger()
    with pytest.raises(BlackBoxOutputError, match="budget was spent"):
        _fit(_explainer(PrivRecourse, ledger, AfterCommit(mode)), X, Y)
    assert len(ledger) > 0  # committed, not refunded


@pytest.mark.parametrize("mode", ["nan", "inf", "strings", "raise", "one row too few"])
def test_dplime_regression_queries_are_checked_before_their_spend(mode):
    model = LinearRegression().fit(X, Y)

    class Regressor:
        broken = False

        def predict(self, rows):
            out = model.predict(np.asarray(rows, dtype=float))
            if not self.broken:
                return out
            if mode == "raise":
                raise RuntimeError("the model server is down")
            return {"nan": np.full(out.shape, np.nan), "inf": np.full(out.shape, np.inf),
                    "strings": np.full(out.shape, "a"), "one row too few": out[:-1]}[mode]

    ledger = PrivacyLedger()
    box = Regressor()
    est = _fit(_explainer(DPLimeExplainer, ledger, box, output_bounds=(-1, 2)), X)
    spent = len(ledger)
    box.broken = True
    with pytest.raises(BlackBoxOutputError, match="Nothing was spent for these queries"):
        est.explain(X[:3])
    assert len(ledger) == spent and not est.history_["phase"]


def test_dplime_never_records_a_nan_interactive_answer():
    ledger = PrivacyLedger()
    est = _fit(_explainer(DPLimeExplainer, ledger, BLACK_BOX), X, Y)
    before = len(est.history_["phase"])
    phi = np.full((1, X.shape[1]), np.nan)
    with pytest.raises(BlackBoxOutputError, match="budget was spent"):
        est._record(X[:1], phi, "interactive", 0.5, 20, np.ones(1, dtype=int))
    assert len(est.history_["phase"]) == before


def test_dplime_with_a_black_box_nan_on_private_rows_gives_no_nan_answer():
    # NaN only off the probe points (on the private rows): neutralised, not refused;
    # the answers are finite (before: 100% NaN "interactive" answers)
    class PrivateNaN(BrokenBox):
        def _out(self, rows, method):
            rows = np.asarray(rows, dtype=float)
            out = getattr(BLACK_BOX, method)(rows).astype(float)
            probe = np.isin(np.round(rows, 6), [-10.0, 0.0, 10.0]).all(axis=1)
            out[~probe] = np.nan
            return out

    ledger = PrivacyLedger()
    est = _fit(_explainer(DPLimeExplainer, ledger, PrivateNaN("nan")), X, Y)
    result = est.explain(X[:3])
    assert np.isfinite(result.values).all()
    assert np.isfinite(np.asarray(est.history_["explanations"], dtype=float)).all()


# --------------------------------------------------------------------------
# parameters
# --------------------------------------------------------------------------
def test_an_unknown_desired_class_is_refused_at_fit_before_spending():
    # before: the fit spent, only explain refused
    ledger = PrivacyLedger()
    est = _explainer(DPCounterfactualGenerator, ledger, BLACK_BOX, desired_class=5)
    with pytest.raises(ValueError, match="desired_class.*Nothing was spent"):
        _fit(est, X, Y)
    assert len(ledger) == 0


@pytest.mark.parametrize("cls", EXPLAINERS + (DPLocallyLinearClassifier,),
                         ids=lambda c: c.__name__)
def test_delta_0_is_refused_before_the_row_count(cls):
    # DPLocallyLinearClassifier spent its DP row count, then refused delta=0 at its plan
    ledger = PrivacyLedger()
    box = {} if cls is DPLocallyLinearClassifier else {"estimator": BLACK_BOX}
    est = make_estimator(cls, accountant=ledger, delta=0.0, **box)
    with pytest.raises(ValueError, match="needs delta > 0.*Nothing was spent"):
        _fit(est, X, Y)
    assert len(ledger) == 0


@pytest.mark.parametrize("cls, name", [(DPLocallyLinearClassifier, "n_maps"),
                                       (DPLocallyLinearClassifier, "projection_dim"),
                                       (DPCounterfactualGenerator, "latent_dim"),
                                       (DPLimeExplainer, "max_iter")])
def test_a_bool_for_a_count_is_refused_before_spending(cls, name):
    # scikit-learn's Interval(Integral) takes True; these failed after the commit
    ledger = PrivacyLedger()
    box = {} if cls is DPLocallyLinearClassifier else {"estimator": BLACK_BOX}
    est = make_estimator(cls, accountant=ledger, **{name: True}, **box)
    with pytest.raises(InvalidParameterError, match=f"{name}.*not a bool"):
        _fit(est, X, Y)
    assert len(ledger) == 0


def test_desired_class_may_be_a_string_label():
    labels = np.where(Y == 1, "yes", "no")
    box = LogisticRegression().fit(X, labels)
    est = _fit(make_estimator(DPCounterfactualGenerator, estimator=box, desired_class="yes",
                              accountant=PrivacyLedger()), X, labels)
    result = est.explain(X[:4])
    assert list(result.desired_class) == ["yes"] * 4


def test_dplime_n_jobs_0_is_refused_before_spending():
    # before: 5 queries committed (2.44), then joblib raised
    ledger = PrivacyLedger()
    with pytest.raises(InvalidParameterError, match="n_jobs"):
        _fit(_explainer(DPLimeExplainer, ledger, BLACK_BOX, n_jobs=0), X, Y)
    assert len(ledger) == 0


# --------------------------------------------------------------------------
# y given with a black box: not read; only its length is checked
# --------------------------------------------------------------------------
@pytest.mark.parametrize("cls", EXPLAINERS, ids=lambda c: c.__name__)
def test_a_y_of_another_length_with_a_black_box_is_refused_before_spending(cls):
    ledger = PrivacyLedger()
    with pytest.raises(ValueError, match="y does not have one entry per row of X.*Nothing"):
        _fit(_explainer(cls, ledger, BLACK_BOX), X, Y[:-1])
    assert len(ledger) == 0


@pytest.mark.parametrize("cls", EXPLAINERS, ids=lambda c: c.__name__)
def test_a_y_with_a_black_box_is_not_read(cls):
    # NaN or continuous values: not read (a refusal on them would be a release
    # about a row), so the fit is the same as with y=None (same seed)
    results = []
    for y in (None, np.full(len(X), np.nan), np.linspace(-3, 3, len(X))):
        est = _fit(_explainer(cls, PrivacyLedger(), BLACK_BOX), X, y)
        results.append(est.transform(X[:4]))
    np.testing.assert_allclose(results[1], results[0])
    np.testing.assert_allclose(results[2], results[0])


@pytest.mark.parametrize("mode", MODES)
def test_dplime_whose_black_box_broke_since_the_fit_spends_nothing_more(mode):
    # each explain probes the black box again before its answers are committed:
    # a model server down since the fit refuses the queries, spending nothing
    # (before: every explain committed its answers, on neutral labels only)
    ledger = PrivacyLedger()
    box = BrokenBox(mode, broken=False)
    est = _fit(_explainer(DPLimeExplainer, ledger, box), X, Y)
    spent = len(ledger)
    box.broken = True
    with pytest.raises(ValueError, match="Nothing was spent"):
        est.explain(X[:3])
    assert len(ledger) == spent and not est.history_["phase"]
    box.broken = False  # back up: answered again
    assert np.isfinite(est.explain(X[:3]).values).all() and len(ledger) > spent


@pytest.mark.parametrize("cls", EXPLAINERS, ids=lambda c: c.__name__)
def test_the_probe_points_include_other_declared_levels(cls):
    # a black box that fails on the last declared level of a categorical column
    # (the first level alone passed before)
    class LevelBox(BrokenBox):
        def _out(self, rows, method):
            if (rows["job"].astype(str) == "c").any():
                raise KeyError("an unseen level")
            return getattr(BLACK_BOX, method)(rows[["a", "b", "c", "d"]].to_numpy(float))

    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    df["job"] = np.where(Y == 1, "a", "b")
    ledger = PrivacyLedger()
    est = _explainer(cls, ledger, LevelBox("raise"),
                     bounds={c: (-10.0, 10.0) for c in "abcd"},
                     categories={"job": ["a", "b", "c"]})
    with pytest.raises(BlackBoxOutputError, match="KeyError.*Nothing was spent"):
        _fit(est, df, Y)
    assert len(ledger) == 0
