"""First-order optimisers for the DP-SGD estimators.

The update rules are scikit-learn's own (the ones MLPClassifier uses); this
module only adds a step-wise learning-rate decay. They are post-processing:
they only ever see the noisy gradients that the DP-SGD engine releases.
"""

# scikit-learn's optimisers live in a private module; importing them in one
# place keeps the dependency on it to these lines (scikit-learn is pinned).
from sklearn.neural_network._stochastic_optimizers import AdamOptimizer, SGDOptimizer

__all__ = ["make_optimizer"]


class _Adam(AdamOptimizer):
    def scale_learning_rate(self, factor):
        # Adam recomputes its step size from learning_rate_init at each update
        self.learning_rate_init *= factor


class _NesterovSGD(SGDOptimizer):
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
        return _NesterovSGD(params, learning_rate_init=learning_rate, momentum=0.9,
                            nesterov=True)
    raise ValueError(f"optimizer must be 'adam' or 'sgd', got {name!r}.")
