"""First-order optimisers for the DP-SGD estimators.

Adam (Kingma & Ba 2015) and SGD with Nesterov momentum, with the update
rules (and the floating-point order of operations) of the optimisers that
scikit-learn's MLPClassifier uses, plus a step-wise learning-rate decay.
They are written here because scikit-learn keeps its own in a private
module. They are post-processing: they only ever see the noisy gradients
that the DP-SGD engine releases.
"""

import numpy as np

__all__ = ["make_optimizer"]


class _Adam:
    """Adam: bias-corrected step size times first moment over root second moment."""

    def __init__(self, params, learning_rate_init=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-8):
        self.learning_rate_init = float(learning_rate_init)
        self.learning_rate = self.learning_rate_init
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon
        self.t = 0
        self.ms = [np.zeros_like(p) for p in params]
        self.vs = [np.zeros_like(p) for p in params]

    def update_params(self, params, grads):
        """Move each of ``params`` (in place) by one step on ``grads``."""
        self.t += 1
        b1, b2 = self.beta_1, self.beta_2
        self.ms = [b1 * m + (1 - b1) * g for m, g in zip(self.ms, grads)]
        self.vs = [b2 * v + (1 - b2) * (g**2) for v, g in zip(self.vs, grads)]
        self.learning_rate = (self.learning_rate_init * np.sqrt(1 - b2**self.t)
                              / (1 - b1**self.t))
        for p, m, v in zip(params, self.ms, self.vs):
            p += -self.learning_rate * m / (np.sqrt(v) + self.epsilon)

    def scale_learning_rate(self, factor):
        # the step size is recomputed from learning_rate_init at each update
        self.learning_rate_init *= factor


class _NesterovSGD:
    """SGD with Nesterov momentum: v <- mu v - lr g, then step by mu v - lr g."""

    def __init__(self, params, learning_rate_init=0.1, momentum=0.9):
        self.learning_rate = float(learning_rate_init)
        self.momentum = momentum
        self.velocities = [np.zeros_like(p) for p in params]

    def update_params(self, params, grads):
        """Move each of ``params`` (in place) by one step on ``grads``."""
        mu, lr = self.momentum, self.learning_rate
        self.velocities = [mu * v - lr * g for v, g in zip(self.velocities, grads)]
        for p, v, g in zip(params, self.velocities, grads):
            p += mu * v - lr * g

    def scale_learning_rate(self, factor):
        self.learning_rate *= factor


def make_optimizer(name, params, learning_rate):
    """An optimiser for ``params`` (updated in place by ``update_params``).

    Parameters
    ----------
    name : {"adam", "sgd"}
        Adam (Kingma & Ba), or SGD with Nesterov momentum 0.9.
    params : list of ndarray
    learning_rate : float

    Returns
    -------
    optimiser
        With ``update_params(params, grads)`` and
        ``scale_learning_rate(factor)``.
    """
    if name == "adam":
        return _Adam(params, learning_rate_init=learning_rate)
    if name == "sgd":
        return _NesterovSGD(params, learning_rate_init=learning_rate, momentum=0.9)
    raise ValueError(f"optimizer must be 'adam' or 'sgd', got {name!r}.")
