"""A worker (Dask) or a Python worker of an executor (Spark) killed during a fit: the engine
runs its tasks again, and nothing is spent twice (issue 42, item 4).

Why nothing can be spent twice: the spend is committed to the ledger in the driver before
any task runs, a task only reads rows and returns a partial sum (or a block of labels),
and the noise is drawn in the driver, once, after the total arrives
(:func:`skdpx.utils._engine.partition_sum`). The tests kill a process in the middle of a
fit and check the fit ends with the ledger events of an undisturbed fit and, at
epsilon = inf, the in-memory result.
"""

import os
import warnings

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from skdpx.explain import DPLimeExplainer
from skdpx.privacy import PrivacyLedger, event_to_json, given_row_count

from ._helpers import quiet_fit as _fit

pd = pytest.importorskip("pandas")

N = 1200


class DiesOnce(LogisticRegression):
    """A fitted black box whose first call outside the driver kills its process.

    ``marker_`` (a path) is created, with the process id in it, by the one process that
    dies: ``os._exit``, as a worker killed by the operating system, once in all the
    processes. The driver (process ``driver_pid_``) calls it safely.
    """

    def _die_once(self):
        if os.getpid() == self.driver_pid_:
            return
        try:
            fd = os.open(self.marker_, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:  # it happened already
            return
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        os._exit(1)

    def predict_proba(self, X):
        self._die_once()
        return super().predict_proba(X)

    def predict(self, X):
        self._die_once()
        return super().predict(X)


def _data():
    rng = np.random.default_rng(4)
    X = np.c_[rng.uniform(17, 90, N), rng.uniform(1, 99, N), rng.normal(size=N)]
    y = (X[:, 0] / 40 + X[:, 1] / 50 + X[:, 2] + rng.normal(size=N) > 3).astype(int)
    box = DiesOnce().fit(X, y)
    box.driver_pid_ = os.getpid()
    return X, box


def _armed(box, marker):
    box.marker_ = str(marker)
    return box


def _lime(box, **kw):
    params = {"epsilon": np.inf, "epsilon_per_query": np.inf, "delta": 1e-6, "max_iter": 30,
              "bounds": None, "random_state": 0}
    params.update(kw)
    return DPLimeExplainer(box, **params)


def _events(estimator):
    return [(label, event_to_json(event)) for label, event in estimator.ledger_.events]


def _answers(explainer, Z):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # random_state warns at every call
        return explainer.explain(Z)


def _died(marker, pids):
    """A process died: one of ``pids`` (the workers) if given, never this one."""
    assert marker.exists(), "no process was killed: the test did not test a retry"
    pid = int(marker.read_text())
    assert pid != os.getpid() and (pids is None or pid in pids)


def _same(disturbed, memory, queries):
    """At epsilon = inf: the in-memory bounds and answers (the exact sums: no partial sum
    lost or counted twice) and ledger events."""
    assert _events(disturbed) == _events(memory)
    for a, b in zip(disturbed.bounds_, memory.bounds_):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    want = _answers(memory, queries).values
    assert np.abs(want).max() > 0
    np.testing.assert_allclose(_answers(disturbed, queries).values, want, rtol=1e-9,
                               atol=1e-12)


def _spent_once(fit, X, rows):
    """At a finite epsilon, on a ledger: ``fit`` of a disturbed copy of the rows ``rows``
    spends what an undisturbed fit of ``X`` (in memory) spends, event for event."""
    ledgers = [PrivacyLedger(epsilon=10.0, delta=1e-3) for _ in range(2)]
    kw = {"epsilon": 2.0, "epsilon_per_query": 1.0}
    with given_row_count(N):  # one public planning count (each DP count is a fresh draw)
        calm = _fit(_lime(fit.estimator, accountant=ledgers[0], **kw), X)
        hit = _fit(_lime(fit.estimator, accountant=ledgers[1], **kw), rows)
    assert _events(hit) == _events(calm) and len(ledgers[0].events) > 0
    assert ledgers[1].epsilon_spent == pytest.approx(ledgers[0].epsilon_spent)
    assert ledgers[0].epsilon_spent > 0
    for a, b in zip(hit.bounds_, calm.bounds_):  # the same seeded DP bounds
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_a_killed_dask_worker_is_retried_without_a_second_spend(dask_client, tmp_path):
    da = pytest.importorskip("dask.array")
    X, box = _data()
    memory = _fit(_lime(box), X)
    try:
        # a worker dies while the black box labels its partition; the scheduler runs
        # the lost tasks again (the nanny restarts the worker)
        for marker in (tmp_path / "inf", tmp_path / "finite"):
            dask_client.wait_for_workers(2, timeout=60)
            workers = set(dask_client.run(os.getpid).values())
            rows = da.from_array(X, chunks=200)
            if marker.name == "inf":
                _same(_fit(_lime(_armed(box, marker)), rows), memory, X[:4])
            else:
                _spent_once(_lime(_armed(box, marker)), X, rows)
            _died(marker, workers)
    finally:
        dask_client.wait_for_workers(2, timeout=60)  # restarted: for the next tests


def test_a_killed_spark_python_worker_is_retried_without_a_second_spend(spark, tmp_path):
    X, box = _data()
    frame = pd.DataFrame(X, columns=["age", "hours", "score"])
    df = spark.createDataFrame(frame).repartition(2)
    memory = _fit(_lime(box), frame)
    # a Python worker dies while the black box labels its batch; Spark runs the task
    # again (local[2, 3]: up to 3 attempts, as on a cluster)
    marker = tmp_path / "inf"
    _same(_fit(_lime(_armed(box, marker)), df), memory, frame.iloc[:4])
    _died(marker, None)
    marker = tmp_path / "finite"
    _spent_once(_lime(_armed(box, marker)), frame, df)
    _died(marker, None)
