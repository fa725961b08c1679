"""Feasibility, proximity and robustness metrics of recourse paths.

The path metrics of Pentyala et al. (2023), "Privacy-Preserving Algorithmic
Recourse", section 5.2: PDensity (eq. 2), PDistanceManifold (eq. 3) and
PDistance (eq. 4, giving PL0, PL1 and PL2), and the two counterfactual metrics
they borrow from CARLA (Pawelczyk et al. 2021): yNN and redundancy. For
evaluation only: they read the training data and the queries and query the
black box without privacy.

A recourse path is a 2-D array whose first row is the query ``Z`` and whose
other rows are the points ``Z_1, ..., Z_p`` of the path, ``Z_p`` being the
counterfactual. ``paths`` is either a :class:`skdpx.RecoursePaths`, of which
only the successful paths are used, or a sequence of such arrays, all used. A
path holding only its query has no point and is skipped. The path metrics
average over the points of each path first, then over the paths.

A counterfactual array holds one counterfactual per query, row for row; a row
with a NaN means that no counterfactual was found for that query.
"""

import numbers

import numpy as np
from sklearn.neighbors import KernelDensity, NearestNeighbors

from ..results import RecoursePaths
from ._counterfactual import _check_matrix

__all__ = ["path_density", "path_distance", "path_manifold_distance", "redundancy", "ynn"]

# two values closer than this count as equal (L0 distance, redundancy)
_TOL = 1e-9


def _check_data(X, name="X"):
    return _check_matrix(X, name, finite=True)


def _collect_paths(paths):
    """All usable paths concatenated, query first, and the number of points of each.

    Returns ``(full, n_points)``: ``full`` of shape (sum(n_points + 1), d)
    stacks the usable paths, query included; ``n_points`` (all >= 1) holds the
    number of points ``p`` after the query of each.
    """
    if isinstance(paths, RecoursePaths):
        arrays = [p for p, ok in zip(paths.paths, paths.success) if ok]
        if not arrays:
            raise ValueError("paths has no successful path to evaluate.")
    else:
        if isinstance(paths, np.ndarray) and paths.ndim == 2:
            raise ValueError(
                "paths must be a RecoursePaths or a sequence of 2-D arrays (one per path); "
                "got a single 2-D array.")
        try:
            arrays = list(paths)
        except TypeError as exc:
            raise ValueError("paths must be a RecoursePaths or a sequence of 2-D arrays.") from exc
        if not arrays:
            raise ValueError("paths is empty: at least one path is needed.")
    checked, d = [], None
    for i, path in enumerate(arrays):
        try:
            path = np.asarray(path, dtype=float)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"paths[{i}] must be a numeric 2-D array.") from exc
        if path.ndim != 2 or path.shape[0] == 0:
            raise ValueError(
                f"paths[{i}] must be a 2-D array of shape (n_points, d), the query first; "
                f"got shape {path.shape}.")
        if d is None:
            d = path.shape[1]
        elif path.shape[1] != d:
            raise ValueError(f"paths[{i}] has {path.shape[1]} features, the first path has {d}.")
        if path.shape[0] > 1:
            checked.append(path)
    if not checked:
        raise ValueError("no path has a point after its query: nothing to evaluate.")
    full = np.concatenate(checked)
    if not np.all(np.isfinite(full)):
        raise ValueError("the paths evaluated must be finite.")
    n_points = np.array([len(p) - 1 for p in checked])
    return full, n_points


def _split(full, n_points):
    """The points of the paths, the point before each and the paths' offsets into them."""
    starts = np.cumsum(n_points + 1) - (n_points + 1)  # row of each query in ``full``
    is_point = np.ones(len(full), dtype=bool)
    is_point[starts] = False
    rows = np.flatnonzero(is_point)
    offsets = np.cumsum(n_points) - n_points  # first point of each path in ``full[rows]``
    return full[rows], full[rows - 1], offsets


def _mean_per_path(values, n_points, offsets):
    """Average of ``values`` (one per point) within each path, then over the paths."""
    return float(np.mean(np.add.reduceat(values, offsets) / n_points))


def _check_features(d, n_features, what):
    if d != n_features:
        raise ValueError(f"the paths have {d} features, {what} has {n_features}.")


def path_density(paths, X=None, *, bandwidth="scott", kde=None):
    """PDensity: mean log-likelihood of the path points under a KDE of the data (eq. 2).

    For each path, the mean of ``log rho(Z_i)`` over its points ``Z_1..Z_p``
    (the query excluded), where ``rho`` is a Gaussian kernel density estimate
    of ``X``; then the mean over the paths. Higher means the paths go through
    denser regions of the data.

    Parameters
    ----------
    paths : RecoursePaths or sequence of array-like of shape (n_i, d)
        The paths, each with its query as first row; of a ``RecoursePaths``
        only the successful paths are used.
    X : array-like of shape (n_samples, d), default=None
        The data whose density is estimated. Not used if ``kde`` is given.
    bandwidth : float or {"scott", "silverman"}, default="scott"
        The bandwidth of the Gaussian kernel, as in
        :class:`sklearn.neighbors.KernelDensity`.
    kde : fitted KernelDensity, default=None
        A density estimate fitted beforehand (to reuse it across methods);
        ``X`` and ``bandwidth`` are then ignored.

    Returns
    -------
    float
        The PDensity, a mean log-density.

    Raises
    ------
    ValueError
        If there is no path with a point to evaluate, the paths are not
        finite, neither ``X`` nor a fitted ``kde`` is given, or the number of
        features differs.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpx.metrics import path_density
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [5.0, 5.0]])
    >>> near = [np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0]])]
    >>> far = [np.array([[0.0, 0.0], [3.0, -2.0], [1.0, 1.0]])]
    >>> path_density(near, X, bandwidth=0.5) > path_density(far, X, bandwidth=0.5)
    True
    """
    full, n_points = _collect_paths(paths)
    if kde is None:
        if X is None:
            raise ValueError("give the data X or a fitted KernelDensity kde.")
        X = _check_data(X)
        _check_features(full.shape[1], X.shape[1], "X")
        kde = KernelDensity(kernel="gaussian", bandwidth=bandwidth).fit(X)
    else:
        if not isinstance(kde, KernelDensity) or not hasattr(kde, "tree_"):
            raise ValueError("kde must be a fitted sklearn.neighbors.KernelDensity.")
        _check_features(full.shape[1], kde.n_features_in_, "kde")
    points, _, offsets = _split(full, n_points)
    return _mean_per_path(kde.score_samples(points), n_points, offsets)


def path_manifold_distance(paths, X=None, *, nn=None):
    """PDistanceManifold: mean L1 distance of the path points to the data (eq. 3).

    For each path, the mean over its points ``Z_1..Z_p`` (the query excluded)
    of the L1 distance to the nearest row of ``X``; then the mean over the
    paths. Lower means the paths stay closer to the data manifold.

    Parameters
    ----------
    paths : RecoursePaths or sequence of array-like of shape (n_i, d)
        The paths, each with its query as first row; of a ``RecoursePaths``
        only the successful paths are used.
    X : array-like of shape (n_samples, d), default=None
        The data. Not used if ``nn`` is given.
    nn : fitted NearestNeighbors, default=None
        A nearest-neighbour index of the data fitted beforehand with the
        Manhattan (L1) metric (to reuse it across methods); ``X`` is then
        ignored.

    Returns
    -------
    float
        The PDistanceManifold, >= 0; 0 if every point is a row of ``X``.

    Raises
    ------
    ValueError
        If there is no path with a point to evaluate, the paths are not
        finite, neither ``X`` nor a fitted ``nn`` is given, ``nn`` does not
        use the L1 metric, or the number of features differs.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpx.metrics import path_manifold_distance
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0]])
    >>> paths = [np.array([[0.0, 0.0], [1.0, 0.5], [1.0, 1.0]]),  # (0.5 + 0) / 2
    ...          np.array([[0.0, 0.0], [3.0, 2.0]])]              # 3
    >>> round(path_manifold_distance(paths, X), 4)
    1.625
    """
    full, n_points = _collect_paths(paths)
    if nn is None:
        if X is None:
            raise ValueError("give the data X or a fitted NearestNeighbors nn.")
        X = _check_data(X)
        _check_features(full.shape[1], X.shape[1], "X")
        nn = NearestNeighbors(n_neighbors=1, metric="manhattan").fit(X)
    else:
        if not isinstance(nn, NearestNeighbors) or not hasattr(nn, "effective_metric_"):
            raise ValueError("nn must be a fitted sklearn.neighbors.NearestNeighbors.")
        metric = nn.effective_metric_
        p = (nn.effective_metric_params_ or {}).get("p")
        if not (metric in ("manhattan", "cityblock", "l1") or (metric == "minkowski" and p == 1)):
            raise ValueError(f"nn must use the manhattan (L1) metric; it uses {metric!r}.")
        _check_features(full.shape[1], nn.n_features_in_, "nn")
    points, _, offsets = _split(full, n_points)
    dist, _ = nn.kneighbors(points, n_neighbors=1)
    return _mean_per_path(dist[:, 0], n_points, offsets)


def path_distance(paths, *, ord=2):
    """PDistance: mean length of the steps of the paths (eq. 4; PL0, PL1, PL2).

    For each path ``[Z, Z_1, ..., Z_p]`` (query first), the sum of the
    distances between consecutive points divided by ``p``; then the mean over
    the paths. With ``ord=0`` the distance is the number of features that
    differ (sparsity, PL0), with ``ord=1`` the L1 and with ``ord=2`` the L2
    distance (proximity, PL1 and PL2).

    Parameters
    ----------
    paths : RecoursePaths or sequence of array-like of shape (n_i, d)
        The paths, each with its query as first row; of a ``RecoursePaths``
        only the successful paths are used.
    ord : {0, 1, 2}, default=2
        The distance: L0 (features differing by more than 1e-9), L1 or L2.

    Returns
    -------
    float
        The PDistance, >= 0.

    Raises
    ------
    ValueError
        If there is no path with a point to evaluate, the paths are not
        finite, or ``ord`` is not 0, 1 or 2.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpx.metrics import path_distance
    >>> paths = [np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0]]),  # two unit steps
    ...          np.array([[0.0, 0.0], [3.0, 4.0]])]              # one step of length 5
    >>> round(path_distance(paths), 4)  # (2 / 2 + 5 / 1) / 2
    3.0
    >>> round(path_distance(paths, ord=1), 4)  # (2 / 2 + 7 / 1) / 2
    4.0
    >>> round(path_distance(paths, ord=0), 4)  # (2 / 2 + 2 / 1) / 2
    1.5
    """
    if isinstance(ord, bool) or not isinstance(ord, numbers.Real) or ord not in (0, 1, 2):
        raise ValueError(f"ord must be 0, 1 or 2; got {ord!r}.")
    full, n_points = _collect_paths(paths)
    points, previous, offsets = _split(full, n_points)
    diff = np.abs(points - previous)
    if ord == 0:
        steps = np.count_nonzero(diff > _TOL, axis=1).astype(float)
    elif ord == 1:
        steps = diff.sum(axis=1)
    else:
        steps = np.sqrt(np.einsum("ij,ij->i", diff, diff))
    return _mean_per_path(steps, n_points, offsets)


def _check_counterfactuals(counterfactuals, d=None):
    try:
        C = np.asarray(counterfactuals, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError("counterfactuals must be a numeric array of shape (n, d).") from exc
    if C.ndim != 2:
        raise ValueError(f"counterfactuals must be a 2-D array of shape (n, d); got {C.ndim} dimension(s).")
    if d is not None and C.shape[1] != d:
        raise ValueError(f"counterfactuals have {C.shape[1]} features, X has {d}.")
    found = ~np.isnan(C).any(axis=1)
    if not found.any():
        raise ValueError("no counterfactual was found (every row has a NaN): nothing to evaluate.")
    if not np.all(np.isfinite(C[found])):
        raise ValueError("counterfactuals must be finite (apart from the NaN rows of failed queries).")
    return C, found


def _predict(estimator, X):
    predicted = np.asarray(estimator.predict(X))
    if predicted.shape != (X.shape[0],):
        raise ValueError(
            f"estimator.predict returned shape {predicted.shape} for {X.shape[0]} rows; "
            "expected one label per row.")
    return predicted


def ynn(counterfactuals, X, estimator, *, n_neighbors=5):
    """yNN: agreement of the black box around each counterfactual (CARLA).

    ``1 - (1 / (n k)) sum_i sum_{j in kNN(cf_i)} [f(cf_i) != f(x_j)]``: the
    fraction, over the counterfactuals and their ``k`` nearest rows of ``X``
    (Euclidean), of neighbours that the black box ``f`` gives the
    counterfactual's predicted class (Pawelczyk et al. 2021). Higher means the
    counterfactuals lie well inside the region of their class.

    Parameters
    ----------
    counterfactuals : array-like of shape (n, d)
        One counterfactual per query; the rows with a NaN (failed queries)
        are skipped.
    X : array-like of shape (n_samples, d)
        The data in which the neighbours are searched.
    estimator : fitted classifier
        The black box; only its ``predict`` method is used.
    n_neighbors : int, default=5
        The number ``k`` of neighbours, at most ``n_samples``.

    Returns
    -------
    float
        The yNN, in [0, 1].

    Raises
    ------
    ValueError
        If every counterfactual row has a NaN, the number of features
        differs, or ``n_neighbors`` is not an integer in [1, n_samples].

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skdpx.metrics import ynn
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array([0, 0, 1, 1])
    >>> clf = LogisticRegression().fit(X, y)
    >>> cf = np.array([[3.0], [1.9], [np.nan]])  # neighbours {3, 2} and {2, 1}
    >>> round(ynn(cf, X, clf, n_neighbors=2), 4)  # (2 + 1) / 4
    0.75
    """
    X = _check_data(X)
    C, found = _check_counterfactuals(counterfactuals, X.shape[1])
    if (isinstance(n_neighbors, bool) or not isinstance(n_neighbors, numbers.Integral)
            or not 1 <= n_neighbors <= X.shape[0]):
        raise ValueError(
            f"n_neighbors must be an integer in [1, {X.shape[0]}] (the rows of X); got {n_neighbors!r}.")
    C = C[found]
    neighbours = NearestNeighbors(n_neighbors=n_neighbors).fit(X).kneighbors(C, return_distance=False)
    unique, inverse = np.unique(neighbours, return_inverse=True)
    predicted_cf = _predict(estimator, C)
    predicted_nb = _predict(estimator, X[unique])[inverse.reshape(neighbours.shape)]
    return float(np.mean(predicted_nb == predicted_cf[:, None]))


def redundancy(queries, counterfactuals, estimator):
    """Redundancy: number of changed features that the prediction does not need (CARLA).

    For each counterfactual, the number of features that differ from the
    query (by more than 1e-9) and whose reversion alone to the query's value
    leaves the black box's prediction at the counterfactual's predicted class
    (Pawelczyk et al. 2021); then the mean over the counterfactuals. Lower
    means sparser counterfactuals; 0 if each changed feature is needed.

    Parameters
    ----------
    queries : array-like of shape (n, d)
        The queries.
    counterfactuals : array-like of shape (n, d)
        One counterfactual per query; the rows with a NaN (failed queries)
        are skipped.
    estimator : fitted classifier
        The black box; only its ``predict`` method is used (once).

    Returns
    -------
    float
        The mean redundancy, in [0, d].

    Raises
    ------
    ValueError
        If the shapes of the inputs differ, every counterfactual row has a
        NaN, or a query kept is not finite.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skdpx.metrics import redundancy
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [3.0, 0.0]])
    >>> clf = LogisticRegression().fit(X, [0, 0, 1, 1])  # the class depends on x0
    >>> Q = np.array([[0.0, 0.0], [0.0, 0.0]])
    >>> C = np.array([[3.0, 5.0], [np.nan, np.nan]])  # only the change of x0 is needed
    >>> redundancy(Q, C, clf)
    1.0
    """
    try:
        Q = np.asarray(queries, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError("queries must be a numeric array of shape (n, d).") from exc
    if Q.ndim != 2:
        raise ValueError(f"queries must be a 2-D array of shape (n, d); got {Q.ndim} dimension(s).")
    C, found = _check_counterfactuals(counterfactuals)
    if Q.shape != C.shape:
        raise ValueError(f"queries and counterfactuals differ in shape: {Q.shape} != {C.shape}.")
    Q, C = Q[found], C[found]
    if not np.all(np.isfinite(Q)):
        raise ValueError("queries must be finite where a counterfactual was found.")
    m, d = C.shape
    changed = np.abs(C - Q) > _TOL  # (m, d)
    # reverted[i, j] is counterfactual i with feature j set back to query i's value
    reverted = np.repeat(C[:, None, :], d, axis=1)
    reverted[:, np.arange(d), np.arange(d)] = Q
    predicted = _predict(estimator, np.concatenate([C, reverted[changed]]))
    kept = predicted[m:] == np.repeat(predicted[:m], changed.sum(axis=1))
    counts = np.bincount(np.repeat(np.arange(m), changed.sum(axis=1)), weights=kept, minlength=m)
    return float(np.mean(counts))
