"""Empirical privacy auditing: a statistical lower bound on epsilon.

The auditor runs a randomized mechanism many times on two neighbouring
datasets and looks for a test that tells the two output distributions apart.
Any such test gives a lower bound on the epsilon the mechanism can satisfy;
a lower bound above the claimed epsilon shows that the claim is false.
It is meant for tests: it can show that a mechanism is broken, never that it
is private.

:func:`audit_epsilon` uses the single best threshold test and makes no
assumption on the mechanism. :func:`audit_gdp`, for Gaussian-type mechanisms
(Gaussian mechanism, full-batch DP-SGD), bounds the parameter mu of Gaussian
differential privacy from several thresholds and converts it into epsilon,
which catches far smaller errors in the noise.
"""

import numbers
import warnings
from typing import NamedTuple

import numpy as np
from scipy.optimize import brentq
from scipy.special import log_ndtr, ndtri
from scipy.stats import beta

from ._validation import check_random_state

__all__ = ["GDPAudit", "GDPAuditWarning", "audit_epsilon", "audit_gdp", "epsilon_from_samples"]


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
    _check_audit_arguments(release, statistic, n_trials, confidence)
    if not _is_real(delta) or not 0.0 <= delta < 1.0:
        raise ValueError(f"delta must be a number in [0, 1), got {delta!r}.")
    n_trials = int(n_trials)
    confidence = float(confidence)
    delta = float(delta)

    # Split each sample: the first half chooses the test, the second half,
    # independent of that choice, bounds its error rates.
    x_select, x_test, y_select, y_test = _draw_halves(
        release, data, neighbour, n_trials, random_state, statistic, batched)
    # Each of the two one-sided bounds fails with probability alpha.
    alpha = (1.0 - confidence) / 2.0

    return _bound_from_halves(x_select, x_test, y_select, y_test, alpha, delta)


def epsilon_from_samples(x, y, *, delta=0.0, confidence=0.95, random_state=0):
    """Clopper-Pearson lower bound on epsilon from two samples of a statistic.

    The bound of :func:`audit_epsilon` for outputs already drawn: ``x`` holds
    independent draws of a statistic under one hypothesis (e.g. the attack
    scores of members), ``y`` under the other (non-members). Each sample is
    cut at random in two halves (of sizes ``len // 2`` and the rest); the
    first halves choose the best threshold test (in both directions), the
    second halves, independent of that choice, bound its error rates with
    one-sided Clopper-Pearson intervals at level ``1 - (1 - confidence) / 2``
    each, and the result is ``log((p_lower - delta) / p_upper)``, clipped
    below at 0.

    Parameters
    ----------
    x, y : array-like of shape (n_x,) and (n_y,)
        The two samples, each with at least 4 finite values.
    delta : float, default=0.0
        The delta of the ``(epsilon, delta)`` guarantee bounded, in [0, 1).
    confidence : float, default=0.95
        Probability, over the draws, that the returned value is a lower
        bound; in (0, 1).
    random_state : int, RandomState instance or None, default=0
        The random halving (evaluation randomness, never privacy noise).

    Returns
    -------
    float
        The lower bound on epsilon (0 when no test is conclusive).

    Examples
    --------
    >>> import numpy as np
    >>> from skdpx.privacy._audit import epsilon_from_samples
    >>> rng = np.random.RandomState(0)
    >>> same = epsilon_from_samples(rng.normal(size=2000), rng.normal(size=2000))
    >>> apart = epsilon_from_samples(rng.normal(3, 1, 2000), rng.normal(size=2000))
    >>> same < 0.3 < 1.5 < apart
    True
    """
    if not _is_real(confidence) or not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be a number in (0, 1), got {confidence!r}.")
    if not _is_real(delta) or not 0.0 <= delta < 1.0:
        raise ValueError(f"delta must be a number in [0, 1), got {delta!r}.")
    samples = []
    for name, values in (("x", x), ("y", y)):
        values = np.asarray(values, dtype=float).ravel()
        if values.size < 4 or not np.isfinite(values).all():
            raise ValueError(f"{name} needs at least 4 values, all finite; got {values.size} "
                             "values" + ("" if np.isfinite(values).all() else " with NaN or inf") + ".")
        samples.append(values)
    rng = check_random_state(random_state)
    x, y = (rng.permutation(v) for v in samples)
    x_select, x_test = x[: x.size // 2], x[x.size // 2:]
    y_select, y_test = y[: y.size // 2], y[y.size // 2:]
    return _bound_from_halves(x_select, x_test, y_select, y_test,
                              (1.0 - float(confidence)) / 2.0, float(delta))


def _bound_from_halves(x_select, x_test, y_select, y_test, alpha, delta):
    """Choose the test on the first halves, bound its error rates on the second ones."""
    test = _select_test(x_select, y_select, alpha, delta)
    if test is None:
        return 0.0
    threshold, above, swap = test
    if swap:
        x_test, y_test = y_test, x_test
    p_lower = _cp_lower(_count(np.sort(x_test), threshold, above), len(x_test), alpha)
    p_upper = _cp_upper(_count(np.sort(y_test), threshold, above), len(y_test), alpha)
    if p_lower - delta <= 0.0:
        return 0.0
    return max(0.0, float(np.log((p_lower - delta) / p_upper)))


def _draw_halves(release, data, neighbour, n_trials, random_state, statistic, batched):
    """Run the release ``n_trials`` times on each dataset; split each sample in halves.

    Returns ``(x_select, x_test, y_select, y_test)``: the first halves choose
    the test, the second halves, independent of that choice, bound its errors.
    """
    rng = check_random_state(random_state)
    x = _draw(release, data, n_trials, rng, statistic, batched)
    y = _draw(release, neighbour, n_trials, rng, statistic, batched)
    n_select = n_trials // 2
    return x[:n_select], x[n_select:], y[:n_select], y[n_select:]


def _check_audit_arguments(release, statistic, n_trials, confidence):
    """The checks that audit_epsilon and audit_gdp share."""
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
    n_x, n_y = x.size, y.size
    thresholds = np.unique(np.concatenate([x, y]))
    # Number of values <= t for every candidate threshold t.
    x_le = np.searchsorted(np.sort(x), thresholds, side="right")
    y_le = np.searchsorted(np.sort(y), thresholds, side="right")

    def log_bounds(n):
        # Clopper-Pearson bounds for every possible count out of n, looked up by count.
        counts = np.arange(n + 1)
        lower = _cp_lower(counts, n, alpha) - delta
        log_lower = np.full(n + 1, -np.inf)
        log_lower[lower > 0.0] = np.log(lower[lower > 0.0])
        return log_lower, np.log(_cp_upper(counts, n, alpha))

    (low_x, up_x), (low_y, up_y) = log_bounds(n_x), log_bounds(n_y)
    # Candidate tests as (log lower bound of the rate in S under the likely
    # sample, log upper bound under the other), with their (above, swap) flags.
    candidates = [
        (low_x[n_x - x_le], up_y[n_y - y_le], True, False),
        (low_x[x_le], up_y[y_le], False, False),
        (low_y[n_y - y_le], up_x[n_x - x_le], True, True),
        (low_y[y_le], up_x[x_le], False, True),
    ]
    best = None
    for log_in, log_out, above, swap in candidates:
        scores = log_in - log_out
        i = int(np.argmax(scores))
        if np.isfinite(scores[i]) and (best is None or scores[i] > best[0]):
            best = (scores[i], thresholds[i], above, swap)
    if best is None:
        return None
    return best[1:]


class GDPAuditWarning(UserWarning):
    """The outputs of an audit are not consistent with a Gaussian trade-off.

    Issued by :func:`audit_gdp` when it refuses to convert its lower bound on
    the Gaussian DP parameter ``mu`` into a bound on epsilon, and reports the
    assumption-free threshold bound instead.
    """


class GDPAudit(NamedTuple):
    """The result of :func:`audit_gdp`.

    Attributes
    ----------
    epsilon : float
        The lower bound to compare with the claimed epsilon: ``epsilon_gdp``
        if the held-out error rates are consistent with a Gaussian trade-off
        curve (``gaussian_fit``), else ``epsilon_threshold``.
    mu : float
        Lower confidence bound on the parameter of any ``mu``-Gaussian DP
        guarantee the mechanism satisfies on this pair of datasets. Valid
        for every mechanism, Gaussian or not.
    epsilon_gdp : float
        ``mu`` converted to epsilon at the audited delta with the exact
        Gaussian DP privacy profile. A lower bound on epsilon only if the
        mechanism's trade-off curve on this pair is Gaussian.
    epsilon_threshold : float
        Assumption-free lower bound on epsilon from the same held-out error
        rates (the best single threshold test, as in :func:`audit_epsilon`).
    gaussian_fit : bool
        False if no single Gaussian trade-off curve passes through the
        simultaneous confidence boxes of the held-out error rates.
    """

    epsilon: float
    mu: float
    epsilon_gdp: float
    epsilon_threshold: float
    gaussian_fit: bool


# Pooled quantiles of the selection half at which the trade-off curve is also
# measured, besides the best threshold: they span the curve, which lets the
# audit test whether it is Gaussian-shaped.
_GRID_LEVELS = np.array([0.02, 0.1, 0.3, 0.5, 0.7, 0.9, 0.98])
# Candidate thresholds searched on the selection half.
_SEARCH_LEVELS = np.linspace(0.0025, 0.9975, 399)


def audit_gdp(
    release,
    data,
    neighbour,
    *,
    n_trials,
    confidence=0.95,
    delta,
    statistic=None,
    batched=False,
    random_state=None,
):
    """Lower bounds on Gaussian DP's mu and on epsilon, for Gaussian mechanisms.

    A more powerful audit than :func:`audit_epsilon` for mechanisms whose
    privacy is that of a Gaussian: the Gaussian mechanism, compositions of
    Gaussian mechanisms, and full-batch DP-SGD (Nasr et al., 2023). Instead
    of the single best threshold test, it bounds the parameter ``mu`` of
    Gaussian differential privacy (Dong, Roth and Su, 2022), which every
    threshold measures, and converts it into epsilon with the exact Gaussian
    privacy profile at ``delta``.

    The method. Each sample of outputs is split in two halves. On the first
    half, the audit chooses the direction of the threshold tests
    ``{o > t}`` or ``{o <= t}`` and the threshold ``t`` that maximises the
    estimated bound on ``mu``, and adds the 2, 10, 30, 50, 70, 90 and 98%
    quantiles of the pooled outputs as further thresholds. On the second
    half, independent of these choices, it computes for every threshold
    one-sided Clopper-Pearson bounds on the false-positive rate ``FPR``
    (outputs on ``neighbour`` inside the rejection set) and the
    false-negative rate ``FNR`` (outputs on ``data`` outside it), all of
    them holding simultaneously with probability at least ``confidence`` (a
    weighted Bonferroni correction: the two upper bounds at the chosen
    threshold get half of ``1 - confidence``, the other 30 bounds share the
    other half).
    If the mechanism is ``mu``-GDP, every test satisfies
    ``FNR >= Phi(Phi^-1(1 - FPR) - mu)``, so each threshold gives
    ``mu >= Phi^-1(1 - FPR_upper) - Phi^-1(FNR_upper)``; ``mu`` is the
    largest of these, clipped below at 0. ``epsilon_gdp`` is the epsilon
    that ``mu``-GDP gives at ``delta``: the root of
    ``delta = Phi(-eps / mu + mu / 2) - e^eps Phi(-eps / mu - mu / 2)``.

    The assumption. ``mu`` is a valid lower bound for any mechanism, but
    ``epsilon_gdp`` is a lower bound on epsilon only if the mechanism's
    trade-off curve on ``(data, neighbour)`` is Gaussian, i.e. equal to
    ``G_m(a) = Phi(Phi^-1(1 - a) - m)`` for some ``m``. For other mechanisms
    it can exceed their true epsilon by far: a Laplace mechanism with
    epsilon 1 measures ``mu`` up to 1.03, whose Gaussian epsilon at
    ``delta = 1e-5`` is 4.5, and randomized response with epsilon 1
    measures ``mu = 1.23``, whose Gaussian epsilon is 5.6. As a safeguard,
    the audit checks that one Gaussian curve passes through the confidence
    boxes of all its thresholds, using the same simultaneous bounds (so a
    statistic whose trade-off curve is Gaussian fails the check with
    probability at most ``1 - confidence``); if none does, or if the
    statistic gives fewer than 3 distinct error-rate pairs, it warns
    (:class:`GDPAuditWarning`) and reports the assumption-free
    ``epsilon_threshold`` as ``epsilon``. The check catches clear departures
    only: it flagged a Laplace mechanism (epsilon 1, delta 1e-5) in 100 of
    100 audits with 5,000 trials a side or more, but in 35 with 2,000 and
    in 1 with 1,000, where the audit reported a false epsilon of about 4;
    it may also pass for a mechanism that is close to Gaussian but not
    Gaussian (Poisson-subsampled DP-SGD). Use this audit for Gaussian-type
    mechanisms only, and :func:`audit_epsilon` or ``epsilon_threshold``
    otherwise.

    Parameters
    ----------
    release : callable
        ``release(dataset, random_state)`` runs the mechanism once on
        ``dataset`` with the given :class:`numpy.random.RandomState` and
        returns its output; with ``batched=True``,
        ``release(dataset, random_state, n)`` returns ``n`` outputs stacked
        along the first axis. As in :func:`audit_epsilon`.
    data, neighbour : object
        The two neighbouring datasets, passed unchanged to ``release``.
    n_trials : int
        Number of runs of the mechanism on each dataset, at least 10. Half of
        them choose the thresholds, half of them bound the error rates.
    confidence : float, default=0.95
        Probability, over the audit's randomness, that all the error-rate
        bounds hold, hence that ``mu`` and ``epsilon_threshold`` are lower
        bounds (and ``epsilon_gdp`` too for a Gaussian trade-off curve).
        In ``(0, 1)``.
    delta : float
        The delta of the guarantee being audited, in ``(0, 1)``. It must be
        positive: at ``delta = 0``, every ``mu``-GDP mechanism with
        ``mu > 0`` has epsilon infinity.
    statistic : callable or None, default=None
        Maps one output of ``release`` to a scalar, as in
        :func:`audit_epsilon`. The bound is most powerful, and the Gaussian
        fit holds, when the statistic is the likelihood-ratio direction of
        the mechanism (the released value itself for a Gaussian mechanism on
        a scalar query; the dot product with the canary's clipped gradient,
        summed over steps, for DP-SGD). For speed, reduce inside a batched
        ``release`` and leave ``statistic=None``.
    batched : bool, default=False
        If True, ``release`` returns ``n`` outputs per call (see above).
    random_state : int, RandomState, Generator or None, default=None
        Seeds the :class:`numpy.random.RandomState` passed to ``release``
        (see :func:`skdpx.privacy.check_random_state`).

    Returns
    -------
    result : GDPAudit
        A named tuple ``(epsilon, mu, epsilon_gdp, epsilon_threshold,
        gaussian_fit)``; compare ``result.epsilon`` with the claimed
        epsilon.

    Raises
    ------
    ValueError
        If an argument is out of range, or if the outputs cannot be reduced
        to one real, non-NaN statistic per run.

    Warns
    -----
    GDPAuditWarning
        If the held-out error rates are not consistent with a Gaussian
        trade-off curve; ``epsilon`` is then ``epsilon_threshold``.

    See Also
    --------
    audit_epsilon : the assumption-free threshold audit.

    Notes
    -----
    As for :func:`audit_epsilon`, the bound concerns the pair
    ``(data, neighbour)`` only, and a small bound is no evidence of privacy.
    For DP-SGD the Gaussian shape holds for full batches (sample rate 1),
    where ``T`` steps with noise multiplier ``z`` are one Gaussian mechanism
    with multiplier ``z / sqrt(T)``, and the auditor sees every iterate (or
    the noisy gradient sums); Poisson subsampling makes the trade-off a
    mixture, which is not Gaussian.

    References
    ----------
    .. [1] M. Nasr, J. Hayes, T. Steinke, B. Balle, F. Tramer,
       M. Jagielski, N. Carlini and A. Terzis, "Tight auditing of differentially private
       machine learning", 32nd USENIX Security Symposium, 2023.
    .. [2] J. Dong, A. Roth and W. J. Su, "Gaussian differential privacy",
       Journal of the Royal Statistical Society Series B, 84(1), 2022.
    .. [3] B. Balle and Y.-X. Wang, "Improving the Gaussian mechanism for
       differential privacy: analytical calibration and optimal denoising",
       International Conference on Machine Learning (ICML), 2018.

    Examples
    --------
    A Gaussian mechanism on a counting query (sensitivity 1), calibrated for
    epsilon 1 at delta 1e-5, and the same with half the noise:

    >>> import numpy as np
    >>> from skdpx.privacy import calibrate_noise
    >>> from skdpx.privacy._audit import audit_gdp
    >>> z = calibrate_noise(1.0, 1e-5)
    >>> def gaussian(scale):
    ...     def release(dataset, random_state, n):
    ...         return np.sum(dataset) + random_state.normal(scale=scale, size=n)
    ...     return release
    >>> data, neighbour = np.ones(10), np.ones(9)
    >>> audit_gdp(gaussian(z), data, neighbour, n_trials=20_000, delta=1e-5,
    ...           batched=True, random_state=0).epsilon < 1.0
    True
    >>> audit_gdp(gaussian(z / 2), data, neighbour, n_trials=20_000,
    ...           delta=1e-5, batched=True, random_state=0).epsilon > 1.0
    True
    """
    _check_audit_arguments(release, statistic, n_trials, confidence)
    if not _is_real(delta) or not 0.0 < delta < 1.0:
        raise ValueError(
            f"delta must be a number in (0, 1), got {delta!r}: at delta = 0 "
            "every mu-GDP mechanism with mu > 0 has epsilon infinity."
        )
    n_trials = int(n_trials)
    confidence = float(confidence)
    delta = float(delta)

    x_select, x_test, y_select, y_test = _draw_halves(
        release, data, neighbour, n_trials, random_state, statistic, batched)
    n_test = len(x_test)

    # Simultaneous bounds (weighted Bonferroni): the upper bounds on FPR and
    # FNR at the chosen threshold fail with probability alpha / 4 each; the
    # other 4 * n_grid + 2 bounds share the remaining alpha / 2.
    alpha = 1.0 - confidence
    n_grid = _GRID_LEVELS.size
    alpha_main = alpha / 4.0
    alpha_rest = alpha / 2.0 / (4 * n_grid + 2)

    # First half: the direction and the thresholds.
    best, above = _select_threshold(x_select, y_select, alpha_main)
    grid = np.quantile(np.concatenate([x_select, y_select]), _GRID_LEVELS)
    thresholds = np.concatenate([[best], grid])
    levels_upper = np.concatenate([[alpha_main], np.full(n_grid, alpha_rest)])

    # Second half: error rates at every threshold. The rejection set S
    # ("the output came from data") is {o > t} if above else {o <= t}.
    k_fp = _count(np.sort(y_test), thresholds, above)  # neighbour in S
    k_fn = n_test - _count(np.sort(x_test), thresholds, above)  # data not in S
    fpr_upper = _cp_upper(k_fp, n_test, levels_upper)
    fnr_upper = _cp_upper(k_fn, n_test, levels_upper)
    fpr_lower = _cp_lower(k_fp, n_test, alpha_rest)
    fnr_lower = _cp_lower(k_fn, n_test, alpha_rest)

    mu_lower = ndtri(1.0 - fpr_upper) - ndtri(fnr_upper)
    mu = max(0.0, float(np.max(mu_lower)))
    # The largest mu each threshold allows (infinite if a rate can be 0).
    with np.errstate(divide="ignore", invalid="ignore"):
        mu_upper = ndtri(1.0 - fpr_lower) - ndtri(fnr_lower)
    # The shape of the curve can only be measured at distinct error pairs.
    n_points = np.unique(np.column_stack([k_fp, k_fn]), axis=0).shape[0]
    gaussian_fit = bool(np.max(mu_lower) <= np.min(mu_upper)) and n_points >= 3

    epsilon_gdp = _gdp_epsilon(mu, delta)
    epsilon_threshold = _threshold_epsilon(fpr_upper, fnr_upper, delta)
    if gaussian_fit:
        epsilon = epsilon_gdp
    else:
        reason = (
            "no Gaussian trade-off curve fits the held-out error rates"
            if n_points >= 3
            else f"the statistic gives only {n_points} distinct error-rate "
            "pairs, too few to check that the trade-off curve is Gaussian"
        )
        warnings.warn(
            f"audit_gdp: {reason}; the mechanism may not be Gaussian, so the "
            f"Gaussian DP conversion (epsilon >= {epsilon_gdp:.3g}) is not "
            f"valid and the threshold bound (epsilon >= "
            f"{epsilon_threshold:.3g}) is reported instead.",
            GDPAuditWarning,
            stacklevel=2,
        )
        epsilon = epsilon_threshold
    return GDPAudit(
        epsilon=float(epsilon),
        mu=mu,
        epsilon_gdp=float(epsilon_gdp),
        epsilon_threshold=float(epsilon_threshold),
        gaussian_fit=gaussian_fit,
    )


def _select_threshold(x, y, alpha):
    """The threshold and direction with the largest estimated bound on mu.

    Searched over pooled quantiles of ``(x, y)``, with Clopper-Pearson upper
    bounds at level ``alpha`` on the rates of the same sample size (the
    held-out half has as many runs, or one more).
    """
    n = x.size
    candidates = np.unique(np.quantile(np.concatenate([x, y]), _SEARCH_LEVELS))
    best = None
    for above in (True, False):
        k_fp = _count(np.sort(y), candidates, above)
        k_fn = n - _count(np.sort(x), candidates, above)
        scores = ndtri(1.0 - _cp_upper(k_fp, n, alpha)) - ndtri(
            _cp_upper(k_fn, n, alpha)
        )
        i = int(np.argmax(scores))
        if best is None or scores[i] > best[0]:
            best = (scores[i], candidates[i], above)
    return best[1], best[2]


def _threshold_epsilon(fpr_upper, fnr_upper, delta):
    """The assumption-free epsilon bound of the threshold tests.

    For a rejection set ``S`` with ``P[M(D) in S] = 1 - FNR`` and
    ``P[M(D') in S] = FPR``, (epsilon, delta)-DP requires both
    ``1 - FNR <= e^eps FPR + delta`` and ``1 - FPR <= e^eps FNR + delta``.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        forward = np.log((1.0 - fnr_upper - delta) / fpr_upper)
        backward = np.log((1.0 - fpr_upper - delta) / fnr_upper)
    bounds = np.concatenate([forward, backward])
    bounds = bounds[np.isfinite(bounds)]
    return max(0.0, float(np.max(bounds))) if bounds.size else 0.0


def _gdp_log_delta(mu, eps):
    """log delta(eps) of mu-GDP: Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)."""
    log_first = log_ndtr(-eps / mu + mu / 2.0)
    log_second = eps + log_ndtr(-eps / mu - mu / 2.0)
    if log_second >= log_first:
        return -np.inf
    return log_first + np.log(-np.expm1(log_second - log_first))


def _gdp_epsilon(mu, delta):
    """The smallest epsilon such that mu-GDP implies (epsilon, delta)-DP."""
    if mu <= 0.0:
        return 0.0
    log_delta = np.log(delta)
    if _gdp_log_delta(mu, 0.0) <= log_delta:
        return 0.0
    eps_low, eps_high = 0.0, 1.0
    while _gdp_log_delta(mu, eps_high) > log_delta:
        eps_low, eps_high = eps_high, 2.0 * eps_high
    return float(
        brentq(
            lambda eps: _gdp_log_delta(mu, eps) - log_delta,
            eps_low,
            eps_high,
            xtol=1e-12,
        )
    )
