"""One shape for every skdpx estimator's private fit.

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
"""

from contextlib import contextmanager
from contextvars import ContextVar
from numbers import Integral
from types import SimpleNamespace
import warnings

import numpy as np

from dp_accounting import ComposedDpEvent, NoOpDpEvent
from sklearn.base import BaseEstimator
from .._sklearn_compat import Interval, InvalidParameterError
from .._sklearn_compat import fit_context as _fit_context

from ._events import compose_events
from ._bounds import FitBounds
from ._budget import EstimatorLedger, SpendReportMixin
from ._count import FitCount
from ._exceptions import UtilityWarning
from ._random import _outside_stacklevel, noise_source

__all__ = ["DPEstimator", "SpendPlan", "given_row_count"]

#: The planning count a caller gives the fits it runs (see :func:`given_row_count`).
_GIVEN_ROW_COUNT = ContextVar("skdpx_given_row_count", default=None)


@contextmanager
def given_row_count(n_rows):
    """Fits run inside plan with ``n_rows`` and release no row count of their own.

    For a caller that made the count public itself (a private search
    releases a DP count of its rows, and gives each fit the share of it
    that the fit's part of the rows expects). ``n_rows`` must be public.
    """
    token = _GIVEN_ROW_COUNT.set(None if n_rows is None else float(n_rows))
    try:
        yield
    finally:
        _GIVEN_ROW_COUNT.reset(token)


def _n_samples(X, data):
    """The number of rows of a validated ``X`` (private under add-or-remove).

    Read only by :meth:`FitCount.release` (and where the relation makes it
    public).

    For a dask collection, the row count of the validated dask array
    (``data.X``, chunk sizes known), else of ``X`` with its chunk sizes
    computed (a count per partition; no value reaches the client).
    """
    from ..utils._dask import as_dask_array, is_dask_collection

    if is_dask_collection(X):
        Z = getattr(data, "X", None)
        if is_dask_collection(Z) and not np.isnan(Z.shape[0]):
            return int(Z.shape[0])
        return int(as_dask_array(X, dtype=None).shape[0])
    # validated: a sequence, an array, a DataFrame, or an array-like
    return (X.shape[0] if hasattr(X, "shape") and len(X.shape) == 2
            else len(X) if hasattr(X, "__len__") else np.asarray(X).shape[0])


class SpendPlan(SimpleNamespace):
    """What a private fit will release: ``event`` (a DpEvent), ``label``, and
    whatever calibration the fit needs (noise multipliers, engines...)."""

    def __init__(self, event, label, **calibration):
        super().__init__(event=event, label=label, **calibration)


class DPEstimator(SpendReportMixin, BaseEstimator):
    """Base class of skdpx's estimators: ``fit`` commits the spend, then trains.

    Subclasses implement:

    * ``_validate_fit(X, y)`` -> ``data`` (anything): validation only; a
      ``ValueError`` here spends nothing;
    * ``_plan_spend(data, relation, bounds, count)`` -> :class:`SpendPlan`:
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

    Their fitted ``ledger_`` (an :class:`EstimatorLedger`) reports
    ``epsilon_spent_`` and ``delta_spent_``.
    """

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
        schema = getattr(self, "schema_", None)
        return FitBounds(self.bounds if schema is None else schema.fit_bounds(self.bounds),
                         self.n_features_in_ if schema is None else schema.n_encoded,
                         epsilon=self.epsilon, delta=self.delta, relation=relation)

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
        from ..utils._dask import is_dask_collection
        from ..utils._memory import check_fit_memory

        per_row = self._row_memory(data)
        if per_row is None or is_dask_collection(X) or is_dask_collection(getattr(data, "X", None)):
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
        estimator's :class:`SpendPlan` with ``bounds`` and ``count`` set,
        and ``event`` / ``label`` those of the rest of the fit (the DP
        bounds' release first, when the bounds are not declared; the count's
        release is committed before, on its own). Reads no private value: a
        search can price a fit with it
        (``skdpx.model_selection.price_search``).
        """
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
        from ..utils._outer_search import outer_search_check

        outer_search_check("at_clone")(self)
        return super().__sklearn_clone__()

    def _new_ledger(self):
        # the shared ledger's labels name the estimator
        return EstimatorLedger(self.epsilon, self.delta, self.accountant,
                               prefix=f"{type(self).__name__}: ")

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
        from ..utils._outer_search import outer_search_check

        with outer_search_check("guard")(self):
            return self._fit_committed(X, y)

    def _fit_committed(self, X, y):
        data = self._validate_fit(X, y)
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
                if count.imprecise:  # said from the DP count, never from the rows
                    warnings.warn(
                        f"{type(self).__name__}: the DP count of the rows is {count.raw:.0f} "
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
        self.ledger_ = ledger
        self.n_rows_ = count.n
        self.n_rows_std_ = count.std
        self.n_rows_epsilon_ = count.epsilon
        return self
