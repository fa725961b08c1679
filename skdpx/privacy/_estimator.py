"""The privacy core's part of an estimator's fit: its plan and its row count.

The estimator base itself, :class:`skdpx.base.DPEstimator` (validate,
release the row count, plan, commit, then read), lives in :mod:`skdpx.base`,
above the privacy core: it uses these pieces, and the privacy core imports
no estimator. :class:`SpendPlan` is what a fit plans to release;
:func:`given_row_count` lets a caller that made the row count public itself
(a private search) give it to the fits it runs; :func:`_n_samples` is the
one place a fit reads its private number of rows (for
:meth:`~skdpx.privacy.FitCount.release`).
"""

from contextlib import contextmanager
from contextvars import ContextVar
from types import SimpleNamespace

import numpy as np

__all__ = ["SpendPlan", "given_row_count"]

#: The planning count a caller gives the fits it runs (see :func:`given_row_count`).
_GIVEN_ROW_COUNT = ContextVar("skdpx_given_row_count", default=None)


@contextmanager
def given_row_count(n_rows):
    """Fits run inside plan with ``n_rows`` and release no row count of their own.

    For a caller that made the count public itself (a private search
    releases a DP count of its rows, and gives each fit the share of it
    that the fit's part of the rows expects). ``n_rows`` must be public.
    """
    token = _GIVEN_ROW_COUNT.set(None if n_rows is None else float(n_rows))
    try:
        yield
    finally:
        _GIVEN_ROW_COUNT.reset(token)


def _n_samples(X, data):
    """The number of rows of a validated ``X`` (private under add-or-remove).

    Read only by :meth:`FitCount.release` (and where the relation makes it
    public).

    For a dask collection, the row count of the validated dask array
    (``data.X``, chunk sizes known), else of ``X`` with its chunk sizes
    computed (a count per partition; no value reaches the client).
    """
    from ..utils._engine import exact_rows, is_distributed

    if is_distributed(X):
        Z = getattr(data, "X", None)
        return exact_rows(Z if is_distributed(Z) else X)
    # validated: a sequence, an array, a DataFrame, or an array-like
    return (X.shape[0] if hasattr(X, "shape") and len(X.shape) == 2
            else len(X) if hasattr(X, "__len__") else np.asarray(X).shape[0])


class SpendPlan(SimpleNamespace):
    """What a private fit will release: ``event`` (a DpEvent), ``label``, and
    whatever calibration the fit needs (noise multipliers, engines...)."""

    def __init__(self, event, label, **calibration):
        super().__init__(event=event, label=label, **calibration)
