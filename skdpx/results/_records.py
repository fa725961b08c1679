"""Results that hold rows per query: counterfactuals (:class:`CounterfactualSet`)
and recourse paths (:class:`RecoursePaths`), with the decoded rows in original
columns and units and their change tables.
"""

import numpy as np

from ._base import (_as_float_2d, _import_optional, _per_row,
                    _per_row_bool, _per_row_str_or_none, _Result, _select_rows)
from ._display import _short, plot_counterfactual, plot_path, plot_path_records

__all__ = ["CounterfactualSet", "RecoursePaths"]


def _as_records(name, x, n, feature_names):
    """The decoded rows ``x`` as a private DataFrame copy of ``n`` rows, or None.

    ``x`` is a DataFrame (the original columns and dtypes), a 2-D array (its
    columns named ``feature_names`` when the widths match), or the payload
    :func:`~skdpx.results._base._frame_payload` writes to JSON.
    """
    if x is None:
        return None
    pd = _import_optional("pandas", name, "test")
    if isinstance(x, dict) and set(x) == {"columns", "dtypes", "data"}:
        df = pd.DataFrame(x["data"], columns=x["columns"])
        if len(x["data"]) == 0:
            df = pd.DataFrame({c: [] for c in x["columns"]})
        for column, dtype in zip(x["columns"], x["dtypes"]):
            try:
                df[column] = df[column].astype(dtype)
            except (TypeError, ValueError):
                pass  # e.g. an integer column with a missing row stays object
    elif isinstance(x, pd.DataFrame):
        df = x.copy()
    else:
        if hasattr(x, "toarray"):  # scipy sparse
            x = x.toarray()
        arr = np.asarray(x)
        if arr.ndim != 2:
            raise ValueError(f"{name} must be a DataFrame or a 2-D array, got shape {arr.shape}")
        columns = (feature_names if feature_names is not None
                   and len(feature_names) == arr.shape[1]
                   else [f"x{j}" for j in range(arr.shape[1])])
        df = pd.DataFrame(arr, columns=[str(c) for c in columns])
    if len(df) != n:
        raise ValueError(f"{name} has {len(df)} rows, expected {n} (one per query)")
    df.columns = [str(c) for c in df.columns]
    if df.columns.duplicated().any():
        raise ValueError(f"{name} has duplicated column names")
    return df.reset_index(drop=True)


class _QueryRecords:
    """Decoded rows (original columns, units and categories) of the queries
    and counterfactuals, and the change tables, for :class:`CounterfactualSet`
    and :class:`RecoursePaths`."""

    def _init_records(self, query_records, counterfactual_records):
        n = len(self.queries)
        if (query_records is None) != (counterfactual_records is None):
            raise ValueError(
                "query_records and counterfactual_records go together: give both (the "
                "decoded queries and counterfactuals) or neither"
            )
        self._query_records = _as_records("query_records", query_records, n,
                                          self.feature_names)
        self._counterfactual_records = _as_records(
            "counterfactual_records", counterfactual_records, n, self.feature_names)
        if (self._query_records is not None
                and list(self._query_records.columns)
                != list(self._counterfactual_records.columns)):
            raise ValueError("query_records and counterfactual_records must have the same columns")

    @property
    def query_records(self):
        """pandas.DataFrame or None: The queries in the original columns,
        units and categories (a copy), when the estimator gave them."""
        return None if self._query_records is None else self._query_records.copy()

    @property
    def counterfactual_records(self):
        """pandas.DataFrame or None: The counterfactuals in the original
        columns, units and categories (a copy), when the estimator gave them."""
        if self._counterfactual_records is None:
            return None
        return self._counterfactual_records.copy()

    def changes(self, index=None):
        """What each counterfactual changes in its query, in original units.

        Parameters
        ----------
        index : int, slice, array-like or None, default=None
            The queries to list (all when None).

        Returns
        -------
        pandas.DataFrame
            One row per changed column of each query that has a
            counterfactual (rows of NaN are left out): ``query`` (its index),
            ``feature``, ``from`` (the query's value), ``to`` (the
            counterfactual's) and ``change`` (``to - from`` for a numeric
            column, NaN for a categorical one). The columns and units are the
            original ones when the result holds ``query_records`` and
            ``counterfactual_records`` (the decoded rows), the features'
            otherwise.

        Raises
        ------
        ImportError
            If pandas is not installed.
        """
        pd = _import_optional("pandas", "changes()", "test")
        rows = np.arange(len(self))
        if index is not None:
            rows = np.atleast_1d(_select_rows(len(self), index, "query"))
        found = ~np.isnan(self.counterfactuals).any(axis=1)
        rows = rows[found[rows]]
        if self._query_records is not None:
            Q = self._query_records.iloc[rows]
            C = self._counterfactual_records.iloc[rows]
        else:
            Q = pd.DataFrame(self.queries[rows], columns=self.feature_names)
            C = pd.DataFrame(self.counterfactuals[rows], columns=self.feature_names)
        parts = []
        for pos, column in enumerate(Q.columns):  # a loop over columns, not rows
            q, c = Q[column], C[column]
            numeric = all(pd.api.types.is_numeric_dtype(v)
                          and not pd.api.types.is_bool_dtype(v) for v in (q, c))
            q, c = q.to_numpy(dtype=object), c.to_numpy(dtype=object)  # values as given
            if numeric:
                qf, cf = q.astype(float), c.astype(float)
                changed = ~((qf == cf) | (np.isnan(qf) & np.isnan(cf)))
            else:
                changed = ~((q == c) | (pd.isna(q) & pd.isna(c)))
            if not changed.any():
                continue
            parts.append(pd.DataFrame({
                "query": rows[changed], "position": pos, "feature": column,
                "from": pd.Series(q[changed], dtype=object),
                "to": pd.Series(c[changed], dtype=object),
                "change": (cf - qf)[changed] if numeric else np.nan,
            }))
        if not parts:
            return pd.DataFrame({"query": np.empty(0, dtype=int),
                                 **{k: np.empty(0, dtype=object)
                                    for k in ("feature", "from", "to")},
                                 "change": np.empty(0)})
        df = pd.concat(parts, ignore_index=True)
        df = df.sort_values(["query", "position"], kind="stable").drop(columns="position")
        return df.reset_index(drop=True)

    def _change_summaries(self):
        """One line per row: ``"age: 39 -> 45; sex: Male -> Female"``."""
        out = np.full(len(self), "", dtype=object)
        if not len(self):
            return out
        df = self.changes()
        if len(df):
            text = [f"{f}: {_short(a)} \N{RIGHTWARDS ARROW} {_short(b)}"
                    for f, a, b in zip(df["feature"], df["from"], df["to"])]
            joined = (df.assign(text=text).groupby("query", sort=True)["text"]
                      .agg("; ".join))
            out[joined.index.to_numpy()] = joined.to_numpy()
        return out


class CounterfactualSet(_QueryRecords, _Result):
    """Counterfactuals of queries: one row per counterfactual (one or more per query).

    Parameters
    ----------
    queries : array-like of shape (n, n_features)
        The points explained.
    counterfactuals : array-like of shape (n, n_features)
        One counterfactual per query; a row of NaN where none was found.
    desired_class : scalar or array-like of shape (n,)
        The class asked for (a scalar applies to every query).
    predicted_class : scalar or array-like of shape (n,)
        What the black box predicts for each counterfactual.
    valid : array-like of bool of shape (n,), default=None
        Whether the black box really predicts the desired class.  By default
        ``predicted_class == desired_class`` for the rows without NaN.
    distance : array-like of shape (n,), default=None
        The distance from each query to its counterfactual.  By default the
        Euclidean distance (NaN for failed rows).
    query_records, counterfactual_records : pandas.DataFrame, default=None
        The queries and counterfactuals decoded to the original columns,
        units and categories (e.g. ``schema_.decode`` of the two arrays), one
        row each; both or neither. Given them, :meth:`changes`, the plot,
        ``to_frame()`` and the notebook table are in original units. (A 2-D
        array is also accepted, its columns named ``feature_names``.)
    found_by : str, None or array-like of shape (n,), default=None
        Which stage of the search found each counterfactual (for
        :class:`~skdpx.counterfactual.DPCounterfactualGenerator`: "latent",
        "prototype segment", "score" or "direction"); None for a row without
        one, or when the method does not say.
    plausibility : array-like of shape (n,), default=None
        How plausible each counterfactual is, computed from DP outputs only
        (its meaning is the estimator's: see its ``explain``); NaN where
        there is no counterfactual or no score. By default all NaN.
    reason : str, None or array-like of shape (n,), default=None
        Why a row has no counterfactual (None where it has one, or when the
        method does not say).
    query_index : array-like of int of shape (n,), default=None
        The query each row answers (its position in the ``X`` explained):
        with several counterfactuals per query the rows of one query follow
        each other, and its ``queries`` row is repeated. By default
        ``0, 1, ..., n - 1`` (one row per query).
    feature_names : sequence of str of length n_features, default=None
        Feature names; ``["x0", "x1", ...]`` by default.
    epsilon_spent, delta_spent : float
        The estimator's total privacy spend, kept in ``meta``.
    meta : dict, default=None
        Anything else the estimator reports.

    Attributes
    ----------
    queries, counterfactuals : ndarray of shape (n, n_features)
    desired_class, predicted_class : ndarray of shape (n,)
    valid : ndarray of bool of shape (n,)
    distance : ndarray of float of shape (n,)
    found_by, reason : ndarray of object (str or None) of shape (n,)
    plausibility : ndarray of float of shape (n,)
    query_index : ndarray of int of shape (n,)
    query_records, counterfactual_records : pandas.DataFrame or None
    feature_names : list of str
    meta : dict
        Always holds ``epsilon_spent`` and ``delta_spent``.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpx import CounterfactualSet
    >>> cfs = CounterfactualSet([[0.0, 0.0], [1.0, 1.0]],
    ...                         [[0.5, 0.0], [np.nan, np.nan]],
    ...                         desired_class=1, predicted_class=[1, 0],
    ...                         epsilon_spent=1.0, delta_spent=1e-5)
    >>> len(cfs), cfs.valid.tolist(), cfs.distance.tolist()
    (2, [True, False], [0.5, nan])
    >>> cfs[cfs.valid].counterfactuals
    array([[0.5, 0. ]])
    >>> CounterfactualSet.from_json(cfs.to_json()) == cfs
    True
    >>> cfs.changes()
       query feature from   to  change
    0      0      x0  0.0  0.5     0.5
    """

    _row_fields = ("queries", "counterfactuals", "desired_class",
                   "predicted_class", "valid", "distance", "found_by", "plausibility",
                   "reason", "query_index", "query_records", "counterfactual_records")

    def __init__(self, queries, counterfactuals, *, desired_class, predicted_class,
                 valid=None, distance=None, found_by=None, plausibility=None, reason=None,
                 query_index=None, query_records=None, counterfactual_records=None,
                 feature_names=None, epsilon_spent, delta_spent, meta=None):
        n_features = None if feature_names is None else len(list(feature_names))
        self.queries = _as_float_2d("queries", queries, n_features)
        n, n_features = self.queries.shape
        self.counterfactuals = _as_float_2d("counterfactuals", counterfactuals, n_features, n)
        self.desired_class = _per_row("desired_class", desired_class, n)
        self.predicted_class = _per_row("predicted_class", predicted_class, n)
        found = ~np.isnan(self.counterfactuals).any(axis=1)
        if valid is None:
            valid = found & (self.predicted_class == self.desired_class)
        self.valid = _per_row_bool("valid", valid, n)
        if distance is None:
            distance = np.where(
                found, np.linalg.norm(self.counterfactuals - self.queries, axis=1), np.nan
            )
        self.distance = _per_row("distance", distance, n, dtype=float)
        self.found_by = _per_row_str_or_none("found_by", found_by, n)
        self.plausibility = _per_row("plausibility", np.nan if plausibility is None
                                     else plausibility, n, dtype=float)
        self.reason = _per_row_str_or_none("reason", reason, n)
        self.query_index = _per_row("query_index", np.arange(n) if query_index is None
                                    else query_index, n, dtype=float)
        if not np.all(np.isfinite(self.query_index) & (self.query_index >= 0)
                      & (self.query_index == np.round(self.query_index))):
            raise ValueError("query_index must hold non-negative integers (the query of "
                             "each row)")
        self.query_index = self.query_index.astype(np.intp)
        self.query_index.flags.writeable = False
        self._init_common(n_features, feature_names, epsilon_spent, delta_spent, meta)
        self._init_records(query_records, counterfactual_records)

    def to_frame(self, original=None):
        """The counterfactuals as a pandas DataFrame.

        Parameters
        ----------
        original : bool or None, default=None
            The counterfactuals in the original columns, units and
            categories (``counterfactual_records``) rather than the
            features. None: when the result holds them.

        Returns
        -------
        pandas.DataFrame
            One row per counterfactual: its columns, then
            ``desired_class``, ``predicted_class``, ``valid``, ``distance``,
            ``found_by``, ``plausibility``, ``reason`` and ``query_index``
            (the query it answers).  ``df.attrs["meta"]`` holds
            ``meta``.

        Raises
        ------
        ImportError
            If pandas is not installed.
        ValueError
            If ``original=True`` and the result holds no decoded rows.
        """
        if original is None:
            original = self._counterfactual_records is not None
        if original and self._counterfactual_records is None:
            raise ValueError("original=True needs counterfactual_records (the decoded rows)")
        if original:
            records = self._counterfactual_records
            features = [(c, records[c]) for c in records.columns]  # dtypes kept
        else:
            features = list(zip(self.feature_names, self.counterfactuals.T))
        return self._frame([
            *features,
            ("desired_class", self.desired_class),
            ("predicted_class", self.predicted_class),
            ("valid", self.valid),
            ("distance", self.distance),
            ("found_by", self.found_by),
            ("plausibility", self.plausibility),
            ("reason", self.reason),
            ("query_index", self.query_index),
        ])

    def plot(self, index=0, *, top_k=None, ax=None, **kwargs):
        """Bar chart of the change (counterfactual - query) of one row.

        With decoded rows (``query_records``), one bar per changed original
        column, labelled ``column: from -> to``: a numeric change in its own
        units, a categorical change as a grey label with no length, listed
        first. Without them, one bar per feature.

        Parameters
        ----------
        index : int, default=0
            The query to plot.
        top_k : int or None, default=None
            Show only the ``top_k`` largest changes in absolute value.
        ax : matplotlib.axes.Axes, default=None
            Where to draw; a new figure when None.
        **kwargs
            Passed to ``ax.barh``.

        Returns
        -------
        matplotlib.axes.Axes
        """
        return plot_counterfactual(self, index, top_k=top_k, ax=ax, **kwargs)

    def _html_columns(self, head):
        unit = "original units" if self._query_records is not None else "feature units"
        return [
            ("query", head.query_index),
            ("desired_class", head.desired_class),
            ("predicted_class", head.predicted_class),
            ("valid", head.valid),
            ("distance", head.distance),
            ("found_by", head.found_by),
            ("plausibility", head.plausibility),
            ("reason", head.reason),
            ("changes", head._change_summaries()),
        ], f"changes: counterfactual vs query, in {unit}; distance in feature units"


class RecoursePaths(_QueryRecords, _Result):
    """One recourse path per query, from the query to its counterfactual.

    Parameters
    ----------
    queries : array-like of shape (n, n_features)
        The points explained.
    paths : list of n array-likes of shape (n_points_i, n_features)
        The points of each path, the query first (for a failed query the path
        may be just the query).
    cost : array-like of shape (n,)
        The cost of each path.
    success : array-like of bool of shape (n,)
        Whether each path reaches the desired outcome.
    counterfactuals : array-like of shape (n, n_features), default=None
        The end points.  By default the last point of each successful path
        and a row of NaN for the others.
    reason : str, None or sequence of str or None of length n, default=None
        Why each query has no path (``""`` or None where it has one); None:
        not reported. A query that succeeds cannot carry a reason.
    tolerance : array-like of shape (n,), default=None
        The tolerance each query's path needed (PrivRecourse relaxes it per
        query, from ``tolerance`` up to ``max_tolerance``); NaN where not
        reported or where the query has no path.
    query_records, counterfactual_records : pandas.DataFrame, default=None
        The queries and end points decoded to the original columns, units
        and categories, one row each; both or neither. Given them,
        :meth:`changes` and the notebook table are in original units.
    path_records : pandas.DataFrame, default=None
        Every point of every path decoded to the original columns, units and
        categories: ``sum(len(p) for p in paths)`` rows, the paths one after
        the other (each query first). Given it, :meth:`steps`,
        :meth:`to_frame` and :meth:`plot` are in original columns and units.
        (A 2-D array is also accepted, its columns named ``feature_names``.)
    feature_names : sequence of str of length n_features, default=None
        Feature names; ``["x0", "x1", ...]`` by default.
    epsilon_spent, delta_spent : float
        The estimator's total privacy spend, kept in ``meta``.
    meta : dict, default=None
        Anything else the estimator reports.

    Attributes
    ----------
    queries, counterfactuals : ndarray of shape (n, n_features)
    paths : list of ndarray of shape (n_points_i, n_features)
    cost : ndarray of float of shape (n,)
    success : ndarray of bool of shape (n,)
    reason : ndarray of object of shape (n,)
        str or None per query.
    tolerance : ndarray of float of shape (n,)
    query_records, counterfactual_records, path_records : pandas.DataFrame or None
    feature_names : list of str
    meta : dict
        Always holds ``epsilon_spent`` and ``delta_spent``.

    Examples
    --------
    >>> from skdpx import RecoursePaths
    >>> rp = RecoursePaths([[0.0, 0.0], [5.0, 5.0]],
    ...                    [[[0.0, 0.0], [0.5, 0.0], [1.0, 0.5]], [[5.0, 5.0]]],
    ...                    cost=[1.5, 0.0], success=[True, False],
    ...                    epsilon_spent=2.0, delta_spent=0.0)
    >>> len(rp), [len(p) for p in rp.paths]
    (2, [3, 1])
    >>> rp.counterfactuals
    array([[1. , 0.5],
           [nan, nan]])
    >>> RecoursePaths.from_json(rp.to_json()) == rp
    True
    """

    _row_fields = ("queries", "paths", "cost", "success", "reason", "tolerance",
                   "counterfactuals", "query_records", "counterfactual_records")
    #: one row per path point, not per query: selected by :meth:`__getitem__` itself
    _static_fields = ("path_records",)

    def __init__(self, queries, paths, *, cost, success, reason=None, tolerance=None,
                 counterfactuals=None, query_records=None, counterfactual_records=None, path_records=None,
                 feature_names=None, epsilon_spent, delta_spent, meta=None):
        n_features = None if feature_names is None else len(list(feature_names))
        self.queries = _as_float_2d("queries", queries, n_features)
        n, n_features = self.queries.shape
        paths = list(paths)
        if len(paths) != n:
            raise ValueError(f"paths has {len(paths)} paths, queries has {n}: one path per query")
        self.paths = []
        for i, path in enumerate(paths):
            path = _as_float_2d(f"paths[{i}]", path, n_features)
            if len(path) == 0:
                raise ValueError(f"paths[{i}] is empty; a path starts with its query")
            if not np.allclose(path[0], self.queries[i], equal_nan=True):
                raise ValueError(f"paths[{i}] must start with queries[{i}]")
            self.paths.append(path)
        self.cost = _per_row("cost", cost, n, dtype=float)
        self.success = _per_row_bool("success", success, n)
        self.reason = _per_row_str_or_none("reason", reason, n)
        explained = np.array([bool(r) for r in self.reason], dtype=bool)
        if np.any(explained & self.success):
            i = int(np.flatnonzero(explained & self.success)[0])
            raise ValueError(f"reason[{i}] is {self.reason[i]!r} but query {i} has a path "
                             "(success=True): a reason says why a query has none; give "
                             "'' or None for it")
        self.tolerance = _per_row("tolerance", np.nan if tolerance is None else tolerance, n,
                                  dtype=float)
        if counterfactuals is None:
            counterfactuals = np.full((n, n_features), np.nan)
            for i in np.flatnonzero(self.success):
                counterfactuals[i] = self.paths[i][-1]
        self.counterfactuals = _as_float_2d("counterfactuals", counterfactuals, n_features, n)
        self._init_common(n_features, feature_names, epsilon_spent, delta_spent, meta)
        self._init_records(query_records, counterfactual_records)
        self._path_records = _as_records("path_records", path_records,
                                         int(self._lengths().sum()), self.feature_names)
        if (self._path_records is not None and self._query_records is not None
                and list(self._path_records.columns) != list(self._query_records.columns)):
            raise ValueError("path_records and query_records must have the same columns")

    def _lengths(self):
        """The number of points of each path (its query included)."""
        return np.array([len(p) for p in self.paths], dtype=int)

    @property
    def path_records(self):
        """pandas.DataFrame or None: Every path point in the original columns,
        units and categories (a copy; the paths one after the other), when
        the estimator gave them."""
        return None if self._path_records is None else self._path_records.copy()

    def _point_rows(self, idx):
        """The rows of the path points of queries ``idx``, in order (vectorised)."""
        lengths = self._lengths()
        first = np.cumsum(lengths) - lengths
        take = lengths[idx]
        # position of each point within its own path, then offset by its path's start
        within = np.arange(take.sum()) - np.repeat(np.cumsum(take) - take, take)
        return np.repeat(first[idx], take) + within

    def __getitem__(self, key):
        """The rows ``key`` (int, slice, int or boolean array) as a new object.

        An int gives a one-row object; ``meta`` is kept; ``path_records``
        keeps the points of the paths selected.
        """
        idx = np.atleast_1d(_select_rows(len(self), key))
        params = self._selected_params(idx)
        if self._path_records is not None:
            params["path_records"] = self._path_records.iloc[self._point_rows(idx)]
        return type(self)(**params)

    def steps(self, index):
        """One query's path, one row per point, in original columns and units.

        Parameters
        ----------
        index : int
            The query.

        Returns
        -------
        pandas.DataFrame
            ``step`` (0 is the query itself, the last row the end point),
            then the path's points: in the original columns, units and
            categories when the result holds ``path_records`` (as the end
            points of ``counterfactual_records``: declared levels, integer
            columns integers), in the features otherwise. A query with no
            path has one row, itself. ``df.attrs["cost"]``,
            ``df.attrs["success"]``, ``df.attrs["reason"]`` and
            ``df.attrs["tolerance"]`` hold the query's.

        Raises
        ------
        ImportError
            If pandas is not installed.
        """
        pd = _import_optional("pandas", "steps()", "test")
        i = self._row(index)
        if self._path_records is not None:
            df = self._path_records.iloc[self._point_rows([i])].reset_index(drop=True)
        else:
            df = pd.DataFrame(self.paths[i], columns=self.feature_names)
        if "step" in df.columns:
            raise ValueError("a feature named 'step' clashes with the step column")
        df.insert(0, "step", np.arange(len(df)))
        df.attrs.update(cost=float(self.cost[i]), success=bool(self.success[i]),
                        reason=self.reason[i], tolerance=float(self.tolerance[i]))
        return df

    def to_frame(self, original=None):
        """The paths as a long-format pandas DataFrame.

        Parameters
        ----------
        original : bool or None, default=None
            The points in the original columns, units and categories
            (``path_records``) rather than the features. None: when the
            result holds them (a result of an estimator fitted on a
            DataFrame with categorical columns gave encoded one-hot columns
            before ``path_records`` existed; pass ``original=False`` for
            them).

        Returns
        -------
        pandas.DataFrame
            One row per path point: ``query`` (the query's index), ``step``
            (0 is the query itself), the feature (or original) columns,
            then the ``cost`` and ``success`` of that query's path.
            ``df.attrs["meta"]`` holds ``meta``.

        Raises
        ------
        ImportError
            If pandas is not installed.
        ValueError
            If ``original=True`` and the result holds no ``path_records``.
        """
        if original is None:
            original = self._path_records is not None
        if original and self._path_records is None:
            raise ValueError("original=True needs path_records (the decoded path points)")
        lengths = self._lengths()
        if original:
            records = self._path_records
            features = [(c, records[c].reset_index(drop=True)) for c in records.columns]
        else:
            points = (np.vstack(self.paths) if self.paths
                      else np.empty((0, self.n_features)))
            features = list(zip(self.feature_names, points.T))
        return self._frame([
            ("query", np.repeat(np.arange(len(self)), lengths)),
            ("step", np.concatenate([np.arange(k) for k in lengths] or [np.empty(0, int)])),
            *features,
            ("cost", np.repeat(self.cost, lengths)),
            ("success", np.repeat(self.success, lengths)),
        ])

    def plot(self, index=0, *, features=None, ax=None, **kwargs):
        """Line plot of one query's path in two features (or original columns).

        Parameters
        ----------
        index : int, default=0
            The query whose path to plot.
        features : pair of int or str, default=None
            The two features (indices or names) on the x and y axes. With
            ``path_records``, the original columns (indices or names among
            ``path_records.columns``; a categorical column's levels on its
            axis, in their declared order when the column is a pandas
            ``Categorical``, else in the order the path visits them);
            default: the first two columns that change along the path
            (then the first columns). Without them, the features; default
            ``(0, 1)``.
        ax : matplotlib.axes.Axes, default=None
            Where to draw; a new figure when None.
        **kwargs
            Passed to ``ax.plot`` for the path line.

        Returns
        -------
        matplotlib.axes.Axes
        """
        if self._path_records is not None:
            return plot_path_records(self, index, features=features, ax=ax, **kwargs)
        return plot_path(self, index, features=(0, 1) if features is None else features,
                         ax=ax, **kwargs)

    def _html_columns(self, head):
        unit = "original units" if self._query_records is not None else "feature units"
        return [
            ("success", head.success),
            ("cost", head.cost),
            ("steps", np.array([len(p) - 1 for p in head.paths])),
            ("tolerance", head.tolerance),
            ("changes", head._change_summaries()),
            ("reason", np.array(["" if r is None else r for r in head.reason], dtype=object)),
        ], f"changes: end point vs query, in {unit}; reason: why a query has no path"
