"""Discovery of the estimators that skdpx provides (as sklearn.utils.discovery)."""

import inspect
from importlib import import_module
import os
import pkgutil

from sklearn.base import BaseEstimator

__all__ = ["all_estimators"]

_SKIP = ("tests", "_", "__main__")
#: deprecated subpackages, never imported here (importing one warns): ``linear`` is
#: the old name of ``locally_linear``
_DEPRECATED = ("linear",)


def _modules(root):
    """``pkgutil.walk_packages`` of skdpx, without its deprecated subpackages (walking a
    package imports it)."""
    for info in pkgutil.iter_modules([root], prefix="skdpx."):
        short = info.name.split(".")[1]
        if short in _DEPRECATED:
            continue
        yield info
        if info.ispkg:
            yield from pkgutil.walk_packages([os.path.join(root, short)],
                                             prefix=info.name + ".")


def all_estimators():
    """The public estimators of skdpx.

    Returns
    -------
    list of (str, type)
        (name, class) pairs, sorted by name, for every public class defined
        in skdpx that derives from :class:`sklearn.base.BaseEstimator`: named
        in its subpackage's ``__all__``, and not abstract (the estimator
        base, :class:`skdpx.base.DPEstimator`, is not an estimator).

    Examples
    --------
    >>> from skdpx.utils.discovery import all_estimators
    >>> isinstance(all_estimators(), list)
    True
    """
    # every module, imported by name (the top of the package, not a layer below it)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    found = {}
    for info in _modules(root):
        parts = info.name.split(".")
        if any(p.startswith(_SKIP) for p in parts[1:-1]) or parts[-1] in ("__main__", "tests"):
            continue
        module = import_module(info.name)
        for name, obj in inspect.getmembers(module, inspect.isclass):
            if (
                issubclass(obj, BaseEstimator)
                and not inspect.isabstract(obj)
                and not name.startswith("_")
                and obj.__module__.startswith("skdpx.")
                and not obj.__module__.startswith("skdpx.privacy")
                and name in _public_names(obj.__module__)
            ):
                found[name] = obj
    return sorted(found.items())


def _public_names(module):
    """The names a class's subpackage exports (``skdpx.recourse._model`` -> skdpx.recourse)."""
    package = import_module(".".join(module.split(".")[:2]))
    return set(getattr(package, "__all__", ()))
