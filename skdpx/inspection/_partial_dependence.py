"""DP partial dependence: :func:`partial_dependence`, as ``sklearn.inspection`` computes it.

The partial dependence of a black box ``f`` on a feature set ``S`` at a grid
value ``v`` is the average over the rows of ``f`` at the row with ``S`` set
to ``v``: ``PD(v) = (1/n) sum_i f(x_i with x_S = v)``. scikit-learn computes
it exactly ("brute" method) and takes its grid from the rows' percentiles;
both read the private rows. Here:

* the grid comes from public facts only: ``grid_resolution`` evenly spaced
  points over a numeric feature's declared ``bounds`` (integers: the
  distinct rounded points), a categorical feature's declared levels
  (``categories``), the product grid for two features;
* each row's contribution is the vector of the black box's bounded outputs
  at the row with the feature(s) set to each of the ``G`` grid values:
  probabilities in [0, 1] (``predict_proba``), or decision values /
  regression outputs clipped to the declared ``output_bounds = (lo, hi)``;
  a row on which the black box fails (raises, NaN) gets the middle of the
  range at every grid point, a rule on that row alone;
* the sum over the rows of these vectors, centred at the middle ``c = (lo +
  hi) / 2`` of the range (``sum_i (v_i - c)``), is released once with the
  Gaussian mechanism through the privacy core, and divided by the fit's
  DP row count ``n~`` (:class:`~skdpx.privacy.FitCount`, released first,
  inside ``epsilon``, with 15% of it: ``PD_COUNT_SHARE``): ``average =
  released / n~ + c`` (post-processing).

**Sensitivity.** With ``K`` outputs (1 for a binary classifier, a
regressor or a binary decision function; the number of classes otherwise)
each coordinate of a row's centred vector lies in ``[-(hi - lo) / 2, (hi -
lo) / 2]``, so its L2 norm is at most ``sqrt(G K) (hi - lo) / 2``. Under
add-or-remove one row (the default relation) the released sum changes by
one row's centred vector: L2 sensitivity ``sqrt(G K) (hi - lo) / 2``. Under
replace-one it changes by the difference of two rows' vectors, each
coordinate in ``[-(hi - lo), hi - lo]``: sensitivity ``sqrt(G K) (hi -
lo)``, twice as much (and the number of rows is public by the relation: no
count is released). Centring costs nothing and lowers the add-or-remove
sensitivity of the plain sum (whose rows' vectors have norms up to ``sqrt(G
K) max(|lo|, |hi|)``: twice as much for probabilities); it also makes the
count's noise matter less (below).

**The rows the black box sees.** A DataFrame's rows reach the black box as
they came (the same columns, dtypes and missing values), with the grid
feature(s) set to each grid value, as scikit-learn's "brute" method does;
an array's rows are the validated float rows. A categorical grid column is
a categorical over the *declared* levels, not over its dtype's categories
(``astype("category")`` takes those from the rows: one row would then
change the column every other row is scored with).

**Standard deviation.** ``std`` is the noise's, from public facts and DP
outputs only: the sum's noise ``sigma = noise_multiplier * sensitivity``
over the DP count, plus, to first order, the count's own noise (standard
deviation ``s_n``) acting on the centred average: ``std = sqrt(sigma^2 +
(average - c)^2 s_n^2) / n~``. It says nothing of the black box or of the
sampling of the rows (the rows are the population the average is over).

**The count's share.** With ``a = |average - c|``, the count's term ``a
s_n`` against the sums' ``sigma`` (per grid point) decides the split: on
Adult's probabilities (``a`` about 0.25) at epsilon 0.1 and G = 10, the
count at 5% of epsilon gives a count term of 71 rows against a sum term of
60 (total 93), at 15% 24 against 67 (total 71), at 30% 12 against 80 (81).
15% (``PD_COUNT_SHARE``) is near the best for grids of 2 to 16 points at
epsilon 0.1 to 1, and keeps the error mostly Gaussian.

**Where the rows are.** ``X`` may be in memory, a dask array or DataFrame,
or a Spark DataFrame: the sums are one
:func:`~skdpx.utils._engine.partition_sum` of the same per-block function
(:class:`_GridSums`) on every engine, in consecutive blocks of rows in
memory, in the Dask workers or the Spark executors (the black box is
shipped there: it must be picklable), with only the (G, K) total reaching
the driver, where the privacy core adds the noise. The schema is read from
the columns and dtypes (the Spark schema), never from a row; a DataFrame's
partitions or Arrow batches reach the black box as they came.

**What it protects.** The rows of ``X`` (the privacy unit is one row of
``X``), when the black box does not depend on them: trained on other rows,
or itself DP and accounted on the same ledger. The black box, the grid and
the declared bounds and levels are public.
"""

import math
from numbers import Integral

import numpy as np
from sklearn.utils import Bunch

from .._sklearn_compat import HasMethods, Interval, StrOptions
from ..base import DPEstimator, FitData
from ..privacy import (BUDGET_PARAMETER_CONSTRAINTS, COUNT_SHARE, EstimatorLedger,
                       NonPrivateDpEvent, SpendPlan, calibrate_noise, check_bounds,
                       gaussian_event, gaussian_release)
from ..utils._blackbox import BlackBoxOutputError, check_output, finite_rows, map_rows
from ..utils._blackbox import output_range as _output_range
from ..utils._chunks import row_slices
from ..utils._engine import partition_sum, source_rows
from ..utils._tables import frame_meta, validate_table

__all__ = ["partial_dependence"]

#: The share of epsilon the DP row count takes here (three times COUNT_SHARE): the
#: average is a ratio whose denominator is the count, and at 5% the count's noise
#: dominated the std on grids of up to about 16 points (see the module's docstring).
PD_COUNT_SHARE = 0.15

_RESPONSE_METHODS = ("auto", "predict_proba", "decision_function", "predict")


class _PublicBounds:
    """The bounds of a partial dependence fit: only those declared, and nothing released.

    The rows are handed to the black box as they are (its outputs are
    bounded, whatever the rows hold): no bound of a row is needed, so none
    is estimated and nothing is spent on bounds. Only the grid features'
    declared bounds are read (checked in ``_validate_fit``).
    """

    declared = True
    event = None
    share = 0.0
    label = "declared bounds"

    def __init__(self, lower, upper):
        self.lower, self.upper = lower, upper

    def release(self, X, *, noise, commitment):
        return self.lower.copy(), self.upper.copy()


def _declared_bounds(schema, bounds):
    """(lower, upper) in encoded units from the public ``schema`` or ``bounds`` (NaN: none)."""
    if schema.encoder is not None:
        return schema.lower.copy(), schema.upper.copy()
    if bounds is None:
        nan = np.full(schema.n_encoded, np.nan)
        return nan, nan.copy()
    return check_bounds(bounds, schema.n_encoded, allow_missing=True)


def _as_outputs(out, method):
    """The black box's raw output as (n, K) floats: a binary classifier's positive class."""
    out = np.asarray(out, dtype=float)
    if out.ndim == 1:
        out = out[:, None]
    if method == "predict_proba" and out.shape[1] == 2:
        out = out[:, 1:]  # a binary classifier: the positive class, as scikit-learn
    return out


class _GridSums:
    """The per-block function of the partial dependence: a block's centred sums (G, K).

    The same function on every engine (:func:`~skdpx.utils._engine.partition_sum`):
    in memory on consecutive blocks of rows, on Dask in the workers, on Spark
    in the executors (it is shipped there with the black box, which must be
    picklable). ``Z`` is a block of the encoded rows; ``frame``, for a
    DataFrame's rows, the same rows as they came (the black box sees them,
    with the grid feature(s) set to each grid value: scikit-learn's "brute"
    method). A row the black box fails on (raises, NaN) gets the middle of
    the range at every grid point: a rule on that row alone. Private: the
    total is released through the privacy core.
    """

    def __init__(self, estimator, schema, extra):
        self.estimator, self.schema = estimator, schema
        self.method, self.range = extra["method"], extra["range"]
        self.columns, self.grid = extra["columns"], extra["grid"]
        self.points, self.labels = extra["points"], extra["labels"]
        self.levels, self.n_outputs = extra["levels"], extra["n_outputs"]

    def _add(self, sums, g, block, rows_of):
        lo, hi = self.range
        centre = (lo + hi) / 2.0
        call = getattr(self.estimator, self.method)
        out = map_rows(lambda idx: _as_outputs(call(rows_of(block, idx)), self.method),
                       len(rows_of(block, None)), fill=np.full(self.n_outputs, centre),
                       row_ok=finite_rows)
        sums[g] += (np.clip(out, lo, hi) - centre).sum(axis=0)

    def __call__(self, Z, frame=None):
        # the engine's block (a partition, an Arrow batch, a block in memory) in
        # sub-blocks of a fixed size from the width: the temporaries (a copy of the
        # rows, the black box's) are one sub-block's, however large the partition
        sums = np.zeros((len(self.grid), self.n_outputs))
        for rows in row_slices(len(Z), 2 * Z.shape[1]):
            sums += self._block(Z[rows], None if frame is None else frame.iloc[rows])
        return sums

    def _block(self, Z, frame):
        sums = np.zeros((len(self.grid), self.n_outputs))
        if frame is not None:
            def rows_of(block, idx):
                return block if idx is None else block.iloc[idx]

            block = self.schema.public_frame(frame).copy()
            for g, point in enumerate(self.points):
                for label, value, levels in zip(self.labels, point, self.levels):
                    block[label] = _grid_column(block[label].dtype, [value] * len(block),
                                                levels, block.index)
                self._add(sums, g, block, rows_of)
            return sums

        def decoded(block, idx):
            return block if idx is None else self.schema.decode(block[idx])

        block = np.array(Z, dtype=float)
        for g, point in enumerate(self.grid):
            block[:, self.columns] = point
            self._add(sums, g, block, decoded)
        return sums


class _PartialDependence(DPEstimator):
    """The DP release of one partial dependence (the machinery of :func:`partial_dependence`).

    A :class:`~skdpx.base.DPEstimator`: ``fit(X)`` validates, releases the
    DP row count, plans and commits the Gaussian release of the centred
    sums, then reads the rows. See the module's docstring for the
    sensitivity and the standard deviation.
    """

    #: the name messages give (the function the user called)
    _public_name = "partial_dependence"

    #: fit takes Dask and Spark data (skdpx.utils._tables.validate_table): the sums
    #: are computed where the rows are (_GridSums)
    _accepts_distributed = True

    _parameter_constraints = {
        **BUDGET_PARAMETER_CONSTRAINTS,
        "estimator": [HasMethods(["predict"])],
        "features": "no_validation",  # a column name or index, or a list of one or two
        "response_method": [StrOptions(set(_RESPONSE_METHODS))],
        "grid_resolution": [Interval(Integral, 1, None, closed="left")],
        "output_bounds": ["array-like", None],
        "categories": [dict, None],
        "kind": [StrOptions({"average", "individual", "both"})],
    }

    def __init__(self, estimator, features, *, response_method="auto", grid_resolution=100,
                 output_bounds=None, kind="average", epsilon=1.0, delta=1e-6, bounds=None,
                 categories=None, accountant=None, random_state=None):
        self.estimator = estimator
        self.features = features
        self.response_method = response_method
        self.grid_resolution = grid_resolution
        self.output_bounds = output_bounds
        self.kind = kind
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.categories = categories
        self.accountant = accountant
        self.random_state = random_state

    def _count_basis(self):
        # the count takes PD_COUNT_SHARE of epsilon (FitCount takes COUNT_SHARE of this)
        return self.epsilon * PD_COUNT_SHARE / COUNT_SHARE

    def _new_ledger(self):
        # the shared ledger's labels name the function the user called
        return EstimatorLedger(self.epsilon, self.delta, self.accountant,
                               prefix="partial_dependence: ")

    # ------------------------------------------------------------- validation
    def _feature_list(self):
        features = self.features
        if isinstance(features, (str, Integral)) and not isinstance(features, bool):
            features = [features]
        try:
            features = list(features)
        except TypeError:
            raise ValueError(f"features must be a column name or index, or a list of one or "
                             f"two of them; got {self.features!r}. Nothing was spent.") from None
        if len(features) not in (1, 2):
            raise ValueError(f"features must name one feature or a pair (a two-way partial "
                             f"dependence); got {len(features)}. Nothing was spent.")
        return features

    def _grid(self, features, lower, upper):
        """The public grid: encoded columns set, their values (G, width), grid_values."""
        schema = self.schema_
        columns, axes, values, labels = [], [], [], []
        for f in features:
            try:
                block = schema.indices([f], "features")
            except ValueError as err:
                raise ValueError(f"{err} Nothing was spent.") from None
            position = next(i for i, (_, idx) in enumerate(schema.groups)
                            if np.array_equal(idx, block))
            name = schema.groups[position][0]
            labels.append(schema.columns[position])
            if schema.categorical[block].all():
                levels = list(schema.encoder._levels[schema.columns[position]])
                axes.append(np.eye(len(block)))
                values.append(np.asarray(levels, dtype=object)
                              if any(isinstance(v, str) for v in levels) else np.asarray(levels))
            else:
                lo, hi = lower[block[0]], upper[block[0]]
                if not (np.isfinite(lo) and np.isfinite(hi)):
                    raise ValueError(
                        f"features: {name!r} is numeric and has no declared bounds: its grid "
                        "comes from its public bounds, never from the rows. Declare them in "
                        "bounds (e.g. bounds={%r: (lower, upper)}). Nothing was spent." % name)
                grid = np.linspace(lo, hi, self.grid_resolution)
                if schema.integer[block[0]]:
                    grid = np.unique(np.clip(np.rint(grid), np.ceil(lo), np.floor(hi)))
                else:
                    grid = np.unique(grid)
                axes.append(grid[:, None])
                values.append(grid)
            columns.append(block)
        if len(axes) == 1:
            encoded = axes[0]
            points = [(v,) for v in values[0]]
        else:  # the product grid, the first feature's values varying slowest
            a, b = axes
            encoded = np.concatenate([np.repeat(a, len(b), axis=0), np.tile(b, (len(a), 1))],
                                     axis=1)
            points = [(u, v) for u in values[0] for v in values[1]]
        return np.concatenate(columns), encoded, values, labels, points

    def _validate_fit(self, X, y):
        if self.kind != "average":
            raise ValueError(f"kind={self.kind!r}: individual (ICE) curves are one curve per "
                             "private row and are not released; only kind='average' is. "
                             "Nothing was spent.")
        features = self._feature_list()
        frame = X
        X = validate_table(self, X, reset=True, categories=self.categories)
        self._require_delta("partial_dependence's Gaussian release")
        method, (lo, hi) = _output_range(self.estimator, self.response_method,
                                         self.output_bounds)
        lower, upper = _declared_bounds(self.schema_, self.bounds)
        columns, grid, values, labels, points = self._grid(features, lower, upper)
        frame = frame if self.schema_.kind == "frame" else None
        # the input's columns and dtypes (no row: a Dask or Spark DataFrame's schema)
        meta = None if frame is None else frame_meta(frame)
        # the declared levels of each categorical grid feature (None: numeric)
        levels = [list(v) if self.schema_.categorical[c].all() else None
                  for v, c in zip(values, columns)]
        # the black box on public points: the schema's probe point with the feature(s)
        # set to every grid value (never a private row), each grid column built as the
        # rows' will be (from the column's dtype and the declared levels only); a
        # failure there is a fact about the black box or the dtype, refused before
        # anything is spent
        probe = np.repeat(self.schema_.probe(self.bounds), len(grid), axis=0)
        probe[:, columns] = grid
        probe = self.schema_.decode(probe)
        if frame is not None:
            for j, label in enumerate(labels):
                try:
                    probe[label] = _grid_column(meta[label].dtype,
                                                [point[j] for point in points],
                                                levels[j], probe.index)
                except (TypeError, ValueError) as exc:
                    raise ValueError(
                        f"features: the grid of {label!r} cannot be set in its column's dtype "
                        f"{meta[label].dtype}: {type(exc).__name__}: {exc}. Convert the column "
                        "(e.g. to float or to a categorical of the declared levels). Nothing "
                        "was spent.") from exc
        out = self._outputs(method, probe, len(probe), public=True)
        n_outputs = out.shape[1]
        return FitData(X, extra={"method": method, "range": (lo, hi), "columns": columns,
                                 "grid": grid, "grid_values": values,
                                 "n_outputs": n_outputs, "frame": frame, "labels": labels,
                                 "points": points, "levels": levels})

    def _outputs(self, method, rows, n_rows, *, public=False):
        """The black box's outputs (n_rows, K): K = 1 for a binary classifier's positive
        class, a binary decision function or a regressor."""
        name = type(self.estimator).__name__
        where = "public probe points (the grid at the schema's probe point)"
        call = getattr(self.estimator, method)
        if public:
            try:
                out = call(rows)
            except Exception as exc:
                raise BlackBoxOutputError(
                    f"the black box ({name}) failed on {where}: {type(exc).__name__}: {exc}. "
                    "Nothing was spent.") from exc
            classes = getattr(self.estimator, "classes_", None)
            if method == "predict":
                out = check_output(out, n_rows, expect="values", name=name, method=method,
                                   where=where, consequence="Nothing was spent.")
            else:
                expect = "columns" if method == "predict_proba" else "margins"
                if classes is None:
                    raise ValueError(f"{name} has no classes_: a classifier's outputs are "
                                     "read per class. Nothing was spent.")
                out = check_output(out, n_rows, expect=expect, name=name, method=method,
                                   classes=classes, where=where,
                                   consequence="Nothing was spent.")
        return _as_outputs(call(rows) if not public else out, method)

    # ------------------------------------------------------------------ plan
    def _fit_bounds(self, relation):
        # only the grid features' declared bounds are read; nothing is estimated
        return _PublicBounds(*_declared_bounds(self.schema_, self.bounds))

    def _sensitivity(self, data, relation):
        lo, hi = data.extra["range"]
        size = len(data.extra["grid"]) * data.extra["n_outputs"]
        half = math.sqrt(size) * (hi - lo) / 2.0
        return half if relation == "add_or_remove" else 2.0 * half

    def _plan_spend(self, data, relation, bounds, count):
        """One Gaussian release of the centred sums (G x K numbers), from public facts.

        The noise multiplier meets (``epsilon``, ``delta``) together with the
        DP row count (``count.prior()``); the sensitivity is the module's,
        under ``relation``.
        """
        sensitivity = self._sensitivity(data, relation)
        G, K = len(data.extra["grid"]), data.extra["n_outputs"]
        what = (f"partial dependence of {self._feature_list()!r}: centred sums of {K} "
                f"output(s) at {G} grid points")
        if math.isinf(self.epsilon):
            return SpendPlan(NonPrivateDpEvent(), f"non-private {what} (epsilon=inf)",
                             noise_multiplier=0.0, sensitivity=sensitivity)
        z = calibrate_noise(self.epsilon, self.delta, prior=count.prior())
        return SpendPlan(gaussian_event(z), f"{what} (Gaussian)", noise_multiplier=z,
                         sensitivity=sensitivity)

    # ------------------------------------------------------------------- fit
    def _centred_sums(self, data):
        """The exact sums over the rows of their centred, bounded outputs: (G, K).

        One :func:`~skdpx.utils._engine.partition_sum` of :class:`_GridSums`,
        wherever the rows are (in memory, Dask, Spark). Private: read only
        inside the committed fit (and by the tests' audit).
        """
        X, extra = data.X, data.extra
        frame = extra.get("frame")
        frames = [] if frame is None else [source_rows(frame, X)]
        sums = partition_sum(_GridSums(self.estimator, self.schema_, extra), X, *frames)
        # no row on an engine: nothing to add
        return np.zeros((len(extra["grid"]), extra["n_outputs"])) if sums is None else sums

    def _private_fit(self, data, plan, commitment, noise):
        extra = data.extra
        lo, hi = extra["range"]
        centre = (lo + hi) / 2.0
        sums = self._centred_sums(data)
        released = gaussian_release(sums, noise_multiplier=plan.noise_multiplier,
                                    sensitivity=plan.sensitivity, noise=noise,
                                    commitment=commitment)
        # post-processing of DP outputs: the released sums over the DP count
        n = plan.count.n
        average = released / n + centre
        sum_std = plan.noise_multiplier * plan.sensitivity
        std = np.sqrt(sum_std ** 2 + ((average - centre) * plan.count.std) ** 2) / n
        shape = tuple(len(v) for v in extra["grid_values"])
        K = extra["n_outputs"]
        self.grid_values_ = extra["grid_values"]
        self.average_ = average.T.reshape((K,) + shape)
        self.std_ = std.T.reshape((K,) + shape)
        self.noise_multiplier_ = plan.noise_multiplier
        self.sensitivity_ = plan.sensitivity
        self.response_method_ = extra["method"]
        self.output_bounds_ = (lo, hi)


def _grid_column(dtype, values, levels, index):
    """A column of ``values`` (one per row) for a frame column of ``dtype``.

    A categorical grid feature gets a categorical over its *declared* levels
    (ordered as the dtype is), never the dtype's own categories: those can
    come from the private rows (``astype("category")``), and one row would
    then change the column every other row is scored with. A numeric one keeps
    the column's dtype (numpy or pandas extension, e.g. ``Int64``). Reads
    only the dtype and public values.
    """
    import pandas as pd

    if levels is not None:
        if isinstance(dtype, pd.CategoricalDtype) or dtype == object:
            ordered = isinstance(dtype, pd.CategoricalDtype) and bool(dtype.ordered)
            if isinstance(dtype, pd.CategoricalDtype):
                return pd.Series(pd.Categorical(values, categories=levels, ordered=ordered),
                                 index=index)
            return pd.Series(np.asarray(values, dtype=object), index=index)
        return pd.Series(pd.array(values), index=index).astype(dtype)
    return pd.Series(np.asarray(values, dtype=float), index=index).astype(dtype)


def partial_dependence(estimator, X, features, *, response_method="auto", grid_resolution=100,
                       output_bounds=None, kind="average", epsilon=1.0, delta=1e-6,
                       bounds=None, categories=None, accountant=None, random_state=None):
    """DP partial dependence of a black box on one feature or a pair (``sklearn.inspection``).

    The average, over the private rows of ``X``, of the black box's output
    with ``features`` set to each value of a public grid, released with the
    Gaussian mechanism and divided by a DP count of the rows. Spends
    (``epsilon``, ``delta``) on ``accountant``, committed before any row is
    read. The privacy unit is one row of ``X``; the neighbouring relation is
    the ledger's (add-or-remove one row by default). See
    :mod:`skdpx.inspection` and the user guide's :ref:`inspection` for the
    sensitivity and the noise's standard deviation.

    Parameters
    ----------
    estimator : fitted estimator
        The black box: a classifier (``predict_proba`` or
        ``decision_function``) or a regressor (``predict``). It must not
        depend on the rows of ``X`` (trained on other rows, or DP on the
        same ledger), or the guarantee does not cover them.
    X : array-like or DataFrame of shape (n_samples, n_features)
        The private rows the average is over. Passed to the black box as
        they came (same columns and dtypes), with the feature(s) set to the
        grid. A dask array or DataFrame, or a Spark DataFrame: the sums
        are computed where the rows are, and only their total comes back.
    features : int, str, or list of one or two of them
        The feature (a two-way partial dependence: the pair) to vary, by
        column name or index.
    response_method : {"auto", "predict_proba", "decision_function", "predict"}, default="auto"
        As scikit-learn's: a classifier's ``predict_proba``, else its
        ``decision_function``; a regressor's ``predict``.
    grid_resolution : int, default=100
        The number of evenly spaced grid points over a numeric feature's
        declared bounds (fewer for an integer feature with fewer values). A
        categorical feature's grid is its declared levels.
    output_bounds : (float, float) or None, default=None
        The declared range of a decision function or a regressor's output
        (outputs are clipped to it); required for them, refused for
        probabilities (in [0, 1]).
    kind : {"average"}, default="average"
        Only the average is released ("individual" curves are one per
        private row, and refused).
    epsilon : float, default=1.0
        The budget of this release (the DP row count takes 15% of it under
        add-or-remove); ``np.inf`` gives the exact, non-private average.
    delta : float, default=1e-6
    bounds : tuple, dict or None, default=None
        Public bounds: ``(lower, upper)`` (scalars or one per feature), or
        ``{column: (lower, upper)}`` for a DataFrame's numeric columns. A
        numeric feature in ``features`` must have declared bounds (its grid
        is made from them); no other bound is needed, nothing is estimated.
    categories : dict or None, default=None
        ``{column: [levels...]}``: the declared levels of a DataFrame's
        categorical columns (a categorical feature's grid).
    accountant : PrivacyLedger, BudgetAccountant or None, default=None
        The ledger of ``X``'s budget (None: nothing caps it, with a warning).
    random_state : int, RandomState, Generator or None, default=None
        None: secure noise. A seed makes the noise reproducible (and the
        release not private), with a ``PrivacyLeakWarning``.

    Returns
    -------
    result : :class:`~sklearn.utils.Bunch`
        ``grid_values``: a list with one array per feature (its grid);
        ``average``: array of shape ``(n_outputs, len(grid_values[0])[,
        len(grid_values[1])])`` (one output for a binary classifier's
        positive class, a binary decision function or a regressor; one per
        class otherwise); ``std``: the noise's standard deviation in each
        entry of ``average``, from public facts and DP outputs; and
        ``epsilon_spent``, ``delta_spent``, ``n_rows`` (the DP count the
        sums were divided by), ``n_rows_std``, ``noise_multiplier``,
        ``sensitivity`` (of the centred sums).

    Raises
    ------
    ValueError
        Before anything is spent: an unknown feature, a numeric feature
        without declared bounds, a black box that fails on the public grid,
        a decision function or regressor without ``output_bounds``, ``kind``
        other than "average", ``delta=0`` at a finite ``epsilon``.

    References
    ----------
    .. [1] J. H. Friedman, "Greedy function approximation: a gradient
       boosting machine", Annals of Statistics 29(5), 2001.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skdpx.inspection import partial_dependence
    >>> from skdpx.privacy import PrivacyLedger
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 1, (4000, 2))
    >>> model = LogisticRegression().fit(X[:2000], X[:2000, 0] > 0.5)
    >>> ledger = PrivacyLedger(epsilon=2.0, delta=1e-6)
    >>> pd_ = partial_dependence(model, X[2000:], 0, bounds=(0, 1), grid_resolution=5,
    ...                          epsilon=1.0, delta=1e-6, accountant=ledger)
    >>> pd_.average.shape, pd_.grid_values[0].tolist()
    ((1, 5), [0.0, 0.25, 0.5, 0.75, 1.0])
    >>> bool(pd_.std.max() < 0.01)
    True
    >>> round(ledger.epsilon_spent, 2)
    1.0
    """
    release = _PartialDependence(
        estimator, features, response_method=response_method, grid_resolution=grid_resolution,
        output_bounds=output_bounds, kind=kind, epsilon=epsilon, delta=delta, bounds=bounds,
        categories=categories, accountant=accountant, random_state=random_state).fit(X)
    return Bunch(grid_values=release.grid_values_, average=release.average_, std=release.std_,
                 epsilon_spent=release.epsilon_spent_, delta_spent=release.delta_spent_,
                 n_rows=release.n_rows_, n_rows_std=release.n_rows_std_,
                 noise_multiplier=release.noise_multiplier_,
                 sensitivity=release.sensitivity_)
