"""DP counterfactuals from class prototypes in an autoencoder's latent space (Yang et al. 2022)."""

from numbers import Integral, Real

import numpy as np
from scipy.linalg import hadamard
from scipy.special import log_softmax
from scipy.stats import qmc
from sklearn.base import TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .._sklearn_compat import HasMethods, Interval, StrOptions
from .._rules import RULE_PARAMETER_CONSTRAINTS
from ..base import ActionabilityMixin, BlackBoxMixin, DPCapabilities, DPEstimator, FitData
from ..results import CounterfactualSet
from ..privacy import (
    BUDGET_PARAMETER_CONSTRAINTS,
    RELATIONS,
    BoundsScaler,
    ComposedDpEvent,
    NonPrivateDpEvent,
    SpendPlan,
    calibrate_noise,
    fill_nonfinite,
    gaussian_event,
    gaussian_release,
    label_codes,
    laplace_event,
)
from ..utils._blackbox import map_rows
from ..utils._tables import validate_table
from ..privacy._targets import validate_classes
from ._functional import FunctionalAutoencoder, functional_sensitivity, n_coefficients
from ._mlp_autoencoder import MLPAutoencoder

__all__ = ["DPCounterfactualGenerator"]

#: share of epsilon for the autoencoder; the prototypes get the rest (and all of delta).
#: The prototypes are K + 1 sums over whole classes; the autoencoder has thousands of
#: parameters to learn from the same rows, and needs most of the budget: on Adult at
#: epsilon 0.025, a half share left the decoder unable to reach ">50K" in 1 seed of 4
#: (doc/changes/dpc.rst, "The budget split")
_AE_SHARE = 0.9
#: central finite-difference step in the latent space (codes live in (0, 1))
_FD_STEP = 0.02
#: the input-space search (after the latent one): finite-difference step in the
#: scaled space [-1, 1]^d, and rounds of line search along the gradient
_INPUT_FD_STEP = 0.05
_INPUT_ROUNDS = 5
#: the last stage: points per fixed direction, and black-box rows per call
_DIRECTION_STEPS = 10
_DIRECTION_ROWS = 50_000
#: n_counterfactuals > 1: the j-th latent search (j >= 1) starts this far (L2, in
#: the latent cube (0, 1)^K) from the first's start, along the j-th of the +-rows of a
#: Hadamard matrix (farther on each further cycle through them)
_RESTART_RADIUS = 0.3
#: the latent search's public starting points besides the prototype: the cube's
#: corners along the +-rows of a Hadamard matrix, and this many Sobol points
_SOBOL_PROBES = 32
#: weight (times beta) of the push away from a query's earlier finds
_DIVERSITY = 1.0
#: two candidates of one query closer than this (scaled units) are one counterfactual
_DISTINCT = 1e-6
#: the stages of the search, in order (``found_by``); the last two start from
#: the query in input space: their finds are perturbations of the query
STAGES = ("latent", "prototype segment", "score", "direction")
_PERTURBATIONS = ("score", "direction")
#: why a row has no counterfactual (``CounterfactualSet.reason``)
REASONS = {
    "none": "no point found in the desired class",
    "withheld": "only a perturbation of the query found (allow_perturbations=True returns it)",
    "fewer": "fewer distinct counterfactuals found than n_counterfactuals",
    "unverified": "the black box does not put the point in the desired class",
    "rules": "the point found breaks a declared rule",
}
#: without a black box: P(class) = softmax(-sharpness * mean squared latent
#: distance to the class prototypes)
_PROTOTYPE_SHARPNESS = 50.0


def prototype_sensitivity(latent_dim, relation):
    """L2 sensitivity of the per-class table of (sum of codes, count) under ``relation``.

    Codes lie in (0, 1)^K, so one row's (code, 1) has norm at most
    sqrt(K + 1). Add-or-remove: the row enters or leaves one class's row of
    the table, ``sqrt(K + 1)``. Replace-one: the row can leave one class's
    row and another join another class's row, ``sqrt(2 (K + 1))`` (within
    one class the move is at most ``sqrt(K)``). The codes are computed by the
    already released autoencoder, and the classes by the public black box
    (or ``y``), so they add nothing to the sensitivity.
    """
    if relation == "add_or_remove":
        return float(np.sqrt(latent_dim + 1.0))
    if relation == "replace_one":
        return float(np.sqrt(2.0 * (latent_dim + 1)))
    raise ValueError(f"relation must be one of {RELATIONS}, got {relation!r}.")


class DPCounterfactualGenerator(ActionabilityMixin, BlackBoxMixin, TransformerMixin, DPEstimator):
    """Counterfactuals searched from DP class prototypes, for any black box.

    The method of Yang et al., "Differentially Private Counterfactuals via
    Functional Mechanism" (2022), with its privacy gaps closed:

    1. an autoencoder is trained on the private rows (scaled into [-1, 1] by
       the public ``bounds``) with DP-SGD, or with the functional mechanism
       (:mod:`skdpx.counterfactual._functional`), with 90% of ``epsilon``;
    2. the class prototypes, the mean latent code of each class, are
       released with their own share (what the autoencoder left: the noise
       is calibrated so that both releases compose to exactly ``epsilon``,
       ``delta``): noisy per-class sums of the codes (which lie in (0, 1)^K)
       and noisy counts, by one Gaussian mechanism. The paper takes plain
       means after training, which reads the private rows again
       unprotected;
    3. for a query q and a desired class s, the search minimises
       ``alpha CE(f(dec(rho_s + delta)), s) + beta ||dec(rho_s + delta) - q||
       + gamma ||delta||`` over the latent perturbation delta. It starts
       from ``rho_s`` or, where the decoded prototype is not in class s or
       a public latent probe (a corner of the latent cube along a Hadamard
       row, or a Sobol point) decodes into class s closer to the query,
       from the closest such probe (none in class s: the best-scoring of
       them and the prototype). The black box's smooth signal (``predict_proba``, else
       ``decision_function``; a predict-only black box is steered by the
       DP prototypes' own surrogate) enters through the cross-entropy,
       whose gradient is estimated by central finite differences in the
       K-dimensional latent space (2K black-box rows per query and step,
       one batched call for all queries); the other terms have exact
       gradients through the decoder. Each step's point, made to keep the
       constraints relative to the query, is checked with the black box's
       ``predict``, and the closest point in class s is kept;
    4. the search continues in input space: on the segment from the query
       to that point (or, where the latent search found none, through the
       decoded prototype of class s, ``line_reach`` times as far), the
       closest of ``line_steps`` points that the black box puts in class s,
       all checked in one call; where that fails too, a line search along
       the black box's own gradient from the query (a DP decoder trained on
       a few hundred rows may decode every code into one class), then, for
       scores that lead nowhere (a predict-only black box), lines along
       fixed directions (the feature axes and the rows of a Hadamard
       matrix); each found point is then brought as close to the query as
       its segment allows. The gradient and direction stages start from
       the query and use no DP output: their finds are perturbations of the
       query, returned only with ``allow_perturbations=True``. What still
       fails (or is withheld) is a row of NaN with ``valid=False`` and a
       ``reason``: no returned point fails to flip the black box. Each
       record says which stage found it (``found_by``) and how far it went
       from the query toward the desired class's decoded DP prototype
       (``plausibility``, :meth:`explain`).

    Steps 3 and 4 are post-processing of the DP autoencoder and prototypes
    (and of the public black box, bounds and query): they cost no budget.
    Every candidate keeps ``immutable_features`` at the query's value,
    ``increasing_features`` at or above it and ``decreasing_features`` at
    or below it, within the public bounds, before the black box sees it.

    Privacy unit: one training row, under the neighbouring relation of the
    ledger (``accountant``; add-or-remove-one by default). The whole spend of
    the fit (autoencoder and prototypes) is planned and committed to the
    ledger as one event before the private rows are read, and never
    refunded. Sensitivities:

    ============================  ===================  ====================
    release                       add-or-remove        replace-one
    ============================  ===================  ====================
    prototypes (L2, Gaussian)     ``sqrt(K + 1)``      ``sqrt(2 (K + 1))``
    functional mechanism (L1)     ``(d^2 + 3d) / 2``   ``d^2 + 2d``
    DP-SGD step (L2, clipped)     ``max_grad_norm``    not supported
    ============================  ===================  ====================

    The DP-SGD autoencoder is Poisson-subsampled, which is accounted for
    add-or-remove neighbours only: under a ``relation="replace_one"``
    ledger, ``ae_method="dpsgd"`` raises ``ValueError`` before anything is
    spent; ``ae_method="functional"`` is calibrated under either. The number
    of training rows is public (it normalises the functional mechanism's
    sums and sets DP-SGD's sampling rate), as the privacy core treats it.
    Classes are the black
    box's predictions on the training rows when ``estimator`` is given (the
    prototypes are then where the model predicts each class, which is what
    the search needs), else ``y``.

    No value of a training row is refused (a refusal would be a release
    about that row): a missing or infinite value, or a cell that is not a
    number, is the midpoint of its feature's bounds; a row whose label is
    missing or not one of ``classes``, or on which the black box raises or
    returns a label outside its ``classes_``, enters no class prototype
    (its features still train the autoencoder, which reads no label).
    Nothing reports which rows or how many (:ref:`privacy-refusals`). The
    black box is checked before anything is spent on public probe points
    made from the declared bounds and categories (their middle and two
    corners): one that fails there, or whose labels (not one of
    ``classes_``) or scores (``predict_proba`` / ``decision_function``:
    misshapen, not numbers, NaN or infinite) cannot be used, is refused, as
    is a ``desired_class`` that is not one of ``classes_``. After the
    commit, such an output on a public row (a query, a point of the search)
    raises a ``BlackBoxOutputError`` saying that the budget was spent; it
    is never an answer.

    Parameters
    ----------
    estimator : fitted classifier, or None
        The black box to explain, already fitted: anything with ``predict``
        and ``classes_``. Its ``predict_proba`` (else the margins of its
        ``decision_function``: binary ``(n,)``, or ``(n, n_classes)``)
        steers the search; with ``predict`` only, the DP prototypes' latent
        distances do, and the black box verifies. Fitted on a DataFrame,
        this estimator passes it DataFrames with the same columns.
        ``None``: the DP
        prototypes themselves classify (nearest prototype in the latent
        space, probabilities by a softmax of minus the squared distances),
        which costs nothing more.
    epsilon : float, default=1.0
        Total budget: autoencoder and prototypes.
    delta : float, default=1e-5
        For the prototypes' Gaussian mechanism.
    latent_dim : int, default=16
        K, the number of sigmoid units.
    ae_method : {"dpsgd", "functional"}, default="dpsgd"
        How the autoencoder is trained: "dpsgd", a network with
        ``hidden_layer_sizes`` by DP-SGD (90% of ``epsilon`` and half of
        ``delta``); "functional", the paper's one sigmoid layer by the
        functional mechanism (pure epsilon-DP, 90% of ``epsilon``). DP-SGD
        is the default because it scales with the number of features: the
        functional mechanism's sensitivity grows like d^2, and on MNIST
        (d = 784) at epsilon 0.75 its latent space let the search find 5
        counterfactuals of 100 (the input-space stages found the rest),
        where DP-SGD's found all 100; on Adult (d = 104) both found every
        one in the saved runs (the DPC benchmarks page).
    hidden_layer_sizes : tuple of int, default=(32,)
        The encoder's tanh layers before the latent one (the decoder mirrors
        them); used by ``ae_method="dpsgd"``.
    alpha, beta, gamma : float, default=1.0, 0.5, 0.1
        Weights of the search's prediction, distance and prototype terms
        (the paper's values for tabular data).
    max_iter : int, default=100
        Search steps.
    learning_rate : float, default=0.05
        Step size of the search (Adam, in the latent space).
    init_blend : float in [0, 1], default=0.0
        Where the search starts: ``(1 - init_blend) o + init_blend
        enc(q)``, with ``o`` the prototype ``rho_s`` or the public latent
        probe chosen for the query (step 3); 0 starts at ``o``.
    desired_class : "opposite" or a class label, default="opposite"
        "opposite": the class the black box does not predict for the query
        (multi-class: the most probable of the others, the paper's
        unspecified scenario).
    immutable_features, increasing_features, decreasing_features : list of int or str, optional
        Features (indices, or column names of a DataFrame fit) that every
        counterfactual keeps equal to the query's value, at or above it,
        at or below it. A feature in two lists, an unknown name or an index
        out of range is refused before anything is spent. A categorical
        column may be increasing or decreasing when its levels are ordered:
        an ordered pandas ``CategoricalDtype`` on the fitted column, else
        the order of its levels in ``categories`` (an unordered pandas
        categorical is refused); its level then only goes up (down) from
        the query's.
    linked_features : list of (str, str, dict), optional
        ``[(categorical column, numeric column, {level: number}), ...]``:
        the numeric column follows the level (``("education",
        "education-num", {"Bachelors": 13, ...})``). A counterfactual that
        keeps the query's level keeps the query's number; one that changes
        it gets the level's number; the number never moves alone. Every
        declared level needs a number within the numeric column's bounds,
        and the numbers must not go down along a declared order.
    feasibility : callable, optional
        ``feasibility(records) -> boolean mask``: ``records`` is a DataFrame
        of candidates in the fitted columns, original units and categories
        (columns ``x0, x1, ...`` for an array fit), the mask True where a
        record is feasible, e.g. ``lambda df: ~((df["sex"] == "Female") &
        (df["relationship"] == "Husband"))``. Called on whole batches of
        candidates; an infeasible one is never returned (the search goes on
        to the next). Checked at fit on public probe records.
    features_to_vary : "all" or list of str or int, default="all"
        DiCE's name: the columns a counterfactual may change; every other
        column keeps the query's value.
    permitted_range : dict, optional
        DiCE's name: ``{numeric column: (lower, upper)}`` or ``{categorical
        column: [level, ...]}``, the values a counterfactual may take on that
        column, independent of the query; or, relative to each query,
        ``{column: {"change": (down, up)}}`` (``down <= 0 <= up``): a numeric
        value within ``[q + down, q + up]`` of the query's ``q`` (e.g. hours
        up by at most 10), an ordered categorical level within ``down`` to
        ``up`` steps of the query's along its declared order;
        ``{"range": ..., "change": ...}`` gives both.
    costs : dict, optional
        ``{column: weight >= 0}``: the cost of changing a column per unit of
        its scaled range (default 1; a categorical column: of a change of
        level), weighting the distance that chooses the closest
        counterfactual. The rules are public: applying them to candidates
        built from the DP prototypes and the queries is post-processing.
    line_steps : int, default=20
        Points per segment of the input-space search after the latent one
        (0: none; the latent search's result is then returned as is, NaN
        where it found nothing).
    line_reach : float >= 1, default=2.0
        Where the latent search found nothing, the segment from the query
        through the decoded prototype goes this many times as far (clipped
        to the bounds).
    n_counterfactuals : int, default=1
        Counterfactuals per query, as DiCE's ``total_CFs``: the latent
        search runs this many times per query (the first from its start,
        step 3, the others from points spread around it, each pushed
        away from the query's earlier finds by a term ``-beta ||x - c||``
        of its loss, ``c`` the nearest earlier find), and the
        distinct finds are returned, the closest first
        (``n_queries * n_counterfactuals`` rows, :meth:`explain`). The
        later stages, for queries the latent search found nothing for,
        give one each.
    allow_perturbations : bool, default=False
        Return what the input-space stages that start from the query (the
        black box's score gradient, fixed directions) find: small
        perturbations of the query that cross the black box's boundary, not
        points built from the DP prototypes (on Adult at epsilon 0.025 they
        lay 0.2 from the query where the latent search's lay 1.1 to 1.3).
        False: such a query gets a NaN row, ``valid=False``, whose
        ``reason`` says a perturbation was withheld.
    bounds : tuple (lower, upper), dict or None
        Public bounds of the features (scalars or arrays), or a dict
        ``{column: (lower, upper)}`` for the numeric columns of a
        DataFrame; data are clipped to them. A numeric column left out of
        the dict has its bounds estimated with DP, as with ``None``.
        ``None`` estimates them with a DP histogram charged inside this
        estimator's epsilon (:class:`~skdpx.privacy.FitBounds`: a quarter of
        it, coarse on small data; never the raw minimum and maximum), with a
        ``PrivacyLeakWarning`` that declared bounds are better. Bounds with
        lower == upper for every feature are refused.
    classes : array-like or None, default=None
        The public label set. ``None`` reads it from ``y`` with a
        ``PrivacyLeakWarning``: the labels present are then a release about
        the rows (assumed public, not declared). A row whose label is not
        in the declared set enters no prototype, never refused.
        With a black box (``estimator``), its ``classes_`` must match them.
    categories : dict or None, default=None
        ``{column: [level, ...]}``: the public levels of each categorical
        column of a DataFrame, one-hot encoded internally
        (:class:`~skdpx.preprocessing.PublicSchemaEncoder`); never read from
        the data. Every candidate is made a valid record (one declared
        level per categorical column, integer columns integers, within the
        bounds) before the black box checks it, and the black box receives
        rows of the kind this estimator was fitted on.
    accountant : PrivacyLedger, BudgetAccountant or None
        Where the spend is recorded too; its ``relation`` is the
        neighbouring relation the fit is calibrated under.
    random_state : None, int or numpy generator (``Generator`` or legacy random state)
        None (default): cryptographically secure noise (the prototypes and
        the functional mechanism's coefficients through OpenDP's exact
        samplers), nothing kept that could replay it. A seed makes the fit
        reproducible, with a PrivacyLeakWarning: anyone who knows it can
        remove the noise.

    Attributes
    ----------
    autoencoder_ : FunctionalAutoencoder
    prototypes_ : ndarray of shape (n_classes, latent_dim)
        The DP prototypes, in (0, 1)^K.
    prototype_counts_ : ndarray of shape (n_classes,)
        The noisy class counts released with them.
    prototype_noise_multiplier_ : float
        Their Gaussian noise over their sensitivity (``sqrt(K + 1)`` for
        add-or-remove, ``sqrt(2 (K + 1))`` for replace-one).
    classes_ : ndarray
    n_iter_ : int
        Search steps per query (``max_iter``).
    immutable_features_, increasing_features_, decreasing_features_ : ndarray of int
        The constrained features' encoded indices (numeric columns; the
        immutable set also holds held categorical blocks and the columns
        outside ``features_to_vary``).
    rules_ : skdpx._rules.Rules
        The resolved rules (ordered levels, links, feasibility, ranges,
        costs), public.
    epsilon_spent_, delta_spent_ : float
    ledger_ : EstimatorLedger
        The fit's spend (one event: the autoencoder and the prototypes).
    n_features_in_ : int
    bounds_ : tuple of ndarray

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skdpx.counterfactual import DPCounterfactualGenerator
    >>> from scipy.stats import uniform
    >>> X = uniform.rvs(size=(3000, 4), random_state=0)  # rows in [0, 1]^4
    >>> y = (X[:, 0] + X[:, 1] > 1).astype(int)
    >>> model = LogisticRegression().fit(X, y)
    >>> dpc = DPCounterfactualGenerator(model, epsilon=1.0, latent_dim=3, bounds=(0, 1),
    ...                                 random_state=0).fit(X)
    >>> result = dpc.explain(X[:20])
    >>> float(result.valid.mean()) >= 0.9
    True
    >>> round(dpc.epsilon_spent_, 3)  # DP-SGD at (0.9, 5e-6), the prototypes get the rest
    1.0
    """

    #: a private search scores it with DPCounterfactualScore by default
    _dp_capabilities = DPCapabilities(default_scoring="counterfactual")

    #: the black box is asked about public rows only (BlackBoxMixin)
    _black_box_rows = "public rows (queries or points of the counterfactual search)"

    _parameter_constraints = {
        **BUDGET_PARAMETER_CONSTRAINTS,
        "classes": ["array-like", None],
        "categories": [dict, None],
        "estimator": [HasMethods(["predict"]), None],
        "latent_dim": [Interval(Integral, 1, None, closed="left")],
        "ae_method": [StrOptions({"functional", "dpsgd"})],
        "hidden_layer_sizes": ["array-like"],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "beta": [Interval(Real, 0, None, closed="left")],
        "gamma": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "init_blend": [Interval(Real, 0, 1, closed="both")],
        "desired_class": ["array-like", Real, str],
        "immutable_features": ["array-like", None],
        "increasing_features": ["array-like", None],
        "decreasing_features": ["array-like", None],
        **RULE_PARAMETER_CONSTRAINTS,
        "line_steps": [Interval(Integral, 0, None, closed="left")],
        "line_reach": [Interval(Real, 1, None, closed="left")],
        "n_counterfactuals": [Interval(Integral, 1, None, closed="left")],
        "allow_perturbations": ["boolean"],
    }

    def __init__(
        self,
        estimator=None,
        *,
        epsilon=1.0,
        delta=1e-5,
        latent_dim=16,
        ae_method="dpsgd",
        hidden_layer_sizes=(32,),
        alpha=1.0,
        beta=0.5,
        gamma=0.1,
        max_iter=100,
        learning_rate=0.05,
        init_blend=0.0,
        desired_class="opposite",
        immutable_features=None,
        increasing_features=None,
        decreasing_features=None,
        linked_features=None,
        feasibility=None,
        features_to_vary="all",
        permitted_range=None,
        costs=None,
        line_steps=20,
        line_reach=2.0,
        n_counterfactuals=1,
        allow_perturbations=False,
        bounds=None,
        classes=None,
        categories=None,
        accountant=None,
        random_state=None,
    ):
        self.estimator = estimator
        self.epsilon = epsilon
        self.delta = delta
        self.latent_dim = latent_dim
        self.ae_method = ae_method
        self.hidden_layer_sizes = hidden_layer_sizes
        self.alpha = alpha
        self.beta = beta
        self.gamma = gamma
        self.max_iter = max_iter
        self.learning_rate = learning_rate
        self.init_blend = init_blend
        self.desired_class = desired_class
        self.immutable_features = immutable_features
        self.increasing_features = increasing_features
        self.decreasing_features = decreasing_features
        self.linked_features = linked_features
        self.feasibility = feasibility
        self.features_to_vary = features_to_vary
        self.permitted_range = permitted_range
        self.costs = costs
        self.line_steps = line_steps
        self.line_reach = line_reach
        self.n_counterfactuals = n_counterfactuals
        self.allow_perturbations = allow_perturbations
        self.bounds = bounds
        self.classes = classes
        self.categories = categories
        self.accountant = accountant
        self.random_state = random_state

    def fit(self, X, y=None):
        """Train the DP autoencoder and release the DP class prototypes.

        The spend of both releases is planned from public facts (n, d, the
        parameters, the bounds), checked against this object's cap and the
        shared ledger's, and committed as one event before the private rows
        are read: nothing refunds it, even if the fit is interrupted.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The private training rows.
        y : array-like of shape (n_samples,), optional
            The classes when ``estimator`` is None (ignored otherwise: the
            black box's predictions are the classes; its values are never
            read, and a ``y`` of another length than ``X`` is refused
            before anything is spent). The set of class
            labels is then read from ``y``, as scikit-learn's classifiers
            (and the DP libraries') do; it is not noised (with a black box,
            its public ``classes_`` are used).

        Returns
        -------
        self
        """
        return super().fit(X, y)

    def _validate_fit(self, X, y):
        # the rows in the encoded space of the public schema (one-hot
        # categories with their declared levels); classes: declared, the
        # black box's, or y's
        # codes: each row's class index, -1 for a label that is not a class (the
        # row then enters no prototype); None with a black box (it labels the rows)
        X, codes = validate_classes(self, X, y, needs="counterfactuals need")
        # a public parameter against the public classes_: refused before the spend
        self._check_desired(self.desired_class)
        self._require_delta("the prototypes' release")
        if self.ae_method == "functional" and self.latent_dim > X.shape[1]:
            raise ValueError(f"latent_dim ({self.latent_dim}) must be at most n_features "
                             f"({X.shape[1]}).")
        hidden = tuple(int(h) for h in np.atleast_1d(self.hidden_layer_sizes))
        if not all(h >= 1 for h in hidden):
            raise ValueError(f"hidden_layer_sizes must be positive, got {hidden}.")
        constraints, rules = self._resolve_rules()
        return FitData(X, codes, self.classes_,
                       extra={"hidden": hidden, "constraints": constraints, "rules": rules})

    def _plan_spend(self, data, relation, bounds, count):
        """The whole fit: the autoencoder's release, then the prototypes'.

        The autoencoder gets ``_AE_SHARE`` of epsilon (and half of delta
        for DP-SGD; its sampling rate and steps from the DP row count
        ``count.n``); the prototypes' Gaussian noise is calibrated with the
        count, the bounds and the planned autoencoder event as ``prior``, so
        that they all compose to exactly (``epsilon``, ``delta``) whichever
        plan the count selects (:class:`~skdpx.privacy.FitCount`).
        """
        X = data.X
        d = X.shape[1]
        n_classes = len(self.classes_)
        functional = self.ae_method == "functional"
        ae_epsilon = self.epsilon * (1 - bounds.share) * _AE_SHARE
        plan = {"relation": relation}
        if functional:
            plan["ae_noise_multiplier"] = 0.0 if np.isinf(self.epsilon) else 1.0 / ae_epsilon
            plan["ae_sensitivity"] = functional_sensitivity(d, relation)
            ae_event = laplace_event(plan["ae_noise_multiplier"])
            ae_label = f"functional mechanism: autoencoder coefficients ({n_coefficients(d)})"
        else:
            plan["engine"] = MLPAutoencoder.engine(count.n, ae_epsilon, self.delta / 2, relation)
            ae_event = plan["engine"].planned_event()
            ae_label = f"DP-SGD autoencoder ({plan['engine'].max_steps} steps)"
        proto_label = f"class prototypes: per-class sums of codes and counts ({n_classes})"
        if np.isinf(self.epsilon):  # the non-private baseline: say so in the ledger
            return SpendPlan(NonPrivateDpEvent(), "non-private fit (epsilon=inf)",
                             prototype_noise_multiplier=0.0, **plan)
        z = calibrate_noise(self.epsilon, self.delta, prior=count.prior(bounds.event, ae_event))
        return SpendPlan(ComposedDpEvent([ae_event, gaussian_event(z)]),
                         f"{ae_label} + {proto_label}", prototype_noise_multiplier=z, **plan)

    def _private_fit(self, data, plan, commitment, noise):
        X, codes = data.X, data.y
        hidden, constraints = data.extra["hidden"], data.extra["constraints"]
        self.immutable_features_, self.increasing_features_, self.decreasing_features_ = constraints
        self.rules_ = data.extra["rules"]
        self.bounds_ = plan.bounds.release(X, noise=noise, commitment=commitment)
        # a missing or infinite value: the bounds' midpoint (a rule on its cell alone)
        X = fill_nonfinite(X, *self.bounds_)
        X11 = self._scaler().transform(X)
        # the classes of the rows: they enter the releases only through the
        # prototypes' table (whose sensitivity covers any class of a row). A row
        # whose label is not a class, or on which the black box fails (raises,
        # or gives a label outside classes_), has the code -1: it enters no
        # prototype (its features still train the autoencoder, which reads no label)
        labels = self._row_classes(X) if codes is None else codes
        if self.ae_method == "functional":
            self.autoencoder_ = FunctionalAutoencoder.fit(
                X11, self.latent_dim, noise_multiplier=plan.ae_noise_multiplier,
                sensitivity=plan.ae_sensitivity, noise=noise, commitment=commitment,
                n_rows=plan.count.n,
            )
        else:
            self.autoencoder_ = MLPAutoencoder.fit(X11, self.latent_dim, hidden,
                                                   engine=plan.engine, noise=noise,
                                                   commitment=commitment)
        # the codes are post-processing of the released autoencoder
        table = self._noisy_table(self.autoencoder_.encode(X11), labels,
                                  noise_multiplier=plan.prototype_noise_multiplier,
                                  relation=plan.relation, noise=noise, commitment=commitment)
        K = self.latent_dim
        counts = table[:, -1]
        self.prototype_noise_multiplier_ = plan.prototype_noise_multiplier
        self.prototype_counts_ = counts
        self.prototypes_ = np.clip(table[:, :K] / np.maximum(counts, 1.0)[:, None], 0.0, 1.0)
        self.n_iter_ = self.max_iter  # search steps per query (the search runs in explain)

    def _row_classes(self, X):
        """The black box's class of each private row (encoded), -1 where it gives none.

        One call on all rows; a row on which the black box raises, or whose
        label is not one of ``classes_``, gets -1 (found by bisection over
        chunks, :func:`~skdpx.utils._blackbox.map_rows`): a rule on that row
        alone, never refused and never counted.
        """
        return map_rows(
            lambda idx: label_codes(self.classes_, np.asarray(
                self.estimator.predict(self._decode(X[idx]))).reshape(-1)),
            len(X), fill=np.intp(-1))

    def _noisy_table(self, codes, labels, *, noise_multiplier, relation, noise, commitment):
        """Noisy per-class (sum of codes, count): one Gaussian release, paid by ``commitment``.

        The noise is ``noise_multiplier`` times :func:`prototype_sensitivity`
        under ``relation``. A row of label -1 (no class) enters no class's
        row of the table.
        """
        n_classes, K = len(self.classes_), codes.shape[1]
        table = np.zeros((n_classes, K + 1))
        used = labels >= 0
        np.add.at(table, labels[used], np.hstack([codes[used], np.ones((int(used.sum()), 1))]))
        return gaussian_release(table, noise_multiplier=noise_multiplier,
                                sensitivity=prototype_sensitivity(K, relation), noise=noise,
                                commitment=commitment)

    # ------------------------------------------------------------ the black box

    def _signal(self):
        """Which output of the black box steers the search."""
        if self.estimator is None:
            return "prototypes"
        for method in ("predict_proba", "decision_function"):
            if hasattr(self.estimator, method):
                return method
        return "prototypes"

    def _scores(self, Z):
        """Log class scores, shape (n, n_classes), of rows ``Z`` in input units.

        The search's smooth signal: the black box's log-probabilities
        (``predict_proba``); else the log-softmax of its margins
        (``decision_function``: ``(0, margin)`` for two classes, one column
        per class otherwise); else (``predict`` only, or no black box) the
        DP prototypes' surrogate, the log-softmax of minus the squared
        latent distances to them (post-processing of the DP release).
        """
        signal = self._signal()
        if signal == "predict_proba":
            proba = self._call_black_box(self.estimator, "predict_proba", Z,
                                         "columns").astype(float)
            return np.log(np.clip(proba, 1e-12, 1.0))
        if signal == "decision_function":
            # (n,) for two classes or (n, n_classes) (one-vs-rest margins, e.g.
            # SVC(decision_function_shape='ovr')); anything else raises
            margins = self._call_black_box(self.estimator, "decision_function", Z,
                                         "margins").astype(float)
            k = len(self.classes_)
            if margins.ndim == 1 and k == 2:
                margins = np.column_stack([np.zeros_like(margins), margins])
            return log_softmax(margins, axis=1)
        codes = self.autoencoder_.encode(self._scaler().transform(Z))
        sq = ((codes[:, None, :] - self.prototypes_[None]) ** 2).sum(axis=2)
        return log_softmax(-_PROTOTYPE_SHARPNESS * sq / self.latent_dim, axis=1)

    def _predict(self, Z):
        """The black box's labels for rows ``Z`` in input units: what verifies a counterfactual.

        Without a black box, the nearest DP prototype's class.
        """
        if self.estimator is None:
            return self.classes_[np.argmax(self._scores(Z), axis=1)]
        return self._call_black_box(self.estimator, "predict", Z, "labels")

    def _scaler(self):
        """The public map between input units and the autoencoder's [-1, 1]^d."""
        lower, upper = self.bounds_
        return BoundsScaler(lower, upper, feature_range=(-1.0, 1.0))

    def _check_desired(self, desired):
        """``desired`` is "opposite" or class labels of ``classes_``, or ValueError."""
        self._check_wanted_class(desired, "desired_class", opposite=True, per_query=True)

    def _targets(self, X, desired_class):
        """Index (into classes_) of the desired class of each query."""
        desired = self.desired_class if desired_class is None else desired_class
        self._check_desired(desired)
        if isinstance(desired, str) and desired == "opposite":
            scores = self._scores(X)
            label = self._predict(X)
            own = np.clip(np.searchsorted(self.classes_, label), 0, len(self.classes_) - 1)
            own = np.where(self.classes_[own] == label, own, np.argmax(scores, axis=1))
            scores[np.arange(len(X)), own] = -np.inf
            return np.argmax(scores, axis=1)  # the other class (multi-class: the runner-up)
        desired = np.broadcast_to(np.asarray(desired), (len(X),))
        index = np.searchsorted(self.classes_, desired)
        index = np.clip(index, 0, len(self.classes_) - 1)
        if not np.all(self.classes_[index] == desired):
            raise ValueError(f"desired_class must be one of {self.classes_.tolist()}.")
        return index

    # ------------------------------------------------------------ constraints

    def _constrain(self, Z, Q, lower, upper):
        """``Z`` within ``[lower, upper]`` and the constraints relative to the queries ``Q``.

        Row i of Q is the query of row i of Z (in the same units). Immutable
        features take the query's value, increasing ones at least it,
        decreasing ones at most it. Returns a new array.
        """
        Z = np.clip(Z, lower, upper)
        Z[:, self.immutable_features_] = Q[:, self.immutable_features_]
        inc, dec = self.increasing_features_, self.decreasing_features_
        Z[:, inc] = np.maximum(Z[:, inc], Q[:, inc])
        Z[:, dec] = np.minimum(Z[:, dec], Q[:, dec])
        return Z

    def _project(self, Z, Q):
        """Candidates in input units made what the black box verifies and the user gets.

        The constraints relative to the queries ``Q`` (within the public
        bounds), then the records' validity: one call, the same point is
        verified and returned.
        """
        lower, upper = self.bounds_
        Z = self.schema_.project(self._constrain(Z, Q, lower, upper), lower, upper)
        return self._follow_rules(Z, Q)  # the declared rules (skdpx._rules)

    # ------------------------------------------------------------ search

    def explain(self, X, desired_class=None):
        """Verified counterfactuals of the rows of X: ``n_counterfactuals`` rows per query.

        The search runs in stages (``found_by``), each only for the queries
        the earlier ones found nothing for:

        - "latent": the latent search from the desired class's DP prototype,
          or from the public latent probe that the black box puts in the
          desired class closest to the query (``n_counterfactuals``
          searches per query, the first from there, the others from points
          around it) keeps the closest
          point the black box puts in the desired class; each is then
          brought as close to the query as the segment between them allows;
        - "prototype segment": the closest such point on the segment from
          the query through the desired class's decoded DP prototype, up to
          ``line_reach`` times as far;
        - "score": a line search along the black box's own score gradient
          from the query;
        - "direction": lines from the query along fixed directions.

        The last two start from the query and use no DP output: what they
        find is a perturbation of the query (on Adult at epsilon 0.025,
        0.2 from it where the latent search's finds are 1.1 to 1.3), not a
        point built from the DP prototypes. It is returned only with
        ``allow_perturbations=True``; otherwise the query gets a NaN row
        whose ``reason`` says that a perturbation was withheld. Every
        candidate respects the constraints relative to its query, the
        public bounds and the schema (a valid record) before the black box
        sees it. All of it is post-processing of the DP release (and of the
        public black box, bounds and queries): free.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
        desired_class : "opposite" or a class label or array of labels, optional
            Overrides the constructor's ``desired_class``.

        Returns
        -------
        CounterfactualSet
            ``n_queries * n_counterfactuals`` rows, query by query (the
            rows of query i are ``i * n_counterfactuals`` to ``(i + 1) *
            n_counterfactuals - 1``, ``query_index`` says which query), the
            closest counterfactual first; one row per query by default.
            ``valid`` is re-checked with the black box (its ``predict``):
            True where it predicts the desired class for the
            counterfactual. Where there is no counterfactual the row is
            NaN, ``valid`` is False, ``found_by`` None, ``predicted_class``
            the black box's class for the query itself (no returned point
            fails to flip) and ``reason`` one of "no point found in the
            desired class", "only a perturbation of the query found
            (allow_perturbations=True returns it)" or "fewer distinct
            counterfactuals found than n_counterfactuals".

            ``plausibility`` is ``1 - ||c - p|| / ||q - p||``, in the
            autoencoder's scaled space [-1, 1]^d (the units of the bounds,
            each feature's range mapped to length 2), with ``c`` the
            counterfactual, ``q`` its query and ``p`` the desired class's
            decoded DP prototype (the DP release's typical member of that
            class, computed from DP outputs only): the share of the way from
            the query to the class's typical member that the counterfactual
            covers. 1: at the prototype; near 0: no nearer to it than the
            query (a perturbation that only crosses the black box's
            boundary); negative: farther. Immutable features keep it below
            1. NaN where there is no counterfactual.

            ``meta["found_by"]`` counts the returned counterfactuals each
            stage found; ``meta["flip_ratio"]`` is, per stage, the share of
            the queries whose counterfactual that stage found (withheld
            perturbations included), and under "returned" the share of
            queries with at least one returned counterfactual;
            ``meta["withheld"]`` counts the queries whose perturbation was
            withheld.
        """
        check_is_fitted(self)
        X = validate_table(self, X, reset=False)
        lower, upper = self.bounds_
        X = fill_nonfinite(X, lower, upper)  # a missing value: the bounds' midpoint
        Xc = np.clip(X, lower, upper)
        target = self._targets(Xc, desired_class)
        n, d, k = len(Xc), Xc.shape[1], int(self.n_counterfactuals)
        cf, stage = self._search_stages(Xc, target)  # (n, k, d), (n, k) stage index or -1
        # each stage's flip ratio: the stage of each query's best, before any is withheld
        first = stage[:, 0]
        flip = {name: float(np.mean(first == i)) if n else 0.0 for i, name in enumerate(STAGES)}
        perturbation = np.isin(stage, [STAGES.index(s) for s in _PERTURBATIONS])
        withheld = perturbation.any(axis=1) & (not self.allow_perturbations)
        if not self.allow_perturbations:
            cf[perturbation] = np.nan
            stage[perturbation] = -1
        # the final check: where none was found, the prediction is the query's
        Q = np.repeat(Xc, k, axis=0)
        cf, stage = cf.reshape(n * k, d), stage.reshape(n * k)
        found = ~np.isnan(cf).any(axis=1)
        predicted = self._predict(np.where(found[:, None], cf, Q))
        # the final check: the desired class, and every declared rule held against
        # its query (a record that breaks one is not returned)
        admissible = self.rules_.admissible(cf, Q, self.bounds_)
        valid = found & (predicted == np.repeat(self.classes_[target], k)) & admissible
        any_found = np.repeat(found.reshape(n, k).any(axis=1), k)
        reason = np.where(valid, None, np.where(
            found & ~admissible, REASONS["rules"], np.where(
                found, REASONS["unverified"], np.where(
                    any_found, REASONS["fewer"],
                    np.where(np.repeat(withheld, k), REASONS["withheld"], REASONS["none"])))))
        cf[~valid] = np.nan
        stage[~valid] = -1
        plausibility = self._plausibility(cf, Q, np.repeat(target, k))
        schema = self.schema_
        records = {}
        if schema.kind == "frame" or schema.encoder is not None:
            names = list(schema.feature_names_out)
            records = {"query_records": self._decode(Q),
                       "counterfactual_records": self._records(cf)}
        else:
            names = None
        flip["returned"] = float(valid.reshape(n, k).any(axis=1).mean()) if n else 0.0
        return CounterfactualSet(
            np.repeat(X, k, axis=0), cf, desired_class=np.repeat(self.classes_[target], k),
            predicted_class=predicted, valid=valid,
            found_by=[STAGES[i] if i >= 0 else None for i in stage],
            plausibility=plausibility, reason=reason.tolist(),
            query_index=np.repeat(np.arange(n), k), feature_names=names, **records,
            epsilon_spent=self.epsilon_spent_, delta_spent=self.delta_spent_,
            meta={"estimator": type(self).__name__, "signal": self._signal(),
                  "n_counterfactuals": k, "allow_perturbations": bool(self.allow_perturbations),
                  # how many returned counterfactuals each stage of the search found
                  "found_by": {name: int(np.sum(stage == i)) for i, name in enumerate(STAGES)},
                  "flip_ratio": flip, "withheld": int(withheld.sum())},
        )

    def _search_stages(self, Q, target):
        """Candidates per query, closest first, and the stage that found each.

        Returns ``(cf, stage)``: ``cf`` of shape (n, n_counterfactuals, d)
        in input units (distinct per query, NaN rows after the found ones)
        and ``stage`` of shape (n, n_counterfactuals), the index in
        :data:`STAGES` of the stage that found each, -1 for none. The latent
        search runs ``n_counterfactuals`` times per query (:meth:`_restarts`);
        each later stage only for the queries that the earlier ones left
        without any, and gives one candidate.
        """
        n, d, k = len(Q), Q.shape[1], int(self.n_counterfactuals)
        # one search per counterfactual, each pushed away from the earlier finds
        starts = self._restarts(k)
        cf = np.full((n, k, d), np.nan)
        scaler = self._scaler()
        for j in range(k):
            avoid = scaler.transform(cf[:, :j].reshape(n * j, d)).reshape(n, j, d) if j else None
            latent = self._search(Q, target, start=np.broadcast_to(starts[j], (n, starts.shape[1])),
                                  avoid=avoid)
            found = ~np.isnan(latent).any(axis=1)
            if self.line_steps and found.any():
                # the closest point on the segment from the query to what was found
                refined = self._segment_search(Q[found], latent[found], target[found],
                                               np.ones(int(found.sum())))
                latent[found] = np.where(np.isnan(refined).any(axis=1)[:, None], latent[found],
                                         refined)
            cf[:, j] = latent
        found = ~np.isnan(cf).any(axis=2)
        cf, stage = self._distinct(cf, np.where(found, 0, -1), Q)
        missing = np.flatnonzero(stage[:, 0] < 0)
        if not self.line_steps or not missing.size:
            return cf, stage
        decoded = self._scaler().inverse_transform(self.autoencoder_.decode(self.prototypes_))
        point = self._segment_search(Q[missing], decoded[target[missing]], target[missing],
                                     np.full(missing.size, float(self.line_reach)))
        ok = ~np.isnan(point).any(axis=1)
        cf[missing[ok], 0], stage[missing[ok], 0] = point[ok], STAGES.index("prototype segment")
        missing = missing[~ok]
        if not missing.size:
            return cf, stage
        # from the query in input space: the black box's score, then fixed directions
        anchors = self._input_search(Q[missing], target[missing])
        by = np.where(np.isnan(anchors).any(axis=1), -1, STAGES.index("score"))
        lost = by < 0
        if lost.any():
            anchors[lost] = self._direction_search(Q[missing[lost]], target[missing[lost]])
            by[lost] = np.where(np.isnan(anchors[lost]).any(axis=1), -1,
                                STAGES.index("direction"))
        ok = by >= 0
        point = self._segment_search(Q[missing[ok]], anchors[ok], target[missing[ok]],
                                     np.ones(int(ok.sum())))
        good = ~np.isnan(point).any(axis=1)
        rows = missing[ok][good]
        cf[rows, 0], stage[rows, 0] = point[good], by[ok][good]
        return cf, stage

    def _latent_probes(self):
        """Public latent points (m, K) the search may start from besides the prototype.

        Corners of the latent cube along the +-rows of a Hadamard matrix
        (spread evenly over the corners) and the first ``_SOBOL_PROBES``
        points of an unscrambled Sobol sequence (spread evenly inside).
        Public and deterministic: they read nothing.
        """
        K = self.latent_dim
        size = 1 << max(int(np.ceil(np.log2(K))), 0)
        rows = hadamard(size)[:, :K].astype(float)
        corners = (1.0 + np.vstack([rows, -rows])) / 2.0
        inside = qmc.Sobol(K, scramble=False).random(_SOBOL_PROBES)  # a power of 2: balanced
        return np.unique(np.vstack([corners, inside]), axis=0)

    def _latent_start(self, Q, target):
        """Where each query's latent search starts (n, K): its prototype or a public probe.

        The desired class's DP prototype and every :meth:`_latent_probes`
        point are decoded, made to keep the query's constraints, projected
        and shown to the black box in one call. The start is the decoded
        point closest to the query that the black box puts in the desired
        class, else the one with the highest score for that class (the
        prototype when it ties). Post-processing of the DP decoder and
        prototypes, the public probes, black box and query: free. Queries
        go in chunks of at most ``_DIRECTION_ROWS`` black-box rows.
        """
        n, K = len(Q), self.latent_dim
        scaler = self._scaler()
        probes = self._latent_probes()
        c = 1 + len(probes)
        out = np.empty((n, K))
        chunk = max(1, _DIRECTION_ROWS // c)
        for lo in range(0, n, chunk):
            rows = slice(lo, min(lo + chunk, n))
            k, tk = rows.stop - rows.start, target[rows]
            codes = np.concatenate([self.prototypes_[tk][:, None, :],
                                    np.broadcast_to(probes, (k, *probes.shape))],
                                   axis=1)  # (k, c, K): the prototype first
            Qc = np.repeat(Q[rows], c, axis=0)
            points = self._project(scaler.inverse_transform(
                self.autoencoder_.decode(codes.reshape(k * c, K))), Qc)
            hit = (self._predict(points) == np.repeat(self.classes_[tk], c)).reshape(k, c)
            score = self._scores(points)[np.arange(k * c), np.repeat(tk, c)].reshape(k, c)
            dist = np.linalg.norm((scaler.transform(points) - scaler.transform(Qc))
                                  * self.rules_.weights, axis=1).reshape(k, c)
            # a hit: the closest; no hit: the highest score (argmax: the prototype on ties)
            key = np.where(hit, -dist, -np.inf)
            pick = np.where(hit.any(axis=1), np.argmax(key, axis=1), np.argmax(score, axis=1))
            out[rows] = codes[np.arange(k), pick]
        return out

    def _restarts(self, k):
        """Offsets (k, K) of the starts of a query's k latent searches from its start.

        The first is 0 (:meth:`_latent_start`); the others go ``_RESTART_RADIUS``
        along the +-rows of a Hadamard matrix (directions spread evenly over
        the latent cube's corners), farther on each further cycle. Public
        and deterministic.
        """
        K = self.latent_dim
        size = 1 << max(int(np.ceil(np.log2(K))), 0)
        rows = hadamard(size)[:, :K].astype(float)
        rows /= np.linalg.norm(rows, axis=1, keepdims=True)
        directions = np.vstack([rows, -rows])
        j = np.arange(1, k)
        out = np.zeros((k, K))
        out[1:] = (_RESTART_RADIUS * (1 + (j - 1) // len(directions)))[:, None] \
            * directions[(j - 1) % len(directions)]
        return out

    def _distinct(self, cf, stage, Q):
        """Each query's candidates sorted by distance to it, duplicates dropped.

        ``cf`` (n, k, d) in input units, ``stage`` (n, k); distances in the
        scaled space. A candidate within ``_DISTINCT`` of a closer one of
        the same query is dropped (NaN, stage -1); the found ones come first.
        """
        n, k, d = cf.shape
        scaler = self._scaler()
        scaled = scaler.transform(cf.reshape(n * k, d)).reshape(n, k, d)
        dist = np.linalg.norm(scaled - scaler.transform(Q)[:, None, :], axis=2)
        dist = np.where(np.isnan(dist), np.inf, dist)
        order = np.argsort(dist, axis=1, kind="stable")
        cf = np.take_along_axis(cf, order[:, :, None], axis=1)
        scaled = np.take_along_axis(scaled, order[:, :, None], axis=1)
        stage = np.take_along_axis(stage, order, axis=1)
        if k > 1:
            gap = np.linalg.norm(scaled[:, :, None, :] - scaled[:, None, :, :], axis=3)
            earlier = np.tril(np.ones((k, k), dtype=bool), -1)  # [j, i]: i before j
            dup = (earlier[None] & (gap < _DISTINCT) & (stage >= 0)[:, None, :]).any(axis=2)
            cf[dup], stage[dup] = np.nan, -1
            order = np.argsort(stage < 0, axis=1, kind="stable")  # found ones first
            cf = np.take_along_axis(cf, order[:, :, None], axis=1)
            stage = np.take_along_axis(stage, order, axis=1)
        return cf, stage

    def _plausibility(self, cf, Q, target):
        """``1 - ||c - p|| / ||q - p||`` per row, in the scaled space; NaN where ``cf`` is.

        ``p`` is the decoded DP prototype of the row's desired class:
        post-processing of the DP autoencoder and prototypes, the query and
        the counterfactual; nothing else.
        """
        scaler = self._scaler()
        p = self.autoencoder_.decode(self.prototypes_)[target]
        to_p = np.linalg.norm(scaler.transform(cf) - p, axis=1)
        from_q = np.linalg.norm(scaler.transform(Q) - p, axis=1)
        return 1.0 - to_p / np.maximum(from_q, 1e-12)

    def transform(self, X):
        """The counterfactuals of :meth:`explain`.

        Returns
        -------
        ndarray or DataFrame of shape (n_queries * n_counterfactuals, n_features)
            One row per query (``n_counterfactuals`` rows per query, query
            by query, the closest first), NaN (missing values) where none
            was found.
            Fitted on a DataFrame: a DataFrame with its columns, in original
            units and categories (the query's index when ``X`` is a
            DataFrame); integer columns become pandas' nullable ``Int64``
            when a row is missing. Otherwise an array in the encoded space.
        """
        cf = self.explain(X).counterfactuals
        if self.schema_.kind != "frame":
            return cf
        index = X.index if hasattr(X, "index") else None
        if index is not None and self.n_counterfactuals > 1:
            index = index.repeat(self.n_counterfactuals)
        return self._records(cf, index=index)

    def _records(self, cf, index=None):
        """Counterfactuals (encoded, NaN rows: none) as records of the fitted kind."""
        return self.schema_.records(cf, *self.bounds_, index=index)

    def _segment_search(self, Q, anchors, target, reach):
        """The closest point the black box puts in the target class, on each query's segment.

        Points ``Q + t (anchors - Q)`` for ``line_steps`` values of t evenly
        spaced in ``(0, reach]`` (per query), each projected
        (:meth:`_project`), all verified in one black-box call. Returns the
        first (smallest t) verified point per query, NaN where none.
        """
        n, d = Q.shape
        if n == 0:
            return np.empty((0, d))
        m = int(self.line_steps)
        t = np.linspace(1.0 / m, 1.0, m)[None, :] * np.asarray(reach, dtype=float)[:, None]
        points = Q[:, None, :] + t[:, :, None] * (anchors - Q)[:, None, :]
        points = self._project(points.reshape(n * m, d), np.repeat(Q, m, axis=0))
        hit = (self._predict(points) == np.repeat(self.classes_[target], m)).reshape(n, m)
        found = hit.any(axis=1)
        out = points.reshape(n, m, d)[np.arange(n), np.argmax(hit, axis=1)]
        out[~found] = np.nan
        return out

    def _input_search(self, Q, target):
        """A point the black box puts in the target class, found in input space.

        For the queries the latent search could not serve (e.g. a DP
        decoder whose whole range falls in one class): from the query,
        ``_INPUT_ROUNDS`` rounds of a line search along the black box's
        target-score gradient (central finite differences in the scaled
        space, every probe projected), each taking the first point of the
        line that the black box puts in the target class, else moving to
        the line's best-scoring point. Uses only the public black box, the
        query and the public bounds: no private data. Returns NaN rows where
        nothing was found.
        """
        scaler = self._scaler()
        to_input = scaler.inverse_transform
        n, d = Q.shape
        Qs = scaler.transform(Q)
        x = Qs.copy()
        wanted = self.classes_[target]
        out = np.full(Q.shape, np.nan)
        eye = _INPUT_FD_STEP * np.eye(d)
        # from 1/1000 of the box's diagonal to all of it
        reach = np.geomspace(2e-3 * np.sqrt(d), 2 * np.sqrt(d), max(int(self.line_steps), 2))
        m = len(reach)
        active = np.arange(n)
        for _ in range(_INPUT_ROUNDS):
            if not active.size:
                break
            k = len(active)
            xa, qa, ta = x[active], Qs[active], target[active]
            probe = np.concatenate([xa[:, None, :] + eye, xa[:, None, :] - eye], axis=1)
            probe = self._constrain(probe.reshape(-1, d), np.repeat(qa, 2 * d, axis=0), -1.0, 1.0)
            score = self._scores(to_input(probe))[np.arange(k * 2 * d), np.repeat(ta, 2 * d)]
            score = score.reshape(k, 2 * d)
            grad = score[:, :d] - score[:, d:]
            norm = np.linalg.norm(grad, axis=1)
            moving = norm > 0  # a flat score: nowhere to go from here
            u = grad / np.maximum(norm, 1e-300)[:, None]
            line = xa[:, None, :] + reach[None, :, None] * u[:, None, :]
            line = self._project(to_input(line.reshape(-1, d)), np.repeat(Q[active], m, axis=0))
            hit = (self._predict(line) == np.repeat(wanted[active], m)).reshape(k, m)
            hit &= moving[:, None]
            done = hit.any(axis=1)
            line = line.reshape(k, m, d)
            out[active[done]] = line[done, np.argmax(hit[done], axis=1)]
            rest = ~done & moving
            if rest.any():
                score = self._scores(line[rest].reshape(-1, d))
                score = score[np.arange(rest.sum() * m), np.repeat(ta[rest], m)].reshape(-1, m)
                x[active[rest]] = scaler.transform(line[rest, np.argmax(score, axis=1)])
            active = active[rest]
        return out

    def _direction_search(self, Q, target):
        """The closest point the black box puts in the target class along fixed directions.

        The last stage, for black boxes whose scores do not lead there (a
        predict-only black box steered by a degenerate DP decoder's
        surrogate, a flat region): from each query, lines along every
        feature axis (both ways) and along the rows of a Hadamard matrix
        (both ways: the directions toward the box's corners, spread evenly),
        ``_DIRECTION_STEPS`` points each out to the box's diagonal, every
        point projected; the closest one the black box puts in the target
        class. Deterministic, and it uses no private data. Returns NaN rows
        where no line gets there.
        """
        scaler = self._scaler()
        n, d = Q.shape
        Qs = scaler.transform(Q)
        size = 1 << max(int(np.ceil(np.log2(d))), 0)
        corners = hadamard(size)[:, :d] / np.sqrt(d)
        directions = np.vstack([np.eye(d), -np.eye(d), corners, -corners])
        reach = np.geomspace(2e-2 * np.sqrt(d), 2 * np.sqrt(d), _DIRECTION_STEPS)
        steps = (reach[None, :, None] * directions[:, None, :]).reshape(-1, d)  # (D m, d)
        per_query = len(steps)
        out = np.full(Q.shape, np.nan)
        chunk = max(1, _DIRECTION_ROWS // per_query)
        for start in range(0, n, chunk):
            rows = slice(start, min(start + chunk, n))
            k = rows.stop - rows.start
            points = (Qs[rows, None, :] + steps[None]).reshape(-1, d)
            points = self._project(scaler.inverse_transform(points),
                                   np.repeat(Q[rows], per_query, axis=0))
            hit = self._predict(points) == np.repeat(self.classes_[target[rows]], per_query)
            dist = np.linalg.norm((scaler.transform(points) - np.repeat(Qs[rows], per_query, axis=0))
                                  * self.rules_.weights, axis=1)
            dist = np.where(hit, dist, np.inf).reshape(k, per_query)
            best = np.argmin(dist, axis=1)
            found = np.isfinite(dist[np.arange(k), best])
            chosen = points.reshape(k, per_query, d)[np.arange(k), best]
            out[rows][found] = chosen[found]  # out[rows] is a view (a slice)
        return out

    def _search(self, Q, target, start=None, avoid=None):
        """Vectorised over queries: Adam on delta, finite differences for the black box.

        Q : (n, d) queries in input units, within the bounds; ``start``: (n, K)
        offsets of each search's start in the latent cube (None: 0); ``avoid``:
        (n, j, d) earlier finds per query in the scaled space (NaN: none), from
        whose nearest the loss pushes away (``_DIVERSITY * beta * ||x - c||``);
        returns (n, d)
        counterfactuals in input units, projected (:meth:`_project`) and
        put in the target class by the black box (NaN where no step got
        there).
        """
        n, K = len(Q), self.latent_dim
        ae = self.autoencoder_
        scaler = self._scaler()
        to_input = scaler.inverse_transform
        Qs = scaler.transform(Q)  # the queries in the autoencoder's [-1, 1]^d
        Q_probe = np.repeat(Qs, 2 * K + 1, axis=0)
        wanted = self.classes_[target]
        rho = self.prototypes_[target]
        origin = self._latent_start(Q, target)
        delta = origin - rho + self.init_blend * (ae.encode(Qs) - origin)
        if start is not None:
            delta = np.clip(rho + delta + start, 0.0, 1.0) - rho
        m, v = np.zeros((n, K)), np.zeros((n, K))
        best = np.full(Q.shape, np.nan)
        best_dist = np.full(n, np.inf)
        rows = np.arange(n)
        eye = _FD_STEP * np.eye(K)
        for t in range(1, self.max_iter + 1):
            Hc = np.clip(rho + delta, 0.0, 1.0)
            # the black box at the point and at +-h along each latent axis, one
            # call; every probe keeps the constraints relative to its query
            probe = np.concatenate([Hc[:, None, :], Hc[:, None, :] + eye, Hc[:, None, :] - eye],
                                   axis=1).reshape(-1, K)
            raw = ae.decode(probe)
            X_probe = self._constrain(raw, Q_probe, -1.0, 1.0)
            logp = self._scores(to_input(X_probe)).reshape(n, 2 * K + 1, -1)[rows, :, target]
            x = X_probe[::2 * K + 1]  # the constrained point itself
            # keep the closest projected point that the black box puts in the target class
            candidate = self._project(to_input(x), Q)
            hit = self._predict(candidate) == wanted
            dist = np.linalg.norm((scaler.transform(candidate) - Qs) * self.rules_.weights, axis=1)
            better = hit & (dist < best_dist)
            best[better], best_dist[better] = candidate[better], dist[better]
            # gradient of alpha CE + beta ||x - q|| + gamma ||delta||; the
            # distance moves only the features the constraints leave free
            grad = -self.alpha * (logp[:, 1:K + 1] - logp[:, K + 1:]) / (2 * _FD_STEP)
            w = self.rules_.weights  # the declared costs of change (default 1)
            diff = np.where(x == raw[::2 * K + 1], (x - Qs) * w**2, 0.0)
            norm = np.maximum(np.linalg.norm((x - Qs) * w, axis=1), 1e-12)[:, None]
            grad += self.beta * ae.decode_vjp(Hc, diff / norm)
            grad += self.gamma * delta / np.maximum(np.linalg.norm(delta, axis=1), 1e-12)[:, None]
            if avoid is not None and avoid.shape[1]:
                # diversity: away from the nearest earlier find of the same query
                gap = x[:, None, :] - avoid
                far = np.linalg.norm(gap, axis=2)
                far = np.where(np.isnan(far), np.inf, far)
                near = np.argmin(far, axis=1)
                dist_near = far[rows, near]
                push = np.where(np.isfinite(dist_near)[:, None],
                                gap[rows, near] / np.maximum(dist_near, 1e-12)[:, None], 0.0)
                push = np.where(x == raw[::2 * K + 1], push, 0.0)
                grad -= _DIVERSITY * self.beta * ae.decode_vjp(Hc, push)
            m = 0.9 * m + 0.1 * grad
            v = 0.999 * v + 0.001 * grad**2
            step = self.learning_rate * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
            delta = np.clip(rho + delta - step, 0.0, 1.0) - rho
        return best

    # ------------------------------------------------------------ reporting

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = self.estimator is None
        # CSR rows (e.g. one-hot) are densified; the black box still gets CSR
        tags.input_tags.sparse = True
        # a missing or infinite value stands for the bounds' midpoint, in fit
        # and in queries; in a private row so does a cell that is not a number
        # (refusing would be a release about the row: doc/privacy.rst)
        tags.input_tags.allow_nan = True
        tags.input_tags.string = True
        return tags
