"""Attacks that measure what explanations leak (evaluation only: no estimator depends on them)."""

from ._attribute import AttributeInferenceResult, attribute_inference
from ._extraction import ExtractionResult, model_extraction

__all__ = [
    "AttributeInferenceResult",
    "ExtractionResult",
    "attribute_inference",
    "model_extraction",
]
