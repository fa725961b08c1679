"""Exact scores: what scikit-learn's model selection releases outside any ledger."""

import warnings

from ._exceptions import PrivacyLeakWarning


__all__ = ["warn_exact_scores"]


def warn_exact_scores(what, *, stacklevel=3):
    """Warn that ``what`` are exact values that no ledger accounts for.

    A score computed on private rows (an accuracy is a count of correct
    predictions) is a release of those rows; so is a choice made from such
    scores (a search's ``best_params_``). No mechanism adds noise to them
    and nothing records them. ``skdpx.model_selection``'s ``DPGridSearchCV``
    and ``DPRandomSearchCV`` score with DP and select privately instead.

    Parameters
    ----------
    what : str
        What is released, e.g. ``"DPLocallyLinearClassifier.score's accuracies"``.
    stacklevel : int, default=3
        As :func:`warnings.warn` (3: the caller of the function that warns).
    """
    warnings.warn(
        f"{what} are exact values computed from the rows they are given: on private rows "
        "(the validation folds of a GridSearchCV or RandomizedSearchCV: its cv_results_ and "
        "the best_params_ chosen from them) they are releases that no ledger accounts for. "
        "Score on public rows, count these scores as unprotected, or search with "
        "skdpx.model_selection.DPGridSearchCV / DPRandomSearchCV (DP scores, private selection).",
        PrivacyLeakWarning,
        stacklevel=stacklevel,
    )
