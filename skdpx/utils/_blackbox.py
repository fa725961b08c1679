"""A black box run on private rows: a row it fails on is neutralised, never refused.

An explainer calls its black box on the private rows of its fit (the
labels of DPLimeExplainer's explanation rows, the classes of
DPCounterfactualGenerator's training rows), and a private search scores
its candidates on private validation rows. If the black box raised on one
row, or returned NaN for it, and the fit refused, whether it refused (and
its message) would be an exact release about that row. :func:`map_rows`
instead gives each row it cannot use a fixed, public output (a rule on that
row alone, so the row stays one row within the mechanism's sensitivity),
and says nothing about which or how many rows that was.

Whether the black box works at all is checked before anything is spent, on
a public probe point made from the declared schema
(:meth:`~skdpx.utils._tables.TableSchema.probe`): a failure there is a fact
about the black box, and is refused.
"""

import warnings

import numpy as np

__all__ = ["map_rows"]


def map_rows(func, n_rows, *, fill, row_ok=None):
    """``func`` over the rows ``0..n_rows-1``; a row it fails on gets ``fill``.

    ``func(idx)`` computes the outputs of the rows ``idx`` (an array of row
    indices) at once: an array whose first axis has ``len(idx)`` entries. It
    is called on all rows first; where a call raises (any ``Exception``), or
    returns an array of another length, the rows are split in two and each
    half tried again (bisection over chunks: about ``2 log2(n)`` calls per
    failing row, one call when none fails). A single row whose call fails
    gets ``fill``, as does every row whose output ``row_ok`` rejects (e.g.
    NaN). The black box's warnings are not shown: whether it warns on a
    private row is a fact about that row (its warnings on the public probe
    point are shown).

    Nothing returned says which or how many rows got ``fill``.
    ``KeyboardInterrupt`` and other non-``Exception`` errors propagate.

    Parameters
    ----------
    func : callable
        ``func(idx) -> array-like`` of shape ``(len(idx), ...)``.
    n_rows : int
    fill : array-like
        The output of a row ``func`` cannot give, of shape ``(...)`` (the
        trailing shape of ``func``'s outputs); its dtype is the result's.
    row_ok : callable or None
        ``row_ok(out) -> bool array (len(out),)``: the rows of an output
        that are usable; None: all of them.

    Returns
    -------
    ndarray of shape ``(n_rows, ...)``
    """
    fill = np.asarray(fill)
    out = np.empty((n_rows,) + fill.shape, dtype=fill.dtype)
    out[...] = fill
    pending = [(0, n_rows)] if n_rows else []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        while pending:
            start, stop = pending.pop()
            try:
                part = np.asarray(func(np.arange(start, stop)))
                if part.shape[:1] != (stop - start,) or part.shape[1:] != fill.shape:
                    raise ValueError("an output of another shape")
                part = part.astype(fill.dtype, copy=False)
                ok = (np.ones(stop - start, dtype=bool) if row_ok is None
                      else np.asarray(row_ok(part), dtype=bool).reshape(stop - start))
            except Exception:  # noqa: BLE001 (any failure of the black box on these rows)
                if stop - start > 1:
                    middle = (start + stop) // 2
                    pending.extend([(middle, stop), (start, middle)])
                continue  # one row: it keeps ``fill``
            out[start:stop][ok] = part[ok]
    return out


def finite_rows(out):
    """``row_ok`` for float outputs: the rows with no NaN (infinities are clipped later)."""
    out = np.asarray(out, dtype=float)
    return ~np.isnan(out.reshape(len(out), -1)).any(axis=1)
