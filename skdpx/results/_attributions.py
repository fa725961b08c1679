"""Results that hold one value per (encoded) feature: per-sample attributions
(:class:`FeatureAttribution`) and the maps of a locally linear model
(:class:`LocallyLinearMaps`), with their units: scaled by each feature's
public range, grouped per original column.
"""

import numpy as np

from ._base import (_as_float_2d, _frozen, _per_row, _per_row_str_or_none,
                    _Result)
from ._display import (_HTML_ROWS, _scale_label, noise_rounded, plot_attribution,
                       plot_beeswarm, plot_maps)
from ._summary import GlobalImportance, _range_quantile, summarize

__all__ = ["FeatureAttribution", "LocallyLinearMaps"]


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


def _multi_index(levels):
    """A pandas MultiIndex of the named per-row arrays ``levels``."""
    import pandas as pd

    return pd.MultiIndex.from_arrays(list(levels.values()), names=list(levels))


def _noise_floor(std, groups):
    """Per-feature (or per-column) noise floors of values with noise ``std`` (..., n_features).

    A feature's floor is ``2 std``: a value of noise alone exceeds it in about
    5% of cases. Grouped (``groups`` given), a one-feature column keeps that,
    and a one-hot block of ``k`` levels gets the 95% quantile of the spread of
    ``k`` values of noise alone (its largest level std times that of ``k``
    standard normals): a block's spread grows with ``k`` by noise alone, so a
    column with many levels is not ranked first by its noise.
    """
    std = np.asarray(std, dtype=float)
    if groups is None:
        return 2.0 * std
    out = np.empty(std.shape[:-1] + (len(groups),))
    for g, (_, idx) in enumerate(groups):  # a loop over columns, not rows
        block = std[..., idx]
        out[..., g] = 2.0 * block[..., 0] if len(idx) == 1 else (
            block.max(axis=-1) * _range_quantile(len(idx)))
    return out


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

    def _frame_units(self, grouped, scaled):
        """``_resolve`` with the tables' default: scaled (None) when grouped and the
        ranges are known, so that numeric columns and one-hot spreads share a scale."""
        if scaled is None:
            scaled = bool(grouped) and self.feature_range is not None
        return self._resolve(grouped, scaled)

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
    std : array-like of shape (n, n_features) or None, default=None
        The standard deviation of the privacy noise in each value (in the
        units of ``values``; NaN where not known), computed from public
        facts and DP releases only (post-processing). Given it, :meth:`noise_floor` and
        :meth:`distinguishable` tell signal from noise, the plot draws error
        bars and ranks by what the noise supports, and the HTML table counts
        the values above their noise floor. ``meta["std"]`` says how it was
        computed.
    epsilon_spent, delta_spent : float
        The estimator's total privacy spend, kept in ``meta``.
    meta : dict, default=None
        Anything else the estimator reports (e.g. ``{"estimator": name}``).
    base_value : float, array-like of shape (n,) or None, default=None
        SHAP-style results (``DPShapExplainer``): per row, the expected
        output over the background, so that ``values.sum(1) + base_value``
        is the explained output at the row (additivity); None otherwise.

    Attributes
    ----------
    values : ndarray of shape (n, n_features)
    epsilon : ndarray of shape (n,)
    phase : ndarray of object (str or None) of shape (n,)
    std : ndarray of shape (n, n_features) or None
    base_value : ndarray of shape (n,) or None
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
    >>> from skdpx import FeatureAttribution
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

    _row_fields = ("values", "epsilon", "phase", "std", "base_value")
    _static_fields = ("feature_range", "groups")

    def __init__(self, values, *, epsilon, phase=None, std=None, feature_names=None,
                 feature_range=None, groups=None, epsilon_spent, delta_spent, meta=None,
                 base_value=None):
        n_features = None if feature_names is None else len(list(feature_names))
        self.values = _as_float_2d("values", values, n_features)
        n, n_features = self.values.shape
        self.epsilon = _per_row("epsilon", epsilon, n, dtype=float)
        self.phase = _per_row_str_or_none("phase", phase, n)
        self.std = None if std is None else _as_float_2d("std", std, n_features, n)
        if self.std is not None and np.any(self.std < 0):
            raise ValueError("std must be >= 0 (NaN where not known)")
        self.base_value = (None if base_value is None
                           else _per_row("base_value", base_value, n, dtype=float))
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

    def noise_floor(self, grouped=False, scaled=None):
        """The value below which each attribution is not distinguishable from noise.

        Twice the noise's standard deviation for a feature (and a numeric
        column); for a categorical column (``grouped``), the 95% quantile of
        the spread of its levels under noise alone, which grows with the
        number of levels (see :meth:`grouped_values`).

        Parameters
        ----------
        grouped : bool, default=False
            Per original column instead of per encoded feature.
        scaled : bool or None, default=None
            In the units of ``scaled_values`` (None: when ``grouped`` and the
            ranges are known, as :meth:`to_frame`).

        Returns
        -------
        ndarray of shape (n, n_features) or (n, n_columns)
            NaN where the noise is not known.

        Raises
        ------
        ValueError
            If the result carries no ``std``.
        """
        if self.std is None:
            raise ValueError("this result carries no std: its noise is not known")
        return self._floor_rows(slice(None), *self._frame_units(grouped, scaled))

    def _floor_rows(self, rows, grouped, scaled):
        """The noise floors of the rows ``rows`` (an int: one row), in resolved units."""
        std = self.std[rows] * self.feature_range if scaled else self.std[rows]
        return _noise_floor(std, self.groups if grouped else None)

    def distinguishable(self, grouped=False, scaled=None):
        """Whether each attribution's absolute value exceeds its :meth:`noise_floor`.

        Parameters
        ----------
        grouped, scaled
            As for :meth:`noise_floor` (the answer does not depend on
            ``scaled``: values and floors scale alike).

        Returns
        -------
        ndarray of bool of the shape of :meth:`noise_floor`
            False where the noise is not known.
        """
        grouped, scaled = self._frame_units(grouped, scaled)
        floor = self.noise_floor(grouped, scaled)
        values = self._in_units(self.values, grouped, scaled)[1]
        with np.errstate(invalid="ignore"):
            return np.abs(values) > floor

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
            One row per sample, one column per feature (or original column):
            attributions only, so ``df.abs()`` and ``df.iloc[i].nlargest(k)``
            rank them. The index holds what each row cost and how it was
            answered: levels ``row``, ``epsilon`` and, when some row has one,
            ``phase`` (``df.reset_index()`` makes them columns). The noise of
            each value (when known) is :meth:`noise_floor`, in the same units
            and columns.
            ``df.attrs["meta"]`` holds ``meta``, ``df.attrs["unit"]`` says what
            the values are.

        Raises
        ------
        ImportError
            If pandas is not installed.
        """
        grouped, scaled = self._frame_units(grouped, scaled)
        names, values, _ = self._in_units(self.values, grouped, scaled)
        df = self._frame(list(zip(names, values.T)))
        # what each row cost and how it was answered: the index, not columns, so that
        # the columns are attributions only (df.abs(), df.iloc[0].nlargest(k) rank them)
        levels = {"row": np.arange(len(self)), "epsilon": self.epsilon}
        if any(p is not None for p in self.phase):
            levels["phase"] = self.phase
        clash = sorted(set(names) & set(levels))
        if clash:  # df.reset_index() could not make them columns
            raise ValueError(f"feature names clash with the frame's index levels: {clash}")
        df.index = _multi_index(levels)
        df.attrs["unit"] = self._unit_label(grouped, scaled).replace("\n", " ")
        return df

    def _summary_units(self, grouped, scaled):
        """``(grouped, scaled)`` of the global views: the plot's defaults and its one-unit rule."""
        from ._display import _one_unit

        grouped, scaled, _ = _one_unit(self, self.values[:0], grouped, scaled)
        return grouped, scaled

    def global_importance(self, grouped=None, scaled=None, *, level=0.9):
        """The mean absolute attribution of each feature (or column) over the rows, with its uncertainty.

        The global view of many local explanations (``shap``'s
        ``mean(|SHAP value|)``), with what the privacy noise does to it. Each
        released value is ``v = a + e``: ``a`` the noiseless attribution and
        ``e`` noise of standard deviation ``s`` (:attr:`std`; 0 without
        privacy, NaN or no ``std``: not known), independent between rows. Per
        row the summarised quantity ``y`` is ``|v|`` (a one-hot block,
        ``grouped``: the spread of its levels, as :meth:`grouped_values`).
        Post-processing of released values and public facts: nothing is
        spent, no noise is drawn.

        Parameters
        ----------
        grouped : bool or None, default=None
            Per original column (None: when ``groups`` are known and the
            table keeps one unit, as :meth:`plot`).
        scaled : bool or None, default=None
            Scale by the public ranges (None: when ``feature_range`` is known).
        level : float, default=0.9
            The nominal two-sided level of the intervals.

        Returns
        -------
        GlobalImportance
            One entry per feature or column (``to_frame()`` sorts them by
            :meth:`GlobalImportance.ranking`):

            - ``importance``: ``M``, the mean of ``y`` over the ``n`` rows.
              Biased upwards by the noise: ``E|a + e| > |a|``.
            - ``noise_level``: the mean ``y`` if every ``a`` were 0: the mean
              of ``s sqrt(2/pi)`` (a block: its largest level std times the
              mean range of ``k`` standard normals, an upper bound with
              unequal stds). The noise's bias of ``M`` lies in ``[0,
              noise_level]``.
            - ``noise_std``: a bound on the noise's standard deviation of
              ``M`` given the rows, ``sqrt(sum b_i^2) / n``: ``b_i = s_i``
              (``|.|`` is 1-Lipschitz), a block's two largest level stds in
              quadrature (Gaussian Poincare inequality). A bound, not exact:
              tight when ``|a| >> s``, about 0.6 of it at ``a = 0``.
            - ``noise_floor``: what ``M`` of noise alone rarely exceeds:
              ``noise_level`` plus 2 standard deviations of ``M`` under ``a =
              0`` (exact there: ``Var|e| = s^2 (1 - 2/pi)``; a block: the
              variance of the range of ``k`` normals). A column at or below
              it is one the noise alone explains: ``supported`` is False and
              it is ranked below those above it, whatever its ``M``.
            - ``debiased``: the common ``|a|`` whose expected mean ``|a +
              e|`` over the rows' noise is ``M`` (one folded-normal inversion,
              0 at or below ``noise_level``). Less biased than ``M``, not
              unbiased (none exists). Measured at ``n = 50``, ``s = 1``
              (``tests/test_global_importance.py``): bias +0.19 at ``a = 0``
              (``M``: +0.80), within 0.05 for ``|a| >= 0.25``; when the
              ``|a|`` differ it keeps much of ``M``'s bias (half the rows at
              0, half at 3: +0.37 against +0.40; normal ``a``: +0.12
              against +0.33). NaN for blocks and where the noise is not
              known. ``M`` itself is what shap reports.
            - ``rows_low``, ``rows_high``: ``[M - noise_level - z
              noise_std, M + z noise_std]``, ``z`` the normal quantile of
              ``level``: covers the noiseless mean ``mean |a_i|`` of *these*
              rows over the noise (at least ``level``; about ``(1 + level) /
              2`` when the signal dominates, the bias side having slack).
            - ``sampling_se``: ``sd(y) / sqrt(n)``, the standard error of
              ``M`` when the rows are a random sample of the population the
              question is about (it includes the noise, each row's own).
            - ``low``, ``high``: ``[mean(y - l) - z se(y - l), M + z
              sampling_se]``, ``l`` each row's noise-only level: covers the
              population's mean noiseless ``|a|`` (nominal ``level``,
              asymptotically in ``n``). A row whose noise is not known
              subtracts nothing (the interval is then for its ``|value|``
              as released).

        Raises
        ------
        ValueError
            For ``scaled=True`` without ``feature_range``, or ``grouped=True``
            with ``scaled=False`` on columns of both kinds (two units: see
            :meth:`plot`).

        Notes
        -----
        The intervals above assume independent noise between rows: a
        ``DPLimeExplainer`` answer ``"reused"`` for another query repeats an
        earlier answer's noise, so drop repeated queries first. When the
        result says its noise is one draw shared by every row
        (``meta["noise_between_rows"] == "shared"``: the SHAP values of one
        :class:`~skdpx.DPShapExplainer` background), the noise does not
        average out over rows: ``noise_std`` is the mean of the ``b_i`` and
        the floor's spread the mean of the rows' noise-only standard
        deviations (bounds: the standard deviation of a sum is at most the
        sum of theirs), not divided by ``sqrt(n)``; ``sampling_se`` adds
        ``noise_std`` in quadrature (the common draw moves every row alike,
        which the rows' spread does not show).

        Examples
        --------
        >>> from skdpx import FeatureAttribution
        >>> fa = FeatureAttribution([[0.5, 0.01], [-0.7, -0.02], [0.6, 0.0]],
        ...                         epsilon=1.0, std=[[0.05, 0.05]] * 3,
        ...                         feature_names=["age", "hours"],
        ...                         epsilon_spent=3.0, delta_spent=0.0)
        >>> gi = fa.global_importance()
        >>> gi.ranking(), gi.supported.tolist()
        (['age', 'hours'], [True, False])
        >>> round(float(gi.noise_level[1]), 3)  # 0.05 sqrt(2/pi): hours' 0.01 is noise
        0.04
        """
        if not 0.0 < float(level) < 1.0:
            raise ValueError(f"level must be in (0, 1), got {level!r}")
        grouped, scaled = self._summary_units(grouped, scaled)
        values = self.values * self.feature_range if scaled else self.values
        std = None
        if self.std is not None:
            std = self.std * self.feature_range if scaled else self.std
        groups = self.groups if grouped else None
        shared = self.meta.get("noise_between_rows") == "shared"
        fields = summarize(values, std, groups, level=float(level), shared=shared)
        names = self.group_names if groups is not None else list(self.feature_names)
        meta = {"n_samples": len(self), "level": float(level), "grouped": grouped,
                "scaled": scaled,
                "unit": "mean |" + self._unit_label(grouped, scaled).replace("\n", " ") + "|"}
        if "estimator" in self.meta:
            meta["estimator"] = self.meta["estimator"]
        return GlobalImportance(**fields, feature_names=names, epsilon_spent=self.epsilon_spent,
                                delta_spent=self.delta_spent, meta=meta)

    def plot_beeswarm(self, feature_values=None, *, top_k=10, grouped=None, scaled=None,
                      ax=None, cmap=None, **kwargs):
        """Every row's attribution, one line per feature or column (``shap.plots.beeswarm``).

        One dot per explained sample, at its attribution (a one-hot block:
        its spread, grey), stacked where they crowd; lines ordered by
        :meth:`global_importance`'s ranking (by what the noise supports),
        most important on top. With ``feature_values`` the dots of a feature
        or numeric column are coloured by its value there (low blue, high
        red, between the 5th and 95th percentiles of the given values, as
        shap does; a categorical column's spreads stay grey). With :attr:`std` known, the noise is shown: dots within
        their own :meth:`noise_floor` are faded, the band of the median
        row's floor is shaded, and a line whose mean the noise alone
        explains (not ``supported``) is labelled so.

        Parameters
        ----------
        feature_values : DataFrame, array-like of shape (n, n_features) or None, default=None
            The explained samples (a result does not hold them): the
            DataFrame given to ``explain`` (its numeric columns colour the
            lines of the same name), or an array in the encoded features.
            Public queries only: colours drawn from private rows would show
            them.
        top_k : int or None, default=10
            How many lines (all when None).
        grouped, scaled : bool or None, default=None
            As in :meth:`plot`.
        ax : matplotlib.axes.Axes, default=None
            Where to draw; a new figure when None.
        cmap : str, Colormap or None, default=None
            The colour map of the feature values (None: blue to red through
            purple, as shap's).
        **kwargs
            Passed to ``ax.scatter``.

        Returns
        -------
        matplotlib.axes.Axes
        """
        return plot_beeswarm(self, feature_values, top_k=top_k, grouped=grouped,
                             scaled=scaled, ax=ax, cmap=cmap, **kwargs)

    def plot(self, index=0, *, top_k=10, grouped=None, scaled=None, ax=None, **kwargs):
        """Horizontal bar chart of the attributions of one row.

        With ``std`` known, each bar has an error bar of its
        :meth:`noise_floor` (twice the noise's standard deviation; for a
        categorical column, the spread noise alone reaches 95% of the time),
        bars within it are drawn faded, and bars are ranked by how far they
        stand above it. Otherwise bars are ranked by absolute value in the
        plotted unit, which the x label names: by default scaled by each feature's public range when
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
            One bar per original column (None: when ``groups`` are known,
            and the axis keeps one unit: see Raises).
        scaled : bool or None, default=None
            Scale by the public ranges (None: when ``feature_range`` is known).
        ax : matplotlib.axes.Axes, default=None
            Where to draw; a new figure when None.
        **kwargs
            Passed to ``ax.barh``.

        Returns
        -------
        matplotlib.axes.Axes

        Raises
        ------
        ValueError
            For ``grouped=True`` with ``scaled=False`` on columns of both
            kinds: a numeric column's value is per unit of that column and a
            categorical column's the change between two of its levels, two
            units on one axis. Scaled by the public ranges, both are changes
            of the output (one unit); without ranges, the default plots one
            bar per feature instead.
        """
        return plot_attribution(self, index, top_k=top_k, grouped=grouped, scaled=scaled, ax=ax,
                                **kwargs)

    def _html_columns(self, head):
        grouped, scaled = self._resolve(None, None)
        names, values, block = self._in_units(head.values, grouped, scaled)
        columns = [("epsilon", head.epsilon)]
        if any(p is not None for p in self.phase):
            columns.append(("phase", head.phase))
        note = "values: " + self._unit_label(grouped, scaled).replace("\n", " ")
        if head.std is not None:
            floor = head.noise_floor(grouped, scaled)
            known = np.isfinite(floor).all(axis=1)
            above = head.distinguishable(grouped, scaled).sum(axis=1)
            columns.append(("above noise", [f"{a} of {len(names)}" if k else "not known"
                                            for a, k in zip(above, known)]))
            note += "; above noise: values beyond their noise floor (2 std; see noise_floor)"
            # rounded to what the noise supports: half the floor is the std of a feature
            # or a numeric column ("value ± std"), and of the order of a categorical
            # column's noise spread (its spread has no std: the value only)
            values = noise_rounded(values, floor / 2, plus_minus=~block)
            note += ("; value \N{PLUS-MINUS SIGN} the noise's std, each rounded to the std's "
                     "leading digit")
            if block.any():
                note += " (a categorical column: its spread, rounded likewise)"
        columns += list(zip(names, values.T))
        return columns, note


class LocallyLinearMaps(_FeatureUnits, _Result):
    """The global explanation of a locally linear model: every class's maps.

    A :class:`~skdpx.locally_linear.DPLocallyLinearClassifier` scores class ``k`` as
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
    >>> from skdpx import LocallyLinearMaps
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
        grouped, scaled = self._frame_units(grouped, scaled)
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
        return plot_maps(self, image_shape, top_maps=top_maps, classes=classes,
                         top_features=top_features, grouped=grouped, scaled=scaled,
                         cmap=cmap, fig=fig)

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
