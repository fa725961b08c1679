"""The number of rows a fit plans with: released with DP first, or public by the relation.

Under add-or-remove neighbours (the default relation) the number of rows
``n`` is itself private: the attacker who knows every other row learns
whether a person's row is in the data from any output that is a
deterministic function of ``n`` (a sampling rate, a number of steps, a
normaliser, a number of clusters, a label). So a fit never plans with
``n``: it releases a DP count first, inside its own epsilon, and computes
every plan, sampling rate and normaliser from that count (post-processing).

The count is the number of rows plus Laplace noise of scale ``1 /
epsilon_count`` (L1 sensitivity 1 under add-or-remove), drawn through
OpenDP's exact sampler when the noise is secure, with ``epsilon_count =
COUNT_SHARE * epsilon``. It is accounted as a :class:`FixedLossDpEvent`:
what follows it (a DP-SGD run whose sampling rate and number of steps come
from the count) is a different mechanism for each value of the count, and
basic composition with a pure-DP first release holds for any such choice:
if every plan the count can select is (``epsilon - epsilon_count``,
``delta``)-DP together with the fit's other releases, the whole fit is
(``epsilon``, ``delta``)-DP. Calibrating the rest with the count's event
as prior (:func:`~skdpx.privacy.calibrate_noise`) does exactly that.

Under replace-one neighbours the number of rows is the same in both
datasets, so it is public by the relation: a fit plans with ``len(X)`` and
releases no count. A non-private fit (``epsilon = inf``) plans with
``len(X)`` too.
"""

import math

from ._calibration import analytic_gaussian_sigma
from ._events import compose_events, fixed_loss_event, gaussian_event, pure_event
from ._exceptions import BudgetError
from ._mechanisms import _commit, count_release

__all__ = ["COUNT_SHARE", "FitCount"]

#: The share of an estimator's epsilon spent on its DP row count (add-or-remove).
COUNT_SHARE = 0.05


class FitCount:
    """The row count of one fit: the plan of its DP release, then the count itself.

    Made by :class:`~skdpx.base.DPEstimator` before anything is spent.

    Parameters
    ----------
    epsilon : float
        The estimator's epsilon (``inf``: non-private, the exact count).
    relation : {"add_or_remove", "replace_one"}
        The ledger's neighbouring relation: the count is released with DP
        under add-or-remove only (under replace-one it is public).
    share : float, default=COUNT_SHARE
        The share of ``epsilon`` the count spends.
    n_rows : float, optional
        A planning count already public (e.g. released with DP by a private
        search over these rows, and scaled to the part it fits on): used as
        it is, and nothing is released.
    floor : float, default=1
        The least count a fit plans with: a DP count below it (possible on
        small data: the noise does not care) plans for ``floor`` rows.

    Attributes
    ----------
    private : bool
        Whether the count is released with DP (then ``event`` is its cost).
    epsilon : float
        The count's epsilon (0 when it is not released).
    event : DpEvent or None
        ``FixedLossDpEvent(epsilon)``, or None.
    std : float
        The standard deviation of the count's noise (``sqrt(2) / epsilon``;
        0 when public): a public fact.
    raw : float or None
        The count as released (the DP count, which may be below ``floor``,
        or the public number).
    n : float or None
        The planning count once known (:meth:`release`): ``raw``, at least
        ``floor``.
    """

    def __init__(self, *, epsilon, relation, share=COUNT_SHARE, n_rows=None, floor=1.0):
        self.relation = relation
        self.floor = float(floor)
        self.raw = None if n_rows is None else float(n_rows)
        self.n = None if n_rows is None else max(float(n_rows), self.floor)
        self.private = (n_rows is None and relation == "add_or_remove"
                        and not math.isinf(epsilon))
        if self.private:
            self.epsilon = float(share) * float(epsilon)
            self.event = fixed_loss_event(self.epsilon)
            self.std = math.sqrt(2.0) / self.epsilon
        else:
            self.epsilon, self.event, self.std = 0.0, None, 0.0

    @property
    def label(self):
        return "row count (Laplace)"

    def proxy_event(self, epsilon, delta):
        """What the rest of a fit of (``epsilon``, ``delta``) costs, planned without the count.

        The rest is planned from the count, so before the count is released
        its exact event is unknown; every plan meets (``epsilon -
        self.epsilon``, ``delta``) together. For checking a shared ledger
        before anything is spent, one release that meets the same target
        stands for it: a Gaussian (``delta > 0``) or an ``epsilon``-DP
        release (``delta = 0``).
        """
        rest = epsilon - self.epsilon
        if math.isinf(rest):
            return None
        if delta > 0:
            return gaussian_event(analytic_gaussian_sigma(rest, delta))
        return pure_event(rest)

    def release(self, n_rows, *, noise, commitment):
        """Set and return :attr:`n`: the DP count of ``n_rows`` (private), or ``n_rows``.

        Parameters
        ----------
        n_rows : int
            The exact number of private rows. Read here, and only here.
        noise : NoiseSource
        commitment : Commitment or None
            Must hold :attr:`event` when the count is private.
        """
        if self.n is not None:  # given: public already
            return self.n
        if not self.private:
            self.raw = float(n_rows)
        else:
            self.raw = float(count_release(int(n_rows), epsilon=self.epsilon, noise=noise,
                                           commitment=commitment))
        self.n = max(self.raw, self.floor)
        return self.n

    @property
    def imprecise(self):
        """Whether the released count is below the floor or less than twice its noise's std."""
        return self.raw is not None and self.raw < max(self.floor, 2.0 * self.std)

    def spend_and_release(self, ledger, n_rows, *, noise, label=None):
        """Commit the count's spend to ``ledger`` (a PrivacyLedger or an
        EstimatorLedger), for good, then :meth:`release` it; returns :attr:`n`."""
        if not self.private:
            return self.release(n_rows, noise=noise, commitment=None)
        commitment = _commit(ledger, self.event, self.label if label is None else label,
                             delta=0.0)
        return self.release(n_rows, noise=noise, commitment=commitment)

    def commit_rest(self, commit):
        """Run ``commit()`` (the commit of the plan made from the count), saying in
        its :class:`BudgetError` that the count was spent.

        The stand-in checked before the count meets the same target, but the plan
        made from the count composes otherwise with a shared ledger, so the commit
        can still be refused: the count's spend stays (nothing is refunded), and
        the error says so.
        """
        try:
            return commit()
        except BudgetError as err:
            if not self.private:
                raise
            raise BudgetError(
                f"{err} The DP row count (epsilon {self.epsilon:.4g}) was spent before "
                "this was known; nothing else was.") from None

    def prior(self, *events):
        """The count's event composed with ``events`` (the other releases planned before)."""
        return compose_events(self.event, *events)

    def __repr__(self):
        if self.private:
            return f"FitCount(epsilon={self.epsilon:g}, std={self.std:.3g}, n={self.n})"
        return f"FitCount(public, n={self.n})"
