"""Membership signals: what an attacker computes from a target's releases.

Each signal maps rows (and their labels) to one score per row, higher for a
row that looks like a member of the target's private data. The statistic
behind a signal is what the target releases about the row: its predicted
probabilities, its explanation, its counterfactual, or the recourse nodes
near it. With shadow models (offline LiRA, :mod:`._membership`), the raw
statistic is standardised against its distribution under models that never
saw the row.
"""

import numbers
import warnings

import numpy as np
from sklearn.neighbors import NearestNeighbors
from sklearn.utils import check_random_state

from ..utils._tables import num_rows

__all__ = ["SIGNALS", "background_probe", "explanation_probe", "score_rows", "signal_statistic"]

#: the probability floor of the loss and the logit (a probability of 0 would give -inf)
_P_FLOOR = 1e-12


def _true_class_proba(target, X, y):
    if not hasattr(target, "predict_proba"):
        raise ValueError(
            f"This signal needs the target's predict_proba; {type(target).__name__} has none. "
            "Use an explanation, counterfactual or recourse signal instead.")
    if y is None:
        raise ValueError("This signal needs the labels y of the rows.")
    proba = np.asarray(target.predict_proba(X), dtype=float)
    classes = np.asarray(target.classes_)
    y = np.asarray(y)
    index = np.searchsorted(classes, y)
    index = np.clip(index, 0, classes.size - 1)
    unknown = classes[index] != y
    if unknown.any():
        raise ValueError(f"Labels {np.unique(y[unknown]).tolist()!r} are not among the "
                         f"target's classes {classes.tolist()!r}.")
    return np.clip(proba[np.arange(len(index)), index], _P_FLOOR, 1.0 - _P_FLOOR)


def _log_confidence(target, X, y, queries):
    return np.log(_true_class_proba(target, X, y))


def _confidence(target, X, y, queries):
    return _true_class_proba(target, X, y)


def _logit_confidence(target, X, y, queries):
    p = _true_class_proba(target, X, y)
    return np.log(p) - np.log1p(-p)


def _explanation_values(target, X):
    if not hasattr(target, "explain"):
        raise ValueError(f"This signal needs the target's explain; {type(target).__name__} has none.")
    values = np.asarray(target.explain(X).values, dtype=float)
    return np.nan_to_num(values.reshape(len(values), -1))


def _explanation_vector(target, X, y, queries):
    return _explanation_values(target, X)


def _explanation_variance(target, X, y, queries):
    return _explanation_values(target, X).var(axis=1)


def _explanation_norm(target, X, y, queries):
    return np.linalg.norm(_explanation_values(target, X), axis=1)


def explanation_probe(reference=None):
    """A membership signal that probes a local explainer next to the row.

    A local explanation at the row itself cannot show the row: in
    DPLimeExplainer's local loss a row at the query has ``x - z = 0`` and
    adds nothing (with and without it, the answer at the row differs only
    through the normaliser 1/m). The probe moves the query off the row along the direction
    that the fewest other rows feed: for each row, the feature ``j`` that is
    non-zero in the row and non-zero in the smallest share of the
    ``reference`` rows (for one-hot data, the row's rarest level), set to 0
    in the query ``z``. Then ``x - z = x_j e_j``; coordinate ``j`` of the
    local loss's gradient is fed only by rows with ``x'_j != 0``, among them
    the row itself, and the score is ``|phi_j(z)|``, larger when the row was
    in the explanation data. Designed for one-hot encoded data; the
    benchmark (``benchmarks/attacks.py``) finds it the strongest signal
    against DPLimeExplainer on canaries.

    Parameters
    ----------
    reference : array-like of shape (n_reference, n_features), default=None
        Rows of the population the attacker holds (not the candidates), for
        the shares of non-zero values. None: the candidates' own shares
        (weaker at low false-positive rates: the population's shares tell
        which levels few private rows have).

    Returns
    -------
    callable
        ``signal(target, X, y) -> scores``, for :func:`membership_inference`
        (also the ``"explanation_probe"`` signal, without reference).
    """
    shares = None
    if reference is not None:
        reference = _numeric(reference, "reference")
        shares = (reference != 0).mean(axis=0)

    def explanation_probe(target, X, y):
        X = _numeric(X, "X")
        if not hasattr(target, "explain"):
            raise ValueError(f"This signal needs the target's explain; "
                             f"{type(target).__name__} has none.")
        share = (X != 0).mean(axis=0) if shares is None else shares
        if share.shape[0] != X.shape[1]:
            raise ValueError(f"reference has {share.shape[0]} features, the rows {X.shape[1]}.")
        rows = np.arange(len(X))
        j = np.argmin(np.where(X != 0, share, np.inf), axis=1)
        Z = X.copy()
        Z[rows, j] = 0.0
        values = np.asarray(target.explain(Z).values, dtype=float)
        return np.abs(np.nan_to_num(values[rows, j]))

    return explanation_probe


def _numeric(X, name):
    try:
        X = np.asarray(X, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"The probe needs numeric encoded rows; {name} is not numeric.") from None
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-d, got shape {X.shape}.")
    return X


def _probe(target, X, y, queries):
    return explanation_probe()(target, X, y)


def background_probe(reference=None, *, n_probes=3):
    """A membership signal for the background rows of a SHAP-style explainer.

    A SHAP explainer with background rows ``B`` (weights ``w_b``) answers a
    query ``z`` with the weighted average over ``b`` of the Shapley values
    of the game between ``z`` and ``b`` (interventional SHAP: the value of a
    coalition ``S`` is ``sum_b w_b f(z_S, b_rest)``; Shapley values are
    linear in it). In the game between ``z`` and one row ``b``, a feature
    ``j`` with ``z_j = b_j`` is a dummy and gets 0; and when ``z`` differs
    from ``b`` in feature ``j`` alone, feature ``j`` gets all of ``f(z) -
    f(b)``. The probe uses both: for a candidate ``c`` it queries ``c`` and
    ``z`` = ``c`` with one column ``j`` set to its most common value in the
    ``reference`` rows. Then every background row holding that common value
    adds exactly 0 to ``phi_j(z)``, and the candidate, if it is a background
    row of weight ``w_c``, adds ``w_c (f(z) - f(c))``. The difference of the
    two answers' totals is ``f(z) - f(c)`` (additivity: the base value
    cancels), so the attacker needs no access to the black box's output.

    The column is chosen per candidate among its ``n_probes`` columns that
    hold a value other than the common one and whose common value is the
    most common (the fewest other background rows add to ``phi_j``): the
    one with the largest ``|f(z) - f(c)| / sqrt(1 - share_j)``, ``share_j``
    the common value's share. The score is ``phi_j(z) sign(f(z) - f(c)) /
    sqrt(1 - share_j)``: the candidate's term, oriented, against the spread
    the other rows' terms have. A candidate that holds the common value in
    every column scores 0.

    Works with any target whose ``explain(X)`` returns a
    :class:`~skdpx.FeatureAttribution` with one value per column of ``X``
    (or ``groups`` mapping its values to the columns, summed), additive up
    to a base value: ``DPShapExplainer``, shap's explainers wrapped. Every
    candidate costs ``1 + n_probes`` queries. The leak it reads is of order
    ``w_c``: one row of a background of ``n`` moves an answer by ``1/n`` of
    its effect, so it is strong for small backgrounds and rows with values
    the black box reacts to (``benchmarks/attacks_background.py``).

    Parameters
    ----------
    reference : array-like or DataFrame of shape (n_reference, n_columns), default=None
        Rows of the population the attacker holds (not the candidates), for
        each column's most common value and its share. None: the
        candidates' own.
    n_probes : int, default=3
        How many of a candidate's columns to probe (each one query).

    Returns
    -------
    callable
        ``signal(target, X, y) -> scores``, for :func:`membership_inference`
        (also the ``"background_probe"`` signal, without reference).
    """
    if isinstance(n_probes, bool) or not isinstance(n_probes, numbers.Integral) or n_probes < 1:
        raise ValueError(f"n_probes must be a positive integer, got {n_probes!r}.")
    common = None if reference is None else _common_values(reference, "reference")

    def background_probe(target, X, y):
        if not hasattr(target, "explain"):
            raise ValueError(f"This signal needs the target's explain; "
                             f"{type(target).__name__} has none.")
        modes, shares, n_ref = _common_values(X, "X") if common is None else common
        frame = hasattr(X, "iloc")
        n, d = num_rows(X), (X.shape[1] if frame else np.shape(X)[1])
        if len(modes) != d:
            raise ValueError(f"reference has {len(modes)} columns, the rows {d}.")
        differs = np.column_stack([~_equals(_column(X, j), modes[j]) for j in range(d)])
        # per candidate, its n_probes differing columns whose common value is the most common
        order = np.argsort(-shares, kind="stable")
        rank = np.cumsum(differs[:, order], axis=1)
        chosen = np.zeros_like(differs)
        chosen[:, order] = differs[:, order] & (rank <= n_probes)
        probes = np.full((n, n_probes), -1)
        slot = np.cumsum(chosen, axis=1) - 1
        rows, cols = np.nonzero(chosen)
        probes[rows, slot[rows, cols]] = cols
        queries = [X] + [_set_common(X, probes[:, k], modes) for k in range(n_probes)]
        stacked = _concat_frames(queries) if frame else np.vstack(queries)
        values, totals = _attributions(target.explain(stacked), d, len(stacked))
        values = values.reshape(1 + n_probes, n, d)
        totals = totals.reshape(1 + n_probes, n)
        change = totals[1:] - totals[0]                                # f(z) - f(c), (k, n)
        index = np.maximum(probes.T, 0)                                # (k, n)
        own = np.take_along_axis(values[1:], index[:, :, None], axis=2)[:, :, 0]
        spread = np.sqrt(1.0 - shares[index] + 1.0 / n_ref)
        leverage = np.where(probes.T >= 0, np.abs(change) / spread, -1.0)
        best = np.argmax(leverage, axis=0)
        pick = (best, np.arange(n))
        scores = own[pick] * np.sign(change[pick]) / spread[pick]
        return np.where(leverage[pick] > 0, scores, 0.0)

    return background_probe


def _bg_probe(target, X, y, queries):
    return background_probe()(target, X, y)


def _column(X, j):
    return X.iloc[:, j].to_numpy() if hasattr(X, "iloc") else np.asarray(X)[:, j]


def _equals(column, value):
    """Elementwise ``column == value`` (False where either is missing)."""
    return np.asarray(column == value, dtype=bool)


def _common_values(X, name):
    """Each column's most common value, its share, and the number of rows."""
    n = num_rows(X)
    if n == 0:
        raise ValueError(f"{name} is empty.")
    if not hasattr(X, "iloc") and np.ndim(X) != 2:
        raise ValueError(f"{name} must be 2-d, got shape {np.shape(X)}.")
    d = X.shape[1] if hasattr(X, "iloc") else np.shape(X)[1]
    modes, shares = [], np.empty(d)
    for j in range(d):
        if hasattr(X, "iloc"):
            counts = X.iloc[:, j].value_counts(dropna=False)
            levels, counts = counts.index.to_numpy(), counts.to_numpy()
        else:
            levels, counts = np.unique(_column(X, j), return_counts=True)
        top = int(np.argmax(counts))
        modes.append(levels[top])
        shares[j] = counts[top] / n
    return modes, shares, n


def _set_common(X, columns, modes):
    """A copy of the rows with, in each row ``i``, column ``columns[i]`` (if >= 0) set to
    its common value (a loop over the columns, not the rows)."""
    Z = X.copy() if hasattr(X, "iloc") else np.array(X, copy=True)
    for j in np.unique(columns[columns >= 0]):
        rows = np.flatnonzero(columns == j)
        if hasattr(Z, "iloc"):
            Z.iloc[rows, int(j)] = modes[j]
        else:
            Z[rows, int(j)] = modes[j]
    return Z


def _concat_frames(frames):
    import pandas as pd

    return pd.concat(frames, ignore_index=True)


def _attributions(result, d, m):
    """The released values per column, shape (m, d), and each answer's total
    (values' sum plus the base value: the explained output)."""
    values = np.nan_to_num(np.asarray(result.values, dtype=float))
    groups = getattr(result, "groups", None)
    if values.ndim == 2 and values.shape[0] == m and values.shape[1] != d and groups \
            and len(groups) == d:
        values = np.column_stack([values[:, np.asarray(idx, dtype=int)].sum(axis=1)
                                  for _, idx in groups])
    if values.shape != (m, d):
        raise ValueError(f"background_probe needs one attribution per column of the rows "
                         f"({d}), got values of shape {values.shape}.")
    base = getattr(result, "base_value", None)
    base = np.nan_to_num(np.asarray(0.0 if base is None else base, dtype=float))
    if base.ndim and base.shape != (m,):
        raise ValueError(f"background_probe needs one base value per answer, got shape "
                         f"{base.shape}.")
    return values, values.sum(axis=1) + base


def _scale(target, X):
    """Rows in the target's public [0, 1] scale when it declares bounds_, else as given."""
    X = np.asarray(X, dtype=float)
    bounds = getattr(target, "bounds_", None)
    if bounds is None:
        return X
    lower, upper = (np.asarray(b, dtype=float) for b in bounds)
    return (X - lower) / np.where(upper > lower, upper - lower, 1.0)


def _counterfactual_distance(target, X, y, queries):
    if not hasattr(target, "explain"):
        raise ValueError(f"This signal needs the target's explain; {type(target).__name__} has none.")
    released = target.explain(X)
    counterfactuals = np.asarray(released.counterfactuals, dtype=float)
    distance = np.linalg.norm(_scale(target, counterfactuals) - _scale(target, X), axis=1)
    missing = ~np.isfinite(distance)
    if missing.all():
        raise ValueError("The target found no counterfactual for any row.")
    # a row without a counterfactual is farther from the boundary than any found
    distance[missing] = np.max(distance[~missing]) + 1.0
    return distance


def _recourse_nodes(target, queries):
    if queries is not None:
        paths = target.explain(queries).paths
        nodes = [np.asarray(path, dtype=float)[1:] for path in paths]
        nodes = [n for n in nodes if n.size]
        return np.vstack(nodes) if nodes else None
    if hasattr(target, "cluster_centers_"):
        return np.asarray(target.cluster_centers_, dtype=float)
    raise ValueError("recourse_distance needs queries (whose released paths give the nodes) "
                     "or a target with cluster_centers_.")


def _recourse_distance(target, X, y, queries):
    nodes = _recourse_nodes(target, queries)
    if nodes is None or len(nodes) == 0:  # no node released: nothing to measure against
        warnings.warn("The target released no recourse node: recourse_distance has nothing to "
                      "measure and scores every row alike (AUC 0.5). That is protection by "
                      "releasing nothing, not evidence about the noise.", UserWarning,
                      stacklevel=3)
        return np.zeros(len(X))
    nodes = _scale(target, nodes)
    nearest = NearestNeighbors(n_neighbors=1).fit(nodes)
    return nearest.kneighbors(_scale(target, X))[0][:, 0]


#: name -> (statistic without shadows, its orientation, statistic against shadows).
#: The score is orientation * statistic: higher for a row that looks like a member.
SIGNALS = {
    "loss": (_log_confidence, 1.0, _logit_confidence),
    "confidence": (_confidence, 1.0, _logit_confidence),
    "lira": (_log_confidence, 1.0, _logit_confidence),
    "explanation": (_explanation_variance, -1.0, _explanation_vector),
    "explanation_norm": (_explanation_norm, -1.0, _explanation_norm),
    "explanation_probe": (_probe, 1.0, _probe),
    "background_probe": (_bg_probe, 1.0, _bg_probe),
    "counterfactual_distance": (_counterfactual_distance, 1.0, _counterfactual_distance),
    "recourse_distance": (_recourse_distance, -1.0, _recourse_distance),
}


def _resolve(signal):
    """``(statistic, orientation, statistic against shadows)``, each called
    ``f(target, X, y, queries)``; a callable signal is all three."""
    if callable(signal):
        def statistic(target, X, y, queries):
            return signal(target, X, y)
        return statistic, 1.0, statistic
    if not isinstance(signal, str) or signal not in SIGNALS:
        raise ValueError(f"signal must be one of {sorted(SIGNALS)} or a callable "
                         f"signal(target, X, y) -> scores; got {signal!r}.")
    return SIGNALS[signal]


def _finite(values, name):
    values = np.asarray(values, dtype=float)
    if not np.isfinite(values).all():
        raise ValueError(f"The signal {name!r} gave NaN or infinite values.")
    return values


def _in_random_order(compute, X, y, random_state):
    """``compute(X, y)`` with the rows sent in a random order, the result in the given order.

    A target may keep state between queries (DPLimeExplainer: its budget,
    answer reuse, its phase), so what a row gets back can depend on its
    position. The candidates come stacked (members first): sent in that order,
    the position would carry the membership the attack is to guess.
    """
    order = check_random_state(random_state).permutation(len(y) if y is not None else len(X))
    X_sent = X.iloc[order] if hasattr(X, "iloc") else np.asarray(X)[order]
    values = compute(X_sent, None if y is None else np.asarray(y)[order])
    restored = np.empty_like(values)
    restored[order] = values
    return restored


def _evaluate(target, X, y, signal, which, queries, random_state):
    """Statistic number ``which`` of :func:`_resolve` on the rows (sent in a random
    order), and the signal's orientation."""
    resolved = _resolve(signal)
    name = signal if isinstance(signal, str) else getattr(signal, "__name__", "callable")
    statistic = resolved[which]
    values = _in_random_order(lambda X_, y_: _finite(statistic(target, X_, y_, queries), name),
                              X, y, random_state)
    return values, resolved[1]


def signal_statistic(target, X, y, signal, *, queries=None, random_state=0):
    """The raw statistic compared against shadow models: (n,) or (n, k), and its orientation.

    A callable signal is its own statistic (called ``signal(target, X, y)``).
    The rows are sent to the target in a random order (``random_state``).
    """
    return _evaluate(target, X, y, signal, 2, queries, random_state)


def score_rows(target, X, y, signal, *, queries=None, random_state=0):
    """One membership score per row, higher for a row that looks like a member.

    Parameters
    ----------
    target : fitted estimator
        The released model, explainer, counterfactual generator or recourse
        method.
    X : array-like or DataFrame of shape (n, n_features)
        The candidate rows, as the target takes them.
    y : array-like of shape (n,) or None
        Their labels (needed by ``"loss"``, ``"confidence"`` and ``"lira"``).
    signal : str or callable
        A name of :data:`SIGNALS` or ``signal(target, X, y) -> (n,)``.
    queries : array-like, default=None
        For ``"recourse_distance"``: the queries whose released paths give
        the nodes (default: the target's ``cluster_centers_``).
    random_state : int, RandomState instance or None, default=0
        The random order in which the rows are sent to the target (a
        stateful target must not learn anything from the order).

    Returns
    -------
    ndarray of shape (n,)
    """
    values, orientation = _evaluate(target, X, y, signal, 0, queries, random_state)
    scores = orientation * values
    if scores.ndim != 1:
        raise ValueError(f"A signal must give one score per row, got shape {scores.shape}.")
    return scores

