"""Exceptions and warnings of skdpx (diffprivlib's, so both libraries agree)."""

from .privacy import BudgetError, LedgerDetachedError, PrivacyLeakWarning, UncappedBudgetWarning

__all__ = ["BudgetError", "LedgerDetachedError", "PrivacyLeakWarning", "UncappedBudgetWarning"]
