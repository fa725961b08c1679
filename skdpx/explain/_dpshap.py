"""SHAP with a private background: :func:`dp_background` and :class:`DPShapExplainer`.

Interventional SHAP values of a black box ``f`` at a query ``x`` are the
Shapley values of the game ``v(S) = E_b[f(x_S, b_~S)]``, the expectation
over a *background* distribution of rows ``b``. ``shap`` takes that
distribution from private rows (all of them, a sample, or ``shap.kmeans``
of them) and its answers are exact functions of those rows. Here the
background is released once, with DP, and everything after it is
post-processing.

**The background** (:func:`dp_background`) is a mixture of DP clusters'
marginals (:mod:`skdpx.privacy._kmeans`, whose k-means PrivRecourse shares):
the rows are clipped to the public bounds (declared, or estimated with DP
inside ``epsilon``), one-hot encoded over the declared ``categories`` and
scaled into the unit cube; initial centres are drawn from noisy per-feature
histograms, ``max_iter - 1`` Lloyd iterations release the table of
per-cluster centred sums and counts, and the last release is, at the
centres so found, each cluster's count and one histogram per original
column (a numeric column's value at its lower bound, ``N_BINS`` = 16 equal
bins between its bounds, its value at its upper bound; a categorical
column's declared levels). A row adds 1 to its cluster's count
and to one cell of each of the ``g`` columns: L2 sensitivity ``sqrt(g +
1)`` under add-or-remove one row (the default relation), ``sqrt(2 (g +
1))`` under replace-one. The ``max_iter + 1`` Gaussian releases at one
noise multiplier, the DP row count and the DP bounds (when not declared)
compose to (``epsilon``, ``delta``) in the ledger, committed before any row
is read. The privacy unit is one row of ``X``.

**Records** (post-processing). Clusters whose noisy count is below
``COUNT_THRESHOLD`` (3) noise stds are left out; their sum, as one more
cluster, is kept when it reaches 3 stds of its own noise (``sqrt(r)``
times, for ``r`` clusters), or, when no cluster is kept, whenever it is
positive (with a ``UtilityWarning``: the background is then the pooled
histograms, mostly noise; ``std`` says how much). Only when every noisy
count and their sum are <= 0 does the fit raise, after its spend. About ``n_records`` records are drawn, in
proportion to the kept counts (at least one a cluster), each weighted by
its share of its cluster's noisy count. A record's columns are drawn from
its cluster's histograms (cells below ``CELL_THRESHOLD`` = 2 noise stds at
0), independently across columns, by stratified sampling within the
cluster (a Latin hypercube: record ``r`` of ``m`` takes the quantile
``(rank + u) / m`` of each column, in an order of that column's own), a
numeric value uniform within its bin (or at its bound), a categorical one a declared
level.
The uniforms come from the privacy core's auxiliary generator (not privacy
noise) and are kept with the background, for the bootstrap of ``std``.

Why not the centres: a centre is its cluster's *mean*, a record few rows
resemble. On Adult, 92% of the rows have no capital gain but a centre holds
its cluster's mean gain, and a black box answers a mean gain otherwise
than it answers the mixture of zeros and large gains; the categorical
columns' largest level drops minorities. With 50 noiseless centres the
SHAP values were off by 80% (relative to Kernel SHAP on 100 private rows,
``benchmarks/dpshap_adult.py``); with the noiseless clusters' marginals
about as far as another 100 private rows are (the user guide has the
figures). The cost: the within-cluster dependence between columns is not kept
(the product of the cluster's marginals), and a background of ``n_records``
records costs ``n_records`` black-box rows per coalition and query.

**The SHAP values** (:class:`DPShapExplainer`) are Kernel SHAP over the
*original* columns (a categorical column is one player, its one-hot levels
move together): all ``2^g - 2`` coalitions when that is at most
``n_coalitions`` (exact Shapley values of the game above), else
``n_coalitions`` coalitions drawn in complementary pairs from the Shapley
kernel's distribution of sizes, solved by the kernel's weighted least
squares with the efficiency constraint ``sum(values) = f(x) -
base_value``. The game is linear in the background's weights, so for each
background point ``b`` the values ``phi_b`` of the game ``f(x_S, b_~S)``
are computed once (all coalitions times all points in one batch of rows
for the black box, no loop over points) and ``values = sum_b w_b phi_b``,
``base_value = sum_b w_b f(b)``.

**Uncertainty** (``std``, post-processing of DP outputs and public facts):
the difference to the SHAP values with the *noiseless* background (the
background this procedure makes from the last release without its noise:
every non-empty cluster, no cell threshold, the records drawn with the same
uniforms), to first order. The counts' noise (std
``sigma_c`` per kept cluster) moves the weights: with ``phi_c`` the mean
SHAP values of cluster ``c``'s records and ``C`` the kept counts' sum,
``d values / d count_c = (phi_c - values) / C``, exactly propagated:
``var_count = sum_c (sigma_c (phi_c - values) / C)^2``. The histograms'
noise goes through the records and the black box: a parametric bootstrap
draws ``n_std_draws`` noisy copies of the released cells (std ``sigma_c``
each), draws the records again with the *same* uniforms, recomputes each
``phi_c`` with at most 256 coalitions common to the released and the drawn
records, and ``var_cells = sum_c (C_c / C)^2 mean_draws((phi_c' -
phi_c)^2)`` (clusters' noises are independent). ``std = sqrt(var_count +
var_cells)``. ``+- 1.645 std`` covered the noiseless answer 96.1% of the
time on a synthetic problem (tests/test_dpshap.py; 14.3% with the counts'
part alone: wider than needed there, median ``|diff| / std`` 0.55 against
a normal's 0.67). What it leaves out: the noise of the earlier Lloyd iterations
(which moved rows between clusters, so which summary was made), the gap
between the clusters' marginals and the full background (the summary's own
error, not noise), and the sampling of coalitions when they are not
enumerated.

**Where the rows are.** ``fit`` takes rows in memory, a dask array or
DataFrame, or a Spark DataFrame: every release is a sum over the rows (the
DP bounds' histogram, the initial histograms, the Lloyd tables, the
clusters' marginals), computed by :func:`~skdpx.utils._engine.partition_sum`
in the workers or executors with only the totals reaching the driver;
everything after is post-processing there. Queries (``explain``) are
public points, answered in memory.

**What it protects.** The rows of ``X`` given to ``fit`` (the background
rows), not the black box's training rows: the guarantee holds when the
black box does not depend on the background rows (trained on other rows,
or itself DP on the same ledger), as for :class:`DPLimeExplainer`.
"""

import math
import warnings
from numbers import Integral

import numpy as np
from scipy.stats import qmc
from sklearn.utils.validation import check_is_fitted

from .._sklearn_compat import HasMethods, Interval, StrOptions
from ..base import DPCapabilities, DPEstimator, FitData
from ..privacy import (BUDGET_PARAMETER_CONSTRAINTS, EstimatorLedger, NonPrivateDpEvent,
                       SpendPlan, UtilityWarning, calibrate_noise, gaussian_event,
                       noise_source)
from ..exceptions import PrivacyLeakWarning
from ..privacy._kmeans import dp_cluster_marginals, marginals_sensitivity
from ..results import FeatureAttribution
from ..utils._blackbox import BlackBoxOutputError, check_output, output_range
from ..utils._engine import refuse_distributed_queries
from ..utils._stacklevel import _outside_stacklevel
from ..utils._tables import validate_table
from ..utils._validation import UnitCubeRows

__all__ = ["DPBackground", "DPShapExplainer", "dp_background"]

#: the black box is asked about at most this many rows at once
_ROW_BLOCK = 1 << 17

#: the bootstrap of ``std`` uses at most this many coalitions (common to the released
#: and the drawn centres, so that the coalitions' sampling cancels in their difference)
_STD_COALITIONS = 256


class DPBackground:
    """A weighted DP summary of private rows: a SHAP background.

    Made by :func:`dp_background` (and held by a fitted
    :class:`DPShapExplainer` as ``background_``). Everything here is a DP
    output or post-processing of one.

    Attributes
    ----------
    data : DataFrame or ndarray of shape (n_points, n_features)
        The records, of the kind the rows came in (a DataFrame with the same
        columns and dtypes when a DataFrame came in): ``n_points`` is about
        ``n_records``, drawn from the kept clusters' released marginals.
    weights : ndarray of shape (n_points,)
        Each record's share of its cluster's noisy count (sum to 1).
    counts : ndarray of shape (n_points,)
        Each record's part of its cluster's noisy count (the cluster's count
        over its number of records).
    cluster : ndarray of int of shape (n_points,)
        The record's cluster (an index into ``cluster_counts``).
    cluster_counts : ndarray of shape (n_clusters,)
        The kept clusters' noisy counts (clusters whose noisy count is below
        ``COUNT_THRESHOLD`` noise standard deviations are left out).
    encoded : ndarray of shape (n_points, n_encoded)
        The records in encoded units (one-hot blocks for categorical columns).
    count_std : float
        The noise's standard deviation of each released count and histogram
        cell.
    cluster_std : ndarray of shape (n_clusters,)
        The noise's standard deviation of each kept cluster's count and cells:
        ``count_std``, and ``count_std * sqrt(r)`` for the last one when it
        is the sum of the ``r`` clusters left out (kept when that sum reaches
        ``COUNT_THRESHOLD`` times its noise std).
    feature_names : list of str
        The input's columns.
    meta : dict
        ``epsilon_spent``, ``delta_spent``, ``noise_multiplier``,
        ``sensitivity`` (of the last release, the marginals' table),
        ``max_iter``, ``n_rows`` (the DP row count), ``relation``.
    """

    def __init__(self, *, data, weights, counts, encoded, count_std, feature_names, lower,
                 upper, meta, cluster=None, cluster_counts=None, cluster_std=None,
                 source=None):
        self.data = data
        self.weights = weights
        self.counts = counts
        self.encoded = encoded
        self.count_std = float(count_std)
        self.feature_names = list(feature_names)
        self.lower, self.upper = lower, upper
        self.meta = dict(meta)
        n = len(weights)
        self.cluster = np.arange(n) if cluster is None else np.asarray(cluster)
        self.cluster_counts = (np.asarray(counts, dtype=float) if cluster_counts is None
                               else np.asarray(cluster_counts, dtype=float))
        self.cluster_std = (np.full(len(self.cluster_counts), self.count_std)
                            if cluster_std is None else np.asarray(cluster_std, dtype=float))
        # what the records were drawn from (released cells, public layout, allocation and
        # the post-processing uniforms): the std's bootstrap draws them again
        self._source = source

    def __len__(self):
        return len(self.weights)

    def __repr__(self):
        return (f"DPBackground(n_points={len(self)}, n_features={len(self.feature_names)}, "
                f"epsilon_spent={self.meta['epsilon_spent']:g})")

    def to_frame(self):
        """The records with their ``weight``, noisy ``count`` and ``cluster`` as three
        more columns (a pandas DataFrame; ``attrs["meta"]`` holds ``meta``)."""
        import pandas as pd

        data = self.data
        frame = (data.copy() if isinstance(data, pd.DataFrame)
                 else pd.DataFrame(np.asarray(data), columns=self.feature_names))
        clash = {"weight", "count", "cluster"} & set(map(str, frame.columns))
        if clash:
            raise ValueError(f"columns clash with the added ones: {sorted(clash)}")
        frame["weight"] = self.weights
        frame["count"] = self.counts
        frame["cluster"] = self.cluster
        frame.attrs["meta"] = dict(self.meta)
        return frame

    def to_shap(self):
        """The background as ``shap.kmeans`` returns one: a weighted
        ``shap.utils._legacy.DenseData`` (needs the ``shap`` extra).

        ``shap.KernelExplainer(f, background.to_shap())`` then uses these
        points and weights; ``f`` receives numpy arrays of the columns, as
        with ``shap.kmeans`` (wrap a model that needs a DataFrame).
        """
        try:
            from shap.utils._legacy import DenseData
        except ImportError as exc:  # pragma: no cover - depends on the extra
            raise ImportError("to_shap() needs shap: pip install 'skdpx[shap]'") from exc
        values = np.asarray(self.data.values if hasattr(self.data, "values") else self.data)
        return DenseData(values, list(self.feature_names), None, self.weights.copy())


# ---------------------------------------------------------------------------
# Kernel SHAP over column groups (post-processing: public rows and DP outputs)
# ---------------------------------------------------------------------------
def shapley_design(n_groups, n_coalitions, uniforms=None):
    """The coalitions and the linear map of Kernel SHAP over ``n_groups`` players.

    Returns ``(masks, M, m)``: ``masks`` (n, g) bool, the coalitions asked
    about (without the empty and the full one); SHAP values are ``M @ (v(S)
    - v(empty)) + m * (v(full) - v(empty))``, the Shapley kernel's weighted
    least squares under the efficiency constraint. All ``2^g - 2``
    coalitions when that is at most ``n_coalitions`` (exact Shapley values),
    else ``n_coalitions`` (rounded to even) drawn in complementary pairs,
    sizes from the kernel's distribution. The draws are made from
    ``uniforms``, an array of shape ``(n_coalitions // 2, n_groups + 1)`` of
    uniforms on [0, 1) (:func:`design_shape`; drawn by the caller from the
    privacy core's auxiliary generator: not privacy noise), column 0 for
    the sizes (by the inverse distribution function), the others for the
    order of the players.
    """
    g = int(n_groups)
    if g == 1:
        return np.zeros((0, 1), dtype=bool), np.zeros((1, 0)), np.ones(1)
    if 2.0 ** g - 2 <= n_coalitions:
        ints = np.arange(1, 2 ** g - 1)
        masks = ((ints[:, None] >> np.arange(g)) & 1).astype(bool)
        s = masks.sum(axis=1)
        comb = np.array([math.comb(g, int(k)) for k in range(g + 1)], dtype=float)
        kernel = (g - 1) / (comb[s] * s * (g - s))
    else:
        u = np.asarray(uniforms, dtype=float)
        if u.shape != design_shape(g, n_coalitions):
            raise ValueError(f"uniforms must have shape {design_shape(g, n_coalitions)}, got "
                             f"{u.shape}.")
        sizes = np.arange(1, g)
        p = 1.0 / (sizes * (g - sizes))
        cdf = np.cumsum(p / p.sum())
        s = sizes[np.minimum(np.searchsorted(cdf, u[:, 0], side="right"), g - 2)]
        ranks = u[:, 1:].argsort(axis=1).argsort(axis=1)
        masks = ranks < s[:, None]
        masks = np.vstack([masks, ~masks])
        kernel = np.ones(len(masks))
    Z = masks.astype(float)
    A = Z.T @ (kernel[:, None] * Z)
    A_inv = np.linalg.pinv(A)
    B = A_inv @ (Z.T * kernel)  # (g, n)
    u = A_inv.sum(axis=1)
    c = u.sum()
    M = B - np.outer(u, B.sum(axis=0)) / c
    return masks, M, u / c



def design_shape(n_groups, n_coalitions):
    """The shape of the uniforms :func:`shapley_design` needs: (0, g + 1) when it
    enumerates every coalition, else ``(n_coalitions // 2, g + 1)``."""
    g = int(n_groups)
    if g == 1 or 2.0 ** g - 2 <= n_coalitions:
        return (0, g + 1)
    return (max(1, int(n_coalitions) // 2), g + 1)

def _point_values(f, Zq, Zb, masks, M, m, columns_of_group, f_query, f_background):
    """``phi_b`` for every query and background point: (n_queries, n_points, g).

    The black box ``f`` (encoded rows -> outputs) is asked about every
    (query, coalition, background point) record, in blocks of rows: the
    query's columns in the coalition, the point's elsewhere.
    """
    nq, d = Zq.shape
    nb = len(Zb)
    n = len(masks)
    enc = np.zeros((n, d), dtype=bool)
    for j, cols in enumerate(columns_of_group):  # a loop over columns
        enc[:, cols] = masks[:, [j]]
    V = np.empty((nq, n, nb))
    pairs = nq * n
    step = max(1, _ROW_BLOCK // max(nb, 1))
    for start in range(0, pairs, step):
        idx = np.arange(start, min(start + step, pairs))
        qi, si = np.divmod(idx, n)
        rows = np.where(enc[si][:, None, :], Zq[qi][:, None, :], Zb[None, :, :])
        V[qi, si] = f(rows.reshape(-1, d)).reshape(len(idx), nb)
    y = V - f_background[None, None, :]  # (nq, n, nb)
    delta = f_query[:, None] - f_background[None, :]  # (nq, nb)
    return np.einsum("gn,qnb->qbg", M, y) + delta[:, :, None] * m[None, None, :]


# ---------------------------------------------------------------------------
# The background's records: post-processing of the released per-cluster marginals
# ---------------------------------------------------------------------------
#: bins of a numeric column's per-cluster histogram (equal, within its public bounds; two
#: more cells hold the values at each bound: on Adult, 92% of the rows have a capital gain
#: of exactly 0, which a bin [0, 6250) spread uniformly would turn into gains of up to 6250)
N_BINS = 16

#: clusters whose noisy count is below this many noise standard deviations are left out
#: (most clusters with no row get none: 0.13% of them pass; with the old rule "count > 0",
#: half of the empty clusters joined the background as noise-made records at the cube's
#: corners, measured on Adult: 11-14 of 33-35 points)
COUNT_THRESHOLD = 3.0

#: histogram cells below this many noise standard deviations count as 0 (as
#: skdpx.inspection's marginals: clipping at 0 alone leaves spurious mass in every
#: empty cell)
CELL_THRESHOLD = 2.0


def _layout(schema):
    """One entry per original column, from the public schema: ``(columns, N_BINS)``
    for a numeric column, ``(columns, None)`` for a categorical one-hot block."""
    return [(np.asarray(idx), None if schema.categorical[idx].all() else N_BINS)
            for _, idx in schema.groups]


def _allocation(counts, n_records):
    """Records per cluster, in proportion to the (noisy) counts, at least one each."""
    return np.maximum(1, np.rint(n_records * counts / counts.sum())).astype(int)


def _records(cells, sigma, layout, m, uniforms, lower, upper):
    """Encoded records drawn from clusters' column histograms (post-processing).

    ``cells`` (k, n_cells): the clusters' released histograms (the count
    column left out), ``sigma`` (scalar or (k,)) their noise std; ``m``
    (k,): records per cluster; ``uniforms`` (k,
    max(m), g, 3): uniforms on [0, 1) (an order key, a place in the stratum,
    a place in the bin). Cells below ``CELL_THRESHOLD * sigma`` count as 0;
    a cluster left with no mass in a column takes the column's histogram
    over all the clusters (and the column's public domain if that is empty
    too). Within a cluster, each column's values are drawn by stratified
    sampling (record ``r`` of ``m`` takes the quantile ``(rank + u) / m``,
    the ranks in an order of its own per column: a Latin hypercube of the
    product of the cluster's marginals); a numeric value is uniform within
    its bin.
    """
    k = len(m)
    sigma = np.broadcast_to(np.asarray(sigma, dtype=float), (k,))[:, None]
    cluster = np.repeat(np.arange(k), m)
    slot = np.arange(cluster.size) - np.repeat(np.cumsum(m) - m, m)
    U = uniforms[cluster, slot]  # (n, g, 3)
    out = np.zeros((cluster.size, len(lower)))
    start = 0
    for j, (columns, n_bins) in enumerate(layout):  # a loop over columns
        width = len(columns) if n_bins is None else n_bins + 2
        H = np.asarray(cells[:, start:start + width], dtype=float)
        start += width
        H = np.where(H >= CELL_THRESHOLD * sigma, np.clip(H, 0.0, None), 0.0)  # per row
        empty = ~(H.sum(axis=1) > 0)
        if empty.any():
            pooled = H.sum(axis=0)
            H[empty] = pooled if pooled.sum() > 0 else 1.0
        cum = np.cumsum(H / H.sum(axis=1, keepdims=True), axis=1)
        # the rank of each record within its cluster, in the order of the keys U[:, j, 0]
        order = np.lexsort((U[:, j, 0], cluster))
        rank = np.empty(cluster.size)
        rank[order] = slot
        u = (rank + U[:, j, 1]) / m[cluster]
        b = np.minimum((u[:, None] >= cum[cluster]).sum(axis=1), width - 1)
        if n_bins is None:
            out[:, columns] = np.eye(width)[b]
        else:  # cell 0: the lower bound, cells 1..n_bins: bins, the last: the upper bound
            c = columns[0]
            t = np.clip((b - 1 + U[:, j, 2]) / n_bins, 0.0, 1.0)
            t = np.where(b == 0, 0.0, np.where(b == n_bins + 1, 1.0, t))
            out[:, c] = lower[c] + t * (upper[c] - lower[c])
    return out



class _DPBackgroundFit(DPEstimator):
    """The DP release of a background (the machinery of :func:`dp_background`)."""

    _parameter_constraints = {
        **BUDGET_PARAMETER_CONSTRAINTS,
        "n_points": [Interval(Integral, 1, None, closed="left")],
        "n_records": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "categories": [dict, None],
    }

    #: the ledger's label prefix
    _prefix = "dp_background: "

    #: fit takes Dask and Spark data (skdpx.utils._tables.validate_table): the DP
    #: bounds, the k-means tables and the clusters' marginals are sums over the rows'
    #: partitions (skdpx.privacy._kmeans, FitBounds); everything after is post-processing
    _accepts_distributed = True

    def __init__(self, n_points=50, *, n_records=100, max_iter=3, epsilon=1.0, delta=1e-6,
                 bounds=None, categories=None, accountant=None, random_state=None):
        self.n_points = n_points
        self.n_records = n_records
        self.max_iter = max_iter
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.categories = categories
        self.accountant = accountant
        self.random_state = random_state

    def _new_ledger(self):
        return EstimatorLedger(self.epsilon, self.delta, self.accountant, prefix=self._prefix)

    def _n_points(self):
        return self.n_points

    def _validate_fit(self, X, y):
        Z = validate_table(self, X, reset=True, categories=self.categories)
        self._require_delta("the background's Gaussian releases")
        return FitData(Z, extra=self._validate_extra())

    def _validate_extra(self):
        return {}

    def _plan_spend(self, data, relation, bounds, count):
        """The ``max_iter + 1`` Gaussian releases (initial histograms, ``max_iter - 1``
        Lloyd tables, the clusters' marginals), from public facts."""
        d = data.X.shape[1]
        g = len(self.schema_.groups)
        releases = self.max_iter + 1
        k = self._n_points()
        sensitivity = marginals_sensitivity(g, relation)
        what = (f"DP background: {d} initial histograms, {self.max_iter - 1} Lloyd tables and "
                f"the marginals of {g} columns in {k} clusters ({releases} Gaussian releases)")
        if math.isinf(self.epsilon):
            return SpendPlan(NonPrivateDpEvent(), f"non-private {what} (epsilon=inf)",
                             relation=relation, noise_multiplier=0.0, sensitivity=sensitivity)
        z = calibrate_noise(self.epsilon, self.delta, steps=releases,
                            prior=count.prior(bounds.event))
        sigma = z * sensitivity
        if count.n < COUNT_THRESHOLD * k * sigma:  # the DP count and public facts only
            warnings.warn(
                f"{type(self).__name__}: about {count.n:.0f} rows (a DP count) in {k} clusters "
                f"is about {count.n / k:.0f} rows a cluster, against a noise std of "
                f"{sigma:.0f} on each cluster's count and histogram cells at epsilon="
                f"{self.epsilon}; a cluster needs a count of {COUNT_THRESHOLD:g} noise stds "
                "to enter the background: most of it will be left out or noise. Use fewer "
                "points, more rows or a larger epsilon. Said before the clustering's budget "
                "is spent.", UtilityWarning, stacklevel=_outside_stacklevel())
        return SpendPlan(gaussian_event(z, steps=releases), f"{what} (Gaussian)",
                         relation=relation, noise_multiplier=z, sensitivity=sensitivity)

    def _private_fit(self, data, plan, commitment, noise):
        X = data.X
        lower, upper = plan.bounds.release(X, noise=noise, commitment=commitment)
        self.bounds_ = (lower, upper)
        layout = _layout(self.schema_)
        _, table = dp_cluster_marginals(X, self._n_points(), self.max_iter,
                                        plan.noise_multiplier, layout, relation=plan.relation,
                                        noise=noise, commitment=commitment,
                                        prepare=UnitCubeRows(lower, upper))
        self.noise_multiplier_ = plan.noise_multiplier
        self.sensitivity_ = plan.sensitivity
        # the records' draws: post-processing randomness, not privacy noise
        uniforms = noise.auxiliary().random((len(table), self.n_records, len(layout), 3))
        self.background_ = self._background(table, plan.noise_multiplier * plan.sensitivity,
                                            uniforms, plan.relation)

    def _background(self, table, sigma, uniforms, relation):
        """The :class:`DPBackground` of the released table (per cluster: the count, then
        the columns' histograms), from its kept clusters (post-processing)."""
        lower, upper = self.bounds_
        counts = table[:, 0]
        keep = counts >= COUNT_THRESHOLD * sigma if sigma > 0 else counts > 0
        stds = np.full(int(keep.sum()), float(sigma))
        rest = np.flatnonzero(~keep)
        cells, picked = table[keep, 1:], np.flatnonzero(keep)
        if len(rest):
            # the clusters left out, summed into one (post-processing): the rows of small
            # clusters keep their weight when the sum stands out of its noise; when no
            # cluster does, the sum is the background if it is positive at all (said below)
            rest_std = sigma * math.sqrt(len(rest))
            total = table[rest, 0].sum()
            if total > 0 and (total >= COUNT_THRESHOLD * rest_std or not keep.any()):
                cells = np.vstack([cells, table[rest, 1:].sum(axis=0)])
                stds = np.append(stds, rest_std)
                picked = np.append(picked, rest[0])
                if total < COUNT_THRESHOLD * rest_std:  # the DP counts only
                    warnings.warn(
                        f"{type(self).__name__}: no cluster's noisy count reaches "
                        f"{COUNT_THRESHOLD:g} times its noise std ({sigma:.3g}), nor does their "
                        f"sum ({total:.0f}, noise std {rest_std:.3g}): the background is the "
                        "pooled histograms of all the clusters, mostly noise (its std says how "
                        "much). Use more rows, fewer points or a larger epsilon.",
                        UtilityWarning, stacklevel=_outside_stacklevel())
        if not len(stds):  # the DP counts only
            raise ValueError(
                f"{type(self).__name__}: every cluster's noisy count, and their sum, is <= 0 "
                f"(noise std {sigma:.3g} each): no background can be weighed; the budget was "
                "spent. Use more rows, fewer points or a larger epsilon.")
        counts = np.append(counts[keep], table[rest, 0].sum())[:len(stds)]
        m = _allocation(counts, self.n_records)
        layout = _layout(self.schema_)
        uniforms = uniforms[picked][:, :m.max()]
        encoded = _records(cells, stds, layout, m, uniforms, lower, upper)
        schema = self.schema_
        data = schema.decode(encoded, lower, upper)
        if schema.kind == "sparse":
            data = data.toarray()
        cluster = np.repeat(np.arange(len(m)), m)
        per_record = (counts / m)[cluster]
        names = [c for c, _ in schema.groups]
        noise_multiplier = self.noise_multiplier_
        # the spend and the DP row count are set by fit, once the ledger holds them
        meta = {"epsilon_spent": np.nan, "delta_spent": np.nan,
                "noise_multiplier": float(noise_multiplier),
                "sensitivity": float(self.sensitivity_), "max_iter": int(self.max_iter),
                "n_rows": np.nan, "relation": relation}
        return DPBackground(data=data, weights=per_record / counts.sum(), counts=per_record,
                            encoded=encoded, count_std=sigma, feature_names=names,
                            lower=lower, upper=upper, meta=meta, cluster=cluster,
                            cluster_counts=counts, cluster_std=stds,
                            source={"cells": cells, "layout": layout, "m": m,
                                    "uniforms": uniforms})

    def fit(self, X, y=None):
        super().fit(X, y)
        # the spend is known only once the fit's ledger holds it
        bg = self.background_
        bg.meta.update(epsilon_spent=self.epsilon_spent_, delta_spent=self.delta_spent_,
                       n_rows=float(self.n_rows_))
        return self


def dp_background(X, n_points=50, *, n_records=100, epsilon=1.0, delta=1e-6, bounds=None,
                  categories=None, accountant=None, random_state=None, max_iter=3):
    """A weighted DP summary of private rows, usable as a SHAP background.

    DP k-means of the rows of ``X`` (noisy Lloyd tables, through the privacy
    core) into ``n_points`` clusters, then one release of each cluster's
    count and per-column histograms; about ``n_records`` records the black
    box can score are drawn from the kept clusters' marginals (post-processing),
    each weighted by its share of its cluster's noisy count. Spends
    (``epsilon``, ``delta``) on ``accountant``, committed before any row is
    read. The privacy unit is one row of ``X``; the neighbouring relation is
    the ledger's (add-or-remove one row by default). See
    :mod:`skdpx.explain._dpshap` and the user guide's :ref:`shap` for the
    sensitivity and the handling of categorical columns.

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_samples, n_features)
        The private rows.
    n_points : int, default=50
        The number of clusters (clusters whose noisy count is below
        ``COUNT_THRESHOLD`` = 3 noise stds are left out).
    n_records : int, default=100
        About this many records are drawn, in proportion to the kept
        clusters' counts (at least one a cluster): the background's size,
        which the cost of each SHAP value is proportional to.
    epsilon : float, default=1.0
        ``np.inf``: noiseless clusters and marginals (the non-private baseline).
    delta : float, default=1e-6
    bounds : tuple, dict or None, default=None
        Public bounds (``(lower, upper)``, or ``{column: (lower, upper)}``
        for a DataFrame's numeric columns); None estimates them with DP
        inside ``epsilon`` (with a ``PrivacyLeakWarning``).
    categories : dict or None, default=None
        ``{column: [levels...]}``: the declared levels of the categorical
        columns.
    accountant : PrivacyLedger, BudgetAccountant or None, default=None
    random_state : int, RandomState, Generator or None, default=None
        None: secure noise; a seed makes the release reproducible (and not
        private), with a ``PrivacyLeakWarning``.
    max_iter : int, default=3
        Releases after the initial histograms: ``max_iter - 1`` Lloyd tables,
        then the clusters' marginals.

    Returns
    -------
    background : DPBackground
        ``data`` (records), ``weights`` (sum to 1), ``counts`` (noisy),
        ``to_frame()``, ``to_shap()`` (for ``shap.KernelExplainer``); the
        spend in ``meta``.

    References
    ----------
    .. [1] S. M. Lundberg and S.-I. Lee, "A unified approach to interpreting
       model predictions", NeurIPS 2017.
    .. [2] D. Su, J. Cao, N. Li, E. Bertino, H. Jin, "Differentially private
       k-means clustering", CODASPY 2016.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpx.explain import dp_background
    >>> from skdpx.privacy import PrivacyLedger
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(0.2, 0.05, (3000, 2)), rng.normal(0.8, 0.05, (3000, 2))])
    >>> ledger = PrivacyLedger(epsilon=1.0, delta=1e-6)
    >>> bg = dp_background(X, 2, n_records=20, bounds=(0, 1), accountant=ledger,
    ...                    random_state=0)  # a seed: reproducible, not private
    >>> len(bg), len(bg.cluster_counts), round(float(bg.weights.sum()), 6)
    (20, 2, 1.0)
    >>> means = sorted(bg.data[bg.cluster == c, 0].mean() for c in range(2))
    >>> bool(abs(means[0] - 0.2) < 0.05 and abs(means[1] - 0.8) < 0.05)
    True
    >>> round(ledger.epsilon_spent, 2)
    1.0
    """
    release = _DPBackgroundFit(n_points, n_records=n_records, max_iter=max_iter,
                               epsilon=epsilon, delta=delta,
                               bounds=bounds, categories=categories, accountant=accountant,
                               random_state=random_state).fit(X)
    return release.background_


class DPShapExplainer(_DPBackgroundFit):
    """SHAP values of any black box, with a DP background.

    ``fit(X)`` releases a weighted DP summary of the private rows ``X``
    (:func:`dp_background`: DP k-means through the privacy core, the only
    spend); ``explain(X_query)`` computes Kernel SHAP values over the
    original columns with that background, post-processing that spends
    nothing. The privacy unit is one row of the ``X`` given to ``fit`` (the
    background rows), under the ledger's neighbouring relation
    (add-or-remove one row by default). It does **not** protect the black
    box's training rows: the guarantee holds when the black box does not
    depend on the background rows (trained on other rows, or itself DP and
    accounted on the same ledger), as for :class:`DPLimeExplainer`.

    Parameters
    ----------
    estimator : fitted estimator
        The black box: a classifier (``predict_proba`` or
        ``decision_function``) or a regressor (``predict``).
    n_background : int, default=50
        The clusters of the DP background (:func:`dp_background`'s
        ``n_points``).
    n_records : int, default=100
        About this many records are drawn from the clusters' released
        marginals: the background's size (the cost per query grows with it).
    response_method : {"auto", "predict_proba", "decision_function", "predict"}, default="auto"
        As scikit-learn's: a classifier's ``predict_proba``, else its
        ``decision_function``; a regressor's ``predict``. A binary
        classifier is explained for its positive class.
    target_class : label or None, default=None
        The class explained for a multiclass classifier (required there).
    output_bounds : (float, float) or None, default=None
        A declared range the outputs are clipped to (decision values,
        regression outputs); optional, nothing is calibrated on it.
    n_coalitions : int, default=2048
        All ``2^g - 2`` coalitions of the ``g`` original columns when that
        is at most this (exact Shapley values of the background's game),
        else this many, drawn in complementary pairs (Kernel SHAP).
    n_std_draws : int, default=8
        Parametric-bootstrap draws of the clusters' histograms for ``std``,
        each with at most 256 coalitions (0: the counts' share of ``std``
        only, which misses most of it).
    max_iter : int, default=3
        Releases of the background after its initial histograms (``max_iter
        - 1`` Lloyd tables, then the clusters' marginals).
    epsilon : float, default=1.0
        ``np.inf``: noiseless background (the non-private baseline).
    delta : float, default=1e-6
    bounds : tuple, dict or None, default=None
        Public bounds of the rows (None: estimated with DP inside
        ``epsilon``, with a ``PrivacyLeakWarning``).
    categories : dict or None, default=None
        Declared levels of the categorical columns.
    accountant : PrivacyLedger, BudgetAccountant or None, default=None
    random_state : int, RandomState, Generator or None, default=None
        None: secure noise for the background and fresh entropy for the
        coalitions and draws of ``explain``; an int makes both reproducible
        (the background then not private, with a ``PrivacyLeakWarning``).

    Attributes
    ----------
    background_ : DPBackground
        The released background.
    bounds_ : tuple of ndarray
        The bounds used (declared or DP), in encoded units.
    noise_multiplier_ : float
        Of each of the background's ``max_iter + 1`` Gaussian releases.
    sensitivity_ : float
        Of the last release (the clusters' counts and histograms).
    schema_, n_features_in_, feature_names_in_, epsilon_spent_, delta_spent_

    References
    ----------
    .. [1] S. M. Lundberg and S.-I. Lee, "A unified approach to interpreting
       model predictions", NeurIPS 2017.
    .. [2] D. Janzing, L. Minorics, P. Bloebaum, "Feature relevance
       quantification in explainable AI: a causal problem", AISTATS 2020.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from skdpx.explain import DPShapExplainer
    >>> from skdpx.privacy import PrivacyLedger
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 1, (6000, 3))
    >>> model = LinearRegression().fit(X[:3000], X[:3000] @ [1.0, -2.0, 0.0])
    >>> ledger = PrivacyLedger(epsilon=1.0, delta=1e-6)
    >>> explainer = DPShapExplainer(model, n_background=10, bounds=(0, 1),
    ...                             accountant=ledger).fit(X[3000:])
    >>> fa = explainer.explain([[1.0, 1.0, 1.0]])
    >>> # w_j (1 - mean of x_j in the background): about 0.5 and -1.0, give or take
    >>> # the noise (secure: each run differs; std about 0.06; 4 runs in 760 were
    >>> # beyond 0.2 of it or had a std above 0.1)
    >>> bool(np.allclose(fa.values[0], [0.5, -1.0, 0.0], atol=0.3))
    True
    >>> bool((fa.std < 0.15).all())
    True
    >>> round(float(fa.values.sum() + fa.base_value[0]), 6)  # additivity: f at the query
    -1.0
    >>> round(ledger.epsilon_spent, 2), fa.epsilon.tolist()  # explaining spends nothing
    (1.0, [0.0])
    """

    #: its fit commits its only spend (explain is post-processing): priced exactly
    _dp_capabilities = DPCapabilities(
        exact_price=True,
        no_default_scoring="SHAP values have no DP score of their own; pass a scoring.")

    _parameter_constraints = {
        **_DPBackgroundFit._parameter_constraints,
        "estimator": [HasMethods(["predict"]), HasMethods(["predict_proba"]),
                      HasMethods(["decision_function"])],
        "n_background": [Interval(Integral, 1, None, closed="left")],
        "response_method": [StrOptions({"auto", "predict_proba", "decision_function",
                                        "predict"})],
        "target_class": "no_validation",
        "output_bounds": ["array-like", None],
        "n_coalitions": [Interval(Integral, 2, None, closed="left")],
        "n_std_draws": [Interval(Integral, 0, None, closed="left")],
    }
    _parameter_constraints.pop("n_points")

    _prefix = "DPShapExplainer: "

    def __init__(self, estimator=None, *, n_background=50, n_records=100,
                 response_method="auto", target_class=None, output_bounds=None,
                 n_coalitions=2048, n_std_draws=8, max_iter=3, epsilon=1.0, delta=1e-6,
                 bounds=None, categories=None, accountant=None, random_state=None):
        self.estimator = estimator
        self.n_background = n_background
        self.n_records = n_records
        self.response_method = response_method
        self.target_class = target_class
        self.output_bounds = output_bounds
        self.n_coalitions = n_coalitions
        self.n_std_draws = n_std_draws
        self.max_iter = max_iter
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.categories = categories
        self.accountant = accountant
        self.random_state = random_state

    def _new_ledger(self):
        return EstimatorLedger.of(self, self.accountant)

    def _n_points(self):
        return self.n_background

    def fit(self, X, y=None):
        """Release the DP background of the rows ``X`` (the only spend).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            The private background rows. The black box is checked on public
            probe points first (a failure spends nothing).
        y : ignored

        Returns
        -------
        self
        """
        return super().fit(X, y)

    # ------------------------------------------------------------ the black box
    def _validate_extra(self):
        if self.estimator is None:
            raise ValueError("DPShapExplainer needs a fitted black box as estimator. Nothing "
                             "was spent.")
        method, (lo, hi) = output_range(self.estimator, self.response_method,
                                        self.output_bounds, required=False)
        self._method, self._range = method, (lo, hi)
        self._column = None
        classes = getattr(self.estimator, "classes_", None)
        if method != "predict" and classes is None:
            raise ValueError(f"{type(self.estimator).__name__} has no classes_: a "
                             "classifier's outputs are read per class. Nothing was spent.")
        if method != "predict":
            classes = list(np.asarray(classes).tolist())
            if len(classes) > 2:
                if self.target_class not in classes:
                    raise ValueError(f"target_class must be one of the classes {classes} for "
                                     f"a multiclass black box, got {self.target_class!r}. "
                                     "Nothing was spent.")
                self._column = classes.index(self.target_class)
            elif self.target_class is not None and self.target_class != classes[-1]:
                if self.target_class not in classes:
                    raise ValueError(f"target_class must be one of the classes {classes}, "
                                     f"got {self.target_class!r}. Nothing was spent.")
                self._column = "negated"
        # the black box on public probe points (the schema's), never a private row
        probe = self.schema_.probe(self.bounds, corners=True)
        self._outputs(probe, public=True)
        return {}

    def _outputs(self, Z, public=False):
        """The explained output of the black box on encoded public rows: (n,)."""
        name = type(self.estimator).__name__
        rows = self.schema_.decode(Z)
        call = getattr(self.estimator, self._method)
        where = "public probe points" if public else "public records (queries and background)"
        consequence = "Nothing was spent." if public else "The background's budget was spent."
        try:
            out = call(rows)
        except Exception as exc:
            raise BlackBoxOutputError(f"the black box ({name}) failed on {where}: "
                                      f"{type(exc).__name__}: {exc}. {consequence}") from exc
        classes = getattr(self.estimator, "classes_", None)
        if self._method == "predict":
            out = check_output(out, len(Z), expect="values", name=name, method=self._method,
                               where=where, consequence=consequence)
        else:
            expect = "columns" if self._method == "predict_proba" else "margins"
            out = check_output(out, len(Z), expect=expect, name=name, method=self._method,
                               classes=classes, where=where, consequence=consequence)
        out = np.asarray(out, dtype=float)
        if out.ndim == 2:
            column = self._column
            if isinstance(column, Integral):
                out = out[:, column]
            elif self._method == "predict_proba":
                out = out[:, 0] if column == "negated" else out[:, -1]
            else:
                out = out[:, -1]
        elif self._column == "negated":
            out = -out if self._method == "decision_function" else 1.0 - out
        if not np.isfinite(out).all():
            raise BlackBoxOutputError(f"the black box ({name}) returned NaN or inf on {where}. "
                                      f"{consequence}")
        lo, hi = self._range
        return np.clip(out, lo, hi)

    # ------------------------------------------------------------ explanations
    def _shap(self, Zq, background, design):
        """(values, base_value, phi_b, f_background) of encoded queries with ``background``."""
        groups = [idx for _, idx in self.schema_.groups]
        masks, M, m = design
        Zb = background.encoded
        f_background = self._outputs(Zb)
        f_query = self._outputs(Zq)
        phi_b = _point_values(self._outputs, Zq, Zb, masks, M, m, groups, f_query,
                              f_background)
        w = background.weights
        values = np.einsum("b,qbg->qg", w, phi_b)
        base = float(w @ f_background)
        return values, base, phi_b, f_background

    def _std(self, Zq, values, phi_b, design, std_design, normals):
        """The background noise's standard deviation in each value (see the module's
        docstring): the counts' part exactly linear, the histograms' by a bootstrap.

        ``normals`` (n_draws, n_clusters, n_cells): standard normals for the
        bootstrap's histograms. Its differences ``phi_c' - phi_c`` (per
        cluster) are computed with at most ``_STD_COALITIONS`` coalitions
        (the same for the released and the drawn records, so that their
        sampling cancels in the difference), and the records are drawn again
        with the background's own uniforms (common random numbers).
        """
        bg = self.background_
        C = bg.cluster_counts.sum()
        k = len(bg.cluster_counts)
        # a cluster's values: the mean of its records' (equal weights within a cluster)
        share = np.zeros((k, len(bg.cluster)))
        share[bg.cluster, np.arange(len(bg.cluster))] = 1.0
        share /= share.sum(axis=1, keepdims=True)
        phi_c = np.einsum("kn,qng->qkg", share, phi_b)
        sd = bg.cluster_std
        var = ((sd[None, :, None] * (phi_c - values[:, None, :]) / C) ** 2).sum(axis=1)
        source = bg._source
        if len(normals) and bg.count_std > 0 and source is not None:
            if std_design is not None:
                design = std_design
                _, _, phi_b, _ = self._shap(Zq, bg, design)
                phi_c = np.einsum("kn,qng->qkg", share, phi_b)
            acc = np.zeros_like(phi_c)
            for z in normals:  # a loop over draws, not rows
                Zb = _records(source["cells"] + sd[:, None] * z, sd,
                              source["layout"], source["m"], source["uniforms"], bg.lower,
                              bg.upper)
                drawn = DPBackground(data=None, weights=bg.weights, counts=bg.counts,
                                     encoded=Zb, count_std=bg.count_std,
                                     feature_names=bg.feature_names, lower=bg.lower,
                                     upper=bg.upper, meta=bg.meta, cluster=bg.cluster,
                                     cluster_counts=bg.cluster_counts, cluster_std=sd)
                _, _, phi_d, _ = self._shap(Zq, drawn, design)
                acc += (np.einsum("kn,qng->qkg", share, phi_d) - phi_c) ** 2
            w = bg.cluster_counts / C
            var = var + np.einsum("k,qkg->qg", w ** 2, acc / len(normals))
        return np.sqrt(var)

    def explain(self, X):
        """SHAP values of the queries ``X`` with the DP background (spends nothing).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_queries, n_features)
            Public queries, of the kind ``fit`` was given.

        Returns
        -------
        FeatureAttribution
            ``values`` (n_queries, n_columns): one SHAP value per original
            column (a categorical column's levels are one player);
            ``base_value`` (per row, the background's weighted mean output);
            ``values.sum(1) + base_value`` is the black box's output at the
            query; ``std``: the background noise's standard deviation in each
            value (post-processing of DP outputs); ``epsilon`` 0 per row
            (nothing spent by explaining).
        """
        check_is_fitted(self, "background_")
        refuse_distributed_queries(self, X)  # queries are public points, in memory
        Zq = np.asarray(validate_table(self, X, reset=False), dtype=float)
        # SHAP values are computed at complete records (a missing categorical value
        # encodes as an all-zero block, which no level decodes back to)
        missing = ~np.isfinite(Zq).all(axis=1)
        for _, idx in self.schema_.groups:  # a loop over columns
            if self.schema_.categorical[idx].all():
                missing |= Zq[:, idx].sum(axis=1) != 1
        if missing.any():
            raise ValueError(f"queries {np.flatnonzero(missing)[:10].tolist()} hold a missing, "
                             "infinite or undeclared value: SHAP values are computed at "
                             "complete records. Nothing was spent.")
        g = len(self.schema_.groups)
        n_draws = (self.n_std_draws if self.background_.count_std > 0
                   and self.background_._source is not None else 0)
        # coalitions and the bootstrap's draws: not privacy noise (the background is
        # released), from the privacy core's auxiliary generator; seeded or secure as
        # random_state says (a seed's PrivacyLeakWarning was given by fit)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            source = noise_source(self.random_state, stream=(1,))
        with source as noise:
            aux = noise.auxiliary()
            u_values = aux.random(design_shape(g, self.n_coalitions))
            u_std = aux.random(design_shape(g, _STD_COALITIONS) if n_draws else (0, g + 1))
            source = self.background_._source
            normals = aux.standard_normal((n_draws, *source["cells"].shape) if n_draws
                                          else (0,))
        design = shapley_design(g, self.n_coalitions, u_values)
        std_design = None
        if n_draws and len(design[0]) > _STD_COALITIONS:
            std_design = shapley_design(g, _STD_COALITIONS, u_std)
        values, base, phi_b, _ = self._shap(Zq, self.background_, design)
        std = self._std(Zq, values, phi_b, design, std_design, normals)
        exact = len(design[0]) == 2 ** g - 2
        return FeatureAttribution(
            values, epsilon=0.0, std=std, base_value=np.full(len(Zq), base),
            feature_names=[c for c, _ in self.schema_.groups],
            epsilon_spent=self.epsilon_spent_, delta_spent=self.delta_spent_,
            meta={"estimator": "DPShapExplainer", "n_background": len(self.background_),
                  # every value's noise comes from the one released background
                  "noise_between_rows": "shared",
                  "coalitions": len(design[0]), "exact_shapley": bool(exact),
                  "response_method": self._method,
                  "std": "background noise: counts (linear, exact) + histograms "
                         f"(parametric bootstrap, {n_draws} draws)"})

    def _against_reference(self, Zq, Zr):
        """SHAP values of encoded public queries ``Zq`` with ``background_`` and with
        the encoded public rows ``Zr`` as a uniform background, with one fixed public
        design of coalitions (an unscrambled Sobol sequence: the same for every
        explainer, so that scores compare): for :class:`~skdpx.model_selection.DPShapFidelity`."""
        g = len(self.schema_.groups)
        shape = design_shape(g, self.n_coalitions)
        uniforms = None
        if shape[0]:
            m = max(0, math.ceil(math.log2(shape[0])))
            uniforms = qmc.Sobol(shape[1], scramble=False).random_base2(m)[:shape[0]]
        design = shapley_design(g, self.n_coalitions, uniforms)
        bg = self.background_
        values, _, _, _ = self._shap(Zq, bg, design)
        ref, _, _, _ = self._shap(Zq, self._uniform_background(Zr), design)
        return values, ref

    def _uniform_background(self, Z, data=None):
        """Public (or evaluation) rows, encoded ``Z``, as a background of equal weights
        and no noise: the reference SHAP values are computed against."""
        n = len(Z)
        bg = self.background_
        return DPBackground(data=data, weights=np.full(n, 1.0 / n), counts=np.ones(n),
                            encoded=Z, count_std=0.0,
                            feature_names=bg.feature_names, lower=bg.lower, upper=bg.upper,
                            meta={})

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # a missing or infinite value of a private row stands for the bounds' midpoint,
        # and so does a cell that is not a number (refusing would be a release about
        # the row: doc/privacy.rst); categorical columns take their declared levels
        tags.input_tags.allow_nan = True
        tags.input_tags.string = True
        # CSR rows are densified; the black box gets CSR records back
        tags.input_tags.sparse = True
        tags.requires_fit = True
        return tags
