"""DPLimeExplainer: accounting per query, reuse, the non-interactive phase, the audit."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.utils.estimator_checks import parametrize_with_checks

from skdpx import FeatureAttribution
from skdpx.explain import DPLimeExplainer, gradient_sensitivity
from skdpx.explain import _dpgd, _dplime, _strategies
from skdpx.explain._strategies import _MIN_HISTORY
from skdpx.explain._local_loss import local_loss_terms
from skdpx.explain._weights import stable_weight
from skdpx.metrics import explanation_loss, optimal_explanation
from skdpx.privacy import (
    BudgetError,
    Commitment,
    GDPAuditWarning,
    PrivacyLeakWarning,
    PrivacyLedger,
    audit_epsilon,
    audit_gdp,
    calibrate_noise,
    gaussian_epsilon,
    gaussian_event,
    gaussian_to_pure,
    given_row_count,
    noise_source,
)

from ._helpers import recorded_gradients

# most tests seed the noise on purpose (each seeded fit and answer warns);
# test_a_seed_reproduces_the_answers_and_warns checks the warning
pytestmark = pytest.mark.filterwarnings("ignore::skdpx.exceptions.PrivacyLeakWarning")


@pytest.fixture(scope="module")
def problem():
    rng = np.random.RandomState(0)
    X = rng.uniform(0, 1, size=(3000, 4))
    y = (X[:, 0] - X[:, 1] + 0.3 * X[:, 2] > 0.1).astype(int)
    model = LogisticRegression(C=10.0).fit(X, y)
    return X, model


def _explainer(model, **params):
    defaults = dict(epsilon=2.0, delta=1e-6, epsilon_per_query=0.5, max_iter=50,
                    bounds=(0, 1), random_state=0)
    defaults.update(params)
    return DPLimeExplainer(model, **defaults)


def test_noise_and_spends_follow_exact_gaussian_composition(problem):
    X, model = problem
    ledger = PrivacyLedger()
    explainer = _explainer(model, accountant=ledger).fit(X)
    assert explainer.noise_multiplier_ == calibrate_noise(0.5, 1e-6, steps=50)
    # fit releases the DP count of the rows only (5% of epsilon_per_query)
    assert len(ledger) == 1 and explainer.epsilon_spent_ == explainer.n_rows_epsilon_
    assert explainer.n_rows_epsilon_ == pytest.approx(0.025)
    result = explainer.explain(X[:4])
    assert isinstance(result, FeatureAttribution)
    k = int(np.sum(result.phase == "interactive"))
    assert k >= 4 or result.phase[-1] == "noninteractive"
    expected = (gaussian_epsilon(explainer.noise_multiplier_, 1e-6, steps=50 * k)
                + explainer.n_rows_epsilon_)
    assert explainer.epsilon_spent_ == pytest.approx(expected, rel=1e-9)
    assert ledger.epsilon_spent == pytest.approx(expected, rel=1e-9)
    np.testing.assert_array_equal(result.epsilon[result.phase == "interactive"], 0.5)


def test_a_repeated_query_never_spends_again(problem):
    X, model = problem
    explainer = _explainer(model).fit(X)
    first = explainer.explain(X[:2])
    spent = explainer.epsilon_spent_
    again = explainer.explain(np.vstack([X[1], X[0], X[1]]))
    assert again.phase.tolist() == ["reused"] * 3 and np.all(again.epsilon == 0)
    np.testing.assert_array_equal(again.values, first.values[[1, 0, 1]])
    assert explainer.epsilon_spent_ == spent
    # repeats inside one batch are paid once
    batch = explainer.explain(np.vstack([X[5], X[5], X[6]]))
    assert batch.phase.tolist() == ["interactive", "reused", "interactive"]
    np.testing.assert_array_equal(batch.values[0], batch.values[1])


def test_budget_exhaustion_goes_noninteractive_or_raises(problem):
    X, model = problem
    explainer = _explainer(model, epsilon=1.0).fit(X)
    result = explainer.explain(X[:20])
    assert result.phase[0] == "interactive" and result.phase[-1] == "noninteractive"
    assert explainer.epsilon_spent_ <= 1.0
    assert np.all(result.epsilon[result.phase == "noninteractive"] == 0)
    spent, n = explainer.epsilon_spent_, explainer.n_queries_
    more = explainer.explain(X[20:25])  # nothing left: all free
    assert set(more.phase) == {"noninteractive"} and explainer.epsilon_spent_ == spent
    assert explainer.n_queries_ == n + 5

    strict = _explainer(model, epsilon=1.0, on_budget_exhausted="raise").fit(X)
    with pytest.raises(BudgetError):
        strict.explain(X[:20])
    paid = strict.n_queries_
    assert paid >= 1 and set(strict.history_["phase"]) == {"interactive"}
    assert strict.epsilon_spent_ <= 1.0


def _history_copy(explainer):
    return {key: [None if v is None else np.array(v, copy=True) for v in values]
            for key, values in explainer.history_.items()}


def _assert_same_history(explainer, before):
    after = explainer.history_
    assert after.keys() == before.keys()
    for key in before:
        assert len(after[key]) == len(before[key]), key
        for a, b in zip(after[key], before[key]):
            assert (a is None) == (b is None), key
            if b is not None:
                np.testing.assert_array_equal(a, b)


def test_bad_queries_raise_and_leave_history_alone(problem):
    X, model = problem
    explainer = _explainer(model).fit(X)
    explainer.explain(X[:1])
    n, spent = explainer.n_queries_, explainer.epsilon_spent_
    # (a missing or infinite value is the bounds' midpoint: test_refusals.py)
    for target in (explainer, explainer.release()):
        before = _history_copy(target)
        for method in (target.explain, target.transform):
            with pytest.raises(ValueError, match="features"):
                method(X[:3, :2])
            with pytest.raises(ValueError, match="2D"):
                method(X[0])
            with pytest.raises(ValueError, match="0 sample"):
                method(X[:0])
            with pytest.raises(ValueError):
                method(np.array([["a", "b", "c", "d"]]))
        _assert_same_history(target, before)
    assert explainer.n_queries_ == n and explainer.epsilon_spent_ == spent


def test_epsilon_per_query_above_the_total_is_refused(problem):
    X, model = problem
    with pytest.raises(ValueError, match="epsilon_per_query"):
        _explainer(model, epsilon=0.2, epsilon_per_query=0.5).fit(X)


def test_non_private_answers_are_the_optimum_and_private_ones_close(problem):
    X, model = problem
    labels = 2 * model.predict_proba(X)[:, 1] - 1
    Z = X[:10]
    exact = _explainer(model, epsilon=np.inf, epsilon_per_query=np.inf, max_iter=3000).fit(X)
    # the answers are in probability units (d P / d x); the loss's labels are 2 P - 1
    loss = explanation_loss(2 * exact.transform(Z), Z, X, labels)
    best = optimal_explanation(Z, X, labels)[1]
    assert np.all(loss <= 0.01 * best)
    private = _explainer(model, epsilon=50.0, epsilon_per_query=2.0, max_iter=100).fit(X)
    phi, opt = private.transform(Z), optimal_explanation(Z, X, labels)[0]
    cosine = np.einsum("ij,ij->i", phi, opt) / np.linalg.norm(phi, axis=1) / np.linalg.norm(opt, axis=1)
    assert np.median(cosine) > 0.9


def test_works_inside_a_pipeline(problem):
    X, model = problem
    pipe = make_pipeline(FunctionTransformer(), _explainer(model))
    out = pipe.fit(X).transform(X[:3])
    assert out.shape == (3, X.shape[1])


# --------------------------------------------------------------------------
# Audit: one query, two explanation datasets, one with a row the other lacks
# (add-or-remove neighbours)
# --------------------------------------------------------------------------
_RNG = np.random.RandomState(0)
AUDIT_QUERY = np.array([[0.5, 0.5]])
AUDIT_X = np.clip(AUDIT_QUERY + _RNG.normal(0, 0.05, size=(200, 2)), 0, 1)
# the extra row sits where the stable weight meets its cap (2 r (r + 1) = 1),
# labelled +1: it moves the first gradient (from phi = 0) by 2 r / m =
# 0.73 / m, against the bound 1 / m. The other rows, labelled 0, add nothing
# to that gradient; the noise scale, 1 / m, differs by 0.5% (m = 200 against
# 199: the explainer treats m as public), and the audit sees that too.
AUDIT_X[-1] = AUDIT_QUERY[0] + [(-1 + np.sqrt(3)) / 2, 0.0]
AUDIT_DATA = (AUDIT_X, np.r_[np.zeros(199), 1.0])
AUDIT_NEIGHBOUR = (AUDIT_X[:-1], np.zeros(199))
AUDIT_EPSILON = 1.0

# An answer is T noisy gradient steps, each an accounted Gaussian release, so
# audit_gdp applies: a white-box auditor sees every noisy gradient G_t (the
# accounting pays for each) and, from them, every iterate phi_t. Knowing the
# other rows, it knows the neighbour's exact gradient k_t at phi_t; G_t - k_t
# is the canary's contribution D_t (plus the 0.5% reweighting of the others
# by 1 / m) plus the noise. The optimal statistic projects it on D_t's unit
# direction at each step and sums: N(0, T s^2) on the neighbour, N(sum
# ||D_t||, T s^2) on the data, a Gaussian trade-off. The canary moves D_t by
# about 1% over the steps (phi_t stays near 0), so the true mu is ~0.77 of
# the claimed sqrt(T) / z, and ~1.5 times it when the noise is halved.
# 20,000 runs on each dataset, a batch of them one vectorised answer of n
# copies of the query through the explainer's real release code
# (DPLimeExplainer._dpgd: _forms, dpgd_explain, noisy_gradient).
_AUDIT_STEPS, _AUDIT_TRIALS, _AUDIT_DELTA = 4, 20_000, 1e-5


def _audit_forms(dataset):
    X, y = dataset
    H, g, _ = local_loss_terms(AUDIT_QUERY, X, y, weight=stable_weight)
    return H[0], g[0]


_H1, _G1 = _audit_forms(AUDIT_DATA)
_H0, _G0 = _audit_forms(AUDIT_NEIGHBOUR)


def _answer_statistic(grads):
    """The optimal statistic of released noisy gradients ``(T, n, d)``, in units of 1,
    and the last iterate they lead to (post-processing: phi_t from the G_t)."""
    phi = np.zeros(grads.shape[1:])
    total = np.zeros(grads.shape[1])
    for grad in grads:
        known = 2.0 * (phi @ _H0 - _G0)  # the neighbour's exact gradient at phi_t
        change = 2.0 * (phi @ (_H1 - _H0) - (_G1 - _G0))  # the canary's part, at phi_t
        total += ((grad - known) * change).sum(axis=1) / np.linalg.norm(change, axis=1)
        phi = _dpgd.project_to_ball(phi - grad, 1.0)  # step 1 / smoothness = radius / c = 1
    return total / np.sqrt(len(grads)), phi


def _answer_explainer(dataset):
    X, y = dataset
    # the answers' audit: planned with a public count (no DP count of the rows
    # spent here, so one answer may take the whole epsilon; the count and the
    # normaliser are audited in tests/test_row_count.py); 200 as before
    with given_row_count(len(X)):
        return DPLimeExplainer(None, epsilon=AUDIT_EPSILON, delta=_AUDIT_DELTA,
                               epsilon_per_query=AUDIT_EPSILON, max_iter=_AUDIT_STEPS,
                               bounds=(0.0, 1.0)).fit(X, y)


def _answer_release(dataset, random_state, n):
    """n interactive answers to AUDIT_QUERY, each reduced to the optimal statistic."""
    explainer = _answer_explainer(dataset)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        noise = noise_source(random_state)
    # as an answer does: the n T releases are committed before the dataset is read
    commitment = Commitment(gaussian_event(explainer.noise_multiplier_, steps=_AUDIT_STEPS * n),
                            "audit")
    Z = np.repeat(explainer._scaler().transform(AUDIT_QUERY), n, axis=0)
    released, phi = recorded_gradients(explainer, Z, np.zeros(n, dtype=int), noise, commitment)
    statistic, last = _answer_statistic(released)
    assert len(released) == _AUDIT_STEPS and np.allclose(last, phi)
    return statistic


def _audit_answers():
    with warnings.catch_warnings():
        warnings.simplefilter("error", GDPAuditWarning)  # the trade-off must fit a Gaussian
        result = audit_gdp(_answer_release, AUDIT_DATA, AUDIT_NEIGHBOUR, n_trials=_AUDIT_TRIALS,
                           delta=_AUDIT_DELTA, batched=True, random_state=0)
    assert result.gaussian_fit
    return result.epsilon


def test_answer_audit_statistic_is_the_canarys_shift_over_unit_noise():
    # a sanity check of the white-box statistic: in units of the noise s, mean
    # 0 on the neighbour, about sqrt(T) 2 r / (m s) = 0.196 on the data, spread 1
    # on both (the neighbour's s is 0.5% larger)
    explainer = _answer_explainer(AUDIT_DATA)
    s = explainer.noise_multiplier_ * explainer.sensitivity_
    shift = np.sqrt(_AUDIT_STEPS) * np.linalg.norm(2.0 * (_G1 - _G0)) / s
    assert 0.15 < shift < 0.25
    on_data = _answer_release(AUDIT_DATA, np.random.RandomState(1), 5_000) / s
    on_neighbour = _answer_release(AUDIT_NEIGHBOUR, np.random.RandomState(2), 5_000) / s
    assert abs(on_neighbour.mean()) < 0.06 and abs(on_data.mean() - shift) < 0.06
    assert 0.95 < on_data.std() < 1.05 and 0.95 < on_neighbour.std() < 1.06


def test_audit_of_an_answer_stays_below_the_claim():
    # measured 0.47 at seed 0, 0.36 to 0.62 over seeds 0-9 (claim 1)
    assert 0.2 < _audit_answers() < AUDIT_EPSILON


def test_audit_catches_noise_calibrated_for_too_small_a_sensitivity(monkeypatch):
    # a bug: the sensitivity taken 2 times too small (half the noise, the same
    # committed event): the same audit must see more than the claim. Measured
    # 1.26 at seed 0, 1.15 to 1.43 over seeds 0-9; a full-sensitivity canary
    # would have epsilon gaussian_epsilon(z / 2, steps=T) = 2.15
    real = _dplime.gradient_sensitivity
    monkeypatch.setattr(_dplime, "gradient_sensitivity",
                        lambda *args, **kwargs: real(*args, **kwargs) / 2)
    z = _answer_explainer(AUDIT_DATA).noise_multiplier_
    assert AUDIT_EPSILON < _audit_answers() < gaussian_epsilon(z / 2, _AUDIT_DELTA,
                                                                steps=_AUDIT_STEPS)


# ----------------------------------------------------------- adaptive, enhanced

@pytest.mark.parametrize("strategy", ["adaptive", "enhanced"])
def test_adaptive_spends_exactly_the_steps_it_ran(problem, strategy):
    X, model = problem
    ledger = PrivacyLedger(delta=1e-6)  # reported at 1e-6, not at the sum of the deltas
    explainer = _explainer(model, strategy=strategy, epsilon=12.0, epsilon_per_query=1.0,
                           max_iter=40, accountant=ledger).fit(X)
    z = explainer.noise_multiplier_
    assert z == calibrate_noise(1.0, 1e-6, steps=41)  # a warm start costs one step
    assert explainer.warm_start_epsilon_ == gaussian_to_pure(z)
    result = explainer.explain(X[100:160])
    hist = explainer.history_
    paid = np.array(hist["phase"]) == "interactive"
    steps = np.array(hist["n_iter"])[paid]
    assert paid.sum() > _MIN_HISTORY and np.all((steps >= 1) & (steps <= 40))
    # the first answers start cold, max_iter steps and no warm start to pay for;
    # the others pay one more release for their warm start
    assert np.all(steps[:_MIN_HISTORY] == 40) and np.any(steps[_MIN_HISTORY:] < 40)
    assert np.all(steps[_MIN_HISTORY:] >= 2)  # Theorem 4.4's rule runs at least 2 steps
    releases = steps.sum() + paid.sum() - _MIN_HISTORY
    expected = gaussian_epsilon(z, 1e-6, steps=int(releases)) + explainer.n_rows_epsilon_
    assert explainer.epsilon_spent_ == pytest.approx(expected, rel=1e-9)
    assert ledger.epsilon_spent == pytest.approx(expected, rel=1e-9)
    assert explainer.epsilon_spent_ <= 12.0
    costs = result.epsilon[result.phase == "interactive"]
    assert costs[0] == pytest.approx(gaussian_epsilon(z, 1e-6, steps=int(steps[0])))
    assert np.all(costs <= 1.0 + 1e-9)


def test_enhanced_saves_steps_over_adaptive_and_adaptive_over_basic(problem):
    X, model = problem
    runs = {}
    for strategy in ["basic", "adaptive", "enhanced"]:
        # small enough a per-query epsilon that adaptive's floor binds
        explainer = _explainer(model, strategy=strategy, epsilon=1e3, epsilon_per_query=0.2,
                               max_iter=60).fit(X)
        explainer.explain(X[200:300])
        runs[strategy] = np.array(explainer.history_["n_iter"]).sum()
    assert runs["basic"] == 100 * 60
    assert runs["enhanced"] < runs["adaptive"] < runs["basic"]


def test_adaptive_reuses_close_queries_within_a_batch(problem):
    X, model = problem
    explainer = _explainer(model, strategy="adaptive", reuse_distance=0.05).fit(X)
    Z = np.vstack([X[0], X[0] + 0.01, X[1], X[0]])
    result = explainer.explain(Z)
    assert result.phase.tolist() == ["interactive", "reused", "interactive", "reused"]
    np.testing.assert_array_equal(result.values[1], result.values[0])
    np.testing.assert_array_equal(result.values[3], result.values[0])
    assert explainer.history_["n_iter"][1] == 0


def test_theorem_4_4_number_of_steps():
    # floor=False: the adaptive strategy's count; floor=True: the enhanced one's
    log_t = np.log(100)
    for beta in [0.0, 0.001, 0.05, 0.1, 0.3]:
        want = 100 if beta * log_t >= 1 else int(max(2, np.ceil(100 * beta * log_t)))
        assert _strategies.n_steps(beta, 0.02, warm=True, max_iter=100, floor=False) == want
        floored = max(beta, 0.02)
        want = 100 if floored * log_t >= 1 else int(max(2, np.ceil(100 * floored * log_t)))
        assert _strategies.n_steps(beta, 0.02, warm=True, max_iter=100, floor=True) == want
    # a cold start runs them all
    assert _strategies.n_steps(0.0, 0.0, warm=False, max_iter=100, floor=True) == 100


def test_adaptive_floors_beta_at_what_one_noisy_gradient_resolves(problem, monkeypatch):
    # ||G||^2 - d s^2 estimates beta^2 with a standard deviation of about
    # sqrt(2 d) s^2 near 0: adaptive floors beta at (2 d)^(1/4) s
    X, model = problem
    seen, plan = [], _strategies.n_steps

    def spy(beta, resolution, **kwargs):
        seen.append(resolution)
        return plan(beta, resolution, **kwargs)

    monkeypatch.setattr(_strategies, "n_steps", spy)
    explainer = _explainer(model, strategy="adaptive", epsilon=1e3).fit(X)
    explainer.explain(X[:_MIN_HISTORY + 5])
    noise_std = explainer.noise_multiplier_ * explainer.sensitivity_
    assert len(seen) == _MIN_HISTORY + 5
    np.testing.assert_allclose(seen, (2 * X.shape[1]) ** 0.25 * noise_std, rtol=1e-12)


def test_adaptive_budget_exhaustion_still_reuses(problem):
    X, model = problem
    # room for the DP row count (5%) and one answer
    explainer = _explainer(model, strategy="adaptive", epsilon=1.1, epsilon_per_query=1.0,
                           on_budget_exhausted="noninteractive").fit(X)
    result = explainer.explain(np.vstack([X[:3], X[0]]))
    assert result.phase.tolist() == ["interactive", "noninteractive", "noninteractive", "reused"]
    assert explainer.epsilon_spent_ <= 1.1
    raising = _explainer(model, strategy="enhanced", epsilon=1.1, epsilon_per_query=1.0,
                         on_budget_exhausted="raise").fit(X)
    with pytest.raises(BudgetError):
        raising.explain(X[:3])
    assert raising.history_["phase"] == ["interactive"]


# The warm-start choice: 200 rows at one point, half labelled +1, half -1, so
# the two candidates phi = +1 and -1 have equal gradient norms; the neighbour
# lacks one +1 row (at the distance where the weight cap binds, all rows are).
# The choice is an exponential mechanism between two candidates: its output
# is binary and its trade-off curve is randomized response's, not a
# Gaussian's, so audit_gdp's epsilon would overstate it (randomized response
# with epsilon 1 measures a Gaussian epsilon of 5.6 at delta 1e-5): these
# audits keep the assumption-free audit_epsilon.
_R = (np.sqrt(3.0) - 1.0) / 2.0
EM_DATA = (np.full((200, 1), 0.5 + _R), np.repeat([1.0, -1.0], 100))
EM_NEIGHBOUR = (EM_DATA[0][1:], EM_DATA[1][1:])
EM_QUERY = np.array([[0.5]])


def _warm_start_explainer(data):
    X, y = data
    return DPLimeExplainer(None, epsilon=1e3, delta=1e-5, epsilon_per_query=8.0, max_iter=1,
                           strategy="adaptive", bounds=(0.0, 1.0)).fit(X, y)


def _warm_start_release():
    """n warm-start choices of answers to EM_QUERY, as ``release(data, random_state, n)``.

    The explainer is fitted once per dataset (fit releases nothing and draws
    nothing: it calibrates from public facts, and takes the sensitivity from
    the code under test), and the choice's utilities are computed once per
    dataset (``_forms`` is a deterministic function of the data); then each of
    the n choices is drawn with fresh noise by the explainer's own release
    code (``_warm_start``, ``exponential_release``), from one noise source and
    one commitment of the n releases, made before the dataset is read, as an
    answer does.
    """
    fitted = {}

    def release(data, random_state, n):
        key = len(data[0])
        if key not in fitted:
            explainer = _warm_start_explainer(data)
            fitted[key] = explainer, explainer._forms(EM_QUERY, np.zeros(1, dtype=int))
        explainer, (H, g) = fitted[key]
        commitment = Commitment(gaussian_event(explainer.noise_multiplier_, steps=n),
                                "warm start")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            noise = noise_source(random_state)
        candidates = np.array([[1.0], [-1.0]])
        return np.array([_strategies.warm_start(
            H[0], g[0], candidates, epsilon=explainer.warm_start_epsilon_,
            sensitivity=explainer.sensitivity_, noise_multiplier=explainer.noise_multiplier_,
            noise=noise, commitment=commitment) for _ in range(n)])

    return release


def test_audit_of_the_warm_start_choice_stays_below_its_epsilon():
    claim = _warm_start_explainer(EM_DATA).warm_start_epsilon_
    assert 0.5 < claim < 3
    bound = audit_epsilon(_warm_start_release(), EM_DATA, EM_NEIGHBOUR, n_trials=6_000,
                          delta=0.0, batched=True, random_state=0)
    assert bound < claim


def test_warm_start_audit_catches_too_small_a_sensitivity(monkeypatch):
    claim = _warm_start_explainer(EM_DATA).warm_start_epsilon_
    monkeypatch.setattr(_dplime, "gradient_sensitivity",
                        lambda m, c=1.0, radius=1.0, relation="add_or_remove": c / m / 4)
    bound = audit_epsilon(_warm_start_release(), EM_DATA, EM_NEIGHBOUR, n_trials=6_000,
                          delta=0.0, batched=True, random_state=0)
    assert bound > claim


@parametrize_with_checks([
    DPLimeExplainer(strategy=s, epsilon=1e3, delta=1e-5, epsilon_per_query=0.5, max_iter=20,
                    bounds=(-10.0, 10.0), random_state=0)
    for s in ["adaptive", "enhanced"]
])
def test_sklearn_checks_adaptive_strategies(estimator, check):
    check(estimator)


# --------------------------------------------------------------------------
# The privacy core's rules: spends committed before the dataset is read and
# never refunded, no generator kept, the ledger's relation
# --------------------------------------------------------------------------

def _interrupt_call(monkeypatch, n):
    """Make the n-th noisy gradient (counted from 1) raise KeyboardInterrupt."""
    calls = []
    release = _dpgd.noisy_gradient

    def interrupted(*args, **kwargs):
        calls.append(1)
        if len(calls) == n:
            raise KeyboardInterrupt
        return release(*args, **kwargs)

    monkeypatch.setattr(_dpgd, "noisy_gradient", interrupted)
    return calls


def test_an_interrupted_basic_answer_keeps_its_whole_committed_spend(problem, monkeypatch):
    X, model = problem
    full = PrivacyLedger(delta=1e-6)
    whole = _explainer(model, epsilon=5.0, accountant=full).fit(X)
    whole.explain(X[:4])
    assert len(whole.history_["phase"]) == 4
    interrupted = PrivacyLedger(delta=1e-6)
    explainer = _explainer(model, epsilon=5.0, accountant=interrupted).fit(X)
    calls = _interrupt_call(monkeypatch, 2)  # the second of 50 steps
    with pytest.raises(KeyboardInterrupt):
        explainer.explain(X[:4])
    assert len(calls) == 2 and explainer.history_["phase"] == []  # nothing answered...
    # ... and the whole planned spend (4 answers of 50 steps) is recorded, for good
    expected = (gaussian_epsilon(explainer.noise_multiplier_, 1e-6, steps=4 * 50)
                + explainer.n_rows_epsilon_)
    assert interrupted.epsilon_spent == pytest.approx(expected, rel=1e-12)
    assert interrupted.epsilon_spent == pytest.approx(full.epsilon_spent, rel=1e-12)
    assert explainer.epsilon_spent_ == pytest.approx(full.epsilon_spent, rel=1e-12)


@pytest.mark.parametrize("strategy", ["adaptive", "enhanced"])
def test_an_interrupted_adaptive_answer_keeps_its_whole_committed_spend(problem, monkeypatch,
                                                                       strategy):
    # the first warm answer is interrupted at its second step, after the
    # number of steps was fixed by the first noisy gradient and committed: the
    # ledger holds what the uninterrupted answer spends (same seed, same noise
    # up to the interruption, so the same number of steps)
    X, model = problem
    T = 10
    params = dict(strategy=strategy, epsilon=1e3, epsilon_per_query=1.0, max_iter=T)
    Z = X[:_MIN_HISTORY + 1]
    full = PrivacyLedger(delta=1e-6)
    whole = _explainer(model, accountant=full, **params).fit(X)
    whole.explain(Z)
    assert whole.history_["phase"] == ["interactive"] * (_MIN_HISTORY + 1)
    n_steps = whole.history_["n_iter"][-1]
    assert n_steps >= 2  # a warm answer runs at least 2 steps
    interrupted = PrivacyLedger(delta=1e-6)
    explainer = _explainer(model, accountant=interrupted, **params).fit(X)
    calls = _interrupt_call(monkeypatch, _MIN_HISTORY * T + 2)  # the warm answer's 2nd step
    with pytest.raises(KeyboardInterrupt):
        explainer.explain(Z)
    assert len(calls) == _MIN_HISTORY * T + 2
    assert len(explainer.history_["phase"]) == _MIN_HISTORY  # the last one never answered
    assert interrupted.epsilon_spent == pytest.approx(full.epsilon_spent, rel=1e-12)
    assert [e for _, e in interrupted.events] == [e for _, e in full.events]
    # its warm start and first step, then its other steps, each committed before use
    z = explainer.noise_multiplier_
    assert [e for _, e in interrupted.events[-2:]] == [gaussian_event(z, steps=2),
                                                       gaussian_event(z, steps=n_steps - 1)]
    expected = (gaussian_epsilon(z, 1e-6, steps=_MIN_HISTORY * T + 1 + n_steps)
                + explainer.n_rows_epsilon_)
    assert interrupted.epsilon_spent == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("strategy", ["basic", "adaptive"])
def test_each_answer_is_committed_before_the_dataset_is_read(problem, monkeypatch, strategy):
    # the local loss's quadratic form is the only read of the private rows:
    # every time it is computed, a spend was committed just before
    X, model = problem
    explainer = _explainer(model, strategy=strategy, epsilon=1e3, max_iter=5).fit(X)
    seen, forms = [], DPLimeExplainer._forms

    def spy(self, Z, columns, offsets=None):
        seen.append(len(self.ledger_.events))
        return forms(self, Z, columns, offsets)

    monkeypatch.setattr(DPLimeExplainer, "_forms", spy)
    explainer.explain(X[:_MIN_HISTORY + 3])
    explainer.explain(X[50:52])
    assert len(seen) == (2 if strategy == "basic" else _MIN_HISTORY + 5)
    assert seen[0] >= 1 and all(b > a for a, b in zip(seen, seen[1:]))


def test_a_validation_error_spends_nothing(problem):
    X, model = problem
    ledger = PrivacyLedger(delta=1e-6)
    with pytest.raises(ValueError, match="2D array"):
        _explainer(model, accountant=ledger).fit(X[:100, 0])
    with pytest.raises(ValueError, match="epsilon_per_query"):
        _explainer(model, epsilon=0.2, epsilon_per_query=0.5, accountant=ledger).fit(X)
    assert len(ledger) == 0
    explainer = _explainer(model, accountant=ledger).fit(X)
    with pytest.raises(ValueError):
        explainer.explain(X[:2, :2])
    # the fit's DP row count only
    assert len(ledger) == 1 and explainer.epsilon_spent_ == explainer.n_rows_epsilon_


@pytest.mark.parametrize("strategy", ["basic", "adaptive"])
def test_no_generator_is_kept_and_unseeded_answers_differ(problem, strategy):
    X, model = problem
    params = dict(epsilon=1e3, epsilon_per_query=1.0, max_iter=5, strategy=strategy,
                  bounds=(0, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)  # no seed: no warning
        warnings.filterwarnings("ignore", message="(accountant|classes)=None")  # said elsewhere
        a = DPLimeExplainer(model, **params).fit(X)
        b = DPLimeExplainer(model, **params).fit(X)
        assert a.get_params()["random_state"] is None
        with pytest.warns(PrivacyLeakWarning, match="release"):  # the curator's rows
            fitted = pickle.dumps(a)
        first, second = a.transform(X[:3]), b.transform(X[:3])
    assert not np.allclose(first, second)
    for blob in (fitted, pickle.dumps(a), pickle.dumps(b), pickle.dumps(a.release())):
        for state in (b"MT19937", b"AESCounter", b"PCG64", b"NoiseSource"):
            assert state not in blob
    assert not any(isinstance(v, (np.random.Generator, np.random.RandomState))
                   for v in vars(a).values())
    assert not hasattr(a, "_rng")


@pytest.mark.parametrize("strategy", ["basic", "adaptive"])
def test_a_seed_reproduces_the_answers_and_warns(problem, strategy):
    X, model = problem
    params = dict(epsilon=1e3, epsilon_per_query=1.0, max_iter=5, strategy=strategy,
                  random_state=3)
    runs = []
    for _ in range(2):
        with pytest.warns(PrivacyLeakWarning, match="reproducible"):
            explainer = _explainer(model, **params).fit(X)
        with pytest.warns(PrivacyLeakWarning, match="reproducible"):
            one = explainer.transform(X[:_MIN_HISTORY + 2])
        with pytest.warns(PrivacyLeakWarning, match="reproducible"):
            two = explainer.transform(X[100:102])
        runs.append((one, two, explainer.history_["n_iter"], explainer.epsilon_spent_))
        assert b"PCG64" not in pickle.dumps(explainer)
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    np.testing.assert_array_equal(runs[0][1], runs[1][1])
    assert runs[0][2:] == runs[1][2:]
    # the stream is the number of answers before the call: the same query
    # asked after another answer gets other noise
    other = _explainer(model, **params).fit(X)
    other.transform(X[200:201])
    assert not np.allclose(other.transform(X[:1]), runs[0][0][:1])


def test_sensitivity_is_calibrated_under_the_ledgers_relation(problem):
    X, model = problem
    m = len(X)
    add_remove = _explainer(model, accountant=PrivacyLedger(delta=1e-6)).fit(X)
    replace = _explainer(model, accountant=PrivacyLedger(delta=1e-6, relation="replace_one"))
    replace.fit(X)
    # add-or-remove: over the DP count of the rows; replace-one: m is public
    m_dp = add_remove.n_rows_
    assert m_dp != m and add_remove.sensitivity_ == gradient_sensitivity(m_dp) == 1 / m_dp
    assert replace.n_rows_ == m
    assert replace.sensitivity_ == gradient_sensitivity(m, relation="replace_one")
    assert replace.sensitivity_ == pytest.approx(np.sqrt(3) / m)  # (1 + 2 r*) / m, radius 1
    assert replace.ledger_.relation == "replace_one"
    # the same per-query epsilon: the same multiplier, on a larger sensitivity
    assert replace.noise_multiplier_ == add_remove.noise_multiplier_
    replace.explain(X[:2])
    add_remove.explain(X[:2])
    # the same answers' spend; add-or-remove has paid for its DP row count too
    assert replace.epsilon_spent_ == pytest.approx(
        add_remove.epsilon_spent_ - add_remove.n_rows_epsilon_, rel=1e-12)
    assert replace.ledger_.own.events == add_remove.ledger_.own.events[1:]


def test_the_warm_start_choice_noise_is_larger_under_replace_one(monkeypatch, problem):
    # the exponential mechanism is called with the relation's sensitivity
    X, model = problem
    seen = []
    release = _strategies.exponential_release

    def spy(utility, **kwargs):
        seen.append(kwargs["sensitivity"])
        return release(utility, **kwargs)

    monkeypatch.setattr(_strategies, "exponential_release", spy)
    ledger = PrivacyLedger(delta=1e-6, relation="replace_one")
    explainer = _explainer(model, strategy="adaptive", epsilon=1e3, max_iter=3,
                           accountant=ledger).fit(X)
    explainer.explain(X[:_MIN_HISTORY + 1])
    assert seen == [gradient_sensitivity(len(X), relation="replace_one")]


def test_an_answer_whose_remaining_steps_are_refused_stops_at_its_paid_step(problem,
                                                                          monkeypatch):
    # another spender of a shared ledger can take the room between the worst-case
    # check and the commit of the remaining steps: the answer is then its first
    # (paid) step, and the explainer goes non-interactive
    X, model = problem
    explainer = _explainer(model, strategy="adaptive", epsilon=1e3, max_iter=10).fit(X)
    commit = explainer.ledger_.commit

    def refuse_more_steps(event, label, **kwargs):
        if "more steps" in label:
            raise BudgetError("taken by another estimator")
        return commit(event, label, **kwargs)

    monkeypatch.setattr(explainer.ledger_, "commit", refuse_more_steps)
    result = explainer.explain(X[:3])
    assert result.phase.tolist() == ["interactive", "noninteractive", "noninteractive"]
    assert explainer.history_["n_iter"][0] == 1
    z = explainer.noise_multiplier_
    assert result.epsilon[0] == pytest.approx(gaussian_epsilon(z, 1e-6, steps=1))
    assert explainer.epsilon_spent_ == pytest.approx(
        result.epsilon[0] + explainer.n_rows_epsilon_, rel=1e-9)


# --------------------------------------------------------------------------
# The curator and its release: the fitted explainer holds the private rows;
# release() holds DP outputs only; fit_transform's rows stay out of history_
# --------------------------------------------------------------------------

def _float_hits(blob, values):
    """How many 8-byte windows of ``blob``, at any offset, are one of ``values`` (float64)."""
    values = np.unique(np.asarray(values, dtype=np.float64))
    hits = 0
    for offset in range(8):
        n = (len(blob) - offset) // 8
        words = np.frombuffer(blob, dtype=np.float64, count=n, offset=offset)
        hits += int(np.isin(words, values).sum())
    return hits


def _public_points(n, seed=1):
    return np.random.RandomState(seed).uniform(0, 1, size=(n, 4))


def test_release_pickles_no_private_row_and_answers_from_its_history(problem):
    X, model = problem
    rows = X[:500]
    ledger = PrivacyLedger(delta=1e-6)
    # room for 4 answers at 0.5; 3 are paid, so the curator still has budget
    curator = _explainer(model, epsilon=2.0, accountant=ledger, reuse_distance=0.0).fit(rows)
    asked = _public_points(3)
    first = curator.explain(asked)
    assert first.phase.tolist() == ["interactive"] * 3
    private = np.r_[rows.ravel(), curator._labels.ravel()]
    with pytest.warns(PrivacyLeakWarning, match="release"):
        curator_blob = pickle.dumps(curator)
    assert _float_hits(curator_blob, rows.ravel()) >= rows.size  # the scan sees rows

    released = curator.release()
    assert not hasattr(released, "_X") and not hasattr(released, "_labels")
    assert released.get_params()["estimator"] is None
    assert released.get_params()["random_state"] is None  # the seed would denoise the answers
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)  # a released copy does not warn
        blob = pickle.dumps(released)
    assert _float_hits(blob, private) == 0
    loaded = pickle.loads(blob)
    assert _float_hits(pickle.dumps(vars(loaded)), private) == 0

    spent, n_events = ledger.epsilon_spent, len(ledger)
    assert curator.epsilon_remaining_ > 0.5 and loaded.epsilon_remaining_ == 0.0
    again = loaded.explain(asked[[2, 0]])
    assert again.phase.tolist() == ["reused"] * 2
    np.testing.assert_array_equal(again.values, first.values[[2, 0]])
    new = _public_points(4, seed=2)
    fresh = loaded.explain(new)
    assert fresh.phase.tolist() == ["noninteractive"] * 4 and np.all(fresh.epsilon == 0)
    # the nearest past interactive answer, as the curator's non-interactive phase gives
    nearest = np.argmin(((new[:, None] - asked[None]) ** 2).sum(-1), axis=1)
    np.testing.assert_array_equal(fresh.values, first.values[nearest])
    assert ledger.epsilon_spent == spent and len(ledger) == n_events
    assert loaded.epsilon_spent_ == curator.epsilon_spent_
    assert loaded.n_queries_ == 3 + 2 + 4 and curator.n_queries_ == 3

    # on_budget_exhausted="raise": a new query has no interactive answer to get
    loaded.set_params(on_budget_exhausted="raise")
    n = loaded.n_queries_
    with pytest.raises(BudgetError, match="released explainer"):
        loaded.explain(_public_points(2, seed=3))
    assert loaded.n_queries_ == n
    assert loaded.explain(asked[:1]).phase.tolist() == ["reused"]
    assert ledger.epsilon_spent == spent and len(ledger) == n_events


def test_pickling_the_curator_warns_and_an_unfitted_explainer_does_not(problem):
    X, model = problem
    explainer = _explainer(model)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        pickle.dumps(explainer)
    explainer.fit(X[:200])
    with pytest.warns(PrivacyLeakWarning, match="private explanation rows"):
        loaded = pickle.loads(pickle.dumps(explainer))
    np.testing.assert_array_equal(loaded._X, explainer._X)  # the warning changes nothing


def test_fit_transform_keeps_no_private_row_in_history(problem):
    X, model = problem
    rows = X[:300]
    bounds = (-1.0, 2.0)  # the history's queries are scaled: look for both units
    private = np.r_[rows.ravel(), ((rows - bounds[0]) / (bounds[1] - bounds[0])).ravel()]
    pipe = make_pipeline(FunctionTransformer(),
                         _explainer(model, epsilon=2.0, max_iter=20, bounds=bounds))
    with pytest.warns(PrivacyLeakWarning, match="fit_transform"):
        out = pipe.fit_transform(rows)
    explainer = pipe[-1]
    assert out.shape == rows.shape
    hist = explainer.history_
    assert len(hist["queries"]) == len(rows) and hist["private"] == [True] * len(rows)
    assert all(q is None for q in hist["queries"])
    assert "interactive" in hist["phase"]
    assert _float_hits(pickle.dumps(hist), private) == 0
    assert _float_hits(pickle.dumps(explainer.release()), private) == 0
    # an answer whose query was withheld is never reused, nor used by the
    # non-interactive phase (the budget is spent: 4 answers at 0.5)
    assert hist["phase"][0] == "interactive"
    again = explainer.explain(rows[:1])
    assert again.phase.tolist() == ["noninteractive"] and np.all(again.values == 0)
    assert explainer.history_["private"][-1] is False

    # asked to keep them: the curator's history holds the rows (and reuses
    # their answers); its release still does not
    keeping = _explainer(model, epsilon=2.0, max_iter=20, bounds=bounds, store_fit_queries=True)
    with pytest.warns(PrivacyLeakWarning, match="fit_transform"):
        keeping.fit_transform(rows[:12])
    assert _float_hits(pickle.dumps(keeping.history_), private) > 0
    released = keeping.release()
    assert _float_hits(pickle.dumps(released), private) == 0
    assert released.explain(rows[:1]).phase.tolist() == ["noninteractive"]
    assert keeping.explain(rows[:1]).phase.tolist() == ["reused"]


def test_an_interrupted_fit_transform_keeps_no_private_row(problem, monkeypatch):
    X, model = problem
    # adaptive answers one query at a time: two are recorded before the third is cut
    explainer = _explainer(model, epsilon=2.0, max_iter=10, strategy="adaptive")
    _interrupt_call(monkeypatch, 25)  # the third answer's fifth step
    with pytest.warns(PrivacyLeakWarning), pytest.raises(KeyboardInterrupt):
        explainer.fit_transform(X[:12])
    hist = explainer.history_
    assert hist["phase"] == ["interactive"] * 2 and hist["private"] == [True] * 2
    assert hist["queries"] == [None, None]


@pytest.mark.parametrize("strategy", ["basic", "adaptive"])
def test_a_refit_on_a_shared_ledger_gets_no_fresh_budget(problem, strategy):
    X, model = problem
    ledger = PrivacyLedger(epsilon=1.0, delta=1e-6)
    explainer = _explainer(model, epsilon=1.0, strategy=strategy, accountant=ledger).fit(X)
    first = explainer.explain(_public_points(6))
    assert "interactive" in first.phase and first.phase[-1] == "noninteractive"
    spent, n_events = ledger.epsilon_spent, len(ledger)
    if ledger.epsilon_remaining < explainer.n_rows_epsilon_:
        # a refit releases a DP count of the rows first: refused before anything
        with pytest.raises(BudgetError):
            explainer.fit(X)
        assert ledger.epsilon_spent == spent and len(ledger) == n_events
        return
    explainer.fit(X)  # a new own ledger, the same shared one
    assert explainer.ledger_.own.epsilon_remaining == pytest.approx(1 - explainer.n_rows_epsilon_)
    assert explainer.epsilon_remaining_ == pytest.approx(ledger.epsilon_remaining)
    assert explainer.epsilon_remaining_ < 0.5
    spent, n_events = ledger.epsilon_spent, len(ledger)  # with the refit's count
    again = explainer.explain(_public_points(4, seed=2))
    assert set(again.phase) == {"noninteractive"}
    assert explainer.epsilon_spent_ == explainer.n_rows_epsilon_
    assert ledger.epsilon_spent == spent and len(ledger) == n_events
    strict = explainer.set_params(on_budget_exhausted="raise")
    try:
        strict.fit(X)
    except BudgetError:  # no room left for its row count: refused, nothing recorded
        assert ledger.epsilon_spent == spent and len(ledger) == n_events
        return
    spent, n_events = ledger.epsilon_spent, len(ledger)
    with pytest.raises(BudgetError):
        strict.explain(_public_points(1, seed=3))
    assert ledger.epsilon_spent == spent and len(ledger) == n_events
