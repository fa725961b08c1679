"""The classes of an explainer that takes a black box or trains on y."""

import numpy as np
from sklearn.utils.multiclass import check_classification_targets

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
    estimator's ``schema_`` from its ``bounds`` and ``categories``).

    Returns
    -------
    X : ndarray of float64 (the encoded rows)
    y : ndarray or None
        Validated ``y`` when there is no black box, else None.
    """
    declared = getattr(estimator, "classes", None)
    categories = getattr(estimator, "categories", None)
    if estimator.estimator is None:
        X, y = validate_table(estimator, X, y, reset=True, categories=categories)
        check_classification_targets(y)
        estimator.classes_, _ = check_classes(declared, y, needs=needs)
    else:
        X, y = validate_table(estimator, X, reset=True, categories=categories), None
        if not hasattr(estimator.estimator, "classes_"):
            raise ValueError("estimator must be a fitted classifier with classes_.")
        estimator.classes_ = np.asarray(estimator.estimator.classes_)
        if declared is not None and not np.array_equal(np.unique(np.asarray(declared)),
                                                       np.unique(estimator.classes_)):
            raise ValueError(f"classes={declared!r} differ from the black box's classes_ "
                             f"{estimator.classes_.tolist()!r}.")
    if len(estimator.classes_) < 2:
        raise ValueError(f"{needs} at least two classes; got {len(estimator.classes_)} class.")
    return X, y
