"""The weighted local loss as a quadratic form, and its exact minimiser.

Shared by the DP explainer (whose gradients are computed from it) and by the
evaluation metric :func:`skdpx.metrics.explanation_loss`.
"""

import numpy as np
from sklearn import get_config
from sklearn.utils import check_array

from ..utils._threads import single_blas_thread

from ._weights import stable_weight

__all__ = ["local_loss", "local_loss_sums", "local_loss_terms", "optimal_explanation",
           "trust_region"]


def _distances(queries, X):
    """``euclidean_distances(queries, X)`` for validated float64 arrays, unchecked.

    The same arithmetic as scikit-learn's (so the same numbers), without its
    validation of X on every call: the explainer's one-query calls spend
    milliseconds there.
    """
    d2 = -2.0 * (queries @ X.T)
    d2 += np.einsum("ij,ij->i", queries, queries)[:, None]
    d2 += np.einsum("ij,ij->i", X, X)[None, :]
    np.maximum(d2, 0, out=d2)
    return np.sqrt(d2, out=d2)


#: The largest block of (queries x rows x features) floats a block of the local
#: loss works on, in MiB, when scikit-learn's ``working_memory`` allows more.
#: Blocks this size stay near the CPU caches: at m = 3e5 rows and d = 50, one
#: block of 16 queries over all rows (1.9 GB) ran at half the speed.
BLOCK_MIB = 32


def _block_shape(n_queries, n_rows, n_features, chunk, working_memory):
    """(queries, rows) per block: at most ``working_memory`` MiB (scikit-learn's
    setting by default, capped at :data:`BLOCK_MIB`) of temporaries."""
    if working_memory is None:
        working_memory = min(get_config()["working_memory"], BLOCK_MIB)
    q = max(1, min(n_queries, 16 if chunk is None else int(chunk)))
    # per query and row: the weighted row (d floats), its distance and weight
    rows = int(working_memory * 2**20) // (8 * q * (n_features + 3))
    return q, max(1, min(n_rows, rows))


def local_loss_sums(X, y, *, queries, weight=stable_weight, offset=None):
    """The local loss's sums over the rows of one block, not divided by m.

    ``(sum a (x - z)(x - z)', sum a y (x - z), sum a y^2)`` at each query z,
    with ``a = weight(||x - z||)`` and labels ``y - offset_z``. Every term is a
    sum over rows, so the sums of any split of the rows add up to the sums of
    all rows: :func:`local_loss_terms` adds them over blocks of rows in
    memory, and over the partitions of a Dask array in its workers
    (:func:`skdpx.utils._dask.partition_sum`).

    Parameters
    ----------
    X : ndarray of shape (b, d)
    y : ndarray of shape (b,)
    queries : ndarray of shape (q, d)
    weight : callable
    offset : ndarray of shape (q,), optional

    Returns
    -------
    H : ndarray of shape (q, d, d)
    g : ndarray of shape (q, d)
    s : ndarray of shape (q,)
    """
    A = weight(_distances(queries, X))  # (q, b)
    H = np.matmul(np.swapaxes(X[None] * A[:, :, None], 1, 2), X)
    Xa, total = A @ X, A.sum(axis=1)
    # sum a (x - z)(x - z)' = sum a x x' - (sum a x) z' - z (sum a x)' + (sum a) z z'
    outer = np.einsum("qi,qj->qij", Xa, queries)
    H += total[:, None, None] * np.einsum("qi,qj->qij", queries, queries) - outer
    H -= np.swapaxes(outer, 1, 2)
    Ay = A @ y
    g = (A * y) @ X - Ay[:, None] * queries
    s = A @ (y * y)
    if offset is not None:
        # labels y - o: g -= o sum a (x - z); s -= 2 o sum a y - o^2 sum a
        o = np.broadcast_to(np.asarray(offset, dtype=float), (len(queries),))
        g -= o[:, None] * (Xa - total[:, None] * queries)
        s += o * (o * total - 2.0 * Ay)
    return H, g, s


def blocked_sums(queries, X, y, *, weight=stable_weight, offset=None, chunk=None,
                 working_memory=None, prepare=None):
    """:func:`local_loss_sums` over all rows of ``X``, in blocks of bounded memory.

    The sums, not divided by m: what :func:`local_loss_terms` divides, and
    what one worker returns for its rows (then added over the workers).
    ``queries``, ``X`` and ``y`` are validated float arrays. ``prepare``
    (optional) maps each block of ``X``'s rows to the rows the sums are
    over (e.g. clipped and scaled: :class:`~skdpx.utils._validation.UnitCubeRows`),
    block by block: no mapped copy of the whole ``X`` is made.
    """
    m, d = X.shape
    n = len(queries)
    if offset is not None:
        offset = np.broadcast_to(np.asarray(offset, dtype=float), (n,))
    H, g, s = np.zeros((n, d, d)), np.zeros((n, d)), np.zeros(n)
    q_block, r_block = _block_shape(n, m, d, chunk, working_memory)
    with single_blas_thread():  # small products, cache-sized blocks
        for start in range(0, n, q_block):
            qs = slice(start, start + q_block)
            for row in range(0, m, r_block):
                rs = slice(row, row + r_block)
                block = X[rs] if prepare is None else prepare(X[rs])
                h, gg, ss = local_loss_sums(block, y[rs], queries=queries[qs], weight=weight,
                                            offset=None if offset is None else offset[qs])
                H[qs] += h
                g[qs] += gg
                s[qs] += ss
    return H, g, s


def local_loss_terms(queries, X, y, *, weight=stable_weight, chunk=None, check_input=True,
                     offset=None, working_memory=None):
    """The quadratic form of the local loss at each query.

    ``L(phi, z) = phi' H phi - 2 g' phi + s`` with, over the m rows x and
    their labels y, ``H = (1/m) sum a (x - z)(x - z)'``,
    ``g = (1/m) sum a y (x - z)``, ``s = (1/m) sum a y^2`` and
    ``a = weight(||x - z||)``. With ``offset``, the labels at query z are
    ``y - offset_z`` (centred on a per-query value, e.g. the black box's
    output at z).

    The sums are computed in blocks of queries and rows whose temporaries
    take at most ``working_memory`` MiB, so the memory does not grow with m
    (:func:`local_loss_sums` is the sum over one block).

    Parameters
    ----------
    queries : ndarray of shape (q, d)
    X : ndarray of shape (m, d)
    y : ndarray of shape (m,)
    weight : callable
        ``weight(r)`` for an array of distances.
    chunk : int, optional
        Queries per block (default 16, fewer when there are fewer queries).
    check_input : bool, default=True
        False skips the validation of finite values (for callers that
        validated ``queries`` and ``X`` already).
    offset : ndarray of shape (q,), optional
        Per query, a value subtracted from every label (default 0).
    working_memory : float, optional
        MiB of temporaries per block; default: scikit-learn's
        ``working_memory`` setting (``sklearn.set_config``), capped at 32.

    Returns
    -------
    H : ndarray of shape (q, d, d)
    g : ndarray of shape (q, d)
    s : ndarray of shape (q,)
    """
    queries = np.atleast_2d(np.asarray(queries, dtype=float))
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    if check_input:
        queries = check_array(queries)
        X = check_array(X)
        y = check_array(y, ensure_2d=False)
    H, g, s = blocked_sums(queries, X, y, weight=weight, offset=offset, chunk=chunk,
                           working_memory=working_memory)
    m = len(X)
    if m:
        H /= m
        g /= m
        s /= m
    return H, g, s


def local_loss(phi, H, g, s):
    return np.einsum("qi,qij,qj->q", phi, H, phi) - 2 * np.einsum("qi,qi->q", g, phi) + s


def trust_region(H, g, radius):
    """argmin phi' H phi - 2 g' phi over ||phi|| <= radius, for each query.

    ``H`` symmetric, possibly indefinite (e.g. noised). The interior
    (minimum-norm least-squares) solution when H is positive semi-definite
    and it lies in the ball; else the boundary solution
    ``(H + lam I)^-1 g`` with ``lam >= max(0, -lambda_min)`` and norm
    ``radius``, by bisection on the eigen-decomposition (vectorised over
    queries), completed along the lowest eigenvector in the "hard case".

    Parameters
    ----------
    H : ndarray of shape (q, d, d)
    g : ndarray of shape (q, d)
    radius : float

    Returns
    -------
    ndarray of shape (q, d)
    """
    w, V = np.linalg.eigh(H)
    b = np.einsum("qji,qj->qi", V, g)  # V' g
    scale = np.maximum(np.abs(w).max(axis=1, keepdims=True), 1e-300)
    tol = 1e-12 * scale
    psd = w[:, 0] >= -tol[:, 0]
    inv = np.where(w > tol, 1.0 / np.where(w > tol, w, 1.0), 0.0)
    coords = b * inv  # least-squares (minimum-norm) solution in the eigenbasis
    boundary = ~psd | (np.linalg.norm(coords, axis=1) > radius)
    if boundary.any():
        bo, wo = b[boundary], w[boundary]
        lo = np.maximum(0.0, -wo[:, 0])
        hi = lo + np.linalg.norm(bo, axis=1) / radius + 1e-300  # ||phi(lam)|| <= ||g|| / (lam - lo)
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            with np.errstate(divide="ignore", invalid="ignore"):
                norm = np.linalg.norm(bo / (wo + mid[:, None]), axis=1)
            lo = np.where(norm > radius, mid, lo)
            hi = np.where(norm > radius, hi, mid)
        with np.errstate(divide="ignore", invalid="ignore"):
            c = np.where(np.abs(wo + hi[:, None]) > 0, bo / (wo + hi[:, None]), 0.0)
        # hard case: the boundary is not reached; move along the lowest eigenvector
        short = np.linalg.norm(c, axis=1)
        c[:, 0] += np.sqrt(np.maximum(radius**2 - short**2, 0.0)) * (short < radius * (1 - 1e-9))
        coords[boundary] = c
    return np.einsum("qij,qj->qi", V, coords)


def optimal_explanation(queries, X, y, *, weight=stable_weight, radius=1.0, terms=None):
    """The exact minimiser of the local loss over the ball ||phi|| <= radius.

    A convex quadratic over a ball (see :func:`trust_region`). Note this is
    the constrained optimum, not the projection of the unconstrained one.

    Returns
    -------
    phi : ndarray of shape (q, d)
    loss : ndarray of shape (q,)
        The optimal local loss L(phi*, z).
    """
    H, g, s = local_loss_terms(queries, X, y, weight=weight) if terms is None else terms
    phi = trust_region(H, g, radius)
    return phi, local_loss(phi, H, g, s)
