"""DP local explanations of black-box models."""

from ._dplime import DPLimeExplainer
from ._weights import gradient_sensitivity, kernel_weight, stable_weight, weight_cap

__all__ = ["DPLimeExplainer", "gradient_sensitivity", "kernel_weight", "stable_weight", "weight_cap"]
