"""PrivRecourse explains itself: a reason for every query with no path, a warning for a
graph too small to be of use, and path steps in original columns and units."""

import json
import warnings

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from skdpx import PrivRecourse, RecoursePaths
from skdpx.exceptions import UtilityWarning
from skdpx.recourse import _privrecourse

from .test_recourse_tables import _rec as _table_rec
from .test_recourse_tables import table  # noqa: F401,F811  (the module fixture)

pd = pytest.importorskip("pandas")

#: the first words of every reason PrivRecourse gives
CAUSES = ("no admissible node", "no admissible favourable node",
          "no path within the distance threshold", "no path under the step rules",
          "end point not favourable")


@pytest.fixture(scope="module")
def problem():
    rng = np.random.RandomState(0)
    X = rng.uniform(0, 1, size=(20000, 3))
    y = (X[:, 0] + X[:, 1] > 1.2).astype(int)
    return X, y, LogisticRegression().fit(X[:2000], y[:2000])


def _rec(box, **kw):
    params = dict(n_clusters=40, epsilon=2.0, bounds=(0.0, 1.0), random_state=0)
    params.update(kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return PrivRecourse(box, **params)


def _fit(rec, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rec.fit(X)


def _denied(box, X, n=200):
    return X[box.predict(X) == 0][:n]


def _check_reasons(res):
    """Every query without a path has a reason naming its cause; the others none."""
    assert res.reason.dtype == object and len(res.reason) == len(res)
    for ok, why in zip(res.success, res.reason):
        if ok:
            assert why == ""
        else:
            assert isinstance(why, str) and why
            assert any(cause in why for cause in CAUSES), why


# ---------------------------------------------------------------- reasons

def test_no_admissible_node_says_so_with_the_tolerance(problem):
    X, _, box = problem
    # an immutable feature held to within 0 of the query: no noisy centre is admissible
    rec = _fit(_rec(box, immutable_features=[2], tolerance=0.0, max_tolerance=None), X)
    res = rec.explain(_denied(box, X, 50))
    _check_reasons(res)
    assert not res.success.any()
    assert all(r.startswith("no admissible node") and "tolerance=0" in r for r in res.reason)
    # the rule that rules out most nodes is named, with its count
    assert all("fewest pass x2 (immutable): 0 of" in r for r in res.reason)


def test_favourable_centres_lost_to_the_querys_immutables(problem):
    X, _, box = problem
    # x0 immutable (every centre admissible at tolerance 1): with x0 < 0.15 held, no
    # record is favourable (x0 + x1 > 1.2 needs x1 > 1.05), though some centres are
    rec = _fit(_rec(box, immutable_features=[0], tolerance=1.0), X)
    res = rec.explain(X[X[:, 0] < 0.15][:40])
    _check_reasons(res)
    assert not res.success.any() and len(rec.candidates_)
    assert all(r.startswith("no admissible favourable node") and
               "favourable as DP centres but none once given this query's immutable" in r
               for r in res.reason)


def test_no_path_within_the_distance_threshold(problem):
    X, _, box = problem
    rec = _fit(_rec(box, distance_threshold=1e-3, increasing_features=[0]), X)
    res = rec.explain(_denied(box, X))
    _check_reasons(res)
    # the first hop (query -> nearest admissible node) is a lookup, not an edge, so a
    # query with an admissible favourable node always reaches one: the search never
    # gives this cause on its own; the reasons' table is checked on masks (the
    # search's outputs) where a candidate is unreachable
    k = len(rec.cluster_centers_)
    admissible = np.ones((3, k), dtype=bool)
    candidates = np.zeros((3, k), dtype=bool)
    candidates[:2, 0] = True
    reach = np.array([False, True, False])
    verified = np.array([False, False, False])
    why = rec._reasons(admissible, candidates, reach, verified, np.zeros(3, dtype=bool),
                       np.full((3, 3), 0.5))
    assert why[0].startswith("no path within the distance threshold: 1 admissible")
    assert "distance_threshold=0.001" in why[0]
    assert why[1].startswith("end point not favourable")
    assert why[2].startswith(f"no admissible favourable node: {k} of the {k} node(s)")
    rec.set_params(distance_threshold=None)  # (post-processing parameters only)
    why = rec._reasons(admissible, candidates, reach, verified, np.zeros(3, dtype=bool),
                       np.full((3, 3), 0.5))
    assert why[0].startswith("no path under the step rules")


def test_no_admissible_favourable_node(problem):
    X, _, box = problem
    # decreasing features 0 and 1: the favourable region (x0 + x1 > 1.2) is out of reach
    rec = _fit(_rec(box, decreasing_features=[0, 1], tolerance=0.0), X)
    res = rec.explain(_denied(box, X, 100))
    _check_reasons(res)
    assert any(r.startswith("no admissible favourable node") for r in res.reason)


def test_reasons_on_a_dataframe_fit(table):  # noqa: F811
    X, _, box = table
    rec = _fit(_table_rec(box), X)
    res = rec.explain(X[box.predict(X) == 0].iloc[:60])
    _check_reasons(res)
    assert 0 < res.success.sum() < len(res)
    assert res.to_json() and RecoursePaths.from_json(res.to_json()) == res


def test_a_reason_on_a_query_with_a_path_is_refused():
    # seen failing with the check in RecoursePaths.__init__ removed
    with pytest.raises(ValueError, match="reason"):
        RecoursePaths([[0.0]], [[[0.0], [1.0]]], cost=[1.0], success=[True],
                      reason=["no admissible node"], epsilon_spent=1.0, delta_spent=0.0)
    ok = RecoursePaths([[0.0], [1.0]], [[[0.0], [1.0]], [[1.0]]], cost=[1.0, np.inf],
                       success=[True, False], reason=["", "why"], epsilon_spent=1.0,
                       delta_spent=0.0)
    assert ok[1].reason.tolist() == ["why"]
    assert RecoursePaths.from_json(ok.to_json()) == ok


# ---------------------------------------------------------------- small graphs

def test_a_graph_too_small_warns_and_every_failure_says_so(problem):
    X, _, box = problem
    # 600 rows in 200 clusters at epsilon 0.5: a few rows per cluster, under the noise
    rec = _rec(box, n_clusters=200, epsilon=0.5, increasing_features=[0],
               decreasing_features=[1])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rec.fit(X[:600])
    utility = [str(w.message) for w in caught if issubclass(w.category, UtilityWarning)]
    # one before the clustering's spend (from the DP row count), one after (the nodes)
    assert len(utility) == 2, [str(w.message) for w in caught]
    assert "cannot support a useful graph" in utility[0]
    text = utility[1]
    k = len(rec.cluster_centers_)
    assert k < _privrecourse.MIN_USEFUL_NODES
    assert f"kept {k} of 200 centres" in text
    assert "rows per cluster" in text and "noise std" in text and "n_clusters <=" in text
    res = rec.explain(_denied(box, X, 100))
    _check_reasons(res)
    assert (~res.success).any()
    assert all(r.startswith("graph too small for this epsilon") and f"kept {k} of 200" in r
               for r in res.reason[~res.success])


def test_a_useful_graph_does_not_warn(problem):
    X, _, box = problem
    rec = _rec(box)
    # seen failing (a warning) with the threshold of the check set to 1000 nodes
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rec.fit(X)
    assert len(rec.cluster_centers_) >= _privrecourse.MIN_USEFUL_NODES
    assert not [w for w in caught if issubclass(w.category, UtilityWarning)]


# ---------------------------------------------------------------- original units

@pytest.fixture(scope="module")
def table_paths(table):  # noqa: F811
    X, _, box = table
    rec = _fit(_table_rec(box, tolerance=0.15), X)
    return rec, rec.explain(X[box.predict(X) == 0].iloc[:80])


def test_steps_are_in_original_columns_and_units(table_paths):
    rec, res = table_paths
    assert res.success.sum() >= 5
    for i in np.flatnonzero(res.success)[:5]:
        steps = res.steps(int(i))
        assert list(steps.columns) == ["step", "age", "sex", "hours", "race", "job"]
        assert len(steps) == len(res.paths[i])
        assert steps["step"].tolist() == list(range(len(steps)))
        assert steps["age"].dtype.kind == "i"  # an integer column stays integer
        assert set(steps["job"]) <= {"x", "y", "z", "w"}  # declared levels, not one-hot
        assert set(steps["race"]) <= {"A", "B", "C"}
        # step 0 is the query as given, the last step the end point
        pd.testing.assert_series_equal(steps.iloc[0, 1:], res.query_records.iloc[i],
                                       check_names=False, check_dtype=False)
        pd.testing.assert_series_equal(steps.iloc[-1, 1:],
                                       res.counterfactual_records.iloc[i],
                                       check_names=False, check_dtype=False)
        assert steps.attrs["success"] and steps.attrs["reason"] == ""
    failed = int(np.flatnonzero(~res.success)[0])
    assert len(res.steps(failed)) == 1 and res.steps(failed).attrs["reason"]


def test_to_frame_gives_original_columns_by_default(table_paths):
    rec, res = table_paths
    frame = res.to_frame()
    assert list(frame.columns) == ["query", "step", "age", "sex", "hours", "race", "job",
                                   "cost", "success"]
    assert len(frame) == sum(len(p) for p in res.paths)
    encoded = res.to_frame(original=False)
    assert list(encoded.columns[2:-2]) == list(rec.schema_.feature_names_out)
    np.testing.assert_array_equal(frame["query"], encoded["query"])


def test_path_records_follow_selection_and_json(table_paths):
    _, res = table_paths
    idx = np.flatnonzero(res.success)[[2, 0]]
    sub = res[idx]
    for j, i in enumerate(idx):
        pd.testing.assert_frame_equal(sub.steps(j), res.steps(int(i)))
    back = RecoursePaths.from_json(res.to_json())
    assert back == res
    pd.testing.assert_frame_equal(back.steps(int(idx[0])), res.steps(int(idx[0])),
                                  check_dtype=False)
    assert json.loads(res.to_json())["path_records"]["columns"][0] == "age"


def test_plot_is_per_original_column(table_paths):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    _, res = table_paths
    i = int(np.flatnonzero(res.success)[0])
    ax = res.plot(i, features=("job", "age"))
    assert ax.get_xlabel() == "job" and ax.get_ylabel() == "age"
    assert {t.get_text() for t in ax.get_xticklabels()} <= {"x", "y", "z", "w"}
    ax = res.plot(i)  # default: the columns that change along the path
    assert {ax.get_xlabel(), ax.get_ylabel()} <= set(res.query_records.columns)
    with pytest.raises(ValueError, match="unknown column"):
        res.plot(i, features=("job", "job=x"))


def test_no_step_moves_a_column_against_its_rule(table_paths):
    # the rules of the fixture: sex and race immutable, age increasing, hours decreasing
    _, res = table_paths
    frame = res.to_frame()
    frame = frame[frame["success"]]
    assert frame["query"].nunique() >= 5 and (frame["step"] > 1).any()
    for _, path in frame.groupby("query"):
        assert (np.diff(path["age"].to_numpy()) >= 0).all()
        assert (np.diff(path["hours"].to_numpy()) <= 1e-9).all()
        assert path["sex"].nunique() == 1 and path["race"].nunique() == 1
