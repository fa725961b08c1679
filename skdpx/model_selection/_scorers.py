"""Differentially private scorers for private model selection.

A :class:`DPScorer` turns a fitted estimator and private validation rows
into a score in two steps, the way the privacy core wants it:

1. :meth:`DPScorer.contributions` computes each row's EXACT contribution
   vector (clipped and centred, so that the column sums have a stated L2
   sensitivity). This never leaves the search: the privacy core adds
   Gaussian noise to the column sums, calibrated to
   :meth:`DPScorer.sensitivity`.
2. :meth:`DPScorer.finalize` maps the NOISY sums (and the public number of
   validation rows) to the score. It only post-processes a DP release, so
   it costs nothing; it must be robust to the noise (clip to the score's
   range, never divide by a noisy value near zero).

No noise is drawn here: the scorers compute exact statistics, the core
(``skdpx.privacy``) releases them.
"""

import math
from numbers import Real

import numpy as np

from .._sklearn_compat import is_classifier
from ..privacy import RELATIONS

__all__ = [
    "DPAccuracy",
    "DPBalancedAccuracy",
    "DPLogLoss",
    "DPScorer",
    "get_dp_scorer",
]


def _check_relation(relation):
    if relation not in RELATIONS:
        raise ValueError(f"relation must be one of {RELATIONS}, got {relation!r}.")
    return relation


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
    * :meth:`finalize` maps the noisy sums and the public number of rows to
      the score. It is post-processing of a DP release (free), and is made
      robust to the noise: clipped to the score's range, no division by a
      noisy quantity near zero.
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

    def finalize(self, sums, n_rows):
        """The score from the noisy column sums (post-processing).

        Parameters
        ----------
        sums : array-like of shape (n_stats,)
            The column sums of :meth:`contributions`, with the core's noise.
        n_rows : int
            The (public) number of validation rows.

        Returns
        -------
        float
        """
        raise NotImplementedError(f"{type(self).__name__} does not score private rows.")

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
        n_rows : int
            The public number of rows it is fitted on.
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
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            if not np.array_equal(np.asarray(x, dtype=object), np.asarray(y, dtype=object)):
                return False
        elif x != y:
            return False
    return True


class DPAccuracy(DPScorer):
    """Accuracy from a Gaussian-noised count of correct predictions.

    Each validation row contributes ``correct - 1/2`` (``correct`` is 1 if
    ``estimator.predict`` returns its label, else 0). The score is
    ``(sum + n/2) / n`` clipped to ``[0, 1]``, ``n`` the public number of
    rows; on exact sums it is scikit-learn's ``accuracy_score``.

    Sensitivity of the sum (L2 = absolute value, one statistic):

    * ``"add_or_remove"``: 1/2 (one row's ``|correct - 1/2|``);
    * ``"replace_one"``: 1 (from ``-1/2`` to ``+1/2``).

    Centring at 1/2 halves the add-or-remove sensitivity of a plain count.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skdpx.model_selection import DPAccuracy
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array([0, 0, 1, 1])
    >>> model = LogisticRegression().fit(X, y)
    >>> scorer = DPAccuracy()
    >>> sums = scorer.contributions(model, X, y).sum(axis=0)  # the core adds noise here
    >>> float(scorer.finalize(sums, len(y)))
    1.0
    >>> scorer.sensitivity("add_or_remove"), scorer.sensitivity("replace_one")
    (0.5, 1.0)
    """

    name = "accuracy"

    def contributions(self, estimator, X, y):
        y = _labels(y)
        correct = np.asarray(estimator.predict(X)).reshape(len(y)) == y
        return (correct.astype(float) - 0.5)[:, None]

    def sensitivity(self, relation):
        return 0.5 if _check_relation(relation) == "add_or_remove" else 1.0

    def finalize(self, sums, n_rows):
        s = float(np.asarray(sums, dtype=float).reshape(-1)[0])
        n = max(int(n_rows), 1)
        return float(np.clip((s + n_rows / 2.0) / n, 0.0, 1.0))


class DPBalancedAccuracy(DPScorer):
    """Balanced accuracy (mean recall over the classes), from noisy per-class sums.

    A row of true class ``k`` contributes, in class ``k``'s slots,
    ``correct - 1/2`` to the correct-count statistic and ``1`` to the
    count statistic; every other slot is 0. The ``2 * n_classes`` sums are
    ``[correct_0 - count_0/2, ..., count_0, ...]``. The score is the mean,
    over the classes whose noisy count is at least 1/2, of
    ``clip(s_k / max(count_k, 1) + 1/2, 0, 1)``; on exact sums it is
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
        correct = np.asarray(estimator.predict(X)).reshape(len(y)) == y
        out = np.zeros((len(y), 2 * k))
        rows = np.flatnonzero(codes >= 0)
        out[rows, codes[rows]] = correct[rows] - 0.5
        out[rows, k + codes[rows]] = 1.0
        return out

    def sensitivity(self, relation):
        if _check_relation(relation) == "add_or_remove":
            return math.sqrt(5.0) / 2.0
        return math.sqrt(2.5)

    def finalize(self, sums, n_rows):
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


class DPLogLoss(DPScorer):
    """Negative log-loss from a noisy sum of clipped per-row losses.

    A row of label ``y`` contributes ``min(-log p_y, L) - L/2``, with
    ``p_y`` the estimator's ``predict_proba`` for its label and ``L =
    max_loss``: probabilities are clipped below at ``exp(-L)`` (a label
    outside ``estimator.classes_`` has probability 0, loss ``L``). The score
    is ``-clip((sum + n L/2) / n, 0, L)``, scikit-learn's ``neg_log_loss``
    convention (greater is better); on exact sums it is ``-log_loss`` with
    the probabilities clipped at ``exp(-L)``.

    Sensitivity of the sum (one statistic):

    * ``"add_or_remove"``: ``L/2``;
    * ``"replace_one"``: ``L``.

    Parameters
    ----------
    max_loss : float > 0, default=log(1000) ~ 6.91
        The clip ``L`` of a row's loss. The noise grows with ``L`` and the
        clipping biases the losses above it. ``log(1000)`` (probabilities
        below 1e-3 counted as 1e-3) is 10 times the binary chance loss
        ``log 2``: a candidate that is confidently wrong still scores far
        below one that hedges, while the noise on the mean loss stays
        ``L/2 / n`` per unit of noise multiplier (0.003 for 1000 rows).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skdpx.model_selection import DPLogLoss
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array([0, 0, 1, 1])
    >>> model = LogisticRegression().fit(X, y)
    >>> scorer = DPLogLoss()
    >>> sums = scorer.contributions(model, X, y).sum(axis=0)
    >>> round(float(scorer.finalize(sums, len(y))), 3)
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

    def contributions(self, estimator, X, y):
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
        return (np.minimum(loss, L) - L / 2.0)[:, None]

    def sensitivity(self, relation):
        L = self._loss_cap()
        return L / 2.0 if _check_relation(relation) == "add_or_remove" else L

    def finalize(self, sums, n_rows):
        L = self._loss_cap()
        s = float(np.asarray(sums, dtype=float).reshape(-1)[0])
        n = max(int(n_rows), 1)
        return -float(np.clip((s + n_rows * L / 2.0) / n, 0.0, L))


#: The scorers :func:`get_dp_scorer` knows by name.
_SCORERS = {
    "accuracy": DPAccuracy,
    "balanced_accuracy": DPBalancedAccuracy,
    "neg_log_loss": DPLogLoss,
}


def get_dp_scorer(scoring, estimator=None):
    """A :class:`DPScorer` from a name, an instance, or None.

    Parameters
    ----------
    scoring : str, DPScorer or None
        A name (``"accuracy"``, ``"balanced_accuracy"``, ``"neg_log_loss"``)
        gives that scorer with its default parameters; a :class:`DPScorer`
        is returned as is; None gives the estimator's default (accuracy for
        a classifier).
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
        raise ValueError(
            f"Unknown DP scoring {scoring!r}: use one of {sorted(_SCORERS)} "
            "or a DPScorer instance.")
    if scoring is None:
        if estimator is not None and is_classifier(estimator):
            return DPAccuracy()
        raise ValueError(
            f"No default DP scoring for {type(estimator).__name__}: pass scoring= one of "
            f"{sorted(_SCORERS)} or a DPScorer instance.")
    raise ValueError(
        f"scoring must be None, one of {sorted(_SCORERS)} or a DPScorer instance, got "
        f"{scoring!r}. scikit-learn scorers and callables compute exact scores from the "
        "private rows and cannot be used by a private search.")
