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

import math
import warnings

import numpy as np

from .._sklearn_compat import is_classifier

__all__ = ["BlackBoxOutputError", "call_checked", "check_output", "map_rows", "output_range",
           "probe_black_box"]

#: Where the public probe points come from, for the messages.
PROBE_POINTS = ("public probe points made from the declared bounds and categories (the "
                "middle of each numeric column's bounds and its two ends, each categorical "
                "column's first and last levels)")


class BlackBoxOutputError(ValueError):
    """The black box failed, or gave an output that cannot be used, on public points.

    Raised before anything is spent when it happens on the public probe
    points (:func:`probe_black_box`), and after the commit, saying that the
    budget was spent, when it happens on public points the estimator reads
    after its commit (DP centres, queries): never on a private row, whose
    bad output is neutralised (:func:`map_rows`).
    """


def check_output(out, n_rows, *, expect, name, method, classes=None, where, consequence):
    """The black box's output ``out`` on ``n_rows`` public rows, checked.

    ``expect``:

    * ``"labels"``: a classifier's ``predict``: shape ``(n,)`` or ``(n, 1)``,
      every label one of ``classes``;
    * ``"columns"``: ``predict_proba``: ``(n, len(classes))`` finite numbers;
    * ``"margins"``: ``decision_function``: ``(n,)`` for two classes or
      ``(n, len(classes))``, finite numbers;
    * ``"values"``: a regressor's ``predict``: ``(n,)`` or ``(n, 1)`` finite numbers.

    ``where`` says which rows these were and ``consequence`` what was spent
    (both end the message). Returns the output as an ndarray (``(n,)`` for
    labels and values); raises :class:`BlackBoxOutputError` otherwise. No
    value of the output is shown (only its shape, dtype and what is wrong).
    """
    def refuse(problem):
        raise BlackBoxOutputError(f"the black box ({name}).{method} {problem} on {where}. "
                                  f"{consequence}")

    if out is None:
        refuse("returned None")
    try:
        out = np.asarray(out)
    except Exception as exc:  # noqa: BLE001 (e.g. a ragged list)
        refuse(f"returned an output that is not an array ({type(exc).__name__})")
    k = None if classes is None else len(classes)
    if expect in ("labels", "values"):
        if out.shape not in ((n_rows,), (n_rows, 1)):
            refuse(f"returned shape {out.shape} for {n_rows} rows; it must give one "
                   f"{'label' if expect == 'labels' else 'number'} per row, shape ({n_rows},)")
        out = out.reshape(n_rows)
    elif expect == "columns" and out.shape != (n_rows, k):
        refuse(f"returned shape {out.shape} for {n_rows} rows; it must give one column per "
               f"class, shape ({n_rows}, {k})")
    elif expect == "margins" and out.shape not in ((n_rows, k),) + (((n_rows,),) if k == 2
                                                                   else ()):
        refuse(f"returned shape {out.shape} for {n_rows} rows; it must give shape ({n_rows},) "
               f"for two classes or ({n_rows}, {k}) (one margin per class)")
    if expect == "labels":
        known = set(np.asarray(classes).tolist())
        try:
            unknown = sum(v not in known for v in out.tolist())
        except TypeError:  # an unhashable output
            unknown = 1
        if unknown:
            refuse(f"returned {unknown} label(s) that are not among its {k} classes_ (NaN, "
                   f"None or another value)")
        return out
    if out.dtype.kind not in "biuf":
        refuse(f"returned values of dtype {out.dtype}, not numbers")
    if not np.isfinite(out).all():
        refuse("returned NaN or infinite values")
    return out


def call_checked(method, rows, n_rows, *, expect, name, classes=None, where, consequence):
    """``method(rows)`` (a black box's method on ``n_rows`` public rows), checked.

    A failure of the call raises :class:`BlackBoxOutputError` with
    ``where`` and ``consequence`` as :func:`check_output` does for an
    output that cannot be used.
    """
    try:
        out = method(rows)
    except Exception as exc:
        raise BlackBoxOutputError(f"the black box ({name}) failed on {where}: "
                                  f"{type(exc).__name__}: {exc}. {consequence}") from exc
    return check_output(out, n_rows, expect=expect, name=name,
                        method=getattr(method, "__name__", "predict"), classes=classes,
                        where=where, consequence=consequence)


def probe_black_box(schema, bounds, estimator, expect, *, method="predict", classes=None):
    """Run ``estimator.<method>`` on the public probe points and check its output, before any spend.

    The points are :meth:`~skdpx.utils._tables.TableSchema.probe` with its
    corners, decoded as the rows the black box takes. A black box that
    raises there, or whose output :func:`check_output` rejects, is refused
    with a :class:`BlackBoxOutputError` saying that nothing was spent (a
    fact about the black box: the points are public). Its warnings there
    are shown. Returns the checked output.
    """
    rows = schema.decode(schema.probe(bounds, corners=True))
    name = type(estimator).__name__
    try:
        out = getattr(estimator, method)(rows)
    except Exception as exc:
        raise BlackBoxOutputError(
            f"the black box ({name}) failed on {PROBE_POINTS}: {type(exc).__name__}: {exc}. "
            "Nothing was spent.") from exc
    return check_output(out, rows.shape[0], expect=expect, name=name, method=method,
                        classes=classes, where=PROBE_POINTS, consequence="Nothing was spent.")


def spent_after_commit(estimator, when):
    """The end of a message for a bad black-box output read after ``estimator``'s commit."""
    spent = getattr(estimator, "epsilon_spent_", None)
    amount = "" if spent is None else f" (epsilon_spent_ = {spent:.4g})"
    return (f"{type(estimator).__name__}'s budget was spent{amount} {when}, and nothing "
            "refunds it; no answer is returned. Fix the black box (it passed the probe "
            "points checked before the commit) and fit again.")


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


def output_range(estimator, response_method, output_bounds, *, required=True):
    """The method called, and the public range ``(lo, hi)`` of its output (validation only).

    Shared by :func:`skdpx.inspection.partial_dependence` (whose sums need
    a range: ``required``) and :class:`skdpx.explain.DPShapExplainer`
    (whose releases do not read the black box: without ``output_bounds``
    the range is ``(-inf, inf)``, nothing clipped).
    """
    name = type(estimator).__name__
    classifier = is_classifier(estimator)
    method = response_method
    if method == "auto":
        if classifier:
            method = ("predict_proba" if hasattr(estimator, "predict_proba")
                      else "decision_function")
        else:
            method = "predict"
    if not classifier and method != "predict":
        raise ValueError(f"{name} is not a classifier: response_method must be 'auto' or "
                         f"'predict' for it, got {response_method!r}. Nothing was spent.")
    if classifier and method == "predict":
        raise ValueError("response_method='predict' is not supported for a classifier (its "
                         "labels are not averaged): use 'predict_proba' or "
                         "'decision_function'. Nothing was spent.")
    if not hasattr(estimator, method):
        raise ValueError(f"{name} has no {method} method (response_method="
                         f"{response_method!r}). Nothing was spent.")
    if method == "predict_proba":
        if output_bounds is not None:
            raise ValueError("output_bounds is the range of a decision function or of a "
                             "regressor's output; probabilities are in [0, 1]: leave "
                             "output_bounds=None. Nothing was spent.")
        return method, (0.0, 1.0)
    if output_bounds is None:
        if not required:
            return method, (-math.inf, math.inf)
        raise ValueError(
            f"{name}.{method} has no public range: pass output_bounds=(lower, upper), its "
            "declared range (outputs are clipped to it; it is never read from the data). "
            "Nothing was spent.")
    try:
        lo, hi = (float(v) for v in output_bounds)
    except (TypeError, ValueError):
        raise ValueError(f"output_bounds must be a pair (lower, upper) of numbers, got "
                         f"{output_bounds!r}. Nothing was spent.") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"output_bounds must be finite with lower < upper, got "
                         f"{output_bounds!r}. Nothing was spent.")
    return method, (lo, hi)
