"""The privacy core's private selection: its draws and its accounting."""

import math

import numpy as np
import pytest
from dp_accounting.dp_event import RepeatAndSelectDpEvent
from dp_accounting.rdp import RdpAccountant

from skdpx.privacy import (
    MixtureDpEvent,
    PrivacyLedger,
    WorstOfDpEvent,
    approx_event,
    compute_epsilon,
    gaussian_event,
    pure_event,
    rdp_curve,
)
from skdpx.privacy._composition import RDP_ORDERS
from skdpx.privacy._events import event_from_json, event_to_json
from skdpx.privacy._selection import (
    draw_candidates,
    draw_runs,
    draw_split,
    run_distribution,
    search_event,
)

from ._helpers import seeded as _seeded


@pytest.mark.parametrize("shape", [0.0, 0.5, 1.0, 2.0, math.inf])
def test_repeat_and_select_matches_dp_accounting(shape):
    # skdpx's Renyi curve of a RepeatAndSelect is dp_accounting's own on its own events
    base = gaussian_event(1.1, steps=200, sample_rate=0.02)
    event = RepeatAndSelectDpEvent(base, 8.0, shape)
    acc = RdpAccountant(list(RDP_ORDERS))
    acc.compose(event)
    np.testing.assert_allclose(rdp_curve(event), acc.rdp)
    assert compute_epsilon(event, 1e-5) == pytest.approx(acc.get_epsilon(1e-5))


def test_mixture_and_worst_of_curves():
    a, b = gaussian_event(1.0), gaussian_event(2.0)
    ca, cb = rdp_curve(a), rdp_curve(b)
    orders = np.asarray(RDP_ORDERS)
    mix = rdp_curve(MixtureDpEvent([a, b]))
    expected = (np.logaddexp((orders - 1) * ca, (orders - 1) * cb) - math.log(2)) / (orders - 1)
    np.testing.assert_allclose(mix, expected, rtol=1e-12)
    assert (mix <= np.maximum(ca, cb) + 1e-12).all() and (mix >= np.minimum(ca, cb)).all()
    np.testing.assert_allclose(rdp_curve(WorstOfDpEvent([a, b])), np.maximum(ca, cb))
    # a mixture of one event is that event
    np.testing.assert_allclose(rdp_curve(MixtureDpEvent([a, a])), ca)
    # pure epsilon-DP: min(eps, a eps^2 / 2)
    np.testing.assert_allclose(rdp_curve(pure_event(0.5)), np.minimum(0.5, orders * 0.125))
    # an (eps, delta) cap has no Renyi bound
    assert np.isinf(rdp_curve(approx_event(1.0, 1e-6))).all()
    assert math.isinf(compute_epsilon(MixtureDpEvent([a, approx_event(1.0, 1e-6)]), 1e-5))


def test_events_round_trip_and_ledger():
    event = RepeatAndSelectDpEvent(
        MixtureDpEvent([gaussian_event(1.0), WorstOfDpEvent([pure_event(0.3), gaussian_event(3.0)])]),
        5.0, 0.0)
    assert event_from_json(event_to_json(event)) == event
    ledger = PrivacyLedger(epsilon=10.0, delta=1e-4)
    ledger.spend(event, "search", delta=1e-5)
    assert ledger.epsilon_spent == pytest.approx(compute_epsilon(event, 1e-4))


def test_search_event_structure():
    fits = [gaussian_event(1.0), gaussian_event(1.5)]
    score = gaussian_event(2.0)
    holdout = search_event(fits, score, n_folds=1, mean=10, shape=0.0)
    five = search_event(fits, score, n_folds=5, mean=10, shape=0.0)
    with_refit = search_event(fits, score, n_folds=1, mean=10, shape=0.0,
                              refit_events=[gaussian_event(1.2)])
    e1, e5, er = (compute_epsilon(e, 1e-5) for e in (holdout, five, with_refit))
    assert e1 < e5 and e1 < er
    # a holdout run costs the worse of its fit and its score, never their composition
    worse = RepeatAndSelectDpEvent(MixtureDpEvent(fits), 10.0, 0.0)
    assert e1 == pytest.approx(compute_epsilon(worse, 1e-5))
    # ... and the score counts when it is the worse one
    loud = search_event([gaussian_event(8.0)], gaussian_event(1.0), n_folds=1, mean=10, shape=0.0)
    assert compute_epsilon(loud, 1e-5) == pytest.approx(
        compute_epsilon(RepeatAndSelectDpEvent(gaussian_event(1.0), 10.0, 0.0), 1e-5))


@pytest.mark.parametrize("selection,eta", [("negative_binomial", 0.0), ("negative_binomial", 0.5),
                                           ("geometric", 0.0), ("poisson", 0.0)])
def test_number_of_runs_has_the_accounted_mean(selection, eta):
    noise = _seeded(1)
    draws = np.array([draw_runs(selection, 6.0, noise=noise, eta=eta) for _ in range(4000)])
    assert abs(draws.mean() - 6.0) < 0.35  # the mean dp_accounting accounts for
    if selection != "poisson":
        assert draws.min() >= 1
    shape, gamma = run_distribution(selection, 6.0, eta)
    assert (shape == math.inf) == (gamma is None)


def test_split_and_candidates():
    noise = _seeded(2)
    parts = draw_split(10000, 0.2, noise=noise)
    assert set(np.unique(parts)) == {0, 1} and abs(parts.mean() - 0.2) < 0.02
    folds = draw_split(10000, 4, noise=noise)
    assert np.bincount(folds).min() > 2300
    runs = draw_candidates(3, 3000, noise=noise)
    assert set(np.unique(runs)) == {0, 1, 2}
    with pytest.raises(ValueError, match="selection"):
        run_distribution("exhaustive", 5)
    with pytest.raises(ValueError, match="mean"):
        run_distribution("poisson", 0.5)


def test_dominated_score_noise_costs_nothing():
    from skdpx.privacy._selection import dominated_noise_multiplier

    fit = gaussian_event(1.3, steps=300, sample_rate=0.05)
    z = dominated_noise_multiplier(fit)
    orders = np.asarray(RDP_ORDERS)
    gap = rdp_curve(fit) - orders / (2 * z**2)
    assert gap.min() >= -1e-12 and gap.min() < 1e-9  # below at every order, touching at one
    run = search_event([fit], gaussian_event(z), n_folds=1, mean=5, shape=0.0)
    assert compute_epsilon(run, 1e-5) == pytest.approx(
        compute_epsilon(RepeatAndSelectDpEvent(fit, 5.0, 0.0), 1e-5))
    # a little less noise, and the score costs something
    louder = search_event([fit], gaussian_event(0.9 * z), n_folds=1, mean=5, shape=0.0)
    assert compute_epsilon(louder, 1e-5) > compute_epsilon(run, 1e-5)
