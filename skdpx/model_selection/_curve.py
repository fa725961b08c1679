"""Privacy-utility curves: one skdpx estimator fitted at several epsilons, every fit paid for.

Sweeping epsilon with ``GridSearchCV`` (or a loop of ``fit`` and ``score``)
on private data releases exact scores computed from private rows, and its
fits add up unnoticed. :func:`privacy_utility_curve` prices the whole
sweep before it starts, records it in the ledger, and scores each point
either exactly on public validation rows (free: post-processing of the DP
model) or with a DP score on a private holdout part drawn by the privacy
core.
"""

from contextlib import ExitStack
from dataclasses import dataclass, field, fields
import json
from numbers import Integral, Real

import numpy as np
from sklearn.metrics import check_scoring
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import indexable

from ..results._base import _new_axes
from .._sklearn_compat import safe_indexing, validate_parameter_constraints
from ..base import kept_model
from ..utils._tables import num_rows
from ..privacy import (
    COUNT_SHARE,
    ComposedDpEvent,
    FitCount,
    PrivacyLedger,
    compose_events,
    compute_epsilon,
    event_from_json,
    event_to_json,
    gaussian_event,
    given_row_count,
    noise_source,
    resolve_ledger,
)
from ..privacy._selection import (
    commit_sweep,
    draw_split,
    free_score_noise,
    holdout_event,
    release_score,
)
from ._scorers import DPScorer, get_dp_scorer
from ._runs import (
    N_JOBS_CONSTRAINT,
    _dp_step,
    _fresh,
    _hidden_failure,
    _planner,
    _recording,
    _row_contributions,
    _silenced,
    _validate_candidates,
    _validate_rows,
    _warn_once,
)

__all__ = ["PrivacyUtilityCurve", "privacy_utility_curve"]


@dataclass
class PrivacyUtilityCurve:
    """The scores of one estimator fitted at several epsilons, and what the sweep cost.

    Made by :func:`privacy_utility_curve`. Every value is a DP release or
    post-processing of one (a score on public rows, a DP score), so the
    object can be published.

    Attributes
    ----------
    epsilons : ndarray of shape (n_points,)
        The epsilon of each point (increasing): the point is the fit that a
        fit at that epsilon makes. Under add-or-remove such a fit spends
        ``COUNT_SHARE`` of its epsilon on a DP count of its rows and the rest
        on the fit; in the sweep, one count (at ``count_epsilon``) serves
        every point, and each point's fit is given the rest,
        ``fit_epsilons``.
    fit_epsilons : ndarray of shape (n_points,)
        The epsilon each point's fit was given: ``(1 - COUNT_SHARE) *
        epsilons`` under add-or-remove, ``epsilons`` where the number of
        rows is public (replace-one).
    scores : ndarray of shape (n_points,)
        Each point's score: exact on the public validation rows, or a DP
        score on the private holdout part.
    scoring : str
        The score's name.
    delta : float
        The delta each point's fit (and DP score) is calibrated for.
    point_epsilons : ndarray of shape (n_points,)
        What each point's ledger entry costs on its own, at ``delta`` (the
        sweep's count apart): its fit, and, with a
        private holdout, the worse of its fit and its DP score (a row is in
        one part only) or both composed, whichever is smaller. When the fit
        is one Gaussian mechanism (full-batch DP-SGD) the score's noise is
        chosen no smaller than the fit's, and the point costs exactly the
        fit's epsilon.
    total_epsilon, total_delta : float
        The whole sweep, the count and every point composed (privacy loss
        distributions, or Renyi DP for a holdout's worst-of events; the
        count's epsilon adds up, basic composition), at ``total_delta``, the
        sum of the points' deltas. At most ``sum(epsilons)`` up to the
        composition's own savings: the count is paid once.
    validation : {"public", "holdout", "public_scorer"}
        Where the scores come from: public validation rows, a private
        holdout part (DP scores), or a scorer that reads public data only.
    n_rows : float
        The count the sweep plans with: a DP count of the rows under
        add-or-remove (their number is private), the number of rows where it
        is public (replace-one).
    n_train, n_validation : float
        The expected number of rows each point is fitted on and scored on
        (shares of ``n_rows``; the number of public validation rows with
        ``X_val``): what the fits and the scores are planned with, never the
        private sizes of the parts drawn.
    count_epsilon, count_std : float
        The DP count's epsilon (``COUNT_SHARE`` times the largest epsilon)
        and its noise's standard deviation; 0 when the number of rows is
        public.
    score_noise_multipliers : ndarray or None
        Each DP score's Gaussian noise over its sensitivity (None without).
    estimator : str
        The estimator's class name.
    events : list of DpEvent
        What each point was recorded as in the ledger.
    count_event : DpEvent or None
        The count's ``FixedLossDpEvent``, recorded first (None when public).
    estimators : list or None
        The fitted models (``return_estimators=True``), else None.
    score_std : ndarray of shape (n_points,) or None
        Each DP score's noise standard deviation (a private holdout: the
        scorer's noise carried through its score, :meth:`DPScorer.score_std`,
        post-processing of the released score and public facts); NaN where
        not known (an exact score on public rows has no noise of its own, but
        its fit's noise moves it: run several seeds to see that).
    baseline : float or None
        What answering with no model scores, where it is public: with
        public validation rows and ``accuracy``, the share of their most
        frequent label (the majority class). None otherwise (on a private
        holdout it would be another release), or the ``baseline`` declared.
    baseline_source : str or None
        Where the baseline comes from: ``"majority class"`` (of the public
        validation rows) or ``"declared"``.
    """

    epsilons: np.ndarray
    scores: np.ndarray
    scoring: str
    delta: float
    point_epsilons: np.ndarray
    total_epsilon: float
    total_delta: float
    validation: str
    n_rows: float
    n_train: float
    n_validation: float
    count_epsilon: float
    count_std: float
    fit_epsilons: np.ndarray
    score_noise_multipliers: object
    estimator: str
    events: list = field(repr=False, default_factory=list)
    count_event: object = field(repr=False, default=None)
    estimators: object = field(repr=False, default=None)
    score_std: object = None
    baseline: object = None
    baseline_source: object = None

    def near_baseline(self):
        """Per point, whether its score does not stand out from the baseline.

        A DP score (``score_std`` known): within 1.96 std of it. An exact
        score (``score_std`` NaN, public rows): at or below it, no better
        than answering with no model.

        Returns
        -------
        ndarray of bool of shape (n_points,)
            All False without a baseline.
        """
        if self.baseline is None:
            return np.zeros(len(self.scores), dtype=bool)
        std = (np.full(len(self.scores), np.nan) if self.score_std is None
               else np.asarray(self.score_std, dtype=float))
        with np.errstate(invalid="ignore"):
            return np.where(np.isfinite(std), np.abs(self.scores - self.baseline) <= 1.96 * std,
                            self.scores <= self.baseline)

    @property
    def event(self):
        """The whole sweep as one DpEvent (the count and the points composed)."""
        events = [e for e in (self.count_event, *self.events) if e is not None]
        return events[0] if len(events) == 1 else ComposedDpEvent(events)

    def epsilon_at(self, delta):
        """The whole sweep's epsilon at another ``delta``."""
        return compute_epsilon(self.event, delta)

    def to_frame(self):
        """One row per point: ``epsilon``, ``score``, ``point_epsilon``, and ``score_std``
        where a score's noise is known (a pandas DataFrame; ``attrs["baseline"]`` the
        baseline)."""
        import pandas as pd

        frame = pd.DataFrame({"epsilon": self.epsilons, "score": self.scores,
                              "point_epsilon": self.point_epsilons})
        if self.score_std is not None and np.isfinite(self.score_std).any():
            frame["score_std"] = self.score_std
        if self.score_noise_multipliers is not None:
            frame["score_noise_multiplier"] = self.score_noise_multipliers
        frame.attrs.update(scoring=self.scoring, total_epsilon=self.total_epsilon,
                           total_delta=self.total_delta, validation=self.validation,
                           baseline=self.baseline)
        return frame

    def to_json(self):
        """The curve as a JSON string (the events as dp_accounting JSON)."""
        out = {k: v for k, v in self.__dict__.items()
               if k not in ("events", "count_event", "estimators")}
        for key in ("epsilons", "fit_epsilons", "scores", "point_epsilons",
                    "score_noise_multipliers", "score_std"):
            if out[key] is not None:
                out[key] = [float(v) for v in out[key]]
        out["events"] = [json.loads(event_to_json(e)) for e in self.events]
        out["count_event"] = None if self.count_event is None else \
            json.loads(event_to_json(self.count_event))
        return json.dumps(out)

    #: The arrays of :meth:`to_json` (lists of floats; ``score_noise_multipliers`` may be null).
    _ARRAYS = ("epsilons", "fit_epsilons", "scores", "point_epsilons", "score_noise_multipliers",
               "score_std")

    @classmethod
    def from_json(cls, s):
        """Rebuild a curve from :meth:`to_json`'s text (or the path of a file holding it).

        The events come back as dp_accounting events; the fitted models
        (``estimators``) are not in the JSON and come back as None.

        Raises
        ------
        ValueError
            If the text is not a curve's JSON: a key missing (named) or unknown.
        """
        from ..results._base import _check_fields, _load_text

        payload = json.loads(_load_text(s))
        if not isinstance(payload, dict):
            raise ValueError(f"the JSON holds a {type(payload).__name__}, not a "
                             "PrivacyUtilityCurve object.")
        # older files lack the last three
        optional = ("events", "count_event", "score_std", "baseline", "baseline_source")
        names = [f.name for f in fields(cls) if f.name != "estimators"]
        required = [n for n in names if n not in optional]
        _check_fields(cls, payload, (required, list(optional)))
        for key in cls._ARRAYS:
            if payload.get(key) is not None:
                payload[key] = np.asarray(
                    [np.nan if v is None else v for v in payload[key]], dtype=float)
        payload["events"] = [event_from_json(json.dumps(e))
                             for e in payload.get("events") or []]
        count = payload.get("count_event")
        payload["count_event"] = None if count is None else event_from_json(json.dumps(count))
        return cls(**payload)

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        return self.to_json() == other.to_json()

    __hash__ = None

    def _title(self):
        where = {"public": "scored on public validation rows",
                 "holdout": "DP scores on a private holdout",
                 "public_scorer": "scored on public data"}[self.validation]
        return (f"{self.estimator}: total cost of the sweep epsilon={self.total_epsilon:.3g} "
                f"(delta={self.total_delta:.2g})\n{len(self.epsilons)} points, {where}")

    def plot(self, ax=None, **kwargs):
        """Draw the score against epsilon (log scale), with the sweep's total cost.

        Each DP score has error bars of 1.96 times its noise's standard
        deviation (``score_std``, where known); a public baseline (what no
        model scores) is a dashed line, and the points within noise of it
        are circled (:meth:`near_baseline`).

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Where to draw (None: a new figure).
        **kwargs
            Passed to ``ax.plot``.

        Returns
        -------
        matplotlib Axes
        """
        ax = _new_axes(ax)
        kwargs.setdefault("marker", "o")
        kwargs.setdefault("label", f"{self.scoring} (sweep: epsilon={self.total_epsilon:.3g} "
                                   "in all)")
        std = None if self.score_std is None else np.asarray(self.score_std, dtype=float)
        if std is not None and np.isfinite(std).any():
            kwargs.setdefault("capsize", 3)
            line = ax.errorbar(self.epsilons, self.scores, yerr=1.96 * np.nan_to_num(std),
                               **kwargs)[0]
            ax.annotate("error bars: the DP score's noise, 1.96 std", xy=(0.01, 0.01),
                        xycoords="axes fraction", fontsize="small", color=line.get_color())
        else:
            ax.plot(self.epsilons, self.scores, **kwargs)
        if self.baseline is not None:
            ax.axhline(self.baseline, linestyle="--", color="grey",
                       label=f"no model: {self.baseline_source or 'baseline'} "
                             f"({self.baseline:.3g})")
            near = self.near_baseline()
            if near.any():
                ax.scatter(self.epsilons[near], self.scores[near], s=90, facecolors="none",
                           edgecolors="black", zorder=3, label="not above it (within noise)")
        ax.set_xscale("log")
        ax.set_xlabel("epsilon of each fit")
        ax.set_ylabel(self.scoring)
        ax.set_title(self._title(), fontsize="medium")
        ax.legend()
        return ax

    def _repr_html_(self):
        frame = self.to_frame()
        frame.attrs = {}
        caption = self._title().replace("\n", "; ")
        return f"<p>{caption}</p>" + frame.to_html(index=False, float_format=lambda v: f"{v:.4g}")


# --------------------------------------------------------------------------
# Checks (all before anything is spent)
# --------------------------------------------------------------------------
def _check_epsilons(epsilons):
    if isinstance(epsilons, str) or not np.iterable(epsilons) or any(
            isinstance(e, (bool, np.bool_)) or not isinstance(e, (Real, np.number))
            for e in np.asarray(epsilons, dtype=object).ravel()):
        raise ValueError(f"epsilons must be a non-empty 1-d list of numbers, got {epsilons!r}.")
    eps = np.asarray(epsilons, dtype=float)
    if eps is None or eps.ndim != 1 or eps.size == 0:
        raise ValueError(f"epsilons must be a non-empty 1-d list of numbers, got {epsilons!r}.")
    if not np.all(np.isfinite(eps)) or not np.all(eps > 0):
        raise ValueError(
            f"epsilons must be finite and > 0, got {eps.tolist()}. A non-private baseline "
            "(epsilon=inf) is no point of a privacy-utility curve: fit it on public data.")
    if eps.size > 1 and not np.all(np.diff(eps) > 0):
        raise ValueError(f"epsilons must be strictly increasing, got {eps.tolist()}.")
    return eps


def _json_or_none(event):
    event = compose_events(event)
    return None if event is None else event_to_json(event)


def _fit_point(estimator, prefix, epsilon, delta, seed, relation, planned_fit, n_plan,
               X_train, y_train, X_val, y_val, scorer, public_rows):
    """One point: the fit at ``epsilon`` and its score (exact sums for a DP score).

    The sweep recorded this point in the user's ledger before anything was
    read (but its row count), so the fit spends in a ledger of its own; its
    spend is checked against the planned one. It plans with ``n_plan``, the
    public expected size of its training part (from the sweep's DP count),
    and releases no count of its own. For a DP score, the exact column sums
    go back to the caller (never stored), whose privacy core adds the noise.
    """
    est = _fresh(estimator, {})
    est.set_params(**{prefix + "epsilon": float(epsilon), prefix + "delta": float(delta),
                      prefix + "random_state": seed,
                      prefix + "accountant": PrivacyLedger(relation=relation)})
    with _silenced():
        # the sweep showed the warnings of planning the points; a fit's own (and its
        # score's) may depend on the secret split: dropped
        with given_row_count(n_plan):  # as planned (_planner): no count of its own
            est.fit(X_train, y_train)
        dp = est if not prefix else est.steps[-1][1]
        spent = compose_events(*[e for _, e in dp.ledger_.events])
        if _json_or_none(spent) != planned_fit:
            raise RuntimeError(
                f"{type(dp).__name__} spent {spent} at epsilon={epsilon:g}, not the event the "
                "sweep planned and recorded: its _plan_fit and its fit disagree.")
        if public_rows:  # exact, on public rows: post-processing of the DP model
            if isinstance(scorer, DPScorer):
                sums = np.asarray(scorer.contributions(est, X_val, y_val), dtype=float)
                sums = (sums[:, None] if sums.ndim == 1 else sums).sum(axis=0)
                return est, float(scorer.finalize(sums, num_rows(X_val)))  # public rows
            return est, float(scorer(est, X_val, y_val))
        if scorer.public:
            return est, float(scorer.public_score(est))
        # private validation rows: a row that scoring fails on contributes 0
        sums = _row_contributions(scorer, est, X_val, y_val)
    return est, sums.sum(axis=0)


def privacy_utility_curve(estimator, X, y=None, *, epsilons, delta=1e-5, scoring=None,
                          X_val=None, y_val=None, cv=0.2, accountant=None,
                          return_estimators=False, n_jobs=None, random_state=None,
                          baseline=None):
    """Fit one skdpx estimator at each of ``epsilons`` and score it: a privacy-utility curve.

    Every point is paid for. Under add-or-remove neighbours (the default
    relation) the number of rows is private: the sweep first checks the
    ledger with a public stand-in for every point, then releases one DP
    count of all the rows (``COUNT_SHARE``, 5%, of the largest epsilon: the
    count that point would release on its own; Laplace noise; its own ledger
    entry, recorded before it is read), and plans everything from it. Each
    point's fit is then given ``(1 - COUNT_SHARE) * epsilon``, what a fit at
    that epsilon spends after its own count, and runs with the sweep's count
    (:func:`~skdpx.privacy.given_row_count`: the expected size of its part,
    no count of its own), so that each point shows what a fit at its epsilon
    does, and the sweep costs no more than the points fitted one by one.
    The whole sweep is priced from the count (each fit planned by the
    estimator from public facts, as ``fit`` plans it), checked against the
    ledger (a ledger that cannot pay for all the points refuses before any
    other private value is read) and recorded, one entry per point, before
    the first fit. Every plan the count can select is paid within the
    points' budgets, and the count is pure DP, so basic composition covers
    the plans' dependence on it (``FixedLossDpEvent``; see
    :mod:`skdpx.model_selection._search`). Under replace-one the number of
    rows is public: no count, and each fit is given its whole epsilon.

    * With public validation data (``X_val``, ``y_val``): each point is a
      fit on all the private rows at that epsilon, scored exactly on the
      public rows. Scoring is post-processing of the DP model: only the fits
      are charged.
    * Without: the privacy core draws a holdout split (each row in the
      validation part with probability ``cv``, independently of the others
      and of the data). Each point is fitted on the training part and gets a
      DP score on the validation part: Gaussian noise, matched to the
      point's fit, on the sums of the validation rows' contributions. A row
      is in one part only, so a point costs the worse of its fit and its
      score for any one row; the point is recorded as that worst-of event
      (the fit's own event when the fit is one Gaussian mechanism, such as
      full-batch DP-SGD, whose noise the score's matches), or as the fit and
      score composed when composing them is the cheaper account.

    Privacy unit: one row of ``X`` (``X_val`` is public), under the
    ledger's neighbouring relation. Never run a sweep twice on the same
    data to pick the nicer curve: each run is charged.

    Parameters
    ----------
    estimator : skdpx estimator or Pipeline ending in one
        Its ``epsilon``, ``delta``, ``accountant`` and ``random_state`` are
        set by the sweep.
    X : array-like or DataFrame of shape (n_samples, n_features)
        The private rows.
    y : array-like of shape (n_samples,), default=None
    epsilons : array-like of float
        The epsilons of the fits: finite, > 0, strictly increasing.
    delta : float in (0, 1), default=1e-5
        The delta of each fit (and DP score). The sweep declares
        ``len(epsilons) * delta``.
    scoring : str, DPScorer, callable or None, default=None
        With public validation rows: any scikit-learn scoring (a name, a
        scorer callable ``scorer(estimator, X, y)``, None for the
        estimator's ``score``) or a DPScorer (its exact value). Without: a
        DP scorer (:func:`~skdpx.model_selection.get_dp_scorer`; None is
        the estimator's default, accuracy for a classifier).
    X_val, y_val : array-like, default=None
        Public validation rows: rows that are not private (a public
        dataset from the same population, or rows whose owners consented
        to their release). Never a split of ``X``.
    cv : float in (0, 1), default=0.2
        Without public validation rows: the probability that a row is in the
        validation part.
    accountant : PrivacyLedger, BudgetAccountant or None, default=None
        Where the sweep is recorded. None: the estimator's own
        ``accountant``, else an uncapped ledger with a warning.
    return_estimators : bool, default=False
        Keep the fitted models in the result (they are DP releases, but an
        explainer may hold the rows it explains).
    n_jobs : int or None, default=None
        The points' fits in parallel (joblib). The DP scores' noise is added
        in this process.
    random_state : None, int or RandomState, default=None
        None: the split, the scores' noise and each fit's noise from the
        secure generator. A seed makes the sweep reproducible, with a
        ``PrivacyLeakWarning``.
    baseline : float or None, default=None
        What answering with no model scores, declared from public facts
        (a published base rate: the share of the majority class in the
        population, say): drawn with the curve, and the points whose score
        does not stand out from it are marked (:meth:`PrivacyUtilityCurve.near_baseline`).
        None: with public validation rows and ``accuracy``, the share of
        their most frequent label; otherwise no baseline (on a private
        holdout the majority share would be another release: declare it).
        Never read from the private rows.

    Returns
    -------
    PrivacyUtilityCurve

    Raises
    ------
    ValueError
        For bad ``epsilons`` (not finite, not > 0, not increasing), a bad
        ``delta``, ``cv`` or scoring: before anything is spent. For parts
        too small to fit, judged from the DP count (under add-or-remove):
        after the count, whose epsilon is spent (the message says so), and
        nothing else.
    TypeError
        When ``estimator`` is not a skdpx estimator (nor a Pipeline ending
        in one): before anything is spent.
    BudgetError
        When the ledger cannot pay for the whole sweep: nothing is recorded
        and no private row is read.

    See Also
    --------
    DPRandomSearchCV : tune the other hyperparameters at a fixed total
        epsilon, privately.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from skdpx import DPLocallyLinearClassifier
    >>> from skdpx.model_selection import privacy_utility_curve
    >>> from skdpx.privacy import PrivacyLedger
    >>> X, y = make_classification(1000, 4, class_sep=2.0, random_state=0)
    >>> X_pub, y_pub = make_classification(300, 4, class_sep=2.0, random_state=1)
    >>> ledger = PrivacyLedger(epsilon=5.0)  # its total: at the sum of the declared deltas
    >>> clf = DPLocallyLinearClassifier(bounds=(-4, 4), classes=[0, 1], batch_size=1000)
    >>> curve = privacy_utility_curve(clf, X, y, epsilons=[0.3, 1.0, 3.0], X_val=X_pub,
    ...                               y_val=y_pub, accountant=ledger)
    >>> len(ledger)  # the row count, then one entry per point: its fit (public scoring is free)
    4
    >>> round(curve.count_epsilon, 2), curve.fit_epsilons.round(3).tolist()
    (0.15, [0.285, 0.95, 2.85])
    >>> curve.point_epsilons.round(3).tolist()
    [0.285, 0.95, 2.85]
    >>> abs(curve.total_epsilon - ledger.epsilon_spent) < 1e-6
    True
    >>> curve.to_frame().columns.tolist()
    ['epsilon', 'score', 'point_epsilon']
    """
    # the sweep's noise source (made after the checks) is closed, its key wiped, when
    # the sweep ends, however it ends; the split, the fits and the noise source live in
    # _sweep's frame, gone when it returns
    with ExitStack() as owned:
        swept = _sweep(owned, estimator, X, y, epsilons=epsilons, delta=delta,
                       scoring=scoring, X_val=X_val, y_val=y_val, cv=cv, accountant=accountant,
                       return_estimators=return_estimators, n_jobs=n_jobs,
                       random_state=random_state, baseline=baseline)
    if not isinstance(swept, PrivacyUtilityCurve):
        raise _hidden_failure(swept, "privacy_utility_curve",
                              "which point failed, and the training part it was fitted on "
                              "(the split the sweep keeps secret)") from None
    return swept


def _sweep(owned, estimator, X, y, *, epsilons, delta, scoring, X_val, y_val, cv, accountant,
           return_estimators, n_jobs, random_state, baseline=None):
    """The body of :func:`privacy_utility_curve`; ``owned`` closes its noise source.

    Returns the :class:`PrivacyUtilityCurve`, or, when the fits or the score
    releases fail after the commit, only the kind of failure. Warnings: those
    of planning the points, once each; every warning of the fits and scores
    is dropped (with a private holdout they are functions of the secret split).
    The steps: validate (nothing read or spent), count the rows, plan the
    points' prices, commit them, run the fits and scores, report.
    """
    eps, prefix, step, X, y, X_val, y_val, scorer, name = _validate_sweep(
        estimator, X, y, epsilons=epsilons, delta=delta, scoring=scoring, X_val=X_val,
        y_val=y_val, cv=cv, n_jobs=n_jobs)
    if baseline is not None:  # declared: checked before anything is read or spent
        if isinstance(baseline, bool) or not isinstance(baseline, Real) or \
                not np.isfinite(baseline):
            raise ValueError(f"baseline must be a finite number (a score declared from public "
                             f"facts) or None, got {baseline!r}.")
        baseline = float(baseline)
    public_rows = X_val is not None
    ledger = resolve_ledger(accountant if accountant is not None
                            else getattr(step, "accountant", None))
    relation = ledger.relation
    noise = owned.enter_context(noise_source(random_state))

    # the parts (public facts only)
    if public_rows:
        validation, train_share, val_share = "public", 1.0, 0.0
    elif scorer.public:
        validation, train_share, val_share = "public_scorer", 1.0, 0.0
    else:
        validation, train_share, val_share = "holdout", 1.0 - float(cv), float(cv)

    count, fit_eps, total_delta, n_train, n_val, spent = _count_sweep(
        ledger, step, X, X_val, eps, delta, cv, validation, train_share, val_share, noise)
    fits, fit_events, events, zs, total_epsilon, point_eps = _plan_sweep(
        estimator, prefix, step, X, y, relation, scorer, count, fit_eps, delta, total_delta,
        n_train, validation, spent)
    labels = _point_labels(step, eps, validation, events, fit_events)
    # the whole sweep checked against the ledger, then recorded point by point: final
    commitments = commit_sweep(ledger, events, labels, delta=float(delta),
                               score_noise_multipliers=None if zs is None else list(zs))

    # the parts, the fits and their scores
    try:
        with _silenced():
            scores, models = _fit_points(
                estimator, prefix, X, y, cv, eps, fit_eps, delta, fits, relation, n_train,
                X_val, y_val, scorer, public_rows, validation, zs, n_val, commitments, noise,
                return_estimators, n_jobs, random_state)
    except BaseException as exc:  # the failure's kind only: nothing it holds leaves
        return RuntimeError if isinstance(exc, Exception) else type(exc)

    if validation == "holdout":  # post-processing of the released scores and public facts
        score_std = np.array([scorer.score_std(sc, float(z), relation, n_val)
                              for sc, z in zip(scores, zs)])
    else:
        score_std = np.full(eps.size, np.nan)
    source = None if baseline is None else "declared"
    if baseline is None and public_rows and str(name) == "accuracy" and y_val is not None \
            and num_rows(y_val):
        _, counts = np.unique(np.asarray(y_val), return_counts=True)  # public rows
        baseline, source = float(counts.max() / counts.sum()), "majority class"
    return PrivacyUtilityCurve(
        epsilons=eps, scores=scores, scoring=str(name), delta=float(delta),
        point_epsilons=point_eps, total_epsilon=float(total_epsilon),
        total_delta=float(total_delta), validation=validation, n_rows=float(count.n),
        n_train=float(n_train), n_validation=float(n_val), count_epsilon=float(count.epsilon),
        count_std=float(count.std), fit_epsilons=np.asarray(fit_eps, dtype=float),
        score_noise_multipliers=zs, estimator=type(step).__name__, events=list(events),
        count_event=count.event, estimators=models, score_std=score_std, baseline=baseline,
        baseline_source=source,
    )


def _validate_sweep(estimator, X, y, *, epsilons, delta, scoring, X_val, y_val, cv, n_jobs):
    """The sweep's checks, before anything is read or spent: ``(eps, prefix, step, X, y,
    X_val, y_val, scorer, name)``, the rows as the estimator validates them."""
    eps = _check_epsilons(epsilons)
    validate_parameter_constraints({"n_jobs": N_JOBS_CONSTRAINT}, {"n_jobs": n_jobs},
                                   caller_name="privacy_utility_curve")
    if isinstance(delta, bool) or not isinstance(delta, Real) or not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}.")
    if eps.size * float(delta) >= 1:
        raise ValueError(f"{eps.size} points at delta={delta:g} declare a total delta >= 1.")
    prefix, step = _dp_step(estimator)
    # the estimator's parameters, with its own constraints, at the budget of every point
    for e in eps:
        _validate_candidates(estimator, [{}], prefix,
                             {"epsilon": float(e), "delta": float(delta), "accountant": None,
                              "random_state": None})
    public_rows = X_val is not None
    if (y_val is not None) and not public_rows:
        raise ValueError("y_val was given without X_val.")
    if public_rows and (y is None) != (y_val is None):
        raise ValueError("give y_val with X_val when y is given (and neither without y).")
    if not public_rows and (isinstance(cv, (bool, Integral)) or not isinstance(cv, Real)
                            or not 0 < cv < 1):
        raise ValueError(f"cv must be a fraction in (0, 1) (a holdout split), got {cv!r}.")
    # the rows, as the estimator validates them, before the count is spent
    X, y = _validate_rows(estimator, prefix, step, X, y)
    if public_rows:
        if y_val is not None and num_rows(y_val) != num_rows(X_val):
            raise ValueError(f"X_val has {num_rows(X_val)} rows but y_val {num_rows(y_val)}.")
        X_val, y_val = indexable(X_val, y_val)
        if num_rows(X_val) < 1:
            raise ValueError("X_val is empty.")
        columns = [list(getattr(a, "columns", [])) for a in (X, X_val)]
        widths = [a.shape[1] if len(getattr(a, "shape", ())) == 2 else None for a in (X, X_val)]
        if columns[0] != columns[1] or None not in widths and widths[0] != widths[1]:
            raise ValueError("X_val must have the columns of X (the same features, in the same "
                             "order): nothing was spent.")
        if isinstance(scoring, DPScorer):
            scorer, name = scoring, scoring.name or type(scoring).__name__
        else:
            scorer = check_scoring(estimator, scoring=scoring)
            name = scoring if isinstance(scoring, str) else "score" if scoring is None else \
                getattr(scoring, "__name__", type(scoring).__name__)
    else:
        scorer = get_dp_scorer(scoring, step)
        name = scorer.name or type(scorer).__name__
    return eps, prefix, step, X, y, X_val, y_val, scorer, name


def _count_sweep(ledger, step, X, X_val, eps, delta, cv, validation, train_share, val_share,
                 noise):
    """The row count, first: ``(count, fit_eps, total_delta, n_train, n_val, spent)``.

    The number of rows is private under add-or-remove: one DP count of all the rows,
    at COUNT_SHARE of the largest epsilon (the count that point would release on its
    own), released before anything is planned; every point plans with it, and spends
    (1 - COUNT_SHARE) of its epsilon on its fit, as a fit at that epsilon does after
    its own count. Under replace-one (or with epsilon = inf) the number is public.
    """
    relation = ledger.relation
    count = FitCount(epsilon=float(eps[-1]), relation=relation)
    fit_eps = eps * (1.0 - COUNT_SHARE) if count.private else eps
    total_delta = eps.size * float(delta)
    count_label = f"privacy_utility_curve: {type(step).__name__}'s {count.label}"
    if count.private:
        # the whole sweep checked against the ledger first, each point by a public
        # stand-in that meets its target (its plan is made from the count)
        stand_ins = [FitCount(epsilon=float(e), relation=relation).proxy_event(
            float(e), float(delta)) for e in eps]
        ledger.check(ComposedDpEvent([count.event, *stand_ins]), delta=total_delta)
        # final: never refunded
        count.spend_and_release(ledger, num_rows(X), noise=noise, label=count_label)
        spent = (f"The row count's epsilon ({count.epsilon:.4g}) was spent; nothing else "
                 "was.")
        what = f"the DP count of the rows is {count.n:.1f} (noise std {count.std:.3g})"
    else:
        count.release(num_rows(X), noise=noise, commitment=None)
        spent = "Nothing was spent."
        what = f"n_samples = {int(count.n)} (public under {relation})"
    n_train, n_val = train_share * count.n, val_share * count.n
    min_rows = getattr(step, "_min_samples", 1)
    if validation == "holdout" and n_val < 1:
        raise ValueError(f"{what}: the validation part would expect {n_val:.2g} rows "
                         f"(cv={cv!r}). {spent}")
    if n_train < min_rows:
        raise ValueError(f"{what}: the training part would expect {n_train:.1f} rows and "
                         f"{type(step).__name__} needs at least {min_rows}. {spent}")
    if X_val is not None:
        n_val = float(num_rows(X_val))  # public rows: their number is public
    return count, fit_eps, total_delta, n_train, n_val, spent


def _plan_sweep(estimator, prefix, step, X, y, relation, scorer, count, fit_eps, delta,
                total_delta, n_train, validation, spent):
    """The price of every point, planned from the count (X and y give the schema only) as
    each fit will run: ``(fits, fit_events, events, zs, total_epsilon, point_eps)``."""
    with _recording() as caught:  # shown once each, before the commit
        plan = _planner(_fresh(estimator, {}), prefix, X, y, relation, scorer, n_train)
        fits, extras = zip(*[plan(e, delta) for e in fit_eps])
    _warn_once(caught)
    fit_events = [compose_events(f, x) for f, x in zip(fits, extras)]
    if any(e is None for e in fit_events):
        raise ValueError(f"{type(step).__name__} spends nothing when it is fitted: a "
                         f"privacy-utility curve of its fit has nothing to sweep. {spent}")
    zs = None
    if validation == "holdout":
        # the least score noise that costs nothing on top of the fit (a row is in one part),
        # else the noise calibrated to the point's (epsilon, delta)
        zs = np.array([free_score_noise(f, float(e), float(delta))
                       for f, e in zip(fit_events, fit_eps)])
        scores_ev = [gaussian_event(float(z)) for z in zs]
        worst = [holdout_event(f, float(z)) for f, z in zip(fit_events, zs)]
        both = [ComposedDpEvent([f, s]) for f, s in zip(fit_events, scores_ev)]
        # both are valid accounts of a point: record the cheaper one (public facts only)
        options = [(compute_epsilon(ComposedDpEvent([e for e in (count.event, *o) if e]),
                                    total_delta), o) for o in (worst, both)]
        total_epsilon, events = min(options, key=lambda t: t[0])
    else:
        events = fit_events
        total_epsilon = compute_epsilon(
            ComposedDpEvent([e for e in (count.event, *events) if e is not None]), total_delta)
    point_eps = np.array([compute_epsilon(e, float(delta)) for e in events])
    return fits, fit_events, events, zs, total_epsilon, point_eps


def _point_labels(step, eps, validation, events, fit_events):
    """The ledger's label of each point."""
    what = {"public": "fit (scored on public rows)", "public_scorer": "fit (public score)",
            "holdout": "fit on the training part + DP score on the holdout"}[validation]
    return [f"privacy_utility_curve point {i + 1}/{eps.size} (epsilon={e:g}): "
            f"{type(step).__name__} {what}"
            + (" (score's Gaussian dominated by the fit's: the fit's event)"
               if validation == "holdout" and events[i] is fit_events[i] else "")
            for i, e in enumerate(eps)]


def _fit_points(estimator, prefix, X, y, cv, eps, fit_eps, delta, fits, relation, n_train,
                X_val, y_val, scorer, public_rows, validation, zs, n_val, commitments, noise,
                return_estimators, n_jobs, random_state):
    """The split, every point's fit (in joblib's workers with n_jobs) and its score:
    ``(scores, models)``."""
    if validation == "holdout":
        parts = draw_split(num_rows(X), float(cv), noise=noise)  # independent of the data
        train, val = np.flatnonzero(parts == 0), np.flatnonzero(parts == 1)
        X_train, y_train = safe_indexing(X, train), None if y is None else safe_indexing(y, train)
        X_v, y_v = safe_indexing(X, val), None if y is None else safe_indexing(y, val)
    else:
        X_train, y_train = X, y
        X_v, y_v = (X_val, y_val) if public_rows else (None, None)
    if random_state is None:
        seeds = [None] * eps.size  # each fit draws from its own secure source
    else:
        seeds = [int(s) for s in noise.auxiliary().integers(0, 2**32 - 1, size=eps.size)]
    sens = float(scorer.sensitivity(relation)) if validation == "holdout" else None
    outputs = Parallel(n_jobs=n_jobs)(
        delayed(_fit_point)(estimator, prefix, float(e), float(delta), seed, relation,
                            _json_or_none(f), n_train, X_train, y_train, X_v, y_v, scorer,
                            public_rows)
        for e, seed, f in zip(fit_eps, seeds, fits))
    scores = np.empty(eps.size)
    for i, (_, out) in enumerate(outputs):
        if validation == "holdout":
            noisy = release_score(np.atleast_2d(out), noise_multiplier=float(zs[i]),
                                  sensitivity=sens, noise=noise, commitment=commitments[i])
            # the scorer's own noisy count of the validation rows (n_val: public, expected)
            scores[i] = float(scorer.finalize(noisy, n_val))
        else:
            scores[i] = out
    # an explainer that spends when it answers keeps only its DP answers (what it could
    # still spend is not in the sweep's record)
    models = [kept_model(est) for est, _ in outputs] if return_estimators else None
    del outputs
    return scores, models
