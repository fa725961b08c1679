"""PublicSchema: a table's public bounds and levels, built from public facts, in one line.

* each constructor (declared dtypes, a public sample, a data dictionary) and
  its refusals, which name the column;
* ``**schema`` passes ``bounds`` and ``categories`` to an estimator or the
  encoder at once; ``|`` combines, ``select`` restricts, ``summary`` reviews;
* a DataFrame with a string column and no levels for it is refused before
  anything is spent, with a message that names the column and the fix;
* the warning of DP-estimated bounds names the columns it estimates.
"""

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

import skdpx
from skdpx.explain import DPLimeExplainer
from skdpx.locally_linear import DPLocallyLinearClassifier
from skdpx.preprocessing import PublicSchema, PublicSchemaEncoder
from skdpx.privacy import FitBounds, PrivacyLeakWarning, PrivacyLedger
from skdpx.recourse import PrivRecourse

from ._tables import mixed_table

COLOUR = pd.CategoricalDtype(["blue", "green", "red"])
DICTIONARY = pd.DataFrame({
    "column": ["age", "income", "city"],
    "lower": [17, 0.0, np.nan],
    "upper": [90, 1e5, np.nan],
    "levels": [np.nan, np.nan, "Paris | Rome|Oslo"],
    "description": ["years", "per year", "where they live"],  # ignored
})


def table(n=60, seed=0):
    """mixed_table with its categorical column's levels declared (a CategoricalDtype)."""
    return mixed_table(n, seed).astype({"colour": COLOUR})


def full_schema():
    return PublicSchema.from_dtypes(table()) | PublicSchema.from_dictionary(DICTIONARY)


# --------------------------------------------------------------------------
# constructors
# --------------------------------------------------------------------------
def test_from_dtypes_reads_the_declared_levels_and_no_value():
    X = table()
    schema = PublicSchema.from_dtypes(X)
    assert schema["categories"] == {"colour": ["blue", "green", "red"]}
    assert schema["bounds"] == {}
    # no row at all, or a bare {column: dtype} mapping: the same schema
    assert PublicSchema.from_dtypes(X.iloc[:0]) == schema
    assert PublicSchema.from_dtypes({"colour": COLOUR, "age": np.dtype(int)}) == schema
    # a declared level no row holds is kept (declared, not read)
    rows_without_blue = X[X["colour"] != "blue"]
    assert PublicSchema.from_dtypes(rows_without_blue) == schema


def test_from_sample_reads_bounds_and_levels_of_the_public_rows():
    sample = table(200, seed=1)
    schema = PublicSchema.from_sample(sample)
    assert schema["bounds"]["age"] == (sample["age"].min(), sample["age"].max())
    assert isinstance(schema["bounds"]["age"][0], int)
    assert schema["bounds"]["income"] == (sample["income"].min(), sample["income"].max())
    assert schema["categories"]["city"] == sorted(sample["city"].unique())
    assert schema["categories"]["colour"] == ["blue", "green", "red"]  # the dtype's levels
    wide = PublicSchema.from_sample(sample, margin=0.5)
    lo, hi = schema["bounds"]["age"]
    assert wide["bounds"]["age"] == (int(np.floor(lo - (hi - lo) / 2)),
                                     int(np.ceil(hi + (hi - lo) / 2)))
    assert PublicSchema.from_sample(sample, margin=0.5, integer=False)["bounds"]["age"] == (
        lo - (hi - lo) / 2, hi + (hi - lo) / 2)
    # missing values and infinities are not bounds or levels; booleans need nothing
    odd = pd.DataFrame({"x": [1.0, np.nan, np.inf, 3.0], "s": ["b", None, "a", np.nan],
                        "flag": [True, False, True, True]})
    odd_schema = PublicSchema.from_sample(odd)
    assert dict(odd_schema) == {"bounds": {"x": (1.0, 3.0)}, "categories": {"s": ["a", "b"]}}
    assert odd_schema.uncovered(odd) == []


@pytest.mark.parametrize("sample, message", [
    (pd.DataFrame({"x": [np.nan, np.inf]}), "'x' have no finite value"),
    (pd.DataFrame({"x": [2.0, 2.0]}), "'x' take one value"),
    (pd.DataFrame({"s": [None, np.nan]}, dtype=object), "'s' has no value"),
    (pd.DataFrame({"x": []}, dtype=float), "no row"),
])
def test_from_sample_refuses_what_gives_no_bounds(sample, message):
    with pytest.raises(ValueError, match=message):
        PublicSchema.from_sample(sample)


def test_from_sample_refuses_a_negative_margin():
    with pytest.raises(ValueError, match="margin"):
        PublicSchema.from_sample(table(), margin=-0.1)


def test_from_dictionary_as_a_frame_or_a_list():
    schema = PublicSchema.from_dictionary(DICTIONARY)
    assert schema["bounds"] == {"age": (17, 90), "income": (0.0, 1e5)}
    assert schema["categories"] == {"city": ["Paris", "Rome", "Oslo"]}
    as_list = PublicSchema.from_dictionary([
        {"column": "age", "lower": 17, "upper": 90},
        {"column": "income", "lower": 0.0, "upper": 1e5},
        {"column": "city", "levels": ["Paris", "Rome", "Oslo"]}])
    assert as_list == schema
    assert PublicSchema.from_dictionary([{"column": "k", "levels": "1;2"}], sep=";")[
        "categories"] == {"k": ["1", "2"]}


@pytest.mark.parametrize("entries, message", [
    ([{"lower": 0, "upper": 1}], "entry 0 has no 'column'"),
    ([{"column": "a", "lower": 0, "upper": 1}, {"column": "a", "levels": "x|y"}],
     r"entry 1 \(column 'a'\): the column is listed twice"),
    ([{"column": "a", "lower": 0, "upper": 1, "levels": "x|y"}], "both bounds and levels"),
    ([{"column": "a", "description": "age"}], "neither bounds"),
    ([{"column": "a", "lowr": 0, "upper": 1}], r"column 'a'\) gives upper only"),
    ([{"column": "a", "lower": 5, "upper": 1}], "'a'.*lower bound must be below"),
    ([{"column": "a", "lower": "low", "upper": 1}], "lower bound of 'a' must be a number"),
    ([{"column": "a", "lower": 0, "upper": np.inf}], "upper bound of 'a' must be finite"),
    ([{"column": "a", "levels": "x|y|x"}], r"categories\['a'\] has duplicated levels"),
    ([{"column": "a", "levels": []}], r"categories\['a'\] is empty"),
    (["age"], "entry 0 is not a dict"),
])
def test_from_dictionary_refuses_malformed_entries_naming_them(entries, message):
    with pytest.raises(ValueError, match=message):
        PublicSchema.from_dictionary(entries)


def test_a_schema_is_validated_when_built():
    with pytest.raises(ValueError, match="'age' have both bounds and levels"):
        PublicSchema(bounds={"age": (0, 1)}, categories={"age": [0, 1]})
    with pytest.raises(ValueError, match=r"bounds\['age'\] must be a \(lower, upper\) pair"):
        PublicSchema(bounds={"age": (0, 1, 2)})
    with pytest.raises(ValueError, match=r"categories\['c'\] must be a list"):
        PublicSchema(categories={"c": "abc"})
    with pytest.raises(ValueError, match=r"categories\['c'\] holds a missing value"):
        PublicSchema(categories={"c": ["a", None]})
    with pytest.raises(ValueError, match="must be a number"):
        PublicSchema(bounds={"b": (False, True)})


# --------------------------------------------------------------------------
# a read-only mapping: one line into the encoder and the estimators
# --------------------------------------------------------------------------
def test_the_schema_is_a_mapping_of_exactly_bounds_and_categories():
    schema = full_schema()
    assert list(schema) == ["bounds", "categories"] and len(schema) == 2
    assert schema.columns == ["colour", "age", "income", "city"]
    with pytest.raises(KeyError):
        schema["levels"]
    # a copy at each access: the schema itself never changes
    schema["bounds"]["age"] = (0, 1)
    schema["categories"]["colour"].append("pink")
    assert schema.bounds["age"] == (17, 90) and schema.categories["colour"][-1] == "red"
    assert pickle.loads(pickle.dumps(schema)) == schema
    assert skdpx.PublicSchema is PublicSchema


def test_combining_and_selecting():
    base = PublicSchema.from_dictionary(DICTIONARY)
    # the right-hand side wins, column by column, whatever the column's kind
    both = base | {"bounds": {"age": (0, 120)}} | PublicSchema(categories={"income": ["low"]})
    assert both["bounds"] == {"age": (0, 120)}
    assert both["categories"] == {"city": ["Paris", "Rome", "Oslo"], "income": ["low"]}
    assert both.summary().set_index("column").loc["age", "source"] == "declared"
    with pytest.raises(ValueError, match="'bounds' and 'categories' only"):
        base | {"levels": {}}
    picked = base.select(["city", "age", "not declared"])
    assert picked.columns == ["city", "age"]
    assert picked.select(pd.DataFrame(columns=["age"])).columns == ["age"]


def test_summary_shows_every_column_for_review():
    schema = full_schema()
    summary = schema.summary()
    assert list(summary.columns) == ["column", "kind", "lower", "upper", "n_levels", "levels",
                                     "source"]
    rows = summary.set_index("column")
    assert rows.loc["age", ["kind", "lower", "upper", "source"]].tolist() == [
        "numeric", 17.0, 90.0, "dictionary"]
    assert rows.loc["colour", ["kind", "n_levels", "levels", "source"]].tolist() == [
        "categorical", 3, "blue, green, red", "dtype"]
    many = PublicSchema(categories={"k": list(range(10))}).summary()
    assert many.loc[0, "levels"] == "0, 1, 2, 3, 4, 5, ..." and many.loc[0, "n_levels"] == 10
    shown = repr(schema)
    assert shown.startswith("PublicSchema: 2 numeric and 2 categorical columns")
    assert all(name in shown for name in ["colour", "age", "income", "city", "dictionary"])
    assert "<table" in schema._repr_html_()


def test_uncovered_names_what_the_schema_leaves_out():
    X = table().assign(flag=True, note="x")
    assert PublicSchema.from_dtypes(X).uncovered(X) == ["age", "income", "city", "note"]
    assert full_schema().uncovered(X) == ["note"]


def test_one_line_into_the_encoder_and_an_explainer():
    X = table(200)
    y = (X["colour"] == "red").to_numpy().astype(int) ^ (X["age"] > 50).to_numpy()
    schema = full_schema()
    encoder = PublicSchemaEncoder(**schema).fit(X)
    assert encoder.get_feature_names_out().tolist() == [
        "age", "colour=blue", "colour=green", "colour=red", "income",
        "city=Paris", "city=Rome", "city=Oslo"]
    model = make_pipeline(PublicSchemaEncoder(**schema), LogisticRegression()).fit(X, y)
    ledger = PrivacyLedger(epsilon=50.0, delta=1e-5)
    explainer = DPLimeExplainer(model, **schema, epsilon=50.0, epsilon_per_query=5.0,
                                max_iter=20, accountant=ledger)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)  # every bound declared: no estimate
        explainer.fit(X)
    result = explainer.explain(X.iloc[:1])
    assert result.values.shape == (1, 8) and np.isfinite(result.values).all()
    assert ledger.epsilon_spent > 0


# --------------------------------------------------------------------------
# refusals and warnings that say how to declare a schema
# --------------------------------------------------------------------------
@pytest.mark.parametrize("cls", [DPLocallyLinearClassifier, PrivRecourse])
def test_a_string_column_without_levels_is_refused_naming_it_and_the_fix(cls):
    X = table()
    y = np.arange(len(X)) % 2
    ledger = PrivacyLedger(epsilon=5.0, delta=1e-5)
    est = cls(**PublicSchema.from_dtypes(X) | PublicSchema(bounds={"age": (17, 90)}),
              classes=[0, 1], epsilon=5.0, delta=1e-5, accountant=ledger)
    with pytest.raises(ValueError) as error:
        est.fit(X, y)
    message = str(error.value)
    assert "column 'city' is not numeric (dtype" in message
    assert "categories={'city': [...]}" in message
    assert all(fix in message for fix in ["PublicSchema", "from_dtypes(X)", "from_dictionary",
                                          "from_sample(public_frame)"])
    # no value of a row is shown (they may be private)
    assert not any(city in message for city in ["Paris", "Rome"])
    assert ledger.epsilon_spent == 0 and not ledger.events


def test_every_undeclared_column_is_named_at_once():
    X = table()
    with pytest.raises(ValueError, match="columns 'colour' and 'city' are not numeric") as error:
        PublicSchemaEncoder(bounds={"age": (17, 90), "income": (0, 1e5)}).fit(X)
    message = str(error.value)
    assert "categories={'colour': [...], 'city': [...]}" in message
    # the categorical one: from_dtypes, if its levels were declared
    assert "'colour' has a pandas categorical dtype" in message
    assert "blue" not in message


def test_the_bounds_warning_names_the_columns_it_estimates():
    X = table(200)
    y = (X["colour"] == "red").to_numpy().astype(int)
    schema = PublicSchema.from_dtypes(X) | PublicSchema(categories={"city": ["Paris", "Rome"]})
    ledger = PrivacyLedger(epsilon=5.0, delta=1e-5)
    est = DPLocallyLinearClassifier(**schema, n_maps=1, epochs=1, batch_size=None,
                                    classes=[0, 1], epsilon=5.0, delta=1e-5, accountant=ledger)
    with pytest.warns(PrivacyLeakWarning, match="no bounds are declared") as caught:
        est.fit(X, y)
    message = next(str(w.message) for w in caught if "bounds" in str(w.message))
    assert "for columns 'age' and 'income': their bounds are estimated" in message
    assert "colour" not in message and "PublicSchema.from_dictionary" in message


def test_the_bounds_warning_lists_ten_columns_and_counts_the_rest():
    names = [f"f{i}" for i in range(14)]
    with pytest.warns(PrivacyLeakWarning) as caught:
        FitBounds(None, 14, epsilon=1.0, delta=1e-5, relation="add_or_remove",
                  feature_names=names)
    message = str(caught[0].message)
    assert message.startswith("bounds=None: the bounds are estimated from the private data "
                              "for every column ('f0', 'f1',")
    assert "'f9' and 4 more" in message and "'f10'" not in message
    lower = np.array([0.0, np.nan, 0.0])
    with pytest.warns(PrivacyLeakWarning, match="for column 'b': its bounds"):
        FitBounds((lower, lower + 1), 3, epsilon=1.0, delta=1e-5, relation="add_or_remove",
                  feature_names=["a", "b", "c"])


def test_the_tables_page_example_runs_as_shown():
    import doctest
    from pathlib import Path

    page = Path(__file__).resolve().parent.parent / "doc" / "tables.rst"
    result = doctest.testfile(str(page), module_relative=False, verbose=False)
    assert result.attempted >= 6 and result.failed == 0


def test_a_sample_with_empty_strings_and_a_mapping_on_the_left():
    schema = PublicSchema.from_sample(pd.DataFrame({"a": ["x", "", "y", None], "b": [1, 2, 3, 4]}))
    assert schema.categories == {"a": ["x", "y"]}  # "" is "not given", as in a declaration
    merged = {"bounds": {"c": (0, 1)}, "categories": {"a": ["z"]}} | schema
    assert merged.bounds == {"c": (0, 1), "b": (1, 4)}
    assert merged.categories == {"a": ["x", "y"]}  # the schema's, on the right, wins


def test_a_fitted_schema_holds_the_declared_levels_not_the_rows():
    # (issue 40 review) a categorical dtype made by astype("category") holds the levels
    # the private rows have; the fitted schema (a pickled attribute of every estimator)
    # kept it, and showed which declared levels no row has
    import pickle

    import pandas as pd

    from skdpx.utils._tables import validate_table
    from sklearn.base import BaseEstimator

    X = pd.DataFrame({"a": [0.1, 0.2, 0.3], "c": pd.Series(["x", "y", "x"]).astype("category")})
    est = BaseEstimator()
    validate_table(est, X, reset=True, categories={"c": ["x", "y", "z"]})
    schema = pickle.loads(pickle.dumps(est.schema_))
    assert list(schema.dtypes[1].categories) == ["x", "y", "z"]
    assert list(schema.encoder._dtypes[1].categories) == ["x", "y", "z"]
    assert list(schema.public_frame(X)["c"].cat.categories) == ["x", "y", "z"]
