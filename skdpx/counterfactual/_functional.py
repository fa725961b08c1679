"""A sigmoid autoencoder trained with the functional mechanism (Zhang et al. 2012).

The model: inputs ``x`` scaled into [-1, 1]^d by public bounds, one hidden
layer of ``K`` sigmoid units, a linear decoder::

    h = sigmoid(W' (x - b)),        x_hat = V (h - 1/2) + b

The functional mechanism needs the per-row loss to be a polynomial in the
parameters whose coefficients are the only place the data enter. With the
first-order Taylor expansion of the sigmoid at 0, ``sigmoid(a) ~ 1/2 + a/4``
(the low-order expansion of Phan et al. 2016 for autoencoders), the
reconstruction becomes ``x_hat ~ A (x - b) + b`` with ``A = V W' / 4`` of
rank K, and the summed squared error is

    sum_x ||(I - A)(x - b)||^2
        = tr((I - A)'(I - A) (S - s b' - b s' + m b b'))

with ``S = sum x x'``, ``s = sum x`` and m rows: a polynomial in (A, b)
whose data-dependent coefficients are S (its upper triangle) and s. The
mechanism releases those, as one vector, with one Laplace release, and
minimises the noisy objective. Its minimiser over b is ``s~ / m`` and, over
rank-K maps, the projection on the top-K eigenvectors of the noisy scatter
``C~ = S~ - s~ s~' / m`` (Eckart-Young). A noisy C~ may have negative
eigenvalues, which make the noisy objective unbounded below; as Zhang et
al. (2012, section 5) do, skdpx drops them (spectral trimming) before
minimising. Everything after the release is post-processing.

Sensitivity of the released vector ``(upper(S), s)`` (x in [-1, 1]^d; the
number of rows m is public, as the privacy core treats a number of rows
that normalises a sum):

* **replace-one**: one row contributes ``(upper(x x'), x)``. Replacing x by
  x' moves each off-diagonal product ``x_i x_j`` by at most 2
  (d (d - 1) / 2 of them), each square ``x_i^2`` by at most 1 (both lie in
  [0, 1]) and each ``x_i`` by at most 2: at most ``d^2 + 2d`` in L1 norm;
* **add-or-remove**: the vector moves by one row's whole contribution:
  ``|x_i x_j| <= 1`` (d (d - 1) / 2 of them), ``x_i^2 <= 1`` (d) and
  ``|x_i| <= 1`` (d): at most ``(d^2 + 3d) / 2`` in L1 norm.

The add-or-remove bound is reached by any row of +-1; the replace-one
bound adds the worst cases of each coefficient, which no single pair of
rows reaches at once. (The paper's eq. 13, ``4 (K + 1)``, bounds coefficients of
basis functions that contain the data themselves, so noising them does not
hide the data.)
"""

import numpy as np
from scipy.special import expit

from ..privacy import RELATIONS, laplace_release

__all__ = ["FunctionalAutoencoder", "functional_sensitivity"]


def functional_sensitivity(n_features, relation):
    """L1 sensitivity of the released coefficients (upper(S), s) under ``relation``.

    ``d^2 + 2d`` for replace-one, ``(d^2 + 3d) / 2`` for add-or-remove (see
    the module docstring).
    """
    d = int(n_features)
    if relation == "replace_one":
        return float(d * d + 2 * d)
    if relation == "add_or_remove":
        return float(d * d + 3 * d) / 2.0
    raise ValueError(f"relation must be one of {RELATIONS}, got {relation!r}.")


def n_coefficients(n_features):
    """How many coefficients the mechanism releases: ``d (d + 1) / 2 + d``."""
    d = int(n_features)
    return d * (d + 1) // 2 + d


class FunctionalAutoencoder:
    """The fitted model: ``encode`` to the latent codes in (0, 1)^K, ``decode`` back.

    Parameters
    ----------
    components : ndarray of shape (d, K)
        Orthonormal columns U: encoder weights ``W = U``, decoder ``V = 4 U``.
    center : ndarray of shape (d,)
        The bias b (the noisy mean), in the [-1, 1] scaled space.
    """

    def __init__(self, components, center):
        self.components = components
        self.center = center

    @classmethod
    def fit(cls, X, latent_dim, *, noise_multiplier, sensitivity, noise, commitment, n_rows):
        """Train on ``X`` (rows in [-1, 1]^d) with the functional mechanism.

        Parameters
        ----------
        X : ndarray of shape (m, d)
            The private rows, in [-1, 1]^d.
        latent_dim : int
        noise_multiplier : float
            The Laplace scale over ``sensitivity`` (``1 / epsilon``); 0 releases
            the exact coefficients (the non-private baseline, which only a
            non-private commitment pays for).
        sensitivity : float
            :func:`functional_sensitivity` under the ledger's relation.
        noise : NoiseSource
        commitment : Commitment
            Must hold ``laplace_event(noise_multiplier)``: the coefficients
            are one release of one vector.
        n_rows : float
            The public count the sums are divided by (the DP count of the
            rows under add-or-remove; never the private ``len(X)``).
        """
        m, d = float(n_rows), X.shape[1]
        upper = np.triu_indices(d)
        S = X.T @ X
        coefficients = np.concatenate([S[upper], X.sum(axis=0)])
        noisy = laplace_release(coefficients, noise_multiplier=noise_multiplier,
                                sensitivity=sensitivity, noise=noise, commitment=commitment)
        # post-processing of the release (m is public: a DP count)
        S_noisy = np.zeros((d, d))
        S_noisy[upper] = noisy[: len(upper[0])]
        S_noisy = S_noisy + np.triu(S_noisy, 1).T
        s_noisy = noisy[len(upper[0]):]
        center = np.clip(s_noisy / m, -1.0, 1.0)
        scatter = S_noisy - np.outer(s_noisy, s_noisy) / m
        values, vectors = np.linalg.eigh(scatter)
        # spectral trimming: only the positive part keeps the objective bounded
        # below; its top-K eigenvectors minimise the trimmed objective
        order = np.argsort(-np.maximum(values, 0.0), kind="stable")[:latent_dim]
        return cls(vectors[:, order], center)

    def encode(self, X):
        """Latent codes in (0, 1)^K of rows in [-1, 1]^d."""
        return expit((X - self.center) @ self.components)

    def decode(self, H):
        """Rows in the [-1, 1]^d space (not clipped) from latent codes."""
        return self.center + 4.0 * (H - 0.5) @ self.components.T

    def decode_vjp(self, H, G):
        """``G @ d decode / d H`` per row: the decoder is linear, ``4 G U``."""
        return 4.0 * G @ self.components
