"""One shape for every skdpx estimator's private fit.

:class:`DPEstimator` owns ``fit``: validate, resolve the ledger, plan the
whole spend, commit it, and only then call the estimator's own
``_private_fit`` with the commitment and a noise source. The plan is made
from public facts (the number of rows, the parameters, the declared bounds),
never from the data's values; the commitment records it in the estimator's
ledger and in the shared one before any mechanism reads the private rows,
and nothing refunds it. An error raised by ``_validate_fit`` or
``_plan_spend`` leaves every ledger as it was.
"""

from types import SimpleNamespace

from dp_accounting import NoOpDpEvent
from sklearn.base import BaseEstimator, _fit_context

from ._budget import EstimatorLedger, SpendReportMixin
from ._random import noise_source

__all__ = ["DPEstimator", "SpendPlan"]


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
    * ``_plan_spend(data, relation)`` -> :class:`SpendPlan`: the whole spend
      of the fit, calibrated under the ledger's neighbouring ``relation``
      (raise ``ValueError`` for a relation the estimator cannot calibrate
      for); it must not read the private values;
    * ``_private_fit(data, plan, commitment, noise)``: the fit; every
      release goes through the privacy core's release functions with
      ``commitment`` and ``noise``.

    Their fitted ``ledger_`` (an :class:`EstimatorLedger`) reports
    ``epsilon_spent_`` and ``delta_spent_``.
    """

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
        ledger = self._new_ledger()
        plan = self._plan_spend(data, ledger.relation)
        noise = noise_source(self.random_state)
        if isinstance(plan.event, NoOpDpEvent):
            commitment = None
        else:
            # committed before any mechanism reads the private rows: final
            commitment = ledger.commit(plan.event, plan.label)
        self._private_fit(data, plan, commitment, noise)
        self.ledger_ = ledger
        return self
