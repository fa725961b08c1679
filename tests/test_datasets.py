"""Tests of skdpx.datasets: the bundled UCI Adult data and its public encoding."""

import gzip
import re
from importlib import resources

import numpy as np
import pytest

from skdpx.datasets import adult_schema, encode_adult, load_adult

FEATURES = [
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
]
NUMERIC = ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
CATEGORICAL = [f for f in FEATURES if f not in NUMERIC]
CONTINUOUS = ["age", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
N_CATEGORIES = {
    "workclass": 8,
    "education": 16,
    "marital-status": 7,
    "occupation": 14,
    "relationship": 6,
    "race": 5,
    "sex": 2,
    "native-country": 41,
}


@pytest.fixture(scope="module")
def train():
    return load_adult(subset="train")


@pytest.fixture(scope="module")
def test_split():
    return load_adult(subset="test")


def _is_missing(col):
    return np.array([isinstance(v, float) and np.isnan(v) for v in col])


def _names_categories():
    """Categories parsed here, independently, from the bundled adult.names."""
    ref = resources.files("skdpx.datasets").joinpath("data", "adult.names.gz")
    text = gzip.decompress(ref.read_bytes()).decode("ascii")
    out = {}
    for line in text.splitlines():
        m = re.match(r"^([a-z-]+): (.*)\.$", line)
        if m and m.group(2) != "continuous":
            out[m.group(1)] = m.group(2).split(", ")
    return out


# --------------------------------------------------------------------------
# load_adult
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "subset, n_rows, n_pos",
    [("train", 32561, 7841), ("test", 16281, 3846), ("all", 48842, 7841 + 3846)],
)
def test_row_counts_and_label_shares(subset, n_rows, n_pos):
    bunch = load_adult(subset=subset)
    assert bunch.data.shape == (n_rows, 14)
    assert bunch.data.dtype == object
    assert bunch.target.shape == (n_rows,)
    assert np.issubdtype(bunch.target.dtype, np.integer)
    assert set(np.unique(bunch.target).tolist()) == {0, 1}
    assert int(bunch.target.sum()) == n_pos
    assert bunch.frame is None


def test_all_is_train_then_test(train, test_split):
    full = load_adult(subset="all")
    n = train.data.shape[0]
    np.testing.assert_array_equal(full.target[:n], train.target)
    np.testing.assert_array_equal(full.target[n:], test_split.target)
    # spot-check raw rows (object arrays with NaN: compare as strings)
    assert full.data[0].astype(str).tolist() == train.data[0].astype(str).tolist()
    assert full.data[n].astype(str).tolist() == test_split.data[0].astype(str).tolist()


def test_bunch_metadata(train):
    assert train.feature_names == FEATURES
    assert train.target_names == ["<=50K", ">50K"]
    for key in ("data", "target", "frame", "feature_names", "target_names",
                "categories", "DESCR"):
        assert key in train


def test_first_records_parsed(train, test_split):
    assert train.data[0].tolist() == [
        39, "State-gov", 77516, "Bachelors", 13, "Never-married", "Adm-clerical",
        "Not-in-family", "White", "Male", 2174, 0, 40, "United-States",
    ]
    assert train.target[0] == 0
    # first test record (after the "|1x3 Cross validator" comment line)
    assert test_split.data[0].tolist() == [
        25, "Private", 226802, "11th", 7, "Never-married", "Machine-op-inspct",
        "Own-child", "Black", "Male", 0, 0, 40, "United-States",
    ]
    assert test_split.target[0] == 0


def test_value_types(train):
    for j, name in enumerate(FEATURES):
        col = train.data[:, j]
        if name in NUMERIC:
            assert all(isinstance(v, (int, np.integer)) for v in col[:500])
        else:
            missing = _is_missing(col)
            assert all(isinstance(v, str) for v in col[~missing])
            assert not any(v == "?" for v in col)
            assert not any(v is None for v in col)


@pytest.mark.parametrize(
    "subset, expected",
    [
        ("train", {"workclass": 1836, "occupation": 1843, "native-country": 583}),
        ("test", {"workclass": 963, "occupation": 966, "native-country": 274}),
    ],
)
def test_missing_counts(subset, expected):
    data = load_adult(subset=subset).data
    counts = {name: int(_is_missing(data[:, j]).sum()) for j, name in enumerate(FEATURES)}
    for name in FEATURES:
        assert counts[name] == expected.get(name, 0), name
    any_missing = np.zeros(data.shape[0], dtype=bool)
    for j in range(14):
        any_missing |= _is_missing(data[:, j])
    assert int(any_missing.sum()) == {"train": 2399, "test": 1221}[subset]


def test_categories_from_public_schema(train, test_split):
    expected = _names_categories()
    assert set(train.categories) == set(CATEGORICAL)
    for name in CATEGORICAL:
        if name == "education":  # schooling order (the Census codes), the same levels
            assert sorted(train.categories[name]) == sorted(expected[name])
            assert train.categories[name] != expected[name]
        else:
            assert train.categories[name] == expected[name]
        assert len(train.categories[name]) == N_CATEGORIES[name]
    # not from the data: identical for every subset, including a category
    # that never occurs in the test split
    assert test_split.categories == train.categories
    j = FEATURES.index("native-country")
    assert "Holand-Netherlands" in test_split.categories["native-country"]
    assert "Holand-Netherlands" not in set(test_split.data[:, j].tolist())
    # but contain every category seen in the data
    full = load_adult(subset="all")
    for name in CATEGORICAL:
        col = full.data[:, FEATURES.index(name)]
        seen = set(col[~_is_missing(col)].tolist())
        assert seen <= set(full.categories[name]), name


def test_return_X_y(train):
    X, y = load_adult(subset="train", return_X_y=True)
    assert isinstance(X, np.ndarray) and X.shape == (32561, 14)
    np.testing.assert_array_equal(y, train.target)
    assert X[:5].astype(str).tolist() == train.data[:5].astype(str).tolist()


def test_returns_fresh_copies():
    X1, y1 = load_adult(subset="test", return_X_y=True)
    X1[0, 0] = -1
    y1[:] = 7
    X2, y2 = load_adult(subset="test", return_X_y=True)
    assert X2[0, 0] == 25
    assert int(y2.sum()) == 3846


@pytest.mark.parametrize("subset", ["Train", "validation", "", None, 1, "train "])
def test_bad_subset_raises(subset):
    with pytest.raises(ValueError, match="subset"):
        load_adult(subset=subset)


def test_descr(train):
    descr = train.DESCR
    for needle in ["Becker", "Kohavi", "1996", "UCI", "10.24432/C5XW20", "CC BY 4.0",
                   "32,561", "16,281", "48,842", "[17, 90]", "[1, 16]",
                   "[0, 99999]", "[0, 5000]", "[1, 99]", "[0, 1500000]"]:
        assert needle in descr, needle


def test_as_frame():
    pd = pytest.importorskip("pandas")
    bunch = load_adult(subset="train", as_frame=True)
    X, y = bunch.data, bunch.target
    assert isinstance(X, pd.DataFrame) and X.shape == (32561, 14)
    assert list(X.columns) == FEATURES
    for name in NUMERIC:
        assert X[name].dtype == np.int64, name
    for name in CATEGORICAL:
        assert isinstance(X[name].dtype, pd.CategoricalDtype), name
        assert list(X[name].cat.categories) == bunch.categories[name]
    assert X["workclass"].isna().sum() == 1836
    assert X["occupation"].isna().sum() == 1843
    assert X["native-country"].isna().sum() == 583
    assert isinstance(y, pd.Series) and y.name == "income" and y.dtype == np.int64
    assert int(y.sum()) == 7841
    assert isinstance(bunch.frame, pd.DataFrame)
    assert list(bunch.frame.columns) == FEATURES + ["income"]
    assert bunch.frame.shape == (32561, 15)
    # same content as the ndarray version
    arr = load_adult(subset="train").data
    assert X.iloc[0].tolist() == arr[0].tolist()
    np.testing.assert_array_equal(X["age"].to_numpy(), arr[:, 0].astype(np.int64))
    Xf, yf = load_adult(subset="test", as_frame=True, return_X_y=True)
    assert isinstance(Xf, pd.DataFrame) and Xf.shape == (16281, 14)
    assert isinstance(yf, pd.Series) and int(yf.sum()) == 3846


# --------------------------------------------------------------------------
# encode_adult
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def encoded(train):
    return encode_adult(train.data)


def test_encode_default_shape_and_names(encoded, train):
    n_cols = 5 + sum(N_CATEGORIES.values())
    assert encoded.data.shape == (32561, n_cols)
    assert encoded.data.dtype == np.float64
    assert len(encoded.feature_names) == n_cols
    assert "fnlwgt" not in encoded.columns  # dropped by default
    assert "workclass=Private" in encoded.feature_names
    assert encoded.feature_names[0] == "age"
    assert list(encoded.columns) == [f for f in FEATURES if f != "fnlwgt"]
    idx = np.concatenate(list(encoded.columns.values()))
    np.testing.assert_array_equal(idx, np.arange(n_cols))


def test_encode_finite_and_inside_bounds(encoded):
    X = encoded.data
    lower, upper = encoded.bounds
    assert np.isfinite(X).all()
    assert lower.shape == upper.shape == (X.shape[1],)
    np.testing.assert_array_equal(lower, 0.0)
    np.testing.assert_array_equal(upper, 1.0)
    assert (X >= lower).all() and (X <= upper).all()


def test_encode_onehot_blocks(encoded, train):
    for name in CATEGORICAL:
        cols = encoded.columns[name]
        assert len(cols) == N_CATEGORIES[name]
        block = encoded.data[:, cols]
        assert set(np.unique(block).tolist()) <= {0.0, 1.0}
        sums = block.sum(axis=1)
        missing = _is_missing(train.data[:, FEATURES.index(name)])
        np.testing.assert_array_equal(sums[missing], 0.0)
        np.testing.assert_array_equal(sums[~missing], 1.0)
        names = [encoded.feature_names[c] for c in cols]
        assert names == [f"{name}={c}" for c in train.categories[name]]
    # a value lands in its own column
    assert encoded.data[0, encoded.feature_names.index("workclass=State-gov")] == 1.0
    assert encoded.data[0, encoded.feature_names.index("sex=Male")] == 1.0
    assert encoded.data[0, encoded.feature_names.index("sex=Female")] == 0.0


def test_encode_numeric_scaling(encoded, train):
    # first record: age 39, education-num 13, capital-gain 2174, hours 40
    row = encoded.data[0]
    assert row[encoded.columns["age"][0]] == pytest.approx((39 - 17) / (90 - 17))
    assert row[encoded.columns["education-num"][0]] == pytest.approx(12 / 15)
    assert row[encoded.columns["capital-gain"][0]] == pytest.approx(2174 / 99999)
    assert row[encoded.columns["capital-loss"][0]] == 0.0
    assert row[encoded.columns["hours-per-week"][0]] == pytest.approx(39 / 98)


def test_encode_continuous_subset(train):
    enc = encode_adult(train.data, features=CONTINUOUS)
    assert enc.data.shape == (32561, 5)
    assert enc.feature_names == CONTINUOUS
    assert {k: v.tolist() for k, v in enc.columns.items()} == {
        f: [i] for i, f in enumerate(CONTINUOUS)
    }
    np.testing.assert_array_equal(enc.raw_bounds[0], [17, 1, 0, 0, 1])
    np.testing.assert_array_equal(enc.raw_bounds[1], [90, 16, 99999, 5000, 99])
    assert ((enc.data >= 0) & (enc.data <= 1)).all()
    # order follows `features`
    rev = encode_adult(train.data, features=CONTINUOUS[::-1])
    np.testing.assert_array_equal(rev.data, enc.data[:, ::-1])


def test_encode_clips_above_public_cap(train):
    X = train.data[:3].copy()
    j = FEATURES.index("capital-loss")
    X[0, j] = 10000
    X[1, j] = 5000
    X[2, j] = 2500
    enc = encode_adult(X, features=["capital-loss", "age", "hours-per-week"])
    np.testing.assert_allclose(enc.data[:, 0], [1.0, 1.0, 0.5])
    raw = encode_adult(X, features=["capital-loss"], scale=False)
    np.testing.assert_array_equal(raw.data[:, 0], [5000.0, 5000.0, 2500.0])
    # below the lower bound too
    X[0, FEATURES.index("age")] = 5
    X[1, FEATURES.index("hours-per-week")] = 150
    enc = encode_adult(X, features=["age", "hours-per-week"])
    assert enc.data[0, 0] == 0.0
    assert enc.data[1, 1] == 1.0


def test_encode_bounds_independent_of_data(train):
    small = encode_adult(train.data[:10])
    full = encode_adult(train.data)
    for a, b in zip(small.bounds + small.raw_bounds, full.bounds + full.raw_bounds):
        np.testing.assert_array_equal(a, b)
    assert small.feature_names == full.feature_names
    np.testing.assert_array_equal(small.data, full.data[:10])
    # even an empty input has the same bounds
    empty = encode_adult(train.data[:0], features=CONTINUOUS, scale=False)
    assert empty.data.shape == (0, 5)
    np.testing.assert_array_equal(empty.bounds[1], [90, 16, 99999, 5000, 99])


def test_encode_unscaled(train):
    enc = encode_adult(train.data[:100], scale=False, features=["age", "sex"])
    np.testing.assert_array_equal(enc.data[:, 0], train.data[:100, 0].astype(float))
    np.testing.assert_array_equal(enc.bounds[0], [17, 0, 0])
    np.testing.assert_array_equal(enc.bounds[1], [90, 1, 1])
    lo, hi = enc.bounds
    assert ((enc.data >= lo) & (enc.data <= hi)).all()


def test_encode_fnlwgt_kept_on_request(train):
    enc = encode_adult(train.data[:50], drop=())
    assert "fnlwgt" in enc.columns
    j = enc.columns["fnlwgt"][0]
    assert enc.raw_bounds[0][j] == 0 and enc.raw_bounds[1][j] == 1_500_000
    np.testing.assert_allclose(enc.data[:, j], train.data[:50, 2].astype(float) / 1.5e6)
    with pytest.raises(ValueError, match="fnlwgt"):
        encode_adult(train.data[:5], features=["age", "fnlwgt"])
    enc = encode_adult(train.data[:5], features=["age", "fnlwgt"], drop=())
    assert enc.feature_names == ["age", "fnlwgt"]


def test_encode_unknown_category_raises(train):
    X = train.data[:20].copy()
    X[3, FEATURES.index("workclass")] = "Astronaut"
    with pytest.raises(ValueError, match="Astronaut"):
        encode_adult(X)
    # a feature not encoded is not checked
    assert encode_adult(X, features=CONTINUOUS).data.shape == (20, 5)


def test_encode_missing_markers(train):
    X = train.data[:3].copy()
    j = FEATURES.index("occupation")
    X[0, j] = None
    X[1, j] = "?"
    X[2, j] = np.nan
    enc = encode_adult(X, features=["occupation"])
    np.testing.assert_array_equal(enc.data, 0.0)


def test_encode_bad_inputs(train):
    with pytest.raises(ValueError, match="Unknown Adult feature"):
        encode_adult(train.data[:5], features=["age", "salary"])
    with pytest.raises(ValueError, match="Duplicated"):
        encode_adult(train.data[:5], features=["age", "age"])
    with pytest.raises(TypeError):
        encode_adult(train.data[:5], features="age")
    with pytest.raises(ValueError, match="14"):
        encode_adult(train.data[:5, :5])
    X = train.data[:5].copy()
    X[0, 0] = np.nan
    with pytest.raises(ValueError, match="age"):
        encode_adult(X)
    X[0, 0] = "forty"
    with pytest.raises(ValueError, match="age"):
        encode_adult(X)


def test_encode_dataframe_matches_ndarray(encoded):
    pytest.importorskip("pandas")
    frame = load_adult(subset="train", as_frame=True).data
    enc = encode_adult(frame)
    np.testing.assert_array_equal(enc.data, encoded.data)
    assert enc.feature_names == encoded.feature_names
    # a DataFrame only needs the encoded columns
    sub = encode_adult(frame[["hours-per-week", "age"]], features=["age", "hours-per-week"])
    assert sub.data.shape == (32561, 2)


def test_education_is_in_schooling_order_and_linked_to_its_code():
    """education's levels are ordered by their Census code, the ``education-num``
    of every record of that level (the public coding agrees with the files), the
    frame's dtype is ordered, and adult_schema gives the link."""
    frame = load_adult(as_frame=True).data
    assert frame["education"].dtype.ordered
    levels = list(frame["education"].cat.categories)
    codes = frame.groupby("education", observed=True)["education-num"].agg(["min", "max"])
    np.testing.assert_array_equal(codes["min"], codes["max"])
    assert list(codes.sort_values("min").index) == levels
    np.testing.assert_array_equal(codes.loc[levels, "min"], np.arange(1, 17))
    schema = adult_schema()
    assert schema.categories["education"] == levels
    (cat, num, mapping), = schema.linked_features
    assert (cat, num) == ("education", "education-num")
    assert [mapping[level] for level in levels] == list(range(1, 17))
    assert adult_schema(features=["age", "education"]).linked_features == []
