"""skdpx's privacy error and warning, which speak diffprivlib's vocabulary.

:class:`BudgetError` (a ``ValueError``) is raised when a release would take a
ledger over its cap; :class:`PrivacyLeakWarning` (a ``RuntimeWarning``)
warns of a choice that weakens a guarantee (a seeded noise source, bounds or
labels read from the data, an uncapped ledger).

diffprivlib is not a dependency of skdpx: its last release (0.6.6) fails to
import on scikit-learn 1.9 and its models break on 1.8. Its two names are
kept anyway, by *importing only what imports*: when diffprivlib is installed
and imports cleanly, skdpx's classes subclass diffprivlib's, so code written
against diffprivlib (``except diffprivlib.utils.BudgetError``, a warning
filter on ``diffprivlib.utils.PrivacyLeakWarning``) catches skdpx's errors
and warnings too; otherwise (not installed, or broken by the installed
scikit-learn: any exception while importing it) they have plain bases. The
choice is made once, at import, and :data:`DIFFPRIVLIB_BASES` tells which
was made. Either way skdpx behaves the same: nothing else of skdpx reads
diffprivlib (a ledger mirrors its spends into any object with diffprivlib's
``BudgetAccountant`` methods, found by duck typing).

Warnings: diffprivlib, when imported, sets ``simplefilter("always",
PrivacyLeakWarning)``. skdpx does not depend on that: at import it appends
its own ``"always"`` filter for its :class:`PrivacyLeakWarning` (and so for
its subclasses, e.g. ``UncappedBudgetWarning``), so that every fit that
weakens a guarantee says so, not only the first one from a given line.
Appended, the filter comes after the filters already installed (``-W``
options, ``PYTHONWARNINGS``, a user's ``filterwarnings`` calls made before
skdpx was imported) and after any added later, so any of those still wins.
"""

import warnings

__all__ = ["BudgetError", "DIFFPRIVLIB_BASES", "LedgerIntegrityError", "PrivacyLeakWarning",
           "UtilityWarning"]


def _diffprivlib_bases():
    """diffprivlib's (BudgetError, PrivacyLeakWarning), or None where it does not import."""
    try:
        from diffprivlib.utils import BudgetError as dpl_budget_error
        from diffprivlib.utils import PrivacyLeakWarning as dpl_leak_warning
    except Exception:  # not installed, or fails on this scikit-learn (ImportError on 1.9)
        return None
    return dpl_budget_error, dpl_leak_warning


_BASES = _diffprivlib_bases()

#: Whether skdpx's classes subclass diffprivlib's (diffprivlib imported cleanly).
DIFFPRIVLIB_BASES = _BASES is not None

if DIFFPRIVLIB_BASES:
    _BUDGET_BASES = (_BASES[0],)
    _WARNING_BASES = (_BASES[1],)
else:
    _BUDGET_BASES = (ValueError,)
    _WARNING_BASES = (RuntimeWarning,)


class BudgetError(*_BUDGET_BASES):
    """A release would exceed a privacy budget's cap; nothing was recorded.

    A ``ValueError``; a subclass of ``diffprivlib.utils.BudgetError`` too
    when diffprivlib is installed and imports cleanly.
    """


class PrivacyLeakWarning(*_WARNING_BASES):
    """A choice that weakens a differential privacy guarantee.

    A ``RuntimeWarning``; a subclass of
    ``diffprivlib.utils.PrivacyLeakWarning`` too when diffprivlib is
    installed and imports cleanly. Shown every time (skdpx appends an
    ``"always"`` filter for it at import; filters set by the user win).
    """


class UtilityWarning(UserWarning):
    """A DP release will be mostly noise: its expected noise exceeds its signal.

    Raised from public facts and DP outputs only (the parameters, the
    budget, a DP count), never from the private rows.
    """


class LedgerIntegrityError(RuntimeError):
    """A privacy ledger file is missing, emptied, damaged, foreign or was tampered with.

    A file-backed :class:`~skdpx.privacy.PrivacyLedger` is the only copy of
    a dataset's budget, so whatever cannot be trusted in it stops every
    spend: a file deleted or replaced since the ledger opened it, a 0-byte,
    truncated or corrupt file, a text file or another application's
    database, a cap or a spend changed outside skdpx (detected by the
    checksum the file keeps), fewer spends than the ledger has already seen.
    Nothing is spent and nothing is re-created. The message names the file
    (``path`` holds it) and the cause, never any data.

    A ``RuntimeError``.
    """

    def __init__(self, message, path=None):
        super().__init__(message)
        self.path = path

    def __reduce__(self):
        return type(self), (str(self), self.path)


# report the public module, as the classes are documented (skdpx.exceptions)
BudgetError.__module__ = PrivacyLeakWarning.__module__ = "skdpx.exceptions"
UtilityWarning.__module__ = LedgerIntegrityError.__module__ = "skdpx.exceptions"

warnings.filterwarnings("always", category=PrivacyLeakWarning, append=True)
