"""Model selection over skdpx estimators.

* :class:`DPRandomSearchCV`, :class:`DPGridSearchCV`: searches that are
  themselves differentially private (DP fits, DP scores, private selection
  by random stopping, refit), priced before they start and recorded as one
  event;
* the DP scorers they select on (:func:`get_dp_scorer`);
* :func:`price_search`: the planned spend of a scikit-learn ``GridSearchCV``
  or ``RandomizedSearchCV`` (every fold's fit and the refit) before it runs.
  scikit-learn's searches release their validation scores and their choice
  exactly: those are not in its price.
"""

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
    "FitPrice",
    "SearchPlan",
    "SearchPrice",
    "get_dp_scorer",
    "price_search",
]
