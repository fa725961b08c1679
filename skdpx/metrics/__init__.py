"""Evaluation metrics for explanations (they read data without privacy)."""

from ._counterfactual import average_distance, flip_ratio
from ._explanation_loss import explanation_loss, local_loss_terms, optimal_explanation
from ._recourse import path_density, path_distance, path_manifold_distance, redundancy, ynn

__all__ = [
    "average_distance",
    "explanation_loss",
    "flip_ratio",
    "local_loss_terms",
    "optimal_explanation",
    "path_density",
    "path_distance",
    "path_manifold_distance",
    "redundancy",
    "ynn",
]
