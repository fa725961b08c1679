"""DPLocallyLinearClassifier.explain_global: every class's maps with their
weights (issue 19 item 9), post-processing of the DP-trained model."""

import warnings

import numpy as np
import pytest

from skdpx import DPLocallyLinearClassifier, LocallyLinearMaps
from skdpx.locally_linear._locally_linear import _maps_forward
from skdpx.privacy import PrivacyLedger


def _blobs(n=240, d=4, k=3, seed=0):
    rng = np.random.RandomState(seed)
    y = np.arange(n) % k
    centres = rng.uniform(-3, 3, size=(k, d))
    return np.clip(centres[y] + rng.normal(size=(n, d)), -6, 6), y


@pytest.fixture(scope="module")
def fitted():
    X, y = _blobs()
    ledger = PrivacyLedger()  # no cap: the non-private fit (fast) records epsilon inf
    lower, upper = np.array([-6.0, -6.0, -600.0, -6.0]), np.array([6.0, 6.0, 600.0, 6.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = DPLocallyLinearClassifier(
            n_maps=3, beta=2.0, epsilon=np.inf, bounds=(lower, upper), classes=[0, 1, 2],
            epochs=10, batch_size=60, accountant=ledger, random_state=0,
        ).fit(X * [1, 1, 100, 1], y)
    return clf, X * [1, 1, 100, 1], y, ledger


def _reference_weights(clf, X, codes):
    """Mean softmax weight of each map over each class's rows, by a loop."""
    Xc = np.clip(X, *clf.bounds_)
    G = np.einsum("nd,kmd->nkm", Xc, clf.coef_) + clf.intercept_
    S, _ = _maps_forward(G, clf.beta)
    k = len(clf.classes_)
    return np.array([S[codes == c, c].mean(axis=0) for c in range(k)])


def test_weights_are_mean_gating_over_predicted_rows(fitted):
    clf, X, _, _ = fitted
    maps = clf.explain_global(X[:90])
    assert isinstance(maps, LocallyLinearMaps)
    np.testing.assert_array_equal(maps.coef, clf.coef_)
    np.testing.assert_array_equal(maps.intercept, clf.intercept_)
    np.testing.assert_array_equal(maps.classes, clf.classes_)
    pred = np.searchsorted(clf.classes_, clf.predict(X[:90]))
    np.testing.assert_allclose(maps.weights, _reference_weights(clf, X[:90], pred))
    np.testing.assert_array_equal(maps.support, np.bincount(pred, minlength=3))
    np.testing.assert_allclose(maps.weights.sum(axis=1), 1.0)
    np.testing.assert_allclose(maps.feature_range, clf.bounds_[1] - clf.bounds_[0])
    assert maps.epsilon_spent == clf.epsilon_spent_ and "predicted" in maps.meta["weights"]


def test_weights_from_labels(fitted):
    clf, X, y, _ = fitted
    maps = clf.explain_global(X[:90], y[:90])
    np.testing.assert_allclose(maps.weights, _reference_weights(clf, X[:90], y[:90]))
    np.testing.assert_array_equal(maps.support, [30, 30, 30])
    assert "labelled" in maps.meta["weights"]
    # a class with no row: NaN weights, support 0
    one = clf.explain_global(X[:3][y[:3] == 0], y[:3][y[:3] == 0])
    assert np.isnan(one.weights[1:]).all() and one.support.tolist() == [1, 0, 0]


def test_without_data_the_maps_alone(fitted):
    clf, _, _, _ = fitted
    maps = clf.explain_global()
    assert np.isnan(maps.weights).all() and maps.support.tolist() == [0, 0, 0]
    assert maps.top_maps().tolist() == [[0, 1, 2]] * 3


def test_bad_input(fitted):
    clf, X, y, _ = fitted
    with pytest.raises(ValueError, match="pass X"):
        clf.explain_global(y=y)
    with pytest.raises(ValueError, match="outside classes_"):
        clf.explain_global(X[:4], [0, 1, 7, 1])
    with pytest.raises(ValueError, match="labels"):
        clf.explain_global(X[:4], y[:3])
    with pytest.raises(ValueError):
        clf.explain_global(X[:4, :2])


def test_spends_nothing(fitted):
    clf, X, y, ledger = fitted
    before = (ledger.epsilon_spent, len(ledger.events))
    clf.explain_global(X, y)
    clf.explain(X[:5])
    assert (ledger.epsilon_spent, len(ledger.events)) == before and before[1] > 0


def test_explain_reports_public_ranges(fitted):
    clf, X, _, _ = fitted
    expl = clf.explain(X[:5])
    np.testing.assert_allclose(expl.feature_range, clf.bounds_[1] - clf.bounds_[0])
    # the feature in hundreds ranks by its change across the range, not per unit
    np.testing.assert_allclose(expl.scaled_values[:, 2], expl.values[:, 2] * 1200)


def test_plots(fitted):
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    clf, X, _, _ = fitted
    maps = clf.explain_global(X[:90])
    try:
        fig = maps.plot(image_shape=(2, 2), top_maps=2)
        assert len(fig.axes) == 3 * 2
        top = maps.top_maps(1)[0, 0]
        assert fig.axes[0].get_title().startswith(f"0, map {top}\nweight ")
        fig = maps.plot(top_maps=3, classes=[2])
        assert len(fig.axes[0].patches) == 3 * 4
    finally:
        plt.close("all")


def test_dataframe_with_categories_is_reported_per_original_column():
    pd = pytest.importorskip("pandas")
    rng = np.random.RandomState(0)
    n = 120
    df = pd.DataFrame({"age": rng.randint(17, 90, n), "gain": rng.uniform(0, 1e5, n),
                       "sex": rng.choice(["F", "M"], n), "race": rng.choice(["a", "b", "c"], n)})
    y = ((df["age"] > 40) ^ (df["sex"] == "F")).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = DPLocallyLinearClassifier(
            epsilon=np.inf, bounds={"age": (17, 90), "gain": (0, 1e5)},
            categories={"sex": ["F", "M"], "race": ["a", "b", "c"]}, classes=[0, 1],
            epochs=2, random_state=0).fit(df, y)
    for result in (clf.explain(df.iloc[:4]), clf.explain_global(df, y)):
        assert result.group_names == ["age", "gain", "sex", "race"]
        assert [n for n, _ in result.groups] == [n for n, _ in clf.schema_.groups]
        np.testing.assert_allclose(result.feature_range, [73.0, 1e5, 1, 1, 1, 1, 1])
    frame = clf.explain_global(df, y).to_frame(grouped=True)
    assert list(frame.columns[4:]) == ["age", "gain", "sex", "race"]
    race = clf.coef_[..., 4:7]
    np.testing.assert_allclose(frame["race"], (race.max(-1) - race.min(-1)).ravel())
