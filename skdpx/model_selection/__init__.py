"""Model selection over skdpx estimators.

Today: :func:`price_search`, the planned spend of a scikit-learn
``GridSearchCV`` or ``RandomizedSearchCV`` (every fold's fit and the
refit) before it runs, with :meth:`SearchPrice.check` against a ledger.
scikit-learn's searches release their validation scores and their choice
exactly; ``DPGridSearchCV`` and ``DPRandomSearchCV``, private selection
that accounts for both, are to come here.
"""

from ._price import FitPrice, SearchPrice, price_search
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
    "DPLimeFidelity",
    "DPLogLoss",
    "DPRecourseScore",
    "DPScorer",
    "FitPrice",
    "SearchPrice",
    "get_dp_scorer",
    "price_search",
]
