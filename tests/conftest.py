"""Shared fixtures."""

import logging

import pytest

# imported here so that pytest-xdist's controller has skdpx before a worker's warning
# arrives: it imports a warning's module to rebuild it, and a first import of skdpx
# there failed intermittently ("partially initialized module 'skdpx.privacy'")
import skdpx  # noqa: F401,E402


class SameKeyWarnings(logging.Handler):
    """The scheduler's warnings that it was sent two different tasks under one key.

    "Detected different `run_spec` for key ... between two consecutive calls
    to `update_graph`" (dask issue 9888: it can fail or deadlock a
    computation). The scheduler of a LocalCluster runs in this process and
    logs it on ``distributed.scheduler``.
    """

    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        message = record.getMessage()
        if "Detected different `run_spec`" in message:
            self.messages.append(message)

    def raise_new(self, start):
        """Fail (an error) if a warning came after the first ``start`` ones."""
        if len(self.messages) > start:
            pytest.fail("the Dask scheduler was sent two different tasks under one key (dask "
                        f"issue 9888):\n{self.messages[start][:3000]}", pytrace=False)


@pytest.fixture(scope="session")
def dask_cluster():
    """A LocalCluster of 2 single-threaded worker processes and its client, shared by the
    Dask tests, and the scheduler's same-key warnings (:class:`SameKeyWarnings`)."""
    pytest.importorskip("dask.dataframe")
    distributed = pytest.importorskip("distributed")
    logger, seen = logging.getLogger("distributed.scheduler"), SameKeyWarnings()
    logger.addHandler(seen)
    try:
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=None, memory_limit="1GiB") as cluster, \
                distributed.Client(cluster) as client:
            yield client, seen
    finally:
        logger.removeHandler(seen)


@pytest.fixture
def dask_client(dask_cluster):
    """The shared Dask client; the test errs if the scheduler warned that it was sent two
    different tasks under one key while it ran (the warning made an error)."""
    client, seen = dask_cluster
    start = len(seen.messages)
    yield client
    seen.raise_new(start)


@pytest.fixture(scope="session")
def spark():
    """A local[2] Spark session shared by the Spark tests (started and stopped here).

    A task is tried up to 3 times (``local[2, 3]``), as on a cluster, where a
    lost executor's tasks are re-run. The executors run this Python
    (``PYSPARK_PYTHON``).
    """
    pytest.importorskip("pyspark")
    pytest.importorskip("pyarrow")
    import os
    import sys
    import warnings

    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # pyspark on pandas 3
        session = (SparkSession.builder.master("local[2, 3]").appName("skdpx-tests")
                   .config("spark.ui.enabled", "false")
                   .config("spark.ui.showConsoleProgress", "false")
                   .config("spark.sql.shuffle.partitions", "2")
                   .config("spark.driver.memory", "1g")
                   .config("spark.sql.execution.arrow.maxRecordsPerBatch", "700")
                   .getOrCreate())
    yield session
    session.stop()


@pytest.fixture
def plt():
    """matplotlib's pyplot on the Agg backend (the test skipped without matplotlib);
    every figure closed afterwards."""
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    yield plt
    plt.close("all")
