"""Result objects in readable units (issue 19, items 3 and 8): attributions
scaled by public ranges and grouped per original column, counterfactual
change tables in original units, notebook HTML, and LocallyLinearMaps."""

import json

import numpy as np
import pytest

from skdpx.results import (
    CounterfactualSet,
    FeatureAttribution,
    LocallyLinearMaps,
    RecoursePaths,
)

pd = pytest.importorskip("pandas")

SPENT = {"epsilon_spent": 1.0, "delta_spent": 1e-5}
# age (years, range 73), capital-gain (dollars, range 99,999), sex one-hot
NAMES = ["age", "capital-gain", "sex_Female", "sex_Male"]
RANGE = [73.0, 99999.0, 1.0, 1.0]
GROUPS = [("age", [0]), ("capital-gain", [1]), ("sex", [2, 3])]


def make_fa(**kw):
    params = dict(
        values=[[0.01, 2e-5, 0.3, -0.2], [-0.02, -4.9e-8, -0.1, 0.4]],
        epsilon=0.5, feature_names=NAMES, feature_range=RANGE, groups=GROUPS, **SPENT,
    )
    params.update(kw)
    return FeatureAttribution(**params)


def _labels(ax):
    return [t.get_text() for t in ax.get_yticklabels()]


# ---------------------------------------------------------------------------
# FeatureAttribution: public ranges
# ---------------------------------------------------------------------------


def test_scaled_values_are_per_public_range():
    fa = make_fa()
    np.testing.assert_allclose(fa.scaled_values, fa.values * np.array(RANGE))
    # a per-dollar weight times 99,999 dollars outweighs a per-year weight times 73
    assert abs(fa.scaled_values[0, 1]) > abs(fa.scaled_values[0, 0])
    assert abs(fa.values[0, 1]) < abs(fa.values[0, 0])
    # a scalar range broadcasts; no range: scaled values are refused, not faked
    np.testing.assert_allclose(make_fa(feature_range=2.0).scaled_values, 2 * make_fa().values)
    with pytest.raises(ValueError, match="feature_range"):
        make_fa(feature_range=None).scaled_values


@pytest.mark.parametrize("bad", [[1.0, 2.0], [1.0, -1.0, 1.0, 1.0], [1.0, np.inf, 1.0, 1.0],
                                 "wide"])
def test_feature_range_validation(bad):
    with pytest.raises(ValueError, match="feature_range"):
        make_fa(feature_range=bad)


def test_plot_ranks_and_labels_by_public_range(plt):
    fa = make_fa(groups=None)
    ax = fa.plot(0, top_k=2)
    assert _labels(ax)[::-1] == ["capital-gain", "age"]  # largest on top
    assert "range" in ax.get_xlabel()
    widths = sorted(p.get_width() for p in ax.patches)
    np.testing.assert_allclose(widths, sorted([0.73, 2e-5 * 99999]))
    # per unit: capital-gain looks irrelevant, and the label says per unit
    ax = fa.plot(0, top_k=2, scaled=False)
    assert "capital-gain" not in _labels(ax)
    assert "per unit" in ax.get_xlabel()
    with pytest.raises(ValueError, match="feature_range"):
        make_fa(feature_range=None).plot(scaled=True)


# ---------------------------------------------------------------------------
# FeatureAttribution: per original column
# ---------------------------------------------------------------------------


def test_grouped_values_numeric_signed_one_hot_spread():
    fa = make_fa()
    assert fa.group_names == ["age", "capital-gain", "sex"]
    expected = [[0.73, 2e-5 * 99999, 0.3 - (-0.2)],
                [-1.46, -4.9e-8 * 99999, 0.4 - (-0.1)]]
    np.testing.assert_allclose(fa.grouped_values(), expected)
    # unscaled: numeric per unit, the one-hot block's spread is the same
    np.testing.assert_allclose(fa.grouped_values(scaled=False)[:, 0], [0.01, -0.02])
    np.testing.assert_allclose(fa.grouped_values(scaled=False)[:, 2], [0.5, 0.5])


def test_one_hot_spread_ignores_the_arbitrary_shift_of_a_block():
    # adding a constant to every level's weight gives the same model
    fa = make_fa()
    shifted = fa.values.copy()
    shifted[:, 2:] += 7.0
    np.testing.assert_allclose(make_fa(values=shifted).grouped_values(), fa.grouped_values())


def test_to_frame_grouped_and_levels():
    fa = make_fa()
    df = fa.to_frame(grouped=True)
    assert list(df.columns) == ["age", "capital-gain", "sex"]
    np.testing.assert_allclose(df[["age", "capital-gain", "sex"]], fa.grouped_values())
    assert "range" in df.attrs["unit"] and "levels" in df.attrs["unit"]
    # the default is unchanged: per encoded feature, per unit
    df = fa.to_frame()
    assert list(df.columns) == NAMES
    np.testing.assert_array_equal(df[NAMES].to_numpy(), fa.values)
    # the per-level detail
    levels = fa.levels("sex")
    assert list(levels.columns) == ["sex_Female", "sex_Male"]
    np.testing.assert_array_equal(levels.to_numpy(), fa.values[:, 2:])
    with pytest.raises(ValueError, match="unknown column"):
        fa.levels("race")


def test_grouped_plot_one_bar_per_column(plt):
    fa = make_fa()
    ax = fa.plot(1)
    assert sorted(_labels(ax)) == ["age", "capital-gain", "sex"]
    assert _labels(ax)[-1] == "age"  # |-1.46| is the largest
    sex = _labels(ax).index("sex")
    assert ax.patches[sex].get_facecolor()[:3] == pytest.approx((0.498, 0.498, 0.498), abs=0.01)
    assert "levels" in ax.get_xlabel()
    # per feature on request
    assert sorted(_labels(fa.plot(1, grouped=False))) == sorted(NAMES)


def test_groups_accept_a_dict_and_name_the_features():
    fa = FeatureAttribution([[1.0, 2.0, 3.0]], epsilon=1.0,
                            groups={"age": [0], "sex": [1, 2]}, **SPENT)
    assert fa.feature_names == ["age", "sex[0]", "sex[1]"]
    assert fa.group_names == ["age", "sex"]
    np.testing.assert_allclose(fa.grouped_values(), [[1.0, 1.0]])


@pytest.mark.parametrize("groups, match", [
    ([("age", [0]), ("capital-gain", [1]), ("sex", [2])], "exactly once"),
    ([("age", [0, 1]), ("capital-gain", [1]), ("sex", [2, 3])], "exactly once"),
    ([("age", [0]), ("capital-gain", [1]), ("sex", [2, 4])], "outside"),
    ([("age", [0]), ("age", [1]), ("sex", [2, 3])], "unique"),
    ([("age", [0]), ("capital-gain", []), ("sex", [1, 2, 3])], "at least one"),
    (["age", "sex"], "pairs"),
])
def test_groups_validation(groups, match):
    with pytest.raises(ValueError, match=match):
        make_fa(groups=groups)


def test_json_and_rows_keep_ranges_and_groups():
    fa = make_fa()
    back = FeatureAttribution.from_json(fa.to_json())
    assert back == fa
    np.testing.assert_array_equal(back.feature_range, RANGE)
    assert [(n, i.tolist()) for n, i in back.groups] == [(n, list(i)) for n, i in GROUPS]
    sub = fa[1:]
    np.testing.assert_allclose(sub.grouped_values(), fa.grouped_values()[1:])
    assert make_fa(groups=[("age", [0]), ("capital-gain", [1]), ("sex", [3, 2])]) != fa
    assert make_fa(feature_range=1.0) != fa


# ---------------------------------------------------------------------------
# Counterfactuals and recourse in original units
# ---------------------------------------------------------------------------


def _records():
    q = pd.DataFrame({"age": np.array([39, 50, 20], dtype=np.int64),
                      "sex": pd.Categorical(["Male", "Female", "Male"]),
                      "gain": [0.0, 100.0, 5.5]})
    c = pd.DataFrame({"age": np.array([45, 50, 20], dtype=np.int64),
                      "sex": pd.Categorical(["Female", "Female", "Male"]),
                      "gain": [0.0, 2000.0, 5.5]})
    return q, c


def make_cfs(**kw):
    q, c = _records()
    params = dict(
        queries=[[39, 0, 1, 0], [50, 1, 0, 100], [20, 0, 1, 5.5]],
        counterfactuals=[[45, 1, 0, 0], [50, 1, 0, 2000], [np.nan] * 4],
        desired_class=1, predicted_class=[1, 1, 0], query_records=q,
        counterfactual_records=c, feature_names=["age", "sex_F", "sex_M", "gain"], **SPENT,
    )
    params.update(kw)
    return CounterfactualSet(**params)


def test_changes_in_original_units():
    df = make_cfs().changes()
    assert list(df.columns) == ["query", "feature", "from", "to", "change"]
    assert df["query"].tolist() == [0, 0, 1]  # the failed query 2 is left out
    assert df["feature"].tolist() == ["age", "sex", "gain"]
    assert df["from"].tolist() == [39, "Male", 100.0]
    assert df["to"].tolist() == [45, "Female", 2000.0]
    assert type(df["from"][0]) is int  # an integer column stays an integer
    np.testing.assert_array_equal(df["change"], [6.0, np.nan, 1900.0])
    assert make_cfs().changes(1)["feature"].tolist() == ["gain"]


def test_changes_without_records_are_per_feature():
    cfs = make_cfs(query_records=None, counterfactual_records=None)
    df = cfs.changes()
    assert df["feature"].tolist() == ["age", "sex_F", "sex_M", "gain"]
    np.testing.assert_array_equal(df["change"], [6.0, 1.0, -1.0, 1900.0])
    assert len(cfs[[2]].changes()) == 0


def test_records_validation():
    q, c = _records()
    with pytest.raises(ValueError, match="both"):
        make_cfs(counterfactual_records=None)
    with pytest.raises(ValueError, match="rows"):
        make_cfs(query_records=q.iloc[:2])
    with pytest.raises(ValueError, match="same columns"):
        make_cfs(counterfactual_records=c.rename(columns={"gain": "capital"}))


def test_records_round_trip_and_rows():
    cfs = make_cfs()
    back = CounterfactualSet.from_json(cfs.to_json())
    assert back == cfs
    assert back.counterfactual_records["age"].dtype == np.int64
    assert back.counterfactual_records["sex"].tolist() == ["Female", "Female", "Male"]
    sub = cfs[[2, 0]]
    assert sub.query_records["age"].tolist() == [20, 39]
    assert sub.changes()["query"].tolist() == [1, 1]
    # handed out as copies
    got = cfs.counterfactual_records
    got.loc[0, "age"] = 99
    assert cfs.counterfactual_records.loc[0, "age"] == 45
    assert make_cfs(counterfactual_records=_records()[0]) != cfs


def test_to_frame_in_original_units():
    cfs = make_cfs()
    df = cfs.to_frame()
    assert list(df.columns) == ["age", "sex", "gain", "desired_class", "predicted_class",
                                "valid", "distance", "found_by", "plausibility", "reason",
                                "query_index"]
    assert df["sex"].tolist() == ["Female", "Female", "Male"]
    assert df["age"].dtype == np.int64 and isinstance(df["sex"].dtype, pd.CategoricalDtype)
    assert list(cfs.to_frame(original=False).columns)[:4] == ["age", "sex_F", "sex_M", "gain"]
    with pytest.raises(ValueError, match="counterfactual_records"):
        make_cfs(query_records=None, counterfactual_records=None).to_frame(original=True)


def test_counterfactual_plot_in_original_units(plt):
    ax = make_cfs().plot(0)
    assert _labels(ax) == ["age: 39 \u2192 45", "sex: Male \u2192 Female"]  # categorical on top
    np.testing.assert_allclose([p.get_width() for p in ax.patches], [6.0, 0.0])
    assert "original units" in ax.get_xlabel()


def test_recourse_changes_in_original_units():
    q, c = _records()
    rp = RecoursePaths([[39, 0, 1, 0], [50, 1, 0, 100], [20, 0, 1, 5.5]],
                       [[[39, 0, 1, 0], [45, 1, 0, 0]], [[50, 1, 0, 100], [50, 1, 0, 2000]],
                        [[20, 0, 1, 5.5]]],
                       cost=[1.0, 2.0, np.inf], success=[True, True, False],
                       query_records=q, counterfactual_records=c, **SPENT)
    assert rp.changes()["feature"].tolist() == ["age", "sex", "gain"]
    assert RecoursePaths.from_json(rp.to_json()) == rp
    assert "age: 39 \u2192 45; sex: Male \u2192 Female" in rp._repr_html_()


# ---------------------------------------------------------------------------
# _repr_html_
# ---------------------------------------------------------------------------


def test_repr_html_is_compact_and_escaped():
    n, d = 25, 30
    names = ["<b>x0</b>"] + [f"x{j}" for j in range(1, d)]
    fa = FeatureAttribution(np.ones((n, d)), epsilon=0.5, feature_names=names, **SPENT)
    text = fa._repr_html_()
    assert "<b>x0</b>" not in text and "&lt;b&gt;x0&lt;/b&gt;" in text
    assert text.count("<tr>") == 1 + 10 + 1  # header, 10 rows, "... 15 more"
    assert "15 more rows" in text and "more columns" in text
    assert "per unit" in text  # says what the values are
    # cells are escaped too
    tagged = FeatureAttribution([[1.0]], epsilon=0.5, phase="<i>fit</i>", **SPENT)._repr_html_()
    assert "<i>" not in tagged and "&lt;i&gt;fit&lt;/i&gt;" in tagged
    short = fa[:3]._repr_html_()
    assert "more rows" not in short and short.count("<tr>") == 4


def test_repr_html_of_every_result():
    text = make_cfs()._repr_html_()
    assert "age: 39 \u2192 45; sex: Male \u2192 Female" in text and "original units" in text
    maps = make_maps()
    text = maps._repr_html_()
    assert "weight" in text and "largest values" in text
    assert text.count("<tr>") == 1 + 3 * 2


# ---------------------------------------------------------------------------
# LocallyLinearMaps
# ---------------------------------------------------------------------------


def make_maps(**kw):
    rng = np.random.RandomState(0)
    params = dict(
        coef=rng.normal(size=(3, 2, 6)), intercept=rng.normal(size=(3, 2)),
        classes=["a", "b", "c"], weights=[[0.2, 0.8], [0.6, 0.4], [np.nan, np.nan]],
        support=[5, 7, 0], feature_names=[f"p{j}" for j in range(6)],
        feature_range=np.arange(1.0, 7.0), **SPENT,
    )
    params.update(kw)
    return LocallyLinearMaps(**params)


def test_maps_fields_order_and_frame():
    maps = make_maps()
    assert len(maps) == 3 and maps.n_maps == 2 and maps.n_features == 6
    assert maps.top_maps().tolist() == [[1, 0], [0, 1], [0, 1]]  # NaN: map order
    assert maps.top_maps(1).tolist() == [[1], [0], [0]]
    np.testing.assert_allclose(maps.scaled_coef, maps.coef * np.arange(1.0, 7.0))
    df = maps.to_frame()
    assert list(df.columns[:4]) == ["class", "map", "weight", "intercept"]
    assert df["class"].tolist() == ["a", "a", "b", "b", "c", "c"]
    np.testing.assert_array_equal(df[maps.feature_names].to_numpy(), maps.coef.reshape(6, 6))
    assert maps[1:].classes.tolist() == ["b", "c"]
    back = LocallyLinearMaps.from_json(maps.to_json())
    assert back == maps
    json.loads(maps.to_json())


def test_maps_grouped():
    maps = make_maps(groups=[("u", [0]), ("v", [1, 2, 3]), ("w", [4, 5])])
    g = maps.grouped_coef()
    s = maps.scaled_coef
    np.testing.assert_allclose(g[..., 0], s[..., 0])
    np.testing.assert_allclose(g[..., 1], s[..., 1:4].max(-1) - s[..., 1:4].min(-1))
    assert list(maps.to_frame(grouped=True).columns[4:]) == ["u", "v", "w"]


@pytest.mark.parametrize("kw, match", [
    ({"coef": np.ones((3, 6))}, "n_classes, n_maps, n_features"),
    ({"weights": [[0.2, 1.8], [0.6, 0.4], [0.5, 0.5]]}, r"\[0, 1\]"),
    ({"intercept": np.ones((3, 3))}, "intercept"),
    ({"classes": ["a", "b"]}, "classes"),
])
def test_maps_validation(kw, match):
    with pytest.raises(ValueError, match=match):
        make_maps(**kw)


def test_maps_plot_images_top_maps_by_weight(plt):
    maps = make_maps()
    fig = maps.plot(image_shape=(2, 3), top_maps=2, classes=["a", "b"])
    assert len(fig.axes) == 4
    titles = [ax.get_title() for ax in fig.axes]
    assert titles[0] == "a, map 1\nweight 0.80" and titles[1] == "a, map 0\nweight 0.20"
    np.testing.assert_array_equal(fig.axes[0].images[0].get_array(),
                                  maps.coef[0, 1].reshape(2, 3))
    # a colour scale centred on 0
    lo, hi = fig.axes[0].images[0].get_clim()
    assert lo == -hi
    assert maps.plot(image_shape=(2, 3), classes="c").axes[0].get_title() == "c, map 0"
    with pytest.raises(ValueError, match="image_shape"):
        maps.plot(image_shape=(4, 4))
    with pytest.raises(ValueError, match="unknown class"):
        maps.plot(classes=["z"])


def test_maps_plot_bars_per_column(plt):
    maps = make_maps(groups=[("u", [0]), ("v", [1, 2, 3]), ("w", [4, 5])])
    fig = maps.plot(top_maps=1, classes=["b"])
    (ax,) = fig.axes
    assert sorted(_labels(ax)) == ["u", "v", "w"]
    np.testing.assert_allclose(sorted(p.get_width() for p in ax.patches),
                               sorted(maps.grouped_coef()[1, 0]))
    assert "range" in ax.get_xlabel()
    assert ax.get_legend().get_texts()[0].get_text() == "map 0 (weight 0.60)"


def test_repr_html_computes_only_the_rows_it_shows(monkeypatch):
    seen = []
    original = CounterfactualSet._html_columns

    def spy(self, head):
        seen.append(len(head))
        return original(self, head)

    monkeypatch.setattr(CounterfactualSet, "_html_columns", spy)
    n = 500
    cfs = CounterfactualSet(np.zeros((n, 2)), np.ones((n, 2)), desired_class=1,
                            predicted_class=1, **SPENT)
    assert "490 more rows" in cfs._repr_html_()
    assert seen == [10]
