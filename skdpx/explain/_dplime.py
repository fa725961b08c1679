"""DP local linear explanations of a black box (Patel, Shokri & Zick 2020).

The estimator: its parameters, validation, plan and fit, and the
explanations it returns. How a query is answered (reuse, the strategies,
the non-interactive phase, the history of answers) is in
:mod:`skdpx.explain._strategies`; where the private rows are read (this
process, joblib workers, Dask workers), in :mod:`skdpx.explain._parallel`.
"""

from copy import deepcopy
from functools import partial
import math
from numbers import Integral, Real
import warnings

import numpy as np
from sklearn.base import TransformerMixin
from .._sklearn_compat import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..base import DPCapabilities, DPEstimator, FitData
from ..results import FeatureAttribution
from ..privacy import (
    BUDGET_PARAMETER_CONSTRAINTS,
    EPSILON_CONSTRAINT,
    BoundsScaler,
    BudgetError,
    fill_nonfinite,
    NoOpDpEvent,
    NonPrivateDpEvent,
    PrivacyLeakWarning,
    PrivacyLedger,
    SpendPlan,
    UtilityWarning,
    calibrate_noise,
    compose_events,
    gaussian_event,
    gaussian_to_pure,
    noise_source,
)
from ..utils._stacklevel import _outside_stacklevel
from ..utils._validation import UnitCubeRows
from ..utils._engine import is_distributed, persist, refuse_distributed_queries
from ..utils._blackbox import BlackBoxOutputError, spent_after_commit
from ..utils._tables import validate_table
from ..privacy._kmeans import dp_lloyd, table_sensitivity
from ..privacy._targets import check_ignored_y
from ._cells import cell_sums, shell_radii
from ._dpgd import dpgd_explain
from ._outputs import (
    private_row_labels,
    query_targets,
    resolve_output,
    unit_scale,
)
from ._parallel import (dpgd_pieces, engine_labels, forms_in_blocks, local_forms,
                        n_workers)
from ._strategies import answer, interactive, record, withhold
from ._weights import gradient_sensitivity, kernel_weight, stable_weight

#: How FeatureAttribution.std is computed (meta["std"]).
_STD_NOTE = ("estimate from the answer's released path (post-processing): the noise's covariance "
             "propagated along the noisy iterates, to first order (each step adds (step x noise "
             "multiplier x sensitivity)^2; a step that leaves the ball drops the radial part and "
             "shrinks the rest), plus, for an answer on the sphere, a second-order bound on the "
             "signal it loses; the Hessian's contraction (private) not credited; at most 2 radius "
             "per value (strategy 'basic'); NaN for non-interactive answers and warm-started "
             "strategies")

__all__ = ["DPLimeExplainer", "default_n_iter"]

#: the weights' constant c of the family F(c): one row's gradient has norm at most c / m
_C = 1.0


#: The most steps the default rule chooses (the noiseless limit: epsilon_per_query=inf).
MAX_DEFAULT_STEPS = 1000

#: ``approximation="auto"`` answers from per-cell sums (skdpx.explain._cells) from this
#: many rows on (the planning count): there one exact query costs ~0.1 s at d = 50
CELLS_MIN_ROWS = 200_000
#: the anchors of the cells: DP k-means centres (the privacy core's), this many of them,
#: after this many Lloyd iterations (ANCHOR_ITER + 1 Gaussian releases)
N_ANCHORS = 64
ANCHOR_ITER = 4
#: the anchors cost at most this share of epsilon_per_query (and delta), less when the
#: rows are many: their noise needs to be no smaller than ANCHOR_NOISE (scaled units, per
#: coordinate of a centre of m / N_ANCHORS rows), their only use being to group rows
ANCHOR_SHARE = 0.1
ANCHOR_NOISE = 0.01
#: the cells' sums take (cells x d^2) floats, twice while they are summed: "auto" keeps
#: the exact path above this many MiB, "cells" refuses (before anything is spent)
CELLS_MAX_MIB = 512


def _n_labels(classes):
    """The label columns of the rows: one per (declared) class, else one."""
    return 1 if classes is None else max(1, len(classes))


def _cells_mib(n_features, n_labels=2):
    """MiB the cells' dense sums take at their peak while they are summed (two tables:
    a block's and the total; all N_ANCHORS x shells cells; ``n_labels`` label columns)."""
    d, k = int(n_features), int(n_labels)
    return 2 * N_ANCHORS * len(shell_radii(d)) * (d * d + d + 1 + k * (d + 1)) * 8 / 2**20


def default_n_iter(n_features, epsilon_per_query, delta, sensitivity, *, radius=1.0, c=_C,
                   max_steps=MAX_DEFAULT_STEPS, extra_steps=0):
    """The number of gradient steps of an answer, from public facts only.

    One answer is T steps of projected gradient descent, step ``1 / L`` (``L
    = c / radius`` bounds the local loss's smoothness), from 0, on the
    ball of radius r, each gradient with Gaussian noise ``s_T`` per
    coordinate, calibrated so that T steps cost ``epsilon_per_query``:
    Gaussian steps compose exactly, so ``s_T = sqrt(T) s_1`` with ``s_1`` the
    noise of a single step at that cost. For a convex, L-smooth loss and
    gradients with noise of mean 0 and ``E ||e||^2 = d s_T^2``, the average
    of the T iterates has an expected excess local loss of at most

        ``B(T) = L r^2 / (2 T) + d s_T^2 / (2 L) = L r^2 / (2 T) + T d s_1^2 / (2 L)``

    (the standard bound of stochastic gradient descent at step ``1 / L``;
    ``r^2`` bounds ``||0 - phi*||^2``). ``B`` is smallest at ``T* = L r /
    (s_1 sqrt(d))``, where ``B(T*) = r s_1 sqrt(d)``: the integer next to it
    with the smaller bound, between 1 and ``max_steps``. More steps than
    ``T*`` add noise faster than they converge; fewer leave the descent
    short. The answer is the last iterate, whose bound has an extra factor
    of order ``log T`` (Shamir and Zhang 2013) and the same minimiser up to
    it. ``T*`` grows like ``m epsilon / sqrt(d)``; the paper's Theorem 3.2
    chooses ``T ~ m^2 eps^2 / (32 d log^2(e + eps / delta))`` from a looser
    composition (advanced instead of exact Gaussian) and a non-smooth
    analysis. On Adult (32,561 rows, 104 features) the paper's rule takes 1,
    24 and 1,000 (capped) steps at 0.01, 0.1 and 1 per query, this rule 12,
    89 and 757, and the answers keep 0.67, 0.92 and 0.99 of the optimal
    improvement over answering zero, against 0.33, 0.87 and 0.98 (the fixed
    T = 100: 0.32, 0.91, 0.97); ``benchmarks/dplime_steps.py``.

    Parameters
    ----------
    n_features : int
        d, the number of (encoded) features.
    epsilon_per_query, delta : float
        What one answer costs.
    sensitivity : float
        The L2 sensitivity of one gradient (:func:`gradient_sensitivity`, from
        the DP count of rows).
    radius, c : float
        The ball's radius and the weight's constant.
    max_steps : int, default=1000
        The most steps chosen (``epsilon_per_query=inf``: no noise, this many).
    extra_steps : int, default=0
        Gaussian releases an answer pays for besides its T steps (1 for the
        warm start of "adaptive" and "enhanced"): the noise is calibrated
        for ``T + extra_steps``, so ``s_T^2 = (T + extra_steps) s_1^2``.

    Returns
    -------
    int
    """
    for name, value in (("n_features", n_features), ("max_steps", max_steps)):
        if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {value!r}.")
    for name, value in (("sensitivity", sensitivity), ("radius", radius), ("c", c)):
        if not (isinstance(value, Real) and math.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be a finite number > 0, got {value!r}.")
    if np.isinf(epsilon_per_query):
        return int(max_steps)
    L = c / radius
    s1 = calibrate_noise(epsilon_per_query, delta, steps=1) * sensitivity

    def bound(T):
        return _loss_bound(T, s1, n_features, L, radius, extra_steps)

    star = min(L * radius / (s1 * math.sqrt(n_features)), max_steps)
    candidates = [t for t in {math.floor(star), math.ceil(star)} if t >= 1] or [1]
    best = min(candidates, key=bound)
    return int(min(max(best, 1), max_steps))


def _loss_bound(T, s1, d, L, r, extra_steps=0):
    """``B(T)``: a bound on an answer's expected excess local loss (:func:`default_n_iter`)."""
    return L * r**2 / (2 * T) + (T + extra_steps) * s1**2 * d / (2 * L)


#: the fitted attributes a released explainer keeps (:meth:`DPLimeExplainer.release`):
#: DP outputs (the history), their record (the ledger), the public calibration
#: and the public schema. Anything else, the private rows and their labels
#: above all, stays with the curator.
_RELEASED_ATTRIBUTES = (
    "history_", "ledger_", "bounds_", "sensitivity_", "noise_multiplier_",
    "approximation_", "anchor_noise_multiplier_",
    "n_rows_", "n_rows_std_", "n_rows_epsilon_",
    "warm_start_epsilon_", "n_iter_", "n_features_in_", "feature_names_in_",
    "output_", "output_bounds_", "classes_", "schema_",
)


class DPLimeExplainer(TransformerMixin, DPEstimator):
    """LIME-style local linear explanations, DP for the explanation dataset.

    The guarantee covers the explanation data when the black box does not
    depend on them (trained on other rows, or DP on the same ledger); it
    does not protect the black box's training data (the paper's
    amplification result, its Theorem 5.1, is not implemented).

    For a query ``z`` the explanation is the ``phi`` minimising the weighted
    local loss over the private explanation dataset X (m rows, scaled into
    [0, 1] by the public ``bounds``) and labels ``y_z(x)`` in [-1, 1] made
    from the black box's outputs::

        L(phi, z) = (1/m) sum_x alpha(||x - z||) (phi . (x - z) - y_z(x))^2

    over the ball ``||phi|| <= radius`` (Patel, Shokri & Zick, "Model
    Explanations with Differential Privacy", 2020). Each query is answered
    by ``max_iter`` steps of projected gradient descent with Gaussian noise
    on every gradient (the paper's Algorithm 1), the noise calibrated so
    that the query is (``epsilon_per_query``, ``delta``)-DP: T Gaussian
    releases compose exactly, which needs much less noise than the paper's
    closed form.

    Privacy unit: one row of the explanation dataset, under the
    neighbouring relation of the ledger (``accountant``; add-or-remove by
    default). The number of rows is private under add-or-remove: ``fit``
    releases a DP count of them first (Laplace, a share ``COUNT_SHARE`` of
    ``epsilon_per_query``, spent from ``epsilon``;
    :class:`~skdpx.privacy.FitCount`), and ``m`` below is that count
    (``n_rows_``), public once released: the local loss is a sum over
    the rows divided by it, so one row added or removed moves the sum by
    its own term alone (dividing by the private number of rows would move
    every other row's term too). Under replace-one, ``m`` is the number of
    rows, public by the relation. The
    weight ``alpha`` is capped by ``c / (2 r (radius r + 1))`` (Lemma 3.1,
    see :mod:`skdpx.explain._weights`), so one row moves the gradient by at
    most ``sensitivity_`` (c = 1; :func:`skdpx.explain.gradient_sensitivity`):

    * add-or-remove one row: ``c / m = 1 / m``;
    * replace one row: ``(c + 2 r*) / m`` with ``r* (radius r* + 1) = c / 2``
      (``sqrt(3) / m``, 1.732 / m, at radius 1).

    Both bounds need ``|y_z(x)| <= 1`` for every row and query, and nothing
    else about the black box: every kind of output is mapped into [-1, 1]
    by a fixed map of a public range, never read from the data
    (:mod:`skdpx.explain._outputs`), so the same sensitivity, noise and
    epsilon hold for all of them:

    * a classifier with ``predict_proba``: ``y = 2 P(k | x) - 1``, the
      probability of the explained class ``k`` (the paper's labels);
    * a classifier without it (``predict`` only, or ``decision_function``,
      e.g. ``SVC(probability=False)``): ``y = 2 [f(x) = k] - 1``, the
      indicator that it predicts ``k`` (a score has no public range, the
      indicator has);
    * a regressor (any black box that is neither tagged a classifier nor
      has ``predict_proba``): its output ``t`` clipped to the declared
      ``output_bounds = (lo, hi)`` (the clipping is part of the mechanism,
      and a range too narrow biases the explanation), centred on its value
      at the query: ``y_z(x) = (t(x) - t(z)) / (hi - lo)``, in [-1, 1].
      ``t(z)`` is a function of the public query and of the black box (which
      must not depend on the explanation rows), not of the rows. The
      centring makes the local model, which has no intercept, fit
      ``f(x) - f(z)``; a wide range costs accuracy (the signal shrinks as
      ``1 / (hi - lo)`` against the same noise);
    * ``estimator=None``: ``y`` given to ``fit``, clipped to
      ``output_bounds`` (default (-1, 1)) and mapped affinely onto [-1, 1].

    The explained class ``k`` is ``target_class`` (of :meth:`explain`, else
    the parameter), by default the positive class ``classes_[1]`` of a binary
    black box and, for more classes, the class the black box predicts at
    the query (public: a function of the query). Answers are reused, and
    the non-interactive phase serves them, only for the same class. The
    attributions are in the explained output's units (the probability, the
    indicator or the regression output) per unit of each feature.

    The noise is ``noise_multiplier_`` times that sensitivity, so an answer
    costs ``epsilon_per_query`` under either relation. The explainer owns a
    ledger with cap (``epsilon``, ``delta``) for its dataset; the queries'
    spends compose tightly in it (and in ``accountant``, if shared).

    ``fit`` releases nothing and spends nothing. Every call to
    :meth:`explain` plans its releases from public facts (the number of new
    queries, ``max_iter``, the noise multiplier) and commits them to the
    ledger before the explanation dataset is read; a committed spend is never
    refunded, even if the answer is interrupted (an exception, a
    ``KeyboardInterrupt``). "basic" commits a whole batch at once; "adaptive"
    and "enhanced" commit each answer's warm start and first step, then,
    once the first noisy gradient has fixed the number of steps, the
    remaining steps.

    A query identical to one answered interactively before (or within
    ``reuse_distance`` of it) gets the same answer for free ("reused", the
    paper's Flag rule: only interactive answers are reused). When the budget
    cannot pay for a query, ``on_budget_exhausted="noninteractive"`` answers
    it from the history of past queries and their DP explanations alone
    (the paper's Algorithm 4 phase, free): with the DP answer at the nearest
    past interactive query, which on Adult is ten times better than the
    paper's proxy fit; ``"raise"`` raises ``BudgetError``. If another user of
    a shared ledger takes the room between the explainer's check and its
    commit, no ``BudgetError`` escapes: the queries not yet paid for go
    non-interactive (an adaptive answer whose remaining steps are refused is
    its first, paid, step).

    The fitted explainer is a curator: it holds the private explanation
    dataset (it needs it to answer queries), and pickling it warns (one
    fitted on Dask data, whose rows stay persisted in the cluster, refuses
    to be pickled; see :meth:`fit`). Publish
    its answers, or :meth:`release`: a copy holding only DP outputs (the
    history), which pickles with no private row and answers from its history
    alone, for free.

    The queries are public points (the paper's model): ``explain`` and
    ``transform`` keep them in ``history_``. ``fit_transform`` (what a
    Pipeline calls) explains the rows of the explanation dataset themselves,
    which the guarantee does not cover (the queries are then private), and
    warns; ``history_`` keeps its answers but not those rows, unless
    ``store_fit_queries``.

    No value of an explanation row is refused (a refusal would be a release
    about that row): a missing or infinite value, or a cell that is not a
    number, is the midpoint of its feature's bounds; a row on which the
    black box raises, or returns a NaN or misshapen output, gets the
    neutral labels (0: a probability of 1/2, the middle of a regressor's
    ``output_bounds``), as does a missing given label (``estimator=None``).
    Such rows are found by bisection over chunks of rows (one call when the
    black box fails on none), the black box's warnings on private rows are
    not shown, and nothing reports which rows or how many
    (:ref:`privacy-refusals`). The black box is checked before anything is
    spent on public probe points made from the declared bounds and
    categories (their middle and two corners, never a private row), at fit
    and again before each :meth:`explain` commits its answers: one that
    fails there, or whose output is misshapen, not numbers, NaN or
    infinite, is refused (a model server that is down spends nothing). A
    regressor's output at the queries is checked the same way before their
    answers are committed, and an interactive answer that came out NaN is
    never recorded (an error says it was spent).

    Parameters
    ----------
    estimator : fitted object with predict, or None
        The black box (any fitted classifier or regressor, or a Pipeline
        ending in one; see above for what is explained of each). ``None``:
        the labels are ``y`` given to ``fit``, clipped to ``output_bounds``.
    epsilon : float, default=1.0
        The total budget of the explanation dataset.
    delta : float, default=1e-6
    epsilon_per_query : float, default=0.1
        The epsilon of one interactive answer (at ``delta``).
    strategy : {"basic", "adaptive", "enhanced"}, default="basic"
        "basic": the paper's Algorithm 1 for each new query, ``max_iter``
        steps from 0. "adaptive" (Algorithms 2-3): once 30 answers have
        been paid for (the first ones run ``max_iter`` steps from 0), start
        from an average of the past answers at the 3, 10 or 30 nearest past
        queries, chosen by the exponential mechanism on the gradient norm at
        the new query (costing one step's worth of privacy), and run fewer
        steps when that warm start is good (Theorem 4.4, with the gradient
        norm floored at what one noisy gradient can resolve). "enhanced"
        (section 4.4, the paper's "unrestricted" Algorithm 3): the same
        without the floor, so a warm start whose gradient is under the noise
        level stops after as few as 2 steps. The number of steps is chosen
        from released (noisy) values only; each answer pays for the steps it
        ran. Both gain most at a small ``epsilon_per_query`` (many cheap
        answers build the history); see the doc page.
    max_iter : int or None, default=None
        Gradient steps per interactive answer (T; "adaptive" and "enhanced":
        at most T). None: chosen at fit from public facts only
        (:func:`default_n_iter`: the number of rows' DP count, the number of
        encoded features, ``epsilon_per_query``, ``delta``, ``radius``), the
        T that minimises a bound on the answer's expected excess local loss;
        ``n_iter_`` holds it. A fixed T can be worse than answering zero when
        the noise of many steps outweighs what they find.
    radius : float, default=1.0
        The explanations live in ``||phi|| <= radius`` (scaled units).
    kernel_width : float or None, default=None
        None: the paper's stable weight ``min(1, cap)``; else LIME's
        exponential kernel ``exp(-r^2 / kernel_width^2)``, capped.
    reuse_distance : float, default=0.0
        Queries within this distance (scaled units) of an interactive answer
        reuse it; 0 reuses identical queries only.
    on_budget_exhausted : {"noninteractive", "raise"}, default="noninteractive"
        What a query the budget cannot pay for gets (in a released
        explainer, every query not reused): a free non-interactive answer,
        or ``BudgetError``.
    on_low_utility : {"warn", "raise"}, default="warn"
        When the budget cannot be shown to beat answering zero (a bound on
        an answer's expected excess local loss, :func:`default_n_iter`, is no
        better than the bound for answering zero: the noise of its steps
        outweighs what they can find), the fit says so before any query
        spends, with what would help (the ``epsilon_per_query``, the number
        of rows or of features that would clear it): a ``UtilityWarning``,
        or "raise": a ValueError (under add-or-remove, after only the DP row
        count was spent: the check needs the count).
    store_fit_queries : bool, default=False
        Whether ``history_`` keeps the rows that ``fit_transform`` explains
        (rows of the explanation dataset) as their queries; then later
        queries may reuse their answers. Kept or not, :meth:`release` drops
        them.
    bounds : tuple (lower, upper), dict or None, default=None
        Public bounds of the features (scalars or arrays), or a dict
        ``{column: (lower, upper)}`` for the numeric columns of a DataFrame
        (a numeric column left out has its bounds estimated with DP, as
        with ``None``); data are clipped to them.
        ``None`` estimates them with a DP histogram charged inside this
        estimator's epsilon (:class:`~skdpx.privacy.FitBounds`: a quarter of
        it, coarse on small data; never the raw minimum and maximum), with a
        ``PrivacyLeakWarning`` that declared bounds are better. Bounds with
        lower == upper for every feature are refused.
    categories : dict or None, default=None
        ``{column: [level, ...]}``: the public levels of each categorical
        column of a DataFrame, one-hot encoded internally
        (:class:`~skdpx.preprocessing.PublicSchemaEncoder`); never read from
        the data. The attributions then have one value per encoded feature
        (``schema_.feature_names_out``). The black box always receives rows
        of the kind the explainer was fitted on (the same DataFrame columns
        and dtypes, valid categories, integer columns as integers:
        ``schema_.decode``), the explanation rows at ``fit`` as the queries
        in :meth:`explain`.
    output_bounds : tuple (lower, upper) or None, default=None
        The public range of a regressor's output (required for a regressor,
        refused for a classifier; with ``estimator=None``, the range of
        ``y``, default (-1, 1)). Declared, never read from the data; the
        outputs are clipped to it before they enter the loss, so the
        sensitivity above holds. A regressor without it is refused at
        ``fit`` before anything is spent.
    target_class : label, or None, default=None
        The class explained by default (a label of the black box's
        ``classes_``). None: the positive class ``classes_[1]`` of a binary
        black box; the class the black box predicts at each query for more
        classes. :meth:`explain` can choose it per query. Must be None for a
        regressor.
    accountant : PrivacyLedger, diffprivlib BudgetAccountant or None
        Where every spend is recorded as well; its neighbouring relation is
        the one the sensitivity is calibrated under.
    n_jobs : int or None, default=None
        The workers that answer queries (joblib, as scikit-learn's
        ``n_jobs``): None means 1 unless in a ``joblib.parallel_config``
        context, -1 all processors; the backend is joblib's (loky by
        default; ``parallel_config(backend="dask")`` runs on a Dask
        ``distributed`` cluster). What runs in parallel, whatever the
        backend (1 worker: exactly the sequential computation):

        * "basic": the new interactive queries of a call are split into
          as many pieces as there are workers (contiguous, in order); each
          piece is a whole private release (its queries' local loss and
          noisy gradient descent) computed in a worker with its own noise
          stream: from the worker's own OS entropy, or, with a seeded
          ``random_state``, a stream spawned from the call's seed per piece
          (then the answers depend on the number of pieces too);
        * "adaptive" and "enhanced": each answer depends on the answers
          before it (its reuse, warm start, and spend), so queries are
          answered one after the other as with 1 worker, and only the
          local loss of each query, which draws no noise, is computed in
          parallel, over blocks of rows (its noise is drawn here), when the
          rows are many enough to pay for a round trip to the workers per
          query (m d^2 >= 2e8: m >= 500,000 at d = 20).

        The spend of every piece is committed to the ledger in this process
        before the piece is sent, as one event per call exactly as with 1
        worker; the workers never spend, and a failing worker refunds
        nothing. The private rows are sent to the workers (loky memory-maps
        large arrays in joblib's temporary folder, removed after the call;
        Dask sends them to its workers). Rows kept as anything but one
        numpy array (e.g. a Dask collection given to ``fit``) are never
        sent: the queries are then answered as with 1 worker. With
        ``approximation_="cells"`` a query reads no row, and nothing is sent.
    approximation : {"auto", "exact", "cells"}, default="auto"
        How a query's local loss is computed.

        * "exact": from every row, at every query (``O(m d^2)`` per query).
        * "cells": from per-cell sums made once at ``fit``
          (``O(cells x d^2)`` per query, whatever m; at most 64 x 20 cells at d = 50).
          Each row goes to the cell of its nearest *anchor* (64 DP k-means
          centres, released at fit by the privacy core) and of its distance
          to it (public shells: radii 0.05 x 1.3^s in the unit cube), and
          every row of a cell gets the weight of a point as far from the
          query as any row of the cell can be (the anchor's distance plus
          the shell's radius). Every row's weight stays in the family the
          sensitivity is proved for, so the noise and the guarantee of an
          answer are the exact path's; the anchors cost at most 10% of
          ``epsilon_per_query`` on their own (their noise is larger only
          from a few million rows on), spent at fit, and far less once
          composed with the answers in the ledger. The
          loss differs: each row weighs as a point up to two shell radii
          farther. Measured against the exact path's answers at 1e6 rows
          (doc: "Per-cell sums"), the answers' local loss is within 0.1%
          on a 50-feature logistic model; on Adult (one-hot columns) under
          0.5% above for the median query and about 1.5% for the worst; on
          few rows the answers are worse (4% on Adult's 32,561), which is why
          "auto" keeps the exact path there. Refused (before
          anything is spent) when the cells' sums would take more than
          512 MiB (many features).
        * "auto": "cells" from 200,000 rows on (the DP count), when the
          cap (and a shared ``accountant``) still pays the anchors and a
          query, ``epsilon_per_query`` is finite and the sums fit in
          512 MiB; else "exact".
    random_state : None, int, RandomState or Generator, default=None
        None: the noise of every :meth:`explain` call comes from a fresh
        cryptographically secure source (nothing is kept between calls).
        A seed makes the answers reproducible (each call's noise is a
        function of the seed and of the number of answers given before it),
        and emits a ``PrivacyLeakWarning`` at fit and at every call: anyone
        who knows the seed can remove the noise. Never publish seeded
        answers.

    Attributes
    ----------
    history_ : dict of lists
        ``queries`` (scaled), ``explanations`` (scaled units, in label units:
        times ``(hi - lo) / 2`` of ``output_bounds_`` for a probability, an
        indicator or labels, ``hi - lo`` for a regressor, gives the explained
        output's), ``phase``, ``epsilon``
        (the answer's own cost), ``n_iter`` (gradient steps run), ``private``
        (whether the query was a row of the explanation dataset, from
        ``fit_transform``), ``target`` (the class explained; None for a
        regressor) and ``std`` (the noise's standard deviation per value, in
        the units of ``explanations``; NaN where not known) of every answer so
        far. The query
        of a private entry is ``None`` (not kept; its answer is never
        reused) unless ``store_fit_queries``.
    noise_multiplier_ : float
        Noise standard deviation over ``sensitivity_``, calibrated so that
        one answer (with its warm start, for "adaptive" and "enhanced")
        costs at most ``epsilon_per_query``.
    sensitivity_ : float
        L2 sensitivity of the local loss's gradient to one row under the
        ledger's relation: ``1 / m`` (add-or-remove) or ``(1 + 2 r*) / m``
        (replace-one), see above; ``m`` is ``n_rows_``.
    n_rows_, n_rows_std_, n_rows_epsilon_ : float
        The DP count of the explanation rows (``m``), its noise's standard
        deviation and its epsilon (spent at ``fit``; the number of rows, 0
        and 0 where it is public).
    warm_start_epsilon_ : float
        Epsilon of the exponential mechanism choosing a warm start (0 for
        "basic"): as private as one gradient step.
    approximation_ : {"exact", "cells"}
        How the queries' local loss is computed (``approximation``).
    anchor_noise_multiplier_ : float or None
        With ``approximation_="cells"``, the noise multiplier of the
        anchors' ``ANCHOR_ITER + 1`` Gaussian releases (their event is in
        ``ledger_``); None otherwise.
    n_iter_ : int
        The most gradient steps an interactive answer runs (``max_iter``, or
        the number :func:`default_n_iter` chose).
    ledger_ : EstimatorLedger
        The explainer's spends (its own cap, and the shared ledger's).
    epsilon_spent_, delta_spent_ : float
    epsilon_remaining_ : float
        What the explainer may still spend: the smaller of its own cap's
        remainder and the shared ledger's (0 for a released explainer).
    n_queries_ : int
        Answers given so far.
    n_features_in_ : int
    bounds_ : tuple of ndarray
    output_ : str
        What is explained: "probability", "indicator" (a classifier without
        ``predict_proba``), "regression" or "labels" (``estimator=None``).
    output_bounds_ : tuple of float
        Its public range: (0, 1) for a probability or an indicator, else
        ``output_bounds``.
    classes_ : ndarray
        The black box's classes (a classifier only).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skdpx.explain import DPLimeExplainer
    >>> rng = np.random.RandomState(0)
    >>> X = rng.uniform(0, 1, size=(2000, 3))
    >>> y = (X[:, 0] - X[:, 1] > 0).astype(int)
    >>> model = LogisticRegression().fit(X, y)
    >>> explainer = DPLimeExplainer(model, epsilon=1.0, epsilon_per_query=0.5,
    ...                             bounds=(0, 1)).fit(X)
    >>> result = explainer.explain(X[:6])
    >>> result.phase.tolist()  # doctest: +NORMALIZE_WHITESPACE
    ['interactive', 'interactive', 'interactive',
     'noninteractive', 'noninteractive', 'noninteractive']
    >>> round(explainer.epsilon_spent_, 2)  # 3 answers at 0.5: 0.9, not 1.5; the count 0.025
    0.93
    >>> explainer.explain(X[:1]).phase.tolist()  # asked again: free
    ['reused']

    A regressor, with the public range of its output (it never saw the
    explanation rows):

    >>> from sklearn.linear_model import Ridge
    >>> reg = Ridge().fit(X[:1000], X[:1000] @ [2.0, -1.0, 0.0])
    >>> explainer = DPLimeExplainer(reg, epsilon=2.0, epsilon_per_query=1.0, bounds=(0, 1),
    ...                             output_bounds=(-1, 2)).fit(X[1000:])
    >>> result = explainer.explain(X[:2])
    >>> result.meta["output"], result.meta["target_class"]
    ('regression', [None, None])
    """

    #: fit takes Dask and Spark data (skdpx.utils._tables.validate_table)
    _accepts_distributed = True

    #: fit releases only its count and bounds; the answers spend (_plan_queries) and
    #: are scored on public queries (DPLimeFidelity)
    _dp_capabilities = DPCapabilities(
        exact_price=False, answers_queries=True, holds_private_rows=True,
        no_default_scoring="its score needs public queries, pass "
                           "scoring=DPLimeFidelity(X_query).")

    _parameter_constraints = {
        **BUDGET_PARAMETER_CONSTRAINTS,
        "estimator": [HasMethods(["predict"]), None],
        "epsilon_per_query": [EPSILON_CONSTRAINT],
        "strategy": [StrOptions({"basic", "adaptive", "enhanced"})],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "radius": [Interval(Real, 0, None, closed="neither")],
        "kernel_width": [Interval(Real, 0, None, closed="neither"), None],
        "reuse_distance": [Interval(Real, 0, None, closed="left")],
        "on_budget_exhausted": [StrOptions({"noninteractive", "raise"})],
        "on_low_utility": [StrOptions({"warn", "raise"})],
        "store_fit_queries": ["boolean"],
        "output_bounds": ["array-like", None],
        "categories": [dict, None],
        "target_class": "no_validation",  # any label of the black box's classes_
        # 0 has no meaning for joblib: refused at fit, before anything is spent
        "n_jobs": [Interval(Integral, None, -1, closed="right"),
                   Interval(Integral, 1, None, closed="left"), None],
        "approximation": [StrOptions({"auto", "exact", "cells"})],
    }

    def __init__(
        self,
        estimator=None,
        *,
        epsilon=1.0,
        delta=1e-6,
        epsilon_per_query=0.1,
        strategy="basic",
        max_iter=None,
        radius=1.0,
        kernel_width=None,
        reuse_distance=0.0,
        on_budget_exhausted="noninteractive",
        on_low_utility="warn",
        store_fit_queries=False,
        bounds=None,
        output_bounds=None,
        target_class=None,
        categories=None,
        accountant=None,
        n_jobs=None,
        approximation="auto",
        random_state=None,
    ):
        self.estimator = estimator
        self.epsilon = epsilon
        self.delta = delta
        self.epsilon_per_query = epsilon_per_query
        self.strategy = strategy
        self.max_iter = max_iter
        self.radius = radius
        self.kernel_width = kernel_width
        self.reuse_distance = reuse_distance
        self.on_budget_exhausted = on_budget_exhausted
        self.on_low_utility = on_low_utility
        self.store_fit_queries = store_fit_queries
        self.bounds = bounds
        self.output_bounds = output_bounds
        self.target_class = target_class
        self.categories = categories
        self.accountant = accountant
        self.n_jobs = n_jobs
        self.approximation = approximation
        self.random_state = random_state

    # ------------------------------------------------------------------ fit

    def fit(self, X, y=None):
        """Take X as the private explanation dataset (nothing is released).

        The answers' spends are committed by :meth:`explain`, before it
        reads the dataset; ``fit`` spends only on the DP row count, the DP
        bounds (``bounds=None``) and, with ``approximation_="cells"``, the
        cells' anchors (committed before the rows are read). ``fit`` calibrates the noise (from
        public facts: m, ``max_iter``, ``epsilon_per_query``, the ledger's
        relation) and makes the explainer's ledger. A validation error
        (e.g. ``epsilon_per_query`` above ``epsilon``, a black box that fails
        on the public probe point) spends nothing either; a value of a row
        (e.g. a NaN in ``X``) is neutralised, never refused (see above).

        **Memory.** In memory, the explainer keeps the validated X itself
        (a float64 array is not copied: do not modify it while the
        explainer answers queries) and its labels; the DP bounds, the labels
        and every query's local loss read X in blocks of rows, each filled,
        clipped and scaled as it is read, so no scaled copy of X is made
        (see the docs' "In memory first: blocks of rows"). A fit whose
        memory cannot fit is refused before anything is spent.

        **Dask.** ``X`` may be a dask array or a dask DataFrame (the
        ``dask`` extra) whose rows stay in the Dask workers: the same
        validation and schema as in memory (a bad value is neutralised in
        the workers as in memory, never counted or refused), the same
        calibration and spend (m, the number of rows, is a public count as
        ``len(X)`` is in memory). In the workers, partition by partition,
        the rows are encoded, scaled to the unit cube of the bounds and
        labelled by the black box (shipped to the workers; it receives rows
        of the kind it was fitted on), and the scaled rows and labels are
        persisted there (``persist``): the explainer holds dask arrays,
        never a row in the client, and the black box is not run again per
        query. DP bounds (``bounds=None``) are released from histogram
        counts summed in the workers, with the noise added in the client by
        the privacy core. Queries are answered in memory (:meth:`explain`
        takes a numpy array or a pandas DataFrame): each batch of new
        interactive queries (each query, for "adaptive" and "enhanced")
        makes one pass over the workers' rows, which return only the local
        loss's sums (d x d per query); the noisy gradient descent runs in
        the client, exactly as in memory. At ``epsilon_per_query=np.inf``
        the answers are the in-memory ones up to floating-point summation
        order. A curator fitted on Dask data cannot be pickled (its rows
        live in the cluster): pickle :meth:`release`.

        Parameters
        ----------
        X : array-like, dask array or dask DataFrame of shape (m, n_features)
        y : array-like or dask array of shape (m,), optional
            The labels when ``estimator`` is None (clipped to
            ``output_bounds``, default (-1, 1)). With a black box, ``y``
            (e.g. given by a Pipeline) is not read: only its length is
            checked against ``X``'s, before anything is spent.

        Returns
        -------
        self
        """
        return super().fit(X, y)

    def _validate_fit(self, X, y):
        """Everything checked before the ledger is made (validation only)."""
        # X in the encoded space of its public schema (schema_): numeric columns
        # as they are, categorical ones one-hot with their declared levels
        if self.estimator is None:  # y is required (see __sklearn_tags__)
            X, y = validate_table(self, X, y, reset=True, categories=self.categories,
                                  y_numeric=True)
            # a label that is missing or not a number is neutral (0), never refused
            # (skdpx.explain._outputs.row_labels): only y's public dtype is checked
            if is_distributed(y):
                if y.dtype.kind not in "biuf":
                    raise ValueError("y must be numeric: the labels explained when "
                                     "estimator=None.")
                y = y.astype(np.float64)
            else:
                y = np.asarray(y, dtype=np.float64)  # numbers or NaN (validate_table)
        else:
            check_ignored_y(self, X, y)  # not read; only its length is checked
            X = validate_table(self, X, reset=True, categories=self.categories)
        self._require_delta("DPLimeExplainer's gradient perturbation")
        if self.epsilon_per_query > self.epsilon:
            raise ValueError(
                f"epsilon_per_query ({self.epsilon_per_query:g}) exceeds the total epsilon "
                f"({self.epsilon:g}): no query could ever be answered interactively."
            )
        # the explained output (kind, classes, public range): a regressor without
        # output_bounds, a black box that fails on a public probe point, a bad
        # target_class... are refused here, before any spend. The probe is made
        # from the declared schema, never a private row
        output = resolve_output(self.estimator, self.output_bounds,
                                self.schema_.decode(self.schema_.probe(self.bounds,
                                                                       corners=True)))
        if self.target_class is not None:
            # reads the number of queries only (no black box): a public stand-in row
            query_targets(*output, None, np.zeros((1, X.shape[1])), self.target_class)
        mib = _cells_mib(X.shape[1], _n_labels(output[1]))
        if self.approximation == "cells" and mib > CELLS_MAX_MIB:
            raise ValueError(
                f"approximation='cells' with {X.shape[1]} encoded features: the cells' sums "
                f"would take {mib:.0f} MiB while they are made (above {CELLS_MAX_MIB}). Use "
                "approximation='exact' (or 'auto'). Nothing was spent.")
        return FitData(X, y, output[1], extra={"output": output})

    def _row_memory(self, data):
        # kept per row: the labels (one column per class, or one); X itself is kept
        # as validated, and read in blocks
        classes = data.classes
        return 8.0 * (1 if classes is None else len(classes))

    def _count_basis(self):
        # epsilon caps many answers: the count is as precise as one answer needs,
        # a share of epsilon_per_query (a share of a large cap would starve the answers)
        return min(self.epsilon, self.epsilon_per_query)

    def _proxy_rest(self, count, bounds):
        # a fit releases its count and, with bounds=None, the DP bounds (whose
        # event is fixed), and for "cells" the anchors (at most their share of
        # epsilon_per_query: the stand-in); the queries are checked when they are asked
        if self.approximation != "cells":
            return bounds.event
        anchors = self._anchor_event(self._anchor_budget_noise())
        return anchors if bounds.event is None else compose_events(bounds.event, anchors)

    def _anchor_budget_noise(self):
        """The anchors' noise multiplier at their whole share (ANCHOR_SHARE) of a query."""
        if math.isinf(self.epsilon_per_query):
            return 0.0
        return calibrate_noise(ANCHOR_SHARE * self.epsilon_per_query, ANCHOR_SHARE * self.delta,
                               steps=ANCHOR_ITER + 1)

    @staticmethod
    def _anchor_event(noise_multiplier):
        if noise_multiplier == 0:
            return NonPrivateDpEvent()
        return gaussian_event(noise_multiplier, steps=ANCHOR_ITER + 1)

    def _plan_cells(self, d, n, relation, room, n_labels):
        """Whether the answers read per-cell sums, and the anchors' noise multiplier.

        From public facts only: the approximation asked for, the planning
        count ``n``, the number of encoded features ``d``, and ``room`` (the
        epsilon the cap leaves for the queries). The anchors' noise is
        their share's (:data:`ANCHOR_SHARE` of ``epsilon_per_query``), or
        larger when the rows are many: enough that a centre of
        ``n / N_ANCHORS`` rows is off by about :data:`ANCHOR_NOISE` per
        coordinate.
        """
        if self.approximation == "exact":
            return False, None
        if self.approximation == "auto" and (
                # a non-private baseline is exact; few rows; too many features
                math.isinf(self.epsilon_per_query) or n < CELLS_MIN_ROWS
                or _cells_mib(d, n_labels) > CELLS_MAX_MIB
                or room - ANCHOR_SHARE * self.epsilon_per_query < self.epsilon_per_query
                or not self._accountant_admits_anchors()):
            return False, None
        noise = self._anchor_budget_noise()
        if noise > 0:
            noise = max(noise, ANCHOR_NOISE * (n / N_ANCHORS) / table_sensitivity(d, relation))
        return True, noise

    def _accountant_admits_anchors(self):
        """Whether a shared ``accountant`` can still pay the anchors and one query.

        "auto" falls back to the exact path (which spends nothing more at
        fit) rather than fail after the count's spend. Reads the ledger's
        public record only (``check`` records nothing).
        """
        if not isinstance(self.accountant, PrivacyLedger):
            return True
        try:
            self.accountant.check(compose_events(self._anchor_event(self._anchor_budget_noise()),
                                 gaussian_event(self._query_noise_multiplier(),
                                                steps=self._query_steps())))
        except BudgetError:
            return False
        return True

    def _check_plan(self, relation, bounds, count):
        """Refuse, before anything is spent, a cap that leaves no room for one query."""
        left = self.epsilon * (1 - bounds.share) - count.epsilon
        if self.approximation == "cells":
            left -= ANCHOR_SHARE * self.epsilon_per_query
        if self.epsilon_per_query > left:
            spent = [f"{share:.0%} of epsilon on {what}" for share, what in (
                (bounds.share, "DP bounds"), (count.epsilon / self.epsilon, "the DP row count"),
                (ANCHOR_SHARE * self.epsilon_per_query / self.epsilon
                 if self.approximation == "cells" else 0, "the cells' anchors (at most)"))
                if share]
            raise ValueError(
                f"epsilon={self.epsilon:g} spends {' and '.join(spent)}, which leaves less than "
                f"epsilon_per_query ({self.epsilon_per_query:g}) for the queries: none could be "
                "answered interactively. Raise epsilon, declare bounds, or lower "
                "epsilon_per_query. Nothing was spent."
            )

    def _plan_spend(self, data, relation, bounds, count):
        """The fit's plan (the cells' anchors, or nothing) and the queries' calibration.

        With ``approximation_="cells"`` the anchors' release
        (:meth:`_plan_cells`); otherwise nothing is released at fit but the
        row count (and DP bounds): a no-op plan.

        The gradient's sensitivity under ``relation`` (add-or-remove:
        ``c / m``; replace-one: ``(c + 2 r*) / m``), from m (the planning
        count ``count.n``: the DP count under add-or-remove, where the
        losses are sums over the rows divided by it; the number of rows
        under replace-one, where it is public), ``radius`` and c only; the
        number of steps T (``max_iter``, or :func:`default_n_iter` from those
        public facts and the number of encoded features); the noise
        multiplier so that one answer (T steps, and a warm-start choice
        accounted as one more Gaussian step for "adaptive" and "enhanced")
        costs ``epsilon_per_query``.
        """
        d = data.X.shape[1]
        sensitivity = gradient_sensitivity(count.n, c=_C, radius=self.radius, relation=relation)
        n_iter = self._choose_n_iter(d, sensitivity)
        self._check_utility(d, count, relation)
        self._planned_n_iter = n_iter  # what _plan_queries prepays, before the fit
        noise_multiplier = self._query_noise_multiplier(n_iter)
        warm_start_epsilon = (
            gaussian_to_pure(noise_multiplier) if self.strategy != "basic" else 0.0
        )
        cells, anchor_noise = self._plan_cells(
            d, count.n, relation, self.epsilon * (1 - bounds.share) - count.epsilon,
            _n_labels(data.classes))
        if cells:
            event, label = self._anchor_event(anchor_noise), (
                f"the cells' anchors: DP k-means, {d} initial histograms and {ANCHOR_ITER} "
                f"Lloyd tables of {N_ANCHORS} clusters ({ANCHOR_ITER + 1} Gaussian releases)")
        else:
            event, label = NoOpDpEvent(), "explanation dataset (nothing released at fit)"
        return SpendPlan(event, label, sensitivity=sensitivity, noise_multiplier=noise_multiplier,
                         warm_start_epsilon=warm_start_epsilon, n_iter=n_iter, cells=cells,
                         anchor_noise=anchor_noise, relation=relation)

    def _choose_n_iter(self, d, sensitivity, epsilon_per_query=None):
        """T: ``max_iter``, or :func:`default_n_iter` from public facts."""
        if self.max_iter is not None:
            return int(self.max_iter)
        return default_n_iter(d, self.epsilon_per_query if epsilon_per_query is None
                              else epsilon_per_query, self.delta, sensitivity,
                              radius=self.radius, extra_steps=int(self.strategy != "basic"))

    def _beats_zero(self, d, n_rows, relation, epsilon_per_query=None):
        """Whether the answers' bound ``B(T)`` is below answering zero's ``L r^2 / 2``.

        At the T the fit would use (``max_iter``, or :func:`default_n_iter`
        at these facts), from public facts only. Returns ``(beats, T, B,
        zero)``.
        """
        eps = self.epsilon_per_query if epsilon_per_query is None else epsilon_per_query
        sensitivity = gradient_sensitivity(n_rows, c=_C, radius=self.radius, relation=relation)
        T = self._choose_n_iter(d, sensitivity, eps)
        L, r = _C / self.radius, self.radius
        s1 = calibrate_noise(eps, self.delta, steps=1) * sensitivity
        answer = _loss_bound(T, s1, d, L, r, int(self.strategy != "basic"))
        zero = L * r**2 / 2
        return answer < zero, T, answer, zero

    def _clearing(self, d, n_rows, relation):
        """What would clear the check, each alone, found by the check itself (public facts).

        The least ``epsilon_per_query`` (rounded up to 3 digits), the fewest
        rows, and the most encoded features (0: none) for which
        :meth:`_beats_zero` holds, at the T the fit would then use; None
        where nothing within reach clears it (one step, ``max_iter=1``,
        never can: ``B(1) >= L r^2 / 2``).
        """
        def least(clears, lo, hi, integer):
            """The least x in (lo, hi] with clears(x), assuming monotone; None if hi fails."""
            if not clears(hi):
                return None
            for _ in range(200):
                mid = (lo + hi) / 2 if not integer else (lo + hi) // 2
                if (integer and hi - lo <= 1) or (not integer and hi - lo <= 1e-9 * hi):
                    break
                lo, hi = (lo, mid) if clears(mid) else (mid, hi)
            return hi

        eps = least(lambda e: self._beats_zero(d, n_rows, relation, e)[0],
                    self.epsilon_per_query, self.epsilon_per_query * 1e6, False)
        if eps is not None:  # rounded up to 3 significant digits, and checked again
            step = 10.0 ** (math.floor(math.log10(eps)) - 2)
            eps = math.ceil(eps / step) * step
            while not self._beats_zero(d, n_rows, relation, eps)[0]:
                eps += step
        rows = least(lambda m: self._beats_zero(d, m, relation)[0], int(n_rows),
                     int(n_rows) * 10**6, True)
        features = None
        if self._beats_zero(1, n_rows, relation)[0]:  # the most: one fewer than the least
            features = least(lambda k: not self._beats_zero(k, n_rows, relation)[0], 1, d,
                             True) - 1  # that fails (d fails: the check is why we are here)
        return eps, rows, features

    def _check_utility(self, d, count, relation):
        """Warn (or refuse) when an answer cannot be shown to beat answering zero.

        From public facts only (the planning count ``count.n``: the DP count
        under add-or-remove; d, T, ``epsilon_per_query``, ``delta``,
        ``radius``): the answer's bound ``B(T)`` (:func:`default_n_iter`)
        against ``L r^2 / 2``, the bound on what answering zero loses. The
        message says what would clear it (:meth:`_clearing`, each found by
        the same check).
        """
        if np.isinf(self.epsilon_per_query):
            return
        beats, T, answer, zero = self._beats_zero(d, count.n, relation)
        if beats:
            return
        eps, rows, features = self._clearing(d, count.n, relation)
        fixes = []
        if eps is not None:
            fixes.append(f"epsilon_per_query >= {eps:.3g}")
        if rows is not None:
            fixes.append(f"about {rows} rows")
        if features is not None:
            fixes.append(f"at most {features} encoded features")
        if self.max_iter is not None:
            fixes.append("max_iter=None (the number of steps with the best bound)")
        steps = "" if self.max_iter is None else f" (max_iter={self.max_iter})"
        clear = (f" Any one of these would clear it: {', '.join(fixes)}." if fixes else
                 " Nothing within reach of one of these facts alone clears it.")
        if self.max_iter == 1:
            clear += " (One step never can: the bound of one step is never below zero's.)"
        message = (
            f"DPLimeExplainer: at epsilon_per_query={self.epsilon_per_query:g} with about "
            f"{count.n:.0f} rows and {d} encoded features, an answer of {T} "
            f"step{'s' if T != 1 else ''}{steps} cannot be shown to beat answering zero: "
            f"a bound on its expected local loss ({answer:.3g}) is no better than that of "
            f"answering zero ({zero:.3g}), so its values may be mostly noise.{clear}")
        if self.on_low_utility == "raise":
            if count.private:
                spent = (f"The DP row count (epsilon {count.epsilon:.4g}) was spent; nothing "
                         "else was.")
            elif relation == "replace_one":
                spent = "Nothing was spent."
            else:  # the count was given: a search's or a sweep's DP count, which it spent
                spent = ("This fit spent nothing; the DP row count it was planned with (a "
                         "search's or a sweep's) was spent.")
            raise ValueError(f"{message} {spent}")
        warnings.warn(message, UtilityWarning, stacklevel=_outside_stacklevel())

    def _n_iter(self):
        """T of the answers: as last planned (the fit plans it), else ``max_iter``."""
        for n_iter in (getattr(self, "_planned_n_iter", None), getattr(self, "n_iter_", None),
                       self.max_iter):
            if n_iter is not None:
                return int(n_iter)
        raise ValueError("max_iter=None: the number of steps is chosen when the fit is "
                         "planned (from the DP row count); plan or fit the explainer first.")

    def _query_steps(self, n_iter=None):
        """The most Gaussian steps one interactive answer spends (public).

        "basic": T (``n_iter``, default :meth:`_n_iter`); "adaptive" and
        "enhanced": a warm-start choice (accounted as one step) and at most T
        steps.
        """
        return (self._n_iter() if n_iter is None else n_iter) + (self.strategy != "basic")

    def _query_noise_multiplier(self, n_iter=None):
        """The noise multiplier of every step, so that one answer costs ``epsilon_per_query``."""
        return calibrate_noise(self.epsilon_per_query, self.delta,
                               steps=self._query_steps(n_iter))

    def _plan_queries(self, n_queries):
        """An upper bound on what explaining ``n_queries`` queries spends, from public facts.

        For an explainer fitted afresh (nothing answered yet), whatever the
        queries: every interactive answer spends Gaussian steps of one noise
        multiplier (``noise_multiplier_``), at most :meth:`_query_steps` of
        them, and the explainer's own ledger refuses any commit that would
        take the composition above (``epsilon``, ``delta``). So the total
        spend is ``S`` Gaussian steps with ``S`` at most ``n_queries`` times
        the steps of one answer and at most the largest ``S`` that this cap
        admits (for "basic", a multiple of ``max_iter``). Reused and
        non-interactive answers spend nothing, and the number of steps of
        an adaptive answer is chosen from released values: running fewer
        steps than planned is post-processing of running them all, so the
        Gaussian event of ``S`` steps bounds the adaptive composition too
        (under RDP and PLD alike). A spend for DP ``bounds`` (``bounds=None``)
        is part of the fit, not of this plan; it only leaves less room under
        the cap. The number of rows and the neighbouring relation do not
        enter: the noise is calibrated per unit of the sensitivity.

        Parameters
        ----------
        n_queries : int
            The number of queries to explain (an upper bound on the new ones).

        Returns
        -------
        DpEvent
            ``GaussianDpEvent`` (``SelfComposedDpEvent`` of it) of ``S``
            steps, ``NoOpDpEvent`` if ``S = 0``, ``NonPrivateDpEvent`` for
            ``epsilon_per_query=inf``.
        """
        n_queries = int(n_queries)
        if n_queries < 0:
            raise ValueError(f"n_queries must be >= 0, got {n_queries}.")
        if np.isinf(self.epsilon_per_query):
            return NonPrivateDpEvent() if n_queries else NoOpDpEvent()
        per_query = self._query_steps()
        z = self._query_noise_multiplier()
        cap = PrivacyLedger(epsilon=self.epsilon, delta=self.delta)

        def fits(steps):
            try:
                cap.check(gaussian_event(z, steps=steps))
            except BudgetError:
                return False
            return True

        worst = n_queries * per_query
        if worst == 0 or fits(worst):
            steps = worst
        else:
            lo, hi = 0, worst  # fits(lo), not fits(hi)
            while hi - lo > 1:
                mid = (lo + hi) // 2
                lo, hi = (mid, hi) if fits(mid) else (lo, mid)
            steps = lo
        if self.strategy == "basic":
            steps -= steps % self._n_iter()  # whole answers only
        return gaussian_event(z, steps=steps) if steps else NoOpDpEvent()

    def _private_fit(self, data, plan, commitment, noise):
        # nothing is released here but the bounds when they are not declared
        X, y, output = data.X, data.y, data.extra["output"]
        kind, classes, output_bounds = output
        lower, upper = plan.bounds.release(X, noise=noise, commitment=commitment)
        if is_distributed(X):
            # a missing or infinite value: the bounds' midpoint (a rule on its cell
            # alone); scaled and labelled in the workers (executors), and kept there
            X = fill_nonfinite(X, lower, upper)
            self._X, self._labels = persist(
                BoundsScaler(lower, upper).transform(X),
                engine_labels(X, y, output, estimator=self.estimator, schema=self.schema_))
            self._rows = None
        else:
            # the black box gets rows of the kind it was fitted on (DataFrame columns,
            # dtypes); a row it fails on (raises, NaN) gets the neutral labels
            self._labels = self._row_labels(X, y, output, lower, upper)
            # the rows are kept as validated (a reference to X itself when it is a
            # float64 array: no copy); each block read by a query is filled (a missing
            # or infinite value at the bounds' midpoint, a rule on its cell alone),
            # clipped and scaled then (skdpx.utils._validation.UnitCubeRows)
            self._X, self._rows = X, UnitCubeRows(lower, upper)
        self.output_, self.output_bounds_ = kind, output_bounds
        if classes is not None:
            self.classes_ = classes
        elif hasattr(self, "classes_"):  # a refit on a regressor
            del self.classes_
        self._cells = None
        if plan.cells:
            # the anchors: DP k-means centres in the unit cube (released, so public);
            # then each row's cell is a function of the row and public values, and the
            # cells' sums (private, never released) are all a query reads
            anchors, _ = dp_lloyd(self._X, N_ANCHORS, ANCHOR_ITER, plan.anchor_noise,
                                  relation=plan.relation, noise=noise, commitment=commitment,
                                  prepare=self._rows)
            self._cells = cell_sums(self._X, self._labels, anchors=anchors,
                                    radii=shell_radii(self._X.shape[1]), prepare=self._rows)
        self.approximation_ = "cells" if plan.cells else "exact"
        # the anchors' calibration (public): with ledger_, what recomputes the spend
        self.anchor_noise_multiplier_ = plan.anchor_noise if plan.cells else None
        self.bounds_ = (lower, upper)
        self.sensitivity_ = plan.sensitivity
        self._m = plan.count.n  # the losses' normaliser: public (never the private m)
        self.noise_multiplier_ = plan.noise_multiplier
        self.warm_start_epsilon_ = plan.warm_start_epsilon
        self.n_iter_ = plan.n_iter  # gradient steps of every interactive answer
        self.history_ = {"queries": [], "explanations": [], "phase": [], "epsilon": [],
                         "n_iter": [], "private": [], "target": [], "std": []}

    def _row_labels(self, X, y, output, lower, upper):
        """The rows' labels (m, K), block by block of rows (in memory).

        Each block is filled (a missing value: the bounds' midpoint) and
        decoded for the black box, which runs on one block at a time: the
        memory is one block's, never a copy of X. A row the black box fails on
        gets the neutral labels (:func:`~skdpx.explain._outputs.private_row_labels`),
        a rule on that row alone, so the labels are those of one call on all
        rows.
        """
        from ..utils._chunks import row_slices

        kind, classes, output_bounds = output
        parts = []
        for rows in row_slices(X.shape[0], X.shape[1]):
            block = fill_nonfinite(X[rows], lower, upper)
            parts.append(private_row_labels(
                kind, classes, output_bounds, self.estimator,
                lambda idx, block=block: self.schema_.decode(block[idx]), len(block),
                None if y is None else y[rows]))
        return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=0)

    def _query_targets(self, X, target_class):
        """Per query (encoded input units): label column, offset, class explained.

        Only the queries (public) and the black box are read; the black box
        gets the queries within the bounds, as rows of the kind it was
        fitted on (``schema_.decode``). A released explainer holds no black
        box: its regression offsets are 0 (it never answers interactively)
        and a multiclass query needs ``target_class``.
        """
        if target_class is None:
            target_class = self.target_class
        classes = getattr(self, "classes_", None)
        if self._is_curator():
            estimator, rows = self.estimator, self.schema_.decode(X, *self.bounds_)
        else:
            estimator, rows = None, X
        return query_targets(self.output_, classes, self.output_bounds_, estimator, rows,
                             target_class)

    def _scaler(self):
        """The public map between input units and the unit cube of the bounds."""
        lower, upper = self.bounds_
        return BoundsScaler(lower, upper)

    # -------------------------------------------------------------- queries

    def explain(self, X, target_class=None):
        """Explain each row of X, spending from the budget as needed.

        The releases of the new interactive answers are committed to the
        ledger before the explanation dataset is read, and never refunded.
        The noise comes from a source made for this call (secure when
        ``random_state`` is None) and dropped at its end. A bad
        ``target_class`` raises before anything is spent or recorded.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
        target_class : label, array-like of shape (n_queries,) or None, default=None
            For a classifier, the class whose output is explained at each
            query (one label for all, or one per query); None: the
            ``target_class`` parameter, else the default (the positive
            class ``classes_[1]`` of a binary black box, the class the black
            box predicts at the query for more classes). Answers are reused
            only for the same class. Must be None for a regressor.

        Returns
        -------
        FeatureAttribution
            ``values``: per unit of each input feature, the change of the
            explained output (the probability of the class, the indicator
            that the black box predicts it, or the regression output);
            ``epsilon`` what each answer cost, ``phase`` "interactive",
            "reused" or "noninteractive"; ``meta["target_class"]`` the class
            explained at each query (a list; None for a regressor),
            ``meta["output"]`` the kind of output explained and
            ``meta["output_bounds"]`` its public range. ``std``: per value,
            the privacy noise's standard deviation, propagated along the
            answer's own released path (post-processing; strategy "basic";
            NaN where not known), ``meta["std"]`` says how; see
            :ref:`results` ("Telling signal from noise").
        """
        return self._explain(X, private=False, target_class=target_class)

    def _explain(self, X, *, private, target_class=None):
        """Answer the rows of X; ``private``: they are rows of the explanation dataset.

        Invalid input raises before anything is recorded. The query points
        of a private call are dropped from ``history_`` when the call ends,
        however it ends (unless ``store_fit_queries``).
        """
        check_is_fitted(self)
        refuse_distributed_queries(self, X)
        X = validate_table(self, X, reset=False)  # encoded
        X = fill_nonfinite(X, *self.bounds_)  # a missing value: the bounds' midpoint
        scaler = self._scaler()
        Z = scaler.transform(X)
        # the class explained at each query (and a regressor's output there):
        # validated before anything is recorded or spent
        columns, offsets, targets = self._query_targets(X, target_class)
        if self._is_curator() and self.estimator is not None:
            # the black box on the public probe points again: one that broke since the
            # fit (a model server down) spends nothing for these queries (issue 36)
            resolve_output(self.estimator, self.output_bounds, self.schema_.decode(
                self.schema_.probe(self.bounds, corners=True)))
        # one source per call, never kept: a seeded one is told apart by the
        # number of answers given before; closed (its key wiped) when the call ends
        with noise_source(self.random_state, stream=(len(self.history_["queries"]),)) as noise:
            start = len(self.history_["phase"])
            try:
                phi, phase, cost, std = answer(self, Z, columns, offsets, noise)
            finally:
                if private:
                    self._withhold(start)
        # from label units to the explained output's, then per input unit
        values = scaler.coef_to_input(phi * unit_scale(self.output_, self.output_bounds_))
        names = (list(self.schema_.feature_names_out)
                 if hasattr(self, "feature_names_in_") or self.schema_.encoder is not None
                 else None)
        std = scaler.coef_to_input(std * unit_scale(self.output_,
                                                                      self.output_bounds_))
        return FeatureAttribution(
            values, epsilon=cost, phase=phase, std=std, feature_names=names,
            # public: the declared (or DP) bounds, and the schema's columns
            feature_range=self.bounds_[1] - self.bounds_[0], groups=self.schema_.groups,
            epsilon_spent=self.epsilon_spent_, delta_spent=self.delta_spent_,
            meta={"estimator": type(self).__name__, "strategy": self.strategy,
                  "output": self.output_, "output_bounds": list(self.output_bounds_),
                  "target_class": targets.tolist(), "std": _STD_NOTE},
        )

    def transform(self, X):
        """The attributions of :meth:`explain` as an array (n_queries, n_features)."""
        return self.explain(X).values

    def fit_transform(self, X, y=None, **fit_params):
        """Fit on X, then explain the rows of X themselves (what a Pipeline calls).

        The guarantee takes the queries as public points; here they are the
        protected rows, and each answer is computed at one of them: a
        ``PrivacyLeakWarning`` says so. Explain public points with
        :meth:`transform` instead. ``history_`` records the answers with
        ``private=True`` and no query point (unless ``store_fit_queries``),
        so later queries never reuse them and :meth:`release` holds no row.

        Parameters
        ----------
        X : array-like of shape (m, n_features)
        y : array-like of shape (m,), optional
        **fit_params : dict
            Passed to :meth:`fit`.

        Returns
        -------
        ndarray of shape (m, n_features)
        """
        refuse_distributed_queries(self, X)  # before fit, which may spend on DP bounds
        warnings.warn(
            "fit_transform explains the rows of the explanation dataset themselves: the DP "
            "guarantee takes the queries as public points, and these are the protected rows. "
            "Fit on the explanation dataset and transform public points instead.",
            # 3: past scikit-learn's set_output wrapper, at the caller
            PrivacyLeakWarning, stacklevel=3,
        )
        return self.fit(X, y, **fit_params)._explain(X, private=True).values

    def _withhold(self, start):
        """Mark the answers from ``start`` on as private, and drop their query points."""
        withhold(self.history_, start, keep_queries=self.store_fit_queries)

    # ------------------------------------------------------------- curator

    def _is_curator(self):
        """Whether the explainer holds the private rows (fitted, not released)."""
        return hasattr(self, "_X")

    def release(self):
        """A copy holding only DP outputs: it answers from its history, for free.

        The copy keeps the history of answers (with no query point that
        was a row of the explanation dataset), the ledger that recorded
        their spends, the public calibration and schema. It holds no private
        row, no label of one, no black box (``estimator=None``: it never
        calls it) and no seed (``random_state=None``): it pickles with
        none of them. It spends nothing: a query within ``reuse_distance``
        of a past interactive one gets that answer ("reused"), any other
        the non-interactive answer, or ``BudgetError`` if
        ``on_budget_exhausted="raise"``. Its ``epsilon_remaining_`` is 0.
        Fitting it again makes it a curator of the new data.

        Returns
        -------
        DPLimeExplainer
        """
        check_is_fitted(self)
        params = self.get_params(deep=False)
        params.update(estimator=None, random_state=None)
        released = type(self)(**params)
        for name in _RELEASED_ATTRIBUTES:
            if hasattr(self, name):
                # the ledger is an identity: deepcopy returns the same one
                setattr(released, name, deepcopy(getattr(self, name)))
        hist = released.history_
        hist["queries"] = [None if private else q
                           for q, private in zip(hist["queries"], hist["private"])]
        return released

    def __getstate__(self):
        if is_distributed(getattr(self, "_X", None)):
            # refused, never computed: the rows live in the Dask cluster or the Spark
            # executors (persisted, tied to this client or session), and the graph of a
            # dask array may hold its source
            raise TypeError(
                f"a {type(self).__name__} fitted on Dask or Spark data holds its private rows "
                "persisted in the cluster: it cannot be pickled or deep-copied. Pickle "
                "release() (DP answers only), or fit again from the data."
            )
        state = super().__getstate__()
        if "_X" in state:
            warnings.warn(
                f"this pickle (or deep copy) of a fitted {type(self).__name__} holds the private "
                "explanation rows and their labels (and, with cells, their per-cell sums): keep "
                "it private. Pickle release() instead: "
                "it holds only the DP answers.",
                PrivacyLeakWarning, stacklevel=2,
            )
        return state

    def _interactive(self, with_std=False):
        """The past interactive queries, their answers and label columns (what reuse serves)."""
        return interactive(self.history_, getattr(self, "classes_", None), self.n_features_in_,
                           with_std=with_std)

    def _record(self, Z, phi, phase, epsilon, n_iter, columns, std=None):
        """Record answers in ``history_``; an interactive one that is not finite is refused."""
        if phase == "interactive" and not np.isfinite(phi).all():
            # never recorded as an answer, nor served again (issue 36)
            raise BlackBoxOutputError(
                "an interactive answer came out NaN or infinite and is not recorded; "
                + spent_after_commit(self, "for it when it was committed"))
        record(self.history_, getattr(self, "classes_", None), Z, phi, phase, epsilon, n_iter,
               columns, std)

    # ----------------------------------------------------- reading the rows
    # What the answering strategies (skdpx.explain._strategies) call to read the
    # private rows, each after committing the spend of what it computes; where
    # the rows are read (this process, joblib or Dask workers): _parallel.

    def _descent(self):
        """The public calibration of every noisy gradient descent (Algorithms 1 and 3)."""
        return {"noise_multiplier": self.noise_multiplier_, "sensitivity": self.sensitivity_,
                "radius": self.radius, "smoothness": _C / self.radius}

    def _has_cells(self):
        """Whether queries read per-cell sums (``approximation_="cells"``), never a row."""
        return getattr(self, "_cells", None) is not None

    def _weight_function(self):
        """The weight ``alpha`` of the local loss, as a picklable function (for the workers)."""
        if self.kernel_width is None:
            return partial(stable_weight, c=_C, radius=self.radius)
        return partial(kernel_weight, kernel_width=self.kernel_width, c=_C, radius=self.radius)

    def _forms(self, Z, columns, offsets=None):
        """The quadratic forms (H, g) of each query's local loss, grouped by explained class.

        At query z the labels are ``self._labels[:, column] - offset``, in
        [-1, 1] for every kind of output (see :mod:`skdpx.explain._outputs`):
        what the sensitivity needs. The only read of the private rows: every
        caller has committed the spend of the releases computed from them
        before. Rows held as dask arrays: one pass over the workers'
        partitions (:func:`~skdpx.explain._parallel.local_forms`).
        """
        if self._has_cells():  # per-cell sums: no row is read
            return self._cells.forms(Z, columns, offsets, weight=self._weight_function(),
                                     m=self._m)
        return local_forms(Z, columns, offsets, self._X, self._labels,
                           weight=self._weight_function(), m=self._m, prepare=self._rows)

    def _dpgd(self, Z, columns, noise, commitment, offsets=None):
        """Algorithm 1 for each query, vectorised over queries, paid by ``commitment``.

        With ``n_jobs`` and rows in memory, in parallel pieces, each with its
        own noise stream (:func:`~skdpx.explain._parallel.dpgd_pieces`).
        Returns the answers and their noise's standard deviations, propagated
        along each answer's released path
        (:func:`~skdpx.explain._dpgd.path_covariance_step`).
        """
        n_pieces = n_workers(self._X, len(Z), self.n_jobs)
        if n_pieces > 1 and not self._has_cells():
            return dpgd_pieces(Z, columns, offsets, self._X, self._labels,
                               weight=self._weight_function(), m=self._m, prepare=self._rows,
                               noise=noise, commitment=commitment, n_pieces=n_pieces,
                               n_jobs=self.n_jobs, n_iter=self.n_iter_, **self._descent())
        H, g = self._forms(Z, columns, offsets)
        return dpgd_explain(H, g, n_iter=self.n_iter_, noise=noise, commitment=commitment,
                            with_std=True, **self._descent())

    def _forms_in_blocks(self):
        """A context giving :meth:`_forms`, over parallel blocks of rows with ``n_jobs``."""
        return forms_in_blocks(self._X, self._labels, weight=self._weight_function(), m=self._m,
                               prepare=self._rows,
                               n_jobs=1 if self._has_cells() else self.n_jobs,
                               forms=self._forms)

    # ------------------------------------------------------------ reporting

    @property
    def epsilon_remaining_(self):
        check_is_fitted(self)
        if not self._is_curator():
            return 0.0  # released: it never spends
        # a shared ledger spent by earlier fits (or other estimators) caps it too
        return min(self.ledger_.own.epsilon_remaining, self.ledger_.shared.epsilon_remaining)

    @property
    def n_queries_(self):
        check_is_fitted(self)
        return len(self.history_["phase"])

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = self.estimator is None
        # CSR input (e.g. one-hot) is densified; the black box gets CSR rows back
        tags.input_tags.sparse = True
        # a missing or infinite value stands for the bounds' midpoint, in fit
        # and in queries; in a private row so does a cell that is not a number
        # (refusing would be a release about the row: doc/privacy.rst)
        tags.input_tags.allow_nan = True
        tags.input_tags.string = True
        return tags
