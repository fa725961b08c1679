"""DP counterfactuals from class prototypes in an autoencoder's latent space (Yang et al. 2022)."""

from numbers import Integral, Real

import numpy as np
from scipy.special import softmax
from sklearn.base import TransformerMixin
from .._sklearn_compat import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from .._explanation import CounterfactualSet
from ..privacy import (
    BUDGET_PARAMETER_CONSTRAINTS,
    RELATIONS,
    BoundsScaler,
    ComposedDpEvent,
    DPEstimator,
    NonPrivateDpEvent,
    SpendPlan,
    calibrate_noise,
    compose_events,
    gaussian_event,
    gaussian_release,
    laplace_event,
)
from ..utils._targets import validate_classes
from ._functional import FunctionalAutoencoder, functional_sensitivity, n_coefficients
from ._mlp_autoencoder import MLPAutoencoder

__all__ = ["DPCounterfactualGenerator"]

#: share of epsilon for the autoencoder; the prototypes get the rest (and all of delta).
#: The prototypes are K + 1 sums over whole classes; the autoencoder has thousands of
#: parameters to learn from the same rows, and needs most of the budget: on Adult at
#: epsilon 0.025, a half share left the decoder unable to reach ">50K" in 1 seed of 4
#: (see doc/dpc.rst)
_AE_SHARE = 0.9
#: central finite-difference step in the latent space (codes live in (0, 1))
_FD_STEP = 0.02
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


class DPCounterfactualGenerator(TransformerMixin, DPEstimator):
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
       + gamma ||delta||`` over the latent perturbation delta, from
       ``rho_s``. Only the black box's ``predict_proba`` is used: the
       cross-entropy's gradient is estimated by central finite differences
       in the K-dimensional latent space (2K black-box rows per query and
       step, one batched call for all queries); the other terms have exact
       gradients through the linear decoder. The search is post-processing
       of the DP autoencoder and prototypes: it costs no budget.

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

    Parameters
    ----------
    estimator : classifier with predict_proba, or None
        The black box to explain, already fitted. ``None``: the DP
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
        is the default because it is the one that works on the benchmarks:
        the functional mechanism's sensitivity grows like d^2 and, on Adult
        (d = 104) at epsilon 0.75, leaves a random subspace in which the
        search fails for about one seed in three (see the doc page).
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
        Where the search starts: ``(1 - init_blend) rho_s + init_blend
        enc(q)``; 0 is the paper's start at the prototype.
    desired_class : "opposite" or a class label, default="opposite"
        "opposite": the class the black box does not predict for the query
        (multi-class: the most probable of the others, the paper's
        unspecified scenario).
    bounds : tuple (lower, upper) or None
        Public bounds of the features (scalars or arrays); data are clipped
        to them.
        ``None`` estimates them with a DP histogram charged inside this
        estimator's epsilon (:class:`~skdpx.privacy.FitBounds`: a quarter of
        it, coarse on small data; never the raw minimum and maximum), with a
        ``PrivacyLeakWarning`` that declared bounds are better. Bounds with
        lower == upper for every feature are refused.
    classes : array-like or None, default=None
        The public label set. ``None`` reads it from ``y`` with a
        ``PrivacyLeakWarning``: the labels present are then a release about
        the rows (assumed public, not declared). A label of ``y`` outside
        the declared set is refused before anything is spent.
        With a black box (``estimator``), its ``classes_`` must match them.
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

    _parameter_constraints = {
        **BUDGET_PARAMETER_CONSTRAINTS,
        "classes": ["array-like", None],
        "estimator": [HasMethods(["predict_proba"]), None],
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
        bounds=None,
        classes=None,
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
        self.bounds = bounds
        self.classes = classes
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
            black box's predictions are the classes). The set of class
            labels is then read from ``y``, as scikit-learn's classifiers
            (and the DP libraries') do; it is not noised (with a black box,
            its public ``classes_`` are used).

        Returns
        -------
        self
        """
        return super().fit(X, y)

    def _validate_fit(self, X, y):
        X, y = validate_classes(self, X, y, "counterfactuals need")
        if not np.isinf(self.epsilon) and self.delta == 0:
            raise ValueError("the prototypes' Gaussian mechanism needs delta > 0.")
        if self.ae_method == "functional" and self.latent_dim > X.shape[1]:
            raise ValueError(f"latent_dim ({self.latent_dim}) must be at most n_features "
                             f"({X.shape[1]}).")
        hidden = tuple(int(h) for h in np.atleast_1d(self.hidden_layer_sizes))
        if not all(h >= 1 for h in hidden):
            raise ValueError(f"hidden_layer_sizes must be positive, got {hidden}.")
        return X, y, hidden

    def _plan_spend(self, data, relation, bounds):
        """The whole fit: the autoencoder's release, then the prototypes'.

        The autoencoder gets ``_AE_SHARE`` of epsilon (and half of delta
        for DP-SGD); the prototypes' Gaussian noise is calibrated with the
        planned autoencoder event as ``prior``, so that the two compose to
        exactly (``epsilon``, ``delta``).
        """
        X, _, _ = data
        n, d = X.shape
        n_classes = len(self.classes_)
        functional = self.ae_method == "functional"
        if not functional and relation != "add_or_remove" and not np.isinf(self.epsilon):
            raise ValueError(
                "ae_method='dpsgd' trains the autoencoder with Poisson-subsampled DP-SGD, which "
                f"is accounted for add-or-remove neighbours only; this ledger's relation is "
                f"{relation!r}. Use ae_method='functional' (calibrated under either relation) "
                "or an add-or-remove ledger."
            )
        ae_epsilon = self.epsilon * (1 - bounds.share) * _AE_SHARE
        plan = {"relation": relation}
        if functional:
            plan["ae_noise_multiplier"] = 0.0 if np.isinf(self.epsilon) else 1.0 / ae_epsilon
            plan["ae_sensitivity"] = functional_sensitivity(d, relation)
            ae_event = laplace_event(plan["ae_noise_multiplier"])
            ae_label = f"functional mechanism: autoencoder coefficients ({n_coefficients(d)})"
        else:
            plan["engine"] = MLPAutoencoder.engine(n, ae_epsilon, self.delta / 2)
            ae_event = plan["engine"].planned_event()
            ae_label = f"DP-SGD autoencoder ({plan['engine'].max_steps} steps)"
        proto_label = f"class prototypes: per-class sums of codes and counts ({n_classes})"
        if np.isinf(self.epsilon):  # the non-private baseline: say so in the ledger
            return SpendPlan(NonPrivateDpEvent(), "non-private fit (epsilon=inf)",
                             prototype_noise_multiplier=0.0, **plan)
        z = calibrate_noise(self.epsilon, self.delta, prior=compose_events(bounds.event, ae_event))
        return SpendPlan(ComposedDpEvent([ae_event, gaussian_event(z)]),
                         f"{ae_label} + {proto_label}", prototype_noise_multiplier=z, **plan)

    def _private_fit(self, data, plan, commitment, noise):
        X, y, hidden = data
        self.bounds_ = plan.bounds.release(X, noise=noise, commitment=commitment)
        X11 = self._scaler().transform(X)
        # the classes of the rows: they enter the releases only through the
        # prototypes' table (whose sensitivity covers any class of a row)
        labels = np.searchsorted(self.classes_, self.estimator.predict(X) if y is None else y)
        if self.ae_method == "functional":
            self.autoencoder_ = FunctionalAutoencoder.fit(
                X11, self.latent_dim, noise_multiplier=plan.ae_noise_multiplier,
                sensitivity=plan.ae_sensitivity, noise=noise, commitment=commitment,
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

    def _noisy_table(self, codes, labels, *, noise_multiplier, relation, noise, commitment):
        """Noisy per-class (sum of codes, count): one Gaussian release, paid by ``commitment``.

        The noise is ``noise_multiplier`` times :func:`prototype_sensitivity`
        under ``relation``.
        """
        n_classes, K = len(self.classes_), codes.shape[1]
        table = np.zeros((n_classes, K + 1))
        np.add.at(table, labels, np.hstack([codes, np.ones((len(codes), 1))]))
        return gaussian_release(table, noise_multiplier=noise_multiplier,
                                sensitivity=prototype_sensitivity(K, relation), noise=noise,
                                commitment=commitment)

    # ------------------------------------------------------------ the black box

    def _proba(self, X):
        """The black box's class probabilities for rows in input units."""
        if self.estimator is not None:
            return np.asarray(self.estimator.predict_proba(X), dtype=float)
        codes = self.autoencoder_.encode(self._scaler().transform(X))
        sq = ((codes[:, None, :] - self.prototypes_[None]) ** 2).sum(axis=2)
        return softmax(-_PROTOTYPE_SHARPNESS * sq / self.latent_dim, axis=1)

    def _scaler(self):
        """The public map between input units and the autoencoder's [-1, 1]^d."""
        lower, upper = self.bounds_
        return BoundsScaler(lower, upper, feature_range=(-1.0, 1.0))

    def _targets(self, X, desired_class):
        """Index (into classes_) of the desired class of each query."""
        desired = self.desired_class if desired_class is None else desired_class
        if isinstance(desired, str):
            if desired != "opposite":
                raise ValueError(f"desired_class must be 'opposite' or a class label, "
                                 f"got {desired!r}.")
            proba = self._proba(X)
            proba[np.arange(len(X)), np.argmax(proba, axis=1)] = -np.inf
            return np.argmax(proba, axis=1)  # the other class (multi-class: the runner-up)
        desired = np.broadcast_to(np.asarray(desired), (len(X),))
        index = np.searchsorted(self.classes_, desired)
        index = np.clip(index, 0, len(self.classes_) - 1)
        if not np.all(self.classes_[index] == desired):
            raise ValueError(f"desired_class must be one of {self.classes_.tolist()}.")
        return index

    # ------------------------------------------------------------ search

    def explain(self, X, desired_class=None):
        """One counterfactual per row of X.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
        desired_class : "opposite" or a class label or array of labels, optional
            Overrides the constructor's ``desired_class``.

        Returns
        -------
        CounterfactualSet
            ``valid`` is re-checked with the black box: True where it
            predicts the desired class for the counterfactual; a row of NaN
            where the search found none (``predicted_class`` is then the
            black box's class for the query itself).
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        lower, upper = self.bounds_
        Xc = np.clip(X, lower, upper)
        target = self._targets(Xc, desired_class)
        cf = self._search(self._scaler().transform(Xc), target)
        found = ~np.isnan(cf).any(axis=1)
        # where no counterfactual was found the prediction stays the query's
        predicted = self.classes_[np.argmax(self._proba(np.where(found[:, None], cf, Xc)), axis=1)]
        names = list(self.feature_names_in_) if hasattr(self, "feature_names_in_") else None
        return CounterfactualSet(
            X, cf, desired_class=self.classes_[target], predicted_class=predicted,
            valid=found & (predicted == self.classes_[target]), feature_names=names,
            epsilon_spent=self.epsilon_spent_, delta_spent=self.delta_spent_,
            meta={"estimator": type(self).__name__},
        )

    def transform(self, X):
        """The counterfactuals of :meth:`explain` as an array (NaN rows: none found)."""
        return self.explain(X).counterfactuals

    def _search(self, Q, target):
        """Vectorised over queries: Adam on delta, finite differences for the black box.

        Q : (n, d) queries in [-1, 1]; returns (n, d) counterfactuals in input
        units (NaN where no step reached the desired class).
        """
        n, K = len(Q), self.latent_dim
        ae = self.autoencoder_
        to_input = self._scaler().inverse_transform
        rho = self.prototypes_[target]
        delta = self.init_blend * (ae.encode(Q) - rho)
        m, v = np.zeros((n, K)), np.zeros((n, K))
        best = np.full((n, Q.shape[1]), np.nan)
        best_dist = np.full(n, np.inf)
        rows = np.arange(n)
        eye = _FD_STEP * np.eye(K)
        for t in range(1, self.max_iter + 1):
            Hc = np.clip(rho + delta, 0.0, 1.0)
            # the black box at the point and at +-h along each latent axis, one call
            probe = np.concatenate([Hc[:, None, :], Hc[:, None, :] + eye, Hc[:, None, :] - eye],
                                   axis=1).reshape(-1, K)
            P = self._proba(to_input(ae.decode(probe))).reshape(n, 2 * K + 1, -1)
            logp = np.log(np.clip(P[rows, :, target], 1e-12, 1.0))  # (n, 2K + 1)
            x = ae.decode(Hc)
            # keep the closest counterfactual that the black box puts in the target class
            hit = np.argmax(P[:, 0, :], axis=1) == target
            dist = np.linalg.norm(x - Q, axis=1)
            better = hit & (dist < best_dist)
            best[better], best_dist[better] = to_input(x[better]), dist[better]
            # gradient of alpha CE + beta ||x - q|| + gamma ||delta||
            grad = -self.alpha * (logp[:, 1:K + 1] - logp[:, K + 1:]) / (2 * _FD_STEP)
            diff = x - Q
            grad += self.beta * ae.decode_vjp(Hc, diff / np.maximum(dist, 1e-12)[:, None])
            grad += self.gamma * delta / np.maximum(np.linalg.norm(delta, axis=1), 1e-12)[:, None]
            m = 0.9 * m + 0.1 * grad
            v = 0.999 * v + 0.001 * grad**2
            step = self.learning_rate * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
            delta = np.clip(rho + delta - step, 0.0, 1.0) - rho
        return best

    # ------------------------------------------------------------ reporting

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = self.estimator is None
        return tags
