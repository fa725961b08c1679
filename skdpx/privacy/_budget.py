"""How an estimator spends: its own cap inside a (possibly shared) ledger."""

from collections import Counter
from functools import lru_cache
import math
import warnings

import attr
from dp_accounting import DpEvent, NoOpDpEvent, NonPrivateDpEvent, SelfComposedDpEvent
from sklearn.utils.validation import check_is_fitted

from .._sklearn_compat import HasMethods
from ._composition import _leaves, is_pure
from ._events import event_key
from ._exceptions import PrivacyLeakWarning
from ._ledger import ACCOUNTANT_METHODS, PrivacyLedger, is_budget_accountant
from ._random import _outside_stacklevel

from ._validation import DELTA_CONSTRAINT, EPSILON_CONSTRAINT

__all__ = [
    "BUDGET_PARAMETER_CONSTRAINTS", "Commitment", "CommitmentShare", "EstimatorLedger",
    "SpendReportMixin", "UncappedBudgetWarning", "resolve_ledger",
]

#: The parameter constraints every skdpx estimator shares (scikit-learn's
#: ``_parameter_constraints`` format): merge them into the class's own.
BUDGET_PARAMETER_CONSTRAINTS = {
    "epsilon": [EPSILON_CONSTRAINT],
    "delta": [DELTA_CONSTRAINT],
    # a dict {column: (lower, upper)} for a DataFrame's numeric columns
    "bounds": [tuple, list, dict, None],
    # a diffprivlib BudgetAccountant, or alike (duck typed: skdpx never imports diffprivlib)
    "accountant": [PrivacyLedger, HasMethods(list(ACCOUNTANT_METHODS)), None],
    "random_state": ["random_state"],
}


class UncappedBudgetWarning(PrivacyLeakWarning):
    """A fit or a release was given no ledger: nothing caps the total spent on its data."""


#: The one message of an UncappedBudgetWarning, for a fit (``accountant=None``)
#: or a stand-alone release function (``ledger=None``): see :func:`warn_uncapped`.
_UNCAPPED = (
    "{parameter}=None: {recorded}, so nothing caps the total spent on these data (each new "
    "{what}, and each estimator on the same rows, spends its epsilon again). Give every "
    "estimator on the same private data one skdpx.privacy.PrivacyLedger(epsilon=..., "
    "delta=...) as accountant (path=... to persist it), and the same ledger to every release "
    "function as ledger."
)
_UNCAPPED_CASES = {
    "fit": ("accountant", "this fit's spends are recorded in a fresh, uncapped ledger of its own"),
    "release": ("ledger", "this release is recorded in no ledger"),
}


def warn_uncapped(what="fit"):
    """Warn (:class:`UncappedBudgetWarning`, at the user's line) that nothing caps a spend.

    Parameters
    ----------
    what : {"fit", "release"}
        A fit given ``accountant=None`` (its spends go to a fresh, uncapped
        ledger of its own), or a stand-alone release function
        (:func:`~skdpx.privacy.gaussian_mechanism` and alike) given
        ``ledger=None`` (its spend is recorded nowhere).
    """
    parameter, recorded = _UNCAPPED_CASES[what]
    warnings.warn(_UNCAPPED.format(parameter=parameter, recorded=recorded, what=what),
                  UncappedBudgetWarning, stacklevel=_outside_stacklevel())


def resolve_ledger(accountant):
    """The PrivacyLedger that an estimator's ``accountant`` parameter names.

    Parameters
    ----------
    accountant : PrivacyLedger, diffprivlib.BudgetAccountant (or alike) or None
        A ledger is used as it is. A BudgetAccountant (any object with its
        ``check`` and ``spend`` methods: duck typed, diffprivlib is not
        imported) gets a fresh, uncapped ledger that mirrors every spend
        into it, so its own cap is enforced by the accountant too. ``None``: a fresh, uncapped ledger for this fit
        alone, and an :class:`UncappedBudgetWarning` (nothing caps the total
        spent on these data). Spends are never copied into diffprivlib's
        global default accountant: it composes naively and has no cap.
    """
    if isinstance(accountant, PrivacyLedger):
        return accountant
    if accountant is None:
        warn_uncapped("fit")
        return PrivacyLedger()
    if is_budget_accountant(accountant):
        return PrivacyLedger(mirror=accountant)
    raise TypeError(
        "accountant must be a skdpx.privacy.PrivacyLedger, a diffprivlib BudgetAccountant (or "
        f"any object with its `check` and `spend` methods) or None, got "
        f"{type(accountant).__name__}."
    )


class SpendReportMixin:
    """``epsilon_spent_`` / ``delta_spent_`` of an estimator whose spends are in ``ledger_``."""

    @property
    def epsilon_spent_(self):
        check_is_fitted(self)
        return self.ledger_.epsilon_spent

    @property
    def delta_spent_(self):
        check_is_fitted(self)
        return self.ledger_.delta_spent


def _leaf_keys(event):
    """The leaves of ``event`` with their counts: ((event_key(leaf), count), ...), each once."""
    counts = Counter()
    _leaves(event, 1, counts, key=event_key)
    return tuple(counts.items())


@lru_cache(maxsize=256)
def _cached_leaf_keys(event):
    return _leaf_keys(event)


def _leaf_keys_of(event):
    """:func:`_leaf_keys`, memoised by the event: a DP-SGD step draws the same one every time."""
    try:
        return _cached_leaf_keys(event)
    except TypeError:  # not hashable (a ComposedDpEvent holds a list): walked again
        return _leaf_keys(event)


def _is_non_private(key):
    """Whether a leaf (its :func:`~._events.event_key`: an event or a nested tuple) is or
    holds a NonPrivateDpEvent."""
    if isinstance(key, NonPrivateDpEvent):
        return True
    if isinstance(key, DpEvent):
        return any(_is_non_private(getattr(key, field.name)) for field in attr.fields(type(key)))
    return isinstance(key, tuple) and any(
        v == "NonPrivateDpEvent" or _is_non_private(v) for v in key if isinstance(v, (str, tuple)))


class Commitment:
    """A spend that has been committed, and the releases it pays for.

    :meth:`EstimatorLedger.commit` returns one. The privacy core's release
    functions draw their own event from it before they add noise, so a
    release that was not in the committed plan cannot happen: it raises
    ``RuntimeError`` before anything is drawn. Never stored: it lives as
    long as the computation it pays for.
    """

    __slots__ = ("_left", "_free", "label")

    def __init__(self, event, label):
        self.label = label
        # what is left of the plan: leaf -> count, the leaves keyed as events
        # (:func:`~._events.event_key`), never by their JSON
        self._left = dict(_leaf_keys_of(event))
        # a non-private fit (epsilon = inf) pays for anything; a plan that mixes
        # private and non-private releases pays for its planned releases only
        self._free = bool(self._left) and all(_is_non_private(leaf) for leaf in self._left)

    def draw(self, event, times=1):
        """Take ``times`` copies of ``event`` from what is left of the plan."""
        times = int(times)
        if times < 0:
            raise ValueError(f"times must be >= 0, got {times}.")
        need = _leaf_keys_of(event)
        if self._free:
            return
        left = self._left
        short = [leaf for leaf, count in need if left.get(leaf, 0) < count * times]
        if short:
            raise RuntimeError(
                f"a release of {short[0]} was not in the spend committed for {self.label!r} "
                "(or it was already used): plan every release before the data are read."
            )
        for leaf, count in need:
            left[leaf] -= count * times

    def share(self, event, times=1):
        """Hand ``times`` copies of ``event`` to a computation run elsewhere.

        For the pieces of a committed spend that run in joblib workers (loky,
        Dask): the copies are drawn from this commitment here, in the process
        that committed the spend, and the returned :class:`CommitmentShare`
        is sent with the piece, where :meth:`CommitmentShare.open` makes the
        Commitment that pays for exactly those releases. Nothing is spent
        or recorded: the ledger holds the whole spend already.
        """
        self.draw(event, times)
        return CommitmentShare(event, int(times), self.label)

    @property
    def exhausted(self):
        """Whether every planned release has been drawn."""
        return self._free or not any(c > 0 for c in self._left.values())

    def __reduce__(self):
        raise TypeError("a Commitment is never pickled: it lives only during a computation.")


class CommitmentShare:
    """A part of a committed spend, sent with a parallel piece (picklable).

    Made by :meth:`Commitment.share` in the process that committed the
    spend (whose commitment no longer pays for it); opened where the piece
    runs. It touches no ledger: a worker never spends.
    """

    __slots__ = ("_event", "_times", "label")

    def __init__(self, event, times, label):
        self._event, self._times, self.label = event, int(times), label

    def open(self):
        """The :class:`Commitment` paying for the shared releases."""
        if self._times < 1:
            return Commitment(NoOpDpEvent(), self.label)
        event = self._event if self._times == 1 else SelfComposedDpEvent(self._event, self._times)
        return Commitment(event, self.label)

    def __repr__(self):
        return f"CommitmentShare({self._times} x {self._event!r}, label={self.label!r})"


class EstimatorLedger:
    """The spends of one estimator: its own cap, recorded in a shared ledger too.

    An estimator with ``epsilon`` and ``delta`` makes one of these in ``fit``
    (``ledger_``). It plans the whole spend of a computation, and
    :meth:`commit` checks it against its own cap and the shared ledger's and
    records it in both, before any mechanism reads private data. Nothing is
    ever refunded: an exception, a ``KeyboardInterrupt`` or a dead worker
    afterwards leaves the whole planned spend recorded.

    Parameters
    ----------
    epsilon, delta : float
        The estimator's own budget (``epsilon=np.inf``: no cap).
    accountant : PrivacyLedger, diffprivlib.BudgetAccountant or None
        Where the spends are recorded as well (see :func:`resolve_ledger`).
        Its neighbouring relation is this ledger's.
    prefix : str
        Prepended to each label in the shared ledger (e.g. the class name).
    """

    def __init__(self, epsilon, delta, accountant=None, *, prefix=""):
        self.shared = resolve_ledger(accountant)
        self.own = PrivacyLedger(epsilon=epsilon, delta=delta, relation=self.shared.relation)
        self.delta = float(delta)
        self.prefix = prefix

    @classmethod
    def of(cls, owner, accountant):
        """The ledger of one fit of ``owner`` (anything with ``epsilon`` and ``delta``:
        an estimator, a search) on the shared ledger ``accountant``; its labels
        begin with the owner's class name."""
        return cls(owner.epsilon, owner.delta, accountant, prefix=f"{type(owner).__name__}: ")

    @property
    def relation(self):
        """The neighbouring relation the estimator must calibrate under."""
        return self.shared.relation

    def check(self, event):
        """Raise BudgetError if ``event`` would exceed either cap (nothing recorded)."""
        delta = self._declared(event)
        self.own.check(event, delta=delta)
        self.shared.check(event, delta=delta)

    def commit(self, event, label, *, delta=None):
        """Record ``event`` in both ledgers, for good, and return its :class:`Commitment`.

        ``delta`` is the delta the releases were calibrated for (default: 0
        for a pure event, else the estimator's delta). Raises BudgetError,
        recording nothing, if either cap would be exceeded.
        """
        delta = self._declared(event) if delta is None else delta
        self.own.check(event, delta=delta)
        self.shared.spend(event, self.prefix + label, delta=delta)
        self.own.spend(event, label, delta=delta)  # checked above: cannot be refused
        return Commitment(event, label)

    def _declared(self, event):
        # Pure events declare no delta; the rest the estimator's delta.
        return 0.0 if is_pure(event) else self.delta

    @property
    def epsilon_spent(self):
        return self.own.epsilon_spent

    @property
    def delta_spent(self):
        return self.own.delta_spent

    @property
    def events(self):
        return self.own.events

    def __repr__(self):
        eps = "inf" if math.isinf(self.own.epsilon) else f"{self.own.epsilon:g}"
        return f"EstimatorLedger(epsilon={eps}, delta={self.delta:g}, spent={self.epsilon_spent:.4g})"
