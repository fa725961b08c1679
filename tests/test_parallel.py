"""joblib backends (loky, Dask): DPLime's query pieces and the private search's runs.

One ledger, committed in this process before any piece runs (the same events as
with one worker); an independent noise stream per piece; seeded runs reproducible.
"""

import numpy as np
import pytest
from joblib import parallel_config
from sklearn.datasets import make_classification

from skdpx import DPLocallyLinearClassifier
from skdpx.explain import DPLimeExplainer, _dplime, _parallel
from skdpx.model_selection import DPRandomSearchCV
from skdpx.model_selection._runs import _fit_run
from skdpx.model_selection._scorers import get_dp_scorer
from skdpx.privacy import PrivacyLedger

pytestmark = pytest.mark.filterwarnings("ignore::skdpx.exceptions.PrivacyLeakWarning")

#: the tests' one worker count: loky's pool is started once and reused by them all
JOBS = 2


@pytest.fixture(scope="module")
def rows():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(1500, 3))
    y = np.clip(X @ [1.5, -1.0, 0.0] - 0.3 + 0.05 * rng.normal(size=1500), -1, 1)
    a = np.array([0.4, 0.6, 0.5])
    # a, a query a hair away (answered in another piece), and two others
    Q = np.array([a, [0.2, 0.3, 0.8], a + 1e-9, [0.7, 0.1, 0.3]])
    return X, y, Q


def _explainer(X, y, n_jobs, *, epsilon_per_query=0.5, random_state=None, **kw):
    exact = np.isinf(epsilon_per_query)
    ledger = PrivacyLedger() if exact else PrivacyLedger(epsilon=50.0, delta=1e-5)
    exp = DPLimeExplainer(None, epsilon=np.inf if exact else 20.0, delta=1e-6,
                          epsilon_per_query=epsilon_per_query, max_iter=20, bounds=(0, 1),
                          accountant=ledger, n_jobs=n_jobs, random_state=random_state, **kw)
    return exp.fit(X, y), ledger


def _values_and_std(attribution):
    return attribution.values, attribution.std


def _record(ledger):
    return [(label, event) for label, event in ledger.events], ledger.epsilon_spent


def test_dplime_pieces_on_loky_one_ledger_and_independent_noise(rows):
    X, y, Q = rows
    seq, seq_ledger = _explainer(X, y, 1)
    par, par_ledger = _explainer(X, y, JOBS)
    with parallel_config(backend="loky"):
        a, sa = _values_and_std(seq.explain(Q))
        b, sb = _values_and_std(par.explain(Q))
    # each piece's answers carry their std, of the same size as one process's
    assert np.isfinite(sb).all() and 0.5 < sb.mean() / sa.mean() < 2
    # the same spend, as one event per call (after the fit's row count), committed here
    assert _record(par_ledger) == _record(seq_ledger) and len(par_ledger) == 2
    assert [p for p in par.history_["phase"]] == ["interactive"] * len(Q)
    # Q[0] (first piece) and Q[2] (second piece) have the same exact answer: their
    # noises differ (each piece keys its source with its worker's own OS entropy)
    noise_scale = np.linalg.norm(a[0] - a[2])  # two independent draws, one worker
    assert noise_scale > 1e-3
    assert np.linalg.norm(b[0] - b[2]) > 1e-3
    # the answers are close to each other: the pieces answer the right queries
    assert np.linalg.norm(b - a) < 50 * noise_scale


def test_dplime_pieces_at_infinite_epsilon_equal_the_sequential_answers(rows):
    X, y, Q = rows
    seq, _ = _explainer(X, y, 1, epsilon_per_query=np.inf)
    par, ledger = _explainer(X, y, JOBS, epsilon_per_query=np.inf)
    with parallel_config(backend="loky"):
        np.testing.assert_allclose(par.explain(Q).values, seq.explain(Q).values,
                                   rtol=1e-10, atol=1e-12)
    assert len(ledger) == 1


def test_dplime_seeded_pieces_are_reproducible_and_distinct(rows):
    X, y, Q = rows
    with parallel_config(backend="loky"):
        runs = [_explainer(X, y, JOBS, random_state=7)[0].explain(Q).values for _ in range(2)]
        again = _explainer(X, y, JOBS, random_state=8)[0].explain(Q).values
    np.testing.assert_array_equal(runs[0], runs[1])
    assert not np.allclose(runs[0], again)
    # the pieces' streams are spawned from the seed: not one stream twice
    assert np.linalg.norm(runs[0][0] - runs[0][2]) > 1e-3


def test_a_failing_piece_refunds_nothing(rows, monkeypatch):
    X, y, Q = rows
    exp, ledger = _explainer(X, y, JOBS)

    def broken(*args, **kwargs):
        raise RuntimeError("worker died")

    monkeypatch.setattr(_parallel, "_basic_piece", broken)
    with parallel_config(backend="threading"), pytest.raises(RuntimeError, match="died"):
        exp.explain(Q)
    # the count, and the batch: spent, final; nothing answered
    assert len(ledger) == 2 and exp.n_queries_ == 0


def test_adaptive_local_loss_over_parallel_row_blocks(rows, monkeypatch):
    X, y, Q = rows
    monkeypatch.setattr(_parallel, "_MIN_BLOCK_WORK", 500 * 3**2)  # blocks of 750 rows
    out = {}
    for n_jobs in (1, JOBS):
        for eps in (0.5, np.inf):
            exp, ledger = _explainer(X, y, n_jobs, epsilon_per_query=eps, strategy="adaptive",
                                     random_state=3)
            with parallel_config(backend="loky"):
                out[n_jobs, eps] = exp.explain(Q).values, _record(ledger)
    for eps in (0.5, np.inf):
        # the noise is drawn here, from the same seeded stream: the same answers and spends
        np.testing.assert_allclose(out[JOBS, eps][0], out[1, eps][0], rtol=1e-9, atol=1e-12)
        assert out[JOBS, eps][1] == out[1, eps][1]
    # the row count, then a first step and the rest per query: as with one worker
    assert len(out[JOBS, 0.5][1][0]) == 1 + 2 * len(Q)
    # and the forms did come from the parallel row blocks, never the in-process ones

    def in_process(*args, **kwargs):
        raise AssertionError("the forms were computed in this process")

    monkeypatch.setattr(_dplime.DPLimeExplainer, "_forms", in_process)
    exp, _ = _explainer(X, y, JOBS, epsilon_per_query=0.5, strategy="adaptive", random_state=3)
    with parallel_config(backend="loky"):
        np.testing.assert_allclose(exp.explain(Q).values, out[JOBS, 0.5][0], rtol=1e-9,
                                   atol=1e-12)


def _search(n_jobs, random_state):
    X, y = make_classification(400, 3, n_informative=3, n_redundant=0, class_sep=2.5,
                               random_state=0)
    ledger = PrivacyLedger(epsilon=4.0, delta=1e-5)
    clf = DPLocallyLinearClassifier(bounds=(-4, 4), classes=[0, 1], batch_size=400, epochs=10)
    search = DPRandomSearchCV(clf, {"learning_rate": [0.1, 1.0], "n_maps": [1, 2]}, n_iter=3,
                              epsilon=2.0, accountant=ledger, n_jobs=n_jobs,
                              random_state=random_state)
    return search.fit(X, y), ledger


def test_search_runs_on_loky_one_event_and_seeded_like_one_worker():
    one, one_ledger = _search(1, 5)
    with parallel_config(backend="loky"):
        two, two_ledger = _search(JOBS, 5)
        _, secure_ledger = _search(JOBS, None)
    # each run's seed is drawn from the search's seed, whatever runs it
    assert (two.best_score_, two.best_params_) == (one.best_score_, one.best_params_)
    # the DP row count, then the rest of the search as one event
    assert _record(two_ledger) == _record(one_ledger) and len(two_ledger) == 2
    assert len(secure_ledger) == 2
    # planned from another DP count: calibrated to the same budget (within 3% below it)
    assert secure_ledger.epsilon_spent == pytest.approx(one_ledger.epsilon_spent, rel=0.03)
    assert secure_ledger.epsilon_spent <= 2.0


def test_search_runs_draw_independent_noise_in_the_workers():
    from sklearn.utils.parallel import Parallel, delayed

    X, y = make_classification(300, 3, n_informative=3, n_redundant=0, random_state=1)
    clf = DPLocallyLinearClassifier(bounds=(-4, 4), classes=[0, 1], batch_size=300, epochs=3)
    scorer = get_dp_scorer(None, clf)
    budget = {"_prefix": "", "_n_rows": 300.0, "epsilon": 1.0, "delta": 1e-5,
              "random_state": None}
    with parallel_config(backend="loky"):
        fits = Parallel(n_jobs=JOBS)(
            delayed(_fit_run)(clf, {}, dict(budget), X, y, X[:50], y[:50], scorer,
                              "add_or_remove")
            for _ in range(2))
    # the same run twice: two fresh secure sources, two models
    assert not np.allclose(fits[0][0].coef_, fits[1][0].coef_)


def test_dask_backend_same_spend(rows, dask_client):
    X, y, Q = rows
    seq, seq_ledger = _explainer(X, y, 1)
    seq.explain(Q)
    exact, _ = _explainer(X, y, 1, epsilon_per_query=np.inf)
    with parallel_config(backend="dask"):
        par, ledger = _explainer(X, y, JOBS)
        b = par.explain(Q).values
        inf, _ = _explainer(X, y, JOBS, epsilon_per_query=np.inf)
        np.testing.assert_allclose(inf.explain(Q).values, exact.explain(Q).values, rtol=1e-10,
                                   atol=1e-12)
        two, two_ledger = _search(JOBS, 5)
    assert _record(ledger) == _record(seq_ledger)
    assert np.linalg.norm(b[0] - b[2]) > 1e-3
    one, one_ledger = _search(1, 5)
    assert two.best_score_ == one.best_score_ and _record(two_ledger) == _record(one_ledger)


def test_shares_and_stream_keys_of_the_privacy_core():
    import pickle

    from skdpx.privacy import gaussian_event, noise_source
    from skdpx.privacy._budget import Commitment

    step = gaussian_event(2.0)
    commitment = Commitment(gaussian_event(2.0, steps=5), "batch")
    a, b = commitment.share(step, 3), commitment.share(step, 2)
    with pytest.raises(RuntimeError, match="not in the spend"):
        commitment.share(step)  # all 5 handed out
    paid = pickle.loads(pickle.dumps(a)).open()  # what a worker gets
    paid.draw(step, 3)
    with pytest.raises(RuntimeError, match="not in the spend"):
        paid.draw(step)
    b.open().draw(step, 2)
    # a secure source's keys carry no secret: each opening keys itself from the OS
    key = pickle.loads(pickle.dumps(noise_source().stream_keys(1)[0]))
    assert key.secure and b"SeedSequence" not in pickle.dumps(key)
    assert not np.array_equal(key.open().standard_normal(4), key.open().standard_normal(4))
    # a seeded source's keys are its spawned streams: reproducible, distinct
    draws = [[k.open().standard_normal(4) for k in noise_source(9, stream=(0,)).stream_keys(2)]
             for _ in range(2)]
    np.testing.assert_array_equal(draws[0][1], draws[1][1])
    assert not np.allclose(draws[0][0], draws[0][1])


_OVERLAP = """
import threading
from threadpoolctl import threadpool_info
from skdpx.utils._threads import single_blas_thread
def blas(): return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
before, inside = blas(), []
a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
def first():
    with single_blas_thread():
        a_in.set(); b_in.wait()
    a_out.set()
def second():
    a_in.wait()
    with single_blas_thread():
        b_in.set(); a_out.wait()  # the first context has exited: the limit must hold
        inside.extend(blas())
ts = [threading.Thread(target=first), threading.Thread(target=second)]
[t.start() for t in ts]; [t.join() for t in ts]
print(before, inside, blas())
"""


@pytest.mark.xfail(strict=False, reason=(
    "OpenBLAS (pthreads) sometimes keeps 1 thread after the last overlapping context, run in "
    "a worker thread, restores 2: 5 runs in 30 and 1 in 20 here (2026-11-30), the context's "
    "reference count itself is right. A performance setting, not a result: open, not fixed"))
def test_single_blas_thread_contexts_overlapping_in_threads_restore_the_setting():
    # in a child with 2 BLAS threads (CI runs the suite with one)
    import json
    import os
    import subprocess
    import sys

    env = dict(os.environ, OPENBLAS_NUM_THREADS="2", OMP_NUM_THREADS="2", MKL_NUM_THREADS="2")
    out = subprocess.run([sys.executable, "-c", _OVERLAP], env=env, capture_output=True,
                         text=True, check=True).stdout.strip().replace("] [", "]|[").split("|")
    before, inside, after = (json.loads(part) for part in out)
    assert before and all(n == 2 for n in before)
    assert inside and all(n == 1 for n in inside)
    assert after == before
