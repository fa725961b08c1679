"""Planning memoised per distinct leaf gives the same figures (issue 41, item 3).

A search plans every candidate's calibration. The privacy core computes the
slow parts once per distinct public input, with dp_accounting's public API
only, and without changing a bit of any noise multiplier or epsilon:

* the composed Gaussian leaves' PLD memoised (``_gaussian_leaf_pld``): a
  calibration against a Gaussian prior composes the same prior at every
  noise it tries;
* Renyi curves memoised per leaf (``_rdp_leaf_curve``): a mixture of 12
  candidates holds a few distinct subsampled Gaussians.

Calibrations and a search's plan are computed with the memos, from cold and
from warm memos, and without them (every cache cleared): all equal.
"""

from dp_accounting.rdp import rdp_privacy_accountant as rdp_lib
import numpy as np
import pytest

from skdpx.privacy import (
    MixtureDpEvent,
    calibrate_noise,
    compose_events,
    compute_epsilon,
    gaussian_event,
    laplace_event,
)
from skdpx.privacy import _calibration, _composition
from skdpx.privacy._composition import rdp_curve

#: every memo of the planning that is not one of this test's subjects
_OTHER_CACHES = (
    _calibration._calibrate_noise, _calibration._coarse_hint,
    _calibration._analytic_gaussian_sigma, _composition._epsilon_of_leaves,
    _composition._leaf_pld, _composition._rdp_curve_json,
)
_LEAF_MEMOS = ("_gaussian_leaf_pld", "_rdp_leaf_curve")
_MEMOS = {name: getattr(_composition, name) for name in _LEAF_MEMOS}


def _clear_caches(leaf_memos=True):
    for cached in _OTHER_CACHES:
        cached.cache_clear()
    if leaf_memos:
        for name in _LEAF_MEMOS:
            _MEMOS[name].cache_clear()
    with _composition._PREFIXES_LOCK:
        _composition._PREFIXES.clear()


@pytest.fixture
def unmemoised(monkeypatch):
    """The leaf memos replaced by the functions they wrap, every cache cleared
    before and after."""
    _clear_caches()
    for name in _LEAF_MEMOS:
        monkeypatch.setattr(_composition, name, _MEMOS[name].__wrapped__)
    yield
    _clear_caches()


def _same_pld(a, b):
    # dp_accounting's own view of a PLD: its epsilons and deltas on a grid
    epsilons = np.linspace(0.0, 20.0, 41)
    assert a.get_delta_for_epsilon(epsilons).tolist() == b.get_delta_for_epsilon(
        epsilons).tolist()
    for delta in (1e-3, 1e-5, 1e-7, 1e-9):
        assert a.get_epsilon_for_delta(delta) == b.get_epsilon_for_delta(delta)


# --------------------------------------------------------------- the memos
def test_gaussian_leaves_are_built_once(monkeypatch):
    _clear_caches()
    calls = []
    real = _composition.gaussian_pld
    monkeypatch.setattr(_composition, "gaussian_pld",
                        lambda *a, **k: calls.append(a) or real(*a, **k))
    prior = gaussian_event(57.77069524456459)
    events = [compose_events(prior, laplace_event(z)) for z in (3.0, 4.0, 5.0)]
    epsilons = [compute_epsilon(e, 1e-5) for e in events]
    assert len(calls) == 1  # the prior's PLD, built for the first only
    # the memoised PLD is the one built afresh, and so are the epsilons
    _same_pld(_composition._gaussian_leaf_pld(57.77069524456459,
                                              _composition.VALUE_DISCRETIZATION_INTERVAL),
              real(57.77069524456459))
    _clear_caches()
    monkeypatch.setattr(_composition, "_gaussian_leaf_pld",
                        _composition._gaussian_leaf_pld.__wrapped__)
    assert [compute_epsilon(e, 1e-5) for e in events] == epsilons
    assert len(calls) == 4  # unmemoised: once per composition
    _clear_caches()


def test_rdp_curves_are_computed_once_per_leaf(monkeypatch):
    _clear_caches()
    calls = []
    real = rdp_lib._compute_rdp_poisson_subsampled_gaussian
    monkeypatch.setattr(rdp_lib, "_compute_rdp_poisson_subsampled_gaussian",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    # twelve candidates whose fits are two distinct events (a learning rate is no
    # part of the accounting), each a Gaussian prior and subsampled steps: three
    # leaves computed (dp_accounting's Gaussian is its subsampled one at q = 1),
    # not twenty-four
    fits = [compose_events(gaussian_event(57.8), gaussian_event(z, steps=k, sample_rate=0.01))
            for z, k in [(2.1, 509), (3.9, 2036)] * 6]
    mixture = rdp_curve(MixtureDpEvent(fits))
    assert len(calls) == 3
    # the same curve computed without the memo
    _clear_caches()
    monkeypatch.setattr(_composition, "_rdp_leaf_curve",
                        _composition._rdp_leaf_curve.__wrapped__)
    calls.clear()
    assert rdp_curve(MixtureDpEvent(fits)).tolist() == mixture.tolist()
    assert len(calls) == 24
    monkeypatch.undo()
    _clear_caches()
    # the caller's copy is writable; the memo is read-only and never changed
    curve = rdp_curve(fits[0])
    curve[0] = -1.0
    assert rdp_curve(fits[0])[0] != -1.0
    leaf = _composition._rdp_leaf_curve(
        _composition.event_to_json(gaussian_event(2.1, sample_rate=0.01)))
    assert not leaf.flags.writeable
    assert rdp_curve(gaussian_event(2.1, steps=509, sample_rate=0.01)).tolist() == \
        (509 * leaf).tolist()
    assert leaf.tolist() == rdp_curve(gaussian_event(2.1, sample_rate=0.01)).tolist()
    _clear_caches()


# --------------------------------------------------------------- calibrations and a plan
_GRID = [  # (epsilon, delta, steps, sample_rate, prior)
    (0.40113197147063334, 1e-5, 509, 0.00982770799422622, gaussian_event(131.46464252066048)),
    (1.0, 1e-5, 636, 0.007862166395380977, gaussian_event(57.77069524456459)),
    (2.0, 1e-6, 300, 0.02, None),
    (0.5, 1e-5, 50, 0.05, compose_events(laplace_event(20.0), gaussian_event(30.0))),
    (0.05, 1e-5, 20, 0.1, None),  # epsilon <= 0.1: the search on the ledger's grid
]


def _calibrate_grid():
    return [calibrate_noise(e, d, steps=k, sample_rate=q, prior=p) for e, d, k, q, p in _GRID]


def _memoised(compute):
    """``compute()`` with the leaf memos, from cold memos, then again from the
    warm leaf memos (every other cache cleared): both returned."""
    saved = {name: getattr(_composition, name) for name in _LEAF_MEMOS}
    try:
        for name, memo in _MEMOS.items():
            setattr(_composition, name, memo)
        _clear_caches()
        cold = compute()
        _clear_caches(leaf_memos=False)
        warm = compute()
        return cold, warm
    finally:
        for name, value in saved.items():
            setattr(_composition, name, value)
        _clear_caches()


def test_calibrations_are_the_same_without_memos(unmemoised):
    theirs = _calibrate_grid()
    cold, warm = _memoised(_calibrate_grid)
    assert cold == theirs
    assert warm == theirs


def _search_plan():
    from sklearn.datasets import make_classification

    from skdpx.locally_linear import DPLocallyLinearClassifier
    from skdpx.model_selection import DPRandomSearchCV

    X, y = make_classification(2000, 6, random_state=0)
    clf = DPLocallyLinearClassifier(epsilon=1.0, bounds=(-6, 6), classes=[0, 1],
                                    batch_size=64, epochs=2)
    search = DPRandomSearchCV(clf, {"learning_rate": [0.1, 1.0], "epochs": [1, 3]},
                              n_iter=4, epsilon=2.0, delta=1e-5, random_state=0)
    plan = search.price(X, y, n_rows=2000.0)
    return (plan.candidate_epsilon, plan.refit_epsilon, plan.score_noise_multiplier,
            plan.epsilon, [_composition.event_to_json(e) for e in plan.candidate_events])


def test_search_plan_is_the_same_without_memos(unmemoised):
    theirs = _search_plan()
    cold, warm = _memoised(_search_plan)
    assert cold == theirs
    assert warm == theirs
