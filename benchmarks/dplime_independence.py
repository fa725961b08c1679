"""DPLimeExplainer and a black box trained on the explanation data: an audit (issue 18).

DPLimeExplainer's sensitivity (one row moves the local loss's gradient by at
most 1/m) assumes that the black box's labels f(x) do not depend on the
explanation rows. This benchmark audits the released explanation end to end,
with the black box retrained on each of two neighbouring datasets, D and D
minus one target row (add-or-remove), so that the black box is a
deterministic function of the data (fixed ``random_state``) and the only
randomness is the explainer's noise:

* same data: ``RandomForestClassifier(n_estimators=100, random_state=0)``
  trained on D, and retrained on D minus the target;
* disjoint: the same forest trained once on other rows (Adult's test split),
  fixed for both neighbours.

The data: D is ``--rows`` rows of Adult's training split (seeded
permutation), with the five numeric features scaled into [0, 1] by their
public bounds; queries are rows of the test split. Each answer is one
interactive basic answer (``epsilon_per_query=1``, delta 1e-6, T = 100
steps), so the claim under audit is epsilon 1 per query.

1. **The pair.** The audit is most telling on the worst pair. Candidate
   target rows (the rows of D farthest from its median row: outliers) and
   candidate queries are screened by simulating the answers (the explainer's
   own descent, ``dpgd_explain``, on each neighbour's exact local loss, with
   the same noise draws on both neighbours and a seed of its own) and
   estimating the Gaussian DP parameter ``mu`` of the best linear statistic
   of the answer, ``sqrt(D' C^-1 D)`` (D: the difference of the mean
   answers, C: their covariance). The pair with the largest estimate is
   audited; for the disjoint forest, the same pair, and the disjoint
   forest's own worst screened pair.
2. **The audit.** ``--trials`` answers on each neighbour, through the public
   API: ``DPLimeExplainer(...).fit(D).transform(queries)`` with the query
   asked ``--trials`` times, each copy moved by at most 1e-5 (scaled units)
   along the first feature so that it is a new query with its own noise (an
   identical query would be reused). The test statistic is the 1-D
   projection of the released attribution vector on the screening's
   direction (fixed before the audit). ``audit_epsilon`` (assumption-free
   threshold test) and ``audit_gdp`` (Gaussian DP, which checks that the
   trade-off curve is Gaussian and otherwise reports the threshold bound)
   read the same answers. Each is a 95% lower bound on the epsilon of one
   answer, to compare with the claim, 1.

Run: python benchmarks/dplime_independence.py [--rows 16000] [--trials 10000]
     [--targets 16] [--queries 40] [--screen 1000]
The results are saved in benchmarks/results/dplime_independence.json.

Measured runtime: 322 s at the default 16,000 rows (2026-11-25); 529 s at
``--rows 4000`` and 542 s at ``--rows 8000`` on a loaded 2-core machine
(2026-11-26).
"""

import argparse
from pathlib import Path
import time
import warnings

import numpy as np
from sklearn.ensemble import RandomForestClassifier

from skdpx.datasets import encode_adult, load_adult
from skdpx.explain import DPLimeExplainer, gradient_sensitivity
from skdpx.explain._dpgd import dpgd_explain
from skdpx.explain._local_loss import local_loss_terms
from skdpx.privacy import (
    Commitment,
    GDPAuditWarning,
    PrivacyLeakWarning,
    audit_epsilon,
    audit_gdp,
    calibrate_noise,
    gaussian_event,
    noise_source,
)

from _run_record import run_info, save, start

HERE = Path(__file__).resolve().parent
FEATURES = ["age", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
EPSILON_PER_QUERY, DELTA, T = 1.0, 1e-6, 100
#: copies of a query are moved by at most this much (scaled units) along feature 0
MOVE = 1e-5


def forest(X, y):
    """The black box: a deterministic function of its training rows."""
    return RandomForestClassifier(n_estimators=100, random_state=0, n_jobs=2).fit(X, y)


def labels(model, X):
    """The explainer's labels for a binary black box: 2 P(>50K | x) - 1."""
    return 2.0 * model.predict_proba(X)[:, 1] - 1.0


def simulate(H, g, m, n, seed):
    """n simulated answers at each query of (H, g): the explainer's descent, tiled.

    An auditor's simulation (it knows both datasets), not a release: the
    commitment pays for nothing and is recorded nowhere.
    """
    q, d = g.shape
    z = calibrate_noise(EPSILON_PER_QUERY, DELTA, steps=T)
    Ht, gt = np.repeat(H, n, axis=0), np.repeat(g, n, axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        noise = noise_source(seed)
    phi = dpgd_explain(Ht, gt, noise_multiplier=z, sensitivity=gradient_sensitivity(m),
                       radius=1.0, n_iter=T, smoothness=1.0, noise=noise,
                       commitment=Commitment(gaussian_event(z, steps=T * q * n), "simulation"))
    return phi.reshape(q, n, d)


def pair_mu(a, b):
    """Per query: the Gaussian DP parameter of the best linear statistic, and its direction.

    ``a`` and ``b`` are answers on the two neighbours drawn with the same noise
    (common random numbers), so the difference of their means is estimated
    far more precisely than the noise's spread: ``mu = sqrt(D' C^-1 D)``,
    ``D`` the mean difference and ``C`` the answers' covariance (with a small
    ridge: an answer on the ball's surface has no spread along the radius).
    """
    mus, directions = [], []
    for a_k, b_k in zip(a, b):
        diff = a_k.mean(axis=0) - b_k.mean(axis=0)
        cov = 0.5 * (np.cov(a_k.T) + np.cov(b_k.T))
        cov += 1e-3 * np.trace(cov) / len(cov) * np.eye(len(cov))
        w = np.linalg.solve(cov, diff)
        mus.append(np.sqrt(max(float(diff @ w), 0.0)))
        directions.append(w / np.linalg.norm(w))
    return np.array(mus), np.array(directions)


def screen(D, yD, Q, candidates, disjoint_labels, n, seed):
    """mu of every (candidate target, query) pair, same-data and disjoint forest."""
    m = len(D)
    same_labels = labels(forest(D, yD), D)
    runs = {}
    for name, lab in (("same", same_labels), ("disjoint", disjoint_labels)):
        H, g, _ = local_loss_terms(Q, D, lab)
        runs[name] = simulate(H, g, m, n, seed)
    out = []
    for k, i in enumerate(candidates):
        rest = np.delete(np.arange(m), i)
        row = {"target": int(i)}
        for name, lab in (("same", labels(forest(D[rest], yD[rest]), D[rest])),
                          ("disjoint", disjoint_labels[rest])):
            H, g, _ = local_loss_terms(Q, D[rest], lab)
            mu, w = pair_mu(runs[name], simulate(H, g, m - 1, n, seed))
            row[name] = (mu, w)
        out.append(row)
    return out


def gradient_shift(D, lab_full, lab_rest, i, z):
    """||grad L_D(0) - grad L_D'(0)|| at the query, in units of the claimed 1 / m
    (the normaliser m of D for both: the rows' own change)."""
    m = len(D)
    rest = np.delete(np.arange(m), i)
    _, g1, _ = local_loss_terms(z[None], D, lab_full)
    _, g0, _ = local_loss_terms(z[None], D[rest], lab_rest)
    return float(np.linalg.norm(2.0 * (g1[0] - (m - 1) / m * g0[0])) * m)


def audit(black_boxes, datasets, query, w, trials, seed):
    """Both auditors on the same answers: (audit_epsilon, audit_gdp result)."""
    rng = np.random.RandomState(seed)
    Z = query[None] + np.linspace(0.0, MOVE, trials)[:, None] * np.eye(len(query))[0]
    answers = {}
    for key in ("D", "D-"):
        X = datasets[key]
        explainer = DPLimeExplainer(black_boxes[key], epsilon=1e9, delta=DELTA,
                                    epsilon_per_query=EPSILON_PER_QUERY, max_iter=T,
                                    bounds=(np.zeros(X.shape[1]), np.ones(X.shape[1])),
                                    random_state=int(rng.randint(2**31))).fit(X)
        result = explainer.explain(Z)
        assert (result.phase == "interactive").all()
        answers[key] = result.values @ w

    def release(dataset, random_state, n):  # the answers above, in the order drawn
        return answers[dataset][:n]

    eps_threshold = audit_epsilon(release, "D", "D-", n_trials=trials, delta=DELTA,
                                  batched=True, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GDPAuditWarning)  # gaussian_fit says it
        gdp = audit_gdp(release, "D", "D-", n_trials=trials, delta=DELTA, batched=True,
                        random_state=0)
    return eps_threshold, gdp


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=16_000, help="m, the explanation rows")
    parser.add_argument("--trials", type=int, default=10_000, help="answers per neighbour")
    parser.add_argument("--targets", type=int, default=16, help="candidate target rows")
    parser.add_argument("--queries", type=int, default=40, help="candidate queries")
    parser.add_argument("--screen", type=int, default=1000,
                        help="simulated answers per pair and neighbour in the screening")
    parser.add_argument("--out", default=str(HERE / "results" / "dplime_independence.json"))
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore", PrivacyLeakWarning)  # the audit seeds the noise on purpose
    t_start, started = time.perf_counter(), start()

    train, test = load_adult(subset="train"), load_adult(subset="test")
    X_all = encode_adult(train.data, features=FEATURES).data
    X_test = encode_adult(test.data, features=FEATURES).data
    perm = np.random.RandomState(0).permutation(len(X_all))[: args.rows]
    D, yD = X_all[perm], train.target[perm]
    m = len(D)
    Q = X_test[np.random.RandomState(1).choice(len(X_test), args.queries, replace=False)]
    disjoint = forest(X_test, test.target)  # other rows: Adult's test split
    disjoint_labels = labels(disjoint, D)
    z = calibrate_noise(EPSILON_PER_QUERY, DELTA, steps=T)
    mu_claim = np.sqrt(T) / z  # T Gaussian steps of multiplier z: one Gaussian, sqrt(T) / z
    print(f"m = {m} rows of Adult (5 numeric features), claim: epsilon {EPSILON_PER_QUERY:g} per "
          f"query at delta {DELTA:g} (T = {T}, noise multiplier {z:.2f}, mu = {mu_claim:.3f})")

    # 1. the pair: outlying targets, queries from the test split
    outlying = np.argsort(-np.linalg.norm(D - np.median(D, axis=0), axis=1))
    candidates = outlying[: args.targets]
    t0 = time.perf_counter()
    rows = screen(D, yD, Q, candidates, disjoint_labels, args.screen, seed=10)
    t_screen = time.perf_counter() - t0

    def best(name):
        k, j = max(((k, int(np.argmax(r[name][0]))) for k, r in enumerate(rows)),
                   key=lambda kj: rows[kj[0]][name][0][kj[1]])
        return k, j

    k_same, j_same = best("same")
    k_dis, j_dis = best("disjoint")
    print(f"screening: {len(candidates)} targets x {len(Q)} queries, {args.screen} simulated "
          f"answers each ({t_screen:.0f} s); largest mu / claimed mu: same data "
          f"{rows[k_same]['same'][0][j_same] / mu_claim:.2f}, disjoint "
          f"{rows[k_dis]['disjoint'][0][j_dis] / mu_claim:.2f}")

    # 2. the audits
    cases = [("same data", "same", k_same, j_same), ("disjoint, same pair", "disjoint", k_same,
                                                       j_same),
             ("disjoint, its worst pair", "disjoint", k_dis, j_dis)]
    results = []
    print(f"\n{'black box':<26} {'target':>6} {'query':>5} {'grad shift':>10} {'mu screen':>9} "
          f"{'audit_epsilon':>13} {'audit_gdp':>9} {'gdp mu':>6} {'fit':>5} {'claim':>5}")
    for title, name, k, j in cases:
        i = rows[k]["target"]
        rest = np.delete(np.arange(m), i)
        if name == "same":
            boxes = {"D": forest(D, yD), "D-": forest(D[rest], yD[rest])}
        else:
            boxes = {"D": disjoint, "D-": disjoint}
        lab_full, lab_rest = labels(boxes["D"], D), labels(boxes["D-"], D[rest])
        shift = gradient_shift(D, lab_full, lab_rest, i, Q[j])
        mu_screen = rows[k][name][0][j]
        w = rows[k][name][1][j]
        t0 = time.perf_counter()
        eps_threshold, gdp = audit(boxes, {"D": D, "D-": D[rest]}, Q[j], w, args.trials,
                                   seed=100 + len(results))
        seconds = time.perf_counter() - t0
        results.append({
            "black_box": title, "target": int(i), "target_row": D[i].tolist(),
            "query": int(j), "query_row": Q[j].tolist(),
            "gradient_shift_over_sensitivity": shift,
            "screen_mu_over_claim": float(mu_screen / mu_claim),
            "audit_epsilon": eps_threshold, "audit_gdp_epsilon": gdp.epsilon,
            "audit_gdp_mu": gdp.mu, "audit_gdp_epsilon_threshold": gdp.epsilon_threshold,
            "gaussian_fit": gdp.gaussian_fit, "seconds": seconds,
        })
        print(f"{title:<26} {i:>6d} {j:>5d} {shift:>10.2f} {mu_screen / mu_claim:>9.2f} "
              f"{eps_threshold:>13.3f} {gdp.epsilon:>9.3f} {gdp.mu:>6.3f} "
              f"{str(gdp.gaussian_fit):>5} {EPSILON_PER_QUERY:>5g}", flush=True)
    print("(grad shift: ||grad L_D(0) - grad L_D'(0)|| at the query over the claimed 1 / m; mu "
          "screen: the screening's mu over the claimed mu; audit_epsilon, audit_gdp: 95% lower "
          "bounds on the epsilon of one answer; fit: audit_gdp's Gaussian check, else it reports "
          "the threshold bound)")
    total = time.perf_counter() - t_start
    print(f"total {total:.0f} s")

    out = Path(args.out)
    save(out, {
        "rows": m, "features": FEATURES, "trials": args.trials, "targets": len(candidates),
        "queries": len(Q), "screen": args.screen, "epsilon_per_query": EPSILON_PER_QUERY,
        "delta": DELTA, "max_iter": T, "noise_multiplier": z, "claimed_mu": mu_claim,
        "black_box": "RandomForestClassifier(n_estimators=100, random_state=0)",
        "results": results, "seconds": total, "run": run_info(started, total),
    })
    print(f"saved {out}")


if __name__ == "__main__":
    main()
