"""Projected noisy gradient descent on the local loss (Patel et al., Algorithm 1).

Vectorised over queries: the local loss at query z is the quadratic
``phi' H phi - 2 g' phi + s`` (:func:`skdpx.metrics.local_loss_terms`), so its
gradient ``2 (H phi - g)`` is exactly the sum over the rows of the per-row
gradients, and one batched product per iteration serves every query. The
per-row gradient has L2 sensitivity c / m (:mod:`._weights`); each iteration
adds Gaussian noise of standard deviation ``noise_multiplier * c / m``, and
``noise_multiplier`` comes from the privacy core's calibration for the number
of iterations (T plain Gaussians compose exactly).
"""

import numpy as np

__all__ = ["dpgd_explain", "dpgd_warm_start", "project_to_ball"]


def project_to_ball(phi, radius):
    """Euclidean projection of each row onto the ball ||phi|| <= radius."""
    norms = np.linalg.norm(phi, axis=1, keepdims=True)
    return phi * np.minimum(1.0, radius / np.maximum(norms, 1e-300))


def dpgd_explain(H, g, *, noise_multiplier, sensitivity, radius, n_iter, smoothness,
                 random_state, phi0=None):
    """DPGD-Explain for a batch of queries.

    Parameters
    ----------
    H : ndarray of shape (q, d, d)
    g : ndarray of shape (q, d)
        The quadratic form of each query's local loss.
    noise_multiplier : float
        Noise standard deviation over ``sensitivity`` (0: no noise).
    sensitivity : float
        L2 sensitivity of the gradient (c / m).
    radius : float
        The explanations live in ||phi|| <= radius.
    n_iter : int or ndarray of shape (q,)
        Iterations per query (each one an accounted Gaussian release).
    smoothness : float
        A public bound on the Lipschitz constant of the gradient,
        ``2 lambda_max(H)``: for a weight in F(c), ``alpha(r) r^2 <
        c / (2 radius)``, so ``c / radius`` bounds it. The step size is its
        inverse (the classic 1 / L step of projected gradient descent).
    random_state : numpy.random.RandomState
    phi0 : ndarray of shape (q, d), optional
        Starting points (default 0).

    Returns
    -------
    phi : ndarray of shape (q, d)
        The last iterate of each query (the paper's output).
    """
    if not smoothness > 0:
        raise ValueError(f"smoothness must be > 0, got {smoothness!r}.")
    q, d = g.shape
    n_iter = np.broadcast_to(np.asarray(n_iter, dtype=int), (q,))
    phi = np.zeros((q, d)) if phi0 is None else project_to_ball(np.array(phi0, float), radius)
    sigma = noise_multiplier * sensitivity
    step = 1.0 / smoothness
    for t in range(1, int(n_iter.max()) + 1):
        active = n_iter >= t
        grad = 2.0 * (np.einsum("qij,qj->qi", H, phi) - g)
        if sigma > 0:
            grad = grad + random_state.normal(0.0, sigma, size=grad.shape)
        phi = np.where(active[:, None], project_to_ball(phi - step * grad, radius), phi)
    return phi


def dpgd_warm_start(H, g, phi0, *, noise_std, radius, smoothness, max_iter, plan,
                    random_state):
    """DPGD-Explain for one query from a warm start, with a public stopping rule.

    The steps are those of :func:`dpgd_explain`. The number of steps is
    decided from released quantities only (the noisy gradients), so it is
    post-processing: after the first step, ``plan(beta)`` gives the number
    of steps, where ``beta`` estimates the true gradient norm at the warm
    start from the first noisy gradient ``G`` (``E||G||^2 = beta^2 +
    d noise_std^2``).

    Parameters
    ----------
    H : ndarray of shape (d, d)
    g : ndarray of shape (d,)
    phi0 : ndarray of shape (d,)
    noise_std : float
        Standard deviation of the noise on each gradient coordinate.
    radius, smoothness : float
        As for :func:`dpgd_explain`.
    max_iter : int
        At most this many steps.
    plan : callable
        ``plan(beta) -> int``, the number of steps (clipped to [1, max_iter]).
    random_state : numpy.random.RandomState

    Returns
    -------
    phi : ndarray of shape (d,)
    n_steps : int
        Noisy gradients released (each one an accounted Gaussian).
    """
    if not smoothness > 0:
        raise ValueError(f"smoothness must be > 0, got {smoothness!r}.")
    d = len(g)
    phi = project_to_ball(np.array(phi0, dtype=float)[None], radius)[0]
    step = 1.0 / smoothness
    noise_sq = d * noise_std**2
    n_steps = max_iter
    for t in range(1, max_iter + 1):
        grad = 2.0 * (H @ phi - g) + random_state.normal(0.0, noise_std, size=d)
        if t == 1:
            beta = np.sqrt(max(float(grad @ grad) - noise_sq, 0.0))
            n_steps = int(np.clip(plan(beta), 1, max_iter))
        phi = project_to_ball((phi - step * grad)[None], radius)[0]
        if t >= n_steps:
            break
    return phi, n_steps
