"""Attacks that measure what skdpx's releases leak (evaluation only).

No estimator depends on this module: it plays the adversary against a fitted
target to show, with numbers, how much its releases tell about the people in
its private data (:func:`membership_inference`), and gives an empirical
lower bound on the epsilon the target can satisfy
(:meth:`AttackResult.epsilon_lower_bound`). The randomness here (halvings,
shadow models) is the evaluation's own, never privacy noise.
"""

from ._attribute import AttributeInferenceResult, attribute_inference
from ._extraction import ExtractionResult, model_extraction
from ._membership import membership_inference
from ._result import AttackResult
from ._signals import SIGNALS, background_probe, explanation_probe

__all__ = [
    "SIGNALS",
    "AttackResult",
    "AttributeInferenceResult",
    "ExtractionResult",
    "attribute_inference",
    "background_probe",
    "explanation_probe",
    "membership_inference",
    "model_extraction",
]
