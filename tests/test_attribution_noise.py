"""What an attribution says about its own noise (issue 38, item 1).

FeatureAttribution carries ``std``, the standard deviation of the privacy
noise in each value; its noise floor (2 std per feature, the 95% quantile of
a one-hot block's spread under noise alone) tells signal from noise in the
frame, the plot and the HTML. DPLimeExplainer's basic answers carry an
estimate of it propagated along each answer's released path, checked here
against the noise's measured spread.
"""

import warnings

import numpy as np
import pytest
from scipy import stats
from sklearn.linear_model import LogisticRegression

from skdpx import FeatureAttribution
from skdpx.explain import DPLimeExplainer

_GROUPS = [("age", [0]), ("hours", [1]), ("colour", [2, 3, 4])]


def _fa(values, std, **kw):
    return FeatureAttribution(values, epsilon=0.5, std=std,
                              feature_names=["age", "hours", "red", "green", "blue"],
                              groups=_GROUPS, epsilon_spent=1.0, delta_spent=0.0, **kw)


def test_std_is_checked_kept_sliced_and_round_trips():
    fa = _fa([[0.5, -0.2, 0.3, -0.1, 0.0], [0.1, 0.3, 0.0, 0.05, 0.02]],
             [[0.1] * 5, [0.2, 0.2, np.nan, np.nan, np.nan]])
    assert fa.std.shape == (2, 5) and not fa.std.flags.writeable
    back = FeatureAttribution.from_json(fa.to_json())
    assert back == fa and np.isnan(back.std[1, 2])
    np.testing.assert_array_equal(fa[1:].std, fa.std[1:])
    with pytest.raises(ValueError, match="std must be >= 0"):
        _fa([[0.0] * 5], [[-1.0] * 5])
    with pytest.raises(ValueError, match="std"):
        _fa([[0.0] * 5], [[0.1] * 4])
    # a result without std (an older JSON too) says its noise is not known
    old = FeatureAttribution([[0.5, 0.1]], epsilon=0.5, epsilon_spent=0.5, delta_spent=0.0)
    assert old.std is None
    with pytest.raises(ValueError, match="no std"):
        old.noise_floor()


def test_noise_floor_is_two_std_and_a_blocks_noise_spread():
    fa = _fa([[0.5, -0.15, 0.22, -0.1, 0.0]], [[0.1] * 5])
    np.testing.assert_allclose(fa.noise_floor(), [[0.2] * 5])
    assert fa.distinguishable().tolist() == [[True, False, True, False, False]]
    # the spread of two levels of noise alone is |N(0, 2 std^2)|: its 95% quantile
    two = FeatureAttribution([[0.0, 0.0]], epsilon=1.0, std=[[1.0, 1.0]],
                             groups=[("c", [0, 1])], epsilon_spent=1.0, delta_spent=0.0)
    assert two.noise_floor(grouped=True)[0, 0] == pytest.approx(
        stats.norm.ppf(0.975) * np.sqrt(2), rel=1e-4)
    # k levels: the quantile of the range of k normals (checked by simulation, not a
    # privacy draw: a numpy generator in a test)
    sims = np.random.default_rng(0).normal(size=(200_000, 41))
    q = np.quantile(sims.max(axis=1) - sims.min(axis=1), 0.95)
    many = FeatureAttribution([[0.0] * 41], epsilon=1.0, std=[[1.0] * 41],
                              groups=[("c", list(range(41)))], epsilon_spent=1.0,
                              delta_spent=0.0)
    assert many.noise_floor(grouped=True)[0, 0] == pytest.approx(q, rel=0.01)
    # grouped: the colour block's spread 0.32 is below its noise floor (3.31 std), though
    # its level "red" alone is beyond 2 std
    assert fa.distinguishable(grouped=True, scaled=False).tolist() == [[True, False, False]]


def test_a_many_level_column_of_noise_does_not_rank_first():
    # noise alone in a 41-level block spreads beyond a real numeric signal
    rng = np.random.default_rng(1)
    values = np.concatenate([[0.35], rng.normal(0, 0.1, 41)])[None]
    fa = FeatureAttribution(values, epsilon=1.0, std=np.full((1, 42), 0.1),
                            groups=[("age", [0]), ("country", list(range(1, 42)))],
                            feature_range=np.ones(42), epsilon_spent=1.0, delta_spent=0.0)
    grouped = fa.grouped_values(scaled=False)[0]
    assert grouped[1] > grouped[0]  # by value, the noise ranks first...
    assert fa.distinguishable(grouped=True, scaled=False).tolist() == [[True, False]]
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    ax = fa.plot(0, top_k=2)  # scaled by the (unit) ranges: one unit on the axis
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["country", "age"]  # ...by what the noise supports, age is on top
    from matplotlib.container import BarContainer

    bars = next(c for c in ax.containers if isinstance(c, BarContainer))
    alphas = {lab: bar.get_alpha() for lab, bar in zip(labels, bars)}
    assert alphas["country"] == 0.35 and alphas["age"] is None  # faded: within the floor
    assert "noise floor" in ax.get_title()
    assert "above noise" in fa._repr_html_() and "1 of 2" in fa._repr_html_()
    # a row whose noise is not known (NaN std) is drawn plainly: nothing faded, no floor
    unknown = FeatureAttribution(values, epsilon=0.0, std=np.full((1, 42), np.nan),
                                 groups=fa.groups, feature_range=np.ones(42),
                                 epsilon_spent=1.0, delta_spent=0.0)
    ax = unknown.plot(0, top_k=2)
    bars = next(c for c in ax.containers if isinstance(c, BarContainer))
    assert all(bar.get_alpha() is None for bar in bars)
    assert "noise floor" not in ax.get_title()
    assert "not known" in unknown._repr_html_()


def _problem(d=6, m=3000, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.uniform(-1, 1, (m, d))
    y = (X @ rng.normal(size=d) + 0.3 * rng.normal(size=m) > 0).astype(int)
    return X, LogisticRegression().fit(X, y), rng.uniform(-1, 1, (8, d))


def _answers(black_box, X, Q, eps, seed, strategy="basic"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return DPLimeExplainer(
            black_box, epsilon=np.inf if eps == np.inf else 1e9, delta=1e-5,
            epsilon_per_query=eps, max_iter=50, strategy=strategy, bounds=(-1.0, 1.0),
            random_state=seed).fit(X).explain(Q)


def test_dplime_std_says_how_far_the_noise_goes():
    # issue 38, target a: the interval value +- 1.645 std covers the noiseless
    # answer (same settings, epsilon = inf) for 85-97% of values (90% if exact),
    # and the std is at most twice the noise's measured spread. Measured here:
    # coverage 0.974, width 1.48 (the public bound step s sqrt(T) alone: about 4x)
    X, black_box, Q = _problem()
    exact = _answers(black_box, X, Q, np.inf, 0)
    assert np.all(exact.std == 0.0)
    noisy = [_answers(black_box, X, Q, 1.0, seed) for seed in range(1, 13)]
    std = np.array([a.std for a in noisy])  # each answer's own, from its released path
    assert np.all(np.isfinite(std)) and np.all(std > 0)
    assert "released path" in noisy[0].meta["std"]
    noise = np.array([a.values for a in noisy]) - exact.values
    spread = np.sqrt(np.mean(noise ** 2, axis=0))
    coverage = np.mean(np.abs(noise) <= 1.645 * std)
    width = std.mean() / spread.mean()
    assert 0.85 <= coverage <= 0.985 and 0.9 <= width <= 2.0, (coverage, width)


def test_dplime_std_covers_the_largest_values_when_noise_fills_the_sphere():
    # 300 rows, 20 features, 0.3 per query and 50 steps: the noise spreads each answer
    # over the sphere and the largest noiseless values shrink towards noise. A
    # first-order std covered the largest value in 47% of answers here (24 seeds);
    # with the second-order term for the signal lost, 88% (all values: 98%)
    X, black_box, Q = _problem(d=20, m=300)
    exact = _answers(black_box, X, Q, np.inf, 0)
    noisy = [_answers(black_box, X, Q, 0.3, seed) for seed in range(1, 13)]
    std = np.array([a.std for a in noisy])
    noise = np.array([a.values for a in noisy]) - exact.values
    top = np.argmax(np.abs(exact.values), axis=1)
    rows = np.arange(len(Q))
    covered = np.abs(noise[:, rows, top]) <= 1.645 * std[:, rows, top]
    assert covered.mean() >= 0.75, covered.mean()
    assert np.mean(np.abs(noise) <= 1.645 * std) >= 0.85


def test_dplime_std_is_not_known_where_not_bounded():
    X, black_box, Q = _problem(m=600)
    adaptive = _answers(black_box, X, Q[:2], 1.0, 0, strategy="adaptive")
    assert np.isnan(adaptive.std).all()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lime = DPLimeExplainer(black_box, epsilon=1.5, delta=1e-5, epsilon_per_query=1.0,
                               max_iter=20, bounds=(-1.0, 1.0), random_state=0).fit(X)
        fa = lime.explain(np.vstack([Q[:1], Q[:1], Q[1:2]]))  # answer, reuse, then none left
    assert fa.phase.tolist() == ["interactive", "reused", "noninteractive"]
    np.testing.assert_array_equal(fa.std[1], fa.std[0])
    assert np.isnan(fa.std[2]).all()
    # a later call reuses the answer with its own std, kept in history_ (and released)
    later = lime.explain(Q[:1])
    assert later.phase.tolist() == ["reused"]
    np.testing.assert_array_equal(later.std, fa.std[:1])
    np.testing.assert_array_equal(lime.release().explain(Q[:1]).std, fa.std[:1])
    assert len(lime.history_["std"]) == len(lime.history_["explanations"]) == 4


def test_dplime_history_from_before_the_std_is_read():
    # a history_ recorded before answers kept their std (an older pickle): NaN for them
    X, black_box, Q = _problem(m=600)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lime = DPLimeExplainer(black_box, epsilon=5.0, delta=1e-5, epsilon_per_query=1.0,
                               max_iter=20, bounds=(-1.0, 1.0), random_state=0).fit(X)
        lime.explain(Q[:1])
        del lime.history_["std"]
        fa = lime.explain(Q[:2])
    assert fa.phase.tolist() == ["reused", "interactive"]
    assert np.isnan(fa.std[0]).all() and np.isfinite(fa.std[1]).all()
    assert len(lime.history_["std"]) == 3


def test_html_rounds_each_value_to_what_its_noise_supports():
    fa = FeatureAttribution([[0.12345, -0.5, 2.0]], epsilon=1.0,
                            std=[[0.034, 0.0004, np.nan]], epsilon_spent=1.0, delta_spent=0.0)
    html = fa._repr_html_()
    # the value to its std's leading digit, with that std; an unknown std keeps 4 digits
    assert "0.12 \N{PLUS-MINUS SIGN} 0.03" in html and "0.1235" not in html
    assert "-0.5000 \N{PLUS-MINUS SIGN} 0.0004" in html
    assert "<td>2</td>" in html
    # a grouped view rounds too
    grouped = FeatureAttribution([[0.12345, 0.3, -0.2]], epsilon=1.0, std=np.full((1, 3), 0.05),
                                 groups=[("a", [0]), ("b", [1, 2])], epsilon_spent=1.0,
                                 delta_spent=0.0)
    html = grouped._repr_html_()
    # the numeric column keeps its std; the categorical block's spread is no std
    assert "<td>0.12 \N{PLUS-MINUS SIGN} 0.05</td>" in html and "<td>0.50</td>" in html
    assert "rounded likewise" in html
    # without std, nothing is rounded away
    assert "0.1235" in FeatureAttribution([[0.12345]], epsilon=1.0, epsilon_spent=1.0,
                                          delta_spent=0.0)._repr_html_()


def test_noise_rounding_edge_cases():
    from skdpx.results._display import noise_rounded

    cells = noise_rounded([123456.7, 0.1234, -0.001, 1e-20, 5.0, 2.0, 1e9],
                          [2500, 0.96, 0.03, 3e-22, 1e-310, 0.0, 2e7]).tolist()
    assert cells == ["123000 \N{PLUS-MINUS SIGN} 3000",  # a large spread: its leading digit
                     "0 \N{PLUS-MINUS SIGN} 1",  # 0.96 rounds up a decade: one place up
                     "0.00 \N{PLUS-MINUS SIGN} 0.03",  # no "-0.00"
                     "1.00e-20 \N{PLUS-MINUS SIGN} 3e-22",  # far from 1: scientific
                     "5", "2", "1.00e+09 \N{PLUS-MINUS SIGN} 2e+07"]
    assert noise_rounded([0.5, 0.5], [0.05, 0.05], plus_minus=[True, False]).tolist() == [
        "0.50 \N{PLUS-MINUS SIGN} 0.05", "0.50"]


def test_a_grouped_plot_keeps_one_unit_on_its_axis(plt):
    values = np.array([[0.35, 0.1, -0.2, 0.05]])
    groups = [("age", [0]), ("country", [1, 2, 3])]
    fa = FeatureAttribution(values, epsilon=1.0, groups=groups, epsilon_spent=1.0,
                            delta_spent=0.0)  # no public ranges
    # per unit of age and a change between countries: two units, refused when asked...
    with pytest.raises(ValueError, match="two units on one axis"):
        fa.plot(0, grouped=True, scaled=False)
    # ...and by default one bar per feature (each per unit of its feature)
    ax = fa.plot(0)
    assert len(ax.get_yticklabels()) == 4 and "country" not in [
        t.get_text() for t in ax.get_yticklabels()]
    # with the public ranges both are changes of the output: grouped, one unit
    ranged = FeatureAttribution(values, epsilon=1.0, groups=groups, feature_range=[50, 1, 1, 1],
                                epsilon_spent=1.0, delta_spent=0.0)
    assert [t.get_text() for t in ranged.plot(0).get_yticklabels()] == ["country", "age"]
    # a table may hold both units, one per column
    assert fa.to_frame(grouped=True, scaled=False).shape == (1, 2)


def test_the_maps_plot_keeps_one_unit_too(plt):
    from skdpx.results import LocallyLinearMaps

    maps = LocallyLinearMaps(np.array([[[0.35, 0.1, -0.2, 0.05]]]),
                             groups=[("age", [0]), ("country", [1, 2, 3])], epsilon_spent=1.0,
                             delta_spent=0.0)
    with pytest.raises(ValueError, match="two units on one axis"):
        maps.plot(grouped=True, scaled=False)
    fig = maps.plot()  # no ranges: one bar per feature
    assert len(fig.axes[0].get_yticklabels()) == 4
