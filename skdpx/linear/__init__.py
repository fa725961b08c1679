"""Deprecated: the old name of :mod:`skdpx.locally_linear` (kept for one release).

Importing it warns once (``FutureWarning``) and re-exports
:class:`~skdpx.locally_linear.DPLocallyLinearClassifier`;
``skdpx.linear._locally_linear`` stays so that the pickles of classifiers
fitted before the rename still load.
"""

import warnings

from ..locally_linear import DPLocallyLinearClassifier

warnings.warn(
    "skdpx.linear was renamed skdpx.locally_linear; the old name will be removed in the "
    "next release: import DPLocallyLinearClassifier from skdpx or skdpx.locally_linear.",
    FutureWarning, stacklevel=2,
)

__all__ = ["DPLocallyLinearClassifier"]
