"""skdpx: differentially private model explanations for scikit-learn.

The privacy core is :mod:`skdpx.privacy`; the bundled data are in
:mod:`skdpx.datasets`. Explanations come back as :class:`FeatureAttribution`,
:class:`CounterfactualSet`, :class:`RecoursePaths` and (the global
explanation of a locally linear model) :class:`LocallyLinearMaps`; many
attributions summarise into a :class:`GlobalImportance`; a table's
public bounds and levels are a :class:`PublicSchema`.
"""

from .results import (CounterfactualSet, FeatureAttribution, GlobalImportance, LocallyLinearMaps,
                      RecoursePaths)
from .counterfactual import DPCounterfactualGenerator
from .explain import DPLimeExplainer, DPShapExplainer
from .locally_linear import DPLocallyLinearClassifier
from .preprocessing import PublicSchema
from .recourse import PrivRecourse

# registers the checks of an outer scikit-learn search that the estimator base
# calls (skdpx.utils._outer_search): the searches are a layer above the estimators
from . import model_selection  # noqa: F401

__version__ = "0.1.0.dev0"

__all__ = [
    "CounterfactualSet",
    "DPCounterfactualGenerator",
    "DPLimeExplainer",
    "DPLocallyLinearClassifier",
    "DPShapExplainer",
    "FeatureAttribution",
    "GlobalImportance",
    "LocallyLinearMaps",
    "PrivRecourse",
    "PublicSchema",
    "RecoursePaths",
    "__version__",
]
