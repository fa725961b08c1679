"""Model selection over skdpx estimators.

* :class:`DPRandomSearchCV`, :class:`DPGridSearchCV`: searches that are
  themselves differentially private (DP fits, DP scores, private selection
  by random stopping, refit), priced before they start and recorded as one
  event;
* the DP scorers they select on (:func:`get_dp_scorer`);
* :func:`privacy_utility_curve`: one estimator fitted at several epsilons,
  every fit (and DP score) priced before the sweep and recorded;
* :func:`price_search`: the planned spend of a scikit-learn ``GridSearchCV``
  or ``RandomizedSearchCV`` (every fold's fit and the refit) before it runs.
  scikit-learn's searches release their validation scores and their choice
  exactly: those are not in its price.
"""

# registers the checks of a scikit-learn search on a capped ledger, which the
# estimator base (a layer below) calls through skdpx.utils._outer_search
from . import _outer  # noqa: F401
from ._curve import PrivacyUtilityCurve, privacy_utility_curve
from ._price import FitPrice, SearchPrice, price_search
from ._search import DPGridSearchCV, DPRandomSearchCV, SearchPlan
from ._scorers import (
    DPAccuracy,
    DPBalancedAccuracy,
    DPCounterfactualScore,
    DPLimeFidelity,
    DPLogLoss,
    DPRecourseScore,
    DPScorer,
    DPShapFidelity,
    get_dp_scorer,
)

__all__ = [
    "DPAccuracy",
    "DPBalancedAccuracy",
    "DPCounterfactualScore",
    "DPGridSearchCV",
    "DPLimeFidelity",
    "DPRandomSearchCV",
    "DPLogLoss",
    "DPRecourseScore",
    "DPScorer",
    "DPShapFidelity",
    "FitPrice",
    "PrivacyUtilityCurve",
    "SearchPlan",
    "SearchPrice",
    "get_dp_scorer",
    "price_search",
    "privacy_utility_curve",
]
