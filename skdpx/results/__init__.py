"""Result objects returned by the skdpx explainers.

Five classes hold what an explainer releases:

- :class:`FeatureAttribution`: one attribution vector per explained sample;
- :class:`CounterfactualSet`: one counterfactual per query;
- :class:`RecoursePaths`: one path of points per query, from the query to
  its counterfactual;
- :class:`LocallyLinearMaps`: the global explanation of a
  :class:`~skdpx.locally_linear.DPLocallyLinearClassifier`, every class's linear
  maps with their weights (one row per class);
- :class:`GlobalImportance`: the mean absolute attribution of many explained
  samples per feature or column, with its noise and sampling uncertainty
  (:meth:`FeatureAttribution.global_importance`).

They share one private base, :class:`~skdpx.results._base._Result`, which does what is common:
the ``meta`` dictionary (always holding the estimator's ``epsilon_spent`` and
``delta_spent``), ``len()``, row selection with ``obj[key]``, equality,
``repr``, ``_repr_html_`` (a compact table for notebooks),
``to_json()``/``from_json()`` and the lazy imports of the optional pandas
(``to_frame()``) and matplotlib (``plot()``).

Units. Attributions and maps are per unit of each (encoded) feature. Given
each feature's public range (``feature_range``, the declared bounds' upper -
lower), they are also reported scaled by it (``scaled_values``: the change
of the output when the feature moves across its whole public range), which is
how plots rank and draw them: a per-dollar weight of capital-gain is then
comparable with a per-year weight of age. Given the ``groups`` of a public
schema (``[(column, encoded indices), ...]``), they are also reported per
original column (:func:`_group_values`); the per-level detail stays in
``values``. Counterfactuals and recourse end points may carry the decoded
rows (``query_records``, ``counterfactual_records``: DataFrames in the
original columns, units and categories), and their change tables
(``changes()``) are then in original units.

The objects are frozen-ish: every array is a private, read-only copy (and a
DataFrame field is handed out as a copy).
"""

from ._attributions import FeatureAttribution, LocallyLinearMaps
from ._records import CounterfactualSet, RecoursePaths
from ._summary import GlobalImportance

__all__ = ["FeatureAttribution", "CounterfactualSet", "RecoursePaths", "LocallyLinearMaps",
           "GlobalImportance"]
