"""The public schema: declared bounds and categories, valid records back.

* PublicSchemaEncoder reads only names and dtypes at fit, encodes with the
  declared levels and ranges, and maps any point back to a valid record;
* an estimator fitted on a mixed DataFrame works in the encoded space and
  hands the black box rows of the kind it was fitted on;
* undeclared numeric bounds (a partial dict) are estimated with DP for those
  columns only.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import sparse

from skdpx.datasets import adult_schema, encode_adult, load_adult
from skdpx.locally_linear import DPLocallyLinearClassifier
from skdpx.preprocessing import PublicSchemaEncoder
from skdpx.privacy import PrivacyLeakWarning

from ._tables import mixed_table


SCHEMA = dict(bounds={"age": (17, 90), "income": (0, 2e5)},
              categories={"colour": ["red", "green", "blue"], "city": ["Paris", "Rome", "Oslo"]})


def test_encoder_fit_reads_no_value():
    X = mixed_table()
    a = PublicSchemaEncoder(**SCHEMA).fit(X)
    b = PublicSchemaEncoder(**SCHEMA).fit(X.iloc[:0])  # no row at all: same schema
    np.testing.assert_array_equal(a.transform(X), b.transform(X))
    assert a.get_feature_names_out().tolist() == [
        "age", "colour=red", "colour=green", "colour=blue", "income",
        "city=Paris", "city=Rome", "city=Oslo"]
    # a level that no row holds still has its column (declared, not read)
    assert (a.transform(X)[:, 7] == 0).all()
    np.testing.assert_array_equal(a.lower_, 0.0)
    np.testing.assert_array_equal(a.upper_, 1.0)


def test_encoder_round_trip_gives_valid_records():
    X = mixed_table()
    enc = PublicSchemaEncoder(**SCHEMA).fit(X)
    Z = enc.transform(X)
    back = enc.inverse_transform(Z)
    # the same values; a categorical column over its declared levels (a dtype the
    # rows made holds their own levels: issue 40's review), never the rows' dtype
    declared = X.copy()
    for column, dtype in zip(X.columns, X.dtypes):
        if isinstance(dtype, pd.CategoricalDtype):
            declared[column] = pd.Categorical(X[column].astype(object),
                                              categories=SCHEMA["categories"][column])
    pd.testing.assert_frame_equal(back, declared)
    noisy = Z + np.random.RandomState(1).normal(0, 0.3, Z.shape)
    records = enc.inverse_transform(noisy)
    assert list(records.dtypes) == list(declared.dtypes)
    assert records["age"].between(17, 90).all() and records["income"].between(0, 2e5).all()
    assert set(records["city"]) <= {"Paris", "Rome", "Oslo"}
    # the declared order, whatever order the input dtype had (it may come from the rows)
    assert records["colour"].cat.categories.tolist() == ["red", "green", "blue"]
    # the projection is idempotent: an encoded valid record is exactly one-hot
    blocks = enc.transform(records)[:, 1:4]
    np.testing.assert_array_equal(blocks.sum(axis=1), 1.0)


def test_encoder_refuses_undeclared_levels_and_columns():
    X = mixed_table()
    with pytest.raises(ValueError, match="not declared categories"):
        PublicSchemaEncoder(bounds=SCHEMA["bounds"],
                            categories={"colour": ["red", "green"], "city": ["Paris", "Rome"]}
                            ).fit(X).transform(X)
    with pytest.raises(ValueError, match="'city' is not numeric"):
        PublicSchemaEncoder(bounds=SCHEMA["bounds"],
                            categories={"colour": ["red", "green", "blue"]}).fit(X)
    with pytest.raises(ValueError, match="needs declared bounds.*income"):
        PublicSchemaEncoder(bounds={"age": (17, 90)}, categories=SCHEMA["categories"]).fit(X)
    with pytest.raises(ValueError, match="categorical"):
        PublicSchemaEncoder(bounds={**SCHEMA["bounds"], "city": (0, 1)},
                            categories=SCHEMA["categories"]).fit(X)


def test_missing_category_is_an_all_zero_block():
    X = mixed_table(5).astype({"city": object})
    X.loc[0, "city"] = None
    Z = PublicSchemaEncoder(**SCHEMA).fit(X).transform(X)
    np.testing.assert_array_equal(Z[0, 5:8], 0.0)


def test_encode_adult_is_the_encoder_with_adult_schema():
    X, _ = load_adult(return_X_y=True, as_frame=True)
    X = X.head(200)
    schema = adult_schema()
    enc = PublicSchemaEncoder(bounds=schema.bounds, categories=schema.categories)
    ours = enc.fit_transform(X[schema.features])
    np.testing.assert_array_equal(ours, encode_adult(X).data)


def _fit_llc(X, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        return DPLocallyLinearClassifier(n_maps=1, epsilon=5.0, delta=1e-5, epochs=2,
                                         classes=[0, 1], random_state=0, **kw).fit(X, y)


def test_estimator_on_a_mixed_dataframe_decodes_to_the_same_kind():
    X = mixed_table(60)
    y = (X["colour"] == "red").astype(int).to_numpy()
    model = _fit_llc(X, y, **SCHEMA)
    assert model.n_features_in_ == 4 and model.coef_.shape[-1] == 8
    assert model.schema_.indices(["colour"], "immutable_features").tolist() == [1, 2, 3]
    Z = model.schema_.encode(X)
    rows = model.schema_.decode(Z + 0.4, *model.bounds_)
    assert list(rows.columns) == list(X.columns) and list(rows.dtypes) == list(X.dtypes)
    assert rows["age"].between(17, 90).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no feature-name warning on predict
        assert model.predict(X.iloc[:5]).shape == (5,)
    with pytest.raises(ValueError, match="not declared categories") as error:
        model.predict(X.assign(city="Berlin"))
    assert "Berlin" not in str(error.value)  # a value of a row is never echoed (may be private)


def test_partial_bounds_estimate_only_the_undeclared_columns():
    X = mixed_table(400)
    y = (X["colour"] == "red").astype(int).to_numpy()
    with pytest.warns(PrivacyLeakWarning, match="bounds"):
        model = DPLocallyLinearClassifier(
            n_maps=1, epsilon=5.0, delta=1e-5, epochs=1, batch_size=None, classes=[0, 1],
            random_state=0,
            bounds={"age": (17, 90)}, categories=SCHEMA["categories"]).fit(X, y)
    labels = " ".join(str(e) for e in model.ledger_.events)
    assert "octave histograms of 1 features" in labels
    lower, upper = model.bounds_
    assert (lower[0], upper[0]) == (17, 90)  # declared: kept
    np.testing.assert_array_equal(lower[[1, 2, 3, 5, 6, 7]], 0.0)  # one-hot: public
    assert lower[4] < upper[4]  # income: the DP estimate


def test_sparse_one_hot_input_is_accepted_and_decoded_as_csr():
    rng = np.random.RandomState(0)
    X = sparse.csr_matrix(np.eye(3)[rng.randint(0, 3, 60)])
    y = X.toarray()[:, 0].astype(int)
    model = _fit_llc(X, y, bounds=(0.0, 1.0))
    assert model.predict(X[:5]).shape == (5,)
    assert sparse.issparse(model.schema_.decode(np.zeros((2, 3))))
