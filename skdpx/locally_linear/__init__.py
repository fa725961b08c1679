"""Interpretable linear-map models trained with differential privacy."""

from ._locally_linear import DPLocallyLinearClassifier

__all__ = ["DPLocallyLinearClassifier"]
