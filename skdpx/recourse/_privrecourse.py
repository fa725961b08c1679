"""PrivRecourse: DP multi-step recourse over a graph of DP cluster centres (Pentyala et al. 2023)."""

from numbers import Integral, Real

from dp_accounting import ComposedDpEvent, NonPrivateDpEvent
import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin, _fit_context
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.utils._param_validation import HasMethods, Interval
from sklearn.utils.validation import check_is_fitted, validate_data

from .._explanation import RecoursePaths
from ..privacy._validation import check_random_state  # TODO(port): remove
from ..privacy import (
    BUDGET_PARAMETER_CONSTRAINTS,
    EstimatorLedger,
    SpendReportMixin,
    calibrate_noise,
    check_bounds,
    gaussian_event,
    pure_event,
    scale_to_bounds,
)
from ..privacy._models import dp_logistic_regression
from ..utils._targets import validate_classes
from ._clustering import dp_lloyd, table_sensitivity
from ._graph import RecourseGraph, recourse_graph

__all__ = ["PrivRecourse"]

def _scale(X, lower, upper):
    return scale_to_bounds(X, lower, upper)


class PrivRecourse(SpendReportMixin, TransformerMixin, BaseEstimator):
    """DP multi-step recourse paths over a graph of DP cluster centres.

    The method of Pentyala et al., "Privacy-Preserving Algorithmic Recourse"
    (ICAIF 2023 workshop), made sound and fast:

    1. the black box: ``estimator`` if given (its own privacy is then the
       user's to guarantee), else diffprivlib's DP ``LogisticRegression``
       trained on (X, y) with ``model_share`` of ``epsilon`` (pure DP);
    2. DP clustering by Lloyd's algorithm with noisy sums and noisy counts
       (:mod:`skdpx.recourse._clustering`), calibrated so that the model and
       all the clustering's releases compose to exactly (``epsilon``,
       ``delta``). The paper's convergent clustering publishes sampled data
       rows as centres (an exponential mechanism picks *which* row, but the
       row itself is released exactly) and takes the final means with noisy
       counts but exact sums: neither is DP, so it is not used;
    3. the graph on the centres whose noisy count is at least
       ``count_threshold`` standard deviations of its noise (the others are
       mostly noise): an edge i -> j
       when ``||C_i - C_j|| < distance_threshold`` in the unit cube of the
       public bounds and the step respects the actionability constraints,
       weighted by ``||C_i - C_j|| / rho((C_i + C_j) / 2)`` with ``rho`` the
       Gaussian density of the centres weighted by their noisy counts;
    4. the candidates: the centres the black box gives ``favorable_class``;
    5. once, at fit, each node's shortest path to its nearest candidate (one
       multi-source Dijkstra on the reversed graph), so a query costs a
       nearest-node lookup and a table row, not a Dijkstra per query.

    Steps 3-5 and every query are post-processing of the DP model and
    centres: they cost no budget. Privacy unit: one training row
    (replace-one).

    Parameters
    ----------
    estimator : fitted classifier with predict and classes_, or None
        The black box. None: a DP logistic regression is trained in fit.
    n_clusters : int, default=100
        Clusters of the DP k-means (graph nodes before the count filter).
    epsilon : float, default=1.0
        Total budget: the model (when trained here) and the clustering.
    delta : float, default=1e-5
        For the clustering's Gaussian releases (the model is pure DP).
    distance_threshold : float or None, default=None
        Longest edge, as an L2 distance in the unit cube of the public bounds
        (None: a fully connected graph, as in the paper's Table 2).
    immutable_features, increasing_features, decreasing_features : list of int or str, optional
        Features a step may not change (within ``tolerance``), may only
        raise, may only lower. Names need X to be a DataFrame.
    favorable_class : label, optional
        The outcome recourse leads to; the last of ``classes_`` by default.
    tolerance : float, default=0.05
        How far, as a fraction of its public range, an immutable feature may
        move along a step and between a query and its start node (DP centres
        are averages: their immutable values are never exactly a query's).
    model_share : float in (0, 1), default=0.5
        Share of ``epsilon`` for the DP model when ``estimator`` is None.
    model_C : float > 0, default=1.0
        Inverse regularisation of the DP logistic regression (diffprivlib's
        ``C``). Tuning it on the private data would itself leak: choose it on
        public or similar data (on Adult's five features, 10 does better
        than 1 at epsilon 1, see the benchmark).
    bounds : tuple (lower, upper) or None
        Public bounds of the features; None reads them from the data and
        raises a PrivacyLeakWarning.
    max_iter : int, default=2
        Lloyd iterations (each one a noisy release; the noisy-marginal
        initialisation is one more).
    count_threshold : float >= 0, default=5.0
        A centre becomes a graph node when its noisy count is at least this
        many standard deviations of the count's noise (and at least 1): its
        coordinates' noise is then at most ``1 / count_threshold`` of each
        feature's range (in standard deviations). Higher keeps fewer, more
        precise centres; it is post-processing, so it costs nothing.
    accountant : PrivacyLedger, diffprivlib BudgetAccountant or None
    random_state : None, int or RandomState

    Attributes
    ----------
    estimator_ : classifier
        The black box (a pipeline that scales by the bounds, then the DP
        logistic regression, when trained here).
    cluster_centers_ : ndarray of shape (n_nodes, n_features)
        The graph's nodes: DP centres in input units (n_nodes <= n_clusters).
    cluster_counts_ : ndarray of shape (n_nodes,)
        Their noisy counts.
    node_class_ : ndarray of shape (n_nodes,)
        The black box's class of each centre.
    candidates_ : ndarray of int
        Indices of the centres in ``favorable_class``.
    graph_ : scipy.sparse.csr_matrix of shape (n_nodes, n_nodes)
        Edge weights.
    path_cost_ : ndarray of shape (n_nodes,)
        Each node's shortest path cost to a candidate (inf: none reachable).
    noise_multiplier_ : float
        Of each of the ``max_iter + 1`` Gaussian releases of the clustering.
    model_epsilon_ : float
        The DP model's pure epsilon (0 when ``estimator`` is given).
    n_iter_ : int
        Lloyd iterations run (``max_iter``: stopping early on convergence
        would read the data without noise).
    classes_ : ndarray
    favorable_class_ : label
    epsilon_spent_, delta_spent_ : float
    n_features_in_ : int
    bounds_ : tuple of ndarray

    Examples
    --------
    >>> import numpy as np
    >>> from skdpx.recourse import PrivRecourse
    >>> rng = np.random.RandomState(0)
    >>> X = rng.uniform(0, 1, size=(20000, 2))
    >>> y = (X[:, 0] + X[:, 1] > 1.2).astype(int)
    >>> rec = PrivRecourse(n_clusters=30, epsilon=2.0, bounds=(0, 1),
    ...                    increasing_features=[0], random_state=0).fit(X, y)
    >>> paths = rec.explain([[0.2, 0.3]])
    >>> bool(paths.success[0]), int(rec.estimator_.predict(paths.counterfactuals)[0])
    (True, 1)
    >>> bool(np.all(np.diff(paths.paths[0][1:, 0]) >= 0))  # feature 0 never goes down
    True
    >>> round(rec.epsilon_spent_, 3)
    2.0
    """

    _parameter_constraints = {
        **BUDGET_PARAMETER_CONSTRAINTS,
        "estimator": [HasMethods(["predict"]), None],
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "distance_threshold": [Interval(Real, 0, None, closed="neither"), None],
        "immutable_features": ["array-like", None],
        "increasing_features": ["array-like", None],
        "decreasing_features": ["array-like", None],
        "favorable_class": "no_validation",
        "tolerance": [Interval(Real, 0, None, closed="left")],
        "model_share": [Interval(Real, 0, 1, closed="neither")],
        "model_C": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "count_threshold": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(
        self,
        estimator=None,
        *,
        n_clusters=100,
        epsilon=1.0,
        delta=1e-5,
        distance_threshold=None,
        immutable_features=None,
        increasing_features=None,
        decreasing_features=None,
        favorable_class=None,
        tolerance=0.05,
        model_share=0.5,
        model_C=1.0,
        bounds=None,
        max_iter=2,
        count_threshold=5.0,
        accountant=None,
        random_state=None,
    ):
        self.estimator = estimator
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.delta = delta
        self.distance_threshold = distance_threshold
        self.immutable_features = immutable_features
        self.increasing_features = increasing_features
        self.decreasing_features = decreasing_features
        self.favorable_class = favorable_class
        self.tolerance = tolerance
        self.model_share = model_share
        self.model_C = model_C
        self.bounds = bounds
        self.max_iter = max_iter
        self.count_threshold = count_threshold
        self.accountant = accountant
        self.random_state = random_state

    # ------------------------------------------------------------ fit

    def _feature_indices(self, features, name):
        if features is None:
            return []
        features = np.atleast_1d(np.asarray(features, dtype=object))
        names = getattr(self, "feature_names_in_", None)
        out = []
        for f in features:
            if isinstance(f, str):
                if names is None or f not in list(names):
                    raise ValueError(f"{name}: unknown feature {f!r} (names need X to be a "
                                     f"DataFrame with that column).")
                out.append(int(list(names).index(f)))
            elif isinstance(f, Integral) and 0 <= f < self.n_features_in_:
                out.append(int(f))
            else:
                raise ValueError(f"{name}: {f!r} is not a feature index in "
                                 f"[0, {self.n_features_in_}) or a feature name.")
        return sorted(set(out))

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Train (or take) the black box, release the DP centres, build the graph.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The private training rows.
        y : array-like of shape (n_samples,), optional
            Needed when ``estimator`` is None (the DP model's labels);
            ignored otherwise. The set of class labels is then read from
            ``y``, as scikit-learn and diffprivlib classifiers do; it is not
            noised (with a black box, its public ``classes_`` are used).

        Returns
        -------
        self
        """
        # everything is checked before the first spend
        X, y = validate_classes(self, X, y, "recourse needs")
        favorable = self.classes_[-1] if self.favorable_class is None else self.favorable_class
        if favorable not in self.classes_.tolist():
            raise ValueError(f"favorable_class {favorable!r} is not one of the classes "
                             f"{self.classes_.tolist()}.")
        self.favorable_class_ = favorable.item() if isinstance(favorable, np.generic) else favorable
        sets = {name: self._feature_indices(getattr(self, name), name)
                for name in ("immutable_features", "increasing_features", "decreasing_features")}
        seen = {}
        for name, idx in sets.items():
            for f in idx:
                if f in seen:
                    raise ValueError(f"feature {f} is in both {seen[f]} and {name}.")
                seen[f] = name
        self._immutable, self._increasing, self._decreasing = sets.values()
        if not np.isinf(self.epsilon) and self.delta == 0:
            raise ValueError("the clustering's Gaussian releases need delta > 0.")
        lower, upper = check_bounds(self.bounds, X.shape[1], X=X)
        self.bounds_ = (lower, upper)
        X01 = scale_to_bounds(X, lower, upper)
        rng = check_random_state(self.random_state)

        self.budget_ = EstimatorLedger(self.epsilon, self.delta, self.accountant,
                                       prefix=f"{type(self).__name__}: ")
        self.model_epsilon_ = (float(self.epsilon * self.model_share)
                               if self.estimator is None and not np.isinf(self.epsilon) else 0.0)
        if np.isinf(self.epsilon):  # the non-private baseline: say so in the ledger
            self.noise_multiplier_ = 0.0
            with self.budget_.reserve(NonPrivateDpEvent(), "non-private fit (epsilon=inf)"):
                pass
        else:
            # the whole fit's spend is planned, and checked against both caps, before
            # the first release: a shared ledger with too little left refuses it all
            model = [pure_event(self.model_epsilon_)] if self.model_epsilon_ > 0 else []
            self.noise_multiplier_ = calibrate_noise(
                self.epsilon, self.delta, steps=self.max_iter + 1,
                prior=ComposedDpEvent(model) if model else None)
            self.budget_.check(ComposedDpEvent(
                model + [gaussian_event(self.noise_multiplier_, steps=self.max_iter + 1)]))
        self.estimator_ = self.estimator if self.estimator is not None else self._fit_model(
            X01, y, rng)
        self.n_iter_ = self.max_iter  # Lloyd iterations run (all of them: no early stop)
        centers, counts = dp_lloyd(X01, self.n_clusters, self.max_iter, self.noise_multiplier_,
                                   rng, self.budget_)
        keep = counts >= max(1.0, self.count_threshold * self.noise_multiplier_
                             * table_sensitivity(X.shape[1]))
        nodes = centers[keep]
        self.cluster_centers_ = self._to_input(nodes)
        self.cluster_counts_ = counts[keep]
        self.node_class_ = (np.asarray(self.estimator_.predict(self.cluster_centers_))
                            if len(nodes) else np.empty(0, dtype=self.classes_.dtype))
        self.candidates_ = np.flatnonzero(self.node_class_ == favorable)
        self.graph_ = recourse_graph(
            nodes, distance_threshold=(np.inf if self.distance_threshold is None
                                       else self.distance_threshold), immutable=self._immutable,
            increasing=self._increasing, decreasing=self._decreasing,
            tolerance=self.tolerance, weights=self.cluster_counts_)
        self._routes = RecourseGraph(nodes, self.graph_, self.candidates_,
                                     immutable=self._immutable, tolerance=self.tolerance)
        self.path_cost_ = self._routes.cost
        return self

    def _fit_model(self, X01, y, rng):
        """The DP logistic regression on the scaled rows, behind a public scaler."""
        lower, upper = self.bounds_
        scaler = FunctionTransformer(_scale, kw_args={"lower": lower, "upper": upper})
        if np.isinf(self.epsilon):
            model = LogisticRegression(C=self.model_C).fit(X01, y)
        else:
            model = dp_logistic_regression(
                X01, y, epsilon=self.epsilon * self.model_share,
                data_norm=float(np.sqrt(X01.shape[1])), C=self.model_C, random_state=rng,
                budget=self.budget_,
                label="black box: DP logistic regression (diffprivlib)")
        return make_pipeline(scaler.fit(X01[:0]), model)

    def _to_input(self, X01):
        lower, upper = self.bounds_
        return lower + X01 * (upper - lower)

    # ------------------------------------------------------------ queries

    def _route(self, X):
        """Validated queries, whether each is already favourable, and their routes."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        lower, upper = self.bounds_
        Xc = np.clip(X, lower, upper)
        already = np.asarray(self.estimator_.predict(Xc)) == self.favorable_class_
        return (X, already,
                *self._routes.route(scale_to_bounds(Xc, lower, upper), skip=already))

    def _points(self, queries, node_lists):
        """Paths as arrays in input units: each query, then its nodes (one split)."""
        counts = np.array([len(nodes) for nodes in node_lists], dtype=int)
        flat = (np.concatenate(node_lists).astype(int) if counts.sum()
                else np.empty(0, dtype=int))
        n = len(queries)
        rows = np.empty((n + counts.sum(), queries.shape[1]))
        first = np.concatenate([[0], np.cumsum(counts + 1)[:-1]])
        is_query = np.zeros(len(rows), dtype=bool)
        is_query[first] = True
        rows[is_query] = queries
        rows[~is_query] = self.cluster_centers_[flat]
        return np.split(rows, first[1:])

    def _result(self, X, paths, cost, success, meta):
        names = list(self.feature_names_in_) if hasattr(self, "feature_names_in_") else None
        return RecoursePaths(X, paths, cost=cost, success=success, feature_names=names,
                             epsilon_spent=self.epsilon_spent_, delta_spent=self.delta_spent_,
                             meta={"estimator": type(self).__name__, **meta})

    def explain(self, X):
        """One recourse path per query.

        A query goes to its nearest non-favourable centre that respects its
        immutable features (the paper's Algorithm 2), then along that node's
        precomputed shortest path to the nearest favourable centre.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)

        Returns
        -------
        RecoursePaths
            ``paths[i]``: the query, then the centres of its path in input
            units (the last one is the counterfactual). A query the black
            box already gives the favourable class has the path ``[query]``,
            cost 0 and success True; one with no reachable candidate has the
            path ``[query]``, cost inf and success False (a NaN
            counterfactual).
        """
        X, already, starts, reach, lengths, flat = self._route(X)
        node_lists = np.split(flat, np.cumsum(lengths)[:-1])
        cost = np.where(already, 0.0, np.where(reach, self.path_cost_[np.maximum(starts, 0)],
                                               np.inf))
        return self._result(X, self._points(X, node_lists), cost, already | reach,
                            {"favorable_class": self.favorable_class_})

    def transform(self, X):
        """The counterfactual end points (the query itself if already favourable; NaN if none)."""
        X, already, _, reach, lengths, flat = self._route(X)
        out = np.full(X.shape, np.nan)
        out[already] = X[already]
        out[reach] = self.cluster_centers_[flat[np.cumsum(lengths)[reach] - 1]]
        return out

    def alternatives(self, X, n_paths=3):
        """Up to ``n_paths`` recourse paths per query, to distinct counterfactuals.

        The paper's diverse recourse: the r-th result holds each query's
        r-th shortest path to a favourable centre (a path ends at the first
        favourable centre it reaches). Costs a Dijkstra per distinct start
        node, so it is slower than :meth:`explain`, whose paths are the
        first result's.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
        n_paths : int >= 1, default=3

        Returns
        -------
        list of n_paths RecoursePaths
            A query with fewer than r paths fails in the r-th (path
            ``[query]``, cost inf); an already favourable query succeeds in
            the first only.
        """
        if not isinstance(n_paths, Integral) or n_paths < 1:
            raise ValueError(f"n_paths must be an integer >= 1, got {n_paths!r}.")
        X, already, starts, _, _, _ = self._route(X)
        found = self._routes.k_best(starts, n_paths)
        out = []
        for r in range(n_paths):
            got = np.array([len(f) > r for f in found], dtype=bool)
            node_lists = [f[r][1] if len(f) > r else np.empty(0, int) for f in found]
            cost = np.array([f[r][0] if len(f) > r else np.inf for f in found])
            if r == 0:
                cost[already] = 0.0
            success = got | (already if r == 0 else False)
            out.append(self._result(X, self._points(X, node_lists), cost, success,
                                    {"favorable_class": self.favorable_class_, "rank": r + 1}))
        return out

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = self.estimator is None
        tags.transformer_tags.preserves_dtype = ["float64"]
        return tags
