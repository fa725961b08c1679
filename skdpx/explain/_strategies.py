"""How DPLime answers a query, and the curator's history of its answers.

A new query is answered in three phases (Patel, Shokri & Zick 2020):

1. reused: the answer of a past interactive query within ``reuse_distance``
   for the same class, for free (the paper's Flag rule);
2. interactive, while the budget lasts: "basic", Algorithm 1 for a whole
   batch (:func:`answer_basic`), or "adaptive" and "enhanced", Algorithms 2-3
   one query at a time, from a DP warm start and with a number of steps
   chosen from released values (:func:`answer_adaptive`);
3. non-interactive (Algorithm 4's phase, free): the DP answer at the nearest
   past interactive query (:func:`noninteractive`), or ``BudgetError``.

The history (``history_`` of the explainer: a dict of lists) is public: DP
answers and their public queries. The functions on it take it as an
argument. The answering functions take the fitted explainer and read of it
only its parameters, its public calibration (``noise_multiplier_``,
``sensitivity_``, ``warm_start_epsilon_``, ``_descent()``), its ledger
(``ledger_``, where every spend is committed before the rows are read) and
its history (``_interactive()``, ``_record``); they read the private rows
only through the explainer's ``_forms`` and ``_dpgd`` (see
:mod:`skdpx.explain._parallel`), each after the spend of what it computes
was committed.
"""

import numpy as np
from sklearn.metrics import pairwise_distances_argmin

from ..privacy import BudgetError, exponential_release, gaussian_epsilon, gaussian_event
from ._dpgd import dpgd_warm_start

#: warm-start candidates: the averages of the past interactive answers at the
#: k nearest queries, for each k here (public: queries and past answers are),
#: among which the exponential mechanism picks. On Adult, these made better warm
#: starts than single past answers (see the doc page); the larger k, the
#: farther the queries.
_CANDIDATE_SIZES = (3, 10, 30)
#: adaptive answers start warm only once the history holds this many
#: interactive answers (as many as the largest candidate average); the first
#: ones run ``max_iter`` steps from 0 and are the roots later warm starts
#: build on
_MIN_HISTORY = max(_CANDIDATE_SIZES)


# ---------------------------------------------------------------- history


def record(history, classes, Z, phi, phase, epsilon, n_iter, columns, std=None):
    """Append the answers ``phi`` at the queries ``Z`` (label ``columns``) to ``history``.

    ``std``: each answer's noise standard deviation per value (NaN: unknown).
    """
    std = np.full(np.shape(phi), np.nan) if std is None else std
    if "std" not in history:  # recorded before the std was (unpickled): unknown
        history["std"] = [np.full(len(p), np.nan) for p in history["explanations"]]
    history["target"].extend([None] * len(Z) if classes is None
                             else classes.astype(object)[columns].tolist())
    history["queries"].extend(z.copy() for z in Z)
    history["explanations"].extend(p.copy() for p in phi)
    history["std"].extend(np.array(e, dtype=float) for e in std)
    history["phase"].extend([phase] * len(Z))
    history["epsilon"].extend([float(epsilon)] * len(Z))
    history["n_iter"].extend([int(n_iter)] * len(Z))
    history["private"].extend([False] * len(Z))  # fit_transform marks its own (withhold)


def withhold(history, start, *, keep_queries):
    """Mark the answers from ``start`` on as private, and drop their query points.

    ``keep_queries``: keep the points (``store_fit_queries``).
    """
    stop = len(history["phase"])
    history["private"][start:stop] = [True] * (stop - start)
    if not keep_queries:
        history["queries"][start:stop] = [None] * (stop - start)


def interactive(history, classes, n_features, *, with_std=False):
    """The past interactive queries, their answers and label columns (what reuse serves).

    An answer whose query point was not kept (a private row) is left out.
    ``classes``: the black box's (None for a regressor or given labels).
    ``with_std``: also the answers' noise standard deviations (NaN where
    not recorded).
    """
    keep = [i for i, (p, q) in enumerate(zip(history["phase"], history["queries"]))
            if p == "interactive" and q is not None]
    d = n_features
    if not keep:
        empty = (np.empty((0, d)), np.empty((0, d)), np.empty(0, dtype=int))
        return empty + (np.empty((0, d)),) if with_std else empty
    queries = np.array([history["queries"][i] for i in keep])
    targets = [history["target"][i] for i in keep]
    if classes is None:
        columns = np.zeros(len(keep), dtype=int)
    else:  # the classes are the black box's: every recorded target is one of them
        match = np.asarray(targets, dtype=object)[:, None] == classes.astype(object)
        columns = np.argmax(match, axis=1)
    out = queries, np.array([history["explanations"][i] for i in keep]), columns
    if not with_std:
        return out
    std = history.get("std")
    return out + (np.full((len(keep), d), np.nan) if std is None
                  else np.array([std[i] for i in keep], dtype=float),)


def noninteractive(past, answers, past_columns, Z, columns):
    """The non-interactive phase: the DP answer at the nearest past interactive query.

    ``past, answers, past_columns``: the past interactive answers
    (:func:`interactive`). Only past answers for the same class serve; a
    query whose class has none gets 0.

    Reads only the history (public DP outputs). The paper's Algorithm 4
    instead fits the local loss on the proxy dataset of past queries
    labelled ``phi_j . z_j``; those labels are not values of the black
    box (a local slope times a point, no intercept), and on Adult its
    answers were worse than no explanation at all (see the doc page).
    """
    phi = np.zeros_like(Z)
    for col in np.unique(columns):
        rows, served = np.flatnonzero(columns == col), past_columns == col
        if served.any():
            phi[rows] = answers[served][pairwise_distances_argmin(Z[rows], past[served])]
    return phi


def _distances(Z, columns, past, past_columns):
    """Euclidean distances from queries to past queries; inf between different classes."""
    dist = np.sqrt(((Z[:, None, :] - past[None]) ** 2).sum(axis=2))
    dist[columns[:, None] != past_columns[None, :]] = np.inf
    return dist


# -------------------------------------------------------------- answering


def answer(explainer, Z, columns, offsets, noise):
    """Answer each query ``Z`` (scaled) for its label column ``columns``.

    ``offsets``: per query, the value subtracted from the row labels (a
    regressor's output at the query). Reuse and the non-interactive
    phase serve only past answers for the same column (class). Returns
    the answers, their phases, their costs, and their noise's standard
    deviations (NaN where not known: non-interactive answers, and those of
    the warm-started strategies).
    """
    n, d = Z.shape
    phi = np.zeros((n, d))
    std = np.full((n, d), np.nan)
    phase = np.empty(n, dtype=object)
    cost = np.zeros(n)
    todo = np.ones(n, dtype=bool)

    # 1. reuse interactive answers to the same (or a close) query, same class
    past, answers, past_columns, past_std = explainer._interactive(with_std=True)
    if len(past):
        dist = _distances(Z, columns, past, past_columns)
        nearest = np.argmin(dist, axis=1)
        hit = dist[np.arange(n), nearest] <= explainer.reuse_distance
        phi[hit], std[hit] = answers[nearest[hit]], past_std[nearest[hit]]
        phase[hit], todo[hit] = "reused", False
        explainer._record(Z[hit], phi[hit], "reused", 0.0, 0, columns[hit], std[hit])

    # 2. answer new queries interactively while the budget lasts (a
    # released explainer has no rows to answer from)
    if explainer._is_curator():
        if explainer.strategy == "basic":
            answer_basic(explainer, Z, columns, offsets, phi, phase, cost, todo, noise, std)
        else:
            # each answer depends on the ones before: only its local loss runs in
            # parallel (row blocks, no noise), with n_jobs
            with explainer._forms_in_blocks() as forms:
                answer_adaptive(explainer, Z, columns, offsets, phi, phase, cost, todo, noise,
                                forms)

    # 3. the rest: non-interactive (free), or refused
    rest = np.flatnonzero(todo)
    if len(rest):
        if explainer.on_budget_exhausted == "raise" and not explainer._is_curator():
            raise BudgetError(
                f"{len(rest)} queries are new, and a released explainer holds no private row "
                "to answer them interactively: set on_budget_exhausted='noninteractive' for "
                "free answers from its history."
            )
        if explainer.on_budget_exhausted == "raise":
            raise BudgetError(
                f"the explanation dataset's budget (epsilon={explainer.epsilon:g}) cannot pay "
                f"for {len(rest)} more queries at "
                f"epsilon_per_query={explainer.epsilon_per_query:g}; "
                "the queries answered before are kept in history_."
            )
        phi[rest] = noninteractive(*explainer._interactive(), Z[rest], columns[rest])
        phase[rest] = "noninteractive"
        explainer._record(Z[rest], phi[rest], "noninteractive", 0.0, 0, columns[rest])
    return phi, phase, cost, std


def affordable(ledger, noise_multiplier, max_iter, k):
    """The largest number of new "basic" answers (<= k) that ``ledger`` allows.

    Each answer is ``max_iter`` Gaussian steps of ``noise_multiplier``;
    nothing is committed here (:meth:`~skdpx.privacy.PrivacyLedger.check`).
    """
    if k == 0:
        return 0

    def fits(j):
        try:
            ledger.check(gaussian_event(noise_multiplier, steps=max_iter * j))
        except BudgetError:
            return False
        return True

    if fits(k):
        return k
    lo, hi = 0, k  # fits(lo), not fits(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


def answer_basic(explainer, Z, columns, offsets, phi, phase, cost, todo, noise, std):
    """Algorithm 1 for the distinct new queries, as many as the budget pays for.

    Their ``max_iter * k`` Gaussian releases are committed as one event
    before the local loss (the only read of the dataset) is computed.
    Fills ``phi``, ``phase``, ``cost``, ``todo`` and ``std`` in place.
    """
    T, z = explainer.n_iter_, explainer.noise_multiplier_
    new = np.flatnonzero(todo)
    # distinct (query, class) pairs: the same point explained for two classes is two answers
    key = np.column_stack([Z[new], columns[new]])
    _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    arrival = np.argsort(first)  # distinct queries in order of first arrival
    rank = np.empty_like(arrival)
    rank[arrival] = np.arange(len(arrival))
    n_paid = affordable(explainer.ledger_, z, T, len(first))
    commitment = None
    if n_paid:
        try:
            commitment = explainer.ledger_.commit(
                gaussian_event(z, steps=T * n_paid), f"{n_paid} interactive queries ({T} steps each)")
        except BudgetError:
            # another user of a shared ledger took the room since the check:
            # nothing was recorded; the batch goes non-interactive
            n_paid = 0
    if n_paid:
        paid = new[np.sort(first[arrival[:n_paid]])]
        phi[paid], std[paid] = explainer._dpgd(Z[paid], columns[paid], noise, commitment,
                                               offsets[paid])
        phase[paid], cost[paid], todo[paid] = "interactive", explainer.epsilon_per_query, False
        explainer._record(Z[paid], phi[paid], "interactive", explainer.epsilon_per_query, T,
                          columns[paid], std[paid])
    else:
        paid = new[:0]
    # repeats of a paid query within the batch share its answer for free
    repeat = (rank[inverse] < n_paid) & ~np.isin(new, paid)
    source = new[first[inverse[repeat]]]
    phi[new[repeat]], phase[new[repeat]], todo[new[repeat]] = phi[source], "reused", False
    std[new[repeat]] = std[source]
    explainer._record(Z[new[repeat]], phi[new[repeat]], "reused", 0.0, 0, columns[new[repeat]],
                      std[new[repeat]])


def answer_adaptive(explainer, Z, columns, offsets, phi, phase, cost, todo, noise, forms=None):
    """Algorithms 2-3 (and the enhanced variant), one query at a time, in order.

    Each new query: reuse an interactive answer within ``reuse_distance``
    if there is one; else answer it interactively if the budget can pay
    for the worst case (:func:`_adaptive_answer`). Until the history holds
    ``_MIN_HISTORY`` interactive answers, answers start from 0 and run
    ``max_iter`` steps: they are the roots of the chains of warm starts,
    and a few well-converged roots make every later answer better (see the
    doc page).

    A commit refused because another user of a shared ledger took the
    room since the check sends the following queries non-interactive
    (an answer whose remaining steps are refused is its first step).

    ``forms(Z, columns, offsets)`` computes a query's local loss, after
    its spend is committed (default: the explainer's ``_forms``; with
    ``n_jobs``, its ``_forms_in_blocks``: parallel row blocks, which draw
    no noise). Fills ``phi``, ``phase``, ``cost`` and ``todo`` in place.
    """
    new = np.flatnonzero(todo)
    if not len(new):
        return
    forms = explainer._forms if forms is None else forms
    all_past, all_answers, all_columns = explainer._interactive()
    exhausted = False
    for i in new:
        # the past answers for the same class: what reuse and warm starts draw on
        same = all_columns == columns[i]
        past, answers = all_past[same], all_answers[same]
        if len(past):
            dist = np.linalg.norm(past - Z[i], axis=1)
            j = int(np.argmin(dist))
            if dist[j] <= explainer.reuse_distance:
                phi[i], phase[i], todo[i] = answers[j], "reused", False
                explainer._record(Z[i:i + 1], phi[i:i + 1], "reused", 0.0, 0, columns[i:i + 1])
                continue
        if exhausted:
            continue
        answered = _adaptive_answer(explainer, Z[i:i + 1], columns[i:i + 1], offsets[i:i + 1],
                                    past, answers, noise, forms)
        if answered is None:  # nothing committed: later queries may still be reused
            exhausted = True
            continue
        phi[i], steps, cost[i], refused = answered
        phase[i], todo[i] = "interactive", False
        explainer._record(Z[i:i + 1], phi[i:i + 1], "interactive", cost[i], steps,
                          columns[i:i + 1])
        all_past, all_answers = np.vstack([all_past, Z[i]]), np.vstack([all_answers, phi[i]])
        all_columns = np.r_[all_columns, columns[i]]
        if refused:
            exhausted = True


def _adaptive_answer(explainer, z_i, column, offset, past, answers, noise, forms):
    """One interactive answer at the query ``z_i`` (1, d): Algorithms 2-3.

    If the budget can pay for the worst case (``max_iter`` steps, and the
    warm-start choice when the history ``past, answers`` of the same class
    is long enough), commit the warm-start choice and the first step, read
    the dataset (the query's local loss, ``forms``), pick a warm start
    among averages of past answers with the exponential mechanism on the
    gradient norm, and run as many noisy steps as the rule of
    :func:`n_steps` allows, the steps after the first committed once the
    first noisy gradient has fixed their number.

    Returns None if the budget refused the first commit (nothing was
    committed or read), else the answer, its number of steps, its epsilon
    and whether the commit of its remaining steps was refused (then the
    answer is its paid first step).
    """
    T, z, ledger = explainer.n_iter_, explainer.noise_multiplier_, explainer.ledger_
    n_em = int(len(past) >= _MIN_HISTORY)  # Algorithm 2: a DP warm start
    try:
        ledger.check(gaussian_event(z, steps=T + n_em))
    except BudgetError:
        return None
    query = explainer.n_queries_
    try:
        # the warm-start choice and the first step, before the dataset is read
        first = ledger.commit(
            gaussian_event(z, steps=1 + n_em),
            f"query {query}: " + ("warm start and first step" if n_em else "first step"),
        )
    except BudgetError:  # taken by another user of a shared ledger
        return None
    H, g = forms(z_i, column, offset)
    phi0 = np.zeros(z_i.shape[1])
    if n_em:
        near = answers[np.argsort(np.linalg.norm(past - z_i[0], axis=1))]
        candidates = np.array([near[:size].mean(axis=0) for size in _CANDIDATE_SIZES])
        phi0 = candidates[warm_start(
            H[0], g[0], candidates, epsilon=explainer.warm_start_epsilon_,
            sensitivity=explainer.sensitivity_, noise_multiplier=z, noise=noise,
            commitment=first)]
    # the smallest gradient norm one noisy gradient tells from 0 (see n_steps)
    resolution = (2.0 * z_i.shape[1]) ** 0.25 * (z * explainer.sensitivity_)
    floor = explainer.strategy == "adaptive"
    refused = []

    def plan(beta):
        # from the first released gradient only: post-processing
        steps = n_steps(beta, resolution, warm=n_em > 0, max_iter=T, floor=floor)
        if steps == 1:
            return 1, None
        try:
            rest = ledger.commit(gaussian_event(z, steps=steps - 1),
                                 f"query {query}: {steps - 1} more steps")
        except BudgetError:  # taken by another user: the answer is its paid step
            refused.append(steps)
            return 1, None
        return steps, rest

    phi, steps = dpgd_warm_start(H[0], g[0], phi0, max_iter=T, plan=plan, noise=noise,
                                 commitment=first, **explainer._descent())
    # the steps were chosen from released values only: a Gaussian privacy filter
    return phi, steps, gaussian_epsilon(z, explainer.delta, steps=steps + n_em), bool(refused)


def warm_start(H, g, candidates, *, epsilon, sensitivity, noise_multiplier, noise, commitment):
    """The exponential mechanism on ``-||grad L(phi_j, z)||`` over the candidates.

    ``H, g``: the query's local loss. One row moves the gradient by at most
    ``sensitivity`` in norm (under the ledger's relation), so each utility
    moves by at most that much: the choice is ``epsilon``-DP (the
    explainer's ``warm_start_epsilon_``), accounted as one Gaussian step of
    ``noise_multiplier`` (:func:`skdpx.privacy.gaussian_to_pure`), drawn
    from ``commitment``.
    """
    grads = 2.0 * (candidates @ H - g)  # H is symmetric
    utility = -np.linalg.norm(grads, axis=1)
    return int(exponential_release(
        utility, epsilon=epsilon, sensitivity=sensitivity, noise=noise, commitment=commitment,
        event=gaussian_event(noise_multiplier),
    ))


def n_steps(beta, resolution, *, warm, max_iter, floor):
    """Theorem 4.4's number of steps from a warm start with gradient norm ``beta``.

    With ``beta = (log T)^-a``, the theorem's ``beta^(1 - 1/a) T`` is
    ``T beta log T``, fewer than T (``max_iter``) when ``beta < 1 / log T``.
    ``beta`` is estimated from the first noisy gradient ``G`` of the descent
    (the paper uses the exact norm, which is not DP): ``||G||^2 - d s^2``
    (``s`` the noise's standard deviation) is unbiased for ``beta^2``,
    with a standard deviation of about ``sqrt(2 d) s^2`` when ``beta`` is
    small, so one noisy gradient cannot tell a norm below
    ``resolution = (2 d)^(1/4) s`` from 0. "adaptive" (``floor``) floors
    ``beta`` at that resolution (the paper floors it at the noise's norm
    ``sqrt(d) s``, 2.7 times higher at d = 104; see the doc page);
    "enhanced" does not floor it, and takes at least 2 steps (section 4.4).
    """
    T = max_iter
    if not warm or T < 3:
        return T
    b = max(beta, resolution) if floor else beta
    if b * np.log(T) >= 1.0:
        return T
    return int(max(2, np.ceil(T * b * np.log(T))))
