"""Exceptions and warnings of skdpx.

``BudgetError`` (a ``ValueError``) and ``PrivacyLeakWarning`` (a
``RuntimeWarning``) speak diffprivlib's vocabulary: where diffprivlib is
installed and imports cleanly they subclass its classes of the same names, so
handlers and warning filters written for diffprivlib catch skdpx's too;
elsewhere (diffprivlib is not a dependency) they have plain bases. See
``skdpx/privacy/_exceptions.py`` and ``doc/privacy_core.rst`` ("diffprivlib's vocabulary").
"""

from .results._base import ResultIndexError
from .privacy import (
    BudgetError,
    LedgerDetachedError,
    LedgerIntegrityError,
    PrivacyLeakWarning,
    UncappedBudgetWarning,
    UtilityWarning,
)

__all__ = ["BudgetError", "LedgerDetachedError", "LedgerIntegrityError", "PrivacyLeakWarning",
           "ResultIndexError", "UncappedBudgetWarning", "UtilityWarning"]
