"""How an estimator spends: its own cap inside a (possibly shared) ledger."""

from contextlib import ExitStack, contextmanager
import math

from diffprivlib.accountant import BudgetAccountant
from sklearn.utils.validation import check_is_fitted

from ._accounting import is_pure
from ._ledger import PrivacyLedger

from ._validation import DELTA_CONSTRAINT, EPSILON_CONSTRAINT

__all__ = [
    "BUDGET_PARAMETER_CONSTRAINTS", "EstimatorBudget", "SpendReportMixin", "resolve_ledger",
]

#: The parameter constraints every skdpx estimator shares (scikit-learn's
#: ``_parameter_constraints`` format): merge them into the class's own.
BUDGET_PARAMETER_CONSTRAINTS = {
    "epsilon": [EPSILON_CONSTRAINT],
    "delta": [DELTA_CONSTRAINT],
    "bounds": [tuple, list, None],
    "accountant": [PrivacyLedger, BudgetAccountant, None],
    "random_state": ["random_state"],
}


def resolve_ledger(accountant):
    """The PrivacyLedger that an estimator's ``accountant`` parameter names.

    Parameters
    ----------
    accountant : PrivacyLedger, diffprivlib.BudgetAccountant or None
        A ledger is used as it is. A BudgetAccountant (``None``: diffprivlib's
        default one, ``BudgetAccountant.load_default(None)``) gets a fresh,
        uncapped ledger that mirrors every spend into it, so its own cap is
        enforced by diffprivlib.
    """
    if isinstance(accountant, PrivacyLedger):
        return accountant
    if accountant is None:
        accountant = BudgetAccountant.load_default(None)
    if isinstance(accountant, BudgetAccountant):
        return PrivacyLedger(accountant=accountant)
    raise TypeError(
        "accountant must be a skdpx.privacy.PrivacyLedger, a diffprivlib BudgetAccountant or "
        f"None, got {type(accountant).__name__}."
    )


class SpendReportMixin:
    """``epsilon_spent_`` / ``delta_spent_`` of an estimator whose spends are in ``budget_``."""

    @property
    def epsilon_spent_(self):
        check_is_fitted(self)
        return self.budget_.epsilon_spent

    @property
    def delta_spent_(self):
        check_is_fitted(self)
        return self.budget_.delta_spent


class EstimatorBudget:
    """The spends of one estimator: its own cap, recorded in a shared ledger too.

    An estimator with ``epsilon`` and ``delta`` makes one of these in ``fit``.
    Every release goes through :meth:`reserve`: the estimator's own cap and
    the shared ledger's cap are both checked before the data are touched,
    the spend is recorded in both, and it is taken back from both if the
    release fails before anything is published.

    Parameters
    ----------
    epsilon, delta : float
        The estimator's own budget (``epsilon=np.inf``: no cap).
    accountant : PrivacyLedger, diffprivlib.BudgetAccountant or None
        Where the spends are recorded as well (see :func:`resolve_ledger`).
    prefix : str
        Prepended to each label in the shared ledger (e.g. the class name).
    """

    def __init__(self, epsilon, delta, accountant=None, *, prefix=""):
        self.own = PrivacyLedger(epsilon=epsilon, delta=delta)
        self.shared = resolve_ledger(accountant)
        self.delta = float(delta)
        self.prefix = prefix

    def check(self, event):
        """Raise BudgetError if ``event`` would exceed either cap."""
        self.own.check(event, delta=self._declared(event))
        self.shared.check(event, delta=self._declared(event))

    @contextmanager
    def reserve(self, event, label, *, delta=None):
        """Spend ``event`` in both ledgers around a release (see PrivacyLedger.reserve).

        ``delta`` is the delta the release was calibrated for (default: 0
        for a pure event, else the estimator's delta).
        """
        delta = self._declared(event) if delta is None else delta
        self.own.check(event, delta=delta)
        with ExitStack() as stack:
            stack.enter_context(self.shared.reserve(event, self.prefix + label, delta=delta))
            stack.enter_context(self.own.reserve(event, label, delta=delta))
            yield

    def _declared(self, event):
        # Pure events declare no delta; the rest the estimator's delta.
        return 0.0 if is_pure(event) else self.delta

    @property
    def epsilon_spent(self):
        return self.own.epsilon_spent

    @property
    def delta_spent(self):
        return self.own.delta_spent

    @property
    def events(self):
        return self.own.events

    def __repr__(self):
        eps = "inf" if math.isinf(self.own.epsilon) else f"{self.own.epsilon:g}"
        return f"EstimatorBudget(epsilon={eps}, delta={self.delta:g}, spent={self.epsilon_spent:.4g})"
