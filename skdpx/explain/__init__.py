"""DP local explanations of black-box models."""

from ._dplime import DPLimeExplainer
from ._weights import flat_radius, gradient_sensitivity, kernel_weight, stable_weight, weight_cap

__all__ = ["DPLimeExplainer", "flat_radius", "gradient_sensitivity", "kernel_weight", "stable_weight", "weight_cap"]
