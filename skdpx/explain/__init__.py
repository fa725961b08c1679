"""DP local explanations of black-box models."""

from ._dplime import DPLimeExplainer, default_n_iter
from ._dpshap import DPBackground, DPShapExplainer, dp_background
from ._weights import flat_radius, gradient_sensitivity, kernel_weight, stable_weight, weight_cap

__all__ = ["DPBackground", "DPLimeExplainer", "DPShapExplainer", "default_n_iter",
           "dp_background", "flat_radius", "gradient_sensitivity", "kernel_weight",
           "stable_weight", "weight_cap"]
