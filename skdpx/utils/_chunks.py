"""Private rows in memory, read in blocks of rows: no full copy of X in a fit.

A fit's statistics are sums over rows (histogram counts, per-cluster sums,
a local loss's sums), released once through the privacy core. In memory,
as over the partitions of a Dask array (:func:`~skdpx.utils._dask.partition_sum`),
they are computed block by block and added: what a block needs (the
missing values filled, the rows clipped and scaled into the unit cube of
the bounds: :class:`~skdpx.utils._validation.UnitCubeRows`) is made for that block only, so a fit
holds at most one block's temporaries on top of X, never a scaled copy of
it. The blocks and their order are fixed by the shape only; each block's
result is a function of its own rows, so the sums equal the sums over all
rows up to floating-point summation order.
"""

import numpy as np

__all__ = ["BLOCK_BYTES", "TakeColumns", "add_sums", "block_rows", "prepared_call",
           "row_slices"]

#: The size of one block of rows (float64 values of the encoded space), in bytes.
BLOCK_BYTES = 16 * 2**20
#: When set (tests), the number of rows of every block, whatever their width.
BLOCK_ROWS = None


def block_rows(n_features):
    """Rows per block for rows of ``n_features`` float64 values (public: the width only)."""
    if BLOCK_ROWS is not None:
        return max(1, int(BLOCK_ROWS))
    return max(1024, BLOCK_BYTES // (8 * max(1, int(n_features))))


def row_slices(n_rows, n_features):
    """Slices of consecutive blocks of rows covering ``range(n_rows)`` (one, empty, for 0 rows)."""
    step = block_rows(n_features)
    if n_rows <= step:
        return [slice(0, n_rows)]
    return [slice(start, min(start + step, n_rows)) for start in range(0, n_rows, step)]


class TakeColumns:
    """A block's columns ``columns`` (a boolean mask or indices; picklable)."""

    def __init__(self, columns):
        self.columns = np.asarray(columns)

    def __call__(self, block):
        return block[:, self.columns]


def add_sums(a, b):
    """``a + b`` for arrays, or tuples of arrays added term by term (``None`` is zero)."""
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, tuple):
        return tuple(add_sums(x, y) for x, y in zip(a, b))
    return a + b


def prepared_call(func, prepare, block, *row_blocks, **kwargs):
    """``func`` on one block of rows, prepared first (the same call on every engine)."""
    if prepare is not None:
        block = prepare(block)
    return func(block, *row_blocks, **kwargs)
