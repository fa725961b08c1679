"""Empirical privacy auditing: a statistical lower bound on epsilon.

The auditor runs a randomized mechanism many times on two neighbouring
datasets and looks for a test that tells the two output distributions apart.
Any such test gives a lower bound on the epsilon the mechanism can satisfy;
a lower bound above the claimed epsilon shows that the claim is false.
It is meant for tests: it can show that a mechanism is broken, never that it
is private.
"""

import numbers

import numpy as np
from scipy.stats import beta

from ._validation import check_random_state

__all__ = ["audit_epsilon"]


def audit_epsilon(
    release,
    data,
    neighbour,
    *,
    n_trials,
    confidence=0.95,
    delta=0.0,
    statistic=None,
    batched=False,
    random_state=None,
):
    """Clopper-Pearson lower bound on the epsilon of a randomized release.

    Runs ``release`` ``n_trials`` times on ``data`` and ``n_trials`` times on
    ``neighbour`` and returns a lower bound on the epsilon of any
    ``(epsilon, delta)``-differential privacy guarantee the mechanism can
    satisfy on this pair of neighbouring datasets, valid with probability at
    least ``confidence`` over the audit's own randomness.

    The method is the standard distinguishing-test audit (Jagielski et al.,
    2020; Nasr et al., 2021). Each sample of outputs is split in two halves.
    On the first half, the auditor chooses a rejection set ``S`` among the
    threshold tests ``{o > t}`` and ``{o <= t}``, with ``t`` over the observed
    values, in both directions (``data`` against ``neighbour`` and the
    reverse), maximising the estimated bound. On the second half, which is
    independent of that choice, it computes a one-sided Clopper-Pearson lower
    bound ``p_lower`` on ``P[M(D) in S]`` and upper bound ``p_upper`` on
    ``P[M(D') in S]``, each at level ``1 - (1 - confidence) / 2`` so that
    both hold jointly with probability at least ``confidence``, and returns
    ``log((p_lower - delta) / p_upper)``, clipped below at 0.

    Parameters
    ----------
    release : callable
        ``release(dataset, random_state)`` runs the mechanism once on
        ``dataset`` with the given :class:`numpy.random.RandomState` and
        returns its output (a scalar or an array). With ``batched=True``,
        ``release(dataset, random_state, n)`` returns ``n`` outputs at once,
        stacked along the first axis.
    data, neighbour : object
        The two neighbouring datasets, passed unchanged to ``release``.
    n_trials : int
        Number of runs of the mechanism on each dataset, at least 10. Half of
        them choose the test and half of them bound its error rates, so the
        largest bound the audit can ever return grows like
        ``log(n_trials / 2)``.
    confidence : float, default=0.95
        Probability, over the audit's randomness, that the returned value is
        indeed a lower bound on the mechanism's epsilon. In ``(0, 1)``.
    delta : float, default=0.0
        The delta of the guarantee being audited, in ``[0, 1)``.
    statistic : callable or None, default=None
        Maps one output of ``release`` to a scalar test statistic. If None, a
        scalar output is used as is and an array output is raveled and its
        first element is used. Choosing a statistic that separates the two
        datasets well is the auditor's job: any statistic is post-processing,
        so the bound stays valid whatever the choice, but a poor statistic
        gives a weak (small) bound. With ``batched=True`` the statistic is
        applied to each output in a Python loop; for speed, reduce inside
        ``release`` and leave ``statistic=None``.
    batched : bool, default=False
        If True, ``release`` is called once per dataset with a third argument
        ``n`` and must return ``n`` outputs (a fast path for cheap, vectorised
        mechanisms, allowing 10**5 trials or more). If False, ``release`` is
        called ``n_trials`` times per dataset.
    random_state : int, RandomState, Generator or None, default=None
        Seeds the single :class:`numpy.random.RandomState` passed to every
        call of ``release`` (see
        :func:`skdpx.privacy.check_random_state`); an int makes the audit
        reproducible, None draws fresh entropy.

    Returns
    -------
    eps_lower : float
        The lower bound on epsilon, at least 0.0.

    Raises
    ------
    ValueError
        If an argument is out of range, or if the outputs cannot be reduced
        to one real, non-NaN statistic per run.

    Notes
    -----
    The bound holds for the pair ``(data, neighbour)`` only; a mechanism's
    epsilon is a supremum over all neighbouring pairs, so the audit is most
    telling on the worst-case pair (for instance, removing the row that
    changes the query most). A value of 0.0 means that no evidence against
    privacy was found, not that the mechanism is private.

    References
    ----------
    .. [1] M. Jagielski, J. Ullman and A. Oprea, "Auditing differentially
       private machine learning: how private is private SGD?", Advances in
       Neural Information Processing Systems 33 (NeurIPS), 2020.
    .. [2] M. Nasr, S. Song, A. Thakurta, N. Papernot and N. Carlini,
       "Adversary instantiation: lower bounds for differentially private
       machine learning", IEEE Symposium on Security and Privacy, 2021.

    Examples
    --------
    A Laplace mechanism with epsilon 1 on a counting query (sensitivity 1):

    >>> import numpy as np
    >>> from skdpx.privacy._audit import audit_epsilon
    >>> def release(dataset, random_state, n):
    ...     return np.sum(dataset) + random_state.laplace(scale=1.0, size=n)
    >>> data, neighbour = np.ones(10), np.ones(9)
    >>> eps_lb = audit_epsilon(release, data, neighbour, n_trials=20_000,
    ...                        batched=True, random_state=0)
    >>> 0.0 <= eps_lb < 1.0
    True

    The same mechanism with a tenth of the noise is caught:

    >>> def broken(dataset, random_state, n):
    ...     return np.sum(dataset) + random_state.laplace(scale=0.1, size=n)
    >>> audit_epsilon(broken, data, neighbour, n_trials=20_000, batched=True,
    ...               random_state=0) > 1.0
    True
    """
    if not callable(release):
        raise ValueError("release must be callable.")
    if statistic is not None and not callable(statistic):
        raise ValueError("statistic must be callable or None.")
    if isinstance(n_trials, bool) or not isinstance(n_trials, numbers.Integral):
        raise ValueError(f"n_trials must be an integer, got {n_trials!r}.")
    if n_trials < 10:
        raise ValueError(f"n_trials must be at least 10, got {n_trials}.")
    if not _is_real(confidence) or not 0.0 < confidence < 1.0:
        raise ValueError(
            f"confidence must be a number in (0, 1), got {confidence!r}."
        )
    if not _is_real(delta) or not 0.0 <= delta < 1.0:
        raise ValueError(f"delta must be a number in [0, 1), got {delta!r}.")
    n_trials = int(n_trials)
    confidence = float(confidence)
    delta = float(delta)

    rng = check_random_state(random_state)
    x = _draw(release, data, n_trials, rng, statistic, batched)
    y = _draw(release, neighbour, n_trials, rng, statistic, batched)

    # Split each sample: the first half chooses the test, the second half,
    # independent of that choice, bounds its error rates.
    n_select = n_trials // 2
    x_select, x_test = x[:n_select], x[n_select:]
    y_select, y_test = y[:n_select], y[n_select:]
    # Each of the two one-sided bounds fails with probability alpha.
    alpha = (1.0 - confidence) / 2.0

    test = _select_test(x_select, y_select, alpha, delta)
    if test is None:
        return 0.0
    threshold, above, swap = test
    if swap:
        x_test, y_test = y_test, x_test
    k_x = _count(np.sort(x_test), threshold, above)
    k_y = _count(np.sort(y_test), threshold, above)
    n_test = n_trials - n_select
    p_lower = _cp_lower(k_x, n_test, alpha)
    p_upper = _cp_upper(k_y, n_test, alpha)
    if p_lower - delta <= 0.0:
        return 0.0
    return max(0.0, float(np.log((p_lower - delta) / p_upper)))


def _is_real(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _draw(release, dataset, n, rng, statistic, batched):
    """Run the mechanism ``n`` times and return ``n`` scalar statistics."""
    if batched:
        outputs = release(dataset, rng, n)
        if statistic is None:
            values = np.asarray(outputs, dtype=float)
            if values.ndim == 0 or values.shape[0] != n:
                raise ValueError(
                    f"A batched release must return {n} outputs stacked along "
                    f"the first axis, got shape {values.shape}."
                )
            values = values.reshape(n, -1)
            if values.shape[1] == 0:
                raise ValueError("The release returned empty outputs.")
            values = values[:, 0]
        else:
            if len(outputs) != n:
                raise ValueError(
                    f"A batched release must return {n} outputs, got "
                    f"{len(outputs)}."
                )
            values = np.array(
                [_scalar(statistic(out)) for out in outputs], dtype=float
            )
    else:
        reduce = _first_element if statistic is None else statistic
        values = np.array(
            [_scalar(reduce(release(dataset, rng))) for _ in range(n)],
            dtype=float,
        )
    if np.isnan(values).any():
        raise ValueError("The test statistic is NaN for some outputs.")
    return values


def _first_element(output):
    values = np.asarray(output, dtype=float).ravel()
    if values.size == 0:
        raise ValueError("The release returned an empty output.")
    return values[0]


def _scalar(value):
    value = np.asarray(value)
    if value.ndim != 0:
        raise ValueError(
            f"The statistic must be a scalar, got an array of shape "
            f"{value.shape}."
        )
    return float(value)


def _count(sorted_values, threshold, above):
    """Number of values in ``{o > threshold}`` (or ``{o <= threshold}``)."""
    at_most = np.searchsorted(sorted_values, threshold, side="right")
    return sorted_values.size - at_most if above else at_most


def _cp_lower(k, n, alpha):
    """One-sided Clopper-Pearson lower bound on a binomial proportion."""
    k = np.asarray(k)
    with np.errstate(invalid="ignore"):
        bound = beta.ppf(alpha, k, n - k + 1)
    return np.where(k == 0, 0.0, bound)


def _cp_upper(k, n, alpha):
    """One-sided Clopper-Pearson upper bound on a binomial proportion."""
    k = np.asarray(k)
    with np.errstate(invalid="ignore"):
        bound = beta.ppf(1.0 - alpha, k + 1, n - k)
    return np.where(k == n, 1.0, bound)


def _select_test(x, y, alpha, delta):
    """Choose the threshold test with the largest bound on ``(x, y)``.

    Returns ``(threshold, above, swap)``: the rejection set is
    ``{o > threshold}`` if ``above`` else ``{o <= threshold}``, and ``swap``
    means that it is likely under ``y`` rather than ``x``. Returns None if no
    test gives a positive ``p_lower - delta``.
    """
    n = x.size
    thresholds = np.unique(np.concatenate([x, y]))
    # Number of values <= t for every candidate threshold t.
    x_le = np.searchsorted(np.sort(x), thresholds, side="right")
    y_le = np.searchsorted(np.sort(y), thresholds, side="right")
    # Clopper-Pearson bounds for every possible count, looked up by count.
    counts = np.arange(n + 1)
    lower = _cp_lower(counts, n, alpha) - delta
    upper = _cp_upper(counts, n, alpha)
    positive = lower > 0.0
    log_lower = np.full(n + 1, -np.inf)
    log_lower[positive] = np.log(lower[positive])
    log_upper = np.log(upper)
    # Candidate tests as (count in S under x, count in S under y), with the
    # matching (above, swap) flags.
    candidates = [
        (n - x_le, n - y_le, True, False),
        (x_le, y_le, False, False),
        (n - y_le, n - x_le, True, True),
        (y_le, x_le, False, True),
    ]
    best = None
    for k_in, k_out, above, swap in candidates:
        scores = log_lower[k_in] - log_upper[k_out]
        i = int(np.argmax(scores))
        if np.isfinite(scores[i]) and (best is None or scores[i] > best[0]):
            best = (scores[i], thresholds[i], above, swap)
    if best is None:
        return None
    return best[1:]
