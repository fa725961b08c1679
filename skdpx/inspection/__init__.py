"""DP global explanations of any model, mirroring :mod:`sklearn.inspection`.

:func:`partial_dependence` releases a black box's partial dependence over
private rows with the Gaussian mechanism (the grid from public bounds and
levels, the average over a DP count, the noise's standard deviation);
:class:`PartialDependenceDisplay` draws it with the noise's error bands.
"""

from ._partial_dependence import partial_dependence
from ._plot import PartialDependenceDisplay

__all__ = ["PartialDependenceDisplay", "partial_dependence"]
