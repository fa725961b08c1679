"""Issue 36: searches validate every candidate before they spend, a scikit-learn search
on a capped ledger is priced at its first fit (never a NaN score because the cap ran
out), and result objects and searches raise the library's errors."""

import json
import warnings

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, LeaveOneOut, RandomizedSearchCV, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from skdpx import DPLocallyLinearClassifier
from skdpx.exceptions import ResultIndexError
from skdpx.results import (
    CounterfactualSet,
    FeatureAttribution,
    LocallyLinearMaps,
    RecoursePaths,
)
from skdpx._sklearn_compat import InvalidParameterError
from skdpx.attacks import AttackResult, AttributeInferenceResult, ExtractionResult
from skdpx.model_selection import (
    DPGridSearchCV,
    DPRandomSearchCV,
    PrivacyUtilityCurve,
    privacy_utility_curve,
)
from skdpx.privacy import (
    BudgetError,
    PrivacyLedger,
    compose_events,
    exponential_mechanism,
    gaussian_event,
    laplace_mechanism,
)
from skdpx.privacy._events import fixed_loss_event

pytestmark = pytest.mark.filterwarnings("ignore")


def _data(n=240, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 3))
    return X, (X[:, 0] + 0.3 * X[:, 1] > 0).astype(int)


def _clf(ledger=None, **kw):
    return DPLocallyLinearClassifier(bounds=(-1, 1), classes=[0, 1], epochs=2, delta=1e-5,
                                     accountant=ledger, **kw)


# --------------------------------------------------------------------------
# 1. Every candidate of a private search is validated before anything is spent
# --------------------------------------------------------------------------
BAD_POOLS = [
    ({"n_maps": [1, -1]}, "n_maps", 1),
    ({"learning_rate": [0.1, np.nan]}, "learning_rate", 1),
    ({"n_maps": [0, 1]}, "n_maps", 0),
]


@pytest.mark.parametrize("grid, name, index", BAD_POOLS, ids=["n_maps=-1", "lr=nan", "n_maps=0"])
@pytest.mark.parametrize("kind", ["grid", "random"])
def test_an_invalid_candidate_is_refused_before_the_count(grid, name, index, kind):
    X, y = _data()
    messages = set()
    for seed in (None, 0, 1):  # whatever the runs would draw
        ledger = PrivacyLedger(epsilon=5.0, delta=1e-3)
        if kind == "grid":
            search = DPGridSearchCV(_clf(), grid, epsilon=5.0, delta=1e-3, accountant=ledger,
                                    random_state=seed)
        else:
            search = DPRandomSearchCV(_clf(), grid, n_iter=2, epsilon=5.0, delta=1e-3,
                                      accountant=ledger, random_state=seed)
        with pytest.raises(InvalidParameterError, match=name) as err:
            search.fit(X, y)
        assert len(ledger) == 0 and ledger.epsilon_spent == 0  # not even the count
        assert f"candidate {index}" in str(err.value)
        messages.add(str(err.value))
        with pytest.raises(InvalidParameterError, match=name):
            search.price(X, y, n_rows=240)
    assert len(messages) == 1  # the same error whatever the draws


def test_an_invalid_candidate_of_a_pipeline_step_is_refused():
    X, y = _data()
    ledger = PrivacyLedger(epsilon=5.0, delta=1e-3)
    pipe = make_pipeline(FunctionTransformer(), _clf())
    search = DPGridSearchCV(pipe, {"dplocallylinearclassifier__n_maps": [2, -1]}, epsilon=5.0,
                            delta=1e-3, accountant=ledger)
    with pytest.raises(InvalidParameterError, match="n_maps"):
        search.fit(X, y)
    assert len(ledger) == 0


# --------------------------------------------------------------------------
# 2. scikit-learn's searches on a capped ledger: priced at the first fit
# --------------------------------------------------------------------------
def test_gridsearchcv_over_epsilon_on_a_ledger_capped_at_4_is_refused_before_any_spend():
    # the case: the cap ran out in the last fold, epsilon=2 scored NaN and
    # epsilon=1 was reported best, with warnings and no error
    X, y = _data()
    ledger = PrivacyLedger(epsilon=4.0, delta=1e-3)
    search = GridSearchCV(_clf(ledger), {"epsilon": [1.0, 2.0]}, cv=2)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        # refused at the search's first clone of its estimator, before any fit: the
        # BudgetError itself, whatever error_score
        with pytest.raises(BudgetError, match="refused before its first fit"):
            search.fit(X, y)
    assert len(ledger) == 0 and ledger.epsilon_spent == 0
    assert not hasattr(search, "best_params_") and not hasattr(search, "cv_results_")
    assert not [w for w in seen if "fits failed" in str(w.message)]


def test_a_search_in_worker_processes_is_refused_before_any_fit(tmp_path):
    # n_jobs=2: the fits run in other processes (where the stack shows no search); the
    # search's first clone, in this process, prices it
    X, y = _data()
    ledger = PrivacyLedger(epsilon=4.0, delta=1e-3, path=tmp_path / "budget.sqlite")
    search = GridSearchCV(_clf(ledger), {"epsilon": [1.0, 2.0]}, cv=2, n_jobs=2)
    with pytest.raises(BudgetError, match="refused before its first fit"):
        search.fit(X, y)
    assert len(ledger) == 0


@pytest.mark.parametrize("make", [
    lambda led: GridSearchCV(_clf(led), {"epsilon": [1.0, 2.0]}, cv=2, error_score="raise"),
    lambda led: RandomizedSearchCV(_clf(led), {"epsilon": [1.0, 2.0]}, n_iter=2, cv=2,
                                   random_state=0),
    lambda led: RandomizedSearchCV(_clf(led), {"epsilon": [1.0, 2.0]}, n_iter=2, cv=2),
    lambda led: GridSearchCV(make_pipeline(FunctionTransformer(), _clf(led)),
                             {"dplocallylinearclassifier__epsilon": [1.0, 2.0]}, cv=2),
], ids=["grid-raise", "random", "random-unseeded", "pipeline"])
def test_a_search_that_cannot_finish_raises_budget_error(make):
    X, y = _data()
    ledger = PrivacyLedger(epsilon=4.0, delta=1e-3)
    with pytest.raises(BudgetError, match="refused before its first fit"):
        make(ledger).fit(X, y)
    assert len(ledger) == 0


def test_cross_validate_on_a_capped_ledger_is_priced_first():
    X, y = _data()
    ledger = PrivacyLedger(epsilon=4.0, delta=1e-3)
    with pytest.raises(ValueError, match="BudgetError"):
        cross_validate(_clf(ledger, epsilon=1.0), X, y, cv=5)
    assert len(ledger) == 0
    ledger = PrivacyLedger(epsilon=6.0, delta=1e-3)  # 5 fits at 1: it can pay
    scores = cross_validate(_clf(ledger, epsilon=1.0), X, y, cv=5)["test_score"]
    assert np.isfinite(scores).all() and len(ledger) == 10  # a count and a fit each


def test_a_search_the_ledger_can_pay_for_runs_as_before():
    X, y = _data()
    ledger = PrivacyLedger(epsilon=10.0, delta=1e-3)
    search = GridSearchCV(_clf(ledger), {"epsilon": [1.0, 2.0]}, cv=2).fit(X, y)
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()
    assert len(ledger) == 10  # 4 folds + the refit, each a count and a fit
    # the verdict is kept for that call only: the same search again, on an emptier ledger
    ledger2 = PrivacyLedger(epsilon=4.0, delta=1e-3)
    search.set_params(estimator=_clf(ledger2))
    with pytest.raises(BudgetError, match="refused before its first fit"):
        search.fit(X, y)
    assert len(ledger2) == 0


def test_a_search_that_cannot_be_priced_is_refused_on_a_capped_ledger():
    X, y = _data(n=12)
    ledger = PrivacyLedger(epsilon=100.0, delta=1e-3)
    search = GridSearchCV(_clf(ledger), {"n_maps": [1]}, cv=LeaveOneOut())
    with pytest.raises(BudgetError, match="cannot be"):
        search.fit(X, y)
    assert len(ledger) == 0


def test_a_fold_refused_mid_search_makes_the_search_raise_not_report_a_best():
    # priced at the first fit, then something else spends from the ledger: a later fold
    # is refused; the later fits are refused before they spend and the refit raises
    X, y = _data()
    ledger = PrivacyLedger(epsilon=8.0, delta=1e-3)
    calls = []

    def scorer(est, X_val, y_val):
        if not calls:
            laplace_mechanism(0.0, epsilon=7.0, sensitivity=1.0, ledger=ledger)
        calls.append(1)
        return float((est.predict(X_val) == y_val).mean())

    search = GridSearchCV(_clf(ledger), {"epsilon": [1.0, 1.5]}, cv=2, scoring=scorer)
    with pytest.raises(BudgetError, match="no best is reported"):
        search.fit(X, y)
    assert not hasattr(search, "best_params_")


def test_fits_outside_a_search_and_on_an_uncapped_ledger_are_untouched():
    X, y = _data()
    ledger = PrivacyLedger()  # no cap: nothing to check
    GridSearchCV(_clf(ledger), {"epsilon": [1.0, 2.0]}, cv=2).fit(X, y)
    assert len(ledger) == 10
    capped = PrivacyLedger(epsilon=1.0, delta=1e-3)
    _clf(capped, epsilon=1.0).fit(X, y)
    with pytest.raises(BudgetError):  # alone, a fit is refused by the ledger as before
        _clf(capped, epsilon=1.0).fit(X, y)


# --------------------------------------------------------------------------
# 3. Result objects and searches raise the library's errors
# --------------------------------------------------------------------------
def _results():
    q = np.zeros((3, 2))
    common = dict(epsilon_spent=1.0, delta_spent=1e-5)
    return {
        "FeatureAttribution": FeatureAttribution(np.ones((3, 2)), epsilon=0.5, **common),
        "CounterfactualSet": CounterfactualSet(q, q + 1, desired_class=1, predicted_class=1,
                                               **common),
        "RecoursePaths": RecoursePaths(q, [np.vstack([r, r + 1]) for r in q], cost=1.0,
                                       success=True, **common),
    }


@pytest.mark.parametrize("name", ["FeatureAttribution", "CounterfactualSet", "RecoursePaths"])
@pytest.mark.parametrize("index", [99, -4, "x", 1.5, True])
def test_plot_with_a_bad_index_names_the_valid_range(name, index):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    result = _results()[name]
    with pytest.raises(ValueError, match="-3 to 2"):
        result.plot(index=index)


@pytest.mark.parametrize("name", [
    "FeatureAttribution", "CounterfactualSet", "RecoursePaths", "AttackResult",
    "AttributeInferenceResult", "ExtractionResult", "PrivacyUtilityCurve"])
@pytest.mark.parametrize("ax", [0, "x", object(), []], ids=["0", "str", "object", "list"])
def test_plot_on_something_that_is_not_axes_is_a_type_error(name, ax):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    with pytest.raises(TypeError, match="matplotlib Axes"):
        RESULTS[name]().plot(ax=ax)


@pytest.mark.parametrize("text", ["x", "[]", "null", "3"])
def test_from_json_of_text_that_is_no_object_nor_a_file_is_a_value_error(text):
    for make in RESULTS.values():
        with pytest.raises(ValueError, match="not JSON text|JSON holds"):
            type(make()).from_json(text)


@pytest.mark.parametrize("name", ["FeatureAttribution", "CounterfactualSet", "RecoursePaths"])
def test_row_selection_out_of_range_is_a_value_error_and_iteration_still_works(name):
    result = _results()[name]
    with pytest.raises(ValueError, match="-3 to 2"):
        result[3]
    with pytest.raises(IndexError):  # the sequence protocol
        result[3]
    assert issubclass(ResultIndexError, ValueError)
    assert len(list(result)) == 3 and result[-1] == result[2]


def _attribute_result():
    return AttributeInferenceResult(
        feature=[0], candidates=[0.0, 1.0], true_members=[0, 1], guess_members=[0, 1],
        true_non_members=[1, 0], guess_non_members=[1, 1], signal="loss")


def _extraction_result():
    return ExtractionResult([{"strategy": "random", "n_queries": 10, "fidelity": 0.9,
                              "fidelity_std": 0.01, "accuracy": 0.8, "n_train": 10,
                              "n_explainer_calls": 10, "n_black_box_calls": 10}])


def _curve():
    return PrivacyUtilityCurve(
        epsilons=np.array([0.5, 1.0]), scores=np.array([0.6, np.nan]), scoring="accuracy",
        delta=1e-5, point_epsilons=np.array([0.5, 1.0]), total_epsilon=1.4, total_delta=2e-5,
        validation="holdout", n_rows=240.0, n_train=192.0, n_validation=48.0,
        count_epsilon=0.05, count_std=28.3, fit_epsilons=np.array([0.475, 0.95]),
        score_noise_multipliers=np.array([3.0, 1.5]), estimator="DPLocallyLinearClassifier",
        events=[gaussian_event(2.0), compose_events(gaussian_event(1.0), gaussian_event(3.0))],
        count_event=fixed_loss_event(0.05))


RESULTS = {
    **{name: (lambda name=name: _results()[name]) for name in _results()},
    "LocallyLinearMaps": lambda: LocallyLinearMaps(np.ones((2, 1, 3)), epsilon_spent=1.0,
                                                   delta_spent=0.0),
    "AttackResult": lambda: AttackResult([0.9, 0.8], [0.1, 0.3]),
    "AttributeInferenceResult": _attribute_result,
    "ExtractionResult": _extraction_result,
    "PrivacyUtilityCurve": _curve,
}


@pytest.mark.parametrize("name", sorted(RESULTS))
def test_from_json_round_trips_and_names_a_missing_key(name):
    result = RESULTS[name]()
    cls = type(result)
    text = result.to_json()
    again = cls.from_json(text)
    assert again.to_json() == text
    payload = json.loads(text)
    required = {"FeatureAttribution": "values", "CounterfactualSet": "counterfactuals",
                "RecoursePaths": "paths", "LocallyLinearMaps": "coef",
                "AttackResult": "scores_members", "AttributeInferenceResult": "candidates",
                "ExtractionResult": "records", "PrivacyUtilityCurve": "scores"}[name]
    del payload[required]
    with pytest.raises(ValueError, match=repr(required)):
        cls.from_json(json.dumps(payload))
    payload = json.loads(text)
    payload["no_such_field"] = 1
    with pytest.raises(ValueError, match="no_such_field"):
        cls.from_json(json.dumps(payload))


def test_privacy_utility_curve_from_json_gives_back_the_events(tmp_path):
    curve = _curve()
    path = tmp_path / "curve.json"
    path.write_text(curve.to_json())
    again = PrivacyUtilityCurve.from_json(str(path))
    assert again == curve and again.estimators is None
    assert np.isnan(again.scores[1]) and again.epsilon_at(1e-5) == curve.epsilon_at(1e-5)


@pytest.mark.parametrize("kind", ["grid", "random"])
@pytest.mark.parametrize("method", ["predict", "predict_proba", "decision_function", "score",
                                    "explain"])
def test_a_search_used_before_fit_raises_not_fitted(kind, method):
    make = DPGridSearchCV if kind == "grid" else DPRandomSearchCV
    search = make(_clf(), {"n_maps": [1, 2]})
    assert hasattr(search, method)
    X, y = _data(n=4)
    args = (X, y) if method == "score" else (X,)
    with pytest.raises(NotFittedError):
        getattr(search, method)(*args)
    with pytest.raises(NotFittedError):
        search.classes_


# --------------------------------------------------------------------------
# 5. Argument checks
# --------------------------------------------------------------------------
def test_bad_arguments_of_the_mechanisms_ledger_and_curve_are_refused():
    ledger = PrivacyLedger(epsilon=5.0)
    with pytest.raises(ValueError, match="monotonic"):
        exponential_mechanism([0.0, 1.0], epsilon=1.0, sensitivity=1.0, monotonic="yes",
                              ledger=ledger)
    with pytest.raises(ValueError, match="sensitivity"):
        laplace_mechanism(3.0, epsilon=1.0, sensitivity=0.0, ledger=ledger)
    assert len(ledger) == 0
    for kw in ({"epsilon": True}, {"delta": False}):
        with pytest.raises(ValueError):
            PrivacyLedger(**kw)
    X, y = _data()
    for epsilons in (["1"], [True, 2.0], "1"):
        with pytest.raises(ValueError, match="list of numbers"):
            privacy_utility_curve(_clf(ledger), X, y, epsilons=epsilons, accountant=ledger)
    assert len(ledger) == 0


def test_attack_result_from_json_without_its_optional_keys():
    # AttackResult.from_json read data["meta"] and data["signal"]: a KeyError without them
    payload = json.loads(AttackResult([0.9, 0.8], [0.1, 0.3], signal="loss").to_json())
    del payload["meta"], payload["signal"]
    again = AttackResult.from_json(json.dumps(payload))
    assert again.meta == {} and again.signal == "callable"


def test_privacy_utility_curve_validates_the_estimator_before_its_count():
    # it committed its count and points (0.76 of 5), then failed with a RuntimeError
    X, y = _data()
    ledger = PrivacyLedger(epsilon=5.0, delta=1e-3)
    with pytest.raises(InvalidParameterError, match="n_maps"):
        privacy_utility_curve(_clf(ledger, n_maps=0), X, y, epsilons=[0.5, 1.0],
                              accountant=ledger)
    assert len(ledger) == 0


def test_the_search_base_class_comes_from_the_compat_module():
    from sklearn.model_selection import GridSearchCV as Grid

    from skdpx import _sklearn_compat as compat

    assert compat.BaseSearchCV is not None and issubclass(Grid, compat.BaseSearchCV)


def test_a_misspelled_parameter_of_a_sklearn_search_on_a_capped_ledger_is_not_a_budget_error():
    # (the outside review: the clone-time pricing reported it as a search that cannot
    # be priced, a BudgetError)
    import numpy as np
    from sklearn.model_selection import GridSearchCV

    from skdpx import DPLocallyLinearClassifier
    from skdpx.privacy import BudgetError, PrivacyLedger

    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(120, 3))
    y = (X[:, 0] > 0).astype(int)
    ledger = PrivacyLedger(epsilon=50.0, delta=1e-2)
    clf = DPLocallyLinearClassifier(bounds=(-1, 1), classes=[0, 1], epochs=1, epsilon=0.5,
                                    accountant=ledger, random_state=0)
    with pytest.raises(ValueError, match="Invalid parameter 'n_mapz'") as info:
        GridSearchCV(clf, {"n_mapz": [1]}, cv=2).fit(X, y)
    assert not isinstance(info.value, BudgetError)
    assert not ledger.events
