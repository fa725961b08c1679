"""The classes of an explainer that takes a black box or trains on y."""

import numpy as np
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data


def validate_classes(estimator, X, y, needs):
    """Validate X (and y when ``estimator.estimator`` is None) and set ``classes_``.

    The classes are those of ``y`` (read from the data, as scikit-learn and
    diffprivlib classifiers do) or the black box's public ``classes_``.
    ``needs`` starts the error raised for fewer than two classes, e.g.
    "recourse needs".

    Returns
    -------
    X : ndarray of float64
    y : ndarray or None
        Validated ``y`` when there is no black box, else None.
    """
    if estimator.estimator is None:
        X, y = validate_data(estimator, X, y, dtype=np.float64)
        check_classification_targets(y)
        estimator.classes_ = np.unique(y)
    else:
        X, y = validate_data(estimator, X, dtype=np.float64), None
        if not hasattr(estimator.estimator, "classes_"):
            raise ValueError("estimator must be a fitted classifier with classes_.")
        estimator.classes_ = np.asarray(estimator.estimator.classes_)
    if len(estimator.classes_) < 2:
        raise ValueError(f"{needs} at least two classes; got {len(estimator.classes_)} class.")
    return X, y
