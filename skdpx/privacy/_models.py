"""diffprivlib's DP models, with their spends recorded in skdpx's ledgers.

The one place where skdpx trains a diffprivlib model: when diffprivlib's
pin on scikit-learn (below 1.8) is lifted, this is the module to revisit.
"""

from contextlib import nullcontext
import warnings

from diffprivlib.accountant import BudgetAccountant
from diffprivlib.models import LogisticRegression

from ._accounting import pure_event

__all__ = ["dp_logistic_regression"]


def dp_logistic_regression(X, y, *, epsilon, data_norm, random_state=None, budget=None,
                           label="DP logistic regression", **kwargs):
    """Fit diffprivlib's ``LogisticRegression`` (pure epsilon-DP) and record the spend.

    diffprivlib trains it with the vector mechanism of Chaudhuri et al.
    (2011) on rows clipped to L2 norm ``data_norm``; a multi-class model is
    one-vs-rest with ``epsilon / n_classes`` each, ``epsilon`` in all.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        The private rows, already scaled by public bounds.
    y : ndarray of shape (n_samples,)
    epsilon : float > 0
    data_norm : float > 0
        A public bound on the rows' L2 norm (e.g. ``sqrt(n_features)`` for
        rows in [0, 1]^d).
    random_state : None, int or RandomState
    budget : PrivacyLedger or EstimatorBudget, optional
        Where the pure ``epsilon`` event is recorded (checked before the data
        are read, refunded if training fails).
    label : str
    **kwargs
        Passed to diffprivlib's ``LogisticRegression`` (e.g. ``C``, ``max_iter``).

    Returns
    -------
    diffprivlib.models.LogisticRegression
        Fitted. Its own accountant is a private, uncapped one: the spend is
        recorded in ``budget`` only, not in diffprivlib's default accountant.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpx.privacy import PrivacyLedger
    >>> from skdpx.privacy._models import dp_logistic_regression
    >>> rng = np.random.RandomState(0)
    >>> X = rng.uniform(0, 1, size=(2000, 2)); y = (X.sum(axis=1) > 1).astype(int)
    >>> ledger = PrivacyLedger(epsilon=1.0, delta=0.0)
    >>> model = dp_logistic_regression(X, y, epsilon=1.0, data_norm=2**0.5, random_state=0,
    ...                                budget=ledger)
    >>> round(ledger.epsilon_spent, 6), float(model.score(X, y)) > 0.8
    (1.0, True)
    """
    model = LogisticRegression(epsilon=epsilon, data_norm=data_norm, random_state=random_state,
                               accountant=BudgetAccountant(), **kwargs)
    with nullcontext() if budget is None else budget.reserve(pure_event(epsilon), label,
                                                             delta=0.0):
        with warnings.catch_warnings():
            # diffprivlib 0.6.6 passes L-BFGS-B's deprecated `iprint` to scipy
            warnings.filterwarnings("ignore", message=".*`disp` and `iprint`",
                                    category=DeprecationWarning)
            model.fit(X, y)
    return model
