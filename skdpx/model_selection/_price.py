"""The price of a scikit-learn search over skdpx estimators, before it runs.

A ``GridSearchCV`` or ``RandomizedSearchCV`` fits its estimator once per
candidate and fold, then once more on all the rows (the refit). Each fit of
a skdpx estimator spends at most its own ``(epsilon, delta)``: its
``EstimatorLedger`` refuses anything more. :func:`price_search` adds these
fits up before the search starts, and :meth:`SearchPrice.check` tells
whether a ledger can pay for all of them, so that a capped ledger is never
emptied by the folds with the refit refused.

Under add-or-remove neighbours (the default relation) each fit of a skdpx
estimator releases a DP count of its rows first (``COUNT_SHARE`` of its
epsilon, accounted as a ``FixedLossDpEvent``) and plans the rest from it:
the rest is then a function of a random count, known to meet (``epsilon -
count epsilon``, ``delta``) whatever the count, and is priced at that cap.
Nothing in a price depends on the number of rows: only under replace-one
neighbours, where the relation makes it public, are the fits priced
exactly from their training folds' sizes.

What a search also releases, and no price includes: its scores on the
validation folds (``cv_results_``) and the choice made from them
(``best_params_``), exact values computed from private rows. Private
selection, which accounts for both, is the job of ``DPGridSearchCV`` and
``DPRandomSearchCV`` (:mod:`._search`).
"""

from collections.abc import Iterator, Mapping
import copy
from dataclasses import dataclass, field
import math
from numbers import Integral
import warnings

import numpy as np
from sklearn.base import BaseEstimator, clone, is_classifier
from sklearn.compose import ColumnTransformer
from sklearn.model_selection import (
    GridSearchCV,
    ParameterGrid,
    ParameterSampler,
    RandomizedSearchCV,
    check_cv,
)
from sklearn.pipeline import FeatureUnion, Pipeline
from sklearn.utils import get_tags

from .._sklearn_compat import safe_indexing as _safe_indexing
from ..utils._tables import num_rows

from ..base import DPEstimator
from ..privacy import (
    BudgetError,
    FitCount,
    ComposedDpEvent,
    NoOpDpEvent,
    PrivacyLedger,
    PrivacyLeakWarning,
    approx_event,
    compute_epsilon,
    fixed_loss_event,
    event_to_json,
    is_pure,
    warn_exact_scores,
)

try:  # scikit-learn >= 1.6
    from sklearn.frozen import FrozenEstimator
except ImportError:  # pragma: no cover
    FrozenEstimator = ()

__all__ = ["FitPrice", "SearchPrice", "price_search"]

#: The parameters that set what one fit of a skdpx estimator may spend.
_BUDGET_PARAMETERS = ("epsilon", "delta")


def _priced_exactly(step):
    """Whether ``step``'s ``fit`` commits its only spend (the plan of ``_plan_spend``), as
    its class declares (``_dp_capabilities.exact_price``): its fits can be priced exactly
    from the fold sizes where these are public (replace-one neighbours, or a non-private
    fit). Any other skdpx estimator (DPLimeExplainer, which spends on queries) is priced
    at its cap."""
    return step._dp_capabilities.exact_price


@dataclass(frozen=True)
class FitPrice:
    """What one fit of a search may spend.

    Attributes
    ----------
    candidate : int or None
        The candidate's index in the search's order (``cv_results_`` rows);
        None for the refit, whose candidate is chosen during the search, and
        for a ``RandomizedSearchCV`` whose candidates cannot be known.
    split : int or None
        The fold's index; None for the refit.
    params : dict or None
        The candidate's parameters; for the refit, those of the candidate
        that would cost the most; None when the candidates cannot be known
        in advance (``RandomizedSearchCV`` with ``random_state=None``).
    epsilon, delta : float
        What the fit may spend: its ``epsilon`` at ``delta``.
    event : dp_accounting.DpEvent
        What the fit is accounted as: the planned spend of each skdpx
        estimator it fits (``exact``), or their caps.
    exact : bool
        Whether ``event`` is the spend the fit will commit (planned from the
        fold's size, as the fit plans it: where that size is public), or an
        upper bound (the caps; under add-or-remove, the fit's DP row count
        exactly and the rest at its cap).
    steps : tuple of str
        The skdpx estimators the fit fits (Pipeline step names; ``""`` for
        the search's estimator itself).
    count_epsilon : float
        What the fit's DP row counts spend (their ``FixedLossDpEvent`` events,
        in ``event``): ``COUNT_SHARE`` of each skdpx estimator's epsilon
        under add-or-remove, 0 where the number of rows is public.
    """

    candidate: object
    split: object
    params: object
    epsilon: float
    delta: float
    event: object = field(repr=False)
    exact: bool
    steps: tuple
    count_epsilon: float = 0.0


class SearchPrice:
    """The planned spend of a search: every fold's fit, plus the refit.

    Made by :func:`price_search`. The total is an upper bound on what the
    search's fits will record in their ledger, whichever candidate the
    refit uses: the fits are composed with privacy loss distributions (as
    the ledger composes them), and never reported above the sum of their
    epsilons at the sum of their deltas (basic composition).

    Attributes
    ----------
    epsilon : float
        The search's total epsilon, at ``delta``.
    delta : float
        The sum of the deltas the fits declare (at most 1).
    epsilon_basic : float
        The sum of the fits' epsilons (basic composition, at ``delta``).
    n_fits, n_candidates, n_splits : int
        ``n_candidates * n_splits`` fits, plus 1 with ``refit``.
    fits : list of FitPrice
        One per fit, in the search's order, the refit last (its worst case
        over the candidates).
    exact : bool
        Whether every fit is priced at its planned spend (with ``X``, for
        estimators fitted on the search's rows), not at its cap.
    unaccounted_steps : list of str
        Steps that learn from the private rows outside any ledger (a
        ``StandardScaler``'s means, say): they are not in the price.
    refit_totals : list of (FitPrice, float)
        Each refit the search could make (one per distinct spend) with the
        search's total epsilon, at ``delta``, if it makes that one. Empty
        with ``refit=False``.
    relation : str
        The neighbouring relation the fits are calibrated under.
    """

    def __init__(self, fold_fits, refit_options, *, n_candidates, n_splits, relation,
                 ledgers, unaccounted_steps):
        self._fold_fits = list(fold_fits)
        self._refit_options = list(refit_options)
        self.n_candidates = n_candidates
        self.n_splits = n_splits
        self.relation = relation
        self.unaccounted_steps = list(unaccounted_steps)
        self._ledgers = ledgers
        folds_delta = math.fsum(f.delta for f in self._fold_fits)
        refit_delta = max((f.delta for f in self._refit_options), default=0.0)
        self.delta = min(1.0, folds_delta + refit_delta)
        basic = math.fsum(f.epsilon for f in self._fold_fits) + max(
            (f.epsilon for f in self._refit_options), default=0.0)
        self.epsilon_basic = basic if self.delta < 1 else math.inf
        # the worst refit: the one that takes the composed total highest
        self.refit_totals = [(option, self._composed(option))
                             for option in (self._refit_options or [None])]
        worst, self.epsilon = max(self.refit_totals, key=lambda t: t[1])
        if worst is None:
            self.refit_totals = []
        self.fits = self._fold_fits + ([worst] if worst is not None else [])
        self.n_fits = len(self.fits)
        self.exact = all(f.exact for f in self.fits)

    def _events(self, option):
        fits = self._fold_fits + ([option] if option is not None else [])
        return [f.event for f in fits if not isinstance(f.event, NoOpDpEvent)]

    def _composed(self, option):
        if self.delta >= 1:
            return math.inf  # no guarantee left
        events = self._events(option)
        if not events:
            return 0.0
        eps = compute_epsilon(ComposedDpEvent(events), self.delta)
        return min(eps, self.epsilon_basic)

    @property
    def event(self):
        """The DpEvent of the search's fits with the worst refit."""
        return ComposedDpEvent([f.event for f in self.fits])

    def epsilon_at(self, delta):
        """The search's total epsilon at another ``delta`` (worst refit)."""
        if not 0 <= delta <= 1:
            raise ValueError(f"delta must be in [0, 1], got {delta!r}.")
        eps = max(compute_epsilon(ComposedDpEvent(self._events(o) or [NoOpDpEvent()]), delta)
                  for o in (self._refit_options or [None]))
        # basic composition holds at every delta from the deltas' sum up
        return min(eps, self.epsilon_basic) if delta >= self.delta else eps

    def check(self, ledger=None):
        """Raise BudgetError if ``ledger`` cannot pay for the whole search.

        Nothing is recorded. The ledger composes what it has recorded with
        every fit of the search (with each candidate the refit could use),
        as it will when they are spent; a refusal here means that a fold or
        the refit would be refused during the search.

        Parameters
        ----------
        ledger : PrivacyLedger, default=None
            The ledger that pays. None: the ``PrivacyLedger`` that the
            search's skdpx estimators spend in (their ``accountant``).

        Returns
        -------
        self
        """
        if ledger is None:
            if len(self._ledgers) != 1 or self._ledgers[0] is None:
                raise ValueError(
                    "the search's skdpx estimators do not all spend in one PrivacyLedger "
                    "(their accountant): pass the ledger that pays, check(ledger)."
                )
            ledger = self._ledgers[0]
        if not isinstance(ledger, PrivacyLedger):
            raise TypeError(f"ledger must be a PrivacyLedger, got {type(ledger).__name__}.")
        for option in self._refit_options or [None]:
            fits = self._fold_fits + ([option] if option is not None else [])
            delta = math.fsum(f.delta for f in fits)
            events = self._events(option)
            if not events:
                continue
            if delta >= 1:
                raise BudgetError(f"the search's {len(fits)} fits declare a total delta "
                                  f"{delta:g} >= 1: no ledger can pay for them.")
            try:
                ledger.check(ComposedDpEvent(events), delta=delta, relation=self.relation)
            except BudgetError as err:
                raise BudgetError(
                    f"this ledger cannot pay for the search: its {len(fits)} fits "
                    f"({self.n_candidates} candidates x {self.n_splits} folds"
                    f"{' + refit' if option is not None else ''}) may spend "
                    f"epsilon={self.epsilon:.4g} at delta={self.delta:.3g}. {err}"
                ) from err
        return self

    def to_frame(self):
        """The fits as a pandas DataFrame (one row per fit)."""
        import pandas as pd

        frame = pd.DataFrame([
            {"candidate": f.candidate, "split": f.split, "params": f.params,
             "epsilon": f.epsilon, "delta": f.delta, "exact": f.exact,
             "steps": ", ".join(f.steps)}
            for f in self.fits
        ])
        return frame.astype({"candidate": "Int64", "split": "Int64"})

    def __repr__(self):
        how = "planned spends" if self.exact else "caps"
        refit = f" + {self.n_fits - self.n_candidates * self.n_splits} refit" if (
            self.n_fits > self.n_candidates * self.n_splits) else ""
        return (f"SearchPrice(epsilon={self.epsilon:.4g}, delta={self.delta:.3g}; "
                f"{self.n_candidates} candidates x {self.n_splits} folds{refit} = "
                f"{self.n_fits} fits, at their {how}; basic composition: "
                f"epsilon={self.epsilon_basic:.4g})")


# --------------------------------------------------------------------------
# Which skdpx estimators a fit fits
# --------------------------------------------------------------------------
def _join(prefix, name):
    return f"{prefix}__{name}" if prefix else name


def _dp_steps(est, name, direct):
    """``([(name, estimator, direct)], [other fitted steps])`` for one fit of ``est``.

    ``direct``: the step is fitted on the search's rows themselves (not on
    the output of an earlier step, nor on a subset of the columns).
    """
    if isinstance(est, DPEstimator):
        # its own `estimator` (a black box) is used as it is, never fitted by it
        return [(name or type(est).__name__, est, direct)], []
    if isinstance(est, FrozenEstimator) or est is None or isinstance(est, str):
        return [], []  # "passthrough", "drop", a frozen model: nothing learnt here
    if isinstance(est, Pipeline):
        found, other = [], []
        for step_name, step in est.steps:
            sub, oth = _dp_steps(step, _join(name, step_name), direct)
            found += sub
            other += oth
            if not (step is None or isinstance(step, str)):
                direct = False  # the next step sees this one's output
        return found, other
    if isinstance(est, (FeatureUnion, ColumnTransformer)):
        parts = est.transformer_list if isinstance(est, FeatureUnion) else est.transformers
        found, other = [], []
        for part in parts:
            sub, oth = _dp_steps(part[1], _join(name, part[0]),
                                 direct and isinstance(est, FeatureUnion))
            found += sub
            other += oth
        return found, other
    if not isinstance(est, BaseEstimator):
        return [], []
    nested = [key for key, value in est.get_params(deep=True).items()
              if isinstance(value, DPEstimator)]
    if nested:
        raise ValueError(
            f"cannot price a search over {type(est).__name__}: it fits its skdpx estimator "
            f"({_join(name, nested[0])}) a number of times that only it knows. Put skdpx "
            "estimators in a Pipeline, a FeatureUnion or a ColumnTransformer, or on their own."
        )
    try:
        learns = get_tags(est).requires_fit
    except Exception:  # an estimator without scikit-learn's tags: assume it learns
        learns = True
    return [], ([name or type(est).__name__] if learns else [])


def _relation(step):
    ledger = step.accountant
    return ledger.relation if isinstance(ledger, PrivacyLedger) else "add_or_remove"


# --------------------------------------------------------------------------
# Candidates
# --------------------------------------------------------------------------
def _is_budget_key(key, value):
    """Whether a search parameter can change what a fit spends."""
    return key.rsplit("__", 1)[-1] in _BUDGET_PARAMETERS or isinstance(value, BaseEstimator) \
        or value is None or isinstance(value, str) and value in ("passthrough", "drop")


def _worst_case_candidates(search):
    """The candidates a RandomizedSearchCV with ``random_state=None`` may draw,
    reduced to their budget parameters (the others change no cap), with the
    number of candidates it will draw."""
    dists = search.param_distributions
    dists = [dists] if isinstance(dists, Mapping) else list(dists)
    grids = []
    for d in dists:
        grid = {}
        for key, values in d.items():
            if hasattr(values, "rvs"):
                support = getattr(values, "support", None)
                if key.rsplit("__", 1)[-1] not in _BUDGET_PARAMETERS:
                    continue
                high = support()[1] if support is not None else math.inf
                if not np.isfinite(high):
                    raise ValueError(
                        f"{key} is drawn from a distribution with no finite upper end: its "
                        "largest value, hence the price, is unbounded. Give the search an "
                        "integer random_state (the candidates are then known), or a list."
                    )
                grid[key] = [float(high)]
            elif any(_is_budget_key(key, v) for v in values):
                grid[key] = list(values)
        grids.append(grid)
    all_lists = all(not hasattr(v, "rvs") for d in dists for v in d.values())
    n = min(search.n_iter, len(ParameterGrid(dists))) if all_lists else search.n_iter
    return list(ParameterGrid(grids)), n


def _candidates(search):
    """``(candidates, known)``: the search's candidates in order, or (with
    ``known=False``) the budget-relevant ones it may draw from."""
    if isinstance(search, GridSearchCV):
        return list(ParameterGrid(search.param_grid)), True, None
    state = search.random_state
    if state is None:
        possible, n = _worst_case_candidates(search)
        return possible, False, n
    if not isinstance(state, (Integral, np.random.RandomState)):
        raise ValueError(f"random_state must be None, an int or a RandomState, got {state!r}.")
    # the very draws the search will make (a copy: the search's state is not consumed)
    sampler = ParameterSampler(search.param_distributions, search.n_iter,
                               random_state=copy.deepcopy(state))
    return list(sampler), True, None


# --------------------------------------------------------------------------
# One fit
# --------------------------------------------------------------------------
def _price_fit(estimator, params, rows, X, y):
    """``(event, epsilon, delta, exact, steps, count_epsilon)`` of one fit of ``estimator``
    with ``params`` on ``rows`` (indices into X; None: all rows). Without X, at the caps.

    Under add-or-remove, a skdpx step's fit releases its DP row count first and
    plans the rest from it: the count is priced exactly (``FixedLossDpEvent``),
    the rest at its cap (``epsilon - count epsilon``, ``delta``), which every
    plan the count can select meets (the fit's own ledger refuses more). The
    ledger adds the count's epsilon to the rest's (basic composition), and so
    does the price. Only where the number of rows is public (replace-one, or a
    non-private fit) is a fit priced exactly from its fold's size.
    """
    est = clone(estimator).set_params(**params)
    steps, _ = _dp_steps(est, "", True)
    events, epsilon, delta, exact, counted = [], 0.0, 0.0, True, 0.0
    for _, step, direct in steps:
        count = FitCount(epsilon=float(step.epsilon), relation=_relation(step))
        if count.private:
            exact = False
            step_delta = float(step.delta)
            events += [count.event, approx_event(float(step.epsilon) - count.epsilon, step_delta)]
            epsilon += float(step.epsilon)
            counted += count.epsilon
        elif X is not None and direct and _priced_exactly(step):
            Xr = X if rows is None else _safe_indexing(X, rows)
            yr = y if (rows is None or y is None) else _safe_indexing(y, rows)
            planner = clone(step)
            with warnings.catch_warnings():
                # the fit itself warns about its inputs (bounds read from data, seeds)
                warnings.simplefilter("ignore", PrivacyLeakWarning)
                # the number of rows is public here (replace-one, or epsilon = inf)
                plan = planner._plan_fit(planner._validate_fit(Xr, yr), _relation(step),
                                         FitCount(epsilon=planner.epsilon,
                                                  relation=_relation(step), n_rows=num_rows(Xr)))
            if isinstance(plan.event, NoOpDpEvent):
                continue
            # the delta the fit declares to its ledger (EstimatorLedger._declared)
            step_delta = 0.0 if is_pure(plan.event) else float(step.delta)
            events.append(plan.event)
            epsilon += compute_epsilon(plan.event, step_delta)
        else:
            exact = False
            step_delta = float(step.delta)
            events.append(approx_event(step.epsilon, step_delta))
            epsilon += float(step.epsilon)
        delta += step_delta
    if not events:
        event = NoOpDpEvent()
    else:
        event = events[0] if len(events) == 1 else ComposedDpEvent(events)
    return event, epsilon, delta, exact, tuple(name for name, _, _ in steps), counted


def _fit_price(estimator, params, rows, X, y, *, candidate, split, cache):
    key = (id(params), None if rows is None else np.asarray(rows).tobytes(), X is None)
    if key not in cache:
        cache[key] = _price_fit(estimator, params, rows, X, y)
    event, epsilon, delta, exact, steps, counted = cache[key]
    return FitPrice(candidate, split, params, float(epsilon), float(delta), event, exact, steps,
                    float(counted))


def _worst(prices, *, candidate, split):
    """One fit bounded by the largest cap of several possible fits.

    Their row counts (``FixedLossDpEvent``, added by the ledger as they are)
    by the largest; the rest by the worst (epsilon, delta)-DP mechanism at
    the largest epsilon and delta left.
    """
    counted = max(p.count_epsilon for p in prices)
    delta = max(p.delta for p in prices)
    rest = max(p.epsilon - p.count_epsilon for p in prices)
    # a fit's count is a fixed share of its epsilon: the largest count and the largest
    # rest are the same fit's, and add up to the largest epsilon
    eps = max(p.epsilon for p in prices)
    events = [fixed_loss_event(counted)] if counted > 0 else []
    if rest > 0:
        events.append(approx_event(rest, delta))
    event = NoOpDpEvent() if not events else events[0] if len(events) == 1 else \
        ComposedDpEvent(events)
    steps = tuple(sorted({s for p in prices for s in p.steps}))
    return FitPrice(candidate, split, None, eps, delta, event, False, steps, counted)


# --------------------------------------------------------------------------
# The public function
# --------------------------------------------------------------------------
def price_search(search, X=None, y=None, *, groups=None, param_grid=None, cv=None, refit=True):
    """What a scikit-learn search over skdpx estimators may spend, before it runs.

    A search fits its estimator ``n_candidates x n_splits`` times, plus
    once more for the refit. Each fit of a skdpx estimator spends at most
    that estimator's ``(epsilon, delta)`` (its own ledger refuses more),
    with the values each candidate sets (``clf__epsilon`` in the grid, say).

    Under add-or-remove neighbours (the default relation) the number of rows
    is private, and nothing in the price depends on it: each fit releases
    its own DP row count first (``COUNT_SHARE`` of its epsilon, a
    ``FixedLossDpEvent``, priced exactly) and plans the rest from that
    count, so the rest is priced at its cap (``epsilon - count epsilon``,
    ``delta``), which whatever plan the count selects meets; the number of
    splits is taken from the splitter without the rows (a splitter that
    counts them, ``LeaveOneOut``, is refused). Under replace-one neighbours
    the number of rows is public: given ``X`` (and ``y``), the fits of the
    skdpx estimators whose fit commits their only spend (their class
    declares it: ``_dp_capabilities.exact_price``, see :mod:`skdpx.base`;
    DPLocallyLinearClassifier, DPCounterfactualGenerator and PrivRecourse)
    fitted on the search's rows are priced at the very spend they will
    plan, from each training fold's size; the others (DPLimeExplainer, which
    spends on queries up to its cap, or a skdpx step behind a transformer)
    at their cap.

    The fits are composed with privacy loss distributions, as a
    :class:`~skdpx.privacy.PrivacyLedger` composes them (caps as the worst
    (epsilon, delta)-DP mechanism: the optimal composition theorem), and the
    total is never reported above basic composition (the sum of the
    epsilons, at the sum of the deltas). The refit's candidate is chosen
    during the search: the price takes the worst one.

    Not in the price, and warned about (``PrivacyLeakWarning``): the
    search's scores on the validation folds and the choice made from them,
    exact values computed from private rows, and any step that is not a
    skdpx estimator but learns from the rows. Private selection, which
    accounts for them, is ``DPGridSearchCV`` / ``DPRandomSearchCV``.

    Privacy unit: one row of the search's data, under the estimators'
    neighbouring relation. Each fit is accounted for its own training fold,
    as the ledger accounts for it.

    Parameters
    ----------
    search : GridSearchCV, RandomizedSearchCV or estimator
        The search (fitted or not: it is not changed). An estimator is
        searched with ``GridSearchCV(search, param_grid, cv=cv, refit=refit)``.
    X : array-like of shape (n_samples, n_features), default=None
        The search's rows, read under replace-one neighbours only (where
        their number is public): by splitters that count them
        (``LeaveOneOut``...), and for the planned spends. Only their number,
        their shape and what each estimator's validation reads are used;
        nothing is fitted. Under add-or-remove they are not read.
    y : array-like of shape (n_samples,), default=None
    groups : array-like of shape (n_samples,), default=None
        For group splitters.
    param_grid : dict or list of dicts, default=None
        With an estimator only.
    cv : int, cross-validation generator or iterable, default=None
        With an estimator only (None: 5 folds).
    refit : bool, default=True
        With an estimator only.

    Returns
    -------
    SearchPrice
        ``epsilon``, ``delta``, ``n_fits``, ``fits`` (one :class:`FitPrice`
        per fit) and ``check(ledger)``.

    Warns
    -----
    PrivacyLeakWarning
        Always: the scores and the choice are not accounted for; and when a
        step that is not a skdpx estimator learns from the rows.
    UserWarning
        When ``n_jobs`` runs the fits in other processes while a skdpx
        estimator spends in an in-memory ``PrivacyLedger``: every fit would
        fail there (``LedgerDetachedError``); use ``PrivacyLedger(path=...)``.

    Examples
    --------
    >>> import warnings
    >>> from sklearn.model_selection import GridSearchCV
    >>> from skdpx import DPLocallyLinearClassifier
    >>> from skdpx.model_selection import price_search
    >>> from skdpx.privacy import PrivacyLedger
    >>> ledger = PrivacyLedger(epsilon=4.0, delta=1e-4)
    >>> clf = DPLocallyLinearClassifier(bounds=(-1, 1), delta=1e-6, accountant=ledger)
    >>> search = GridSearchCV(clf, {"epsilon": [0.1, 0.2], "n_maps": [1, 2]}, cv=3)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     price = price_search(search)
    >>> price.n_fits, round(price.epsilon_basic, 2), round(price.delta, 6)
    (13, 2.0, 1.3e-05)
    >>> round(price.epsilon_at(1e-4), 2)  # at the ledger's delta: composed, below the sum
    1.79
    >>> price.check() is price  # the ledger can pay for all 13 fits
    True
    """
    if not isinstance(search, (GridSearchCV, RandomizedSearchCV)):
        if not isinstance(search, BaseEstimator) or hasattr(search, "cv_results_") or \
                hasattr(search, "param_grid") or hasattr(search, "param_distributions"):
            raise TypeError(
                "search must be a GridSearchCV, a RandomizedSearchCV or an estimator, got "
                f"{type(search).__name__}."
            )
        search = GridSearchCV(search, {} if param_grid is None else param_grid, cv=cv,
                              refit=refit)
    elif param_grid is not None or cv is not None or refit is not True:
        raise TypeError("param_grid, cv and refit are given with an estimator only: the "
                        "search has its own.")

    warn_exact_scores("The search's validation scores (cv_results_) and its choice "
                      "(best_params_)")
    estimator = search.estimator
    candidates, known, n_drawn = _candidates(search)
    if not candidates:
        raise ValueError("the search has no candidate.")

    if isinstance(search.cv, Iterator):
        raise ValueError("cv is an iterator, which pricing would use up: give the splits as a "
                         "list, or a splitter.")
    # the ledgers the estimators spend in, the steps outside any ledger
    ledgers, unaccounted, in_memory = [], set(), False
    relations = set()
    for params in candidates:
        est = clone(estimator).set_params(**params)
        steps, other = _dp_steps(est, "", True)
        unaccounted.update(other)
        for _, step, _ in steps:
            relations.add(_relation(step))
            if isinstance(step.accountant, PrivacyLedger):
                if not any(step.accountant is led for led in ledgers):
                    ledgers.append(step.accountant)
                in_memory = in_memory or step.accountant.path is None
            elif None not in ledgers:
                ledgers.append(None)
    if len(relations) > 1:
        raise ValueError("the search's skdpx estimators are calibrated under different "
                         f"neighbouring relations {sorted(relations)}: their spends do not "
                         "compose.")
    relation = relations.pop() if relations else "add_or_remove"

    splitter = check_cv(search.cv, y, classifier=is_classifier(estimator))
    if relation == "add_or_remove":
        # the number of rows is private: so is a number of splits counted from the rows,
        # and each fit is priced without its fold's size (its own DP count plans it)
        try:
            n_splits = splitter.get_n_splits(None, None, None)
        except (ValueError, TypeError) as err:
            raise ValueError(
                f"cv={splitter!r} counts its splits from the rows (or the groups): under "
                "add-or-remove neighbours their number is private, and so is a number of fits "
                "made from it. Use a splitter with a fixed number of splits (KFold, "
                "StratifiedKFold, GroupKFold, ShuffleSplit...), or a list of splits."
            ) from err
        splits = [None] * n_splits
    else:  # replace-one: the number of rows is public, and so are the folds' sizes
        n_splits = splitter.get_n_splits(X, y, groups)
        splits = [train for train, _ in splitter.split(X, y, groups)] if X is not None else \
            [None] * n_splits

    cache = {}
    fold_fits, possible = [], []
    # unknown candidates are priced at their caps: their other parameters
    # (batch size, epochs...) change the planned spend within the cap
    X_plan = X if known else None
    for i, params in enumerate(candidates):
        prices = [_fit_price(estimator, params, rows, X_plan, y, cache=cache,
                             candidate=i if known else None, split=k)
                  for k, rows in enumerate(splits)]
        if known:
            fold_fits += prices
        else:
            possible.append(prices)
    if not known:
        # any n_drawn of the possible candidates: each fold's fit at the worst one
        fold_fits = [_worst([p[k] for p in possible], candidate=None, split=k)
                     for _ in range(n_drawn) for k in range(n_splits)]

    refit_options = []
    if search.refit is not False:
        alternatives = [_fit_price(estimator, params, None, X_plan, y, cache=cache, candidate=None,
                                   split=None) for params in candidates]
        if not known:
            alternatives = [_worst(alternatives, candidate=None, split=None)]
        seen = {}
        for alt in alternatives:
            seen.setdefault((event_to_json(alt.event), alt.delta), alt)
        refit_options = list(seen.values())

    if unaccounted:
        warnings.warn(
            f"the search's steps {sorted(unaccounted)} are not skdpx estimators but learn "
            "from the private rows: what they learn (a scaler's means, say) is released "
            "in the fitted search and accounted nowhere, and is not in this price.",
            PrivacyLeakWarning, stacklevel=2,
        )
    if in_memory and search.n_jobs not in (None, 1):
        warnings.warn(
            f"n_jobs={search.n_jobs} fits in joblib worker processes, where an in-memory "
            "PrivacyLedger cannot spend (LedgerDetachedError): every fit would fail. Keep "
            "the budget in a sqlite file, PrivacyLedger(path='budget.sqlite', ...), or fit "
            "with n_jobs=1.",
            UserWarning, stacklevel=2,
        )
    return SearchPrice(
        fold_fits, refit_options, n_candidates=n_drawn if not known else len(candidates),
        n_splits=n_splits, relation=relation,
        ledgers=ledgers, unaccounted_steps=sorted(unaccounted),
    )
