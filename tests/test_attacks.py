"""skdpx.attacks: the membership attack, its result and its epsilon lower bound."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.dummy import DummyClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsClassifier
from sklearn.svm import SVC

from skdpx import (DPCounterfactualGenerator, DPLimeExplainer, DPLocallyLinearClassifier,
                   PrivRecourse)
from skdpx.attacks import SIGNALS, AttackResult, membership_inference
from skdpx.privacy import PrivacyLedger
from skdpx.privacy._audit import epsilon_from_samples

D = 3
BOUNDS = (np.zeros(D), np.ones(D))


def _data(n, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.uniform(0.2, 0.8, size=(n, D))  # the bounds are [0, 1]: room for outliers
    y = (X[:, 0] + X[:, 1] + 0.3 * rng.normal(size=n) > 1).astype(int)
    return X, y


@pytest.fixture(scope="module")
def split():
    """Black-box rows, members, non-members, reference rows; and a black box on the first."""
    X, y = _data(800)
    parts = [(X[i:i + 200], y[i:i + 200]) for i in range(0, 800, 200)]
    black_box = LogisticRegression().fit(*parts[0])
    return parts, black_box


def _canaries(n, seed):
    """Planted outliers: every feature near a random end of its range, where no data lie."""
    rng = np.random.RandomState(seed)
    X = rng.randint(2, size=(n, D)) * 0.9 + rng.uniform(0, 0.1, size=(n, D))
    y = 1 - (X[:, 0] + X[:, 1] > 1).astype(int)
    return X, y


# ---------------------------------------------------------------- the result

def test_result_figures_by_hand():
    result = AttackResult([0.9, 0.8, 0.7, 0.2], [0.1, 0.3, 0.6, 0.75], signal="s")
    assert result.auc == 0.75  # 12 of 16 pairs ordered right
    assert result.tpr_at_fpr(0.0) == 0.5 and result.tpr_at_fpr(0.25) == 0.75
    assert result.tpr_at_fpr(1.0) == 1.0
    fpr, tpr, _ = result.roc_curve()
    assert fpr[0] == tpr[0] == 0 and fpr[-1] == tpr[-1] == 1
    assert result.summary()["tpr_at_0.01_fpr"] == 0.5
    frame = result.to_frame()
    assert list(frame.columns) == ["score", "member"] and frame["member"].sum() == 4
    assert AttackResult.from_json(result.to_json()) == result
    infinite = AttackResult([1.0], [0.0], meta={"epsilon": np.inf, "target": "x"})
    assert AttackResult.from_json(infinite.to_json()) == infinite
    assert "auc=0.750" in repr(result)


@pytest.mark.parametrize("bad, match", [
    (([], [1.0]), "scores_members is empty"),
    (([1.0], [np.nan]), "NaN or infinite"),
])
def test_result_refuses_bad_scores(bad, match):
    with pytest.raises(ValueError, match=match):
        AttackResult(*bad)


def test_result_refuses_bad_fpr_and_json():
    result = AttackResult([1.0, 2.0], [0.0, 1.5])
    with pytest.raises(ValueError, match="fpr must be in"):
        result.tpr_at_fpr(1.5)
    with pytest.raises(ValueError, match="not a 'AttackResult'"):
        AttackResult.from_json('{"type": "CounterfactualSet"}')


# ------------------------------------------------------- the epsilon lower bound

def _randomized_response(epsilon, n, rng):
    """Scores of members and non-members under epsilon-randomized response (pure DP)."""
    keep = np.exp(epsilon) / (1 + np.exp(epsilon))
    return (rng.uniform(size=n) < keep).astype(float), (rng.uniform(size=n) >= keep).astype(float)


def test_epsilon_bound_below_the_truth_and_catches_twice_the_epsilon():
    rng = np.random.RandomState(0)
    bounds = [epsilon_from_samples(*_randomized_response(1.0, 20_000, rng), random_state=s)
              for s in range(5)]
    # randomized response at epsilon 1 is tight: the bound comes close, never above
    assert all(0.8 < b < 1.0 for b in bounds), bounds
    # half the noise claimed as epsilon 1 (really epsilon 2) is caught
    assert epsilon_from_samples(*_randomized_response(2.0, 20_000, rng)) > 1.5


def test_epsilon_bound_subtracts_delta_and_takes_unequal_sizes():
    rng = np.random.RandomState(1)
    members, non_members = rng.normal(2, 1, 3000), rng.normal(0, 1, 1000)
    plain = epsilon_from_samples(members, non_members)
    assert plain > 1.0
    assert epsilon_from_samples(members, non_members, delta=0.1) < plain
    # either way round
    assert epsilon_from_samples(non_members, members) > 1.0
    with pytest.raises(ValueError, match="at least 4 values"):
        epsilon_from_samples([1.0, 2.0], non_members)
    with pytest.raises(ValueError, match="delta must be"):
        epsilon_from_samples(members, non_members, delta=1.0)


def test_epsilon_bound_of_no_leak_is_small():
    rng = np.random.RandomState(2)
    assert epsilon_from_samples(rng.normal(size=5000), rng.normal(size=5000)) < 0.2
    # the test is chosen on one half and bounded on the other: choosing and
    # bounding on the same rows finds a spurious leak in about 5% of small samples
    bounds = np.array([epsilon_from_samples(rng.normal(size=60), rng.normal(size=60),
                                            random_state=s) for s in range(300)])
    assert np.mean(bounds > 0.05) < 0.01


def test_epsilon_bound_is_log_of_tpr_minus_delta_over_fpr():
    # y <= 0.5 for 90% of y and no x: the bound is log((TPR_lower - delta) / FPR_upper)
    x, y = np.ones(1000), np.r_[np.zeros(900), np.ones(100)]
    gap = epsilon_from_samples(x, y) - epsilon_from_samples(x, y, delta=0.5)
    tpr_lower = 0.5 / -np.expm1(-gap)  # solves gap = log(tpr / (tpr - 0.5))
    assert 0.85 < tpr_lower < 0.9


# ------------------------------------------------------------ the attack itself

def test_a_memorising_model_leaks_and_an_unrelated_one_does_not(split):
    (_, (X_in, y_in), (X_out, y_out), (X_ref, y_ref)), black_box = split
    knn = KNeighborsClassifier(n_neighbors=1).fit(X_in, y_in)
    leak = membership_inference(knn, X_in, y_in, X_out, y_out)
    assert leak.auc > 0.6 and leak.epsilon_lower_bound() > 0.5
    # a model that never saw the members tells nothing about them
    none = membership_inference(black_box, X_in, y_in, X_out, y_out, signal="confidence")
    assert abs(none.auc - 0.5) < 0.08 and none.epsilon_lower_bound() < 0.5
    const = DummyClassifier(strategy="constant", constant=1).fit(X_ref, y_ref)
    flat = membership_inference(const, X_in, np.ones(200), X_out, np.ones(200))
    assert flat.auc == 0.5 and flat.epsilon_lower_bound() == 0.0


def test_lira_shadows_keep_the_black_box_and_not_the_ledger(split):
    (_, (X_in, y_in), (X_out, y_out), (X_ref, y_ref)), _ = split
    ledger = PrivacyLedger(epsilon=10.0, delta=1e-5)
    model = DPLocallyLinearClassifier(epsilon=1.0, bounds=BOUNDS, classes=[0, 1],
                                      batch_size=200, epochs=3, accountant=ledger,
                                      random_state=0).fit(X_in, y_in)
    spent = len(ledger.events), ledger.epsilon_spent
    result = membership_inference(model, X_in, y_in, X_out, y_out, signal="lira",
                                  shadow_data=(X_ref, y_ref), n_shadows=3)
    assert (len(ledger.events), ledger.epsilon_spent) == spent  # the shadows do not spend the target's budget
    assert result.meta["n_shadows"] == 3 and result.signal == "lira"
    assert 0.3 < result.auc < 0.8


@pytest.mark.parametrize("signal", ["loss", "confidence", "explanation", "explanation_norm"])
def test_locally_linear_signals(split, signal):
    (_, (X_in, y_in), (X_out, y_out), _), _ = split
    model = DPLocallyLinearClassifier(epsilon=1.0, bounds=BOUNDS, classes=[0, 1],
                                      batch_size=200, epochs=3, random_state=0).fit(X_in, y_in)
    result = membership_inference(model, X_in, y_in, X_out, y_out, signal=signal)
    assert result.n_members == result.n_non_members == 200
    assert result.meta == {"target": "DPLocallyLinearClassifier", "n_shadows": 0,
                           "epsilon": 1.0, "delta": 1e-5}
    assert result.epsilon_lower_bound(1e-5) < 1.0


def test_recourse_nodes_give_away_canaries_without_noise(split):
    (_, (X_in, y_in), _, _), black_box = split
    X_c, y_c = _canaries(40, seed=3)
    coins = np.random.RandomState(4).uniform(size=40) < 0.5
    X_fit, y_fit = np.vstack([X_in, X_c[coins]]), np.r_[y_in, y_c[coins]]
    figures = {}
    for epsilon in (np.inf, 0.1):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            target = PrivRecourse(black_box, epsilon=epsilon, bounds=BOUNDS, classes=[0, 1],
                                  random_state=0).fit(X_fit, y_fit)
        result = membership_inference(target, X_c[coins], y_c[coins], X_c[~coins], y_c[~coins],
                                      signal="recourse_distance")
        figures[epsilon] = result.auc
    assert figures[np.inf] > 0.8 and figures[np.inf] > figures[0.1] + 0.2, figures


def test_recourse_nodes_from_the_released_paths(split):
    (_, (X_in, y_in), (X_out, y_out), _), black_box = split
    target = PrivRecourse(black_box, epsilon=np.inf, bounds=BOUNDS, classes=[0, 1],
                          random_state=0).fit(X_in, y_in)
    result = membership_inference(target, X_in, y_in, X_out, y_out,
                                  signal="recourse_distance", queries=X_out[:20])
    assert 0.0 <= result.auc <= 1.0


def test_counterfactual_and_explainer_signals_with_frames(split):
    (_, (X_in, y_in), (X_out, y_out), (X_ref, _)), black_box = split
    names = ["a", "b", "c"]
    frame_in, frame_out = (pd.DataFrame(X, columns=names) for X in (X_in[:30], X_out[:30]))
    dpc = DPCounterfactualGenerator(black_box, epsilon=1.0, bounds=BOUNDS, classes=[0, 1],
                                    max_iter=5, random_state=0).fit(X_in, y_in)
    result = membership_inference(dpc, X_in[:30], y_in[:30], X_out[:30], y_out[:30],
                                  signal="counterfactual_distance")
    assert result.epsilon_lower_bound(1e-5) < 1.0
    lime = DPLimeExplainer(black_box, epsilon=np.inf, epsilon_per_query=np.inf, bounds=BOUNDS,
                           max_iter=10, random_state=0).fit(X_in)
    result = membership_inference(lime, frame_in, None, frame_out, None, signal="explanation",
                                  shadow_data=(X_ref, None), n_shadows=2)
    assert result.n_members == 30 and np.isfinite(result.scores_members).all()


def test_a_callable_signal_and_vector_statistics_against_shadows(split):
    (_, (X_in, y_in), (X_out, y_out), (X_ref, y_ref)), _ = split

    def first_feature_weight(target, X, y):
        return np.abs(target.explain(X).values[:, 0])

    model = DPLocallyLinearClassifier(epsilon=np.inf, bounds=BOUNDS, classes=[0, 1],
                                      batch_size=200, epochs=2, random_state=0).fit(X_in, y_in)
    result = membership_inference(model, X_in, y_in, X_out, y_out, signal=first_feature_weight)
    assert result.signal == "first_feature_weight"
    np.testing.assert_allclose(result.scores_members, first_feature_weight(model, X_in, None))


@pytest.mark.parametrize("kwargs, match", [
    ({"signal": "telepathy"}, "signal must be one of"),
    ({"signal": "lira"}, "needs shadow_data"),
    ({"signal": "loss", "shadow_data": (np.ones((10, D)), np.ones(10)), "n_shadows": 1},
     "n_shadows must be"),
    ({"signal": "loss", "shadow_data": np.ones((10, D))}, "must be a pair"),
])
def test_bad_arguments(split, kwargs, match):
    (_, (X_in, y_in), (X_out, y_out), _), black_box = split
    with pytest.raises(ValueError, match=match):
        membership_inference(black_box, X_in, y_in, X_out, y_out, **kwargs)


def test_bad_candidates(split):
    (_, (X_in, y_in), (X_out, y_out), _), black_box = split
    with pytest.raises(ValueError, match="X_members is empty"):
        membership_inference(black_box, X_in[:0], y_in[:0], X_out, y_out)
    with pytest.raises(ValueError, match="labels must match"):
        membership_inference(black_box, X_in, y_in[:5], X_out, y_out)
    with pytest.raises(ValueError, match="both sets, or of neither"):
        membership_inference(black_box, X_in, y_in, X_out, None)
    with pytest.raises(ValueError, match="not among the target's classes"):
        membership_inference(black_box, X_in, y_in + 5, X_out, y_out)
    with pytest.raises(ValueError, match="needs the labels"):
        membership_inference(black_box, X_in, None, X_out, None)
    with pytest.raises(ValueError, match="same number of columns"):
        membership_inference(black_box, X_in, y_in, X_out[:, :2], y_out)
    svc = SVC().fit(X_in, y_in)
    with pytest.raises(ValueError, match="needs the target's predict_proba"):
        membership_inference(svc, X_in, y_in, X_out, y_out)
    with pytest.raises(ValueError, match="needs the target's explain"):
        membership_inference(svc, X_in, y_in, X_out, y_out, signal="explanation")


def test_every_signal_is_documented():
    doc = membership_inference.__doc__
    assert all(f'"{name}"' in doc for name in SIGNALS)


def _one_hot_setting(n_candidates=40, seed=0):
    """Two numeric features and a one-hot block; every candidate holds a level of its own."""
    rng = np.random.RandomState(seed)
    n_levels = 2 + n_candidates

    def rows(levels):
        X = np.zeros((len(levels), 2 + n_levels))
        X[:, :2] = rng.uniform(0.2, 0.8, size=(len(levels), 2))
        X[np.arange(len(levels)), 2 + levels] = 1.0
        return X

    background = rows(rng.randint(2, size=300))
    candidates = rows(2 + np.arange(n_candidates))
    member = rng.uniform(size=n_candidates) < 0.5
    X_bb = rows(rng.randint(n_levels, size=300))
    black_box = LogisticRegression().fit(X_bb, (X_bb[:, 0] > 0.5).astype(int))
    return background, candidates, member, black_box, background


def test_the_probe_sees_what_an_explanation_at_the_row_cannot():
    from skdpx.attacks import explanation_probe

    background, candidates, member, black_box, reference = _one_hot_setting()
    d = candidates.shape[1]

    def explainer(epsilon, rows):
        return DPLimeExplainer(black_box, epsilon=np.inf if epsilon == np.inf else 100.0,
                               epsilon_per_query=epsilon, bounds=(np.zeros(d), np.ones(d)),
                               max_iter=20, random_state=0).fit(rows)

    # a row at the query adds nothing to the local loss: with and without it, the
    # answers differ only through the normaliser 1/m (300 or 301 rows)
    row = candidates[:1]
    with_row, without = explainer(np.inf, np.vstack([background, row])), explainer(np.inf, background)
    np.testing.assert_allclose(with_row.explain(row).values, without.explain(row).values,
                               rtol=0.01, atol=1e-6)
    probe = explanation_probe(reference)
    assert probe(with_row, row, None)[0] > 1e-4 and probe(without, row, None)[0] < 1e-12

    figures = {}
    for epsilon in (np.inf, 0.5):
        lime = explainer(epsilon, np.vstack([background, candidates[member]]))
        args = (candidates[member], None, candidates[~member], None)
        figures[epsilon] = (membership_inference(lime, *args, signal="explanation_probe").auc,
                            membership_inference(lime, *args, signal=probe).auc)
    # without noise the probe is perfect (a level nobody else has gets exactly 0) ...
    assert figures[np.inf] == (1.0, 1.0), figures
    # ... and at epsilon 0.5 per query it is much weaker
    assert max(figures[0.5]) < 0.85, figures


def test_the_probe_refuses_text_and_mismatched_reference(split):
    from skdpx.attacks import explanation_probe

    (_, (X_in, _), (X_out, _), _), black_box = split
    lime = DPLimeExplainer(black_box, epsilon=np.inf, epsilon_per_query=np.inf, bounds=BOUNDS,
                           max_iter=5).fit(X_in)
    with pytest.raises(ValueError, match="reference has 2 features"):
        membership_inference(lime, X_in, None, X_out, None,
                             signal=explanation_probe(np.ones((5, 2))))
    with pytest.raises(ValueError, match="numeric encoded rows"):
        explanation_probe([["a", "b"]])


def test_the_candidates_go_to_the_target_in_a_random_order():
    # a signal that only sees each row's position in the query: members come first in
    # the stack, so sent in that order the position alone would give them away
    def position(target, X, y):
        return -np.arange(len(X), dtype=float)

    rng = np.random.RandomState(0)
    X = rng.uniform(size=(400, D))
    result = membership_inference(None, X[:200], None, X[200:], None, signal=position)
    assert abs(result.auc - 0.5) < 0.1, result.auc
    # the scores come back in the candidates' order
    again = membership_inference(None, X[:200], None, X[200:], None, signal=position)
    np.testing.assert_array_equal(result.scores_members, again.scores_members)


def test_shadows_of_a_pipeline_leave_the_users_ledger_file_and_black_box_alone(split, tmp_path):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    (_, (X_in, y_in), (X_out, y_out), (X_ref, y_ref)), black_box = split
    ledger = PrivacyLedger(epsilon=5.0, delta=1e-5, path=tmp_path / "ledger.db")
    model = make_pipeline(FunctionTransformer(), DPLocallyLinearClassifier(
        epsilon=1.0, bounds=BOUNDS, classes=[0, 1], batch_size=200, epochs=2,
        accountant=ledger)).fit(X_in, y_in)
    spent = len(ledger.events), ledger.epsilon_spent
    membership_inference(model, X_in, y_in, X_out, y_out, signal="lira",
                         shadow_data=(X_ref, y_ref), n_shadows=2)
    reread = PrivacyLedger(epsilon=5.0, delta=1e-5, path=tmp_path / "ledger.db")
    assert (len(reread.events), reread.epsilon_spent) == spent
    # an explainer's shadows keep its fitted black box, and leave its parameters alone
    black_box.set_params(random_state=3)
    lime = DPLimeExplainer(black_box, epsilon=np.inf, epsilon_per_query=np.inf, bounds=BOUNDS,
                           max_iter=5).fit(X_in)
    membership_inference(lime, X_in[:20], None, X_out[:20], None, signal="explanation_norm",
                         shadow_data=(X_ref, None), n_shadows=2)
    assert black_box.get_params()["random_state"] == 3 and hasattr(black_box, "coef_")


def test_the_largest_bound_these_candidates_allow():
    result = AttackResult(np.r_[np.ones(100)], np.zeros(100))
    ceiling = result.max_epsilon_lower_bound()
    assert result.epsilon_lower_bound() == ceiling
    assert 2.4 < ceiling < 2.7  # log(n / (4 ln 40)) with n = 200
    assert AttackResult(np.ones(500), np.zeros(500)).max_epsilon_lower_bound() > 4


def test_clear_errors_for_odd_inputs(split):
    (_, (X_in, y_in), (X_out, y_out), (X_ref, y_ref)), black_box = split
    with pytest.raises(ValueError, match="needs at least 4 scores_members"):
        AttackResult([1.0], [0.0, 1.0, 2.0, 3.0]).epsilon_lower_bound()
    with pytest.raises(ValueError, match="signal must be one of"):
        membership_inference(black_box, X_in, y_in, X_out, y_out, signal=["loss"])
    with pytest.raises(ValueError, match="y_reference has 5 labels"):
        membership_inference(black_box, X_in, y_in, X_out, y_out, signal="lira",
                             shadow_data=(X_ref, y_ref[:5]))


def test_a_recourse_target_that_released_no_node_warns(split):
    (_, (X_in, y_in), (X_out, y_out), _), black_box = split

    class NothingReleased:
        cluster_centers_ = np.empty((0, D))

    with pytest.warns(UserWarning, match="released no recourse node"):
        result = membership_inference(NothingReleased(), X_in, y_in, X_out, y_out,
                                      signal="recourse_distance")
    assert result.auc == 0.5
