"""Result objects returned by the skdpx explainers.

Four classes hold what an explainer releases:

- :class:`FeatureAttribution`: one attribution vector per explained sample;
- :class:`CounterfactualSet`: one counterfactual per query;
- :class:`RecoursePaths`: one path of points per query, from the query to
  its counterfactual;
- :class:`LocallyLinearMaps`: the global explanation of a
  :class:`~skdpx.linear.DPLocallyLinearClassifier`, every class's linear
  maps with their weights (one row per class).

They share one private base, :class:`_Result`, which does what is common:
the ``meta`` dictionary (always holding the estimator's ``epsilon_spent`` and
``delta_spent``), ``len()``, row selection with ``obj[key]``, equality,
``repr``, ``_repr_html_`` (a compact table for notebooks),
``to_json()``/``from_json()`` and the lazy imports of the optional pandas
(``to_frame()``) and matplotlib (``plot()``).

Units. Attributions and maps are per unit of each (encoded) feature. Given
each feature's public range (``feature_range``, the declared bounds' upper -
lower), they are also reported scaled by it (``scaled_values``: the change
of the output when the feature moves across its whole public range), which is
how plots rank and draw them: a per-dollar weight of capital-gain is then
comparable with a per-year weight of age. Given the ``groups`` of a public
schema (``[(column, encoded indices), ...]``), they are also reported per
original column (:func:`_group_values`); the per-level detail stays in
``values``. Counterfactuals and recourse end points may carry the decoded
rows (``query_records``, ``counterfactual_records``: DataFrames in the
original columns, units and categories), and their change tables
(``changes()``) are then in original units.

The objects are frozen-ish: every array is a private, read-only copy (and a
DataFrame field is handed out as a copy).
"""

import html
import json
import math
import os
import sys
from numbers import Integral

import numpy as np

__all__ = ["FeatureAttribution", "CounterfactualSet", "RecoursePaths", "LocallyLinearMaps"]


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
    if _is_frame(obj):
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
    if _is_frame(a) or _is_frame(b):
        return _is_frame(a) and _is_frame(b) and a.equals(b)
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


def _new_axes(ax, **subplots):
    """``ax``, or a fresh matplotlib Axes (``plt.subplots(**subplots)``) when
    ``ax`` is None; anything else is a TypeError before anything is drawn."""
    plt = _import_optional("matplotlib.pyplot", "plot()", "plot")
    if ax is None:
        _, ax = plt.subplots(**subplots)
        return ax
    from matplotlib.axes import Axes

    if not isinstance(ax, Axes):
        raise TypeError(f"ax must be a matplotlib Axes or None, got {type(ax).__name__} "
                        f"{ax!r:.40}.")
    return ax


def _as_feature_range(x, n_features):
    """A read-only float copy of the public ranges, one per feature, or None.

    A scalar broadcasts. Ranges must be finite and non-negative (0 for a
    feature with no range, whose scaled attribution is then 0).
    """
    if x is None:
        return None
    try:
        arr = np.array(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"feature_range must be numbers: {exc}") from None
    if arr.ndim == 0:
        arr = np.full(n_features, float(arr))
    if arr.shape != (n_features,):
        raise ValueError(
            f"feature_range must have one entry per feature ({n_features}), got shape "
            f"{arr.shape}"
        )
    if not np.isfinite(arr).all() or (arr < 0).any():
        raise ValueError(
            "feature_range must be finite and non-negative (upper - lower of each "
            "feature's public bounds)"
        )
    return _frozen(arr)


def _as_groups(groups, n_features):
    """``groups`` as a list of ``(name, read-only int array)`` that partitions
    the features, or None.

    Accepts a list of ``(name, indices)`` pairs (a schema's ``groups``) or a
    dict ``{name: indices}`` (an encoder's ``feature_groups_``).
    """
    if groups is None:
        return None
    if isinstance(groups, dict):
        groups = list(groups.items())
    out, seen = [], np.zeros(n_features, dtype=int)
    for item in groups:
        try:
            name, idx = item
        except (TypeError, ValueError):
            raise ValueError(
                f"groups must be (column name, encoded indices) pairs, got {item!r}"
            ) from None
        idx = np.array(idx).ravel()
        if idx.size == 0 or idx.dtype.kind not in "iu":
            raise ValueError(f"group {name!r} must have at least one integer feature index")
        if ((idx < 0) | (idx >= n_features)).any():
            raise ValueError(
                f"group {name!r} has feature indices outside [0, {n_features})"
            )
        seen[idx] += 1
        out.append((str(name), _frozen(idx.astype(np.intp))))
    names = [name for name, _ in out]
    if len(set(names)) != len(names):
        raise ValueError("group names must be unique")
    if (seen != 1).any():
        raise ValueError(
            "groups must cover every feature exactly once: features "
            f"{np.flatnonzero(seen != 1).tolist()} are in "
            "no group or in several"
        )
    return out


def _group_names_default(groups, n_features):
    """Feature names from ``groups``: the column name for a one-feature group,
    ``column[k]`` for the k-th feature of a block."""
    names = [f"x{j}" for j in range(n_features)]
    for name, idx in groups:
        if len(idx) == 1:
            names[idx[0]] = name
        else:
            for k, j in enumerate(idx):
                names[j] = f"{name}[{k}]"
    return names


def _group_values(values, groups):
    """Per-feature values (..., n_features) -> per-column values (..., n_groups).

    A one-feature group keeps its (signed) value. A block of several features
    (a one-hot encoded categorical column) gets the spread of its values,
    ``max - min`` over the block: the largest change of the output from
    switching the column from one level to another. The spread is the choice
    because a one-hot block's weights are only defined up to a common shift
    (exactly one level is on, so adding a constant to every level's weight
    and subtracting it from the intercept changes nothing): a sum of absolute
    values or an L2 norm would depend on that arbitrary shift, the spread does
    not. For a numeric column scaled by its range, ``|value|`` is the same
    quantity (the largest change from moving that column), so numeric and
    categorical columns are on one scale. The spread is non-negative: a
    categorical column has no direction.
    """
    values = np.asarray(values, dtype=float)
    out = np.empty(values.shape[:-1] + (len(groups),))
    for g, (_, idx) in enumerate(groups):  # a loop over columns, not rows
        block = values[..., idx]
        out[..., g] = block[..., 0] if len(idx) == 1 else (
            block.max(axis=-1) - block.min(axis=-1))
    return out


def _is_frame(obj):
    """Whether ``obj`` is a pandas DataFrame (without importing pandas)."""
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(obj, pd.DataFrame)


def _frame_payload(df):
    """A DataFrame as plain JSON types: columns, dtypes and rows (NA -> None)."""
    data = df.astype(object).where(df.notna(), None).to_numpy().tolist()
    return {"columns": [str(c) for c in df.columns],
            "dtypes": [str(t) for t in df.dtypes], "data": data}


def _as_records(name, x, n, feature_names):
    """The decoded rows ``x`` as a private DataFrame copy of ``n`` rows, or None.

    ``x`` is a DataFrame (the original columns and dtypes), a 2-D array (its
    columns named ``feature_names`` when the widths match), or the payload
    :func:`_frame_payload` writes to JSON.
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


# -- HTML (notebooks) --------------------------------------------------------

_HTML_ROWS = 10
_HTML_COLUMNS = 12


def _html_cell(value):
    """One table cell: numbers compact, NaN/None shown, everything escaped."""
    if isinstance(value, np.generic):
        value = value.item()
    if value is None:
        text = ""
    elif isinstance(value, bool):
        text = str(value)
    elif isinstance(value, float):
        text = "NaN" if math.isnan(value) else f"{value:.4g}"
    else:
        text = str(value)
    return html.escape(text)


def _html_table(title, columns, n_rows, note=""):
    """A compact HTML table: a caption, the first rows and columns, and how
    many more were left out.

    ``columns`` is a list of ``(name, cells)``, ``cells`` the values of the
    first rows only (at most ``_HTML_ROWS``); ``n_rows`` the total count.
    """
    shown = columns[:_HTML_COLUMNS]
    more_columns = len(columns) - len(shown)
    n_shown = min(n_rows, _HTML_ROWS)
    head = "".join(f"<th>{html.escape(str(name))}</th>" for name, _ in shown)
    if more_columns:
        head += f"<th>&hellip; {more_columns} more columns</th>"
    body = []
    for i in range(n_shown):
        cells = "".join(f"<td>{_html_cell(vals[i])}</td>" for _, vals in shown)
        if more_columns:
            cells += "<td>&hellip;</td>"
        body.append(f"<tr>{cells}</tr>")
    if n_rows > n_shown:
        width = len(shown) + bool(more_columns)
        body.append(f'<tr><td colspan="{width}">&hellip; {n_rows - n_shown} more rows</td></tr>')
    note = f"<br><small>{html.escape(note)}</small>" if note else ""
    return (
        f'<div class="skdpx-result"><b>{html.escape(title)}</b>{note}'
        f'<table border="1" class="dataframe"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def _scale_label(scaled):
    """The axis label saying what unit an attribution is in."""
    if scaled:
        return ("attribution \N{MULTIPLICATION SIGN} public range "
                "(output change across the feature's range)")
    return "attribution per unit of the feature"


# ---------------------------------------------------------------------------
# shared base
# ---------------------------------------------------------------------------


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
        idx = np.atleast_1d(_select_rows(len(self), key))
        params = self._params()
        for name in self._row_fields:
            value = params[name]
            if value is None:
                continue
            if isinstance(value, list):
                params[name] = [value[i] for i in idx]
            elif _is_frame(value):
                params[name] = value.iloc[idx]
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

    def _barh(self, ax, values, top_k, names=None, block=None, **kwargs):
        """Horizontal bars of ``values`` (one per name, the feature names by
        default), the ``top_k`` largest in absolute value, largest on top;
        colour by sign, grey where ``block`` (an unsigned one-hot spread)."""
        values = np.asarray(values, dtype=float)
        names = self.feature_names if names is None else names
        block = np.zeros(len(values), dtype=bool) if block is None else block
        order = np.argsort(-np.abs(np.nan_to_num(values)), kind="stable")
        if top_k is not None:
            order = order[:top_k]
        order = order[::-1]
        if "color" not in kwargs:
            kwargs["color"] = ["tab:gray" if block[j] else "tab:red" if values[j] < 0
                               else "tab:blue" for j in order]
        ax.barh([names[j] for j in order], values[order], **kwargs)
        ax.axvline(0.0, color="black", linewidth=0.8)
        return ax


class _FeatureUnits:
    """Range scaling and per-column grouping, for results that hold one value
    per (encoded) feature: :class:`FeatureAttribution` and
    :class:`LocallyLinearMaps`."""

    def _init_units(self, n_features, feature_names, feature_range, groups):
        """Set ``feature_range`` and ``groups``; return the feature names
        (named after the groups when not given)."""
        self.feature_range = _as_feature_range(feature_range, n_features)
        self.groups = _as_groups(groups, n_features)
        if feature_names is None and self.groups is not None:
            feature_names = _group_names_default(self.groups, n_features)
        return feature_names

    @property
    def group_names(self):
        """list of str: The original column names (``groups``' names), or the
        feature names when there are no groups."""
        if self.groups is None:
            return list(self.feature_names)
        return [name for name, _ in self.groups]

    def _resolve(self, grouped, scaled):
        """``grouped``/``scaled`` with None meaning "when known"."""
        if scaled is None:
            scaled = self.feature_range is not None
        if scaled and self.feature_range is None:
            raise ValueError(
                "scaled=True needs each feature's public range: build the result with "
                "feature_range=upper - lower of the declared bounds"
            )
        if grouped is None:
            grouped = self.groups is not None
        return bool(grouped), bool(scaled)

    def _in_units(self, values, grouped, scaled):
        """``values`` (..., n_features) -> (names, values, block): per feature
        or per column (``block`` marks the columns of several features, whose
        values are spreads), scaled by the public ranges or not."""
        values = np.asarray(values, dtype=float)
        if scaled:
            values = values * self.feature_range
        if not grouped or self.groups is None:
            return list(self.feature_names), values, np.zeros(values.shape[-1], dtype=bool)
        block = np.array([len(idx) > 1 for _, idx in self.groups], dtype=bool)
        return self.group_names, _group_values(values, self.groups), block

    def _unit_label(self, grouped, scaled):
        label = _scale_label(scaled)
        if grouped and self.groups is not None and any(len(i) > 1 for _, i in self.groups):
            label += ";\ncategorical columns: largest change between two levels"
        return label

    def _group_indices(self, column):
        """The encoded feature indices of the original ``column``."""
        if self.groups is None:
            return np.array([self._feature_index(column)])
        for name, idx in self.groups:
            if name == column:
                return idx
        raise ValueError(f"unknown column {column!r}; known: {self.group_names}")


def _short(value):
    """A value for a one-line summary: numbers to 4 significant digits."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        return "NaN" if math.isnan(value) else f"{value:.4g}"
    return str(value)


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


# ---------------------------------------------------------------------------
# public classes
# ---------------------------------------------------------------------------


class FeatureAttribution(_FeatureUnits, _Result):
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
        Feature names (the encoded features' names, e.g. ``"sex_Male"``);
        ``["x0", "x1", ...]`` by default, or named after ``groups``.
    feature_range : float or array-like of shape (n_features,), default=None
        Each feature's public range, upper - lower of the declared bounds
        (1 for a one-hot level). Given it, :attr:`scaled_values` and the plot
        report attributions times the range: the change of the output when
        the feature moves across its whole public range, comparable between
        features in different units. Public (declared), so scaling is free.
    groups : list of (str, array-like of int) or dict, default=None
        The original columns: ``[(column name, encoded feature indices),
        ...]``, covering every feature exactly once (an estimator passes
        ``groups=self.schema_.groups``; a dict ``{column: indices}`` such as
        an encoder's ``feature_groups_`` also works). Given it, attributions
        are also reported per original column (:meth:`grouped_values`,
        ``to_frame(grouped=True)``, the plot): a numeric column keeps its
        value, a one-hot block gets the spread of its levels' values (max -
        min, the largest change from switching level; see Notes). The
        per-level detail stays in ``values`` (:meth:`levels`).
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
    feature_range : ndarray of shape (n_features,) or None
    groups : list of (str, ndarray of int) or None
    meta : dict
        Always holds ``epsilon_spent`` and ``delta_spent``.

    Notes
    -----
    Why the spread for a one-hot block: exactly one level of a categorical
    column is on, so adding a constant to every level's weight (and
    subtracting it from the intercept) gives the same model. A sum of
    absolute values or an L2 norm of the block would change with that
    arbitrary constant; the spread ``max - min`` does not. For a numeric
    column, ``|value| * range`` is the same quantity (the largest change of
    the output from that column alone), so the two kinds rank on one scale.

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

    With public ranges and the groups of a one-hot encoded column:

    >>> fa = FeatureAttribution([[0.02, -1e-4, 0.3, -0.1]], epsilon=0.5,
    ...                         feature_names=["age", "gain", "sex_F", "sex_M"],
    ...                         feature_range=[60, 1e5, 1, 1],
    ...                         groups=[("age", [0]), ("gain", [1]), ("sex", [2, 3])],
    ...                         epsilon_spent=0.5, delta_spent=0.0)
    >>> fa.scaled_values.round(2).tolist()
    [[1.2, -10.0, 0.3, -0.1]]
    >>> fa.group_names, fa.grouped_values().round(2).tolist()
    (['age', 'gain', 'sex'], [[1.2, -10.0, 0.4]])
    """

    _row_fields = ("values", "epsilon", "phase")
    _static_fields = ("feature_range", "groups")

    def __init__(self, values, *, epsilon, phase=None, feature_names=None,
                 feature_range=None, groups=None, epsilon_spent, delta_spent, meta=None):
        n_features = None if feature_names is None else len(list(feature_names))
        self.values = _as_float_2d("values", values, n_features)
        n, n_features = self.values.shape
        self.epsilon = _per_row("epsilon", epsilon, n, dtype=float)
        self.phase = _per_row_str_or_none("phase", phase, n)
        feature_names = self._init_units(n_features, feature_names, feature_range, groups)
        self._init_common(n_features, feature_names, epsilon_spent, delta_spent, meta)

    @property
    def scaled_values(self):
        """ndarray of shape (n, n_features): ``values * feature_range``, the
        change of the output when each feature moves across its public range.

        Raises
        ------
        ValueError
            If the result has no ``feature_range``.
        """
        self._resolve(False, True)
        return self.values * self.feature_range

    def grouped_values(self, scaled=None):
        """The attributions per original column.

        Parameters
        ----------
        scaled : bool or None, default=None
            Scale by the public ranges first (None: when ``feature_range`` is
            known).

        Returns
        -------
        ndarray of shape (n, n_columns)
            In the order of :attr:`group_names`: a one-feature column keeps its
            signed value, a one-hot block gets the spread of its levels'
            values (max - min, non-negative). Without ``groups`` every feature
            is its own column.
        """
        _, scaled = self._resolve(True, scaled)
        return self._in_units(self.values, True, scaled)[1]

    def levels(self, column, scaled=False):
        """The per-level detail of one original column.

        Parameters
        ----------
        column : str
            An original column (one of :attr:`group_names`).
        scaled : bool, default=False
            Scale by the public ranges (1 for a one-hot level).

        Returns
        -------
        pandas.DataFrame
            One row per sample, one column per encoded feature of ``column``.
        """
        idx = self._group_indices(column)
        values = self.scaled_values if scaled else self.values
        return self._frame([(self.feature_names[j], values[:, j]) for j in idx])

    def to_frame(self, grouped=False, scaled=None):
        """The attributions as a pandas DataFrame.

        Parameters
        ----------
        grouped : bool, default=False
            One column per original column (:meth:`grouped_values`) instead
            of one per encoded feature.
        scaled : bool or None, default=None
            Multiply by each feature's public range. None: scaled when
            ``grouped`` and the ranges are known (so that numeric columns and
            one-hot spreads are on one scale), per unit otherwise.

        Returns
        -------
        pandas.DataFrame
            One row per sample: one column per feature (or original column),
            then ``epsilon`` and, when some row has one, ``phase``.
            ``df.attrs["meta"]`` holds ``meta``, ``df.attrs["unit"]`` says what
            the values are.

        Raises
        ------
        ImportError
            If pandas is not installed.
        """
        if scaled is None:
            scaled = bool(grouped) and self.feature_range is not None
        grouped, scaled = self._resolve(grouped, scaled)
        names, values, _ = self._in_units(self.values, grouped, scaled)
        columns = [*zip(names, values.T), ("epsilon", self.epsilon)]
        if any(p is not None for p in self.phase):
            columns.append(("phase", self.phase))
        df = self._frame(columns)
        df.attrs["unit"] = self._unit_label(grouped, scaled).replace("\n", " ")
        return df

    def plot(self, index=0, *, top_k=10, grouped=None, scaled=None, ax=None, **kwargs):
        """Horizontal bar chart of the attributions of one row.

        Bars are ranked by absolute value in the plotted unit, which the x
        label names: by default scaled by each feature's public range when
        known (a per-dollar weight is otherwise not comparable with a
        per-year one) and per original column when ``groups`` are known
        (a one-hot block drawn in grey as the spread of its levels).

        Parameters
        ----------
        index : int, default=0
            The row to plot.
        top_k : int or None, default=10
            Show the ``top_k`` features with the largest absolute attribution
            (all when None).
        grouped : bool or None, default=None
            One bar per original column (None: when ``groups`` are known).
        scaled : bool or None, default=None
            Scale by the public ranges (None: when ``feature_range`` is known).
        ax : matplotlib.axes.Axes, default=None
            Where to draw; a new figure when None.
        **kwargs
            Passed to ``ax.barh``.

        Returns
        -------
        matplotlib.axes.Axes
        """
        i = self._row(index)
        grouped, scaled = self._resolve(grouped, scaled)
        names, values, block = self._in_units(self.values[i], grouped, scaled)
        ax = self._barh(_new_axes(ax), values, top_k, names=names, block=block, **kwargs)
        title = f"sample {i}: \N{GREEK SMALL LETTER EPSILON} = {self.epsilon[i]:.3g}"
        if self.phase[i] is not None:
            title += f" ({self.phase[i]})"
        ax.set_title(title)
        ax.set_xlabel(self._unit_label(grouped, scaled))
        return ax

    def _html_columns(self, head):
        grouped, scaled = self._resolve(None, None)
        names, values, _ = self._in_units(head.values, grouped, scaled)
        columns = [("epsilon", head.epsilon)]
        if any(p is not None for p in self.phase):
            columns.append(("phase", head.phase))
        columns += list(zip(names, values.T))
        return columns, "values: " + self._unit_label(grouped, scaled).replace("\n", " ")


class CounterfactualSet(_QueryRecords, _Result):
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
    query_records, counterfactual_records : pandas.DataFrame, default=None
        The queries and counterfactuals decoded to the original columns,
        units and categories (e.g. ``schema_.decode`` of the two arrays), one
        row each; both or neither. Given them, :meth:`changes`, the plot,
        ``to_frame()`` and the notebook table are in original units. (A 2-D
        array is also accepted, its columns named ``feature_names``.)
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
    query_records, counterfactual_records : pandas.DataFrame or None
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
    >>> cfs.changes()
       query feature from   to  change
    0      0      x0  0.0  0.5     0.5
    """

    _row_fields = ("queries", "counterfactuals", "desired_class",
                   "predicted_class", "valid", "distance", "query_records",
                   "counterfactual_records")

    def __init__(self, queries, counterfactuals, *, desired_class, predicted_class,
                 valid=None, distance=None, query_records=None, counterfactual_records=None,
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
            One row per query: the counterfactual's columns, then
            ``desired_class``, ``predicted_class``, ``valid`` and
            ``distance``.  ``df.attrs["meta"]`` holds ``meta``.

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
        i = self._row(index)
        ax = _new_axes(ax)
        change = self.counterfactuals[i] - self.queries[i]
        if np.isnan(change).all():
            ax.text(0.5, 0.5, "no counterfactual found", ha="center", va="center",
                    transform=ax.transAxes)
        elif self._query_records is None:
            self._barh(ax, change, top_k, **kwargs)
        else:
            df = self.changes(i)
            block = df["change"].isna().to_numpy()
            names = [f"{f}: {_short(a)} \N{RIGHTWARDS ARROW} {_short(b)}"
                     for f, a, b in zip(df["feature"], df["from"], df["to"])]
            # categorical changes first (infinite rank), then by |change|
            values = np.where(block, 0.0, df["change"].to_numpy(dtype=float))
            rank = np.where(block, np.inf, np.abs(values))
            order = np.argsort(-rank, kind="stable")
            if top_k is not None:
                order = order[:top_k]
            order = order[::-1]
            if "color" not in kwargs:
                kwargs["color"] = ["tab:gray" if block[j] else "tab:red" if values[j] < 0
                                   else "tab:blue" for j in order]
            ax.barh([names[j] for j in order], values[order], **kwargs)
            ax.axvline(0.0, color="black", linewidth=0.8)
        status = "valid" if self.valid[i] else "not valid"
        ax.set_title(f"query {i}: desired {self.desired_class[i]}, "
                     f"predicted {self.predicted_class[i]} ({status})")
        ax.set_xlabel("counterfactual - query" if self._query_records is None
                      else "counterfactual - query, in each column's original units")
        return ax

    def _html_columns(self, head):
        unit = "original units" if self._query_records is not None else "feature units"
        return [
            ("desired_class", head.desired_class),
            ("predicted_class", head.predicted_class),
            ("valid", head.valid),
            ("distance", head.distance),
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
    query_records, counterfactual_records : pandas.DataFrame, default=None
        The queries and end points decoded to the original columns, units
        and categories, one row each; both or neither. Given them,
        :meth:`changes` and the notebook table are in original units.
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
    query_records, counterfactual_records : pandas.DataFrame or None
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

    _row_fields = ("queries", "paths", "cost", "success", "counterfactuals",
                   "query_records", "counterfactual_records")

    def __init__(self, queries, paths, *, cost, success, counterfactuals=None,
                 query_records=None, counterfactual_records=None,
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
        self._init_records(query_records, counterfactual_records)

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

    def _html_columns(self, head):
        unit = "original units" if self._query_records is not None else "feature units"
        return [
            ("success", head.success),
            ("cost", head.cost),
            ("steps", np.array([len(p) - 1 for p in head.paths])),
            ("changes", head._change_summaries()),
        ], f"changes: end point vs query, in {unit}"


class LocallyLinearMaps(_FeatureUnits, _Result):
    """The global explanation of a locally linear model: every class's maps.

    A :class:`~skdpx.linear.DPLocallyLinearClassifier` scores class ``k`` as
    ``f_k(x) = sum_m s_km(x) g_km(x)``, with linear maps ``g_km(x) = coef[k, m]
    . x + intercept[k, m]`` mixed by the softmax weights ``s_k(x) =
    softmax(beta g_k(x))``. This object holds the maps of every class and, per
    map, its weight: the mean of ``s_km(x)`` over the rows of some data that
    belong to class ``k`` (Harder, Bauer & Park 2020, Fig. 3: the top maps of
    a class with their weights). One row per class.

    Parameters
    ----------
    coef : array-like of shape (n_classes, n_maps, n_features)
        The maps, per unit of each feature.
    intercept : array-like of shape (n_classes, n_maps), default=None
        Their intercepts (0 by default).
    classes : array-like of shape (n_classes,), default=None
        The class labels; ``0, 1, ...`` by default.
    weights : array-like of shape (n_classes, n_maps), default=None
        The weight of each map in its class (each row sums to 1); NaN when
        not computed (no data given, or no row of that class).
    support : array-like of int of shape (n_classes,), default=None
        How many rows each class's weights were averaged over (0 by default).
    feature_names, feature_range, groups
        As in :class:`FeatureAttribution`: the features' names, their public
        ranges (maps are then also reported per range, ``scaled_coef``) and
        the original columns (maps per column, one-hot blocks as the spread
        of their levels).
    epsilon_spent, delta_spent : float
        The model's total privacy spend, kept in ``meta``.
    meta : dict, default=None
        Anything else the estimator reports.

    Attributes
    ----------
    coef : ndarray of shape (n_classes, n_maps, n_features)
    intercept, weights : ndarray of shape (n_classes, n_maps)
    classes : ndarray of shape (n_classes,)
    support : ndarray of int of shape (n_classes,)
    feature_names : list of str
    feature_range : ndarray of shape (n_features,) or None
    groups : list of (str, ndarray of int) or None
    meta : dict
        Always holds ``epsilon_spent`` and ``delta_spent``.

    Examples
    --------
    >>> from skdpx._explanation import LocallyLinearMaps
    >>> maps = LocallyLinearMaps([[[1.0, 0.0], [0.0, 2.0]], [[-1.0, 0.5], [0.2, 0.2]]],
    ...                          classes=["no", "yes"], weights=[[0.3, 0.7], [0.9, 0.1]],
    ...                          support=[40, 60], feature_names=["age", "hours"],
    ...                          epsilon_spent=1.0, delta_spent=1e-5)
    >>> maps
    LocallyLinearMaps(n=2, n_features=2, epsilon_spent=1, delta_spent=1e-05)
    >>> maps.top_maps(1).tolist()
    [[1], [0]]
    >>> maps[1:].classes.tolist(), maps.to_frame().shape
    (['yes'], (4, 6))
    """

    _row_fields = ("classes", "coef", "intercept", "weights", "support")
    _static_fields = ("feature_range", "groups")

    def __init__(self, coef, intercept=None, *, classes=None, weights=None, support=None,
                 feature_names=None, feature_range=None, groups=None,
                 epsilon_spent, delta_spent, meta=None):
        try:
            coef = np.array(coef, dtype=float)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"coef must be an array of numbers: {exc}") from None
        if coef.ndim != 3:
            raise ValueError(
                "coef must have shape (n_classes, n_maps, n_features), got shape "
                f"{coef.shape}"
            )
        k, m, d = coef.shape
        self.coef = _frozen(coef)
        self.intercept = _as_float_2d(
            "intercept", np.zeros((k, m)) if intercept is None else intercept, m, k)
        self.weights = _as_float_2d(
            "weights", np.full((k, m), np.nan) if weights is None else weights, m, k)
        if ((self.weights < 0) | (self.weights > 1)).any():
            raise ValueError("weights must be in [0, 1] (softmax weights) or NaN")
        self.classes = _per_row("classes", np.arange(k) if classes is None else classes, k)
        self.support = _per_row("support", 0 if support is None else support, k, dtype=np.int64)
        feature_names = self._init_units(d, feature_names, feature_range, groups)
        self._init_common(d, feature_names, epsilon_spent, delta_spent, meta)

    @property
    def n_maps(self):
        """int: The number of maps per class."""
        return self.coef.shape[1]

    @property
    def scaled_coef(self):
        """ndarray of shape (n_classes, n_maps, n_features): ``coef *
        feature_range``, each map's change across each feature's public range.

        Raises
        ------
        ValueError
            If the result has no ``feature_range``.
        """
        self._resolve(False, True)
        return self.coef * self.feature_range

    def grouped_coef(self, scaled=None):
        """The maps per original column, as :meth:`FeatureAttribution.grouped_values`.

        Parameters
        ----------
        scaled : bool or None, default=None
            Scale by the public ranges first (None: when known).

        Returns
        -------
        ndarray of shape (n_classes, n_maps, n_columns)
        """
        _, scaled = self._resolve(True, scaled)
        return self._in_units(self.coef, True, scaled)[1]

    def top_maps(self, k=None):
        """The maps of each class by decreasing weight.

        Parameters
        ----------
        k : int or None, default=None
            How many per class (all when None).

        Returns
        -------
        ndarray of int of shape (n_classes, k)
            Map indices; with no weights (NaN) in map order.
        """
        order = np.argsort(-np.nan_to_num(self.weights, nan=-1.0), axis=1, kind="stable")
        return order if k is None else order[:, :k]

    def _class_rows(self, classes):
        """Row numbers of the labels ``classes`` (all when None)."""
        if classes is None:
            return np.arange(len(self))
        labels = self.classes.tolist()
        rows = []
        for c in np.atleast_1d(np.asarray(classes, dtype=object)).tolist():
            if c not in labels:
                raise ValueError(f"unknown class {c!r}; known: {labels}")
            rows.append(labels.index(c))
        return np.array(rows, dtype=int)

    def to_frame(self, grouped=False, scaled=None):
        """The maps as a long pandas DataFrame.

        Parameters
        ----------
        grouped : bool, default=False
            One column per original column (see :meth:`grouped_coef`).
        scaled : bool or None, default=None
            Multiply by each feature's public range. None: when ``grouped``
            and the ranges are known, per unit otherwise.

        Returns
        -------
        pandas.DataFrame
            One row per (class, map): ``class``, ``map``, ``weight``,
            ``intercept``, then one column per feature (or original column).
            ``df.attrs["meta"]`` holds ``meta``, ``df.attrs["unit"]`` says what
            the map values are.
        """
        if scaled is None:
            scaled = bool(grouped) and self.feature_range is not None
        grouped, scaled = self._resolve(grouped, scaled)
        names, values, _ = self._in_units(self.coef, grouped, scaled)
        k, m = self.weights.shape
        columns = [
            ("class", np.repeat(self.classes, m)),
            ("map", np.tile(np.arange(m), k)),
            ("weight", self.weights.ravel()),
            ("intercept", self.intercept.ravel()),
            *zip(names, values.reshape(k * m, -1).T),
        ]
        df = self._frame(columns)
        df.attrs["unit"] = self._unit_label(grouped, scaled).replace("\n", " ")
        return df

    def plot(self, image_shape=None, *, top_maps=3, classes=None, top_features=10,
             grouped=None, scaled=None, cmap="RdBu_r", fig=None):
        """The top maps of each class: images, or bars per column.

        With ``image_shape``, each map is drawn as an image (the paper's
        Fig. 3): one row of panels per class, its ``top_maps`` maps by
        decreasing weight, each titled with its weight and drawn on a
        diverging colour scale centred on 0 (red: evidence for the class,
        blue: against). Without, one panel per class with horizontal bars of
        its top maps over the ``top_features`` features (or original columns)
        with the largest values, in the unit the x label names (by default
        scaled by the public ranges and grouped per column when known).

        Parameters
        ----------
        image_shape : tuple of int or None, default=None
            ``(height, width)`` with ``height * width == n_features``.
        top_maps : int, default=3
            Maps per class, by decreasing weight (in map order without
            weights).
        classes : array-like of labels or None, default=None
            The classes to draw (all when None).
        top_features : int or None, default=10
            Bars only: the features shown per class (all when None).
        grouped, scaled : bool or None, default=None
            Bars only: as in :meth:`FeatureAttribution.plot`.
        cmap : str, default="RdBu_r"
            Images only: the colour map.
        fig : matplotlib.figure.Figure, default=None
            Where to draw (it is cleared); a new figure when None.

        Returns
        -------
        matplotlib.figure.Figure
        """
        plt = _import_optional("matplotlib.pyplot", "plot()", "plot")
        rows = self._class_rows(classes)
        if int(top_maps) < 1:
            raise ValueError(f"top_maps must be at least 1, got {top_maps}")
        order = self.top_maps(min(int(top_maps), self.n_maps))[rows]
        if image_shape is not None:
            shape = tuple(int(v) for v in image_shape)
            if len(shape) != 2 or shape[0] * shape[1] != self.n_features:
                raise ValueError(
                    f"image_shape must be (height, width) with height * width == "
                    f"n_features ({self.n_features}), got {image_shape!r}"
                )
            n_cols = order.shape[1]
            if fig is None:
                fig = plt.figure(figsize=(1.8 * n_cols, 2.0 * len(rows)))
            else:
                fig.clear()
            axes = np.asarray(fig.subplots(len(rows), n_cols, squeeze=False))
            for r, k in enumerate(rows):
                for c, m in enumerate(order[r]):
                    ax, image = axes[r, c], self.coef[k, m].reshape(shape)
                    vmax = float(np.abs(image).max()) or 1.0
                    ax.imshow(image, cmap=cmap, vmin=-vmax, vmax=vmax)
                    title = f"{self.classes[k]}, map {m}"
                    if not np.isnan(self.weights[k, m]):
                        title += f"\nweight {self.weights[k, m]:.2f}"
                    ax.set_title(title, fontsize="small")
                    ax.set_xticks([])
                    ax.set_yticks([])
            return fig
        grouped, scaled = self._resolve(grouped, scaled)
        names, values, _ = self._in_units(self.coef, grouped, scaled)
        if fig is None:
            fig = plt.figure(figsize=(6.4, 3.0 * len(rows)))
        else:
            fig.clear()
        axes = np.asarray(fig.subplots(len(rows), 1, squeeze=False))[:, 0]
        height = 0.8 / order.shape[1]
        for ax, r, k in zip(axes, range(len(rows)), rows):
            shown = values[k, order[r]]  # (maps shown, columns)
            feats = np.argsort(-np.nan_to_num(np.abs(shown)).max(axis=0), kind="stable")
            if top_features is not None:
                feats = feats[:top_features]
            feats = feats[::-1]
            y = np.arange(len(feats))
            for c, m in enumerate(order[r]):
                label = f"map {m}"
                if not np.isnan(self.weights[k, m]):
                    label += f" (weight {self.weights[k, m]:.2f})"
                ax.barh(y + (c - (order.shape[1] - 1) / 2) * height, shown[c, feats],
                        height=height, label=label)
            ax.set_yticks(y, [names[j] for j in feats])
            ax.axvline(0.0, color="black", linewidth=0.8)
            ax.set_title(f"class {self.classes[k]}")
            ax.set_xlabel(self._unit_label(grouped, scaled))
            ax.legend(fontsize="small")
        return fig

    def _html_columns(self, head):
        grouped, scaled = self._resolve(None, None)
        names, values, _ = self._in_units(head.coef, grouped, scaled)
        order = head.top_maps()
        k = np.repeat(np.arange(len(head)), self.n_maps)
        m = order.ravel()
        top = []
        for kk, mm in zip(k, m):  # at most _HTML_ROWS classes x n_maps cells
            v = values[kk, mm]
            best = np.argsort(-np.nan_to_num(np.abs(v)), kind="stable")[:3]
            top.append(", ".join(f"{names[j]} ({v[j]:+.3g})" for j in best))
        return [
            ("class", head.classes[k]),
            ("map", m),
            ("weight", head.weights[k, m]),
            ("support", head.support[k]),
            ("intercept", head.intercept[k, m]),
            ("largest values", np.array(top, dtype=object)),
        ], ("maps by decreasing weight in each class; values: "
            + self._unit_label(grouped, scaled).replace("\n", " "))

    def _html_head(self):
        # one table row per (class, map): enough classes for the first rows
        return self[:-(-_HTML_ROWS // self.n_maps)]

    def _html_title(self):
        return (f"{type(self).__name__}: {len(self)} classes \N{MULTIPLICATION SIGN} "
                f"{self.n_maps} maps, n_features={self.n_features}, "
                f"\N{GREEK SMALL LETTER EPSILON} spent={self.epsilon_spent:g}, "
                f"\N{GREEK SMALL LETTER DELTA} spent={self.delta_spent:g}")

    def _html_n_rows(self):
        return len(self) * self.n_maps
