"""Nothing that outlives a private computation can draw or replay its noise (issue 35, item 4).

The review interrupted a fit and found, in the frames of the exception's
traceback, the live ``NoiseSource`` (its AES key) beside the noisy weights:
every draw of the fit replayed exactly. Now each owner of a source (a fit, a
DPLimeExplainer answer, a search, a privacy-utility sweep, a stand-alone
release function) closes it when it ends, normally or by an exception:
its key, counter and buffered output are wiped and it refuses to draw.

Each test below interrupts a computation after noise was drawn (a
``KeyboardInterrupt`` or a ``RuntimeError`` from a function it calls, or
from the k-th draw itself), then walks everything reachable from the
exception (traceback frames and their locals, recursively through
``gc.get_referents``; modules, classes and globals left out) and checks
that no source there can draw, that no bit generator, seed sequence,
array, bytes or int there holds (or regenerates) the key of a source of
the computation, and that every source the computation made had its
generator's state wiped. The keys are recorded when each source is made
(for AES-128 the first round key in the generator's state is the key
itself: with it, ``AESCounter(key=...)`` replays the stream).

Also: the release functions warn when no ledger records them (item 5).
"""

import gc
import sys
import types
import warnings

import numpy as np
import pytest
from randomgen import AESCounter
from sklearn.linear_model import LogisticRegression

import skdpx.explain._dplime as dplime_module
import skdpx.explain._parallel as dplime_parallel_module
import skdpx.model_selection._curve as curve_module
import skdpx.model_selection._search as search_module
import skdpx.privacy._mechanisms as mechanisms_module
import skdpx.recourse._privrecourse as recourse_module
from skdpx import DPCounterfactualGenerator, DPLimeExplainer, DPLocallyLinearClassifier, \
    PrivRecourse
from skdpx.model_selection import DPGridSearchCV, DPRandomSearchCV, privacy_utility_curve
from skdpx.privacy import (
    NoiseSource,
    PrivacyLeakWarning,
    PrivacyLedger,
    UncappedBudgetWarning,
    exponential_mechanism,
    gaussian_mechanism,
    laplace_mechanism,
    noise_source,
)

from ._reference import DPNearestCentroid
from ._helpers import uniform_problem as _problem

pytestmark = pytest.mark.filterwarnings("ignore::skdpx.privacy.PrivacyLeakWarning")

DELTA = 1e-5
_DRAWS = ("standard_normal", "uniform", "gumbel", "gaussian", "laplace")


# --------------------------------------------------------------------------
# Recording the sources a computation makes, and interrupting it
# --------------------------------------------------------------------------
class _Recorder:
    """The sources made while it is installed, their keys, and the draws made.

    The test's instrument: it keeps every source (to check that each was
    closed) and its key. The frames of its patched draws hold it, so the
    walk from an exception is told to leave it out.
    """

    def __init__(self, monkeypatch):
        self.sources = []     # every source made (kept, to check each was closed)
        self.keys = []        # bytes of each source's 128-bit AES key
        self.bitgens = []     # each source's bit generator (kept, to check it was wiped)
        self.draws = 0
        self.stop = None      # raise at this draw (1-based), or never
        self.exc = KeyboardInterrupt
        init = NoiseSource.__init__
        recorder = self

        def recording_init(source, *args, **kwargs):
            init(source, *args, **kwargs)
            bitgen = source._gen.bit_generator
            recorder.sources.append(source)
            recorder.bitgens.append(bitgen)
            recorder.keys.append(bitgen.state["s"]["seed"][:2].tobytes())

        monkeypatch.setattr(NoiseSource, "__init__", recording_init)
        for name in _DRAWS:
            monkeypatch.setattr(NoiseSource, name, self._counting(getattr(NoiseSource, name)))

    def _counting(self, draw):
        recorder = self

        def counted(source, *args, **kwargs):
            recorder.draws += 1
            if recorder.draws == recorder.stop:
                raise recorder.exc("interrupted at a noise draw")
            return draw(source, *args, **kwargs)
        return counted


def _raise_after(monkeypatch, owner, name, exc, *, call=1):
    """Make ``owner.name`` run, then raise ``exc``, at its ``call``-th call."""
    original = getattr(owner, name)
    calls = {"n": 0}

    def interrupted(*args, **kwargs):
        out = original(*args, **kwargs)
        calls["n"] += 1
        if calls["n"] == call:
            raise exc(f"interrupted after {name}")
        return out

    monkeypatch.setattr(owner, name, interrupted)


def _interrupted(run, exc):
    """Run ``run()``, which must raise ``exc``; return the exception."""
    try:
        run()
    except exc as e:
        return e
    pytest.fail(f"the computation was not interrupted by {exc.__name__}")


# --------------------------------------------------------------------------
# What is reachable from an exception
# --------------------------------------------------------------------------
def _reachable(root, exclude=()):
    """Every object reachable from ``root``: frames' locals included, their globals not.

    Modules, classes and module dictionaries are left out (they reach
    everything, the test's own recorder included); so are code objects,
    a frame's ``f_back`` (the frames of the traceback are reached through
    ``tb_next``) and the objects in ``exclude`` (the test's instruments,
    which the patched draws' frames hold).
    """
    module_dicts = {id(vars(m)) for m in list(sys.modules.values()) if hasattr(m, "__dict__")}
    seen, out, stack = {id(x) for x in exclude}, [], [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, (type, types.ModuleType, types.CodeType)) or id(obj) in module_dicts:
            continue
        out.append(obj)  # kept alive until the walk ends: ids stay unique
        if isinstance(obj, types.FrameType):
            skip = {id(obj.f_back), id(obj.f_globals), id(obj.f_builtins)}
            children = [obj.f_locals] + [c for c in gc.get_referents(obj) if id(c) not in skip]
        else:
            children = gc.get_referents(obj)
        stack.extend(children)
    return out


def _key_of_seed_sequence(seq):
    try:
        return seq.generate_state(2, np.uint64).tobytes()
    except Exception:
        return None


def _replayers(objects, keys):
    """The objects that can draw again, or that hold or regenerate a recorded key."""
    keys = set(keys)
    found = []
    for obj in objects:
        if isinstance(obj, NoiseSource):
            try:
                obj.standard_normal(1)
            except RuntimeError:
                pass
            else:
                found.append(f"a live {obj!r}")
        elif isinstance(obj, np.random.BitGenerator):
            if isinstance(obj, AESCounter) and obj.state["s"]["seed"][:2].tobytes() in keys:
                found.append("an AESCounter keyed with the noise key")
            if _key_of_seed_sequence(obj.seed_seq) in keys:
                found.append(f"a {type(obj).__name__} whose seed sequence gives the noise key")
        elif isinstance(obj, np.random.SeedSequence):
            if _key_of_seed_sequence(obj) in keys:
                found.append("a SeedSequence that gives the noise key")
        elif isinstance(obj, np.ndarray) and obj.dtype != object:
            blob = obj.tobytes()
            if any(k in blob for k in keys):
                found.append(f"an array {obj.dtype}{obj.shape} holding the noise key")
        elif isinstance(obj, (bytes, bytearray)):
            if any(k in obj for k in keys):
                found.append("bytes holding the noise key")
        elif isinstance(obj, int) and not isinstance(obj, bool) and obj >= 2**32:
            # a secure source's entropy (old code kept it): SeedSequence(entropy) gives the key
            if _key_of_seed_sequence(np.random.SeedSequence(obj)) in keys:
                found.append("an int (the OS entropy) that gives the noise key")
    return found


def _wiped(bitgen):
    s = bitgen.state["s"]
    return not (s["seed"].any() or s["counter"].any() or s["state"].any())


def _assert_nothing_replays(rec, exc=None):
    """Every source of the computation closed and wiped; nothing reachable from ``exc`` replays."""
    assert rec.keys, "the computation made no noise source"
    rec.stop = None
    if exc is not None:
        found = _replayers(_reachable(exc, exclude=(rec,)), rec.keys)
        assert not found, "reachable from the exception: " + "; ".join(sorted(set(found)))
    unclosed = [s for s in rec.sources if not getattr(s, "closed", False)]
    assert not unclosed, f"{len(unclosed)} of {len(rec.sources)} noise sources left open"
    unwiped = [b for b in rec.bitgens if not _wiped(b)]
    assert not unwiped, f"{len(unwiped)} of {len(rec.bitgens)} noise generators still keyed"
    if exc is None:
        # a computation that ended normally: nothing alive anywhere holds a generator
        # with one of its keys (a scan of every object: slow, so not after each interrupt)
        gc.collect()
        mine, keys = {id(b) for b in rec.bitgens}, set(rec.keys)
        live = [o for o in gc.get_objects() if isinstance(o, AESCounter) and id(o) not in mine
                and o.state["s"]["seed"][:2].tobytes() in keys]
        assert not live, f"{len(live)} live AESCounter(s) keyed with a noise key"


# --------------------------------------------------------------------------
# The computations
# --------------------------------------------------------------------------
_X, _Y = _problem()
_BLACK_BOX = LogisticRegression().fit(*_problem(seed=1))  # trained on other rows
_KW = dict(delta=DELTA, bounds=(-1.0, 1.0), accountant=PrivacyLedger())


def _llc(random_state=None):
    return DPLocallyLinearClassifier(epsilon=1.0, n_maps=2, epochs=2, batch_size=50,
                                     classes=[0, 1], random_state=random_state, **_KW)


def _fitted_lime():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return DPLimeExplainer(_BLACK_BOX, epsilon=1.0, epsilon_per_query=0.5, max_iter=10,
                               **_KW).fit(_X)


def _search(cls):
    # over the reference estimator (one Gaussian release per fit): fast to price and fit
    est = DPNearestCentroid(epsilon=1.0, delta=DELTA, bounds=(-1.0, 1.0))
    grid = {"bounds": [(-1.0, 1.0), (-2.0, 2.0)]}
    # at least one run (a Poisson number of runs may be 0)
    kw = dict(epsilon=2.0, delta=DELTA, accountant=PrivacyLedger(), selection="geometric")
    if cls is DPRandomSearchCV:
        return DPRandomSearchCV(est, grid, n_iter=3, **kw)
    return DPGridSearchCV(est, grid, **kw)


def _curve():
    est = DPNearestCentroid(epsilon=1.0, delta=DELTA, bounds=(-1.0, 1.0))
    return privacy_utility_curve(est, _X, _Y, epsilons=[0.5, 1.0], cv=0.3,
                                 accountant=PrivacyLedger())


#: name -> (run the computation, where to interrupt it after noise was drawn)
CASES = {
    "llc": (lambda: _llc().fit(_X, _Y),
            (DPLocallyLinearClassifier, "_set_maps")),
    "dpc": (lambda: DPCounterfactualGenerator(_BLACK_BOX, epsilon=1.0, latent_dim=2,
                                              max_iter=20, **_KW).fit(_X, _Y),
            (DPCounterfactualGenerator, "_noisy_table")),
    "recourse": (lambda: PrivRecourse(epsilon=1.0, n_clusters=4, max_iter=3, **_KW).fit(_X, _Y),
                 (recourse_module, "recourse_graph")),
    "lime_explain": (lambda lime: lime.explain(_X[:2]),
                     (dplime_module, "dpgd_explain")),
    "random_search": (lambda: _search(DPRandomSearchCV).fit(_X, _Y),
                      (search_module, "_fit_run")),
    "grid_search": (lambda: _search(DPGridSearchCV).fit(_X, _Y),
                    (search_module, "_fit_run")),
    "curve": (_curve, (curve_module, "_fit_point")),
    "gaussian_mechanism": (lambda: gaussian_mechanism(np.zeros(4), epsilon=1.0, delta=DELTA,
                                                      sensitivity=1.0, ledger=PrivacyLedger()),
                           (mechanisms_module, "gaussian_release")),
    "laplace_mechanism": (lambda: laplace_mechanism(np.zeros(4), epsilon=1.0, sensitivity=1.0,
                                                    ledger=PrivacyLedger()),
                          (mechanisms_module, "laplace_release")),
    "exponential_mechanism": (lambda: exponential_mechanism(
                                  np.zeros((2, 3)), epsilon=1.0, sensitivity=1.0,
                                  ledger=PrivacyLedger()),
                              (mechanisms_module, "exponential_release")),
}
#: at which draw the "draw" interrupt comes (each computation draws at least this many):
#: mid-loop for the DP-SGD and DP gradient descent fits; for a search (split, number of
#: runs, candidates, then each run's fit) and a sweep (split, then each point's fit),
#: inside the first candidate's own fit
_AT_DRAW = {"llc": 7, "dpc": 2, "recourse": 5, "lime_explain": 4, "random_search": 4,
            "grid_search": 4, "curve": 2, "gaussian_mechanism": 1, "laplace_mechanism": 1,
            "exponential_mechanism": 1}


def _runner(name):
    run, _ = CASES[name]
    if name == "lime_explain":
        lime = _fitted_lime()  # made before the recorder: its fit is checked as "llc" is
        return lambda: run(lime)
    return run


@pytest.mark.parametrize("exc", [KeyboardInterrupt, RuntimeError])
@pytest.mark.parametrize("name", list(CASES))
def test_an_interrupted_computation_leaves_nothing_that_replays_its_noise(name, exc,
                                                                          monkeypatch):
    """Interrupted after noise was drawn, by a function it calls: nothing reachable replays."""
    run = _runner(name)
    rec = _Recorder(monkeypatch)
    owner, attr = CASES[name][1]
    _raise_after(monkeypatch, owner, attr, exc)
    e = _interrupted(run, exc)
    assert rec.draws >= 1, "no noise was drawn before the interrupt"
    _assert_nothing_replays(rec, e)


@pytest.mark.parametrize("name", list(CASES))
def test_an_interrupt_at_a_noise_draw_leaves_nothing_that_replays(name, monkeypatch):
    """Interrupted at the k-th draw itself (mid-loop, or inside a search's candidate fit)."""
    run = _runner(name)
    rec = _Recorder(monkeypatch)
    rec.stop = _AT_DRAW[name]
    e = _interrupted(run, KeyboardInterrupt)
    assert rec.draws == _AT_DRAW[name]
    _assert_nothing_replays(rec, e)


@pytest.mark.parametrize("name", list(CASES))
def test_a_computation_that_ends_normally_closes_its_sources(name, monkeypatch):
    run = _runner(name)
    rec = _Recorder(monkeypatch)
    run()
    assert rec.draws >= 1
    _assert_nothing_replays(rec)


def test_a_seeded_fit_closes_its_source_too(monkeypatch):
    # the seed is public anyway (PrivacyLeakWarning), but the behaviour is uniform
    rec = _Recorder(monkeypatch)
    _raise_after(monkeypatch, DPLocallyLinearClassifier, "_set_maps", RuntimeError)
    e = _interrupted(lambda: _llc(random_state=0).fit(_X, _Y), RuntimeError)
    assert rec.draws >= 1
    _assert_nothing_replays(rec, e)


def test_a_parallel_explainer_piece_closes_its_source(monkeypatch):
    """DPLimeExplainer's parallel pieces open a source each (a stream key), and close it."""
    from joblib import parallel_config

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lime = DPLimeExplainer(_BLACK_BOX, epsilon=1.0, epsilon_per_query=0.25, max_iter=10,
                               n_jobs=2, **_KW).fit(_X)
    rec = _Recorder(monkeypatch)
    _raise_after(monkeypatch, dplime_parallel_module, "dpgd_explain", RuntimeError, call=2)
    with parallel_config(backend="threading"):  # the pieces' sources in this process
        e = _interrupted(lambda: lime.explain(_X[:4]), RuntimeError)
    assert len(rec.keys) == 3  # the answer's source and the two pieces'
    _assert_nothing_replays(rec, e)


# --------------------------------------------------------------------------
# The closed source itself
# --------------------------------------------------------------------------
@pytest.mark.parametrize("random_state", [None, 3])
def test_a_closed_source_refuses_to_draw_and_its_state_is_wiped(random_state):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        with noise_source(random_state) as noise:
            bitgen = noise._gen.bit_generator
            key = bitgen.state["s"]["seed"][:2].copy()
            drawn = noise.standard_normal(5)
            child = noise.spawn(1)[0]
        # the key replays the stream while the source is open ...
        assert np.array_equal(np.random.Generator(AESCounter(key=key)).standard_normal(5), drawn)
    assert noise.closed and child.closed
    for draw in (lambda: noise.standard_normal(1), lambda: noise.uniform(1),
                 lambda: noise.gumbel(1), lambda: noise.gaussian(0.0, 1.0, sensitivity=1.0),
                 lambda: noise.laplace(0.0, 1.0, sensitivity=1.0), lambda: noise.spawn(1),
                 lambda: noise.stream_keys(1), lambda: noise.auxiliary(),
                 lambda: child.standard_normal(1)):
        with pytest.raises(RuntimeError, match="closed"):
            draw()
    # ... and after: the generator's state (key schedule, counter, buffer) is zero, and the
    # generator, if anything still held it, gives the all-zero key's stream, not the noise
    assert _wiped(bitgen)
    assert not np.array_equal(np.random.Generator(bitgen).standard_normal(5), drawn)
    assert noise._seed_seq is None
    noise.close()  # idempotent
    with pytest.raises(RuntimeError, match="closed"):
        with noise:
            pass


def test_the_key_is_overwritten_in_the_generators_own_memory():
    """randomgen's state setter writes into the C structure that held the round keys."""
    import ctypes

    source = noise_source()
    bitgen = source._gen.bit_generator
    address = bitgen.ctypes.state_address
    round_keys = bitgen.state["s"]["seed"].tobytes()
    size = 64 + len(round_keys)  # randomgen 2.x: a 64-byte counter block, then the round keys
    assert round_keys in ctypes.string_at(address, size)
    source.close()
    assert bitgen.ctypes.state_address == address
    assert round_keys[:16] not in ctypes.string_at(address, size)


def test_a_secure_source_keeps_nothing_its_key_came_from():
    source = noise_source()
    assert source._seed_seq is None
    found = _replayers(_reachable(source), [source._gen.bit_generator.state["s"]["seed"][:2]
                                            .tobytes()])
    # only its own generator holds the key (and the source, which can draw: it is open)
    assert sorted(set(found)) == ["a live NoiseSource(secure=True)",
                                  "an AESCounter keyed with the noise key"]
    source.close()


# --------------------------------------------------------------------------
# Item 5: a release with no ledger warns, as a fit with no accountant does
# --------------------------------------------------------------------------
_RELEASES = {
    "gaussian": lambda **kw: gaussian_mechanism(np.zeros(2), epsilon=1.0, delta=DELTA,
                                                sensitivity=1.0, **kw),
    "laplace": lambda **kw: laplace_mechanism(np.zeros(2), epsilon=1.0, sensitivity=1.0, **kw),
    "exponential": lambda **kw: exponential_mechanism([0.0, 1.0], epsilon=1.0,
                                                      sensitivity=1.0, **kw),
}


@pytest.mark.parametrize("name", list(_RELEASES))
def test_a_release_without_a_ledger_warns_that_nothing_caps_it(name):
    with pytest.warns(UncappedBudgetWarning, match="ledger=None.*nothing caps the total") as seen:
        _RELEASES[name]()
    # at the caller's line, as an estimator's warning is
    assert [w.filename for w in seen if w.category is UncappedBudgetWarning] == [__file__]
    with warnings.catch_warnings():
        warnings.simplefilter("error", UncappedBudgetWarning)
        _RELEASES[name](ledger=PrivacyLedger())  # recorded: no warning


def test_a_zero_sensitivity_release_is_refused_before_it_warns():
    # issue 36: sensitivity=0 is refused (it released the exact value, unrecorded)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UncappedBudgetWarning)
        with pytest.raises(ValueError, match="sensitivity"):
            gaussian_mechanism(3.0, epsilon=1.0, delta=DELTA, sensitivity=0.0)
        with pytest.raises(ValueError, match="sensitivity"):
            laplace_mechanism(3.0, epsilon=1.0, sensitivity=0.0)


def test_the_release_and_the_fit_share_one_message():
    from skdpx.privacy import _budget

    with pytest.warns(UncappedBudgetWarning) as fit_seen:
        _budget.resolve_ledger(None)
    with pytest.warns(UncappedBudgetWarning) as release_seen:
        laplace_mechanism(0.0, epsilon=1.0, sensitivity=1.0)
    fit_text, release_text = str(fit_seen[0].message), str(release_seen[0].message)
    assert fit_text.startswith("accountant=None") and release_text.startswith("ledger=None")
    tail = "nothing caps the total spent on these data"
    assert tail in fit_text and tail in release_text
