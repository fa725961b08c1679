"""The privacy core of skdpx.

Every call into diffprivlib and dp_accounting lives in this package:
calibration and accounting (:mod:`._accounting`), the privacy ledger, the
DP-SGD engine, diffprivlib's mechanisms for single releases, validation
helpers and the empirical privacy auditor used by the tests.
"""

from diffprivlib.utils import BudgetError, PrivacyLeakWarning

from ._accounting import (
    PureDpEvent,
    calibrate_laplace,
    calibrate_noise,
    compute_epsilon,
    event_from_json,
    event_to_json,
    gaussian_epsilon,
    gaussian_event,
    is_pure,
    laplace_epsilon,
    laplace_event,
    pure_event,
    pure_to_gaussian,
    gaussian_to_pure,
)
from ._audit import audit_epsilon
from ._budget import (
    BUDGET_PARAMETER_CONSTRAINTS,
    EstimatorBudget,
    SpendReportMixin,
    resolve_ledger,
)
from ._dpsgd import DPSGD, dense_clipped_grad, dense_grad_sq_norms
from ._ledger import LedgerDetachedError, PrivacyLedger
from ._mechanisms import exponential_mechanism, gaussian_mechanism, laplace_mechanism
from ._validation import (
    DELTA_CONSTRAINT,
    EPSILON_CONSTRAINT,
    check_bounds,
    check_random_state,
    clip_to_bounds,
    scale_to_bounds,
)

__all__ = [
    "BUDGET_PARAMETER_CONSTRAINTS",
    "BudgetError",
    "DELTA_CONSTRAINT",
    "DPSGD",
    "EPSILON_CONSTRAINT",
    "EstimatorBudget",
    "LedgerDetachedError",
    "PrivacyLeakWarning",
    "PrivacyLedger",
    "PureDpEvent",
    "SpendReportMixin",
    "audit_epsilon",
    "calibrate_laplace",
    "calibrate_noise",
    "check_bounds",
    "check_random_state",
    "clip_to_bounds",
    "compute_epsilon",
    "dense_clipped_grad",
    "dense_grad_sq_norms",
    "event_from_json",
    "event_to_json",
    "exponential_mechanism",
    "gaussian_epsilon",
    "gaussian_event",
    "gaussian_mechanism",
    "is_pure",
    "laplace_epsilon",
    "laplace_event",
    "laplace_mechanism",
    "pure_event",
    "pure_to_gaussian",
    "gaussian_to_pure",
    "resolve_ledger",
    "scale_to_bounds",
]
