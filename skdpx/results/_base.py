"""The base of every result: validation of its fields, row selection,
equality, ``repr``/HTML, and JSON serialization.

Public to skdpx: besides :class:`_Result`, the result objects of
:mod:`skdpx.attacks` and :mod:`skdpx.model_selection` use the JSON helpers
(:func:`_jsonable`, :func:`_dump_json`, :func:`_load_json`, :func:`_load_text`,
:func:`_check_fields`) and the optional-import and axes helpers re-exported
here from :mod:`skdpx.results._display`.
"""

import json
import math
import os
import sys
from numbers import Integral

import numpy as np

from ._display import _HTML_ROWS, _html_table, _import_optional, _new_axes

__all__ = ["ResultIndexError", "_Result", "_check_fields", "_dump_json", "_import_optional",
           "_is_pandas_frame", "_jsonable", "_load_json", "_load_text", "_new_axes"]


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


def _frame_payload(df):
    """A DataFrame as plain JSON types: columns, dtypes and rows (NA -> None)."""
    data = df.astype(object).where(df.notna(), None).to_numpy().tolist()
    return {"columns": [str(c) for c in df.columns],
            "dtypes": [str(t) for t in df.dtypes], "data": data}


def _jsonable(obj):
    """``obj`` in plain JSON types: numpy to Python, NaN to ``None``,
    infinities to the strings ``"Infinity"``/``"-Infinity"``."""
    if _is_pandas_frame(obj):
        return _jsonable(_frame_payload(obj))
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
    if _is_pandas_frame(a) or _is_pandas_frame(b):
        return _is_pandas_frame(a) and _is_pandas_frame(b) and a.equals(b)
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        if a.shape != b.shape:
            return False
        if a.dtype.kind in "fc" and b.dtype.kind in "fc":
            return bool(np.array_equal(a, b, equal_nan=True))
        return a.tolist() == b.tolist()
    if isinstance(a, list) and a and isinstance(a[0], np.ndarray):
        return len(a) == len(b) and all(map(_values_equal, a, b))
    return _jsonable(a) == _jsonable(b)


def _dump_json(payload, path=None, **kwargs):
    """JSON text of ``payload`` (no NaN: ``_jsonable`` maps it to null), also
    written to ``path`` if given."""
    text = json.dumps(payload, allow_nan=False, **kwargs)
    if path is not None:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    return text


def _load_json(s, cls, *, fields=None, ignore=()):
    """The payload of ``cls``'s JSON, given as text or as the path of a file
    (a ``str`` that does not start with ``{``), its ``"type"`` checked and removed.

    Its fields are checked against ``fields`` (default: the keyword arguments
    of ``cls``'s constructor): a required one that is missing, or one that
    ``cls`` does not take, is a ``ValueError`` that names it. The keys in
    ``ignore`` (written for readers, not read back) are removed.
    """
    payload = json.loads(_load_text(s))
    if not isinstance(payload, dict):
        raise ValueError(f"JSON holds a {type(payload).__name__}, not a {cls.__name__!r} "
                         "object")
    kind = payload.pop("type", None)
    if kind != cls.__name__:
        raise ValueError(f"JSON holds a {kind!r}, not a {cls.__name__!r}")
    for key in ignore:
        payload.pop(key, None)
    _check_fields(cls, payload, fields)
    return payload


def _load_text(s):
    """JSON text given as text, or as the path of a file (a ``str`` that does not
    start with ``{``). A ``str`` that is neither valid JSON nor an existing
    file is a ValueError that says so (not a FileNotFoundError for ``'[]'``)."""
    if isinstance(s, os.PathLike):
        with open(s, encoding="utf-8") as fh:
            return fh.read()
    if not isinstance(s, str):
        raise TypeError(f"from_json takes JSON text or a path, got {type(s).__name__}.")
    if s.lstrip().startswith("{"):
        return s
    if os.path.isfile(s):
        with open(s, encoding="utf-8") as fh:
            return fh.read()
    try:
        json.loads(s)
    except ValueError:
        raise ValueError(f"from_json got {s!r:.60}: not JSON text, and no file of that name "
                         "exists.") from None
    return s


def _check_fields(cls, payload, fields=None):
    """Refuse, with a ValueError naming the key, a payload that lacks a required
    field of ``cls`` or holds one it does not take."""
    import inspect

    if fields is None:
        params = inspect.signature(cls).parameters.values()
        known = {p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
        required = {p.name for p in params if p.default is p.empty
                    and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
    else:
        required, known = set(fields[0]), set(fields[0]) | set(fields[1])
    missing = sorted(required - set(payload))
    if missing:
        raise ValueError(f"{cls.__name__} JSON lacks the key {missing[0]!r}"
                         + (f" (and {missing[1:]})" if len(missing) > 1 else "")
                         + f"; it needs {sorted(required)}.")
    unknown = sorted(set(payload) - known)
    if unknown:
        raise ValueError(f"{cls.__name__} JSON holds the unknown key {unknown[0]!r}"
                         + (f" (and {unknown[1:]})" if len(unknown) > 1 else "")
                         + f"; it takes {sorted(known)}.")


class ResultIndexError(IndexError, ValueError):
    """A row index outside a result: both an ``IndexError`` (the sequence
    protocol) and a ``ValueError`` (a bad argument), with the valid range."""


def _select_rows(n, key, what="row"):
    """``np.arange(n)[key]``, or a :class:`ResultIndexError` that names the valid range."""
    if isinstance(key, (bool, np.bool_)):
        raise ResultIndexError(f"a {what} index must be an int, a slice, an int array or a "
                               f"boolean mask of length {n}, got {key!r}.")
    try:
        return np.arange(n)[key]
    except (IndexError, TypeError, ValueError):
        valid = (f"valid {what} numbers are {-n} to {n - 1}" if n else f"it has no {what}")
        raise ResultIndexError(
            f"{what} index {key!r} is out of range or not an index: this result has {n} "
            f"{what}s ({valid}; or a slice, an int array or a boolean mask of length {n})."
        ) from None


def _is_pandas_frame(obj):
    """Whether ``obj`` is a pandas DataFrame (without importing pandas).

    Strict: a result holds only in-memory tables; a Dask DataFrame is not one
    (``preprocessing._schema._is_frame``, duck-typed, takes both).
    """
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(obj, pd.DataFrame)


class _Result:
    """What the three result classes share.

    A subclass lists in ``_row_fields`` the constructor arguments that hold one
    entry per row (all are keyword arguments of the constructor; an optional
    one may be None, a DataFrame one is selected with ``iloc``) and in
    ``_static_fields`` those that hold one value for the whole object; every
    subclass also takes ``feature_names``, ``epsilon_spent``, ``delta_spent``
    and ``meta``.  Its ``__init__`` converts its own fields and then calls
    :meth:`_init_common`; it gives ``_repr_html_`` its table through
    :meth:`_html_columns`.
    """

    _row_fields = ()
    _static_fields = ()

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
        params = {name: getattr(self, name)
                  for name in (*self._row_fields, *self._static_fields)}
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
        return type(self)(**self._selected_params(
            np.atleast_1d(_select_rows(len(self), key))))

    def _selected_params(self, idx):
        """The constructor's parameters with the row fields cut to the rows ``idx``."""
        params = self._params()
        for name in self._row_fields:
            value = params[name]
            if value is None:
                continue
            if isinstance(value, list):
                params[name] = [value[i] for i in idx]
            elif _is_pandas_frame(value):
                params[name] = value.iloc[idx]
            else:
                params[name] = value[idx]
        return params

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

    def _repr_html_(self):
        """A compact HTML table for notebooks: the first rows, then how many
        more (never thousands of rows)."""
        columns, note = self._html_columns(self._html_head())
        return _html_table(self._html_title(), columns, self._html_n_rows(), note)

    def _html_head(self):
        """The first rows, as an object of the same class."""
        return self[:_HTML_ROWS]

    def _html_title(self):
        return (f"{type(self).__name__}: n={len(self)}, n_features={self.n_features}, "
                f"\N{GREEK SMALL LETTER EPSILON} spent={self.epsilon_spent:g}, "
                f"\N{GREEK SMALL LETTER DELTA} spent={self.delta_spent:g}")

    def _html_n_rows(self):
        """How many table rows the whole object has."""
        return len(self)

    def _html_columns(self, head):
        """``(columns, note)`` of the HTML table: ``(name, cells)`` pairs from
        ``head`` (the first rows, a result of the same class) and a line that
        says what the values are."""
        raise NotImplementedError

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
        return _dump_json({"type": type(self).__name__, **_jsonable(self._params())}, path,
                          **kwargs)

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
        return cls(**_load_json(s, cls))

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
        """``index`` as a valid non-negative row number (a ValueError naming the range)."""
        n = len(self)
        if isinstance(index, (bool, np.bool_)) or not isinstance(index, (Integral, np.integer)):
            raise ResultIndexError(f"index must be an int, a row number from {-n} to {n - 1}, "
                                   f"got {index!r}.")
        return int(_select_rows(n, index))
