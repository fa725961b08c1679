"""The DP-SGD engine: Poisson subsampling, per-sample clipping, Gaussian noise.

A model plugs in with one callable, ``per_sample(idx)``: the per-sample
gradients of the rows ``idx`` (one step's Poisson batch) at the current
parameters, computed in one forward and backward pass, either

* as a :class:`DenseGradients`: the inputs ``a`` and back-propagated errors
  ``d`` of the model's dense layers. The per-sample gradient of a weight
  matrix is the outer product of ``a_i`` and ``d_i``, so
  ``||g_i||^2 = ||a_i||^2 ||d_i||^2`` (:func:`dense_grad_sq_norms`) and the
  clipped sum is one matrix product (:func:`dense_clipped_grad`): no
  (n, P) matrix of per-sample gradients is ever built;
* or as a list of arrays of shape (len(idx), ...), one per parameter array:
  the per-sample gradients themselves.

The engine does the rest: the batch, the clipping, the noisy sum (one
release through the privacy core's mechanisms) and, in :meth:`DPSGD.train`,
the optimiser's steps. The model keeps nothing between the norms and the sum.

Poisson-subsampled DP-SGD is accounted for add-or-remove neighbours only:
:meth:`DPSGD.from_budget` refuses another relation, before anything is spent.
"""

import math
from numbers import Integral

from dp_accounting import NoOpDpEvent
import numpy as np

from ._calibration import calibrate_noise
from ._events import gaussian_event
from ._mechanisms import noisy_gradient, poisson_sample

__all__ = ["DPSGD", "DenseGradients", "clip_factors", "clipped_gradient_sum",
           "dense_clipped_grad", "dense_grad_sq_norms"]


def dense_grad_sq_norms(a, d, *, bias=True, a_sq=None):
    """Squared per-sample gradient norms of a dense layer ``z = a W + b``.

    Parameters
    ----------
    a : ndarray of shape (b, n_in) or (s, b, n_in)
        The layer's inputs; a leading axis ``s`` stacks independent dense
        layers that see the same batch (their norms add up).
    d : ndarray of shape (b, n_out) or (s, b, n_out)
        d loss_i / d z_i, the back-propagated errors.
    bias : bool, default=True
        Whether the layer has a bias (its per-sample gradient is ``d_i``).
    a_sq : ndarray of shape (b,) or (s, b), optional
        ``||a_i||^2`` when already known (e.g. fixed inputs, computed once).

    Returns
    -------
    ndarray of shape (b,)
        ``(||a_i||^2 + bias) * ||d_i||^2`` (summed over the stack); add the
        layers' values for a network.
    """
    if a_sq is None:
        a_sq = np.einsum("...ij,...ij->...i", a, a)
    sq = (a_sq + (1.0 if bias else 0.0)) * np.einsum("...ij,...ij->...i", d, d)
    return sq.reshape(-1, sq.shape[-1]).sum(axis=0)


def dense_clipped_grad(a, d, factors, *, bias=True):
    """Sum over the batch of ``factors[i]`` times each row's dense-layer gradient.

    ``a`` and ``d`` are as in :func:`dense_grad_sq_norms` (2-D, or 3-D for a
    stack of layers).

    Returns
    -------
    list of ndarray
        ``[dW]`` of shape (n_in, n_out) (or (s, n_in, n_out)), then ``db`` of
        shape (n_out,) (or (s, n_out)) when ``bias``.
    """
    weighted = d * factors[:, None].astype(d.dtype, copy=False)
    grads = [np.swapaxes(a, -1, -2) @ weighted]
    if bias:
        grads.append(weighted.sum(axis=-2))
    return grads


class DenseGradients:
    """The per-sample gradients of a batch through dense layers ``z = a W + b``.

    What a model's ``per_sample(idx)`` returns to :class:`DPSGD`: each
    layer's inputs and back-propagated errors on the batch, from which the
    engine takes the per-row norms (:func:`dense_grad_sq_norms`) and the
    clipped sum (:func:`dense_clipped_grad`) without building the per-row
    gradients.

    Parameters
    ----------
    layers : list of tuple
        ``(a, d)`` or ``(a, d, a_sq)`` per layer, as in
        :func:`dense_grad_sq_norms` (2-D, or 3-D for a stack of layers that
        see the same batch; ``a_sq`` the known ``||a_i||^2``, or None).
    bias : bool, default=True
        Whether the layers have biases.

    The gradients come in the order of the parameters they update: every
    layer's weight matrix, then (``bias``) every layer's bias.
    """

    def __init__(self, layers, *, bias=True):
        self.layers = [(layer[0], layer[1], layer[2] if len(layer) > 2 else None)
                       for layer in layers]
        self.bias = bias

    def sq_norms(self):
        """(b,) the squared L2 norm of each row's gradient over all the layers."""
        sq = None
        for a, d, a_sq in self.layers:
            layer = dense_grad_sq_norms(a, d, bias=self.bias, a_sq=a_sq)
            sq = layer if sq is None else sq + layer
        return sq

    def weighted_sum(self, factors):
        """The sum over the batch of ``factors[i]`` times row i's gradient, per parameter array."""
        grads = [dense_clipped_grad(a, d, factors, bias=self.bias) for a, d, _ in self.layers]
        return [g[0] for g in grads] + ([g[1] for g in grads] if self.bias else [])


class _RowGradients:
    """Per-sample gradients given as they are: arrays of shape (b, ...), one per parameter."""

    def __init__(self, grads):
        self.grads = [np.asarray(grads)] if isinstance(grads, np.ndarray) else [
            np.asarray(g) for g in grads]

    def sq_norms(self):
        flat = [g.reshape(len(g), math.prod(g.shape[1:])) for g in self.grads]
        return sum(np.einsum("ij,ij->i", g, g) for g in flat)

    def weighted_sum(self, factors):
        return [np.tensordot(factors, g, axes=1) for g in self.grads]


def clip_factors(norms, max_grad_norm):
    """``min(1, max_grad_norm / norm)`` per row (ones when ``max_grad_norm`` is None)."""
    norms = np.asarray(norms, dtype=float)
    if max_grad_norm is None:
        return np.ones_like(norms)
    return np.minimum(1.0, max_grad_norm / np.maximum(norms, 1e-12))


def clipped_gradient_sum(grads, max_grad_norm, n_rows):
    """The sum over ``n_rows`` rows of each row's gradient clipped to ``max_grad_norm``.

    What a DP-SGD step sums before its noise: :meth:`DPSGD.step` applies it
    to its batch in memory, and a full-batch step on an engine applies it to
    each partition of the rows, in the workers (:meth:`DPSGD.full_batch_step`),
    the partial sums added exactly. Exact, not private: only the noisy sum
    (:meth:`DPSGD.privatize`, in the driver) is released.

    Parameters
    ----------
    grads : DenseGradients or list of ndarray
        The rows' per-sample gradients (as ``per_sample`` returns them).
    max_grad_norm : float or None
        The clipping norm; None sums the gradients unclipped (the
        non-private baseline).
    n_rows : int
        The number of rows ``grads`` holds.

    Returns
    -------
    list of ndarray
        One sum per parameter array.
    """
    if not isinstance(grads, DenseGradients):
        grads = _RowGradients(grads)
    if max_grad_norm is None:  # non-private: no clipping, norms not needed
        factors = np.ones(n_rows)
    elif n_rows:
        factors = clip_factors(np.sqrt(grads.sq_norms()), max_grad_norm)
    else:
        factors = np.zeros(0)
    return grads.weighted_sum(factors)


class DPSGD:
    """Differentially private gradients for SGD-type training (Abadi et al. 2016).

    Each :meth:`step` draws a Poisson sample (each row independently with
    probability ``sample_rate``, as the accountants assume), clips each row's
    gradient to L2 norm ``max_grad_norm``, sums, adds Gaussian noise of
    standard deviation ``noise_multiplier * max_grad_norm`` and divides by the
    expected batch size ``sample_rate * n_samples``, with ``n_samples`` the
    public planning count (a DP count of the rows, see
    :class:`~skdpx.privacy.FitCount`; dividing by the realised batch size,
    or by the private number of rows, would leak it). The optimiser only
    ever sees these noisy gradients.

    Parameters
    ----------
    noise_multiplier : float >= 0
        0 with ``max_grad_norm=None`` is the non-private baseline through the
        same code: no clipping, no noise, mean over the realised batch.
    max_grad_norm : float > 0 or None
    sample_rate : float in (0, 1]
    n_samples : float > 0
        The planning count: public (a DP count, or the number of rows when
        that is public). The expected batch size is ``sample_rate *
        n_samples``.
    max_steps : int
        The number of steps the noise was calibrated for; more raise.

    Before the first step, :meth:`bind` gives the engine the noise source,
    the commitment of the spend (:meth:`planned_event`, committed before
    training reads the data) and the number of rows to sample from; every
    step draws its batch and its noise from the source and its event from
    the commitment. The noise is float64 from
    the secure generator, even for float32 gradients.

    Attributes
    ----------
    n_steps : int
        Steps taken so far.
    event : dp_accounting.DpEvent
        What the steps taken so far released.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpx.privacy import DPSGD, DenseGradients, PrivacyLedger
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(1000, 3)); y = (X[:, 0] > 0).astype(float)
    >>> w = np.zeros(3)
    >>> from skdpx.privacy import EstimatorLedger, noise_source
    >>> engine = DPSGD.from_budget(1.0, 1e-5, n_samples=1000, batch_size=100, epochs=5,
    ...                            max_grad_norm=1.0)
    >>> ledger = EstimatorLedger(1.0, 1e-5, accountant=PrivacyLedger())
    >>> _ = engine.bind(noise_source(), ledger.commit(engine.planned_event(), "DP-SGD"))
    >>> def per_sample(idx):  # logistic regression: one dense layer, no bias
    ...     errors = 1 / (1 + np.exp(-X[idx] @ w)) - y[idx]  # d loss / d logit
    ...     return DenseGradients([(X[idx], errors[:, None])], bias=False)
    >>> for _ in range(engine.max_steps):
    ...     (gw,), _ = engine.step(per_sample)
    ...     w -= 0.5 * gw[:, 0]
    >>> float(np.mean((X @ w > 0) == y)) > 0.9
    True
    """

    def __init__(self, *, noise_multiplier, max_grad_norm, sample_rate, n_samples, max_steps):
        if not noise_multiplier >= 0:
            raise ValueError(f"noise_multiplier must be >= 0, got {noise_multiplier!r}.")
        if max_grad_norm is not None and not max_grad_norm > 0:
            raise ValueError(f"max_grad_norm must be > 0 or None, got {max_grad_norm!r}.")
        if noise_multiplier > 0 and max_grad_norm is None:
            raise ValueError("noise needs clipping: give max_grad_norm when noise_multiplier > 0.")
        if not 0 < sample_rate <= 1:
            raise ValueError(f"sample_rate must be in (0, 1], got {sample_rate!r}.")
        if not n_samples > 0 or int(max_steps) < 1:
            raise ValueError("n_samples must be > 0 and max_steps >= 1.")
        self.noise_multiplier = float(noise_multiplier)
        self.max_grad_norm = None if max_grad_norm is None else float(max_grad_norm)
        self.sample_rate = float(sample_rate)
        self.n_samples = float(n_samples)
        self.max_steps = int(max_steps)
        self.n_steps = 0
        self._noise = self._commitment = self._n_rows = None

    @classmethod
    def from_budget(
        cls, epsilon, delta, *, n_samples, batch_size, epochs, max_grad_norm, accounting="pld",
        prior=None, relation="add_or_remove", trainer="DP-SGD", alternative=None,
    ):
        """An engine whose noise meets (epsilon, delta) over ``epochs`` epochs.

        ``sample_rate = batch_size / n_samples`` and the number of steps is
        ``ceil(epochs / sample_rate)``, from the public planning count
        ``n_samples``. ``batch_size=None`` (or at least ``n_samples``) is
        full-batch gradient descent: sample rate 1, ``ceil(epochs)`` steps. ``epsilon=np.inf`` gives the
        non-private engine (no clipping, no noise). ``prior``: a DpEvent of
        other releases of the same data that the budget must also cover
        (see :func:`calibrate_noise`).

        ``relation`` is the neighbouring relation of the ledger that will pay
        for the steps. The privacy amplification of Poisson subsampling is
        accounted for add-or-remove neighbours only, so a private engine
        (finite epsilon) under any other relation is refused with a
        ``ValueError``: call this while planning, before anything is spent.
        ``trainer`` (who trains, e.g. the estimator's name) and
        ``alternative`` (another way out, e.g. a parameter that avoids
        DP-SGD) word that error.
        """
        if relation != "add_or_remove" and not math.isinf(epsilon):
            other = f", or {alternative}" if alternative else ""
            raise ValueError(
                f"{trainer} trains with Poisson-subsampled DP-SGD, whose privacy is accounted "
                f"for add-or-remove neighbours only; this ledger's relation is {relation!r}. "
                f"Use a ledger with relation='add_or_remove'{other}."
            )
        if not n_samples >= 1:
            raise ValueError(f"n_samples must be >= 1, got {n_samples!r}.")
        if batch_size is not None and not 1 <= batch_size:
            raise ValueError(f"batch_size must be >= 1 or None, got {batch_size!r}.")
        batch_size = n_samples if batch_size is None else min(batch_size, n_samples)
        sample_rate = batch_size / n_samples
        if not epochs > 0:
            raise ValueError(f"epochs must be > 0, got {epochs!r}.")
        # epochs * n / batch, exactly for integers (a float division can overshoot)
        if batch_size >= n_samples:  # full batch
            sample_rate, steps = 1.0, max(1, math.ceil(epochs))
        elif (isinstance(epochs, Integral) and isinstance(batch_size, Integral)
                and isinstance(n_samples, Integral)):
            steps = max(1, -(-int(epochs) * n_samples // int(batch_size)))
        else:
            steps = max(1, math.ceil(epochs * n_samples / batch_size))
        if math.isinf(epsilon):
            return cls(noise_multiplier=0.0, max_grad_norm=None, sample_rate=sample_rate,
                       n_samples=n_samples, max_steps=steps)
        z = calibrate_noise(epsilon, delta, steps=steps, sample_rate=sample_rate,
                            accounting=accounting, prior=prior)
        return cls(noise_multiplier=z, max_grad_norm=max_grad_norm, sample_rate=sample_rate,
                   n_samples=n_samples, max_steps=steps)

    @property
    def private(self):
        return self.noise_multiplier > 0

    def planned_event(self):
        """The DpEvent of all ``max_steps`` steps (what to reserve before training)."""
        return gaussian_event(self.noise_multiplier, steps=self.max_steps,
                              sample_rate=self.sample_rate)

    @property
    def event(self):
        if self.n_steps == 0:
            return NoOpDpEvent()
        return gaussian_event(self.noise_multiplier, steps=self.n_steps,
                              sample_rate=self.sample_rate)

    def bind(self, noise, commitment, n_rows=None):
        """Give the engine its noise source, the commitment that pays for its
        steps, and the number of rows its batches are drawn from.

        ``n_rows`` (private: only the sampler reads it) defaults to
        ``n_samples`` when that is a whole number.

        Returns
        -------
        self
        """
        if n_rows is None:
            if self.n_samples != int(self.n_samples):
                raise ValueError("give n_rows: the planning count is not a number of rows.")
            n_rows = int(self.n_samples)
        self._noise, self._commitment, self._n_rows = noise, commitment, int(n_rows)
        return self

    def sample(self):
        """A Poisson sample of row indices (each row in with probability sample_rate)."""
        return poisson_sample(self._n_rows, self.sample_rate, noise=self._noise)

    def clip_factors(self, norms):
        """min(1, max_grad_norm / norm) per row (ones when not clipping)."""
        return clip_factors(norms, self.max_grad_norm)

    def privatize(self, grad_sums, batch_size):
        """Noise the clipped sums (one release) and divide by the expected batch size."""
        if not self.private:
            return [g / max(batch_size, 1) for g in grad_sums]
        # one release of all the parameter arrays together: the L2 sensitivity
        # max_grad_norm holds for their concatenation (float64, as noisy_gradient
        # would convert it; sliced back by offsets: a step's overheads count)
        flat = np.concatenate([np.ravel(g) for g in grad_sums], dtype=np.float64)
        noisy = noisy_gradient(flat, noise_multiplier=self.noise_multiplier,
                               sensitivity=self.max_grad_norm, noise=self._noise,
                               commitment=self._commitment, sample_rate=self.sample_rate)
        noisy /= self.sample_rate * self.n_samples
        parts, start = [], 0
        for g in grad_sums:
            shape = np.shape(g)
            stop = start + math.prod(shape)
            parts.append(noisy[start:stop].reshape(shape))
            start = stop
        return parts

    def step(self, per_sample):
        """One DP-SGD step.

        Parameters
        ----------
        per_sample : callable
            ``per_sample(idx)`` -> the per-sample gradients of the batch's
            rows ``idx`` at the current parameters: a
            :class:`DenseGradients`, or a list of arrays of shape
            (len(idx), ...), one per parameter array. Called once a step;
            the norms (for clipping) and the clipped sum both come from it.

        Returns
        -------
        grads : list of ndarray
            The noisy mean gradient of each parameter array.
        idx : ndarray
            The rows of this step's batch (for the model's own bookkeeping;
            never publish it).
        """
        self._check_step()
        idx = self.sample()
        sums = clipped_gradient_sum(per_sample(idx), self.max_grad_norm, len(idx))
        self.n_steps += 1
        return self.privatize(sums, len(idx)), idx

    def _check_step(self):
        if self._noise is None:
            raise RuntimeError("bind() the engine to a noise source and a commitment first.")
        if self.n_steps >= self.max_steps:
            raise RuntimeError(
                f"the noise was calibrated for {self.max_steps} steps; taking more would "
                "exceed the privacy budget."
            )

    def full_batch_step(self, clipped_sum):
        """One full-batch step whose clipped sum is computed where the rows are.

        For rows held by an engine (Dask, Spark): ``clipped_sum(max_grad_norm)``
        returns the sum over every row of its gradient clipped to
        ``max_grad_norm`` (:func:`clipped_gradient_sum` on each partition,
        in the workers, the partial sums added exactly: one pass over the
        partitions). The noise, the event and the division are this
        engine's, in the driver, as in :meth:`step` with every row in the
        batch; the non-private mean divides by the ``n_rows`` given to
        :meth:`bind` (exact when the fit is not private). Only a full-batch
        engine (sample rate 1) takes such a step: a Poisson batch must be
        drawn where the noise is drawn, here.

        Returns
        -------
        list of ndarray
            The noisy mean gradient of each parameter array.
        """
        if self.sample_rate < 1:
            raise ValueError("full_batch_step needs a full-batch engine (sample_rate 1), got "
                             f"sample_rate {self.sample_rate:g}.")
        self._check_step()
        sums = clipped_sum(self.max_grad_norm)
        self.n_steps += 1
        return self.privatize(sums, self._n_rows)

    def train(self, per_sample, params, optimizer, *, weight_decay=None, lr_decay=None):
        """Take all ``max_steps`` steps, each moving ``params`` (in place) by ``optimizer``.

        Parameters
        ----------
        per_sample : callable
            As in :meth:`step`; it reads the current ``params``.
        params : list of ndarray
            The trained arrays, in the order of the gradients (for
            :class:`DenseGradients`: the weights, then the biases).
        optimizer : object
            With ``update_params(params, grads)`` (and
            ``scale_learning_rate(factor)`` for ``lr_decay``), e.g.
            :func:`skdpx.utils._optim.make_optimizer`'s. It only ever sees
            the noisy gradients: post-processing.
        weight_decay : sequence of float, optional
            One per array of ``params``: ``c * param`` (the gradient of the
            penalty ``c ||param||^2 / 2``) is added to its noisy gradient.
            It reads no data, so it is added after the noise.
        lr_decay : (factor, every), optional
            Scale the learning rate by ``factor`` every ``every`` steps.

        Returns
        -------
        self
        """
        return self._train(lambda: self.step(per_sample)[0], params, optimizer,
                           weight_decay=weight_decay, lr_decay=lr_decay)

    def train_full_batch(self, clipped_sum, params, optimizer, *, weight_decay=None,
                         lr_decay=None):
        """:meth:`train` with :meth:`full_batch_step`: ``clipped_sum(max_grad_norm)``
        (reading the current ``params``) sums the clipped gradients over every row."""
        return self._train(lambda: self.full_batch_step(clipped_sum), params, optimizer,
                           weight_decay=weight_decay, lr_decay=lr_decay)

    def _train(self, step, params, optimizer, *, weight_decay, lr_decay):
        for index in range(self.max_steps):
            if lr_decay is not None and index and index % lr_decay[1] == 0:
                optimizer.scale_learning_rate(lr_decay[0])
            grads = step()
            if weight_decay is not None:
                grads = [g + c * p if c else g for g, c, p in zip(grads, weight_decay, params)]
            optimizer.update_params(params, grads)
        return self
