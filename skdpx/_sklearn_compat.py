"""The scikit-learn names skdpx needs that scikit-learn does not make public.

skdpx supports scikit-learn 1.6 and later (CI runs the oldest, 1.6.1, and
the current release). Where a public API exists skdpx uses it; the few names
below have none, so every module of skdpx imports them from here, and this
is the one place that reaches into scikit-learn's private modules, each
import guarded. ``tests/test_sklearn_compat.py`` checks them on the
installed version, and that no other module of skdpx imports a private
scikit-learn module.

* Parameter validation (``Interval``, ``StrOptions``, ``HasMethods``,
  ``InvalidParameterError``, ``validate_parameter_constraints``): the
  ``_parameter_constraints`` vocabulary of scikit-learn's own estimators and
  of ``check_estimator``'s ``check_param_validation``; it lives in the
  private ``sklearn.utils._param_validation`` (1.2 to 1.9 at least).
* :func:`fit_context`: scikit-learn's ``_fit_context`` decorator (validate
  the parameters once, skip nested validation); where scikit-learn no longer
  has it, an equivalent built on the validation names above and the public
  ``get_config`` / ``config_context``.
* :func:`safe_indexing`: rows of an array, a DataFrame or a list
  (``sklearn.utils._safe_indexing``, documented in scikit-learn's API
  reference despite its underscore).
* ``BaseSearchCV``: the base of ``GridSearchCV`` and ``RandomizedSearchCV``
  (``sklearn.model_selection._search``), which a skdpx estimator looks for
  on the call stack to price the search it is in on a capped ledger
  (:mod:`skdpx.model_selection._outer`); None where it cannot be imported
  (the check is then skipped).
* :func:`is_classifier`: scikit-learn's, for any black box. Since 1.8,
  scikit-learn's raises ``AttributeError`` for an object without
  ``__sklearn_tags__`` (a duck-typed model with only ``predict``; 1.7 warned
  and used default tags); skdpx explains such models too, so for them this
  reads the older ``_estimator_type`` convention instead.
"""

import functools

from sklearn import config_context, get_config
from sklearn.base import is_classifier as _sklearn_is_classifier

__all__ = [
    "BaseSearchCV", "HasMethods", "Hidden", "Interval", "InvalidParameterError", "RealNotInt",
    "StrOptions", "fit_context",
    "is_classifier", "safe_indexing", "validate_parameter_constraints",
]

try:
    from sklearn.utils._param_validation import (
        HasMethods,
        Hidden,
        Interval,
        InvalidParameterError,
        RealNotInt,
        StrOptions,
        validate_parameter_constraints,
    )
except ImportError as exc:  # pragma: no cover - a future scikit-learn
    import sklearn

    raise ImportError(
        f"skdpx needs scikit-learn's parameter validation (sklearn.utils._param_validation), "
        f"which scikit-learn {sklearn.__version__} does not have: install a scikit-learn that "
        "skdpx supports (1.6 or later, tested up to the current release) and report the "
        "version at skdpx's issue tracker."
    ) from exc

try:
    from sklearn.model_selection._search import BaseSearchCV
except ImportError:  # pragma: no cover - a future scikit-learn
    BaseSearchCV = None

try:
    from sklearn.utils import _safe_indexing as safe_indexing
except ImportError:  # pragma: no cover - a future scikit-learn
    from sklearn.utils._indexing import _safe_indexing as safe_indexing


def _own_fit_context(*, prefer_skip_nested_validation):
    """``fit`` validates the parameters once, then runs with nested validation skipped."""

    def decorator(fit_method):
        @functools.wraps(fit_method)
        def wrapper(estimator, *args, **kwargs):
            skip = get_config()["skip_parameter_validation"]
            if not skip:
                validate_parameter_constraints(
                    estimator._parameter_constraints, estimator.get_params(deep=False),
                    caller_name=type(estimator).__name__,
                )
            with config_context(skip_parameter_validation=prefer_skip_nested_validation or skip):
                return fit_method(estimator, *args, **kwargs)

        return wrapper

    return decorator


try:
    from sklearn.base import _fit_context as fit_context
except ImportError:  # pragma: no cover - a future scikit-learn
    fit_context = _own_fit_context


def is_classifier(estimator):
    """Whether ``estimator`` is a classifier: scikit-learn's tags, or ``_estimator_type``.

    scikit-learn's ``is_classifier`` for objects with scikit-learn's tags;
    for any other object (a duck-typed black box), whether its
    ``_estimator_type`` is ``"classifier"``, without the error (1.8 and
    later) or the warning (1.7) scikit-learn gives for an object without tags.
    """
    if not hasattr(estimator, "__sklearn_tags__"):
        return getattr(estimator, "_estimator_type", None) == "classifier"
    return _sklearn_is_classifier(estimator)
