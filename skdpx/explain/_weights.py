"""Weight functions of the DP local explanation loss (Patel, Shokri & Zick 2020).

The local loss of an explanation ``phi`` at a query ``z`` over an explanation
dataset of ``m`` rows with labels ``y`` in [-1, 1] is

    L(phi, z) = (1/m) sum_x alpha(||x - z||) (phi . (x - z) - y(x))^2,

minimised over the ball ||phi|| <= k (``radius``). One row contributes
``(2/m) alpha(r) (phi . (x - z) - y) (x - z)`` to the gradient, whose norm is
at most ``(2/m) alpha(r) r (k r + 1)`` for r = ||x - z||, ||phi|| <= k and
|y| <= 1. So if

    alpha(r) <= c / (2 r (k r + 1))     for every r > 0           (*)

one row's contribution has norm at most c / m, whatever ``phi`` in the ball
and ``z``: this is the paper's Lemma 3.1 (stated there for k = 1), the family
F(c) of admissible weights. Every weight here is capped by (*).

Every kind of black-box output is mapped into [-1, 1] before it is a label
(a probability as ``2 P - 1``, an indicator as ``2 [f = k] - 1``, a
regressor's output clipped to its declared range and centred on its value
at the query: :mod:`skdpx.explain._outputs`), so the bounds below hold for
all of them.

The neighbouring relation is add-or-remove-one (that of dp_accounting's
subsampled events and of skdpx's DP-SGD), with m public: the normaliser 1/m
is the number of rows of the explanation dataset, treated as public as
skdpx's DP-SGD treats n (and as diffprivlib's classifiers do). Adding or
removing a row then adds or removes exactly one contribution, so the
gradient moves by at most c / m (:func:`gradient_sensitivity`). Under
replace-one neighbours (m fixed), the triangle inequality gives 2 c / m; for
weights that are also at most 1 (both weights here) the change is at most
``(c + 2 r*) / m`` (``relation="replace_one"``, proof there), so the same
noise also gives a replace-one guarantee, at a larger epsilon.
"""

import numpy as np

__all__ = ["flat_radius", "gradient_sensitivity", "kernel_weight", "stable_weight", "weight_cap"]


def weight_cap(r, *, c=1.0, radius=1.0):
    """The largest admissible weight, ``c / (2 r (radius r + 1))`` (inf at r = 0)."""
    r = np.asarray(r, dtype=float)
    with np.errstate(divide="ignore"):
        return c / (2.0 * r * (radius * r + 1.0))


def stable_weight(r, *, c=1.0, radius=1.0):
    """The paper's stable weight (its eq. 5): 1 near the query, then the cap.

    ``alpha(r) = min(1, c / (2 r (radius r + 1)))``: equal weight for the rows
    close to the query, decreasing quadratically in the distance beyond. The
    equation is garbled in the text extraction; this form is derived from
    its description (bounded by 1, in F(c), quadratic decay) and Lemma 3.1.
    """
    return np.minimum(1.0, weight_cap(r, c=c, radius=radius))


def kernel_weight(r, *, kernel_width, c=1.0, radius=1.0):
    """LIME's exponential kernel, capped to stay in F(c).

    ``alpha(r) = min(exp(-r^2 / kernel_width^2), c / (2 r (radius r + 1)))``.
    """
    r = np.asarray(r, dtype=float)
    return np.minimum(np.exp(-(r / kernel_width) ** 2), weight_cap(r, c=c, radius=radius))


def flat_radius(*, c=1.0, radius=1.0):
    """``r*``, where the stable weight's flat part meets the cap: ``r (radius r + 1) = c / 2``."""
    return (np.sqrt(1.0 + 2.0 * radius * c) - 1.0) / (2.0 * radius)


def gradient_sensitivity(n_rows, *, c=1.0, radius=1.0, relation="add_or_remove"):
    """L2 sensitivity of the local loss's gradient over ``n_rows`` rows (``n_rows`` public).

    The loss is a sum over the rows divided by ``n_rows``, a public number:
    under add-or-remove, the DP count of the rows (a row added or removed
    adds or removes its own term and moves no other); under replace-one,
    the number of rows, which the relation fixes.

    For a weight with ``alpha(r) <= min(1, c / (2 r (k r + 1)))`` (the
    stable weight, and the capped kernel, which is below it), ``k`` the
    ``radius``. With ``w = x - z`` and ``r = ||w||``, a row adds
    ``(2/m) alpha(r) [(phi . w) w - y w]`` to the gradient, of norm at most
    ``(2/m) alpha(r) r (k r + 1) <= c / m`` for ``||phi|| <= k`` and
    ``|y| <= 1``.

    ``relation="add_or_remove"`` (skdpx's relation): adding or removing a
    row adds or removes one contribution: ``c / m``.

    ``relation="replace_one"``: replacing row ``(w, y)`` by ``(w', y')``
    moves the gradient by ``(2/m)`` times

        (A - A') phi  -  (alpha y w - alpha' y' w'),   A = alpha w w' (PSD).

    Since ``-A' <= A - A' <= A``, the first term has norm at most
    ``k max(alpha r^2, alpha' r'^2)``; the second at most
    ``alpha r + alpha' r'``. Name the rows so that the maximum is
    ``alpha r^2``: the sum is at most ``alpha r (k r + 1) + alpha' r'``. The
    cap gives ``alpha r (k r + 1) <= c / 2``, and ``alpha' <= min(1, cap)``
    gives ``alpha' r' <= min(r', c / (2 (k r' + 1))) <= r*``, where the two
    meet (:func:`flat_radius`). So the gradient moves by at most
    ``(2/m)(c/2 + r*) = (c + 2 r*) / m``, below the triangle inequality's
    ``2c / m`` (for c = k = 1: 1.732 / m against 2 / m).
    """
    if relation == "add_or_remove":
        return c / n_rows
    if relation == "replace_one":
        return (c + 2.0 * flat_radius(c=c, radius=radius)) / n_rows
    raise ValueError(f"relation must be 'add_or_remove' or 'replace_one', got {relation!r}.")
