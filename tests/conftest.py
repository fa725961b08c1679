"""Shared fixtures."""

import pytest

# imported here so that pytest-xdist's controller has skdpx before a worker's warning
# arrives: it imports a warning's module to rebuild it, and a first import of skdpx
# there failed intermittently ("partially initialized module 'skdpx.privacy'")
import skdpx  # noqa: F401,E402


@pytest.fixture(scope="session")
def dask_client():
    """A LocalCluster of 2 single-threaded worker processes, shared by the Dask tests."""
    pytest.importorskip("dask.dataframe")
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, memory_limit="1GiB") as cluster, \
            distributed.Client(cluster) as client:
        yield client


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
