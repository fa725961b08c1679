"""Hyperparameter searches that are themselves differentially private.

``GridSearchCV`` over a DP estimator records every fit's spend, yet leaks
through three doors: its validation scores are exact releases, its choice is
made from them, and ``candidates x folds`` fits can empty a capped ledger
before the refit. :class:`DPRandomSearchCV` and :class:`DPGridSearchCV`
close all three (the privacy core's :mod:`skdpx.privacy._selection` holds the
draws and the accounting):

0. the number of rows is private under add-or-remove neighbours: the
   search releases one DP count of all its rows first
   (:class:`~skdpx.privacy.FitCount`, ``COUNT_SHARE`` of its epsilon,
   Laplace noise, committed to the ledger before it is read) and plans
   everything else from it: the parts' expected sizes, each candidate's
   fit (run with :func:`~skdpx.privacy.given_row_count`, so that its plan
   is a fixed function of the count and it releases no count of its own),
   the refit, the scores' public normaliser;
1. the rows are split (a holdout part, or k folds) independently of each
   other and of the data, with the secure generator;
2. a random number of runs ``K`` is drawn (Papernot & Steinke 2022: a
   truncated negative binomial or a Poisson; Liu & Talwar 2019: a
   geometric), independently of the data;
3. each run draws a candidate uniformly from the public pool, fits it with
   DP on the training part, and scores it with a DP score (Gaussian noise on
   the validation rows' contributions, :mod:`._scorers`);
4. the best run is kept: its candidate, its noisy score, its model;
5. optionally the selected candidate is refitted on all the rows.

The whole search is priced before it starts (:meth:`price`, at a count the
caller gives), calibrated so that it fits in ``(epsilon, delta)``, and
committed to the ledger in two entries: the count (``FixedLossDpEvent``),
then, once the count is known and before any other private value is read,
one event ``RepeatAndSelect(run) + WorstOf(refits)`` for the rest.

Why the accounting holds although the rest is planned from the count: the
count ``c`` is an ``epsilon_0``-DP release (L1 sensitivity 1, Laplace of
scale ``1 / epsilon_0``). Everything after it (the candidates' events, the
runs' budget, the score noise, the refit) is a fixed function of ``c`` and
of public facts, and for every value ``c`` the search can see, the rest is
calibrated so that its event (accounted with Renyi DP, Papernot & Steinke's
bound, then converted) meets ``(epsilon - epsilon_0, delta)``: for that
fixed ``c`` the candidates' events are fixed, so the RDP accounting of the
rest is the accounting of a non-adaptive search, made after ``c`` is
released. Basic composition with a pure-DP first release then holds
whatever the rest is chosen from it: ``P[M(D) in S] = sum_c P[c | D]
P[R_c(D) in S_c] <= sum_c e^epsilon_0 P[c | D'] (e^(epsilon - epsilon_0)
P[R_c(D') in S_c] + delta)``, i.e. ``(epsilon, delta)``. The ledger
accounts the count as a ``FixedLossDpEvent`` (its privacy loss a point mass
at ``epsilon_0``; its Renyi curve ``epsilon_0`` at every order), whose
``epsilon_0`` adds to the rest's epsilon exactly: the same basic
composition. Under replace-one neighbours the number of rows is public (the
relation fixes it) and no count is released. Only the best run's output is released: ``cv_results_`` shows the
public pool and the selected candidate's DP score. The other runs' scores,
the number of runs and the candidates the runs drew stay hidden, which is
what makes random stopping private: given the number of runs ``K``, the
best of ``K`` runs is the selection with a fixed number of runs, whose
privacy loss grows with ``K`` (``tests/test_audit_search.py`` measures
epsilon >= 2.86 (seeds 0-4) for a search that claims 2.63 at delta 1e-3 when ``K`` is
published with the best score). Nor may a warning or an error tell them:
the search shows the warnings of planning the whole pool, once each, before
it reads a private row, drops those of its runs, gives a failed run no
score, and raises a failure of its hidden part afresh, with a fixed text
(doc/model_selection.rst, "What a search warns and raises").
"""

from abc import ABCMeta, abstractmethod
from collections.abc import Mapping
from copy import deepcopy
from dataclasses import dataclass, field
import math
from numbers import Integral, Real
import warnings

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin
from sklearn.model_selection import ParameterGrid, ParameterSampler
from sklearn.utils import get_tags
from sklearn.utils.metaestimators import available_if
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import check_is_fitted

from .._sklearn_compat import (
    Interval,
    RealNotInt,
    StrOptions,
    fit_context,
    safe_indexing,
)
from ..base import kept_model
from ..utils._tables import num_rows
from ..privacy import (
    BUDGET_PARAMETER_CONSTRAINTS,
    COUNT_SHARE,
    EstimatorLedger,
    FitCount,
    MixtureDpEvent,
    PrivacyLedger,
    SpendReportMixin,
    calibrate_noise,
    compose_events,
    compute_epsilon,
    event_to_json,
    gaussian_event,
    noise_source,
)
from ..utils._stacklevel import _outside_stacklevel
from ..privacy._selection import (
    SELECTIONS,
    score_releases,
    free_score_noise,
    draw_candidates,
    draw_runs,
    draw_split,
    release_score,
    run_distribution,
    score_event,
    search_event,
)
from ._runs import (
    N_JOBS_CONSTRAINT,
    _check_candidates,
    _dp_step,
    _fit_run,
    _fresh,
    _hidden_failure,
    _planner,
    _recording,
    _silenced,
    _validate_candidates,
    _validate_rows,
    _warn_once,
)
from ._scorers import DPScorer, get_dp_scorer

__all__ = ["DPGridSearchCV", "DPRandomSearchCV", "SearchPlan"]

@dataclass
class SearchPlan:
    """What a private search will spend, and how its budget is split.

    Made by :meth:`DPRandomSearchCV.price` (before anything is read or
    spent) and kept as ``search_plan_`` by ``fit``.

    Attributes
    ----------
    epsilon, delta : float
        The whole search's cost (training, scoring, selection, refit),
        computed from ``event`` with Renyi DP, at most the search's budget.
    candidate_epsilon, candidate_delta : float
        The budget each run's fit is given (its ``epsilon`` and ``delta``);
        the fit runs with the search's count (it releases none of its own).
    refit_epsilon, refit_delta : float or None
        The refit's budget (None without refit).
    score_noise_multiplier : float or None
        The Gaussian noise of a run's score over its sensitivity (None for a
        scorer that reads no private row).
    score_sensitivity : float or None
        The L2 sensitivity of the score's sums under ``relation``.
    selection, mean_runs, shape, gamma : str, float, float, float or None
        The number of runs: its distribution, its mean, dp_accounting's
        shape and the stopping probability.
    n_candidates, n_folds : int
        The public pool's size; 1 for a holdout split.
    n_rows : float
        The count the search plans with: its DP count of the rows under
        add-or-remove (after ``fit``), the public number of rows under
        replace-one, or the count given to :meth:`~DPRandomSearchCV.price`.
        Never the private number of rows.
    n_train, n_validation : float
        The parts' expected sizes, ``n_rows`` times their shares (a run's
        training part, and the validation rows a run's score sums over):
        what every fit and score is planned with. Not the drawn sizes.
    count_epsilon : float
        The DP count's epsilon (``COUNT_SHARE * epsilon``; 0 when the
        number of rows is public).
    count_std : float
        The standard deviation of the count's noise (``sqrt(2) /
        count_epsilon``; 0 when public).
    relation : str
    event : DpEvent
        The whole search: the count's ``FixedLossDpEvent`` (when it is
        released) composed with ``selection_event``.
    selection_event : DpEvent
        What the ledger records after the count: the runs, their selection
        and the refit.
    candidate_events : list of DpEvent
        Each candidate's fit on the training part at ``candidate_epsilon``.
    """

    epsilon: float
    delta: float
    candidate_epsilon: float
    candidate_delta: float
    refit_epsilon: object
    refit_delta: object
    score_noise_multiplier: object
    score_sensitivity: object
    selection: str
    mean_runs: float
    shape: float
    gamma: object
    n_candidates: int
    n_folds: int
    n_rows: float
    n_train: float
    n_validation: float
    count_epsilon: float
    count_std: float
    relation: str
    event: object = field(repr=False)
    selection_event: object = field(repr=False, default=None)
    candidate_events: list = field(repr=False, default_factory=list)

    def epsilon_at(self, delta):
        """The search's epsilon at another ``delta``."""
        return compute_epsilon(self.event, delta)

    def to_dict(self):
        """The plan as a JSON-ready dict (the event as dp_accounting JSON)."""
        out = {k: v for k, v in self.__dict__.items()
               if k not in ("event", "selection_event", "candidate_events")}
        out["event"] = event_to_json(self.event)
        out["selection_event"] = event_to_json(self.selection_event)
        return out


# --------------------------------------------------------------------------
# The estimator's skdpx step
# --------------------------------------------------------------------------
class _BaseDPSearch(SpendReportMixin, MetaEstimatorMixin, BaseEstimator, metaclass=ABCMeta):
    """The private search shared by DPGridSearchCV and DPRandomSearchCV."""

    _parameter_constraints = {
        "estimator": [BaseEstimator],
        "scoring": [str, DPScorer, None],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "accountant": BUDGET_PARAMETER_CONSTRAINTS["accountant"],
        "cv": [Interval(RealNotInt, 0, 1, closed="neither"),
               Interval(Integral, 2, None, closed="left")],
        "refit": ["boolean"],
        "refit_share": [Interval(Real, 0, 1, closed="neither")],
        "selection": [StrOptions(set(SELECTIONS))],
        "eta": [Interval(Real, 0, None, closed="left")],
        "n_jobs": N_JOBS_CONSTRAINT,
        "random_state": ["random_state"],
    }

    def __init__(self, estimator, *, scoring=None, epsilon=1.0, delta=1e-5, accountant=None,
                 cv=0.2, refit=True, refit_share=0.5, selection="poisson", eta=0.0,
                 n_jobs=None, random_state=None):
        self.estimator = estimator
        self.scoring = scoring
        self.epsilon = epsilon
        self.delta = delta
        self.accountant = accountant
        self.cv = cv
        self.refit = refit
        self.refit_share = refit_share
        self.selection = selection
        self.eta = eta
        self.n_jobs = n_jobs
        self.random_state = random_state

    # ------------------------------------------------------------ planning
    @abstractmethod
    def _mean_runs(self, n_candidates):
        """The mean number of runs, for a pool of ``n_candidates``."""

    @abstractmethod
    def _candidates(self):
        """The public pool: a list of parameter dicts."""

    def _setup(self):
        """Checks that need no data: ``(prefix, step, pool, scorer, mean)``."""
        if isinstance(self.cv, bool):
            raise ValueError("cv must be a fraction in (0, 1) or a number of folds >= 2.")
        if not math.isfinite(self.epsilon):
            raise ValueError("a private search needs a finite epsilon.")
        if isinstance(self.cv, Integral) and not self.refit:
            raise ValueError(
                f"refit=False keeps the selected run's model, which a holdout split has; with "
                f"cv={self.cv} folds a run fits {self.cv} models. Use refit=True or a holdout "
                "fraction (cv=0.2)."
            )
        if self.refit and self._relation() == "add_or_remove" and \
                self.refit_share + COUNT_SHARE >= 1:
            raise ValueError(
                f"the search cannot fit in epsilon={self.epsilon:g}: refit_share="
                f"{self.refit_share:g} and the DP row count ({COUNT_SHARE:g} of epsilon, "
                "released first under add-or-remove) leave nothing for the runs. Lower "
                "refit_share. Nothing was spent."
            )
        prefix, step = _dp_step(self.estimator)
        pool = self._candidates()
        if not pool:
            raise ValueError("the search has no candidate.")
        _check_candidates(pool, prefix)
        _validate_candidates(self.estimator, pool, prefix,
                             {"epsilon": float(self.epsilon), "delta": float(self.delta),
                              "accountant": None, "random_state": None})
        scorer = get_dp_scorer(self.scoring, step)
        return prefix, step, pool, scorer, self._mean_runs(len(pool))

    def _relation(self):
        acc = self.accountant
        if acc is None:
            acc = getattr(_dp_step(self.estimator)[1], "accountant", None)
        return acc.relation if isinstance(acc, PrivacyLedger) else "add_or_remove"

    def _count(self, relation):
        """The search's :class:`~skdpx.privacy.FitCount` (not released yet)."""
        return FitCount(epsilon=self.epsilon, relation=relation)

    def _shares(self, scorer):
        """``(n_folds, train share, validation share)``: the expected share of the rows in a
        run's training part and in the validation rows a run's score sums over."""
        if scorer.public:  # the scorer reads no private row: every run fits on all of them
            return 1, 1.0, 0.0
        if isinstance(self.cv, Real) and not isinstance(self.cv, Integral):
            return 1, 1.0 - float(self.cv), float(self.cv)
        k = int(self.cv)
        return k, (k - 1) / k, 1.0  # a run scores every fold: all the rows

    def _check_count(self, n_rows, setup, count, *, priced):
        """Refuse a planning count whose training part is too small for the estimator.

        Public facts only: ``n_rows`` is the DP count (then its epsilon was
        spent, and the message says so), the public number of rows under
        replace-one, or the count given to ``price``.
        """
        prefix, step, pool, scorer, mean = setup
        min_rows = getattr(step, "_min_samples", 1)
        _, train_share, val_share = self._shares(scorer)
        if n_rows * train_share >= min_rows:
            if not scorer.public and n_rows * val_share < 1:
                warnings.warn(
                    f"the validation rows expected from the {'given' if priced else 'DP'} "
                    f"row count are {n_rows * val_share:.2g} (cv={self.cv!r}): every run's "
                    "score is mostly noise and the selection is close to random. Use more "
                    "rows or a larger cv.", UserWarning, stacklevel=3)
            return
        if priced:
            what, spent = f"the given row count n_rows={n_rows:g}", "Nothing was spent."
        elif count.private:
            what = f"the DP count of the rows is {n_rows:.1f} (noise std {count.std:.3g}):"
            spent = (f"The row count's epsilon ({count.epsilon:.4g}) was spent; nothing else "
                     "was.")
        else:
            what = f"n_samples = {int(n_rows)} (public under {count.relation}):"
            spent = "Nothing was spent."
        raise ValueError(
            f"{type(self).__name__}: {what} a run's training part would expect "
            f"{n_rows * train_share:.1f} rows and {type(step).__name__} needs at least "
            f"{min_rows}. {spent}"
        )

    def _plan(self, X, y, n_rows, setup, count, *, spent="Nothing was spent."):
        """Calibrate the runs' budget so that the whole search fits in (epsilon, delta).

        ``n_rows`` is the public planning count (the DP count, the public
        number of rows under replace-one, or the count given to ``price``):
        the parts' expected sizes, every candidate's fit and the refit are
        planned from it. ``count`` is the search's
        :class:`~skdpx.privacy.FitCount`: its ``FixedLossDpEvent`` (when the
        count is released) is composed with the rest, so that the rest is
        calibrated to ``(epsilon - count.epsilon, delta)`` for this value of
        the count (basic composition, valid whatever rest the count selects).
        ``X`` and ``y`` are read for their schema only (validation), never
        for their number of rows or their values' statistics.
        """
        prefix, step, pool, scorer, mean = setup
        relation = self._relation()
        n_rows = float(n_rows)
        n_folds, train_share, val_share = self._shares(scorer)
        n_train, n_val = train_share * n_rows, val_share * n_rows

        def planner(est, n_plan, *, refit=False):
            plan = _planner(est, prefix, X, y, relation, scorer, n_plan, refit=refit)

            def joined(eps, delta):
                event, extra = plan(eps, delta)
                return event if extra is None else compose_events(event, extra)
            return joined

        shape, gamma = run_distribution(self.selection, mean, self.eta)
        sens = None if scorer.public else float(scorer.sensitivity(relation))
        delta = float(self.delta)
        eps_refit = self.refit_share * self.epsilon if self.refit else None
        count_event = count.event  # None when the number of rows is public

        def total(event):
            # the count's fixed loss adds its epsilon exactly (FixedLossDpEvent)
            return compute_epsilon(compose_events(count_event, event), delta)

        # every candidate of the pool is validated and planned, its warnings recorded: those
        # of the runs' budget finally chosen are shown, once each, whatever the runs draw
        with _recording() as shown:
            fit_planners = [planner(_fresh(self.estimator, p), n_train) for p in pool]
            refit_planners = [planner(_fresh(self.estimator, p), n_rows, refit=True)
                              for p in pool] if self.refit else []
            refit_events = _distinct([p(eps_refit, delta) for p in refit_planners])

        cache = {}

        def evaluate(eps_c):
            if eps_c not in cache:
                with _recording() as caught:
                    fits = [p(eps_c, delta) for p in fit_planners]
                z = None if scorer.public else _score_noise(fits, eps_c, delta, n_folds)
                event = search_event(fits, None if z is None else score_event(z),
                                     n_folds=n_folds, mean=mean, shape=shape,
                                     refit_events=refit_events)
                cache[eps_c] = (total(event), event, fits, z, caught)
            return cache[eps_c]

        # start from a proxy that costs milliseconds: each run's fit as one Gaussian
        # release with the same (epsilon, delta) (the fits' own calibration is slow)
        def proxy(eps_c):
            fit = gaussian_event(calibrate_noise(eps_c, delta))
            z = None if scorer.public else _score_noise([fit], eps_c, delta, n_folds)
            event = search_event([fit], None if z is None else score_event(z),
                                 n_folds=n_folds, mean=mean, shape=shape,
                                 refit_events=refit_events)
            return total(event)

        budget = self.epsilon - count.epsilon  # what is left after the count
        x0 = _largest_below(proxy, self.epsilon, budget / (4 if self.refit else 2),
                            rtol=0.01, max_evals=12) or budget / 4
        # a run never gets more than what the count leaves (an estimator whose spend
        # does not grow with its epsilon, DPLime's per-query budget, stops there)
        eps_c = _largest_below(lambda e: evaluate(min(e, budget))[0], self.epsilon, x0)
        eps_c = None if eps_c is None else min(eps_c, budget)
        if eps_c is None:
            raise ValueError(
                f"the search cannot fit in epsilon={self.epsilon:g}: the refit alone "
                f"(refit_share={self.refit_share:g}) with selection over {len(pool)} candidates "
                "takes it all. Lower refit_share, set refit=False, or raise epsilon. " + spent
            )
        whole, event, fits, z, caught = evaluate(eps_c)
        _warn_once(list(shown) + list(caught))
        return SearchPlan(
            epsilon=float(whole), delta=delta, candidate_epsilon=float(eps_c),
            candidate_delta=delta, refit_epsilon=eps_refit,
            refit_delta=delta if self.refit else None, score_noise_multiplier=z,
            score_sensitivity=sens, selection=self.selection, mean_runs=float(mean),
            shape=float(shape), gamma=gamma, n_candidates=len(pool), n_folds=n_folds,
            n_rows=n_rows, n_train=float(n_train), n_validation=float(n_val),
            count_epsilon=float(count.epsilon), count_std=float(count.std), relation=relation,
            event=compose_events(count_event, event), selection_event=event,
            candidate_events=fits,
        )

    def _validate_rows(self, X, y, setup):
        """The estimator's own validation of all the rows (NaN, shapes, sparse, labels...),
        before anything is drawn or spent. Their number is not checked here: it is
        private under add-or-remove (:meth:`_check_count` checks the planning count)."""
        prefix, step, pool, scorer, mean = setup
        return _validate_rows(self.estimator, prefix, step, X, y)

    def price(self, X, y=None, *, n_rows=None):
        """The planned cost of the whole search at a given row count, before anything is spent.

        The budget is split as ``fit`` splits it once its count is known:
        ``fit`` releases a DP count of the rows first (under add-or-remove,
        where the number of rows is private) and plans from it, within
        ``(epsilon, delta)`` whatever the count; ``price`` makes the same
        plan from ``n_rows``. Nothing is recorded and no private value is
        read: ``X`` and ``y`` give the schema (validation), never their
        number of rows under add-or-remove.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), default=None
        n_rows : float or None, default=None
            The row count to plan with: a public estimate, or a DP count
            released before. Required under add-or-remove neighbours (the
            default relation); under replace-one the number of rows of
            ``X`` is public and is the default.

        Returns
        -------
        SearchPlan
            Its ``count_epsilon`` is the count ``fit`` will release;
            ``epsilon`` includes it.
        """
        self._validate_params()
        setup = self._setup()
        X, y = self._validate_rows(X, y, setup)
        count = self._count(self._relation())
        if n_rows is None:
            if count.private:
                raise ValueError(
                    f"{type(self).__name__}.price needs n_rows: under add-or-remove "
                    "neighbours the number of rows is private, and fit plans from a DP count "
                    "it releases first. Give the count to plan with, price(X, y, n_rows=...) "
                    "(a public estimate, or a DP count released before); fit's own plan stays "
                    "within (epsilon, delta) whatever its count. Nothing was read or spent."
                )
            n_rows = num_rows(X)  # public: the relation fixes it
        if isinstance(n_rows, bool) or not isinstance(n_rows, Real) or \
                not math.isfinite(n_rows) or not n_rows > 0:
            raise ValueError(f"n_rows must be a finite number > 0, got {n_rows!r}.")
        self._check_count(float(n_rows), setup, count, priced=True)
        return self._plan(X, y, float(n_rows), setup, count)

    # ------------------------------------------------------------ fitting
    @fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None):
        """Run the private search: a DP count, then plan, commit, K DP runs and the refit.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), default=None

        Returns
        -------
        self
        """
        setup = self._setup()
        X, y = self._validate_rows(X, y, setup)
        prefix, step, pool, scorer, mean = setup
        # from here on this frame holds only what the selection releases: the split, the
        # number of runs, the candidates drawn, the runs' models and sums and the noise
        # source live in _select's frame, gone when it returns (or fails)
        selected = self._select(X, y, setup)
        if selected.failure is not None:
            raise _hidden_failure(selected.failure, "the private search",
                                  "which run failed, hence how many ran and what they "
                                  "drew") from None
        plan = self.search_plan_
        if selected.index is None:
            # no run returned a score: the selection's output is "nothing", the same on
            # every dataset. A candidate drawn from the public pool, independently of the
            # data, is then refitted (its refit is in the event committed)
            if not self.refit:
                raise ValueError(_NO_SCORE.format(mean=plan.mean_runs) + " and refit=False: "
                                 "there is no model. The budget is spent. Raise n_iter, or "
                                 "use refit=True.")
            warnings.warn(_NO_SCORE.format(mean=plan.mean_runs) + ": the candidate refitted "
                          "was drawn from the pool at random (best_score_ is NaN). Raise "
                          "n_iter to make this rarer.", UserWarning,
                          stacklevel=_outside_stacklevel())
        index = selected.index if selected.index is not None else selected.fallback
        self.best_index_ = index
        self.best_params_ = dict(pool[index])
        self.best_score_ = selected.score
        self.scorer_ = scorer
        if self.refit:
            # planned with the whole DP count (given: no count of its own)
            self.best_estimator_, _ = _fit_run(
                self.estimator, self.best_params_,
                {"_prefix": prefix, "_n_rows": plan.n_rows, "epsilon": plan.refit_epsilon,
                 "delta": plan.refit_delta, "random_state": selected.refit_seed},
                X, y, None, None, _NoScore(), plan.relation, hidden=False)
        else:
            # the selected run's model: part of the best run's output, no extra cost;
            # an explainer that spends when it answers keeps only its DP answers
            # (DPLimeExplainer.release: new queries through its free non-interactive phase)
            model = selected.model
            self.best_estimator_ = kept_model(model)
        self.cv_results_ = self._results(pool, (index, None, None, selected.score))
        return self

    def _select(self, X, y, setup):
        """The hidden part of the search: the count, the plan, the commit, the runs.

        Returns a :class:`_Selection`: what the selection releases (the best
        run's candidate, DP score and model), the refit's seed and the
        fallback candidate (drawn when no run returned a score), or, when
        anything fails after the commit, only the kind of failure. Every
        warning raised by a run, by joblib or by a score release is dropped.
        The search's noise source (the count, the number of runs, the
        candidates, the split, the scores' noise) is closed, its key wiped,
        when this returns, however it returns.
        """
        with noise_source(self.random_state) as noise:
            return self._select_with(X, y, setup, noise)

    def _select_with(self, X, y, setup, noise):
        prefix, step, pool, scorer, mean = setup
        ledger = EstimatorLedger.of(self, self.accountant if self.accountant is not None
                                    else getattr(step, "accountant", None))
        count = self._count(ledger.relation)
        if count.private:
            # the number of rows is private: nothing is planned from the rows before the
            # count is released. The whole search is checked against the caps first, with
            # a public stand-in for the rest (every plan the count can select meets the same
            # target), then the count is committed and released
            ledger.check(compose_events(count.event, count.proxy_event(self.epsilon, self.delta)))
            counted = ledger.commit(count.event, count.label)
            count.release(num_rows(X), noise=noise, commitment=counted)
            spent = f"The row count's epsilon ({count.epsilon:.4g}) was spent; nothing else was."
        else:  # public: the relation fixes the number of rows
            count.release(num_rows(X), noise=noise, commitment=None)
            spent = "Nothing was spent."
        self._check_count(count.n, setup, count, priced=False)
        plan = self._plan(X, y, count.n, setup, count, spent=spent)
        label = (f"private selection over {len(pool)} candidates of "
                 f"{type(step).__name__} ({self.selection}, mean {plan.mean_runs:g} runs)"
                 + (" + refit" if self.refit else ""))
        # committed before any other private value is read: final, never refunded. The
        # hidden number of runs is drawn after it, so a refused commit holds no draw
        count.commit_rest(lambda: ledger.commit(plan.selection_event, label, delta=plan.delta))
        n_runs = draw_runs(self.selection, plan.mean_runs, noise=noise, eta=self.eta)
        drawn = draw_candidates(len(pool), n_runs, noise=noise)
        score_commitment = score_releases(
            label, n_runs=n_runs,
            score_noise_multiplier=None if scorer.public else plan.score_noise_multiplier)
        self.ledger_ = ledger
        self.search_plan_ = plan
        # n_runs and drawn stay here: published with the best score, the number of
        # runs undoes random stopping (the best of K runs, given K, is not private)
        try:
            with _silenced():
                return self._runs(X, y, prefix, pool, scorer, plan, n_runs, drawn, noise,
                                  score_commitment)
        except BaseException as exc:  # the failure's kind only: nothing it holds leaves
            failure = RuntimeError if isinstance(exc, Exception) else type(exc)
        return _Selection(failure=failure)

    def _runs(self, X, y, prefix, pool, scorer, plan, n_runs, drawn, noise, score_commitment):
        """The K runs (in joblib's workers with n_jobs), their DP scores, the best one."""
        seeds = self._run_seeds(noise, n_runs)
        # each row's part, drawn after the number of runs, the candidates and the seeds
        # (independent of the data; what is drawn before it does not depend on the
        # number of rows)
        parts = draw_split(num_rows(X), self.cv if not isinstance(self.cv, Real) or
                           isinstance(self.cv, Integral) else float(self.cv), noise=noise)
        budget = {"_prefix": prefix, "_n_rows": plan.n_train, "epsilon": plan.candidate_epsilon,
                  "delta": plan.candidate_delta}

        # every fit of every run (k of them with k folds)
        n_folds = plan.n_folds
        tasks = []
        for c, seed in zip(drawn, seeds):
            for k in ([None] if n_folds == 1 else range(n_folds)):
                if scorer.public:
                    train, val = np.arange(num_rows(X)), np.arange(0)
                elif k is None:
                    train, val = np.flatnonzero(parts == 0), np.flatnonzero(parts == 1)
                else:
                    train, val = np.flatnonzero(parts != k), np.flatnonzero(parts == k)
                tasks.append(delayed(_fit_run)(
                    self.estimator, pool[c], dict(budget, random_state=seed),
                    safe_indexing(X, train), None if y is None else safe_indexing(y, train),
                    safe_indexing(X, val), None if y is None else safe_indexing(y, val),
                    scorer, plan.relation))
        outputs = Parallel(n_jobs=self.n_jobs)(tasks)

        best = (None, -math.inf, None, None)  # (index, signed score, model, score)
        for run, c in enumerate(drawn):
            done = outputs[run * n_folds:(run + 1) * n_folds]
            if any(out is None for out in done):
                continue  # a failed run: no score (and no release of one)
            if scorer.public:
                score = done[0][1]
            else:
                # one Gaussian release per run: the sums over all its validation rows
                # (with the scorer's own count of them); the public normaliser is the
                # expected number of validation rows, never the private one
                noisy = release_score(np.atleast_2d(sum(out for _, out in done)),
                                      noise_multiplier=plan.score_noise_multiplier,
                                      sensitivity=plan.score_sensitivity, noise=noise,
                                      commitment=score_commitment)
                score = float(scorer.finalize(noisy, plan.n_validation))
            signed = score if scorer.greater_is_better else -score
            if best[0] is None or signed > best[1]:
                best = (int(c), signed, done[0][0] if n_folds == 1 else None, score)
        # no run returned a score: the candidate to refit, drawn from the public pool
        # independently of the data (the draws in the order the search always made them)
        fallback = int(draw_candidates(len(pool), 1, noise=noise)[0]) if best[0] is None \
            else None
        refit_seed = self._run_seeds(noise, 1)[0] if self.refit else None
        return _Selection(index=best[0], score=math.nan if best[0] is None else best[3],
                          model=best[2], fallback=fallback, refit_seed=refit_seed)

    def _run_seeds(self, noise, n):
        if self.random_state is None:
            return [None] * n  # each fit draws from its own secure source
        return [int(s) for s in noise.auxiliary().integers(0, 2**32 - 1, size=n)]

    def _results(self, pool, best):
        keys = sorted({k for p in pool for k in p})
        results = {"params": [dict(p) for p in pool]}
        for key in keys:
            values = np.ma.MaskedArray(np.empty(len(pool), dtype=object), mask=True)
            for i, p in enumerate(pool):
                if key in p:
                    values[i] = p[key]
            results[f"param_{key}"] = values
        score = np.full(len(pool), np.nan)
        score[best[0]] = best[3]
        results["mean_test_score"] = score
        rank = np.zeros(len(pool), dtype=np.int32)
        if not math.isnan(best[3]):  # no rank when no run was drawn
            rank[best[0]] = 1
        results["rank_test_score"] = rank
        return results

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        sub = get_tags(self.estimator)
        tags.estimator_type = sub.estimator_type
        tags.classifier_tags = deepcopy(sub.classifier_tags)
        tags.regressor_tags = deepcopy(sub.regressor_tags)
        tags.transformer_tags = deepcopy(sub.transformer_tags)
        tags.input_tags = deepcopy(sub.input_tags)
        tags.target_tags = deepcopy(sub.target_tags)
        return tags

    # ------------------------------------------------------------ delegation
    def _best_has(name):
        # as scikit-learn's searches: the method is there when the fitted best estimator
        # (or, before fit, the estimator) has it; called before fit, it raises NotFittedError
        def check(self):
            if hasattr(self, "best_estimator_"):
                return hasattr(self.best_estimator_, name)
            return hasattr(self.estimator, name)
        return check

    @available_if(_best_has("predict"))
    def predict(self, X):
        """``best_estimator_.predict``."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict(X)

    @available_if(_best_has("predict_proba"))
    def predict_proba(self, X):
        """``best_estimator_.predict_proba``."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict_proba(X)

    @available_if(_best_has("decision_function"))
    def decision_function(self, X):
        """``best_estimator_.decision_function``."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.decision_function(X)

    @available_if(_best_has("transform"))
    def transform(self, X):
        """``best_estimator_.transform``."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.transform(X)

    @available_if(_best_has("explain"))
    def explain(self, X, *args, **kwargs):
        """``best_estimator_.explain``."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.explain(X, *args, **kwargs)

    @available_if(_best_has("score"))
    def score(self, X, y=None):
        """``best_estimator_.score`` (exact: on private rows, an unaccounted release)."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.score(X, y)

    @property
    def classes_(self):
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.classes_

    @property
    def n_features_in_(self):
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.n_features_in_


#: Why a search selects nothing: the same text whichever it was.
_NO_SCORE = ("no run returned a score (a Poisson number of runs is 0 with probability "
             "exp(-{mean:g}), and a run whose fit or score fails returns none)")


@dataclass
class _Selection:
    """What a search's hidden part hands back to ``fit``: the selection's output only."""

    index: object = None  # the best run's candidate (None: no run returned a score)
    score: float = math.nan
    model: object = None  # the best run's model (holdout)
    fallback: object = None  # the candidate refitted when no run returned a score
    refit_seed: object = None
    failure: object = None  # the kind of exception, when the hidden part failed


class _NoScore:
    """The refit's scorer: it scores nothing."""

    public = True

    def public_score(self, estimator):
        return math.nan


def _score_noise(fits, eps_c, delta, n_folds):
    """A run's score noise: free on a holdout run (below the fits' mixture), else
    calibrated to the run's budget (k folds: the score composes with the fits)."""
    if n_folds == 1:
        return free_score_noise(MixtureDpEvent(fits) if len(fits) > 1 else fits[0], eps_c, delta)
    return calibrate_noise(eps_c, delta)


def _distinct(events):
    seen = {}
    for e in events:
        seen.setdefault(event_to_json(e), e)
    return list(seen.values())


def _largest_below(f, target, x0, *, rtol=0.03, max_evals=8):
    """The largest x found with ``f(x) <= target`` (f increasing), within ``rtol`` below the
    target when possible; None if no x tried down to ``1e-4 * target`` is feasible.

    Each evaluation plans every candidate (the slow part): a secant on
    ``log f`` against ``log x`` through the two latest points, kept inside
    the bracket found so far, reaches the target in 3 or 4 evaluations.
    """
    points = []  # (x, f(x)), in the order evaluated
    x = x0
    aim = (1 - rtol / 2) * target
    for _ in range(max_evals):
        fx = f(x)
        points.append((x, fx))
        feasible = [p for p in points if p[1] <= target]
        if feasible and max(feasible)[1] >= (1 - rtol) * target:
            break
        lo = max(feasible)[0] if feasible else None
        hi = min((p[0] for p in points if p[1] > target), default=None)
        (a, fa), (b, fb) = points[-1], (points[-2] if len(points) > 1 else (None, None))
        if b is not None and fa > 0 and fb > 0 and fa != fb and a != b:
            slope = math.log(fa / fb) / math.log(a / b)
            guess = a * (aim / fa) ** (1 / max(slope, 0.05))
        else:
            guess = a * (aim / fa) if fa > 0 else a * 4
        low = lo if lo is not None else x / 64
        high = hi if hi is not None else x * 64
        if lo is not None and hi is not None:  # stay strictly inside the bracket
            low, high = lo + 0.05 * (hi - lo), hi - 0.05 * (hi - lo)
        x = min(max(guess, low), high)
        if x < 1e-4 * target:  # a run with no budget selects nothing useful
            break
    feasible = [p for p in points if p[1] <= target]
    return max(feasible)[0] if feasible else None

_COMMON_DOC = """
    Under add-or-remove neighbours (the default relation) the number of
    rows is private: the search first releases a DP count of all its rows
    (``COUNT_SHARE``, 5%, of ``epsilon``; Laplace noise; committed to the
    ledger before it is read) and plans everything from it: the parts'
    expected sizes, every run's fit (which plans with its part's share of
    the count and releases no count of its own), the refit (with the
    count), the scores. Nothing the search returns, records, warns or
    raises is a deterministic function of the number of rows.

    Every run fits a candidate with DP on the training part (with the
    budget the search calibrates, ``search_plan_.candidate_epsilon``) and
    scores it with a DP score on the validation part; the best run is
    selected; with ``refit`` its candidate is refitted on all the rows. The
    whole search, count, selection and refit included, fits in ``(epsilon,
    delta)``: the count is one ledger entry, the rest another, committed
    once the count is known and before any other private value is read.
    The rest is calibrated, for the count released, to ``(epsilon -
    count_epsilon, delta)``; since the count is pure DP and the rest a fixed
    function of it, basic composition gives ``(epsilon, delta)`` whatever
    plan the count selects (see :mod:`skdpx.model_selection._search`).

    Privacy unit: one row of ``X``, under the ledger's neighbouring relation.
    The parts are drawn row by row, independently of the data, so one row
    moves no other row between parts; a holdout row is either in the
    training part or in the validation part (a run costs the worse of its
    fit and its score), a k-fold row is in k - 1 training parts and one
    validation part (the fits compose). The number of runs is random
    (``selection``), and only the best run's output is released: this is
    what makes the selection private (Papernot & Steinke 2022, accounted
    with dp_accounting's Renyi accountant).

    Nothing shown depends on the hidden runs: the warnings of validating and
    planning every candidate of the pool are shown once each, sorted, before
    any private row is read, and every warning raised in the runs and the
    refit is dropped; a run whose fit or score raises returns no score (it
    is never selected, and nothing says so); a failure after the commit
    outside the runs' fits raises a fresh ``RuntimeError`` of a fixed text
    whose traceback holds none of the hidden draws.
"""

_PARAMS_DOC = """
    scoring : str, DPScorer or None, default=None
        The DP score to select on (``skdpx.model_selection.get_dp_scorer``):
        None for the estimator's default (accuracy for a classifier).
    epsilon : float > 0, default=1.0
        The whole search's budget: training, scoring, selection and refit.
    delta : float in (0, 1), default=1e-5
    accountant : PrivacyLedger, BudgetAccountant or None, default=None
        Where the search is recorded, as one event. None: the estimator's
        own ``accountant``, else an uncapped ledger with a warning.
    cv : float in (0, 1) or int >= 2, default=0.2
        A float: a holdout split, each row in the validation part with that
        probability (cheapest: a row pays for its fit or its score, not
        both). An int: that many folds, each row in a uniformly drawn fold
        (a row pays for k - 1 fits).
    refit : bool, default=True
        Refit the selected candidate on all the rows with
        ``refit_share * epsilon`` of the budget. False: ``best_estimator_``
        is the selected run's model (fitted on the training part; it is part
        of the selection's output, so it costs nothing more). Holdout only.
    refit_share : float in (0, 1), default=0.5
        The refit's epsilon, as a share of ``epsilon``.
    selection : {"poisson", "negative_binomial", "geometric"}, default="poisson"
        The distribution of the number of runs (Papernot & Steinke 2022):
        a Poisson (its number of runs stays near the mean, so the best
        candidates are tried: on Adult and the hospital data it selected
        better than the cheaper alternatives, benchmarks/model_selection.py;
        its cost grows with the mean: keep the pool to a dozen or so), a
        truncated negative binomial with shape ``eta`` (``eta=0``, the
        logarithmic distribution, costs least for a given mean but often
        makes only 2 or 3 runs), or the geometric of Liu & Talwar (STOC
        2019). A Poisson may draw 0 runs (probability ``exp(-mean)``): the
        candidate refitted is then drawn from the pool at random, with a
        warning (with ``refit=False``, ``fit`` raises, its budget spent).
    eta : float >= 0, default=0.0
        The negative binomial's shape.
    n_jobs : int or None, default=None
        The runs' fits in parallel, with joblib (as scikit-learn's
        ``n_jobs``: None is 1 unless in a ``joblib.parallel_config``
        context), on any of its backends: loky (the default), threading, or
        a Dask ``distributed`` cluster with ``parallel_config(backend="dask")``.
        The whole search is committed to the ledger, as one event, in this
        process before any run starts: the same event whatever runs it. A
        run's fit spends in a scratch ledger of its own in its worker
        (dropped there), never in the search's, and a failing run refunds
        nothing. Each fit draws its noise in its worker, from its own
        source: a fresh secure one (keyed by that worker's OS entropy), or,
        with a seed, from a seed the search draws for that run from its own
        (so a seeded search gives the same result with any ``n_jobs`` and
        backend). The scores' noise is added in this process, after the runs.
    random_state : None, int or RandomState, default=None
        None: every draw (the split, the number of runs, the candidates, the
        scores' noise, each fit's noise) from the secure generator. A seed
        makes the search reproducible, with a ``PrivacyLeakWarning``.
"""

_ATTRS_DOC = """
    Attributes
    ----------
    best_params_ : dict
        The selected candidate.
    best_score_ : float
        Its DP score (the noisy score of the best run).
    best_index_ : int
        Its index in ``cv_results_``.
    best_estimator_ : estimator
        The refitted candidate (``refit=True``) or the best run's model.
    cv_results_ : dict of arrays
        One entry per candidate of the public pool: ``params``,
        ``param_<name>``, ``mean_test_score`` (the DP score of the selected
        candidate, NaN for the others: their scores are never released) and
        ``rank_test_score`` (1 for the selected candidate, 0 for the others).
        How many runs there were, and which candidates they drew, is not
        kept: random stopping is private only if the number of runs stays
        hidden (it is independent of the data, yet given it, the best of the
        runs is a selection over a fixed number of runs, which is not).
    search_plan_ : SearchPlan
        The budget split and the events recorded, planned from the DP count
        (``search_plan_.n_rows``): a DP release, like the count itself.
    ledger_ : EstimatorLedger
    epsilon_spent_, delta_spent_ : float
        What the ledger recorded: the plan the DP count selected, at most
        ``epsilon`` and ``delta``, and up to a few percent below them. The
        guarantee proven is ``epsilon`` and ``delta``, the bound over every
        count (:ref:`privacy-core-count`).
"""


class DPRandomSearchCV(_BaseDPSearch):
    __doc__ = (
        """Random search over a DP estimator's hyperparameters, itself differentially private.

    The public pool is the ``n_iter`` candidates that scikit-learn's
    ``RandomizedSearchCV`` would draw from ``param_distributions`` (all of
    them when every distribution is a list and there are fewer); the
    number of runs is random with mean ``n_iter``, each run drawing a
    candidate from the pool uniformly.
""" + _COMMON_DOC + """
    Parameters
    ----------
    estimator : skdpx estimator or Pipeline ending in one
        Its ``epsilon``, ``delta``, ``accountant`` and ``random_state`` are
        set by the search.
    param_distributions : dict or list of dicts
        As ``RandomizedSearchCV``'s (without the budget parameters).
    n_iter : int, default=10
        The pool's size and the mean number of runs.
""" + _PARAMS_DOC + _ATTRS_DOC + """
    Examples
    --------
    >>> import warnings
    >>> from sklearn.datasets import make_classification
    >>> from skdpx import DPLocallyLinearClassifier
    >>> from skdpx.model_selection import DPRandomSearchCV
    >>> from skdpx.privacy import PrivacyLedger
    >>> X, y = make_classification(600, 4, random_state=0)
    >>> ledger = PrivacyLedger(epsilon=3.0, delta=1e-5)
    >>> clf = DPLocallyLinearClassifier(bounds=(-4, 4), classes=[0, 1], batch_size=600)
    >>> search = DPRandomSearchCV(clf, {"learning_rate": [0.1, 0.3], "n_maps": [1, 2]},
    ...                           n_iter=4, epsilon=2.0, accountant=ledger)
    >>> plan = search.price(X, y, n_rows=600)  # before anything is spent, at a given count
    >>> plan.epsilon <= 2.0
    True
    >>> search = search.fit(X, y)
    >>> sorted(search.best_params_)
    ['learning_rate', 'n_maps']
    >>> round(ledger.epsilon_spent, 1) <= 2.0
    True
    """)

    _parameter_constraints = {
        **_BaseDPSearch._parameter_constraints,
        "param_distributions": [dict, list],
        "n_iter": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, estimator, param_distributions, *, n_iter=10, scoring=None, epsilon=1.0,
                 delta=1e-5, accountant=None, cv=0.2, refit=True, refit_share=0.5,
                 selection="poisson", eta=0.0, n_jobs=None, random_state=None):
        super().__init__(estimator, scoring=scoring, epsilon=epsilon, delta=delta,
                         accountant=accountant, cv=cv, refit=refit, refit_share=refit_share,
                         selection=selection, eta=eta, n_jobs=n_jobs, random_state=random_state)
        self.param_distributions = param_distributions
        self.n_iter = n_iter

    def _candidates(self):
        dists = self.param_distributions
        lists = [dists] if isinstance(dists, Mapping) else list(dists)
        if all(not hasattr(v, "rvs") for d in lists for v in d.values()):
            grid = list(ParameterGrid(dists))
            if len(grid) <= self.n_iter:
                return grid
        # the pool is public: drawn from a generator that is not the privacy noise's
        state = None if self.random_state is None else self.random_state
        return list(ParameterSampler(dists, self.n_iter, random_state=state))

    def _mean_runs(self, n_candidates):
        return float(self.n_iter)


class DPGridSearchCV(_BaseDPSearch):
    __doc__ = (
        """Grid search over a DP estimator's hyperparameters, itself differentially private.

    The public pool is the whole grid. A private search cannot try every
    point once and report the best (its cost would grow with the grid and
    its choice would be exact): it draws a random number of runs, with mean
    ``n_iter`` (default: the grid's size), each trying a point of the grid
    drawn uniformly.
""" + _COMMON_DOC + """
    Parameters
    ----------
    estimator : skdpx estimator or Pipeline ending in one
    param_grid : dict or list of dicts
        As ``GridSearchCV``'s (without the budget parameters).
    n_iter : int or None, default=None
        The mean number of runs (None: the grid's size).
""" + _PARAMS_DOC + _ATTRS_DOC)

    _parameter_constraints = {
        **_BaseDPSearch._parameter_constraints,
        "param_grid": [dict, list],
        "n_iter": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(self, estimator, param_grid, *, n_iter=None, scoring=None, epsilon=1.0,
                 delta=1e-5, accountant=None, cv=0.2, refit=True, refit_share=0.5,
                 selection="poisson", eta=0.0, n_jobs=None, random_state=None):
        super().__init__(estimator, scoring=scoring, epsilon=epsilon, delta=delta,
                         accountant=accountant, cv=cv, refit=refit, refit_share=refit_share,
                         selection=selection, eta=eta, n_jobs=n_jobs, random_state=random_state)
        self.param_grid = param_grid
        self.n_iter = n_iter

    def _candidates(self):
        return list(ParameterGrid(self.param_grid))

    def _mean_runs(self, n_candidates):
        return float(n_candidates if self.n_iter is None else self.n_iter)
