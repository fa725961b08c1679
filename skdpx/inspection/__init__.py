"""DP global explanations of any model, mirroring :mod:`sklearn.inspection`.

:func:`partial_dependence` releases a black box's partial dependence over
private rows with the Gaussian mechanism (the grid from public bounds and
levels, the average over a DP count, the noise's standard deviation);
:class:`PartialDependenceDisplay` draws it with the noise's error bands;
:func:`permutation_importance` releases the drop of a bounded per-row score
when each feature is replaced by draws from a DP marginal (or its public
domain), with the noise's standard deviation.
"""

from ._partial_dependence import partial_dependence
from ._permutation_importance import permutation_importance
from ._plot import PartialDependenceDisplay

__all__ = ["PartialDependenceDisplay", "partial_dependence", "permutation_importance"]
