"""One shape for every skdpx estimator's private fit.

:class:`DPEstimator` owns ``fit``: validate, resolve the ledger, plan the
whole spend, commit it, and only then call the estimator's own
``_private_fit`` with the commitment and a noise source. The plan is made
from public facts (the number of rows, the parameters, the declared bounds),
never from the data's values; the commitment records it in the estimator's
ledger and in the shared one before any mechanism reads the private rows,
and nothing refunds it. An error raised by ``_validate_fit`` or
``_plan_spend`` leaves every ledger as it was. The noise source is closed
(its key wiped) when the fit ends, normally or by an exception.
"""

from types import SimpleNamespace

import numpy as np

from dp_accounting import ComposedDpEvent, NoOpDpEvent
from sklearn.base import BaseEstimator
from .._sklearn_compat import fit_context as _fit_context

from ._bounds import FitBounds
from ._budget import EstimatorLedger, SpendReportMixin
from ._random import noise_source

__all__ = ["DPEstimator", "SpendPlan"]


def _n_samples(X, data):
    """The number of rows of a validated ``X`` (a public count, as ``len(X)``).

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
    * ``_plan_spend(data, relation, bounds)`` -> :class:`SpendPlan`: the
      whole spend of the fit but the bounds', calibrated under the ledger's
      neighbouring ``relation`` (raise ``ValueError`` for a relation the
      estimator cannot calibrate for) with ``bounds.event`` (the DP
      bounds' cost, or None when they are declared) as prior, so that the
      two meet (epsilon, delta) together; it must not read the private
      values;
    * ``_private_fit(data, plan, commitment, noise)``: the fit; its first
      release is ``plan.bounds.release(X, noise=noise,
      commitment=commitment)`` (the declared bounds, or the DP estimate);
      every release goes through the privacy core's release functions with
      ``commitment`` and ``noise``.

    ``bounds`` (a :class:`~skdpx.privacy.FitBounds`) is made from the
    estimator's ``bounds`` parameter before anything is spent: declared
    bounds are validated; ``None`` plans a DP estimate inside epsilon
    (never the raw extremes) with a ``PrivacyLeakWarning``.

    Their fitted ``ledger_`` (an :class:`EstimatorLedger`) reports
    ``epsilon_spent_`` and ``delta_spent_``.
    """

    #: Fewer rows than this are refused before anything is spent: a DP
    #: release about so few rows is noise (a count's noise at epsilon = 1 is
    #: already about one row).
    _min_samples = 10

    def _plan_fit(self, data, relation):
        """The whole plan of a fit on validated ``data``, its bounds' release included.

        Returns the estimator's :class:`SpendPlan` with ``bounds`` (the
        :class:`~skdpx.privacy.FitBounds`) set, and ``event`` / ``label``
        those of the whole fit (the DP bounds' release first, when the
        bounds are not declared). Reads no private value: a search can price
        a fit with it (``skdpx.model_selection.price_search``).
        """
        # an estimator fitted through skdpx.utils validate_table works in the
        # encoded space of its public schema (one-hot columns bounded in [0, 1])
        schema = getattr(self, "schema_", None)
        bounds = FitBounds(self.bounds if schema is None else schema.fit_bounds(self.bounds),
                           self.n_features_in_ if schema is None else schema.n_encoded,
                           epsilon=self.epsilon, delta=self.delta, relation=relation)
        plan = self._plan_spend(data, relation, bounds)
        plan.bounds = bounds
        if bounds.event is not None:
            plan.label = bounds.label + " + " + plan.label
            plan.event = (bounds.event if isinstance(plan.event, NoOpDpEvent)
                          else ComposedDpEvent([bounds.event, plan.event]))
        return plan

    def _new_ledger(self):
        # the shared ledger's labels name the estimator
        return EstimatorLedger(self.epsilon, self.delta, self.accountant,
                               prefix=f"{type(self).__name__}: ")

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Validate, plan and commit the spend, then fit.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), optional

        Returns
        -------
        self
        """
        data = self._validate_fit(X, y)
        n_samples = _n_samples(X, data)
        if n_samples < self._min_samples:
            raise ValueError(
                f"{type(self).__name__} needs at least {self._min_samples} samples to release "
                f"anything useful; got n_samples = {n_samples}. Nothing was spent."
            )
        ledger = self._new_ledger()
        plan = self._plan_fit(data, ledger.relation)
        # closed (its key wiped) when the fit ends, however it ends
        with noise_source(self.random_state) as noise:
            if isinstance(plan.event, NoOpDpEvent):
                commitment = None
            else:
                # committed before any mechanism reads the private rows: final
                commitment = ledger.commit(plan.event, plan.label)
            self._private_fit(data, plan, commitment, noise)
        self.ledger_ = ledger
        return self
