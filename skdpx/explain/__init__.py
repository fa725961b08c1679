"""DP local explanations of black-box models."""

from ._dplime import DPLimeExplainer, default_n_iter
from ._weights import flat_radius, gradient_sensitivity, kernel_weight, stable_weight, weight_cap

__all__ = ["DPLimeExplainer", "default_n_iter", "flat_radius", "gradient_sensitivity", "kernel_weight", "stable_weight", "weight_cap"]
