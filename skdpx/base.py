"""The estimator base: what every skdpx estimator is, and what a new one implements.

:class:`DPEstimator` owns ``fit``: validate, resolve the ledger, release
the row count, plan the rest of the spend, commit it, and only then call
the estimator's own ``_private_fit`` with the commitment and a noise source.
The number of rows is private under add-or-remove neighbours: it is
released first with DP (:class:`~skdpx.privacy.FitCount`, inside the
estimator's epsilon, committed before it is read), and the plan is made
from that count and other public facts (the parameters, the declared
bounds), never from the data. The plan's commitment records it in the
estimator's ledger and in the shared one before any mechanism reads the
private rows, and nothing refunds it. An error raised by ``_validate_fit``
leaves every ledger as it was. The noise source is closed (its key wiped)
when the fit ends, normally or by an exception.

A new estimator subclasses :class:`DPEstimator` and implements its three
abstract hooks (``_validate_fit`` -> :class:`FitData`, ``_plan_spend``,
``_private_fit``), and declares what the searches, the scorers and the
pricing may rely on in ``_dp_capabilities`` (a :class:`DPCapabilities`).
:class:`BlackBoxMixin` and :class:`ActionabilityMixin` hold what the
explainers of a black box (DPCounterfactualGenerator, PrivRecourse) share.
See :ref:`contributing`.

Layering: this module sits above the privacy core (:mod:`skdpx.privacy`
imports no estimator) and below the estimators' packages.
"""

from abc import ABCMeta, abstractmethod
from dataclasses import dataclass, field
from numbers import Integral
import warnings

import numpy as np

from sklearn.base import BaseEstimator

from ._sklearn_compat import Interval, InvalidParameterError
from ._sklearn_compat import fit_context as _fit_context
from .privacy import (ComposedDpEvent, EstimatorLedger, FitBounds, FitCount, NoOpDpEvent,
                      SpendReportMixin, UtilityWarning, compose_events, noise_source)
# the privacy core's side of a fit: the count a caller gave (given_row_count), the one
# read of the private number of rows, the warnings' stack level
from .privacy._estimator import _GIVEN_ROW_COUNT, _n_samples
from .utils._blackbox import call_checked, spent_after_commit
# every fit checks its memory and is_dask_collection: imported here (both small,
# numpy and the standard library only), not in a process's first fit (issue 41)
from .utils._engine import is_distributed
from .utils._memory import check_fit_memory
from .utils._stacklevel import _outside_stacklevel

__all__ = ["ActionabilityMixin", "BlackBoxMixin", "DPCapabilities", "DPEstimator", "FitData",
           "kept_model"]


@dataclass(frozen=True)
class FitData:
    """What ``_validate_fit`` returns: the validated rows and what the fit needs of them.

    Made before anything is spent, from the inputs and the public
    parameters; passed to ``_plan_spend`` (which reads only its public
    facts: shapes, declared classes) and to ``_private_fit``.

    Attributes
    ----------
    X : array-like
        The validated rows (an array in the encoded space of the public
        schema, or a dask array).
    y : array-like or None
        The labels as the fit reads them: class codes into ``classes``
        (-1 where a row has no usable label), numbers, or None (a black
        box labels the rows, or the fit is unsupervised).
    classes : ndarray or None
        The public class labels ``y`` codes into, when it does.
    extra : dict
        Whatever else validation resolved for the fit (estimator-specific,
        e.g. the explained output, the constraint sets).
    """

    X: object
    y: object = None
    classes: object = None
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class DPCapabilities:
    """What an estimator class lets the searches, the scorers and the pricing rely on.

    Declared once per class (``_dp_capabilities = DPCapabilities(...)``);
    read by :mod:`skdpx.model_selection` instead of a list of classes or a
    probe of private methods. The defaults fit an estimator written from
    :class:`DPEstimator`'s hooks alone.

    Attributes
    ----------
    exact_price : bool, default=True
        Its ``fit`` commits its only spend (the plan of ``_plan_spend``), so
        :func:`~skdpx.model_selection.price_search` prices a fit exactly from
        the fold's size where that size is public. False: priced at its cap.
    answers_queries : bool, default=False
        The fitted estimator spends again when used (DPLimeExplainer's
        interactive answers): it defines ``_plan_queries(n_queries)``, an
        upper bound on what answering ``n_queries`` queries spends, and a
        private search prepays it for the refit model.
    holds_private_rows : bool, default=False
        The fitted estimator keeps private rows to use later (DPLimeExplainer
        answers from its explanation data): it defines ``release()``, a copy
        holding only DP outputs, which a private search or a sweep keeps as
        its model instead (:func:`kept_model`).
    default_scoring : str or None, default=None
        The name of the DP scorer (:func:`~skdpx.model_selection.get_dp_scorer`)
        a private search uses when given ``scoring=None``; None: a
        classifier's accuracy, and no default for anything else.
    no_default_scoring : str or None, default=None
        Why there is no default scoring, and what to pass instead (the
        error's advice).
    """

    exact_price: bool = True
    answers_queries: bool = False
    holds_private_rows: bool = False
    default_scoring: str = None
    no_default_scoring: str = None


def kept_model(model):
    """What a private search or a sweep keeps of a fitted model.

    The ``release()`` copy (DP outputs only) of an estimator whose class
    declares ``holds_private_rows``; any other model as it is.
    """
    if isinstance(model, DPEstimator) and model._dp_capabilities.holds_private_rows:
        return model.release()
    return model


def _check_fit_data(estimator, data):
    """``data`` if it is a :class:`FitData`, else a TypeError (a programming error)."""
    if not isinstance(data, FitData):
        raise TypeError(f"{type(estimator).__name__}._validate_fit must return a "
                        f"skdpx.base.FitData, got {type(data).__name__}.")
    return data


def _check_exhausted(estimator, commitment):
    """RuntimeError if ``commitment`` still pays for releases that were never drawn.

    Which releases a fit draws is fixed by its plan (public facts), never by
    the private values: a plan that commits more than the fit releases is a
    programming error of the estimator (its accounting overstates, or a
    release was skipped), caught here, after the spend (nothing is refunded).
    """
    if commitment is not None and not commitment.exhausted:
        raise RuntimeError(
            f"{type(estimator).__name__}: the spend committed for {commitment.label!r} was "
            "not all drawn by the fit: some of its planned releases were never made. This is "
            "a programming error of the estimator (its plan must list exactly the releases "
            "it makes); the budget was spent.")


class DPEstimator(SpendReportMixin, BaseEstimator, metaclass=ABCMeta):
    """Base class of skdpx's estimators: ``fit`` commits the spend, then trains.

    Subclasses implement three abstract hooks (a subclass without one of
    them cannot be instantiated: ``TypeError``):

    * ``_validate_fit(X, y)`` -> :class:`FitData`: validation only; a
      ``ValueError`` here spends nothing;
    * ``_plan_spend(data, relation, bounds, count)`` -> :class:`~skdpx.privacy.SpendPlan`:
      the whole spend of the fit but the bounds' and the count's, calibrated
      under the ledger's neighbouring ``relation`` (raise ``ValueError`` for
      a relation the estimator cannot calibrate for) with
      ``count.prior(bounds.event)`` (the DP count's and the DP bounds' cost,
      when they are released) as prior, so that they all meet (epsilon,
      delta) together. Its public facts are the parameters, the bounds and
      ``count.n``, the planning count (a DP count under add-or-remove):
      never ``len(X)`` nor any private value;
    * ``_private_fit(data, plan, commitment, noise)``: the fit; its first
      release is ``plan.bounds.release(X, noise=noise,
      commitment=commitment)`` (the declared bounds, or the DP estimate);
      every release goes through the privacy core's release functions with
      ``commitment`` and ``noise``; ``plan.count.n`` is the count to
      normalise with.

    ``bounds`` (a :class:`~skdpx.privacy.FitBounds`) is made from the
    estimator's ``bounds`` parameter before anything is spent: declared
    bounds are validated; ``None`` plans a DP estimate inside epsilon
    (never the raw extremes) with a ``PrivacyLeakWarning``. ``count`` (a
    :class:`~skdpx.privacy.FitCount`) is released before the plan is made.

    After ``_private_fit`` returns, every release its commitment paid for
    must have been drawn (:attr:`~skdpx.privacy.Commitment.exhausted`): a
    plan that spends more than the fit releases is a programming error of
    the estimator (``RuntimeError``), never a function of the private data.

    What the searches, the scorers and the pricing need to know about an
    estimator is its class attribute ``_dp_capabilities`` (a
    :class:`DPCapabilities`), never its class or a probe of its methods.
    See :ref:`contributing` for a new estimator written from these hooks
    alone.

    Their fitted ``ledger_`` (an :class:`~skdpx.privacy.EstimatorLedger`)
    reports ``epsilon_spent_`` and ``delta_spent_``.
    """

    #: What the searches, scorers and pricing read (see :class:`DPCapabilities`).
    _dp_capabilities = None  # set below: DPCapabilities()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        caps = cls._dp_capabilities
        if not isinstance(caps, DPCapabilities):
            raise TypeError(f"{cls.__name__}._dp_capabilities must be a DPCapabilities, "
                            f"got {caps!r}.")
        if caps.answers_queries and not callable(getattr(cls, "_plan_queries", None)):
            raise TypeError(f"{cls.__name__} declares answers_queries=True: it must define "
                            "_plan_queries(n_queries) (what answering n queries may spend).")
        if caps.holds_private_rows and not callable(getattr(cls, "release", None)):
            raise TypeError(f"{cls.__name__} declares holds_private_rows=True: it must define "
                            "release() (a copy holding only DP outputs).")

    @abstractmethod
    def _validate_fit(self, X, y):
        """Validate ``X`` and ``y`` (and every parameter that can be checked) before any spend.

        Returns a :class:`FitData`. Reads no private value into a decision:
        a ``ValueError`` here spends nothing.
        """

    @abstractmethod
    def _plan_spend(self, data, relation, bounds, count):
        """The :class:`~skdpx.privacy.SpendPlan` of the fit (its bounds' and count's aside).

        From public facts only: the parameters, ``bounds`` (a
        :class:`~skdpx.privacy.FitBounds`), ``count.n`` (a
        :class:`~skdpx.privacy.FitCount`) and ``relation``.
        """

    @abstractmethod
    def _private_fit(self, data, plan, commitment, noise):
        """The fit: every release drawn from ``commitment`` with ``noise``; sets the
        fitted attributes. ``commitment`` is None when the plan releases nothing."""

    #: Where the number of rows is public (a replace-one ledger, epsilon =
    #: inf), fewer rows than this are refused before anything is spent: a DP
    #: release about so few rows is noise. Under add-or-remove the number is
    #: private and refusing would reveal it: a fit plans for at least this
    #: many rows whatever its DP count, and warns (UtilityWarning) when the
    #: count is below it or below twice its noise.
    _min_samples = 10

    def _fit_bounds(self, relation):
        """The :class:`~skdpx.privacy.FitBounds` of a fit: validated (declared) or planned (DP).

        Public facts only; made before anything is spent.
        """
        # an estimator fitted through skdpx.utils validate_table works in the
        # encoded space of its public schema (one-hot columns bounded in [0, 1])
        # the warning of a DP estimate names the estimated columns (public names)
        schema = getattr(self, "schema_", None)
        return FitBounds(self.bounds if schema is None else schema.fit_bounds(self.bounds),
                         self.n_features_in_ if schema is None else schema.n_encoded,
                         epsilon=self.epsilon, delta=self.delta, relation=relation,
                         feature_names=None if schema is None else schema.feature_names_out)

    def _check_plan(self, relation, bounds, count):
        """Refuse, before anything is spent, a fit whose plan would fail on public facts.

        The plan itself is made after the row count is released (its
        sampling rates and normalisers come from it); what makes it fail
        whatever the count (a budget split that leaves nothing for a
        release, a relation the estimator cannot calibrate for) is checked
        here, from the parameters, ``bounds`` and the count's share.
        Subclasses override it; the default checks nothing.
        """

    def _row_memory(self, data):
        """Bytes the fit keeps per row of X on top of the validated X (None: no check).

        Read from public facts (the parameters, the schema); the rows are
        read in blocks, whose temporaries are a fixed allowance
        (:func:`~skdpx.utils._memory.check_fit_memory`).
        """
        return None

    def _check_memory(self, X, data, count):
        """Refuse, before the rest of the fit is committed, a fit that cannot fit in the
        available memory.

        The estimate is planned from ``count`` (a :class:`FitCount` already
        released: public, the DP count under add-or-remove) plus four times its
        noise's standard deviation, never from the private number of rows
        (:mod:`skdpx.utils._memory`); a Dask collection is not checked (its
        rows stay in the workers).
        """
        per_row = self._row_memory(data)
        if per_row is None or is_distributed(X) or is_distributed(getattr(data, "X", None)):
            return
        spent = (f"The DP row count (epsilon {count.epsilon:.4g}) was spent; nothing else was."
                 if count.private else "Nothing was spent.")
        width = np.shape(getattr(data, "X", X))[1] if np.ndim(getattr(data, "X", X)) == 2 else 0
        check_fit_memory(self, per_row, count.n + 4.0 * count.std, x_row_bytes=8.0 * width,
                         spent=spent)

    def _count_basis(self):
        """The epsilon the DP row count takes its share (``COUNT_SHARE``) of: the fit's."""
        return self.epsilon

    def _proxy_rest(self, count, bounds):
        """A public stand-in for what the fit spends after its count, for the check
        before the count is spent (:meth:`FitCount.proxy_event`; None: nothing)."""
        return count.proxy_event(self.epsilon, self.delta)

    def _plan_fit(self, data, relation, count, bounds=None):
        """The whole plan of a fit on validated ``data``, its bounds' release included.

        ``count`` is the fit's :class:`~skdpx.privacy.FitCount`, with its
        planning count ``count.n`` known; ``bounds`` its
        :class:`~skdpx.privacy.FitBounds` (made here when None). Returns the
        estimator's :class:`~skdpx.privacy.SpendPlan` with ``bounds`` and ``count`` set,
        and ``event`` / ``label`` those of the rest of the fit (the DP
        bounds' release first, when the bounds are not declared; the count's
        release is committed before, on its own). Reads no private value: a
        search can price a fit with it
        (``skdpx.model_selection.price_search``).
        """
        _check_fit_data(self, data)
        if bounds is None:
            bounds = self._fit_bounds(relation)
        plan = self._plan_spend(data, relation, bounds, count)
        plan.bounds, plan.count = bounds, count
        if bounds.event is not None:
            plan.label = bounds.label + " + " + plan.label
            plan.event = (bounds.event if isinstance(plan.event, NoOpDpEvent)
                          else ComposedDpEvent([bounds.event, plan.event]))
        return plan

    def _validate_params(self):
        """scikit-learn's parameter validation, and no ``True`` for a count.

        scikit-learn's ``Interval(Integral, ...)`` takes a bool (``True`` is
        the integral 1): ``n_maps=True`` passed it and failed only after the
        commit. A parameter whose constraints are integer intervals and not
        ``"boolean"`` refuses a bool here, before anything is spent.
        """
        super()._validate_params()
        for name, value in self.get_params(deep=False).items():
            if not isinstance(value, (bool, np.bool_)):
                continue
            rules = self._parameter_constraints.get(name, [])
            if "boolean" in rules or any(r is bool for r in rules):
                continue
            if any(isinstance(r, Interval) and r.type is Integral for r in rules):
                raise InvalidParameterError(
                    f"The {name!r} parameter of {type(self).__name__} must be an int, not a "
                    f"bool; got {value!r}. Nothing was spent.")

    def _require_delta(self, what):
        """Refuse ``delta = 0`` at a finite epsilon, from ``_validate_fit``
        (before anything is spent): ``what`` is a Gaussian release."""
        if self.delta == 0 and not np.isinf(self.epsilon):
            raise ValueError(f"{what} needs delta > 0 (a Gaussian mechanism), got delta=0. "
                             "Nothing was spent.")

    def __sklearn_clone__(self):
        # a scikit-learn search's first clone of its estimator: on a capped ledger, the
        # whole search is priced and refused (BudgetError) before any fit if it cannot pay
        from .utils._outer_search import outer_search_check

        outer_search_check("at_clone")(self)
        return super().__sklearn_clone__()

    def _new_ledger(self):
        # the shared ledger's labels name the estimator
        return EstimatorLedger.of(self, self.accountant)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Validate, release the row count, plan and commit the spend, then fit.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), optional

        Returns
        -------
        self
        """
        # inside scikit-learn's GridSearchCV / RandomizedSearchCV / cross_validate on a
        # capped ledger: the whole search is priced and checked at its first fit
        # (registered by skdpx.model_selection: skdpx.utils._outer_search)
        from .utils._outer_search import outer_search_check

        with outer_search_check("guard")(self):
            return self._fit_committed(X, y)

    def _fit_committed(self, X, y):
        data = _check_fit_data(self, self._validate_fit(X, y))
        ledger = self._new_ledger()
        count = FitCount(epsilon=self._count_basis(), relation=ledger.relation,
                         n_rows=_GIVEN_ROW_COUNT.get(), floor=self._min_samples)
        # public facts, checked before anything is spent
        bounds = self._fit_bounds(ledger.relation)
        self._check_plan(ledger.relation, bounds, count)
        # closed (its key wiped) when the fit ends, however it ends
        with noise_source(self.random_state) as noise:
            if count.private:
                # nothing is planned from the rows before the count is released: the
                # whole fit is checked against the caps first, with a public stand-in
                # for the rest (every plan meets the same target), then the count is
                # committed and released
                ledger.check(compose_events(count.event, self._proxy_rest(count, bounds)))
                counted = ledger.commit(count.event, count.label)
                count.release(_n_samples(X, data), noise=noise, commitment=counted)
                _check_exhausted(self, counted)
                if count.imprecise:  # said from the DP count, never from the rows
                    warnings.warn(
                        f"{getattr(self, '_public_name', None) or type(self).__name__}: "
                        f"the DP count of the rows is {count.raw:.0f} "
                        f"(noise std {count.std:.3g}), so the fit is planned for "
                        f"{count.n:.0f} rows; on so few rows its releases are mostly noise. "
                        "Use more rows or a larger epsilon.", UtilityWarning,
                        stacklevel=_outside_stacklevel())
            else:
                # public: the relation fixes the number of rows (or a caller gave the
                # count), or the fit is not private
                count.release(_n_samples(X, data), noise=noise, commitment=None)
                if count.raw < self._min_samples:
                    raise ValueError(
                        f"{type(self).__name__} needs at least {self._min_samples} samples to "
                        f"release anything useful; got n_samples = {count.raw:.0f}. "
                        "Nothing was spent.")
            # the memory the fit needs, planned from the count (public once released)
            self._check_memory(X, data, count)
            plan = self._plan_fit(data, ledger.relation, count, bounds)
            if isinstance(plan.event, NoOpDpEvent):
                commitment = None
            else:
                # committed before any mechanism reads the private rows: final
                commitment = count.commit_rest(lambda: ledger.commit(plan.event, plan.label))
            self._private_fit(data, plan, commitment, noise)
            _check_exhausted(self, commitment)
        self.ledger_ = ledger
        self.n_rows_ = count.n
        self.n_rows_std_ = count.std
        self.n_rows_epsilon_ = count.epsilon
        return self


DPEstimator._dp_capabilities = DPCapabilities()


# --------------------------------------------------------------------------
# What the explainers of a black box share (DPCounterfactualGenerator, PrivRecourse)
# --------------------------------------------------------------------------
class BlackBoxMixin:
    """Ask the black box about public rows, with the fitted public schema and bounds.

    For an estimator fitted through :func:`~skdpx.utils._tables.validate_table`
    (``schema_``) with public ``bounds_`` and ``classes_``. The rows asked
    about are public (queries, DP releases, search points) and are read
    after the fit's commit: an output that cannot be used raises, saying
    that the budget was spent; it is never an answer.
    """

    #: Where the rows the black box is asked about come from (for its errors).
    _black_box_rows = "public rows"

    def _decode(self, Z):
        """Encoded rows as rows of the kind the estimator was fitted on.

        The public schema decodes them (a DataFrame with the fitted columns
        and dtypes, valid categories and integers, within the bounds), so
        that the black box sees its feature names and a Pipeline that
        selects columns by name works.
        """
        return self.schema_.decode(Z, *self.bounds_)

    def _call_black_box(self, black_box, method, Z, expect):
        """``black_box.method`` on encoded public rows ``Z``, its output checked
        (``expect``: "labels", "columns" or "margins")."""
        return call_checked(getattr(black_box, method), self._decode(Z), len(Z), expect=expect,
                            name=type(black_box).__name__, classes=self.classes_,
                            where=self._black_box_rows,
                            consequence=spent_after_commit(self, "at fit"))


class ActionabilityMixin:
    """The actionability constraints: ``immutable_features``, ``increasing_features``,
    ``decreasing_features`` (names or input positions), and the wanted class.

    Public parameters, resolved against the fitted public schema
    (``schema_``) before anything is spent.
    """

    _ACTIONABILITY = ("immutable_features", "increasing_features", "decreasing_features")

    def _actionable_sets(self, *, monotone_categorical=None):
        """The three constraint sets as sorted encoded index arrays (validation only).

        A categorical column gives its whole one-hot block. It may be in
        ``increasing_features`` / ``decreasing_features`` only when its
        levels are ordered (an ordered pandas categorical dtype, else the
        order of its levels in ``categories``: :mod:`skdpx._rules`); it is
        then left out of the returned (numeric) sets and appended to
        ``monotone_categorical`` (a list, as ``(position, +1 or -1)``) when
        one is given, refused otherwise. A feature in two sets is refused.
        The columns outside ``features_to_vary`` (when it is not "all")
        join the immutable set.
        """
        schema = self.schema_
        sets = {}
        for name in self._ACTIONABILITY:
            features = getattr(self, name)
            if features is not None and not isinstance(features, str):
                features = [f.item() if isinstance(f, np.generic) else f
                            for f in np.atleast_1d(np.asarray(features, dtype=object))]
            sets[name] = np.asarray(schema.indices(features, name), dtype=int)
        seen = {}
        for name, idx in sets.items():
            for f in idx.tolist():
                if f in seen:
                    column = next(c for c, g in schema.groups if f in g)
                    raise ValueError(f"feature {column!r} is in both {seen[f]} and {name}.")
                seen[f] = name
        vary = getattr(self, "features_to_vary", "all")
        if not (vary is None or (isinstance(vary, str) and vary == "all")):
            if isinstance(vary, str):
                vary = [vary]
            vary = [f.item() if isinstance(f, np.generic) else f
                    for f in np.atleast_1d(np.asarray(vary, dtype=object))]
            free = set(schema.indices(vary, "features_to_vary").tolist())
            both = sorted({c for c, g in schema.groups
                           if free.intersection(g.tolist())
                           and np.isin(g, sets["immutable_features"]).any()})
            if both:
                raise ValueError(f"features {both} are in both features_to_vary and "
                                 "immutable_features.")
            for name in self._ACTIONABILITY[1:]:
                fixed = sorted({c for c, g in schema.groups
                                if not free.intersection(g.tolist())
                                and np.isin(g, sets[name]).any()})
                if fixed:
                    raise ValueError(f"features {fixed} are in {name} but not in "
                                     "features_to_vary.")
            held = np.array([f for f in range(schema.n_encoded) if f not in free], dtype=int)
            sets["immutable_features"] = np.union1d(sets["immutable_features"], held)
        for sign, name in ((1, self._ACTIONABILITY[1]), (-1, self._ACTIONABILITY[2])):
            if not schema.categorical[sets[name]].any():
                continue
            positions = [p for p, (c, g) in enumerate(schema.groups)
                         if schema.categorical[g].all() and np.isin(g, sets[name]).any()]
            if monotone_categorical is None:
                columns = [schema.groups[p][0] for p in positions]
                raise ValueError(f"{name}: {columns} are categorical: their levels have no "
                                 "order (only immutable_features takes categorical columns).")
            from ._rules import level_order

            for p in positions:
                level_order(schema, p, name)  # refuses an unordered pandas categorical
                monotone_categorical.append((p, sign))
            sets[name] = sets[name][~schema.categorical[sets[name]]]
        return tuple(np.unique(sets[name]) for name in self._ACTIONABILITY)

    def _resolve_rules(self):
        """The constraint sets and the declared rules, checked against ``schema_``.

        Returns ``(sets, rules)``: the three numeric/immutable encoded index
        arrays of :meth:`_actionable_sets` and a :class:`skdpx._rules.Rules`.
        Validation only (public parameters against the public schema),
        before anything is spent.
        """
        from ._rules import resolve_rules

        monotone = []
        sets = self._actionable_sets(monotone_categorical=monotone)
        return sets, resolve_rules(self, sets, monotone)

    def _follow_rules(self, Z, Q):
        """Candidates (encoded valid records) repaired onto the rules relative to
        their queries ``Q``; a candidate that still breaks one becomes its query
        (which the search then does not count as a counterfactual unless the
        query itself holds every rule). Post-processing of public points."""
        rules = self.rules_
        if not rules.active or len(Z) == 0:
            return Z
        Q = np.broadcast_to(Q, Z.shape)
        Z = rules.repair(Z, Q)
        ok = rules.admissible(Z, Q, self.bounds_)
        return np.where(ok[:, None], Z, Q)

    def _check_wanted_class(self, wanted, name, *, opposite=False, per_query=False):
        """``wanted`` if it is a label of ``classes_`` (or, as allowed, "opposite" or
        one label per query), else a ValueError saying that nothing was spent."""
        if opposite and isinstance(wanted, str) and wanted == "opposite":
            return wanted
        known = set(self.classes_.tolist())
        try:
            values = np.asarray(wanted, dtype=object).reshape(-1).tolist()
            ok = (len(values) > 0 if per_query else np.ndim(wanted) == 0) and all(
                v in known for v in values)
        except TypeError:  # unhashable
            ok = False
        if not ok:
            what = " or ".join((["'opposite'"] if opposite else [])
                               + [f"one of the classes {self.classes_.tolist()}"])
            how = " (one label, or one per query)" if per_query else ""
            raise ValueError(f"{name} must be {what}{how}, got {wanted!r}. Nothing was spent.")
        return wanted
