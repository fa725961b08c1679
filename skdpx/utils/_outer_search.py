"""The seam between the estimator base and the checks of an outer search.

A skdpx estimator on a capped ledger checks the scikit-learn search (or
``cross_validate`` call) it runs in, by pricing it
(:mod:`skdpx.model_selection._outer`). The estimator base
(:class:`skdpx.base.DPEstimator`) sits in a lower layer than the
searches and their pricing, so it does not import them: the searches
register their two checks here when :mod:`skdpx.model_selection` is imported
(``skdpx/__init__.py`` imports it, so they are registered before any skdpx
estimator exists), and the base looks them up. It fails closed: a lookup
before the registration raises instead of skipping the check.
"""

__all__ = ["outer_search_check", "register_outer_search_checks"]

_CHECKS = {}


def register_outer_search_checks(*, at_clone, guard):
    """Set the checks: ``at_clone(estimator)`` (refuses, raising, a search the
    ledger cannot pay for) and ``guard(estimator)`` (a context manager around
    every fit)."""
    _CHECKS.update(at_clone=at_clone, guard=guard)


def outer_search_check(name):
    """The registered check ``name`` ("at_clone" or "guard")."""
    try:
        return _CHECKS[name]
    except KeyError:
        raise RuntimeError(
            f"the outer-search check {name!r} is not registered: skdpx.model_selection "
            "registers it when imported (import skdpx, whose __init__ imports it)") from None
