"""Global summaries of many local explanations: :class:`GlobalImportance`.

:meth:`FeatureAttribution.global_importance <skdpx.FeatureAttribution.global_importance>`
averages the absolute attributions of many explained samples per feature (or
per original column), with what the privacy noise does to that average and
the sampling error over the explained samples. Everything here is
post-processing of released values and their ``std`` (public facts and DP
outputs): nothing is spent, no noise is drawn.

The noise model (the one ``std`` describes): each released value is ``v = a +
e``, ``a`` the noiseless attribution and ``e ~ N(0, s^2)``, ``s`` the row's
``std`` (0 without privacy, NaN where not known); noise is independent between
rows (each answer draws its own) and between the levels of a one-hot block (as
:meth:`FeatureAttribution.noise_floor` assumes).

For a feature (or a numeric column) the summarised quantity of a row is ``y =
|v|``; for a one-hot block it is the spread ``max - min`` of its levels
(:func:`skdpx.results._attributions._group_values`). Both are convex in the
values, so the noise biases their mean upwards (Jensen), and both move by
at most the noise's own size:

* ``|.|`` is 1-Lipschitz, so ``sd(|a + e|) <= s`` (exactly ``Var|a + e| =
  a^2 + s^2 - (E|a + e|)^2``); the bias ``E|a + e| - |a|`` lies in ``[0,
  s sqrt(2/pi)]`` (largest at ``a = 0``, the folded normal's mean).
* the spread's gradient is ``e_argmax - e_argmin``, so by the Gaussian
  Poincare inequality ``sd <= sqrt(s_(1)^2 + s_(2)^2)`` (the two largest
  level stds); since ``spread(a + e) <= spread(a) + spread(e)``, the bias
  lies in ``[0, E spread(e)] <= s_max d_k``, ``d_k`` the mean range of ``k``
  standard normals.
"""

import math
from functools import lru_cache

import numpy as np

from ._base import _frozen, _per_row, _Result
from ._display import noise_rounded, plot_global_importance

__all__ = ["GlobalImportance"]

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
# how far above the noise-only level a mean must stand to count as signal, in the
# noise-only mean's standard deviations: as noise_floor's 2 std
_FLOOR_SDS = 2.0


_GRID_X = np.linspace(-10.0, 10.0, 2001)  # the standard normal's support, for the integrals


def _range_cdf(w, k):
    """``P(R <= w)`` for the range ``R`` of ``k`` independent standard normals
    (``w`` a number or an array): ``k int phi(x) (Phi(x + w) - Phi(x))^(k - 1) dx``,
    by the trapezoid rule on a fixed grid of step 0.01 over [-10, 10]."""
    from scipy import special

    w = np.asarray(w, dtype=float)
    x = _GRID_X
    pdf = np.exp(-0.5 * x**2) / math.sqrt(2.0 * math.pi)
    inner = (special.ndtr(x + w[..., None]) - special.ndtr(x)) ** (k - 1)
    return k * np.trapezoid(pdf * inner, x, axis=-1)


@lru_cache(maxsize=None)
def _range_quantile(k, q=0.95):
    """The ``q`` quantile of the range (max - min) of ``k`` independent standard normals.

    From the range's distribution function (:func:`_range_cdf`; numerical
    integration: a public constant, no draw).
    """
    from scipy import optimize

    return optimize.brentq(lambda w: float(_range_cdf(w, k)) - q, 1e-6, 20.0, xtol=1e-6)


@lru_cache(maxsize=None)
def _range_moments(k):
    """Mean and variance of the range of ``k`` independent standard normals.

    ``E R = int (1 - F(w)) dw`` and ``E R^2 = int 2 w (1 - F(w)) dw`` over ``w >=
    0``, ``F`` the range's distribution function (:func:`_range_cdf`), by the
    trapezoid rule (public constants, no draw). ``k = 2``: ``2 / sqrt(pi)``
    and ``2 (1 - 2 / pi)``; ``k = 3``: ``3 / sqrt(pi)``.
    """
    w = np.linspace(0.0, 12.0, 1201)  # P(R > 12) < 1e-20 for k <= 1000
    tail = 1.0 - _range_cdf(w, k)
    mean = float(np.trapezoid(tail, w))
    second = float(np.trapezoid(2.0 * w * tail, w))
    return mean, max(second - mean**2, 0.0)


def folded_normal_mean(a, s):
    """``E|a + e|`` for ``e ~ N(0, s^2)`` (the folded normal's mean), elementwise."""
    from scipy import special

    a, s = np.abs(np.asarray(a, dtype=float)), np.asarray(s, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = a / s
        out = s * (_SQRT_2_OVER_PI * np.exp(-0.5 * t**2) + t * special.erf(t / math.sqrt(2)))
    return np.where(s == 0, a, out)


def debias_mean(mean_abs, s, n_iter=60):
    """The common ``|a|`` whose mean folded-normal mean over the rows' noise is ``mean_abs``.

    Solves ``mean_i E|c + e_i| = mean_abs`` for ``c >= 0``, ``e_i ~ N(0,
    s_i^2)`` (:func:`folded_normal_mean`), by Newton's method from the right
    (the left side is increasing and convex in ``c``, so the iterates
    decrease monotonically to the root); 0 when ``mean_abs`` is at or below
    the noise-only level ``mean(s_i) sqrt(2/pi)``. One inversion of the mean,
    not one per row (a per-row inversion clipped at 0 keeps most of the bias
    at ``a = 0``: +0.50 s against this one's +0.19 s at 50 rows). With equal
    stds and many rows it lies between the noiseless mean ``mean |a_i|`` and
    ``mean_abs`` (Jensen: the folded mean is convex in ``|a|``);
    ``tests/test_global_importance.py`` measures its error. NaN where some
    ``s_i`` is NaN; ``mean_abs`` where all are 0.

    Parameters
    ----------
    mean_abs : float or ndarray of shape (m,)
        The mean ``|v|`` over the rows, per column.
    s : ndarray of shape (n,) or (n, m)
        The rows' noise stds, per column.

    Returns
    -------
    float or ndarray of shape (m,)
    """
    from scipy import special

    scalar = np.ndim(mean_abs) == 0
    m = np.atleast_1d(np.asarray(mean_abs, dtype=float))
    s = np.asarray(s, dtype=float).reshape(len(np.asarray(s)), -1)
    if s.shape[0] == 0:
        out = np.full(m.shape, np.nan)
        return float(out[0]) if scalar else out
    known = ~np.isnan(s).any(axis=0) & np.isfinite(m)
    exact = known & ~(s > 0).any(axis=0)
    noisy = known & ~exact & (m > _SQRT_2_OVER_PI * np.nan_to_num(s).mean(axis=0))
    safe = np.where(s > 0, s, 1.0)
    c = np.where(noisy, m, 0.0)  # the mean of E|c + e_i| >= c: the start lies right of the root
    for _ in range(n_iter):  # Newton steps, vectorised over rows and columns
        slope = np.where(s > 0, special.erf(c / safe / math.sqrt(2)), 1.0).mean(axis=0)
        excess = folded_normal_mean(c, np.nan_to_num(s)).mean(axis=0) - m
        step = np.where(noisy & (slope > 0) & (excess > 0), excess / np.where(
            slope > 0, slope, 1.0), 0.0)
        c = np.maximum(c - step, 0.0)
        if not (step > 1e-12 * np.maximum(c, 1e-300)).any():  # converged everywhere
            break
    out = np.where(exact, m, np.where(noisy, c, 0.0))
    out = np.where(known, out, np.nan)
    return float(out[0]) if scalar else out


def _row_quantities(values, std, groups):
    """Per row and column: ``y`` (|value| or a block's spread), the sd bound of its
    noise, its noise-only mean and its noise-only variance; and per column,
    whether it is a one-hot block.

    ``values`` (n, n_features) and ``std`` (n, n_features, NaN: not known) in one
    unit; ``groups`` None (per feature) or the result's groups.
    """
    n = values.shape[0]
    if groups is None:
        groups = [(None, np.array([j])) for j in range(values.shape[1])]
    shape = (n, len(groups))
    y, bound, level, var0 = (np.empty(shape) for _ in range(4))
    block_col = np.array([len(idx) > 1 for _, idx in groups], dtype=bool)
    for g, (_, idx) in enumerate(groups):  # a loop over columns, not rows
        block, sblock = values[:, idx], std[:, idx]
        if len(idx) == 1:
            s = sblock[:, 0]
            y[:, g] = np.abs(block[:, 0])
            bound[:, g] = s
            level[:, g] = s * _SQRT_2_OVER_PI
            var0[:, g] = s**2 * (1.0 - 2.0 / math.pi)
        else:
            top2 = np.sort(sblock, axis=1)[:, -2:]  # NaN sorts last: a NaN std stays NaN
            smax = sblock.max(axis=1)
            mean_k, var_k = _range_moments(len(idx))
            y[:, g] = block.max(axis=1) - block.min(axis=1)
            bound[:, g] = np.sqrt((top2**2).sum(axis=1))
            level[:, g] = smax * mean_k
            var0[:, g] = smax**2 * var_k
    return y, bound, level, var0, block_col


def summarize(values, std, groups, level=0.9, shared=False):
    """The fields of :class:`GlobalImportance` from values and stds in one unit.

    Parameters
    ----------
    values : ndarray of shape (n, n_features)
    std : ndarray of shape (n, n_features) or None
        None: the noise is not known (as NaN everywhere).
    groups : list of (str, ndarray of int) or None
        Per original column (one-hot blocks as spreads), or per feature (None).
    level : float
        The intervals' nominal two-sided level.
    shared : bool, default=False
        True: the rows' noise is one draw shared by all of them (the SHAP
        values of one DP background): the standard deviations of means are
        bounded by the means of the rows' standard deviations (Minkowski)
        instead of being divided by ``sqrt(n)``, and the population interval
        adds the noise's, which the rows' spread does not show.

    Returns
    -------
    dict of ndarray of shape (n_columns,)
    """
    from scipy import stats

    values = np.asarray(values, dtype=float)
    std = np.full(values.shape, np.nan) if std is None else np.asarray(std, dtype=float)
    n = values.shape[0]
    y, bound, lvl, var0, block_col = _row_quantities(values, std, groups)
    z = float(stats.norm.ppf(0.5 + level / 2.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        importance = y.mean(axis=0) if n else np.full(y.shape[1], np.nan)
        if shared:  # one draw for every row: sd(sum) <= sum(sd)
            noise_std = bound.mean(axis=0) if n else np.full(y.shape[1], np.nan)
            spread0 = np.sqrt(var0).mean(axis=0) if n else np.full(y.shape[1], np.nan)
        else:
            noise_std = np.sqrt((bound**2).sum(axis=0)) / n
            spread0 = np.sqrt(var0.sum(axis=0)) / n
        noise_level = lvl.mean(axis=0) if n else np.full(y.shape[1], np.nan)
        floor = noise_level + _FLOOR_SDS * spread0
        ddof = 1 if n > 1 else 0
        sampling_se = (y.std(axis=0, ddof=ddof) / math.sqrt(n) if n > 1
                       else np.full(y.shape[1], np.nan))
        # the population interval's low end subtracts each row's noise-only level
        # (a row whose noise is not known subtracts nothing: its |value| as released)
        corrected = y - np.nan_to_num(lvl, nan=0.0)
        corrected_se = (corrected.std(axis=0, ddof=ddof) / math.sqrt(n) if n > 1
                        else np.full(y.shape[1], np.nan))
        if shared:  # the common draw moves every row alike: not in the rows' spread
            sampling_se = np.sqrt(sampling_se**2 + np.nan_to_num(noise_std, nan=0.0)**2)
            corrected_se = np.sqrt(corrected_se**2 + np.nan_to_num(noise_std, nan=0.0)**2)
        low = np.maximum(corrected.mean(axis=0) - z * corrected_se, 0.0)
        high = importance + z * sampling_se
        rows_low = np.maximum(importance - noise_level - z * noise_std, 0.0)
        rows_high = importance + z * noise_std
        # one inversion per column (a numeric column's bound is its noise std)
        debiased = np.where(block_col, np.nan, debias_mean(importance, bound))
    return {"importance": importance, "noise_std": noise_std, "noise_level": noise_level,
            "noise_floor": floor, "debiased": debiased, "sampling_se": sampling_se,
            "low": low, "high": high, "rows_low": rows_low, "rows_high": rows_high}


class GlobalImportance(_Result):
    """Mean absolute attribution per feature or column, with its uncertainty.

    Returned by :meth:`FeatureAttribution.global_importance
    <skdpx.FeatureAttribution.global_importance>`, which documents the
    fields and what each interval covers; one row per feature (or original
    column), in the attribution's column order. Post-processing of released
    values: no spend.

    Parameters
    ----------
    importance, noise_std, noise_level, noise_floor, debiased, sampling_se, low, high, \
rows_low, rows_high : array-like of shape (n_columns,)
        See :meth:`FeatureAttribution.global_importance
        <skdpx.FeatureAttribution.global_importance>`.
    feature_names : sequence of str
        The features' (or original columns') names.
    epsilon_spent, delta_spent : float
        The explainer's total spend (of the summarised attributions).
    meta : dict, default=None
        Holds ``n_samples`` (the rows summarised), ``level``, ``grouped``,
        ``scaled`` and ``unit``.

    Attributes
    ----------
    supported : ndarray of bool of shape (n_columns,)
        ``importance > noise_floor``: the mean stands above what the noise
        alone gives (False where the noise is not known).

    Examples
    --------
    >>> from skdpx import FeatureAttribution
    >>> fa = FeatureAttribution([[0.5, 0.01], [-0.7, -0.02], [0.6, 0.0]], epsilon=1.0,
    ...                         std=[[0.05, 0.05]] * 3, feature_names=["age", "hours"],
    ...                         epsilon_spent=3.0, delta_spent=0.0)
    >>> gi = fa.global_importance()
    >>> gi
    GlobalImportance(n_columns=2, n_samples=3, epsilon_spent=3, delta_spent=0)
    >>> gi.importance.round(3).tolist(), gi.supported.tolist()
    ([0.6, 0.01], [True, False])
    >>> gi.ranking()
    ['age', 'hours']
    """

    _row_fields = ("importance", "noise_std", "noise_level", "noise_floor", "debiased",
                   "sampling_se", "low", "high", "rows_low", "rows_high")

    def __init__(self, importance, *, noise_std, noise_level, noise_floor, debiased,
                 sampling_se, low, high, rows_low, rows_high, feature_names,
                 epsilon_spent, delta_spent, meta=None):
        imp = np.array(importance, dtype=float).ravel()
        n = len(imp)
        self.importance = _frozen(imp)
        for name, value in (("noise_std", noise_std), ("noise_level", noise_level),
                            ("noise_floor", noise_floor), ("debiased", debiased),
                            ("sampling_se", sampling_se), ("low", low), ("high", high),
                            ("rows_low", rows_low), ("rows_high", rows_high)):
            arr = np.array([np.nan if v is None else v for v in np.atleast_1d(
                np.asarray(value, dtype=object))], dtype=float)
            setattr(self, name, _per_row(name, arr, n, dtype=float))
        self._init_common(n, feature_names, epsilon_spent, delta_spent, meta)

    @property
    def supported(self):
        """ndarray of bool: ``importance > noise_floor`` (False where not known)."""
        with np.errstate(invalid="ignore"):
            return self.importance > self.noise_floor

    def _rank_key(self):
        """How far each mean stands above its noise floor (by the mean where not known)."""
        return np.where(np.isfinite(self.noise_floor), self.importance - self.noise_floor,
                        self.importance)

    def ranking(self):
        """The names, most important first: by how far each mean stands above its
        noise floor (where the noise is known; by the mean otherwise).

        Returns
        -------
        list of str
        """
        order = np.argsort(-np.nan_to_num(self._rank_key(), nan=-np.inf), kind="stable")
        return [self.feature_names[j] for j in order]

    def __repr__(self):
        return (f"{type(self).__name__}(n_columns={len(self)}, "
                f"n_samples={self.meta.get('n_samples', 'unknown')}, "
                f"epsilon_spent={self.epsilon_spent:g}, delta_spent={self.delta_spent:g})")

    def __getitem__(self, key):
        from ._base import _select_rows

        idx = np.atleast_1d(_select_rows(len(self), key))
        params = self._selected_params(idx)
        params["feature_names"] = [self.feature_names[i] for i in idx]
        return type(self)(**params)

    def to_frame(self, sort=True):
        """The summary as a pandas DataFrame, one row per feature or column.

        Parameters
        ----------
        sort : bool, default=True
            Most important first (as :meth:`ranking`); in column order otherwise.

        Returns
        -------
        pandas.DataFrame
            Indexed by name: the fields, then ``supported``.
            ``df.attrs["meta"]`` holds ``meta``, ``df.attrs["unit"]`` the unit.
        """
        columns = [(f, getattr(self, f)) for f in self._row_fields]
        df = self._frame(columns + [("supported", self.supported)])
        df.index = self.feature_names
        df.index.name = "column" if self.meta.get("grouped") else "feature"
        if sort:
            df = df.loc[self.ranking()]
        df.attrs["unit"] = self.meta.get("unit", "")
        return df

    def plot(self, *, top_k=10, ax=None, **kwargs):
        """Horizontal bars of the mean absolute attribution, most important on top.

        Error bars: the population interval (``low`` to ``high``); a tick
        marks the noise-only level; bars whose mean the noise alone explains
        (not :attr:`supported`) are faded.

        Parameters
        ----------
        top_k : int or None, default=10
            How many bars (all when None), by :meth:`ranking`.
        ax : matplotlib.axes.Axes, default=None
            Where to draw; a new figure when None.
        **kwargs
            Passed to ``ax.barh`` (e.g. ``color``).

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.
        """
        return plot_global_importance(self, top_k=top_k, ax=ax, **kwargs)

    def _html_columns(self, head):
        spread = head.noise_std.copy()
        spread[~np.isfinite(spread) | (spread == 0)] = head.sampling_se[
            ~np.isfinite(spread) | (spread == 0)]
        cells = noise_rounded(head.importance, spread, plus_minus=False)
        return [
            ("name", np.array(head.feature_names, dtype=object)),
            ("mean |value|", cells),
            ("noise-only level", head.noise_level),
            ("supported", head.supported),
            (f"{self.meta.get('level', 0.9):g} interval (population)",
             np.array([f"{lo:.3g} to {hi:.3g}" for lo, hi in zip(head.low, head.high)],
                      dtype=object)),
            ("sampling se", head.sampling_se),
            ("noise std of the mean", head.noise_std),
        ], ("in column order; " + self.meta.get("unit", "") + "; supported: the mean stands "
            "above what the noise alone gives (noise_floor)")

    def _html_title(self):
        return (f"{type(self).__name__}: {len(self)} columns over "
                f"{self.meta.get('n_samples', '?')} samples, "
                f"\N{GREEK SMALL LETTER EPSILON} spent={self.epsilon_spent:g}, "
                f"\N{GREEK SMALL LETTER DELTA} spent={self.delta_spent:g}")
