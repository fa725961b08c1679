"""The approximation loss of local explanations, against the exact optimum.

For evaluation only: it reads the explanation dataset without privacy.
"""

import numpy as np

from ..explain._local_loss import local_loss, local_loss_terms, optimal_explanation
from ..explain import stable_weight

__all__ = ["explanation_loss", "local_loss_terms", "optimal_explanation"]


def explanation_loss(explanations, queries, X, y, *, weight=stable_weight, radius=1.0):
    """Approximation loss E(phi) = L(phi, z) - L(phi*, z) of each explanation.

    The paper's eq. (4), against the exact non-private optimum over the ball
    ``||phi|| <= radius``; always >= 0 for explanations inside the ball
    (up to rounding).

    Parameters
    ----------
    explanations : array-like of shape (q, d)
        One explanation per query, in the space of ``X``.
    queries : array-like of shape (q, d)
    X : array-like of shape (m, d)
        The explanation dataset (read without privacy: evaluation only).
    y : array-like of shape (m,)
        The black box's outputs on X, in [-1, 1].
    weight : callable, default=stable_weight
    radius : float, default=1.0

    Returns
    -------
    ndarray of shape (q,)

    Examples
    --------
    >>> import numpy as np
    >>> from skdpx.metrics import explanation_loss, optimal_explanation
    >>> rng = np.random.RandomState(0)
    >>> X = rng.uniform(0, 1, size=(500, 3)); y = np.tanh(X @ [1.0, -2.0, 0.5])
    >>> Z = X[:4]
    >>> phi, _ = optimal_explanation(Z, X, y)
    >>> bool(np.allclose(explanation_loss(phi, Z, X, y), 0, atol=1e-12))
    True
    >>> bool(np.all(explanation_loss(np.zeros_like(phi), Z, X, y) > 0))
    True
    """
    terms = local_loss_terms(queries, X, y, weight=weight)
    phi = np.atleast_2d(np.asarray(explanations, dtype=float))
    _, best = optimal_explanation(queries, X, y, weight=weight, radius=radius, terms=terms)
    return local_loss(phi, *terms) - best
