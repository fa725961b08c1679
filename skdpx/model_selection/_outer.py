"""A scikit-learn search over skdpx estimators on a capped ledger: priced before it fits.

scikit-learn's ``GridSearchCV``, ``RandomizedSearchCV`` and
``cross_validate`` catch every exception a fit raises and score that fit
``error_score`` (NaN by default) with a warning. On a capped ledger, a
search whose folds run the budget out would then report a best candidate
chosen among the folds that the cap let through: the cap, not the data,
decides. So a skdpx estimator whose ``accountant`` is a capped
:class:`~skdpx.privacy.PrivacyLedger` checks the search it is in, with
:func:`~skdpx.model_selection.price_search` (recording nothing):

* :func:`check_search_at_clone`, at ``BaseSearchCV.fit``'s first clone of
  its estimator (before any fit, in the calling process whatever
  ``n_jobs``, outside the ``try`` that makes errors NaN): a ledger that
  cannot pay for every fold and the refit, or a search that cannot be
  priced, refuses the search with ``BudgetError``, raised by ``fit``;
* :func:`outer_search_guard`, around every fit run in the caller's thread:
  at the first fit of a search or a ``cross_validate`` call it prices and
  checks the call (a refusal refuses every fit of it before it spends, and
  scikit-learn raises "All the N fits failed"); if a fit of a priced search
  is refused all the same (something else spent meanwhile), every later fit
  of it is refused before it spends and the refit, which scikit-learn does
  not guard, raises ``BudgetError`` (the ``best_*`` attributes set before it
  are removed).

The checks read public facts only (the search's parameters and splitter,
the ledger's record); a verdict is kept for one call of the search (its
``Parallel`` object), never across calls.
"""

from contextlib import contextmanager
import math
import sys
import threading
import warnings
import weakref

from .._sklearn_compat import BaseSearchCV, InvalidParameterError
from ..privacy import BudgetError, PrivacyLedger
from ..utils._outer_search import register_outer_search_checks

__all__ = ["check_search_at_clone", "outer_search_guard"]

_LOCK = threading.Lock()
#: The verdict of each running scikit-learn search, keyed by its Parallel object:
#: None (priced, the ledger can pay) or the text of its refusal.
_VERDICTS = weakref.WeakKeyDictionary()
_MISSING = object()

_VALIDATION = "sklearn.model_selection._validation"


def _capped(ledger):
    return isinstance(ledger, PrivacyLedger) and (
        math.isfinite(ledger.epsilon) or ledger.delta < 1)


def _outer_search():
    """``(kind, owner, frame locals, is_refit)`` of the scikit-learn search (or
    ``cross_validate``) whose fit runs in this thread, or None."""

    frame = sys._getframe(2)
    in_fold = False
    depth = 0
    while frame is not None and depth < 200:
        code = frame.f_code
        module = frame.f_globals.get("__name__", "")
        if code.co_name == "_fit_and_score" and module == _VALIDATION:
            in_fold = True
        elif code.co_name == "fit" and module.startswith("sklearn.model_selection"):
            owner = frame.f_locals.get("self")
            if isinstance(owner, BaseSearchCV):
                return "search", owner, frame.f_locals, not in_fold
        elif code.co_name == "cross_validate" and module == _VALIDATION:
            return "cross_validate", None, frame.f_locals, False
        frame = frame.f_back
        depth += 1
    return None


def _price(kind, owner, local):
    """The search's :class:`~skdpx.model_selection.SearchPrice` (warnings dropped)."""
    import copy

    from sklearn.model_selection import GridSearchCV, RandomizedSearchCV

    from ._price import price_search

    X, y = local.get("X"), local.get("y")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind == "cross_validate":
            return price_search(local["estimator"], X, y, groups=local.get("groups"),
                                cv=local.get("cv"), refit=False)
        if not isinstance(owner, (GridSearchCV, RandomizedSearchCV)):
            raise ValueError(f"{type(owner).__name__} is neither a GridSearchCV nor a "
                             "RandomizedSearchCV, whose fits price_search counts")
        search = copy.copy(owner)
        checked = getattr(owner, "_checked_cv_orig", None)  # the splits the search uses
        if checked is not None:
            search.cv = checked
        params = local.get("params") or {}
        return price_search(search, X, y, groups=params.get("groups"))


def _check_parameter_names(owner):
    """A parameter the search's estimator does not have is the user's error, raised as
    scikit-learn raises it, not as a search that cannot be priced."""
    grids = getattr(owner, "param_grid", getattr(owner, "param_distributions", None))
    if grids is None:
        return
    names = set(owner.estimator.get_params(deep=True))
    for grid in (grids if isinstance(grids, (list, tuple)) else [grids]):
        for name in grid:
            if name not in names:
                raise ValueError(
                    f"Invalid parameter {name!r} for estimator {owner.estimator!r}. Valid "
                    f"parameters are: {sorted(names)!r}.")


def _verdict(kind, owner, local, ledger):
    what = "cross_validate" if kind == "cross_validate" else type(owner).__name__
    if kind == "search":
        _check_parameter_names(owner)
    try:
        price = _price(kind, owner, local)
    except InvalidParameterError:
        raise  # a parameter refused as it is, not as an unpriceable search
    except (ValueError, TypeError) as err:
        return (f"a scikit-learn {what} over skdpx estimators on a capped PrivacyLedger is "
                f"priced before its first fit, and this one cannot be ({err}): nothing shows "
                "that its folds and its refit fit in the cap, so every fit is refused before "
                "it spends. Nothing was spent. Use DPGridSearchCV / DPRandomSearchCV, a "
                "search price_search can price, or fit the candidates one by one.")
    try:
        price.check(ledger)
    except BudgetError as err:
        return (f"{what} refused before its first fit: {err} Every fit of this search is "
                "refused; nothing was spent. Lower the candidates' epsilons, use fewer folds "
                "or candidates, or a private search (DPGridSearchCV).")
    return None


def check_search_at_clone(estimator):
    """At a scikit-learn search's first clone of its estimator, refuse a search the
    estimator's capped ledger cannot pay for, with ``BudgetError``, before any fit.

    Used by :meth:`skdpx.base.DPEstimator.__sklearn_clone__`.
    ``BaseSearchCV.fit`` clones its estimator (``base_estimator``) in its
    own frame, outside the ``try`` that turns a fit's error into
    ``error_score``, before it starts any fit, in this process whatever
    ``n_jobs``: a ``BudgetError`` raised here leaves the search as it came,
    nothing fitted, nothing spent. Every other clone (the candidates', the
    refit's) passes through unchecked.
    """
    ledger = getattr(estimator, "accountant", None)
    if BaseSearchCV is None or not _capped(ledger):
        return

    frame = sys._getframe(2)
    depth = 0
    while frame is not None and depth < 50:
        module = frame.f_globals.get("__name__", "")
        if module != "sklearn.base":  # clone's own frames (nested estimators)
            break
        frame = frame.f_back
        depth += 1
    if frame is None or frame.f_code.co_name != "fit":
        return
    local = frame.f_locals
    owner = local.get("self")
    if not isinstance(owner, BaseSearchCV) or "base_estimator" in local:
        return  # not the search's first clone of its estimator
    verdict = _verdict("search", owner, local, ledger)
    if verdict is not None:
        raise BudgetError(verdict)


@contextmanager
def outer_search_guard(estimator):
    """Check, at a scikit-learn search's first fit, that the ledger can pay for all of it.

    Used by :meth:`skdpx.base.DPEstimator.fit` around the whole fit.
    Does nothing outside such a search, or when the estimator's
    ``accountant`` is not a capped :class:`~skdpx.privacy.PrivacyLedger`.
    """
    ledger = getattr(estimator, "accountant", None)
    found = _outer_search() if BaseSearchCV is not None and _capped(ledger) else None
    if found is None:
        yield
        return
    kind, owner, local, is_refit = found
    key = local.get("parallel")  # one per call of the search (scikit-learn 1.6 to 1.9)
    try:
        weakref.ref(key)
    except TypeError:  # no per-call key: a verdict could not be told from a stale one
        yield
        return
    with _LOCK:
        verdict = _VERDICTS.get(key, _MISSING)
        if verdict is _MISSING:
            verdict = None if is_refit else _verdict(kind, owner, local, ledger)
            _VERDICTS[key] = verdict
    if verdict is not None:
        if is_refit:
            # scikit-learn set the choice before the refit: a choice the cap made is
            # not left on the search (cv_results_ keeps the folds' scores, NaN included)
            for name in ("best_index_", "best_params_", "best_score_"):
                owner.__dict__.pop(name, None)
            raise BudgetError(
                f"{type(owner).__name__}: a fit of this search was refused by the ledger's "
                f"cap ({verdict}), so its scores are incomplete and its choice would be the "
                "cap's, not the data's. Nothing is refitted and no best is reported; the "
                "folds that ran spent their budget.")
        raise BudgetError(verdict)
    try:
        yield
    except BudgetError as err:
        with _LOCK:
            if _VERDICTS.get(key) is None:
                _VERDICTS[key] = f"a fold ran out of budget: {err}"
        raise


# the estimator base (a lower layer) calls these through skdpx.utils._outer_search
register_outer_search_checks(at_clone=check_search_at_clone, guard=outer_search_guard)
