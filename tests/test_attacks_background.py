"""skdpx.attacks.background_probe: membership of the background rows of a SHAP explainer."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator
from sklearn.linear_model import LogisticRegression

from skdpx import FeatureAttribution
from skdpx.attacks import SIGNALS, AttackResult, background_probe, membership_inference


class ExactShap(BaseEstimator):
    """Interventional SHAP, computed exactly, with the fit rows as its background.

    ``phi(z) = sum_b w_b phi(z; b)``, every coalition enumerated: what
    shap's KernelExplainer returns on a raw-row background when it enumerates
    the coalitions. Arrays only; the output is ``predict_proba[:, 1]``.
    """

    def __init__(self, estimator=None):
        self.estimator = estimator

    def fit(self, X, y=None):
        self.background_ = np.asarray(X, dtype=float)
        return self

    def explain(self, X):
        Q = np.asarray(X, dtype=float)
        B = self.background_
        n, d = Q.shape
        masks = np.array(list(itertools.product([False, True], repeat=d)))
        hybrid = np.where(masks[None, :, None, :], Q[:, None, None, :], B[None, None, :, :])
        f = self.estimator.predict_proba(hybrid.reshape(-1, d))[:, 1]
        v = f.reshape(n, len(masks), len(B)).mean(axis=2)               # (n, 2^d)
        index = {tuple(m): i for i, m in enumerate(masks)}
        values = np.zeros((n, d))
        for j in range(d):
            for i, m in enumerate(masks):
                if not m[j]:
                    s = int(m.sum())
                    weight = math.factorial(s) * math.factorial(d - s - 1) / math.factorial(d)
                    with_j = index[tuple(np.where(np.arange(d) == j, True, m))]
                    values[:, j] += weight * (v[:, with_j] - v[:, i])
        return FeatureAttribution(values, epsilon=np.inf, epsilon_spent=np.inf, delta_spent=0.0,
                                  meta={"base_value": v[:, 0]})


def _setting(seed=0, n_background=30, n_candidates=40):
    """Three integer features; the background's first column always holds its common
    value 0, each candidate another value in it (a rare level) and members join."""
    rng = np.random.RandomState(seed)
    background = np.column_stack([np.zeros(n_background),
                                  rng.randint(4, size=(n_background, 2))]).astype(float)
    candidates = np.column_stack([rng.randint(1, 4, size=n_candidates),
                                  rng.randint(4, size=(n_candidates, 2))]).astype(float)
    member = rng.uniform(size=n_candidates) < 0.5
    X_bb = rng.randint(4, size=(400, 3)).astype(float)
    y_bb = (X_bb[:, 0] + X_bb[:, 1] + rng.normal(size=400) > 3).astype(int)
    black_box = LogisticRegression().fit(X_bb, y_bb)
    reference = np.column_stack([np.zeros(200), rng.randint(4, size=(200, 2))]).astype(float)
    return background, candidates, member, black_box, reference


def _one_at_a_time(black_box, background, candidates, member, signal, explainer=None):
    """Each candidate scored by an explainer fitted on the background plus, if a member,
    that candidate alone (one run per candidate: members do not crowd each other)."""
    scores = np.empty(len(candidates))
    for i, (row, joined) in enumerate(zip(candidates, member)):
        rows = np.vstack([background, row[None]]) if joined else background
        scores[i] = signal((explainer or ExactShap)(black_box).fit(rows), row[None], None)[0]
    return scores


def test_a_member_adds_its_weight_times_its_effect_and_a_non_member_nothing():
    background, candidates, member, black_box, reference = _setting()
    scores = _one_at_a_time(black_box, background, candidates, member,
                            background_probe(reference, n_probes=1))
    # the probe sets column 0 (whose common value is the most common) to 0: every other
    # background row is a dummy there, the member's own term is w (f(z) - f(c)), w = 1 / n
    z = candidates.copy()
    z[:, 0] = 0
    effect = np.abs(black_box.predict_proba(z)[:, 1] - black_box.predict_proba(candidates)[:, 1])
    spread = math.sqrt(1.0 / len(reference))  # sqrt(1 - share + 1 / n_reference), share 1
    np.testing.assert_allclose(scores[member], effect[member] / (len(background) + 1) / spread,
                               rtol=1e-8)
    np.testing.assert_allclose(scores[~member], 0.0, atol=1e-12)
    # with more probes too
    scores = _one_at_a_time(black_box, background, candidates, member, background_probe(reference))
    assert scores[member].min() > scores[~member].max()


def test_the_built_in_signal_takes_the_common_values_from_the_candidates():
    background, candidates, member, black_box, reference = _setting()
    shap = ExactShap(black_box).fit(np.vstack([background, candidates[member]]))
    args = (shap, candidates[member], None, candidates[~member], None)
    built_in = membership_inference(*args, signal="background_probe")
    own = membership_inference(*args, signal=background_probe(
        np.vstack([candidates[member], candidates[~member]])))
    with_reference = membership_inference(*args, signal=background_probe(reference))
    np.testing.assert_array_equal(built_in.scores_members, own.scores_members)
    assert not np.array_equal(built_in.scores_members, with_reference.scores_members)


def test_the_signals_table_lists_the_background_probe():
    assert "background_probe" in SIGNALS
    assert '"background_probe"' in membership_inference.__doc__


def test_a_summary_that_forgets_rows_shows_nothing():
    # the same background with every candidate's column 0 set to the common value
    # before the fit: the members' rare values never reach the explainer
    background, candidates, member, black_box, reference = _setting(seed=1)
    flattened = candidates[member].copy()
    flattened[:, 0] = 0
    shap = ExactShap(black_box).fit(np.vstack([background, flattened]))
    scores = background_probe(reference, n_probes=1)(shap, candidates, None)
    np.testing.assert_allclose(scores, 0.0, atol=1e-12)


def test_frames_with_a_categorical_column_and_groups():
    background, candidates, member, black_box, reference = _setting(seed=2)
    levels = ["a", "b", "c", "d"]

    def frame(A):
        return pd.DataFrame({"level": pd.Categorical(np.asarray(levels)[A[:, 0].astype(int)],
                                                     categories=levels),
                             "x1": A[:, 1], "x2": A[:, 2]})

    class FrameShap(ExactShap):
        """The same explainer on frames, its values split over one-hot levels of column 0."""

        def fit(self, X, y=None):
            return super().fit(_codes(X))

        def explain(self, X):
            inner = super().explain(_codes(X))
            split = np.column_stack([inner.values[:, :1] / 2, inner.values[:, :1] / 2,
                                     inner.values[:, 1:]])
            return FeatureAttribution(split, epsilon=np.inf, epsilon_spent=np.inf,
                                      delta_spent=0.0,
                                      groups=[("level", [0, 1]), ("x1", [2]), ("x2", [3])])

    def _codes(X):
        return np.column_stack([X["level"].cat.codes, X["x1"], X["x2"]]).astype(float)

    on_arrays = ExactShap(black_box).fit(np.vstack([background, candidates[member]]))
    on_frames = FrameShap(black_box).fit(frame(np.vstack([background, candidates[member]])))
    expected = background_probe(reference)(on_arrays, candidates, None)
    got = background_probe(frame(reference))(on_frames, frame(candidates), None)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-15)


def test_shadows_take_the_probe():
    background, candidates, member, black_box, reference = _setting(seed=3)
    others = _setting(seed=9)[1]  # rows like the candidates, not candidates
    shap = ExactShap(black_box).fit(np.vstack([background, candidates[member]]))
    result = membership_inference(shap, candidates[member], None, candidates[~member], None,
                                  signal=background_probe(reference),
                                  shadow_data=(np.vstack([background, others]), None),
                                  n_shadows=2)
    plain = membership_inference(shap, candidates[member], None, candidates[~member], None,
                                 signal=background_probe(reference))
    assert result.meta["n_shadows"] == 2 and plain.meta["n_shadows"] == 0
    assert not np.allclose(result.scores_members, plain.scores_members)


@pytest.mark.parametrize("kwargs, match", [
    ({"n_probes": 0}, "n_probes must be a positive integer"),
    ({"n_probes": 1.5}, "n_probes must be a positive integer"),
])
def test_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        background_probe(**kwargs)


def test_bad_targets_and_rows():
    background, candidates, member, black_box, reference = _setting()
    shap = ExactShap(black_box).fit(background)
    with pytest.raises(ValueError, match="needs the target's explain"):
        background_probe(reference)(black_box, candidates, None)
    with pytest.raises(ValueError, match="reference has 2 columns"):
        background_probe(reference[:, :2])(shap, candidates, None)
    with pytest.raises(ValueError, match="reference must be 2-d"):
        background_probe(np.zeros(3))

    class OneValue(ExactShap):
        def explain(self, X):
            return FeatureAttribution(super().explain(X).values[:, :1], epsilon=np.inf,
                                      epsilon_spent=np.inf, delta_spent=0.0)

    with pytest.raises(ValueError, match="one attribution per column"):
        background_probe(reference)(OneValue(black_box).fit(background), candidates, None)


def test_shap_kernel_explainer_on_raw_rows_leaks():
    """shap's documented use (a small background sample of the rows) gives members away."""
    shap = pytest.importorskip("shap")
    background, candidates, member, black_box, reference = _setting(seed=4, n_candidates=20)

    class Kernel(ExactShap):
        def explain(self, X):
            explainer = shap.KernelExplainer(lambda A: self.estimator.predict_proba(A)[:, 1],
                                             self.background_)
            values = explainer.shap_values(np.asarray(X, dtype=float), silent=True)
            return FeatureAttribution(values, epsilon=np.inf, epsilon_spent=np.inf,
                                      delta_spent=0.0)

    rows = np.vstack([background, candidates[member]])
    np.testing.assert_allclose(Kernel(black_box).fit(rows).explain(candidates[:3]).values,
                               ExactShap(black_box).fit(rows).explain(candidates[:3]).values,
                               atol=1e-8)
    scores = _one_at_a_time(black_box, background, candidates, member,
                            background_probe(reference), explainer=Kernel)
    assert scores[member].min() > scores[~member].max()


def test_dpshap_background_leaks_without_noise_and_not_with_it():
    """DPShapExplainer's background: a member's rare value is a cell of its cluster's
    histogram, drawn into records without noise, which the probe reads (less crisply than
    an exact centre: the records of the common value are spread over its bin); with noise,
    31 rows do not stand out of it and the probe reads noise."""
    import warnings

    from skdpx.explain import DPShapExplainer

    background, candidates, member, black_box, reference = _setting(seed=5, n_candidates=24)
    background, candidates, reference = background / 3, candidates / 3, reference / 3
    X_bb = np.random.RandomState(6).randint(4, size=(400, 3)) / 3
    black_box = LogisticRegression().fit(X_bb, (X_bb[:, 0] + X_bb[:, 1] > 1).astype(int))
    probe = background_probe(reference, n_probes=1)
    figures = {}
    for epsilon in (np.inf, 0.5):
        scores = np.zeros(len(candidates))
        for i, (row, joined) in enumerate(zip(candidates, member)):
            rows = np.vstack([background, row[None]]) if joined else background
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # seeded, uncapped: evaluation only
                try:
                    shap = DPShapExplainer(black_box, n_background=4, epsilon=epsilon,
                                           delta=1e-5, bounds=(0, 1), n_std_draws=0,
                                           random_state=i).fit(rows)
                except ValueError:  # every noisy count <= 0: nothing released, a 0
                    continue
            scores[i] = probe(shap, row[None], None)[0]
        figures[epsilon] = AttackResult(scores[member], scores[~member]).auc
    # measured 0.77 at inf (1.0 with the exact k-means centres this background replaced)
    assert figures[np.inf] > 0.65
    assert 0.2 < figures[0.5] < 0.8, figures
