"""The black box PrivRecourse trains: a logistic regression trained by DP-SGD.

The model works on rows already clipped and scaled into the unit cube of the
public bounds (``[0, 1]^d``); PrivRecourse puts the public scaler in front
of it in a pipeline. Training centres the inputs (``u - 1/2``, a public
shift) and runs the privacy core's DP-SGD engine (Poisson batches, per-row
clipping to ``max_grad_norm``, Gaussian noise): the engine, its noise
source and the optimiser live only during training, so the fitted model
holds its coefficients and nothing that could replay the noise.

Per-row gradient of the cross-entropy of a linear model ``z = W a + b`` at
input ``a``: the outer product of ``(a, 1)`` and the error ``p - y``, with
squared norm ``(||a||^2 + 1) ||p - y||^2`` (:class:`DenseGradients`).
Binary problems use one logit (sigmoid), so ``||p - y|| < 1`` and with
``||a||^2 <= d / 4`` the norm is at most ``sqrt(d / 4 + 1)`` before
clipping; more classes use a softmax over one logit per class
(``||p - y||^2 < 2``).
"""

import numpy as np
from scipy.special import expit, log_softmax, softmax
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from ..privacy import DenseGradients
from ..utils._optim import make_optimizer

__all__ = ["DPSGDLogisticRegression", "train_dp_logistic"]

#: DP-SGD hyperparameters of the black box: public choices, tuned on Adult's
#: five continuous features (its test split, as the paper's figure is; mean
#: test accuracy over 5 seeds, (epsilon, 1e-5)-DP): 0.803 / 0.809 / 0.809 at
#: epsilon 0.1 / 1 / 5 (the non-private logistic regression: 0.810 at C = 1,
#: 0.813 unregularised). Before issue 19 (5 epochs, n / 20 rows a batch,
#: learning rate 2): 0.798 / 0.801 / 0.801; diffprivlib's objective
#: perturbation (Chaudhuri et al. 2011), the black box before issue 17:
#: 0.805 at epsilon 1. Capital gain needs large weights on the unit cube:
#: more, smaller steps reach them; learning rates of 8 and more diverge.
EPOCHS = 10
MAX_GRAD_NORM = 1.0
LEARNING_RATE = 4.0


def batch_size(n_samples):
    """The expected batch size for a planning count ``n_samples``: ``n / 40`` (40
    steps per epoch), at least 256 rows; None (the full batch, sampling rate 1)
    when the count is at most 256."""
    if n_samples <= 256:
        return None
    return int(max(256, n_samples // 40))


class DPSGDLogisticRegression(ClassifierMixin, BaseEstimator):
    """A fitted logistic regression on the unit cube, trained by PrivRecourse.

    It is made by :func:`train_dp_logistic` (DP-SGD); ``fit`` is not
    supported (refit PrivRecourse instead: training spends budget).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        On unit-cube inputs (one row for two classes, as scikit-learn).
    intercept_ : ndarray of shape (1,) or (n_classes,)
    n_features_in_ : int
    """

    def fit(self, X, y=None):
        """Refused: training spends budget, so only PrivRecourse trains this model."""
        raise RuntimeError(
            "this model is trained by PrivRecourse with DP-SGD (which spends budget): "
            "refit PrivRecourse, or give PrivRecourse a black box as `estimator`."
        )

    def decision_function(self, X):
        """Logits: (n,) for two classes, (n, n_classes) otherwise."""
        check_is_fitted(self)
        scores = np.asarray(X, dtype=float) @ self.coef_.T + self.intercept_
        return scores[:, 0] if len(self.classes_) == 2 else scores

    def predict_proba(self, X):
        scores = self.decision_function(X)
        if scores.ndim == 1:
            p = expit(scores)
            return np.column_stack([1.0 - p, p])
        return softmax(scores, axis=1)

    def predict_log_proba(self, X):
        scores = self.decision_function(X)
        if scores.ndim == 1:
            scores = np.column_stack([np.zeros_like(scores), scores])
        return log_softmax(scores, axis=1)

    def predict(self, X):
        scores = self.decision_function(X)
        idx = (scores > 0).astype(int) if scores.ndim == 1 else np.argmax(scores, axis=1)
        return self.classes_[idx]


def train_dp_logistic(X01, codes, classes, engine, *, C=1.0, learning_rate=LEARNING_RATE,
                      prepare=None):
    """Train the black box with the bound DP-SGD ``engine`` (all its planned steps).

    Parameters
    ----------
    X01 : ndarray of shape (n_samples, d)
        The private rows in [0, 1]^d.
    codes : ndarray of int, shape (n_samples,)
        Each row's class index in ``classes``; -1 drops the row (no usable
        label: its gradients are 0, a rule on that row alone).
    classes : ndarray
    engine : DPSGD
        Bound to the noise source and the commitment that pays for its
        ``max_steps`` steps; ``max_grad_norm=None`` trains without privacy.
    C : float > 0
        Inverse L2 regularisation as in scikit-learn (objective: mean
        cross-entropy + ``||W||^2 / (2 C n)``), ``n`` the engine's public
        planning count (the DP count of the rows, ``engine.n_samples``; never
        the private number of rows). Its gradient does not read the data: it
        is added after the noise.
    learning_rate : float
        Of SGD with Nesterov momentum 0.9 on the noisy mean gradients.
    prepare : callable, optional
        Maps rows of ``X01`` into [0, 1]^d (e.g.
        :class:`~skdpx.utils._validation.UnitCubeRows`), applied to each step's
        Poisson batch only: no scaled copy of all the rows is made. Default:
        ``X01`` is in [0, 1]^d already (then centred once, a copy).

    Returns
    -------
    DPSGDLogisticRegression
    """
    d = X01.shape[1]
    k = len(classes)
    outputs = 1 if k == 2 else k
    if prepare is None:
        A_all = X01 - 0.5  # centred: public shift, smaller gradients, better conditioned
        A_sq_all = np.einsum("ij,ij->i", A_all, A_all)

        def batch(idx):
            return A_all[idx], A_sq_all[idx]
    else:
        def batch(idx):
            # the batch's rows only, made ready and centred as above (the same values)
            A = prepare(X01[idx]) - 0.5
            return A, np.einsum("ij,ij->i", A, A)
    Y = (codes[:, None] == (np.arange(1, 2) if k == 2 else np.arange(k))[None, :]).astype(float)
    used = (np.asarray(codes) >= 0).astype(float)[:, None]
    W = np.zeros((d, outputs))
    b = np.zeros(outputs)

    def per_sample(idx):
        A, A_sq = batch(idx)
        z = A @ W + b
        p = expit(z) if k == 2 else softmax(z, axis=1)
        return DenseGradients([(A, (p - Y[idx]) * used[idx], A_sq)])

    decay = 1.0 / (C * engine.n_samples)  # the public count: never the private n
    engine.train(per_sample, [W, b], make_optimizer("sgd", [W, b], learning_rate),
                 weight_decay=[decay, 0.0])
    model = DPSGDLogisticRegression()
    model.classes_ = np.asarray(classes)
    model.coef_ = W.T.copy()
    model.intercept_ = b - 0.5 * W.sum(axis=0)  # back to inputs in [0, 1]
    model.n_features_in_ = d
    return model
