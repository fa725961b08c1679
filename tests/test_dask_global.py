"""The global explanations on Dask: partial_dependence, permutation_importance and the
DP SHAP background (dp_background, DPShapExplainer) give the in-memory release, make the
same spend, refuse bad input before it, and the client never gathers a row."""

import warnings

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

from skdpx.explain import DPShapExplainer, dp_background
from skdpx.inspection import partial_dependence, permutation_importance
from skdpx.preprocessing import PublicSchemaEncoder
from skdpx.privacy import PrivacyLedger, event_to_json

from ._tables import BOUNDS, CATEGORIES, N, people, refuse_gathering_rows

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
pd = pytest.importorskip("pandas")


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    frame = people(rng)
    y = ((frame["age"] - 40) / 10 + (frame["job"] == "manager")
         + rng.normal(size=N)).to_numpy() > 0.5
    box = make_pipeline(PublicSchemaEncoder(bounds=BOUNDS, categories=CATEGORIES),
                        LogisticRegression()).fit(frame, y)
    numeric = frame[["age", "hours"]].to_numpy()
    binary = LogisticRegression().fit(numeric, y)
    return frame, y, box, numeric, binary


def _quiet(func, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a seed's PrivacyLeakWarning, an uncapped ledger
        return func(*args, **kw)


def _events(ledger):
    return [(label, event_to_json(event)) for label, event in ledger.events]


def _releases(frame, y, box, ddf, dy, epsilon):
    """(in memory, on Dask) pairs of every global explanation, and their ledgers."""
    public = {"bounds": BOUNDS, "categories": CATEGORIES, "epsilon": epsilon,
              "random_state": 0}
    out = []
    for X, labels in ((frame, y), (ddf, dy)):
        ledger = PrivacyLedger(epsilon=20.0 if np.isfinite(epsilon) else np.inf, delta=1e-4)
        kw = {**public, "accountant": ledger}
        pdp = _quiet(partial_dependence, box, X, ["age", "job"], grid_resolution=4, **kw)
        imp = _quiet(permutation_importance, box, X, labels, n_repeats=2, n_bins=8, **kw)
        bg = _quiet(dp_background, X, 3, n_records=12, max_iter=2, **kw)
        shap = _quiet(DPShapExplainer(box, n_background=3, n_records=12, max_iter=2,
                                      n_std_draws=2, **kw).fit, X)
        out.append((pdp, imp, bg, shap, ledger))
    return out


def _same(memory, on_dask, queries, rtol=1e-9):
    (pdp, imp, bg, shap, ledger), (pdp_d, imp_d, bg_d, shap_d, ledger_d) = memory, on_dask
    np.testing.assert_allclose(pdp_d.average, pdp.average, rtol=rtol, atol=1e-12)
    np.testing.assert_allclose(pdp_d.std, pdp.std, rtol=rtol, atol=1e-12)
    np.testing.assert_allclose(imp_d.importances, imp.importances, rtol=rtol, atol=1e-12)
    np.testing.assert_allclose(imp_d.noise_std, imp.noise_std, rtol=rtol, atol=1e-12)
    np.testing.assert_allclose(bg_d.encoded, bg.encoded, rtol=rtol, atol=1e-9)
    np.testing.assert_allclose(bg_d.weights, bg.weights, rtol=rtol, atol=1e-12)
    want, got = _quiet(shap.explain, queries), _quiet(shap_d.explain, queries)
    np.testing.assert_allclose(got.values, want.values, rtol=1e-7, atol=1e-9)
    # the same spend, event by event
    assert _events(ledger_d) == _events(ledger) and len(_events(ledger)) >= 4
    assert ledger_d.epsilon_spent == pytest.approx(ledger.epsilon_spent)


def test_dask_global_explanations_are_the_in_memory_ones_and_no_row_is_gathered(
        dask_client, data, monkeypatch):
    frame, y, box, numeric, binary = data
    ddf = dd.from_pandas(frame, npartitions=3)
    # the rows (or their labels) never come back whole to the client: only sums, counts
    refuse_gathering_rows(monkeypatch, type(ddf))
    # epsilon=inf: the exact release, to summation order (the replacement draws of a
    # row are the same wherever it is read); a numpy y split to the partitions
    memory, on_dask = _releases(frame, y, box, ddf, y, np.inf)
    _same(memory, on_dask, frame.iloc[:4])
    assert np.abs(memory[0].average).max() > 0 and np.abs(memory[1].importances).max() > 0
    # a dask array and a dask y (no DataFrame: the encoded rows go to the black box)
    kw = {"bounds": (0.0, 100.0), "epsilon": np.inf, "n_repeats": 2, "n_bins": 8,
          "random_state": 1}
    want = _quiet(permutation_importance, binary, numeric, y, **kw)
    got = _quiet(permutation_importance, binary, da.from_array(numeric, chunks=(700, 2)),
                 da.from_array(y, chunks=600), **kw)
    np.testing.assert_allclose(got.importances, want.importances, rtol=1e-9, atol=1e-12)
    assert np.abs(want.importances).max() > 0
    monkeypatch.undo()
    # the queries of a DPShapExplainer fitted on Dask are answered in memory
    with pytest.raises(TypeError, match="in memory"):
        on_dask[3].explain(dd.from_pandas(frame.iloc[:4], npartitions=1))


def test_dask_finite_epsilon_same_spend_and_refusals_before_it(dask_client, data):
    frame, y, box, _, _ = data
    ddf = dd.from_pandas(frame, npartitions=4)
    dy = dd.from_pandas(pd.Series(y), npartitions=4)
    # seeded noise: the same noisy release, the same ledger events
    memory, on_dask = _releases(frame, y, box, ddf, dy, 2.0)
    _same(memory, on_dask, frame.iloc[:4], rtol=1e-7)
    # no declared bounds: the DP bounds' histogram summed over the partitions too
    backgrounds = []
    for X in (frame[["age", "hours"]], ddf[["age", "hours"]]):
        ledger = PrivacyLedger(epsilon=5.0, delta=1e-4)
        backgrounds.append((_quiet(dp_background, X, 3, n_records=12, max_iter=2,
                                   epsilon=2.0, random_state=0, accountant=ledger), ledger))
    (want, ledger), (got, ledger_d) = backgrounds
    np.testing.assert_allclose(got.lower, want.lower, rtol=1e-9)
    np.testing.assert_allclose(got.upper, want.upper, rtol=1e-9)
    np.testing.assert_allclose(got.encoded, want.encoded, rtol=1e-7, atol=1e-9)
    assert _events(ledger_d) == _events(ledger) and "bounds" in _events(ledger)[1][0]
    # bad input is refused before anything is spent
    ledger = PrivacyLedger(epsilon=5.0, delta=1e-4)
    with pytest.raises(ValueError, match="no declared bounds"):
        partial_dependence(box, ddf, "hours", bounds={"age": (17.0, 90.0)},
                           categories=CATEGORIES, accountant=ledger)
    with pytest.raises(ValueError, match="scoring"):
        permutation_importance(box, ddf, dy, scoring="r2", **{"bounds": BOUNDS},
                               categories=CATEGORIES, accountant=ledger)
    with pytest.raises(ValueError, match="different numbers of rows"):
        permutation_importance(box, ddf, y[:-1], bounds=BOUNDS, categories=CATEGORIES,
                               accountant=ledger)
    assert len(ledger) == 0 and ledger.epsilon_spent == 0
