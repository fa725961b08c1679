"""The UCI Adult (Census Income) dataset and a numeric encoding with public bounds.

The three original UCI files (``adult.data``, ``adult.test`` and
``adult.names``) are bundled, gzipped and byte for byte, in ``data/``. They
are parsed with the standard library and NumPy only; pandas is imported
lazily, and only when ``as_frame=True`` is requested.
"""

# The parsing is done once per split and cached (a few MB); every call
# returns fresh copies so that callers can modify what they get.

import csv
import functools
import gzip
import re
from importlib import resources

import numpy as np
from sklearn.utils import Bunch

from ..preprocessing import PublicSchemaEncoder

__all__ = ["adult_schema", "load_adult", "encode_adult"]

_PACKAGE = "skdpx.datasets"

#: The 14 features, in file order; the 15th column of the files is the label.
FEATURE_NAMES = (
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
)
TARGET_NAME = "income"
TARGET_NAMES = ("<=50K", ">50K")

#: The six integer features (``continuous`` in adult.names).
NUMERIC_FEATURES = (
    "age",
    "fnlwgt",
    "education-num",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
)
#: The eight categorical features.
CATEGORICAL_FEATURES = tuple(f for f in FEATURE_NAMES if f not in NUMERIC_FEATURES)

#: Public, a-priori ranges of the numeric features. None of them is read from
#: the data; see descr/adult.rst for the justification of each one.
PUBLIC_RANGES = {
    "age": (17.0, 90.0),  # extraction kept AAGE > 16; CPS top-codes age at 90
    "fnlwgt": (0.0, 1_500_000.0),  # a-priori cap on a survey weight
    "education-num": (1.0, 16.0),  # the 16 education levels of the schema
    "capital-gain": (0.0, 99_999.0),  # CPS top-code 99999
    "capital-loss": (0.0, 5_000.0),  # a-priori round cap; larger values clipped
    "hours-per-week": (1.0, 99.0),  # extraction kept HRSWK > 0; CPS top-code 99
}

#: The 16 education levels in schooling order: the Census code of each level is
#: its ``education-num`` (1 = Preschool, ..., 16 = Doctorate). Public coding,
#: never read from the records; adult.names lists the levels in another order.
EDUCATION_LEVELS = (
    "Preschool", "1st-4th", "5th-6th", "7th-8th", "9th", "10th", "11th", "12th",
    "HS-grad", "Some-college", "Assoc-voc", "Assoc-acdm", "Bachelors", "Masters",
    "Prof-school", "Doctorate",
)
#: ``education`` -> ``education-num``: the Census code of each level (public).
EDUCATION_NUM = {level: float(i + 1) for i, level in enumerate(EDUCATION_LEVELS)}

_SPLIT_FILES = {"train": "adult.data.gz", "test": "adult.test.gz"}
_SUBSETS = ("train", "test", "all")
_MISSING = "?"


# --------------------------------------------------------------------------
# reading the bundled files
# --------------------------------------------------------------------------


def _open_resource(*parts):
    return resources.files(_PACKAGE).joinpath(*parts).open("rb")


@functools.lru_cache(maxsize=None)
def _schema_categories():
    """Categories of each categorical feature, as listed in adult.names.

    Returns a dict ``feature -> tuple of str`` in schema order, except
    ``education``, in schooling order (:data:`EDUCATION_LEVELS`, the order of
    the Census codes). This reads the public schema only, never the records.
    """
    with _open_resource("data", "adult.names.gz") as fh:
        text = gzip.decompress(fh.read()).decode("ascii")
    pattern = re.compile(r"^([A-Za-z-]+):\s*(.*?)\.\s*$")
    categories = {}
    for line in text.splitlines():
        match = pattern.match(line)
        if match is None or match.group(1) not in FEATURE_NAMES:
            continue
        name, values = match.groups()
        if values == "continuous":
            continue
        categories[name] = tuple(v.strip() for v in values.split(","))
    if set(categories) != set(CATEGORICAL_FEATURES):  # pragma: no cover
        raise RuntimeError(
            "adult.names does not list the categories of "
            f"{sorted(set(CATEGORICAL_FEATURES) - set(categories))}"
        )
    if set(categories["education"]) != set(EDUCATION_LEVELS):  # pragma: no cover
        raise RuntimeError("adult.names lists other education levels than the Census codes")
    categories["education"] = EDUCATION_LEVELS
    return categories


@functools.lru_cache(maxsize=None)
def _read_split(split):
    """Parse one bundled file into typed arrays (cached, read-only).

    Returns ``(numeric, codes, target)``: an int64 array (n, 6) of the numeric
    features, an int array (n, 8) of schema category codes (-1 for a missing
    value) and the int64 target.
    """
    with _open_resource("data", _SPLIT_FILES[split]) as fh:
        text = gzip.decompress(fh.read()).decode("ascii")
    lines = text.splitlines()
    if split == "test":
        if not lines[0].startswith("|"):  # pragma: no cover
            raise RuntimeError("adult.test: expected a first comment line")
        lines = lines[1:]
    rows = [row for row in csv.reader(lines, skipinitialspace=True) if row]
    if any(len(row) != len(FEATURE_NAMES) + 1 for row in rows):  # pragma: no cover
        raise RuntimeError(f"{_SPLIT_FILES[split]}: a record does not have 15 fields")
    columns = dict(zip(FEATURE_NAMES + (TARGET_NAME,), zip(*rows)))

    numeric = np.column_stack(
        [np.asarray(columns[f], dtype=str).astype(np.int64) for f in NUMERIC_FEATURES]
    )
    schema = _schema_categories()
    codes = np.column_stack(
        [
            _codes_from_strings(np.asarray(columns[f], dtype=str), f, schema[f])
            for f in CATEGORICAL_FEATURES
        ]
    )
    labels = np.char.rstrip(np.asarray(columns[TARGET_NAME], dtype=str), ".")
    bad = ~np.isin(labels, TARGET_NAMES)
    if bad.any():  # pragma: no cover
        raise RuntimeError(f"unexpected income labels {sorted(set(labels[bad]))}")
    target = (labels == TARGET_NAMES[1]).astype(np.int64)
    for arr in (numeric, codes, target):
        arr.flags.writeable = False
    return numeric, codes, target


def _codes_from_strings(values, feature, categories):
    """Map a str array to schema codes (-1 for '?'); no loop over the rows.

    Raises ValueError naming any value that is not a schema category.
    """
    index = {c: i for i, c in enumerate(categories)}
    index[_MISSING] = -1
    uniques, inverse = np.unique(values, return_inverse=True)
    unknown = [u for u in uniques.tolist() if u not in index]
    if unknown:
        raise ValueError(
            f"Unknown categories {unknown} for feature {feature!r}; "
            f"the public schema lists {list(categories)}."
        )
    lookup = np.array([index[u] for u in uniques.tolist()], dtype=np.intp)
    return lookup[inverse.reshape(-1)]


def _read_subset(subset):
    if subset == "all":
        parts = [_read_split("train"), _read_split("test")]
        return tuple(np.concatenate(arrays) for arrays in zip(*parts))
    return tuple(arr.copy() for arr in _read_split(subset))


def _descr():
    return (
        resources.files(_PACKAGE)
        .joinpath("descr", "adult.rst")
        .read_text(encoding="utf-8")
    )


# --------------------------------------------------------------------------
# load_adult
# --------------------------------------------------------------------------


def load_adult(*, subset="train", return_X_y=False, as_frame=False):
    """Load the UCI Adult (Census Income) dataset bundled with skdpx.

    Binary classification: does a person earn more than 50K dollars a year?
    The original UCI files are shipped with the package, so nothing is
    downloaded.

    =================   ===================================
    Classes                                               2
    Samples (train)                                  32,561
    Samples (test)                                   16,281
    Samples (all)                                    48,842
    Features             14 (6 integer, 8 categorical)
    =================   ===================================

    Parameters
    ----------
    subset : {"train", "test", "all"}, default="train"
        Which part to load: ``"train"`` is ``adult.data``, ``"test"`` is
        ``adult.test``, ``"all"`` is the training records followed by the
        test records.

    return_X_y : bool, default=False
        If True, return ``(data, target)`` instead of a Bunch.

    as_frame : bool, default=False
        If True, ``data`` is a pandas DataFrame (int64 columns for the six
        integer features, ``category`` columns with the schema categories for
        the others, missing values as NaN; ``education`` is an *ordered*
        categorical in schooling order, Preschool < ... < Doctorate, the order
        of the Census codes in ``education-num``), ``target`` a pandas Series named
        ``"income"`` and ``frame`` a DataFrame with both. Requires pandas,
        which is imported only in that case.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        Dictionary-like object with the attributes:

        data : ndarray of shape (n_samples, 14), dtype=object, or DataFrame
            The raw features. In the ndarray the six integer features hold
            Python ints, the categorical features hold str, and a missing
            value (``"?"`` in the files) is ``np.nan``.
        target : ndarray of shape (n_samples,), dtype=int64, or Series
            1 for ``">50K"``, 0 for ``"<=50K"`` (the trailing ``"."`` of the
            test labels is stripped).
        feature_names : list of str
            The 14 feature names, in column order.
        target_names : list of str
            ``["<=50K", ">50K"]``: the label of target 0 and of target 1.
        frame : DataFrame or None
            ``data`` with the ``"income"`` column appended when
            ``as_frame=True``, else None.
        categories : dict of str -> list of str
            For each categorical feature, its categories as listed in the
            public schema ``adult.names`` (in schema order). They are not
            read from the records: some categories never occur in a subset
            (e.g. ``"Holand-Netherlands"`` in the test split).
        DESCR : str
            Description of the dataset: source, citation, license, counts and
            the public bounds used by :func:`encode_adult`.

    (data, target) : tuple if ``return_X_y`` is True
        ``data`` and ``target`` as described above.

    Raises
    ------
    ValueError
        If ``subset`` is not one of ``"train"``, ``"test"``, ``"all"``.

    See Also
    --------
    encode_adult : Numeric encoding of these features with public bounds.

    Notes
    -----
    Missing values occur only in ``workclass``, ``occupation`` and
    ``native-country``. They are ``np.nan`` in the object ndarray, as in the
    DataFrame, which is also scikit-learn's default missing-value marker
    (e.g. :class:`~sklearn.impute.SimpleImputer`).

    Source: Becker, B. & Kohavi, R. (1996). *Adult* [Dataset]. UCI Machine
    Learning Repository. https://doi.org/10.24432/C5XW20 (CC BY 4.0).

    Examples
    --------
    >>> from skdpx.datasets import load_adult
    >>> adult = load_adult(subset="train")
    >>> adult.data.shape, adult.target.shape
    ((32561, 14), (32561,))
    >>> int(adult.target.sum())
    7841
    >>> adult.feature_names[:3]
    ['age', 'workclass', 'fnlwgt']
    >>> X, y = load_adult(subset="test", return_X_y=True)
    >>> X.shape
    (16281, 14)
    """
    if not isinstance(subset, str) or subset not in _SUBSETS:
        raise ValueError(
            f"subset must be one of 'train', 'test' or 'all'; got {subset!r}."
        )
    numeric, codes, target = _read_subset(subset)
    schema = _schema_categories()
    n_samples = target.shape[0]

    frame = None
    if as_frame:
        try:
            import pandas as pd  # optional dependency, only needed here
        except ImportError as exc:
            raise ImportError(
                "load_adult(as_frame=True) requires pandas, which is not a "
                "dependency of skdpx; install it (pip install pandas) or use "
                "as_frame=False."
            ) from exc

        columns = {}
        for feature in FEATURE_NAMES:
            if feature in NUMERIC_FEATURES:
                j = NUMERIC_FEATURES.index(feature)
                columns[feature] = pd.Series(numeric[:, j], dtype=np.int64)
            else:
                j = CATEGORICAL_FEATURES.index(feature)
                # education is ordered (schooling order): "education only goes
                # up" can then be said (increasing_features)
                columns[feature] = pd.Series(
                    pd.Categorical.from_codes(codes[:, j], categories=schema[feature],
                                              ordered=feature == "education")
                )
        data = pd.DataFrame(columns)
        target = pd.Series(target, name=TARGET_NAME, dtype=np.int64)
        frame = pd.concat([data, target], axis=1)
    else:
        data = np.empty((n_samples, len(FEATURE_NAMES)), dtype=object)
        for feature in FEATURE_NAMES:
            col = FEATURE_NAMES.index(feature)
            if feature in NUMERIC_FEATURES:
                # assigning an int64 array into an object array stores Python ints
                data[:, col] = numeric[:, NUMERIC_FEATURES.index(feature)]
            else:
                # the last entry (np.nan) is picked by the code -1 of a missing value
                objects = np.array(list(schema[feature]) + [np.nan], dtype=object)
                data[:, col] = objects[codes[:, CATEGORICAL_FEATURES.index(feature)]]

    if return_X_y:
        return data, target
    return Bunch(
        data=data,
        target=target,
        frame=frame,
        feature_names=list(FEATURE_NAMES),
        target_names=list(TARGET_NAMES),
        categories={f: list(c) for f, c in schema.items()},
        DESCR=_descr(),
    )


# --------------------------------------------------------------------------
# encode_adult
# --------------------------------------------------------------------------


def _check_feature_list(values, param):
    if isinstance(values, str):
        raise TypeError(
            f"{param} must be a list of feature names, not a string; "
            f"use {param}=[{values!r}]."
        )
    values = list(values)
    unknown = [v for v in values if v not in FEATURE_NAMES]
    if unknown:
        raise ValueError(
            f"Unknown Adult feature names in {param}: {unknown}. "
            f"Valid names are {list(FEATURE_NAMES)}."
        )
    duplicated = sorted({v for v in values if values.count(v) > 1})
    if duplicated:
        raise ValueError(f"Duplicated feature names in {param}: {duplicated}.")
    return values


def _get_columns(X, features):
    """Return ``{feature: 1-d array}`` for the requested features of X."""
    if hasattr(X, "columns") and hasattr(X, "iloc"):  # a pandas DataFrame
        missing = [f for f in features if f not in X.columns]
        if missing:
            raise ValueError(f"X has no column(s) {missing}.")
        return {f: X[f].to_numpy(dtype=object) for f in features}, X.shape[0]
    X = np.asarray(X, dtype=object)
    if X.ndim != 2 or X.shape[1] != len(FEATURE_NAMES):
        raise ValueError(
            "X must be a 2-d array with the 14 Adult features in the column "
            f"order of load_adult (or a DataFrame); got shape {X.shape}."
        )
    return {f: X[:, FEATURE_NAMES.index(f)] for f in features}, X.shape[0]


def _is_missing(values):
    """Vectorised missing mask of an object array: None, NaN or '?'."""
    values = np.asarray(values, dtype=object)
    return (
        np.equal(values, None)
        | np.not_equal(values, values)  # NaN is the only value != itself
        | np.equal(values, _MISSING)
    )


def adult_schema(*, features=None, drop=("fnlwgt",)):
    """The public schema of Adult: numeric bounds and categorical levels.

    What the estimators' ``bounds`` and ``categories`` parameters take for
    the raw Adult DataFrame of :func:`load_adult` (``as_frame=True``). Both
    come from public sources (``adult.names`` and Census top-codes), never
    from the records; see :func:`encode_adult` for the ranges.

    Parameters
    ----------
    features : list of str, default=None
        The columns of the table (default: the 14 features, minus ``drop``).
    drop : list of str, default=("fnlwgt",)
        Left out when ``features`` is None.

    Returns
    -------
    schema : :class:`~sklearn.utils.Bunch`
        ``bounds``: dict ``{numeric column: (lower, upper)}``;
        ``categories``: dict ``{categorical column: [level, ...]}``
        (``education`` in schooling order, the order of its Census codes, so
        that ``increasing_features=["education"]`` means what it says on a
        column of strings too);
        ``linked_features``: ``[("education", "education-num", {level:
        code})]`` when both columns are in ``features`` (else empty), for the
        counterfactual and recourse estimators' parameter of that name;
        ``features``: the columns, in file order.

    Examples
    --------
    >>> from skdpx.datasets import adult_schema
    >>> schema = adult_schema()
    >>> schema.bounds["age"], schema.categories["sex"]
    ((17.0, 90.0), ['Female', 'Male'])
    """
    drop = _check_feature_list(() if drop is None else drop, "drop")
    selected = (_check_feature_list(features, "features") if features is not None
                else [f for f in FEATURE_NAMES if f not in drop])
    categories = _schema_categories()
    linked = ([("education", "education-num", dict(EDUCATION_NUM))]
              if {"education", "education-num"} <= set(selected) else [])
    return Bunch(
        bounds={f: PUBLIC_RANGES[f] for f in selected if f in NUMERIC_FEATURES},
        categories={f: list(categories[f]) for f in selected if f in CATEGORICAL_FEATURES},
        linked_features=linked,
        features=list(selected),
    )


def encode_adult(X, *, features=None, drop=("fnlwgt",), scale=True):
    """Encode raw Adult features as a float matrix with public bounds.

    Numeric features are clipped to a public range and, by default, min-max
    scaled to [0, 1] with that range; categorical features are one-hot
    encoded with the categories of the public schema (``adult.names``). The
    bounds of every output column are therefore known *before* looking at the
    data.

    Parameters
    ----------
    X : ndarray of shape (n_samples, 14) or DataFrame
        Raw Adult features as returned by :func:`load_adult`: the object
        array (columns in the order of ``load_adult().feature_names``) or the
        DataFrame (columns selected by name, so it only needs the features
        that are encoded). A missing categorical value may be ``np.nan``,
        ``None`` or ``"?"``.

    features : list of str, default=None
        Original features to encode, in this order. None means all 14
        features, in file order. For example
        ``["age", "education-num", "capital-gain", "capital-loss",
        "hours-per-week"]`` gives the five continuous person attributes.

    drop : list of str, default=("fnlwgt",)
        Features left out. ``fnlwgt`` is dropped by default: it is a survey
        weight, not an attribute of the person, and it has no natural bound.
        Pass ``drop=()`` to keep it. A feature cannot be both in ``features``
        and in ``drop``.

    scale : bool, default=True
        If True, min-max scale every numeric column to [0, 1] with its public
        range. If False, numeric columns keep their (clipped) original units.

    Returns
    -------
    encoded : :class:`~sklearn.utils.Bunch`
        Dictionary-like object with the attributes:

        data : ndarray of shape (n_samples, n_columns), dtype=float64
            The encoded features.
        feature_names : list of str
            One name per column: the feature name for a numeric column
            (``"age"``) and ``"feature=category"`` for a one-hot column
            (``"workclass=Private"``).
        bounds : tuple of two ndarrays of shape (n_columns,)
            ``(lower, upper)``: public bounds of each output column. Every
            value of ``data`` lies in them. With ``scale=True`` they are 0 and
            1 for every column.
        raw_bounds : tuple of two ndarrays of shape (n_columns,)
            ``(lower, upper)`` before scaling: the public range of each
            numeric column and [0, 1] for one-hot columns. ``lower + data *
            (upper - lower)`` undoes the scaling (up to the clipping).
        columns : dict of str -> ndarray of int
            For each encoded original feature, the indices of its output
            columns.

    Raises
    ------
    ValueError
        If a categorical value is not a category of the public schema (the
        message names it), if a numeric value is missing, not finite or not a
        number, or if ``X``, ``features`` or ``drop`` are invalid.

    See Also
    --------
    load_adult : Load the raw features.

    Notes
    -----
    **Why public bounds matter for differential privacy.** DP mechanisms
    calibrate their noise to the sensitivity of a statistic, which depends on
    the range of the inputs. If that range is computed from the data (its
    minimum and maximum), the bounds themselves are a function of individual
    records -- the maximum of ``capital-loss`` *is* one person's value -- and
    publishing or using them without spending privacy budget breaks the
    guarantee. The ranges used here are fixed a priori from public
    information (the extraction rule, Census top-codes and the schema) and do
    not depend on ``X``: encoding 10 rows or all rows gives the same bounds.

    Public ranges of the numeric features (values outside are clipped):

    ==============  ===============  ==============================================
    feature         range            justification
    ==============  ===============  ==============================================
    age             [17, 90]         extraction kept AAGE > 16; Census top-code 90
    education-num   [1, 16]          the 16 education levels of the schema
    capital-gain    [0, 99999]       Census top-code 99999
    capital-loss    [0, 5000]        a-priori round cap; larger values are clipped
    hours-per-week  [1, 99]          extraction kept HRSWK > 0; Census top-code 99
    fnlwgt          [0, 1500000]     a-priori cap (dropped by default)
    ==============  ===============  ==============================================

    A missing categorical value gives an all-zero one-hot block, so every
    block sums to 1 for an observed value and to 0 for a missing one.
    Numeric features of Adult have no missing values; a missing one raises.

    Examples
    --------
    >>> from skdpx.datasets import load_adult, encode_adult
    >>> X, y = load_adult(subset="train", return_X_y=True)
    >>> enc = encode_adult(X, features=["age", "education-num", "capital-gain",
    ...                                 "capital-loss", "hours-per-week"])
    >>> enc.data.shape
    (32561, 5)
    >>> enc.bounds[0].tolist(), enc.bounds[1].tolist()
    ([0.0, 0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0, 1.0])
    >>> enc.raw_bounds[1].tolist()
    [90.0, 16.0, 99999.0, 5000.0, 99.0]
    >>> full = encode_adult(X)  # 13 features: fnlwgt dropped
    >>> full.data.shape
    (32561, 104)
    >>> full.feature_names[1]
    'workclass=Private'
    >>> full.columns["workclass"].tolist()
    [1, 2, 3, 4, 5, 6, 7, 8]
    """
    drop = _check_feature_list(() if drop is None else drop, "drop")
    if features is None:
        selected = [f for f in FEATURE_NAMES if f not in drop]
    else:
        selected = _check_feature_list(features, "features")
        both = [f for f in selected if f in drop]
        if both:
            raise ValueError(
                f"Feature(s) {both} are both in features and in drop; "
                "remove them from one of the two (e.g. pass drop=() to keep "
                "fnlwgt)."
            )
    if not selected:
        raise ValueError("No feature left to encode.")
    if not isinstance(scale, (bool, np.bool_)):
        raise TypeError(f"scale must be a bool; got {scale!r}.")

    values, n_samples = _get_columns(X, selected)
    schema = _schema_categories()
    table = np.empty((n_samples, len(selected)), dtype=object)
    for i, feature in enumerate(selected):
        col = values[feature]
        missing = _is_missing(col)
        if feature in NUMERIC_FEATURES:
            if missing.any():
                raise ValueError(f"Numeric feature {feature!r} has missing values.")
            try:
                num = np.asarray(col, dtype=np.float64)
            except (TypeError, ValueError) as exc:
                raise ValueError(
                    f"Numeric feature {feature!r} has non-numeric values."
                ) from exc
            if not np.isfinite(num).all():
                raise ValueError(f"Numeric feature {feature!r} has non-finite values.")
            table[:, i] = num
        else:
            col = np.asarray(col, dtype=object).copy()
            col[missing] = None  # an all-zero block
            known = np.isin(col.astype(str), np.asarray(schema[feature]))
            if (~missing & ~known).any():
                _codes_from_strings(col[~missing].astype(str), feature, schema[feature])
            table[:, i] = np.where(missing, None, col.astype(str))
    if all(f in NUMERIC_FEATURES for f in selected):
        table = table.astype(np.float64)
    encoder = PublicSchemaEncoder(
        bounds={i: PUBLIC_RANGES[f] for i, f in enumerate(selected) if f in NUMERIC_FEATURES},
        categories={i: list(schema[f]) for i, f in enumerate(selected)
                    if f not in NUMERIC_FEATURES},
        scale=bool(scale),
    )
    # the schema only (even of zero rows): the values were checked above
    encoder._fit_schema(table)
    columns = {f: encoder.feature_groups_[i] for i, f in enumerate(selected)}
    names, raw_lower, raw_upper = [], [], []
    for f in selected:
        if f in NUMERIC_FEATURES:
            names.append(f)
            raw_lower.append(PUBLIC_RANGES[f][0])
            raw_upper.append(PUBLIC_RANGES[f][1])
        else:
            names.extend(f"{f}={c}" for c in schema[f])
            raw_lower += [0.0] * len(schema[f])
            raw_upper += [1.0] * len(schema[f])
    return Bunch(
        data=encoder.transform(table),
        feature_names=names,
        bounds=(encoder.lower_.copy(), encoder.upper_.copy()),
        raw_bounds=(np.asarray(raw_lower, dtype=np.float64),
                    np.asarray(raw_upper, dtype=np.float64)),
        columns=columns,
    )
