"""Differentially private scorers for private model selection.

A :class:`DPScorer` turns a fitted estimator and private validation rows
into a score in two steps, the way the privacy core wants it:

1. :meth:`DPScorer.contributions` computes each row's EXACT contribution
   vector (clipped and centred, so that the column sums have a stated L2
   sensitivity). This never leaves the search: the privacy core adds
   Gaussian noise to the column sums, calibrated to
   :meth:`DPScorer.sensitivity`.
2. :meth:`DPScorer.finalize` maps the NOISY sums to the score. It only
   post-processes a DP release (and public facts), so it costs nothing; it
   must be robust to the noise (clip to the score's range, never divide by
   a noisy value near zero).

No noise is drawn here: the scorers compute exact statistics, the core
(``skdpx.privacy``) releases them.

**The number of validation rows is private.** Under add-or-remove
neighbours (the default relation) the number of rows ``n`` of the
validation part differs between neighbouring datasets, so a score may not
divide by it: ``(sum + noise) / n`` moves by about twice what the noise on
the sum is calibrated for when one extreme row is added (the mean of ``n``
correct predictions is 1, with one wrong row added ``n / (n + 1)``: times
``n``, a movement of ``n / (n + 1)`` against the sensitivity 1/2), and its
normaliser is itself an exact release of ``n``. Every scorer here that
computes a mean releases its own count instead: each validation row
contributes one more column, a constant ``h`` (the half-range of its
centred statistic), in the same Gaussian release, and :meth:`finalize`
divides by that noisy count (``column / h``, at least 1). The count's column
adds ``h`` to the row's vector, so the add-or-remove sensitivity is
``sqrt(h^2 + h^2) = sqrt(2) h``; under replace-one the count column does not
move and the sensitivity is unchanged (``2 h``). ``finalize``'s ``n_rows``
(the public expected number of validation rows, which the searches compute
from their DP row count) is not used by these scorers; it is there for
scorers whose sums carry no count of their own.

The L2 sensitivities of the column sums (privacy unit: one validation row;
``w`` the scorer's weight of distance or cost, ``L`` the log-loss clip):

==================================  ==========  ========================  =================
scorer                              statistics  add-or-remove             replace-one
==================================  ==========  ========================  =================
:class:`DPAccuracy`                 2           sqrt(2)/2 ~ 0.707         1
:class:`DPBalancedAccuracy`         2 K         sqrt(5)/2 ~ 1.118         sqrt(5/2) ~ 1.581
:class:`DPLogLoss`                  2           L sqrt(2)/2               L
:class:`DPCounterfactualScore`      2           (1 + w) sqrt(2)/2         1 + w
:class:`DPRecourseScore`            2           (1 + w) sqrt(2)/2         1 + w
:class:`DPLimeFidelity`             0           none (public)             none (public)
:class:`DPShapFidelity`             0           none (public)             none (public)
==================================  ==========  ========================  =================

(:class:`DPBalancedAccuracy` already released one count per class, and
divides each recall by its class's noisy count.)

:class:`DPLimeFidelity` scores explanations of public queries; what they
spend goes through the explainer's own ledger and is planned by
:meth:`DPScorer.planned_event`.

Each bound is attained (a row with the extreme contribution added, or
replaced by the opposite extreme); ``tests/test_dp_scorers.py`` checks it by
brute force over neighbouring datasets, and shows that a score normalised
by the private number of rows moves beyond it.

References
----------
.. [1] N. Papernot and T. Steinke, "Hyperparameter tuning with Renyi
   differential privacy", ICLR 2022 (private selection: each run's score
   must itself be DP).
.. [2] J. Liu and K. Talwar, "Private selection from private candidates",
   STOC 2019.
"""

import math
from numbers import Real

import numpy as np

from .._sklearn_compat import is_classifier
from ..base import DPEstimator
from ..utils._tables import num_rows
from ..privacy import BoundsScaler, check_relation

__all__ = [
    "DPAccuracy",
    "DPBalancedAccuracy",
    "DPCounterfactualScore",
    "DPLimeFidelity",
    "DPLogLoss",
    "DPRecourseScore",
    "DPScorer",
    "DPShapFidelity",
    "get_dp_scorer",
]


def _labels(y):
    """``y`` as a 1-d array (list, ndarray, Series or one-column DataFrame)."""
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        raise ValueError(f"y must be 1-dimensional, got shape {y.shape}.")
    return y


def _fitted_classes(estimator, classes=None, *, who):
    """The public label set: ``classes`` if declared, else ``estimator.classes_``."""
    if classes is not None:
        classes = np.asarray(classes)
        if classes.ndim != 1 or len(classes) < 2:
            raise ValueError(f"{who}: classes must be a 1-d list of at least two labels.")
        if len(np.unique(classes)) != len(classes):
            raise ValueError(f"{who}: classes must not repeat a label.")
        return classes
    found = getattr(estimator, "classes_", None)
    if found is None:
        raise ValueError(
            f"{who} needs the public label set: a fitted classifier with classes_, "
            "or classes=[...] declared on the scorer.")
    return np.asarray(found)


def _class_codes(classes, y):
    """Index of each label of ``y`` in ``classes``; -1 for a label outside them.

    A loop over the (few, public) classes, vectorised over the rows.
    """
    codes = np.full(len(y), -1, dtype=np.intp)
    for j, label in enumerate(classes):
        codes[y == label] = j
    return codes


class DPScorer:
    """Base class of the scorers of private model selection.

    The contract with the privacy core and the searches
    (:class:`~skdpx.model_selection.DPRandomSearchCV`,
    :class:`~skdpx.model_selection.DPGridSearchCV`):

    * :meth:`contributions` returns an ``(n_rows, n_stats)`` array, each
      validation row's exact contribution vector. Each vector is clipped
      and centred so that the L2 norm of the change of the column sums,
      when one row is added or removed (``"add_or_remove"``) or replaced
      (``"replace_one"``), is at most :meth:`sensitivity` ``(relation)``, a
      constant that depends on public facts only (declared classes,
      parameters of the scorer). The array is never released: the core adds
      Gaussian noise of that L2 sensitivity to its column sums.
    * :meth:`finalize` maps the noisy sums to the score. It is
      post-processing of a DP release and public facts (free), and is made
      robust to the noise: clipped to the score's range, no division by a
      noisy quantity near zero. It never divides by the private number of
      validation rows: a mean is taken over a count released in the same
      Gaussian release (one more column of :meth:`contributions`), or over
      the public ``n_rows`` the search gives (its expected number of
      validation rows, from its DP row count).
    * A scorer with ``public = True`` scores from public data only (a
      public query set): the search calls :meth:`public_score`, no private
      row is read and no noise is added.
    * :meth:`planned_event` is the spend that scoring makes through the
      estimator itself (an explainer that spends when it explains), or None.

    Privacy unit: one validation row, under the neighbouring relation the
    search's ledger is kept under.

    Attributes
    ----------
    name : str
        The scorer's name, as :func:`get_dp_scorer` knows it.
    greater_is_better : bool
        True: the search maximises the score (every scorer here follows
        scikit-learn's convention of returning a score, e.g. the negative
        log-loss).
    public : bool
        True: :meth:`public_score` scores from public data only.
    """

    name = None
    greater_is_better = True
    public = False

    def contributions(self, estimator, X, y):
        """Each validation row's exact contribution vector.

        Parameters
        ----------
        estimator : fitted estimator
        X : array-like or DataFrame of shape (n_rows, n_features)
            The private validation rows.
        y : array-like of shape (n_rows,)
            Their labels.

        Returns
        -------
        ndarray of shape (n_rows, n_stats)
            Never released: the privacy core adds Gaussian noise to its
            column sums, of L2 sensitivity :meth:`sensitivity`.
        """
        raise NotImplementedError(f"{type(self).__name__} does not score private rows.")

    def sensitivity(self, relation):
        """L2 sensitivity of ``contributions(...).sum(axis=0)``.

        Parameters
        ----------
        relation : {"add_or_remove", "replace_one"}

        Returns
        -------
        float
        """
        raise NotImplementedError(f"{type(self).__name__} does not score private rows.")

    def finalize(self, sums, n_rows=None):
        """The score from the noisy column sums (post-processing).

        Parameters
        ----------
        sums : array-like of shape (n_stats,)
            The column sums of :meth:`contributions`, with the core's noise.
        n_rows : float or None
            A public stand-in for the number of validation rows: the
            expected number the search computes from its DP row count (never
            the private number). The scorers of this module do not use it:
            their sums carry a noisy count of their own.

        Returns
        -------
        float
        """
        raise NotImplementedError(f"{type(self).__name__} does not score private rows.")

    def score_std(self, score, noise_multiplier, relation, n_rows):
        """The standard deviation of a DP score's noise, from the score and public facts.

        Post-processing of the released score: the noise of the sums
        (``noise_multiplier`` times :meth:`sensitivity`) carried through
        :meth:`finalize` to first order, with ``n_rows`` the public expected
        number of validation rows. NaN where a scorer does not say.

        Parameters
        ----------
        score : float
            The released (noisy) score.
        noise_multiplier : float
        relation : {"add_or_remove", "replace_one"}
        n_rows : float

        Returns
        -------
        float
        """
        return math.nan

    def public_score(self, estimator):
        """The score from public data only (``public = True`` scorers).

        Parameters
        ----------
        estimator : fitted estimator

        Returns
        -------
        float
        """
        raise NotImplementedError(
            f"{type(self).__name__} scores private rows (public=False): "
            "it has no public_score.")

    def planned_event(self, estimator, n_rows, relation):
        """The DpEvent that scoring spends through the estimator itself.

        Parameters
        ----------
        estimator : estimator
            The candidate (its parameters are public).
        n_rows : float
            The public planning count of the rows it is fitted on (a share
            of the search's DP row count under add-or-remove).
        relation : {"add_or_remove", "replace_one"}

        Returns
        -------
        DpEvent or None
            None (the default): scoring spends nothing beyond the noise the
            core adds to the sums of :meth:`contributions`.
        """
        return None

    def _params(self):
        return {}

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self._params().items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other):
        return type(self) is type(other) and _same(self._params(), other._params())

    def __hash__(self):
        return hash(type(self))


def _same(a, b):
    if a.keys() != b.keys():
        return False
    for key in a:
        x, y = a[key], b[key]
        if hasattr(x, "shape") or hasattr(y, "shape"):  # arrays, DataFrames
            if x is None or y is None or not np.array_equal(
                    np.asarray(x, dtype=object), np.asarray(y, dtype=object)):
                return False
        elif x != y:
            return False
    return True


class _CountedMean(DPScorer):
    """A mean of a bounded per-row value ``u`` in ``[lo, hi]``, over a noisy count.

    Each row contributes ``(u - c, h)`` with ``c = (lo + hi) / 2`` and
    ``h = (hi - lo) / 2``: the centred value, and the row's share of the
    count (``h`` per row, so that the count's column moves as much as the
    value's). One Gaussian release of the two sums gives ``S = sum(u) - n c``
    and ``h n``, both noisy; :meth:`finalize` returns the mean
    ``c + S / max(N, 1)``, ``N`` the noisy count (the second sum over
    ``h``), clipped to ``[lo, hi]``. On exact sums it is the mean of ``u``.

    L2 sensitivity of the two sums: ``sqrt(2) h`` under add-or-remove (a
    row adds or removes ``(u - c, h)``, ``|u - c| <= h``), ``2 h`` under
    replace-one (the count column does not move). ``n`` is never used: under
    add-or-remove it is private.

    Subclasses give ``_values(estimator, X, y)`` (``u``, one per row),
    ``_range()`` (``(lo, hi)``) and ``_score(mean)``.
    """

    def _values(self, estimator, X, y):
        raise NotImplementedError

    def _range(self):
        raise NotImplementedError

    def _score(self, mean):
        return mean

    def contributions(self, estimator, X, y):
        lo, hi = self._range()
        centre, half = (lo + hi) / 2.0, (hi - lo) / 2.0
        if num_rows(X) == 0:  # an empty validation part: nothing to score
            return np.zeros((0, 2))
        u = np.clip(np.asarray(self._values(estimator, X, y), dtype=float).reshape(-1), lo, hi)
        return np.column_stack([u - centre, np.full(len(u), half)])

    def sensitivity(self, relation):
        lo, hi = self._range()
        half = (hi - lo) / 2.0
        return math.sqrt(2.0) * half if check_relation(relation) == "add_or_remove" \
            else 2.0 * half

    def score_std(self, score, noise_multiplier, relation, n_rows):
        # score = c + S / N: d/dS = 1 / N, d/d(count sum) = -(score - c) / (N h); both sums
        # carry noise of standard deviation sigma; N taken at the public n_rows
        lo, hi = self._range()
        centre, half = (lo + hi) / 2.0, (hi - lo) / 2.0
        sigma = float(noise_multiplier) * self.sensitivity(relation)
        mean = self._unscore(float(score))
        slope = (mean - centre) / half if half > 0 else 0.0
        return sigma / max(float(n_rows), 1.0) * math.sqrt(1.0 + slope**2)

    def _unscore(self, score):
        """The mean behind a score (the inverse of ``_score``: an identity here)."""
        return score

    def finalize(self, sums, n_rows=None):
        lo, hi = self._range()
        centre, half = (lo + hi) / 2.0, (hi - lo) / 2.0
        sums = np.asarray(sums, dtype=float).reshape(-1)
        if sums.size != 2:
            raise ValueError(
                f"{type(self).__name__}.finalize needs the 2 sums of its contributions (the "
                f"centred values and the count), got {sums.size}.")
        count = sums[1] / half if half > 0 else 0.0
        return self._score(float(np.clip(centre + sums[0] / max(count, 1.0), lo, hi)))


class DPAccuracy(_CountedMean):
    """Accuracy from a Gaussian-noised count of correct predictions, over a noisy count.

    Each validation row contributes ``(correct - 1/2, 1/2)`` (``correct`` is
    1 if ``estimator.predict`` returns its label, else 0): the centred
    count of correct predictions and half the count of rows, released
    together. The score is ``1/2 + S / max(N, 1)`` clipped to ``[0, 1]``,
    ``S`` the first noisy sum and ``N`` twice the second (a DP count of the
    validation rows: their number is private under add-or-remove); on
    exact sums it is scikit-learn's ``accuracy_score``.

    L2 sensitivity of the two sums:

    * ``"add_or_remove"``: ``sqrt(2)/2 ~ 0.707`` (one row's ``(+-1/2, 1/2)``);
    * ``"replace_one"``: 1 (from ``-1/2`` to ``+1/2``; the count does not move).

    Centring at 1/2 halves the add-or-remove sensitivity of a plain count
    (``(correct, 1)`` would have ``sqrt(2)``).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skdpx.model_selection import DPAccuracy
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array([0, 0, 1, 1])
    >>> model = LogisticRegression().fit(X, y)
    >>> scorer = DPAccuracy()
    >>> sums = scorer.contributions(model, X, y).sum(axis=0)  # the core adds noise here
    >>> float(scorer.finalize(sums))
    1.0
    >>> round(scorer.sensitivity("add_or_remove"), 4), scorer.sensitivity("replace_one")
    (0.7071, 1.0)
    """

    name = "accuracy"

    def _range(self):
        return 0.0, 1.0

    def _values(self, estimator, X, y):
        y = _labels(y)
        return (np.asarray(estimator.predict(X)).reshape(len(y)) == y).astype(float)


class DPBalancedAccuracy(DPScorer):
    """Balanced accuracy (mean recall over the classes), from noisy per-class sums.

    A row of true class ``k`` contributes, in class ``k``'s slots,
    ``correct - 1/2`` to the correct-count statistic and ``1`` to the
    count statistic; every other slot is 0. The ``2 * n_classes`` sums are
    ``[correct_0 - count_0/2, ..., count_0, ...]``. The score is the mean,
    over the classes whose noisy count is at least 1/2, of
    ``clip(s_k / max(count_k, 1) + 1/2, 0, 1)``: each recall divides by its
    class's noisy count, released with the correct counts (the number of
    rows, private under add-or-remove, is never used); on exact sums it is
    scikit-learn's ``balanced_accuracy_score`` (which also leaves out the
    classes absent from ``y``). With no such class the score is the chance
    level ``1 / n_classes``.

    Robustness to noise: a rare class's noisy count can be near 0 or
    negative; the division is by at least 1 and each recall is clipped to
    ``[0, 1]``, so one class's noise moves the mean by at most
    ``1 / n_classes``.

    Sensitivity of the sums (L2):

    * ``"add_or_remove"``: ``sqrt(5)/2 ~ 1.118`` (a row's vector
      ``(+-1/2, 1)``);
    * ``"replace_one"``: ``sqrt(5/2) ~ 1.581`` when the two rows' classes
      differ (two disjoint ``(+-1/2, 1)``), 1 when they agree.

    Centring the correct counts at 1/2 gives these instead of ``sqrt(2)``
    and 2 for ``(correct, 1)``.

    Parameters
    ----------
    classes : array-like or None, default=None
        The public label set, in any order. None: the estimator's
        ``classes_`` (public: declared at fit by skdpx's classifiers).
        Labels of ``y`` outside the set contribute nothing.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skdpx.model_selection import DPBalancedAccuracy
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array([0, 0, 1, 1])
    >>> model = LogisticRegression().fit(X, y)
    >>> scorer = DPBalancedAccuracy()
    >>> sums = scorer.contributions(model, X, y).sum(axis=0)
    >>> float(scorer.finalize(sums, len(y)))
    1.0
    """

    name = "balanced_accuracy"

    def __init__(self, classes=None):
        self.classes = classes

    def _params(self):
        return {"classes": self.classes}

    def contributions(self, estimator, X, y):
        y = _labels(y)
        classes = _fitted_classes(estimator, self.classes, who=type(self).__name__)
        k = len(classes)
        codes = _class_codes(classes, y)
        out = np.zeros((len(y), 2 * k))
        if len(y) == 0:
            return out
        correct = np.asarray(estimator.predict(X)).reshape(len(y)) == y
        rows = np.flatnonzero(codes >= 0)
        out[rows, codes[rows]] = correct[rows] - 0.5
        out[rows, k + codes[rows]] = 1.0
        return out

    def sensitivity(self, relation):
        if check_relation(relation) == "add_or_remove":
            return math.sqrt(5.0) / 2.0
        return math.sqrt(2.5)

    def finalize(self, sums, n_rows=None):
        sums = np.asarray(sums, dtype=float).reshape(-1)
        if sums.size % 2 or sums.size < 4:
            raise ValueError(
                f"DPBalancedAccuracy.finalize needs 2 * n_classes sums, got {sums.size}.")
        k = sums.size // 2
        centred, counts = sums[:k], sums[k:]
        recall = np.clip(centred / np.maximum(counts, 1.0) + 0.5, 0.0, 1.0)
        present = counts >= 0.5
        if not present.any():
            return 1.0 / k
        return float(recall[present].mean())


class DPLogLoss(_CountedMean):
    """Negative log-loss from a noisy sum of clipped per-row losses, over a noisy count.

    A row of label ``y`` contributes ``(min(-log p_y, L) - L/2, L/2)``, with
    ``p_y`` the estimator's ``predict_proba`` for its label and ``L =
    max_loss``: probabilities are clipped below at ``exp(-L)`` (a label
    outside ``estimator.classes_`` has probability 0, loss ``L``); the
    second column is the row's share of a DP count of the validation rows
    (their number is private under add-or-remove). The score is ``-clip(L/2
    + S / max(N, 1), 0, L)``, ``S`` the first noisy sum and ``N`` the second
    over ``L/2``, scikit-learn's ``neg_log_loss`` convention (greater is
    better); on exact sums it is ``-log_loss`` with the probabilities
    clipped at ``exp(-L)``.

    L2 sensitivity of the two sums:

    * ``"add_or_remove"``: ``L sqrt(2)/2``;
    * ``"replace_one"``: ``L`` (the count does not move).

    Parameters
    ----------
    max_loss : float > 0, default=log(1000) ~ 6.91
        The clip ``L`` of a row's loss. The noise grows with ``L`` and the
        clipping biases the losses above it. ``log(1000)`` (probabilities
        below 1e-3 counted as 1e-3) is 10 times the binary chance loss
        ``log 2``: a candidate that is confidently wrong still scores far
        below one that hedges, while the noise on the mean loss stays
        about ``L / sqrt(2) / n`` per unit of noise multiplier (0.005 for
        1000 rows), plus the count's share.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skdpx.model_selection import DPLogLoss
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array([0, 0, 1, 1])
    >>> model = LogisticRegression().fit(X, y)
    >>> scorer = DPLogLoss()
    >>> sums = scorer.contributions(model, X, y).sum(axis=0)
    >>> round(float(scorer.finalize(sums)), 3)
    -0.348
    >>> scorer.sensitivity("replace_one") == scorer.max_loss
    True
    """

    name = "neg_log_loss"

    def __init__(self, max_loss=math.log(1000.0)):
        self.max_loss = max_loss

    def _params(self):
        return {"max_loss": self.max_loss}

    def _loss_cap(self):
        L = self.max_loss
        if isinstance(L, bool) or not isinstance(L, Real) or not (0 < L < math.inf):
            raise ValueError(f"DPLogLoss: max_loss must be a finite number > 0, got {L!r}.")
        return float(L)

    def _range(self):
        return 0.0, self._loss_cap()

    def _score(self, mean):
        return -mean

    def _unscore(self, score):
        return -score

    def _values(self, estimator, X, y):
        L = self._loss_cap()
        y = _labels(y)
        classes = _fitted_classes(estimator, None, who=type(self).__name__)
        proba = np.asarray(estimator.predict_proba(X), dtype=float)
        if proba.shape != (len(y), len(classes)):
            raise ValueError(
                f"DPLogLoss: predict_proba returned shape {proba.shape}, expected "
                f"{(len(y), len(classes))} (one column per classes_).")
        codes = _class_codes(classes, y)
        p = np.where(codes >= 0, proba[np.arange(len(y)), np.maximum(codes, 0)], 0.0)
        loss = -np.log(np.clip(p, math.exp(-L), 1.0))
        return np.minimum(loss, L)


def _check_weight(value, name, who):
    if isinstance(value, bool) or not isinstance(value, Real) or not (0 <= value < math.inf):
        raise ValueError(f"{who}: {name} must be a finite number >= 0, got {value!r}.")
    return float(value)


class _BoundedUtility(_CountedMean):
    """A per-row utility ``u = success - w * cost`` in ``[-w, 1]``, ``cost`` in [0, 1].

    A failure counts ``cost = 1`` (``u = -w``). Contributions ``(u - (1 -
    w)/2, (1 + w)/2)`` (the centred utility, ``|.| <= (1 + w)/2``, and the
    row's share of a DP count of the validation rows): sensitivity ``(1 +
    w) sqrt(2)/2`` add-or-remove, ``1 + w`` replace-one. The score is the
    mean utility over the noisy count, ``(1 - w)/2 + S / max(N, 1)``
    clipped to ``[-w, 1]`` (:class:`_CountedMean`). With a public
    ``X_query`` the scorer is public: the mean utility on it, no noise.
    """

    _weight_name = None

    def _w(self):
        return _check_weight(getattr(self, self._weight_name), self._weight_name,
                             type(self).__name__)

    @property
    def public(self):
        return self.X_query is not None

    def _utilities(self, estimator, X):
        raise NotImplementedError

    def _utility(self, estimator, X):
        w = self._w()
        success, cost = self._utilities(estimator, X)
        cost = np.where(success, np.clip(np.nan_to_num(cost, nan=1.0), 0.0, 1.0), 1.0)
        return success.astype(float) - w * cost

    def _range(self):
        return -self._w(), 1.0

    def _values(self, estimator, X, y=None):
        return self._utility(estimator, X)

    def contributions(self, estimator, X, y=None):
        return super().contributions(estimator, X, y)

    def public_score(self, estimator):
        if self.X_query is None:
            raise NotImplementedError(
                f"{type(self).__name__} without X_query scores private rows (public=False): "
                "it has no public_score.")
        return float(np.mean(self._utility(estimator, self.X_query)))


class DPCounterfactualScore(_BoundedUtility):
    """Flip ratio and distance of a :class:`~skdpx.counterfactual.DPCounterfactualGenerator`.

    For each query ``q`` the generator's :meth:`explain` returns a
    counterfactual ``c`` (valid when the black box gives it the desired
    class). Its utility is ``u = valid - distance_weight * dist`` with
    ``dist = ||c - q|| / sqrt(d)``, both points clipped to the public
    ``bounds_`` and scaled into the unit cube (so ``dist`` is in [0, 1]);
    an invalid counterfactual counts ``dist = 1``. The score is the mean
    utility: the flip ratio minus ``distance_weight`` times the mean
    normalised distance (1 for each failure), in ``[-distance_weight, 1]``.

    Two ways to score:

    * ``X_query=None`` (private): the queries are the private validation
      rows. Each row contributes ``(u - (1 - w)/2, (1 + w)/2)`` (``w`` the
      ``distance_weight``): the centred utility, ``|.| <= (1 + w)/2``, and
      the row's share of a DP count of the validation rows (their number
      is private under add-or-remove); the privacy core adds Gaussian noise
      to the two sums. The generator's :meth:`explain` is post-processing
      of its DP fit, and each row's utility depends on that row only (the
      fitted generator, the public black box and bounds). L2 sensitivity of
      the sums:

      - ``"add_or_remove"``: ``(1 + w) sqrt(2)/2``;
      - ``"replace_one"``: ``1 + w`` (from a failure ``-w`` to a valid
        counterfactual at distance 0, ``1``; the count does not move).

      ``finalize`` returns ``(1 - w)/2 + S / max(N, 1)`` clipped to
      ``[-w, 1]``, ``N`` the noisy count (the second sum over ``(1 +
      w)/2``). One combined utility needs less noise than the pair (valid,
      distance): ``(1 + w)/2 <= sqrt((1 + w^2)/2)``.
    * ``X_query`` given (public, ``public=True``): the mean utility over
      these public queries, from the DP generator and the public black box
      only: post-processing, no noise, no private row read.

    Parameters
    ----------
    distance_weight : float >= 0, default=0.5
        ``w``: how much a unit of normalised distance costs against a
        flip. With 0.5, a valid counterfactual anywhere in the box still
        beats a failure by at least 1.
    X_query : array-like or None, default=None
        Public queries; None scores the private validation rows.
    desired_class : "opposite", label or None, default=None
        Passed to :meth:`explain` (None: the generator's ``desired_class``).

    Examples
    --------
    >>> from skdpx.model_selection import DPCounterfactualScore
    >>> scorer = DPCounterfactualScore(distance_weight=0.5)
    >>> scorer.public, round(scorer.sensitivity("add_or_remove"), 4), scorer.sensitivity("replace_one")
    (False, 1.0607, 1.5)
    >>> scorer.finalize([0.0, 7.5])  # noise-free sums of 10 rows at the centre (count 10 x 0.75)
    0.25
    """

    name = "counterfactual"
    _weight_name = "distance_weight"

    def __init__(self, distance_weight=0.5, X_query=None, desired_class=None):
        self.distance_weight = distance_weight
        self.X_query = X_query
        self.desired_class = desired_class

    def _params(self):
        return {"distance_weight": self.distance_weight, "X_query": self.X_query,
                "desired_class": self.desired_class}

    def _utilities(self, estimator, X):
        result = estimator.explain(X, desired_class=self.desired_class)
        cube = BoundsScaler(*estimator.bounds_)  # (a constant feature: no distance)
        q, c = cube.transform(result.queries), cube.transform(result.counterfactuals)
        valid = np.asarray(result.valid, dtype=bool) & ~np.isnan(result.counterfactuals).any(axis=1)
        d = max(q.shape[1], 1)
        dist = np.linalg.norm(np.where(valid[:, None], c - q, 0.0), axis=1) / math.sqrt(d)
        return valid, dist


class DPRecourseScore(_BoundedUtility):
    """Success rate and path cost of a :class:`~skdpx.recourse.PrivRecourse`.

    For each query, :meth:`~skdpx.recourse.PrivRecourse.explain` returns a
    path (the query, then the centres it visits, then the counterfactual)
    and whether it succeeds. The path cost is its length in the unit cube
    of the public ``bounds_`` (every point clipped to them), over the
    cube's diagonal ``sqrt(d)``, capped at 1; a failure costs 1, a query
    already favourable 0. The utility is ``u = success - cost_weight *
    cost``, the score its mean: the success rate minus ``cost_weight``
    times the mean normalised cost, in ``[-cost_weight, 1]``. (The paths'
    own ``cost``, weighted by the density of the centres, has no public
    bound; the length in the unit cube has.)

    Two ways to score:

    * ``X_query=None`` (private): the queries are the private validation
      rows. Each row contributes ``(u - (1 - w)/2, (1 + w)/2)`` (``w`` the
      ``cost_weight``; the second column is the row's share of a DP count
      of the validation rows), and the privacy core adds Gaussian noise to
      the two sums. The recourse of a query is post-processing of the DP
      fit, and depends on that query only. L2 sensitivity of the sums:

      - ``"add_or_remove"``: ``(1 + w) sqrt(2)/2``;
      - ``"replace_one"``: ``1 + w`` (the count does not move).

      ``finalize`` returns ``(1 - w)/2 + S / max(N, 1)`` clipped to
      ``[-w, 1]``, ``N`` the noisy count (the second sum over ``(1 + w)/2``).
    * ``X_query`` given (public, ``public=True``): the mean utility over
      these public queries, no noise.

    Parameters
    ----------
    cost_weight : float >= 0, default=0.5
        ``w``: how much a unit of normalised path length costs against a
        success.
    X_query : array-like or None, default=None
        Public queries; None scores the private validation rows.

    Examples
    --------
    >>> from skdpx.model_selection import DPRecourseScore
    >>> scorer = DPRecourseScore(cost_weight=1.0)
    >>> round(scorer.sensitivity("add_or_remove"), 4), scorer.sensitivity("replace_one")
    (1.4142, 2.0)
    """

    name = "recourse"
    _weight_name = "cost_weight"

    def __init__(self, cost_weight=0.5, X_query=None):
        self.cost_weight = cost_weight
        self.X_query = X_query

    def _params(self):
        return {"cost_weight": self.cost_weight, "X_query": self.X_query}

    def _utilities(self, estimator, X):
        result = estimator.explain(X)
        success = np.asarray(result.success, dtype=bool)
        paths = result.paths
        sizes = np.array([len(p) for p in paths])  # one entry per query (a list of paths)
        n = len(paths)
        if n == 0:
            return success, np.zeros(0)
        points = BoundsScaler(*estimator.bounds_).transform(np.concatenate(paths, axis=0))
        steps = np.linalg.norm(np.diff(points, axis=0), axis=1)
        # the step from one path's last point to the next path's first is no step
        owner = np.repeat(np.arange(n), sizes)
        same = owner[1:] == owner[:-1]
        length = np.bincount(owner[1:][same], weights=steps[same], minlength=n)
        d = max(points.shape[1], 1)
        return success, length / math.sqrt(d)


class DPLimeFidelity(DPScorer):
    """Fidelity of a :class:`~skdpx.explain.DPLimeExplainer`'s explanations on public queries.

    The explainer explains the public queries ``X_query`` (DP releases:
    what that spends is :meth:`planned_event`); the fidelity is then
    computed from those releases, the public black box and public points
    only, so it is post-processing: no noise, no private row read
    (``public = True``).

    The fidelity is the share of the black box's local variation that the
    explanations capture, in the explainer's own terms: at each query
    ``z`` with explanation ``phi`` (in the unit cube of the public bounds,
    label units), the explainer's local loss

        ``L(phi, z) = sum_x a(||x - z||) (phi . (x - z) - y_z(x))^2``

    over the public reference points ``x`` (``X_reference``, default
    ``X_query``), with ``y_z(x)`` the explainer's labels of the black box
    (``2 P(k | x) - 1`` for the explained class ``k``, the indicator, or a
    regressor's centred output: :mod:`skdpx.explain._outputs`) and a FIXED
    weight ``a`` (the same for every candidate of a search, so their
    scores compare), and::

        fidelity = 1 - sum_z L(phi_z, z) / sum_z L(0, z)

    1 when the local linear models reproduce the labels, 0 for no
    explanation at all (``phi = 0``), negative for explanations worse than
    none. It is :func:`skdpx.metrics.explanation_loss`'s loss, measured on
    public points instead of the private explanation rows.

    Privacy: no sum over private rows is released, so there is no
    sensitivity to state under either relation (:meth:`sensitivity` is not
    defined). What the score costs is the explanations of ``X_query``:
    every candidate of a search explains them anew, through its own ledger
    (each answer at most ``epsilon_per_query``, all of them within the
    explainer's ``epsilon``), and :meth:`planned_event` bounds that spend
    with one RDP-computable Gaussian event. Keep ``X_query`` small and
    ``X_reference`` large: reference points are free.

    Parameters
    ----------
    X_query : array-like or DataFrame of shape (n_queries, n_features)
        The public queries explained (as :meth:`DPLimeExplainer.explain`
        takes them).
    X_reference : array-like or None, default=None
        Public points at which the black box is compared with the local
        models; None: ``X_query``. More points cost nothing (the black box
        is public); more queries cost budget.
    target_class : label or None, default=None
        Passed to :meth:`DPLimeExplainer.explain`.
    kernel_width : float or None, default=None
        The weight ``a``: None, the paper's stable weight with ``c = 1``
        and radius 1 (the default of :func:`skdpx.metrics.explanation_loss`);
        else ``exp(-r^2 / kernel_width^2)``, distances in the unit cube.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skdpx.explain import DPLimeExplainer
    >>> from skdpx.model_selection import DPLimeFidelity
    >>> from skdpx.privacy import PrivacyLedger, compute_epsilon
    >>> rng = np.random.RandomState(0)
    >>> X = rng.uniform(0, 1, size=(1000, 2)); y = (X[:, 0] > X[:, 1]).astype(int)
    >>> model = LogisticRegression().fit(X[:500], y[:500])  # public, or on other rows
    >>> ledger = PrivacyLedger(epsilon=2.0, delta=1e-5)
    >>> explainer = DPLimeExplainer(model, epsilon=1.0, epsilon_per_query=0.5, max_iter=20,
    ...                             bounds=(0, 1), accountant=ledger, random_state=0)
    >>> queries = rng.uniform(0, 1, size=(3, 2))  # public points
    >>> scorer = DPLimeFidelity(queries, X_reference=rng.uniform(0, 1, size=(200, 2)))
    >>> plan = scorer.planned_event(explainer, n_rows=500, relation="add_or_remove")
    >>> round(compute_epsilon(plan, 1e-6), 2)  # 3 answers at 0.5, under the cap of 1
    0.9
    >>> fidelity = scorer.public_score(explainer.fit(X[500:]))
    >>> # the ledger: the fit's own DP row count (5% of its epsilon), then the answers
    >>> spent = ledger.epsilon_spent - explainer.n_rows_epsilon_
    >>> bool(0 < fidelity <= 1), spent <= compute_epsilon(plan, 1e-5)
    (True, True)
    """

    name = "lime_fidelity"
    public = True

    def __init__(self, X_query, X_reference=None, target_class=None, kernel_width=None):
        self.X_query = X_query
        self.X_reference = X_reference
        self.target_class = target_class
        self.kernel_width = kernel_width

    def _params(self):
        return {"X_query": self.X_query, "X_reference": self.X_reference,
                "target_class": self.target_class, "kernel_width": self.kernel_width}

    def _weight(self):
        from ..explain import stable_weight

        kw = self.kernel_width
        if kw is None:
            return stable_weight
        if isinstance(kw, bool) or not isinstance(kw, Real) or not (0 < kw < math.inf):
            raise ValueError(f"DPLimeFidelity: kernel_width must be a finite number > 0 or "
                             f"None, got {kw!r}.")
        return lambda r: np.exp(-(np.asarray(r) / kw) ** 2)

    def planned_event(self, estimator, n_rows, relation):
        """What explaining ``X_query`` spends, at most (``DPLimeExplainer._plan_queries``).

        A Gaussian event of as many steps as ``len(X_query)`` answers can
        take, capped by what the explainer's own (``epsilon``, ``delta``)
        admits. With a fixed ``max_iter`` it does not depend on ``n_rows``
        or ``relation`` (the noise is calibrated per unit of the sensitivity
        under the ledger's relation); with ``max_iter=None`` the steps of an
        answer are those of the explainer's last plan (a search plans each
        candidate with ``n_rows`` first; an explainer neither planned nor
        fitted raises ``ValueError``).
        """
        check_relation(relation)
        self._check_explainer(estimator)
        return estimator._plan_queries(num_rows(self.X_query))

    def _check_explainer(self, estimator):
        if not (isinstance(estimator, DPEstimator)
                and estimator._dp_capabilities.answers_queries):
            raise ValueError(f"DPLimeFidelity scores a DPLimeExplainer, got "
                             f"{type(estimator).__name__}.")

    def public_score(self, estimator):
        from ..explain._local_loss import local_loss, local_loss_terms
        from ..explain._outputs import row_labels, unit_scale
        from ..utils._tables import validate_table

        self._check_explainer(estimator)
        weight = self._weight()
        if estimator.estimator is None or not estimator._is_curator():
            raise ValueError(
                "DPLimeFidelity compares the explanations with the black box: the explainer "
                "needs one (estimator=...) and must be fitted, not released.")
        result = estimator.explain(self.X_query, target_class=self.target_class)
        scaler = estimator._scaler()
        lower, upper = estimator.bounds_
        width = np.asarray(upper, dtype=float) - np.asarray(lower, dtype=float)
        unit = unit_scale(estimator.output_, estimator.output_bounds_)
        # the explanations back in the unit cube, label units (explain's inverse map)
        phi = np.asarray(result.values, dtype=float) * np.where(width > 0, width, 0.0) / unit
        Xq = validate_table(estimator, self.X_query, reset=False)
        Xr = Xq if self.X_reference is None else validate_table(
            estimator, self.X_reference, reset=False)
        Z, R = scaler.transform(Xq), scaler.transform(Xr)
        columns, offsets, _ = estimator._query_targets(Xq, self.target_class)
        labels = row_labels(estimator.output_, getattr(estimator, "classes_", None),
                            estimator.output_bounds_, estimator.estimator,
                            estimator.schema_.decode(Xr, *estimator.bounds_))
        loss = np.empty(len(Z))
        zero = np.empty(len(Z))
        for col in np.unique(columns):  # the few explained classes, not the rows
            rows = np.flatnonzero(columns == col)
            H, g, s = local_loss_terms(Z[rows], R, labels[:, col], weight=weight,
                                       offset=offsets[rows])
            loss[rows], zero[rows] = local_loss(phi[rows], H, g, s), s
        total, base = float(loss.sum()), float(zero.sum())
        if base <= 0.0:
            return 1.0 if total <= 0.0 else 0.0
        return 1.0 - total / base



class DPShapFidelity(DPScorer):
    """Agreement of a :class:`~skdpx.explain.DPShapExplainer`'s SHAP values with a public background's.

    The explainer's SHAP values of the public queries ``X_query`` (with its
    DP background) are compared with the SHAP values the same engine gives
    with the public reference rows ``X_reference`` as the background
    (uniform weights: a public sample of the population, or rows whose
    owners consented), with the same coalitions (so that their sampling
    cancels)::

        fidelity = 1 - sum_q ||phi_q - phi_ref_q||^2 / sum_q ||phi_ref_q||^2

    1 when the DP background explains the queries as the reference does, 0
    for no explanation at all (``phi = 0``), negative for worse than none.
    The SHAP values are post-processing of the DP background (explaining
    spends nothing) and the reference is public, so the score is public
    (``public = True``): no noise, no private row read, nothing spent, and
    no sensitivity to state (:meth:`sensitivity` is not defined).

    The coalitions, when ``2^g - 2`` exceeds the explainer's
    ``n_coalitions`` (``g`` original columns), are a fixed public design
    (an unscrambled Sobol sequence), the same for every candidate of a
    search, so that their scores compare.

    Parameters
    ----------
    X_query : array-like or DataFrame of shape (n_queries, n_features)
        The public queries explained (complete records, as
        :meth:`DPShapExplainer.explain` takes them).
    X_reference : array-like or DataFrame of shape (n_reference, n_features)
        The public reference background (complete records). Its cost is
        time: each query is scored against every reference row at every
        coalition.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from skdpx.explain import DPShapExplainer
    >>> from skdpx.model_selection import DPShapFidelity
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 1, (6000, 3))
    >>> model = LinearRegression().fit(X[:3000], X[:3000] @ [1.0, -2.0, 0.5])
    >>> explainer = DPShapExplainer(model, n_background=10, bounds=(0, 1),
    ...                             epsilon=1.0).fit(X[3000:5000])
    >>> scorer = DPShapFidelity(X[5000:5020], X_reference=X[5020:5520])
    >>> scorer.public, bool(0.3 < scorer.public_score(explainer) <= 1.0)
    (True, True)
    """

    name = "shap_fidelity"
    public = True

    def __init__(self, X_query, X_reference):
        self.X_query = X_query
        self.X_reference = X_reference

    def _params(self):
        return {"X_query": self.X_query, "X_reference": self.X_reference}

    def planned_event(self, estimator, n_rows, relation):
        """None: explaining spends nothing (post-processing of the background)."""
        check_relation(relation)
        self._check_explainer(estimator)
        return None

    @staticmethod
    def _check_explainer(estimator):
        from ..explain import DPShapExplainer

        if not isinstance(estimator, DPShapExplainer):
            raise ValueError(f"DPShapFidelity scores a DPShapExplainer, got "
                             f"{type(estimator).__name__}.")

    def public_score(self, estimator):
        from sklearn.utils.validation import check_is_fitted

        from ..utils._tables import validate_table

        self._check_explainer(estimator)
        check_is_fitted(estimator, "background_")
        Zq = np.asarray(validate_table(estimator, self.X_query, reset=False), dtype=float)
        Zr = np.asarray(validate_table(estimator, self.X_reference, reset=False), dtype=float)
        for what, Z in (("X_query", Zq), ("X_reference", Zr)):
            if len(Z) == 0 or not np.isfinite(Z).all():
                raise ValueError(f"DPShapFidelity: {what} must hold complete records (at least "
                                 "one, no missing or infinite value).")
        values, ref = estimator._against_reference(Zq, Zr)
        base = float((ref ** 2).sum())
        total = float(((values - ref) ** 2).sum())
        if base <= 0.0:
            return 1.0 if total <= 0.0 else 0.0
        return 1.0 - total / base

#: The scorers :func:`get_dp_scorer` knows by name.
_SCORERS = {
    "accuracy": DPAccuracy,
    "balanced_accuracy": DPBalancedAccuracy,
    "counterfactual": DPCounterfactualScore,
    "neg_log_loss": DPLogLoss,
    "recourse": DPRecourseScore,
}


def get_dp_scorer(scoring, estimator=None):
    """A :class:`DPScorer` from a name, an instance, or None.

    Parameters
    ----------
    scoring : str, DPScorer or None
        A name (``"accuracy"``, ``"balanced_accuracy"``, ``"neg_log_loss"``,
        ``"counterfactual"``, ``"recourse"``) gives that scorer with its
        default parameters; a :class:`DPScorer` is returned as is; None
        gives the estimator's default, as its class declares it
        (``_dp_capabilities.default_scoring``, :class:`skdpx.base.DPCapabilities`):
        :class:`DPCounterfactualScore` for a ``DPCounterfactualGenerator``,
        :class:`DPRecourseScore` for ``PrivRecourse``, else :class:`DPAccuracy`
        for a classifier. A ``DPLimeExplainer`` has none:
        :class:`DPLimeFidelity` needs the public queries.
    estimator : estimator or None, default=None
        Needed only when ``scoring`` is None.

    Returns
    -------
    DPScorer

    Raises
    ------
    ValueError
        For an unknown name, a callable or other object (scikit-learn's
        scorers compute exact scores: a private search cannot use them), or
        None with an estimator that has no default.

    Examples
    --------
    >>> from skdpx.model_selection import get_dp_scorer
    >>> get_dp_scorer("balanced_accuracy")
    DPBalancedAccuracy(classes=None)
    """
    if isinstance(scoring, DPScorer):
        return scoring
    if isinstance(scoring, str):
        if scoring in _SCORERS:
            return _SCORERS[scoring]()
        if scoring == DPLimeFidelity.name:
            raise ValueError(
                "'lime_fidelity' needs the public queries: pass "
                "scoring=DPLimeFidelity(X_query).")
        raise ValueError(
            f"Unknown DP scoring {scoring!r}: use one of {sorted(_SCORERS)} "
            "or a DPScorer instance.")
    if scoring is None:
        # the estimator's class declares its default (skdpx.base.DPCapabilities)
        caps = estimator._dp_capabilities if isinstance(estimator, DPEstimator) else None
        if caps is not None and caps.default_scoring is not None:
            return _SCORERS[caps.default_scoring]()
        if caps is not None and caps.no_default_scoring is not None:
            raise ValueError(f"{type(estimator).__name__} has no default DP scoring: "
                             f"{caps.no_default_scoring}")
        if estimator is not None and is_classifier(estimator):
            return DPAccuracy()
        raise ValueError(
            f"No default DP scoring for {type(estimator).__name__}: pass scoring= one of "
            f"{sorted(_SCORERS)} or a DPScorer instance.")
    raise ValueError(
        f"scoring must be None, one of {sorted(_SCORERS)} or a DPScorer instance, got "
        f"{scoring!r}. scikit-learn scorers and callables compute exact scores from the "
        "private rows and cannot be used by a private search.")
