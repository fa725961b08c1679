"""The global explanations on Spark: partial_dependence, permutation_importance and the
DP SHAP background give the in-memory release from a Spark DataFrame, make the same
spend, refuse bad input before it, and nothing but partial sums reaches the driver."""

import warnings

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

from skdpx.explain import DPShapExplainer, dp_background
from skdpx.inspection import partial_dependence, permutation_importance
from skdpx.preprocessing import PublicSchemaEncoder
from skdpx.privacy import PrivacyLedger, event_to_json

from ._tables import CATEGORIES, N, people

pyspark = pytest.importorskip("pyspark")
pd = pytest.importorskip("pandas")

BOUNDS = {"age": (17.0, 90.0), "hours": (1.0, 99.0)}


def refuse_spark_rows(monkeypatch, max_size=N // 4):
    """Make the driver fail if a row of a Spark DataFrame reaches it, by any route.

    Every DataFrame method that brings rows to the driver (``collect``,
    ``toPandas``, ``toArrow``, ``take``, ``head``, ``first``, ``tail``,
    ``toLocalIterator``, ``show``) raises. ``RDD.collect`` (where a tree
    aggregation's last partial sums arrive) is let through and what it returns
    is recorded and checked: each item must be a numpy array, or a tuple of
    them, of fewer than ``max_size`` numbers (a partial sum of a per-feature
    statistic, never a row or a batch of rows). Returns the list of the
    collected items' shapes.
    """
    from pyspark.core.rdd import RDD
    from pyspark.sql import DataFrame
    from pyspark.sql.classic.dataframe import DataFrame as ClassicDataFrame

    def refuse(self, *args, **kwargs):
        raise AssertionError("rows of a Spark DataFrame were brought to the driver")

    for cls in (DataFrame, ClassicDataFrame):
        for name in ("collect", "toPandas", "toArrow", "take", "head", "first", "tail",
                     "toLocalIterator", "show"):
            if hasattr(cls, name):
                monkeypatch.setattr(cls, name, refuse)
    seen = []
    collect = RDD.collect

    def leaves(value):
        if type(value) is tuple:  # (a Row is a tuple too: a leaf, refused below)
            for item in value:
                yield from leaves(item)
        else:
            yield value

    def checked_collect(self):
        items = collect(self)
        for item in items:
            for leaf in leaves(item):
                if not isinstance(leaf, np.ndarray) or leaf.dtype.kind not in "biuf":
                    raise AssertionError(f"the driver collected a {type(leaf).__name__}")
                if leaf.size >= max_size:
                    raise AssertionError(f"the driver collected an array of shape {leaf.shape}")
                seen.append(leaf.shape)
        return items

    monkeypatch.setattr(RDD, "collect", checked_collect)
    return seen


@pytest.fixture(scope="module")
def data(spark):
    rng = np.random.default_rng(5)
    frame = people(rng)[["age", "job", "hours"]]
    y = (((frame["age"] - 40) / 10 + (frame["job"] == "manager")
          + rng.normal(size=N)) > 0.5).astype(np.int64)
    box = make_pipeline(PublicSchemaEncoder(bounds=BOUNDS, categories=CATEGORIES),
                        LogisticRegression()).fit(frame, y)
    # the rows in their order, in 2 partitions (each read in Arrow batches of 700 rows);
    # from an RDD, not a local relation (whose projections Spark evaluates in the driver,
    # so that monotonically_increasing_id would number the rows 0..n-1 in one piece)
    rows = spark.sparkContext.parallelize(
        list(frame.assign(label=y).itertuples(index=False, name=None)), 2)
    df = spark.createDataFrame(rows, "age double, job string, hours double, label long")
    df = df.cache()  # kept in the executors (each pass would convert the Python rows again)
    df.count()
    return frame, y.to_numpy(), box, df


def _quiet(func, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a seed's PrivacyLeakWarning
        return func(*args, **kw)


def _events(ledger):
    return [(label, event_to_json(event)) for label, event in ledger.events]


def _releases(X, y, box, epsilon, replacement="marginal", shap=True):
    """partial_dependence, permutation_importance and a DPShapExplainer (its DP
    background) of the rows ``X``, and the ledger they spent on."""
    ledger = PrivacyLedger(epsilon=20.0 if np.isfinite(epsilon) else np.inf, delta=1e-4)
    kw = {"bounds": BOUNDS, "categories": CATEGORIES, "epsilon": epsilon,
          "random_state": 0, "accountant": ledger}
    features = X.drop(y) if isinstance(y, str) else X
    pdp = _quiet(partial_dependence, box, features, ["age", "job"], grid_resolution=4, **kw)
    imp = _quiet(permutation_importance, box, X, y, n_repeats=2, n_bins=8,
                 replacement=replacement, **kw)
    explainer = None
    if shap:
        explainer = _quiet(DPShapExplainer(box, n_background=3, n_records=12, max_iter=2,
                                           n_std_draws=2, **kw).fit, features)
    return pdp, imp, explainer, ledger


def _same(memory, on_spark, rtol=1e-9):
    (pdp, imp, shap, ledger), (pdp_s, imp_s, shap_s, ledger_s) = memory, on_spark
    np.testing.assert_allclose(pdp_s.average, pdp.average, rtol=rtol, atol=1e-12)
    np.testing.assert_allclose(pdp_s.std, pdp.std, rtol=rtol, atol=1e-12)
    np.testing.assert_allclose(imp_s.importances, imp.importances, rtol=rtol, atol=1e-12)
    np.testing.assert_allclose(imp_s.noise_std, imp.noise_std, rtol=rtol, atol=1e-12)
    if shap is not None:
        bg, bg_s = shap.background_, shap_s.background_
        np.testing.assert_allclose(bg_s.encoded, bg.encoded, rtol=rtol, atol=1e-9)
        np.testing.assert_allclose(bg_s.weights, bg.weights, rtol=rtol, atol=1e-12)
    assert _events(ledger_s) == _events(ledger) and len(_events(ledger)) >= 2
    assert ledger_s.epsilon_spent == pytest.approx(ledger.epsilon_spent)


def test_spark_global_explanations_make_the_in_memory_release_and_no_row_reaches_the_driver(
        spark, data, monkeypatch):
    frame, y, box, df = data
    memory = _releases(frame, y, box, 2.0)
    seen = refuse_spark_rows(monkeypatch)
    # y is the label column's name; seeded noise: the in-memory noisy release (the same
    # count, the same sums to summation order, the same replacement draws of each row)
    # and the same ledger events
    on_spark = _releases(df, "label", box, 2.0)
    monkeypatch.undo()
    _same(memory, on_spark, rtol=1e-7)
    # sums did come back, through the trees' last reductions (two partitions)
    assert len(seen) >= 2 * 8
    # the explainer's queries are answered in memory, alike
    want, got = memory[2].explain(frame.iloc[:3]), on_spark[2].explain(frame.iloc[:3])
    np.testing.assert_allclose(got.values, want.values, rtol=1e-7, atol=1e-9)
    with pytest.raises(TypeError, match="in memory"):
        on_spark[2].explain(df.drop("label"))


def test_spark_epsilon_inf_is_exact_and_bad_input_is_refused_before_the_spend(spark, data):
    frame, y, box, df = data
    # the exact release, to summation order (the draws from the public domain)
    _same(_releases(frame, y, box, np.inf, "uniform", shap=False),
          _releases(df, "label", box, np.inf, "uniform", shap=False))
    # bad input is refused before anything is spent
    ledger = PrivacyLedger(epsilon=5.0, delta=1e-4)
    with pytest.raises(ValueError, match="no declared bounds"):
        partial_dependence(box, df.drop("label"), "hours", bounds={"age": (17.0, 90.0)},
                           categories=CATEGORIES, accountant=ledger)
    with pytest.raises(TypeError, match="name of its label column"):
        permutation_importance(box, df, y, bounds=BOUNDS, categories=CATEGORIES,
                               accountant=ledger)
    with pytest.raises(ValueError, match="no declared levels"):
        dp_background(df.drop("label"), 3, bounds=BOUNDS, accountant=ledger)
    assert len(ledger) == 0 and ledger.epsilon_spent == 0
