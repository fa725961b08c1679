"""A calibration started from the Gaussian model (issue 41, target c).

A DP-SGD calibration after a prior of plain Gaussians (or none) starts from
the central-limit model of the subsampled steps (``_GaussianModel``, no PLD)
and takes secant steps on the search grid, then checks the ledger's grid
(``_NoiseSearch.model_root``); where it does not apply or does not settle,
the hint's route (``two_grid_root``) answers, as before. Checked here: the
model's route meets the target on the ledger's grid, gives at least the
hint route's noise and at most 5e-5 (relative) more, with fewer PLD
evaluations; the fallback gives the hint route's noise to the bit.
"""

import math

import pytest

from skdpx.privacy import compute_epsilon, compose_events, gaussian_event, laplace_event
from skdpx.privacy import _calibration, _composition
from skdpx.privacy._events import event_to_json

# (epsilon, delta, steps, sample_rate, prior's noise multiplier or None)
SETTINGS = [
    # DPRandomSearchCV on Adult (benchmarks/model_selection_costs.py): a refit and a fit
    (1.0, 1e-5, 2544, 0.007862073297520419, 57.77069524456459),
    (0.40112777362997537, 1e-5, 509, 0.009827591621900523, 131.46587171673698),
    (0.93, 1e-6, 391, 256 / 10000, None),
    (1.0, 1e-5, 10, 0.5, None),
    (0.3, 1e-6, 50, 0.05, None),
    (2.0, 1e-7, 30, 0.2, None),
    (0.174, 1e-7, 404, 0.0074, None),
    (1.0, 1e-9, 1000, 0.01, None),
    (0.5, 1e-5, 1, 0.9, None),  # one step
    # a prior that takes 0.99 of the target alone (the analytic Gaussian's noise at 0.99):
    # epsilon barely moves with the noise, the ledger's grid is checked 3 times
    (1.0, 1e-5, 500, 0.01, 3.7649345111570263),
]
#: the ledger grid's evaluations of a setting, where more than one
LEDGER = {SETTINGS[-1]: 3}


def _prior_json(prior):
    return None if prior is None else event_to_json(gaussian_event(prior))


def _calibrate(epsilon, delta, steps, q, prior):
    # the calibration itself, not its memo
    return _calibration._calibrate_noise.__wrapped__(epsilon, delta, steps, q, "pld",
                                                     _prior_json(prior))


def _hint_route(monkeypatch, *setting):
    with monkeypatch.context() as m:
        m.setattr(_calibration._NoiseSearch, "model_root", lambda self: None)
        return _calibrate(*setting)


def _counted(monkeypatch):
    counts = {"ledger": 0, "search": 0}
    real = _composition._epsilon_of_leaves_loud

    def counted(leaves, delta, accounting, vdi=_composition.VALUE_DISCRETIZATION_INTERVAL):
        if any("PoissonSampled" in leaf for leaf, _ in leaves):
            grid = "ledger" if vdi == _composition.VALUE_DISCRETIZATION_INTERVAL else "search"
            counts[grid] += 1
        return real(leaves, delta, accounting, vdi)

    monkeypatch.setattr(_composition, "_epsilon_of_leaves_loud", counted)
    _composition._epsilon_of_leaves.cache_clear()
    _composition._leaf_pld.cache_clear()
    with _composition._PREFIXES_LOCK:
        _composition._PREFIXES.clear()
    return counts


@pytest.mark.parametrize("setting", SETTINGS)
def test_model_route_meets_the_target_at_or_just_above_the_hint_routes_noise(
        monkeypatch, setting):
    epsilon, delta, steps, q, prior = setting
    counts = _counted(monkeypatch)
    z = _calibrate(*setting)
    # the ledger's grid once, the search grid at most 6 times (the hint's route:
    # 1-2 and 8-14, with 6-7 more on its coarse grid)
    assert counts["ledger"] == LEDGER.get(setting, 1)
    assert counts["search"] <= 6
    event = gaussian_event(z, steps=steps, sample_rate=q)
    if prior is not None:
        event = compose_events(gaussian_event(prior), event)
    assert epsilon - 1e-4 < compute_epsilon(event, delta) <= epsilon
    theirs = _hint_route(monkeypatch, *setting)
    assert theirs <= z <= theirs * (1 + 5e-5)


def test_model_route_does_not_apply_to_other_priors_or_plain_gaussians():
    laplace = event_to_json(laplace_event(20.0))
    search = _calibration._NoiseSearch(1.0, 1e-5, 100, 0.01, "pld", laplace)
    assert search.model_root() is None
    search = _calibration._NoiseSearch(1.0, 1e-5, 100, 1.0, "pld", None)
    assert search.model_root() is None


@pytest.mark.parametrize("setting", [
    # 55 steps at q = 0.0033 (0.18 expected draws of a row): the model is far off,
    # its secant steps past the bracket and the hint's route answers
    (0.20066836993237228, 1e-7, 55, 0.003341884794452812, None),
])
def test_where_the_model_does_not_settle_the_hint_route_answers_to_the_bit(
        monkeypatch, setting):
    epsilon, delta, steps, q, prior = setting
    search = _calibration._NoiseSearch(epsilon, delta, steps, q, "pld", _prior_json(prior))
    assert search.model_root() is None
    assert _calibrate(*setting) == _hint_route(monkeypatch, *setting)


@pytest.mark.parametrize("setting", SETTINGS[:2])
def test_a_route_that_did_not_settle_leaves_nothing_behind(monkeypatch, setting):
    # the model's route run to the end near the root, then taken as unsettled: the
    # hint's route starts afresh (the search grid's noises seen by the model's route
    # would change its slopes) and answers to the bit
    real = _calibration._NoiseSearch.model_root
    monkeypatch.setattr(_calibration._NoiseSearch, "model_root",
                        lambda self: real(self) and None)
    unsettled = _calibrate(*setting)
    monkeypatch.undo()
    assert unsettled == _hint_route(monkeypatch, *setting)


def test_gaussian_model_inverts_itself():
    for prior in (0.0, 1 / 57.77**2):
        model = _calibration._GaussianModel(1e-5, 636, 0.0079, prior)
        for epsilon in (0.2, 1.0, 4.0):
            z = model.noise(epsilon)
            assert math.isclose(model.epsilon(z), epsilon, rel_tol=1e-9)
    # a prior that alone reaches the target: no noise
    assert _calibration._GaussianModel(1e-5, 636, 0.0079, 1.0).noise(0.5) is None
