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


@pytest.fixture
def plt():
    """matplotlib's pyplot on the Agg backend (the test skipped without matplotlib);
    every figure closed afterwards."""
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    yield plt
    plt.close("all")
