"""The classes of an explainer that takes a black box or trains on y."""

import numpy as np

from ..privacy import check_classes
from ._tables import validate_table


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
    black box is run once on a public probe point made from the declared
    schema (:meth:`~skdpx.utils._tables.TableSchema.probe`), before anything
    is spent: one that fails there, or returns other than one label, is
    refused (a fact about the black box, not about a row).

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
    """The black box's ``predict`` on the public probe point: one label, or ValueError."""
    schema = estimator.schema_
    probe = schema.decode(schema.probe(getattr(estimator, "bounds", None)))
    name = type(estimator.estimator).__name__
    try:
        out = np.asarray(estimator.estimator.predict(probe))
    except Exception as exc:
        raise ValueError(
            f"the black box ({name}) failed on a public probe point made from the declared "
            f"bounds and categories (the middle of each numeric column's bounds, each "
            f"categorical column's first level): {type(exc).__name__}: {exc}. Nothing was "
            "spent.") from exc
    if out.shape not in ((1,), (1, 1)):
        raise ValueError(f"the black box ({name}) returned an output of shape {out.shape} for "
                         "one public probe point: its predict must give one label per row. "
                         "Nothing was spent.")
