"""PartialDependenceDisplay: DP partial dependence curves with the noise's error bands.

Post-processing only: it draws what :func:`partial_dependence` released
(averages and their noise's standard deviation); nothing here reads a row.
"""

import numpy as np
from scipy.stats import norm

from ..results._base import _import_optional
from ._partial_dependence import partial_dependence

__all__ = ["PartialDependenceDisplay"]


class PartialDependenceDisplay:
    """DP partial dependence plots, as :class:`sklearn.inspection.PartialDependenceDisplay`.

    Made by :meth:`from_estimator` (which releases one partial dependence
    per entry of ``features``), or from results of :func:`partial_dependence`.
    One-way numeric features are lines with a band of ``average +- q std``
    (``q`` the normal quantile of ``confidence``: 1.645 for 90%), the
    noise's interval; categorical features are bars with the same error
    bars; a two-way partial dependence is a heat map of the average (its
    largest ``std`` in the title).

    Parameters
    ----------
    pd_results : list of Bunch
        Results of :func:`partial_dependence`, one per plot.
    features : list
        The feature (or pair) of each result, as given.
    feature_names : list of list of str
        The names on each plot's axes.
    target_idx : int, default=0
        Which output to draw (a class of a multiclass classifier).
    confidence : float, default=0.9
        The coverage of the error bands under the noise (a normal interval).

    Attributes
    ----------
    axes_ : ndarray of matplotlib Axes
    lines_ : ndarray of matplotlib Line2D or None (one per plot; None for bars
        and heat maps)
    bands_ : ndarray of matplotlib PolyCollection or None (the error bands)
    figure_ : matplotlib Figure
    """

    def __init__(self, pd_results, *, features, feature_names, target_idx=0, confidence=0.9):
        self.pd_results = pd_results
        self.features = features
        self.feature_names = feature_names
        self.target_idx = target_idx
        self.confidence = confidence

    @classmethod
    def from_estimator(cls, estimator, X, features, *, response_method="auto",
                       grid_resolution=100, output_bounds=None, epsilon=1.0, delta=1e-6,
                       bounds=None, categories=None, accountant=None, random_state=None,
                       target_idx=0, confidence=0.9, ax=None, n_cols=3):
        """Release the partial dependence of each entry of ``features`` and plot them.

        Each entry (a feature, or a pair for a two-way plot) is one
        :func:`partial_dependence` release spending (``epsilon``, ``delta``)
        on ``accountant``: ``len(features)`` releases in all, composed by the
        ledger (give it a cap to bound their total). Every check of every
        entry that can fail before a spend is made before the first
        release. The other parameters are those of :func:`partial_dependence`.

        Parameters
        ----------
        estimator, X
            As for :func:`partial_dependence`.
        features : list of (int, str, or a pair of them)
            One plot per entry.
        target_idx : int, default=0
            The output drawn (a class of a multiclass classifier).
        confidence : float, default=0.9
            The error bands' coverage under the noise.
        ax : matplotlib Axes, array of Axes, or None
            Where to draw (None: a new figure with ``n_cols`` columns).
        n_cols : int, default=3

        Returns
        -------
        display : PartialDependenceDisplay
        """
        features = list(features)
        if not features:
            raise ValueError("features is empty: nothing to plot. Nothing was spent.")
        common = dict(response_method=response_method, grid_resolution=grid_resolution,
                      output_bounds=output_bounds, epsilon=epsilon, delta=delta,
                      bounds=bounds, categories=categories, accountant=accountant)
        # every entry's checks (names, bounds, the black box on the public grid)
        # before the first release: a bad last entry spends nothing
        from ._partial_dependence import _PartialDependence

        names = []
        for f in features:
            check = _PartialDependence(estimator, f, random_state=random_state,
                                       **{k: v for k, v in common.items() if k != "accountant"})
            check._validate_params()
            check._validate_fit(X, None)
            names.append([_name(check.schema_, c) for c in _entries(f)])
        results = [partial_dependence(estimator, X, f, random_state=random_state, **common)
                   for f in features]
        display = cls(results, features=features, feature_names=names, target_idx=target_idx,
                      confidence=confidence)
        return display.plot(ax=ax, n_cols=n_cols)

    def plot(self, ax=None, *, n_cols=3):
        """Draw the plots; returns ``self`` with ``axes_``, ``lines_``, ``bands_``, ``figure_``."""
        plt = _import_optional("matplotlib.pyplot", "PartialDependenceDisplay", "plot")
        n = len(self.pd_results)
        if ax is None:
            n_cols = min(n_cols, n)
            n_rows = -(-n // n_cols)
            fig, axes = plt.subplots(n_rows, n_cols, figsize=(4 * n_cols, 3.2 * n_rows),
                                     squeeze=False)
            for extra in axes.ravel()[n:]:
                extra.set_visible(False)
            axes = axes.ravel()[:n]
        else:
            axes = np.atleast_1d(np.asarray(ax, dtype=object)).ravel()
            if len(axes) != n:
                raise ValueError(f"ax holds {len(axes)} Axes for {n} plots.")
            fig = axes[0].figure
        q = float(norm.ppf(0.5 + self.confidence / 2.0))
        lines, bands = [], []
        for axis, result, names in zip(axes, self.pd_results, self.feature_names):
            average = np.asarray(result.average)[self.target_idx]
            std = np.asarray(result.std)[self.target_idx]
            grids = result.grid_values
            line = band = None
            if len(grids) == 1:
                grid = grids[0]
                if grid.dtype.kind in "biuf":
                    (line,) = axis.plot(grid, average)
                    band = axis.fill_between(grid, average - q * std, average + q * std,
                                             alpha=0.3, color=line.get_color(),
                                             label=f"{self.confidence:.0%} noise band")
                else:
                    labels = [str(v) for v in grid]
                    axis.bar(labels, average, yerr=q * std, capsize=3, alpha=0.8)
                axis.set_xlabel(names[0])
                axis.set_ylabel("partial dependence")
            else:
                image = axis.pcolormesh(np.arange(len(grids[1])), np.arange(len(grids[0])),
                                        average, shading="nearest")
                axis.set_yticks(np.arange(len(grids[0])), _tick_labels(grids[0]))
                axis.set_xticks(np.arange(len(grids[1])), _tick_labels(grids[1]))
                axis.set_ylabel(names[0])
                axis.set_xlabel(names[1])
                axis.set_title(f"noise std <= {std.max():.2g}", fontsize="small")
                fig.colorbar(image, ax=axis)
            lines.append(line)
            bands.append(band)
        self.axes_, self.figure_ = np.asarray(axes, dtype=object), fig
        self.lines_ = np.asarray(lines, dtype=object)
        self.bands_ = np.asarray(bands, dtype=object)
        return self


def _entries(feature):
    if isinstance(feature, (list, tuple)):
        return list(feature)
    return [feature]


def _name(schema, feature):
    if isinstance(feature, str):
        return feature
    return schema.groups[int(feature)][0]


def _tick_labels(grid, most=8):
    """Tick labels of a grid axis (numbers shortened)."""
    labels = [f"{v:.3g}" if isinstance(v, (float, np.floating)) else str(v) for v in grid]
    if len(labels) > most:  # every k-th label
        step = -(-len(labels) // most)
        labels = [label if i % step == 0 else "" for i, label in enumerate(labels)]
    return labels
