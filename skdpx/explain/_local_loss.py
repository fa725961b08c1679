"""The weighted local loss as a quadratic form, and its exact minimiser.

Shared by the DP explainer (whose gradients are computed from it) and by the
evaluation metric :func:`skdpx.metrics.explanation_loss`.
"""

import numpy as np
from sklearn.metrics.pairwise import euclidean_distances

from ._weights import stable_weight

__all__ = ["local_loss", "local_loss_terms", "optimal_explanation"]


def local_loss_terms(queries, X, y, *, weight=stable_weight, chunk=16):
    """The quadratic form of the local loss at each query.

    ``L(phi, z) = phi' H phi - 2 g' phi + s`` with, over the m rows x and
    their labels y, ``H = (1/m) sum a (x - z)(x - z)'``,
    ``g = (1/m) sum a y (x - z)``, ``s = (1/m) sum a y^2`` and
    ``a = weight(||x - z||)``.

    Parameters
    ----------
    queries : ndarray of shape (q, d)
    X : ndarray of shape (m, d)
    y : ndarray of shape (m,)
    weight : callable
        ``weight(r)`` for an array of distances.
    chunk : int
        Queries per batch (memory: ``chunk * m * d`` floats).

    Returns
    -------
    H : ndarray of shape (q, d, d)
    g : ndarray of shape (q, d)
    s : ndarray of shape (q,)
    """
    queries = np.atleast_2d(np.asarray(queries, dtype=float))
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    m, d = X.shape
    A = weight(euclidean_distances(queries, X)) / m  # (q, m)
    H = np.empty((len(queries), d, d))
    for start in range(0, len(queries), chunk):
        a = A[start:start + chunk]
        H[start:start + chunk] = np.matmul(np.swapaxes(X[None] * a[:, :, None], 1, 2), X)
    Xa, total = A @ X, A.sum(axis=1)
    # sum a (x - z)(x - z)' = sum a x x' - (sum a x) z' - z (sum a x)' + (sum a) z z'
    outer = np.einsum("qi,qj->qij", Xa, queries)
    H += total[:, None, None] * np.einsum("qi,qj->qij", queries, queries) - outer
    H -= np.swapaxes(outer, 1, 2)
    g = (A * y) @ X - (A @ y)[:, None] * queries
    s = A @ (y * y)
    return H, g, s


def local_loss(phi, H, g, s):
    return np.einsum("qi,qij,qj->q", phi, H, phi) - 2 * np.einsum("qi,qi->q", g, phi) + s


def optimal_explanation(queries, X, y, *, weight=stable_weight, radius=1.0, terms=None):
    """The exact minimiser of the local loss over the ball ||phi|| <= radius.

    A convex quadratic over a ball (a trust-region problem): the
    least-squares solution when it lies in the ball, else
    ``(H + lam I)^-1 g`` with ``lam > 0`` set so that its norm is
    ``radius`` (found by bisection on the eigen-decomposition of H,
    vectorised over queries). ``g`` lies in the range of H, so the "hard
    case" of trust-region problems cannot arise. Note this is the
    constrained optimum, not the projection of the unconstrained one.

    Returns
    -------
    phi : ndarray of shape (q, d)
    loss : ndarray of shape (q,)
        The optimal local loss L(phi*, z).
    """
    H, g, s = local_loss_terms(queries, X, y, weight=weight) if terms is None else terms
    w, V = np.linalg.eigh(H)
    w = np.maximum(w, 0.0)
    b = np.einsum("qji,qj->qi", V, g)  # V' g
    tol = 1e-12 * np.maximum(w.max(axis=1, keepdims=True), 1e-300)
    inv = np.where(w > tol, 1.0 / np.where(w > tol, w, 1.0), 0.0)
    coords = b * inv  # least-squares (minimum-norm) solution in the eigenbasis
    outside = np.linalg.norm(coords, axis=1) > radius
    if outside.any():
        bo, wo = b[outside], w[outside]
        lo = np.zeros(len(bo))
        hi = np.linalg.norm(bo, axis=1) / radius  # ||phi(lam)|| <= ||g|| / lam
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            norm = np.linalg.norm(bo / (wo + mid[:, None]), axis=1)
            lo = np.where(norm > radius, mid, lo)
            hi = np.where(norm > radius, hi, mid)
        coords[outside] = bo / (wo + hi[:, None])
    phi = np.einsum("qij,qj->qi", V, coords)
    return phi, local_loss(phi, H, g, s)
