"""DPCounterfactualGenerator: privacy accounting, the audit of the prototypes, the search."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from skdpx import CounterfactualSet
from skdpx.counterfactual import DPCounterfactualGenerator
from skdpx.counterfactual import _dpc as dpc_module, _functional
from skdpx.counterfactual._dpc import prototype_sensitivity
from skdpx.counterfactual._functional import FunctionalAutoencoder, functional_sensitivity
from skdpx.counterfactual._mlp_autoencoder import MLPAutoencoder
from skdpx.privacy import (
    Commitment,
    EstimatorLedger,
    FitBounds,
    FitCount,
    GDPAuditWarning,
    NonPrivateDpEvent,
    PrivacyLeakWarning,
    PrivacyLedger,
    audit_gdp,
    calibrate_noise,
    gaussian_epsilon,
    gaussian_event,
    given_row_count,
    noise_source,
)


def _quiet_noise(random_state):
    """A seeded noise source without its PrivacyLeakWarning (the tests seed on purpose)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        return noise_source(random_state)


def _free():
    """The commitment of a non-private computation (pays for anything)."""
    return Commitment(NonPrivateDpEvent(), "non-private test")


@pytest.fixture(scope="module")
def problem():
    rng = np.random.RandomState(0)
    X = rng.uniform(0, 1, size=(3000, 5))
    y = (X[:, 0] + X[:, 1] - X[:, 2] > 0.5).astype(int)
    return X, y, LogisticRegression().fit(X, y)


def _dpc(model, **params):
    defaults = dict(epsilon=1.0, delta=1e-5, latent_dim=3, bounds=(0, 1), random_state=0,
                    ae_method="functional")
    defaults.update(params)
    return DPCounterfactualGenerator(model, **defaults)


def test_counterfactuals_flip_the_black_box(problem):
    X, _, model = problem
    dpc = _dpc(model).fit(X)
    result = dpc.explain(X[:50])
    assert isinstance(result, CounterfactualSet)
    assert result.valid.mean() >= 0.9
    # valid is re-checked with the model, not assumed
    ok = result.valid
    np.testing.assert_array_equal(model.predict(result.counterfactuals[ok]),
                                  result.desired_class[ok])
    np.testing.assert_array_equal(result.desired_class, 1 - model.predict(X[:50]))
    lower, upper = dpc.bounds_
    assert np.all((result.counterfactuals[ok] >= lower) & (result.counterfactuals[ok] <= upper))
    np.testing.assert_array_equal(dpc.transform(X[:50]), result.counterfactuals)


def test_spends_are_recorded_and_within_the_cap(problem):
    X, _, model = problem
    ledger = PrivacyLedger(epsilon=5.0, delta=1e-5)
    dpc = _dpc(model, accountant=ledger).fit(X)
    # the DP row count, then the rest of the fit in one committed spend: the
    # autoencoder and the prototypes
    (count_label, _), (label, _) = ledger.events
    assert count_label.endswith("row count (Laplace)")
    assert "functional mechanism" in label and "class prototypes" in label
    # the prototypes get what the autoencoder left: the whole budget is used
    assert dpc.epsilon_spent_ == pytest.approx(1.0, rel=1e-3) and dpc.epsilon_spent_ <= 1.0
    assert ledger.epsilon_spent == pytest.approx(dpc.epsilon_spent_, rel=1e-9)
    spent = dpc.epsilon_spent_
    dpc.explain(X[:10])  # the search is post-processing: free
    assert dpc.epsilon_spent_ == spent and len(ledger.events) == 2


def test_non_private_fit_says_so():
    rng = np.random.RandomState(1)
    X = rng.uniform(0, 1, size=(500, 3))
    y = (X[:, 0] > 0.5).astype(int)
    dpc = DPCounterfactualGenerator(None, epsilon=np.inf, latent_dim=2, bounds=(0, 1),
                                    ae_method="functional").fit(X, y)
    assert dpc.epsilon_spent_ == np.inf


def test_without_a_black_box_the_prototypes_classify(problem):
    X, y, _ = problem
    dpc = _dpc(None, epsilon=4.0).fit(X, y)
    result = dpc.explain(X[:30])
    assert result.valid.mean() >= 0.8
    assert set(np.unique(result.predicted_class[result.valid])) <= {0, 1}


def test_multiclass_opposite_is_the_runner_up_and_a_named_class_works():
    rng = np.random.RandomState(2)
    X = rng.uniform(0, 1, size=(2000, 4))
    y = np.digitize(X[:, 0] + X[:, 1], [0.7, 1.3])
    model = LogisticRegression().fit(X, y)
    dpc = _dpc(model, epsilon=4.0).fit(X)
    proba = model.predict_proba(X[:20])
    runner_up = np.argsort(proba, axis=1)[:, -2]
    np.testing.assert_array_equal(dpc.explain(X[:20]).desired_class, runner_up)
    with pytest.raises(ValueError, match="one of"):
        dpc.explain(X[:3], desired_class=7)
    result = dpc.explain(X[:20], desired_class=2)
    assert np.all(result.desired_class == 2) and result.valid.mean() >= 0.8


def test_bad_input_spends_nothing(problem):
    X, _, model = problem
    ledger = PrivacyLedger(epsilon=5.0, delta=1e-5)
    # public facts only (a NaN in a row is neutralised, never refused: test_refusals.py)
    with pytest.raises(ValueError, match="2D array"):
        _dpc(model, accountant=ledger).fit(X[:100, 0])
    with pytest.raises(ValueError, match="latent_dim"):
        _dpc(model, latent_dim=9, accountant=ledger).fit(X)
    assert len(ledger.events) == 0


def test_functional_sensitivity_bounds_the_worst_neighbours():
    d = 6
    upper = np.triu_indices(d)

    def coefficients(x):
        return np.concatenate([np.outer(x, x)[upper], x])

    signs = np.array(np.meshgrid(*[[-1.0, 1.0]] * d)).reshape(d, -1).T
    # replace-one: one row replaced by another
    worst = max(np.abs(coefficients(a) - coefficients(b)).sum() for a in signs for b in signs)
    assert worst <= functional_sensitivity(d, "replace_one")
    assert worst >= 0.4 * functional_sensitivity(d, "replace_one")  # and not loose by much
    # add-or-remove: one row's whole contribution; reached by any row of +-1
    cube = np.array(np.meshgrid(*[[-1.0, -0.5, 0.0, 0.5, 1.0]] * d)).reshape(d, -1).T
    worst_one = max(np.abs(coefficients(a)).sum() for a in cube)
    assert worst_one == pytest.approx(functional_sensitivity(d, "add_or_remove"))
    assert functional_sensitivity(d, "add_or_remove") < functional_sensitivity(d, "replace_one")
    with pytest.raises(ValueError, match="relation"):
        functional_sensitivity(d, "add_one")


def test_prototype_sensitivity_under_each_relation():
    K = 3
    # add-or-remove: one (code, 1) row, code in (0, 1)^K; replace-one: one row
    # leaves one class and another joins another
    assert prototype_sensitivity(K, "add_or_remove") == pytest.approx(np.sqrt(K + 1))
    assert prototype_sensitivity(K, "replace_one") == pytest.approx(np.sqrt(2 * (K + 1)))
    with pytest.raises(ValueError, match="relation"):
        prototype_sensitivity(K, "add_one")


def test_functional_autoencoder_recovers_a_subspace_without_noise():
    rng = np.random.RandomState(3)
    basis = np.linalg.qr(rng.normal(size=(6, 2)))[0]
    X = np.clip(rng.normal(scale=0.3, size=(4000, 2)) @ basis.T, -1, 1)
    ae = FunctionalAutoencoder.fit(X, 2, noise_multiplier=0.0,
                                   sensitivity=functional_sensitivity(6, "add_or_remove"),
                                   noise=_quiet_noise(3), commitment=_free(), n_rows=len(X))
    overlap = np.linalg.svd(ae.components.T @ basis, compute_uv=False)
    assert overlap.min() > 0.99


# Audit of the prototype release: two classes, codes in (0, 1)^2. The row whose
# code is at the corner (1, 1) is in class 0; its replace-one neighbour moves it
# to class 1, its add-or-remove neighbour drops it.
_K = 2
_CODES = np.full((50, _K), 0.5)
_CODES[-1] = 1.0
_LABELS = np.r_[np.zeros(25, int), np.ones(24, int), 0]
_NEIGHBOURS = {
    "replace_one": ((_CODES, _LABELS), (_CODES, np.r_[_LABELS[:-1], 1])),
    "add_or_remove": ((_CODES, _LABELS), (_CODES[:-1], _LABELS[:-1])),
}
# the difference of the tables lies along these directions: the projection on
# it is the likelihood-ratio (optimal) statistic of the isotropic Gaussian noise
_STATISTICS = {
    "replace_one": lambda table: table[1].sum() - table[0].sum(),
    "add_or_remove": lambda table: table[0].sum(),
}
# The claim audited and the number of runs on each dataset. The prototype
# table is one Gaussian mechanism, so audit_gdp applies (its epsilon is a
# lower bound for Gaussian trade-off curves). The functional mechanism's
# release is Laplace noise, not Gaussian: an audit of it would have to use
# the assumption-free audit_epsilon, never audit_gdp.
_AUDIT_EPSILON, _AUDIT_DELTA, _AUDIT_TRIALS = 1.0, 1e-5, 20_000


def _table_release(relation):
    """Batched: ``n`` runs of the real ``_noisy_table``, reduced to the optimal statistic."""
    z = calibrate_noise(_AUDIT_EPSILON, _AUDIT_DELTA)

    def release(data, random_state, n):
        codes, labels = data
        dpc = DPCounterfactualGenerator(epsilon=_AUDIT_EPSILON, delta=_AUDIT_DELTA)
        dpc.classes_ = np.array([0, 1])
        noise = _quiet_noise(random_state)  # one source for the batch, n committed releases
        commitment = Commitment(gaussian_event(z, steps=n), "audit")
        return np.array([
            _STATISTICS[relation](dpc._noisy_table(codes, labels, noise_multiplier=z,
                                                   relation=relation, noise=noise,
                                                   commitment=commitment))
            for _ in range(n)])

    return release


def _audit_table(relation):
    data, neighbour = _NEIGHBOURS[relation]
    with warnings.catch_warnings():
        warnings.simplefilter("error", GDPAuditWarning)  # the trade-off must fit a Gaussian
        return audit_gdp(_table_release(relation), data, neighbour, n_trials=_AUDIT_TRIALS,
                         delta=_AUDIT_DELTA, batched=True, random_state=0)


@pytest.mark.slow
@pytest.mark.parametrize("relation", ["replace_one", "add_or_remove"])
def test_audit_of_the_prototype_release_stays_below_its_epsilon(relation):
    # the true epsilon is 1; measured 0.72 (replace_one) and 0.78 (add_or_remove)
    # at seed 0, 0.62 to 0.83 over seeds 0-9
    result = _audit_table(relation)
    assert result.gaussian_fit
    assert 0.4 < result.epsilon < _AUDIT_EPSILON


@pytest.mark.slow
@pytest.mark.parametrize("relation", ["replace_one", "add_or_remove"])
def test_prototype_audit_catches_half_the_sensitivity(monkeypatch, relation):
    # a bug: the sensitivity understated twofold, so half the noise for the same
    # committed event; the true epsilon is gaussian_epsilon(z / 2) = 2.15.
    # Measured 1.80 (replace_one) and 1.98 (add_or_remove) at seed 0, 1.72 to 1.98
    # over seeds 0-9; the threshold bound of the same runs (epsilon_threshold,
    # as audit_epsilon) is 0.83 and 0.75: it misses this bug.
    true = prototype_sensitivity
    monkeypatch.setattr(dpc_module, "prototype_sensitivity", lambda k, rel: true(k, rel) / 2)
    result = _audit_table(relation)
    z = calibrate_noise(_AUDIT_EPSILON, _AUDIT_DELTA)
    assert result.gaussian_fit
    assert _AUDIT_EPSILON < result.epsilon < gaussian_epsilon(z / 2, _AUDIT_DELTA)


def test_dpsgd_autoencoder_is_accounted_and_useful(problem):
    X, _, model = problem
    ledger = PrivacyLedger(epsilon=5.0, delta=1e-5)
    dpc = _dpc(model, ae_method="dpsgd", hidden_layer_sizes=(8,), epsilon=2.0,
               accountant=ledger).fit(X)
    _, (label, _) = ledger.events
    assert "DP-SGD autoencoder" in label and "class prototypes" in label
    assert 0 < dpc.epsilon_spent_ <= 2.0 and dpc.delta_spent_ <= 1e-5
    assert dpc.explain(X[:30]).valid.mean() >= 0.8


def test_mlp_decoder_vjp_matches_finite_differences():
    rng = np.random.RandomState(4)
    X = rng.uniform(-1, 1, size=(300, 5))
    ae = MLPAutoencoder.fit(X, 2, (6, 4), engine=MLPAutoencoder.engine(300, np.inf, 1e-5),
                            noise=_quiet_noise(4), commitment=_free())
    H, G = rng.uniform(0.2, 0.8, size=(3, 2)), rng.normal(size=(3, 5))
    h = 1e-6
    numeric = np.stack([((ae.decode(H + h * e) - ae.decode(H - h * e)) * G).sum(axis=1) / (2 * h)
                        for e in np.eye(2)], axis=1)
    np.testing.assert_allclose(ae.decode_vjp(H, G), numeric, rtol=1e-5, atol=1e-8)


def test_mlp_autoencoder_learns_from_few_steps():
    # 900 rows in batches of 256 for 10 epochs: 36 steps. Adam's step grows to
    # 1 / steps (issue 39): at 1e-3 the weights could not leave their start and
    # the reconstruction was worse than the rows' mean (29 per row against 18)
    from sklearn.datasets import load_digits

    X = 2 * load_digits().data[:900] / 16.0 - 1
    engine = MLPAutoencoder.engine(900, np.inf, 1e-5)
    assert engine.max_steps == 36
    ae = MLPAutoencoder.fit(X, 8, (32,), engine=engine, noise=_quiet_noise(0),
                            commitment=_free())
    error = np.mean(np.sum((ae.decode(ae.encode(X)) - X) ** 2, axis=1))
    variance = np.mean(np.sum((X - X.mean(axis=0)) ** 2, axis=1))
    assert error < 0.85 * variance


def test_search_can_start_near_the_query(problem):
    X, _, model = problem
    # the latent search alone (no segment search after it)
    from_prototype = _dpc(model, max_iter=5, line_steps=0).fit(X).explain(X[:40])
    from_query = _dpc(model, max_iter=5, init_blend=0.9, line_steps=0).fit(X).explain(X[:40])
    both = from_prototype.valid & from_query.valid
    assert both.sum() >= 10
    # a start near the query ends nearer to it
    assert np.mean(from_query.distance[both]) < np.mean(from_prototype.distance[both])


def test_a_query_without_counterfactual_keeps_its_own_prediction(problem):
    X, _, model = problem
    # start at the query's own code, one step, no pull to the class, no segment
    # search after it: mostly no flip
    dpc = _dpc(model, max_iter=1, alpha=0.0, init_blend=1.0, line_steps=0).fit(X)
    result = dpc.explain(X[:40])
    missing = ~result.valid
    assert missing.any()
    assert np.all(np.isnan(result.counterfactuals[missing]))
    np.testing.assert_array_equal(result.predicted_class[missing], model.predict(X[:40][missing]))


def test_bad_hidden_layer_sizes_spend_nothing_even_non_private(problem):
    X, _, model = problem
    ledger = PrivacyLedger()
    with pytest.raises(ValueError, match="hidden_layer_sizes"):
        _dpc(model, epsilon=np.inf, ae_method="dpsgd", hidden_layer_sizes=(0,),
             accountant=ledger).fit(X)
    assert len(ledger.events) == 0


@pytest.mark.parametrize("ae_method", ["functional", "dpsgd"])
def test_a_ledger_that_affords_the_autoencoder_but_not_the_prototypes_spends_nothing(
        problem, ae_method):
    from skdpx.privacy import BudgetError, pure_event

    X, _, model = problem
    ledger = PrivacyLedger(epsilon=2.0, delta=1e-5)
    ledger.spend(pure_event(1.05), "earlier release")  # room for 90% of epsilon 1, not all
    with pytest.raises(BudgetError):
        _dpc(model, ae_method=ae_method, epsilon=1.0, accountant=ledger).fit(X)
    assert [label for label, _ in ledger.events] == ["earlier release"]


# --------------------------------------------------------------------------
# The neighbouring relation
# --------------------------------------------------------------------------
def test_dpsgd_under_a_replace_one_ledger_is_refused_before_any_spend(problem):
    X, _, model = problem
    ledger = PrivacyLedger(epsilon=5.0, delta=1e-5, relation="replace_one")
    with pytest.raises(ValueError, match="add-or-remove"):
        _dpc(model, ae_method="dpsgd", accountant=ledger).fit(X)
    assert len(ledger.events) == 0


@pytest.mark.parametrize("relation", ["add_or_remove", "replace_one"])
def test_functional_fit_is_calibrated_under_the_ledgers_relation(problem, relation):
    X, _, model = problem
    d, K = X.shape[1], 3
    ledger = PrivacyLedger(epsilon=5.0, delta=1e-5, relation=relation)
    dpc = _dpc(model, latent_dim=K, accountant=ledger)
    data = dpc._validate_fit(X, None)
    bounds = FitBounds(dpc.bounds, d, epsilon=dpc.epsilon, delta=dpc.delta, relation=relation)
    count = FitCount(epsilon=dpc.epsilon, relation=relation, n_rows=len(X))
    plan = dpc._plan_spend(data, relation, bounds, count)
    assert plan.ae_sensitivity == functional_sensitivity(d, relation)
    assert plan.ae_noise_multiplier == pytest.approx(1 / 0.9)
    assert plan.relation == relation
    dpc.fit(X)
    assert dpc.ledger_.relation == relation
    assert dpc.epsilon_spent_ == pytest.approx(1.0, rel=1e-3) and dpc.epsilon_spent_ <= 1.0
    assert dpc.explain(X[:30]).valid.mean() >= 0.8


def test_replace_one_noise_is_larger_by_its_sensitivity(problem, monkeypatch):
    # same multipliers (same epsilon), the noise scales with the relation's sensitivity
    X, _, model = problem
    seen = {}

    def spy(name, real):
        def wrapped(value, *, noise_multiplier, sensitivity, **kwargs):
            seen.setdefault(relation, {})[name] = noise_multiplier * sensitivity
            return real(value, noise_multiplier=noise_multiplier, sensitivity=sensitivity,
                        **kwargs)
        return wrapped

    monkeypatch.setattr(dpc_module, "gaussian_release",
                        spy("prototypes", dpc_module.gaussian_release))
    monkeypatch.setattr(_functional, "laplace_release",
                        spy("functional", _functional.laplace_release))
    for relation in ("add_or_remove", "replace_one"):
        ledger = PrivacyLedger(epsilon=5.0, delta=1e-5, relation=relation)
        # the number of rows public under both (replace-one: by the relation; here
        # given) so that no DP count takes its share of epsilon under add-or-remove
        with given_row_count(len(X)):
            _dpc(model, accountant=ledger).fit(X)
    d = X.shape[1]
    assert seen["replace_one"]["prototypes"] / seen["add_or_remove"]["prototypes"] == \
        pytest.approx(np.sqrt(2))
    assert seen["replace_one"]["functional"] / seen["add_or_remove"]["functional"] == \
        pytest.approx((d * d + 2 * d) / ((d * d + 3 * d) / 2))


# --------------------------------------------------------------------------
# The spend is committed before the data are read, and never refunded
# --------------------------------------------------------------------------
def _interrupt_after(monkeypatch, module, name, calls):
    """Make ``module.name`` raise KeyboardInterrupt on its ``calls``-th call."""
    real, count = getattr(module, name), [0]

    def interrupted(*args, **kwargs):
        count[0] += 1
        if count[0] >= calls:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, interrupted)


@pytest.mark.parametrize("ae_method, where", [
    ("functional", "prototypes"),  # the second release
    ("functional", "codes"),  # between the two releases
    ("dpsgd", "prototypes"),
    ("dpsgd", "training"),  # midway through DP-SGD
])
def test_an_interrupted_fit_keeps_the_whole_planned_spend(problem, monkeypatch, ae_method,
                                                          where):
    X, _, model = problem
    params = dict(ae_method=ae_method, hidden_layer_sizes=(8,), epsilon=1.0)
    reference = PrivacyLedger(epsilon=5.0, delta=1e-5)
    _dpc(model, accountant=reference, **params).fit(X)

    ledger = PrivacyLedger(epsilon=5.0, delta=1e-5)
    if where == "prototypes":
        _interrupt_after(monkeypatch, dpc_module, "gaussian_release", 1)
    elif where == "codes":
        _interrupt_after(monkeypatch, FunctionalAutoencoder, "encode", 1)
    else:
        _interrupt_after(monkeypatch, MLPAutoencoder, "_backward", 5)
    dpc = _dpc(model, accountant=ledger, **params)
    with pytest.raises(KeyboardInterrupt):
        dpc.fit(X)
    assert [event for _, event in ledger.events] == [event for _, event in reference.events]
    assert ledger.epsilon_spent == pytest.approx(reference.epsilon_spent, rel=1e-12)
    assert ledger.epsilon_spent == pytest.approx(1.0, rel=1e-3)


@pytest.mark.parametrize("ae_method", ["functional", "dpsgd"])
def test_the_fit_draws_exactly_the_committed_releases(problem, monkeypatch, ae_method):
    X, _, model = problem
    commitments = []
    real = EstimatorLedger.commit

    def commit(self, *args, **kwargs):
        commitments.append(real(self, *args, **kwargs))
        return commitments[-1]

    monkeypatch.setattr(EstimatorLedger, "commit", commit)
    _dpc(model, ae_method=ae_method, hidden_layer_sizes=(8,),
         accountant=PrivacyLedger(epsilon=5.0, delta=1e-5)).fit(X)
    count, rest = commitments  # the DP row count's, then the rest's
    assert count.exhausted and rest.exhausted


def test_bad_input_after_a_committed_fit_spends_nothing_more(problem):
    X, _, model = problem
    ledger = PrivacyLedger(epsilon=5.0, delta=1e-5)
    dpc = _dpc(model, accountant=ledger).fit(X)
    with pytest.raises(ValueError, match="Complex"):
        dpc.fit(X + 1j)
    assert len(ledger.events) == 2


# --------------------------------------------------------------------------
# Randomness: secure by default, never kept; a seed reproduces
# --------------------------------------------------------------------------
@pytest.mark.parametrize("ae_method", ["functional", "dpsgd"])
def test_secure_fits_keep_no_generator_and_differ(problem, ae_method):
    X, _, model = problem
    fits = [_dpc(model, ae_method=ae_method, hidden_layer_sizes=(8,), random_state=None,
                 accountant=PrivacyLedger()).fit(X) for _ in range(2)]
    for dpc in fits:
        blob = pickle.dumps(dpc)
        for state in (b"MT19937", b"AESCounter", b"PCG64", b"NoiseSource"):
            assert state not in blob
        assert dpc.get_params()["random_state"] is None
        assert not any(isinstance(v, np.random.Generator | np.random.RandomState)
                       for v in vars(dpc).values())
    assert not np.allclose(fits[0].prototypes_, fits[1].prototypes_)
    assert not np.allclose(fits[0].prototype_counts_, fits[1].prototype_counts_)
    assert pickle.loads(pickle.dumps(fits[0])).explain(X[:5]).counterfactuals.shape == (5, 5)


@pytest.mark.parametrize("ae_method", ["functional", "dpsgd"])
def test_a_seed_reproduces_the_fit_and_warns(problem, ae_method):
    X, _, model = problem
    fits = []
    for _ in range(2):
        with pytest.warns(PrivacyLeakWarning, match="random_state=7"):
            fits.append(_dpc(model, ae_method=ae_method, hidden_layer_sizes=(8,),
                             random_state=7, accountant=PrivacyLedger()).fit(X))
    np.testing.assert_array_equal(fits[0].prototypes_, fits[1].prototypes_)
    np.testing.assert_array_equal(fits[0].prototype_counts_, fits[1].prototype_counts_)
    np.testing.assert_array_equal(fits[0].transform(X[:10]), fits[1].transform(X[:10]))
    other = _dpc(model, ae_method=ae_method, hidden_layer_sizes=(8,), random_state=8,
                 accountant=PrivacyLedger()).fit(X)
    assert not np.allclose(other.prototype_counts_, fits[0].prototype_counts_)
