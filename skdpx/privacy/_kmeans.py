"""DP k-means by Lloyd's algorithm with noisy sums and noisy counts.

Shared by :class:`~skdpx.recourse.PrivRecourse` (the graph's nodes) and
:func:`~skdpx.explain.dp_background` (a weighted DP summary of the rows, a
SHAP background); one copy, in the privacy core, which both may import.

Rows are in the unit cube of the public bounds and centred (``x - 1/2``), so
one row's contribution ``u = (x - 1/2, 1)`` to its cluster's (sum, count)
row of the (n_clusters, d + 1) table has ``||u||^2 <= d / 4 + 1``. Each
iteration releases that table once with Gaussian noise (through the privacy
core's :func:`~skdpx.privacy.gaussian_release`); the iterations and the
initialisation compose in the ledger (privacy loss distributions).

L2 sensitivity of the table, whatever the centres (the assignment is a
function of the public centres and the row alone):

* add-or-remove: a row adds or removes ``u`` in one cluster's row:
  ``sqrt(d / 4 + 1)``;
* replace-one: a row ``x`` becomes ``x'``. In two different clusters the
  table changes by ``-u`` in one row and ``+u'`` in another:
  ``sqrt(||u||^2 + ||u'||^2) <= sqrt(2 (d / 4 + 1))``; in the same cluster
  it changes by ``(x' - x, 0)``: up to ``sqrt(d)`` (opposite corners of the
  cube, both nearest the same centre). Hence ``sqrt(max(d / 2 + 2, d))``,
  which is ``sqrt(d)`` from d = 4 on (the bound ``sqrt(2 (d / 4 + 1))``
  alone is too small for d > 4).

The initial centres are drawn from noisy per-feature histograms (one
Gaussian release): a row adds 1 to one bin of each of the d histograms, so
the L2 sensitivity is ``sqrt(d)`` under add-or-remove and ``sqrt(2 d)``
under replace-one (a row leaves one bin and joins another in each). Drawing
the centres from the released histograms is post-processing (the
auxiliary generator of the noise source). Uniform initial centres in the
cube put most of them where there are no data (on Adult, 9 rows in 10 have
no capital gain), and they never recover under noise.

**Per-cluster marginals** (:func:`dp_cluster_marginals`, the SHAP
background's last release): after the Lloyd iterations, each row goes to
its nearest (public, released) centre and the table of, per cluster, its
count and one histogram per *original column* is released once: a numeric
column's ``n_bins`` equal bins of (0, 1) and one cell for each bound, a
categorical column's one-hot block (its levels' counts). A row adds 1 to
its cluster's count and 1 to one cell of each of the ``g`` columns'
histograms (a missing categorical value, an all-zero block: to none), so
the L2 sensitivity is ``sqrt(g + 1)`` under add-or-remove; under
replace-one the row leaves its cells and enters others (in another
cluster, or the same one with the count unchanged): ``sqrt(2 (g + 1))``
(:func:`marginals_sensitivity`). Each released cell carries the same noise
std, so the spend is one more Gaussian release at the same multiplier.
"""

import numpy as np

from ._ledger import check_relation
from ._mechanisms import gaussian_release
from ..utils._engine import partition_sum

__all__ = [
    "cluster_marginals_table", "dp_cluster_marginals", "dp_lloyd", "init_sensitivity",
    "lloyd_step", "lloyd_table", "marginal_histograms", "marginals_sensitivity",
    "table_sensitivity",
]

#: bins of the per-feature histograms that seed the initial centres
_BINS = 10


def table_sensitivity(n_features, relation="add_or_remove"):
    """L2 sensitivity of the table of centred sums and counts (see the module's docstring).

    ``sqrt(d / 4 + 1)`` under add-or-remove, ``sqrt(max(d / 2 + 2, d))``
    under replace-one.
    """
    check_relation(relation)
    d = float(n_features)
    if relation == "add_or_remove":
        return float(np.sqrt(d / 4.0 + 1.0))
    return float(np.sqrt(max(d / 2.0 + 2.0, d)))


def init_sensitivity(n_features, relation="add_or_remove"):
    """L2 sensitivity of the d per-feature histograms: ``sqrt(d)`` (add-or-remove),
    ``sqrt(2 d)`` (replace-one)."""
    check_relation(relation)
    return float(np.sqrt((1.0 if relation == "add_or_remove" else 2.0) * n_features))


def marginals_sensitivity(n_columns, relation="add_or_remove"):
    """L2 sensitivity of the per-cluster table of counts and column histograms
    (:func:`cluster_marginals_table`, ``g`` original columns): ``sqrt(g + 1)``
    (add-or-remove), ``sqrt(2 (g + 1))`` (replace-one)."""
    check_relation(relation)
    return float(np.sqrt((1.0 if relation == "add_or_remove" else 2.0) * (n_columns + 1)))


def nearest(X, centers, chunk=8192):
    """Index of the nearest centre of each row (squared Euclidean), in chunks of rows."""
    sq = np.sum(centers**2, axis=1)
    return np.concatenate([np.argmin(sq[None, :] - 2 * X[i:i + chunk] @ centers.T, axis=1)
                           for i in range(0, len(X), chunk)] or [np.empty(0, dtype=int)])


def histograms(X01):
    """The exact d per-feature histograms of ``_BINS`` bins on [0, 1], shape (d, _BINS).

    One column at a time (a loop over the features, vectorised over the
    rows): the temporaries are one column's, never two more copies of the
    block, whose fresh pages a process's first fit paid for (about 1,000
    page faults, 2 ms at 10,000 x 20; issue 41). The same counts.
    """
    d = X01.shape[1]
    out = np.empty((d, _BINS))
    for j in range(d):
        bins = (X01[:, j] * _BINS).astype(int)
        out[j] = np.bincount(np.minimum(bins, _BINS - 1, out=bins), minlength=_BINS)
    return out


def marginal_histograms(X01, noise_multiplier, *, relation, noise, commitment, prepare=None):
    """The d per-feature histograms of ``_BINS`` bins on [0, 1], one Gaussian release.

    Noise std ``noise_multiplier * init_sensitivity(d, relation)``; the
    release draws ``gaussian_event(noise_multiplier)`` from ``commitment``.
    ``prepare``: maps each block of ``X01``'s rows into [0, 1]^d first (see
    :func:`dp_lloyd`).
    """
    d = X01.shape[1]
    # exact counts (summed over blocks of rows in memory, over a dask array's row
    # blocks in the workers); the noise is drawn in the client, after the sum
    return gaussian_release(partition_sum(histograms, X01, prepare=prepare),
                            noise_multiplier=noise_multiplier,
                            sensitivity=init_sensitivity(d, relation), noise=noise,
                            commitment=commitment)


def lloyd_table(X01, centers01):
    """The exact (n_clusters, d + 1) table: per cluster, ``sum(x - 1/2)`` and the count.

    Each row goes to its nearest centre. One ``np.bincount`` per column
    (several times faster than ``np.add.at`` on a stacked copy of the rows).
    """
    d = X01.shape[1]
    k = len(centers01)
    labels = nearest(X01, centers01)
    table = np.empty((k, d + 1))
    for j in range(d):
        table[:, j] = np.bincount(labels, weights=X01[:, j] - 0.5, minlength=k)
    table[:, d] = np.bincount(labels, minlength=k)
    return table


def lloyd_step(X01, centers01, noise_multiplier, *, relation, noise, commitment, prepare=None):
    """One DP Lloyd release: the noisy table of centred sums and counts per cluster.

    The (n_clusters, d + 1) table of :func:`lloyd_table` gets Gaussian noise
    of std ``noise_multiplier * table_sensitivity(d, relation)``; the release
    draws ``gaussian_event(noise_multiplier)`` from ``commitment``.
    ``prepare``: as in :func:`dp_lloyd`.
    """
    d = X01.shape[1]
    # one pass over the rows, block by block
    table = partition_sum(lloyd_table, X01, centers01=centers01, prepare=prepare)
    return gaussian_release(table, noise_multiplier=noise_multiplier,
                            sensitivity=table_sensitivity(d, relation), noise=noise,
                            commitment=commitment)


def cluster_marginals_table(X01, centers01, layout):
    """The exact (n_clusters, 1 + n_cells) table: per cluster, its count, then each
    column's histogram (see the module's docstring).

    ``layout``: public, one entry per original column, ``(columns, n_bins)``:
    ``n_bins + 2`` cells of the single encoded column ``columns[0]``
    (numeric): a value at 0 (its lower bound), ``n_bins`` equal bins of (0,
    1), a value at 1 (its upper bound; values are clipped to the bounds, and
    many columns pile at one: no capital gain, a capped amount); or
    ``(columns, None)``: the counts of a one-hot block (categorical). Each
    row goes to its nearest centre. A loop over columns, one ``np.bincount``
    each.
    """
    k = len(centers01)
    labels = nearest(X01, centers01)
    parts = [np.bincount(labels, minlength=k)[:, None].astype(float)]
    for columns, n_bins in layout:  # a loop over columns
        if n_bins is None:
            parts.append(np.stack([np.bincount(labels, weights=X01[:, c], minlength=k)
                                   for c in columns], axis=1))
        else:
            x = np.clip(X01[:, columns[0]], 0.0, 1.0)
            b = np.where(x <= 0.0, 0, np.where(x >= 1.0, n_bins + 1,
                                               1 + np.minimum((x * n_bins).astype(int),
                                                              n_bins - 1)))
            width = n_bins + 2
            parts.append(np.bincount(labels * width + b, minlength=k * width)
                         .reshape(k, width).astype(float))
    return np.hstack(parts)


def dp_cluster_marginals(X01, n_clusters, n_iter, noise_multiplier, layout, *, relation,
                         noise, commitment, prepare=None):
    """DP clusters and their per-column marginals: ``n_iter + 1`` Gaussian releases.

    The initial histograms and ``n_iter - 1`` Lloyd tables (:func:`dp_lloyd`)
    place the centres; the last release is the table of per-cluster counts
    and column histograms (:func:`cluster_marginals_table`) at those
    centres, with noise std ``noise_multiplier * marginals_sensitivity(g,
    relation)``. Returns ``(centers01, table)``: the public centres the rows
    were assigned to and the noisy table.
    """
    centers, _ = dp_lloyd(X01, n_clusters, n_iter - 1, noise_multiplier, relation=relation,
                          noise=noise, commitment=commitment, prepare=prepare)
    table = partition_sum(cluster_marginals_table, X01, centers01=centers, layout=layout,
                          prepare=prepare)
    released = gaussian_release(table, noise_multiplier=noise_multiplier,
                                sensitivity=marginals_sensitivity(len(layout), relation),
                                noise=noise, commitment=commitment)
    return centers, released


def dp_lloyd(X01, n_clusters, n_iter, noise_multiplier, *, relation, noise, commitment,
             prepare=None):
    """DP Lloyd's algorithm: ``n_iter + 1`` Gaussian releases at ``noise_multiplier``.

    Parameters
    ----------
    X01 : ndarray of shape (n_samples, d)
        The private rows, in [0, 1]^d (clipped to the public bounds and scaled).
    n_clusters, n_iter : int
    noise_multiplier : float
        Noise std over the sensitivity, for every release (0: non-private,
        with a non-private commitment).
    relation : {"add_or_remove", "replace_one"}
        The neighbouring relation the sensitivities are taken under.
    noise : NoiseSource
    commitment : Commitment
        Holds ``n_iter + 1`` copies of ``gaussian_event(noise_multiplier)``
        (committed before this is called).
    prepare : callable, optional
        Maps a block of ``X01``'s rows into [0, 1]^d (e.g.
        :class:`~skdpx.utils._validation.UnitCubeRows`: the rows given as they
        are, filled, clipped and scaled block by block, so that no scaled
        copy of them is made); default: ``X01`` is in [0, 1]^d already.

    Returns
    -------
    centers : ndarray of shape (n_clusters, d)
        The last iteration's noisy means, clipped to [0, 1]; a cluster whose
        noisy count is below 1 keeps its previous centre.
    counts : ndarray of shape (n_clusters,)
        The last iteration's noisy counts.
    """
    d = X01.shape[1]
    # the initial centres: samples of the product of the noisy marginals
    hist = marginal_histograms(X01, noise_multiplier, relation=relation, noise=noise,
                               commitment=commitment, prepare=prepare)
    aux = noise.auxiliary()  # sampling from released values: post-processing
    prob = np.clip(hist, 0.0, None)
    prob[prob.sum(axis=1) == 0] = 1.0
    prob /= prob.sum(axis=1, keepdims=True)
    cum = np.cumsum(prob, axis=1)
    u = aux.uniform(size=(n_clusters, d))
    picked = np.minimum((u[:, :, None] > cum[None, :, :]).sum(axis=2), _BINS - 1)
    centers = (picked + aux.uniform(size=(n_clusters, d))) / _BINS - 0.5
    counts = np.zeros(n_clusters)
    for _ in range(n_iter):
        table = lloyd_step(X01, centers + 0.5, noise_multiplier, relation=relation,
                           noise=noise, commitment=commitment, prepare=prepare)
        counts = table[:, -1]
        grown = counts >= 1.0
        means = np.clip(table[:, :d] / np.maximum(counts, 1.0)[:, None], -0.5, 0.5)
        centers = np.where(grown[:, None], means, centers)
    return centers + 0.5, counts
