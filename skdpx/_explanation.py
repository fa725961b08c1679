"""Moved to :mod:`skdpx.results` (issue 37); kept for one release so that
results pickled before the move still load. Nothing in skdpx imports it;
import the classes from :mod:`skdpx` or :mod:`skdpx.results`."""

from .results import CounterfactualSet, FeatureAttribution, LocallyLinearMaps, RecoursePaths
from .results._base import ResultIndexError

__all__ = ["CounterfactualSet", "FeatureAttribution", "LocallyLinearMaps", "RecoursePaths",
           "ResultIndexError"]
