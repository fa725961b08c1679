"""Rules a person can declare about counterfactuals and recourse (issue 39).

Shared by :class:`~skdpx.counterfactual.DPCounterfactualGenerator` and
:class:`~skdpx.recourse.PrivRecourse`, held relative to each query:

- an **ordered categorical** column (a pandas ``CategoricalDtype(ordered=True)``
  on the fitted DataFrame's column, else the order of its levels in
  ``categories``) may be in ``increasing_features`` / ``decreasing_features``:
  a candidate's level is then at or above (below) the query's;
- ``linked_features``: ``[(categorical, numeric, {level: number}), ...]``:
  the numeric column is set from the level (``education`` ->
  ``education-num``). A candidate that keeps the query's level keeps the
  query's number; one that changes the level gets the level's number; the
  numeric column never moves alone;
- ``feasibility``: a callable taking the candidates as a DataFrame of the
  fitted columns in original units and categories, returning a boolean mask
  (True: feasible), applied to all candidates at once;
- ``features_to_vary`` (DiCE's name): the columns a candidate may change,
  every other column is held at the query's value ("all": no restriction);
- ``permitted_range`` (DiCE's name): ``{numeric column: (lower, upper)}``
  or ``{categorical column: [level, ...]}``, the values a candidate may take
  on that column, independent of the query (DiCE's form); or, relative to
  the query, ``{column: {"change": (down, up)}}``: a numeric candidate lies
  within ``[q + down, q + up]`` of the query's value ``q``, an ordered
  categorical one within ``down`` to ``up`` levels of the query's level
  along its declared order (``{"range": ..., "change": ...}`` gives both);
- ``costs``: ``{column: weight >= 0}``, the cost of changing a column per
  unit of its scaled range (default 1), used in the distances that choose
  a counterfactual and in the recourse graph's edge lengths.

Every rule is public, declared, and checked against the fitted public
schema before anything is spent. Rules are applied to DP outputs and to
the queries only (candidates built from prototypes, centres and queries):
post-processing, free, never a read of the private rows.
"""

from numbers import Real

import numpy as np

from ._sklearn_compat import StrOptions

__all__ = ["Rules", "resolve_rules"]

#: the parameters of the rules beyond immutable/increasing/decreasing
RULE_PARAMETERS = ("linked_features", "feasibility", "features_to_vary", "permitted_range",
                   "costs")


#: what ``_parameter_constraints`` says of them (both estimators)
RULE_PARAMETER_CONSTRAINTS = {
    "linked_features": [list, None],
    "feasibility": [callable, None],
    "features_to_vary": ["array-like", StrOptions({"all"})],
    "permitted_range": [dict, None],
    "costs": [dict, None],
}


def _is_categorical_dtype(dtype):
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover
        return False
    return isinstance(dtype, pd.CategoricalDtype)


def _levels(schema, position):
    """The declared levels of categorical column ``position``, in encoding order."""
    column = schema.columns[position]
    return list(schema.encoder._levels[column])


def level_order(schema, position, name):
    """Rank of each encoded level of categorical column ``position`` in its declared order.

    The order of an ordered pandas categorical dtype of the fitted column,
    else that of the levels in ``categories``. An unordered pandas
    categorical dtype is refused: it says that the levels have no order.
    """
    levels = _levels(schema, position)
    dtype = schema.dtypes[position] if schema.dtypes is not None else None
    if _is_categorical_dtype(dtype):
        if not dtype.ordered:
            raise ValueError(
                f"{name}: column {name_of(schema, position)!r} is an unordered pandas "
                "categorical, so its levels have no order. Declare one: "
                "X[col].astype(pd.CategoricalDtype(levels_in_order, ordered=True)).")
        order = list(dtype.categories)
        if set(order) != set(levels):
            raise ValueError(
                f"{name}: the ordered dtype of column {name_of(schema, position)!r} has the "
                f"levels {order}, but categories declares {levels}: declare the same levels.")
    else:
        order = levels
    return np.array([order.index(level) for level in levels], dtype=int)


def name_of(schema, position):
    return schema.groups[position][0]


def _position(schema, column, param):
    """The input position of ``column`` (a name or an input index)."""
    names = [name for name, _ in schema.groups]
    if isinstance(column, (int, np.integer)) and not isinstance(column, bool):
        if not 0 <= column < len(names):
            raise ValueError(f"{param}: feature index {column} is outside [0, {len(names)}).")
        return int(column)
    if isinstance(column, str) and column in names:
        return names.index(column)
    raise ValueError(f"{param}: unknown feature {column!r}; features are {names}.")


class Rules:
    """The resolved rules, in the encoded space of a fitted public schema.

    Made by :func:`resolve_rules` at fit, before anything is spent. Its
    methods take encoded candidates ``Z`` and their queries ``Q`` (row i of
    ``Q`` is the query of row i of ``Z``), valid records (one-hot blocks
    exact), and the fitted ``bounds`` (for the records a ``feasibility``
    callable receives).

    Attributes
    ----------
    ordered : list of (block, rank, sign)
        Ordered categorical columns held monotone: their encoded block, the
        rank of each level, +1 (increasing) or -1 (decreasing).
    links : list of (block, index, values)
        A categorical block, the encoded numeric column set from its level,
        and the number of each level (encoding order).
    feasibility : callable or None
    ranges : list of (index, lower, upper)
        Numeric permitted ranges (encoded column).
    changes : list of (index, down, up)
        Numeric permitted changes relative to the query: ``q + down <= z <=
        q + up`` (encoded column, original units).
    level_changes : list of (block, rank, down, up)
        Ordered categorical permitted changes: ``down <= rank[z] - rank[q]
        <= up`` (in levels of the declared order).
    allowed : list of (block, mask)
        Categorical permitted ranges: the levels a candidate may hold.
    weights : ndarray of shape (n_encoded,)
        The cost of change of each encoded column.
    held, increasing, decreasing : ndarray of int
        The encoded columns held at, at or above, at or below the query's
        value (numeric columns; held also has every one-hot column of a
        held categorical column).
    """

    def __init__(self, schema, *, ordered=(), links=(), feasibility=None, ranges=(),
                 allowed=(), weights=None, held=(), increasing=(), decreasing=(),
                 changes=(), level_changes=()):
        self.schema = schema
        self.ordered = list(ordered)
        self.links = list(links)
        self.feasibility = feasibility
        self.ranges = list(ranges)
        self.allowed = list(allowed)
        self.changes = list(changes)
        self.level_changes = list(level_changes)
        self.weights = (np.ones(schema.n_encoded) if weights is None
                        else np.asarray(weights, dtype=float))
        self.held = np.asarray(held, dtype=int)
        self.increasing = np.asarray(increasing, dtype=int)
        self.decreasing = np.asarray(decreasing, dtype=int)

    @property
    def active(self):
        """Whether a candidate's record can be changed or refused beyond the
        immutable/increasing/decreasing numeric constraints."""
        return bool(self.ordered or self.links or self.feasibility is not None
                    or self.ranges or self.allowed or self.changes or self.level_changes)

    # ------------------------------------------------------------ repair

    def repair(self, Z, Q):
        """Candidates moved onto the rules where a rule says how (a new array).

        An ordered level on the wrong side of the query's, or a level
        outside ``permitted_range`` (or further from the query's level than
        its permitted change), goes back to the query's level; a numeric
        column is clipped to its permitted range and change; a linked numeric
        column is set from its level (the query's number where the level is
        the query's). What cannot be repaired (e.g. ``feasibility``) is left
        to :meth:`admissible`.
        """
        Z = np.array(Z, dtype=float, copy=True)
        Q = np.asarray(Q, dtype=float)
        if len(Z) == 0:
            return Z
        for block, rank, sign in self.ordered:
            z, q = np.argmax(Z[:, block], axis=1), np.argmax(Q[:, block], axis=1)
            back = sign * (rank[z] - rank[q]) < 0
            Z[np.ix_(back, block)] = Q[np.ix_(back, block)]
        for block, mask in self.allowed:
            back = ~mask[np.argmax(Z[:, block], axis=1)]
            Z[np.ix_(back, block)] = Q[np.ix_(back, block)]
        for block, rank, down, up in self.level_changes:
            step = rank[np.argmax(Z[:, block], axis=1)] - rank[np.argmax(Q[:, block], axis=1)]
            back = (step < down) | (step > up)
            Z[np.ix_(back, block)] = Q[np.ix_(back, block)]
        for index, lower, upper in self.ranges:
            Z[:, index] = np.clip(Z[:, index], lower, upper)
        for index, down, up in self.changes:
            lower, upper = Q[:, index] + down, Q[:, index] + up
            if self.schema.integer[index]:  # inwards, so that rounding keeps it within
                lower, upper = np.ceil(lower - 1e-9), np.floor(upper + 1e-9)
            Z[:, index] = np.clip(Z[:, index], lower, np.maximum(lower, upper))
        for block, index, values in self.links:
            z, q = np.argmax(Z[:, block], axis=1), np.argmax(Q[:, block], axis=1)
            Z[:, index] = np.where(z == q, Q[:, index], values[z])
        return Z

    # ------------------------------------------------------------ check

    def admissible(self, Z, Q, bounds):
        """Mask (n,): the candidates that hold every rule relative to their query.

        Held columns equal the query's, monotone columns (numeric and
        ordered levels) on the allowed side, permitted ranges, links and
        ``feasibility`` (one call on all the rows). A row with a NaN is
        not admissible.
        """
        Z = np.asarray(Z, dtype=float)
        Q = np.asarray(Q, dtype=float)
        n = len(Z)
        ok = ~np.isnan(Z).any(axis=1)
        if n == 0:
            return ok
        Zf = np.where(ok[:, None], Z, Q)
        tol = 1e-9
        if self.held.size:
            ok &= np.all(np.abs(Zf[:, self.held] - Q[:, self.held]) <= tol, axis=1)
        if self.increasing.size:
            ok &= np.all(Zf[:, self.increasing] >= Q[:, self.increasing] - tol, axis=1)
        if self.decreasing.size:
            ok &= np.all(Zf[:, self.decreasing] <= Q[:, self.decreasing] + tol, axis=1)
        for block, rank, sign in self.ordered:
            z, q = np.argmax(Zf[:, block], axis=1), np.argmax(Q[:, block], axis=1)
            ok &= sign * (rank[z] - rank[q]) >= 0
        for block, mask in self.allowed:
            ok &= mask[np.argmax(Zf[:, block], axis=1)]
        for block, rank, down, up in self.level_changes:
            step = rank[np.argmax(Zf[:, block], axis=1)] - rank[np.argmax(Q[:, block], axis=1)]
            ok &= (step >= down) & (step <= up)
        for index, lower, upper in self.ranges:
            ok &= (Zf[:, index] >= lower - tol) & (Zf[:, index] <= upper + tol)
        for index, down, up in self.changes:
            change = Zf[:, index] - Q[:, index]
            ok &= (change >= down - tol) & (change <= up + tol)
        for block, index, values in self.links:
            z, q = np.argmax(Zf[:, block], axis=1), np.argmax(Q[:, block], axis=1)
            want = np.where(z == q, Q[:, index], values[z])
            ok &= np.abs(Zf[:, index] - want) <= tol
        if self.feasibility is not None and ok.any():
            rows = np.flatnonzero(ok)
            ok[rows] = self.feasible(Zf[rows], bounds)
        return ok

    def feasible(self, Z, bounds):
        """The ``feasibility`` callable on encoded rows ``Z`` (one call), as a mask."""
        lower, upper = bounds
        records = self.schema.records(Z, lower, upper)
        return check_mask(self.feasibility, records, len(Z))


def check_mask(feasibility, records, n):
    """``feasibility(records)`` as a boolean mask of length ``n``, or a clear error."""
    try:
        out = feasibility(records)
    except Exception as exc:
        raise ValueError(f"feasibility raised {type(exc).__name__}: {exc} (it receives the "
                         "candidates as a DataFrame of the fitted columns, in original "
                         "units and categories).") from exc
    mask = np.asarray(out)
    if mask.dtype != bool or mask.shape != (n,):
        raise ValueError(f"feasibility must return a boolean mask of one value per record "
                         f"({n}); got {mask.dtype} of shape {mask.shape}.")
    return mask


def _as_list(value, param):
    if value is None:
        return []
    if isinstance(value, str):
        raise ValueError(f"{param} must be a list of columns, not a string; "
                         f"use {param}=[{value!r}].")
    return [v.item() if isinstance(v, np.generic) else v
            for v in np.atleast_1d(np.asarray(value, dtype=object))]


def resolve_rules(estimator, sets, monotone_categorical):
    """The :class:`Rules` of a fitted-schema estimator (validation only, before a spend).

    Parameters
    ----------
    estimator : ActionabilityMixin
        With ``schema_`` and the rule parameters.
    sets : tuple of three ndarray of int
        The encoded immutable, increasing and decreasing numeric columns
        (immutable with the blocks of held categorical columns).
    monotone_categorical : list of (position, sign)
        The categorical columns in increasing (+1) / decreasing (-1) features.
    """
    schema = estimator.schema_
    groups = schema.groups
    categorical = [bool(schema.categorical[g].all()) for _, g in groups]
    ordered = [(groups[p][1], level_order(schema, p, "increasing_features" if s > 0
                                          else "decreasing_features"), s)
               for p, s in monotone_categorical]

    links = []
    linked = getattr(estimator, "linked_features", None)
    for item in ([] if linked is None else linked):
        if not (isinstance(item, (tuple, list)) and len(item) == 3
                and isinstance(item[2], dict)):
            raise ValueError("linked_features must be a list of (categorical column, numeric "
                             "column, {level: number}) triples; got "
                             f"{item!r}.")
        cat, num, mapping = item
        p, r = _position(schema, cat, "linked_features"), _position(schema, num, "linked_features")
        if not categorical[p]:
            raise ValueError(f"linked_features: {name_of(schema, p)!r} must be a categorical "
                             "column (its levels set the numeric column).")
        if categorical[r]:
            raise ValueError(f"linked_features: {name_of(schema, r)!r} must be a numeric "
                             "column (set from the level).")
        levels = _levels(schema, p)
        missing = [lv for lv in levels if lv not in mapping]
        extra = [lv for lv in mapping if lv not in levels]
        if missing or extra:
            raise ValueError(f"linked_features: the mapping of {name_of(schema, p)!r} must give "
                             f"a number to each declared level; missing {missing}, undeclared "
                             f"{extra}.")
        values = np.array([mapping[lv] for lv in levels], dtype=float)
        if not np.all(np.isfinite(values)):
            raise ValueError(f"linked_features: the numbers of {name_of(schema, p)!r} must "
                             "be finite.")
        index = int(groups[r][1][0])
        lo, hi = schema.lower[index], schema.upper[index]
        if (np.isfinite(lo) and values.min() < lo) or (np.isfinite(hi) and values.max() > hi):
            raise ValueError(f"linked_features: the numbers of {name_of(schema, p)!r} leave "
                             f"the declared bounds of {name_of(schema, r)!r} ({lo}, {hi}).")
        for block, rank, _ in ordered:
            if np.array_equal(block, groups[p][1]):
                by_rank = values[np.argsort(rank)]
                if np.any(np.diff(by_rank) < 0):
                    raise ValueError(
                        f"linked_features: the numbers of {name_of(schema, p)!r} go down "
                        "along its declared order: the order of its levels (an ordered "
                        "dtype, or the order in categories) disagrees with the link.")
        links.append((groups[p][1], index, values))

    feasibility = getattr(estimator, "feasibility", None)
    if feasibility is not None:
        if not callable(feasibility):
            raise ValueError(f"feasibility must be a callable (records -> boolean mask); "
                             f"got {feasibility!r}.")
        # a check on public points (the schema's probes), never a row
        probes = schema.probe(getattr(estimator, "bounds", None), corners=True)
        lower = np.where(np.isfinite(schema.lower), schema.lower, -np.inf)
        upper = np.where(np.isfinite(schema.upper), schema.upper, np.inf)
        check_mask(feasibility, schema.records(probes, lower, upper), len(probes))

    ranges, allowed, changes, level_changes = [], [], [], []
    permitted = getattr(estimator, "permitted_range", None)
    for column, value in ({} if permitted is None else permitted).items():
        p = _position(schema, column, "permitted_range")
        name = f"permitted_range[{column!r}]"
        if isinstance(value, dict):
            unknown = sorted(set(value) - {"range", "change"}, key=str)
            if not value or unknown:
                raise ValueError(f"{name}: a dict takes the keys 'range' (independent of the "
                                 "query) and 'change' (relative to it); got "
                                 f"{sorted(value, key=str)}.")
            absolute, change = value.get("range"), value.get("change")
        else:
            absolute, change = value, None
        if change is not None:
            down, up = _pair(change, f"{name}['change']", "(down, up)")
            if down > 0 or up < 0:
                raise ValueError(f"{name}['change'] must allow no change (down <= 0 <= up): "
                                 f"the query's own value; got {change!r}.")
            if categorical[p]:
                rank = level_order(schema, p, f"{name}['change']")
                if not (float(down).is_integer() and float(up).is_integer()):
                    raise ValueError(f"{name}['change'] counts levels of the declared order "
                                     f"of {name_of(schema, p)!r}: give whole numbers; got "
                                     f"{change!r}.")
                level_changes.append((groups[p][1], rank, int(down), int(up)))
            else:
                changes.append((int(groups[p][1][0]), down, up))
        if absolute is None:
            continue
        if categorical[p]:
            levels = _levels(schema, p)
            given = _as_list(absolute, name)
            unknown = [lv for lv in given if lv not in levels]
            if not given or unknown:
                raise ValueError(f"{name} must be a non-empty list of "
                                 f"declared levels; undeclared {unknown}.")
            allowed.append((groups[p][1], np.isin(np.array(levels, dtype=object),
                                                  np.array(given, dtype=object))))
        else:
            lower, upper = _pair(absolute, name, "(lower, upper)")
            ranges.append((int(groups[p][1][0]), lower, upper))

    weights = np.ones(schema.n_encoded)
    costs = getattr(estimator, "costs", None)
    for column, w in ({} if costs is None else costs).items():
        p = _position(schema, column, "costs")
        if (not isinstance(w, Real) or isinstance(w, bool) or not np.isfinite(w) or w < 0):
            raise ValueError(f"costs[{column!r}] must be a finite number >= 0; got {w!r}.")
        weights[groups[p][1]] = float(w)

    immutable, increasing, decreasing = sets
    return Rules(schema, ordered=ordered, links=links, feasibility=feasibility, ranges=ranges,
                 allowed=allowed, weights=weights, held=immutable, increasing=increasing,
                 decreasing=decreasing, changes=changes, level_changes=level_changes)


def _pair(value, name, what):
    """A (low, high) pair of finite numbers with low <= high, as floats, or a clear error."""
    pair = tuple(value) if isinstance(value, (tuple, list)) else ()
    if not (len(pair) == 2 and all(isinstance(v, Real) and not isinstance(v, bool)
                                   and np.isfinite(v) for v in pair) and pair[0] <= pair[1]):
        raise ValueError(f"{name} must be a {what} pair of finite numbers with "
                         f"{what[1:-1].replace(', ', ' <= ')}; got {value!r}.")
    return float(pair[0]), float(pair[1])
