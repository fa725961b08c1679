"""The privacy core as the only door (issue 17).

Each finding of the review is a test here, or in the estimator's own file:

* noise drawn outside ``skdpx/privacy`` and estimators importing diffprivlib
  or dp_accounting: ``test_no_noise_and_no_accounting_outside_the_core``;
* a pickle that gives the noise away: ``test_fitted_pickles_hold_no_generator``
  and ``test_noise_source_is_never_pickled``;
* seeds: ``test_int_seeds_are_not_cut_to_32_bits``,
  ``test_seeds_warn_and_none_is_secure``;
* exceptions that refund the spend after the release escaped:
  ``test_interrupted_fit_keeps_the_whole_planned_spend``;
* one ledger, two neighbouring relations:
  ``test_four_estimators_on_one_ledger`` and ``test_mixed_relations_are_refused``.
"""

import ast
import functools
from pathlib import Path
import pickle
import re
import warnings

import dp_accounting
from dp_accounting.pld import pld_privacy_accountant
import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

import skdpx
from skdpx import (
    DPCounterfactualGenerator,
    DPLimeExplainer,
    DPLocallyLinearClassifier,
    PrivRecourse,
)
from skdpx.privacy import (
    FixedLossDpEvent,
    NoiseSource,
    PrivacyLeakWarning,
    PrivacyLedger,
    gaussian_mechanism,
    noise_source,
)
from skdpx.privacy import _random

from ._reference import DPNearestCentroid
from ._helpers import uniform_problem

PACKAGE = Path(skdpx.__file__).parent
DELTA = 1e-5

# --------------------------------------------------------------------------
# 1. One source of privacy randomness
# --------------------------------------------------------------------------
#: the methods that draw random numbers (numpy's Generator and RandomState)
_DRAW_METHODS = frozenset({
    "normal", "standard_normal", "laplace", "gumbel", "exponential", "random_sample", "rand",
    "randn", "uniform", "integers", "randint", "choice", "permutation", "shuffle", "binomial",
    "poisson", "random", "random_base2"})


def _unscrambled_engine(node):
    """Whether ``node`` is a call that makes a quasi-Monte Carlo engine with
    ``scramble=False`` (``qmc.Sobol(d, scramble=False)``): its points are a fixed,
    public sequence, not a draw (scrambled, the default, it is one)."""
    return (isinstance(node, ast.Call) and any(
        k.arg == "scramble" and isinstance(k.value, ast.Constant) and k.value.value is False
        for k in node.keywords))


def _from_auxiliary(node):
    """Whether ``node`` is a call of ``<something>.auxiliary()``: the privacy core's
    generator for draws that are not privacy noise (NoiseSource.auxiliary())."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "auxiliary")


def _draws_not_from_the_core(tree):
    """(line, text) of every draw whose generator does not provably come from
    ``NoiseSource.auxiliary()``: its receiver must be that call itself, or a
    local name every binding of which (in the enclosing function) is that call.
    Where the generator comes from decides, not what the variable is called."""
    found = []
    scopes = [tree] + [n for n in ast.walk(tree)
                       if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))]
    for scope in scopes:
        bindings = {}  # name -> whether every binding in this scope is .auxiliary()
        inner = [n for n in ast.walk(scope) if n is not scope]
        own = set()
        for n in inner:  # nodes of nested functions belong to those
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                own |= {id(m) for m in ast.walk(n)}
        nodes = [n for n in inner if id(n) not in own]
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            for arg in ast.walk(scope.args):
                if isinstance(arg, ast.arg):
                    bindings[arg.arg] = False  # a parameter: from anywhere
        for n in nodes:
            if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                for t in targets:
                    for name in ast.walk(t):
                        if isinstance(name, ast.Name):
                            ok = isinstance(t, ast.Name) and _from_auxiliary(n.value)
                            bindings[name.id] = bindings.get(name.id, True) and ok
            elif isinstance(n, (ast.For, ast.With, ast.comprehension)):
                for t in ([n.target] if not isinstance(n, ast.With)
                          else [i.optional_vars for i in n.items if i.optional_vars]):
                    for name in ast.walk(t):
                        if isinstance(name, ast.Name):
                            bindings[name.id] = False
        for n in nodes:
            if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                    and n.func.attr in _DRAW_METHODS):
                continue
            receiver = n.func.value
            if _from_auxiliary(receiver) or _unscrambled_engine(receiver):
                continue
            if isinstance(receiver, ast.Name) and bindings.get(receiver.id, False):
                continue
            found.append((n.lineno, ast.unparse(n)[:60]))
    return found
_GENERATOR = re.compile(r"default_rng|RandomState\s*\(|np\.random\.(?!Generator\b)\w+\(|"
                        r"\bsecrets\b|\brandom\.(?:random|gauss)\(|\bMT19937\b|\bPCG64\b")
_FORBIDDEN_IMPORTS = ("diffprivlib", "dp_accounting", "randomgen", "opendp")


def _code_lines(path):
    """(line number, text) of the code in ``path``: docstrings and comments left out."""
    source = path.read_text()
    tree = ast.parse(source)
    doc_lines = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(getattr(node, "value", None), ast.Constant) \
                and isinstance(node.value.value, str):
            doc_lines.update(range(node.lineno, node.end_lineno + 1))
    for i, line in enumerate(source.splitlines(), 1):
        code = line.split("#", 1)[0]
        if i not in doc_lines and code.strip():
            yield i, code


#: packages whose randomness is never privacy noise: skdpx.attacks plays the
#: adversary (its halvings and shadow models are the evaluation's own draws) and
#: no estimator imports it (test_no_estimator_imports_the_attacks)
_EVALUATION_ONLY = ("privacy", "attacks")


def _estimator_modules():
    return [p for p in PACKAGE.rglob("*.py")
            if not set(_EVALUATION_ONLY) & set(p.relative_to(PACKAGE).parts)]


def test_no_estimator_imports_the_attacks():
    """The attacks are evaluation only: nothing else in skdpx may import them."""
    found = []
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] == "attacks":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                module = ("." * node.level) + (node.module or "")
                names = [module] + [f"{module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            if any("attacks" in name.split(".") for name in names):
                found.append(f"{rel}:{node.lineno}")
    assert not found, "skdpx.attacks imported by: " + ", ".join(found)


def test_no_noise_and_no_accounting_outside_the_core():
    found = []
    for path in _estimator_modules():
        rel = path.relative_to(PACKAGE)
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            for name in names:
                if name.split(".")[0] in _FORBIDDEN_IMPORTS:
                    found.append(f"{rel}:{node.lineno}: imports {name}")
        # a draw from the auxiliary generator (NoiseSource.auxiliary(): initial
        # weights, projections, post-processing) is allowed, whatever its name
        found += [f"{rel}:{i}: draws {text}" for i, text in _draws_not_from_the_core(tree)]
        for i, code in _code_lines(path):
            if _GENERATOR.search(code):
                found.append(f"{rel}:{i}: makes a generator: {code.strip()}")
            if re.search(r"\bCommitment\s*\(", code):
                found.append(f"{rel}:{i}: makes a Commitment without committing a spend")
    assert not found, "privacy randomness outside skdpx/privacy:\n" + "\n".join(found)


def test_the_scan_catches_a_hand_drawn_noise(tmp_path, monkeypatch):
    # the scan has power: the old clustering code (rng.normal beside a reserve) is caught
    bad = tmp_path / "skdpx" / "recourse"
    bad.mkdir(parents=True)
    (bad / "_bad.py").write_text(
        "import dp_accounting\n"
        "def _noisy(value, rng):\n"
        "    return value + rng.normal(0.0, 1.0, size=value.shape)\n"
        "def _named_aux(value, noise):\n"
        "    aux = noise.secret_generator()\n"  # named like the auxiliary one, is not
        "    return value + aux.laplace(0.0, 1.0)\n"
        "def _auxiliary(noise):\n"
        "    gen = noise.auxiliary()\n"  # the auxiliary generator: allowed by any name
        "    return gen.uniform(size=3) + noise.auxiliary().normal()\n"
        "def _points(qmc):\n"
        "    fixed = qmc.Sobol(2, scramble=False).random(4)\n"  # a public sequence
        "    return fixed + qmc.Sobol(2).random_base2(2)\n"  # scrambled: a draw
    )
    monkeypatch.setattr(skdpx, "__file__", str(tmp_path / "skdpx" / "__init__.py"))
    global PACKAGE
    saved, PACKAGE = PACKAGE, tmp_path / "skdpx"
    try:
        with pytest.raises(AssertionError, match="rng.normal") as info:
            test_no_noise_and_no_accounting_outside_the_core()
        message = str(info.value)
        assert "imports dp_accounting" in message and "aux.laplace" in message
        assert "gen.uniform" not in message and "auxiliary().normal" not in message
        assert "qmc.Sobol(2).random_base2" in message and "scramble=False" not in message
    finally:
        PACKAGE = saved


# --------------------------------------------------------------------------
# 2. Secure by default; seeds are reproducible, whole, and warned about
# --------------------------------------------------------------------------
def test_seeds_warn_and_none_is_secure():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        source = noise_source(None)  # no warning
    assert source.secure
    for seed in (0, np.random.RandomState(0), np.random.default_rng(0)):
        with pytest.warns(PrivacyLeakWarning, match="anyone who knows the seed"):
            assert not noise_source(seed).secure
    with pytest.raises(ValueError):
        noise_source(-1)
    with pytest.raises(ValueError):
        noise_source("0")


def _noise(seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        return gaussian_mechanism(np.zeros(8), epsilon=1.0, delta=DELTA, sensitivity=1.0,
                                  random_state=seed)


def test_int_seeds_are_not_cut_to_32_bits():
    # the review found default_rng(43408) and default_rng(44001) gave identical noise
    # through the 32-bit cut; and 5 and 5 + 2**32 were the same seed
    np.testing.assert_array_equal(_noise(43408), _noise(43408))
    assert not np.array_equal(_noise(43408), _noise(44001))
    assert not np.array_equal(_noise(5), _noise(5 + 2**32))
    g1, g2 = np.random.default_rng(43408), np.random.default_rng(44001)
    assert not np.array_equal(_noise(g1), _noise(g2))


@pytest.mark.filterwarnings("ignore::skdpx.privacy.UncappedBudgetWarning")
def test_secure_noise_ignores_every_global_seed():
    np.random.seed(0)
    a = gaussian_mechanism(np.zeros(8), epsilon=1.0, delta=DELTA, sensitivity=1.0)
    np.random.seed(0)
    b = gaussian_mechanism(np.zeros(8), epsilon=1.0, delta=DELTA, sensitivity=1.0)
    assert not np.array_equal(a, b)


def test_noise_source_is_never_pickled():
    for source in (noise_source(None), _random.NoiseSource(np.random.SeedSequence(1),
                                                           secure=False)):
        with pytest.raises(TypeError, match="never pickled"):
            pickle.dumps(source)


def test_spawned_sources_are_independent():
    children = noise_source().spawn(3)
    draws = [c.standard_normal(16) for c in children]
    assert not np.array_equal(draws[0], draws[1]) and not np.array_equal(draws[1], draws[2])
    assert all(c.secure for c in children)


def test_secure_generator_is_a_cryptographic_one():
    # AES-128 in counter mode keyed from the OS: not numpy's predictable PCG64 or MT19937
    source = noise_source()
    assert type(source._gen.bit_generator).__name__ == "AESCounter"


# --------------------------------------------------------------------------
# The four estimators (and the reference one)
# --------------------------------------------------------------------------
_problem = functools.partial(uniform_problem, n=400, d=4)
_BLACK_BOX = LogisticRegression().fit(*_problem(seed=1))  # trained on other rows


def _estimators(ledger, random_state=None):
    kw = dict(delta=DELTA, bounds=(-1.0, 1.0), accountant=ledger, random_state=random_state)
    return {
        "llc": DPLocallyLinearClassifier(epsilon=1.0, n_maps=2, epochs=2, batch_size=50, **kw),
        "lime": DPLimeExplainer(_BLACK_BOX, epsilon=1.0, epsilon_per_query=0.5, max_iter=10,
                                **kw),
        "dpc": DPCounterfactualGenerator(_BLACK_BOX, epsilon=1.0, latent_dim=2, max_iter=20,
                                         **kw),
        "recourse": PrivRecourse(epsilon=1.0, n_clusters=4, **kw),
        "reference": DPNearestCentroid(epsilon=1.0, **kw),
    }


def _run(name, est, X, y):
    if name == "lime":
        est.fit(X)
        est.transform(X[:3])  # the explainer spends on queries
    else:
        est.fit(X, y)
    return est


_GENERATOR_STATE = (b"MT19937", b"AESCounter", b"PCG64", b"Philox", b"SFC64",
                    b"RandomState", b"SeedSequence", b"NoiseSource", b"Commitment")


@pytest.mark.parametrize("name", ["llc", "lime", "dpc", "recourse", "reference"])
def test_fitted_pickles_hold_no_generator(name):
    X, y = _problem()
    est = _run(name, _estimators(PrivacyLedger())[name], X, y)
    blob = pickle.dumps(est)
    leaked = [s.decode() for s in _GENERATOR_STATE if s in blob]
    assert not leaked, f"the pickle of a fitted {type(est).__name__} holds {leaked}"
    assert est.get_params()["random_state"] is None
    pickle.loads(blob)  # and it still unpickles


@pytest.mark.parametrize("name", ["llc", "lime", "dpc", "recourse", "reference"])
def test_interrupted_fit_keeps_the_whole_planned_spend(name, monkeypatch):
    """A KeyboardInterrupt at the k-th noise draw leaves the full planned spend recorded.

    The review interrupted a fit 20 times and collected 13 noisy releases from
    the tracebacks with no spend recorded. Now the spend is committed before
    the first draw and nothing refunds it.
    """
    X, y = _problem()
    calls = {"n": 0, "stop": None}

    def counting(original):
        def draw(self, *args, **kwargs):
            calls["n"] += 1
            if calls["n"] == calls["stop"]:
                raise KeyboardInterrupt("interrupted mid-fit")
            return original(self, *args, **kwargs)
        return draw

    for method in ("standard_normal", "gaussian", "laplace", "gumbel", "uniform"):
        monkeypatch.setattr(NoiseSource, method, counting(getattr(NoiseSource, method)))
    full = PrivacyLedger()
    _run(name, _estimators(full)[name], X, y)
    planned, n_draws = full.epsilon_spent, calls["n"]
    assert planned > 0 and n_draws >= 1
    # the second draw when there are several (a release has escaped before it), else the only one
    calls.update(n=0, stop=min(2, n_draws))
    ledger = PrivacyLedger()
    with pytest.raises(KeyboardInterrupt):
        _run(name, _estimators(ledger)[name], X, y)
    assert calls["n"] == calls["stop"]
    # the plan is made from the fit's DP row count (its first draw), so two fits
    # plan different noises for the same target: equal totals within calibration
    assert ledger.epsilon_spent == pytest.approx(planned, rel=1e-4)
    assert len(ledger) >= 1


# --------------------------------------------------------------------------
# One neighbouring relation per ledger
# --------------------------------------------------------------------------
def _pld_total(events, delta):
    """The composed epsilon of ``events``, recomputed with dp_accounting alone."""
    accountant = pld_privacy_accountant.PLDAccountant(
        value_discretization_interval=1e-4)
    fixed = 0.0  # the DP row counts: their epsilons add up (FixedLossDpEvent)
    for _, event in events:
        if isinstance(event, FixedLossDpEvent):
            fixed += event.epsilon
        else:
            accountant.compose(event)
    return accountant.get_epsilon(delta) + fixed


def test_four_estimators_on_one_ledger():
    X, y = _problem()
    ledger = PrivacyLedger(epsilon=10.0, delta=DELTA)
    for name, est in _estimators(ledger).items():
        if name != "reference":
            _run(name, est, X, y)
    labels = [label for label, _ in ledger.events]
    for cls in ("DPLocallyLinearClassifier", "DPLimeExplainer", "DPCounterfactualGenerator",
                "PrivRecourse"):
        assert any(label.startswith(cls) for label in labels), (cls, labels)
    assert all(e["relation"] == "add_or_remove" for e in ledger._entries)
    expected = _pld_total(ledger.events, DELTA)
    assert ledger.epsilon_spent == pytest.approx(expected, rel=2e-3)
    assert ledger.epsilon_spent <= 10.0


def test_mixed_relations_are_refused():
    # the review: a classifier (add-or-remove) and PrivRecourse (replace-one) on one
    # ledger reported 1.588 where the true replace-one total is 2.09
    ledger = PrivacyLedger(epsilon=10.0, delta=DELTA)
    ledger.spend(dp_accounting.GaussianDpEvent(5.0), "add-or-remove release")
    with pytest.raises(ValueError, match="replace_one"):
        ledger.spend(dp_accounting.GaussianDpEvent(5.0), "replace-one release",
                     relation="replace_one")
    assert len(ledger) == 1


def test_dp_sgd_estimators_refuse_a_replace_one_ledger_before_spending():
    X, y = _problem()
    ledger = PrivacyLedger(epsilon=10.0, delta=DELTA, relation="replace_one")
    for name in ("llc",):
        est = _estimators(ledger)[name]
        with pytest.raises(ValueError, match="add.or.remove"):
            _run(name, est, X, y)
    assert len(ledger) == 0
    # a mechanism calibrated under replace-one works there
    ref = _estimators(ledger)["reference"].fit(X, y)
    assert ledger.relation == "replace_one" and ref.epsilon_spent_ > 0


def test_dp_accounting_writes_nothing_to_the_log(caplog):
    # its absl warnings printed the sampling rate (so the number of rows) of ordinary fits
    from skdpx.privacy import compute_epsilon, gaussian_event

    event = gaussian_event(1.0, steps=8, sample_rate=0.125)
    with caplog.at_level("DEBUG"):
        compute_epsilon(event, 1.2345e-5, accounting="rdp")
    assert not [r for r in caplog.records if r.name == "absl"], caplog.text


# --------------------------------------------------------------------------
# Found by an adversarial review of this change
# --------------------------------------------------------------------------
def test_auxiliary_draws_do_not_lead_to_the_noise_key():
    # numpy's SeedSequence mixing runs backwards and PCG64's state follows from its
    # outputs: an auxiliary generator derived from the noise key, whose draws are
    # published (projection_), gave the key away. A secure source keys it apart.
    # (A secure source keeps no SeedSequence: its AES key, the first of the round
    # keys in the generator's state, is compared instead.)
    def key(src):
        return src._gen.bit_generator.state["s"]["seed"][:2]

    source = noise_source()
    assert source._seed_seq is None
    aux = source.auxiliary()
    aux_seq = aux.bit_generator.seed_seq
    assert not np.array_equal(aux_seq.generate_state(2, np.uint64), key(source))
    assert aux_seq.spawn_key == ()
    child = source.spawn(1)[0]
    assert not np.array_equal(key(child), key(source))


def test_seeded_streams_are_one_to_one():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        a = noise_source(7 + 2**128).standard_normal(4)
        b = noise_source(7, stream=(1,)).standard_normal(4)
        c = noise_source(7, stream=(0,)).standard_normal(4)
        d = noise_source(7).spawn(1)[0].standard_normal(4)
        e = noise_source(7).auxiliary().standard_normal(4)
    assert not np.array_equal(a, b)
    assert not np.array_equal(c, d) and not np.array_equal(c, e)


def test_a_plan_mixing_private_and_non_private_releases_pays_only_for_its_own():
    from skdpx.privacy import (Commitment, ComposedDpEvent, NonPrivateDpEvent, gaussian_event,
                               gaussian_release)

    plan = Commitment(ComposedDpEvent([NonPrivateDpEvent(), gaussian_event(5.0)]), "mixed")
    noise = noise_source()
    gaussian_release([0.0], noise_multiplier=5.0, sensitivity=1.0, noise=noise, commitment=plan)
    with pytest.raises(RuntimeError, match="not in the spend committed"):
        gaussian_release([0.0], noise_multiplier=0.01, sensitivity=1.0, noise=noise,
                         commitment=plan)


def test_an_exponential_choice_must_be_paid_by_an_event_that_covers_it():
    from skdpx.privacy import (Commitment, exponential_release, gaussian_event, gaussian_to_pure,
                               pure_event)

    noise = noise_source()
    z = 5.0
    ok = gaussian_to_pure(z)
    exponential_release([0.0, 1.0], epsilon=ok, sensitivity=1.0, noise=noise,
                        commitment=Commitment(gaussian_event(z), "em"), event=gaussian_event(z))
    with pytest.raises(ValueError, match="does not cover"):
        exponential_release([0.0, 1.0], epsilon=50.0, sensitivity=1.0, noise=noise,
                            commitment=Commitment(gaussian_event(z), "em"),
                            event=gaussian_event(z))
    with pytest.raises(ValueError, match="does not cover"):
        exponential_release([0.0, 1.0], epsilon=2.0, sensitivity=1.0, noise=noise,
                            commitment=Commitment(pure_event(1.0), "em"), event=pure_event(1.0))


def test_a_commitment_matches_its_releases_as_events_not_as_json(monkeypatch):
    # Commitment keys a plan's leaves by events (issue 37): it never serialises
    # them, an equal event built another way (a numpy float, a tuple) matches,
    # an unhashable composition can be drawn, and a negative draw is refused.
    import dp_accounting

    from skdpx.privacy import (Commitment, ComposedDpEvent, MixtureDpEvent, NonPrivateDpEvent,
                               gaussian_event, laplace_event)
    from skdpx.privacy import _events

    def no_json(value):
        raise AssertionError("a Commitment serialised an event")

    monkeypatch.setattr(_events, "_to_obj", no_json)
    plan = Commitment(ComposedDpEvent([gaussian_event(2.0, steps=3, sample_rate=0.1),
                                       laplace_event(4.0, steps=2)]), "plan")
    step = dp_accounting.PoissonSampledDpEvent(np.float64(0.1),
                                               dp_accounting.GaussianDpEvent(np.float64(2.0)))
    with pytest.raises(RuntimeError, match="not in the spend committed"):
        plan.draw(step, times=4)  # three planned
    plan.draw(step, times=2)
    plan.draw(ComposedDpEvent([step, laplace_event(4.0)]))  # a list: not hashable
    assert not plan.exhausted
    with pytest.raises(ValueError, match="times must be >= 0"):
        plan.draw(laplace_event(4.0), times=-1)
    with pytest.raises(RuntimeError, match="not in the spend committed"):
        plan.draw(step)  # all three steps drawn
    plan.draw(laplace_event(4.0))
    assert plan.exhausted
    # events holding lists of events are keyed by a canonical tuple: a list and a
    # tuple of the same events are the same release (as their JSON says)
    mixture = MixtureDpEvent([gaussian_event(1.0), ComposedDpEvent([gaussian_event(3.0)])])
    Commitment(dp_accounting.SelfComposedDpEvent(mixture, 2), "search").draw(
        MixtureDpEvent((gaussian_event(1.0), ComposedDpEvent((gaussian_event(3.0),)))), 2)
    # a non-private plan pays for anything; one that holds a non-private leaf
    # deep inside (a Poisson-sampled exact release) too
    Commitment(NonPrivateDpEvent(), "exact").draw(gaussian_event(1.0), 5)
    Commitment(dp_accounting.PoissonSampledDpEvent(0.5, NonPrivateDpEvent()), "exact").draw(
        laplace_event(1.0))
    with pytest.raises(TypeError, match="DpEvent"):
        Commitment("GaussianDpEvent", "a string")
