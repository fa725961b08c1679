"""The classes of an explainer that takes a black box or trains on y.

In the privacy core because the label set is public or read with a
:class:`~skdpx.privacy.PrivacyLeakWarning` (:func:`~skdpx.privacy.check_classes`).
"""

import numpy as np

from ..utils._blackbox import probe_black_box
from ..utils._engine import engine, is_distributed
from ..utils._tables import num_rows, validate_table
from ._validation import check_classes


def validate_classes(estimator, X, y, needs):
    """Validate X (and y when ``estimator.estimator`` is None) and set ``classes_``.

    The classes are the estimator's declared ``classes`` (public), else
    those of ``y`` (read from the data with a PrivacyLeakWarning, see
    :func:`skdpx.privacy.check_classes`), or the black box's public
    ``classes_``.
    ``needs`` starts the error raised for fewer than two classes, e.g.
    "recourse needs".

    ``X`` goes through :func:`~skdpx.utils._tables.validate_table` (the
    estimator's ``schema_`` from its ``bounds`` and ``categories``). A
    black box is run on public probe points made from the declared schema
    (:meth:`~skdpx.utils._tables.TableSchema.probe`, its middle and
    corners), before anything is spent: one that fails there, returns other
    than one label of its ``classes_`` per point, or (where the estimator
    steers by them) scores of the wrong shape, NaN or infinite, is refused
    (a fact about the black box, not about a row).

    Returns
    -------
    X : ndarray of float64 (the encoded rows)
    codes : ndarray of int or None
        Without a black box, each row's index in ``classes_``, -1 for a row
        whose label is not one of them (missing, NaN, undeclared: the
        estimator drops it, see :func:`skdpx.privacy.check_classes`); with a
        black box, None.
    """
    declared = getattr(estimator, "classes", None)
    categories = getattr(estimator, "categories", None)
    if estimator.estimator is None:
        X, y = validate_table(estimator, X, y, reset=True, categories=categories)
        estimator.classes_, codes = check_classes(declared, y, needs=needs)
    else:
        check_ignored_y(estimator, X, y)
        X, codes = validate_table(estimator, X, reset=True, categories=categories), None
        if not hasattr(estimator.estimator, "classes_"):
            raise ValueError("estimator must be a fitted classifier with classes_.")
        estimator.classes_ = np.asarray(estimator.estimator.classes_)
        if declared is not None and not np.array_equal(np.unique(np.asarray(declared)),
                                                       np.unique(estimator.classes_)):
            raise ValueError(f"classes={declared!r} differ from the black box's classes_ "
                             f"{estimator.classes_.tolist()!r}.")
        _probe_black_box(estimator)
    if len(estimator.classes_) < 2:
        raise ValueError(f"{needs} at least two classes; got {len(estimator.classes_)} class.")
    return X, codes


def _probe_black_box(estimator):
    """The black box on the public probe points: one label of ``classes_`` per point,
    and finite scores of the right shape from the method that steers the search (the
    estimator's ``_signal()``, when it has one), or BlackBoxOutputError (nothing spent)."""
    schema, bounds = estimator.schema_, getattr(estimator, "bounds", None)
    black_box, classes = estimator.estimator, estimator.classes_
    probe_black_box(schema, bounds, black_box, "labels", classes=classes)
    signal = getattr(estimator, "_signal", lambda: None)()
    if signal in ("predict_proba", "decision_function"):
        probe_black_box(schema, bounds, black_box,
                        "columns" if signal == "predict_proba" else "margins",
                        method=signal, classes=classes)


def check_ignored_y(estimator, X, y):
    """With a black box, ``y`` is not read: one of another length than ``X`` is refused.

    The black box's outputs are the labels, so ``y`` (as scikit-learn's
    transformers take it, e.g. from a Pipeline) is ignored, its values
    never read (a refusal on them would be a release about a row). Only
    its length, against ``X``'s, is checked, before anything is spent, as a
    supervised estimator checks it; the message shows neither.
    """
    if y is None:
        return
    if engine(X) == "spark":
        # a Spark DataFrame's labels are a column of it (its name as y): ignored here, the
        # column would be read as a feature
        raise ValueError(
            f"{type(estimator).__name__} with a black box (estimator) does not read y: with a "
            f"Spark DataFrame, drop the label column ({y!r}) from X (df.drop(...)) and pass "
            "y=None, or it would be read as a feature. Nothing was spent.")
    if is_distributed(X) or is_distributed(y):
        return  # (partitions: lengths are not known without computing them)
    try:
        n_x, n_y = num_rows(X), num_rows(y)
    except (TypeError, IndexError):
        return  # (refused by the validation of X, or a y without length: not read)
    if n_x != n_y:
        raise ValueError(
            f"y does not have one entry per row of X. {type(estimator).__name__} with a black "
            "box (estimator) does not read y (the black box's outputs are the labels): pass "
            "y=None, or a y aligned with X. Nothing was spent.")
