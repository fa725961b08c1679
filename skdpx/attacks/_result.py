"""AttackResult: the scores of a membership attack and what they show."""

import numpy as np
from sklearn.metrics import roc_auc_score, roc_curve

from ..results._base import _dump_json, _jsonable, _load_json, _new_axes
from ..privacy._audit import epsilon_from_samples

__all__ = ["AttackResult"]


class AttackResult:
    """The outcome of a membership inference attack.

    Holds one score per candidate row, higher for a row the attack takes for
    a member, and reports the attack's power the way Carlini et al. (2022)
    recommend: the whole ROC curve and the true-positive rate at a low
    false-positive rate (an attack that is sure of a few people is a privacy
    failure even with an AUC near 0.5), plus an empirical lower bound on
    epsilon.

    Parameters
    ----------
    scores_members : array-like of shape (n_members,)
        The attack's scores of the rows that were members.
    scores_non_members : array-like of shape (n_non_members,)
        The attack's scores of the rows that were not.
    signal : str, default="callable"
        The name of the signal that made the scores.
    meta : dict, default=None
        Anything else to keep with the result (the target's name, its
        epsilon, the number of shadow models ...).

    Attributes
    ----------
    scores_members, scores_non_members : ndarray
    signal : str
    meta : dict

    Examples
    --------
    >>> from skdpx.attacks import AttackResult
    >>> result = AttackResult([0.9, 0.8, 0.7, 0.2], [0.1, 0.3, 0.6, 0.75])
    >>> result.auc
    0.75
    >>> result.tpr_at_fpr(0.25), result.tpr_at_fpr(0.0)
    (0.75, 0.5)
    """

    def __init__(self, scores_members, scores_non_members, *, signal="callable", meta=None):
        self.scores_members = self._check(scores_members, "scores_members")
        self.scores_non_members = self._check(scores_non_members, "scores_non_members")
        self.signal = str(signal)
        self.meta = dict(meta or {})

    @staticmethod
    def _check(scores, name):
        scores = np.asarray(scores, dtype=float).ravel()
        if scores.size == 0:
            raise ValueError(f"{name} is empty.")
        if not np.isfinite(scores).all():
            raise ValueError(f"{name} holds NaN or infinite values.")
        return scores

    def _labels_scores(self):
        labels = np.r_[np.ones(self.scores_members.size), np.zeros(self.scores_non_members.size)]
        return labels, np.r_[self.scores_members, self.scores_non_members]

    @property
    def n_members(self):
        return self.scores_members.size

    @property
    def n_non_members(self):
        return self.scores_non_members.size

    @property
    def auc(self):
        """Area under the ROC curve (0.5: no better than a coin)."""
        return float(roc_auc_score(*self._labels_scores()))

    def roc_curve(self):
        """The ROC curve: ``(fpr, tpr, thresholds)``, as :func:`sklearn.metrics.roc_curve`.

        A row is called a member when its score is at least the threshold.
        """
        return roc_curve(*self._labels_scores(), drop_intermediate=False)

    def tpr_at_fpr(self, fpr):
        """The largest true-positive rate of a threshold whose false-positive rate is at most ``fpr``.

        Empirical: with ``n`` non-members, rates below ``1 / n`` are read as
        0 false positives, so report ``fpr`` of at least ``1 / n_non_members``
        (10 per cent of it is noise at a few hundred non-members).

        Parameters
        ----------
        fpr : float
            The false-positive rate, in [0, 1].

        Returns
        -------
        float
        """
        if not 0.0 <= float(fpr) <= 1.0:
            raise ValueError(f"fpr must be in [0, 1], got {fpr!r}.")
        rates, tprs, _ = self.roc_curve()
        return float(tprs[rates <= float(fpr)].max())

    def epsilon_lower_bound(self, delta=0.0, *, confidence=0.95, random_state=0):
        """A statistical lower bound on the epsilon of the released mechanism.

        The rows are cut at random in two halves; the first half chooses the
        best threshold test (members against non-members, either way round),
        the second, independent of that choice, bounds its true- and
        false-positive rates with one-sided Clopper-Pearson intervals, and
        the bound is ``log((TPR_lower - delta) / FPR_upper)``, as for any
        ``(epsilon, delta)``-DP mechanism ``TPR <= e^epsilon FPR + delta``
        (:func:`skdpx.privacy._audit.epsilon_from_samples`).

        Across independent runs of the mechanism this is the standard
        audit (Jagielski et al., 2020). On one fitted target, with each
        candidate's membership decided by an independent fair coin before
        the fit, Steinke, Nasr & Jagielski (2023) prove a bound of the same
        kind for the number of correct guesses (dominated by a binomial);
        this two-sample version, which conditions on how many members fall
        in the test half, is not covered by their theorem: it is a
        heuristic there, conservative in our checks (one-run randomized
        response and Laplace releases of canaries exceeded the true epsilon
        in at most 0.7% of trials at 95% confidence). For delta > 0,
        subtracting delta once is slightly optimistic on one run.

        It cannot exceed :meth:`max_epsilon_lower_bound` (the bound at a
        perfect separation, about ``log(n / (4 ln(2 / (1 - confidence))))``
        with ``n`` candidates: 2.6 with 200): a claim above it cannot be
        refuted with these candidates, and a small bound shows no leak only
        up to that limit.

        Parameters
        ----------
        delta : float, default=0.0
            The delta of the guarantee tested (the target's ``delta``).
        confidence : float, default=0.95
            In (0, 1).
        random_state : int, RandomState instance or None, default=0
            The random halving (evaluation randomness).

        Returns
        -------
        float
            The lower bound (0 when no test is conclusive).
        """
        for name, scores in (("scores_members", self.scores_members),
                             ("scores_non_members", self.scores_non_members)):
            if scores.size < 4:
                raise ValueError(f"The epsilon lower bound needs at least 4 {name}, got "
                                 f"{scores.size}.")
        return epsilon_from_samples(self.scores_members, self.scores_non_members, delta=delta,
                                    confidence=confidence, random_state=random_state)

    def max_epsilon_lower_bound(self, delta=0.0, *, confidence=0.95):
        """The largest :meth:`epsilon_lower_bound` these numbers of candidates allow.

        The bound of an attack that separates members from non-members
        perfectly. A claimed epsilon above it cannot be refuted with these
        candidates: the audit has no power there.
        """
        return AttackResult(np.ones(self.n_members), np.zeros(self.n_non_members)) \
            .epsilon_lower_bound(delta, confidence=confidence)

    def summary(self, fprs=(0.01, 0.001)):
        """The headline figures as a dict: AUC and the TPR at each of ``fprs``."""
        out = {"signal": self.signal, "n_members": self.n_members,
               "n_non_members": self.n_non_members, "auc": self.auc}
        out.update({f"tpr_at_{f:g}_fpr": self.tpr_at_fpr(f) for f in fprs})
        return out

    def to_frame(self):
        """One row per candidate: its ``score`` and whether it was a ``member``."""
        import pandas as pd

        labels, scores = self._labels_scores()
        return pd.DataFrame({"score": scores, "member": labels.astype(bool)})

    def to_json(self, path=None, **kwargs):
        """JSON text of the scores, the signal and ``meta``; also written to ``path`` if given."""
        return _dump_json(_jsonable({"type": type(self).__name__, "signal": self.signal,
                                     "scores_members": self.scores_members,
                                     "scores_non_members": self.scores_non_members,
                                     "meta": self.meta}), path, **kwargs)

    @classmethod
    def from_json(cls, s):
        """Rebuild from :meth:`to_json`'s text (or the path of a file holding it)."""
        data = _load_json(s, cls)
        meta = data.get("meta") or {}
        if not isinstance(meta, dict):
            raise ValueError(f"the JSON of an AttackResult holds a 'meta' that is a "
                             f"{type(meta).__name__}, not an object.")
        meta = {k: float(v) if v in ("Infinity", "-Infinity") else v for k, v in meta.items()}
        return cls(data["scores_members"], data["scores_non_members"],
                   signal=data.get("signal", "callable"), meta=meta)

    def __eq__(self, other):
        return (type(other) is type(self) and self.signal == other.signal
                and np.array_equal(self.scores_members, other.scores_members)
                and np.array_equal(self.scores_non_members, other.scores_non_members)
                and self.meta == other.meta)

    __hash__ = None

    def __repr__(self):
        return (f"AttackResult(signal={self.signal!r}, n_members={self.n_members}, "
                f"n_non_members={self.n_non_members}, auc={self.auc:.3f})")

    def plot(self, *, ax=None, label=None, **kwargs):
        """The ROC curve on log-log axes (matplotlib: the ``plot`` extra).

        Log scales show the low false-positive rates where an attack that is
        sure of a few people shows (Carlini et al., 2022). Returns the axes.
        """
        ax = _new_axes(ax, figsize=(4, 4))
        fpr, tpr, _ = self.roc_curve()
        floor = 0.5 / max(self.n_non_members, self.n_members)
        ax.plot(np.maximum(fpr, floor), np.maximum(tpr, floor),
                label=label or f"{self.signal} (AUC {self.auc:.2f})", **kwargs)
        ax.plot([floor, 1], [floor, 1], ls="--", color="grey", lw=0.8)
        ax.set(xscale="log", yscale="log", xlabel="false-positive rate",
               ylabel="true-positive rate", title="Membership inference")
        ax.legend(loc="lower right")
        return ax

