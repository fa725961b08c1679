"""Projected noisy gradient descent on the local loss (Patel et al., Algorithm 1).

Vectorised over queries: the local loss at query z is the quadratic
``phi' H phi - 2 g' phi + s`` (:func:`skdpx.metrics.local_loss_terms`), so its
gradient ``2 (H phi - g)`` is exactly the sum over the rows of the per-row
gradients, and one batched product per iteration serves every query. The
gradient's L2 sensitivity is that of :func:`skdpx.explain.gradient_sensitivity`
under the ledger's relation (c / m for add-or-remove, (c + 2 r*) / m for
replace-one). Each noisy gradient is one Gaussian release of the privacy
core (:func:`skdpx.privacy.noisy_gradient`), paid by the caller's committed
spend: this module draws no noise itself. ``noise_multiplier`` comes from the
privacy core's calibration for the number of iterations (T plain Gaussians
compose exactly).
"""

import numpy as np

from ..privacy import noisy_gradient

__all__ = ["answer_std", "dpgd_explain", "dpgd_warm_start", "path_covariance_step",
           "project_to_ball"]


def project_to_ball(phi, radius):
    """Euclidean projection of each row onto the ball ||phi|| <= radius."""
    norms = np.linalg.norm(phi, axis=1, keepdims=True)
    return phi * np.minimum(1.0, radius / np.maximum(norms, 1e-300))


def dpgd_explain(H, g, *, noise_multiplier, sensitivity, radius, n_iter, smoothness, noise,
                 commitment, phi0=None, with_std=False):
    """DPGD-Explain for a batch of queries.

    Parameters
    ----------
    H : ndarray of shape (q, d, d)
    g : ndarray of shape (q, d)
        The quadratic form of each query's local loss.
    noise_multiplier : float
        Noise standard deviation over ``sensitivity`` (0: no noise, allowed
        by a non-private commitment only).
    sensitivity : float
        L2 sensitivity of the gradient under the ledger's relation.
    radius : float
        The explanations live in ||phi|| <= radius.
    n_iter : int or ndarray of shape (q,)
        Iterations per query (each one an accounted Gaussian release: only
        the queries still running at an iteration release a gradient).
    smoothness : float
        A public bound on the Lipschitz constant of the gradient,
        ``2 lambda_max(H)``: for a weight in F(c), ``alpha(r) r^2 <
        c / (2 radius)``, so ``c / radius`` bounds it. The step size is its
        inverse (the classic 1 / L step of projected gradient descent).
    noise : skdpx.privacy.NoiseSource
    commitment : skdpx.privacy.Commitment
        The committed spend paying for the releases: ``sum(n_iter)`` copies
        of ``gaussian_event(noise_multiplier)``.
    phi0 : ndarray of shape (q, d), optional
        Starting points (default 0).
    with_std : bool, default=False
        Also return each value's noise standard deviation, propagated along
        the query's own path (:func:`path_covariance_step`).

    Returns
    -------
    phi : ndarray of shape (q, d)
        The last iterate of each query (the paper's output).
    std : ndarray of shape (q, d)
        Only with ``with_std``.
    """
    if not smoothness > 0:
        raise ValueError(f"smoothness must be > 0, got {smoothness!r}.")
    q, d = g.shape
    n_iter = np.broadcast_to(np.asarray(n_iter, dtype=int), (q,))
    phi = np.zeros((q, d)) if phi0 is None else project_to_ball(np.array(phi0, float), radius)
    step = 1.0 / smoothness
    # the covariance of each answer's noise along its path (with_std) is factor * cov:
    # the projection's shrinking is kept as a factor per query
    cov, factor = (np.zeros((q, d, d)), np.ones(q)) if with_std else (None, None)
    step_var = (step * noise_multiplier * sensitivity) ** 2
    for t in range(1, int(n_iter.max(initial=0)) + 1):
        active = np.flatnonzero(n_iter >= t)
        every = len(active) == q  # no copies of H while every query runs
        Ha, ga, pa = (H, g, phi) if every else (H[active], g[active], phi[active])
        grad = 2.0 * (np.einsum("qij,qj->qi", Ha, pa) - ga)
        # one Gaussian release per query still running
        grad = noisy_gradient(grad, noise_multiplier=noise_multiplier, sensitivity=sensitivity,
                              noise=noise, commitment=commitment, releases=len(active))
        moved = pa - step * grad
        phi[active] = project_to_ball(moved, radius)
        if with_std:
            ca, fa = (cov, factor) if every else (cov[active], factor[active])
            path_covariance_step(ca, fa, moved, radius, step_var)
            if not every:
                cov[active], factor[active] = ca, fa
    if with_std:
        return phi, answer_std(cov, factor, phi, radius)
    return phi


#: How far (in first-order stds) the noiseless direction's value is taken from the answer's
_DIRECTION_Z = 3.0


def answer_std(cov, factor, phi, radius):
    """Each answer's noise standard deviation per value, from its path's covariance.

    Post-processing only: ``factor * cov`` is the covariance propagated along
    the released path (:func:`path_covariance_step`), to first order, and
    ``phi`` the answers.

    An answer inside the ball: ``sqrt(diag(C))``. An answer on the sphere
    ``||phi|| = radius`` (the projection held it there) differs from the
    noiseless one ``radius n*`` by a tangent part, of covariance ``C`` to
    first order, and a radial part, which the first order drops: with ``t``
    the tangent displacement (arc length), the answer falls short of the
    noiseless one by ``radius (1 - cos(t / radius)) <= t^2 / (2 radius)``,
    along ``n*``. Its second moment is at most ``rho^2 = E t^4 / (4
    radius^2)``, ``E t^4 = tr(C)^2 + 2 tr(C^2)`` for a Gaussian ``t``. Per
    value, ``n*_j`` is taken within ``z = 3`` first-order stds of ``n_j =
    phi_j / radius``, so::

        var_j = C_jj + rho^2 min(|n_j| + z sqrt(C_jj) / radius, 1)^2

    The second term is of order ``(tr C / radius^2)^2``: nothing while the
    noise is small against the radius, and the loss of the signal (the
    largest noiseless values shrink towards noise) when the noise spreads
    the answer over the sphere, where a first-order std alone covered the
    largest value in 18-47% of answers (70-92% with the term; taking
    ``|n*_j| <= |n_j| + sqrt(tr C) / radius``, a bound, would cover 93-99%
    but doubles the std of every small value on Adult at 0.1 and 1 per
    query). Each value's error is at most ``2 radius`` (both answers lie in
    the ball): the std is capped there.
    """
    trace = factor * np.einsum("qjj->q", cov)
    var = np.maximum(factor[:, None] * np.einsum("qjj->qj", cov), 0.0)
    norms = np.linalg.norm(phi, axis=1)
    on_sphere = norms >= radius * (1.0 - 1e-9)
    if on_sphere.any():
        scaled = cov * factor[:, None, None]  # (cov alone can be 1e150 times the truth)
        fourth = trace ** 2 + 2.0 * np.einsum("qij,qij->q", scaled, scaled)
        rho2 = np.where(on_sphere, fourth / (4.0 * radius ** 2), 0.0)
        direction = np.abs(phi) / np.maximum(norms, 1e-300)[:, None]
        # the noiseless direction's value, within _DIRECTION_Z first-order stds of n_j
        near = np.minimum(direction + _DIRECTION_Z * np.sqrt(var) / radius, 1.0)
        var = var + rho2[:, None] * near ** 2
    return np.minimum(np.sqrt(var), 2.0 * radius)


def path_covariance_step(cov, factor, moved, radius, step_var):
    """One step of the noise's covariance along released iterates, in place.

    The covariance of query ``k`` is ``factor[k] * cov[k]`` (both updated in
    place: a step that leaves the ball scales its factor, not the matrix).

    Post-processing only: ``moved`` (the iterates before projection, ``phi_t -
    step * G_t``) are functions of the released noisy gradients ``G_t``, each
    an accounted Gaussian release, and ``step_var`` (the variance each
    step's noise adds per coordinate, ``(step * noise_multiplier *
    sensitivity)^2``) is public.

    The answer's deviation from the noiseless answer, ``e``, follows
    ``e_{t+1} = J_t (A e_t - step xi_t)`` to first order, where ``A = I -
    step * 2H`` is the gradient map's linear part and ``J_t`` the Jacobian of
    the projection at ``moved``: the identity inside the ball, and ``(radius
    / ||u||) (I - n n')`` outside it (``n = u / ||u||``): a step that leaves
    the ball loses its radial noise and shrinks the rest. ``H`` is private, so
    its contraction is not credited: ``A`` is taken as ``I`` (``0 <= A <=
    I``; with projections in between this is not a bound, only the
    curvature left out), so ``cov <- J (cov + step_var I) J'``. The
    projection's share is where the old public bound
    ``step s sqrt(T)`` was several times the noise when the answer lies on the
    sphere (issue 38, target a).
    """
    d = cov.shape[-1]
    diagonal = np.arange(d)
    cov[:, diagonal, diagonal] += step_var / factor[:, None]
    norms = np.linalg.norm(moved, axis=1)
    out = norms > radius
    if not out.any():
        return
    every = out.all()  # (the usual case once the answers sit on the sphere: no copies)
    c = cov if every else cov[out]
    n = moved[out] / norms[out, None]
    # (I - n n') C (I - n n') = C - n w' - w n', w = C n - (n'C n / 2) n (C symmetric)
    cn = np.matmul(c, n[:, :, None])[:, :, 0]
    w = cn - 0.5 * np.einsum("qi,qi->q", n, cn)[:, None] * n
    c -= np.matmul(np.stack([n, w], axis=2), np.stack([w, n], axis=1))
    if not every:
        cov[out] = c
    factor[out] *= (radius / norms[out]) ** 2
    tiny = factor < 1e-150  # kept within floating point: into the matrix
    if tiny.any():
        cov[tiny] *= factor[tiny, None, None]
        factor[tiny] = 1.0


def dpgd_warm_start(H, g, phi0, *, noise_multiplier, sensitivity, radius, smoothness, max_iter,
                    plan, noise, commitment):
    """DPGD-Explain for one query from a warm start, with a public stopping rule.

    The steps are those of :func:`dpgd_explain`. The number of steps is
    decided from released quantities only (the first noisy gradient), so it
    is post-processing, and the steps it asks for are paid for only then
    (a Gaussian privacy filter): ``commitment`` pays for the first noisy
    gradient; after it, ``plan(beta)`` returns the number of steps and the
    commitment that pays for the others (the caller commits them there,
    before they are computed). ``beta`` estimates the true gradient norm at
    the warm start from the first noisy gradient ``G`` (``E||G||^2 = beta^2
    + d s^2``, ``s = noise_multiplier * sensitivity``).

    Parameters
    ----------
    H : ndarray of shape (d, d)
    g : ndarray of shape (d,)
    phi0 : ndarray of shape (d,)
    noise_multiplier, sensitivity : float
        As for :func:`dpgd_explain`.
    radius, smoothness : float
        As for :func:`dpgd_explain`.
    max_iter : int
        At most this many steps.
    plan : callable
        ``plan(beta) -> (n_steps, rest)``: the number of steps (1 to
        ``max_iter``) and the Commitment paying for steps 2 to ``n_steps``
        (unused when ``n_steps`` is 1).
    noise : skdpx.privacy.NoiseSource
    commitment : skdpx.privacy.Commitment
        Pays for the first noisy gradient.

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
    noise_sq = d * (noise_multiplier * sensitivity) ** 2
    n_steps = max_iter
    for t in range(1, max_iter + 1):
        grad = noisy_gradient(2.0 * (H @ phi - g), noise_multiplier=noise_multiplier,
                              sensitivity=sensitivity, noise=noise, commitment=commitment)
        phi = project_to_ball((phi - step * grad)[None], radius)[0]
        if t == 1:
            # from the released gradient only: post-processing
            beta = np.sqrt(max(float(grad @ grad) - noise_sq, 0.0))
            n_steps, commitment = plan(beta)
            if not 1 <= n_steps <= max_iter:
                raise ValueError(f"plan must return 1 to {max_iter} steps, got {n_steps!r}.")
        if t >= n_steps:
            break
    return phi, n_steps
