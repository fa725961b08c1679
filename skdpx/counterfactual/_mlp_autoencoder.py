"""A deeper autoencoder trained with DP-SGD (the privacy core's engine).

Encoder: dense layers of ``hidden_layer_sizes`` tanh units, then ``K``
sigmoid units (the latent codes, in (0, 1)^K, as for the functional
autoencoder, so that the prototypes' sensitivity stays bounded). Decoder: the
hidden sizes reversed (tanh), then a linear output. Loss per row: half the
squared reconstruction error on inputs scaled into [-1, 1]. Training: Poisson
subsampling, per-row clipping (closed-form per-layer norms, no per-row
gradient is built), Gaussian noise calibrated with the PLD accountant, Adam.

This is the sound way to train a deep autoencoder privately. The paper's
alternative, normalisation layers in front of a functional-mechanism
autoencoder, does not make it DP: the functional mechanism's sensitivity
bound holds for one layer whose loss is a polynomial in the parameters with
the data only in the coefficients, which a stack of nonlinear layers is not.

Privacy: the engine's Poisson subsampling is accounted for add-or-remove-one
neighbours only (dp_accounting's subsampled Gaussian); the L2 sensitivity of
each step's clipped sum is ``MAX_GRAD_NORM`` under that relation. The
initial weights are not privacy noise: they come from the noise source's
auxiliary generator.
"""

import numpy as np
from scipy.special import expit

from ..privacy import DPSGD, DenseGradients
from ..utils._optim import make_optimizer

__all__ = ["MLPAutoencoder"]

#: DP-SGD settings (public): batch size, epochs, clipping norm, Adam's step
BATCH_SIZE = 256
EPOCHS = 10
MAX_GRAD_NORM = 1.0
LEARNING_RATE = 1e-3
#: the decoder's output layer starts this many times wider than Glorot's
#: uniform init. At a small epsilon DP-SGD barely moves the weights, so the
#: range of the decoder over the latent cube (where the counterfactual search
#: looks) is mostly its initial one; a wider start lets it reach the black
#: box's other classes. Public and data-free. On Adult at epsilon 0.025 with
#: Glorot's width, the decoded cube held no point of ">50K" on 2 seeds of 20
#: (doc/changes/dpc.rst, "The autoencoder's start and step size")
OUTPUT_INIT_SCALE = 2.0


def learning_rate(steps):
    """Adam's step size for ``steps`` DP-SGD steps: ``LEARNING_RATE``, or ``1 / steps`` if larger.

    Adam moves each weight by about its step size per step, so with fewer
    than ``1 / LEARNING_RATE`` steps (few rows: 900 rows and batches of 256
    give 36) the weights could not travel a unit from their start and the
    autoencoder stayed worse than the rows' mean. From the planned number of
    steps: public.
    """
    return max(LEARNING_RATE, 1.0 / max(int(steps), 1))


class MLPAutoencoder:
    """Fitted weights; ``encode``, ``decode`` and ``decode_vjp`` as the search needs."""

    def __init__(self, weights, biases, n_encoder):
        self.weights, self.biases, self.n_encoder = weights, biases, n_encoder

    # ----------------------------------------------------------- training
    @staticmethod
    def engine(n_samples, epsilon, delta, relation="add_or_remove"):
        """The DP-SGD engine for ``n_samples`` rows at (``epsilon``, ``delta``).

        Made from public facts only (the planning count ``n_samples``, a DP
        count of the rows; the budget; the settings above): its
        ``planned_event()`` is what the fit's plan commits. ``epsilon=np.inf``
        gives the non-private engine (no clipping, no noise). A private
        engine under a ledger ``relation`` other than add-or-remove is
        refused (ValueError, :meth:`~skdpx.privacy.DPSGD.from_budget`).
        """
        return DPSGD.from_budget(
            epsilon, delta, n_samples=n_samples, batch_size=BATCH_SIZE, epochs=EPOCHS,
            max_grad_norm=MAX_GRAD_NORM, relation=relation,
            trainer="ae_method='dpsgd' (the autoencoder)",
            alternative="ae_method='functional' (calibrated under either relation)")

    @classmethod
    def fit(cls, X, latent_dim, hidden_layer_sizes, *, engine, noise, commitment):
        """Train on rows ``X`` in [-1, 1]^d with ``engine`` (see :meth:`engine`).

        ``commitment`` must hold ``engine.planned_event()`` (committed before
        this is called); the batches and the gradient noise come from
        ``noise``, the initial weights from ``noise.auxiliary()``.
        """
        m, d = X.shape
        sizes = [d, *hidden_layer_sizes, latent_dim, *reversed(hidden_layer_sizes), d]
        aux = noise.auxiliary()  # not privacy noise: the initial weights
        weights = [aux.uniform(-1, 1, size=(a, b)) * np.sqrt(6.0 / (a + b))
                   for a, b in zip(sizes[:-1], sizes[1:])]
        weights[-1] *= OUTPUT_INIT_SCALE
        biases = [np.zeros(b) for b in sizes[1:]]
        model = cls(weights, biases, len(hidden_layer_sizes) + 1)
        engine.bind(noise, commitment, n_rows=m)
        params = weights + biases  # the order of DenseGradients' gradients

        def per_sample(idx):
            acts = model._forward(X[idx])
            return DenseGradients(list(zip(acts[:-1], model._backward(acts, X[idx]))))

        engine.train(per_sample, params, make_optimizer("adam", params,
                                                        learning_rate(engine.max_steps)))
        return model

    def _activation(self, layer):
        if layer == self.n_encoder - 1:
            return "sigmoid"
        return "linear" if layer == len(self.weights) - 1 else "tanh"

    def _forward(self, X, start=0):
        acts = [X]
        for layer in range(start, len(self.weights)):
            z = acts[-1] @ self.weights[layer] + self.biases[layer]
            kind = self._activation(layer)
            acts.append(expit(z) if kind == "sigmoid" else np.tanh(z) if kind == "tanh" else z)
        return acts

    def _backward(self, acts, target, start=0, top=None):
        """d loss / d z per layer (from ``start``), for loss 0.5 ||out - target||^2 or a given top."""
        delta = acts[-1] - target if top is None else top
        deltas = [delta]
        for layer in range(len(self.weights) - 1, start, -1):
            a = acts[layer - start]
            kind = self._activation(layer - 1)
            slope = a * (1 - a) if kind == "sigmoid" else 1 - a * a
            delta = (delta @ self.weights[layer].T) * slope
            deltas.append(delta)
        return deltas[::-1]

    # ----------------------------------------------------------- use
    def encode(self, X):
        """Latent codes in (0, 1)^K of rows in [-1, 1]^d."""
        a = X
        for layer in range(self.n_encoder):
            a = self._layer(layer, a)
        return a

    def _layer(self, layer, a):
        z = a @ self.weights[layer] + self.biases[layer]
        kind = self._activation(layer)
        return expit(z) if kind == "sigmoid" else np.tanh(z) if kind == "tanh" else z

    def decode(self, H):
        """Rows in the [-1, 1]^d space (not clipped) from latent codes."""
        a = H
        for layer in range(self.n_encoder, len(self.weights)):
            a = self._layer(layer, a)
        return a

    def decode_vjp(self, H, G):
        """``G @ d decode / d H`` per row (the decoder's vector-Jacobian product)."""
        acts = self._forward(H, start=self.n_encoder)
        delta = G
        for layer in range(len(self.weights) - 1, self.n_encoder - 1, -1):
            delta = delta @ self.weights[layer].T
            if layer > self.n_encoder:
                a = acts[layer - self.n_encoder]
                delta = delta * (1 - a * a)  # tanh hidden layers of the decoder
        return delta

