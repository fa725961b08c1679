"""DPLimeExplainer on any fitted model: regressors, multiclass, predict-only classifiers."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.svm import SVC, LinearSVC
from sklearn.tree import DecisionTreeClassifier

from skdpx.explain import DPLimeExplainer
from skdpx.explain import _parallel
from skdpx.explain._local_loss import local_loss_terms, trust_region
from skdpx.privacy import PrivacyLedger

from ._tables import mixed_table

# the tests seed the noise on purpose (each seeded fit and answer warns)
pytestmark = pytest.mark.filterwarnings("ignore::skdpx.exceptions.PrivacyLeakWarning")

_RNG = np.random.RandomState(0)
X = _RNG.uniform(0, 1, size=(2400, 3))
X_MODEL, X_PRIVATE = X[:1200], X[1200:]  # the black box does not see the explanation rows
QUERIES = _RNG.uniform(0.2, 0.8, size=(12, 3))
# three classes; class 2 depends on feature 0 only
Y3 = np.where(X[:, 0] > 0.6, 2, np.where(X[:, 1] > 0.5, 1, 0))


def _explainer(model, **params):
    defaults = dict(epsilon=50.0, delta=1e-6, epsilon_per_query=2.0, max_iter=30,
                    bounds=(0, 1), random_state=0, accountant=PrivacyLedger())
    defaults.update(params)
    return DPLimeExplainer(model, **defaults)


@pytest.fixture(scope="module")
def ridge():
    y = X_MODEL @ [3.0, -2.0, 0.5] + 10 + _RNG.normal(0, 0.1, len(X_MODEL))
    return Ridge(alpha=1e-3).fit(X_MODEL, y)  # outputs about 8 to 13.5


def _cosine(a, b):
    return np.einsum("ij,j->i", a, b) / np.linalg.norm(a, axis=1) / np.linalg.norm(b)


def test_a_regressor_is_explained_in_its_own_units(ridge):
    # outputs are about 8 to 13.5: the old [-1, 1] clip saturated all of them
    exact = _explainer(ridge, epsilon=np.inf, epsilon_per_query=np.inf, max_iter=2000,
                       output_bounds=(0, 20)).fit(X_PRIVATE).explain(QUERIES)
    assert exact.meta["output"] == "regression" and exact.meta["output_bounds"] == [0.0, 20.0]
    assert exact.meta["target_class"] == [None] * len(QUERIES)
    # centred on the query's output, the local model of a linear regressor is its slope
    np.testing.assert_allclose(exact.values, np.tile(ridge.coef_, (len(QUERIES), 1)), rtol=0.02)
    dp = _explainer(ridge, output_bounds=(5, 16)).fit(X_PRIVATE).explain(QUERIES)
    assert set(dp.phase) == {"interactive"}
    assert np.median(_cosine(dp.values, ridge.coef_)) > 0.9
    ratio = np.linalg.norm(dp.values, axis=1) / np.linalg.norm(ridge.coef_)
    assert 0.5 < np.median(ratio) < 1.5  # not saturated, not blown up


def test_a_regressor_without_output_bounds_is_refused_before_anything_is_spent(ridge):
    ledger = PrivacyLedger()
    # bounds=None would spend on DP bounds first: the error comes before that
    explainer = DPLimeExplainer(ridge, epsilon=1.0, epsilon_per_query=0.2, accountant=ledger)
    with pytest.raises(ValueError, match="output_bounds"):
        explainer.fit(X_PRIVATE)
    assert len(ledger) == 0 and ledger.epsilon_spent == 0
    assert not hasattr(explainer, "ledger_")
    with pytest.raises(ValueError, match="lower < upper"):
        DPLimeExplainer(ridge, output_bounds=(3, 3), accountant=ledger).fit(X_PRIVATE)
    with pytest.raises(ValueError, match="target_class"):
        DPLimeExplainer(ridge, output_bounds=(0, 20), target_class=1,
                        accountant=ledger).fit(X_PRIVATE)
    # a classifier is explained through probabilities or indicators: no output_bounds
    model = LogisticRegression().fit(X_MODEL, Y3[:1200])
    with pytest.raises(ValueError, match="classifier"):
        DPLimeExplainer(model, output_bounds=(0, 1), accountant=ledger).fit(X_PRIVATE)
    with pytest.raises(ValueError, match="not a class"):
        DPLimeExplainer(model, target_class=7, accountant=ledger).fit(X_PRIVATE)
    assert len(ledger) == 0


def _labels_seen(monkeypatch):
    """Spy on the local loss: the labels (y - offset) every answer is computed from."""
    seen, real = [], _parallel.blocked_sums

    def spy(queries, X, y, *, offset=None, **kwargs):
        seen.append(y[None, :] - (0.0 if offset is None else np.asarray(offset)[:, None]))
        return real(queries, X, y, offset=offset, **kwargs)

    monkeypatch.setattr(_parallel, "blocked_sums", spy)
    return seen


@pytest.mark.parametrize("kind", ["regression", "probability", "indicator", "labels"])
def test_every_kind_of_output_gives_labels_in_the_unit_interval(kind, ridge, monkeypatch):
    # the sensitivity (Lemma 3.1, gradient_sensitivity) needs |label| <= 1 at
    # every query, whatever the black box outputs
    y = None
    if kind == "regression":  # outputs far outside the declared range, both ways
        model, params = ridge, dict(output_bounds=(9.0, 11.0))
        queries = np.r_[QUERIES, [[1, 0, 1], [0, 1, 0]]]
    elif kind == "probability":
        model, params, queries = LogisticRegression().fit(X_MODEL, Y3[:1200]), {}, QUERIES
    elif kind == "indicator":
        model, params, queries = SVC().fit(X_MODEL, Y3[:1200]), {}, QUERIES
    else:
        model, params, queries = None, dict(output_bounds=(0, 2)), QUERIES
        y = 100.0 * (X_PRIVATE[:, 0] - 0.5)  # labels given, far outside (0, 2)
    seen = _labels_seen(monkeypatch)
    explainer = _explainer(model, **params).fit(X_PRIVATE, y)
    assert explainer.output_ == kind
    explainer.explain(queries)
    labels = np.concatenate([s.ravel() for s in seen])
    assert len(seen) and np.abs(labels).max() <= 1.0
    assert np.abs(labels).max() > 0.9  # the spy sees the real range


def _tree():
    return DecisionTreeClassifier(max_depth=2, random_state=0).fit(X_MODEL, Y3[:1200])


def test_a_multiclass_model_is_explained_for_the_class_asked(monkeypatch):
    model = _tree()  # P(2 | x) = [x0 > 0.6]: feature 0 only
    explainer = _explainer(model).fit(X_PRIVATE)
    assert explainer.output_ == "probability" and explainer.classes_.tolist() == [0, 1, 2]
    result = explainer.explain(QUERIES, target_class=2)
    assert result.meta["target_class"] == [2] * len(QUERIES)
    assert np.all(np.argmax(np.abs(result.values), axis=1) == 0)
    assert np.all(result.values[:, 0] > 0)  # P(2) rises with feature 0
    # class 1 (x1 > 0.5 and x0 <= 0.6): rises with feature 1, falls with feature 0
    low = QUERIES[QUERIES[:, 0] < 0.4]
    assert len(low) >= 2
    result = explainer.explain(low, target_class=1)
    assert np.all(result.values[:, 1] > 0.2) and np.all(result.values[:, 0] < -0.1)
    # the default: the class the black box predicts at each query
    result = explainer.explain(QUERIES[:4] + 0.01)
    assert result.meta["target_class"] == model.predict(QUERIES[:4] + 0.01).tolist()


def test_answers_are_reused_only_for_the_same_class():
    explainer = _explainer(_tree()).fit(X_PRIVATE)
    z = QUERIES[:1]
    first = explainer.explain(z, target_class=2)
    other = explainer.explain(z, target_class=0)
    assert other.phase.tolist() == ["interactive"]
    again = explainer.explain(np.r_[z, z], target_class=[0, 2])
    assert again.phase.tolist() == ["reused", "reused"]
    np.testing.assert_array_equal(again.values, np.r_[other.values, first.values])
    assert explainer.history_["target"] == [2, 0, 0, 2]
    # one batch: the same point for two classes is two answers
    batch = explainer.explain(np.r_[QUERIES[1:2]] * [1, 1, 1], target_class=1)
    both = explainer.explain(np.r_[QUERIES[2:3], QUERIES[2:3]], target_class=[1, 2])
    assert batch.phase.tolist() == ["interactive"]
    assert both.phase.tolist() == ["interactive", "interactive"]
    # the non-interactive phase answers from the same class only
    explainer = _explainer(_tree(), epsilon=2.2).fit(X_PRIVATE)  # one answer (and the count)
    served = explainer.explain(QUERIES[:1], target_class=2)
    free = explainer.explain(QUERIES[1:3], target_class=[2, 0])
    assert free.phase.tolist() == ["noninteractive"] * 2
    np.testing.assert_array_equal(free.values[0], served.values[0])
    np.testing.assert_array_equal(free.values[1], 0.0)  # no class-0 answer to serve


def test_a_bad_target_class_at_explain_spends_and_records_nothing():
    explainer = _explainer(_tree()).fit(X_PRIVATE)
    explainer.explain(QUERIES[:1], target_class=2)
    spent, n = explainer.epsilon_spent_, explainer.n_queries_
    for bad in (5, [2, 2], "2"):
        with pytest.raises(ValueError, match="target_class|not a class"):
            explainer.explain(QUERIES[1:4], target_class=bad)
    assert explainer.epsilon_spent_ == spent and explainer.n_queries_ == n


def test_a_released_multiclass_explainer_needs_the_class():
    explainer = _explainer(_tree()).fit(X_PRIVATE)
    answered = explainer.explain(QUERIES[:2], target_class=2)
    released = explainer.release()
    assert released.classes_.tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match="target_class"):
        released.explain(QUERIES[:2])
    reused = released.explain(QUERIES[:2], target_class=2)
    assert reused.phase.tolist() == ["reused"] * 2
    np.testing.assert_array_equal(reused.values, answered.values)


@pytest.mark.parametrize("model", [SVC(), LinearSVC()], ids=["SVC", "LinearSVC"])
def test_a_predict_only_classifier_is_explained_through_its_indicator(model):
    # no predict_proba (SVC(probability=False); LinearSVC has decision_function)
    model = model.fit(X_MODEL, Y3[:1200])
    assert not hasattr(model, "predict_proba")
    explainer = _explainer(model).fit(X_PRIVATE)
    assert explainer.output_ == "indicator"
    result = explainer.explain(QUERIES, target_class=2)
    assert result.meta["output"] == "indicator"
    assert result.meta["target_class"] == [2] * len(QUERIES)
    assert np.all(np.argmax(np.abs(result.values), axis=1) == 0)
    assert np.all(result.values[:, 0] > 0)


def test_the_binary_default_is_the_positive_class_in_probability_units():
    y = (X[:, 0] > 0.5).astype(int)
    model = LogisticRegression(C=100).fit(X_MODEL, y[:1200])
    explainer = _explainer(model, epsilon=np.inf, epsilon_per_query=np.inf, max_iter=2000)
    result = explainer.fit(X_PRIVATE).explain(QUERIES)
    assert result.meta["target_class"] == [1] * len(QUERIES)
    # the non-private optimum of the local loss on 2 P - 1, in units of P
    labels = 2 * model.predict_proba(X_PRIVATE)[:, 1] - 1
    H, g, _ = local_loss_terms(QUERIES, X_PRIVATE, labels)
    np.testing.assert_allclose(result.values, trust_region(H, g, 1.0) / 2, atol=1e-3)
    # and class 0's is its opposite (P(0) = 1 - P(1))
    other = explainer.explain(QUERIES, target_class=0)
    np.testing.assert_allclose(other.values, -result.values, atol=1e-3)


def test_local_loss_terms_with_offsets_are_those_of_the_centred_labels():
    y = np.sin(5 * X_PRIVATE[:, 0])
    offset = np.linspace(-0.5, 0.5, len(QUERIES))
    H, g, s = local_loss_terms(QUERIES, X_PRIVATE, y, offset=offset)
    for i, (z, o) in enumerate(zip(QUERIES, offset)):
        Hi, gi, si = local_loss_terms(z[None], X_PRIVATE, y - o)
        np.testing.assert_allclose(H[i], Hi[0], rtol=1e-9, atol=1e-14)
        np.testing.assert_allclose(g[i], gi[0], rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(s[i], si[0], rtol=1e-10)


# --------------------------------------------------------------------------
# DataFrames: the black box gets rows of the kind the explainer was fitted on
# --------------------------------------------------------------------------

_SCHEMA = dict(bounds={"age": (17, 90), "income": (0, 2e5)},
               categories={"colour": ["red", "green", "blue"], "city": ["Paris", "Rome"]})


@pytest.mark.parametrize("kind", ["probability", "regression", "numeric frame"])
def test_a_dataframe_pipeline_black_box_gets_dataframe_rows(kind):
    import warnings

    from sklearn.compose import make_column_transformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    X_model, X_private, queries = mixed_table(600, 0), mixed_table(600, 1), mixed_table(5, 2)
    score = (X_model["age"] - 50) / 10 + (X_model["colour"] == "red") * 2.0
    columns = make_column_transformer(
        (StandardScaler(), ["age", "income"]),
        (OneHotEncoder(handle_unknown="ignore"), ["colour", "city"]))
    params = dict(_SCHEMA)
    if kind == "probability":  # three classes: the default is the predicted class
        model = make_pipeline(columns, LogisticRegression())
        model.fit(X_model, np.digitize(score, [-1.0, 1.0]))
    elif kind == "regression":
        model = make_pipeline(columns, Ridge()).fit(X_model, score)
        params["output_bounds"] = (-5, 7)
    else:  # a numeric DataFrame, no categories
        X_model, X_private, queries = (t[["age", "income"]] for t in (X_model, X_private,
                                                                       queries))
        model = make_pipeline(make_column_transformer((StandardScaler(), ["income", "age"])),
                              LogisticRegression()).fit(X_model, score > 0)
        params = dict(bounds={"age": (17, 90), "income": (0, 2e5)})
    explainer = DPLimeExplainer(model, epsilon=20.0, epsilon_per_query=2.0, max_iter=20,
                                accountant=PrivacyLedger(), **params)
    with warnings.catch_warnings():
        # no error (a name-selecting Pipeline fails on arrays), no feature-name warning
        warnings.simplefilter("error")
        result = explainer.fit(X_private).explain(queries)
    assert set(result.phase) == {"interactive"}
    assert result.feature_names == list(explainer.schema_.feature_names_out)
    if kind == "numeric frame":
        assert result.feature_names == ["age", "income"]
    else:
        assert result.values.shape == (5, 7)  # age, 3 colours, income, 2 cities
    if kind == "probability":
        assert result.meta["target_class"] == model.predict(queries).tolist()
    if kind == "regression":
        # the age slope: the Ridge's coefficient on age per year (0.1), within noise
        assert 0.0 < result.values[:, 0].mean() < 0.3


def test_csr_one_hot_rows_are_explained_and_the_black_box_gets_csr():
    from scipy import sparse

    rng = np.random.RandomState(0)
    X = sparse.csr_matrix(np.eye(4)[rng.randint(0, 4, 800)])
    y = np.asarray(X[:, 0].todense()).ravel() + 2 * np.asarray(X[:, 3].todense()).ravel()
    model = LogisticRegression().fit(X[:400], y[:400])
    seen = []

    class Spy:  # what the black box receives
        classes_ = model.classes_

        def predict_proba(self, rows):
            seen.append(sparse.issparse(rows))
            return model.predict_proba(rows)

        def predict(self, rows):
            seen.append(sparse.issparse(rows))
            return model.predict(rows)

    result = _explainer(Spy()).fit(X[400:]).explain(X[:3])
    assert result.values.shape == (3, 4) and all(seen) and len(seen) >= 3


def test_results_carry_the_public_ranges_and_the_columns():
    X_private, queries = mixed_table(300, 1), mixed_table(3, 2)
    model = LogisticRegression().fit(
        np.c_[X_private["age"], X_private["income"]], X_private["age"] > 50)

    class Numeric:  # the black box takes the two numeric columns of the frame
        classes_ = model.classes_

        def predict_proba(self, rows):
            return model.predict_proba(rows[["age", "income"]].to_numpy())

        def predict(self, rows):
            return model.predict(rows[["age", "income"]].to_numpy())

    explainer = DPLimeExplainer(Numeric(), epsilon=20.0, epsilon_per_query=2.0, max_iter=20,
                                accountant=PrivacyLedger(), **_SCHEMA).fit(X_private)
    result = explainer.explain(queries)
    np.testing.assert_array_equal(result.feature_range, [73, 1, 1, 1, 2e5, 1, 1])
    assert [name for name, _ in result.groups] == ["age", "colour", "income", "city"]
    np.testing.assert_allclose(result.scaled_values, result.values * result.feature_range)
