"""Deprecated: where pickles made before the rename find the classifier's class.

A classifier pickled when the class lived here names
``skdpx.linear._locally_linear.DPLocallyLinearClassifier``; it unpickles as
:class:`skdpx.locally_linear.DPLocallyLinearClassifier` (importing this module
runs ``skdpx/linear/__init__.py``, which warns).
"""

from ..locally_linear import DPLocallyLinearClassifier

__all__ = ["DPLocallyLinearClassifier"]
