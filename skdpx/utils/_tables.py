"""The input side of every estimator: arrays, DataFrames and mixed tables.

An estimator fitted with :func:`validate_table` keeps a :class:`TableSchema`
as ``schema_``. It works internally on a float matrix (the *encoded* space:
numeric columns as they are, categorical columns one-hot with their
declared, public levels) and hands the black box rows of the kind it was
fitted on (:meth:`TableSchema.decode`): the same DataFrame columns and
dtypes, valid categories and integers, so that a Pipeline selecting columns
by name works and no feature-name warning is raised.
"""

from numbers import Integral

import numpy as np
from scipy import sparse
from sklearn.utils.validation import validate_data

from sklearn.utils.validation import column_or_1d

from ..preprocessing._schema import PublicSchemaEncoder, _is_frame, cells_to_float
from ._dask import as_dask_array, is_dask_collection, unique_name
from ._engine import engine, is_distributed

__all__ = ["TableSchema", "frame_meta", "num_rows", "validate_dask_table",
           "validate_spark_table", "validate_table"]


def _all_numeric(X):
    return all(getattr(d, "kind", "O") in "biuf" for d in X.dtypes)


class TableSchema:
    """The public schema of an estimator's input, and the way back to it.

    Made by :func:`validate_table` from the column names, dtypes and the
    declared ``bounds`` / ``categories`` only (never a value).

    Attributes
    ----------
    kind : {"array", "sparse", "frame"}
        What the estimator was fitted on, and what :meth:`decode` returns.
    encoder : PublicSchemaEncoder or None
        The encoder of a table with categorical columns (None: the encoded
        space is the input's own columns).
    n_encoded : int
    lower, upper : ndarray of shape (n_encoded,)
        Declared bounds in encoded units (NaN where undeclared; 0 and 1 for
        one-hot columns).
    integer, categorical : ndarray of bool of shape (n_encoded,)
    groups : list of (name, ndarray of int)
        Each input column and its encoded columns.
    feature_names_out : ndarray of str
    """

    def __init__(self, X, *, bounds, categories, n_features):
        if _is_frame(X):
            self.kind = "frame"
            self.columns = list(X.columns)
            self.dtypes = list(X.dtypes)
        else:
            self.kind = "sparse" if sparse.issparse(X) else "array"
            self.columns = list(range(n_features))
            self.dtypes = None
        # a DataFrame with a column that is not numeric goes through the encoder too,
        # which refuses (before anything is spent) a column the declared schema does
        # not allow: without it, such a column reached the fit's first numeric step,
        # after the commit (issue 36)
        needs_encoder = (bool(categories) or isinstance(bounds, dict)
                         or (self.kind == "frame" and not _all_numeric(X)))
        if needs_encoder:
            self.encoder = PublicSchemaEncoder(bounds=bounds, categories=categories,
                                               scale=False, clip=False)
            self.encoder._validate_params()
            self.encoder._fit_schema(X)
            self.lower, self.upper = self.encoder.lower_, self.encoder.upper_
            self.integer, self.categorical = self.encoder.integer_, self.encoder.categorical_
            self.groups = [(str(c), idx) for c, idx in self.encoder.feature_groups_.items()]
            self.feature_names_out = self.encoder.get_feature_names_out()
            if self.kind == "frame":  # categorical dtypes over the declared levels
                self.dtypes = list(self.encoder._dtypes)
        else:
            self.encoder = None
            nan = np.full(n_features, np.nan)
            self.lower, self.upper = nan, nan.copy()
            self.integer = (np.asarray([d.kind in "biu" for d in self.dtypes])
                            if self.kind == "frame" else np.zeros(n_features, dtype=bool))
            self.categorical = np.zeros(n_features, dtype=bool)
            names = ([str(c) for c in self.columns] if self.kind == "frame"
                     else [f"x{i}" for i in range(n_features)])
            self.groups = [(name, np.array([i])) for i, name in enumerate(names)]
            self.feature_names_out = np.asarray(names, dtype=object)
        self.n_encoded = len(self.feature_names_out)

    def fit_bounds(self, bounds):
        """The ``bounds`` to give :class:`~skdpx.privacy.FitBounds` in encoded units.

        The estimator's own parameter when there is no encoder; else
        ``(lower, upper)`` with NaN for numeric columns whose bounds are
        not declared (estimated with DP), or None when none is declared and
        there is no one-hot column.
        """
        if self.encoder is None:
            return bounds
        if np.isnan(self.lower).all():
            return None
        return self.lower.copy(), self.upper.copy()

    def indices(self, features, param):
        """Encoded column indices of ``features`` (names or input positions).

        A categorical column gives its whole one-hot block.
        """
        if features is None:
            return np.array([], dtype=int)
        if isinstance(features, str):
            raise ValueError(f"{param} must be a list of columns, not a string; "
                             f"use {param}=[{features!r}].")
        by_name = {name: idx for name, idx in self.groups}
        out = []
        for f in features:
            if isinstance(f, str):
                if f not in by_name:
                    raise ValueError(f"{param}: unknown feature {f!r}; features are "
                                     f"{list(by_name)}.")
                out.append(by_name[f])
            elif isinstance(f, (Integral, np.integer)) and not isinstance(f, bool):
                if not 0 <= f < len(self.groups):
                    raise ValueError(f"{param}: feature index {f} is outside "
                                     f"[0, {len(self.groups)}).")
                out.append(self.groups[int(f)][1])
            else:
                raise ValueError(f"{param} must hold column names or indices; got {f!r}.")
        idx = np.concatenate(out) if out else np.array([], dtype=int)
        if len(np.unique(idx)) != len(idx):
            raise ValueError(f"{param} names a feature twice.")
        return idx

    def encode(self, X, *, private=False):
        """Encoded float matrix of rows already validated by :func:`validate_table`.

        Missing and infinite numeric values pass as NaN and inf (the
        estimator sets them to the bounds' midpoint: :func:`~skdpx.privacy.fill_nonfinite`).
        ``private``: the rows of a DP fit, where no cell is refused (a
        refusal would be a release about its row): a numeric cell that is
        not a number is NaN, a categorical value that is not a declared level
        encodes as missing (an all-zero block).

        A table with an encoder is encoded block by block of rows
        (:func:`~skdpx.utils._chunks.row_slices`) into one float64 array:
        the memory is the encoded rows and one block's temporaries (object
        columns, one-hot blocks), never a second copy of the table. Each
        cell is encoded alone, so the blocks give the rows of one call.
        """
        if self.encoder is None:
            return X
        from ._chunks import row_slices

        n = X.shape[0]
        slices = row_slices(n, self.n_encoded)
        if len(slices) == 1:
            return self.encoder._encode(X, allow_nonfinite=True, private=private)
        Z = np.empty((n, self.n_encoded))
        for rows in slices:
            Z[rows] = self.encoder._encode(X.iloc[rows] if _is_frame(X) else X[rows],
                                           allow_nonfinite=True, private=private)
        return Z

    def probe(self, bounds=None, *, corners=False):
        """Public points in the encoded space: what a black box is checked on before a fit.

        Each numeric column at the midpoint of its declared bounds (the
        schema's, else those of ``bounds``, the estimator's parameter), 0
        where none are declared; each categorical column at its first
        declared level. With ``corners``, two more points: every numeric
        column at its declared lower bound (each categorical column at its
        last level), then at its upper bound (at its second level, or its
        only one); a column without declared bounds stays at 0. Built from
        the public schema only, never from a row: whether the black box runs
        on them, and what it returns, is a fact about the black box.

        Returns
        -------
        ndarray of shape (1, n_encoded), or (3, n_encoded) with ``corners``
        """
        from ._validation import check_bounds

        lower, upper = self.lower.copy(), self.upper.copy()
        if self.encoder is None and bounds is not None:
            try:
                lower, upper = check_bounds(bounds, self.n_encoded, allow_missing=True)
            except ValueError:  # refused later, by the fit's own check of its bounds
                pass
        declared = np.isfinite(lower) & np.isfinite(upper)
        point = np.where(declared, (lower + upper) / 2.0, 0.0)
        for _, block in self.groups:
            if self.categorical[block].all():
                point[block] = 0.0
                point[block[0]] = 1.0
        if self.integer.any():
            point = np.where(self.integer, np.rint(point), point)
        if not corners:
            return point[None, :]
        points = np.repeat(point[None, :], 3, axis=0)
        for row, (end, level) in enumerate([(lower, -1), (upper, 1)], start=1):
            at = declared & ~self.categorical
            rounded = np.ceil(end) if level < 0 else np.floor(end)
            points[row, at] = np.where(self.integer, rounded, end)[at]
            for _, block in self.groups:
                if self.categorical[block].all():
                    points[row, block] = 0.0
                    points[row, block[min(level, len(block) - 1) if level > 0 else -1]] = 1.0
        return points

    def decode(self, Z, lower=None, upper=None):
        """Rows of the kind the estimator was fitted on, from encoded ``Z``.

        Valid records: categories by the largest one-hot entry, integer
        columns rounded, numeric columns clipped to ``lower`` / ``upper``
        (encoded units; e.g. the estimator's ``bounds_``) where given.
        """
        Z = np.asarray(Z, dtype=float)
        if self.encoder is not None:
            return self.encoder.inverse_transform(Z, lower=lower, upper=upper)
        if lower is not None:
            Z = np.clip(Z, lower, upper)
        if self.integer.any():
            Z = np.where(self.integer, np.rint(Z), Z)
        if self.kind == "frame":
            import pandas as pd

            frame = pd.DataFrame(Z, columns=self.columns)
            return frame.astype(dict(zip(self.columns, self.dtypes)))
        if self.kind == "sparse":
            return sparse.csr_matrix(Z)
        return Z

    def public_frame(self, frame):
        """``frame`` (rows with the input's columns) with every categorical column over
        its declared levels (a value outside them: missing), a rule on each row alone.

        A dtype made by ``astype("category")`` holds the levels the rows hold: rows
        scored with it have category codes that one added row shifts (a black box
        reading ``.cat.codes`` would then see every row move).
        """
        import pandas as pd

        if self.kind != "frame":
            return frame
        cats = [(c, d) for c, d in zip(self.columns, self.dtypes)
                if isinstance(d, pd.CategoricalDtype)]
        if not cats:
            return frame
        frame = frame.copy()
        for column, dtype in cats:
            frame[column] = pd.Categorical(frame[column].astype(object), dtype=dtype)
        return frame

    def records(self, Z, lower=None, upper=None, index=None):
        """Encoded rows (a NaN row: none) as a DataFrame of the input's columns.

        Decoded as :meth:`decode`; a NaN row stays missing (integer columns
        become pandas' nullable ``Int64`` then). ``index``: the rows' labels
        (default 0..n-1).
        """
        import pandas as pd

        Z = np.asarray(Z, dtype=float)
        ok = ~np.isnan(Z).any(axis=1)
        frame = self.decode(Z[ok], lower, upper)
        if self.kind != "frame":
            frame = pd.DataFrame(np.asarray(frame.toarray() if sparse.issparse(frame) else frame),
                                 columns=[c for c, _ in self.groups])
        index = np.arange(len(Z)) if index is None else np.asarray(index)
        frame.index = index[ok]
        if ok.all():
            return frame
        ints = [c for c in frame.columns if frame[c].dtype.kind in "biu"]
        return frame.astype({c: "Int64" for c in ints}).reindex(index)

    def project(self, Z, lower=None, upper=None):
        """``Z`` made valid records, in encoded units (decode, then encode)."""
        Z = np.asarray(Z, dtype=float)
        if self.encoder is not None:
            return self.encoder.transform(self.decode(Z, lower, upper))
        if lower is not None:
            Z = np.clip(Z, lower, upper)
        return np.where(self.integer, np.rint(Z), Z) if self.integer.any() else Z


def validate_table(estimator, X, y="no_validation", *, reset, categories=None, y_numeric=False,
                   accept_sparse=True):
    """Validate ``X`` (and ``y``) for ``estimator``; the encoded float matrix.

    On ``reset`` (fit) the estimator's ``schema_`` is set from the public
    schema (column names, dtypes, its ``bounds`` and ``categories``
    parameters), with scikit-learn's ``n_features_in_`` and
    ``feature_names_in_``. Otherwise ``X`` is checked against them.

    What is refused depends on public facts only: the shape, the number and
    names of the columns, the dtypes against the declared schema, an empty
    ``X``. Missing and infinite numeric values pass as NaN and inf, for the
    estimator to set to the bounds' midpoint
    (:func:`~skdpx.privacy.fill_nonfinite`). On ``reset`` (the private rows
    of a DP fit) no cell is refused either: a cell that is not a number is
    NaN, a categorical value that is not a declared level encodes as
    missing, and ``y`` is only shaped (a label the estimator cannot use is
    dropped by it, never refused here: :func:`~skdpx.privacy.check_classes`).

    A dask array or DataFrame is validated by
    :func:`validate_dask_table`: the same checks and
    schema, the encoding applied per partition in the workers, and a dask
    array returned.

    Returns
    -------
    Z : ndarray of shape (n_samples, n_encoded), dtype float64
        (a row-chunked dask array for a dask ``X``)
    y : validated ``y``, only when given (``None`` is refused as
        scikit-learn's ``validate_data`` refuses it)
    """
    if is_distributed(X) or is_distributed(y):
        kind = engine(X) if is_distributed(X) else engine(y)
        if not getattr(estimator, "_accepts_distributed", False):
            # refused before anything is computed or spent (no row, no label
            # reaches the client)
            raise TypeError(
                f"{type(estimator).__name__} does not accept {kind.capitalize()} data: its "
                "algorithm needs the rows in memory. Dask and Spark data are accepted in fit "
                "by DPLimeExplainer, PrivRecourse with a fitted black box, "
                "DPLocallyLinearClassifier(batch_size=None), DPShapExplainer, dp_background, "
                "partial_dependence and permutation_importance (see the docs' 'Scaling "
                "out').")
        if kind == "spark":
            return validate_spark_table(estimator, X, y, reset=reset, categories=categories,
                                        y_numeric=y_numeric)
        if not is_dask_collection(X):
            raise TypeError("y is a Dask collection but X is not: pass both as Dask "
                            "collections (with the same partitions), or both in memory.")
        # the same checks and schema, as map-reduce passes
        return validate_dask_table(estimator, X, y, reset=reset, categories=categories)
    no_y = isinstance(y, str) and y == "no_validation"
    _refuse_values_in_messages(X)
    if not reset:
        schema = estimator.schema_
    if reset:
        bounds = getattr(estimator, "bounds", None)
        mixed = (bool(categories) or isinstance(bounds, dict)
                 or (_is_frame(X) and not _all_numeric(X)))
    else:
        mixed = schema.encoder is not None
    if mixed:
        if not _is_frame(X) and not hasattr(X, "shape"):
            X = np.asarray(X, dtype=object)
        validate_data(estimator, X, reset=reset, skip_check_array=True)
        if not no_y:
            y = _labels(estimator, X, y, y_numeric=y_numeric)
        if reset:
            estimator.schema_ = TableSchema(X, bounds=bounds, categories=categories,
                                            n_features=estimator.n_features_in_)
        Z = estimator.schema_.encode(X, private=reset)
        return Z if no_y else (Z, y)
    kw = dict(dtype=np.float64, accept_sparse=False, ensure_all_finite=False)
    if sparse.issparse(X) and accept_sparse:
        # one-hot CSR: densified (the estimators' linear algebra is dense);
        # the black box still receives CSR rows (TableSchema.decode)
        X_in = X
        X = X.toarray()
    else:
        X_in = X
        if reset:
            X = _numeric_cells(X)
    Z = validate_data(estimator, X, reset=reset, **kw)
    if not no_y:
        y = _labels(estimator, Z, y, y_numeric=y_numeric)
    if reset:
        estimator.schema_ = TableSchema(X_in, bounds=getattr(estimator, "bounds", None),
                                        categories=None, n_features=estimator.n_features_in_)
    return Z if no_y else (Z, y)


def _numeric_cells(X):
    """A DP fit's rows with any cell that is not a number made NaN (judged cell by cell).

    Only an array (or list) whose dtype is not numeric is touched: a cell
    that does not convert to a number (a word, a dict) becomes NaN, which
    the estimator sets to the bounds' midpoint, instead of failing the
    conversion (a failure, and its message, would be a release about that
    row). Numeric and complex arrays, DataFrames and anything else are
    returned as they are (scikit-learn checks them on their public dtype).
    """
    if _is_frame(X) or sparse.issparse(X) or is_dask_collection(X):
        return X
    if not hasattr(X, "dtype"):
        try:
            A = np.asarray(X)
        except (TypeError, ValueError):  # (ragged: scikit-learn says so, from the shape)
            return X
    else:
        A = X
    if not isinstance(A, np.ndarray) or A.dtype.kind in "biufc" or A.ndim != 2:
        return X
    return cells_to_float(A)


def _labels(estimator, X, y, *, y_numeric):
    """``y`` shaped as scikit-learn's ``validate_data`` shapes it (1-d, one per row of X).

    No label value is refused: a missing or non-finite label, a label that
    is not a declared class, or one that is not a number where numbers are
    needed (``y_numeric``: such a cell becomes NaN) is the estimator's to
    drop or neutralise, by a rule on its row alone.
    """
    if y is None:
        raise ValueError(f"{type(estimator).__name__} requires y to be passed, but the target "
                         "y is None.")
    y = column_or_1d(y, warn=True)
    check_same_rows(estimator, X.shape[0], len(y))
    if y_numeric and y.dtype.kind not in "biuf":
        y = cells_to_float(y)
    return y


def _refuse_values_in_messages(X):
    """Refuse, on public facts alone, the inputs whose scikit-learn message shows the values.

    scikit-learn's refusals of a 1-D or scalar X and of complex data print
    the array itself; these say the same without it (the rows may be
    private). Anything else is left to scikit-learn.
    """
    if _is_frame(X) or sparse.issparse(X) or is_dask_collection(X):
        return
    try:
        A = X if hasattr(X, "ndim") and hasattr(X, "dtype") else np.asarray(X)
    except (TypeError, ValueError):  # (ragged: scikit-learn refuses it, from its shape)
        return
    if A.ndim < 2:
        raise ValueError(
            f"Expected 2D array, got {'scalar' if A.ndim == 0 else '1D'} array instead (its "
            "values are not shown: they may be private). Reshape your data either using "
            "array.reshape(-1, 1) if your data has a single feature or array.reshape(1, -1) "
            "if it contains a single sample.")
    if A.dtype.kind == "c":
        raise ValueError("Complex data not supported (the values are not shown: they may be "
                         "private).")


def num_rows(X):
    """How many rows ``X`` has: ``X.shape[0]`` (an array, a sparse matrix, a DataFrame),
    else ``len(X)`` (a list; a 0-d array raises TypeError).

    The number, never a check: under add-or-remove it is private, and only the
    privacy core may release it (or the caller knows it is public: a validation
    set, the relation's fixed size).
    """
    return X.shape[0] if hasattr(X, "shape") and len(X.shape) else len(X)


def check_same_rows(estimator, n_x, n_y):
    """Refuse an ``X`` and a ``y`` of different lengths, showing neither.

    Under add-or-remove neighbours the number of rows is private: scikit-learn's
    message ("inconsistent numbers of samples: [n, m]") would print it.
    """
    if n_x != n_y:
        raise ValueError(
            f"X and y passed to {type(estimator).__name__} have different numbers of rows "
            "(not shown: the number of rows is private). Nothing was spent.")


# -- Dask collections: the same schema, the rows left in the workers ---------


def _meta(X):
    """An empty in-memory stand-in of ``X``: its columns and dtypes, no value.

    A dask DataFrame's ``_meta`` (an empty pandas DataFrame); for a dask
    array, an empty numpy array of its dtype and number of columns.
    """
    import dask.dataframe as dd

    if isinstance(X, dd.Series):
        X = X.to_frame()
    if isinstance(X, dd.DataFrame):
        return X._meta
    if X.ndim != 2:
        raise ValueError(f"Expected a 2D array, got a {X.ndim}-D dask array instead: "
                         "reshape your data (a single feature: X[:, None]).")
    return np.empty((0, X.shape[1]), dtype=X.dtype)


def _encode_block(block, schema, n_encoded, private=True):
    """One partition's rows encoded by the public schema (in a worker).

    ``private`` (a fit's rows): no cell is refused (see
    :meth:`~skdpx.utils._tables.TableSchema.encode`).
    """
    if len(block) == 0:
        return np.empty((0, n_encoded))
    Z = schema.encode(block, private=private)
    Z = Z.toarray() if hasattr(Z, "toarray") else Z
    return np.asarray(Z, dtype=np.float64)


def _encoded_array(X, schema, private=True):
    """The encoded rows as a row-chunked float dask array.

    ``schema.encode`` runs on each partition in the workers (``private``:
    a fit's rows, no cell refused). When the partitions' row counts are
    unknown (a DataFrame), one pass returns each partition's row count
    (the exact number of rows, read only by the DP count, as ``len(X)`` is in memory),
    nothing else.
    """
    import dask
    import dask.array as da
    import dask.dataframe as dd

    n_encoded = schema.n_encoded
    if isinstance(X, dd.DataFrame):
        parts, lengths = X.to_delayed(), None
    else:
        X = X.rechunk({1: -1})
        if schema.encoder is None and not any(np.isnan(c) for c in X.chunks[0]):
            return as_dask_array(X, dtype=np.float64)
        parts = X.to_delayed().ravel()
        lengths = None if any(np.isnan(c) for c in X.chunks[0]) else list(X.chunks[0])
    # every key named for this call only (skdpx.utils._dask.unique_name, dask issue 9888)
    name = unique_name("encode")
    encode = dask.delayed(_encode_block, pure=True)
    blocks = [encode(p, schema, n_encoded, private, dask_key_name=(name, i))
              for i, p in enumerate(parts)]
    if lengths is None:
        # one pass: each partition's row count (read only by the DP count, as len(X))
        count, size = unique_name("rows"), dask.delayed(len, pure=True)
        lengths = [int(n) for n in dask.compute(*[size(b, dask_key_name=(count, i))
                                                 for i, b in enumerate(blocks)])]
    arrays = [da.from_delayed(b, shape=(n, n_encoded), dtype=np.float64,
                              name=f"{name}-block-{i}")
              for i, (b, n) in enumerate(zip(blocks, lengths))]
    return da.concatenate(arrays, axis=0)


def _schema_from_meta(estimator, meta, *, reset, categories):
    """Set (``reset``) or check the estimator's schema from an empty stand-in of the rows.

    ``meta`` holds the columns and dtypes only (no value): the same checks
    and the same :class:`TableSchema` as in memory.
    """
    from sklearn.utils.validation import validate_data

    if meta.shape[1] < 1:
        raise ValueError(f"0 feature(s) (shape={meta.shape}) while a minimum of 1 is required "
                         f"by {type(estimator).__name__}.")
    # names and the number of features, checked or set as in memory (no value read)
    validate_data(estimator, meta, reset=reset, skip_check_array=True)
    if reset:
        bounds = getattr(estimator, "bounds", None)
        mixed = (bool(categories) or isinstance(bounds, dict)
                 or (_is_frame(meta) and not _all_numeric(meta)))
        if mixed:
            estimator.schema_ = TableSchema(meta, bounds=bounds, categories=categories,
                                            n_features=estimator.n_features_in_)
        else:
            if not _is_frame(meta) and meta.dtype.kind not in "biuf":
                raise ValueError(f"dtype {meta.dtype} is not numeric: convert the dask array "
                                 "to float, or pass a DataFrame with declared categories.")
            estimator.schema_ = TableSchema(meta, bounds=bounds, categories=None,
                                            n_features=estimator.n_features_in_)


def validate_dask_table(estimator, X, y="no_validation", *, reset, categories=None):
    """:func:`~skdpx.utils._tables.validate_table` for a dask array or DataFrame.

    The same checks and the same public schema as in memory, made without
    gathering a row in the client:

    * the schema (``schema_``, ``n_features_in_``, ``feature_names_in_``)
      is read from the collection's columns and dtypes only (an empty
      stand-in: a dask DataFrame's ``_meta``), exactly as in memory;
    * the encoding (declared categories one-hot, numeric columns as float)
      is applied to each partition in the workers;
    * as in memory, no value of a fit's rows is refused (a refusal would be
      a release about one row): missing and infinite values pass as NaN
      and inf (the estimator sets them to the bounds' midpoint), a
      categorical value that is not a declared level encodes as missing,
      and ``y``'s values are the estimator's to drop or neutralise. Only
      public facts are refused: the columns, the dtypes, an empty or
      misshapen collection, ``y``'s length.

    Parameters
    ----------
    estimator : estimator
    X : dask array of shape (n_samples, n_features) or dask DataFrame
    y : dask array or Series, array-like, or "no_validation"
        Rechunked to ``X``'s rows (a numpy ``y`` is split to match); its
        length is checked; its values are the estimator's to drop or neutralise.
    reset : bool
        Set the schema (fit), or check ``X`` against it.
    categories : dict or None
        The estimator's declared categories (as in memory).

    Returns
    -------
    Z : dask array of shape (n_samples, n_encoded), dtype float64
        Chunked by rows only, with known chunk sizes (the number of rows
        ``Z.shape[0]`` is exact: under add-or-remove only the DP count reads it, as
        ``len(X)`` in memory).
    y : dask array of shape (n_samples,) or ndarray, only when given
    """
    import dask.dataframe as dd

    no_y = isinstance(y, str) and y == "no_validation"
    if not no_y and y is None:
        raise ValueError(f"{type(estimator).__name__} requires y to be passed, but the target "
                         "y is None.")
    if isinstance(X, dd.Series):
        X = X.to_frame()
    meta = _meta(X)
    _schema_from_meta(estimator, meta, reset=reset, categories=categories)
    Z = _encoded_array(X, estimator.schema_, private=reset)
    if Z.shape[0] < 1:
        raise ValueError(f"Found array with 0 sample(s) (shape={Z.shape}) while a minimum of "
                         f"1 is required by {type(estimator).__name__}.")
    if not no_y:
        if isinstance(y, (dd.Series, dd.DataFrame)) or is_dask_collection(y):
            y = as_dask_array(y, dtype=None)
            if y.shape[1] != 1:
                raise ValueError(f"y must be 1-d; got {y.shape[1]} columns.")
            y = y[:, 0]
            n_y = int(y.shape[0])
        else:
            y = np.asarray(y)
            n_y = len(y)
        check_same_rows(estimator, Z.shape[0], n_y)
        if is_dask_collection(y) and y.chunks[0] != Z.chunks[0]:
            y = y.rechunk({0: Z.chunks[0]})
    return Z if no_y else (Z, y)


# -- Spark DataFrames: the schema from Spark's, the rows left in the executors --


def _spark_meta(df, columns, batch=False):
    """An empty pandas DataFrame with ``df``'s ``columns`` and the matching dtypes.

    Read from the Spark schema only (``df.schema``: names, types and
    nullability, no row): integer types as int64, floating and decimal types
    as float64, booleans as bool, anything else (strings, dates) as object,
    which the public schema takes only as a declared categorical column.

    ``batch``: the dtypes every batch of rows is cast to before anything
    reads it (:func:`spark_batch_dtypes`): pyspark converts each Arrow batch
    by its own contents (a nullable integer column is int in a batch without
    a null and float in one with a null; a nullable boolean, bool or object),
    so a batch's dtypes would depend on its rows. A nullable integer column
    is then always float64 and a nullable boolean always object: a function
    of the schema alone.
    """
    import pandas as pd
    from pyspark.sql import types as T

    def dtype(field):
        t = field.dataType
        nullable = batch and field.nullable
        if isinstance(t, (T.ByteType, T.ShortType, T.IntegerType, T.LongType)):
            return np.float64 if nullable else np.int64
        if isinstance(t, (T.FloatType, T.DoubleType, T.DecimalType)):
            return np.float64
        if isinstance(t, T.BooleanType):
            return object if nullable else np.bool_
        return object

    fields = {f.name: f for f in df.schema.fields}
    return pd.DataFrame({c: pd.Series([], dtype=dtype(fields[c])) for c in columns})


def spark_batch_dtypes(df, columns):
    """``{column: dtype}`` every Spark batch of ``columns`` is cast to (from the schema only)."""
    meta = _spark_meta(df, columns, batch=True)
    return {c: meta[c].dtype for c in columns}


def frame_meta(X):
    """An empty pandas DataFrame with the columns and dtypes of the DataFrame ``X``.

    No row is read: a pandas DataFrame's first zero rows, a dask
    DataFrame's ``_meta``, a Spark DataFrame's schema (:func:`_spark_meta`,
    the dtypes its batches arrive with).
    """
    kind = engine(X)
    if kind == "dask":
        meta = X._meta
        return meta if hasattr(meta, "columns") else meta.to_frame()
    if kind == "spark":
        return _spark_meta(X, list(X.columns), batch=True)
    return X.iloc[:0]


class _EncodeFrame:
    """A Spark batch's feature columns encoded by the public schema (in an executor).

    The batch is first cast to the dtypes of the schema (``dtypes``,
    :func:`spark_batch_dtypes`), never to those its own rows would give.
    """

    def __init__(self, schema, columns, private, dtypes):
        self.schema, self.columns, self.private = schema, list(columns), private
        self.dtypes = dict(dtypes)

    def __call__(self, frame):
        return _encode_block(frame[self.columns].astype(self.dtypes), self.schema,
                             self.schema.n_encoded, self.private)


def validate_spark_table(estimator, X, y="no_validation", *, reset, categories=None,
                         y_numeric=False):
    """:func:`validate_table` for a Spark DataFrame: a :class:`~skdpx.utils._spark.SparkTable`.

    The same checks and the same public schema as in memory, made without
    reading a row: the schema (``schema_``, ``n_features_in_``,
    ``feature_names_in_``) comes from the Spark schema's names and types
    (:func:`_spark_meta`), and the encoding (declared categories one-hot,
    numeric columns as float) is applied to each batch of rows in the
    executors when a sum reads them. As in memory, no value of a fit's rows
    is refused.

    ``y`` is the name of a column of ``X`` (e.g. ``"label"``, as Spark ML's
    ``labelCol``): the features are then the other columns. It must be a
    numeric column where numbers are needed (``y_numeric``), a fact of the
    Spark schema.

    Returns
    -------
    Z : SparkTable of shape (nan, n_encoded)
        The number of rows is private: only the privacy core counts them.
    y : SparkTable of shape (nan,), only when given (the same rows)
    """
    from ._spark import ReadColumns, SparkTable, is_spark_dataframe

    no_y = isinstance(y, str) and y == "no_validation"
    if not is_spark_dataframe(X):
        raise TypeError(f"X must be a Spark DataFrame (with y the name of its label column), "
                        f"got {type(X).__name__}.")
    if not hasattr(X, "_jdf"):
        raise TypeError(
            "a Spark Connect DataFrame is not supported: skdpx sums the rows with Spark's RDD "
            "API (one partial sum per partition, a tree aggregation), which Spark Connect does "
            "not offer. Use a classic Spark session (SparkSession.builder without .remote()).")
    columns = list(X.columns)
    if not no_y:
        if y is None:
            raise ValueError(f"{type(estimator).__name__} requires y to be passed, but the "
                             "target y is None.")
        if not isinstance(y, str) or y not in columns:
            raise TypeError("with a Spark DataFrame X, y is the name of its label column "
                            f"(one of {columns}), not a {type(y).__name__}: a Spark "
                            "DataFrame's rows cannot be aligned with another collection's.")
        columns.remove(y)
    meta = _spark_meta(X, columns)
    _schema_from_meta(estimator, meta, reset=reset, categories=categories)
    Z = SparkTable(X, _EncodeFrame(estimator.schema_, columns, private=reset,
                                   dtypes=spark_batch_dtypes(X, columns)),
                   estimator.schema_.n_encoded)
    if no_y:
        return Z
    kind = _spark_meta(X, [y])[y].dtype.kind
    if y_numeric and kind not in "biuf":
        raise ValueError(f"y ({y!r}) must be a numeric column: {type(estimator).__name__} "
                         "needs numeric labels.")
    return Z, SparkTable(X, ReadColumns([y], ravel=True, dtype=None if kind == "O" else
                                        np.float64), None)
