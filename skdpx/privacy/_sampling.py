"""Floating-point safe noise for low-dimensional releases (OpenDP's exact samplers).

The threat
----------
A textbook implementation of the Laplace or Gaussian mechanism computes
``value + noise`` in float64, with ``noise`` itself produced by floating-point
arithmetic on a uniform double (numpy's Laplace sampler, for example, returns
``scale * log(2 * u)`` for ``u`` a multiple of ``2**-53``). Mironov (CCS 2012,
"On significance of the least significant bits for differential privacy")
showed that this breaks differential privacy outright: the set of doubles that
``x + noise`` can take is sparse and depends on ``x``, so an attacker who knows
the sampler (not its seed) checks, for each candidate input, whether the
released double is reachable at all, and tells neighbouring datasets apart
from the low bits of a single output, whatever the nominal epsilon. In
``tests/test_sampling.py`` this replay is right 90% of the time on one naive
numpy Laplace output at epsilon = 0.01, where differential privacy allows
50.25%. Float Gaussian samplers share the flaw in kind (numpy's ziggurat
returns ``integer * table[i]``, a fixed lattice that ``x`` shifts), although
numpy's reachable set is sparse only for noise near zero.

The grid
--------
The functions here release through OpenDP's float mechanisms
(:func:`opendp.measurements.make_gaussian`, :func:`opendp.measurements.make_laplace`),
which never do floating-point arithmetic on the private value:

1. each input is converted exactly to a rational and rounded to the nearest
   multiple of ``2**k`` (the grid);
2. an integer ``Z`` is drawn from the discrete Gaussian (Canonne, Kamath &
   Steinke 2020) or the discrete Laplace with scale ``scale / 2**k``, with
   exact integer/rational arithmetic and cryptographically secure random
   bits (OpenSSL's ``RAND_bytes``; the ``rand`` crate's OS-seeded generator
   in builds without OpenSSL);
3. the exact rational ``round_k(x) + Z * 2**k`` is converted to the nearest
   double.

The exact output lies in ``2**k * Z`` for every input, so its support does
not depend on the data; step 3 is post-processing of that exact value. When
``|output| < 2**(k + 53)`` the conversion is exact and every released double
is an integer multiple of ``2**k``.

What OpenDP guarantees, and how ``k`` is chosen
-----------------------------------------------
OpenDP's privacy map charges for the rounding in step 1: two inputs at
distance ``d`` can be at distance up to ``d + (2**k - 2**-1074) * m`` after
rounding (``m = n`` for the L1 metric, ``sqrt(n)`` for L2, ``n`` values), so
its map at ``d_in`` reports the zCDP ``rho`` (Gaussian) or pure ``epsilon``
(Laplace) of ``d_in`` plus that rounding distance. OpenDP's default ``k`` is
``-1074``, the spacing of the subnormal doubles: every double is already on
that grid, the rounding distance is zero and the map is exactly the
continuous mechanism's, but the samplers then work on ~1100-bit integers and
cost about 40 us (Gaussian) and 18 us (Laplace) per value here.

skdpx uses the coarsest grid that keeps both the noise and the accounting
indistinguishable from the continuous mechanism's::

    2**k <= min(scale * 2**-30, sensitivity * 2**-32 / m)

(``k >= -1074``; ``k = -1074`` when ``sensitivity`` is 0). The first bound
makes the noise a discretisation with at least ``2**30`` grid points per
noise scale: rounding the input moves it by at most ``2**(k-1) <= scale *
2**-31``, and the discrete noise's variance is the continuous one's to a
relative ``2**-60``. The second keeps the rounding distance below
``2**-32 * sensitivity``, so OpenDP's ``rho`` exceeds the continuous
``sensitivity**2 / (2 sigma**2)`` by a relative ``2**-31`` at most (its
``epsilon`` exceeds ``sensitivity / scale`` by ``2**-32``). OpenDP is given a
scale ``2**-28`` larger (relative) than the caller's, which more than pays for
that charge, and :func:`exact_gaussian` and :func:`exact_laplace` check,
before drawing any noise, that OpenDP's own map at the caller's sensitivity is
at most the continuous mechanism's loss the ledger records, with no tolerance.
This grid is about four times faster than ``k = -1074`` (in CPU time, about
11 us per Gaussian value and 6 to 7 us per Laplace value for ``10**3`` to
``10**4`` values, plus under 0.1 ms per call). Because a non-minimal ``k``
has a non-zero rounding distance, OpenDP needs the vector's length in the
domain: the measurement is cached per ``(scale, k, n)`` and the checked map
per ``(scale, sensitivity, n)``.

Where skdpx draws the line
--------------------------
These samplers are for low-dimensional releases: counts, sums, centres,
prototypes, means, bounds and scores, vectors of up to about ``10**4``
entries (about 0.1 s for ``10**4`` Gaussian values). High-dimensional noise
drawn at every step of DP-SGD or DP gradient descent (millions of values per
run) stays float64 Gaussian noise from a cryptographically secure generator:
at ~11 us per value the exact sampler would cost minutes per epoch, and what
is released there is a model after many further floating-point steps, not a
noisy gradient whose low bits an attacker can replay. That residual,
theoretical exposure is accepted and documented, not removed.
"""

from functools import lru_cache
from importlib import import_module
import math
from numbers import Real

import numpy as np

# OpenDP's three modules a release uses, not ``opendp.prelude``: the prelude
# also imports OpenDP's extras (its numpy and scikit-learn helpers, with
# scikit-learn's decomposition), 0.02-0.04 s of CPU for modules no release
# here uses (issue 41). The three are imported with the privacy core (about
# 0.02 s), not on the first release: imported there, their objects set off a
# full garbage collection of the process (0.07-0.12 s) in the first fit,
# which then took more than twice the second (benchmarks/fixed_costs.py,
# part first_fit).
import opendp.domains as _domains
import opendp.measurements as _measurements
import opendp.metrics as _metrics
from opendp.mod import enable_features as _enable_features

# OpenDP's converters import opendp._data on the first call into its library, in
# every release's measurement and sample: imported here (about 0.4 ms) rather than
# in a process's first fit (issue 41; tests/test_sampling.py checks that a first
# secure release imports nothing)
try:
    import_module("opendp._data")
except ModuleNotFoundError:  # an OpenDP laid out otherwise: imported where it needs it
    pass

# What every release's measurement is built on, made once with the privacy core
# and shared (read-only) by all of them: float atoms without NaN, the L1 and L2
# distances. Public constants, no feature needed; the first call into OpenDP's
# library (about 1 ms, most of it the library's code paged in) is then paid by
# ``import skdpx`` instead of a process's first fit (issue 41), and each new
# measurement saves building them (about 0.15 ms).
_FLOATS = _domains.atom_domain(T=float, nan=False)
_L1 = _metrics.l1_distance(T=float)
_L2 = _metrics.l2_distance(T=float)

__all__ = ["exact_gaussian", "exact_laplace"]

#: OpenDP's default grid exponent for float64: 2**-1074 is the subnormal spacing.
_K_MIN = -1074
#: Noise granularity relative to the scale: 2**k <= scale * 2**-30.
_SCALE_BITS = 30
#: Rounding distance relative to the sensitivity: at most sensitivity * 2**-32.
_SENSITIVITY_BITS = 32
#: The noise OpenDP adds is the caller's scale times this: a relative 2**-28 more
#: noise than the ledger records, which more than pays for the grid's rounding
#: charge (at most 2**-31 relative in rho, 2**-32 in epsilon), so OpenDP's own map
#: at the caller's sensitivity is checked to be at most the continuous loss, with
#: no tolerance.
_PAD = 1.0 + 2.0**-28


def _floor_log2(y):
    """``floor(log2(y))`` for a positive finite float, exactly (no ``math.log2`` rounding)."""
    return math.frexp(y)[1] - 1


def _grid_exponent(scale, sensitivity, spread):
    """The grid exponent ``k`` (see the module docstring).

    Parameters
    ----------
    scale : float
        The noise scale (standard deviation, or Laplace scale), > 0.
    sensitivity : float
        The caller's sensitivity, >= 0.
    spread : float
        How the per-value rounding adds up over the vector under the metric:
        ``n`` for L1, ``sqrt(n)`` for L2.

    Returns
    -------
    int
        ``k`` with ``2**k <= min(scale * 2**-30, sensitivity * 2**-32 / spread)``,
        and ``k >= -1074``.
    """
    k = _floor_log2(scale) - _SCALE_BITS
    if sensitivity > 0:
        bound = sensitivity / spread
        k = min(k, _floor_log2(bound) - _SENSITIVITY_BITS) if bound > 0 else _K_MIN
    else:
        k = _K_MIN  # no room for any rounding: OpenDP's exact (rounding-free) grid
    return max(k, _K_MIN)


def _opendp():
    """The three OpenDP modules a release uses, its ``contrib`` features enabled.

    The modules are imported with this one (see the note at the imports); the
    features are enabled here, on the first release, not on ``import skdpx``.
    """
    _enable_features("contrib")
    return _domains, _metrics, _measurements


@lru_cache(maxsize=256)
def _gaussian_measurement(sigma, k, size):
    """OpenDP's Gaussian measurement on float vectors of length ``size``, grid ``2**k``."""
    domains, _, measurements = _opendp()
    return measurements.make_gaussian(domains.vector_domain(_FLOATS, size=size), _L2,
                                      scale=sigma, k=k)


@lru_cache(maxsize=256)
def _laplace_measurement(scale, k, size):
    """OpenDP's Laplace measurement on float vectors of length ``size``, grid ``2**k``."""
    domains, _, measurements = _opendp()
    return measurements.make_laplace(domains.vector_domain(_FLOATS, size=size), _L1,
                                     scale=scale, k=k)


def _check_scale(name, scale):
    if isinstance(scale, bool) or not isinstance(scale, Real) or not 0 < scale < math.inf:
        raise ValueError(
            f"{name} must be a finite number > 0, got {scale!r} "
            "(a zero-noise release is the caller's non-private path)."
        )
    return float(scale)


def _check_sensitivity(sensitivity):
    if (
        isinstance(sensitivity, bool)
        or not isinstance(sensitivity, Real)
        or not 0 <= sensitivity < math.inf
    ):
        raise ValueError(f"sensitivity must be a finite number >= 0, got {sensitivity!r}.")
    return float(sensitivity)


def _check_values(values):
    arr = np.asarray(values)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"values must be real numbers, got an array of dtype {arr.dtype}.")
    arr = arr.astype(np.float64, copy=False)
    if not np.all(np.isfinite(arr)):
        # OpenDP maps a non-finite float to 0 before adding noise: refuse instead.
        raise ValueError("values must be finite (no NaN or infinity).")
    return arr


@lru_cache(maxsize=256)
def _checked_gaussian(sigma, sensitivity, size):
    """The Gaussian measurement for this release, after checking OpenDP's map (cached)."""
    k = _grid_exponent(sigma, sensitivity, math.sqrt(size))
    measurement = _gaussian_measurement(sigma * _PAD, k, size)
    ratio = sensitivity / sigma
    _check_map(measurement.map(sensitivity), ratio * ratio / 2.0, "rho")  # no OverflowError
    return measurement


@lru_cache(maxsize=256)
def _checked_laplace(scale, sensitivity, size):
    """The Laplace measurement for this release, after checking OpenDP's map (cached)."""
    k = _grid_exponent(scale, sensitivity, float(size))
    measurement = _laplace_measurement(scale * _PAD, k, size)
    _check_map(measurement.map(sensitivity), sensitivity / scale, "epsilon")
    return measurement


def _check_map(loss, bound, what):
    # math.ulp(0.0): a loss that underflows float64 (sensitivity / scale near 1e-162
    # or below) is 0.0 here and OpenDP's upward rounding of it the smallest subnormal
    if not loss <= max(bound, math.ulp(0.0)):
        raise RuntimeError(
            f"OpenDP's privacy map gives {what} = {loss!r} at the caller's sensitivity, "
            f"above the continuous mechanism's {bound!r}; refusing to release."
        )


def _exact(values, name, scale, sensitivity, checked):
    """Validate, check OpenDP's map (``checked``), then release ``values`` through it."""
    scale = _check_scale(name, scale)
    sensitivity = _check_sensitivity(sensitivity)
    arr = _check_values(values)
    if arr.size == 0:
        return arr.copy()
    noisy = checked(scale, sensitivity, arr.size)(arr.ravel().tolist())
    return np.asarray(noisy, dtype=np.float64).reshape(arr.shape)


def exact_gaussian(values, sigma, *, sensitivity):
    """Release ``values`` plus Gaussian noise of standard deviation ``sigma``, floating-point safe.

    The noise is OpenDP's discrete Gaussian on the grid ``2**k`` (see the
    module docstring for ``k``), drawn with exact arithmetic from a
    cryptographically secure generator, so the low bits of the output carry no
    information about ``values`` (Mironov 2012).

    Parameters
    ----------
    values : array-like of float
        The exact values (any shape, finite). The whole array is one release.
    sigma : float
        The standard deviation of the noise, > 0.
    sensitivity : float
        The L2 sensitivity of ``values`` the caller calibrated ``sigma`` for, >= 0.

    Returns
    -------
    ndarray of float64
        The noisy values, of the shape of ``values`` (a 0-d array for a scalar).

    Raises
    ------
    ValueError
        If ``sigma`` is not a finite number > 0, ``sensitivity`` is not a
        finite number >= 0, or ``values`` holds NaN or infinity.
    TypeError
        If ``values`` is not real-valued.
    RuntimeError
        If OpenDP's privacy map at ``d_in = sensitivity`` gives a zCDP ``rho``
        above ``sensitivity**2 / (2 sigma**2)``, the continuous
        Gaussian mechanism's (checked before any noise is drawn).
    """
    return _exact(values, "sigma", sigma, sensitivity, _checked_gaussian)


def exact_laplace(values, scale, *, sensitivity):
    """Release ``values`` plus Laplace noise of scale ``scale``, floating-point safe.

    The noise is OpenDP's discrete Laplace on the grid ``2**k`` (see the
    module docstring for ``k``), drawn with exact arithmetic from a
    cryptographically secure generator, so the low bits of the output carry no
    information about ``values`` (Mironov 2012).

    Parameters
    ----------
    values : array-like of float
        The exact values (any shape, finite). The whole array is one release.
    scale : float
        The scale of the Laplace noise (standard deviation ``scale * sqrt(2)``), > 0.
    sensitivity : float
        The L1 sensitivity of ``values`` the caller calibrated ``scale`` for, >= 0.

    Returns
    -------
    ndarray of float64
        The noisy values, of the shape of ``values`` (a 0-d array for a scalar).

    Raises
    ------
    ValueError
        If ``scale`` is not a finite number > 0, ``sensitivity`` is not a
        finite number >= 0, or ``values`` holds NaN or infinity.
    TypeError
        If ``values`` is not real-valued.
    RuntimeError
        If OpenDP's privacy map at ``d_in = sensitivity`` gives an ``epsilon``
        above ``sensitivity / scale``, the continuous Laplace
        mechanism's (checked before any noise is drawn).
    """
    return _exact(values, "scale", scale, sensitivity, _checked_laplace)
