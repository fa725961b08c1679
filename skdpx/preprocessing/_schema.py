"""Encode a mixed table with a declared, public schema.

Differential privacy needs the range of every input fixed before the data
are read: a bound or a category list taken from the rows is itself a
function of the rows (the largest capital loss *is* one person's value; a
category held by one person reveals that person). :class:`PublicSchemaEncoder`
therefore takes both as parameters -- ``bounds`` for numeric columns and
``categories`` for categorical ones -- and its ``fit`` reads only the
column names and dtypes of ``X``, never a value.
"""

import sys
from numbers import Integral, Real

import numpy as np
from scipy import sparse
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.preprocessing import OneHotEncoder
from sklearn.utils.validation import check_is_fitted, validate_data

__all__ = ["PublicSchemaEncoder"]


def _is_frame(X):
    """Whether ``X`` is a table with columns: a pandas or a Dask DataFrame (duck-typed;
    ``results._base._is_pandas_frame`` takes pandas only)."""
    return hasattr(X, "columns") and hasattr(X, "iloc") and hasattr(X, "dtypes")


def _missing(values):
    """Missing mask of a 1-d array of any dtype: None or NaN (or pandas' NA / NaT).

    A pandas string column (e.g. a Dask DataFrame's, or dtype "string")
    holds ``pd.NA``, whose comparisons are not booleans: pandas' ``isna``
    is used whenever pandas is loaded.
    """
    values = np.asarray(values, dtype=object)
    pandas = sys.modules.get("pandas")
    if pandas is not None:
        return np.asarray(pandas.isna(values), dtype=bool)
    return np.equal(values, None) | np.not_equal(values, values)


def public_dtypes(columns, dtypes, levels):
    """``dtypes`` with every pandas categorical dtype made over its column's declared
    ``levels`` (its ``ordered`` kept), or ``object`` where none are declared.

    A categorical dtype made by ``astype("category")`` holds the levels that the
    rows hold: kept in a fitted schema it would show which levels the private rows
    have, and rows scored with it would have codes that one added row shifts.

    An *ordered* dtype is a declaration (``astype("category")`` never makes
    one; build it from a codebook, not from the rows): its order is kept for
    the declared levels it has, the other declared levels follow in their
    declared order.
    """
    import pandas as pd

    out = []
    for column, dtype in zip(columns, dtypes):
        if isinstance(dtype, pd.CategoricalDtype):
            if column not in levels:
                dtype = np.dtype(object)
            else:
                declared = list(levels[column])
                order = declared
                if dtype.ordered:
                    own = [c for c in dtype.categories if c in declared]
                    order = own + [c for c in declared if c not in own]
                dtype = pd.CategoricalDtype(order, ordered=bool(dtype.ordered))
        out.append(dtype)
    return out


class PublicSchemaEncoder(TransformerMixin, BaseEstimator):
    """One-hot and fixed-range scaling with a declared, public schema.

    Numeric columns are clipped to their declared ``bounds`` and (with
    ``scale=True``) scaled to [0, 1] with them; categorical columns are
    one-hot encoded (scikit-learn's :class:`~sklearn.preprocessing.OneHotEncoder`)
    with their declared ``categories``. The output's bounds are therefore
    known before any row is read, which is what a DP estimator needs: encode
    10 rows or all of them, the schema is the same. Each column keeps its
    place: a categorical column becomes a block of adjacent one-hot columns.

    ``fit`` reads only the column names and dtypes of ``X`` (public); no
    value. ``inverse_transform`` maps any encoded point back to a **valid
    record**: the category whose one-hot entry is largest, integer columns
    rounded, numeric columns within their bounds.

    Parameters
    ----------
    bounds : tuple (lower, upper), dict or None, default=None
        Public bounds of the numeric columns: one ``(lower, upper)`` pair of
        scalars (every numeric column) or of arrays (one entry per numeric
        column, in column order), or a dict ``{column: (lower, upper)}``. A
        numeric column without declared bounds is passed through unclipped
        (allowed only with ``scale=False``). A boolean column has the public
        bounds (0, 1) of its type.
    categories : dict or None, default=None
        ``{column: [level, ...]}``: the public levels of each categorical
        column. Every non-numeric column must be declared here. A missing
        value (None, NaN) encodes as an all-zero block; a value that is not
        a declared level raises a ``ValueError`` (which shows neither the
        value nor how many rows hold one; inside a DP estimator's fit such a
        value encodes as missing instead, see :doc:`/tables`).
    scale : bool, default=True
        Scale numeric columns to [0, 1] with their bounds.
    clip : bool, default=True
        Clip numeric columns to their bounds (where declared).

    Attributes
    ----------
    feature_names_in_ : ndarray of str
        Column names (of a DataFrame; ``x0``, ``x1``... for an array).
    n_features_in_ : int
    feature_groups_ : dict
        ``{column: ndarray of int}``: the encoded columns of each input column.
    numeric_features_, categorical_features_ : list
        Input columns of each kind, in column order.
    lower_, upper_ : ndarray of shape (n_encoded,)
        Public bounds of each encoded column (NaN where undeclared).
    integer_ : ndarray of bool of shape (n_encoded,)
        Encoded columns that come from an integer (or boolean) column.
    categorical_ : ndarray of bool of shape (n_encoded,)
        Encoded one-hot columns.

    See Also
    --------
    skdpx.datasets.encode_adult : this encoder with Adult's public schema.

    Examples
    --------
    >>> import pandas as pd
    >>> from skdpx.preprocessing import PublicSchemaEncoder
    >>> X = pd.DataFrame({"age": [25, 61], "sex": ["Female", "Male"]})
    >>> enc = PublicSchemaEncoder(bounds={"age": (17, 90)},
    ...                           categories={"sex": ["Female", "Male"]}).fit(X)
    >>> enc.transform(X).round(3).tolist()
    [[0.11, 1.0, 0.0], [0.603, 0.0, 1.0]]
    >>> enc.get_feature_names_out().tolist()
    ['age', 'sex=Female', 'sex=Male']
    >>> enc.inverse_transform([[0.5, 0.3, 0.6]])
       age   sex
    0   54  Male
    """

    _parameter_constraints = {
        "bounds": [tuple, list, dict, None],
        "categories": [dict, None],
        "scale": ["boolean"],
        "clip": ["boolean"],
    }

    def __init__(self, *, bounds=None, categories=None, scale=True, clip=True):
        self.bounds = bounds
        self.categories = categories
        self.scale = scale
        self.clip = clip

    # ------------------------------------------------------------------ fit

    def fit(self, X, y=None):
        """Record the schema: column names and dtypes of ``X``, never its values.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        self._validate_params()
        self._fit_schema(self._check_array(X, reset=True))
        return self

    def _check_array(self, X, *, reset, allow_nonfinite=False):
        """scikit-learn's checks (shape, finiteness) of an array; a DataFrame as it is."""
        if _is_frame(X):
            return X
        numeric = not self.categories
        kind = getattr(X, "dtype", np.dtype(object)).kind
        if numeric and allow_nonfinite and kind not in "biufc":
            numeric = False  # (object cells: converted one by one in _encode)
        return validate_data(self, X, reset=reset, dtype="numeric" if numeric else None,
                             ensure_all_finite=numeric and not allow_nonfinite,
                             accept_sparse="csr", ensure_min_samples=1 if reset else 0)

    def _fit_schema(self, X):
        if _is_frame(X):
            columns = list(X.columns)
            dtypes = list(X.dtypes)
            self._frame = True
        else:
            if sparse.issparse(X):
                dtypes = [X.dtype] * X.shape[1]
            else:
                X = np.asarray(X) if not hasattr(X, "dtype") else X
                if X.ndim != 2:
                    raise ValueError(f"X must be 2-d; got an array of shape {np.shape(X)}.")
                dtypes = [X.dtype] * X.shape[1]
            columns = list(range(X.shape[1]))
            self._frame = False
        if len(set(map(str, columns))) != len(columns):
            raise ValueError("X has duplicated column names.")
        self._columns = columns
        self._dtypes = dtypes
        self.n_features_in_ = len(columns)
        if self._frame:
            self.feature_names_in_ = np.asarray([str(c) for c in columns], dtype=object)

        categories = {} if self.categories is None else dict(self.categories)
        unknown = [c for c in categories if c not in columns]
        if unknown:
            raise ValueError(f"categories names column(s) {unknown} that X does not have; "
                             f"its columns are {columns} (a PublicSchema of more columns: "
                             "schema.select(X.columns)).")
        levels = {}
        for column, values in categories.items():
            if isinstance(values, str) or not hasattr(values, "__iter__"):
                raise ValueError(f"categories[{column!r}] must be a list of levels, "
                                 f"got {values!r}.")
            values = list(values)
            if not values:
                raise ValueError(f"categories[{column!r}] is empty.")
            if len(set(values)) != len(values):
                raise ValueError(f"categories[{column!r}] has duplicated levels.")
            levels[column] = values
        numeric = [c for c in columns if c not in levels]
        # an object array's numeric columns are converted at transform; so is a
        # column declared numeric by its bounds, whatever dtype pandas inferred (one
        # private cell such as "?" makes a numeric column's dtype object)
        undeclared = [
            (column, dtype) for column, dtype in zip(columns, dtypes)
            if column not in levels and getattr(dtype, "kind", "O") not in "biuf"
            and (self._frame or not levels)
            and not (isinstance(self.bounds, dict) and column in self.bounds)]
        if undeclared:
            raise ValueError(undeclared_columns_message(undeclared))
        # a categorical dtype holds the levels of the rows it was made from
        # (astype("category")): kept (fitted, pickled), it would show which levels the
        # private rows have; over the declared levels it shows nothing
        self._dtypes = public_dtypes(columns, dtypes, levels)
        self.numeric_features_ = numeric
        self.categorical_features_ = [c for c in columns if c in levels]
        self._levels = levels
        lower, upper = self._numeric_bounds(numeric, dtypes, columns)
        if self.scale and np.isnan(lower).any():
            missing = [c for c, lo in zip(numeric, lower) if np.isnan(lo)]
            raise ValueError(f"scale=True needs declared bounds for every numeric column; "
                             f"none for {missing}.")
        if np.any(lower > upper):
            raise ValueError("each lower bound must be <= its upper bound.")
        self._num_lower, self._num_upper = lower, upper

        if levels:
            public = _public_frame(self.categorical_features_, levels)
            self._onehot = OneHotEncoder(
                categories=[levels[c] for c in self.categorical_features_],
                handle_unknown="ignore", sparse_output=False, dtype=np.float64,
            ).fit(public)
        else:
            self._onehot = None

        groups, names, lo_out, hi_out, integer, onehot = {}, [], [], [], [], []
        start = 0
        num_index = {c: i for i, c in enumerate(numeric)}
        for column, dtype in zip(columns, dtypes):
            if column in levels:
                width = len(levels[column])
                names.extend(f"{column}={level}" for level in levels[column])
                lo_out += [0.0] * width
                hi_out += [1.0] * width
                integer += [False] * width
                onehot += [True] * width
            else:
                width = 1
                names.append(str(column) if self._frame else f"x{column}")
                i = num_index[column]
                lo, hi = ((0.0, 1.0) if self.scale else (lower[i], upper[i]))
                lo_out.append(lo)
                hi_out.append(hi)
                integer.append(getattr(dtype, "kind", "f") in "biu")
                onehot.append(False)
            groups[column] = np.arange(start, start + width)
            start += width
        self.feature_groups_ = groups
        self._names_out = np.asarray(names, dtype=object)
        self.lower_ = np.asarray(lo_out, dtype=float)
        self.upper_ = np.asarray(hi_out, dtype=float)
        self.integer_ = np.asarray(integer, dtype=bool)
        self.categorical_ = np.asarray(onehot, dtype=bool)
        return self

    def _numeric_bounds(self, numeric, dtypes, columns):
        n = len(numeric)
        lower = np.full(n, np.nan)
        upper = np.full(n, np.nan)
        kinds = dict(zip(columns, dtypes))
        for i, column in enumerate(numeric):
            if getattr(kinds[column], "kind", "f") == "b":
                lower[i], upper[i] = 0.0, 1.0
        bounds = self.bounds
        if bounds is None:
            return lower, upper
        if isinstance(bounds, dict):
            unknown = [c for c in bounds if c not in numeric]
            if unknown:
                kind = ("categorical (declare them in categories only)"
                        if all(c in columns for c in unknown) else
                        "not columns of X (a PublicSchema of more columns: "
                        "schema.select(X.columns))")
                raise ValueError(f"bounds names column(s) {unknown} that are {kind}; "
                                 f"numeric columns: {numeric}.")
            for column, pair in bounds.items():
                lo, hi = _pair(pair, f"bounds[{column!r}]")
                i = numeric.index(column)
                lower[i], upper[i] = lo, hi
            return lower, upper
        if len(bounds) != 2:
            raise ValueError(f"bounds must be (lower, upper) or a dict; got {bounds!r}.")
        try:
            lo = np.broadcast_to(np.asarray(bounds[0], dtype=float), (n,))
            hi = np.broadcast_to(np.asarray(bounds[1], dtype=float), (n,))
        except ValueError as exc:
            raise ValueError(f"bounds arrays must have one entry per numeric column ({n}); "
                             f"got {bounds!r}.") from exc
        if not (np.isfinite(lo).all() and np.isfinite(hi).all()):
            raise ValueError("bounds must be finite.")
        return lo.astype(float).copy(), hi.astype(float).copy()

    # ------------------------------------------------------------ transform

    def _columns_of(self, X):
        """{column: 1-d values} of ``X``, checked against the fitted schema."""
        if self._frame:
            if not _is_frame(X):
                raise ValueError(
                    f"{type(self).__name__} was fitted on a DataFrame with columns "
                    f"{self._columns}; pass a DataFrame with these columns."
                )
            missing = [c for c in self._columns if c not in X.columns]
            if missing:
                raise ValueError(f"X has no column(s) {missing}.")
            return {c: X[c].to_numpy() for c in self._columns}, X.shape[0]
        if sparse.issparse(X):
            X = X.toarray()
        X = np.asarray(X)
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1] if X.ndim == 2 else np.shape(X)} features, "
                             f"but {type(self).__name__} is expecting {self.n_features_in_} "
                             "features as input.")
        return {c: X[:, c] for c in self._columns}, X.shape[0]

    def transform(self, X):
        """Encode ``X``: numeric columns clipped (and scaled), categories one-hot.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            A sparse matrix is densified (for numeric columns only).

        Returns
        -------
        Z : ndarray of shape (n_samples, n_encoded), dtype float64
        """
        check_is_fitted(self, "feature_groups_")
        return self._encode(X)

    def fit_transform(self, X, y=None):
        """Fit, then encode the rows fitted on as the private rows of a DP fit.

        The rows an encoder is fitted on are, in a pipeline, the rows the DP
        estimator after it trains on. A refusal there would be a release
        about one row (its value decides whether the fit runs), so every cell
        is judged alone and nothing is refused: a numeric cell that is not a
        number, missing or infinite passes as NaN (the DP estimator sets it
        to its bounds' midpoint), and a categorical value that is not a
        declared level encodes as missing (an all-zero block).
        :meth:`transform` (public queries) still refuses them.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        Z : ndarray of shape (n_samples, n_encoded), dtype float64
        """
        return self.fit(X, y)._encode(X, private=True)

    def _encode(self, X, *, allow_nonfinite=False, private=False):
        """:meth:`transform`, with the leniency an estimator needs for its rows.

        ``allow_nonfinite``: a missing or infinite numeric value passes as
        NaN or inf (the estimator sets it to the bounds' midpoint) instead of
        being refused. ``private`` (the rows of a DP fit, on which a refusal
        would be a release about one row): that, and every cell is judged
        alone, never refused: a numeric cell that is not a number becomes
        NaN, a categorical value that is not a declared level encodes as
        missing (an all-zero block).
        """
        allow_nonfinite = allow_nonfinite or private
        values, n = self._columns_of(self._check_array(X, reset=False,
                                                       allow_nonfinite=allow_nonfinite))
        Z = np.empty((n, len(self._names_out)))
        if self._onehot is not None:
            cat = self._encode_categories(values, unknown="missing" if private else "raise")
            cat_cols = np.concatenate([self.feature_groups_[c] for c in self.categorical_features_])
            Z[:, cat_cols] = cat
        for i, column in enumerate(self.numeric_features_):
            j = self.feature_groups_[column][0]
            try:
                col = np.asarray(values[column], dtype=np.float64)
            except (TypeError, ValueError) as exc:
                if not private:
                    raise ValueError(f"column {column!r} has non-numeric values.") from exc
                col = cells_to_float(values[column])
            if not allow_nonfinite and not np.isfinite(col).all():
                raise ValueError(f"column {column!r} has missing or infinite values: impute "
                                 "them first (a missing numeric value has no public encoding).")
            lo, hi = self._num_lower[i], self._num_upper[i]
            if self.clip and not np.isnan(lo):
                col = np.clip(col, lo, hi)
            if self.scale:
                col = (col - lo) / (hi - lo) if hi > lo else np.zeros_like(col)
            Z[:, j] = col
        return Z

    def _encode_categories(self, values, unknown="raise"):
        frame = {}
        for column in self.categorical_features_:
            col = np.asarray(values[column], dtype=object)
            missing = _missing(col)
            col = np.where(missing, None, col)  # (pandas' NA compares to no boolean)
            known = np.isin(col, np.asarray(self._levels[column], dtype=object))
            bad = ~missing & ~known
            if bad.any():
                if unknown == "missing":  # a private row's value: encoded as missing
                    missing = missing | bad
                else:
                    # neither the values nor their number are shown: they may be
                    # private, and on Dask the message also lands in the workers' logs
                    raise ValueError(
                        f"column {column!r} has values that are not declared categories "
                        f"{self._levels[column]} (not shown: they may be private); declare "
                        "every level in categories."
                    )
            frame[column] = np.where(missing, None, col)
        table = np.column_stack([frame[c] for c in self.categorical_features_])
        # handle_unknown="ignore": a missing value encodes as an all-zero block
        return self._onehot.transform(table)

    def inverse_transform(self, Z, *, lower=None, upper=None):
        """Map encoded points back to valid records in original units.

        Parameters
        ----------
        Z : array-like of shape (n_samples, n_encoded)
        lower, upper : array-like of shape (n_encoded,), optional
            Bounds (in encoded units) to clip numeric columns to where none
            were declared, e.g. an estimator's DP-released bounds.

        Returns
        -------
        X : DataFrame (fitted on one) or ndarray of shape (n_samples, n_features)
            Categories are the level with the largest one-hot entry, integer
            columns rounded, numeric columns within their bounds.
        """
        check_is_fitted(self, "feature_groups_")
        Z = np.asarray(Z, dtype=float)
        if Z.ndim != 2 or Z.shape[1] != len(self._names_out):
            raise ValueError(f"Z must have {len(self._names_out)} columns; got shape {Z.shape}.")
        lo = self.lower_ if lower is None else np.where(np.isnan(self.lower_), lower, self.lower_)
        hi = self.upper_ if upper is None else np.where(np.isnan(self.upper_), upper, self.upper_)
        out = {}
        for i, column in enumerate(self.numeric_features_):
            j = self.feature_groups_[column][0]
            col = Z[:, j]
            if not np.isnan(lo[j]):
                col = np.clip(col, lo[j], hi[j])
            if self.scale:
                a, b = self._num_lower[i], self._num_upper[i]
                col = a + col * (b - a)
            if self.integer_[j]:
                col = np.rint(col)
            out[column] = col
        for column in self.categorical_features_:
            block = Z[:, self.feature_groups_[column]]
            levels = np.asarray(self._levels[column], dtype=object)
            out[column] = levels[np.argmax(block, axis=1)]
        if self._frame:
            return self._frame_of(out, Z.shape[0])
        dtype = self._dtypes[0] if not self._levels else object
        return np.column_stack([out[c] for c in self._columns]).astype(dtype)

    def _frame_of(self, out, n):
        import pandas as pd

        data = {}
        for column, dtype in zip(self._columns, self._dtypes):
            col = out[column]
            if column not in self._levels:
                data[column] = pd.Series(col).astype(dtype)
            elif isinstance(dtype, pd.CategoricalDtype):
                cats = (dtype.categories if set(self._levels[column]) <= set(dtype.categories)
                        else self._levels[column])
                data[column] = pd.Categorical(col, categories=cats)
            elif dtype == object:
                data[column] = pd.Series(col, dtype=object)
            else:  # pandas' string dtype and the like
                data[column] = pd.Series(col).astype(dtype)
        frame = pd.DataFrame({c: pd.Series(v).reset_index(drop=True)
                              for c, v in data.items()}, columns=self._columns)
        return frame

    def get_feature_names_out(self, input_features=None):
        """Encoded column names: ``column`` or ``column=level``.

        Returns
        -------
        ndarray of str
        """
        check_is_fitted(self, "feature_groups_")
        return self._names_out.copy()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        tags.input_tags.sparse = True
        return tags


def undeclared_columns_message(undeclared):
    """The error for non-numeric columns without declared levels: names them and the fix.

    ``undeclared``: ``(column, dtype)`` pairs. Public facts only (names and
    dtypes), never a value or a count.
    """
    columns = [c for c, _ in undeclared]
    if len(undeclared) == 1:
        what = f"column {columns[0]!r} is not numeric (dtype {undeclared[0][1]}) and has"
    else:
        dtypes = ", ".join(str(d) for _, d in undeclared[:10])
        what = (f"columns {column_list(columns)} are not numeric (dtypes {dtypes}"
                f"{', ...' if len(undeclared) > 10 else ''}) and have")
    example = ", ".join(f"{c!r}: [...]" for c in columns[:3]) + (", ..." if len(columns) > 3
                                                                 else "")
    message = (
        f"{what} no declared levels. Declare the public levels (from a codebook or a data "
        f"dictionary, never read from the private rows) with categories={{{example}}}, or "
        "build bounds and levels with skdpx.preprocessing.PublicSchema and pass **schema: "
        "PublicSchema.from_dtypes(X) (declared pandas CategoricalDtypes), "
        ".from_dictionary(codebook) or .from_sample(public_frame). Or encode "
        f"{'it' if len(columns) == 1 else 'them'} first."
    )
    categorical = [c for c, d in undeclared if getattr(d, "name", None) == "category"]
    if categorical:
        message += (f" {column_list(categorical)} "
                    f"{'has a' if len(categorical) == 1 else 'have a'} pandas categorical "
                    "dtype: PublicSchema.from_dtypes(X) reads its levels, which are public "
                    "only if they were declared (pd.CategoricalDtype([...])), not derived from "
                    "the private values by astype('category').")
    return message


def column_list(names, limit=10):
    """``'a', 'b' and 'c'``, or the first ``limit`` names and ``and N more``.

    For messages that name columns (public facts); never for values.
    """
    names = [repr(str(n)) if not isinstance(n, (int, np.integer)) else str(int(n))
             for n in names]
    if len(names) > limit:
        return f"{', '.join(names[:limit])} and {len(names) - limit} more"
    if len(names) <= 1:
        return "".join(names)
    return f"{', '.join(names[:-1])} and {names[-1]}"


def _cell_to_float(value):
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        return np.nan


def cells_to_float(values):
    """Any array's cells as float64, each judged alone: one that is not a number is NaN.

    For the rows of a DP fit, where refusing a cell would be a release about
    its row. Numeric arrays convert at once; only an array with a cell that
    does not convert is converted cell by cell (a numpy ufunc over its
    cells).
    """
    try:
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        pass
    cells = np.asarray(values, dtype=object)
    return np.frompyfunc(_cell_to_float, 1, 1)(cells).astype(np.float64)


def _pair(pair, name):
    if not isinstance(pair, (tuple, list)) or len(pair) != 2:
        raise ValueError(f"{name} must be a (lower, upper) pair; got {pair!r}.")
    if not all(isinstance(v, (Real, Integral, np.number)) and not isinstance(v, bool)
               for v in pair):
        raise ValueError(f"{name} must be two numbers; got {pair!r}.")
    lo, hi = float(pair[0]), float(pair[1])
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ValueError(f"{name} must be finite; got {pair!r}.")
    return lo, hi


def _public_frame(columns, levels):
    """A table made of the declared levels only (public), to fit OneHotEncoder on."""
    n = max(len(levels[c]) for c in columns)
    return np.column_stack([
        np.asarray([levels[c][i % len(levels[c])] for i in range(n)], dtype=object)
        for c in columns
    ])
