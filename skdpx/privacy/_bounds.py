"""The bounds a fit clips to: declared (public, free) or DP-estimated (paid).

Every estimator clips the private rows to bounds and scales them with them.
Declared bounds are public facts and cost nothing. With ``bounds=None`` the
bounds are released by a DP mechanism charged inside the estimator's own
epsilon, never the data's raw minimum and maximum.

The mechanism (in the spirit of the "approximate bounds" of Google's
differential-privacy library): per feature, a histogram of the rows over
fixed, public bins of signed octaves (``[2^k, 2^(k+1))``, their negatives,
a bin around 0 and two outer bins; :func:`bounds_bins`), released with one
Gaussian mechanism for all features at once. Each row falls in exactly one
bin per feature, so the ``d`` histograms move by at most ``sqrt(d)`` in L2
when one row is added or removed, and by ``sqrt(2 d)`` when one row is
replaced. The bounds are then read from the noisy counts alone
(post-processing): the outer edges of the outermost bins whose noisy count
passes a threshold that an empty bin passes with probability 1% over all
bins, or of the fullest bin when none passes. A Gaussian release of ``d``
histograms composes like one release (its noise grows as ``sqrt(d)``),
where ``2 d`` separate quantile choices would add up ``2 d`` epsilons.

What it gives: bounds at octave resolution around the bulk of the data; a
feature whose tail holds fewer rows than about the noise is clipped at the
bulk (e.g. on Adult at epsilon 1, ages above 64). On a few hundred rows,
few bins pass and the bounds are tight around the fullest bin. Declared
bounds are always better.
"""

import math
import warnings

import numpy as np
from scipy.special import ndtri

from ..preprocessing._schema import column_list
from ._calibration import calibrate_noise
from ._events import gaussian_event
from ._exceptions import PrivacyLeakWarning
from ._mechanisms import gaussian_release
from ._random import _outside_stacklevel
from ._validation import check_bounds

__all__ = ["BOUNDS_SHARE", "FitBounds", "bounds_bins", "histogram_bounds", "octave_histograms"]

#: The share of an estimator's epsilon spent on its bounds when none are declared.
BOUNDS_SHARE = 0.25
#: The chance that some empty bin passes the threshold (a spuriously wide bound).
_FALSE_POSITIVE = 0.01

_WARNING = (
    "{head} estimated from the private data{scope} with a DP histogram that spends {share:.0%} "
    "of this estimator's epsilon, at octave resolution and clipping thin tails (coarse on "
    "small data). Declare public bounds to spend nothing on them and to clip where you mean "
    "to: bounds=(lower, upper), or bounds={{column: (lower, upper)}} from a data dictionary "
    "or a public sample (skdpx.preprocessing.PublicSchema.from_dictionary, .from_sample)."
)


def _warning(bounds, names, share):
    """The warning of a DP estimate, naming the columns it estimates (public: names only)."""
    if bounds is None:
        head = "bounds=None: the bounds are"
        scope = "" if names is None else f" for every column ({column_list(names)}),"
    elif names is None:
        head, scope = "bounds: the bounds left undeclared (NaN) are", ""
    else:
        one = len(names) == 1
        head, scope = (f"bounds: no bounds are declared for {'column' if one else 'columns'} "
                       f"{column_list(names)}: {'its' if one else 'their'} bounds are"), ""
    return _WARNING.format(head=head, scope=scope, share=share)


def bounds_bins():
    """The public bin edges of the DP bounds (ascending: 106 edges, 105 bins).

    Signed octaves ``+-2^k`` for ``k`` in [-20, 32] and 0 is not an edge: the
    bin around 0 is ``[-2^-20, 2^-20)``. The first bin is ``[-2^32, -2^31)``
    extended to -inf and the last ``[2^31, 2^32)`` extended to +inf, so every
    finite value falls in one bin; a bound is never beyond +-2^32.
    """
    magnitudes = 2.0 ** np.arange(-20, 33)
    return np.concatenate([-magnitudes[::-1], magnitudes])


def histogram_bounds(X, *, noise_multiplier, relation, noise, commitment, columns=None):
    """DP per-feature bounds from one Gaussian release of per-feature octave histograms.

    Parameters
    ----------
    X : ndarray or row-chunked dask array of shape (n_samples, n_features)
        The private rows. A dask array's counts are summed over its row
        blocks in the workers; the noise is added once, in the client.
    noise_multiplier : float >= 0
        Of the one Gaussian release (0: the exact histograms, the
        non-private baseline).
    relation : {"add_or_remove", "replace_one"}
        Sets the L2 sensitivity: ``sqrt(d)`` or ``sqrt(2 d)``.
    noise : NoiseSource
    commitment : Commitment
        Must hold ``gaussian_event(noise_multiplier)``.
    columns : boolean mask or indices of X's columns, optional
        The features to estimate (default all); selected block by block,
        never as a copy of X.

    Returns
    -------
    lower, upper : ndarray of shape (n_features,)
        Bin edges with ``lower < upper`` for every feature.
    """
    noisy = octave_histograms(X, noise_multiplier=noise_multiplier, relation=relation,
                              noise=noise, commitment=commitment, columns=columns)
    # post-processing only from here
    edges = bounds_bins()
    n_bins = len(edges) - 1
    sensitivity = _sensitivity(noisy.shape[0], relation)
    threshold = noise_multiplier * sensitivity * ndtri(1 - _FALSE_POSITIVE / noisy.size)
    passed = noisy > threshold
    none = ~passed.any(axis=1)
    passed[none, np.argmax(noisy[none], axis=1)] = True
    first = np.argmax(passed, axis=1)
    last = n_bins - 1 - np.argmax(passed[:, ::-1], axis=1)
    return edges[first], edges[last + 1]


def _sensitivity(n_features, relation):
    # one row is in one bin per feature: sqrt(d) added or removed, sqrt(2 d) replaced
    return math.sqrt(n_features * (2 if relation == "replace_one" else 1))


def octave_histograms(X, *, noise_multiplier, relation, noise, commitment, columns=None):
    """The Gaussian release behind :func:`histogram_bounds`: (d, n_bins) noisy counts.

    Row i adds 1 to bin ``b`` of feature ``j`` when ``edges[b] <= X[i, j] <
    edges[b + 1]`` (the outer bins extended to +-inf), ``edges`` =
    :func:`bounds_bins`. L2 sensitivity ``sqrt(d)`` (add-or-remove) or
    ``sqrt(2 d)`` (replace-one); ``d`` the number of ``columns`` (default:
    all of X's).
    """
    # (skdpx.utils imports the privacy core)
    from ..utils._chunks import TakeColumns
    from ..utils._engine import partition_sum

    if columns is None:
        d, take = X.shape[1], None
    else:
        take = TakeColumns(columns)
        d = len(np.arange(X.shape[1])[take.columns])
    # exact counts: summed over blocks of rows in memory, or over a dask array's
    # row blocks in the workers; the noise is drawn here, in the client, after the sum
    counts = partition_sum(octave_counts, X, prepare=take)
    return gaussian_release(counts, noise_multiplier=noise_multiplier,
                            sensitivity=_sensitivity(d, relation), noise=noise,
                            commitment=commitment)


def octave_counts(X):
    """The exact (d, n_bins) counts of :func:`octave_histograms` (no noise).

    A sum over rows: the counts of any split of the rows add up to those of
    all rows (:func:`~skdpx.utils._dask.partition_sum`). A non-finite cell
    (NaN, +-inf: a missing value, which the fit then sets to the released
    bounds' midpoint) is counted in no bin, a rule on that cell alone: a row
    still adds at most 1 to one bin per feature, so the sensitivity holds.
    """
    X = np.asarray(X, dtype=float)
    d = X.shape[1]
    edges = bounds_bins()
    n_bins = len(edges) - 1
    bins = np.clip(np.searchsorted(edges, X, side="right") - 1, 0, n_bins - 1)
    flat = (bins + n_bins * np.arange(d)).ravel()
    finite = np.isfinite(X).ravel()
    if not finite.all():
        flat = flat[finite]
    return np.bincount(flat, minlength=d * n_bins).reshape(d, n_bins).astype(float)


class FitBounds:
    """The bounds of one fit: declared ones, or the plan of a DP estimate.

    Made by :class:`~skdpx.base.DPEstimator` before anything is spent:
    declared bounds are validated here (an error spends nothing, and bounds
    with ``lower == upper`` for every feature are refused: nothing could be
    learnt); ``None`` plans the DP histograms (:func:`histogram_bounds`) and
    warns that public bounds are better, naming the estimated features by
    ``feature_names`` (public; the estimator's encoded column names) when
    given.

    Attributes
    ----------
    declared : bool
    event : DpEvent or None
        What the estimate costs (None when declared): one Gaussian release
        calibrated alone for (``share * epsilon``, ``delta``). The estimator
        calibrates the rest of its fit with it as ``prior``, so that the
        whole fit meets its (epsilon, delta).
    n_varying : int
        The features whose bounds differ (all of them when estimated).
    share : float
        The share of epsilon the estimate takes (0 when declared): an
        estimator that splits its epsilon by shares splits ``1 - share``.
    """

    def __init__(self, bounds, n_features, *, epsilon, delta, relation, share=BOUNDS_SHARE,
                 feature_names=None):
        self.n_features = int(n_features)
        self.relation = relation
        lower = upper = None
        if bounds is not None:
            lower, upper = check_bounds(bounds, n_features, allow_missing=True)
        #: features whose bounds are estimated with DP (all when bounds is None)
        self.estimated = (np.ones(self.n_features, dtype=bool) if bounds is None
                          else np.isnan(lower))
        self.declared = not self.estimated.any()
        if self.declared:
            self.lower, self.upper = lower, upper
            if np.all(self.lower == self.upper):
                raise ValueError(
                    f"bounds={bounds!r} give lower == upper for every feature: every row would "
                    "be clipped to one point and nothing could be learnt. Declare bounds that "
                    "cover the data."
                )
            self.noise_multiplier, self.event, self.share = 0.0, None, 0.0
            return
        if not delta > 0 and not math.isinf(epsilon):
            raise ValueError("bounds=None estimates the bounds with a Gaussian mechanism, which "
                             "needs delta > 0; declare bounds, or give delta > 0.")
        names = (None if feature_names is None
                 else list(np.asarray(feature_names, dtype=object)[self.estimated]))
        warnings.warn(_warning(bounds, names, share), PrivacyLeakWarning,
                      stacklevel=_outside_stacklevel())
        self.lower, self.upper = lower, upper  # the declared part (None: nothing declared)
        self.share = float(share)
        self.noise_multiplier = (0.0 if math.isinf(epsilon)
                                 else calibrate_noise(self.share * epsilon, delta))
        self.event = gaussian_event(self.noise_multiplier)

    @property
    def n_varying(self):
        if not self.declared:
            return self.n_features
        return int(np.count_nonzero(self.lower < self.upper))

    @property
    def label(self):
        return (f"DP bounds: octave histograms of {int(self.estimated.sum())} features "
                "(Gaussian)")

    def release(self, X, *, noise, commitment):
        """(lower, upper): the declared bounds, or the DP estimate from the private X.

        ``X``: an ndarray, or a row-chunked dask array (the histogram counts
        summed in the workers, the noise added in the client).
        """
        if self.declared:
            return self.lower.copy(), self.upper.copy()
        est = self.estimated
        from ..utils._engine import is_distributed

        # rows on an engine stay there; in memory the columns are selected
        # block by block (no copy of X)
        X = X if is_distributed(X) else np.asarray(X)
        lower, upper = histogram_bounds(X, noise_multiplier=self.noise_multiplier,
                                        relation=self.relation, noise=noise,
                                        commitment=commitment,
                                        columns=None if est.all() else est)
        if est.all():
            return lower, upper
        # the declared features keep their public bounds
        full_lower, full_upper = self.lower.copy(), self.upper.copy()
        full_lower[est], full_upper[est] = lower, upper
        return full_lower, full_upper
