"""Evaluation metrics for explanations (they read data without privacy)."""

from ._explanation_loss import explanation_loss, local_loss_terms, optimal_explanation

__all__ = ["explanation_loss", "local_loss_terms", "optimal_explanation"]
