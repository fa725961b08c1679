"""Tests of the result objects in skdpx.results."""

import json
import sys

import numpy as np
import pytest

from skdpx.results import CounterfactualSet, FeatureAttribution, RecoursePaths

SPENT = {"epsilon_spent": 1.5, "delta_spent": 1e-5}


def make_fa(**kw):
    params = dict(
        values=[[0.5, -0.2, 0.0], [0.1, 0.3, -0.9], [0.0, 0.9, 0.2]],
        epsilon=[0.5, 0.5, 0.25],
        phase=["fit", None, "release"],
        feature_names=["age", "hours", "capital"],
        meta={"estimator": "DPLimeExplainer"},
        **SPENT,
    )
    params.update(kw)
    return FeatureAttribution(**params)


def make_cfs(**kw):
    params = dict(
        queries=[[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]],
        counterfactuals=[[0.5, 0.0], [np.nan, np.nan], [2.0, 3.0]],
        desired_class=np.array([1, 1, 0], dtype=np.int64),
        predicted_class=np.array([1, 0, 1], dtype=np.int32),
        feature_names=["a", "b"],
        meta={"estimator": "DPCounterfactual"},
        **SPENT,
    )
    params.update(kw)
    return CounterfactualSet(**params)


def make_rp(**kw):
    params = dict(
        queries=[[0.0, 0.0], [5.0, 5.0], [1.0, 2.0]],
        paths=[
            [[0.0, 0.0], [0.5, 0.0], [1.0, 0.5]],
            [[5.0, 5.0]],
            [[1.0, 2.0], [1.0, 3.0]],
        ],
        cost=[1.5, np.inf, 1.0],
        success=[True, False, True],
        feature_names=["a", "b"],
        meta={"estimator": "DPRecourse"},
        **SPENT,
    )
    params.update(kw)
    return RecoursePaths(**params)


MAKERS = [make_fa, make_cfs, make_rp]


# ---------------------------------------------------------------------------
# construction and validation
# ---------------------------------------------------------------------------


def test_feature_attribution_fields():
    fa = make_fa()
    assert len(fa) == 3
    assert fa.values.shape == (3, 3) and fa.values.dtype == float
    assert fa.epsilon.dtype == float and fa.epsilon.tolist() == [0.5, 0.5, 0.25]
    assert fa.phase.tolist() == ["fit", None, "release"]
    assert fa.feature_names == ["age", "hours", "capital"]
    assert fa.n_features == 3


def test_defaults_and_scalar_broadcast():
    fa = FeatureAttribution(np.zeros((3, 2)), epsilon=0.7, epsilon_spent=2, delta_spent=0)
    assert fa.epsilon.shape == (3,)
    np.testing.assert_array_equal(fa.epsilon, [0.7, 0.7, 0.7])
    assert fa.phase.tolist() == [None, None, None]
    assert fa.feature_names == ["x0", "x1"]
    fa = FeatureAttribution(np.zeros((2, 2)), epsilon=1, phase="fit", **SPENT)
    assert fa.phase.tolist() == ["fit", "fit"]
    cfs = CounterfactualSet([[0.0], [1.0]], [[1.0], [2.0]], desired_class="yes",
                            predicted_class=["yes", "no"], **SPENT)
    assert cfs.desired_class.tolist() == ["yes", "yes"]


def test_input_arrays_are_copied_and_read_only():
    values = np.zeros((2, 2))
    fa = FeatureAttribution(values, epsilon=1.0, **SPENT)
    values[0, 0] = 5.0
    assert fa.values[0, 0] == 0.0
    assert values.flags.writeable  # the caller's array is untouched
    with pytest.raises(ValueError):
        fa.values[0, 0] = 1.0


@pytest.mark.parametrize(
    "make, bad",
    [
        (make_fa, {"epsilon": [0.5, 0.5]}),
        (make_fa, {"phase": ["fit"]}),
        (make_fa, {"feature_names": ["age", "hours"]}),
        (make_fa, {"feature_names": ["age", "age", "x"]}),
        (make_fa, {"values": [1.0, 2.0, 3.0]}),
        (make_fa, {"values": [["a", "b", "c"]], "epsilon": 1.0, "phase": None}),
        (make_fa, {"phase": ["fit", 3, None]}),
        (make_cfs, {"counterfactuals": [[0.5, 0.0], [1.0, 1.0]]}),
        (make_cfs, {"counterfactuals": [[0.5], [1.0], [2.0]]}),
        (make_cfs, {"predicted_class": [1, 0]}),
        (make_cfs, {"valid": [True, False]}),
        (make_cfs, {"valid": [2, 0, 1]}),
        (make_cfs, {"distance": [1.0, 2.0, 3.0, 4.0]}),
        (make_rp, {"paths": [[[0.0, 0.0]], [[5.0, 5.0]]]}),
        (make_rp, {"paths": [[[0.0, 0.0]], [[5.0, 5.0]], [[9.0, 9.0]]]}),  # not query first
        (make_rp, {"paths": [[[0.0, 0.0]], np.empty((0, 2)), [[1.0, 2.0]]]}),
        (make_rp, {"paths": [[[0.0, 0.0, 0.0]], [[5.0, 5.0]], [[1.0, 2.0]]]}),
        (make_rp, {"cost": [1.0]}),
        (make_rp, {"success": [True, False]}),
        (make_rp, {"counterfactuals": [[1.0, 0.5]]}),
        (make_rp, {"epsilon_spent": -1.0}),
        (make_rp, {"delta_spent": float("nan")}),
        (make_rp, {"meta": {"epsilon_spent": 3.0}}),  # disagrees with epsilon_spent
    ],
)
def test_validation_errors(make, bad):
    with pytest.raises(ValueError):
        make(**bad)


@pytest.mark.parametrize("missing", ["epsilon_spent", "delta_spent"])
def test_spend_is_required(missing):
    kw = dict(SPENT)
    del kw[missing]
    with pytest.raises(TypeError, match=missing):
        FeatureAttribution([[1.0]], epsilon=1.0, **kw)


@pytest.mark.parametrize("make", MAKERS)
def test_meta_holds_spend_and_extras(make):
    obj = make()
    assert obj.meta["epsilon_spent"] == 1.5 and isinstance(obj.meta["epsilon_spent"], float)
    assert obj.meta["delta_spent"] == 1e-5
    assert obj.epsilon_spent == 1.5 and obj.delta_spent == 1e-5
    assert "estimator" in obj.meta
    # an agreeing copy in meta is fine
    same = make(meta={"epsilon_spent": 1.5, "note": "x"})
    assert same.meta == {"epsilon_spent": 1.5, "delta_spent": 1e-5, "note": "x"}
    # the caller's dict is copied, not stored or modified
    given = {"note": "x"}
    obj = make(meta=given)
    assert given == {"note": "x"} and obj.meta is not given


def test_counterfactual_defaults_valid_and_distance():
    cfs = make_cfs()
    # valid: predicted == desired, and a counterfactual was found
    assert cfs.valid.tolist() == [True, False, False]
    np.testing.assert_allclose(cfs.distance, [0.5, np.nan, 1.0])
    explicit = make_cfs(valid=[1, 0, 1], distance=[1.0, np.nan, 2.0])
    assert explicit.valid.dtype == bool and explicit.valid.tolist() == [True, False, True]
    assert explicit.distance.tolist()[2] == 2.0


def test_recourse_default_counterfactuals():
    rp = make_rp()
    np.testing.assert_array_equal(rp.counterfactuals, [[1.0, 0.5], [np.nan, np.nan], [1.0, 3.0]])
    assert [p.shape for p in rp.paths] == [(3, 2), (1, 2), (2, 2)]
    assert rp.success.dtype == bool


# ---------------------------------------------------------------------------
# indexing
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("make", MAKERS)
@pytest.mark.parametrize(
    "key, rows",
    [(1, [1]), (-1, [2]), (slice(0, 2), [0, 1]), (np.array([2, 0]), [2, 0]),
     ([True, False, True], [0, 2]), (np.array([], dtype=int), [])],
)
def test_getitem_restricts_rows_and_keeps_meta(make, key, rows):
    obj = make()
    sub = obj[key]
    assert type(sub) is type(obj)
    assert len(sub) == len(rows)
    assert sub.meta == obj.meta and sub.meta is not obj.meta
    assert sub.feature_names == obj.feature_names
    for name in obj._row_fields:
        full, part = getattr(obj, name), getattr(sub, name)
        if full is None:  # an optional field not given
            assert part is None
            continue
        assert len(part) == len(rows)
        for got, i in zip(part, rows):
            np.testing.assert_array_equal(got, full[i])


def test_getitem_bad_keys():
    fa = make_fa()
    with pytest.raises(IndexError):
        fa[10]
    with pytest.raises(IndexError):
        fa[[True, False]]


def test_getitem_boolean_mask_from_field():
    cfs = make_cfs()
    ok = cfs[cfs.valid]
    assert len(ok) == 1 and ok.valid.all()
    np.testing.assert_array_equal(ok.counterfactuals, [[0.5, 0.0]])


# ---------------------------------------------------------------------------
# equality, repr, JSON
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("make", MAKERS)
def test_equality(make):
    assert make() == make()
    assert make() != make(meta={"estimator": "other"})
    assert make() != make(epsilon_spent=2.0)
    assert make() != make()[:2]


def test_equality_detects_value_change():
    assert make_fa() != make_fa(epsilon=0.1)
    assert make_cfs() != make_cfs(predicted_class=[1, 1, 1])
    paths = [[[0.0, 0.0], [0.5, 0.0], [1.0, 0.6]], [[5.0, 5.0]], [[1.0, 2.0], [1.0, 3.0]]]
    assert make_rp() != make_rp(paths=paths)


@pytest.mark.parametrize("make", MAKERS)
def test_repr(make):
    text = repr(make())
    assert text.startswith(type(make()).__name__ + "(n=")
    assert "epsilon_spent=1.5" in text


@pytest.mark.parametrize("make", MAKERS)
def test_json_round_trip(make):
    obj = make()
    text = obj.to_json()
    payload = json.loads(text)  # strict JSON: no bare NaN / Infinity tokens
    assert payload["type"] == type(obj).__name__
    assert "NaN" not in text
    back = type(obj).from_json(text)
    assert back == obj
    assert back.meta == obj.meta
    for name in obj._row_fields:
        if getattr(obj, name) is None:  # an optional field not given
            assert getattr(back, name) is None
            continue
        for a, b in zip(getattr(back, name), getattr(obj, name)):
            np.testing.assert_array_equal(a, b)


def test_json_nan_rows_and_numpy_labels():
    cfs = make_cfs(meta={"n_iter": np.int64(7), "scale": np.float32(0.5)})
    back = CounterfactualSet.from_json(cfs.to_json())
    assert np.isnan(back.counterfactuals[1]).all()
    assert np.isnan(back.distance[1])
    assert back.desired_class.dtype.kind == "i"
    assert back.desired_class.tolist() == [1, 1, 0]
    assert back.predicted_class.tolist() == [1, 0, 1]
    assert back.meta["n_iter"] == 7 and back.meta["scale"] == 0.5
    assert back == cfs


def test_json_infinity_and_string_labels():
    rp = make_rp()
    back = RecoursePaths.from_json(rp.to_json())
    assert back.cost[1] == np.inf
    cfs = make_cfs(desired_class="good", predicted_class=["good", "bad", "good"])
    back = CounterfactualSet.from_json(cfs.to_json())
    assert back.desired_class.tolist() == ["good"] * 3
    assert back == cfs


def test_json_empty_object_round_trip():
    empty = make_fa()[[]]
    back = FeatureAttribution.from_json(empty.to_json())
    assert len(back) == 0 and back.values.shape == (0, 3)
    assert back == empty


@pytest.mark.parametrize("make", MAKERS)
def test_to_json_path_writes_file(make, tmp_path):
    obj = make()
    path = tmp_path / "result.json"
    text = obj.to_json(path)
    assert path.read_text(encoding="utf-8") == text
    assert type(obj).from_json(path) == obj
    assert type(obj).from_json(str(path)) == obj


def test_from_json_wrong_type():
    with pytest.raises(ValueError, match="CounterfactualSet"):
        FeatureAttribution.from_json(make_cfs().to_json())


# ---------------------------------------------------------------------------
# to_frame
# ---------------------------------------------------------------------------


def test_feature_attribution_to_frame():
    pd = pytest.importorskip("pandas")
    fa = make_fa()
    df = fa.to_frame()
    # attributions only in the columns (df.abs() ranks them); cost and phase in the index
    assert df.shape == (3, 3)
    assert list(df.columns) == ["age", "hours", "capital"]
    np.testing.assert_array_equal(df.to_numpy(), fa.values)
    assert list(df.index.names) == ["row", "epsilon", "phase"]
    np.testing.assert_array_equal(df.index.get_level_values("epsilon"), fa.epsilon)
    phases = df.index.get_level_values("phase")
    assert phases[0] == "fit" and pd.isna(phases[1]) and phases[2] == "release"
    assert list(df.reset_index().columns) == ["row", "epsilon", "phase", "age", "hours", "capital"]
    assert df.attrs["meta"] == fa.meta
    # no phase level when all phases are None
    df = make_fa(phase=None).to_frame()
    assert list(df.index.names) == ["row", "epsilon"]


def test_counterfactual_set_to_frame():
    pytest.importorskip("pandas")
    cfs = make_cfs()
    df = cfs.to_frame()
    assert list(df.columns) == ["a", "b", "desired_class", "predicted_class", "valid", "distance",
                                "found_by", "plausibility", "reason", "query_index"]
    assert df.shape == (3, 10)
    # a result that does not say how its rows were found: None and NaN, one row per query
    assert df["found_by"].isna().all() and df["plausibility"].isna().all()
    assert df["query_index"].tolist() == [0, 1, 2]
    assert df["valid"].tolist() == [True, False, False]
    assert df[["a", "b"]].iloc[1].isna().all()
    assert df.attrs["meta"]["epsilon_spent"] == 1.5


def test_counterfactual_set_search_fields_round_trip_and_show():
    pytest.importorskip("pandas")
    cfs = CounterfactualSet(
        [[0.0, 0.0], [0.0, 0.0], [1.0, 1.0]], [[0.5, 0.0], [0.0, 0.7], [np.nan, np.nan]],
        desired_class=1, predicted_class=[1, 1, 0], found_by=["latent", "score", None],
        plausibility=[0.6, 0.05, np.nan], reason=[None, None, "perturbation withheld"],
        query_index=[0, 0, 1], epsilon_spent=1.0, delta_spent=0.0)
    back = CounterfactualSet.from_json(cfs.to_json())
    assert back == cfs
    assert back.found_by.tolist() == ["latent", "score", None]
    assert back.reason.tolist() == [None, None, "perturbation withheld"]
    np.testing.assert_array_equal(back.query_index, [0, 0, 1])
    sub = cfs[1:]
    assert sub.found_by.tolist() == ["score", None] and sub.query_index.tolist() == [0, 1]
    df = cfs.to_frame()
    assert df["found_by"].tolist()[:2] == ["latent", "score"] and df["found_by"].isna()[2]
    np.testing.assert_allclose(df["plausibility"], [0.6, 0.05, np.nan])
    html = cfs._repr_html_()
    for text in ("found_by", "plausibility", "reason", "perturbation withheld", "latent"):
        assert text in html
    # JSON written before these fields existed still reads (one row per query)
    old = json.loads(cfs[:1].to_json())
    for key in ("found_by", "plausibility", "reason", "query_index"):
        del old[key]
    assert CounterfactualSet.from_json(json.dumps(old)).query_index.tolist() == [0]
    with pytest.raises(ValueError, match="query_index"):
        CounterfactualSet([[0.0]], [[1.0]], desired_class=1, predicted_class=1,
                          query_index=[-1], epsilon_spent=0, delta_spent=0)
    with pytest.raises(ValueError, match="found_by"):
        CounterfactualSet([[0.0]], [[1.0]], desired_class=1, predicted_class=1,
                          found_by=[3], epsilon_spent=0, delta_spent=0)


def test_recourse_paths_to_frame():
    pytest.importorskip("pandas")
    rp = make_rp()
    df = rp.to_frame()
    assert list(df.columns) == ["query", "step", "a", "b", "cost", "success"]
    assert len(df) == 3 + 1 + 2
    assert df["query"].tolist() == [0, 0, 0, 1, 2, 2]
    assert df["step"].tolist() == [0, 1, 2, 0, 0, 1]
    # step 0 is the query itself
    np.testing.assert_array_equal(df.loc[df["step"] == 0, ["a", "b"]].to_numpy(), rp.queries)
    assert df["success"].tolist() == [True, True, True, False, True, True]
    assert df.attrs["meta"] == rp.meta
    assert rp[[]].to_frame().shape == (0, 6)


def test_to_frame_column_clash():
    pytest.importorskip("pandas")
    fa = FeatureAttribution([[1.0, 2.0]], epsilon=1.0, feature_names=["epsilon", "b"], **SPENT)
    with pytest.raises(ValueError, match="clash"):
        fa.to_frame()


@pytest.mark.parametrize("make", MAKERS)
def test_to_frame_without_pandas(make, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r"pandas.*pip install"):
        make().to_frame()


# ---------------------------------------------------------------------------
# plot
# ---------------------------------------------------------------------------


def test_feature_attribution_plot(plt):
    from matplotlib.axes import Axes

    fa = make_fa()
    ax = fa.plot(index=1, top_k=2)
    assert isinstance(ax, Axes)
    assert len(ax.patches) == 2
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["hours", "capital"]  # largest |attribution| on top
    assert "0.5" in ax.get_title()
    # draws on a given axes
    _, given = plt.subplots()
    assert fa.plot(ax=given) is given


def test_counterfactual_set_plot(plt):
    from matplotlib.axes import Axes

    cfs = make_cfs()
    ax = cfs.plot(index=2)
    assert isinstance(ax, Axes)
    widths = sorted(p.get_width() for p in ax.patches)
    assert widths == [0.0, 1.0]
    # a failed row still gives an Axes
    assert isinstance(cfs.plot(index=1), Axes)


def test_recourse_paths_plot(plt):
    from matplotlib.axes import Axes

    rp = make_rp()
    ax = rp.plot(index=0, features=("b", 0))
    assert isinstance(ax, Axes)
    x, y = ax.lines[0].get_data()
    np.testing.assert_array_equal(x, [0.0, 0.0, 0.5])
    np.testing.assert_array_equal(y, [0.0, 0.5, 1.0])
    assert ax.get_xlabel() == "b" and ax.get_ylabel() == "a"
    with pytest.raises(ValueError, match="unknown feature"):
        rp.plot(features=("a", "zzz"))
    with pytest.raises(ValueError, match="out of range"):
        rp.plot(features=(0, 5))


def test_plot_without_matplotlib(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"skdpx\[plot\]"):
        make_fa().plot()
