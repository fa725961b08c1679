"""Issue 36, memory: fits read X in blocks of rows, and refuse before the commit what cannot fit.

* chunked equals unchunked: the same fit with blocks of 7 rows and with one
  block gives the same outputs (the exact statistics to 1e-10);
* no copy: DPLimeExplainer keeps the validated X itself, PrivRecourse keeps
  nothing of it; the peak of the numpy allocations of a fit (tracemalloc)
  stays under half of X plus a fixed allowance;
* the memory check: a fit that cannot fit is refused before anything is
  spent, with a message that does not depend on the exact number of rows.
"""

import tracemalloc
import warnings

import numpy as np
import pytest
from sklearn import config_context
from sklearn.linear_model import LogisticRegression

from skdpx import DPLimeExplainer, PrivRecourse
from skdpx.explain._local_loss import blocked_sums
from skdpx.privacy import PrivacyLedger
from skdpx.privacy._bounds import octave_counts
from skdpx.privacy._kmeans import histograms, lloyd_table
from skdpx.utils import _chunks, _memory
from skdpx.utils._validation import UnitCubeRows
from skdpx.utils._engine import partition_sum

pd = pytest.importorskip("pandas")


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # seeds, DP bounds
        yield


def _data(n=1500, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[5, 2], X[7, 0], X[11, 1] = np.nan, np.inf, 40.0  # missing, infinite, clipped
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    box = LogisticRegression().fit(np.nan_to_num(X[:500], posinf=0.0), y[:500])
    return X, y, box


def _fits(X, y, box, bounds):
    out = {}
    for strategy in ("basic", "adaptive"):
        e = DPLimeExplainer(box, epsilon=5, epsilon_per_query=0.5, bounds=bounds, max_iter=15,
                            strategy=strategy, random_state=0).fit(X)
        out[f"lime {strategy}"] = e.explain(np.nan_to_num(X[:3], posinf=0.0)).values
        out[f"labels {strategy}"] = e._labels
    for estimator in (box, None):
        r = PrivRecourse(estimator, epsilon=5, n_clusters=6, bounds=bounds,
                         random_state=0).fit(X, y)
        out[f"recourse {estimator is None}"] = r.cluster_centers_
        out[f"recourse counts {estimator is None}"] = r.cluster_counts_
    return out


@pytest.mark.parametrize("bounds", [None, (-3.0, 3.0)])
def test_chunked_fits_equal_unchunked(monkeypatch, bounds):
    X, y, box = _data()
    whole = _fits(X, y, box, bounds)  # 1500 rows: one block at the default size
    monkeypatch.setattr(_chunks, "BLOCK_ROWS", 7)
    chunked = _fits(X, y, box, bounds)
    for key, value in whole.items():
        np.testing.assert_allclose(chunked[key], value, rtol=1e-10, atol=1e-12, err_msg=key)


def test_chunked_dataframe_encoding_equals_unchunked(monkeypatch):
    rng = np.random.default_rng(1)
    n = 400
    frame = pd.DataFrame({"a": rng.normal(size=n), "b": rng.integers(0, 5, size=n),
                          "c": rng.choice(["x", "y", "z", "w"], size=n)})
    frame.loc[3, "a"] = np.nan
    y = (frame["a"] > 0).astype(int)
    kw = dict(epsilon=4, n_clusters=5, bounds={"a": (-3, 3), "b": (0, 5)},
              categories={"c": ["x", "y", "z"]}, random_state=0)
    whole = PrivRecourse(**kw).fit(frame, y)
    Z_whole = whole.schema_.encode(frame, private=True)
    monkeypatch.setattr(_chunks, "BLOCK_ROWS", 7)
    chunked = PrivRecourse(**kw).fit(frame, y)
    np.testing.assert_array_equal(chunked.schema_.encode(frame, private=True), Z_whole)
    np.testing.assert_allclose(chunked.cluster_centers_, whole.cluster_centers_, rtol=1e-10)


def test_block_sums_equal_the_statistics_of_all_rows(monkeypatch):
    X, _, _ = _data(n=1000)
    rows = UnitCubeRows(np.full(5, -3.0), np.full(5, 3.0))
    X01 = rows(X)
    assert not np.isnan(X).all() and np.isfinite(X01).all()
    centers = np.random.default_rng(2).uniform(size=(4, 5))
    monkeypatch.setattr(_chunks, "BLOCK_ROWS", 13)
    np.testing.assert_array_equal(partition_sum(octave_counts, X), octave_counts(X))
    np.testing.assert_array_equal(partition_sum(histograms, X, prepare=rows), histograms(X01))
    np.testing.assert_allclose(partition_sum(lloyd_table, X, centers01=centers, prepare=rows),
                               lloyd_table(X01, centers), rtol=1e-10, atol=1e-10)
    labels = np.random.default_rng(3).uniform(-1, 1, size=len(X))
    queries = X01[:4]
    with config_context(working_memory=0.01):  # blocks of a few rows
        sums = blocked_sums(queries, X, labels, prepare=rows)
    for got, want in zip(sums, blocked_sums(queries, X01, labels)):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_initial_histograms_count_each_column_without_copies_of_the_block():
    # issue 41: one column at a time; a process's first fit paid for the fresh
    # pages of two block-sized temporaries (the block times the bins, as floats
    # and as integers)
    rng = np.random.default_rng(5)
    X01 = rng.uniform(size=(20_000, 20))
    X01[:50] = np.linspace(0.0, 1.0, 11)[rng.integers(0, 11, size=(50, 20))]  # bin edges
    bins = np.minimum((X01 * 10).astype(int), 9)
    expected = np.stack([np.bincount(bins[:, j], minlength=10) for j in range(20)])
    got = _peak_bytes(lambda: histograms(X01))
    out = histograms(X01)
    assert out.dtype == np.float64 and out.shape == (20, 10)
    np.testing.assert_array_equal(out, expected)
    assert got < X01.nbytes / 4, (got, X01.nbytes)


def test_fits_keep_no_copy_of_x():
    X, y, box = _data()
    X = np.nan_to_num(X, posinf=0.0)
    explainer = DPLimeExplainer(box, epsilon=2, epsilon_per_query=0.5, bounds=(-3, 3)).fit(X)
    assert explainer._X is X  # the validated rows themselves; each block scaled when read
    recourse = PrivRecourse(box, epsilon=2, n_clusters=4, bounds=(-3, 3)).fit(X)
    assert not any(isinstance(v, np.ndarray) and v.shape[0] == len(X)
                   for v in vars(recourse).values())


def _peak_bytes(fit):
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        fit()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("case", ["dplime", "recourse",
                                  pytest.param("recourse_dpsgd", marks=pytest.mark.slow)])
def test_fit_memory_stays_under_half_of_x(monkeypatch, case):
    # small blocks (64 KiB, local-loss blocks of 1 MiB): the fixed allowance is small
    # next to X (2e5 x 20 float64: 32 MB)
    monkeypatch.setattr(_chunks, "BLOCK_BYTES", 2**16)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200_000, 20))
    y = (X[:, 0] > 0).astype(int)
    public = rng.standard_normal((2000, 20))
    box = LogisticRegression().fit(public, public[:, 0] > 0)

    def fit():
        with config_context(working_memory=1):
            if case == "dplime":
                e = DPLimeExplainer(box, epsilon=2, epsilon_per_query=0.5, max_iter=5,
                                    bounds=None, random_state=0).fit(X)
                e.explain(public[:2])
            else:
                PrivRecourse(box if case == "recourse" else None, epsilon=2, n_clusters=5,
                             max_iter=1, bounds=None, random_state=0).fit(X, y)

    peak = _peak_bytes(fit)
    # DPLimeExplainer keeps its labels (2 columns: 0.1 X here); DP-SGD its per-row
    # indicators and one uniform per row a step
    assert peak < 0.5 * X.nbytes + 8 * 2**20, peak / X.nbytes


def test_memory_refusal_is_planned_from_the_dp_count_and_spends_nothing_else(monkeypatch):
    # the check reads the released DP count (public), never the private number of
    # rows: with the count pinned, D and D plus one row are refused alike, after the
    # count and before anything else
    from skdpx.privacy import _count

    X, y, box = _data(n=1101)
    X = np.nan_to_num(X, posinf=0.0)
    monkeypatch.setattr(_memory, "available_bytes", lambda: 2**20)

    def pinned(self, n_rows, *, noise, commitment):
        if commitment is not None:  # the release it pays for is made (noise aside)
            commitment.draw(self.event)
        self.raw = self.n = 1100.0
        return self.n

    monkeypatch.setattr(_count.FitCount, "release", pinned)
    messages, spent = [], []
    for n in (1100, 1101):
        for make in (lambda ledger: DPLimeExplainer(box, epsilon=1, epsilon_per_query=0.5,
                                                    bounds=None, accountant=ledger),
                     lambda ledger: PrivRecourse(None, epsilon=1, bounds=None,
                                                 accountant=ledger)):
            ledger = PrivacyLedger(epsilon=10, delta=1e-5)
            with pytest.raises(MemoryError, match="row count .* was spent; nothing else") \
                    as info:
                make(ledger).fit(X[:n], y[:n])
            messages.append(str(info.value))
            spent.append([label for label, _ in ledger.events])
    assert messages[:2] == messages[2:]
    assert spent[:2] == spent[2:] and all(len(labels) == 1 for labels in spent)
    # under replace-one the number of rows is public: nothing is spent before it
    ledger = PrivacyLedger(epsilon=10, delta=1e-5, relation="replace_one")
    with pytest.raises(MemoryError, match="Nothing was spent"):
        PrivRecourse(box, epsilon=1, bounds=(-3, 3), accountant=ledger).fit(X)
    assert not ledger.events


def test_memory_check_lets_a_fit_that_fits_run(monkeypatch):
    X, y, box = _data(n=600)
    X = np.nan_to_num(X, posinf=0.0)
    monkeypatch.setattr(_memory, "available_bytes", lambda: 2**30)
    PrivRecourse(box, epsilon=1, n_clusters=3, bounds=(-3, 3)).fit(X)


def test_the_memory_limit_does_not_move_with_the_private_rows_held():
    # what is left now depends on the private X already in the process (its size is
    # a function of the number of rows): the check compares with limits only
    before = _memory.available_bytes()
    held = np.ones((2_000_000, 16))  # 256 MB, touched
    assert _memory.available_bytes() == before
    del held
