"""membership_inference: does a target's release tell who was in its private data?"""

import numbers
import warnings

import numpy as np
from sklearn.base import clone
from sklearn.utils import check_random_state

from ..privacy import UncappedBudgetWarning
from ..utils._tables import num_rows
from ._result import AttackResult
from ._signals import _resolve, score_rows, signal_statistic

__all__ = ["membership_inference"]


def membership_inference(target, X_members, y_members, X_non_members, y_non_members, *,
                         signal="loss", queries=None, shadow_data=None, n_shadows=8,
                         random_state=0):
    """Score candidate rows by how much the target's release says they were members.

    The attacker holds the fitted ``target`` (or what it releases: its
    predictions, explanations, counterfactuals or recourse paths) and a set
    of candidate rows, some of which (``X_members``) were in the target's
    private data and some of which (``X_non_members``) were not. It scores
    every candidate with ``signal``; the :class:`AttackResult` tells how well
    the scores separate the two sets.

    For the result's :meth:`~AttackResult.epsilon_lower_bound` to be a valid
    audit of the target's guarantee, draw each candidate's membership by an
    independent fair coin before fitting the target; canaries (planted
    outliers) make the strongest such audit.

    Parameters
    ----------
    target : fitted estimator
        The model, explainer, counterfactual generator or recourse method
        under attack (any scikit-learn-style object with what the signal
        needs).
    X_members, X_non_members : array-like or DataFrame of shape (n, n_features)
        The candidates that were and were not in the target's private rows,
        in the form the target takes.
    y_members, y_non_members : array-like of shape (n,) or None
        Their labels. Needed by the ``"loss"``, ``"confidence"`` and
        ``"lira"`` signals and by shadow models of a supervised target.
    signal : str or callable, default="loss"
        What the attacker looks at (higher score: more member-like):

        - ``"loss"``: the log-probability of the true label (Yeom et al.,
          2018); ``"confidence"``: the probability itself.
        - ``"lira"``: the likelihood-ratio attack of Carlini et al. (2022),
          offline variant: the logit of the true label's probability,
          standardised against shadow models (needs ``shadow_data``).
        - ``"explanation"``: minus the variance of the row's explanation
          (``target.explain(X).values``: DPLocallyLinearClassifier's local
          map, a DPLimeExplainer answer), the signal of Shokri, Strobel &
          Zick (2021); ``"explanation_norm"``: minus its L2 norm. Against
          DPLimeExplainer these see nothing (a row at the query adds
          nothing to its local loss): use
        - ``"explanation_probe"``: the explanation at a query moved off the
          row along its rarest non-zero feature
          (:func:`explanation_probe`; call ``explanation_probe(X_reference)``
          for the population's shares).
        - ``"background_probe"``: against a SHAP-style explainer, whose private
          rows are its background: the attribution of the row's rarest
          column at a query with that column set to its common value
          (:func:`background_probe`; call ``background_probe(X_reference)``
          for the population's common values).
        - ``"counterfactual_distance"``: the distance from the row to its
          counterfactual (Pawelczyk, Lakkaraju & Neel, 2023), in the
          target's public [0, 1] scale when it declares ``bounds_``. Their
          orientation (far from the boundary: member) is for a black box
          trained on the members; for an explainer whose private rows the
          black box never saw (DPC) the effect can go either way, which the
          AUC shows as below 0.5 and the two-sided epsilon lower bound
          covers.
        - ``"recourse_distance"``: minus the distance from the row to the
          nearest released recourse node, the points of
          ``target.explain(queries).paths`` past each query (or the
          target's ``cluster_centers_`` without ``queries``).
        - a callable ``signal(target, X, y) -> scores`` of shape (n,), or,
          with shadows, any statistic of shape (n,) or (n, k).
    queries : array-like, default=None
        For ``"recourse_distance"``: the queries whose paths the attacker
        saw.
    shadow_data : tuple (X_reference, y_reference), default=None
        Rows from the same population that are not candidates. Given, every
        signal becomes an offline LiRA: ``n_shadows`` copies of the target
        (same parameters, the black box it explains kept, no shared ledger)
        are fitted each on a random half of these rows, and each
        candidate's statistic is standardised against its values under the
        shadows, which never saw it: ``(s - mean) / sd`` with the sd pooled
        over candidates (better than per-row sds with few shadows, Carlini
        et al.), or for a vector statistic (an explanation) the mean squared
        standardised difference. ``y_reference`` may be None for an
        unsupervised target.
    n_shadows : int, default=8
        Number of shadow models, at least 2.
    random_state : int, RandomState instance or None, default=0
        The order in which the candidates are sent to the target (random, so
        that a stateful target's answers cannot depend on membership through
        the position: members come first in the stack) and the shadows'
        halves (evaluation randomness; the targets draw their own privacy
        noise).

    Returns
    -------
    AttackResult
        With ``meta`` holding the target's name and, when it has them, its
        ``epsilon`` and ``delta``.

    Notes
    -----
    The attack uses the target as any user would: an explanation signal
    *queries* it, and a query of a DP explainer (DPLimeExplainer) spends its
    budget and is recorded in its ledger, the user's shared ledger included,
    like any other query. Attack a copy fitted on its own ledger (as the
    benchmarks do) to keep a real budget intact. The shadow models never
    touch the target's ledger: every ``accountant`` in them is reset (a
    fresh ledger each) and every seed is dropped.

    Examples
    --------
    A 1-nearest-neighbour classifier remembers its training rows:

    >>> import numpy as np
    >>> from sklearn.neighbors import KNeighborsClassifier
    >>> from skdpx.attacks import membership_inference
    >>> rng = np.random.RandomState(0)
    >>> X, y = rng.normal(size=(200, 3)), rng.randint(2, size=200)
    >>> model = KNeighborsClassifier(n_neighbors=1).fit(X[:100], y[:100])
    >>> result = membership_inference(model, X[:100], y[:100], X[100:], y[100:])
    >>> result
    AttackResult(signal='loss', n_members=100, n_non_members=100, auc=0.745)
    >>> result.epsilon_lower_bound() > 1  # far beyond what a DP model at epsilon 1 allows
    True
    """
    _resolve(signal)  # a clear error for an unknown signal, before anything runs
    if isinstance(signal, str) and signal == "lira" and shadow_data is None:
        raise ValueError('signal="lira" needs shadow_data=(X_reference, y_reference).')
    X, y, n_members = _stack(X_members, y_members, X_non_members, y_non_members)
    if shadow_data is None:
        scores = score_rows(target, X, y, signal, queries=queries, random_state=random_state)
        n_shadows_used = 0
    else:
        scores = _lira_scores(target, X, y, signal, queries, shadow_data, n_shadows, random_state)
        n_shadows_used = int(n_shadows)
    name = signal if isinstance(signal, str) else getattr(signal, "__name__", "callable")
    meta = {"target": type(target).__name__, "n_shadows": n_shadows_used}
    for key in ("epsilon", "delta"):
        value = getattr(target, key, None)
        if isinstance(value, numbers.Real):
            meta[key] = float(value)
    return AttackResult(scores[:n_members], scores[n_members:], signal=name, meta=meta)


def _stack(X_members, y_members, X_non_members, y_non_members):
    """The candidates stacked (members first), their labels, and the number of members."""
    n_in = _nonempty_rows(X_members, "X_members")
    n_out = _nonempty_rows(X_non_members, "X_non_members")
    if hasattr(X_members, "iloc") and hasattr(X_non_members, "iloc"):
        import pandas as pd

        if list(X_members.columns) != list(X_non_members.columns):
            raise ValueError("X_members and X_non_members have different columns.")
        X = pd.concat([X_members, X_non_members], ignore_index=True)
    else:
        parts = [np.asarray(X_members, dtype=float), np.asarray(X_non_members, dtype=float)]
        if parts[0].ndim != 2 or parts[1].ndim != 2 or parts[0].shape[1] != parts[1].shape[1]:
            raise ValueError("X_members and X_non_members must be 2-d with the same number of "
                             f"columns, got shapes {parts[0].shape} and {parts[1].shape}.")
        X = np.vstack(parts)
    if (y_members is None) != (y_non_members is None):
        raise ValueError("Give the labels of both sets, or of neither.")
    y = None
    if y_members is not None:
        y_in, y_out = np.asarray(y_members).ravel(), np.asarray(y_non_members).ravel()
        if y_in.size != n_in or y_out.size != n_out:
            raise ValueError(f"The labels must match the rows: {y_in.size} labels for {n_in} "
                             f"members, {y_out.size} for {n_out} non-members.")
        y = np.concatenate([y_in, y_out])
    return X, y, n_in


def _nonempty_rows(X, name):
    """``num_rows(X)``, refused when 0."""
    n = num_rows(X)
    if n == 0:
        raise ValueError(f"{name} is empty: the attack needs members and non-members.")
    return n


def _shadow(target):
    """An unfitted copy of the target: the same parameters and black box, its own ledger.

    At every depth (a Pipeline's steps too): every ``estimator`` is the
    target's own object (cloning a fitted black box would unfit it), every
    ``accountant`` is None (a fresh ledger: a cloned ledger with a path would
    write to the user's file) and every ``random_state`` is None (a seeded
    target's shadows would share its noise).
    """
    shadow = clone(target)
    params = target.get_params(deep=True)
    kept = [key for key in params if key.rsplit("__", 1)[-1] == "estimator"]
    changes = {key: params[key] for key in kept}
    for key in params:
        inside_kept = any(key.startswith(k + "__") for k in kept)  # the black box's own
        if not inside_kept and key.rsplit("__", 1)[-1] in ("accountant", "random_state"):
            changes[key] = None
    # outer parameters first: setting an outer estimator replaces its inner ones
    for key in sorted(changes, key=lambda k: k.count("__")):
        shadow.set_params(**{key: changes[key]})
    return shadow


def _lira_scores(target, X, y, signal, queries, shadow_data, n_shadows, random_state):
    """Offline LiRA: each candidate's statistic against its distribution under shadows."""
    if isinstance(n_shadows, bool) or not isinstance(n_shadows, numbers.Integral) or n_shadows < 2:
        raise ValueError(f"n_shadows must be an integer of at least 2, got {n_shadows!r}.")
    try:
        X_ref, y_ref = shadow_data
    except (TypeError, ValueError):
        raise ValueError("shadow_data must be a pair (X_reference, y_reference).") from None
    n_ref = _nonempty_rows(X_ref, "shadow_data's X_reference")
    if n_ref < 4:
        raise ValueError(f"shadow_data needs at least 4 rows, got {n_ref}.")
    if y_ref is not None and np.asarray(y_ref).ravel().size != n_ref:
        raise ValueError(f"shadow_data's y_reference has {np.asarray(y_ref).ravel().size} labels "
                         f"for {n_ref} rows.")
    observed, orientation = signal_statistic(target, X, y, signal, queries=queries,
                                             random_state=random_state)
    rng = check_random_state(random_state)
    shadow_stats = []
    for _ in range(int(n_shadows)):
        half = rng.permutation(n_ref)[: n_ref // 2]
        X_half = X_ref.iloc[half] if hasattr(X_ref, "iloc") else np.asarray(X_ref)[half]
        y_half = None if y_ref is None else np.asarray(y_ref)[half]
        with warnings.catch_warnings():  # the attacker's own models: no ledger to cap
            warnings.simplefilter("ignore", UncappedBudgetWarning)
            shadow = _shadow(target).fit(X_half, y_half)
        shadow_stats.append(signal_statistic(shadow, X, y, signal, queries=queries,
                                             random_state=rng)[0])
    shadow_stats = np.stack(shadow_stats)          # (n_shadows, n) or (n_shadows, n, k)
    mean = shadow_stats.mean(axis=0)
    # the sd pooled over candidates: steadier than per-row sds with few shadows
    sd = np.sqrt(((shadow_stats - mean) ** 2).mean(axis=(0, 1)))
    z = (observed - mean) / np.where(sd > 0, sd, 1.0)
    if z.ndim == 2:   # a vector statistic: how far from what the shadows release
        return (z ** 2).mean(axis=1)
    return orientation * z
