"""Result objects returned by the skdpx explainers.

Three classes hold what an explainer releases:

- :class:`FeatureAttribution`: one attribution vector per explained sample;
- :class:`CounterfactualSet`: one counterfactual per query;
- :class:`RecoursePaths`: one path of points per query, from the query to
  its counterfactual.

They share one private base, :class:`_Result`, which does what is common:
the ``meta`` dictionary (always holding the estimator's ``epsilon_spent`` and
``delta_spent``), ``len()``, row selection with ``obj[key]``, equality,
``repr``, ``to_json()``/``from_json()`` and the lazy imports of the optional
pandas (``to_frame()``) and matplotlib (``plot()``).

The objects are frozen-ish: every array is a private, read-only copy.
"""

import json
import math
import os
from numbers import Integral

import numpy as np

__all__ = ["FeatureAttribution", "CounterfactualSet", "RecoursePaths"]


# ---------------------------------------------------------------------------
# validation / conversion helpers
# ---------------------------------------------------------------------------


def _frozen(arr):
    """Make ``arr`` read-only and return it (``arr`` must be our own copy)."""
    arr.flags.writeable = False
    return arr


def _as_float_2d(name, x, n_features=None, n_rows=None):
    """A read-only float copy of ``x``, checked to be 2-D.

    ``None`` entries become NaN and the strings ``"Infinity"``/``"-Infinity"``
    become infinities (this is how :meth:`_Result.to_json` writes them).  An
    empty 1-D input is read as zero rows of ``n_features`` columns, so that an
    empty result survives the JSON round trip.
    """
    try:
        arr = np.array(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a 2-D array of numbers: {exc}") from None
    if arr.ndim == 1 and arr.size == 0 and n_features is not None:
        arr = arr.reshape(0, n_features)
    if arr.ndim != 2:
        raise ValueError(
            f"{name} must be a 2-D array (n_rows, n_features), got an array "
            f"with shape {arr.shape}"
        )
    if n_features is not None and arr.shape[1] != n_features:
        raise ValueError(
            f"{name} has {arr.shape[1]} columns, expected {n_features} "
            "(one per feature)"
        )
    if n_rows is not None and arr.shape[0] != n_rows:
        raise ValueError(f"{name} has {arr.shape[0]} rows, expected {n_rows} (one per query)")
    return _frozen(arr)


def _per_row(name, x, n, dtype=None):
    """A read-only 1-D copy of ``x`` of length ``n``; a scalar broadcasts."""
    try:
        arr = np.array(x, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} could not be converted: {exc}") from None
    if arr.ndim == 0:
        arr = np.repeat(arr[np.newaxis], n)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(
            f"{name} must have one entry per row ({n}), got shape {arr.shape}"
        )
    return _frozen(arr)


def _per_row_bool(name, x, n):
    """Like :func:`_per_row`, for booleans (0/1 integers are accepted)."""
    arr = np.asarray(x)
    if arr.dtype != bool:
        if arr.dtype.kind not in "iuf" or not np.isin(arr, (0, 1)).all():
            raise ValueError(f"{name} must be boolean (True/False per row)")
    return _per_row(name, arr, n, dtype=bool)


def _per_row_str_or_none(name, x, n):
    """An object array of ``str`` or ``None`` per row; a scalar broadcasts."""
    if x is None or isinstance(x, str):
        x = [x] * n
    items = list(x)
    if len(items) != n:
        raise ValueError(f"{name} must have one entry per row ({n}), got {len(items)}")
    arr = np.empty(n, dtype=object)
    for i, item in enumerate(items):
        if item is not None and not isinstance(item, str):
            raise ValueError(f"{name} entries must be str or None, got {item!r}")
        arr[i] = None if item is None else str(item)
    return _frozen(arr)


def _spent(name, value):
    """A privacy spend: a float, non-negative (``inf`` allowed), not NaN."""
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if math.isnan(value) or value < 0:
        raise ValueError(f"{name} must be non-negative, got {value!r}")
    return value


def _jsonable(obj):
    """``obj`` in plain JSON types: numpy to Python, NaN to ``None``,
    infinities to the strings ``"Infinity"``/``"-Infinity"``."""
    if isinstance(obj, np.ndarray):
        return [_jsonable(v) for v in obj.tolist()]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float):
        if math.isnan(obj):
            return None
        if math.isinf(obj):
            return "Infinity" if obj > 0 else "-Infinity"
        return obj
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    return obj


def _values_equal(a, b):
    """Equality of two stored field values (arrays, lists of arrays, ...)."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        if a.shape != b.shape:
            return False
        if a.dtype.kind in "fc" and b.dtype.kind in "fc":
            return bool(np.array_equal(a, b, equal_nan=True))
        return a.tolist() == b.tolist()
    if isinstance(a, list) and a and isinstance(a[0], np.ndarray):
        return len(a) == len(b) and all(map(_values_equal, a, b))
    return _jsonable(a) == _jsonable(b)


def _import_optional(module, what, extra):
    """Import an optional dependency or raise a plain :class:`ImportError`."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        top = module.split(".")[0]
        raise ImportError(
            f"{what} requires {top}, which is not installed; install it with "
            f"`pip install {top}` or `pip install skdpx[{extra}]`."
        ) from exc


def _new_axes(ax):
    """``ax``, or a fresh matplotlib Axes when ``ax`` is None."""
    if ax is not None:
        return ax
    plt = _import_optional("matplotlib.pyplot", "plot()", "plot")
    _, ax = plt.subplots()
    return ax


# ---------------------------------------------------------------------------
# shared base
# ---------------------------------------------------------------------------


class _Result:
    """What the three result classes share.

    A subclass lists in ``_row_fields`` the constructor arguments that hold one
    entry per row (all are keyword arguments of the constructor); every subclass
    also takes ``feature_names``, ``epsilon_spent``, ``delta_spent`` and
    ``meta``.  Its ``__init__`` converts its own fields and then calls
    :meth:`_init_common`.
    """

    _row_fields = ()

    __hash__ = None  # mutable-looking, compared by value

    def _init_common(self, n_features, feature_names, epsilon_spent, delta_spent, meta):
        # feature names
        if feature_names is None:
            feature_names = [f"x{j}" for j in range(n_features)]
        elif isinstance(feature_names, str):
            raise ValueError("feature_names must be a sequence of names, not a str")
        feature_names = [str(f) for f in feature_names]
        if len(feature_names) != n_features:
            raise ValueError(
                f"feature_names has {len(feature_names)} names, expected "
                f"{n_features} (one per feature)"
            )
        if len(set(feature_names)) != n_features:
            raise ValueError("feature_names must be unique")
        self.feature_names = feature_names

        # meta: the privacy spend first, then whatever else the estimator says
        spent = {
            "epsilon_spent": _spent("epsilon_spent", epsilon_spent),
            "delta_spent": _spent("delta_spent", delta_spent),
        }
        meta = {} if meta is None else dict(meta)
        for key, value in spent.items():
            if key in meta and _spent(f"meta[{key!r}]", meta[key]) != value:
                raise ValueError(
                    f"meta[{key!r}]={meta[key]!r} disagrees with {key}={value!r}"
                )
            meta[key] = value
        self.meta = {**spent, **meta}

    # -- basic protocol ------------------------------------------------------

    @property
    def epsilon_spent(self):
        """float: The estimator's total epsilon spent (``meta["epsilon_spent"]``)."""
        return self.meta["epsilon_spent"]

    @property
    def delta_spent(self):
        """float: The estimator's total delta spent (``meta["delta_spent"]``)."""
        return self.meta["delta_spent"]

    @property
    def n_features(self):
        """int: The number of features."""
        return len(self.feature_names)

    def __len__(self):
        return len(getattr(self, self._row_fields[0]))

    def _params(self):
        """The constructor arguments that rebuild this object."""
        params = {name: getattr(self, name) for name in self._row_fields}
        extra = {k: v for k, v in self.meta.items() if k not in ("epsilon_spent", "delta_spent")}
        params.update(
            feature_names=list(self.feature_names),
            epsilon_spent=self.epsilon_spent,
            delta_spent=self.delta_spent,
            meta=extra,
        )
        return params

    def __getitem__(self, key):
        """The rows ``key`` (int, slice, int or boolean array) as a new object.

        An int gives a one-row object; ``meta`` is kept.
        """
        idx = np.atleast_1d(np.arange(len(self))[key])
        params = self._params()
        for name in self._row_fields:
            value = params[name]
            if isinstance(value, list):
                params[name] = [value[i] for i in idx]
            else:
                params[name] = value[idx]
        return type(self)(**params)

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        mine, theirs = self._params(), other._params()
        return all(_values_equal(mine[k], theirs[k]) for k in mine)

    def __repr__(self):
        return (
            f"{type(self).__name__}(n={len(self)}, n_features={self.n_features}, "
            f"epsilon_spent={self.epsilon_spent:g}, delta_spent={self.delta_spent:g})"
        )

    # -- JSON ----------------------------------------------------------------

    def to_json(self, path=None, **kwargs):
        """Serialise to a JSON string, and write it to ``path`` if given.

        NaN is written as ``null`` and infinities as ``"Infinity"`` /
        ``"-Infinity"``, so the text is strict JSON; :meth:`from_json` reads
        them back.  (In the free-form entries of ``meta`` they are not turned
        back into floats.)

        Parameters
        ----------
        path : str or path-like, default=None
            If given, the JSON text is also written to this file (UTF-8).
        **kwargs
            Passed to :func:`json.dumps` (e.g. ``indent=2``).

        Returns
        -------
        str
            The JSON text, an object with a ``"type"`` field holding the class
            name and one field per constructor argument.
        """
        payload = {"type": type(self).__name__, **_jsonable(self._params())}
        text = json.dumps(payload, allow_nan=False, **kwargs)
        if path is not None:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
        return text

    @classmethod
    def from_json(cls, s):
        """Rebuild an object from the output of :meth:`to_json`.

        Parameters
        ----------
        s : str or path-like
            JSON text, or the path of a file holding it (a ``str`` that does
            not start with ``{`` is read as a path).

        Returns
        -------
        object
            An instance of this class equal to the one serialised.
        """
        if isinstance(s, os.PathLike) or (isinstance(s, str) and not s.lstrip().startswith("{")):
            with open(s, encoding="utf-8") as fh:
                s = fh.read()
        payload = json.loads(s)
        kind = payload.pop("type", None)
        if kind != cls.__name__:
            raise ValueError(f"JSON holds a {kind!r}, not a {cls.__name__!r}")
        return cls(**payload)

    # -- optional extras -----------------------------------------------------

    def _frame(self, columns):
        """A DataFrame of the ``(name, 1-D array)`` pairs ``columns``, with
        ``meta`` in ``attrs``; feature names must not clash with other columns."""
        pd = _import_optional("pandas", "to_frame()", "test")
        names = [name for name, _ in columns]
        clash = sorted({name for name in names if names.count(name) > 1})
        if clash:
            raise ValueError(f"feature names clash with result columns: {clash}")
        df = pd.DataFrame(dict(columns))
        df.attrs["meta"] = dict(self.meta)
        return df

    def _feature_index(self, feature):
        """The column index of ``feature``, given as an index or a name."""
        if isinstance(feature, (Integral, np.integer)) and not isinstance(feature, bool):
            j = int(feature)
            if not -self.n_features <= j < self.n_features:
                raise ValueError(
                    f"feature index {j} out of range for {self.n_features} features"
                )
            return j % self.n_features
        if feature in self.feature_names:
            return self.feature_names.index(feature)
        raise ValueError(f"unknown feature {feature!r}; known: {self.feature_names}")

    def _row(self, index):
        """``index`` as a valid non-negative row number."""
        return int(np.arange(len(self))[index])

    def _barh(self, ax, values, top_k, **kwargs):
        """Horizontal bars of ``values`` (one per feature), the ``top_k``
        largest in absolute value, largest on top; colour by sign."""
        values = np.asarray(values, dtype=float)
        order = np.argsort(-np.abs(np.nan_to_num(values)), kind="stable")
        if top_k is not None:
            order = order[:top_k]
        order = order[::-1]
        if "color" not in kwargs:
            kwargs["color"] = ["tab:red" if v < 0 else "tab:blue" for v in values[order]]
        ax.barh([self.feature_names[j] for j in order], values[order], **kwargs)
        ax.axvline(0.0, color="black", linewidth=0.8)
        return ax


# ---------------------------------------------------------------------------
# public classes
# ---------------------------------------------------------------------------


class FeatureAttribution(_Result):
    """Per-sample feature attributions released by an explainer.

    Parameters
    ----------
    values : array-like of shape (n, n_features)
        The attribution of each feature, one row per explained sample.
    epsilon : float or array-like of shape (n,)
        What each row cost in epsilon; a scalar applies to every row.
    phase : str, None or array-like of shape (n,), default=None
        Per row, the phase of the explainer that produced it (used by
        ``DPLimeExplainer``); ``None`` when not applicable.
    feature_names : sequence of str of length n_features, default=None
        Feature names; ``["x0", "x1", ...]`` by default.
    epsilon_spent, delta_spent : float
        The estimator's total privacy spend, kept in ``meta``.
    meta : dict, default=None
        Anything else the estimator reports (e.g. ``{"estimator": name}``).

    Attributes
    ----------
    values : ndarray of shape (n, n_features)
    epsilon : ndarray of shape (n,)
    phase : ndarray of object (str or None) of shape (n,)
    feature_names : list of str
    meta : dict
        Always holds ``epsilon_spent`` and ``delta_spent``.

    Examples
    --------
    >>> from skdpx._explanation import FeatureAttribution
    >>> fa = FeatureAttribution([[0.5, -0.2], [0.1, 0.3], [0.0, 0.9]],
    ...                         epsilon=0.5, feature_names=["age", "hours"],
    ...                         epsilon_spent=1.5, delta_spent=0.0,
    ...                         meta={"estimator": "DPLimeExplainer"})
    >>> fa
    FeatureAttribution(n=3, n_features=2, epsilon_spent=1.5, delta_spent=0)
    >>> len(fa), fa.epsilon.tolist()
    (3, [0.5, 0.5, 0.5])
    >>> fa[1:].values.shape, fa[1:].meta["estimator"]
    ((2, 2), 'DPLimeExplainer')
    >>> FeatureAttribution.from_json(fa.to_json()) == fa
    True
    """

    _row_fields = ("values", "epsilon", "phase")

    def __init__(self, values, *, epsilon, phase=None, feature_names=None,
                 epsilon_spent, delta_spent, meta=None):
        n_features = None if feature_names is None else len(list(feature_names))
        self.values = _as_float_2d("values", values, n_features)
        n, n_features = self.values.shape
        self.epsilon = _per_row("epsilon", epsilon, n, dtype=float)
        self.phase = _per_row_str_or_none("phase", phase, n)
        self._init_common(n_features, feature_names, epsilon_spent, delta_spent, meta)

    def to_frame(self):
        """The attributions as a pandas DataFrame.

        Returns
        -------
        pandas.DataFrame
            One row per sample: one column per feature name, then ``epsilon``
            and, when some row has one, ``phase``.  ``df.attrs["meta"]`` holds
            ``meta``.

        Raises
        ------
        ImportError
            If pandas is not installed.
        """
        columns = [*zip(self.feature_names, self.values.T), ("epsilon", self.epsilon)]
        if any(p is not None for p in self.phase):
            columns.append(("phase", self.phase))
        return self._frame(columns)

    def plot(self, index=0, *, top_k=10, ax=None, **kwargs):
        """Horizontal bar chart of the attributions of one row.

        Parameters
        ----------
        index : int, default=0
            The row to plot.
        top_k : int or None, default=10
            Show the ``top_k`` features with the largest absolute attribution
            (all when None).
        ax : matplotlib.axes.Axes, default=None
            Where to draw; a new figure when None.
        **kwargs
            Passed to ``ax.barh``.

        Returns
        -------
        matplotlib.axes.Axes
        """
        i = self._row(index)
        ax = self._barh(_new_axes(ax), self.values[i], top_k, **kwargs)
        title = f"sample {i}: \N{GREEK SMALL LETTER EPSILON} = {self.epsilon[i]:.3g}"
        if self.phase[i] is not None:
            title += f" ({self.phase[i]})"
        ax.set_title(title)
        ax.set_xlabel("attribution")
        return ax


class CounterfactualSet(_Result):
    """One counterfactual per query.

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
    feature_names : list of str
    meta : dict
        Always holds ``epsilon_spent`` and ``delta_spent``.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpx._explanation import CounterfactualSet
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
    """

    _row_fields = ("queries", "counterfactuals", "desired_class",
                   "predicted_class", "valid", "distance")

    def __init__(self, queries, counterfactuals, *, desired_class, predicted_class,
                 valid=None, distance=None, feature_names=None,
                 epsilon_spent, delta_spent, meta=None):
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
        self._init_common(n_features, feature_names, epsilon_spent, delta_spent, meta)

    def to_frame(self):
        """The counterfactuals as a pandas DataFrame.

        Returns
        -------
        pandas.DataFrame
            One row per query: the counterfactual's feature columns, then
            ``desired_class``, ``predicted_class``, ``valid`` and
            ``distance``.  ``df.attrs["meta"]`` holds ``meta``.

        Raises
        ------
        ImportError
            If pandas is not installed.
        """
        return self._frame([
            *zip(self.feature_names, self.counterfactuals.T),
            ("desired_class", self.desired_class),
            ("predicted_class", self.predicted_class),
            ("valid", self.valid),
            ("distance", self.distance),
        ])

    def plot(self, index=0, *, top_k=None, ax=None, **kwargs):
        """Bar chart of the change (counterfactual - query) of one row.

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
        i = self._row(index)
        ax = _new_axes(ax)
        change = self.counterfactuals[i] - self.queries[i]
        if np.isnan(change).all():
            ax.text(0.5, 0.5, "no counterfactual found", ha="center", va="center",
                    transform=ax.transAxes)
        else:
            self._barh(ax, change, top_k, **kwargs)
        status = "valid" if self.valid[i] else "not valid"
        ax.set_title(f"query {i}: desired {self.desired_class[i]}, "
                     f"predicted {self.predicted_class[i]} ({status})")
        ax.set_xlabel("counterfactual - query")
        return ax


class RecoursePaths(_Result):
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
    feature_names : list of str
    meta : dict
        Always holds ``epsilon_spent`` and ``delta_spent``.

    Examples
    --------
    >>> from skdpx._explanation import RecoursePaths
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

    _row_fields = ("queries", "paths", "cost", "success", "counterfactuals")

    def __init__(self, queries, paths, *, cost, success, counterfactuals=None,
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
        if counterfactuals is None:
            counterfactuals = np.full((n, n_features), np.nan)
            for i in np.flatnonzero(self.success):
                counterfactuals[i] = self.paths[i][-1]
        self.counterfactuals = _as_float_2d("counterfactuals", counterfactuals, n_features, n)
        self._init_common(n_features, feature_names, epsilon_spent, delta_spent, meta)

    def to_frame(self):
        """The paths as a long-format pandas DataFrame.

        Returns
        -------
        pandas.DataFrame
            One row per path point: ``query`` (the query's index), ``step``
            (0 is the query itself), the feature columns, then the ``cost``
            and ``success`` of that query's path.  ``df.attrs["meta"]`` holds
            ``meta``.

        Raises
        ------
        ImportError
            If pandas is not installed.
        """
        lengths = np.array([len(p) for p in self.paths], dtype=int)
        points = (np.vstack(self.paths) if self.paths
                  else np.empty((0, self.n_features)))
        return self._frame([
            ("query", np.repeat(np.arange(len(self)), lengths)),
            ("step", np.concatenate([np.arange(k) for k in lengths] or [np.empty(0, int)])),
            *zip(self.feature_names, points.T),
            ("cost", np.repeat(self.cost, lengths)),
            ("success", np.repeat(self.success, lengths)),
        ])

    def plot(self, index=0, *, features=(0, 1), ax=None, **kwargs):
        """Line plot of one query's path in two features.

        Parameters
        ----------
        index : int, default=0
            The query whose path to plot.
        features : pair of int or str, default=(0, 1)
            The two features (indices or names) on the x and y axes.
        ax : matplotlib.axes.Axes, default=None
            Where to draw; a new figure when None.
        **kwargs
            Passed to ``ax.plot`` for the path line.

        Returns
        -------
        matplotlib.axes.Axes
        """
        i = self._row(index)
        fx, fy = (self._feature_index(f) for f in features)
        ax = _new_axes(ax)
        path = self.paths[i]
        kwargs.setdefault("marker", ".")
        (line,) = ax.plot(path[:, fx], path[:, fy], **kwargs)
        ax.scatter(path[0, fx], path[0, fy], marker="o", s=60, color=line.get_color(),
                   label="query", zorder=3)
        end = "end (success)" if self.success[i] else "end (failed)"
        ax.scatter(path[-1, fx], path[-1, fy], marker="*" if self.success[i] else "x",
                   s=120, color=line.get_color(), label=end, zorder=3)
        ax.set_xlabel(self.feature_names[fx])
        ax.set_ylabel(self.feature_names[fy])
        ax.set_title(f"query {i}: cost {self.cost[i]:.3g}, "
                     f"{'success' if self.success[i] else 'no success'}")
        ax.legend()
        return ax
