"""Budget accountants for the interop tests: diffprivlib's (when it imports) and a duck.

skdpx does not depend on diffprivlib (its 0.6.6 fails to import on
scikit-learn 1.9), so the tests that use diffprivlib's own classes skip
where it does not import; the duck-typed accountant below runs everywhere.
"""

import pytest



class ForeignBudgetError(ValueError):
    """Another library's budget error (diffprivlib's is a ValueError too)."""


def import_diffprivlib():
    """The diffprivlib package, or skip the test where it does not import."""
    try:
        import diffprivlib.accountant
        import diffprivlib.utils
    except Exception as exc:  # not installed, or broken on this scikit-learn
        pytest.skip(f"diffprivlib does not import here ({type(exc).__name__}: {exc})")
    return diffprivlib


class AdditiveAccountant:
    """A diffprivlib-like accountant that is not diffprivlib's: basic composition, a cap.

    Only the two methods a ledger mirrors into (``check``, ``spend``) and
    diffprivlib's ``spent_budget`` list.
    """

    def __init__(self, epsilon=float("inf"), delta=1.0):
        self.epsilon, self.delta = epsilon, delta
        self.spent_budget = []

    def check(self, epsilon, delta):
        spent_eps = sum(e for e, _ in self.spent_budget) + epsilon
        spent_delta = sum(d for _, d in self.spent_budget) + delta
        if spent_eps > self.epsilon or spent_delta > self.delta:
            raise ForeignBudgetError(f"the accountant's cap would be exceeded ({spent_eps:g}).")
        return True

    def spend(self, epsilon, delta):
        self.check(epsilon, delta)
        self.spent_budget.append((epsilon, delta))
        return self


def make_accountant(kind, **cap):
    """A diffprivlib BudgetAccountant (``kind="diffprivlib"``, skips where absent) or a duck."""
    if kind == "diffprivlib":
        return import_diffprivlib().accountant.BudgetAccountant(**cap)
    return AdditiveAccountant(**cap)
