"""Utilities: estimator discovery and re-exported validation helpers."""

from ._validation import check_bounds, clip_to_bounds, scale_to_bounds
from .discovery import all_estimators

__all__ = ["all_estimators", "check_bounds", "clip_to_bounds", "scale_to_bounds"]
