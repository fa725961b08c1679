"""DPLimeExplainer's per-cell sums (approximation="cells"): the forms, the weights'
family, the sensitivity, an audit of the answers, and the explainer's plan."""

from functools import partial
import pickle
import warnings

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from skdpx.explain import DPLimeExplainer, gradient_sensitivity
from skdpx.explain import _cells, _dplime
from skdpx.explain._cells import cell_sums, shell_radii
from skdpx.explain._local_loss import local_loss, local_loss_terms, trust_region
from skdpx.explain._weights import flat_radius, kernel_weight, stable_weight
from skdpx.privacy import (
    Commitment,
    GDPAuditWarning,
    audit_gdp,
    gaussian_epsilon,
    gaussian_event,
    given_row_count,
    noise_source,
)
from skdpx.privacy._kmeans import nearest

from ._helpers import recorded_gradients

pytestmark = pytest.mark.filterwarnings("ignore::skdpx.exceptions.PrivacyLeakWarning")

WEIGHTS = {
    "stable": lambda k: partial(stable_weight, c=1.0, radius=k),
    "kernel": lambda k: partial(kernel_weight, kernel_width=0.7, c=1.0, radius=k),
}


def _cells_of(X, anchors):
    """Each row's anchor and its shell's outer radius, computed here from the definition."""
    radii = shell_radii(X.shape[1])
    j = nearest(X, anchors)
    dist = np.linalg.norm(X - anchors[j], axis=1)
    return j, radii[np.searchsorted(radii, dist)]


@pytest.mark.parametrize("kind", sorted(WEIGHTS))
def test_forms_are_the_sums_of_each_rows_cell_weighted_term(kind):
    rng = np.random.default_rng(0)
    m, d = 3000, 6
    X = rng.random((m, d))
    y = np.stack([np.tanh(X @ rng.standard_normal(d)), rng.uniform(-1, 1, m)], axis=1)
    anchors = rng.random((9, d))
    cells = cell_sums(X, y, anchors=anchors, radii=shell_radii(d))
    assert cells.n.sum() == m and cells.n_cells < 9 * len(shell_radii(d))
    Z = rng.random((5, d))
    cols, offsets = np.array([0, 1, 0, 1, 0]), rng.uniform(-0.5, 0.5, 5)
    weight = WEIGHTS[kind](1.0)
    H, g = cells.forms(Z, cols, offsets, weight=weight, m=2 * m)
    j, rho = _cells_of(X, anchors)
    for i, z in enumerate(Z):
        a = weight(np.linalg.norm(anchors[j] - z, axis=1) + rho)
        W = X - z
        assert np.allclose(H[i], (W * a[:, None]).T @ W / (2 * m))
        assert np.allclose(g[i], (a * (y[:, cols[i]] - offsets[i])) @ W / (2 * m))


@pytest.mark.parametrize("kind", sorted(WEIGHTS))
@pytest.mark.parametrize("k", [0.5, 1.0, 3.0])
def test_every_rows_cell_weight_stays_in_the_family_the_proof_needs(kind, k):
    # alpha(R) r (k r + 1) <= c / 2 and alpha(R) <= 1 for every row, at every
    # query: what the sensitivity proofs of the exact loss use (c = 1)
    rng = np.random.default_rng(1)
    d = 5
    X = rng.random((20_000, d))
    anchors = rng.random((7, d))
    j, rho = _cells_of(X, anchors)
    cells = cell_sums(X, np.zeros((len(X), 1)), anchors=anchors, radii=shell_radii(d))
    # each row's column among the kept cells (the code's weights, per cell)
    column = {(a, r): c for c, (a, r) in enumerate(zip(cells.anchor, cells.rho))}
    row_cell = np.array([column[(a, r)] for a, r in zip(j, rho)])
    weight = WEIGHTS[kind](k)
    worst = 0.0
    Z = np.r_[rng.random((20, d)), X[:5]]
    for z, a in zip(Z, cells.weights(Z, weight)):
        a = a[row_cell]
        r = np.linalg.norm(X - z, axis=1)
        assert a.max() <= 1.0
        worst = max(worst, (a * r * (k * r + 1)).max())
    assert 0.3 < worst <= 0.5 + 1e-12


def _gradients(cells, z, phi, weight, m):
    H, g = cells.forms(z[None], np.zeros(1, dtype=int), None, weight=weight, m=m)
    return 2.0 * (H[0] @ phi - g[0])


@pytest.mark.parametrize("relation", ["add_or_remove", "replace_one"])
def test_a_row_moves_the_gradient_by_at_most_the_sensitivity(relation):
    # the anchors are public (released): the neighbours share them. The worst
    # row for a query sits on the ray from the query through an anchor, at a
    # shell's outer radius beyond it: there R = r, and its weight is the exact
    # loss's (so the bound is approached)
    rng = np.random.default_rng(2)
    m, d, weight = 400, 3, WEIGHTS["stable"](1.0)
    radii = shell_radii(d)
    base = rng.uniform(0.3, 0.7, size=(m, d))
    y = rng.uniform(-1, 1, size=(m, 1))
    anchors = np.r_[rng.random((4, d)), [[0.5, 0.5, 0.5]]]
    bound = gradient_sensitivity(m, relation=relation)
    worst = 0.0
    for trial in range(300):
        z = rng.random(d) if trial % 3 else np.array([0.5, 0.5, 0.5]) - [flat_radius(), 0, 0]
        u = (anchors[-1] - z) / np.linalg.norm(anchors[-1] - z)
        canary = np.clip(anchors[-1] + u * radii[rng.integers(0, 8)], 0, 1)
        if trial % 2:
            canary = rng.random(d)
        phi = rng.standard_normal(d)
        phi *= rng.uniform(0, 1) / np.linalg.norm(phi)
        label = rng.choice([-1.0, 1.0])
        if relation == "add_or_remove":
            X1, y1 = np.r_[base, [canary]], np.r_[y, [[label]]]
            X0, y0 = base, y
        else:
            X1, y1 = np.r_[base, [canary]], np.r_[y, [[label]]]
            X0, y0 = np.r_[base, [rng.random(d)]], np.r_[y, [[-label]]]
        one = cell_sums(X1, y1, anchors=anchors, radii=radii)
        other = cell_sums(X0, y0, anchors=anchors, radii=radii)
        diff = np.linalg.norm(_gradients(one, z, phi, weight, m) -
                              _gradients(other, z, phi, weight, m))
        assert diff <= bound * (1 + 1e-9)
        worst = max(worst, diff)
    assert worst > 0.6 * bound


# ---------------------------------------------------------------- the audit
# As tests/test_dplime.py's audit of the exact path (a white-box auditor who
# sees every noisy gradient and knows every row but the canary), through the
# explainer's release code with its per-cell sums. The anchors are public (the
# audit of their own release is DP k-means', in tests/test_recourse.py); here they
# are given, one of them on the ray from the query to the canary, a shell's
# radius short of it, so that the canary's cell weight is its exact weight.
# Two canaries: "cap", where the stable weight meets its cap (r*, weight 1:
# the largest gradient a row can move at phi = 0); "beyond", at r = 0.9, in the
# cap's region with its anchor 0.37 from the query, where a cell weight taken
# at a smaller distance than the row's (the shell's radius left out) would be
# 3.4 times the cap.
_EPSILON, _DELTA, _STEPS, _TRIALS = 1.0, 1e-5, 4, 20_000


def _setup(kind):
    rng = np.random.RandomState(3)
    query = np.array([[0.5, 0.5]]) if kind == "cap" else np.array([[0.1, 0.5]])
    X = np.clip(query + rng.normal(0, 0.05, size=(200, 2)), 0, 1)
    r, shell = ((np.sqrt(3) - 1) / 2, 3) if kind == "cap" else (0.9, 9)
    X[-1] = query[0] + [r, 0.0]
    anchors = np.array([X[-1] - [shell_radii(2)[shell] - 1e-9, 0.0], [0.1, 0.9]])
    weight = min(1.0, 1.0 / (2 * r * (r + 1)))
    return {"query": query, "anchors": anchors, "shift": weight * r / len(X),
            "data": (X, np.r_[np.zeros(199), 1.0]), "neighbour": (X[:-1], np.zeros(199))}


def _audit_explainer(dataset, setup, monkeypatch):
    X, y = dataset
    real = _dplime.dp_lloyd
    # the real release is made (and paid); its centres are then replaced by the given ones
    monkeypatch.setattr(_dplime, "dp_lloyd", lambda *args, **kwargs: (
        real(*args, **kwargs) and setup["anchors"], None))
    with given_row_count(len(setup["data"][0])):
        explainer = DPLimeExplainer(None, epsilon=1.2 * _EPSILON, delta=_DELTA,
                                    epsilon_per_query=_EPSILON, max_iter=_STEPS,
                                    bounds=(0.0, 1.0), approximation="cells").fit(X, y)
    assert explainer.approximation_ == "cells"
    return explainer


def _forms(explainer, query):
    H, g = explainer._forms(query, np.zeros(1, dtype=int))
    # what the release reads: the cells' forms
    cells = explainer._cells.forms(query, np.zeros(1, dtype=int), None,
                                   weight=explainer._weight_function(), m=explainer._m)
    assert np.array_equal(H, cells[0]) and np.array_equal(g, cells[1])
    return H[0], g[0]


def _audit(kind, monkeypatch, check_shift=True):
    setup = _setup(kind)
    data, neighbour = setup["data"], setup["neighbour"]
    on = {key: _audit_explainer(setup[key], setup, monkeypatch) for key in ("data", "neighbour")}
    H1, G1 = _forms(on["data"], setup["query"])
    H0, G0 = _forms(on["neighbour"], setup["query"])
    if check_shift:  # the canary weighs as in the exact loss: g moves by alpha r / m
        assert np.isclose(np.linalg.norm(G1 - G0), setup["shift"])

    def release(dataset, random_state, n):
        explainer = on["data" if dataset is data else "neighbour"]
        noise = noise_source(random_state)
        commitment = Commitment(gaussian_event(explainer.noise_multiplier_,
                                               steps=_STEPS * n), "audit")
        Z = np.repeat(setup["query"], n, axis=0)
        grads, _ = recorded_gradients(explainer, Z, np.zeros(n, dtype=int), noise, commitment)
        phi, total = np.zeros((n, 2)), np.zeros(n)
        for grad in grads:
            known = 2.0 * (phi @ H0 - G0)
            change = 2.0 * (phi @ (H1 - H0) - (G1 - G0))
            total += ((grad - known) * change).sum(axis=1) / np.linalg.norm(change, axis=1)
            phi = phi - grad
            phi /= np.maximum(1.0, np.linalg.norm(phi, axis=1))[:, None]
        return total / np.sqrt(len(grads))

    with warnings.catch_warnings():
        warnings.simplefilter("error", GDPAuditWarning)
        result = audit_gdp(release, data, neighbour, n_trials=_TRIALS, delta=_DELTA,
                           batched=True, random_state=0)
    return result.epsilon, on["data"].noise_multiplier_


@pytest.mark.parametrize("kind", ["cap", "beyond"])
def test_audit_of_a_cells_answer_stays_below_the_claim(kind, monkeypatch):
    # measured 0.56 (cap) and 0.30 (beyond) at seed 0 (claim 1)
    epsilon, _ = _audit(kind, monkeypatch)
    assert 0.2 < epsilon < _EPSILON


def test_cells_audit_catches_noise_for_too_small_a_sensitivity(monkeypatch):
    real = _dplime.gradient_sensitivity
    monkeypatch.setattr(_dplime, "gradient_sensitivity",
                        lambda *args, **kwargs: real(*args, **kwargs) / 2)
    epsilon, z = _audit("cap", monkeypatch)
    assert _EPSILON < epsilon < gaussian_epsilon(z / 2, _DELTA, steps=_STEPS)


def test_cells_audit_catches_a_cell_weight_above_the_rows_cap(monkeypatch):
    # a bug: the cell weight taken at the anchor's distance alone (the shell's
    # radius left out): the canary beyond r* then weighs 3.4 times its cap, and
    # the same audit sees far more than the claim (1.66 at seed 0)
    def anchor_distance_only(self, Z, weight):
        d2 = (np.einsum("qi,qi->q", Z, Z)[:, None] - 2.0 * Z @ self.anchors.T
              + np.einsum("ji,ji->j", self.anchors, self.anchors)[None, :])
        return weight(np.sqrt(np.maximum(d2, 0.0))[:, self.anchor])

    monkeypatch.setattr(_cells.CellSums, "weights", anchor_distance_only)
    epsilon, _ = _audit("beyond", monkeypatch, check_shift=False)
    assert epsilon > _EPSILON


# -------------------------------------------------------------- the explainer


@pytest.fixture(scope="module")
def logistic():
    rng = np.random.default_rng(4)
    d = 8
    w = np.linspace(-1, 1, d)
    public = rng.standard_normal((3000, d))
    box = LogisticRegression().fit(public, (public @ w > 0).astype(int))
    return box, rng.standard_normal((30_000, d)), rng.standard_normal((25, d))


def _fit(box, X, **params):
    params = {"epsilon": 20.0, "epsilon_per_query": 1.0, "bounds": (-5, 5),
              "random_state": 0, **params}
    return DPLimeExplainer(box, **params).fit(X)


def test_auto_is_exact_below_the_threshold_and_spends_nothing_at_fit(logistic):
    box, X, _ = logistic
    explainer = _fit(box, X)
    assert explainer.approximation_ == "exact" and explainer._cells is None
    cells = _fit(box, X, approximation="cells")
    assert cells.approximation_ == "cells"
    # the anchors: at most their share of a query, on top of the count
    extra = cells.epsilon_spent_ - explainer.epsilon_spent_
    assert 0 < extra <= _dplime.ANCHOR_SHARE * 1.0
    with given_row_count(_dplime.CELLS_MIN_ROWS):
        assert _fit(box, X[:5000]).approximation_ == "cells"


def test_noiseless_cells_answers_are_within_one_percent_of_the_exact_loss(logistic):
    box, X, Z = logistic
    exact = _fit(box, X, epsilon=np.inf, epsilon_per_query=np.inf, max_iter=200)
    cells = _fit(box, X, epsilon=np.inf, epsilon_per_query=np.inf, max_iter=200,
                 approximation="cells")
    Zs = exact._scaler().transform(Z)
    H, g, s = local_loss_terms(Zs, exact._scaler().transform(X), exact._labels[:, 1])
    best = local_loss(trust_region(H, g, 1.0), H, g, s)
    # the answers (history_: scaled units, label units), each under the exact loss
    phis = {}
    for name, e in (("exact", exact), ("cells", cells)):
        e.explain(Z)
        phis[name] = np.asarray(e.history_["explanations"][-len(Z):])
    exact_loss = local_loss(phis["exact"], H, g, s)
    cells_loss = local_loss(phis["cells"], H, g, s)
    assert np.all(exact_loss <= best * 1.01)
    rel = cells_loss / exact_loss - 1
    assert rel.max() < 0.01 and rel.min() > -1e-6
    assert rel.max() > 1e-6  # the cells' loss is another loss


def test_too_many_features_for_cells_is_refused_before_any_spend():
    from skdpx.privacy import PrivacyLedger

    ledger = PrivacyLedger(epsilon=5.0, delta=1e-5)
    X = np.random.default_rng(5).random((50, 240))
    with pytest.raises(ValueError, match="MiB.*Nothing was spent"):
        DPLimeExplainer(None, epsilon=5.0, bounds=(0, 1), approximation="cells",
                        accountant=ledger).fit(X, X[:, 0])
    assert ledger.epsilon_spent == 0
    assert _dplime._cells_mib(240) > _dplime.CELLS_MAX_MIB > _dplime._cells_mib(104)


def test_cells_are_never_released_nor_pickled_with_the_release(logistic):
    box, X, Z = logistic
    explainer = _fit(box, X[:3000], approximation="cells")
    explainer.explain(Z[:2])
    released = explainer.release()
    assert not hasattr(released, "_cells") and not hasattr(released, "_X")
    state = pickle.loads(pickle.dumps(released)).__dict__
    assert not any(isinstance(v, _cells.CellSums) for v in state.values())
    with pytest.warns(Warning, match="private"):
        pickle.dumps(explainer)


@pytest.mark.parametrize("strategy", ["adaptive", "enhanced"])
def test_warm_started_strategies_read_the_cells_too(logistic, strategy, monkeypatch):
    # the warm start's utilities and the descent both come from _forms: with cells,
    # no query reads a row (the rows are taken away after fit)
    box, X, Z = logistic
    explainer = _fit(box, X[:4000], approximation="cells", strategy=strategy,
                     epsilon=50.0, epsilon_per_query=0.5, n_jobs=2)
    monkeypatch.setattr(explainer, "_X", None)
    monkeypatch.setattr(explainer, "_labels", None)
    Q = np.repeat(Z[:1], 40, axis=0) + 0.01 * np.random.default_rng(6).standard_normal((40, 8))
    result = explainer.explain(Q)
    assert np.isfinite(result.values).all() and np.abs(result.values).max() > 0
    assert set(result.phase) == {"interactive"}
    assert min(explainer.history_["n_iter"]) < explainer.n_iter_  # warm starts cut steps


def test_cells_plan_is_refused_before_any_spend_when_the_anchors_leave_no_room(logistic):
    from skdpx.privacy import BudgetError, PrivacyLedger

    box, X, _ = logistic
    # epsilon pays the count and one query, not also the anchors' tenth of one
    with pytest.raises(ValueError, match="the cells' anchors .at most.*Nothing was spent"):
        _fit(box, X[:3000], epsilon=1.05, approximation="cells")
    assert _fit(box, X[:3000], epsilon=1.05).approximation_ == "exact"
    with given_row_count(_dplime.CELLS_MIN_ROWS):  # "auto" takes the exact path there
        assert _fit(box, X[:3000], epsilon=1.05).approximation_ == "exact"
        assert _fit(box, X[:3000], epsilon=1.2).approximation_ == "cells"
    # a shared ledger that pays the count (0.05) but not the anchors (up to 0.1) too:
    # "cells" is refused before the count is spent, "auto" falls back to exact
    # rather than fail after the count's spend
    ledger = PrivacyLedger(epsilon=0.06, delta=1e-5)
    with given_row_count(_dplime.CELLS_MIN_ROWS):
        with pytest.raises(BudgetError):
            _fit(box, X[:3000], accountant=ledger, approximation="cells")
        assert len(ledger) == 0
        explainer = _fit(box, X[:3000], accountant=ledger)
    assert explainer.approximation_ == "exact" and len(ledger) == 0  # (a given count)
    # with the fit's own DP count: the anchors are in the check made before it
    with pytest.raises(BudgetError):
        _fit(box, X[:3000], accountant=ledger, approximation="cells")
    assert len(ledger) == 0


def test_auto_is_exact_for_a_non_private_baseline(logistic):
    box, X, _ = logistic
    with given_row_count(_dplime.CELLS_MIN_ROWS):
        assert _fit(box, X[:3000], epsilon=np.inf,
                    epsilon_per_query=np.inf).approximation_ == "exact"


def test_anchor_noise_has_a_floor_from_the_planning_count(logistic):
    # with many rows the anchors need less than their share: their noise is larger
    box, X, _ = logistic
    small = _fit(box, X[:3000], approximation="cells")
    with given_row_count(5e7):
        large = _fit(box, X[:3000], approximation="cells")
    assert small.anchor_noise_multiplier_ == pytest.approx(small._anchor_budget_noise())
    assert large.anchor_noise_multiplier_ > 10 * small.anchor_noise_multiplier_
    assert large.release().anchor_noise_multiplier_ == large.anchor_noise_multiplier_
    assert large.release().approximation_ == "cells"
