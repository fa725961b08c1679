"""What DPLimeExplainer explains of a black box: one bounded label per row and class.

The DP analysis of the local loss (:mod:`skdpx.explain._weights`, the
paper's Lemma 3.1) needs every label in [-1, 1]. Each kind of black box
output is mapped there by a fixed affine map of a public, declared range
(the range is never read from the data):

========== =================================== ====================== ==========
kind       black box                           label of row x          unit scale
========== =================================== ====================== ==========
probability ``predict_proba`` (a classifier)   ``2 P(k | x) - 1``      1 / 2
indicator  ``predict`` only (a classifier)     ``2 [f(x) = k] - 1``    1 / 2
regression ``predict`` (a regressor), declared ``(t(x) - t(z)) / w``   w
           ``output_bounds = (lo, hi)``        with t = clip(f, lo, hi)
                                               and w = hi - lo
labels     none: ``y`` given to fit            ``2 (t - lo) / w - 1``  w / 2
========== =================================== ====================== ==========

``z`` is the query. A regressor's label is centred on the black box's output
at the query (a public value: the query is public and the black box does not
depend on the explanation rows), so the local model ``phi . (x - z)``,
which has no intercept (the paper's loss), fits ``f(x) - f(z)``: an
uncentred label would make the answer depend on where the declared range
puts 0 (on a Ridge regressor with ``output_bounds=(0, 50)`` around outputs of
8 to 13, the non-private optimum's median cosine with the coefficients falls
from 1.0 to 0.21). ``|t(x) - t(z)| <= hi - lo`` keeps the label in [-1, 1].
A probability or indicator label is the paper's: 0 on the decision
boundary ``P = 1/2``.

An attribution (``phi`` in scaled units) times the unit scale is in units of
the explained output: the change of the probability, of the indicator, or
of the regression output per unit of the scaled features.
"""

import numpy as np
from .._sklearn_compat import is_classifier
from ..utils._blackbox import (PROBE_POINTS, BlackBoxOutputError, check_output, finite_rows,
                               map_rows)

__all__ = ["OUTPUT_KINDS", "private_row_labels", "query_targets", "resolve_output",
           "row_labels", "unit_scale"]

OUTPUT_KINDS = ("probability", "indicator", "regression", "labels")


def _check_output_bounds(output_bounds):
    try:
        lo, hi = (float(v) for v in output_bounds)
    except (TypeError, ValueError):
        raise ValueError(
            f"output_bounds must be a pair (lower, upper) of numbers, got {output_bounds!r}."
        ) from None
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise ValueError(
            f"output_bounds must be finite with lower < upper, got {output_bounds!r}."
        )
    return lo, hi


def resolve_output(estimator, output_bounds, probe):
    """The kind of output explained, the classes and the output range (validation only).

    Called before anything is spent: every error here leaves the ledgers as
    they were. ``probe`` holds public rows of the kind the black box takes
    (:meth:`~skdpx.utils._tables.TableSchema.probe` with its corners, made
    from the declared schema, never a private row): it checks that the black
    box runs there and the shape, type and finiteness of its output,
    properties of the model. A black box that fails
    there is refused; one that fails only on private rows is not (see
    :func:`private_row_labels`).

    Returns
    -------
    kind : str
        One of :data:`OUTPUT_KINDS`.
    classes : ndarray or None
        The black box's classes (a classifier), in the order of its
        ``predict_proba`` columns.
    bounds : tuple of float
        The public range of the explained output.
    """
    if output_bounds is not None:
        output_bounds = _check_output_bounds(output_bounds)
    if estimator is None:
        return "labels", None, (-1.0, 1.0) if output_bounds is None else output_bounds
    name = type(estimator).__name__
    if _is_classifier(estimator):
        if output_bounds is not None:
            raise ValueError(
                f"output_bounds is the range of a regressor's output; {name} is a classifier, "
                "explained through the probability of a class (predict_proba) or, without "
                "predict_proba, the indicator that it predicts the class, both in [0, 1]. "
                "Leave output_bounds=None. Nothing was spent."
            )
        classes = getattr(estimator, "classes_", None)
        if hasattr(estimator, "predict_proba"):
            out = _probe(estimator.predict_proba, probe, name)
            try:  # a list of lists is read as the array it holds; a ragged one is refused below
                n_columns = np.shape(out)[-1] if out is not None and np.ndim(out) == 2 else None
            except ValueError:
                n_columns = None
            if classes is None and n_columns is not None:
                classes = np.arange(n_columns)
            elif n_columns is not None and len(classes) != n_columns:
                raise ValueError(
                    f"{name}.predict_proba has {n_columns} columns but classes_ has "
                    f"{len(classes)} classes. Nothing was spent."
                )
            # one finite probability per class and probe point (issue 36)
            _check_probe(out, probe, "columns", name, "predict_proba",
                         np.arange(2) if classes is None else classes)
            kind = "probability"
        else:
            if classes is None:
                raise ValueError(
                    f"{name} has neither predict_proba nor classes_: DPLimeExplainer explains "
                    "a predict-only classifier through the indicator of each class, and needs "
                    "its classes_. Nothing was spent."
                )
            kind = "indicator"
            _check_probe(_probe(estimator.predict, probe, name), probe, "labels", name,
                         "predict", classes)
        classes = np.asarray(classes)
        if classes.ndim != 1 or len(classes) < 2:
            raise ValueError(f"{name}.classes_ must hold at least 2 classes, got {classes!r}.")
        return kind, classes, (0.0, 1.0)
    if output_bounds is None:
        raise ValueError(
            f"{name} is not a classifier (no predict_proba, not tagged a classifier): "
            "DPLimeExplainer explains its predict output, whose public range must be declared "
            "for the DP guarantee: pass output_bounds=(lower, upper) (outputs are clipped to "
            "it). It is never read from the data. Nothing was spent."
        )
    out = _probe(estimator.predict, probe, name)
    try:
        shape = np.shape(out) if out is not None else ()
    except ValueError:  # a ragged list: refused by the check below
        shape = ()
    if len(shape) == 2 and shape[1] > 1:
        raise ValueError(
            f"{name}.predict returns outputs of shape {shape[1:]} per row: DPLimeExplainer "
            "explains one output. Wrap the model to select one. Nothing was spent."
        )
    # one finite number per probe point (issue 36)
    _check_probe(out, probe, "values", name, "predict", None)
    return "regression", None, output_bounds


def _probe(method, probe, name):
    """The black box's output on the public probe points, or ValueError (nothing spent)."""
    try:
        return method(probe)
    except Exception as exc:
        raise BlackBoxOutputError(
            f"the black box ({name}) failed on {PROBE_POINTS}: {type(exc).__name__}: {exc}. "
            "Nothing was spent.") from exc


def _check_probe(out, probe, expect, name, method, classes):
    """:func:`~skdpx.utils._blackbox.check_output` of the output on the probe points."""
    check_output(out, probe.shape[0], expect=expect, name=name, method=method,
                 classes=classes, where=PROBE_POINTS, consequence="Nothing was spent.")


def _on_queries(method, Z):
    """``method(Z)`` on public queries; a failure raises before anything is spent for them."""
    try:
        return method(Z)
    except Exception as exc:
        raise BlackBoxOutputError(
            f"the black box ({type(getattr(method, '__self__', method)).__name__}) failed on the "
            f"queries: {type(exc).__name__}: {exc}. Nothing was spent for these queries."
        ) from exc


def checked_query_output(out, n, expect, name, method, classes=None):
    """The black box's output on ``n`` public queries of ``explain``, checked before
    anything is spent for them (:func:`~skdpx.utils._blackbox.check_output`)."""
    return check_output(out, n, expect=expect, name=name, method=method, classes=classes,
                        where="the queries",
                        consequence="Nothing was spent for these queries.")


def row_labels(kind, classes, bounds, estimator, X, y=None):
    """The labels of the explanation rows, one column per class: (m, K).

    In [-1, 1] for every kind but "regression", whose column is
    ``(t(x) - lo) / (hi - lo)`` in [0, 1]: a query's labels subtract its own
    value of the same map (:func:`query_targets`), landing in [-1, 1]. A
    missing given label (``y`` NaN) is the neutral label 0, the middle of
    the range.
    """
    lo, hi = bounds
    if kind == "labels":
        t = np.clip(np.asarray(y, dtype=float), lo, hi)
        return np.nan_to_num(2.0 * (t - lo) / (hi - lo) - 1.0, nan=0.0)[:, None]
    if kind == "probability":
        P = np.clip(np.asarray(estimator.predict_proba(X), dtype=float), 0.0, 1.0)
        return 2.0 * P - 1.0
    if kind == "indicator":
        predicted = np.asarray(estimator.predict(X)).reshape(-1)
        return 2.0 * (predicted[:, None] == classes[None, :]) - 1.0
    return _unit_output(estimator, X, bounds)[:, None]


def neutral_labels(kind, classes):
    """The fixed, public labels of a row the black box cannot label: (K,).

    The middle of each label's range: 0 (a probability of 1/2, the decision
    boundary; the indicator half way), and for a regressor the unit output
    1/2 (the middle of ``output_bounds``).
    """
    if kind == "regression":
        return np.full(1, 0.5)
    return np.zeros(1 if classes is None else len(classes))


def private_row_labels(kind, classes, bounds, estimator, rows, n_rows, y=None):
    """:func:`row_labels` of private rows, where a row the black box fails on is neutralised.

    ``rows(idx)`` gives the rows ``idx`` as the black box takes them. The
    black box runs on all of them at once; a row on which it raises, or
    returns a misshapen or NaN output, gets the :func:`neutral_labels`
    (found by bisection over chunks: :func:`~skdpx.utils._blackbox.map_rows`),
    a rule on that row alone: its labels stay in range, so the sensitivity
    holds, and nothing is refused or reported (which rows, how many: both
    private). Infinite outputs are clipped to the range as any other.
    """
    if kind == "labels":
        return row_labels(kind, classes, bounds, None, None, y)
    return map_rows(lambda idx: row_labels(kind, classes, bounds, estimator, rows(idx)),
                    n_rows, fill=neutral_labels(kind, classes), row_ok=finite_rows)


def _unit_output(estimator, X, bounds, queries=False):
    """A regressor's output clipped to ``bounds``, mapped onto [0, 1].

    ``queries``: ``X`` are public queries, whose output is checked (finite
    numbers, one per row) before anything is spent for them.
    """
    lo, hi = bounds
    if queries:
        f = checked_query_output(_on_queries(estimator.predict, X), X.shape[0], "values",
                                 type(estimator).__name__, "predict").astype(float)
    else:
        f = np.asarray(estimator.predict(X), dtype=float).reshape(-1)
    return (np.clip(f, lo, hi) - lo) / (hi - lo)


def _class_columns(classes, labels, n):
    """The column of each label in ``classes``: (n,) ints, or ValueError."""
    labels = np.asarray(labels, dtype=object)
    if labels.ndim == 0:
        labels = np.full(n, labels.item(), dtype=object)
    if labels.ndim != 1 or len(labels) != n:
        raise ValueError(
            f"target_class must be one class label, or one per query ({n}), got shape "
            f"{labels.shape}."
        )
    match = labels[:, None] == classes.astype(object)[None, :]
    unknown = ~match.any(axis=1)
    if unknown.any():
        raise ValueError(
            f"target_class {labels[unknown][0]!r} is not a class of the black box; its classes "
            f"are {classes.tolist()}."
        )
    return np.argmax(match, axis=1)


def query_targets(kind, classes, bounds, estimator, Z, target_class):
    """Per query: the label column explained, the label offset, and the class explained.

    ``target_class`` None: the positive class ``classes[1]`` of a binary
    classifier; for more classes, the class the black box predicts at the
    query (``estimator.predict``: public, a function of the query).
    ``estimator`` None (a released explainer) cannot predict: a multiclass
    query then needs ``target_class``. ``Z``: the queries as the black box
    takes them (an array, a DataFrame or CSR rows).

    Returns
    -------
    columns : ndarray of int, shape (n,)
    offsets : ndarray of shape (n,)
        Subtracted from the row labels at each query ("regression": the
        black box's output at the query, clipped and mapped like the rows';
        0 otherwise, and for a released explainer, which never reads rows).
    targets : ndarray of object, shape (n,)
        The class explained at each query (None for a regressor or labels).
    """
    n = Z.shape[0]  # an array, a DataFrame or CSR rows
    offsets = np.zeros(n)
    if classes is None:
        if target_class is not None:
            raise ValueError(
                f"target_class={target_class!r} applies to a classifier; the explained output "
                f"({kind}) has no classes. Leave target_class=None."
            )
        if kind == "regression" and estimator is not None:
            offsets = _unit_output(estimator, Z, bounds, queries=True)
        return np.zeros(n, dtype=int), offsets, np.full(n, None, dtype=object)
    if target_class is not None:
        columns = _class_columns(classes, target_class, n)
    elif len(classes) == 2:
        columns = np.ones(n, dtype=int)
    elif estimator is None:
        raise ValueError(
            f"the black box has {len(classes)} classes and a released explainer holds no black "
            "box to tell the class it predicts at each query: pass target_class."
        )
    else:
        columns = _class_columns(classes, checked_query_output(
            _on_queries(estimator.predict, Z), n, "labels", type(estimator).__name__,
            "predict", classes), n)
    targets = np.empty(n, dtype=object)
    targets[:] = classes.astype(object)[columns]
    return columns, offsets, targets


def unit_scale(kind, bounds):
    """The factor from an explanation in label units to the explained output's units."""
    lo, hi = bounds
    if kind in ("probability", "indicator"):
        return 0.5
    if kind == "regression":
        return hi - lo
    return (hi - lo) / 2.0


def _is_classifier(estimator):
    """A classifier by scikit-learn's tags (or ``_estimator_type``), or by duck typing.

    A model that is not a scikit-learn estimator is a classifier when it has
    ``predict_proba`` or ``classes_``.
    """
    return (is_classifier(estimator) or hasattr(estimator, "predict_proba")
            or hasattr(estimator, "classes_"))
