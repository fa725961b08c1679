"""Where privacy randomness comes from: one source per private computation.

Every draw that a differentially private release depends on (Gaussian and
Laplace noise, Poisson subsampling, exponential-mechanism choices) is made by
a :class:`NoiseSource`, and only the privacy core's release functions draw
from it. An estimator makes one with :func:`noise_source` at the start of a
private computation, hands it to the release functions, and closes it when
the computation ends, normally or by an exception (``with noise_source(...)
as noise:``): closing wipes its AES key, counter and buffered output, so the
source can neither draw again nor replay a past draw, whatever still holds
it (a traceback's frames, a debugger). It is never an attribute of a fitted
estimator, and it refuses to be pickled, so nothing that could replay the
noise outlives the computation.

``random_state=None`` (the default everywhere) draws from randomgen's
``AESCounter``, AES-128 in counter mode, keyed from 128 bits of the operating
system's entropy: a cryptographically secure generator, as fast as numpy's
PCG64 where the CPU has AES-NI. Low-dimensional releases go further, through
OpenDP's exact samplers (:mod:`._sampling`), which the floating-point attack
of Mironov (2012) cannot read.

An int, ``RandomState`` or ``Generator`` makes the noise reproducible, for
tests and documentation, and emits a
:class:`~skdpx.exceptions.PrivacyLeakWarning`: anyone who knows the seed can
recompute the noise and remove it. An int seed is used whole (not cut to 32
bits), and tagged with its length: different seeds give different streams.
"""

from numbers import Integral
import warnings

import numpy as np
from randomgen import AESCounter

from ..utils._stacklevel import _outside_stacklevel
from ._exceptions import PrivacyLeakWarning
from ._sampling import exact_gaussian, exact_laplace

__all__ = ["NoiseSource", "NoiseStreamKey", "RowUniforms", "noise_source"]

_SEED_WARNING = (
    "random_state={} makes the privacy noise reproducible: anyone who knows the seed can "
    "recompute the noise and remove it, so the release is not differentially private "
    "against them. Use random_state=None (the default) for a release to publish."
)


_CLOSED = (
    "this NoiseSource is closed: the computation that owned it has ended and its key was "
    "wiped, so it can neither draw again nor replay a past draw. Make a new one with "
    "skdpx.privacy.noise_source()."
)


def _wipe(bit_generator):
    """Overwrite an ``AESCounter``'s key schedule, counter and buffered output with zeros.

    randomgen's ``state`` setter copies the given values into the generator's
    own C structure (the same memory that held the round keys), so the key
    is gone from it; the copies the getter returns are zeroed here too.
    Afterwards the generator, if anything still holds it, gives the stream
    of the all-zero key: public, and unrelated to the noise it drew.
    """
    state = bit_generator.state
    s = state["s"]
    for field in ("seed", "state", "counter"):
        s[field][...] = 0
    s["offset"] = s["state"].size  # an empty buffer
    state["has_uint32"] = state["uinteger"] = 0
    bit_generator.state = state


class NoiseSource:
    """The randomness of one private computation (never stored, never pickled).

    Use :func:`noise_source` to make one, as a context manager: the source
    is closed when the block ends, normally or by an exception::

        with noise_source(self.random_state) as noise:
            ...  # every release of the computation draws from ``noise``

    Closing (:meth:`close`) wipes the AES key, the counter and the buffered
    output of the generator, drops the seed sequence of a seeded source and
    closes the sources :meth:`spawn` made: afterwards every draw raises
    ``RuntimeError``, and nothing the source held can replay a past draw.
    A source that is garbage collected unclosed has its key wiped first.

    A secure source keeps nothing its key came from: the key is derived from
    a fresh ``SeedSequence`` of 128 bits of OS entropy, handed to the
    generator, and the sequence and the caller's copy of the key are
    dropped (the copy zeroed). A seeded source keeps its seed sequence
    (public, as the seed is) to derive :meth:`spawn`, :meth:`stream_keys`
    and :meth:`auxiliary` reproducibly, until it is closed.

    Parameters
    ----------
    seed_seq : numpy.random.SeedSequence or None
        What the key is derived from (``generate_state(2, uint64)``, as
        randomgen's ``AESCounter(seed_seq)`` does: the same stream). None:
        a fresh one from the operating system (``secure`` must be True).
    secure : bool
        True when keyed by the operating system (``random_state=None``).

    Attributes
    ----------
    secure : bool
        True when seeded by the operating system (``random_state=None``).
    closed : bool
        True once :meth:`close` was called (or the owning block ended).
    """

    __slots__ = ("_gen", "_seed_seq", "_children", "secure")

    def __init__(self, seed_seq=None, *, secure):
        secure = bool(secure)
        if seed_seq is None:
            if not secure:
                raise ValueError("a seeded NoiseSource needs its SeedSequence.")
            seed_seq = np.random.SeedSequence()  # 128 bits from the operating system
        self._gen = None  # closed until the generator exists (a failure below leaves it so)
        self._seed_seq = None
        self._children = []
        self.secure = secure
        key = seed_seq.generate_state(2, np.uint64)
        try:
            self._gen = np.random.Generator(AESCounter(key=key))
        finally:
            key[...] = 0  # randomgen copied it into its own state
        # a secure source's spawn, stream_keys and auxiliary use fresh OS entropy:
        # what its key came from is not kept
        self._seed_seq = None if secure else seed_seq

    # ------------------------------------------------------------ lifetime
    @property
    def closed(self):
        """Whether the source was closed (it can no longer draw)."""
        return self._gen is None

    def close(self):
        """Wipe the key, counter and buffers; later draws raise ``RuntimeError``.

        Idempotent. Closes the sources made by :meth:`spawn` too. The
        generators of :meth:`auxiliary` are not privacy noise (and, for a
        secure source, not derived from its key): they are left alone.
        """
        gen, self._gen = self._gen, None
        self._seed_seq = None
        children, self._children = self._children, []
        for child in children:
            child.close()
        if gen is not None:
            _wipe(gen.bit_generator)

    def __enter__(self):
        self._live()
        return self

    def __exit__(self, *exc_info):
        self.close()
        return False

    def __del__(self):
        # collected unclosed: wipe the key before its memory is freed (the
        # children spawned live on: whoever holds them closes them)
        try:
            gen, self._gen = self._gen, None
            if gen is not None:
                _wipe(gen.bit_generator)
        except Exception:  # at interpreter shutdown, numpy may be gone already
            pass

    def _live(self):
        gen = self._gen
        if gen is None:
            raise RuntimeError(_CLOSED)
        return gen

    # ------------------------------------------------------------ draws
    def standard_normal(self, shape):
        """float64 standard normal draws (high-dimensional noise, e.g. DP-SGD)."""
        return self._live().standard_normal(shape)

    def uniform(self, shape):
        """float64 draws in [0, 1) (Poisson subsampling)."""
        return self._live().random(shape)

    def binomial(self, n, p):
        """One Binomial(``n``, ``p``) draw (the size of a sparse Poisson sample)."""
        return int(self._live().binomial(n, p))

    def subset(self, n, k):
        """``k`` distinct indices of ``range(n)``, uniformly at random, in increasing order.

        numpy's ``Generator.choice`` without replacement: Floyd's algorithm
        (``k`` unbiased bounded integers) when ``k`` is at most ``n / 50``
        or ``n`` at most 10,000, else a partial shuffle of ``range(n)``.
        """
        idx = self._live().choice(n, size=k, replace=False, shuffle=False)
        idx.sort()
        return idx

    def gumbel(self, shape):
        """Standard Gumbel draws (exponential mechanism, Gumbel-max)."""
        return self._live().gumbel(size=shape)

    def gaussian(self, value, sigma, *, sensitivity):
        """``value`` plus Gaussian noise of std ``sigma``: floating-point safe when secure."""
        gen = self._live()
        value = np.asarray(value, dtype=float)
        if self.secure:
            return exact_gaussian(value, sigma, sensitivity=sensitivity)
        return value + sigma * gen.standard_normal(value.shape)

    def laplace(self, value, scale, *, sensitivity):
        """``value`` plus Laplace noise of scale ``scale``: floating-point safe when secure."""
        gen = self._live()
        value = np.asarray(value, dtype=float)
        if self.secure:
            return exact_laplace(value, scale, sensitivity=sensitivity)
        return value + gen.laplace(0.0, scale, size=value.shape)

    # --------------------------------------------------- derived sources
    def spawn(self, n):
        """``n`` independent sources (one per worker: no two share a state).

        A secure source's children are keyed with fresh OS entropy each; a
        seeded source's are derived from its seed (reproducible). Closing
        this source closes them.
        """
        self._live()
        if self.secure:
            children = [NoiseSource(None, secure=True) for _ in range(int(n))]
        else:
            children = [NoiseSource(s, secure=False) for s in self._seed_seq.spawn(int(n))]
        self._children.extend(children)
        return children

    def stream_keys(self, n):
        """``n`` keys to open independent sources in other processes (joblib workers).

        A source never leaves its process; a :class:`NoiseStreamKey` does.
        A secure source's keys carry nothing: each is opened, in the worker,
        into a source keyed with that worker's own fresh OS entropy, so no
        secret is sent or kept anywhere. A seeded source's keys carry its
        spawned children (``SeedSequence.spawn``): reproducible, and only as
        secret as the seed itself (which already warned). The worker closes
        the source it opens (``with key.open() as noise:``).
        """
        self._live()
        if self.secure:
            return [NoiseStreamKey(None) for _ in range(int(n))]
        return [NoiseStreamKey(s) for s in self._seed_seq.spawn(int(n))]

    def auxiliary(self):
        """A numpy Generator for randomness that is not privacy noise.

        Initial weights, random projections, sampling from already released
        DP values: anyone may know these draws without harm, and they are
        often published (``projection_``). So for a secure source the
        generator is keyed with its own fresh OS entropy, independent of the
        noise key: numpy's SeedSequence mixing can be run backwards, and
        PCG64's state can be recovered from its outputs, so a generator
        derived from the noise key would give the key away. Reproducible
        (derived from the seed) when the source is seeded. Closing the
        source leaves it alone (it draws nothing private).
        """
        self._live()
        seed_seq = np.random.SeedSequence() if self.secure else self._seed_seq.spawn(1)[0]
        return np.random.Generator(np.random.PCG64(seed_seq))

    def row_uniforms(self, shape):
        """Uniforms on [0, 1) for each row, drawn where the row is read (not privacy noise).

        A :class:`RowUniforms` keyed by one :meth:`auxiliary` stream:
        post-processing randomness (e.g. values drawn from released DP
        marginals), ``shape`` numbers per row, that a block of rows draws
        from its rows' numbers alone, in this process or in a Dask worker or
        Spark executor, and that any split of the rows into blocks gives
        alike.
        """
        return RowUniforms(self.auxiliary(), shape)

    # --------------------------------------------------------- never kept
    def __reduce__(self):
        raise TypeError(
            "a NoiseSource holds the state of the privacy noise generator and is never "
            "pickled: keeping it would let anyone replay the noise."
        )

    def __repr__(self):
        return f"NoiseSource(secure={self.secure}{', closed' if self.closed else ''})"


class NoiseStreamKey:
    """How a parallel piece opens its own :class:`NoiseSource` where it runs (picklable).

    Made by :meth:`NoiseSource.stream_keys` in the process that committed
    the spend, sent with the piece's task (loky, Dask) and opened there by
    privacy-core code (:meth:`open`). A key from a secure source holds no
    secret: :meth:`open` keys the source with the worker's own OS entropy
    (two openings give independent sources). A key from a seeded source
    holds the piece's spawned ``SeedSequence``: the same seed, the same
    piece noise.
    """

    __slots__ = ("_seed_seq",)

    def __init__(self, seed_seq):
        self._seed_seq = seed_seq

    @property
    def secure(self):
        """True when :meth:`open` keys the source from the operating system."""
        return self._seed_seq is None

    def open(self):
        """The piece's NoiseSource (never stored, never pickled; close it when done)."""
        if self._seed_seq is None:
            return NoiseSource(None, secure=True)
        return NoiseSource(self._seed_seq, secure=False)

    def __repr__(self):
        return f"NoiseStreamKey(secure={self.secure})"


class RowUniforms:
    """Uniforms on [0, 1) indexed by row: the same draws wherever a row is read (picklable).

    Made by :meth:`NoiseSource.row_uniforms` from an auxiliary generator
    (PCG64) in the process that committed the spend; sent with the tasks.
    Row ``i``'s draws (shape ``shape``, ``D`` numbers) are the numbers ``i D``
    to ``(i + 1) D - 1`` of that generator's stream: what its ``random((n,)
    + shape)`` gives row ``i`` of ``n``. A block of rows draws its rows' by
    advancing a copy of the stream to them (``PCG64.advance``), so blocks
    read in any order, in any process, give every row the same numbers as
    one draw for all the rows would, and distinct rows get disjoint parts
    of the stream: independent uniforms.

    Not the noise of a release: the stream is an auxiliary one (for a
    secure source, keyed by its own OS entropy, independent of the noise
    key). But it is secret as the noise is: row ``i``'s draws depend on how
    many rows come before it, so one row added shifts the draws of every
    later row, and the guarantee of what is released from them holds for
    draws the adversary does not know. The state is therefore never kept:
    it goes with the tasks of one fit (as the black box does) and is
    dropped with them; it is never an attribute, pickled with an estimator,
    or shown. The row numbers (:func:`~skdpx.utils._engine.row_numbers`)
    say where a row is, never what it holds.
    """

    __slots__ = ("_state", "shape")

    def __init__(self, generator, shape):
        bit_generator = generator.bit_generator
        if not isinstance(bit_generator, np.random.PCG64):
            raise TypeError("RowUniforms needs an auxiliary generator (PCG64).")
        self._state = bit_generator.state
        self.shape = tuple(int(s) for s in shape)

    def __getstate__(self):
        return {"_state": self._state, "shape": self.shape}

    def __setstate__(self, state):
        self._state, self.shape = state["_state"], state["shape"]

    def of_rows(self, numbers):
        """The draws of the rows ``numbers`` (non-negative ints, in runs of consecutive
        numbers, as every engine gives a block's): shape ``(len(numbers),) + shape``."""
        numbers = np.asarray(numbers, dtype=np.int64).reshape(-1)
        per_row = int(np.prod(self.shape, dtype=np.int64))
        out = np.empty((numbers.size,) + self.shape)
        if numbers.size == 0:
            return out
        starts = np.concatenate([[0], np.flatnonzero(np.diff(numbers) != 1) + 1])
        ends = np.append(starts[1:], numbers.size)
        for start, end in zip(starts, ends):  # a loop over runs of rows, not over rows
            stream = np.random.PCG64(0)
            stream.state = self._state
            stream.advance(int(numbers[start]) * per_row)
            out[start:end] = np.random.Generator(stream).random((end - start,) + self.shape)
        return out

    def __repr__(self):
        return f"RowUniforms(shape={self.shape})"


#: Domain tags: the kind of seed, and where the stream starts. With the number
#: of the seed's 32-bit words, they make (seed, stream) -> entropy one-to-one
#: (an int seed 7 + X 2**128 must not be seed 7's stream X).
_INT, _RANDOM_STATE, _GENERATOR, _STREAM = 0x534B0001, 0x534B0002, 0x534B0003, 0x534B0004


def _words(value):
    """The 32-bit words of a non-negative int, low first (at least one)."""
    words = []
    while True:
        words.append(value & 0xFFFFFFFF)
        value >>= 32
        if not value:
            return words


def validate_random_state(random_state):
    """Refuse a ``random_state`` that :func:`noise_source` would refuse, drawing nothing
    from it (a RandomState or Generator passed is not advanced): a release checks it
    before its spend is committed."""
    if random_state is None or isinstance(random_state, (np.random.RandomState,
                                                         np.random.Generator)):
        return
    if isinstance(random_state, (Integral, np.integer)) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError(f"an integer random_state must be >= 0, got {random_state}.")
        return
    raise ValueError(
        "random_state must be None, a non-negative int, a numpy RandomState or a numpy "
        f"Generator, got {type(random_state).__name__}."
    )


def _seed_sequence(random_state):
    validate_random_state(random_state)
    if isinstance(random_state, np.random.RandomState):
        # advances the caller's RandomState, as scikit-learn's estimators do
        words = random_state.randint(0, 2**32, size=8, dtype=np.uint64).tolist()
        return np.random.SeedSequence([_RANDOM_STATE, len(words), *words])
    if isinstance(random_state, np.random.Generator):
        words = random_state.integers(0, 2**32, size=8, dtype=np.uint64).tolist()
        return np.random.SeedSequence([_GENERATOR, len(words), *words])
    words = _words(int(random_state))  # a non-negative int (validated above)
    return np.random.SeedSequence([_INT, len(words), *words])


def noise_source(random_state=None, *, stream=None):
    """The :class:`NoiseSource` for an estimator's ``random_state``.

    Parameters
    ----------
    random_state : None, int, numpy.random.RandomState or numpy.random.Generator
        None: a cryptographically secure source keyed by the operating
        system. Anything else: a reproducible source and a
        :class:`~skdpx.exceptions.PrivacyLeakWarning`.
    stream : tuple of int, optional
        Tells apart the computations of one seeded estimator (e.g. the
        number of queries answered before): an int seed with the same
        ``stream`` gives the same noise, another ``stream`` independent
        noise, with no state kept between them.

    Returns
    -------
    NoiseSource
        A context manager: use it in a ``with`` block, which closes it (its
        key wiped) when the computation ends, however it ends.

    Examples
    --------
    >>> import warnings
    >>> from skdpx.privacy import noise_source
    >>> with noise_source() as noise:
    ...     noise.secure, noise.standard_normal(3).shape
    (True, (3,))
    >>> noise.closed
    True
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     with noise_source(7) as a, noise_source(7) as b:
    ...         same = bool((a.standard_normal(2) == b.standard_normal(2)).all())
    >>> same
    True
    """
    if random_state is None:
        # keyed with 128 bits from the operating system; a stream changes nothing
        return NoiseSource(None, secure=True)
    # an int by value; a RandomState or Generator by type (its repr holds an
    # address, and a message per object would defeat the warnings' filters)
    shown = random_state if isinstance(random_state, Integral) else type(random_state).__name__
    warnings.warn(_SEED_WARNING.format(shown), PrivacyLeakWarning,
                  stacklevel=_outside_stacklevel())
    seed_seq = _seed_sequence(random_state)
    if stream is not None:
        # tagged: a stream is never the spawn of another source
        seed_seq = np.random.SeedSequence(seed_seq.entropy,
                                          spawn_key=(_STREAM, *(int(s) for s in stream)))
    return NoiseSource(seed_seq, secure=False)
