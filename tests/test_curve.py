"""privacy_utility_curve: every point paid for, priced and checked before anything is read."""

import json
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression

from skdpx import DPLocallyLinearClassifier
from skdpx.exceptions import BudgetError
from skdpx.model_selection import PrivacyUtilityCurve, privacy_utility_curve
from skdpx.privacy import (
    COUNT_SHARE,
    ComposedDpEvent,
    FitCount,
    FixedLossDpEvent,
    PrivacyLedger,
    PrivacyLeakWarning,
    compute_epsilon,
    event_to_json,
    gaussian_event,
    noise_source,
)
from skdpx.privacy._selection import (
    commit_sweep,
    gaussian_equivalent,
    holdout_event,
    release_score,
)

pytestmark = pytest.mark.filterwarnings("ignore::skdpx.privacy.PrivacyLeakWarning")

N = 800


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(N + 200, 4, n_informative=3, n_redundant=0, class_sep=2.5,
                               flip_y=0, random_state=0)
    return X[:N], y[:N], X[N:], y[N:]


def _clf(**kw):
    # full-batch DP-SGD (no subsampling): its calibration takes milliseconds
    kw = {"bounds": (-4, 4), "classes": [0, 1], "batch_size": N, "epochs": 30,
          "learning_rate": 1.0, **kw}
    return DPLocallyLinearClassifier(**kw)


def _planned_fit(epsilon, n_rows, X, y, relation="add_or_remove"):
    """The fit a point plans: at ``epsilon``, with the public count ``n_rows`` (its own
    count is the sweep's); ``X`` and ``y`` give the schema only."""
    clf = _clf(epsilon=epsilon, delta=1e-5)
    count = FitCount(epsilon=epsilon, relation=relation, n_rows=n_rows)
    return clf._plan_fit(clf._validate_fit(X, y), relation, count).event


@pytest.fixture
def no_reading(monkeypatch):
    """Make any fit or score that reads the private rows fail loudly."""
    def read(*args, **kwargs):
        raise AssertionError("private rows were read")
    monkeypatch.setattr(DPLocallyLinearClassifier, "_private_fit", read)


def test_ledger_records_every_point_and_its_score(data):
    X, y, _, _ = data
    ledger = PrivacyLedger(epsilon=20.0)
    eps = [0.3, 1.0, 3.0]
    curve = privacy_utility_curve(_clf(), X, y, epsilons=eps, accountant=ledger,
                                  random_state=0)
    assert isinstance(curve, PrivacyUtilityCurve) and curve.validation == "holdout"
    assert len(ledger) == 1 + len(eps)  # the DP row count, then one entry per point
    assert [label for label, _ in ledger.events] == [
        "privacy_utility_curve: DPLocallyLinearClassifier's row count (Laplace)"] + [
        f"privacy_utility_curve point {i + 1}/3 (epsilon={e:g}): DPLocallyLinearClassifier "
        "fit on the training part + DP score on the holdout (score's Gaussian dominated by "
        "the fit's: the fit's event)" for i, e in enumerate(eps)]
    # the count: COUNT_SHARE of the largest epsilon; each fit the rest of its own
    assert ledger.events[0][1] == FixedLossDpEvent(COUNT_SHARE * 3.0)
    assert curve.count_epsilon == pytest.approx(COUNT_SHARE * 3.0)
    assert curve.fit_epsilons == pytest.approx([(1 - COUNT_SHARE) * e for e in eps])
    for (_, event), z, e in zip(ledger.events[1:], curve.score_noise_multipliers,
                                curve.fit_epsilons):
        # a full-batch fit is one Gaussian mechanism: the score's noise is no smaller, so
        # the point (a row is in one part only) costs exactly the fit on the training part,
        # planned with the training part's expected size (a share of the DP count)
        fit = _planned_fit(e, curve.n_train, X, y)
        assert event_to_json(event) == event_to_json(fit)
        assert z >= gaussian_equivalent(fit)
    assert curve.point_epsilons == pytest.approx(curve.fit_epsilons, rel=1e-3)
    # the total reported is the ledger's, and every point is in it
    assert curve.total_delta == pytest.approx(3e-5)
    assert ledger.epsilon_spent == pytest.approx(curve.total_epsilon, rel=1e-6)
    assert curve.total_epsilon >= max(curve.point_epsilons) + curve.count_epsilon
    assert curve.total_epsilon <= sum(eps)  # no more than the points fitted one by one
    assert curve.n_train + curve.n_validation == pytest.approx(curve.n_rows)
    assert curve.n_train == pytest.approx(0.8 * curve.n_rows)
    assert np.all((curve.scores >= 0) & (curve.scores <= 1))


def test_a_fit_that_is_not_one_gaussian_records_its_score(data, monkeypatch):
    # as for a Poisson-subsampled fit (slow to plan): the point is the worse of the fit and
    # the score's Gaussian, or both composed
    import skdpx.privacy._selection as selection_module

    # the one place that asks (free_score_noise and holdout_event, in the core)
    monkeypatch.setattr(selection_module, "gaussian_equivalent", lambda event: None)
    X, y, _, _ = data
    ledger = PrivacyLedger(epsilon=20.0)
    eps = [0.3, 1.0]
    curve = privacy_utility_curve(_clf(), X, y, epsilons=eps, accountant=ledger,
                                  random_state=0)
    for (_, event), z, e in zip(ledger.events[1:], curve.score_noise_multipliers,
                                curve.fit_epsilons):
        assert type(event).__name__ in ("WorstOfDpEvent", "ComposedDpEvent")
        assert [event_to_json(x) for x in event.events] == [
            event_to_json(_planned_fit(e, curve.n_train, X, y)),
            event_to_json(gaussian_event(z))]
        assert compute_epsilon(event, 1e-5) >= e * 0.99
    assert ledger.epsilon_spent == pytest.approx(curve.total_epsilon, rel=1e-6)


def test_holdout_event():
    fit = ComposedDpEvent([gaussian_event(3.0), gaussian_event(4.0)])  # one Gaussian, z = 2.4
    assert gaussian_equivalent(fit) == pytest.approx(2.4)
    assert holdout_event(fit, 2.4) is fit  # the score is dominated: the fit's event
    assert type(holdout_event(fit, 2.0)).__name__ == "WorstOfDpEvent"  # less noise: not
    sampled = gaussian_event(1.0, steps=10, sample_rate=0.1)
    assert gaussian_equivalent(sampled) is None
    worst = holdout_event(sampled, 50.0)
    assert type(worst).__name__ == "WorstOfDpEvent"
    assert [event_to_json(e) for e in worst.events] == [
        event_to_json(sampled), event_to_json(gaussian_event(50.0))]


def test_capped_ledger_refuses_the_whole_sweep_before_reading(data, no_reading):
    X, y, _, _ = data
    # the first point alone (epsilon 0.5) would fit, the sweep does not
    ledger = PrivacyLedger(epsilon=1.5, delta=1e-4)
    with pytest.raises(BudgetError):
        privacy_utility_curve(_clf(), X, y, epsilons=[0.5, 1.0, 2.0], accountant=ledger)
    assert len(ledger) == 0
    with pytest.raises(BudgetError):  # with public validation rows too
        privacy_utility_curve(_clf(), X, y, epsilons=[0.5, 1.0, 2.0], accountant=ledger,
                              X_val=X[:50], y_val=y[:50])
    assert len(ledger) == 0


def test_public_validation_spends_only_the_fits(data):
    X, y, X_pub, y_pub = data
    ledger = PrivacyLedger(epsilon=20.0, delta=1e-4)
    eps = [0.5, 2.0]
    curve = privacy_utility_curve(_clf(), X, y, epsilons=eps, X_val=X_pub, y_val=y_pub,
                                  accountant=ledger, return_estimators=True, random_state=0)
    assert curve.validation == "public" and curve.score_noise_multipliers is None
    # all the rows: the DP count; the public rows: their number
    assert curve.n_train == curve.n_rows and curve.n_validation == len(X_pub)
    # after the count, each record is exactly the fit on all the private rows, planned
    # with the count: no score is charged
    count = FixedLossDpEvent(COUNT_SHARE * 2.0)
    fits = [_planned_fit(e, curve.n_rows, X, y) for e in curve.fit_epsilons]
    assert [event_to_json(e) for _, e in ledger.events] == [
        event_to_json(e) for e in [count] + fits]
    assert curve.total_epsilon == pytest.approx(
        compute_epsilon(ComposedDpEvent([count] + fits), 2e-5), rel=1e-6)
    assert curve.point_epsilons == pytest.approx(curve.fit_epsilons, rel=1e-3)
    # the scores are exact, on the public rows
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        exact = [est.score(X_pub, y_pub) for est in curve.estimators]
    assert curve.scores.tolist() == exact


def test_curve_rises_with_epsilon(data):
    X, y, X_pub, y_pub = data
    curve = privacy_utility_curve(_clf(), X, y, epsilons=[0.001, 0.01, 3.0, 10.0],
                                  X_val=X_pub, y_val=y_pub,
                                  accountant=PrivacyLedger(), random_state=2)
    low, high = curve.scores[:2].mean(), curve.scores[2:].mean()
    assert high > 0.85 and high > low + 0.2
    # a DP score on a private holdout: close to it at a large epsilon
    dp = privacy_utility_curve(_clf(), X, y, epsilons=[10.0], accountant=PrivacyLedger(),
                               random_state=2)
    assert dp.scores[0] > 0.8


@pytest.mark.parametrize("kwargs, error, match", [
    ({"epsilons": [1.0, 0.5]}, ValueError, "strictly increasing"),
    ({"epsilons": [1.0, 1.0]}, ValueError, "strictly increasing"),
    ({"epsilons": [0.0, 1.0]}, ValueError, "> 0"),
    ({"epsilons": [-1.0]}, ValueError, "> 0"),
    ({"epsilons": [1.0, np.inf]}, ValueError, "finite"),
    ({"epsilons": []}, ValueError, "non-empty"),
    ({"epsilons": [1.0], "delta": 0.0}, ValueError, "delta"),
    ({"epsilons": [1.0], "cv": 3}, ValueError, "holdout"),
    ({"epsilons": [1.0], "cv": 1.0}, ValueError, "holdout"),
    ({"epsilons": [1.0], "y_val": [0, 1]}, ValueError, "without X_val"),
    ({"epsilons": [1.0], "X_val": np.zeros((5, 3)), "y_val": np.zeros(5)}, ValueError,
     "columns of X"),
    ({"epsilons": [1.0], "X_val": np.zeros((5, 4)), "y_val": np.zeros(4)}, ValueError,
     "rows but y_val"),
    ({"epsilons": [1.0], "scoring": lambda est, X, y: 1.0}, ValueError, "exact scores"),
    ({"epsilons": [1.0], "estimator": LogisticRegression()}, TypeError, "skdpx estimator"),
])
def test_bad_input_raises_before_spending(data, no_reading, kwargs, error, match):
    X, y, _, _ = data
    ledger = PrivacyLedger(epsilon=50.0, delta=1e-4)
    kwargs = {"estimator": _clf(), **kwargs}
    with pytest.raises(error, match=match):
        privacy_utility_curve(kwargs.pop("estimator"), X, y, accountant=ledger, **kwargs)
    assert len(ledger) == 0


def test_result_object(data):
    import matplotlib

    matplotlib.use("Agg")
    X, y, X_pub, y_pub = data
    curve = privacy_utility_curve(_clf(), X, y, epsilons=[0.5, 2.0], X_val=X_pub,
                                  y_val=y_pub, scoring="accuracy", accountant=PrivacyLedger())
    frame = curve.to_frame()
    assert list(frame.columns) == ["epsilon", "score", "point_epsilon"]
    assert frame["score"].tolist() == curve.scores.tolist()
    ax = curve.plot()
    assert f"epsilon={curve.total_epsilon:.3g}" in ax.get_title()
    assert ax.get_xscale() == "log" and len(ax.lines[0].get_xdata()) == 2
    assert f"{curve.total_epsilon:.3g}" in curve._repr_html_()
    assert json.loads(curve.to_json())["scores"] == curve.scores.tolist()
    assert curve.epsilon_at(1e-3) < curve.total_epsilon
    assert curve.estimators is None  # not kept unless asked


def test_seeded_sweep_is_reproducible_and_warns(data):
    X, y, _, _ = data
    runs = []
    for _ in range(2):
        with pytest.warns(PrivacyLeakWarning, match="random_state"):
            runs.append(privacy_utility_curve(_clf(), X, y, epsilons=[1.0],
                                              accountant=PrivacyLedger(), random_state=3))
    assert runs[0].scores.tolist() == runs[1].scores.tolist()


def test_commit_sweep_pays_for_one_score_release_per_point():
    ledger = PrivacyLedger(epsilon=10.0, delta=1e-4)
    events = [gaussian_event(5.0), gaussian_event(2.0)]
    commitments = commit_sweep(ledger, events, ["a", "b"], delta=1e-5,
                               score_noise_multipliers=[5.0, None])
    assert len(ledger) == 2 and commitments[1] is None
    noise = noise_source()
    release_score(np.ones((3, 1)), noise_multiplier=5.0, sensitivity=0.5, noise=noise,
                  commitment=commitments[0])
    with pytest.raises(RuntimeError, match="not in the spend committed"):
        release_score(np.ones((3, 1)), noise_multiplier=5.0, sensitivity=0.5, noise=noise,
                      commitment=commitments[0])
    with pytest.raises(ValueError, match="total delta"):
        commit_sweep(ledger, events, ["a", "b"], delta=0.6)
    assert len(ledger) == 2


def test_dataframes_pipelines_and_jobs():
    pd = pytest.importorskip("pandas")
    from joblib import parallel_backend
    from sklearn.pipeline import make_pipeline

    from skdpx.preprocessing import PublicSchemaEncoder

    rng = np.random.default_rng(0)
    n = 600
    frame = pd.DataFrame({"age": rng.integers(18, 80, n), "job": rng.choice(["a", "b", "c"], n)})
    y = ((frame["age"] > 45) ^ (frame["job"] == "c")).astype(int).to_numpy()
    pipe = make_pipeline(
        PublicSchemaEncoder(bounds={"age": (18, 90)}, categories={"job": ["a", "b", "c"]}),
        DPLocallyLinearClassifier(bounds=(0, 1), classes=[0, 1], batch_size=None, epochs=20))
    ledger = PrivacyLedger(epsilon=10.0, delta=1e-5)
    with parallel_backend("threading"):  # the joblib path, without starting processes
        holdout = privacy_utility_curve(pipe, frame, y, epsilons=[0.5, 2.0], accountant=ledger,
                                        n_jobs=2)
        public = privacy_utility_curve(pipe, frame.iloc[:500], y[:500], epsilons=[0.5, 2.0],
                                       X_val=frame.iloc[500:], y_val=y[500:],
                                       accountant=ledger, n_jobs=2, return_estimators=True)
    assert holdout.estimator == "DPLocallyLinearClassifier" and len(ledger) == 2 * 3
    assert holdout.point_epsilons == pytest.approx([0.475, 1.9], rel=1e-3)
    # the point's fit budget (its epsilon, but the count's share), set on the step
    assert public.estimators[1][-1].epsilon == pytest.approx((1 - COUNT_SHARE) * 2.0)
    assert public.estimators[0].predict(frame.head(3)).shape == (3,)


def test_explainers_keep_their_black_box_and_release_only_answers():
    from sklearn.linear_model import LogisticRegression

    from skdpx import DPLimeExplainer, PrivRecourse
    from skdpx.model_selection import DPLimeFidelity

    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 3))
    y = (X[:, 0] > 0).astype(int)
    black_box = LogisticRegression().fit(X[:100], y[:100])  # fitted on other rows
    X, y = X[100:], y[100:]
    curve = privacy_utility_curve(PrivRecourse(black_box, bounds=(-4, 4), classes=[0, 1]), X, y,
                                  epsilons=[0.5, 2.0],
                                  accountant=PrivacyLedger(epsilon=10, delta=1e-4))
    assert np.isfinite(curve.scores).all()
    curve = privacy_utility_curve(DPLimeExplainer(black_box, bounds=(-4, 4)), X, epsilons=[1.0],
                                  scoring=DPLimeFidelity(X[:3]), return_estimators=True,
                                  accountant=PrivacyLedger(epsilon=10, delta=1e-4))
    released = curve.estimators[0]
    assert released.estimator is None and released.epsilon_remaining_ == 0


@pytest.mark.parametrize("case", ["1-D X", "complex X", "one class", "continuous y"])
def test_rows_the_estimator_refuses_are_refused_before_the_count(case):
    # (the grown bad-input benchmark: the sweep spent its DP row count, then refused)
    from skdpx import DPLocallyLinearClassifier
    from skdpx.model_selection import privacy_utility_curve
    from skdpx.privacy import PrivacyLedger

    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, size=(200, 3))
    y = (X[:, 0] > 0).astype(int)
    if case == "1-D X":
        X = X[:, 0]
    elif case == "complex X":
        X = X + 1j
    elif case == "one class":
        y = np.zeros_like(y)
    else:
        y = X[:, 1].copy()
    ledger = PrivacyLedger(epsilon=10.0, delta=1e-3)
    clf = DPLocallyLinearClassifier(bounds=(-1, 1), epochs=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError):
            privacy_utility_curve(clf, X, y, epsilons=[0.5, 1.0], accountant=ledger,
                                  random_state=0)
    assert not ledger.events


@pytest.mark.parametrize("n_jobs", [0, 1.5, "x"])
def test_a_bad_n_jobs_is_refused_before_anything_is_spent(n_jobs):
    # (the grown bad-input benchmark: the sweep and the searches spent, then joblib raised)
    from skdpx.model_selection import DPGridSearchCV
    from skdpx.privacy import PrivacyLedger

    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, size=(200, 3))
    y = (X[:, 0] > 0).astype(int)
    clf = DPLocallyLinearClassifier(bounds=(-1, 1), classes=[0, 1], epochs=1)
    ledger = PrivacyLedger(epsilon=10.0, delta=1e-3)
    with pytest.raises(ValueError, match="n_jobs"):
        privacy_utility_curve(clf, X, y, epsilons=[0.5, 1.0], accountant=ledger, n_jobs=n_jobs)
    with pytest.raises(ValueError, match="n_jobs"):
        DPGridSearchCV(clf, {"n_maps": [1, 2]}, epsilon=2.0, accountant=ledger,
                       n_jobs=n_jobs).fit(X, y)
    assert not ledger.events


def test_a_dp_scores_std_is_its_noise_carried_through_the_score():
    # DPAccuracy: score = 1/2 + S / N from two sums with Gaussian noise; its score_std, from
    # the score and public facts, against a simulation (a numpy generator in a test: no
    # privacy draw) of the same noise on fixed sums
    from skdpx.model_selection import get_dp_scorer

    scorer = get_dp_scorer("accuracy")
    n, accuracy, z = 400, 0.9, 15.0  # noise small enough that [0, 1] rarely clips it
    sums = np.array([(accuracy - 0.5) * n, 0.5 * n])  # (correct - 1/2, 1/2) summed
    sigma = z * scorer.sensitivity("add_or_remove")
    draws = sums + np.random.default_rng(0).normal(0.0, sigma, size=(20_000, 2))
    simulated = np.std([scorer.finalize(s) for s in draws])
    std = scorer.score_std(accuracy, z, "add_or_remove", n)
    assert std == pytest.approx(simulated, rel=0.05)
    # a scorer that does not say gives NaN
    assert np.isnan(get_dp_scorer("balanced_accuracy").score_std(0.5, z, "add_or_remove", n))


def test_holdout_scores_carry_error_bars_and_public_rows_a_baseline(data):
    import matplotlib

    matplotlib.use("Agg")
    X, y, X_pub, y_pub = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        held = privacy_utility_curve(_clf(), X, y, epsilons=[0.5, 2.0], scoring="accuracy",
                                     accountant=PrivacyLedger())
        public = privacy_utility_curve(_clf(), X, y, epsilons=[0.5, 2.0], X_val=X_pub,
                                       y_val=y_pub, scoring="accuracy",
                                       accountant=PrivacyLedger())
    assert np.all(np.isfinite(held.score_std)) and np.all(held.score_std > 0)
    assert held.baseline is None and "score_std" in held.to_frame().columns
    ax = held.plot()
    assert ax.containers and "1.96 std" in " ".join(t.get_text() for t in ax.texts)
    # public validation rows: the majority class is public, the scores have no noise of
    # their own (NaN: not known); an exact score is near the baseline when not above it
    share = np.unique(y_pub, return_counts=True)[1].max() / len(y_pub)
    assert public.baseline == pytest.approx(share)
    assert np.isnan(public.score_std).all()
    assert public.near_baseline().tolist() == (public.scores <= share).tolist()
    ax = public.plot()
    assert any("majority class" in str(line.get_label()) for line in ax.lines)
    # JSON keeps both, and a curve saved before they existed still loads
    back = type(held).from_json(held.to_json())
    np.testing.assert_array_equal(back.score_std, held.score_std)
    old = json.loads(public.to_json())
    del old["score_std"], old["baseline"]
    assert type(public).from_json(json.dumps(old)).baseline is None


def test_a_point_within_noise_of_the_baseline_is_marked():
    from skdpx.model_selection._curve import PrivacyUtilityCurve

    curve = PrivacyUtilityCurve(
        epsilons=np.array([0.1, 1.0]), scores=np.array([0.77, 0.85]), scoring="accuracy",
        delta=1e-5, point_epsilons=np.array([0.1, 1.0]), total_epsilon=1.1, total_delta=2e-5,
        validation="holdout", n_rows=1000.0, n_train=800.0, n_validation=200.0,
        count_epsilon=0.05, count_std=28.0, fit_epsilons=np.array([0.095, 0.95]),
        score_noise_multipliers=np.array([10.0, 1.0]), estimator="X",
        score_std=np.array([0.02, 0.01]), baseline=0.76)
    assert curve.near_baseline().tolist() == [True, False]
    curve.score_std = np.array([np.nan, np.nan])  # exact scores: at or below the baseline
    curve.scores = np.array([0.76, 0.77])
    assert curve.near_baseline().tolist() == [True, False]


def test_a_declared_baseline_serves_a_private_holdout_and_is_checked_first(data):
    import matplotlib

    matplotlib.use("Agg")
    X, y, _, _ = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        held = privacy_utility_curve(_clf(), X, y, epsilons=[0.05, 2.0], scoring="accuracy",
                                     accountant=PrivacyLedger(), baseline=0.5)
    # declared (a public base rate): drawn, and the points are judged against it with
    # their noise, as with public rows
    assert held.baseline == 0.5 and held.baseline_source == "declared"
    within = np.abs(held.scores - 0.5) <= 1.96 * held.score_std
    assert held.near_baseline().tolist() == within.tolist()
    ax = held.plot()
    assert any("no model: declared (0.5)" in str(line.get_label()) for line in ax.lines)
    assert type(held).from_json(held.to_json()).baseline_source == "declared"
    # a bad baseline is refused before the row count is spent
    for bad in (np.nan, "0.5", True, np.inf):
        ledger = PrivacyLedger()
        with pytest.raises(ValueError, match="baseline must be a finite number"):
            privacy_utility_curve(_clf(), X, y, epsilons=[1.0], accountant=ledger, baseline=bad)
        assert len(ledger) == 0
