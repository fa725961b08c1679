"""The number of rows is private in skdpx.model_selection (issue 35, item 1).

Under add-or-remove neighbours the attacker knows every row but one, so
anything a search or a sweep shows that is a deterministic function of the
number of rows ``n`` reveals membership. A search (and a sweep) releases one
DP count of its rows first and plans everything from it. With that count
pinned to the same value on ``D`` and on ``D`` plus one row (an outcome the
count has on both), and the same seed, everything but the DP outputs'
values must be identical: the plan, the ledger's labels and events, the
warnings, the fitted attributes' names and every plan attribute of the
refitted model. At 69bf3a8 the searches planned with the exact number of
rows of each part, and these tests fail there (``search_plan_.n_train`` /
``n_validation``, the curve's ``n_train``, the candidate's number of steps).

The estimator is a stub whose plan depends on its planning count (one
Gaussian step per row of the count: cheap to calibrate), so that a plan
made from the exact number of rows shows.
"""

import math
import warnings

import numpy as np
import pytest
from sklearn.base import ClassifierMixin

from skdpx.model_selection import DPGridSearchCV, DPRandomSearchCV, privacy_utility_curve
from skdpx.privacy import (
    BUDGET_PARAMETER_CONSTRAINTS,
    COUNT_SHARE,
    FitCount,
    FixedLossDpEvent,
    PrivacyLedger,
    SpendPlan,
    calibrate_noise,
    compute_epsilon,
    event_to_json,
    gaussian_event,
    gaussian_release,
)

from ._reference import SmallDP

N = 120


class _Steps(ClassifierMixin, SmallDP):
    """A DP estimator whose plan is a function of its planning count: ``int(count.n)``
    Gaussian releases (a count each), calibrated to its budget. ``shift`` changes its
    predictions, not its plan."""

    _parameter_constraints = {**BUDGET_PARAMETER_CONSTRAINTS, "shift": [int]}

    def __init__(self, shift=0, epsilon=1.0, delta=1e-5, bounds=(0.0, 1.0), accountant=None,
                 random_state=None):
        self.shift = shift
        super().__init__(epsilon=epsilon, delta=delta, bounds=bounds, accountant=accountant,
                         random_state=random_state)

    def _plan_spend(self, data, relation, bounds, count):
        steps = max(int(count.n), 1)
        z = calibrate_noise(self.epsilon, self.delta, steps=steps, prior=count.prior())
        return SpendPlan(gaussian_event(z, steps=steps), f"{steps} counts", noise_multiplier=z,
                         steps=steps)

    def _private_fit(self, data, plan, commitment, noise):
        for _ in range(plan.steps):
            gaussian_release(float(len(data.X)), noise_multiplier=plan.noise_multiplier,
                             sensitivity=1.0, noise=noise, commitment=commitment)
        self.steps_ = plan.steps
        self.noise_multiplier_ = plan.noise_multiplier
        self.classes_ = np.array([0, 1])

    def predict(self, X):
        return ((np.asarray(X, dtype=float)[:, 0] > 0.5) ^ bool(self.shift)).astype(int)


@pytest.fixture
def pinned(monkeypatch):
    """Every DP row count released comes out as ``pinned.value`` (paid for as the real one)."""
    class Pin:
        value = 100.0
        released = []

    def release(self, n_rows, *, noise, commitment):
        if self.n is not None:
            return self.n
        if self.private:
            commitment.draw(self.event)
            self.n = float(Pin.value)
            Pin.released.append(self.epsilon)
        else:
            self.n = float(n_rows)
        return self.n

    monkeypatch.setattr(FitCount, "release", release)
    return Pin


def _neighbours(seed=0):
    rng = np.random.RandomState(seed)
    X = rng.uniform(0, 1, size=(N + 1, 2))
    y = (X[:, 0] > 0.5).astype(int)
    return (X[:N], y[:N]), (X, y)  # D, and D plus one row


def _run(make, data):
    """Fit on ``data`` with a fresh ledger; return (what was fitted, the ledger, warnings)."""
    ledger = PrivacyLedger(epsilon=50.0, delta=1e-3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = make(ledger, *data)
    return out, ledger, [(w.category.__name__, str(w.message)) for w in caught]


def _ledger_view(ledger):
    return [(label, event_to_json(event)) for label, event in ledger.events]


def _plan_view(plan):
    out = plan.to_dict()
    out["candidate_events"] = [event_to_json(e) for e in plan.candidate_events]
    return out


def _fitted_view(est):
    """The refitted model's attributes that are not DP values: its plan, its count, its
    ledger's record."""
    return {"names": sorted(vars(est)), "steps_": est.steps_,
            "noise_multiplier_": est.noise_multiplier_, "n_rows_": est.n_rows_,
            "n_rows_std_": est.n_rows_std_, "n_rows_epsilon_": est.n_rows_epsilon_,
            "epsilon": est.epsilon, "ledger": _ledger_view(est.ledger_.own)}


@pytest.mark.parametrize("cv", [0.25, 3])
@pytest.mark.parametrize("kind", ["grid", "random"])
def test_a_search_on_neighbours_differs_only_in_its_dp_outputs(pinned, cv, kind):
    def make(ledger, X, y):
        est = _Steps()
        if kind == "grid":
            search = DPGridSearchCV(est, {"shift": [0, 1]}, n_iter=3, epsilon=2.0, cv=cv,
                                    accountant=ledger, random_state=0)
        else:
            search = DPRandomSearchCV(est, {"shift": [0, 1]}, n_iter=3, epsilon=2.0, cv=cv,
                                      selection="negative_binomial", accountant=ledger,
                                      random_state=0)
        return search.fit(X, y)

    D, D_plus = _neighbours()
    (a, ledger_a, warned_a), (b, ledger_b, warned_b) = _run(make, D), _run(make, D_plus)
    # the plan, from the count alone
    assert _plan_view(a.search_plan_) == _plan_view(b.search_plan_)
    assert pinned.released == [COUNT_SHARE * 2.0] * 2  # one count per search, none per fit
    plan = a.search_plan_
    assert plan.n_rows == pinned.value and plan.count_epsilon == COUNT_SHARE * 2.0
    shares = (1 - cv, cv) if cv == 0.25 else ((cv - 1) / cv, 1.0)
    assert (plan.n_train, plan.n_validation) == pytest.approx(
        (shares[0] * pinned.value, shares[1] * pinned.value))
    # the ledger: the count, then the rest, with the same labels and events
    assert _ledger_view(ledger_a) == _ledger_view(ledger_b)
    assert [label for label, _ in ledger_a.events][0].endswith("row count (Laplace)")
    assert ledger_a.events[0][1] == FixedLossDpEvent(COUNT_SHARE * 2.0)
    assert _ledger_view(a.ledger_.own) == _ledger_view(b.ledger_.own)
    # the warnings, word for word (the seed's, here)
    assert warned_a == warned_b and warned_a
    # every attribute's name, the results' keys and pool, the refit's plan and record
    assert sorted(vars(a)) == sorted(vars(b))
    assert sorted(a.cv_results_) == sorted(b.cv_results_)
    assert a.cv_results_["params"] == b.cv_results_["params"]
    assert _fitted_view(a.best_estimator_) == _fitted_view(b.best_estimator_)
    # the refit plans with the whole count, a run with its training part's share
    assert a.best_estimator_.steps_ == int(pinned.value)
    assert a.best_estimator_.n_rows_epsilon_ == 0  # no count of its own
    # the search's spend, at most its budget
    assert compute_epsilon(plan.event, plan.delta) == pytest.approx(plan.epsilon)
    assert plan.epsilon <= 2.0 and a.epsilon_spent_ == pytest.approx(plan.epsilon)
    # price, at the same count, is the plan fit made
    priced = make(PrivacyLedger(), *D).price(*D, n_rows=pinned.value)
    assert _plan_view(priced) == _plan_view(plan)


def test_price_needs_a_count_where_the_number_of_rows_is_private():
    X, y = _neighbours()[0]
    search = DPGridSearchCV(_Steps(), {"shift": [0, 1]}, epsilon=2.0)
    with pytest.raises(ValueError, match="needs n_rows.*Nothing was read or spent"):
        search.price(X, y)
    # a price is a function of the count given, not of the rows
    assert _plan_view(search.price(X, y, n_rows=90.0)) == \
        _plan_view(search.price(X[:50], y[:50], n_rows=90.0))
    for bad in (0, -3.0, math.inf, math.nan, True):
        with pytest.raises(ValueError, match="n_rows must be"):
            search.price(X, y, n_rows=bad)
    # replace-one: the number of rows is public, no count is released
    public = search.set_params(accountant=PrivacyLedger(relation="replace_one")).price(X, y)
    assert public.n_rows == N and public.count_epsilon == 0
    assert public.n_train == pytest.approx(0.8 * N)


def test_a_count_too_small_refuses_after_the_count_only(pinned):
    # the refusal is on the DP count (spent, and said so), the same on both neighbours
    pinned.value = 8.0

    def make(ledger, X, y):
        return DPGridSearchCV(_Steps(), {"shift": [0, 1]}, epsilon=2.0, accountant=ledger,
                              random_state=0).fit(X, y)

    messages = []
    for data in _neighbours():
        ledger = PrivacyLedger(epsilon=50.0, delta=1e-3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(ValueError, match="DP count of the rows is 8.0") as info:
                make(ledger, *data)
        messages.append(str(info.value))
        assert [event for _, event in ledger.events] == [FixedLossDpEvent(COUNT_SHARE * 2.0)]
    assert messages[0] == messages[1]
    assert "row count's epsilon (0.1) was spent; nothing else was" in messages[0]


@pytest.mark.parametrize("validation", ["holdout", "public"])
def test_a_curve_on_neighbours_differs_only_in_its_scores(pinned, validation):
    X_pub = np.random.RandomState(9).uniform(0, 1, size=(40, 2))

    def make(ledger, X, y):
        kw = {} if validation == "holdout" else {"X_val": X_pub,
                                                 "y_val": (X_pub[:, 0] > 0.5).astype(int)}
        return privacy_utility_curve(_Steps(), X, y, epsilons=[0.5, 2.0], accountant=ledger,
                                     random_state=0, **kw)

    D, D_plus = _neighbours()
    (a, ledger_a, warned_a), (b, ledger_b, warned_b) = _run(make, D), _run(make, D_plus)
    for key in ("n_train", "n_validation", "total_epsilon", "total_delta", "validation",
                "n_rows", "count_epsilon", "count_std", "scoring", "estimator"):
        assert getattr(a, key) == getattr(b, key), key
    for key in ("epsilons", "fit_epsilons", "point_epsilons", "score_noise_multipliers"):
        assert np.array_equal(getattr(a, key), getattr(b, key)) or getattr(a, key) is None
    assert [event_to_json(e) for e in a.events] == [event_to_json(e) for e in b.events]
    assert _ledger_view(ledger_a) == _ledger_view(ledger_b)
    assert warned_a == warned_b
    assert pinned.released == [COUNT_SHARE * 2.0] * 2  # one count per sweep
    assert a.n_rows == pinned.value
    assert a.n_train == pytest.approx((0.8 if validation == "holdout" else 1.0) * pinned.value)
    assert a.n_validation == pytest.approx(0.2 * pinned.value if validation == "holdout"
                                           else len(X_pub))
    # the count, then the points; the sweep costs no more than the points fitted alone
    assert ledger_a.events[0][1] == FixedLossDpEvent(COUNT_SHARE * 2.0)
    assert len(ledger_a) == 3 and a.total_epsilon <= 0.5 + 2.0
    assert a.epsilon_at(1e-3) == pytest.approx(ledger_a.epsilon_spent)  # the ledger's delta


def test_a_search_refused_after_the_count_says_so_and_holds_no_hidden_draw(monkeypatch):
    # the check before the count stands in for the rest with a public event; when the
    # plan made from the count is refused, the count's spend stays and the error says
    # so, and the hidden number of runs is not yet drawn (nothing in the traceback)
    from skdpx.privacy import BudgetError

    monkeypatch.setattr(FitCount, "proxy_event", lambda self, epsilon, delta: None)
    (X, y), _ = _neighbours()
    ledger = PrivacyLedger(epsilon=0.5, delta=1e-5)
    search = DPRandomSearchCV(_Steps(), {"shift": [0, 1, 2]}, n_iter=2, epsilon=2.0,
                              accountant=ledger, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(BudgetError, match=r"row count \(epsilon 0.1\) was spent") as info:
            search.fit(X, y)
    assert [event for _, event in ledger.events] == [FixedLossDpEvent(COUNT_SHARE * 2.0)]
    tb, names = info.tb, set()
    while tb is not None:
        names |= set(tb.tb_frame.f_locals)
        tb = tb.tb_next
    assert not names & {"n_runs", "drawn"}
