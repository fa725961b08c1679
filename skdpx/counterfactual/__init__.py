"""DP counterfactual explanations (Yang et al. 2022)."""

from ._dpc import DPCounterfactualGenerator

__all__ = ["DPCounterfactualGenerator"]
