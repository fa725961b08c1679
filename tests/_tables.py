"""Small private tables with declared bounds and categoricals (Dask, schema and DPLime tests)."""

import numpy as np

N = 2000
BOUNDS = {"age": (17.0, 90.0), "hours": (1.0, 99.0), "gain": (0.0, 1e5)}
CATEGORIES = {"job": ["clerk", "manager", "craft"]}


def people(rng, n=N):
    """A pandas DataFrame of ``n`` people: age, job (categorical), hours, gain."""
    import pandas as pd

    return pd.DataFrame({
        "age": rng.integers(17, 91, n).astype(float),
        "job": rng.choice(CATEGORIES["job"], n),
        "hours": rng.normal(40, 10, n).clip(1, 99),
        "gain": np.where(rng.uniform(size=n) < 0.1, rng.exponential(5000, n), 0.0),
    })


def people_and_black_box(seed=0):
    """``people`` (N rows), their three classes, and a black box fitted on them.

    The classes come from a score of age, hours and job: a batch of queries
    explains several label columns (the predicted class). The black box is a
    Pipeline of the public schema's encoder and a LogisticRegression.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    from skdpx.preprocessing import PublicSchemaEncoder

    rng = np.random.default_rng(seed)
    frame = people(rng)
    score = (frame["age"] - 40) / 10 + (frame["hours"] - 40) / 10 + (frame["job"] == "manager")
    y = np.digitize(score + rng.normal(size=N), [-0.5, 1.0])
    box = make_pipeline(PublicSchemaEncoder(bounds=BOUNDS, categories=CATEGORIES),
                        LogisticRegression()).fit(frame, y)
    return frame, y, box


def mixed_table(n=40, seed=0):
    """A pandas DataFrame of ``n`` rows: an int, an unordered categorical (levels in
    another order than declared), a float and an object column (seeded)."""
    import pandas as pd

    rng = np.random.RandomState(seed)
    return pd.DataFrame({
        "age": rng.randint(18, 80, n),
        "colour": pd.Categorical(rng.choice(["red", "green", "blue"], n),
                                 categories=["blue", "green", "red"]),
        "income": rng.uniform(0, 1e5, n),
        "city": rng.choice(["Paris", "Rome"], n).astype(object),
    })


def refuse_gathering_rows(monkeypatch, frame_type):
    """Make the client fail if the rows come back to it, by any route.

    A dask array's or DataFrame's ``compute`` and ``__array__`` raise, and
    every result the distributed client gathers (which is where top-level
    ``dask.compute`` and ``persist`` results arrive) is checked: no array or
    frame in it may have as many as ``N // 4`` rows (only sums, counts and
    other per-feature statistics may come back).
    """
    import dask.array as da
    import distributed

    def refuse(self, *args, **kwargs):
        raise AssertionError("a dask collection of rows was computed in the client")

    def leaves(value):
        if isinstance(value, (list, tuple)):
            for item in value:
                yield from leaves(item)
        elif isinstance(value, dict):
            for item in value.values():
                yield from leaves(item)
        else:
            yield value

    gather = distributed.Client.gather

    def checked_gather(self, futures, *args, **kwargs):
        result = gather(self, futures, *args, **kwargs)
        for leaf in leaves(result):
            shape = getattr(leaf, "shape", ())
            if len(shape) and shape[0] >= N // 4:
                raise AssertionError(f"the client gathered a result of shape {shape}")
        return result

    monkeypatch.setattr(da.Array, "compute", refuse)
    monkeypatch.setattr(da.Array, "__array__", refuse)
    monkeypatch.setattr(frame_type, "compute", refuse)
    monkeypatch.setattr(distributed.Client, "gather", checked_gather)


def refuse_spark_rows(monkeypatch):
    """Make the Spark driver fail if a row comes back to it, by any route.

    Every method of a Spark DataFrame that brings rows to the driver
    (``collect``, ``toPandas``, ``take``, ``head``, ``first``, ``tail``,
    ``toLocalIterator``, ``toArrow``, and ``count``, a row count) raises,
    and every result an RDD returns to the driver (``collect``, which is
    where a tree aggregation's last level arrives, ``take``) is checked: no
    Spark ``Row``, and no array in it with as many as ``N // 4`` rows (only
    sums, counts and other per-feature statistics may come back, as numpy
    arrays: a float, a string or a dict fails too). Returns
    the list of what the driver received (for the test to see it was used).
    """
    from pyspark import RDD
    from pyspark.sql import DataFrame, Row

    classes = [DataFrame]
    try:  # pyspark >= 4: the classic session's DataFrame overrides the methods
        from pyspark.sql.classic.dataframe import DataFrame as Classic

        classes.append(Classic)
    except ImportError:
        pass

    def refuse(self, *args, **kwargs):
        raise AssertionError("a Spark DataFrame's rows were brought to the driver")

    for cls in classes:
        for name in ("collect", "toPandas", "take", "head", "first", "tail",
                     "toLocalIterator", "toArrow", "count"):
            if hasattr(cls, name):
                monkeypatch.setattr(cls, name, refuse)

    def leaves(value):  # a Row is a tuple: a leaf here
        if isinstance(value, (list, tuple)) and not isinstance(value, Row):
            for item in value:
                yield from leaves(item)
        else:
            yield value

    received = []

    def checked(method):
        def run(self, *args, **kwargs):
            result = method(self, *args, **kwargs)
            for leaf in leaves(result):
                if isinstance(leaf, Row):
                    raise AssertionError("the driver received a Spark Row")
                if leaf is not None and not isinstance(leaf, (np.ndarray, np.generic)):
                    # only partial sums (numpy) come back: not a value, a string, a dict
                    raise AssertionError(f"the driver received a {type(leaf).__name__}")
                shape = getattr(leaf, "shape", ())
                if len(shape) and shape[0] >= N // 4:
                    raise AssertionError(f"the driver received a result of shape {shape}")
                received.append(leaf)
            return result
        return run

    monkeypatch.setattr(RDD, "collect", checked(RDD.collect))
    monkeypatch.setattr(RDD, "take", checked(RDD.take))
    return received
