"""One hidden run of a private search or curve: its candidate, fit and score.

What :class:`~skdpx.model_selection.DPRandomSearchCV`,
:class:`~skdpx.model_selection.DPGridSearchCV` and
:func:`~skdpx.model_selection.privacy_utility_curve` share: the candidates
checked before anything is spent, each run's fit planned from the DP row count
(:func:`_planner`), fitted and scored (:func:`_fit_run`), and the warnings and
failures of runs whose number and draws stay hidden: recorded, shown once
each, and raised afresh with a fixed text (:func:`_hidden_failure`).
"""

from contextlib import contextmanager
from numbers import Integral
import warnings

import numpy as np
from sklearn.base import clone
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import indexable

from .._sklearn_compat import Interval, InvalidParameterError, safe_indexing
from ..base import DPEstimator
from ..privacy import FitCount, PrivacyLedger, PrivacyLeakWarning, given_row_count
from ..utils._blackbox import finite_rows, map_rows
from ..utils._stacklevel import _outside_stacklevel
from ..utils._tables import num_rows
from ._scorers import DPScorer


#: As many queries as an explainer's cap can pay for: its whole cap.
_UNBOUNDED_QUERIES = 2**31

#: Parameters the search sets on every candidate: a candidate cannot set them.
_SEARCH_SET = ("epsilon", "delta", "accountant", "random_state")


def _dp_step(estimator):
    """``(prefix, step)``: the skdpx estimator the search sets the budget of."""
    if isinstance(estimator, DPEstimator):
        return "", estimator
    if isinstance(estimator, Pipeline) and isinstance(estimator.steps[-1][1], DPEstimator):
        for name, step in estimator.steps[:-1]:
            if step is None or isinstance(step, str):
                continue
            from ..preprocessing import PublicSchemaEncoder
            from sklearn.utils import get_tags

            try:
                learns = get_tags(step).requires_fit
            except Exception:
                learns = True
            if learns and not isinstance(step, PublicSchemaEncoder):
                raise ValueError(
                    f"the Pipeline's step {name!r} ({type(step).__name__}) learns from the rows "
                    "outside any ledger (a scaler's means, say): a private search cannot account "
                    "for it. Declare what it learns (skdpx.preprocessing.PublicSchemaEncoder "
                    "with public bounds and categories) or fit it on public data and freeze it "
                    "(sklearn.frozen.FrozenEstimator)."
                )
        name = estimator.steps[-1][0]
        return name + "__", estimator.steps[-1][1]
    raise TypeError(
        "estimator must be a skdpx estimator (a skdpx.base.DPEstimator: "
        "DPLocallyLinearClassifier, DPLimeExplainer, DPCounterfactualGenerator, PrivRecourse, "
        "...) or a Pipeline that ends in one, got "
        f"{type(estimator).__name__}. A private search needs to set each candidate's budget."
    )


def _fresh(estimator, params):
    """An unfitted copy of ``estimator`` with ``params``, that keeps its black box.

    ``clone`` would also clone the skdpx step's ``estimator`` (the fitted
    model that DPLimeExplainer, DPCounterfactualGenerator and PrivRecourse
    explain) into an unfitted one; the black box is used, never fitted, by
    them, so the copy shares it (a candidate may also set another one).
    """
    prefix, step = _dp_step(estimator)
    copy = clone(estimator)
    black_box = getattr(step, "estimator", None)
    if black_box is not None and "estimator" in step.get_params(deep=False):
        copy.set_params(**{prefix + "estimator": black_box})
    return copy.set_params(**params)


def _check_candidates(candidates, prefix):
    for params in candidates:
        for key in params:
            if key.startswith(prefix) and key[len(prefix):] in _SEARCH_SET or key in _SEARCH_SET:
                raise ValueError(
                    f"the candidates set {key!r}, which the search sets itself (the budget of "
                    "each fit comes from the search's epsilon and delta). To see how accuracy "
                    "changes with epsilon, use skdpx.model_selection.privacy_utility_curve."
                )


#: joblib's n_jobs: 0 has no meaning (refused before anything is spent)
N_JOBS_CONSTRAINT = [Interval(Integral, None, -1, closed="right"),
                     Interval(Integral, 1, None, closed="left"), None]


def _validate_rows(estimator, prefix, step, X, y):
    """The DP step's own validation of all the rows (NaN, shapes, sparse, labels...),
    before anything is drawn or spent, through the pipeline's public steps; returns
    ``X, y`` made indexable. Their number is not checked here: it is private under
    add-or-remove."""
    X, y = indexable(X, y)
    Xs = X
    if prefix and len(estimator.steps) > 1:
        Xs = Pipeline(_fresh(estimator, {}).steps[:-1]).fit_transform(X, y)
    check = _fresh(step, {})  # keeps the black box, which clone would unfit
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        check._validate_fit(Xs, y)
    return X, y


def _validate_candidates(estimator, candidates, prefix, budget):
    """Every candidate of the pool validated with the estimator's own constraints.

    Each candidate is set on a fresh copy with the search's ``budget`` (the
    parameters the search sets itself), and the copy, and each step of a
    Pipeline, checks its parameters (scikit-learn's ``_validate_params``).
    The whole pool is public and checked in its order before anything is
    read or spent, so the error raised (the first invalid candidate's) does
    not depend on which candidates a search's hidden runs would draw.
    """
    for i, params in enumerate(candidates):
        try:
            est = _fresh(estimator, params)
            est.set_params(**{prefix + k: v for k, v in budget.items()})
            parts = [est] + ([s for _, s in est.steps] if isinstance(est, Pipeline) else [])
            for part in parts:
                if hasattr(part, "_validate_params"):
                    part._validate_params()
        except (ValueError, TypeError) as err:
            what = f"candidate {i} of the search's pool, {params!r}," if params else \
                f"the estimator {type(estimator).__name__}"
            raise InvalidParameterError(
                f"{what} is invalid: {err} Every parameter is checked before anything is "
                "spent; nothing was."
            ) from err



# --------------------------------------------------------------------------
# What a search shows is decided before it reads a private row
# --------------------------------------------------------------------------
# A search's runs are hidden: how many there are (K) and which candidates they
# draw. A warning, an error or a count of them raised by a run would tell that
# it ran (K + 1 warnings; a warning only the candidate with bounds=None raises
# tells that it was drawn). So the search shows the warnings of planning every
# candidate of the public pool, each distinct one once, in a fixed order,
# before the commit, and drops every warning raised while runs read private
# rows; a failed run returns no score, and a failure of the runs' machinery is
# raised afresh, with a fixed text, from a frame that holds none of them.

#: The error a search (or a sweep) raises when its hidden part fails after the commit.
_HIDDEN_FAILURE = (
    "{what} failed after it was recorded in the ledger (its budget is spent), while it read "
    "the private rows. Where and why is not said: the failure, its message and its traceback "
    "would tell {hidden}. Run the estimator alone on public data to debug it."
)


@contextmanager
def _recording():
    """Every warning raised inside, recorded whatever the filters, none shown."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught


@contextmanager
def _silenced():
    """Every warning raised inside dropped (in this thread, and in the threads it waits
    for: joblib's threading backend shares the filters)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _warn_once(records):
    """Show each distinct (category, message) of ``records`` once, sorted: what is shown
    depends on the set of records only, never on their number or order."""
    distinct = {(r.category, str(r.message)) for r in records}
    for category, message in sorted(
            distinct, key=lambda cm: (cm[0].__qualname__, cm[0].__module__, cm[1])):
        warnings.warn(message, category, stacklevel=_outside_stacklevel())


def _hidden_failure(kind, what, hidden):
    """A fresh exception of kind ``kind`` with :data:`_HIDDEN_FAILURE`'s fixed text.

    To be raised ``from None`` by a frame that holds nothing hidden: it chains
    nothing, and its traceback starts there."""
    message = _HIDDEN_FAILURE.format(what=what, hidden=hidden)
    try:
        return kind(message)
    except Exception:  # a BaseException that takes no message
        return RuntimeError(message)


def _planner(est, prefix, X, y, relation, scorer, n_rows, *, refit=False):
    """A function ``(epsilon, delta) -> (fit event, extra event or None)`` for a fit
    planned with ``n_rows``.

    ``est`` is a fresh copy (:func:`_fresh`). ``n_rows`` is the public
    planning count the fit will run with (:func:`given_row_count`): a share
    of the search's DP count, never the number of rows of ``X``, which is
    read for its schema only (validation), never for its size or its
    values' statistics: each estimator's ``_plan_fit`` is made from public
    facts. The extra event is
    what scoring spends through the estimator (DPLimeExplainer explains the
    scorer's queries); for a refit, everything the refitted estimator may
    still spend when it is used (DPLimeExplainer: its whole cap, prepaid).

    Validating and planning raise the candidate's warnings (``bounds=None``,
    ``classes=None``...): the caller records them (:func:`_recording`) and
    shows them once (:func:`_warn_once`).
    """
    dp = est if not prefix else est.steps[-1][1]
    Xs = X
    if prefix and len(est.steps) > 1:  # the public steps (declared schema, nothing learnt)
        Xs = Pipeline(est.steps[:-1]).fit_transform(X, y)
    data = dp._validate_fit(Xs, y)

    def plan(epsilon, delta):
        dp.set_params(epsilon=float(epsilon), delta=float(delta))
        # the fit plans with the public count it is given, and releases none
        event = dp._plan_fit(data, relation, FitCount(
            epsilon=dp.epsilon, relation=relation, n_rows=n_rows)).event
        if refit:
            extra = (dp._plan_queries(_UNBOUNDED_QUERIES)
                     if dp._dp_capabilities.answers_queries else None)
        else:
            extra = scorer.planned_event(dp, n_rows, relation) \
                if isinstance(scorer, DPScorer) else None
        return event, extra
    return plan


def _fit_run(estimator, params, budget, X_train, y_train, X_val, y_val, scorer, relation,
             *, hidden=True):
    """One run: a candidate fitted with DP on the training part, and its score's exact sums.

    ``budget`` holds the search's settings of the candidate (its epsilon,
    delta and random_state) and ``_n_rows``, the public count the fit plans
    with (a share of the search's DP count). The fit spends in a ledger of its own: the
    search recorded the whole search before this run. The exact sums go
    back to the search (never stored), whose privacy core adds the noise.

    Every warning raised inside is dropped: the search showed those of
    planning every candidate before it read a private row, and a run's own
    would tell that it ran. A hidden run that raises returns None: its run
    has no score and is never selected, and nothing says so (saying it
    would tell that the run's candidate was drawn). The refit
    (``hidden=False``: its candidate is the selection's public output)
    raises as a fit does.
    """
    with _silenced():
        if not hidden:
            return _fit_and_score(estimator, params, budget, X_train, y_train, X_val, y_val,
                                  scorer, relation)
        try:
            return _fit_and_score(estimator, params, budget, X_train, y_train, X_val, y_val,
                                  scorer, relation)
        except Exception:
            pass
    return None


def _fit_and_score(estimator, params, budget, X_train, y_train, X_val, y_val, scorer, relation):
    budget = dict(budget)
    prefix = budget.pop("_prefix")
    n_plan = budget.pop("_n_rows")
    est = _fresh(estimator, params)
    est.set_params(**{prefix + k: v for k, v in budget.items()},
                   **{prefix + "accountant": PrivacyLedger(relation=relation)})
    with given_row_count(n_plan):  # as planned (_planner): no count of its own
        est.fit(X_train, y_train)
    if scorer.public:
        return est, float(scorer.public_score(est))
    sums = _row_contributions(scorer, est, X_val, y_val)
    return est, sums.sum(axis=0)


def _row_contributions(scorer, estimator, X, y):
    """Each private validation row's contribution vector, (n_rows, n_stats).

    A scorer's contributions are per row (each depends on its row alone), so
    a row on which scoring fails (the candidate or its black box raises, or
    gives NaN) contributes the zero vector, as a row that is absent: within
    the sensitivity under either relation, and nothing is refused or
    reported (:func:`~skdpx.utils._blackbox.map_rows`: one call for all
    rows, bisection over chunks only where one fails). Warnings raised while
    scoring private rows are not shown.
    """
    def rows(idx):
        out = np.asarray(scorer.contributions(
            estimator, safe_indexing(X, idx), None if y is None else safe_indexing(y, idx)),
            dtype=float)
        return out[:, None] if out.ndim == 1 else out

    n = num_rows(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:  # the number of statistics, from no row (every scorer here takes 0 rows)
            width = rows(np.arange(0)).shape[1]
        except Exception:  # noqa: BLE001 (a scorer that needs rows: from all of them)
            return rows(np.arange(n))
    return map_rows(rows, n, fill=np.zeros(width), row_ok=finite_rows)
