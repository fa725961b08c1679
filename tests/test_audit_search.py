"""Empirical audits of private model selection (issue 20).

Two mechanisms, audited with the project's auditor (``skdpx.privacy._audit``)
on adversarial neighbours, each also audited broken on purpose to show that
the audit has the power to catch the bug:

1. **The DP score release** (``release_score`` with a scorer's stated
   sensitivity and the noise a search calibrates): neighbouring validation
   sets (one extreme row added or removed, or replaced by the opposite
   extreme) for every scorer that reads private rows. The released sums are
   exactly a Gaussian mechanism, so :func:`audit_gdp` applies; its bound
   must stay below the run's claimed epsilon, and exceed it when the noise
   or the stated sensitivity is halved, or when a scorer forgets to centre
   its contributions (``sqrt(5/2) ~ 1.58`` times the stated add-or-remove
   sensitivity, the count column included). The sums include each scorer's
   own count of the validation rows (issue 35: the number of rows is
   private, a score divides by a DP count of them, never by ``n``).
   ``DPLimeFidelity`` is public (no sum of private rows is released, its
   spend is the explainer's own): nothing to audit here.

2. **The selection** (random stopping, only the best run's score released).
   A search whose estimator releases nothing (``_PublicRule``: a public
   rule, its fit a ``NoOpDpEvent``) leaves the score as the only channel of
   a validation row; with ``cv=2`` folds every row is scored in every run,
   so the neighbours (one correctly predicted row added) need no
   conditioning on the split. A full search costs ~10 ms, too slow to repeat
   10^5 times, so the audit samples what the search releases from the same
   pieces: the number of runs ``K`` from ``run_distribution``'s logarithmic
   distribution (``draw_runs``'s), and the best of ``K`` Gaussian score
   releases in closed form (``max`` of ``K`` i.i.d. normals is
   ``Phi^-1(U^(1/K))``). Three tests tie this sampler to the search: the
   search's ``best_score_`` is recomputed exactly from ``draw_split``,
   ``draw_runs``, ``draw_candidates`` and ``release_score`` (seed for seed),
   ``draw_runs`` follows the logarithmic distribution, and the closed-form
   best score matches the best of ``K`` real ``release_score`` draws.

   The claim is the committed event's privacy profile: the search's DP row
   count (epsilon_0 = 0.15, a pure release the neighbours here do not
   exercise) and the selection's event after it. The whole search is 2.95
   at 1e-5 and 2.63 at 1e-3 (``epsilon_at``); the selection alone,
   ``selection_event``, 2.80 and 2.48, where 10^5 trials see more of the
   tails. Measured with the threshold audit (100,000 trials a side, seeds
   0-4; delta 1e-3 / 1e-5): the correct selection 0.95-1.10 / 0.71-1.00
   (below the selection's own claim); the best score released with the
   number of runs 2.86-3.52 / 3.07-3.86; the best of a fixed ``n_iter``
   runs 3.04-3.53 / 3.36-3.71; every run's score released 6.6-7.8 (each
   above the whole search's claim, the count included).

   Halving the score noise of the selection is NOT caught (2.21-2.55 /
   2.32-2.59, measured before the row count): the accounted bound of random stopping is loose for this
   pair, and the exact privacy profile of the best score with half the
   noise (computed numerically, at epsilon 1 and a mean of 10 runs) exceeds
   the accounted one only far in the tail (1.22 against 1.00 at delta
   1e-5, 0.88 against 0.83 at 1e-3), which 10^5 trials cannot see. The
   score's own noise is audited in part 1, where half of it is caught.
"""

import math
from types import SimpleNamespace

import numpy as np
import pytest
from dp_accounting import NoOpDpEvent
from scipy.special import log_ndtr, ndtri
from scipy.stats import chisquare, ks_2samp, logser
from sklearn.base import ClassifierMixin

from skdpx.model_selection import (
    DPAccuracy,
    DPBalancedAccuracy,
    DPCounterfactualScore,
    DPLogLoss,
    DPRandomSearchCV,
    DPRecourseScore,
)
from skdpx.privacy import (
    BUDGET_PARAMETER_CONSTRAINTS,
    Commitment,
    PrivacyLedger,
    SpendPlan,
    calibrate_noise,
    compute_epsilon,
    count_release,
    fixed_loss_event,
    gaussian_event,
    gaussian_release,
    given_row_count,
)
from skdpx.privacy._audit import audit_epsilon, audit_gdp
from skdpx.privacy._selection import (
    draw_candidates,
    draw_runs,
    draw_split,
    release_score,
    run_distribution,
)

from ._helpers import seeded as _seeded
from ._reference import SmallDP

pytestmark = pytest.mark.filterwarnings(
    "ignore::skdpx.privacy.PrivacyLeakWarning",
    "ignore::skdpx.privacy._budget.UncappedBudgetWarning",
)


class _PublicRule(ClassifierMixin, SmallDP):
    """A test estimator whose predictions never depend on the private rows.

    ``predict`` is ``X[:, rule] > 0.5``, ``predict_proba`` reads the
    probability of class 1 from column 1, ``explain`` gives a valid
    counterfactual (or a successful recourse) at distance 0 when column 0
    is above 0.5, a failure otherwise. ``fit`` releases nothing
    (``NoOpDpEvent``), or with ``fit_noise=True`` one Gaussian count
    calibrated to its ``(epsilon, delta)`` through the privacy core (so that
    a holdout search calibrates its score noise against a Gaussian fit);
    the count is discarded.
    """

    _parameter_constraints = {**BUDGET_PARAMETER_CONSTRAINTS, "rule": [int], "fit_noise": [bool]}

    def __init__(self, rule=0, fit_noise=False, epsilon=1.0, delta=1e-5, bounds=(0.0, 1.0),
                 accountant=None, random_state=None):
        self.rule = rule
        self.fit_noise = fit_noise
        super().__init__(epsilon=epsilon, delta=delta, bounds=bounds, accountant=accountant,
                         random_state=random_state)

    def _plan_spend(self, data, relation, bounds, count):
        if not self.fit_noise:
            return SpendPlan(NoOpDpEvent(), "a public rule: nothing released")
        z = calibrate_noise(self.epsilon, self.delta, prior=count.prior())
        return SpendPlan(gaussian_event(z), "a count, discarded", noise_multiplier=z)

    def _private_fit(self, data, plan, commitment, noise):
        if self.fit_noise:
            gaussian_release(float(len(data.X)), noise_multiplier=plan.noise_multiplier,
                             sensitivity=1.0, noise=noise, commitment=commitment)
        self.classes_ = np.array([0, 1])
        self.bounds_ = (np.zeros(self.n_features_in_), np.ones(self.n_features_in_))

    def predict(self, X):
        return (np.asarray(X, dtype=float)[:, self.rule] > 0.5).astype(int)

    def predict_proba(self, X):
        p = np.clip(np.asarray(X, dtype=float)[:, 1], 0.0, 1.0)
        return np.column_stack([1.0 - p, p])

    def explain(self, X, desired_class=None):
        X = np.asarray(X, dtype=float)
        ok = X[:, 0] > 0.5
        return SimpleNamespace(
            queries=X, counterfactuals=np.where(ok[:, None], X, np.nan), valid=ok,
            success=ok, paths=[X[i:i + 1] for i in range(len(X))])


def _fitted_rule():
    with given_row_count(20):  # a public count: 20 rows need no DP count of their own
        return _PublicRule().fit(np.zeros((20, 2)))


# --------------------------------------------------------------------------
# 1. The DP score release
# --------------------------------------------------------------------------
# Rows are (x0, x1, y): x0 is the prediction (and whether explain succeeds),
# x1 the probability of class 1. Each scorer gets its extreme rows: HIGH has
# the largest centred contribution, LOW the smallest.
EXTREMES = {
    # correct (+1/2) / wrong (-1/2)
    "accuracy": ((1.0, 0.5, 1), (0.0, 0.5, 1)),
    # class 0 correct (+1/2, count_0 + 1) / class 1 wrong (-1/2, count_1 + 1)
    "balanced_accuracy": ((0.0, 0.5, 0), (0.0, 0.5, 1)),
    # p_y = 0: loss clipped at L (+L/2) / p_y = 1: loss 0 (-L/2)
    "neg_log_loss": ((1.0, 0.0, 1), (1.0, 1.0, 1)),
    # a valid counterfactual (recourse) at distance 0 (u = 1) / a failure (u = -w)
    "counterfactual": ((1.0, 0.5, 1), (0.0, 0.5, 1)),
    "recourse": ((1.0, 0.5, 1), (0.0, 0.5, 1)),
}
SCORERS = {
    "accuracy": DPAccuracy,
    "balanced_accuracy": DPBalancedAccuracy,
    "neg_log_loss": DPLogLoss,
    "counterfactual": DPCounterfactualScore,
    "recourse": DPRecourseScore,
}
RELATIONS = ("add_or_remove", "replace_one")
N_SCORE_TRIALS = 20_000


def _rows(*rows):
    rows = np.asarray(rows, dtype=float)
    return rows[:, :2], rows[:, 2].astype(int)


def _validation_sets(name, relation):
    """Neighbouring validation sets: 40 mixed rows, plus HIGH (or LOW instead)."""
    high, low = EXTREMES[name]
    rng = np.random.RandomState(0)
    base = [(float(rng.rand() > 0.5), 0.5, int(rng.rand() > 0.5)) for _ in range(40)]
    data = _rows(*base, high)
    neighbour = _rows(*base) if relation == "add_or_remove" else _rows(*base, low)
    return data, neighbour


def _uncentred(scorer):
    """The scorer with its centring forgotten: each row's centred value shifted back by the
    centre (its count column left as it is), so one row moves the sums by ``sqrt(5) h``
    (``(2h, h)``), 1.58 times the stated add-or-remove sensitivity ``sqrt(2) h``."""
    centre = 0.5 if isinstance(scorer, DPAccuracy) else scorer.max_loss / 2.0

    class Uncentred(type(scorer)):
        def contributions(self, estimator, X, y):
            out = super().contributions(estimator, X, y)
            out[:, 0] += centre
            return out

    return Uncentred(**scorer._params())


_PLANS = {}


def _score_plan(scorer, relation):
    """What a holdout search (epsilon 3, cv 0.2, 10 runs) calibrates for one run:
    ``(z, sensitivity, epsilon of one run's score, delta)``.

    The candidate's fit is one Gaussian release at the run's budget, so the
    search gives the score the fit's own noise (``_score_noise``: a score
    dominated by the fit costs nothing on top of it) and a row in the
    validation part costs the run what the fit costs: ``candidate_epsilon``.
    """
    key = (type(scorer), relation)
    if key not in _PLANS:
        search = DPRandomSearchCV(
            _PublicRule(fit_noise=True), {"rule": [0, 1]}, n_iter=10, epsilon=3.0, scoring=scorer,
            accountant=PrivacyLedger(relation=relation))
        plan = search.price(np.zeros((500, 2)), np.zeros(500, dtype=int), n_rows=500)
        assert plan.score_sensitivity == scorer.sensitivity(relation)
        _PLANS[key] = (plan.score_noise_multiplier, plan.score_sensitivity,
                       plan.candidate_epsilon, plan.candidate_delta)
    return _PLANS[key]


def _audit_score(scorer, relation, *, noise_factor=1.0, sensitivity_factor=1.0,
                 stated_by=None, seed=0):
    """audit_gdp of ``release_score`` on the scorer's neighbouring validation sets.

    Returns ``(lower bound, claim)``. The test statistic is the released sums
    projected on the direction in which the two sets' exact sums differ
    (the likelihood ratio of a Gaussian mechanism); each call of the release
    makes ``n`` independent releases in one ``release_score`` call (the
    contributions repeated ``n`` times side by side: each block of columns
    gets its own noise at the stated scale).
    """
    name = scorer.name
    z, sensitivity, claim, delta = _score_plan(stated_by or scorer, relation)
    data, neighbour = _validation_sets(name, relation)
    model = _fitted_rule()
    exact = [scorer.contributions(model, *d).sum(axis=0) for d in (data, neighbour)]
    direction = exact[0] - exact[1]
    direction /= np.linalg.norm(direction)

    def release(dataset, random_state, n):
        contributions = np.asarray(scorer.contributions(model, *dataset), dtype=float)
        z_used = noise_factor * z
        noisy = release_score(np.tile(contributions, (1, n)), noise_multiplier=z_used,
                              sensitivity=sensitivity_factor * sensitivity,
                              noise=_seeded(random_state.randint(2**31)),
                              commitment=Commitment(gaussian_event(z_used), "audit"))
        return noisy.reshape(n, -1) @ direction

    result = audit_gdp(release, data, neighbour, n_trials=N_SCORE_TRIALS, delta=delta,
                       batched=True, random_state=seed)
    assert result.gaussian_fit
    return result.epsilon, claim


def test_extreme_rows_move_the_sums_by_the_stated_sensitivity():
    # the neighbours are the worst case: the exact sums differ by exactly the
    # stated sensitivity (so a sound release is audited where it is tight)
    model = _fitted_rule()
    for name, cls in SCORERS.items():
        for relation in RELATIONS:
            scorer = cls()
            data, neighbour = _validation_sets(name, relation)
            change = np.linalg.norm(scorer.contributions(model, *data).sum(axis=0)
                                    - scorer.contributions(model, *neighbour).sum(axis=0))
            assert change == pytest.approx(scorer.sensitivity(relation)), (name, relation)


@pytest.mark.parametrize("relation", RELATIONS)
@pytest.mark.parametrize("name", sorted(SCORERS))
def test_score_release_stays_below_the_claim(name, relation):
    # measured 0.38-0.52 against the claim 0.733 (add-or-remove: the search's row
    # count takes 5% of its epsilon), 0.49-0.72 against 0.808 (replace-one), seeds 0-4;
    # at epsilon 1 (claim 0.31, before the count) 20,000 trials resolved too little:
    # 0.01-0.13, half the noise 0.32-0.45
    eps_lb, claim = _audit_score(SCORERS[name](), relation)
    assert 0.5 * claim < eps_lb < claim


@pytest.mark.parametrize("relation", RELATIONS)
@pytest.mark.parametrize("name", sorted(SCORERS))
@pytest.mark.parametrize("broken", ["half_noise", "half_sensitivity"])
def test_broken_score_release_is_caught(name, relation, broken):
    # measured 1.19-1.31 against the claim 0.733 (add-or-remove), 1.35-1.63 against
    # 0.808 (replace-one), seeds 0-4, either break
    factors = {"half_noise": {"noise_factor": 0.5},
               "half_sensitivity": {"sensitivity_factor": 0.5}}[broken]
    eps_lb, claim = _audit_score(SCORERS[name](), relation, **factors)
    assert eps_lb > claim


@pytest.mark.parametrize("name", ["accuracy", "neg_log_loss"])
def test_uncentred_scorer_is_caught(name):
    # forgetting the centring moves the sums by (2h, h) for one added row (h = 1/2
    # for accuracy, L/2 for the log-loss), sqrt(5/2) ~ 1.58 times the stated
    # add-or-remove sensitivity sqrt(2) h; measured 0.84-0.97 against 0.733 (seeds 0-4)
    scorer = SCORERS[name]()
    eps_lb, claim = _audit_score(_uncentred(scorer), "add_or_remove", stated_by=scorer)
    assert eps_lb > claim


# --------------------------------------------------------------------------
# 2. The selection
# --------------------------------------------------------------------------
# one candidate, 100 runs on average, 2 folds: every row is scored in every run
SELECTION_SEARCH = dict(n_iter=100, epsilon=3.0, cv=2, selection="negative_binomial")
SELECTION_DELTA = 1e-3  # where 10^5 trials see the tails (the claim is the whole profile)
N_SELECTION_TRIALS = 100_000


def _selection_data(n_rows=40):
    """Neighbours for the selection: ``n_rows`` rows half predicted right (exact sums
    ``(0, n_rows / 2)`` for DPAccuracy: centred correct count, count column), and the same
    with one more, correctly predicted row (``(+1/2, +1/2)`` more: the sensitivity
    ``sqrt(2)/2``)."""
    X = np.zeros((n_rows, 2))
    X[: n_rows // 2, 0] = 1.0
    y = np.ones(n_rows, dtype=int)
    return (np.vstack([X, [[1.0, 0.5]]]), np.append(y, 1)), (X, y)


@pytest.fixture(scope="module")
def selection_plan():
    (X, y), _ = _selection_data()
    search = DPRandomSearchCV(_PublicRule(), {"rule": [0]}, **SELECTION_SEARCH)
    plan = search.price(X, y, n_rows=len(X))
    assert plan.n_folds == 2 and plan.mean_runs == 100
    assert plan.score_sensitivity == pytest.approx(math.sqrt(2) / 2)
    return plan


def _claim(plan, delta):
    """What the selection is accounted for at ``delta``: the search's event after its DP
    row count (the count, an epsilon_0-DP release of the number of rows, adds epsilon_0
    on top; the audit samples the selection alone, on neighbours whose count is not
    released)."""
    return compute_epsilon(plan.selection_event, delta)


def _best_of_runs(plan, variant):
    """``release(shift, random_state, n)``: ``n`` outputs of the selection, in sum units.

    ``shift`` is the selected candidate's exact sums projected on the
    direction in which the two datasets' sums differ (0 or the sensitivity
    ``sqrt(2)/2``: a run's two sums, the centred correct count and the count
    column, are a Gaussian release whose privacy profile is that of this
    one-dimensional projection). A run's score is ``shift + N(0,
    sigma^2)``, ``sigma = z * sensitivity``; the output is the best of
    ``K`` runs (``K`` from the search's distribution), i.e. ``shift + sigma
    * Phi^-1(U^(1/K))``.

    variant: ``"search"`` (the best score), or a broken selection:
    ``"published_runs"`` (the best score with ``K``, as ``n_runs_`` was),
    ``"fixed_runs"`` (``K = n_iter`` every time), ``"every_score"`` (all
    ``K`` scores and ``K``). The broken ones return the exact log-likelihood
    ratio of what they release (the most powerful statistic).
    """
    sigma = plan.score_noise_multiplier * plan.score_sensitivity
    _, gamma = run_distribution(plan.selection, plan.mean_runs, 0.0)
    poisson = plan.selection == "poisson"  # 0 runs (the search fails) has probability e^-100
    gap = plan.score_sensitivity  # the two datasets' exact sums differ by this

    def release(shift, random_state, n):
        if variant == "fixed_runs":
            k = np.full(n, int(plan.mean_runs))
        elif poisson:
            k = np.maximum(random_state.poisson(plan.mean_runs, n), 1)
        else:
            k = random_state.logseries(1.0 - gamma, n)
        if variant == "every_score":
            total = k * shift + sigma * np.sqrt(k) * random_state.standard_normal(n)
            return gap * (total - k * gap / 2.0) / sigma**2
        best = shift + sigma * ndtri(random_state.random_sample(n) ** (1.0 / k))
        if variant == "search":
            return best
        high, low = (best - gap) / sigma, best / sigma
        return (k - 1) * (log_ndtr(high) - log_ndtr(low)) + (low**2 - high**2) / 2.0

    return release


def _audit_selection(plan, variant, delta, seed=0):
    return audit_epsilon(_best_of_runs(plan, variant), plan.score_sensitivity, 0.0,
                         n_trials=N_SELECTION_TRIALS, delta=delta, batched=True,
                         random_state=seed)


@pytest.mark.parametrize("selection", ["negative_binomial", "poisson"])
def test_search_releases_what_the_audit_samples(selection):
    # The search's best score, recomputed seed for seed from the privacy
    # core's pieces in the search's order: the DP row count, the number of
    # runs, the candidates, the split, then one release_score per run on the
    # summed folds; the best run's finalized score. Pins the audited pipeline
    # to the search.
    (X, y), _ = _selection_data(60)
    scorer = DPAccuracy()
    for seed in range(3):
        search = DPRandomSearchCV(_PublicRule(), {"rule": [0, 1]}, n_iter=4, epsilon=3.0,
                                  cv=2, selection=selection, random_state=seed).fit(X, y)
        plan = search.search_plan_
        assert plan.score_noise_multiplier == calibrate_noise(plan.candidate_epsilon, 1e-5)
        noise = _seeded(seed)
        count = count_release(len(X), epsilon=plan.count_epsilon, noise=noise,
                              commitment=Commitment(fixed_loss_event(plan.count_epsilon), "n"))
        assert count == plan.n_rows
        k = draw_runs(plan.selection, plan.mean_runs, noise=noise)
        drawn = draw_candidates(2, k, noise=noise)
        parts = draw_split(len(X), 2, noise=noise)
        commitment = Commitment(gaussian_event(plan.score_noise_multiplier, steps=k), "runs")
        scores = []
        for c in drawn:
            model = _PublicRule(rule=int(c)).fit(X)
            sums = sum(scorer.contributions(model, X[parts == f], y[parts == f]).sum(axis=0)
                       for f in range(2))
            noisy = release_score(np.atleast_2d(sums), noise=noise, commitment=commitment,
                                  noise_multiplier=plan.score_noise_multiplier,
                                  sensitivity=plan.score_sensitivity)
            scores.append(scorer.finalize(noisy))
        best = int(np.argmax(scores))
        assert search.best_score_ == scores[best]
        assert search.best_params_ == {"rule": int(drawn[best])}


def test_number_of_runs_follows_the_sampled_distribution(selection_plan):
    # draw_runs (what the search draws) against the logarithmic distribution
    # the audit samples from (chi-square on bins of the support)
    _, gamma = run_distribution(selection_plan.selection, selection_plan.mean_runs, 0.0)
    noise = _seeded(1)
    k = np.array([draw_runs(selection_plan.selection, selection_plan.mean_runs, noise=noise)
                  for _ in range(2_000)])
    edges = np.array([1, 2, 3, 5, 10, 30, 100, 300, np.inf])
    observed = np.histogram(k, bins=edges)[0]
    cdf = logser(1.0 - gamma).cdf(edges[1:] - 1)
    expected = np.diff(np.concatenate([[0.0], cdf])) * len(k)
    expected[-1] += len(k) - expected.sum()
    assert chisquare(observed, expected).pvalue > 1e-3
    assert k.mean() == pytest.approx(selection_plan.mean_runs, rel=0.2)


def test_closed_form_best_score_matches_the_core_releases(selection_plan):
    # the best of K release_score draws (the core's noise) against
    # Phi^-1(U^(1/K)): same distribution
    plan = selection_plan
    rs = np.random.RandomState(2)
    _, gamma = run_distribution(plan.selection, plan.mean_runs, 0.0)
    k = rs.logseries(1.0 - gamma, 4_000)
    z, sensitivity = plan.score_noise_multiplier, plan.score_sensitivity
    noisy = release_score(np.full((1, k.sum()), 0.5), noise_multiplier=z, sensitivity=sensitivity,
                          noise=_seeded(3), commitment=Commitment(gaussian_event(z), "audit"))
    from_core = np.maximum.reduceat(noisy, np.concatenate([[0], np.cumsum(k)[:-1]]))
    closed_form = _best_of_runs(plan, "search")(0.5, rs, 4_000)
    assert ks_2samp(from_core, closed_form).pvalue > 1e-3


def test_selection_stays_below_its_claim(selection_plan):
    # measured 0.95-1.10 against the selection's 2.48 at delta 1e-3, 0.71-1.00
    # against 2.80 at the search's delta 1e-5 (seeds 0-4)
    plan = selection_plan
    for delta in (SELECTION_DELTA, plan.delta):
        eps_lb = _audit_selection(plan, "search", delta)
        assert eps_lb < _claim(plan, delta) < plan.epsilon_at(delta)
    assert eps_lb <= plan.epsilon <= SELECTION_SEARCH["epsilon"]


@pytest.mark.parametrize("variant", ["published_runs", "fixed_runs", "every_score"])
def test_broken_selection_is_caught(selection_plan, variant):
    # Random stopping is private only if the best run's output is all that
    # is released: given K, the best of K runs is the fixed-K selection,
    # whose privacy loss grows with K. Measured against the whole search's
    # claims 2.63 at delta 1e-3 / 2.95 at 1e-5 (seeds 0-4): published_runs
    # 2.86-3.52 / 3.07-3.86, fixed_runs 3.04-3.53 / 3.36-3.71, every_score 6.6-7.8.
    plan = selection_plan
    for delta in (SELECTION_DELTA, plan.delta):
        eps_lb = _audit_selection(plan, variant, delta)
        # beyond the whole search's claim (the count's epsilon_0 included), a fortiori
        # beyond the selection's own
        assert eps_lb > plan.epsilon_at(delta), delta


def test_search_does_not_publish_the_number_of_runs():
    # the published_runs leak above, in the fitted search: neither K nor the
    # candidates drawn (whose count is K) may be kept
    (X, y), _ = _selection_data(60)
    search = DPRandomSearchCV(_PublicRule(), {"rule": [0, 1]}, n_iter=4, epsilon=3.0, cv=2,
                              random_state=0).fit(X, y)
    assert not hasattr(search, "n_runs_") and not hasattr(search, "runs_")
    assert not any("run" in key for key in search.cv_results_)
    public = {name for name in vars(search) if name.endswith("_") and not name.startswith("_")}
    assert public <= {"best_index_", "best_params_", "best_score_", "best_estimator_",
                      "scorer_", "cv_results_", "search_plan_", "ledger_"}, public


def test_poisson_selection_stays_below_its_claim():
    # the default number of runs (a Poisson): the same audit, its own claim. (Its
    # broken variants are not caught here: at this plan's small per-run budget, the
    # best of about 100 Gaussian scores leaks far less than the bound allows.)
    (X, y), _ = _selection_data()
    search = DPRandomSearchCV(_PublicRule(), {"rule": [0]},
                              **dict(SELECTION_SEARCH, selection="poisson"))
    plan = search.price(X, y, n_rows=len(X))
    assert plan.selection == "poisson" and plan.shape == math.inf
    eps_lb = _audit_selection(plan, "search", SELECTION_DELTA)
    assert eps_lb < _claim(plan, SELECTION_DELTA)
