"""A public schema for any table, built from public facts and reviewed before use.

Every skdpx estimator, :class:`~skdpx.preprocessing.PublicSchemaEncoder`
and the :mod:`skdpx.inspection` functions take the same two declarations
of a table: ``bounds`` (``{column: (lower, upper)}``) and ``categories``
(``{column: [level, ...]}``). :class:`PublicSchema` holds both as a
read-only mapping with exactly those two keys, so that one ``**schema``
passes them::

    DPLimeExplainer(model, **schema, epsilon=1.0)

and builds them from what is public: the declared pandas dtypes of a
table (:meth:`PublicSchema.from_dtypes`), a data dictionary
(:meth:`PublicSchema.from_dictionary`) or a public sample of the
population (:meth:`PublicSchema.from_sample`). Its :meth:`~PublicSchema.summary`
is a table to review before anything private is fitted.
"""

import math
from collections.abc import Iterable, Mapping
from numbers import Integral, Real

import numpy as np

from ._schema import column_list

__all__ = ["PublicSchema"]

#: The levels shown per column in a summary.
_PREVIEW = 6
#: The dictionary's fields.
_FIELDS = ("column", "lower", "upper", "levels")


def _is_missing(value):
    """A scalar that stands for "not given": None, NaN, pandas' NA/NaT, or ``""``."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return True
    if isinstance(value, (str, bytes, Mapping)) or np.ndim(value) != 0:
        return False
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is there wherever DataFrames are
        return isinstance(value, float) and math.isnan(value)
    return bool(pd.isna(value))


def _number(value, name):
    """A finite real number (int kept as int), or a ValueError naming ``name``."""
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise ValueError(f"{name} must be a number; got {value!r}.") from None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (Real, np.number)):
        raise ValueError(f"{name} must be a number; got {value!r}.")
    if isinstance(value, (Integral, np.integer)):
        return int(value)
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite; got {value!r}.")
    return value


def _check_pair(column, pair):
    if isinstance(pair, (str, bytes)) or not isinstance(pair, Iterable):
        raise ValueError(f"bounds[{column!r}] must be a (lower, upper) pair; got {pair!r}.")
    pair = tuple(pair)
    if len(pair) != 2:
        raise ValueError(f"bounds[{column!r}] must be a (lower, upper) pair; got {pair!r}.")
    lower = _number(pair[0], f"the lower bound of {column!r}")
    upper = _number(pair[1], f"the upper bound of {column!r}")
    if not lower < upper:
        raise ValueError(f"bounds[{column!r}] = {pair!r}: the lower bound must be below the "
                         "upper bound.")
    return lower, upper


def _check_levels(column, levels):
    if isinstance(levels, (str, bytes)) or not isinstance(levels, Iterable):
        raise ValueError(f"categories[{column!r}] must be a list of levels; got {levels!r}.")
    levels = [lv.item() if isinstance(lv, np.generic) else lv for lv in levels]
    if not levels:
        raise ValueError(f"categories[{column!r}] is empty: declare at least one level.")
    if any(_is_missing(lv) for lv in levels):
        raise ValueError(f"categories[{column!r}] holds a missing value (None, NaN or ''): "
                         "a missing value is not a level (it encodes as an all-zero block).")
    try:
        unique = len(set(levels)) == len(levels)
    except TypeError:
        raise ValueError(f"categories[{column!r}] holds an unhashable level.") from None
    if not unique:
        raise ValueError(f"categories[{column!r}] has duplicated levels.")
    return tuple(levels)


def _kind(dtype):
    return getattr(dtype, "kind", "O")


def _is_categorical(dtype):
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover
        return False
    return isinstance(dtype, pd.CategoricalDtype)


def _dtypes_of(frame):
    """``{column: dtype}`` of a DataFrame (pandas or Dask) or of a mapping of dtypes."""
    dtypes = getattr(frame, "dtypes", frame)
    if not hasattr(dtypes, "items"):
        raise TypeError(f"expected a DataFrame or a {{column: dtype}} mapping; got "
                        f"{type(frame).__name__}.")
    return dict(dtypes.items())


class PublicSchema(Mapping):
    """The public ``bounds`` and ``categories`` of a table, in one object to unpack.

    A read-only mapping with exactly two keys: ``"bounds"`` (a dict
    ``{column: (lower, upper)}`` for numeric columns) and ``"categories"``
    (a dict ``{column: [level, ...]}`` for categorical ones), so that
    ``Estimator(**schema, epsilon=...)`` and
    ``PublicSchemaEncoder(**schema)`` take both in one line. Each access
    returns a fresh copy: a schema never changes once built.

    What makes a schema public is where it comes from, never the private
    rows it is used on: a bound taken from the rows is one person's value,
    a level held by one person reveals that person. Build it from public
    facts -- declared dtypes (:meth:`from_dtypes`), a data dictionary
    (:meth:`from_dictionary`), a public sample of the population
    (:meth:`from_sample`) or by hand -- combine the parts with ``|``, and
    review :meth:`summary` (also what the schema prints as) before fitting.
    A numeric column left without bounds has them estimated with DP inside
    the estimator's epsilon (with a ``PrivacyLeakWarning`` naming it); a
    non-numeric column left without levels is refused before anything is
    spent. :meth:`uncovered` lists both kinds for a given table. A boolean
    column needs neither: its bounds (0, 1) are those of its type.

    Parameters
    ----------
    bounds : dict or None, default=None
        ``{column: (lower, upper)}``: finite numbers, ``lower < upper``.
    categories : dict or None, default=None
        ``{column: [level, ...]}``: non-empty lists of distinct, non-missing
        levels, in the order the results should use (the order of an ordered
        categorical column).
    source : str, default="declared"
        Where these declarations come from, shown by :meth:`summary`.

    Attributes
    ----------
    bounds : dict
        ``{column: (lower, upper)}`` (a copy).
    categories : dict
        ``{column: [level, ...]}`` (a copy).
    columns : list
        The declared columns, in order.

    See Also
    --------
    skdpx.preprocessing.PublicSchemaEncoder : the encoder that uses a schema.
    skdpx.datasets.adult_schema : Adult's public schema.

    Examples
    --------
    >>> import pandas as pd
    >>> from skdpx.preprocessing import PublicSchema, PublicSchemaEncoder
    >>> X = pd.DataFrame({
    ...     "age": [25, 61, 40],
    ...     "sex": pd.Series(["F", "M", "F"], dtype=pd.CategoricalDtype(["F", "M"])),
    ...     "job": ["clerk", "nurse", "clerk"]})
    >>> data_dictionary = [
    ...     {"column": "age", "lower": 17, "upper": 90},
    ...     {"column": "job", "levels": "clerk|craft|nurse"}]
    >>> schema = (PublicSchema.from_dtypes(X)
    ...           | PublicSchema.from_dictionary(data_dictionary))
    >>> schema.uncovered(X)
    []
    >>> print(schema)
    PublicSchema: 1 numeric and 2 categorical columns
    column        kind lower upper n_levels              levels     source
       sex categorical                    2                F, M      dtype
       age     numeric  17.0  90.0                              dictionary
       job categorical                    3 clerk, craft, nurse dictionary
    >>> PublicSchemaEncoder(**schema).fit_transform(X).round(2).tolist()[0]
    [0.11, 1.0, 0.0, 1.0, 0.0, 0.0]
    """

    __slots__ = ("_entries",)

    def __init__(self, bounds=None, categories=None, *, source="declared"):
        bounds = {} if bounds is None else bounds
        categories = {} if categories is None else categories
        for name, value in (("bounds", bounds), ("categories", categories)):
            if not isinstance(value, Mapping):
                raise TypeError(f"{name} must be a dict {{column: ...}} or None; "
                                f"got {type(value).__name__}.")
        both = [c for c in bounds if c in categories]
        if both:
            raise ValueError(f"column(s) {column_list(both)} have both bounds and levels: a "
                             "column is numeric (bounds) or categorical (categories), not both.")
        if not isinstance(source, str):
            raise TypeError(f"source must be a string; got {source!r}.")
        entries = {c: ("numeric", _check_pair(c, p), source) for c, p in bounds.items()}
        entries.update((c, ("categorical", _check_levels(c, v), source))
                       for c, v in categories.items())
        self._entries = entries

    @classmethod
    def _of(cls, entries):
        schema = cls.__new__(cls)
        schema._entries = entries
        return schema

    # ------------------------------------------------------------ mapping

    def __getitem__(self, key):
        if key == "bounds":
            return {c: v for c, (kind, v, _) in self._entries.items() if kind == "numeric"}
        if key == "categories":
            return {c: list(v) for c, (kind, v, _) in self._entries.items()
                    if kind == "categorical"}
        raise KeyError(key)

    def __iter__(self):
        return iter(("bounds", "categories"))

    def __len__(self):
        return 2

    @property
    def bounds(self):
        return self["bounds"]

    @property
    def categories(self):
        return self["categories"]

    @property
    def columns(self):
        return list(self._entries)

    def __reduce__(self):
        return (type(self)._of, (dict(self._entries),))

    # -------------------------------------------------------- constructors

    @classmethod
    def from_dtypes(cls, frame):
        """The levels of every column whose dtype is a pandas ``CategoricalDtype``.

        Reads the dtypes only (``frame.dtypes``: metadata, not one value), so
        the frame may have no row at all. A categorical dtype's levels are
        public when they were *declared* -- ``pd.CategoricalDtype([...])``
        from a codebook, or ``read_csv(dtype=...)`` with one -- but **not**
        when pandas derived them from the private values
        (``astype("category")`` or ``pd.Categorical(values)`` without
        ``categories=``): those levels are exactly the values present in
        the rows, and a level only one person holds reveals that person.
        Declare such a dtype from public facts, or use
        :meth:`from_dictionary`.

        Numeric columns get no bounds here: a dtype says nothing about a
        range (bounds come from :meth:`from_dictionary` or
        :meth:`from_sample`). A boolean column needs none.

        Parameters
        ----------
        frame : DataFrame (pandas or Dask) or dict of ``{column: dtype}``

        Returns
        -------
        PublicSchema
            ``categories`` only, with source ``"dtype"``.
        """
        categories = {}
        for column, dtype in _dtypes_of(frame).items():
            if not _is_categorical(dtype):
                continue
            levels = dtype.categories.tolist()
            if levels == ["__UNKNOWN_CATEGORIES__"]:  # a Dask frame's unknown categories
                raise ValueError(f"column {column!r} has unknown categories (a Dask "
                                 "categorical whose levels were not declared): declare them "
                                 "with a pd.CategoricalDtype, or use from_dictionary.")
            categories[column] = levels
        return cls(categories=categories, source="dtype")

    @classmethod
    def from_sample(cls, sample, *, margin=0.0, integer=True):
        """Bounds and levels read from a **public** sample of the population.

        .. warning::

           ``sample`` must be public data -- a published extract, last
           year's released file, a synthetic or reference table -- and
           **never the private rows** (nor a part of them) that the
           estimator is then fitted on. Bounds read from the private rows
           are their extremes (one person's values), and their levels
           include the rare ones only one person holds: a schema taken from
           them voids the guarantee of every release that uses it.

        Numeric columns get the sample's minimum and maximum of their
        finite values, widened by ``margin``; object and string columns the
        sorted distinct non-missing values; a pandas categorical column
        its dtype's categories (the sample's declared levels, including
        those no row holds). Boolean columns need nothing (their type
        bounds them); other dtypes (datetimes, ...) are left out: encode
        them first.

        Parameters
        ----------
        sample : DataFrame (or what ``pandas.DataFrame`` takes)
            Public rows with the columns of the private table.
        margin : float >= 0, default=0.0
            Each numeric range is widened by this fraction of its width on
            both sides (values beyond the sample's extremes are otherwise
            clipped to them).
        integer : bool, default=True
            Round the bounds of integer columns outward to integers.

        Returns
        -------
        PublicSchema
            With source ``"sample"``.
        """
        import pandas as pd

        if not (isinstance(margin, Real) and not isinstance(margin, bool)
                and math.isfinite(margin) and margin >= 0):
            raise ValueError(f"margin must be a finite number >= 0; got {margin!r}.")
        if not isinstance(sample, pd.DataFrame):
            sample = pd.DataFrame(sample)
        if sample.shape[0] == 0:
            raise ValueError("the public sample has no row.")
        dtypes = dict(sample.dtypes.items())
        numeric = [c for c, d in dtypes.items() if _kind(d) in "iuf" and not _is_categorical(d)]
        bounds = {}
        if numeric:
            values = sample[numeric].to_numpy(dtype=float, na_value=np.nan)
            values = np.where(np.isfinite(values), values, np.nan)
            empty = np.isnan(values).all(axis=0)
            if empty.any():
                raise ValueError(f"column(s) {column_list(np.asarray(numeric)[empty])} have no "
                                 "finite value in the public sample: declare their bounds.")
            lower, upper = np.nanmin(values, axis=0), np.nanmax(values, axis=0)
            single = lower == upper
            if single.any():
                raise ValueError(f"column(s) {column_list(np.asarray(numeric)[single])} take one "
                                 "value in the public sample: declare their bounds (or give "
                                 "a larger sample).")
            width = upper - lower
            lower, upper = lower - margin * width, upper + margin * width
            for column, lo, hi in zip(numeric, lower, upper):
                if integer and _kind(dtypes[column]) in "iu":
                    lo, hi = int(math.floor(lo)), int(math.ceil(hi))
                bounds[column] = (lo, hi)
        categories = {}
        for column, dtype in dtypes.items():
            if _is_categorical(dtype):
                categories[column] = dtype.categories.tolist()
            elif _kind(dtype) in "OSU" or isinstance(dtype, pd.StringDtype):
                col = sample[column]
                given = col.notna() & ~col.map(lambda v: isinstance(v, str) and not v.strip())
                levels = pd.unique(col[given].to_numpy(dtype=object))  # "" is "not given"
                if len(levels) == 0:
                    raise ValueError(f"column {column!r} has no value in the public sample: "
                                     "declare its levels.")
                try:
                    levels = sorted(levels)
                except TypeError:  # levels of several types: in the order they appear
                    levels = list(levels)
                categories[column] = levels
        return cls(bounds=bounds, categories=categories, source="sample")

    @classmethod
    def from_dictionary(cls, table, *, sep="|"):
        """Bounds and levels from a data dictionary (a codebook).

        One entry per column, with the fields ``column`` and either
        ``lower`` and ``upper`` (a numeric column) or ``levels`` (a
        categorical one). Other fields (a description, a unit) are ignored.

        Parameters
        ----------
        table : DataFrame or iterable of dict
            The dictionary: e.g. ``pd.read_csv("codebook.csv")`` or
            ``[{"column": "age", "lower": 17, "upper": 90},
            {"column": "sex", "levels": ["F", "M"]}]``. A missing value
            (empty cell, NaN, None) is a field not given.
        sep : str, default="|"
            Separates the levels of a ``levels`` field given as one string
            (``"F|M"``; spaces around each level are stripped). Such levels
            are strings: give a list to keep numeric levels numbers.

        Returns
        -------
        PublicSchema
            With source ``"dictionary"``.

        Raises
        ------
        ValueError
            An entry with no ``column``, a column listed twice, an entry
            with both bounds and levels, with neither, with one bound only,
            or with bounds or levels that are not valid; the message names
            the entry and its column.
        """
        if hasattr(table, "to_dict") and hasattr(table, "columns"):
            rows = table.to_dict("records")
        elif isinstance(table, (str, bytes, Mapping)) or not isinstance(table, Iterable):
            raise TypeError("the data dictionary must be a DataFrame or a list of dicts with "
                            f"the fields {list(_FIELDS)}; got {type(table).__name__}.")
        else:
            rows = list(table)
        bounds, categories, seen = {}, {}, set()
        for i, row in enumerate(rows):
            if not isinstance(row, Mapping):
                raise ValueError(f"data dictionary entry {i} is not a dict; got {row!r}.")
            column = row.get("column")
            if _is_missing(column):
                raise ValueError(f"data dictionary entry {i} has no 'column' field; the fields "
                                 f"are {list(_FIELDS)}.")
            where = f"data dictionary entry {i} (column {column!r})"
            if column in seen:
                raise ValueError(f"{where}: the column is listed twice.")
            seen.add(column)
            lower, upper, levels = (None if _is_missing(row.get(k)) else row.get(k)
                                    for k in ("lower", "upper", "levels"))
            has_bounds = lower is not None or upper is not None
            if has_bounds and levels is not None:
                raise ValueError(f"{where} gives both bounds and levels: a column is numeric "
                                 "(lower, upper) or categorical (levels).")
            if not has_bounds and levels is None:
                raise ValueError(f"{where} gives neither bounds ('lower' and 'upper') nor "
                                 "'levels'.")
            if has_bounds and (lower is None or upper is None):
                raise ValueError(f"{where} gives {'lower' if upper is None else 'upper'} only: "
                                 "give both bounds.")
            try:
                if has_bounds:
                    bounds[column] = _check_pair(column, (lower, upper))
                else:
                    if isinstance(levels, str):
                        levels = [lv.strip() for lv in levels.split(sep) if lv.strip()]
                    categories[column] = list(_check_levels(column, levels))
            except ValueError as exc:
                raise ValueError(f"{where}: {exc}") from None
        return cls(bounds=bounds, categories=categories, source="dictionary")

    # ----------------------------------------------------------- combining

    def __or__(self, other):
        """A schema with ``other``'s declarations over this one's (column by column).

        ``other`` is a :class:`PublicSchema` or a mapping with the keys
        ``"bounds"`` and/or ``"categories"`` (source ``"declared"``). A
        column declared in both takes ``other``'s entry, whatever its kind.
        """
        if not isinstance(other, PublicSchema):
            if not isinstance(other, Mapping):
                return NotImplemented
            extra = [k for k in other if k not in ("bounds", "categories")]
            if extra:
                raise ValueError(f"a schema combines with 'bounds' and 'categories' only; "
                                 f"got {extra}.")
            other = PublicSchema(other.get("bounds"), other.get("categories"))
        entries = {c: e for c, e in self._entries.items() if c not in other._entries}
        entries.update(other._entries)
        return PublicSchema._of(entries)

    def __ror__(self, other):
        """``mapping | schema``: the schema's declarations over the mapping's."""
        if not isinstance(other, Mapping) or isinstance(other, PublicSchema):
            return NotImplemented
        return PublicSchema._of({}) | other | self

    def select(self, columns):
        """The schema of ``columns`` only (in their order; undeclared ones are skipped).

        E.g. ``schema.select(X.columns)`` for a table with fewer columns than
        the data dictionary (the estimators refuse declarations of columns
        that ``X`` does not have).

        Parameters
        ----------
        columns : iterable of column names (a DataFrame gives its columns)

        Returns
        -------
        PublicSchema
        """
        return PublicSchema._of({c: self._entries[c] for c in columns if c in self._entries})

    def uncovered(self, frame):
        """The columns of ``frame`` that this schema does not declare.

        Reads the column names and dtypes of ``frame`` only. A numeric column
        without bounds will have them estimated with DP (a share of the
        estimator's epsilon); a non-numeric one without levels is refused.
        Boolean columns are bounded by their type and never listed.

        Parameters
        ----------
        frame : DataFrame (pandas or Dask) or dict of ``{column: dtype}``

        Returns
        -------
        list
            The undeclared columns, in the frame's order.
        """
        return [c for c, d in _dtypes_of(frame).items()
                if c not in self._entries and not (_kind(d) == "b")]

    # ------------------------------------------------------------- review

    def _rows(self):
        rows = []
        for column, (kind, value, source) in self._entries.items():
            if kind == "numeric":
                rows.append((column, kind, value[0], value[1], None, "", source))
            else:
                shown = ", ".join(str(v) for v in value[:_PREVIEW])
                if len(value) > _PREVIEW:
                    shown += ", ..."
                rows.append((column, kind, None, None, len(value), shown, source))
        return rows

    def summary(self):
        """One row per declared column, to review before fitting.

        Returns
        -------
        DataFrame
            Columns ``column``, ``kind`` ("numeric" or "categorical"),
            ``lower``, ``upper``, ``n_levels``, ``levels`` (the first six,
            then "..."), ``source`` ("dtype", "sample", "dictionary" or
            "declared").
        """
        import pandas as pd

        rows = self._rows()
        names = ["column", "kind", "lower", "upper", "n_levels", "levels", "source"]
        frame = pd.DataFrame(rows, columns=names).astype(
            {"column": object, "lower": float, "upper": float, "n_levels": "Int64",
             "levels": object})
        return frame

    def _title(self):
        kinds = [kind for kind, _, _ in self._entries.values()]
        if not kinds:
            return "PublicSchema: no column declared"
        return (f"PublicSchema: {kinds.count('numeric')} numeric and "
                f"{kinds.count('categorical')} categorical columns")

    def __repr__(self):
        if not self._entries:
            return self._title()
        try:
            table = self.summary()
            table = table.astype(object).where(table.notna(), "").to_string(index=False)
        except ImportError:  # pragma: no cover - no pandas: one line per column
            table = "\n".join(" ".join(str(v) for v in row if v is not None)
                              for row in self._rows())
        return f"{self._title()}\n{table}"

    def _repr_html_(self):
        try:
            table = self.summary().to_html(index=False, na_rep="")
        except ImportError:  # pragma: no cover
            return None
        return f"<p>{self._title()}</p>\n{table}"
