"""Attribute inference through a membership signal (Yeom et al., 2018).

The attacker knows a person's other features and label, not the value of
one sensitive feature. It tries every candidate value, scores the completed
row with a membership signal (the model's loss, an explanation, a
counterfactual distance ...) and guesses the value whose row looks most like
a training row. Done on members and on non-members of the private data, the
difference of the two accuracies is what the model learnt about its own
training rows beyond the population: the leakage differential privacy
bounds (paper 003, Fig. 6).

Evaluation only: no estimator depends on this module.
"""

import math
from numbers import Integral

import numpy as np
from sklearn.utils import check_array, check_random_state

from ..results._base import _dump_json, _import_optional, _jsonable, _load_json, _new_axes

__all__ = ["AttributeInferenceResult", "attribute_inference"]


def _score_rows(target, X, y, signal, queries, random_state):
    """The membership signal of every row, higher = more member-like (sent in a random order)."""
    from ._signals import score_rows

    return np.asarray(score_rows(target, X, y, signal, queries=queries,
                                 random_state=random_state), dtype=float)


def _columns(feature, n_features, names):
    """The column indices of ``feature`` (an index or name, or a list of them)."""
    items = [feature] if isinstance(feature, (Integral, str)) else list(feature)
    if not items:
        raise ValueError("feature must be a column index or a non-empty list of indices")
    cols = []
    for item in items:
        if isinstance(item, str):
            if names is None or item not in names:
                raise ValueError(f"feature {item!r} is not a column name of the data")
            item = names.index(item)
        if isinstance(item, bool) or not isinstance(item, Integral) \
                or not 0 <= item < n_features:
            raise ValueError(f"feature {item!r} is not a column index in [0, {n_features})")
        cols.append(int(item))
    if len(set(cols)) != len(cols):
        raise ValueError(f"feature lists a column twice: {cols}")
    return cols


def _match(rows, candidates):
    """The index of each row among the candidate values, -1 if none."""
    eq = np.all(np.isclose(rows[:, None, :], candidates[None, :, :]), axis=2)
    return np.where(eq.any(axis=1), eq.argmax(axis=1), -1)


def attribute_inference(target, X_members, y_members, X_non_members, y_non_members, *,
                        feature, values=None, signal="loss", queries=None, prior=False,
                        random_state=0):
    """Guess a sensitive feature from the other features, the label and a membership signal.

    For every row and every candidate value of ``feature``, the row is
    completed with the candidate and scored with the membership ``signal``
    of ``target``; the guess is the candidate whose row scores highest (ties
    go to the most common value). The accuracy on members minus the accuracy
    on non-members is the attack's advantage: how much better the target
    reveals the attribute of its own private rows than of other people's.

    Parameters
    ----------
    target : fitted estimator
        What the signal reads: a classifier (``"loss"``, ``"confidence"``), an
        explainer (``"explanation"``, ``"counterfactual_distance"``,
        ``"recourse_distance"``), or a surrogate extracted from the
        explanations (``ExtractionResult.surrogate(...)``, as paper 003
        infers attributes through f').
    X_members, X_non_members : array-like or DataFrame of shape (n, n_features)
        Rows of the target's private data and rows it never saw. Their value
        of ``feature`` is the truth to guess; the attacker uses only the
        other columns.
    y_members, y_non_members : array-like of shape (n,)
        Their labels (known to the attacker).
    feature : int, str or list of them
        The sensitive feature: a column index (or name, for DataFrames), or
        the columns of a one-hot block, whose levels are then the candidates.
    values : array-like, default=None
        The candidate values: one value per candidate for a single column, a
        (n_candidates, len(feature)) array for a block. None means the
        distinct values (rows of the block) found in the given rows, the
        feature's domain (with a block's all-zero row, e.g. a missing
        category, when it occurs). Every row's true value must be a
        candidate.
    signal : str or callable, default="loss"
        A membership signal of ``skdpx.attacks._signals.score_rows``
        (higher = more member-like): "loss", "confidence", "explanation",
        "explanation_norm", "counterfactual_distance",
        "recourse_distance", or a callable ``signal(target, X, y)``.
    queries : array-like, default=None
        Passed to the signal ("recourse_distance": the queries whose paths
        were released).
    prior : bool, default=False
        Add the log of each candidate's share among the given rows (the
        population's marginal, which the attacker is assumed to know) to its
        score: with ``signal="loss"`` (a log-likelihood of the label) the
        guess is then the most probable value a posteriori (Fredrikson et
        al., 2014) instead of the most label-confident one. Meaningful only
        for signals on a log-probability scale.
    random_state : int, RandomState instance or None, default=0
        The random order in which the rows are sent to the target (members
        come first in the stack; a stateful target must not see that).

    Returns
    -------
    AttributeInferenceResult
        Accuracies on members and non-members, the majority-value baseline,
        the advantage, and every row's true value and guess.

    References
    ----------
    .. [1] S. Yeom, I. Giacomelli, M. Fredrikson and S. Jha, "Privacy Risk in
       Machine Learning: Analyzing the Connection to Overfitting", IEEE CSF
       2018.
    .. [2] F. Yang et al., "Differentially Private Counterfactuals via
       Functional Mechanism", 2022 (paper 003), section 5.3.3 and Fig. 6.

    Examples
    --------
    A 1-nearest-neighbour model remembers its rows, binary attribute included:

    >>> import numpy as np
    >>> from sklearn.neighbors import KNeighborsClassifier
    >>> from skdpx.attacks import attribute_inference
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(400, 3))
    >>> X[:, 0] = 2.0 * (rng.uniform(size=400) < 0.5)
    >>> y = rng.randint(2, size=400)
    >>> target = KNeighborsClassifier(n_neighbors=1).fit(X[:200], y[:200])
    >>> res = attribute_inference(target, X[:200], y[:200], X[200:], y[200:], feature=0)
    >>> bool(res.advantage > 0.1)
    True
    """
    frame_columns = getattr(X_members, "columns", None)
    names = None if frame_columns is None else [str(c) for c in frame_columns]
    Xm = check_array(X_members, dtype=float, input_name="X_members")
    Xn = check_array(X_non_members, dtype=float, input_name="X_non_members")
    if Xn.shape[1] != Xm.shape[1]:
        raise ValueError(f"X_non_members has {Xn.shape[1]} features, X_members has "
                         f"{Xm.shape[1]}")
    ym, yn = np.asarray(y_members), np.asarray(y_non_members)
    if ym.shape != (len(Xm),) or yn.shape != (len(Xn),):
        raise ValueError("y_members and y_non_members must hold one label per row of "
                         "X_members and X_non_members")
    cols = _columns(feature, Xm.shape[1], names)
    X = np.vstack([Xm, Xn])
    y = np.concatenate([ym, yn])
    observed = X[:, cols]
    if values is None:
        levels, counts = np.unique(observed, axis=0, return_counts=True)
        candidates = levels[np.argsort(-counts, kind="stable")]
    else:
        candidates = np.asarray(values, dtype=float)
        if len(cols) == 1 and candidates.ndim == 1:
            candidates = candidates[:, None]
        if candidates.ndim != 2 or candidates.shape[1] != len(cols) or len(candidates) == 0:
            raise ValueError(f"values must hold at least one candidate of {len(cols)} "
                             f"value(s), got shape {np.shape(values)}")
        if len(np.unique(candidates, axis=0)) != len(candidates):
            raise ValueError("values has a repeated candidate")
    truth = _match(observed, candidates)
    if np.any(truth < 0):
        raise ValueError(f"{int(np.sum(truth < 0))} row(s) have a value of the feature that "
                         "is not among the candidate values")
    if len(candidates) < 2:
        raise ValueError("the feature takes a single value: nothing to infer")
    # the most common value first: argmax breaks ties in its favour
    counts = np.bincount(truth, minlength=len(candidates))
    order = np.argsort(-counts, kind="stable")
    candidates, truth = candidates[order], np.argsort(order)[truth]

    scores = np.empty((len(X), len(candidates)))
    rng = check_random_state(random_state)  # the order the rows are sent in
    for k, value in enumerate(candidates):
        completed = X.copy()
        completed[:, cols] = value
        if names is not None:
            pd = _import_optional("pandas", "DataFrame input", "test")
            completed = pd.DataFrame(completed, columns=frame_columns)
        s = _score_rows(target, completed, y, signal, queries, rng)
        if s.shape != (len(X),):
            raise ValueError(f"the signal returned shape {s.shape}, expected ({len(X)},)")
        scores[:, k] = s
    if prior:
        shares = np.bincount(truth, minlength=len(candidates)) / len(truth)
        with np.errstate(divide="ignore"):
            scores = scores + np.log(shares)
    guess = np.argmax(np.where(np.isnan(scores), -np.inf, scores), axis=1)
    m = len(Xm)
    return AttributeInferenceResult(
        feature=cols, candidates=candidates,
        true_members=truth[:m], guess_members=guess[:m],
        true_non_members=truth[m:], guess_non_members=guess[m:],
        signal=signal if isinstance(signal, str) else getattr(signal, "__name__", repr(signal)),
        meta={"target": type(target).__name__, "prior": bool(prior),
              "feature_names": None if names is None else [names[c] for c in cols]})


class AttributeInferenceResult:
    """What :func:`attribute_inference` guessed, and how well.

    Parameters
    ----------
    feature : list of int
        The column(s) of the sensitive feature.
    candidates : array-like of shape (n_candidates, len(feature))
        The candidate values, the most common first (the majority value).
    true_members, guess_members : array-like of int
        Each member's true value and guess, as indices into ``candidates``.
    true_non_members, guess_non_members : array-like of int
        The same for the non-members.
    signal : str
    meta : dict, default=None
    """

    def __init__(self, *, feature, candidates, true_members, guess_members, true_non_members,
                 guess_non_members, signal, meta=None):
        self.feature = [int(c) for c in feature]
        self.candidates = np.asarray(candidates, dtype=float).reshape(-1, len(self.feature))
        k = len(self.candidates)
        fields = {}
        for name, arr in [("true_members", true_members), ("guess_members", guess_members),
                          ("true_non_members", true_non_members),
                          ("guess_non_members", guess_non_members)]:
            arr = np.asarray(arr, dtype=int).reshape(-1)
            if arr.size and (arr.min() < 0 or arr.max() >= k):
                raise ValueError(f"{name} must index the {k} candidates")
            fields[name] = arr
        if len(fields["true_members"]) != len(fields["guess_members"]) or \
                len(fields["true_non_members"]) != len(fields["guess_non_members"]):
            raise ValueError("one guess per true value is expected")
        self.__dict__.update(fields)
        self.signal = str(signal)
        self.meta = dict(meta or {})

    @staticmethod
    def _mean(a):
        return float(np.mean(a)) if len(a) else math.nan

    @property
    def accuracy_members(self):
        """The share of members whose value was guessed right."""
        return self._mean(self.guess_members == self.true_members)

    @property
    def accuracy_non_members(self):
        """The share of non-members whose value was guessed right."""
        return self._mean(self.guess_non_members == self.true_non_members)

    @property
    def advantage(self):
        """Accuracy on members minus accuracy on non-members: the leakage of
        the training rows beyond what the population reveals."""
        return self.accuracy_members - self.accuracy_non_members

    @property
    def baseline_members(self):
        """Accuracy on members of always guessing the majority value."""
        return self._mean(self.true_members == 0)

    @property
    def baseline_non_members(self):
        """Accuracy on non-members of always guessing the majority value."""
        return self._mean(self.true_non_members == 0)

    @property
    def baseline(self):
        """Accuracy on all rows of always guessing the majority value."""
        return self._mean(np.concatenate([self.true_members, self.true_non_members]) == 0)

    def summary(self):
        """The figures as a dict."""
        return {"signal": self.signal, "feature": self.feature,
                "n_candidates": len(self.candidates),
                "n_members": len(self.true_members),
                "n_non_members": len(self.true_non_members),
                "accuracy_members": self.accuracy_members,
                "accuracy_non_members": self.accuracy_non_members,
                "baseline_members": self.baseline_members,
                "baseline_non_members": self.baseline_non_members,
                "baseline": self.baseline, "advantage": self.advantage}

    def __repr__(self):
        return (f"AttributeInferenceResult(signal={self.signal!r}, "
                f"accuracy_members={self.accuracy_members:.3f}, "
                f"accuracy_non_members={self.accuracy_non_members:.3f}, "
                f"baseline={self.baseline:.3f})")

    def _params(self):
        return {"feature": self.feature, "candidates": self.candidates,
                "true_members": self.true_members, "guess_members": self.guess_members,
                "true_non_members": self.true_non_members,
                "guess_non_members": self.guess_non_members,
                "signal": self.signal, "meta": self.meta}

    def __eq__(self, other):
        if not isinstance(other, AttributeInferenceResult):
            return NotImplemented
        return _jsonable(self._params()) == _jsonable(other._params())

    def to_frame(self):
        """A pandas DataFrame, one row per attacked row: ``member``, ``true``
        and ``guess`` (indices into ``candidates``), ``correct``; the summary
        in ``attrs``."""
        pd = _import_optional("pandas", "to_frame()", "test")
        true = np.concatenate([self.true_members, self.true_non_members])
        guess = np.concatenate([self.guess_members, self.guess_non_members])
        member = np.arange(len(true)) < len(self.true_members)
        frame = pd.DataFrame({"member": member, "true": true, "guess": guess,
                              "correct": true == guess})
        frame.attrs.update(self.summary())
        return frame

    def plot(self, ax=None):
        """Bars of the accuracy on members and on non-members, each next to
        its majority-value baseline. Needs matplotlib (the ``plot`` extra);
        returns the Axes."""
        ax = _new_axes(ax)
        x = np.arange(2)
        ax.bar(x - 0.2, [self.accuracy_members, self.accuracy_non_members], width=0.4,
               label="attack")
        ax.bar(x + 0.2, [self.baseline_members, self.baseline_non_members], width=0.4,
               label="majority value")
        ax.set_xticks(x, ["members", "non-members"])
        ax.set_ylabel("accuracy")
        ax.set_title(f"{self.signal}: advantage {self.advantage:+.3f}")
        ax.legend()
        return ax

    def to_json(self, path=None, **kwargs):
        """JSON text with the summary and every guess; also written to
        ``path`` if given."""
        return _dump_json({"type": type(self).__name__, **_jsonable(self._params()),
                           "summary": _jsonable(self.summary())}, path, **kwargs)

    @classmethod
    def from_json(cls, s):
        """Rebuild from :meth:`to_json`'s text (or the path of a file holding it)."""
        return cls(**_load_json(s, cls, ignore=("summary",)))
