"""DP permutation importance: :func:`permutation_importance`, after ``sklearn.inspection``.

scikit-learn's permutation importance of a feature ``j`` is the drop of a
score when the column ``j`` of the rows is shuffled (a permutation of the
rows' own values), averaged over ``n_repeats`` shuffles. A permutation of
private rows is not a per-row computation: adding one row moves the values
other rows are scored with. Here each row's contribution depends on that
row alone:

* the value of feature ``j`` of row ``i`` (in repeat ``r``) is *replaced* by
  an independent draw from a distribution released before: ``replacement=
  "marginal"`` (the default) draws from a **DP marginal** of the column (a
  histogram of the rows over public bins, released with the Gaussian
  mechanism through the privacy core: ``n_bins`` equal bins over a numeric
  column's declared bounds, one bin per integer when an integer column has
  at most ``n_bins`` values, the declared levels of a categorical column;
  a value is drawn by choosing a bin in proportion to its released count,
  counts below twice their noise's standard deviation at 0
  (``MARGINAL_THRESHOLD``: clipping negative counts alone leaves spurious
  mass in every empty bin), then uniformly within the bin);
  ``replacement="uniform"`` draws from the column's **public domain**
  (uniform over its declared bounds, integers for an integer column, the
  declared levels equally likely), and spends nothing on marginals. The
  draws are post-processing randomness (independent of the rows, from an
  auxiliary stream: :meth:`~skdpx.privacy.NoiseSource.row_uniforms`),
  independent across rows, row ``i``'s the stream's ``i``-th wherever the
  row is read (in memory, a Dask worker, a Spark executor);
  scikit-learn's shuffle is a draw from the rows' exact marginal without
  replacement, which the DP marginal approximates;
* each row's score is bounded and decomposes per row (the supported
  ``scoring``, "greater is better" as scikit-learn's scorers): ``"accuracy"``
  (1 if ``predict`` equals the label, in [0, 1]), ``"neg_brier_score"``
  (``-(p - y)^2`` on a binary classifier's positive class, in [-1, 0];
  ``-sum_k (p_k - y_k)^2`` for more classes, in [-2, 0]), ``"neg_log_loss"``
  (``log max(p_y, proba_floor)``, in [log proba_floor, 0]),
  ``"neg_mean_squared_error"`` and ``"neg_mean_absolute_error"`` of a
  regressor whose prediction and target are clipped to the declared
  ``output_bounds = (lo, hi)`` (in [-(hi - lo)^2, 0] and [-(hi - lo), 0]).
  A row the black box fails on (raises, NaN) gets the middle ``c`` of the
  score's range, a rule on that row alone; a label that is not one of the
  classifier's classes is scored as a wrong prediction;
* released, once, with the Gaussian mechanism through the privacy core: the
  vector of ``1 + p R`` centred sums over the rows (``p`` features or
  feature groups, ``R = n_repeats``): the baseline ``B = sum_i (s_i - c)``
  and, for each feature and repeat, ``S_jr = sum_i (s_ijr - c)``, where
  ``s_ijr`` is row i's score with feature j replaced by its r-th draw;
* post-processing: ``importances[j, r] = (B - S_jr) / n~`` (baseline minus
  replaced score, scikit-learn's sign) over the fit's DP row count ``n~``
  (:class:`~skdpx.privacy.FitCount`, released first with ``COUNT_SHARE`` of
  epsilon under add-or-remove; the number of rows is public under
  replace-one, and no count is released). ``importances_mean`` and
  ``importances_std`` are their mean and (population) standard deviation
  over the repeats, as scikit-learn's: here the spread includes the
  privacy noise.

A DataFrame's categorical column (a one-hot group in the public schema) is
one feature: its importance is that of the original column. A DataFrame's
rows reach the black box as they came (the same columns and dtypes), with
the replaced column built from the column's dtype and the declared levels
only (as :func:`partial_dependence` builds its grid column).

**Sensitivity.** With ``L`` the width of the score's range, each centred
per-row score lies in ``[-L/2, L/2]``, so one row's vector of ``1 + p R``
centred scores has L2 norm at most ``sqrt(1 + p R) L / 2``. Under
add-or-remove one row (the default relation), the released sums change by
one row's vector (its draws are its own: no other row's contribution
moves): L2 sensitivity ``sqrt(1 + p R) L / 2``. Under replace-one they
change by the difference of two rows' vectors, each coordinate in ``[-L,
L]``: ``sqrt(1 + p R) L``. The marginals' histogram (all ``p`` columns in
one release) changes by one count in one bin of each column under
add-or-remove (a missing value: in none): L2 sensitivity ``sqrt(p)``; under
replace-one by -1 and +1 in each column: ``sqrt(2 p)``.

**Budget.** (``epsilon``, ``delta``) pays for the DP count (under
add-or-remove), then the two Gaussian releases: their noise multipliers
``z_h = z / sqrt(marginal_share)`` (the histogram) and ``z_s = z / sqrt(1 -
marginal_share)`` (the scores) compose to one Gaussian mechanism of
multiplier ``z`` (``1 / z^2 = 1 / z_h^2 + 1 / z_s^2``), calibrated with the
count as prior. ``replacement="uniform"``: ``z_s = z``.

**Standard deviation.** ``noise_std`` is the standard deviation of the
privacy noise's effect on each entry of ``importances_mean``, from public
facts and DP outputs only, in two independent parts:
``noise_std = sqrt(score_noise_std^2 + marginal_noise_std^2)``.

*The score release* (``score_noise_std``): the sums' noise ``sigma = z_s *
sensitivity`` enters once through ``B`` and ``R`` times (averaged) through
the ``S_jr``, and the count's noise (``s_n``) acts on the ratio to first
order: ``score_noise_std_j = sqrt(sigma^2 (1 + 1 / R) +
(importances_mean_j s_n)^2) / n~``. The baseline's noise is common to all
features: it does not change their ranking.

*The marginal* (``marginal_noise_std``; 0 with ``replacement="uniform"``
and at ``epsilon=inf``): the histogram's noise moves the replacement
distribution, and so the importance itself, from release to release. Over
the draws the importance is linear in the replacement distribution ``q``:
``B / n - sum_b q_b g_b``, with ``g_b`` the mean over the rows of the
centred score when ``x_j`` is drawn within bin ``b`` (``g`` lies in a cube of
side ``L``). The released distribution keeps the bins whose released count
``r_b = c_b + e_b`` is at least ``2 sigma_h`` (``sigma_h`` is ``z_h`` times
the histogram's sensitivity), ``q^_b = r_b / T`` with ``T`` the kept bins'
released total; to first order in the noise ``q^_b - c_b / T = (e_b - q_b
sum_c e_c) / T``, so the importance moves by ``-(1 / T) sum_b e_b (g_b -
q.g)``, of variance ``sigma_h^2 / T^2 sum_b (g_b - q.g)^2`` over the ``K``
kept bins. ``g`` depends on the private rows; its worst case is public.
``sum_b (g_b - q.g)^2`` is convex in ``g``, so its maximum over the cube is
at a vertex: ``g = L`` on a set ``S`` of ``k`` bins, ``0`` on the others,
where it is ``L^2 (k (1 - Q)^2 + (K - k) Q^2)`` with ``Q = q(S)``; for each
``k`` this is largest at the smallest ``Q`` (the ``k`` bins of least mass;
the complement, the ``K - k`` of most mass, gives the same value): a search
over ``k = 0 .. K`` of the sorted masses. So ``marginal_noise_std_j =
sigma_h L sqrt(max_k (k (1 - Q_k)^2 + (K - k) Q_k^2)) / T``, with the
released ``q^`` for ``q`` (they differ to second order). With ``K`` bins of
equal mass it is ``sigma_h L sqrt(K) / (2 T)``, with one dominant bin about
``sigma_h L sqrt(K - 1) / T``: fewer bins, a tighter bound. It is reached
when the score is at one end of its range on some bins and at the other end
on the rest (the tests build such a black box: ``+- 1.645 noise_std``
covered the noiseless-marginal importance 89.7% of the time); for a smoother
black box it is conservative (measured in doc/benchmarks: the total is
several times the empirical spread across releases). No bin kept: ``L``
(nothing is known of the marginal).

Left out of ``noise_std``: the **threshold's bias**. A bin whose released
count falls below ``2 sigma_h`` is dropped with its true mass (a bin of
``c`` rows is dropped with probability ``Phi(2 - c / sigma_h)``, an expected
lost mass of at most ``1.05 sigma_h`` rows a bin); its effect on the
importance is at most ``L`` times the dropped true mass, which no public
fact bounds usefully (up to a few ``sigma_h`` rows in each dropped bin, and
the effect is a bias, not noise, on a feature whose sparse bins matter:
measured, it shrank a normal feature's importance, whose tails were dropped,
and raised Adult's capital-gain's). It is small when the
bins hold many more rows than ``2 sigma_h`` (fewer bins, more rows, a
larger epsilon); measured in doc/inspection.rst. Also left out: the draws'
own randomness (which ``importances_std``, the spread over repeats, shows)
and the second-order terms.

**Where the rows are.** ``X`` may be in memory, a dask array or DataFrame
(``y`` a numpy array, a dask array or Series), or a Spark DataFrame (``y``
the name of its label column): the marginals' counts and the scores' sums
are each one :func:`~skdpx.utils._engine.partition_sum` of the same
per-block function (:func:`_bin_counts`, :class:`_ScoreSums`) on every
engine, in the Dask workers or the Spark executors (the black box is shipped
there: it must be picklable); only the totals reach the driver. Each block
draws its rows' replacements from their row numbers
(:func:`~skdpx.utils._engine.row_numbers`: positions; on Spark, made
consecutive across partitions by one pass that sums the partitions' row
counts), so a row gets the same draws on every engine, and at
``epsilon=np.inf`` the release is the in-memory one to summation order
(on Spark, when its partitions hold the rows in the in-memory order).

**What it protects.** The rows of ``X`` and their labels ``y`` (the privacy
unit is one row with its label), when the black box does not depend on
them: trained on other rows, or itself DP and accounted on the same ledger.
The black box, the bounds, levels and ``output_bounds`` are public.
"""

import math
from numbers import Integral, Real

import numpy as np
from sklearn.utils import Bunch

from .._sklearn_compat import HasMethods, Interval, StrOptions, is_classifier
from ..base import DPEstimator, FitData
from ..privacy import (BUDGET_PARAMETER_CONSTRAINTS, ComposedDpEvent, EstimatorLedger,
                       NonPrivateDpEvent, SpendPlan, calibrate_noise, gaussian_event,
                       gaussian_release, label_codes)
from ..utils._blackbox import (BlackBoxOutputError, check_output, finite_rows, map_rows,
                               output_range)
from ..utils._chunks import row_slices
from ..utils._engine import engine, partition_sum, row_numbers, rows_like, source_rows
from ..utils._tables import frame_meta, validate_table
from ._partial_dependence import _declared_bounds, _grid_column, _PublicBounds

__all__ = ["permutation_importance"]

#: scoring -> (kind of black box, the method called)
_SCORERS = {
    "accuracy": ("classifier", "predict"),
    "neg_brier_score": ("classifier", "predict_proba"),
    "neg_log_loss": ("classifier", "predict_proba"),
    "neg_mean_squared_error": ("regressor", "predict"),
    "neg_mean_absolute_error": ("regressor", "predict"),
}


class _Domain:
    """The public bins of one feature (group) and the draws of values from them.

    ``kind`` is "categorical" (one bin per declared level: ``levels``; the
    encoded one-hot ``block``), "integer" (bins of consecutive integers
    ``[starts[b], stops[b])``) or "float" (equal bins of ``edges``). Made
    from public facts only (declared bounds and levels, ``n_bins``).
    """

    def __init__(self, name, label, block, *, levels=None, lower=None, upper=None,
                 integer=False, n_bins=128):
        self.name, self.label, self.block = name, label, np.asarray(block)
        self.levels = levels
        if levels is not None:
            self.kind = "categorical"
            self.widths = np.ones(len(levels))
        elif integer:
            self.kind = "integer"
            lo, hi = math.ceil(lower), math.floor(upper)
            edges = np.unique(np.ceil(np.linspace(lo, hi + 1, min(n_bins, hi - lo + 1) + 1)))
            self.starts, self.stops = edges[:-1], edges[1:]
            self.widths = self.stops - self.starts
        else:
            self.kind = "float"
            self.edges = np.linspace(lower, upper, n_bins + 1)
            self.widths = np.diff(self.edges)
        self.n_bins = len(self.widths)

    def public_values(self):
        """Public values of the domain to probe the black box with: every declared level;
        a numeric feature's two ends and middle."""
        if self.kind == "categorical":
            return np.arange(len(self.levels))
        if self.kind == "integer":
            lo, hi = self.starts[0], self.stops[-1] - 1
            return np.array([lo, np.floor((lo + hi) / 2.0), hi])
        lo, hi = self.edges[0], self.edges[-1]
        return np.array([lo, (lo + hi) / 2.0, hi])

    def bins(self, Z):
        """The bin of each encoded row of ``Z`` (-1: a missing value, in no bin). Private."""
        if self.kind == "categorical":
            block = Z[:, self.block]
            code = np.argmax(block, axis=1)
            return np.where(np.isclose(block.sum(axis=1), 1.0), code, -1)
        x = Z[:, self.block[0]]
        ok = np.isfinite(x)
        if self.kind == "integer":
            v = np.clip(np.rint(np.where(ok, x, self.starts[0])), self.starts[0],
                        self.stops[-1] - 1)
            code = np.searchsorted(self.starts, v, side="right") - 1
        else:
            lo, hi = self.edges[0], self.edges[-1]
            t = (np.clip(np.where(ok, x, lo), lo, hi) - lo) / (hi - lo)
            code = np.minimum((t * self.n_bins).astype(int), self.n_bins - 1)
        return np.where(ok, code, -1)

    def draw(self, probabilities, u):
        """Values from the bins, chosen with ``probabilities``, uniform within a bin.

        ``u``: uniform draws in [0, 1) of shape ``shape + (2,)`` (the bin's, then the
        place's in it). Categorical: level indices; numeric: the values.
        Post-processing of ``probabilities`` (public or DP).
        """
        cum = np.cumsum(probabilities)
        # the first bin whose cumulative probability passes u: never a bin of 0
        code = np.minimum(np.searchsorted(cum, u[..., 0] * cum[-1], side="right"),
                          self.n_bins - 1)
        if self.kind == "categorical":
            return code
        if self.kind == "integer":
            return self.starts[code] + np.floor(u[..., 1] * self.widths[code])
        return self.edges[code] + u[..., 1] * self.widths[code]

    def encoded(self, values):
        """Drawn values (n,) in the encoded space: (n, len(block))."""
        if self.kind == "categorical":
            return np.eye(len(self.levels))[values]
        return np.asarray(values, dtype=float)[:, None]

    def raw(self, values):
        """Drawn values (n,) as a frame column takes them (levels, or numbers)."""
        if self.kind == "categorical":
            return list(np.asarray(self.levels, dtype=object)[values])
        return values


#: Released counts below this many times their noise's standard deviation count as 0
#: when the marginal is drawn from: most empty bins' noise is below it (2.3% above),
#: where clipping at 0 alone left about 0.4 sigma of spurious mass in every empty bin
#: (replacement values where no row is, which inflated the importances of features
#: with many empty bins: measured on diabetes130, see the user guide).
MARGINAL_THRESHOLD = 2.0


def _marginal_noise_std(counts, floor, sigma_h, width):
    """The bound of the marginal's noise's standard deviation in one feature's importance.

    From DP outputs and public facts only: ``counts`` the feature's released
    histogram, ``floor`` the threshold (``MARGINAL_THRESHOLD sigma_h``),
    ``sigma_h`` the histogram's noise's standard deviation, ``width`` the
    score's range ``L``. ``sigma_h / T sqrt(max_g sum_b (g_b - q . g)^2)``
    over the kept bins, ``g`` in ``[0, L]^K``, ``q`` the released
    distribution, ``T`` the kept bins' released total (see the module's
    docstring); ``width`` when no bin is kept (nothing is known of the
    marginal). Post-processing.
    """
    if sigma_h == 0:
        return 0.0
    counts = np.asarray(counts, dtype=float)
    kept = counts[(counts >= max(floor, 0.0)) & (counts > 0)]
    if kept.size == 0:
        return float(width)
    total = kept.sum()
    # the maximum of a convex function over the cube is at a vertex: g = L on a set S
    # of k bins, 0 elsewhere, sum_b (g_b - q.g)^2 = L^2 (k (1 - Q)^2 + (K - k) Q^2),
    # Q = q(S); for each k the farthest Q from k / K, the k smallest (or, the same
    # value, the K - k largest) masses
    q = np.sort(kept / total)
    K = q.size
    k = np.arange(K + 1)
    Q = np.concatenate([[0.0], np.cumsum(q)])
    spread = np.max(k * (1.0 - Q) ** 2 + (K - k) * Q ** 2)
    return float(sigma_h * width * math.sqrt(spread) / total)


def _probabilities(counts, widths, floor=0.0):
    """A distribution over bins from (DP) counts: counts below ``floor`` at 0; none left:
    the public domain (in proportion to the bins' widths). Post-processing."""
    counts = np.asarray(counts, dtype=float)
    counts = np.where(counts >= max(floor, 0.0), np.clip(counts, 0.0, None), 0.0)
    if not counts.sum() > 0:
        counts = np.asarray(widths, dtype=float)
    return counts / counts.sum()


def _bin_counts(Z, *, domains):
    """A block's counts of its rows in each feature's bins, concatenated (per-block,
    on every engine: :func:`~skdpx.utils._engine.partition_sum`). Private."""
    Z = np.asarray(Z, dtype=float)
    counts = []
    for d in domains:  # a loop over the features
        code = d.bins(Z)
        counts.append(np.bincount(code[code >= 0], minlength=d.n_bins).astype(float))
    return np.concatenate(counts)


def _draw_values(domains, probabilities, u):
    """The replacement values of a block of rows from its uniform draws ``u`` (n_rows,
    p, n_repeats, 2): one (n_rows, n_repeats) array per feature; each row's from its own
    draws. Post-processing."""
    return [d.draw(p, u[:, j]) for j, (d, p) in enumerate(zip(domains, probabilities))]


class _Scores:
    """The black box's bounded per-row scores (picklable: shipped to workers and executors).

    From public facts only (the black box, the scoring, the classes and
    ``output_bounds``); applied to private rows inside the committed fit.
    """

    def __init__(self, estimator, extra, *, output_bounds, proba_floor):
        self.estimator = estimator
        self.method, self.scoring = extra["method"], extra["scoring"]
        self.range, self.classes = extra["range"], extra["classes"]
        self.classifier = is_classifier(estimator)
        self.output_bounds, self.proba_floor = output_bounds, proba_floor

    def targets(self, y):
        """A block's labels as the scores read them: class codes (-1: no class), or
        targets clipped to ``output_bounds`` (a missing one: their middle), row by row."""
        if self.classifier:
            return label_codes(self.classes, y)
        b_lo, b_hi = (float(v) for v in self.output_bounds)
        y = np.asarray(y, dtype=float)
        # a missing target: the middle of the range (a rule on its row alone)
        return np.clip(np.where(np.isfinite(y), y, (b_lo + b_hi) / 2.0), b_lo, b_hi)

    def __call__(self, rows, target):
        """Each row's score (n,) from the black box's output on ``rows``. Private."""
        out = getattr(self.estimator, self.method)(rows)
        scoring = self.scoring
        if scoring == "accuracy":
            return (label_codes(self.classes, np.asarray(out).ravel()) == target) \
                & (target >= 0)
        if scoring in ("neg_brier_score", "neg_log_loss"):
            p = np.asarray(out, dtype=float)
            K = len(self.classes)
            if p.ndim != 2 or p.shape[1] != K:
                raise ValueError("probabilities of another shape")
            onehot = (target[:, None] == np.arange(K)).astype(float)
            if scoring == "neg_log_loss":
                p_true = (np.clip(p, 0.0, 1.0) * onehot).sum(axis=1)
                return np.log(np.maximum(p_true, self.proba_floor))
            p = np.clip(p, 0.0, 1.0)
            if K == 2:
                return -(p[:, 1] - onehot[:, 1]) ** 2
            return -((p - onehot) ** 2).sum(axis=1)
        b_lo, b_hi = (float(v) for v in self.output_bounds)
        pred = np.clip(np.asarray(out, dtype=float).reshape(len(target)), b_lo, b_hi)
        err = pred - target
        return -(err ** 2) if scoring == "neg_mean_squared_error" else -np.abs(err)


class _ScoreSums:
    """The per-block function of the scores: a block's centred sums ``[B, S_11 .. S_pR]``.

    The same function on every engine (:func:`~skdpx.utils._engine.partition_sum`):
    in memory on consecutive blocks of rows, on Dask in the workers, on Spark
    in the executors (shipped with the black box, which must be picklable).
    ``Z``: a block of the encoded rows; ``y``: their labels; ``numbers``:
    their row numbers (:func:`~skdpx.utils._engine.row_numbers`), from which
    each row's replacement draws come (:class:`~skdpx.privacy.NoiseSource`'s
    ``row_uniforms``: the same draws for a row whatever the blocks);
    ``frame``, for a DataFrame's rows, the same rows as they came (the black
    box sees them, one column replaced at a time). A row the black box fails
    on (raises, NaN, another shape) gets the middle of the score's range: a
    rule on that row alone. Private: the total is released through the
    privacy core.
    """

    def __init__(self, scores, schema, domains, probabilities, uniforms, n_repeats, draws):
        self.scores, self.schema, self.domains = scores, schema, domains
        self.probabilities, self.uniforms = probabilities, uniforms
        self.n_repeats, self.draws = n_repeats, draws

    def __call__(self, Z, y, numbers, frame=None):
        # the engine's block (a partition, an Arrow batch, a block in memory) in
        # sub-blocks of a fixed size from the width of what a row needs (its encoded
        # values, a copy, its draws): the temporaries are one sub-block's
        sums = np.zeros(1 + len(self.domains) * self.n_repeats)
        y, numbers = np.asarray(y), np.asarray(numbers)
        width = 2 * Z.shape[1] + 2 * len(self.domains) * self.n_repeats
        for rows in row_slices(len(Z), width):
            sums += self._block(Z[rows], y[rows], numbers[rows],
                                None if frame is None else frame.iloc[rows])
        return sums

    def _block(self, Z, y, numbers, frame):
        lo, hi = self.scores.range
        centre = (lo + hi) / 2.0
        R, domains, schema = self.n_repeats, self.domains, self.schema
        sums = np.zeros(1 + len(domains) * R)
        Z = np.array(Z, dtype=float)
        n, t = Z.shape[0], self.scores.targets(y)
        draws = self.draws(domains, self.probabilities, self.uniforms.of_rows(numbers))

        def add(k, rows_of):
            def scores(idx):
                return self.scores(rows_of(idx), t[idx]).astype(float)
            out = map_rows(scores, n, fill=np.float64(centre), row_ok=finite_rows)
            sums[k] += (np.clip(out, lo, hi) - centre).sum()

        if frame is not None:
            block = schema.public_frame(frame)
            add(0, lambda idx, b=block: b.iloc[idx])
            for j, (d, values) in enumerate(zip(domains, draws)):
                for r in range(R):
                    replaced = block.copy()
                    replaced[d.label] = _grid_column(block[d.label].dtype,
                                                     d.raw(values[:, r]), d.levels,
                                                     block.index)
                    add(1 + j * R + r, lambda idx, b=replaced: b.iloc[idx])
            return sums
        add(0, lambda idx, b=Z: schema.decode(b[idx]))
        for j, (d, values) in enumerate(zip(domains, draws)):
            for r in range(R):
                replaced = Z.copy()
                replaced[:, d.block] = d.encoded(values[:, r])
                add(1 + j * R + r, lambda idx, b=replaced: schema.decode(b[idx]))
        return sums


class _PermutationImportance(DPEstimator):
    """The DP release of permutation importances (the machinery of :func:`permutation_importance`).

    A :class:`~skdpx.base.DPEstimator`: ``fit(X, y)`` validates (on public
    probe points too), releases the DP row count, plans and commits the
    marginals' and the scores' Gaussian releases, then reads the rows. See
    the module's docstring for the sensitivity and the standard deviation.
    """

    #: the name messages give (the function the user called)
    _public_name = "permutation_importance"

    #: fit takes Dask and Spark data (skdpx.utils._tables.validate_table): the
    #: marginals and the scores are sums computed where the rows are
    _accepts_distributed = True

    _parameter_constraints = {
        **BUDGET_PARAMETER_CONSTRAINTS,
        "estimator": [HasMethods(["predict"])],
        "scoring": "no_validation",  # checked in _validate_fit, with what is supported
        "n_repeats": [Interval(Integral, 1, None, closed="left")],
        "replacement": [StrOptions({"marginal", "uniform"})],
        "marginal_share": [Interval(Real, 0, 1, closed="neither")],
        "n_bins": [Interval(Integral, 2, None, closed="left")],
        "output_bounds": ["array-like", None],
        "proba_floor": [Interval(Real, 0, 1, closed="neither")],
        "categories": [dict, None],
    }

    def __init__(self, estimator, *, scoring=None, n_repeats=5, replacement="marginal",
                 marginal_share=0.3, n_bins=128, output_bounds=None, proba_floor=1e-3,
                 epsilon=1.0, delta=1e-6, bounds=None, categories=None, accountant=None,
                 random_state=None):
        self.estimator = estimator
        self.scoring = scoring
        self.n_repeats = n_repeats
        self.replacement = replacement
        self.marginal_share = marginal_share
        self.n_bins = n_bins
        self.output_bounds = output_bounds
        self.proba_floor = proba_floor
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.categories = categories
        self.accountant = accountant
        self.random_state = random_state

    def _new_ledger(self):
        # the shared ledger's labels name the function the user called
        return EstimatorLedger(self.epsilon, self.delta, self.accountant,
                               prefix="permutation_importance: ")

    # ------------------------------------------------------------- validation
    def _scorer(self):
        """(scoring name, method, score range (lo, hi)), from the parameters only."""
        name = type(self.estimator).__name__
        classifier = is_classifier(self.estimator)
        scoring = self.scoring
        if scoring is None:
            if not classifier:
                raise ValueError(
                    f"scoring=None is {name}.score, the R^2 of a regressor, which does not "
                    "decompose per row (its denominator is the variance of all the labels); "
                    "use scoring='neg_mean_squared_error' (the same ranking of features) or "
                    "'neg_mean_absolute_error'. Nothing was spent.")
            scoring = "accuracy"
        if not isinstance(scoring, str) or scoring not in _SCORERS:
            raise ValueError(
                f"scoring={scoring!r} is not supported: a DP permutation importance needs a "
                "score that is a sum of bounded per-row terms; supported: "
                f"{sorted(_SCORERS)}. Nothing was spent.")
        kind, method = _SCORERS[scoring]
        if (kind == "classifier") != classifier:
            raise ValueError(f"scoring={scoring!r} is for a {kind}; {name} is not one. "
                             "Nothing was spent.")
        if not hasattr(self.estimator, method):
            raise ValueError(f"{name} has no {method} method (scoring={scoring!r}). "
                             "Nothing was spent.")
        if kind == "classifier":
            if self.output_bounds is not None:
                raise ValueError("output_bounds is the declared range of a regressor's "
                                 "output and target; leave output_bounds=None for a "
                                 "classifier. Nothing was spent.")
            if scoring == "accuracy":
                return scoring, method, (0.0, 1.0)
            if scoring == "neg_log_loss":
                return scoring, method, (math.log(self.proba_floor), 0.0)
            classes = getattr(self.estimator, "classes_", None)
            if classes is None:
                raise ValueError(f"{name} has no classes_: a classifier's probabilities are "
                                 "read per class. Nothing was spent.")
            return scoring, method, (-1.0 if len(classes) <= 2 else -2.0, 0.0)
        if self.output_bounds is None:
            raise ValueError(
                f"scoring={scoring!r} of a regressor needs output_bounds=(lower, upper): the "
                "declared range of its predictions and of the target (both are clipped to "
                "it; it is never read from the data). Nothing was spent.")
        _, (lo, hi) = output_range(self.estimator, "predict", self.output_bounds)
        width = hi - lo
        return scoring, method, (-(width ** 2) if scoring.endswith("squared_error")
                                 else -width, 0.0)

    def _domains(self):
        """The public domain of every feature (group): :class:`_Domain`, from the schema."""
        schema = self.schema_
        lower, upper = _declared_bounds(schema, self.bounds)
        domains = []
        for position, (name, block) in enumerate(schema.groups):
            label = schema.columns[position]
            if schema.categorical[block].all():
                levels = list(schema.encoder._levels[label])
                domains.append(_Domain(name, label, block, levels=levels))
                continue
            lo, hi = lower[block[0]], upper[block[0]]
            if not (np.isfinite(lo) and np.isfinite(hi)):
                raise ValueError(
                    f"{name!r} is numeric and has no declared bounds: its replacement values "
                    "are drawn from its public domain (or a DP histogram over it), never from "
                    "the rows. Declare them in bounds (e.g. bounds={%r: (lower, upper)}, or "
                    "(lower, upper) for an array). Nothing was spent." % name)
            integer = bool(schema.integer[block[0]])
            if integer and math.floor(hi) < math.ceil(lo):
                raise ValueError(f"{name!r} is an integer column whose declared bounds "
                                 f"({lo:g}, {hi:g}) hold no integer. Nothing was spent.")
            domains.append(_Domain(name, label, block, lower=lo, upper=hi, integer=integer,
                                   n_bins=self.n_bins))
        return domains

    def _validate_fit(self, X, y):
        scoring, method, (lo, hi) = self._scorer()
        classifier = is_classifier(self.estimator)
        frame = X
        X, y = validate_table(self, X, y, reset=True, categories=self.categories,
                              y_numeric=not classifier)
        self._require_delta("permutation_importance's Gaussian release")
        domains = self._domains()
        frame = frame if self.schema_.kind == "frame" else None
        # the input's columns and dtypes (no row: a Dask or Spark DataFrame's schema)
        meta = None if frame is None else frame_meta(frame)
        # the black box on public points: the schema's probe point, with each feature
        # replaced by a value of its domain (never a private row), each replaced column
        # built as the rows' will be (from the column's dtype and the declared levels
        # only); a failure there is a fact about the black box or the dtype, refused
        # before anything is spent
        point = self.schema_.probe(self.bounds)
        probes = [(None, self.schema_.decode(point))]
        for d in domains:
            values = d.public_values()  # (public points, never drawn)
            encoded = np.repeat(point, len(values), axis=0)
            encoded[:, d.block] = d.encoded(values)
            rows = self.schema_.decode(encoded)
            if frame is not None:
                try:
                    rows[d.label] = _grid_column(meta[d.label].dtype, d.raw(values), d.levels,
                                                 rows.index)
                except (TypeError, ValueError) as exc:
                    raise ValueError(
                        f"the replacement values of {d.label!r} cannot be set in its column's "
                        f"dtype {meta[d.label].dtype}: {type(exc).__name__}: {exc}. Convert "
                        "the column (e.g. to float or to a categorical of the declared "
                        "levels). Nothing was spent.") from exc
            probes.append((d.name, rows))
        classes = getattr(self.estimator, "classes_", None)
        for _, rows in probes:
            self._outputs(method, rows, rows.shape[0], public=True)
        return FitData(X, y=y, classes=classes, extra={
            "scoring": scoring, "method": method, "range": (lo, hi), "domains": domains,
            "frame": frame, "classes": classes})

    def _outputs(self, method, rows, n_rows, *, public=False):
        """The black box's raw output on ``rows``: labels (n,), probabilities (n, K) or
        values (n,); checked when the rows are public."""
        name = type(self.estimator).__name__
        call = getattr(self.estimator, method)
        if not public:
            return call(rows)
        where = ("public probe points (the schema's probe point, each feature replaced by "
                 "every declared level, or its declared bounds' ends and middle)")
        try:
            out = call(rows)
        except Exception as exc:
            raise BlackBoxOutputError(
                f"the black box ({name}) failed on {where}: {type(exc).__name__}: {exc}. "
                "Nothing was spent.") from exc
        classes = getattr(self.estimator, "classes_", None)
        expect = {"predict_proba": "columns"}.get(
            method, "labels" if is_classifier(self.estimator) else "values")
        if expect != "values" and classes is None:
            raise ValueError(f"{name} has no classes_: a classifier's outputs are read per "
                             "class. Nothing was spent.")
        return check_output(out, n_rows, expect=expect, name=name, method=method,
                            classes=classes, where=where, consequence="Nothing was spent.")

    # ------------------------------------------------------------------ plan
    def _fit_bounds(self, relation):
        # the rows go to the black box as they are: only the declared bounds (the
        # replacement domains) are read, nothing is estimated
        return _PublicBounds(*_declared_bounds(self.schema_, self.bounds))

    def _sensitivities(self, data, relation):
        """(the scores' L2 sensitivity, the histogram's), under ``relation``."""
        lo, hi = data.extra["range"]
        p = len(data.extra["domains"])
        scores = math.sqrt(1 + p * self.n_repeats) * (hi - lo) / 2.0
        if relation == "add_or_remove":
            return scores, math.sqrt(p)
        return 2.0 * scores, math.sqrt(2 * p)

    def _plan_spend(self, data, relation, bounds, count):
        """The marginals' histogram and the scores' centred sums: two Gaussian releases.

        From public facts: the parameters, the schema, ``count.prior()``.
        """
        s_scores, s_hist = self._sensitivities(data, relation)
        p, R = len(data.extra["domains"]), self.n_repeats
        marginal = self.replacement == "marginal"
        what = (f"permutation importance ({data.extra['scoring']}) of {p} feature(s) x "
                f"{R} repeat(s): centred sums of the scores"
                + (", and the features' marginals" if marginal else ""))
        if math.isinf(self.epsilon):
            return SpendPlan(NonPrivateDpEvent(), f"non-private {what} (epsilon=inf)",
                             z_scores=0.0, z_hist=0.0, s_scores=s_scores, s_hist=s_hist)
        z = calibrate_noise(self.epsilon, self.delta, prior=count.prior())
        if not marginal:
            return SpendPlan(gaussian_event(z), f"{what} (Gaussian)", z_scores=z, z_hist=None,
                             s_scores=s_scores, s_hist=s_hist)
        w = self.marginal_share
        z_hist, z_scores = z / math.sqrt(w), z / math.sqrt(1.0 - w)
        event = ComposedDpEvent([gaussian_event(z_hist), gaussian_event(z_scores)])
        return SpendPlan(event, f"{what} (Gaussian, two releases)", z_scores=z_scores,
                         z_hist=z_hist, s_scores=s_scores, s_hist=s_hist)

    # ------------------------------------------------------------------- fit
    def _histograms(self, data):
        """The exact counts of the rows in each feature's bins, concatenated. Private.

        One :func:`~skdpx.utils._engine.partition_sum` of :func:`_bin_counts`,
        wherever the rows are.
        """
        domains = data.extra["domains"]
        counts = partition_sum(_bin_counts, data.X, domains=domains)
        return np.zeros(sum(d.n_bins for d in domains)) if counts is None else counts

    def _draws(self, domains, probabilities, u):
        """The replacement values of a block of rows from its uniform draws ``u`` (n_rows,
        p, n_repeats, 2): one (n_rows, n_repeats) array per feature; each row's from its
        own draws. Post-processing."""
        return _draw_values(domains, probabilities, u)

    def _score_sums(self, data, probabilities, noise):
        """The exact centred sums ``[B, S_11, ..., S_pR]`` over the rows. Private: read only
        inside the committed fit (and by the tests).

        One :func:`~skdpx.utils._engine.partition_sum` of :class:`_ScoreSums`,
        wherever the rows are. The replacement draws are not privacy noise:
        uniforms from an auxiliary stream of ``noise`` (sampling from public or
        DP values), row ``i``'s the stream's ``i``-th, independent across rows,
        drawn by each block for its rows where it is read.
        """
        extra, X = data.extra, data.X
        domains, frame = extra["domains"], extra["frame"]
        scores = _Scores(self.estimator, extra, output_bounds=self.output_bounds,
                         proba_floor=self.proba_floor)
        uniforms = noise.row_uniforms((len(domains), self.n_repeats, 2))
        frames = [] if frame is None else [source_rows(frame, X)]
        numbers, X, y, *frames = row_numbers(X, rows_like(data.y, X), *frames)
        # in memory, the draws pass through self._draws (the tests' hook); on an engine
        # the block function is shipped, with the function self._draws calls
        draws = self._draws if engine(X) == "memory" else _draw_values
        block_sums = _ScoreSums(scores, self.schema_, domains, probabilities, uniforms,
                                self.n_repeats, draws)
        sums = partition_sum(block_sums, X, y, numbers, *frames)
        return np.zeros(1 + len(domains) * self.n_repeats) if sums is None else sums

    def _private_fit(self, data, plan, commitment, noise):
        extra = data.extra
        domains = extra["domains"]
        if self.replacement == "marginal":
            released = gaussian_release(self._histograms(data), noise_multiplier=plan.z_hist,
                                        sensitivity=plan.s_hist, noise=noise,
                                        commitment=commitment)
            # post-processing: each feature's distribution from its released counts
            ends = np.cumsum([d.n_bins for d in domains])
            floor = MARGINAL_THRESHOLD * plan.z_hist * plan.s_hist
            per_feature = np.split(released, ends[:-1])
            probabilities = [_probabilities(c, d.widths, floor)
                             for c, d in zip(per_feature, domains)]
            lo, hi = extra["range"]
            marginal_std = np.array([
                _marginal_noise_std(c, floor, plan.z_hist * plan.s_hist, hi - lo)
                for c in per_feature])
        else:
            probabilities = [d.widths / d.widths.sum() for d in domains]
            marginal_std = np.zeros(len(domains))
        sums = gaussian_release(self._score_sums(data, probabilities, noise),
                                noise_multiplier=plan.z_scores, sensitivity=plan.s_scores,
                                noise=noise, commitment=commitment)
        # post-processing of DP outputs: the released sums over the DP count
        n, R = plan.count.n, self.n_repeats
        lo, hi = extra["range"]
        importances = (sums[0] - sums[1:].reshape(len(domains), R)) / n
        mean = importances.mean(axis=1)
        sigma = plan.z_scores * plan.s_scores
        self.importances_ = importances
        self.importances_mean_ = mean
        self.importances_std_ = importances.std(axis=1)
        self.score_noise_std_ = np.sqrt(sigma ** 2 * (1.0 + 1.0 / R)
                                        + (mean * plan.count.std) ** 2) / n
        self.marginal_noise_std_ = marginal_std
        self.noise_std_ = np.sqrt(self.score_noise_std_ ** 2 + marginal_std ** 2)
        self.baseline_score_ = sums[0] / n + (lo + hi) / 2.0
        self.feature_names_ = np.asarray([d.name for d in domains], dtype=object)
        self.marginals_ = probabilities if self.replacement == "marginal" else None
        self.scoring_ = extra["scoring"]
        self.noise_multiplier_ = plan.z_scores
        self.sensitivity_ = plan.s_scores


def permutation_importance(estimator, X, y, *, scoring=None, n_repeats=5, epsilon=1.0,
                           delta=1e-6, bounds=None, categories=None, accountant=None,
                           random_state=None, replacement="marginal", marginal_share=0.3,
                           n_bins=128, output_bounds=None, proba_floor=1e-3):
    """DP permutation importance of each feature of a black box (``sklearn.inspection``).

    The drop of a bounded per-row score when a feature of each private row is
    replaced by an independent draw from a DP marginal of the feature (or
    from its public domain), released with the Gaussian mechanism and
    divided by a DP count of the rows. Spends (``epsilon``, ``delta``) on
    ``accountant``, committed before any row is read. The privacy unit is
    one row of ``X`` with its label; the neighbouring relation is the
    ledger's (add-or-remove one row by default). See
    :mod:`skdpx.inspection` and the user guide's :ref:`inspection` for the
    sensitivity, the replacement and the noise's standard deviation.

    Parameters
    ----------
    estimator : fitted estimator
        The black box: a classifier or a regressor. It must not depend on
        the rows of ``X`` (trained on other rows, or DP on the same
        ledger), or the guarantee does not cover them.
    X : array-like or DataFrame of shape (n_samples, n_features)
        The private rows. A DataFrame's rows reach the black box as they
        came, one column replaced at a time; a categorical column is one
        feature. A dask array or DataFrame, or a Spark DataFrame: the sums
        are computed where the rows are, and only their totals come back.
    y : array-like of shape (n_samples,), or str
        Their labels (or targets). A label that is not one of the
        classifier's classes is scored as wrong; a missing regression
        target counts as the middle of ``output_bounds``. With a Spark
        DataFrame ``X``, the name of its label column (the features are
        the other columns).
    scoring : str or None, default=None
        A score that decomposes into bounded per-row terms: ``"accuracy"``
        (None for a classifier), ``"neg_brier_score"``, ``"neg_log_loss"``
        (probabilities floored at ``proba_floor``),
        ``"neg_mean_squared_error"`` or ``"neg_mean_absolute_error"`` (a
        regressor, with ``output_bounds``). Others are refused.
    n_repeats : int, default=5
        Draws of the replacement per feature and row.
    epsilon : float, default=1.0
        The budget of the whole release (the DP row count takes 5% of it
        under add-or-remove, the marginals ``marginal_share`` of the rest);
        ``np.inf`` gives the non-private value of the same scheme.
    delta : float, default=1e-6
    bounds : tuple, dict or None, default=None
        Public bounds of every numeric feature (their replacement domain):
        ``(lower, upper)`` (scalars or one per feature), or ``{column:
        (lower, upper)}`` for a DataFrame. Required for each numeric feature.
    categories : dict or None, default=None
        ``{column: [levels...]}``: the declared levels of a DataFrame's
        categorical columns.
    accountant : PrivacyLedger, BudgetAccountant or None, default=None
        The ledger of ``X``'s budget (None: nothing caps it, with a warning).
    random_state : int, RandomState, Generator or None, default=None
        None: secure noise. A seed makes the noise and the draws
        reproducible (and the release not private), with a
        ``PrivacyLeakWarning``.
    replacement : {"marginal", "uniform"}, default="marginal"
        Draw replacements from a DP histogram of each feature over its
        public bins, or uniformly from its public domain (spends nothing on
        marginals; far from the rows' distribution when the bounds are wide).
    marginal_share : float in (0, 1), default=0.3
        The marginals' share of the Gaussian budget (in ``1 / z^2``).
    n_bins : int, default=128
        Bins of a numeric feature's marginal (an integer feature with fewer
        values: one per value).
    output_bounds : (float, float) or None, default=None
        A regressor's declared output and target range (both clipped to it);
        required for a regressor, refused for a classifier.
    proba_floor : float in (0, 1), default=1e-3
        ``neg_log_loss``: probabilities below it count as it.

    Returns
    -------
    result : :class:`~sklearn.utils.Bunch`
        ``importances_mean`` (n_features,), ``importances_std`` (their
        spread over the repeats, as scikit-learn's; it includes the privacy
        noise), ``importances`` (n_features, n_repeats), ``noise_std`` (the
        privacy noise's standard deviation in each ``importances_mean``
        entry, from public facts and DP outputs: ``sqrt(score_noise_std^2 +
        marginal_noise_std^2)``), ``score_noise_std`` (the score release's
        part), ``marginal_noise_std`` (a public bound of the DP marginal's
        part; 0 with ``replacement="uniform"``; it leaves out the bias of
        the marginal's threshold, see :mod:`skdpx.inspection`),
        ``feature_names``,
        ``baseline_score`` (DP), ``marginals`` (the replacement
        distributions over the bins; None for "uniform"), ``scoring``,
        ``epsilon_spent``, ``delta_spent``, ``n_rows`` (the DP count),
        ``n_rows_std``, ``noise_multiplier``, ``sensitivity`` (of the
        scores' sums).

    Raises
    ------
    ValueError
        Before anything is spent: an unsupported ``scoring``, a numeric
        feature without declared bounds, a black box that fails on the
        public probe points, a regressor without ``output_bounds``,
        ``delta=0`` at a finite ``epsilon``, X and y of different lengths.

    References
    ----------
    .. [1] L. Breiman, "Random forests", Machine Learning 45(1), 2001.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skdpx.inspection import permutation_importance
    >>> from skdpx.privacy import PrivacyLedger
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 1, (8000, 3))
    >>> y = X[:, 0] + 0.2 * X[:, 1] > 0.6
    >>> model = LogisticRegression().fit(X[:4000], y[:4000])
    >>> ledger = PrivacyLedger(epsilon=2.0, delta=1e-6)
    >>> r = permutation_importance(model, X[4000:], y[4000:], bounds=(0, 1), epsilon=1.0,
    ...                            accountant=ledger)
    >>> r.importances.shape, list(r.feature_names)
    ((3, 5), ['x0', 'x1', 'x2'])
    >>> int(np.argmax(r.importances_mean))
    0
    >>> round(ledger.epsilon_spent, 2)
    1.0
    """
    release = _PermutationImportance(
        estimator, scoring=scoring, n_repeats=n_repeats, replacement=replacement,
        marginal_share=marginal_share, n_bins=n_bins, output_bounds=output_bounds,
        proba_floor=proba_floor, epsilon=epsilon, delta=delta, bounds=bounds,
        categories=categories, accountant=accountant, random_state=random_state).fit(X, y)
    return Bunch(importances_mean=release.importances_mean_,
                 importances_std=release.importances_std_, importances=release.importances_,
                 noise_std=release.noise_std_, score_noise_std=release.score_noise_std_,
                 marginal_noise_std=release.marginal_noise_std_,
                 feature_names=release.feature_names_,
                 baseline_score=release.baseline_score_, marginals=release.marginals_,
                 scoring=release.scoring_, epsilon_spent=release.epsilon_spent_,
                 delta_spent=release.delta_spent_, n_rows=release.n_rows_,
                 n_rows_std=release.n_rows_std_, noise_multiplier=release.noise_multiplier_,
                 sensitivity=release.sensitivity_)
