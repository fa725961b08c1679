"""How results are shown: matplotlib plots and compact HTML tables.

The plot functions are the bodies of the result classes' ``plot()`` methods
(which document them); matplotlib is an optional extra, imported when a plot
is drawn. :func:`_import_optional` and :func:`_new_axes` are also used by the
result objects of :mod:`skdpx.attacks` and :mod:`skdpx.model_selection`
(through :mod:`skdpx.results._base`).
"""

import html
import math

import numpy as np


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


def noise_rounded(values, spread, plus_minus=True):
    """Cells of ``values`` rounded to what their noise supports.

    Each value is written to the decimal place of its noise's leading digit
    (``spread``: a standard deviation, or a scale of the same order), and
    with ``plus_minus`` followed by ``± spread`` to one significant digit:
    ``0.1234`` with spread ``0.034`` is ``"0.12 ± 0.03"``, ``123456.7`` with
    spread ``2500`` is ``"123000 ± 3000"``. Outside about 1e-4 to 1e6 the
    leading digit's place is written in scientific notation. Where the
    spread is not known (NaN), zero or negative, the value keeps 4
    significant digits. ``plus_minus`` may be an array (per cell).

    Parameters
    ----------
    values, spread : array-like of the same shape
    plus_minus : bool or array-like of bool, default=True

    Returns
    -------
    ndarray of str (object) of that shape
    """
    values, spread, plus_minus = np.broadcast_arrays(
        np.asarray(values, dtype=float), np.asarray(spread, dtype=float),
        np.asarray(plus_minus, dtype=bool))
    out = np.empty(values.shape, dtype=object)
    for idx in np.ndindex(values.shape):  # table cells: at most _HTML_ROWS x _HTML_COLUMNS
        out[idx] = _noise_cell(values[idx], spread[idx], bool(plus_minus[idx]))
    return out


def _noise_cell(v, s, plus_minus):
    """One cell of :func:`noise_rounded`."""
    if not math.isfinite(v):
        return "NaN" if math.isnan(v) else str(v)
    if not (math.isfinite(s) and s > 0) or s < 1e-300:
        return f"{v:.4g}"
    place = math.floor(math.log10(s))
    digit = math.floor(s / 10.0**place + 0.5)  # the spread's leading digit, half up
    if digit >= 10:  # 0.96 -> 1.0: one place up
        place, digit = place + 1, 1
    s_rounded = digit * 10.0**place
    if -4 <= place <= 6:
        places = max(0, -place)
        v_text = f"{round(v, -place):.{places}f}"
        s_text = f"{s_rounded:.{places}f}"
    else:  # scientific: the value's digits down to the spread's place
        lead = math.floor(math.log10(abs(v))) if v else place
        v_text = f"{v:.{max(0, lead - place)}e}"
        s_text = f"{s_rounded:.0e}"
    if v_text.startswith("-") and float(v_text) == 0:
        v_text = v_text[1:]  # "-0.00": a small negative value rounds to 0
    return f"{v_text} \N{PLUS-MINUS SIGN} {s_text}" if plus_minus else v_text


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


def _short(value):
    """A value for a one-line summary: numbers to 4 significant digits."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        return "NaN" if math.isnan(value) else f"{value:.4g}"
    return str(value)


# -- plots -------------------------------------------------------------------

def _barh(ax, values, top_k, names, block=None, rank=None, floor=None, **kwargs):
    """Horizontal bars of ``values`` (one per name), the ``top_k`` largest in
    ``rank`` (default: absolute value), largest on top; colour by sign, grey
    where ``block`` (an unsigned one-hot spread, or a categorical change).
    ``floor``: each value's noise floor, drawn as an error bar; bars within it
    are faded."""
    values = np.asarray(values, dtype=float)
    block = np.zeros(len(values), dtype=bool) if block is None else block
    rank = np.abs(np.nan_to_num(values)) if rank is None else rank
    order = np.argsort(-rank, kind="stable")
    if top_k is not None:
        order = order[:top_k]
    order = order[::-1]
    if "color" not in kwargs:
        kwargs["color"] = ["tab:gray" if block[j] else "tab:red" if values[j] < 0
                           else "tab:blue" for j in order]
    if floor is not None:
        kwargs.setdefault("xerr", np.nan_to_num(floor[order]))
        kwargs.setdefault("error_kw", {"elinewidth": 0.8, "capsize": 2})
    bars = ax.barh([names[j] for j in order], values[order], **kwargs)
    if floor is not None:
        with np.errstate(invalid="ignore"):  # an unknown floor (NaN) fades nothing
            within = np.isfinite(floor[order]) & (np.abs(values[order]) <= floor[order])
        for bar, faded in zip(bars, within):
            if faded:
                bar.set_alpha(0.35)
    ax.axvline(0.0, color="black", linewidth=0.8)
    return ax


def _one_unit(result, values, grouped, scaled):
    """``(grouped, scaled, (names, values, block))`` of a plot, with one unit on its axis.

    Grouped and unscaled, a numeric column's value is per unit of that
    column and a categorical column's the change between two of its levels:
    two units. Asked for (``grouped=True``), that is refused; as the default
    (no public ranges), the plot falls back to one bar per feature.
    """
    asked = grouped
    grouped, scaled = result._resolve(grouped, scaled)
    units = result._in_units(values, grouped, scaled)
    block = units[2]
    if grouped and not scaled and block.any() and not block.all():
        if asked:
            raise ValueError(
                "grouped=True with scaled=False would put two units on one axis: a numeric "
                "column's value is per unit of that column, a categorical column's the change "
                "between two of its levels. Plot scaled=True (by the public ranges: "
                "feature_range), or grouped=False.")
        grouped = False
        units = result._in_units(values, grouped, scaled)
    return grouped, scaled, units


def plot_attribution(result, index=0, *, top_k=10, grouped=None, scaled=None, ax=None, **kwargs):
    """:meth:`FeatureAttribution.plot <skdpx.FeatureAttribution.plot>`, which documents it."""
    i = result._row(index)
    grouped, scaled, (names, values, block) = _one_unit(result, result.values[i], grouped,
                                                        scaled)
    floor = rank = None
    if result.std is not None and np.isfinite(result.std[i]).any():
        floor = result._floor_rows(i, grouped, scaled)  # this row's only
        # ranked by how far each value stands above its noise floor (unknown: by value)
        rank = np.where(np.isfinite(floor), np.abs(values) - floor, np.abs(values))
    ax = _barh(_new_axes(ax), values, top_k, names=names, block=block, rank=rank, floor=floor,
               **kwargs)
    title = f"sample {i}: \N{GREEK SMALL LETTER EPSILON} = {result.epsilon[i]:.3g}"
    if result.phase[i] is not None:
        title += f" ({result.phase[i]})"
    if floor is not None:
        title += "\nerror bars: noise floor (2 std); faded: within it"
    ax.set_title(title)
    ax.set_xlabel(result._unit_label(grouped, scaled))
    return ax


def plot_counterfactual(result, index=0, *, top_k=None, ax=None, **kwargs):
    """:meth:`CounterfactualSet.plot <skdpx.CounterfactualSet.plot>`, which documents it."""
    i = result._row(index)
    ax = _new_axes(ax)
    change = result.counterfactuals[i] - result.queries[i]
    if np.isnan(change).all():
        ax.text(0.5, 0.5, "no counterfactual found", ha="center", va="center",
                transform=ax.transAxes)
    elif result._query_records is None:
        _barh(ax, change, top_k, result.feature_names, **kwargs)
    else:
        df = result.changes(i)
        block = df["change"].isna().to_numpy()
        names = [f"{f}: {_short(a)} \N{RIGHTWARDS ARROW} {_short(b)}"
                 for f, a, b in zip(df["feature"], df["from"], df["to"])]
        # categorical changes first (infinite rank), then by |change|
        values = np.where(block, 0.0, df["change"].to_numpy(dtype=float))
        _barh(ax, values, top_k, names, block=block,
              rank=np.where(block, np.inf, np.abs(values)), **kwargs)
    status = "valid" if result.valid[i] else "not valid"
    ax.set_title(f"query {i}: desired {result.desired_class[i]}, "
                 f"predicted {result.predicted_class[i]} ({status})")
    ax.set_xlabel("counterfactual - query" if result._query_records is None
                  else "counterfactual - query, in each column's original units")
    return ax


def plot_path(result, index=0, *, features=(0, 1), ax=None, **kwargs):
    """:meth:`RecoursePaths.plot <skdpx.RecoursePaths.plot>`, which documents it."""
    i = result._row(index)
    fx, fy = (result._feature_index(f) for f in features)
    ax = _new_axes(ax)
    path = result.paths[i]
    kwargs.setdefault("marker", ".")
    (line,) = ax.plot(path[:, fx], path[:, fy], **kwargs)
    ax.scatter(path[0, fx], path[0, fy], marker="o", s=60, color=line.get_color(),
               label="query", zorder=3)
    end = "end (success)" if result.success[i] else "end (failed)"
    ax.scatter(path[-1, fx], path[-1, fy], marker="*" if result.success[i] else "x",
               s=120, color=line.get_color(), label=end, zorder=3)
    ax.set_xlabel(result.feature_names[fx])
    ax.set_ylabel(result.feature_names[fy])
    ax.set_title(f"query {i}: cost {result.cost[i]:.3g}, "
                 f"{'success' if result.success[i] else 'no success'}")
    ax.legend()
    return ax


def _axis_values(column, pd):
    """A path's values of one original column as positions on an axis, and the
    tick labels (None for a numeric column): a categorical column's levels in
    their declared order (a pandas ``Categorical``), else in the order visited."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        codes = column.cat.codes.to_numpy().astype(float)
        codes[codes < 0] = np.nan
        return codes, [str(c) for c in column.cat.categories]
    if pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column):
        return column.to_numpy(dtype=float, na_value=np.nan), None
    codes, levels = pd.factorize(column)
    codes = codes.astype(float)
    codes[codes < 0] = np.nan
    return codes, [str(v) for v in levels]


def plot_path_records(result, index=0, *, features=None, ax=None, **kwargs):
    """:meth:`RecoursePaths.plot <skdpx.RecoursePaths.plot>` in original columns."""
    pd = _import_optional("pandas", "plot()", "test")
    i = result._row(index)
    steps = result.steps(i).drop(columns="step")
    columns = list(steps.columns)
    if features is None:
        moved = [c for c in columns if steps[c].nunique(dropna=False) > 1]
        chosen = (moved + [c for c in columns if c not in moved])[:2]
        if len(chosen) < 2:
            raise ValueError("plot() needs two columns; the result holds only "
                             f"{columns}")
    else:
        if len(features) != 2:
            raise ValueError(f"features must be a pair of columns, got {features!r}")
        chosen = []
        for f in features:
            if isinstance(f, (int, np.integer)) and not isinstance(f, bool):
                if not -len(columns) <= f < len(columns):
                    raise ValueError(f"column index {f} out of range for {len(columns)} "
                                     f"original columns {columns}")
                chosen.append(columns[int(f)])
            elif f in columns:
                chosen.append(f)
            else:
                raise ValueError(f"unknown column {f!r}; the original columns are {columns}")
    ax = _new_axes(ax)
    (x, xt), (y, yt) = (_axis_values(steps[c], pd) for c in chosen)
    kwargs.setdefault("marker", ".")
    (line,) = ax.plot(x, y, **kwargs)
    ax.scatter(x[:1], y[:1], marker="o", s=60, color=line.get_color(), label="query", zorder=3)
    end = "end (success)" if result.success[i] else "end (failed)"
    ax.scatter(x[-1:], y[-1:], marker="*" if result.success[i] else "x", s=120,
               color=line.get_color(), label=end, zorder=3)
    for ticks, set_ticks in ((xt, ax.set_xticks), (yt, ax.set_yticks)):
        if ticks is not None:
            set_ticks(np.arange(len(ticks)), ticks)
    ax.set_xlabel(chosen[0])
    ax.set_ylabel(chosen[1])
    ax.set_title(f"query {i}: cost {result.cost[i]:.3g}, "
                 f"{'success' if result.success[i] else 'no success'}")
    ax.legend()
    return ax


def plot_maps(result, image_shape=None, *, top_maps=3, classes=None, top_features=10,
                 grouped=None, scaled=None, cmap="RdBu_r", fig=None):
    """:meth:`LocallyLinearMaps.plot <skdpx.LocallyLinearMaps.plot>`, which documents it."""
    plt = _import_optional("matplotlib.pyplot", "plot()", "plot")
    rows = result._class_rows(classes)
    if int(top_maps) < 1:
        raise ValueError(f"top_maps must be at least 1, got {top_maps}")
    order = result.top_maps(min(int(top_maps), result.n_maps))[rows]
    if image_shape is not None:
        shape = tuple(int(v) for v in image_shape)
        if len(shape) != 2 or shape[0] * shape[1] != result.n_features:
            raise ValueError(
                f"image_shape must be (height, width) with height * width == "
                f"n_features ({result.n_features}), got {image_shape!r}"
            )
        n_cols = order.shape[1]
        if fig is None:
            fig = plt.figure(figsize=(1.8 * n_cols, 2.0 * len(rows)))
        else:
            fig.clear()
        axes = np.asarray(fig.subplots(len(rows), n_cols, squeeze=False))
        for r, k in enumerate(rows):
            for c, m in enumerate(order[r]):
                ax, image = axes[r, c], result.coef[k, m].reshape(shape)
                vmax = float(np.abs(image).max()) or 1.0
                ax.imshow(image, cmap=cmap, vmin=-vmax, vmax=vmax)
                title = f"{result.classes[k]}, map {m}"
                if not np.isnan(result.weights[k, m]):
                    title += f"\nweight {result.weights[k, m]:.2f}"
                ax.set_title(title, fontsize="small")
                ax.set_xticks([])
                ax.set_yticks([])
        return fig
    grouped, scaled, (names, values, _) = _one_unit(result, result.coef, grouped, scaled)
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
            if not np.isnan(result.weights[k, m]):
                label += f" (weight {result.weights[k, m]:.2f})"
            ax.barh(y + (c - (order.shape[1] - 1) / 2) * height, shown[c, feats],
                    height=height, label=label)
        ax.set_yticks(y, [names[j] for j in feats])
        ax.axvline(0.0, color="black", linewidth=0.8)
        ax.set_title(f"class {result.classes[k]}")
        ax.set_xlabel(result._unit_label(grouped, scaled))
        ax.legend(fontsize="small")
    return fig


def _swarm_offsets(x, lo, hi, n_bins=60, width=0.4):
    """Vertical offsets that stack the dots ``x`` of one line where they crowd:
    dots in one of ``n_bins`` bins of ``[lo, hi]`` alternate above and below the
    line (vectorised over the dots; NaN dots get 0)."""
    x = np.asarray(x, dtype=float)
    offsets = np.zeros(len(x))
    ok = np.isfinite(x)
    if not ok.any():
        return offsets
    span = (hi - lo) or 1.0
    bins = np.clip(((x[ok] - lo) / span * n_bins).astype(int), 0, n_bins - 1)
    order = np.argsort(bins, kind="stable")
    sorted_bins = bins[order]
    first = np.searchsorted(sorted_bins, sorted_bins, side="left")
    rank = np.arange(len(order)) - first  # the dot's place in its bin
    step = min(width / max(np.bincount(bins).max() / 2.0, 1.0), 0.08)
    out = np.empty(len(order))
    out[order] = ((rank + 1) // 2) * np.where(rank % 2 == 0, 1.0, -1.0) * step
    offsets[ok] = out
    return offsets


def _colour_values(result, values, frame, name, block, feature, j):
    """The values that colour one beeswarm line, or None (a one-hot block, or not given).

    ``frame``: a DataFrame of original columns (the line's column by ``name``,
    if numeric); else ``values``, the encoded features (the line's feature:
    ``feature`` when grouped, ``j`` otherwise)."""
    if block:
        return None
    if frame is not None:
        if name not in frame.columns:
            return None
        column = frame[name]
        if column.dtype.kind not in "iufb":
            return None
        return np.asarray(column, dtype=float)
    if values is None:
        return None
    return values[:, j if feature is None else feature]


def plot_beeswarm(result, feature_values=None, *, top_k=10, grouped=None, scaled=None, ax=None,
                  cmap=None, **kwargs):
    """:meth:`FeatureAttribution.plot_beeswarm <skdpx.FeatureAttribution.plot_beeswarm>`,
    which documents it."""
    n = len(result)
    frame = None
    if feature_values is not None and hasattr(feature_values, "columns"):
        frame = feature_values  # the original columns, matched by name
        if len(frame) != n:
            raise ValueError(f"feature_values has {len(frame)} rows, expected {n} (one per "
                             "explained sample)")
    elif feature_values is not None:
        try:
            feature_values = np.asarray(feature_values, dtype=float)
        except (TypeError, ValueError) as exc:
            raise ValueError("feature_values must be a DataFrame of the original columns or "
                             "numbers in the encoded features, one row per explained sample: "
                             f"{exc}") from None
        if feature_values.shape != (n, result.n_features):
            raise ValueError(f"feature_values must have shape {(n, result.n_features)} (one "
                             "row per explained sample, one column per encoded feature), got "
                             f"{feature_values.shape}")
    grouped, scaled, (names, values, block) = _one_unit(result, result.values, grouped, scaled)
    summary = result.global_importance(grouped, scaled)
    order = [names.index(name) for name in summary.ranking()]
    if top_k is not None:
        order = order[:top_k]
    order = order[::-1]  # the most important on top
    floor = None
    if result.std is not None:
        floor = result._floor_rows(slice(None), grouped, scaled)
    ax = _new_axes(ax, figsize=(7.0, 0.45 * len(order) + 1.6))
    finite = values[:, order][np.isfinite(values[:, order])]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    groups = result.groups if grouped and result.groups is not None else None
    kwargs.setdefault("s", 12)
    if cmap is None:  # blue (low) to red (high) through purple, as shap's beeswarm
        from matplotlib.colors import LinearSegmentedColormap

        cmap = LinearSegmentedColormap.from_list("skdpx_low_high", ["#008bfb", "#ff0052"])
    colored = None
    for pos, j in enumerate(order):  # a loop over the lines drawn (columns), not rows
        x = values[:, j]
        y = pos + _swarm_offsets(x, lo, hi)
        if floor is not None and np.isfinite(floor[:, j]).any():
            band = float(np.nanmedian(floor[:, j]))
            # a spread is non-negative: its band starts at 0
            ax.fill_betweenx([pos - 0.45, pos + 0.45], 0.0 if block[j] else -band, band,
                             color="0.92", zorder=0)
            with np.errstate(invalid="ignore"):
                alpha = np.where(np.abs(x) <= floor[:, j], 0.3, 1.0)
        else:
            alpha = np.ones(n)
        fv = _colour_values(result, feature_values, frame, names[j], block[j],
                            None if groups is None else groups[j][1][0], j)
        if fv is not None:
            vmin, vmax = np.nanpercentile(fv, [5, 95]) if np.isfinite(fv).any() else (0, 1)
            if vmin == vmax:
                vmin, vmax = np.nanmin(fv), np.nanmax(fv)
            if vmin == vmax:
                vmin, vmax = vmin - 0.5, vmax + 0.5
            colors = np.clip((fv - vmin) / (vmax - vmin), 0.0, 1.0)
            colored = ax.scatter(x, y, c=colors, cmap=cmap, vmin=0.0, vmax=1.0, alpha=alpha,
                                 linewidths=0, **kwargs)
        else:
            ax.scatter(x, y, color="tab:gray" if block[j] else "tab:blue", alpha=alpha,
                       linewidths=0, **kwargs)
    labels = []
    for j in order:
        k = summary.feature_names.index(names[j])
        label = names[j] + (" (spread)" if block[j] else "")
        if np.isfinite(summary.noise_floor[k]) and not summary.supported[k]:
            label += "\n(noise alone explains it)"
        labels.append(label)
    ax.set_yticks(np.arange(len(order)), labels)
    ax.set_ylim(-0.6, len(order) - 0.4)
    ax.axvline(0.0, color="black", linewidth=0.8)
    ax.set_xlabel(result._unit_label(grouped, scaled))
    title = f"{n} explained samples, ordered by mean |value|"
    if floor is not None:
        title += " above its noise floor;\nfaded: within the row's noise floor (2 std), " \
                 "shaded: the median floor"
    ax.set_title(title, fontsize="medium")
    if colored is not None:
        bar = ax.figure.colorbar(colored, ax=ax, ticks=[0, 1], aspect=40, pad=0.02)
        bar.set_ticklabels(["low", "high"])
        bar.set_label("feature value")
    return ax


def plot_global_importance(result, *, top_k=10, ax=None, **kwargs):
    """:meth:`GlobalImportance.plot <skdpx.results.GlobalImportance.plot>`, which documents it."""
    names = result.ranking()
    if top_k is not None:
        names = names[:top_k]
    idx = np.array([result.feature_names.index(name) for name in names[::-1]], dtype=int)
    ax = _new_axes(ax, figsize=(6.4, 0.4 * len(idx) + 1.4))
    m = result.importance[idx]
    lower = np.nan_to_num(m - result.low[idx])
    upper = np.nan_to_num(result.high[idx] - m)
    kwargs.setdefault("color", "tab:blue")
    bars = ax.barh(np.arange(len(idx)), m, xerr=[np.maximum(lower, 0), np.maximum(upper, 0)],
                   error_kw={"elinewidth": 0.8, "capsize": 2}, **kwargs)
    for bar, ok, known in zip(bars, result.supported[idx], np.isfinite(result.noise_floor[idx])):
        if known and not ok:
            bar.set_alpha(0.35)
    level = result.noise_level[idx]
    if np.isfinite(level).any():
        ax.scatter(level, np.arange(len(idx)), marker="|", s=200, color="black", zorder=3,
                   label="noise-only level")
        ax.legend(fontsize="small", loc="lower right")
    ax.set_yticks(np.arange(len(idx)), [result.feature_names[j] for j in idx])
    import textwrap

    ax.set_xlabel(textwrap.fill(result.meta.get("unit", "mean |attribution|"), 70))
    lvl = result.meta.get("level", 0.9)
    ax.set_title(f"mean |value| over {result.meta.get('n_samples', '?')} samples; error bars: "
                 f"{lvl:g} interval of the population mean;\nfaded: the noise alone explains it",
                 fontsize="medium")
    return ax
