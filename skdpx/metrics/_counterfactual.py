"""Effectiveness metrics of counterfactual explanations.

The flipping ratio and the average distance of Yang et al. (2022),
"Differentially Private Counterfactuals via Functional Mechanism", eqs. (20)
and (21). For evaluation only: they query the black box and read the queries
without privacy.

A counterfactual array holds one counterfactual per query, row for row; a row
with a NaN means that no counterfactual was found for that query.
"""

import numbers

import numpy as np

__all__ = ["average_distance", "flip_ratio"]


def _check_matrix(A, name, *, finite=False):
    """``A`` as a non-empty 2-D float array; with ``finite``, NaN and inf refused."""
    try:
        A = np.asarray(A, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a numeric array of shape (n, d).") from exc
    if A.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array of shape (n, d); got {A.ndim} dimension(s).")
    if A.shape[0] == 0:
        raise ValueError(f"{name} is empty: got shape {A.shape}.")
    if A.shape[1] == 0:
        raise ValueError(f"{name} has no features.")
    if finite and not np.all(np.isfinite(A)):
        raise ValueError(f"{name} must be finite.")
    return A


def _check_counterfactuals(counterfactuals, name="counterfactuals"):
    """Counterfactuals may hold NaN rows (none found for that query)."""
    return _check_matrix(counterfactuals, name)


def flip_ratio(estimator, counterfactuals, desired_class):
    """Flipping ratio FR = ``|X_f| / |X_q|`` of counterfactuals (eq. 20).

    The fraction of queries whose counterfactual the black box classifies as
    the desired class. A query without a counterfactual (a row with a NaN)
    counts as a failure and is never passed to ``estimator.predict``.

    Parameters
    ----------
    estimator : fitted classifier
        The black box; only its ``predict`` method is used.
    counterfactuals : array-like of shape (n, d)
        One counterfactual per query; a row with a NaN means none was found.
    desired_class : scalar or array-like of shape (n,)
        The class each counterfactual should be given, shared by all queries
        or one per query.

    Returns
    -------
    float
        The flipping ratio, in [0, 1].

    Raises
    ------
    ValueError
        If ``counterfactuals`` is empty or not 2-D, or ``desired_class`` is
        an array whose length is not n.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skdpx.metrics import flip_ratio
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array([0, 0, 1, 1])
    >>> clf = LogisticRegression().fit(X, y)
    >>> cf = np.array([[3.0], [0.0], [np.nan], [2.5]])  # 3 found, 2 flip to class 1
    >>> round(flip_ratio(clf, cf, desired_class=1), 4)
    0.5
    """
    C = _check_counterfactuals(counterfactuals)
    n = C.shape[0]
    desired = np.asarray(desired_class)
    if desired.ndim > 1 or (desired.ndim == 1 and desired.shape[0] != n):
        raise ValueError(
            f"desired_class must be a scalar or an array of shape ({n},); got shape {desired.shape}.")
    found = ~np.isnan(C).any(axis=1)
    if not found.any():
        return 0.0
    predicted = np.asarray(estimator.predict(C[found]))
    if predicted.shape != (int(found.sum()),):
        raise ValueError(
            f"estimator.predict returned shape {predicted.shape} for {int(found.sum())} rows; "
            "expected one label per row.")
    target = desired if desired.ndim == 0 else desired[found]
    return float(np.count_nonzero(predicted == target)) / n


def average_distance(queries, counterfactuals, *, valid=None, ord=2):
    """Average distance AD between queries and their counterfactuals (eq. 21).

    The mean, over the rows that count, of ``||q_i - x_i||``, the distance of
    each query to its counterfactual. A row counts if its counterfactual was
    found (has no NaN) and, when ``valid`` is given, ``valid`` is True there
    (e.g. only the counterfactuals that flip the black box).

    Parameters
    ----------
    queries : array-like of shape (n, d)
        The queries; they must be finite.
    counterfactuals : array-like of shape (n, d)
        One counterfactual per query; a row with a NaN means none was found.
    valid : array-like of bool of shape (n,), default=None
        Which rows to average over (before dropping the NaN rows); all if None.
    ord : {2, 1, numpy.inf} or float >= 1, default=2
        The norm: 2 for the Euclidean distance of the paper, 1 for L1.

    Returns
    -------
    float
        The average distance, or NaN if no row counts.

    Raises
    ------
    ValueError
        If the inputs are empty, their shapes differ, ``queries`` is not
        finite, ``valid`` is not a boolean mask of shape (n,), or ``ord`` is
        not a norm order >= 1.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpx.metrics import average_distance
    >>> Q = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]])
    >>> C = np.array([[3.0, 4.0], [np.nan, np.nan], [2.0, 3.0]])
    >>> round(average_distance(Q, C), 4)  # (5 + 1) / 2; the NaN row is skipped
    3.0
    >>> round(average_distance(Q, C, ord=1), 4)  # (7 + 1) / 2
    4.0
    >>> round(average_distance(Q, C, valid=[True, True, False]), 4)
    5.0
    """
    Q = _check_counterfactuals(queries, name="queries")
    C = _check_counterfactuals(counterfactuals)
    if Q.shape != C.shape:
        raise ValueError(f"queries and counterfactuals differ in shape: {Q.shape} != {C.shape}.")
    if not np.all(np.isfinite(Q)):
        raise ValueError("queries must be finite.")
    if isinstance(ord, bool) or not isinstance(ord, numbers.Real) or not ord >= 1:
        raise ValueError(f"ord must be a norm order >= 1 (e.g. 1, 2 or numpy.inf); got {ord!r}.")
    counts = ~np.isnan(C).any(axis=1)
    if valid is not None:
        mask = np.asarray(valid)
        if mask.dtype != bool or mask.shape != (Q.shape[0],):
            raise ValueError(
                f"valid must be a boolean mask of shape ({Q.shape[0]},); "
                f"got dtype {mask.dtype} and shape {mask.shape}.")
        counts &= mask
    if not counts.any():
        return float("nan")
    return float(np.mean(np.linalg.norm(Q[counts] - C[counts], ord=ord, axis=1)))
