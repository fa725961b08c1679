"""Weights of the DP local loss and the exact optimum used to evaluate explanations."""

import numpy as np
import pytest
from scipy.optimize import minimize

from skdpx.explain import (
    flat_radius,
    gradient_sensitivity,
    kernel_weight,
    stable_weight,
    weight_cap,
)
from skdpx.metrics import explanation_loss, local_loss_terms, optimal_explanation


def _problem(m=300, d=4, q=5, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.uniform(0, 1, size=(m, d))
    y = np.tanh(X @ rng.normal(size=d) * 2)
    return X, y, X[rng.choice(m, q, replace=False)] + 0.01


def _direct_loss(phi, z, X, y, weight):
    r = np.linalg.norm(X - z, axis=1)
    return np.mean(weight(r) * ((X - z) @ phi - y) ** 2)


def test_quadratic_form_equals_the_loss():
    X, y, Z = _problem()
    H, g, s = local_loss_terms(Z, X, y)
    rng = np.random.RandomState(1)
    for q, z in enumerate(Z):
        phi = rng.normal(size=X.shape[1])
        expected = _direct_loss(phi, z, X, y, stable_weight)
        assert phi @ H[q] @ phi - 2 * g[q] @ phi + s[q] == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("radius", [0.05, 0.5, 10.0])  # on the boundary, mixed, inside
def test_optimum_matches_a_generic_constrained_solver(radius):
    X, y, Z = _problem()
    weight = lambda r: kernel_weight(r, kernel_width=0.5, radius=radius)  # noqa: E731
    phi, best = optimal_explanation(Z, X, y, weight=weight, radius=radius)
    assert np.all(np.linalg.norm(phi, axis=1) <= radius * (1 + 1e-9))
    for q, z in enumerate(Z):
        res = minimize(lambda p: _direct_loss(p, z, X, y, weight), np.zeros(X.shape[1]),
                       constraints=[{"type": "ineq", "fun": lambda p: radius**2 - p @ p}],
                       method="SLSQP", options={"ftol": 1e-14, "maxiter": 500})
        assert best[q] <= res.fun + 1e-9
        assert best[q] == pytest.approx(_direct_loss(phi[q], z, X, y, weight), rel=1e-9)
        assert best[q] == pytest.approx(res.fun, rel=1e-4, abs=1e-10)


def test_explanation_loss_is_zero_at_the_optimum_and_positive_elsewhere():
    X, y, Z = _problem()
    phi, _ = optimal_explanation(Z, X, y, radius=1.0)
    np.testing.assert_allclose(explanation_loss(phi, Z, X, y, radius=1.0), 0, atol=1e-12)
    rng = np.random.RandomState(2)
    other = rng.normal(size=phi.shape)
    other /= np.maximum(1, np.linalg.norm(other, axis=1, keepdims=True))  # inside the ball
    assert np.all(explanation_loss(other, Z, X, y, radius=1.0) > 0)


@pytest.mark.parametrize("radius", [0.5, 1.0, 3.0])
@pytest.mark.parametrize("c", [0.5, 1.0, 2.0])
def test_weights_bound_the_gradient_sensitivity(radius, c):
    # one row's gradient contribution, over many rows, queries, phi in the
    # ball and labels in [-1, 1], never exceeds c / m, and comes close to it
    rng = np.random.RandomState(0)
    m, d, n = 1000, 3, 20000
    diff = rng.normal(size=(n, d)) * rng.exponential(2.0, size=(n, 1))  # x - z
    r = np.linalg.norm(diff, axis=1)
    unit = diff / r[:, None]
    phi = radius * unit * rng.choice([-1.0, 1.0], size=(n, 1))  # worst case: along x - z
    y = -np.sign(np.einsum("ij,ij->i", phi, diff))
    for weight in (lambda r: stable_weight(r, c=c, radius=radius),
                   lambda r: kernel_weight(r, kernel_width=5.0, c=c, radius=radius)):
        a = weight(r)
        assert np.all(a <= weight_cap(r, c=c, radius=radius) * (1 + 1e-12))
        residual = np.einsum("ij,ij->i", phi, diff) - y
        contribution = 2 / m * a * np.abs(residual) * r
        assert contribution.max() <= c / m * (1 + 1e-12)
        # adding or removing a row moves the gradient by its contribution
        assert gradient_sensitivity(m, c=c, radius=radius) == c / m
    # the stable weight reaches the bound beyond its flat part
    a = stable_weight(r, c=c, radius=radius)
    contribution = 2 / m * a * np.abs(np.einsum("ij,ij->i", phi, diff) - y) * r
    assert contribution.max() > 0.99 * c / m


@pytest.mark.parametrize("radius", [0.5, 1.0, 3.0])
@pytest.mark.parametrize("c", [0.5, 1.0, 2.0])
def test_replacing_a_row_moves_the_gradient_by_at_most_the_sensitivity(radius, c):
    # (c + 2 r*) / m, below the triangle inequality's 2c / m: over random
    # pairs of rows (out, in), phi in the ball and labels at +-1, for both
    # weights; and the worst pairs come within 20% of it
    rng = np.random.RandomState(1)
    m, n = 1000, 200_000
    bound = gradient_sensitivity(m, c=c, radius=radius, relation="replace_one")
    r_star = flat_radius(c=c, radius=radius)
    assert r_star * (radius * r_star + 1) == pytest.approx(c / 2)
    assert bound == pytest.approx((c + 2 * r_star) / m) and bound < 2 * c / m
    # two rows in the plane of phi (the worst case: other directions only shorten
    # phi . w), at distances around r*, at random angles
    r = r_star * np.exp(rng.normal(0, 1.0, size=(n, 2)))
    angle = rng.uniform(0, 2 * np.pi, size=(n, 3))
    w = r[:, :, None] * np.stack([np.cos(angle[:, :2]), np.sin(angle[:, :2])], axis=2)
    phi = radius * rng.uniform(0, 1, size=(n, 1)) ** 0.2 * np.c_[np.cos(angle[:, 2]),
                                                                   np.sin(angle[:, 2])]
    y = rng.choice([-1.0, 1.0], size=(n, 2))
    for weight in (lambda r: stable_weight(r, c=c, radius=radius),
                   lambda r: kernel_weight(r, kernel_width=5.0 * r_star, c=c, radius=radius)):
        a = weight(r)
        residual = np.einsum("nj,nij->ni", phi, w) - y
        grads = 2 / m * (a * residual)[:, :, None] * w
        moved = np.linalg.norm(grads[:, 0] - grads[:, 1], axis=1)
        assert moved.max() <= bound * (1 + 1e-12)
    assert moved.max() > 0.8 * bound


def test_gradient_sensitivity_refuses_an_unknown_relation():
    with pytest.raises(ValueError, match="relation"):
        gradient_sensitivity(10, relation="swap")


def test_stable_weight_is_one_near_the_query_and_decreasing():
    r = np.linspace(0, 10, 1001)
    a = stable_weight(r)
    assert a[0] == 1.0 and np.all(np.diff(a) <= 0)
    assert a[-1] == pytest.approx(1 / (2 * 10 * 11))


# --------------------------------------------------------------------------
# Algorithm 1's gradient descent, vectorised over queries
# --------------------------------------------------------------------------
from skdpx.explain._dpgd import (answer_std, dpgd_explain, dpgd_warm_start,  # noqa: E402
                                 path_covariance_step, project_to_ball)
from skdpx.privacy import Commitment, gaussian_event, noise_source  # noqa: E402


def _seeded(seed):
    with pytest.warns(Warning, match="reproducible"):
        return noise_source(seed)


def test_projection_onto_the_ball():
    phi = np.array([[3.0, 4.0], [0.1, 0.0], [0.0, 0.0]])
    np.testing.assert_allclose(project_to_ball(phi, 1.0), [[0.6, 0.8], [0.1, 0.0], [0, 0]])


def test_noiseless_descent_reaches_the_optimum():
    X, y, Z = _problem()
    terms = local_loss_terms(Z, X, y)
    phi = dpgd_explain(terms[0], terms[1], noise_multiplier=0.0, sensitivity=2 / len(X),
                       radius=1.0, n_iter=3000, noise=_seeded(0), smoothness=1.0,
                       commitment=Commitment(gaussian_event(0.0), "no noise"))
    loss = explanation_loss(phi, Z, X, y, radius=1.0)
    assert np.all(loss < 1e-3 * optimal_explanation(Z, X, y, radius=1.0)[1] + 1e-6)


def test_noise_has_the_calibrated_scale_and_queries_stop_at_their_own_count():
    # with H = 0 and g = 0 the iterates are a pure noise walk: the first
    # step's displacement is step * noise, of known standard deviation
    q, d = 4000, 3
    H, g = np.zeros((q, d, d)), np.zeros((q, d))
    sens, z, radius, smoothness = 1e-3, 2.0, 100.0, 4.0
    paid = Commitment(gaussian_event(z, steps=q), "one step each")
    one = dpgd_explain(H, g, noise_multiplier=z, sensitivity=sens, radius=radius, n_iter=1,
                       noise=_seeded(0), commitment=paid, smoothness=smoothness)
    assert np.std(one) == pytest.approx(z * sens / smoothness, rel=0.03)
    assert paid.exhausted
    counts = np.arange(q) % 3  # 0, 1 or 2 iterations
    # only the queries still running release a gradient: sum(counts) releases
    paid = Commitment(gaussian_event(z, steps=int(counts.sum())), "their own counts")
    phi = dpgd_explain(H, g, noise_multiplier=z, sensitivity=sens, radius=radius, n_iter=counts,
                       noise=_seeded(1), commitment=paid, smoothness=smoothness)
    assert np.all(phi[counts == 0] == 0) and np.all(phi[counts > 0] != 0)
    assert paid.exhausted
    # inside the ball the noise adds up: std = step s sqrt(steps), each query its own
    paid = Commitment(gaussian_event(z, steps=int(counts.sum())), "their own counts")
    _, std = dpgd_explain(H, g, noise_multiplier=z, sensitivity=sens, radius=radius,
                          n_iter=counts, noise=_seeded(2), commitment=paid,
                          smoothness=smoothness, with_std=True)
    np.testing.assert_allclose(std, np.repeat(z * sens / smoothness * np.sqrt(counts)[:, None], d, 1))


def test_path_covariance_is_the_projections_first_order_map():
    # C <- J (C + v I) J', J the Jacobian of the projection at the point before it
    rng = np.random.default_rng(0)
    q, d, radius, v = 3, 4, 1.0, 0.01
    moved = rng.normal(size=(q, d))
    moved *= np.array([[0.5], [1.5], [10.0]]) / np.linalg.norm(moved, axis=1, keepdims=True)
    B = rng.normal(size=(q, d, d))
    cov = B @ B.transpose(0, 2, 1)
    expected, jacobians = [], []
    for k in range(q):
        h = 1e-6  # central differences of project_to_ball at moved[k]
        J = np.column_stack([
            (project_to_ball(moved[k:k + 1] + h * e, radius)
             - project_to_ball(moved[k:k + 1] - h * e, radius))[0] / (2 * h)
            for e in np.eye(d)])
        jacobians.append(J)
        expected.append(J @ (cov[k] + v * np.eye(d)) @ J.T)
    factor = np.ones(q)
    path_covariance_step(cov, factor, moved, radius, v)
    np.testing.assert_allclose(factor[:, None, None] * cov, expected, rtol=1e-6, atol=1e-9)
    # the next step adds v in the true scale, whatever the factor
    path_covariance_step(cov, factor, moved, radius, v)
    expected = [J @ (C + v * np.eye(d)) @ J.T for J, C in zip(jacobians, expected)]
    np.testing.assert_allclose(factor[:, None, None] * cov, expected, rtol=1e-6, atol=1e-9)
    # far outside, 200 more steps (the factor 0.01 per step goes below floating point
    # unless folded back into the matrix): the tangent variance levels off at
    # beta^2 v / (1 - beta^2), the radial one at 0
    for _ in range(200):
        path_covariance_step(cov, factor, moved, radius, v)
    n = moved[2] / 10.0
    final = factor[2] * cov[2]
    np.testing.assert_allclose(final, 0.01 * v / 0.99 * (np.eye(d) - np.outer(n, n)),
                               rtol=1e-9, atol=1e-15)


def test_descent_refuses_releases_outside_the_commitment():
    # one step short: the last release is refused before its noise is drawn
    q, d = 5, 2
    H, g = np.zeros((q, d, d)), np.zeros((q, d))
    short = Commitment(gaussian_event(2.0, steps=2 * q - 1), "one step short")
    with pytest.raises(RuntimeError, match="not in the spend committed"):
        dpgd_explain(H, g, noise_multiplier=2.0, sensitivity=1.0, radius=1.0, n_iter=2,
                     noise=_seeded(0), commitment=short, smoothness=1.0)


def test_warm_start_descent_pays_its_first_step_then_what_the_plan_commits():
    d = 3
    H, g = np.eye(d) * 0.1, np.full(d, 0.05)
    first = Commitment(gaussian_event(2.0), "first step")
    rest = Commitment(gaussian_event(2.0, steps=4), "four more")
    seen = []

    def plan(beta):
        seen.append(beta)
        assert first.exhausted  # the first gradient was released before the plan
        return 5, rest

    phi, n_steps = dpgd_warm_start(H, g, np.zeros(d), noise_multiplier=2.0, sensitivity=0.01,
                                   radius=1.0, smoothness=1.0, max_iter=10, plan=plan,
                                   noise=_seeded(0), commitment=first)
    assert n_steps == 5 and len(seen) == 1 and rest.exhausted
    assert np.linalg.norm(phi) <= 1.0


def test_the_public_smoothness_bound_holds():
    # 2 lambda_max(H) <= c / radius for weights in F(c)
    X, y, Z = _problem(m=400, d=3, q=20)
    for radius in (0.5, 1.0, 4.0):
        H, _, _ = local_loss_terms(Z * 0 + 0.5, X, y,
                                   weight=lambda r: stable_weight(r, radius=radius))
        assert 2 * np.linalg.eigvalsh(H).max() <= 1.0 / radius


def test_trust_region_on_indefinite_forms_matches_a_generic_solver():
    from skdpx.explain._local_loss import trust_region

    rng = np.random.RandomState(3)
    d = 4
    A = rng.normal(size=(6, d, d))
    H = (A + A.transpose(0, 2, 1)) / 2  # indefinite
    g = rng.normal(size=(6, d))
    H[5] = np.diag([-1.0, 1.0, 2.0, 3.0])
    g[5] = [0.0, 0.1, 0.1, 0.1]  # the hard case: g orthogonal to the lowest eigenvector
    phi = trust_region(H, g, 1.0)
    for q in range(6):
        f = lambda p: p @ H[q] @ p - 2 * g[q] @ p  # noqa: E731
        best = min(
            (minimize(f, x0, constraints=[{"type": "ineq", "fun": lambda p: 1 - p @ p}],
                      method="SLSQP", options={"ftol": 1e-14, "maxiter": 500}).fun
             for x0 in rng.normal(size=(20, d)) / 2),
        )
        assert np.linalg.norm(phi[q]) <= 1 + 1e-9
        assert f(phi[q]) <= best + 1e-7


def test_unchecked_terms_are_the_same_numbers():
    # the explainer skips the validation of its (validated) rows per query
    X, y, Z = _problem()
    checked, unchecked = local_loss_terms(Z, X, y), local_loss_terms(Z, X, y, check_input=False)
    for a, b in zip(checked, unchecked):
        np.testing.assert_array_equal(a, b)


def test_answer_std_adds_the_signal_an_answer_on_the_sphere_loses():
    radius = 2.0
    cov = np.stack([np.diag([0.01, 0.02, 0.03, 0.04])] * 3)
    factor = np.array([1.0, 1.0, 4.0])
    phi = np.array([[0.5, 0.0, 0.0, 0.0],      # inside: the first order alone
                    [0.0, 0.0, 0.0, radius],   # on the sphere
                    [radius, 0.0, 0.0, 0.0]])  # on the sphere, four times the noise
    std = answer_std(cov, factor, phi, radius)
    np.testing.assert_allclose(std[0], np.sqrt([0.01, 0.02, 0.03, 0.04]))
    for k in (1, 2):
        C = factor[k] * cov[k]
        rho2 = (np.trace(C) ** 2 + 2 * np.sum(C * C)) / (4 * radius ** 2)
        n = np.abs(phi[k]) / radius
        near = np.minimum(n + 3 * np.sqrt(np.diag(C)) / radius, 1)
        expected = np.sqrt(np.diag(C) + rho2 * near ** 2)
        np.testing.assert_allclose(std[k], expected)
    # the second order: tiny while the noise is small against the radius
    assert std[1, 3] / np.sqrt(0.04) < 1.02
    # no value's error exceeds 2 radius (both answers lie in the ball)
    huge = answer_std(cov * 1e6, factor, phi, radius)
    assert np.all(huge[1:] == 2 * radius) and np.all(huge[0] <= 2 * radius)
