"""The privacy core of skdpx: the only door through which private values leave.

Every privacy noise draw, every sample that a guarantee depends on (Poisson
subsampling, exponential-mechanism choices) and every call into
dp_accounting lives in this package (and the one guarded import of
diffprivlib, which is not a dependency: :mod:`._exceptions`): DP events, their
composition and noise calibration (:mod:`._events` <- :mod:`._composition` <-
:mod:`._calibration`), the privacy ledger and the estimators' ledgers, the
noise sources (:mod:`._random`, secure by default), the release functions
(:mod:`._mechanisms`, floating-point-safe sampling in :mod:`._sampling`), the
DP-SGD engine, validation helpers and the empirical privacy auditor used by
the tests. ``tests/test_privacy_core.py`` checks that no other module of
skdpx draws noise or imports diffprivlib or dp_accounting.
"""

# the event vocabulary estimators plan their spends with (they never import
# dp_accounting themselves)
from dp_accounting import ComposedDpEvent, NonPrivateDpEvent, NoOpDpEvent

from ._events import (
    ApproxDpEvent,
    FixedLossDpEvent,
    MixtureDpEvent,
    PureDpEvent,
    WorstOfDpEvent,
    approx_event,
    compose_events,
    event_from_json,
    event_to_json,
    fixed_loss_event,
    gaussian_event,
    laplace_event,
    pure_event,
)
from ._composition import (
    compute_epsilon,
    gaussian_epsilon,
    is_pure,
    laplace_epsilon,
    rdp_curve,
)
from ._calibration import (
    calibrate_laplace,
    calibrate_noise,
    gaussian_to_pure,
    pure_to_gaussian,
)
from ._audit import GDPAudit, GDPAuditWarning, audit_epsilon, audit_gdp
from ._exceptions import BudgetError, LedgerIntegrityError, PrivacyLeakWarning, UtilityWarning
from ._bounds import BOUNDS_SHARE, FitBounds, bounds_bins, histogram_bounds
from ._budget import (
    BUDGET_PARAMETER_CONSTRAINTS,
    Commitment,
    EstimatorLedger,
    SpendReportMixin,
    UncappedBudgetWarning,
    resolve_ledger,
)
from ._count import COUNT_SHARE, FitCount
from ._dpsgd import (DPSGD, DenseGradients, clipped_gradient_sum, dense_clipped_grad,
                     dense_grad_sq_norms)
from ._estimator import SpendPlan, given_row_count
from ._ledger import RELATIONS, LedgerDetachedError, PrivacyLedger, check_relation
from ._mechanisms import (
    count_release,
    exponential_mechanism,
    exponential_release,
    gaussian_mechanism,
    gaussian_release,
    laplace_mechanism,
    laplace_release,
    noisy_gradient,
    poisson_sample,
)
from ._random import NoiseSource, noise_source
from ._scores import warn_exact_scores
from ._validation import (
    DELTA_CONSTRAINT,
    EPSILON_CONSTRAINT,
    BoundsScaler,
    check_bounds,
    check_classes,
    clip_to_bounds,
    fill_nonfinite,
    label_codes,
    scale_to_bounds,
)

__all__ = [
    "ApproxDpEvent",
    "COUNT_SHARE",
    "FitCount",
    "FixedLossDpEvent",
    "count_release",
    "fixed_loss_event",
    "given_row_count",
    "BUDGET_PARAMETER_CONSTRAINTS",
    "BoundsScaler",
    "BudgetError",
    "ComposedDpEvent",
    "Commitment",
    "DELTA_CONSTRAINT",
    "BOUNDS_SHARE",
    "DPSGD",
    "DenseGradients",
    "EPSILON_CONSTRAINT",
    "EstimatorLedger",
    "FitBounds",
    "GDPAudit",
    "GDPAuditWarning",
    "LedgerDetachedError",
    "LedgerIntegrityError",
    "MixtureDpEvent",
    "NoOpDpEvent",
    "NoiseSource",
    "NonPrivateDpEvent",
    "PrivacyLeakWarning",
    "PrivacyLedger",
    "PureDpEvent",
    "RELATIONS",
    "SpendPlan",
    "SpendReportMixin",
    "UncappedBudgetWarning",
    "UtilityWarning",
    "WorstOfDpEvent",
    "approx_event",
    "audit_epsilon",
    "audit_gdp",
    "bounds_bins",
    "calibrate_laplace",
    "calibrate_noise",
    "check_bounds",
    "check_classes",
    "check_relation",
    "clip_to_bounds",
    "clipped_gradient_sum",
    "compose_events",
    "compute_epsilon",
    "dense_clipped_grad",
    "dense_grad_sq_norms",
    "event_from_json",
    "event_to_json",
    "exponential_mechanism",
    "exponential_release",
    "gaussian_epsilon",
    "gaussian_event",
    "gaussian_mechanism",
    "gaussian_release",
    "is_pure",
    "laplace_epsilon",
    "laplace_event",
    "laplace_mechanism",
    "laplace_release",
    "noise_source",
    "noisy_gradient",
    "poisson_sample",
    "rdp_curve",
    "pure_event",
    "pure_to_gaussian",
    "histogram_bounds",
    "gaussian_to_pure",
    "resolve_ledger",
    "scale_to_bounds",
    "warn_exact_scores",
]
