"""Tests for the DP-SGD engine ``skdpx.privacy.DPSGD`` and its dense closed forms."""

import math

import dp_accounting
import numpy as np
import pytest

from skdpx.privacy import (
    DPSGD,
    Commitment,
    DenseGradients,
    noise_source,
    audit_gdp,
    calibrate_noise,
    clipped_gradient_sum,
    dense_clipped_grad,
    dense_grad_sq_norms,
    gaussian_epsilon,
    gaussian_event,
    poisson_sample,
)


def _bind(engine, random_state=None):
    """The engine bound to a noise source and a commitment to its planned steps."""
    return engine.bind(noise_source(random_state),
                       Commitment(engine.planned_event(), "test steps"))


# --------------------------------------------------------------------------
# A 2-layer network: dense -> tanh -> dense, squared loss per row
# --------------------------------------------------------------------------
N_IN, N_HIDDEN, N_OUT = 3, 4, 2


def _unpack(theta):
    shapes = [(N_IN, N_HIDDEN), (N_HIDDEN,), (N_HIDDEN, N_OUT), (N_OUT,)]
    params, start = [], 0
    for shape in shapes:
        size = int(np.prod(shape))
        params.append(theta[start : start + size].reshape(shape))
        start += size
    return params


def _row_loss(theta, x, y):
    W1, b1, W2, b2 = _unpack(theta)
    out = np.tanh(x @ W1 + b1) @ W2 + b2
    return 0.5 * np.sum((out - y) ** 2)


def _fd_grad(theta, x, y, h=1e-6):
    """Central finite differences of one row's loss: the brute-force gradient."""
    grad = np.empty_like(theta)
    for j in range(theta.size):
        e = np.zeros_like(theta)
        e[j] = h
        grad[j] = (_row_loss(theta + e, x, y) - _row_loss(theta - e, x, y)) / (2 * h)
    return grad


def _forward_backward(theta, X, Y):
    """Layer inputs and back-propagated errors of the batch (what a model provides)."""
    W1, b1, W2, b2 = _unpack(theta)
    h = np.tanh(X @ W1 + b1)
    d2 = h @ W2 + b2 - Y
    d1 = (d2 @ W2.T) * (1 - h**2)
    return (X, d1), (h, d2)


@pytest.fixture
def network():
    rng = np.random.RandomState(0)
    n_params = N_IN * N_HIDDEN + N_HIDDEN + N_HIDDEN * N_OUT + N_OUT
    theta = rng.normal(scale=0.8, size=n_params)
    X = rng.normal(size=(7, N_IN)) * np.array([0.1, 1.0, 3.0])
    Y = rng.normal(size=(7, N_OUT))
    G = np.array([_fd_grad(theta, X[i], Y[i]) for i in range(len(X))])
    return theta, X, Y, G


def test_dense_grad_norms_match_brute_force(network):
    theta, X, Y, G = network
    (a1, d1), (a2, d2) = _forward_backward(theta, X, Y)
    sq = dense_grad_sq_norms(a1, d1) + dense_grad_sq_norms(a2, d2)
    assert sq.shape == (len(X),)
    np.testing.assert_allclose(np.sqrt(sq), np.linalg.norm(G, axis=1), rtol=1e-6)


def test_dense_clipped_grad_matches_brute_force(network):
    theta, X, Y, G = network
    (a1, d1), (a2, d2) = _forward_backward(theta, X, Y)
    factors = np.random.RandomState(1).uniform(0, 1, size=len(X))
    dW1, db1 = dense_clipped_grad(a1, d1, factors)
    dW2, db2 = dense_clipped_grad(a2, d2, factors)
    assert dW1.shape == (N_IN, N_HIDDEN) and db1.shape == (N_HIDDEN,)
    assert dW2.shape == (N_HIDDEN, N_OUT) and db2.shape == (N_OUT,)
    expected = _unpack(factors @ G)
    for got, want in zip([dW1, db1, dW2, db2], expected):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def test_dense_closed_forms_without_bias():
    rng = np.random.RandomState(2)
    a, d = rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    factors = rng.uniform(size=5)
    per_row = [np.outer(a[i], d[i]) for i in range(5)]  # the weight gradient of row i
    np.testing.assert_allclose(
        dense_grad_sq_norms(a, d, bias=False), [np.sum(g**2) for g in per_row], rtol=1e-12
    )
    np.testing.assert_allclose(
        dense_grad_sq_norms(a, d), [np.sum(g**2) + np.sum(d[i] ** 2) for i, g in enumerate(per_row)],
        rtol=1e-12,
    )
    grads = dense_clipped_grad(a, d, factors, bias=False)
    assert len(grads) == 1
    np.testing.assert_allclose(grads[0], sum(f * g for f, g in zip(factors, per_row)), rtol=1e-12)


def test_step_without_noise_is_mean_of_clipped_rows(network):
    # noise 0 with a clipping norm: the engine clips, sums, and divides by the batch size.
    theta, X, Y, G = network
    engine = _bind(DPSGD(noise_multiplier=0.0, max_grad_norm=0.5, sample_rate=1.0, n_samples=len(X),
                   max_steps=1), 0)

    grads, idx = engine.step(
        lambda idx: DenseGradients(_forward_backward(theta, X[idx], Y[idx])))
    np.testing.assert_array_equal(idx, np.arange(len(X)))
    row_norms = np.linalg.norm(G, axis=1)
    assert np.any(row_norms > 0.5)  # the test clips something
    clipped = G * np.minimum(1, 0.5 / row_norms)[:, None]
    # DenseGradients gives the weights first, then the biases
    dW1, dW2, db1, db2 = grads
    for got, want in zip([dW1, db1, dW2, db2], _unpack(clipped.mean(axis=0))):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
    # the same step from the per-sample gradients themselves (one array of all parameters)
    engine = _bind(DPSGD(noise_multiplier=0.0, max_grad_norm=0.5, sample_rate=1.0,
                         n_samples=len(X), max_steps=1), 0)
    (flat,), _ = engine.step(lambda idx: G[idx])
    np.testing.assert_allclose(flat, clipped.mean(axis=0), rtol=1e-12)


def test_one_forward_and_backward_pass_per_step(network):
    # the model's per_sample is called once a step: the norms and the clipped sum
    # both come from what it returns (no cache in the model)
    theta, X, Y, _ = network
    engine = _bind(DPSGD(noise_multiplier=1.0, max_grad_norm=0.5, sample_rate=0.5,
                         n_samples=len(X), max_steps=4), 0)
    calls = []

    def per_sample(idx):
        calls.append(idx)
        return DenseGradients(_forward_backward(theta, X[idx], Y[idx]))

    for k in range(1, 5):
        engine.step(per_sample)
        assert len(calls) == k


# --------------------------------------------------------------------------
# Clipping
# --------------------------------------------------------------------------
@pytest.mark.parametrize("max_grad_norm", [0.01, 1.0, 3.5])
def test_clip_factors(max_grad_norm):
    engine = DPSGD(noise_multiplier=1.0, max_grad_norm=max_grad_norm, sample_rate=0.1,
                   n_samples=100, max_steps=1)
    rng = np.random.RandomState(0)
    norms = np.concatenate([[0.0, max_grad_norm, 1e-300, 1e300], rng.exponential(max_grad_norm, 500)])
    f = engine.clip_factors(norms)
    assert f.shape == norms.shape
    assert np.all((f > 0) & (f <= 1))
    assert np.all(f * norms <= max_grad_norm + 1e-12)
    below = norms <= max_grad_norm
    assert below.sum() > 10 and (~below).sum() > 10
    assert np.all(f[below] == 1.0)  # untouched
    np.testing.assert_allclose(f[~below] * norms[~below], max_grad_norm, rtol=1e-12)


def test_no_clipping_without_max_grad_norm():
    engine = DPSGD(noise_multiplier=0.0, max_grad_norm=None, sample_rate=0.5, n_samples=10,
                   max_steps=1)
    np.testing.assert_array_equal(engine.clip_factors([0.0, 1.0, 1e6]), np.ones(3))


# --------------------------------------------------------------------------
# Noise
# --------------------------------------------------------------------------
def test_noise_scale_with_zero_gradients():
    z, C, q, n, dim, steps = 1.3, 0.7, 0.05, 400, 2000, 40
    engine = _bind(DPSGD(noise_multiplier=z, max_grad_norm=C, sample_rate=q, n_samples=n,
                   max_steps=steps), 0)
    draws = []
    for _ in range(steps):
        (g,), _ = engine.step(lambda idx: [np.zeros((len(idx), dim))])
        draws.append(g)
    draws = np.concatenate(draws)
    expected = z * C / (q * n)
    assert abs(draws.std() / expected - 1) < 0.02
    assert abs(draws.mean()) < 4 * expected / math.sqrt(draws.size)
    assert engine.n_steps == steps


# --------------------------------------------------------------------------
# Poisson sampling
# --------------------------------------------------------------------------
def _batches(engine, k):
    out = []
    for _ in range(k):
        _, idx = engine.step(lambda idx: [np.zeros((len(idx), 1))])
        out.append(idx)
    return out


def test_poisson_batch_sizes():
    n, q, k = 1000, 0.1, 2000
    engine = _bind(DPSGD(noise_multiplier=1.0, max_grad_norm=1.0, sample_rate=q, n_samples=n,
                   max_steps=k), 0)
    batches = _batches(engine, k)
    for idx in batches[:20]:
        assert np.all(np.diff(idx) > 0) and idx.min() >= 0 and idx.max() < n
    sizes = np.array([len(idx) for idx in batches])
    assert abs(sizes.mean() - q * n) < 1.0  # standard error ~0.21
    assert 0.8 * n * q * (1 - q) < sizes.var() < 1.2 * n * q * (1 - q)  # std. error ~3%
    # every row is in about q of the batches: Poisson, not fixed, sampling
    counts = np.bincount(np.concatenate(batches), minlength=n)
    assert abs(counts.mean() / k - q) < 0.005


@pytest.mark.parametrize("q", [0.02, 0.05, 0.1])  # the size-and-subset draw below 1/16
def test_poisson_sample_is_independent_bernoulli_rows(q):
    from skdpx.privacy._mechanisms import SPARSE_SAMPLE_RATE

    assert (q < SPARSE_SAMPLE_RATE) == (q < 0.0625)
    n, k = 400, 20000
    with noise_source(1) as noise:
        batches = [poisson_sample(n, q, noise=noise) for _ in range(k)]
        assert len(poisson_sample(0, q, noise=noise)) == 0
    for idx in batches[:200]:
        assert idx.dtype.kind == "i" and np.all(np.diff(idx) > 0)
        assert len(idx) == 0 or (idx[0] >= 0 and idx[-1] < n)
    # the size is Binomial(n, q): its mean and variance (a fixed-size sample has none)
    sizes = np.array([len(idx) for idx in batches])
    var = n * q * (1 - q)
    assert abs(sizes.mean() - n * q) < 5 * math.sqrt(var / k)
    assert abs(sizes.var() / var - 1) < 0.06  # std. error ~1%
    # every row is in a batch with probability q, the same for all rows (chi-square
    # over the rows: mean 399, std 28; a row left out, or twice as likely, is ~k q away)
    counts = np.bincount(np.concatenate(batches), minlength=n)
    chi2 = float(((counts - k * q) ** 2 / (k * q * (1 - q))).sum())
    assert abs(chi2 - (n - 1)) < 5 * math.sqrt(2 * (n - 1)), chi2
    # two rows are in together with probability q^2 (independent rows): rows 0 and 1
    both = sum(1 for idx in batches if len(idx) > 1 and idx[0] == 0 and idx[1] == 1)
    assert abs(both - k * q * q) < 5 * math.sqrt(k * q * q) + 1


def test_seeded_engines_repeat_and_unseeded_differ():
    def make(seed):
        return _bind(DPSGD(noise_multiplier=1.0, max_grad_norm=1.0, sample_rate=0.3, n_samples=50,
                     max_steps=5), seed)

    a, b = _batches(make(0), 5), _batches(make(0), 5)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    c = _batches(make(1), 5)
    assert not all(np.array_equal(x, y) for x, y in zip(a, c))
    u, v = _batches(make(None), 5), _batches(make(None), 5)
    assert not all(np.array_equal(x, y) for x, y in zip(u, v))
    # and the noise too
    g1 = make(0).privatize([np.zeros(10)], 3)[0]
    g2 = make(0).privatize([np.zeros(10)], 3)[0]
    g3 = make(None).privatize([np.zeros(10)], 3)[0]
    np.testing.assert_array_equal(g1, g2)
    assert not np.array_equal(g1, g3)


def test_privatize_is_one_release_of_the_concatenation():
    # several parameter arrays (a scalar among them) are noised as one vector, in
    # their order, and given back in their shapes: one seeded draw of them all
    z, C, q, n = 1.3, 0.7, 0.25, 40
    grads = [np.arange(24.0).reshape(2, 3, 4), np.float32(5.0), np.ones(3, dtype=np.float32),
             -np.arange(6.0).reshape(6, 1)]
    engine = _bind(DPSGD(noise_multiplier=z, max_grad_norm=C, sample_rate=q, n_samples=n,
                         max_steps=1), 3)
    got = engine.privatize(grads, 11)
    flat = np.concatenate([np.ravel(g) for g in grads]).astype(np.float64)
    with noise_source(3) as noise:  # the same seed: the same stream
        expected = (flat + z * C * noise.standard_normal(flat.shape)) / (q * n)
    assert [g.shape for g in got] == [np.shape(g) for g in grads]
    assert all(g.dtype == np.float64 for g in got)
    np.testing.assert_array_equal(np.concatenate([np.ravel(g) for g in got]), expected)


def test_unseeded_engines_ignore_global_seed():
    np.random.seed(0)
    a = _bind(DPSGD(noise_multiplier=1.0, max_grad_norm=1.0, sample_rate=0.5, n_samples=10,
                    max_steps=1)).privatize([np.zeros(20)], 5)[0]
    np.random.seed(0)
    b = _bind(DPSGD(noise_multiplier=1.0, max_grad_norm=1.0, sample_rate=0.5, n_samples=10,
                    max_steps=1)).privatize([np.zeros(20)], 5)[0]
    assert not np.array_equal(a, b)


def test_full_batch_when_sample_rate_is_one():
    engine = _bind(DPSGD(noise_multiplier=1.0, max_grad_norm=1.0, sample_rate=1.0, n_samples=17,
                   max_steps=3), 0)
    for idx in _batches(engine, 3):
        np.testing.assert_array_equal(idx, np.arange(17))


# --------------------------------------------------------------------------
# Accounting
# --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "epsilon, delta, n, batch_size, epochs",
    [(1.0, 1e-5, 1000, 100, 3), (3.0, 1e-6, 600, 50, 2), (0.5, 1e-5, 300, 300, 4)],
)
def test_from_budget_accounting(epsilon, delta, n, batch_size, epochs):
    engine = _bind(DPSGD.from_budget(epsilon, delta, n_samples=n, batch_size=batch_size, epochs=epochs,
                               max_grad_norm=1.0), 0)
    assert engine.max_steps == math.ceil(epochs * n / batch_size)
    assert engine.sample_rate == batch_size / n
    assert engine.private and engine.max_grad_norm == 1.0
    eps = gaussian_epsilon(engine.noise_multiplier, delta, steps=engine.max_steps,
                           sample_rate=engine.sample_rate)
    assert 0.97 * epsilon <= eps <= epsilon
    assert engine.planned_event() == gaussian_event(
        engine.noise_multiplier, steps=engine.max_steps, sample_rate=engine.sample_rate
    )


@pytest.mark.parametrize(
    "n, batch_size, epochs",
    [(1000, 100, 3), (60000, 256, 20), (147, 3, 1), (61, 10, 10), (2000, 64, 7), (50000, 7, 7)],
)
def test_from_budget_steps_are_epochs_times_n_over_batch(n, batch_size, epochs):
    # Regression: the steps were ceil(epochs / (batch_size / n)); the float
    # division rounds e.g. 1 / (3 / 147) to 49.00000000000001, giving one step
    # more than ceil(epochs * n / batch_size) = 49.
    engine = DPSGD.from_budget(np.inf, 1e-5, n_samples=n, batch_size=batch_size, epochs=epochs,
                               max_grad_norm=1.0)
    assert engine.max_steps == math.ceil(epochs * n / batch_size)


def test_event_tracks_steps_and_budget_is_enforced():
    # the plan of test_from_budget_accounting's first case: its (slow, subsampled)
    # calibration is memoised
    engine = _bind(DPSGD.from_budget(1.0, 1e-5, n_samples=1000, batch_size=100, epochs=3,
                               max_grad_norm=1.0), 0)
    z, q = engine.noise_multiplier, engine.sample_rate
    assert engine.max_steps == 30
    assert engine.event == dp_accounting.NoOpDpEvent()
    for k in range(1, engine.max_steps + 1):
        _batches(engine, 1)
        assert engine.n_steps == k
        assert engine.event == gaussian_event(z, steps=k, sample_rate=q)
    with pytest.raises(RuntimeError):
        _batches(engine, 1)
    assert engine.n_steps == engine.max_steps
    assert engine.event == engine.planned_event()


def test_infinite_epsilon_is_exact_batch_mean():
    rng = np.random.RandomState(0)
    G = rng.normal(scale=100.0, size=(300, 4))  # huge gradients: would be clipped
    engine = _bind(DPSGD.from_budget(np.inf, 1e-5, n_samples=300, batch_size=30, epochs=1,
                               max_grad_norm=1.0), 0)
    assert not engine.private and engine.noise_multiplier == 0 and engine.max_grad_norm is None
    for _ in range(3):
        (g,), idx = engine.step(lambda idx: [G[idx]])
        assert len(idx) > 0
        np.testing.assert_allclose(g, G[idx].mean(axis=0), rtol=1e-12)


def test_a_private_engine_under_replace_one_is_refused_while_planning():
    # Poisson subsampling is accounted for add-or-remove only: refused in one place,
    # the plan, naming who trains and the way out; the non-private engine accounts nothing
    plan = dict(n_samples=1000, batch_size=100, epochs=1, max_grad_norm=1.0)
    with pytest.raises(ValueError, match=r"^The model trains .*add-or-remove neighbours only;"
                       r".* 'replace_one'\. Use a ledger with relation='add_or_remove', "
                       r"or set private=False\.$"):
        DPSGD.from_budget(1.0, 1e-5, relation="replace_one", trainer="The model",
                          alternative="set private=False", **plan)
    with pytest.raises(ValueError, match=r"'replace_one'\. Use a ledger with "
                       r"relation='add_or_remove'\.$"):
        DPSGD.from_budget(1.0, 1e-5, relation="replace_one", **plan)
    assert not DPSGD.from_budget(np.inf, 1e-5, relation="replace_one", **plan).private
    assert DPSGD.from_budget(1.0, 1e-5, relation="add_or_remove", **plan).private


def _network_gradients(theta, X, Y):
    """Fresh copies of the network's parameters [W1, W2, b1, b2] and its per-sample
    gradients at them (a function of the row indices; it reads the live parameters)."""
    W1, b1, W2, b2 = (p.copy() for p in _unpack(theta))

    def per_sample(idx):
        h = np.tanh(X[idx] @ W1 + b1)
        d2 = h @ W2 + b2 - Y[idx]
        return DenseGradients([(X[idx], (d2 @ W2.T) * (1 - h**2)), (h, d2)])

    return [W1, W2, b1, b2], per_sample


def test_train_is_the_steps_then_the_optimiser(network):
    # train = step, the weight decay on the noisy gradient, the optimiser's update
    # and its learning-rate schedule: to the bit, as the loop it replaces
    from skdpx.utils._optim import make_optimizer

    theta, X, Y, _ = network

    def run(by_hand):
        params, per_sample = _network_gradients(theta, X, Y)

        engine = _bind(DPSGD(noise_multiplier=1.0, max_grad_norm=0.5, sample_rate=0.6,
                             n_samples=len(X), max_steps=6), 3)
        optimizer = make_optimizer("sgd", params, 0.1)
        decay = [0.3, 0.2, 0.0, 0.0]
        if by_hand:
            for step in range(engine.max_steps):
                if step and step % 2 == 0:
                    optimizer.scale_learning_rate(0.5)
                grads, _ = engine.step(per_sample)
                optimizer.update_params(params, [g + c * p if c else g
                                                 for g, c, p in zip(grads, decay, params)])
        else:
            engine.train(per_sample, params, optimizer, weight_decay=decay, lr_decay=(0.5, 2))
        return params, engine.n_steps, optimizer.learning_rate

    (got, steps, rate), (want, want_steps, want_rate) = run(False), run(True)
    assert steps == want_steps == 6 and rate == want_rate == 0.1 * 0.5**2
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    assert not np.array_equal(got[0], _unpack(theta)[0])  # it trained


def test_full_batch_steps_from_partition_sums_are_the_in_memory_steps(network):
    # an engine's full-batch step: the clipped sums of blocks of rows (as workers
    # compute them), added, then the same noise and event as a step over every row
    from skdpx.utils._optim import make_optimizer

    theta, X, Y, _ = network

    def run(partitioned):
        params, per_sample = _network_gradients(theta, X, Y)

        def clipped_sum(max_grad_norm):
            parts = [clipped_gradient_sum(per_sample(rows), max_grad_norm, len(rows))
                     for rows in np.array_split(np.arange(len(X)), 3)]
            return [sum(p[j] for p in parts) for j in range(len(params))]

        engine = _bind(DPSGD(noise_multiplier=1.0, max_grad_norm=0.5, sample_rate=1.0,
                             n_samples=len(X), max_steps=4), 3)
        optimizer = make_optimizer("sgd", params, 0.1)
        if partitioned:
            engine.train_full_batch(clipped_sum, params, optimizer, lr_decay=(0.5, 2))
        else:
            engine.train(per_sample, params, optimizer, lr_decay=(0.5, 2))
        return params, engine.n_steps, engine.event

    (got, steps, event), (want, want_steps, want_event) = run(True), run(False)
    assert steps == want_steps == 4 and event == want_event
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)
    assert not np.array_equal(got[0], _unpack(theta)[0])  # it trained
    poisson = _bind(DPSGD(noise_multiplier=1.0, max_grad_norm=0.5, sample_rate=0.5,
                          n_samples=len(X), max_steps=4), 3)
    with pytest.raises(ValueError, match="full-batch"):  # its batch is drawn here
        poisson.full_batch_step(lambda c: [np.zeros(1)])
    assert poisson.n_steps == 0


def test_invalid_engine_parameters():
    ok = dict(noise_multiplier=1.0, max_grad_norm=1.0, sample_rate=0.1, n_samples=10, max_steps=1)
    for key, bad in [("noise_multiplier", -1.0), ("noise_multiplier", float("nan")),
                     ("max_grad_norm", 0.0), ("max_grad_norm", None), ("sample_rate", 0.0),
                     ("sample_rate", 1.5), ("n_samples", 0), ("max_steps", 0)]:
        with pytest.raises(ValueError):
            DPSGD(**{**ok, key: bad})
    with pytest.raises(ValueError):
        DPSGD.from_budget(1.0, 1e-5, n_samples=100, batch_size=0, epochs=1, max_grad_norm=1.0)


# --------------------------------------------------------------------------
# Learning
# --------------------------------------------------------------------------
def _logistic_dpsgd(X, y, engine, lr=0.5):
    w = np.zeros(X.shape[1])

    def errors(idx):
        return (1 / (1 + np.exp(-X[idx] @ w)) - y[idx])[:, None]

    for _ in range(engine.max_steps):
        (gw,), _ = engine.step(
            lambda idx: DenseGradients([(X[idx], errors(idx))], bias=False))
        w -= lr * gw[:, 0]
    return np.mean((X @ w > 0) == y)


@pytest.fixture(scope="module")
def separable():
    rng = np.random.RandomState(42)
    X = rng.normal(size=(2000, 4))
    y = (X @ np.array([2.0, -1.0, 0.5, 0.0]) > 0).astype(float)
    return X, y


def test_dp_logistic_regression_learns(separable):
    X, y = separable
    engine = _bind(DPSGD.from_budget(1.0, 1e-5, n_samples=len(X), batch_size=100, epochs=5,
                               max_grad_norm=1.0), 0)
    assert engine.private
    assert _logistic_dpsgd(X, y, engine) >= 0.85


def test_non_private_logistic_regression_learns(separable):
    X, y = separable
    engine = _bind(DPSGD.from_budget(np.inf, 1e-5, n_samples=len(X), batch_size=100, epochs=5,
                               max_grad_norm=1.0), 0)
    assert _logistic_dpsgd(X, y, engine) >= 0.95


# --------------------------------------------------------------------------
# Audit
# --------------------------------------------------------------------------
AUDIT_DELTA = 1e-5
AUDIT_STEPS = 3
# 10 real rows, in 1-D, and one slot for the canary. The canary is absent from
# ``data`` (its row contributes nothing) and present in ``neighbour``: the two
# datasets differ by adding one row. The engine sees the 11 slots so that the
# expected batch size q * n is the same public number for both.
AUDIT_X = np.array([0.3, -0.2, 0.5, 0.1, 0.0, -0.4, 0.2, 0.25, -0.1, 0.35, -1000.0])
AUDIT_DATA = np.r_[np.ones(10), 0.0]
AUDIT_NEIGHBOUR = np.ones(11)


def _dpsgd_release(noise_multiplier):
    """3 full-batch DP-SGD steps on the loss (w - x)^2 / 2, seen by the strongest auditor.

    The auditor knows every row but the canary's presence, so from each
    step's noisy gradient it subtracts the other rows' clipped gradients at
    the (released) iterate: what is left is the canary's clipped gradient
    (+1, or 0 when absent) plus the step's noise. Their sum over the steps is
    the optimal statistic, N(3 present, 3 sigma^2): the trade-off of the
    three composed Gaussians, which ``audit_gdp`` fits.
    """

    def release(present, random_state):
        engine = _bind(DPSGD(noise_multiplier=noise_multiplier, max_grad_norm=1.0,
                             sample_rate=1.0, n_samples=len(present), max_steps=AUDIT_STEPS),
                       random_state)
        w, stat = 0.0, 0.0
        others = np.flatnonzero(AUDIT_DATA)  # the 10 real rows, in every dataset
        for _ in range(AUDIT_STEPS):
            def grad(idx):
                return (w - AUDIT_X[idx]) * present[idx]

            (g,), _ = engine.step(lambda idx: [grad(idx)[:, None]])
            known = np.clip(w - AUDIT_X[others], -1.0, 1.0).sum()
            stat += g[0] * len(present) - known
            w -= 0.1 * g[0]
        return stat

    return release


@pytest.fixture(scope="module")
def audit_noise():
    z = calibrate_noise(1.0, AUDIT_DELTA, steps=AUDIT_STEPS)
    claim = gaussian_epsilon(z, AUDIT_DELTA, steps=AUDIT_STEPS)
    assert 0.99 < claim <= 1.0
    return z, claim


def _half_noise(statistic, dataset):
    """The statistic the same run gives with half the noise.

    Each step's statistic is the canary's clipped gradient (1 when present, 0
    when absent: it sits far below the clipping range) plus the step's noise,
    z times a standard normal: with z / 2 and the same draws, the noise halves.
    """
    canary = AUDIT_STEPS * dataset[-1]
    return canary + (statistic - canary) / 2


@pytest.fixture(scope="module")
def dpsgd_audits(audit_noise):
    """The audits of the 3 steps, and of the 3 steps with half the noise.

    One set of 10,000 runs a side serves both (see _half_noise;
    test_dpsgd_audit_catches_2x_under_noising checks it against the engine
    run with half the noise). Returns the two audits.
    """
    z, _ = audit_noise
    outputs = {}

    def release(dataset, random_state, n):
        key = int(dataset.sum())  # each dataset is drawn once per audit, in the same order
        if key not in outputs:
            run = _dpsgd_release(z)
            stats = np.array([run(dataset, random_state) for _ in range(n)])
            outputs[key] = np.c_[stats, _half_noise(stats, dataset)]
        return outputs[key]

    return [audit_gdp(release, AUDIT_DATA, AUDIT_NEIGHBOUR, n_trials=10_000, delta=AUDIT_DELTA,
                      statistic=lambda out, c=column: out[c], batched=True, random_state=0)
            for column in (0, 1)]


@pytest.mark.slow
def test_dpsgd_audit_below_claim(audit_noise, dpsgd_audits):
    z, claim = audit_noise
    assert dpsgd_audits[0].epsilon < claim


@pytest.mark.slow
def test_dpsgd_audit_catches_2x_under_noising(audit_noise, dpsgd_audits):
    # half the noise: the true epsilon of the three steps is 2.15 for a claim of 1
    z, claim = audit_noise
    # the half-noise statistics of the shared runs are those of the engine with z / 2
    for dataset in (AUDIT_DATA, AUDIT_NEIGHBOUR):
        for seed in range(3):
            full = _dpsgd_release(z)(dataset, np.random.RandomState(seed))
            half = _dpsgd_release(z / 2)(dataset, np.random.RandomState(seed))
            assert abs(_half_noise(full, dataset) - half) < 1e-9
    assert dpsgd_audits[1].epsilon > claim
