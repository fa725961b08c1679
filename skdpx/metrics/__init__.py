"""Evaluation metrics for explanations (they read data without privacy)."""

from ._counterfactual import average_distance, flip_ratio
from ._explanation_loss import explanation_loss, local_loss_terms, optimal_explanation

__all__ = [
    "average_distance",
    "explanation_loss",
    "flip_ratio",
    "local_loss_terms",
    "optimal_explanation",
]
