"""Model extraction and attribute inference (skdpx.attacks, issue 21): small synthetic data."""

from types import SimpleNamespace

import numpy as np
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from skdpx.attacks import (AttributeInferenceResult, ExtractionResult, attribute_inference,
                           model_extraction)

D = 5
W = np.array([1.0, -2.0, 0.5, 1.5, -1.0])
B = -1.2  # the boundary is off the centre of the data: few positives


def _data(n, seed):
    return np.random.RandomState(seed).uniform(-1, 1, size=(n, D))


class _LinearBox:
    """A known linear black box: class 1 where W.x + B > 0."""

    classes_ = np.array([0, 1])

    def predict(self, X):
        return (np.asarray(X) @ W + B > 0).astype(int)


class _Oracle:
    """A perfect counterfactual explainer of _LinearBox: the closest point
    just across the boundary towards the desired class (the other by default)."""

    bounds_ = (-np.ones(D), np.ones(D))
    missing_every = 7  # every 7th query gets no counterfactual

    def __init__(self):
        self.calls = 0

    def explain(self, X, desired_class=None):
        X = np.asarray(X, dtype=float)
        self.calls += len(X)
        margin = X @ W + B
        current = (margin > 0).astype(int)
        desired = 1 - current if desired_class is None else np.broadcast_to(desired_class,
                                                                            len(X))
        sign = np.where(desired == 1, 1.0, -1.0)
        step = (sign * 0.02 - margin) / (W @ W)
        cf = X + step[:, None] * W
        cf[desired == current] = X[desired == current]
        if self.missing_every:
            cf[::self.missing_every] = np.nan
        return SimpleNamespace(counterfactuals=cf)


class _OneWay(_Oracle):
    """A recourse method: towards class 1 only; a query already there is its own answer."""

    missing_every = 0

    def explain(self, X):
        X = np.asarray(X, dtype=float)
        return SimpleNamespace(counterfactuals=np.where(
            (X @ W + B > 0)[:, None], X, super().explain(X, desired_class=1).counterfactuals))


def _linear_surrogate():
    return LogisticRegression(C=1e4, max_iter=2000)


def test_counterfactuals_beat_queries_at_small_n():
    box, oracle = _LinearBox(), _Oracle()
    res = model_extraction(oracle, box, _data(400, 1), _data(2000, 2), n_queries=(8, 16),
                           strategies=("queries", "counterfactuals", "dualcf"),
                           surrogate=_linear_surrogate(), random_state=0)
    for n_index in range(2):
        queries = res.fidelity("queries")[n_index]
        assert res.fidelity("counterfactuals")[n_index] > queries + 0.03
        assert res.fidelity("dualcf")[n_index] > queries + 0.03
    assert res.fidelity("dualcf")[1] > 0.97
    frame = res.to_frame().set_index(["strategy", "n_queries"])
    # 16 queries, 3 without a counterfactual (rows 0, 7, 14): 13 counterfactuals, then 11
    # duals (rows 0 and 7 of the counterfactuals lose theirs)
    assert frame.loc[("queries", 16), "n_explainer_calls"] == 0
    assert frame.loc[("counterfactuals", 16), "n_train"] == 16 + 13
    assert frame.loc[("counterfactuals", 16), "n_explainer_calls"] == 16
    assert frame.loc[("dualcf", 16), "n_explainer_calls"] == 16 + 13
    assert frame.loc[("dualcf", 16), "n_black_box_calls"] == 16 + 13 + 11
    assert oracle.calls == 16 + 13  # the largest set is explained once, the smaller nested
    calls = res.table("n_explainer_calls")
    assert list(calls.columns) == ["queries", "counterfactuals", "dualcf"]
    assert calls.loc[16].tolist() == [0, 16, 16 + 13] and calls.index.tolist() == [8, 16]
    assert res.table()["dualcf"].tolist() == res.fidelity("dualcf").tolist()


def test_one_way_recourse_adds_only_new_points():
    box = _LinearBox()
    pool = _data(60, 1)
    res = model_extraction(_OneWay(), box, pool, _data(200, 2), n_queries=60,
                           strategies=("counterfactuals", "dualcf"),
                           surrogate=_linear_surrogate())
    frame = res.to_frame().set_index("strategy")
    negatives = int(np.sum(box.predict(pool) == 0))
    assert 0 < negatives < 60
    # queries already favourable bring no point; the duals of favourable points neither
    assert frame.loc["counterfactuals", "n_train"] == 60 + negatives
    assert frame.loc["dualcf", "n_train"] == frame.loc["counterfactuals", "n_train"]
    assert frame.loc["dualcf", "n_explainer_calls"] == frame.loc["counterfactuals", "n_train"]


def test_random_baseline_and_default_bounds():
    box = _LinearBox()
    res = model_extraction(_Oracle(), box, _data(50, 1), _data(1000, 2), n_queries=[200, 30],
                           strategies="random", surrogate=_linear_surrogate())
    assert res.n_queries == (30, 200) and res.strategies == ("random",)
    rows = res.to_frame()
    assert rows["n_explainer_calls"].tolist() == [0, 0]
    assert rows["n_black_box_calls"].tolist() == [30, 200]  # not limited by the pool
    assert res.fidelity("random")[1] > 0.9
    # the same queries for any set of strategies, and reproducible
    a = model_extraction(None, box, _data(300, 1), _data(300, 2), n_queries=20,
                         strategies=("queries", "random"), bounds=(-1, 1),
                         surrogate=_linear_surrogate(), y_test=np.zeros(300), random_state=3)
    b = model_extraction(None, box, _data(300, 1), _data(300, 2), n_queries=20,
                         strategies=("queries",), surrogate=_linear_surrogate(), random_state=3)
    assert a.fidelity("queries") == b.fidelity("queries")
    assert np.isfinite(a.to_frame()["accuracy"]).all()


def test_surrogates_are_returned_and_json_round_trips(tmp_path):
    box = _LinearBox()
    X_test = _data(500, 2)
    res = model_extraction(_Oracle(), box, _data(100, 1), X_test, n_queries=(10, 40),
                           strategies=("queries", "counterfactuals"),
                           surrogate=_linear_surrogate(), n_surrogates=2,
                           return_surrogates=True)
    model = res.surrogate("counterfactuals")
    fid = np.mean(model.predict(X_test) == box.predict(X_test))
    assert fid == pytest.approx(res.fidelity("counterfactuals")[1])  # one seed: deterministic
    back = ExtractionResult.from_json(res.to_json(path=tmp_path / "x.json"))
    assert back == res and back.to_frame().equals(res.to_frame())
    assert ExtractionResult.from_json(str(tmp_path / "x.json")) == res
    with pytest.raises(ValueError, match="no surrogates kept"):
        back.surrogate("queries")
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    ax = res.plot()
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["queries", "counterfactuals"]
    assert ax.get_xscale() == "log" and list(ax.lines[0].get_xdata()) == [10, 40]
    matplotlib.pyplot.close("all")


@pytest.mark.parametrize("kwargs, message", [
    ({"X_pool": np.empty((0, D))}, "0 sample"),
    ({"n_queries": 101}, "larger than the attacker's pool"),
    ({"strategies": ("queries", "gradients")}, "unknown strategy 'gradients'"),
    ({"strategies": ("random",), "explainer": None}, "needs public bounds"),
    ({"strategies": ("dualcf",), "explainer": None}, "need an explainer"),
    ({"n_queries": (0, 10)}, "positive int"),
    ({"X_test": np.zeros((5, D + 1))}, "X_test has 6 features"),
])
def test_extraction_bad_input(kwargs, message):
    args = {"explainer": _Oracle(), "black_box": _LinearBox(), "X_pool": _data(100, 1),
            "X_test": _data(20, 2), "n_queries": 10, "surrogate": _linear_surrogate()}
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        model_extraction(args.pop("explainer"), args.pop("black_box"), args.pop("X_pool"),
                         args.pop("X_test"), **args)


@pytest.mark.parametrize("surrogate", [[], "mlp", object()], ids=["list", "str", "object"])
def test_extraction_surrogate_that_is_no_classifier_is_a_type_error(surrogate):
    with pytest.raises(TypeError, match="surrogate must be a scikit-learn classifier"):
        model_extraction(_Oracle(), _LinearBox(), _data(100, 1), _data(20, 2), n_queries=10,
                         surrogate=surrogate)


# ---------------------------------------------------------------- attribute inference


def _loss(target, X, y):
    """Membership signal: minus the cross-entropy at the true label (higher = member)."""
    proba = target.predict_proba(X)
    p = proba[np.arange(len(y)), np.searchsorted(target.classes_, y)]
    return np.log(np.clip(p, 1e-12, None))


def _planted(n, seed):
    """Random labels; column 0 a binary sensitive attribute (30 % ones); a
    one-hot block (columns 4-6) with levels in proportion 5:3:2."""
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 7))
    X[:, 0] = rng.uniform(size=n) < 0.3
    X[:, 4:7] = np.eye(3)[rng.choice(3, size=n, p=[0.5, 0.3, 0.2])]
    return X, rng.randint(2, size=n)


def test_attribute_inference_finds_a_planted_attribute():
    Xm, ym = _planted(150, 0)
    Xn, yn = _planted(150, 1)
    # the attribute weighs heavily in the distance: a 1-NN remembers it on its own rows
    scale = np.array([4.0, 1, 1, 1, 4, 4, 4])
    target = make_pipeline(FunctionTransformer(lambda X: X * scale),
                           KNeighborsClassifier(n_neighbors=1)).fit(Xm, ym)
    res = attribute_inference(target, Xm, ym, Xn, yn, feature=0, signal="loss")
    assert res.advantage > 0.1
    assert res.accuracy_members > res.baseline_members + 0.1
    assert len(res.guess_members) == 150 and res.candidates.tolist() == [[0.0], [1.0]]
    with_prior = attribute_inference(target, Xm, ym, Xn, yn, feature=0, prior=True)
    assert with_prior.advantage > 0.1 and with_prior.meta["prior"]
    # on soft probabilities the prior moves the near-ties to the majority value
    soft = LogisticRegression().fit(Xm, ym)
    plain, map_ = (attribute_inference(soft, Xm, ym, Xn, yn, feature=0, prior=p)
                   for p in (False, True))
    assert np.sum(map_.guess_non_members == 0) > np.sum(plain.guess_non_members == 0)
    block = attribute_inference(target, Xm, ym, Xn, yn, feature=[4, 5, 6])  # default: loss
    assert block.advantage > 0.1
    assert block.candidates.tolist()[0] == [1.0, 0.0, 0.0]  # the majority level first


def test_attribute_inference_without_the_feature_is_the_baseline(tmp_path):
    Xm, ym = _planted(150, 0)
    Xn, yn = _planted(150, 1)
    blind = make_pipeline(ColumnTransformer([("drop", "drop", [0])], remainder="passthrough"),
                          KNeighborsClassifier(n_neighbors=1)).fit(Xm, ym)
    res = attribute_inference(blind, Xm, ym, Xn, yn, feature=0, signal=_loss)
    # every candidate scores the same: the guess is the majority value
    assert res.accuracy_members == res.baseline_members
    assert res.accuracy_non_members == res.baseline_non_members
    assert abs(res.advantage) < 0.1
    # candidates given minority first: ties still go to the majority value
    given = attribute_inference(blind, Xm, ym, Xn, yn, feature=0, values=[1.0, 0.0],
                                signal=_loss)
    assert given.candidates.tolist() == [[0.0], [1.0]]
    assert given.accuracy_members == res.accuracy_members
    frame = res.to_frame()
    assert frame["member"].sum() == 150 and (frame["guess"] == 0).all()
    back = AttributeInferenceResult.from_json(res.to_json(path=tmp_path / "a.json"))
    assert back == res and back.summary() == res.summary()
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    ax = res.plot()
    heights = [p.get_height() for p in ax.patches]
    assert heights == [res.accuracy_members, res.accuracy_non_members, res.baseline_members,
                       res.baseline_non_members]
    matplotlib.pyplot.close("all")


def test_attribute_inference_through_an_extracted_surrogate():
    Xm, ym = _planted(120, 0)
    Xn, yn = _planted(120, 1)
    box = LogisticRegression().fit(Xm, Xm[:, 0] > 0.5)
    res = model_extraction(None, box, _planted(200, 2)[0], Xn, n_queries=100,
                           strategies=("queries",), surrogate=LogisticRegression(),
                           return_surrogates=True)
    surrogate = res.surrogate("queries")
    labels_m, labels_n = box.predict(Xm), box.predict(Xn)
    out = attribute_inference(surrogate, Xm, labels_m, Xn, labels_n, feature=0, signal=_loss)
    # the label is the attribute: the surrogate learnt it on any row, member or not
    assert out.accuracy_members > 0.9 and out.accuracy_non_members > 0.9


@pytest.mark.parametrize("kwargs, message", [
    ({"feature": 9}, "not a column index"),
    ({"feature": []}, "non-empty"),
    ({"feature": [4, 4]}, "twice"),
    ({"feature": 0, "values": [0.0]}, "not among the candidate values"),
    ({"feature": 0, "values": [[0.0, 1.0]]}, "at least one candidate of 1"),
])
def test_attribute_inference_bad_input(kwargs, message):
    Xm, ym = _planted(20, 0)
    target = LogisticRegression().fit(Xm, ym)
    with pytest.raises(ValueError, match=message):
        attribute_inference(target, Xm, ym, Xm, ym, signal=_loss, **kwargs)



@pytest.mark.filterwarnings("ignore:accountant=None")
def test_with_privrecourse_and_counterfactual_distance():
    from skdpx.recourse import PrivRecourse

    box = _LinearBox()
    X = _data(900, 3)
    X[:, 0] = np.where(X[:, 0] > 0, 0.5, -0.5)  # a discrete attribute
    f = LogisticRegression().fit(X[:300], box.predict(X[:300]))
    recourse = PrivRecourse(f, epsilon=np.inf, n_clusters=20, bounds=(-1, 1),
                            random_state=0).fit(X[300:600])
    res = model_extraction(recourse, f, X[600:], X[:300], n_queries=(30, 100),
                           strategies=("queries", "counterfactuals", "dualcf"),
                           surrogate=_linear_surrogate())
    frame = res.to_frame().set_index(["strategy", "n_queries"])
    # RecoursePaths' end points for the unfavourable queries; recourse is one-way: no duals
    assert frame.loc[("counterfactuals", 100), "n_train"] > 100
    assert frame.loc[("dualcf", 100), "n_train"] == frame.loc[("counterfactuals", 100), "n_train"]
    out = attribute_inference(recourse, X[300:400], f.predict(X[300:400]), X[:100],
                              f.predict(X[:100]), feature=0, signal="counterfactual_distance")
    assert len(out.guess_members) == 100 and out.candidates.shape == (2, 1)
    assert 0 <= out.accuracy_members <= 1 and out.signal == "counterfactual_distance"
