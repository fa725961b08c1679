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

from ..preprocessing._schema import PublicSchemaEncoder, _is_frame
from ._dask import is_dask_collection, validate_dask_table

__all__ = ["TableSchema", "validate_table"]


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
        needs_encoder = bool(categories) or isinstance(bounds, dict)
        if needs_encoder:
            self.encoder = PublicSchemaEncoder(bounds=bounds, categories=categories,
                                               scale=False, clip=False)
            self.encoder._validate_params()
            self.encoder._fit_schema(X)
            self.lower, self.upper = self.encoder.lower_, self.encoder.upper_
            self.integer, self.categorical = self.encoder.integer_, self.encoder.categorical_
            self.groups = [(str(c), idx) for c, idx in self.encoder.feature_groups_.items()]
            self.feature_names_out = self.encoder.get_feature_names_out()
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

    def encode(self, X):
        """Encoded float matrix of rows already validated by :func:`validate_table`."""
        if self.encoder is not None:
            return self.encoder.transform(X)
        return X

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

    A dask array or DataFrame is validated by
    :func:`~skdpx.utils._dask.validate_dask_table`: the same checks and
    schema, the encoding applied per partition in the workers, and a dask
    array returned.

    Returns
    -------
    Z : ndarray of shape (n_samples, n_encoded), dtype float64
        (a row-chunked dask array for a dask ``X``)
    y : validated ``y``, only when given (``None`` is refused as
        scikit-learn's ``validate_data`` refuses it)
    """
    if is_dask_collection(X) or is_dask_collection(y):
        if not getattr(estimator, "_accepts_dask", False):
            # refused before anything is computed or spent (no row, no label
            # reaches the client)
            raise TypeError(
                f"{type(estimator).__name__} does not accept Dask collections: its DP-SGD "
                "training (or its algorithm) needs the rows in memory. Dask data are accepted "
                "in fit by DPLimeExplainer and by PrivRecourse with a fitted black box "
                "(see the docs' 'Scaling out with Dask').")
        if not is_dask_collection(X):
            raise TypeError("y is a Dask collection but X is not: pass both as Dask "
                            "collections (with the same partitions), or both in memory.")
        # the same checks and schema, as map-reduce passes
        return validate_dask_table(estimator, X, y, reset=reset, categories=categories)
    no_y = isinstance(y, str) and y == "no_validation"
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
        if no_y:
            validate_data(estimator, X, reset=reset, skip_check_array=True)
        else:
            _, y = validate_data(estimator, X, y, reset=reset, skip_check_array=True)
            y = np.asarray(y)
        if reset:
            estimator.schema_ = TableSchema(X, bounds=bounds, categories=categories,
                                            n_features=estimator.n_features_in_)
        Z = estimator.schema_.encode(X)
        return Z if no_y else (Z, y)
    kw = dict(dtype=np.float64, accept_sparse=False)
    if sparse.issparse(X) and accept_sparse:
        # one-hot CSR: densified (the estimators' linear algebra is dense);
        # the black box still receives CSR rows (TableSchema.decode)
        X_in = X
        X = X.toarray()
    else:
        X_in = X
    if no_y:
        Z = validate_data(estimator, X, reset=reset, **kw)
    else:
        Z, y = validate_data(estimator, X, y, reset=reset, y_numeric=y_numeric, **kw)
    if reset:
        estimator.schema_ = TableSchema(X_in, bounds=getattr(estimator, "bounds", None),
                                        categories=None, n_features=estimator.n_features_in_)
    return Z if no_y else (Z, y)
