"""skdpx: differentially private model explanations for scikit-learn.

The privacy core is :mod:`skdpx.privacy`; the bundled data are in
:mod:`skdpx.datasets`. Explanations come back as :class:`FeatureAttribution`,
:class:`CounterfactualSet` and :class:`RecoursePaths`.
"""

from ._explanation import CounterfactualSet, FeatureAttribution, RecoursePaths
from .counterfactual import DPCounterfactualGenerator
from .explain import DPLimeExplainer
from .linear import DPLocallyLinearClassifier
from .recourse import PrivRecourse

__version__ = "0.1.0.dev0"

__all__ = [
    "CounterfactualSet",
    "DPCounterfactualGenerator",
    "DPLimeExplainer",
    "DPLocallyLinearClassifier",
    "FeatureAttribution",
    "PrivRecourse",
    "RecoursePaths",
    "__version__",
]
