"""lime's LimeTabularExplainer as the non-private reference of DPLimeExplainer.

Not part of skdpx: needs the ``bench`` extra (lime). The explainer's
``training_data`` are the private rows (what DPLimeExplainer's explanation
dataset is): lime samples its perturbations from their statistics (the
quartile bins of the numeric columns with each bin's mean, standard
deviation, minimum and maximum; the frequencies of the levels of the one-hot
columns, given as categorical features), so an explanation depends on them.
:meth:`LimeReference.explain` returns a :class:`skdpx.FeatureAttribution`
(``values``: lime's weight of every feature for the explained class), so
skdpx's explanation signals apply to it.

lime answers one query at a time (``explain_instance``); the loop over the
queries is lime's, keep the query count small.
"""

import numpy as np
from sklearn.base import BaseEstimator

from skdpx import FeatureAttribution

__all__ = ["LimeReference"]


class LimeReference(BaseEstimator):
    """LimeTabularExplainer over the private rows, with a FeatureAttribution out.

    Parameters
    ----------
    estimator : fitted classifier with predict_proba and classes_
        The black box.
    categorical_features : list of int, default=()
        Columns lime treats as categorical (here: the one-hot columns).
    target_class : label, default=None
        The class explained (None: ``classes_[1]``, as DPLimeExplainer).
    num_samples : int, default=1000
        lime's perturbations per query.
    random_state : int, default=0
        lime's sampling seed.
    """

    def __init__(self, estimator, *, categorical_features=(), target_class=None,
                 num_samples=1000, random_state=0):
        self.estimator = estimator
        self.categorical_features = categorical_features
        self.target_class = target_class
        self.num_samples = num_samples
        self.random_state = random_state

    def fit(self, X, y=None):
        from lime.lime_tabular import LimeTabularExplainer

        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[0] < 2 or not np.all(np.isfinite(X)):
            raise ValueError("X must be a finite 2-D array of at least 2 rows.")
        classes = np.asarray(self.estimator.classes_)
        target = classes[1] if self.target_class is None else self.target_class
        hits = np.flatnonzero(classes == target)
        if hits.size != 1:
            raise ValueError(f"target_class {target!r} is not a class of the black box.")
        self.label_ = int(hits[0])
        self.n_features_in_ = X.shape[1]
        self.explainer_ = LimeTabularExplainer(
            X, mode="classification", categorical_features=list(self.categorical_features),
            discretize_continuous=True, feature_selection="none",
            random_state=self.random_state)
        return self

    def explain(self, X):
        """lime's weights of all features for each query: FeatureAttribution (q, d)."""
        Q = np.atleast_2d(np.asarray(X, dtype=float))
        if Q.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {Q.shape[1]} features; expected {self.n_features_in_}.")
        values = np.zeros(Q.shape)
        for i, q in enumerate(Q):  # lime explains one query per call
            exp = self.explainer_.explain_instance(
                q, self.estimator.predict_proba, labels=(self.label_,),
                num_features=self.n_features_in_, num_samples=self.num_samples)
            idx, w = zip(*exp.as_map()[self.label_])
            values[i, list(idx)] = w
        return FeatureAttribution(values, epsilon=np.full(len(Q), np.inf), epsilon_spent=np.inf,
                                  delta_spent=0.0, meta={"method": "lime LimeTabularExplainer"})
