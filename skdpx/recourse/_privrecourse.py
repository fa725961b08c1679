"""PrivRecourse: DP multi-step recourse over a graph of DP cluster centres (Pentyala et al. 2023)."""

import math
import warnings
from numbers import Integral, Real
from types import SimpleNamespace

import numpy as np
from sklearn.base import TransformerMixin
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.utils.validation import check_is_fitted

from .._sklearn_compat import HasMethods, Interval, StrOptions
from .._rules import RULE_PARAMETER_CONSTRAINTS
from ..base import ActionabilityMixin, BlackBoxMixin, DPCapabilities, DPEstimator, FitData
from ..results import RecoursePaths
from ..privacy import (
    BUDGET_PARAMETER_CONSTRAINTS,
    UtilityWarning,
    DPSGD,
    BoundsScaler,
    ComposedDpEvent,
    NonPrivateDpEvent,
    SpendPlan,
    calibrate_noise,
    fill_nonfinite,
    gaussian_event,
)
from ..utils._validation import UnitCubeRows
from ..utils._engine import is_distributed, refuse_distributed_queries
from ..utils._tables import validate_table
from ..privacy._kmeans import dp_lloyd, table_sensitivity
from ..privacy._targets import validate_classes
from . import _model
from ._graph import RecourseGraph, recourse_graph

__all__ = ["PrivRecourse"]

#: n_clusters="auto": at most this many clusters (the former fixed default)
AUTO_MAX_CLUSTERS = 100

#: queries: the black box checks at most this many (query, centre) records at once
_PAIR_CHUNK = 50_000

#: the tolerances a query's search is relaxed through (those between ``tolerance``
#: and ``max_tolerance``), before it is given up
TOLERANCE_STEPS = (0.1, 0.2, 0.3, 0.5, 0.75)

#: a DP graph with fewer nodes than this (or than ``n_clusters_``, if fewer, and never
#: under 2) is too small to give most queries a path: fit warns, and a query that
#: fails on it says so in its reason
MIN_USEFUL_NODES = 10


class _UnitCube:
    """Rows of the kind PrivRecourse was fitted on -> its encoded unit cube (public maps).

    The first step of the DP black box trained in :meth:`PrivRecourse.fit`,
    so that it takes the same rows as the data it was fitted on.
    """

    def __init__(self, schema, scaler):
        self.schema = schema
        self.scaler = scaler

    def __call__(self, X):
        Z = self.schema.encode(X)
        Z = Z.toarray() if hasattr(Z, "toarray") else Z
        return self.scaler.transform(np.asarray(Z, dtype=float))


class PrivRecourse(ActionabilityMixin, BlackBoxMixin, TransformerMixin, DPEstimator):
    """DP multi-step recourse paths over a graph of DP cluster centres.

    The method of Pentyala et al., "Privacy-Preserving Algorithmic Recourse"
    (ICAIF 2023 workshop), made sound and fast:

    1. the black box: ``estimator`` if given (its own privacy is then the
       user's to guarantee), else a logistic regression trained on (X, y)
       by DP-SGD (the privacy core's engine: Poisson batches of expected
       size ``max(256, n / 40)``, per-row clipping to norm 1, Gaussian noise;
       10 epochs) on the rows scaled into the unit cube of the public bounds,
       its noise calibrated so that the model alone is
       (``model_share * epsilon``, ``delta``)-DP;
    2. DP clustering by Lloyd's algorithm with noisy sums and noisy counts
       (:mod:`skdpx.privacy._kmeans`), calibrated so that the model and
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
    4. the candidates: the centres the black box gives ``favorable_class``
       (as valid records: a categorical column at its largest one-hot
       entry, integer columns rounded);
    5. per query (:meth:`explain`), the constraints held from the query
       itself, not only from one node to the next: the query may visit
       only the centres *admissible* for it (immutable numeric features
       within ``tolerance`` of the query's, increasing features at least,
       and decreasing ones at most, the query's, up to ``tolerance``); its
       candidates are the admissible centres whose record, set back to
       hold the query's constraints exactly (its immutables, categorical
       ones included, and its monotone features), the black box gives
       ``favorable_class``; it starts at its nearest admissible
       non-candidate centre from which such a candidate is reachable (the
       paper's Algorithm 2 takes the nearest one) and follows the shortest
       path through admissible centres. Queries sharing the same
       admissible and candidate sets share one search: one multi-source
       Dijkstra per chunk of distinct sets (disjoint copies of the graph).
       Every point of the path is returned set back to the query's
       constraints and as a valid record, its monotone columns (numeric
       or ordered levels) held from one point to the next (a running
       maximum or minimum along the path, links then set again), and the
       end point is re-checked by the black box. A query with no path is
       searched again at larger tolerances, up to ``max_tolerance``.

    The model and the clustering are planned together from public facts (the
    number of rows and features, the parameters) and committed to the
    ledger as one composed event before any row is read; nothing refunds it,
    even if the fit is interrupted. Steps 3-5 and every query are
    post-processing of the DP model and centres (and of the public schema):
    they cost no budget.

    Privacy unit: one training row, under the neighbouring relation of the
    ledger (``accountant``). L2 sensitivities, for d features:

    ===========================  =====================  ===========================
    release                      add-or-remove          replace-one
    ===========================  =====================  ===========================
    Lloyd table (sums, counts)   ``sqrt(d / 4 + 1)``    ``sqrt(max(d / 2 + 2, d))``
    initial histograms           ``sqrt(d)``            ``sqrt(2 d)``
    DP-SGD step (clipped sum)    1                      not supported
    ===========================  =====================  ===========================

    DP-SGD's Poisson subsampling is accounted for add-or-remove only: with a
    ledger kept under ``"replace_one"``, give a black box as ``estimator``
    (the clustering alone is then calibrated for replace-one), else fit
    raises a ``ValueError`` before anything is spent.

    No value of a training row is refused (a refusal would be a release
    about that row): a missing or infinite value, or a cell that is not a
    number, is the midpoint of its feature's bounds, and a row whose label
    is missing or not one of ``classes`` is dropped from the DP model's
    training (a zero gradient; it still counts in the clustering, which
    reads no label). Nothing reports which rows or how many
    (:ref:`privacy-refusals`). A given black box is checked before anything
    is spent on public probe points made from the declared bounds and
    categories (their middle and two corners); one that fails there, or
    does not give one label of its ``classes_`` per point, is refused.
    After the commit, such an output on a public row (a DP centre, a query,
    a path point) raises a ``BlackBoxOutputError`` saying that the budget
    was spent.

    Parameters
    ----------
    estimator : fitted classifier with ``predict`` and ``classes_``, or None
        The black box. None: a DP logistic regression is trained in fit
        (with DP-SGD, in memory: a dask ``X`` needs a black box here).
    n_clusters : int or "auto", default="auto"
        Clusters of the DP k-means (graph nodes before the count filter).
        "auto": as many as the rows would fill, if spread evenly, to the
        count a centre needs to become a node (``count_threshold`` times the
        count's noise std, which the plan knows before any row is read):
        ``n_rows_ // max(1, count_threshold * count_noise_std_)``, between
        1 and 100. It is chosen from public facts only (the DP count of the
        rows ``n_rows_``, the features, the parameters). On 1,000 rows of 5 features at
        epsilon 1 this is 17 (a fixed 100 left most clusters with about 10
        rows, under their noise, and often no node at all).
    epsilon : float, default=1.0
        Total budget: the model (when trained here) and the clustering.
    delta : float, default=1e-5
        Of the whole fit (the model's DP-SGD and the clustering's Gaussian
        releases); must be > 0 unless ``epsilon=np.inf``.
    distance_threshold : float or None, default=None
        Longest edge, as an L2 distance in the unit cube of the public bounds
        (None: a fully connected graph, as in the paper's Table 2).
    immutable_features, increasing_features, decreasing_features : list of int or str, optional
        Features a step may not change (within ``tolerance``), may only
        raise, may only lower. Names need X to be a DataFrame. A
        categorical column may be increasing or decreasing when its levels
        are ordered (an ordered pandas ``CategoricalDtype`` on the fitted
        column, else the order of its levels in ``categories``; an
        unordered pandas categorical is refused): every point of a path then
        has a level at or above (below) the query's.
    linked_features : list of (str, str, dict), optional
        ``[(categorical column, numeric column, {level: number}), ...]``:
        the numeric column follows the level (``education`` ->
        ``education-num``): a point that keeps the query's level keeps the
        query's number, one that changes it gets the level's number.
    feasibility : callable, optional
        ``feasibility(records) -> boolean mask`` on a DataFrame of points in
        the fitted columns, original units and categories (``x0, x1, ...``
        for an array fit), called once per batch. A centre whose point for
        a query is infeasible is not admissible for that query (no path
        goes through it). Checked at fit on public probe records.
    features_to_vary : "all" or list of str or int, default="all"
        DiCE's name: the columns a path may change; every other column
        keeps the query's value.
    permitted_range : dict, optional
        DiCE's name: ``{numeric column: (lower, upper)}`` or ``{categorical
        column: [level, ...]}``, the values a path's points may take,
        independent of the query; or, relative to each query, ``{column:
        {"change": (down, up)}}`` (``down <= 0 <= up``): a numeric value
        within ``[q + down, q + up]`` of the query's ``q``, an ordered
        categorical level within ``down`` to ``up`` steps of the query's
        along its declared order; ``{"range": ..., "change": ...}`` gives
        both. A centre outside is moved in (a level: back to the query's)
        when that keeps every rule, else not admissible.
    costs : dict, optional
        ``{column: weight >= 0}``: the cost of changing a column per unit of
        its scaled range (default 1), weighting the graph's edge lengths
        (the path costs) and its ``distance_threshold``. The rules are
        public: applying them to the DP centres and the queries is
        post-processing.
    favorable_class : label, optional
        The outcome recourse leads to; the last of ``classes_`` by default.
    tolerance : float, default=0.05
        How far, as a fraction of its public range, a centre on a query's
        path may be from the query's value of an immutable numeric feature,
        or below (above) it on an increasing (decreasing) one; an immutable
        feature may also move by this much along each step of the graph.
        DP centres are noisy averages: their values are never exactly a
        query's. Every point returned is then set back: immutables (numeric
        or categorical) to the query's values exactly, monotone features to
        at least (at most) the query's. Larger: more queries reach a
        favourable centre, through centres further from them. It is the
        first tolerance a query is searched at (see ``max_tolerance``).
    max_tolerance : float or None, default=0.5
        A query with no verified path at ``tolerance`` is searched again at
        each larger tolerance of ``TOLERANCE_STEPS`` (0.1, 0.2, 0.3, 0.5,
        0.75) below ``max_tolerance``, then at ``max_tolerance``, before it
        is given up; ``RecoursePaths.tolerance`` says which one each path
        needed (its points are then further from the query's immutable and
        monotone values *before* being set back to them, so less like the
        DP centres they come from). None (or at most ``tolerance``): no
        relaxation. Post-processing of the DP centres: free. On Adult with
        six immutable columns at epsilon 1 (``benchmarks/recourse_coverage.py``),
        most paths need 0.05 or 0.1, and the relaxation lifts the share of
        queries served from 0.57 (mean of 5 secure fits) to 0.94-1.0 (means
        over 15 and 5 fits; a fit with few favourable nodes can serve less).
    model_share : float in (0, 1), default=0.5
        Share of ``epsilon`` for the DP model when ``estimator`` is None:
        DP-SGD's noise is calibrated so that the model alone is
        (``model_share * epsilon``, ``delta``)-DP, and the clustering's
        noise so that both together are (``epsilon``, ``delta``)-DP.
    model_C : float > 0, default=1.0
        Inverse L2 regularisation of the DP logistic regression, as in
        scikit-learn (objective: mean cross-entropy plus
        ``||w||^2 / (2 C n)`` on the unit cube; its gradient reads no data).
        With a few epochs of DP-SGD on thousands of rows it matters little.
        Tuning it on the private data would itself leak.
    bounds : tuple (lower, upper), dict or None
        Public bounds of the features (scalars or arrays), or a dict
        ``{column: (lower, upper)}`` for the numeric columns of a
        DataFrame; data are clipped to them. A numeric column left out of
        the dict has its bounds estimated with DP, as with ``None``.
        ``None`` estimates them with a DP histogram charged inside this
        estimator's epsilon (:class:`~skdpx.privacy.FitBounds`: a quarter of
        it, coarse on small data; never the raw minimum and maximum), with a
        ``PrivacyLeakWarning`` that declared bounds are better. Bounds with
        lower == upper for every feature are refused.
    max_iter : int, default=2
        Lloyd iterations (each one a noisy release; the noisy-marginal
        initialisation is one more).
    count_threshold : float >= 0, default=5.0
        A centre becomes a graph node when its noisy count is at least this
        many standard deviations of the count's noise (and at least 1): its
        coordinates' noise is then at most ``1 / count_threshold`` of each
        feature's range (in standard deviations). Higher keeps fewer, more
        precise centres; it is post-processing, so it costs nothing. When
        the training set has fewer rows than one node needs, fit warns
        (before spending) that it will most likely keep no node; every
        query then gets ``success=False`` (a NaN row from ``transform``).
        When they could fill fewer than ``MIN_USEFUL_NODES`` (10) nodes even
        spread evenly, fit warns likewise before the clustering's spend (a
        :class:`~skdpx.exceptions.UtilityWarning`, "cannot support a useful
        graph", from the DP row count and public parameters only: on 284
        rows of breast cancer at epsilon 1, in 5 or 30 features).
        A fit whose graph keeps fewer than ``MIN_USEFUL_NODES`` (10) nodes,
        or ``n_clusters_`` if fewer, warns (a
        :class:`~skdpx.exceptions.UtilityWarning`, from the DP counts and
        public facts only) with the expected rows per cluster against the
        count's noise and what would help.
    classes : array-like or None, default=None
        The public label set. ``None`` reads it from ``y`` with a
        ``PrivacyLeakWarning``: the labels present are then a release about
        the rows (assumed public, not declared). A row whose label is not
        in the declared set is dropped from the model's training, never
        refused.
        With a black box (``estimator``), its ``classes_`` must match them.
    categories : dict or None, default=None
        ``{column: [level, ...]}``: the public levels of each categorical
        column of a DataFrame, one-hot encoded internally
        (:class:`~skdpx.preprocessing.PublicSchemaEncoder`); never read from
        the data. Every centre is made a valid record (one declared level
        per categorical column, integer columns integers, within the bounds)
        before the black box sees it, and paths are returned as such records.
    accountant : PrivacyLedger, BudgetAccountant or None
        Where the spend is recorded as well (shared budget); its relation is
        the one the fit is calibrated under.
    random_state : None, int or numpy random generator, default=None
        None: the noise, the batches and the initial centres come from a
        cryptographically secure source (see
        :func:`skdpx.privacy.noise_source`), fresh for each fit, with the
        clustering's releases through OpenDP's exact samplers. A seed makes
        the fit reproducible, with a ``PrivacyLeakWarning``: for tests and
        documentation, not for a release to publish.

    Attributes
    ----------
    estimator_ : classifier
        The black box (when trained here: a pipeline of the public bounds
        scaler and the DP logistic regression on the unit cube; with
        ``epsilon=np.inf``, scikit-learn's LogisticRegression).
    cluster_centers_ : ndarray of shape (n_nodes, n_features)
        The graph's nodes: DP centres in input units (n_nodes <=
        ``n_clusters_``; possibly none, and then no query gets recourse).
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
    n_clusters_ : int
        The clusters of the DP k-means (``n_clusters``, resolved).
    noise_multiplier_ : float
        Of each of the ``max_iter + 1`` Gaussian releases of the clustering
        (the noise std over the relation's sensitivity).
    count_noise_std_ : float
        The standard deviation of the noise on each count:
        ``noise_multiplier_`` times the table's sensitivity.
    model_epsilon_ : float
        The epsilon the DP model alone is calibrated for, at ``delta`` (0
        when ``estimator`` is given or ``epsilon=np.inf``).
    model_noise_multiplier_, model_sample_rate_ : float
        DP-SGD's noise multiplier (over the clipping norm 1) and Poisson
        sampling rate (0 when no DP model is trained).
    model_n_steps_ : int
        DP-SGD steps taken. With ``noise_multiplier_`` and ``max_iter`` this
        is all dp_accounting needs to recompute ``epsilon_spent_``.
    n_iter_ : int
        Lloyd iterations run (``max_iter``: stopping early on convergence
        would read the data without noise).
    classes_ : ndarray
    favorable_class_ : label
    epsilon_spent_, delta_spent_ : float
    ledger_ : EstimatorLedger
        The fit's spend (one composed event).
    n_features_in_ : int
    bounds_ : tuple of ndarray
    rules_ : skdpx._rules.Rules
        The resolved rules (ordered levels, links, feasibility, ranges,
        costs), public.
    tolerance_levels_ : tuple of float
        The tolerances a query's search is relaxed through, ``tolerance``
        first (``graph_`` is that tolerance's graph).

    Examples
    --------
    >>> import numpy as np
    >>> from skdpx.recourse import PrivRecourse
    >>> grid = np.linspace(0, 1, 141)
    >>> X = np.array(np.meshgrid(grid, grid)).reshape(2, -1).T  # 19,881 rows in [0, 1]^2
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

    #: fit takes Dask and Spark data (skdpx.utils._tables.validate_table)
    _accepts_distributed = True

    #: a private search scores it with DPRecourseScore by default
    _dp_capabilities = DPCapabilities(default_scoring="recourse")

    #: the black box is asked about public rows only (BlackBoxMixin)
    _black_box_rows = "public rows (DP cluster centres, queries or path points)"

    _parameter_constraints = {
        **BUDGET_PARAMETER_CONSTRAINTS,
        "classes": ["array-like", None],
        "estimator": [HasMethods(["predict"]), None],
        "n_clusters": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "distance_threshold": [Interval(Real, 0, None, closed="neither"), None],
        "immutable_features": ["array-like", None],
        "increasing_features": ["array-like", None],
        "decreasing_features": ["array-like", None],
        **RULE_PARAMETER_CONSTRAINTS,
        "favorable_class": "no_validation",
        "tolerance": [Interval(Real, 0, None, closed="left")],
        "max_tolerance": [Interval(Real, 0, None, closed="left"), None],
        "model_share": [Interval(Real, 0, 1, closed="neither")],
        "model_C": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "count_threshold": [Interval(Real, 0, None, closed="left")],
        "categories": [dict, None],
    }

    def __init__(
        self,
        estimator=None,
        *,
        n_clusters="auto",
        epsilon=1.0,
        delta=1e-5,
        distance_threshold=None,
        immutable_features=None,
        increasing_features=None,
        decreasing_features=None,
        linked_features=None,
        feasibility=None,
        features_to_vary="all",
        permitted_range=None,
        costs=None,
        favorable_class=None,
        tolerance=0.05,
        max_tolerance=0.5,
        model_share=0.5,
        model_C=1.0,
        bounds=None,
        max_iter=2,
        count_threshold=5.0,
        classes=None,
        categories=None,
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
        self.linked_features = linked_features
        self.feasibility = feasibility
        self.features_to_vary = features_to_vary
        self.permitted_range = permitted_range
        self.costs = costs
        self.favorable_class = favorable_class
        self.tolerance = tolerance
        self.max_tolerance = max_tolerance
        self.model_share = model_share
        self.model_C = model_C
        self.bounds = bounds
        self.classes = classes
        self.categories = categories
        self.max_iter = max_iter
        self.count_threshold = count_threshold
        self.accountant = accountant
        self.random_state = random_state

    # ------------------------------------------------------------ fit

    def _constraint_sets(self):
        """The constraints' encoded indices: immutable numeric features, immutable
        categorical blocks, increasing and decreasing features (validation only)."""
        schema = self.schema_
        (immutable, increasing, decreasing), rules = self._resolve_rules()
        blocks = [np.asarray(g, dtype=int) for _, g in schema.groups
                  if schema.categorical[g].all() and np.isin(g, immutable).all()]
        numeric = [int(f) for f in immutable if not schema.categorical[f]]
        return SimpleNamespace(immutable=sorted(numeric), blocks=blocks,
                               increasing=sorted(int(f) for f in increasing),
                               decreasing=sorted(int(f) for f in decreasing), rules=rules)

    def fit(self, X, y=None):
        """Train (or take) the black box, release the DP centres, build the graph.

        The whole spend (every DP-SGD step of the model, when trained here,
        and the clustering's ``max_iter + 1`` Gaussian releases) is planned
        from public facts and committed to the ledger as one composed event
        before the data are read; nothing refunds it, even if the fit is
        interrupted. A validation error (e.g. an unknown feature, fewer
        than two declared classes) spends nothing; a value of a row (e.g. a
        NaN in ``X``) is neutralised, never refused.

        **Dask.** ``X`` may be a dask array or a dask DataFrame (the
        ``dask`` extra) whose rows stay in the Dask workers: the same
        validation, schema and spend as in memory, each release's exact
        statistic summed over the partitions in the workers (the DP bounds'
        histograms, the initial histograms, then one pass per Lloyd
        iteration for the per-cluster sums and counts), the rows encoded
        and scaled to the unit cube block by block there, and the noise
        added once, in the client, by the privacy core. The client receives
        only counts and sums, never a row (a bad value is neutralised in the
        workers as in memory, never counted or refused). Persist ``X`` first
        (``X.persist()``) if it is costly to compute: each pass reads it
        again. A black box must then be given as ``estimator``: the DP-SGD
        training of the default model samples and clips single rows, which
        is not supported over Dask (fit raises a ``ValueError`` before
        anything is spent). At ``epsilon=np.inf`` the result is the
        in-memory one up to floating-point summation order. Queries
        (:meth:`explain`, :meth:`transform`, :meth:`alternatives`) are
        answered in memory.

        Parameters
        ----------
        X : array-like, dask array or dask DataFrame of shape (n_samples, n_features)
            The private training rows.
        y : array-like of shape (n_samples,), optional
            Needed when ``estimator`` is None (the DP model's labels);
            ignored otherwise (its values never read; a ``y`` of another
            length than ``X`` is refused before anything is spent). The set
            of class labels is then read from
            ``y``, as scikit-learn classifiers do; it is not
            noised (with a black box, its public ``classes_`` are used).

        Returns
        -------
        self
        """
        return super().fit(X, y)

    def _validate_fit(self, X, y):
        """Everything checked before the spend is committed (validation only)."""
        if is_distributed(X) and self.estimator is None:
            raise ValueError(
                "PrivRecourse with a Dask or Spark X needs a fitted black box as "
                "estimator=...: with estimator=None it would train its DP logistic regression "
                "with DP-SGD, whose Poisson-sampled, per-row clipped steps are not supported "
                "over Dask or Spark. "
                "Nothing was spent."
            )
        # codes: each row's class index, -1 for a label that is not a class (the
        # row is then dropped from the DP model's training); None with a black box
        X, codes = validate_classes(self, X, y, needs="recourse needs")
        favorable = self.classes_[-1] if self.favorable_class is None else self.favorable_class
        self._check_wanted_class(favorable, "favorable_class")
        sets = self._constraint_sets()
        self._require_delta("the clustering's release")
        favorable = favorable.item() if isinstance(favorable, np.generic) else favorable
        return FitData(X, codes, self.classes_, extra={"favorable": favorable, "sets": sets})

    def _row_memory(self, data):
        # with a black box, nothing per row (X is read in blocks); DP-SGD keeps the
        # labels' indicators and the row weights, and draws one uniform per row a step;
        # the non-private baseline (epsilon=inf) fits on all the scaled rows at once
        if self.estimator is not None:
            return 0.0
        per_row = 8.0 * (len(self.classes_) + 3)
        if math.isinf(self.epsilon):
            per_row += 16.0 * data.X.shape[1]
        return per_row

    def _plan_spend(self, data, relation, bounds, count):
        """The model's DP-SGD steps and the clustering's releases, from public facts.

        The DP-SGD engine is calibrated for (``model_share * epsilon``,
        ``delta``) from the DP row count ``count.n``, the batch size and the
        epochs; the clustering's noise multiplier so that its ``max_iter +
        1`` Gaussian releases, composed with the count, the bounds and the
        planned DP-SGD event (``prior``), meet (``epsilon``, ``delta``)
        whichever plan the count selects (:class:`~skdpx.privacy.FitCount`).
        """
        n, d = count.n, data.X.shape[1]
        releases = self.max_iter + 1
        train_model = self.estimator is None
        if math.isinf(self.epsilon):  # the non-private baseline: say so in the ledger
            return SpendPlan(NonPrivateDpEvent(), "non-private fit (epsilon=inf)",
                             relation=relation, noise_multiplier=0.0, engine=None,
                             model_epsilon=0.0, count_noise_std=0.0,
                             n_clusters=self._n_clusters(n, 0.0), n_rows=n)
        events, engine, model_epsilon, label = [], None, 0.0, ""
        if train_model:
            model_epsilon = float(self.epsilon * (1 - bounds.share) * self.model_share)
            engine = DPSGD.from_budget(
                model_epsilon, self.delta, n_samples=n, batch_size=_model.batch_size(n),
                epochs=_model.EPOCHS, max_grad_norm=_model.MAX_GRAD_NORM, relation=relation,
                trainer="PrivRecourse's black box",
                alternative=(f"give a black box as `estimator` (the clustering is then "
                             f"calibrated for {relation!r})"))
            events.append(engine.planned_event())
            label = (f"black box: DP-SGD logistic regression ({engine.max_steps} steps, "
                     f"sampling rate {engine.sample_rate:.3g}) + ")
        noise_multiplier = calibrate_noise(self.epsilon, self.delta, steps=releases,
                                           prior=count.prior(bounds.event, *events))
        count_noise_std = noise_multiplier * table_sensitivity(d, relation)
        n_clusters = self._n_clusters(n, count_noise_std)
        need = max(1.0, self.count_threshold * count_noise_std)
        if n < need:  # said before the rest of the spend is committed (after the count's)
            warnings.warn(
                f"PrivRecourse: about {n:.0f} rows (a DP count) cannot fill a graph node at epsilon={self.epsilon}: a "
                f"centre becomes a node at a noisy count of {need:.0f} (count_threshold="
                f"{self.count_threshold} times the count's noise std {count_noise_std:.1f}), "
                f"so the fit will most likely keep no node and every query get success=False "
                f"(a NaN row from transform). Use more rows, a larger epsilon or a lower "
                f"count_threshold.", UserWarning, stacklevel=5)
        elif n < MIN_USEFUL_NODES * need:  # likewise: the DP count and public facts only
            warnings.warn(
                f"PrivRecourse: about {n:.0f} rows (a DP count) cannot support a useful "
                f"graph at epsilon={self.epsilon}: a centre becomes a node at a noisy count "
                f"of {need:.0f} (count_threshold={self.count_threshold} times the count's "
                f"noise std {count_noise_std:.1f}, which grows with the {d} encoded "
                f"features), so even rows spread evenly fill at most {int(n // need)} "
                f"node(s), fewer than the {MIN_USEFUL_NODES} a graph needs to give most "
                f"queries a path; whether a favourable node survives is then up to the "
                f"noise. Said before the clustering's budget is spent. Use more rows, a "
                f"larger epsilon, fewer features or a lower count_threshold.",
                UtilityWarning, stacklevel=5)
        events.append(gaussian_event(noise_multiplier, steps=releases))
        label += (f"DP k-means: {d} initial histograms and {self.max_iter} Lloyd tables of "
                  f"{n_clusters} clusters ({releases} Gaussian releases)")
        event = events[0] if len(events) == 1 else ComposedDpEvent(events)
        return SpendPlan(event, label, relation=relation, noise_multiplier=noise_multiplier,
                         engine=engine, model_epsilon=model_epsilon,
                         count_noise_std=count_noise_std, n_clusters=n_clusters, n_rows=n)

    def _n_clusters(self, n_samples, count_noise_std):
        """The number of clusters, from public facts: ``n_clusters``, or for "auto"
        as many as the rows would fill to the count a node needs
        (``max(1, count_threshold * count_noise_std)``) if spread evenly,
        between 1 and ``AUTO_MAX_CLUSTERS``."""
        if self.n_clusters != "auto":
            return int(self.n_clusters)
        need = max(1.0, self.count_threshold * count_noise_std)
        return int(np.clip(n_samples // need, 1, AUTO_MAX_CLUSTERS))

    def _private_fit(self, data, plan, commitment, noise):
        X = data.X
        lower, upper = plan.bounds.release(X, noise=noise, commitment=commitment)
        self.favorable_class_ = data.extra["favorable"]
        sets = data.extra["sets"]
        self._immutable, self._blocks = sets.immutable, sets.blocks
        self._increasing, self._decreasing = sets.increasing, sets.decreasing
        self.rules_ = sets.rules
        # every encoded index held at the query's value along a path
        self._held = np.array(sorted(self._immutable + [int(f) for b in self._blocks
                                                           for f in b]), dtype=int)
        self.bounds_ = (lower, upper)
        scaler = BoundsScaler(lower, upper)
        # each block of rows read: a missing or infinite value at the bounds' midpoint
        # (a rule on its cell alone), clipped and scaled into the unit cube. Never a
        # scaled copy of X: the sums are computed block by block (in memory, or in
        # the Dask workers), and DP-SGD prepares only its batches
        rows = UnitCubeRows(lower, upper)
        self.noise_multiplier_ = plan.noise_multiplier
        self.model_epsilon_ = plan.model_epsilon
        engine = plan.engine
        self.model_noise_multiplier_ = engine.noise_multiplier if engine is not None else 0.0
        self.model_sample_rate_ = engine.sample_rate if engine is not None else 0.0
        self.model_n_steps_ = 0
        if self.estimator is not None:
            self.estimator_ = self.estimator
        else:
            self.estimator_ = self._fit_model(X, rows, data.y, scaler, engine,
                                              commitment, noise)
            self.model_n_steps_ = engine.n_steps if engine is not None else 0
        self.n_iter_ = self.max_iter  # Lloyd iterations run (all of them: no early stop)
        self.n_clusters_ = plan.n_clusters
        centers, counts = dp_lloyd(X, plan.n_clusters, self.max_iter, plan.noise_multiplier,
                                   relation=plan.relation, noise=noise, commitment=commitment,
                                   prepare=rows)
        self.count_noise_std_ = plan.count_noise_std
        keep = counts >= max(1.0, self.count_threshold * self.count_noise_std_)
        nodes = centers[keep]
        self.cluster_centers_ = scaler.inverse_transform(nodes)
        self.cluster_counts_ = counts[keep]
        # the black box sees each centre as a valid record (categories, integers)
        self.node_class_ = self._predict(self._project(self.cluster_centers_))
        self.candidates_ = np.flatnonzero(self.node_class_ == self.favorable_class_)
        # a categorical immutable does not restrict the search: every point of a
        # path gets the query's level back, and a DP centre's one-hot block is a
        # mixture whose largest level is rarely a minority query's
        # one graph per tolerance a query may be relaxed to (post-processing of the
        # DP centres and public parameters: free); the first is the declared tolerance's
        self.tolerance_levels_ = self._tolerance_levels()
        self._levels = []
        for tol in self.tolerance_levels_:
            constraints = dict(immutable=self._immutable, increasing=self._increasing,
                               decreasing=self._decreasing, tolerance=tol)
            graph = recourse_graph(
                nodes, distance_threshold=(np.inf if self.distance_threshold is None
                                           else self.distance_threshold),
                weights=self.cluster_counts_, costs=self.rules_.weights, **constraints)
            self._levels.append(RecourseGraph(nodes, graph, self.candidates_, **constraints))
        self._routes = self._levels[0]
        self.graph_ = self._routes.graph
        self.path_cost_ = self._routes.cost
        self._warn_small_graph(plan.n_rows)

    def _tolerance_levels(self):
        """The tolerances a query's search is relaxed through, in order (public
        parameters only): ``tolerance``, then each of ``TOLERANCE_STEPS`` above it
        and below ``max_tolerance``, then ``max_tolerance``."""
        first = float(self.tolerance)
        last = first if self.max_tolerance is None else max(first, float(self.max_tolerance))
        steps = [t for t in TOLERANCE_STEPS if first < t < last]
        return tuple([first, *steps] + ([last] if last > first else []))

    def _useful_nodes(self):
        """The fewest nodes a graph needs to be of use: ``MIN_USEFUL_NODES``, or
        ``n_clusters_`` if fewer, and at least 2 (public parameters only)."""
        return max(2, min(MIN_USEFUL_NODES, self.n_clusters_))

    def _graph_facts(self, n_rows):
        """What the small-graph warning and reasons say: the nodes kept, the count a
        node needs, the DP count's rows per cluster, and an n_clusters that would fit."""
        need = max(1.0, self.count_threshold * self.count_noise_std_)
        per_cluster = n_rows / self.n_clusters_
        return SimpleNamespace(k=len(self.cluster_centers_), need=need,
                               per_cluster=per_cluster,
                               suggest=int(max(1, n_rows // need)))

    def _warn_small_graph(self, n_rows):
        """A ``UtilityWarning`` when the DP graph keeps fewer nodes than a useful minimum.

        Privacy: whether it is raised, and all it says, are functions of DP
        outputs and public facts only: the number of nodes kept is a function
        of the released noisy counts (post-processing), ``n_rows`` is the DP
        count of the rows (released and accounted in this fit's budget), the
        rest are public parameters. It is never a function of the private rows
        or of a hidden draw that was not released.
        """
        self._n_rows_dp = float(n_rows)
        facts = self._graph_facts(n_rows)
        if facts.k >= self._useful_nodes():
            return
        warnings.warn(
            f"PrivRecourse: the DP graph kept {facts.k} of {self.n_clusters_} centres as "
            f"nodes, fewer than the {self._useful_nodes()} a graph needs to give most queries "
            f"a path (explain() will say 'graph too small for this epsilon'). About "
            f"{n_rows:.0f} rows (a DP count) in {self.n_clusters_} clusters is about "
            f"{facts.per_cluster:.0f} rows per cluster if spread evenly, against a count "
            f"noise std of {self.count_noise_std_:.1f}: a centre becomes a node at a noisy "
            f"count of {facts.need:.0f} (count_threshold={self.count_threshold} times the "
            f"std). What would help: n_clusters <= {facts.suggest} (n_clusters='auto' "
            f"chooses it), a larger epsilon (now {self.epsilon}), fewer features (the noise "
            f"grows with them), a lower count_threshold, or more rows.",
            UtilityWarning, stacklevel=4)

    def _fit_model(self, X, rows, codes, scaler, engine, commitment, noise):
        """The DP logistic regression on the scaled rows, behind the public scaler.

        ``X``: the encoded rows; ``rows`` makes a block of them ready (filled,
        clipped, scaled: :class:`~skdpx.utils._validation.UnitCubeRows`), for each
        DP-SGD batch only. ``codes``: each row's class index in ``classes_``;
        a row of code -1 (no usable label) is dropped (its gradients are 0).
        """
        if engine is None:  # epsilon = inf: the non-private baseline (all rows at once)
            used = codes >= 0
            model = LogisticRegression(C=self.model_C).fit(rows(X[used]),
                                                           self.classes_[codes[used]])
        else:
            model = _model.train_dp_logistic(X, codes, self.classes_,
                                             engine.bind(noise, commitment, n_rows=len(X)),
                                             C=self.model_C, prepare=rows)
        encode = FunctionTransformer(_UnitCube(self.schema_, scaler))
        encode.fit(self.schema_.decode(np.zeros((0, X.shape[1]))))  # the columns it takes
        return make_pipeline(encode, model)

    # ------------------------------------------------------------ queries

    def _queries(self, X):
        """Encoded queries, clipped to the public bounds, their unit-cube image, and
        whether the black box already gives each the favourable class."""
        check_is_fitted(self)
        refuse_distributed_queries(self, X)
        X = validate_table(self, X, reset=False)
        lower, upper = self.bounds_
        X = fill_nonfinite(X, lower, upper)  # a missing value: the bounds' midpoint
        Xc = np.clip(X, lower, upper)
        already = self._predict(Xc) == self.favorable_class_
        return X, Xc, already, BoundsScaler(lower, upper).transform(Xc)

    def _project(self, Z):
        """Encoded rows made valid records (categories, integers, bounds), still encoded."""
        return self.schema_.project(Z, *self.bounds_)

    def _predict(self, Z):
        """The black box's labels of encoded rows, given as the rows it was fitted on."""
        if len(Z) == 0:
            return np.empty(0, dtype=self.classes_.dtype)
        # public rows (DP centres, queries, path points), read after the commit: an
        # output that cannot be used raises, saying the budget was spent
        return self._call_black_box(self.estimator_, "predict", Z, "labels")

    def _finish(self, points, queries):
        """Path points made valid records that hold every constraint relative to their query.

        The search already keeps each node within ``tolerance`` of the
        query's immutables (at the query's level for a categorical one) and
        on the right side of its monotone features; here the immutables are
        set back to the query's values exactly, and the points are projected
        to valid records (a categorical column's level is its largest
        one-hot entry, integer columns are rounded, every column clipped to
        its public bounds). The last clamp of the monotone features to the
        query's value only removes rounding (a node above a query is above
        it after rounding when the query's value is itself valid).
        """
        points = np.array(points, dtype=float, copy=True)
        if len(points) == 0:
            return points
        points[:, self._held] = queries[:, self._held]
        points = self._project(points)
        points[:, self._increasing] = np.maximum(points[:, self._increasing],
                                                 queries[:, self._increasing])
        points[:, self._decreasing] = np.minimum(points[:, self._decreasing],
                                                 queries[:, self._decreasing])
        return self.rules_.repair(points, queries) if self.rules_.active else points

    def _admissible_by_rules(self, Zc, admissible):
        """``admissible`` (n, k) without the centres whose point for a query breaks
        a declared rule (:mod:`skdpx._rules`: ordered levels, links, permitted
        ranges, ``feasibility``), judged on the point the query would be shown
        (:meth:`_finish`). Vectorised over (query, centre) pairs, in chunks."""
        if not self.rules_.active:
            return admissible
        rows, cols = np.nonzero(admissible)
        out = np.zeros(admissible.shape, dtype=bool)
        for s in range(0, len(rows), _PAIR_CHUNK):
            q, j = rows[s:s + _PAIR_CHUNK], cols[s:s + _PAIR_CHUNK]
            finished = self._finish(self.cluster_centers_[j], Zc[q])
            out[q, j] = self.rules_.admissible(finished, Zc[q], self.bounds_)
        return out

    def _query_candidates(self, Zc, admissible):
        """(n, k): each query's candidates among its admissible centres.

        A centre is a candidate for a query when the black box gives
        ``favorable_class`` to its record made to hold the query's
        constraints exactly (:meth:`_finish`): the record the query would be
        shown. One call of the black box per chunk of (query, centre) pairs;
        none with no constraint (the record is then the projected centre,
        whose class is ``node_class_``).
        """
        if not (len(self._held) or self._increasing or self._decreasing or self.rules_.active):
            # nothing to set back: a centre's record is the same for every query
            return admissible & np.isin(np.arange(admissible.shape[1]), self.candidates_)
        rows, cols = np.nonzero(admissible)
        out = np.zeros(admissible.shape, dtype=bool)
        for s in range(0, len(rows), _PAIR_CHUNK):
            q, j = rows[s:s + _PAIR_CHUNK], cols[s:s + _PAIR_CHUNK]
            finished = self._finish(self.cluster_centers_[j], Zc[q])
            out[q, j] = self._predict(finished) == self.favorable_class_
        return out

    def _verified(self, Xc, lengths, flat):
        """The finished path points of each query, and whether its end point is favourable.

        ``lengths`` / ``flat``: node paths (concatenated). Returns the points
        (concatenated, as ``flat``) and a mask (n,) of the queries whose
        finished end point the black box gives ``favorable_class`` and whose
        every point holds the rules once the monotone columns are held from
        one point to the next (:meth:`_step_by_step`; False for a query with
        no path).
        """
        owners = np.repeat(np.arange(len(Xc)), lengths)
        points = self._finish(self.cluster_centers_[flat], Xc[owners])
        points, held = self._step_by_step(points, lengths, Xc[owners])
        has = lengths > 0
        ends = np.cumsum(lengths)[has] - 1
        verified = np.zeros(len(Xc), dtype=bool)
        verified[has] = self._predict(points[ends]) == self.favorable_class_
        bad = np.bincount(owners[~held], minlength=len(Xc)) > 0
        return points, verified & ~bad

    def _step_by_step(self, points, lengths, queries):
        """Finished path points whose monotone columns move only the way their rule
        allows from one point to the next, not only relative to the query.

        Along each path (``lengths``: the points of each, concatenated), an
        increasing numeric column is its running maximum, a decreasing one
        its running minimum, and an ordered categorical column keeps the
        previous point's level where its own would go the wrong way; a
        linked number is then set again from its level. The points stay
        valid records (a maximum of valid values is one). Returns the points
        and a mask of those that still hold every declared rule (a
        ``feasibility`` callable may refuse a point so changed; only changed
        points are checked again). Loops over the positions in a path, not
        over rows. Post-processing of the finished DP centres: free.
        """
        inc, dec = list(self._increasing), list(self._decreasing)
        ordered = self.rules_.ordered
        held = np.ones(len(points), dtype=bool)
        if not (inc or dec or ordered) or len(points) == 0:
            return points, held
        before = points.copy()
        first = np.cumsum(lengths) - lengths
        pos = np.arange(len(points)) - np.repeat(first, lengths)
        for p in range(1, int(lengths.max())):
            rows = np.flatnonzero(pos == p)
            prev = rows - 1
            if inc:
                points[np.ix_(rows, inc)] = np.maximum(points[np.ix_(rows, inc)],
                                                       points[np.ix_(prev, inc)])
            if dec:
                points[np.ix_(rows, dec)] = np.minimum(points[np.ix_(rows, dec)],
                                                       points[np.ix_(prev, dec)])
            for block, rank, sign in ordered:
                now = rank[np.argmax(points[np.ix_(rows, block)], axis=1)]
                was = rank[np.argmax(points[np.ix_(prev, block)], axis=1)]
                back = sign * (now - was) < 0
                points[np.ix_(rows[back], block)] = points[np.ix_(prev[back], block)]
        if self.rules_.active:
            points = self.rules_.repair(points, queries)
            changed = np.flatnonzero(np.any(points != before, axis=1))
            if len(changed):
                held[changed] = self.rules_.admissible(points[changed], queries[changed],
                                                       self.bounds_)
        return points, held

    @staticmethod
    def _split_paths(queries, lengths, points):
        """Paths as arrays: each query, then its (finished) points."""
        n = len(queries)
        rows = np.empty((n + lengths.sum(), queries.shape[1]))
        first = np.concatenate([[0], np.cumsum(lengths + 1)[:-1]])
        is_query = np.zeros(len(rows), dtype=bool)
        is_query[first] = True
        rows[is_query] = queries
        rows[~is_query] = points
        return np.split(rows, first[1:])

    def _result(self, X, paths, cost, success, meta, *, queries=None, end=None, reason=None,
                tolerance=None):
        """A RecoursePaths in the encoded space; fitted on a DataFrame, with the
        queries, end points and every path point as records in its columns
        (``query_records``, ``counterfactual_records``, ``path_records``)."""
        frame = self.schema_.kind == "frame"
        names = (list(self.schema_.feature_names_out)
                 if frame or self.schema_.encoder is not None else None)
        records = {}
        if frame:
            if end is None:  # the end point of each successful path, as RecoursePaths does
                end = np.full(X.shape, np.nan)
                for i in np.flatnonzero(success):
                    end[i] = paths[i][-1]
            given = queries if hasattr(queries, "columns") else self._decode(X)
            records = dict(query_records=given,
                           counterfactual_records=self._end_frame(end),
                           path_records=self._path_frame(paths, given))
        return RecoursePaths(X, paths, cost=cost, success=success, reason=reason,
                             tolerance=tolerance, feature_names=names,
                             epsilon_spent=self.epsilon_spent_, delta_spent=self.delta_spent_,
                             meta={"estimator": type(self).__name__, **meta}, **records)

    def _path_frame(self, paths, given):
        """Every path point as a record of the fitted columns, the paths one after
        the other: each query as given, then its points decoded as the end points
        are (declared levels, integers, within the bounds)."""
        import pandas as pd

        lengths = np.array([len(p) for p in paths], dtype=int)
        first = np.cumsum(lengths) - lengths
        step = np.ones(int(lengths.sum()), dtype=bool)
        step[first] = False
        flat = np.vstack(paths) if paths else np.empty((0, len(self.schema_.feature_names_out)))
        frame = pd.concat([given.reset_index(drop=True),
                           self._end_frame(flat[step]).reset_index(drop=True)],
                          ignore_index=True)
        order = np.argsort(np.concatenate([first, np.flatnonzero(step)]), kind="stable")
        return frame.iloc[order].reset_index(drop=True)

    def _relaxed_search(self, Xc, Q01, already):
        """Each query's search, its tolerance relaxed until it has a verified path.

        A query is searched at ``tolerance`` first (:meth:`_level_search`);
        one with no verified path there is searched again at the next of
        ``tolerance_levels_``, and so on up to ``max_tolerance``, where it is
        given up (its reason is that of the last level). The relaxation is
        post-processing of the DP centres, the queries and the public rules:
        free, and a query's tolerance (``level``) is a function of them only.

        Returns a SimpleNamespace with, per query: ``level`` (the index in
        ``tolerance_levels_`` of the search kept), ``admissible`` and
        ``candidates`` (n, k), ``starts``, ``reach``, ``cost``, ``verified``
        and ``lengths``; ``flat`` and ``points`` the node paths and their
        finished points, concatenated in query order.
        """
        n, k = len(Xc), len(self.cluster_centers_)
        last = len(self._levels) - 1
        out = SimpleNamespace(level=np.full(n, last), admissible=np.zeros((n, k), dtype=bool),
                              candidates=np.zeros((n, k), dtype=bool), starts=np.full(n, -1),
                              reach=np.zeros(n, dtype=bool), cost=np.full(n, np.inf),
                              verified=np.zeros(n, dtype=bool), lengths=np.zeros(n, dtype=int))
        owners, flats, points = [], [], []
        todo = np.flatnonzero(~np.asarray(already, dtype=bool))
        for li, routes in enumerate(self._levels):
            if not len(todo):
                break
            adm = self._admissible_by_rules(Xc[todo], routes.admissible(Q01[todo]))
            cand = self._query_candidates(Xc[todo], adm)
            found = routes.search(Q01[todo], admissible=adm, candidates=cand)
            pts, ver = self._verified(Xc[todo], found.lengths, found.flat)
            done = (found.reach & ver) | (li == last)
            mine = todo[done]
            out.level[mine] = li
            out.admissible[mine], out.candidates[mine] = adm[done], cand[done]
            out.starts[mine], out.reach[mine] = found.starts[done], found.reach[done]
            out.cost[mine], out.verified[mine] = found.cost[done], ver[done]
            out.lengths[mine] = found.lengths[done]
            keep = np.repeat(done, found.lengths)
            owners.append(np.repeat(mine, found.lengths[done]))
            flats.append(found.flat[keep])
            points.append(pts[keep])
            todo = todo[~done]
        d = len(Xc[0]) if n else len(self.bounds_[0])
        owners = np.concatenate(owners) if owners else np.empty(0, dtype=int)
        order = np.argsort(owners, kind="stable")
        out.flat = (np.concatenate(flats) if flats else np.empty(0, dtype=int))[order]
        out.points = (np.concatenate(points) if points else np.empty((0, d)))[order]
        return out

    def _recourse(self, X):
        """Everything :meth:`explain` and :meth:`transform` return, verified."""
        X, Xc, already, Q01 = self._queries(X)
        found = self._relaxed_search(Xc, Q01, already)
        success = already | (found.reach & found.verified)
        keep = np.repeat(success, found.lengths)  # a failed path keeps only its query
        lengths = np.where(success, found.lengths, 0)
        cost = np.where(already, 0.0, np.where(success, found.cost, np.inf))
        points = found.points[keep]
        end = np.full(X.shape, np.nan)
        end[already] = X[already]
        routed = success & ~already
        end[routed] = points[np.cumsum(lengths)[routed] - 1]
        levels = np.asarray(self.tolerance_levels_)
        tolerance = np.where(already, 0.0, np.where(success, levels[found.level], np.nan))
        reason = self._reasons(found.admissible, found.candidates, found.reach,
                               found.verified, success, Q01)
        return SimpleNamespace(X=X, lengths=lengths, points=points, cost=cost, success=success,
                               end=end, unverified=int(np.sum(found.reach & ~found.verified)),
                               reason=reason, tolerance=tolerance)

    def _binding_rule(self, Q01):
        """Per query (unit cube), the rule that leaves the fewest nodes admissible:
        ``"; fewest pass <feature> (<rule>): m of k nodes"`` ("" without rules)."""
        nodes, tol = self._levels[-1].nodes, self.tolerance_levels_[-1]
        names = getattr(self.schema_, "feature_names_out", None)
        names = ([f"x{j}" for j in range(nodes.shape[1])] if names is None
                 or len(names) != nodes.shape[1] else [str(v) for v in names])
        rules, counts = [], []
        for kind, feats in (("immutable", self._immutable), ("increasing", self._increasing),
                            ("decreasing", self._decreasing)):
            for f in feats:
                q, c = Q01[:, None, f], nodes[None, :, f]
                ok = {"immutable": np.abs(c - q) <= tol, "increasing": c >= q - tol,
                      "decreasing": c <= q + tol}[kind]
                rules.append(f"{names[f]} ({kind})")
                counts.append(ok.sum(axis=1))
        if not rules or not len(Q01):
            return np.full(len(Q01), "", dtype=object)
        counts = np.stack(counts, axis=1)
        worst = np.argmin(counts, axis=1)
        text = np.char.add(np.char.add("; fewest pass ", np.array(rules)[worst]),
                           np.char.add(": ", counts[np.arange(len(Q01)), worst].astype(str)))
        return np.char.add(text, f" of {len(nodes)} nodes")

    def _reasons(self, admissible, candidates, reach, verified, success, Q01):
        """Why each query has no path ("" where it has one), with a hint.

        Computed from DP outputs and public facts only: the DP graph and
        centres, each query's admissible nodes and candidates (the query, the
        declared rules, the black box on public records), and the public
        parameters; never from a private row (post-processing, free). The
        first of these that holds is the query's reason:

        * "no admissible node": no node keeps the query's rules (immutables
          within ``tolerance``, monotone features on the right side); the
          rule that leaves the fewest nodes is named, with its count;
        * "no admissible favourable node": some do, but the black box gives
          none of them ``favorable_class`` once set back to the query's rules
          (saying how many are favourable as DP centres: then the query's
          immutable values are what the black box's decision rests on);
        * "no path within the distance threshold" (with ``distance_threshold``)
          or "no path under the step rules" (without): no admissible
          favourable node is reachable through admissible nodes;
        * "end point not favourable": the end point shown is not favourable.

        On a graph with fewer nodes than a useful minimum, the reason starts
        with "graph too small for this epsilon", with the number of nodes and
        what would help (epsilon, n_clusters, count_threshold).
        """
        n, k = admissible.shape
        n_adm = admissible.sum(axis=1).astype(str)
        n_cand = candidates.sum(axis=1).astype(str)
        # a failed query was given up at the last tolerance of the relaxation
        last = self.tolerance_levels_[-1]
        if len(self.tolerance_levels_) > 1:
            tried = f"tolerance={last:g} (relaxed from {self.tolerance:g}, up to max_tolerance)"
            tol = f"max_tolerance (now {last:g})"
        else:
            tried, tol = f"tolerance={last:g}", f"tolerance (now {last:g}) or max_tolerance"
        more = "more nodes (n_clusters, epsilon)"
        cause = np.full(n, "", dtype=object)
        no_adm = ~admissible.any(axis=1)
        no_cand = ~no_adm & ~candidates.any(axis=1)
        no_path = ~no_adm & ~no_cand & ~reach
        bad_end = reach & ~verified
        cause[no_adm] = np.char.add(
            f"no admissible node: none of the {k} nodes keeps this query's immutable "
            f"features within {tried} of its values and its increasing "
            f"(decreasing) features at least (at most) its values, up to the tolerance",
            self._binding_rule(Q01[no_adm]))
        cause[no_adm] = np.char.add(cause[no_adm].astype(str),
                                    f"; a larger {tol} or {more} would help")
        if no_cand.any():
            # favourable as DP centres (node_class_) but not once set back to the query
            as_centres = (admissible[no_cand] & self._routes.is_candidate[None, :]).sum(axis=1)
            head = np.char.add(np.char.add("no admissible favourable node: ", n_adm[no_cand]),
                               f" of the {k} node(s) admissible for this query, ")
            cause[no_cand] = np.where(
                as_centres > 0,
                np.char.add(np.char.add(head, as_centres.astype(str)),
                            " of them favourable as DP centres but none once given this "
                            "query's immutable and monotone values back (the black box's "
                            "decision rests on them); fewer immutable or monotone features "
                            "would help (they are given back exactly, whatever the "
                            "tolerance)"),
                np.char.add(head, f"none of them favorable_class={self.favorable_class_!r} "
                                  f"(the graph has {len(self.candidates_)} favourable "
                                  f"node(s)); a larger {tol} or {more} would help"))
        if no_path.any():
            if self.distance_threshold is None:
                what = ("no path under the step rules: ", " admissible favourable node(s), "
                        "none reachable through admissible nodes by steps that keep the "
                        f"immutable and monotone features; a larger {tol} or "
                        f"{more} would help")
            else:
                what = ("no path within the distance threshold: ",
                        " admissible favourable node(s), none reachable through admissible "
                        f"nodes by steps shorter than distance_threshold="
                        f"{self.distance_threshold:g} that keep the rules; a larger "
                        f"distance_threshold or {tol} would help")
            cause[no_path] = np.char.add(np.char.add(what[0], n_cand[no_path]), what[1])
        cause[bad_end] = ("end point not favourable: the black box does not give "
                          f"favorable_class={self.favorable_class_!r} to the path's end point "
                          "once set back to the query's rules, its monotone features held "
                          "from step to step, and made a valid record (or a point of the path "
                          "breaks a declared rule once so held)")
        if k < self._useful_nodes():
            facts = self._graph_facts(self._n_rows_dp)
            small = (f"graph too small for this epsilon: the DP graph kept {k} of "
                     f"{self.n_clusters_} centres as nodes (a node needs a noisy count of "
                     f"{facts.need:.0f}, about {facts.per_cluster:.0f} rows per cluster); "
                     f"epsilon (now {self.epsilon}), n_clusters <= {facts.suggest} or a lower "
                     f"count_threshold would keep more. ")
            failed = ~success
            cause[failed] = np.char.add(small, cause[failed].astype(str))
        cause[success] = ""
        return cause

    def explain(self, X):
        """One recourse path per query, every point holding the constraints from the query.

        A query may visit only the centres admissible relative to itself:
        its immutable features within ``tolerance`` of the query's, its
        increasing features at least, and decreasing ones at most, the
        query's (the query is first clipped to the public bounds). It goes
        to its nearest admissible non-favourable centre (the paper's
        Algorithm 2; its nearest admissible favourable one if there is no
        such centre), then along the shortest path through admissible
        centres to the nearest favourable one. Every point of the path then
        gets the query's immutable values back exactly, and the black box
        checks the end point: one it no longer gives ``favorable_class`` is
        a failure, never a recourse.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)

        Returns
        -------
        RecoursePaths
            ``paths[i]``: the query, then the points of its path (the
            last one is the counterfactual), in input units, or in the
            encoded space of the public schema (``schema_.feature_names_out``:
            one-hot blocks for categorical columns) when fitted on a
            DataFrame; then ``query_records`` and ``counterfactual_records``
            hold the queries and end points in the original columns, units
            and categories. A query the black box already gives the
            favourable class has the path ``[query]``, cost 0 and success
            True; one with no admissible reachable candidate, or whose end
            point the black box does not give the favourable class, has the
            path ``[query]``, cost inf and success False (a NaN
            counterfactual). ``meta["unverified"]`` counts the latter.
            ``reason[i]`` says why query i has no path ("" when it has
            one): "no admissible node", "no admissible favourable node",
            "no path within the distance threshold" (or "under the step
            rules"), "end point not favourable", preceded by "graph too
            small for this epsilon" on a graph of fewer nodes than a useful
            minimum; each with its counts and what would help. It is
            computed from the DP graph, the DP centres, the query and the
            declared rules only (post-processing), at the last tolerance
            tried. ``tolerance[i]`` is the tolerance query i's path needed
            (``tolerance``, or a larger one up to ``max_tolerance``; 0 for
            an already favourable query, NaN with no path). ``path_records`` (fitted
            on a DataFrame) holds every path point in the original columns:
            ``steps(i)``, ``to_frame()`` and ``plot()`` use it.
        """
        r = self._recourse(X)
        return self._result(r.X, self._split_paths(r.X, r.lengths, r.points), r.cost,
                            r.success, {"favorable_class": self.favorable_class_,
                                        "unverified": r.unverified}, queries=X, end=r.end,
                            reason=r.reason, tolerance=r.tolerance)

    def fit_transform(self, X, y=None, **fit_params):
        """:meth:`fit`, then :meth:`transform` of the same rows (in memory only).

        Dask rows are refused before anything is spent: the end points are
        answered in memory (fit on the dask collection, then transform
        in-memory queries).
        """
        refuse_distributed_queries(self, X)
        return self.fit(X, y, **fit_params).transform(X)

    def transform(self, X):
        """The verified counterfactual end points.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_queries, n_features)

        Returns
        -------
        ndarray or DataFrame
            One row per query: its end point (the query itself if already
            favourable), or a row of NaN (missing values) where it has
            none. Fitted on a DataFrame: a DataFrame with its columns, in
            original units and categories (the query's index when ``X`` is
            a DataFrame); integer columns become pandas' nullable
            ``Int64`` when a row is missing. Otherwise an ndarray.
        """
        end = self._recourse(X).end
        if self.schema_.kind != "frame":
            return end
        return self._end_frame(end, X.index if hasattr(X, "index") else None)

    def _end_frame(self, end, index=None):
        """Encoded end points (NaN rows: none) as a DataFrame of the fitted columns."""
        return self.schema_.records(end, *self.bounds_, index=index)

    def alternatives(self, X, n_paths=3):
        """Up to ``n_paths`` recourse paths per query, to distinct counterfactuals.

        The paper's diverse recourse: the r-th result holds each query's
        r-th shortest path to a favourable centre (a path ends at the first
        favourable centre it reaches), through the centres admissible
        relative to the query, as in :meth:`explain`, with the end point
        checked by the black box. Costs a Dijkstra per distinct admissible
        set, so it is slower than :meth:`explain`, whose paths are the
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
        X_in = X
        X, Xc, already, Q01 = self._queries(X)
        # each query at the tolerance its explain() path needed (the last one if none)
        first = self._relaxed_search(Xc, Q01, already)
        found = [[] for _ in range(len(X))]
        for li in np.unique(first.level[~already]):
            mine = np.flatnonzero((first.level == li) & ~already)
            best = self._levels[li].k_best(first.starts[mine], n_paths,
                                           first.admissible[mine], first.candidates[mine])
            for q, paths in zip(mine, best):
                found[q] = paths
        levels = np.asarray(self.tolerance_levels_)[first.level]
        out = []
        for r in range(n_paths):
            got = np.array([len(f) > r for f in found], dtype=bool)
            node_lists = [f[r][1] if len(f) > r else np.empty(0, int) for f in found]
            lengths = np.array([len(nodes) for nodes in node_lists], dtype=int)
            flat = (np.concatenate(node_lists).astype(int) if lengths.sum()
                    else np.empty(0, dtype=int))
            points, verified = self._verified(Xc, lengths, flat)
            got &= verified
            points = points[np.repeat(got, lengths)]
            lengths = np.where(got, lengths, 0)
            cost = np.array([f[r][0] if len(f) > r else np.inf for f in found])
            cost[~got] = np.inf
            success = got.copy()
            if r == 0:
                cost[already] = 0.0
                success |= already
            tolerance = np.where(success, np.where(already, 0.0, levels), np.nan)
            out.append(self._result(X, self._split_paths(X, lengths, points), cost, success,
                                    {"favorable_class": self.favorable_class_, "rank": r + 1},
                                    queries=X_in, tolerance=tolerance))
        return out

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = self.estimator is None
        tags.transformer_tags.preserves_dtype = ["float64"]
        # CSR rows (e.g. one-hot) are densified; the black box gets CSR rows back
        tags.input_tags.sparse = True
        # a missing or infinite value stands for the bounds' midpoint, in fit
        # and in queries; in a private row so does a cell that is not a number
        # (refusing would be a release about the row: doc/privacy.rst)
        tags.input_tags.allow_nan = True
        tags.input_tags.string = True
        return tags
