"""A small private table with declared bounds and a categorical, for the Dask tests."""

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
