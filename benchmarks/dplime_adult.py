"""DPLimeExplainer on Adult: quality, budget use and speed (issue 4).

Black box: RandomForestClassifier(n_estimators=200) on the second half of
the Adult test split (8,141 rows; 104 columns: numeric features scaled,
categorical ones one-hot); explanation dataset: the training split (32,561
rows, the private data), disjoint from the black box's rows, as the
guarantee needs (until issue 18 the black box was trained on the
explanation rows themselves); queries: rows of the first half of the test
split (8,140 rows). Quality is measured against the exact non-private
optimum of the same loss (skdpx.metrics).

a. quality of basic answers at epsilon_per_query 0.1 and 1;
b. a stream of queries against a total epsilon = 1 for the three strategies
   (adaptive and enhanced at several per-query epsilons), and how many answers
   basic pays for at the same mean loss (basic swept over its per-query
   epsilon and T);
c. speed, and the ratio to lime's LimeTabularExplainer.

Run: python benchmarks/dplime_adult.py [--queries 500] [--stream 6000] [--png curve.png]
     [--parts abc] [--jobs 2] [--out benchmarks/results/dplime_adult.json]
(--parts c alone times the explainer on an otherwise idle machine; --jobs runs the
streams of part b side by side.)
(lime, for the speed ratio, is in the "bench" extra.)

Every number the tables print is saved in benchmarks/results/dplime_adult.json
(with the settings, the seeds, the runtime, the date and the versions), which
the docs render (doc/benchmarks/dplime.rst).

Measured runtime: 29 min (1,731 s) with the defaults, 14 min with
``--stream 3000 --adaptive-epsilons 0.05 --speed-queries 300``, on a shared,
loaded 2-core machine with OPENBLAS_NUM_THREADS=1 (2026-11-26).
"""

import argparse
import os
import time
import warnings

import numpy as np
from joblib import Parallel, delayed
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics.pairwise import euclidean_distances

from skdpx.datasets import encode_adult, load_adult
from skdpx.explain import DPLimeExplainer, gradient_sensitivity
from skdpx.explain._dpgd import dpgd_explain
from skdpx.explain._local_loss import local_loss, local_loss_terms
from skdpx.metrics import optimal_explanation
from skdpx.privacy import (
    EstimatorLedger,
    PrivacyLedger,
    calibrate_noise,
    gaussian_epsilon,
    gaussian_event,
    noise_source,
)

from _run_record import run_info, save, start

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "dplime_adult.json")

DELTA = 1e-6
STRATEGIES = ("basic", "adaptive", "enhanced")
#: adaptive and enhanced also run at these smaller per-query epsilons (basic
#: is swept over epsilon_per_query and T for the equal-loss comparison)
ADAPTIVE_EPSILONS = (0.03, 0.04, 0.05)


def top_k_agreement(phi, opt, k=5):
    top = lambda v: set(np.argsort(-np.abs(v))[:k])  # noqa: E731
    return float(np.mean([len(top(a) & top(b)) for a, b in zip(phi, opt)]))


def paper_noise_multiplier(epsilon, delta, steps):
    """The paper's closed form (Algorithm 3, lines 2-3): advanced composition.

    epsilon_ite = epsilon / sqrt(8 T log(1/delta)) per step, and the classic
    Gaussian mechanism at delta / (2T) per step: sigma / sensitivity =
    sqrt(2 log(2.5 T / delta)) / epsilon_ite.
    """
    eps_ite = epsilon / np.sqrt(8 * steps * np.log(1 / delta))
    return np.sqrt(2 * np.log(2.5 * steps / delta)) / eps_ite


def print_noise_comparison():
    rows = []
    print("Noise per step (std / sensitivity) for one answer of T steps, delta = "
          f"{DELTA:g}: exact Gaussian composition against the paper's closed form")
    print(f"{'eps/query':>9} {'T':>5} {'skdpx':>9} {'paper':>9} {'ratio':>6}")
    for eps_q, T in [(0.1, 30), (0.1, 100), (1.0, 100), (1.0, 300), (1.0, 500)]:
        ours, paper = calibrate_noise(eps_q, DELTA, steps=T), paper_noise_multiplier(eps_q, DELTA, T)
        print(f"{eps_q:>9g} {T:>5d} {ours:>9.1f} {paper:>9.1f} {paper / ours:>6.2f}")
        rows.append({"epsilon_per_query": eps_q, "T": T, "skdpx": float(ours),
                     "paper": float(paper), "ratio": float(paper / ours)})
    print()
    return {"delta": DELTA, "rows": rows}


class FormsCache:
    """Each query's local loss terms (H, g), computed once and shared by the explainers of a run.

    Every explainer of parts a and b is fitted on the same rows, black box and
    weight, so the terms of a query (a deterministic function of the query and
    those) are the same for all of them: the cache computes them with the
    explainer's own ``_forms`` the first time a query is asked and serves them
    afterwards. The explainers' noise, descent, warm starts, accounting and
    reuse are untouched; only the repeated computation of the same terms is
    saved (the sweep of part b asks the same 500 queries 36 times). Part c
    (speed) runs without it. ``--no-cache`` runs without it everywhere.
    """

    def __init__(self):
        self.store = {}

    def attach(self, explainer):
        original = explainer._forms

        def forms(Z, columns, offsets=None):
            offsets = np.zeros(len(Z)) if offsets is None else np.asarray(offsets, dtype=float)
            keys = [(z.tobytes(), int(c), float(o)) for z, c, o in zip(Z, columns, offsets)]
            miss = [i for i, k in enumerate(keys) if k not in self.store]
            if miss:
                H, g = original(Z[miss], columns[miss], offsets[miss])
                for j, i in enumerate(miss):
                    self.store[keys[i]] = (H[j], g[j])
            return (np.array([self.store[k][0] for k in keys]),
                    np.array([self.store[k][1] for k in keys]))

        explainer._forms = forms  # shadows the method on this instance only
        return explainer

    def seed(self, explainer, Z, H, g, labels):
        """Store terms computed outside, if they are the explainer's: same scaled queries and labels.

        Returns whether they were stored.
        """
        col = 1  # the positive class of the binary black box, explained by default
        Zs = explainer._scaler().transform(Z)
        if not (np.array_equal(Zs, Z) and np.array_equal(explainer._labels[:, col], labels)):
            return False
        for z, h, v in zip(Zs, H, g):  # a classifier's label offset is 0
            self.store[(z.tobytes(), col, 0.0)] = (h, v)
        return True


def approximation_loss(terms, best):
    """``explanation_loss`` on queries whose terms and optimal loss are computed already.

    ``skdpx.metrics.explanation_loss(phi, Z, X, labels)`` is
    ``local_loss(phi, *terms) - best`` with the terms and the optimum of the
    queries ``Z``; this reuses them (``idx``: the queries' rows in them).
    """
    def loss(phi, idx=slice(None)):
        H, g, s = terms
        return local_loss(np.asarray(phi, dtype=float), H[idx], g[idx], s[idx]) - best[idx]
    return loss


def n_affordable(explainer, total):
    """How many basic answers compose to at most ``total`` (exact Gaussian composition)."""
    k = 1
    while gaussian_epsilon(explainer.noise_multiplier_, DELTA,
                           steps=explainer.n_iter_ * (k + 1)) <= total:
        k += 1
    return k


def speed(model, X, Z_all, bounds, n_queries=1000):
    out = {"queries": n_queries, "T": 100, "strategy": "basic"}
    print(f"\nc. Speed: {n_queries} queries (basic, T = 100) against the full training split")
    Z1000 = Z_all[:n_queries]
    explainer = DPLimeExplainer(model, epsilon=1e9, delta=DELTA, epsilon_per_query=1.0,
                                max_iter=100, bounds=bounds, random_state=0).fit(X)
    t0 = time.perf_counter()
    explainer.transform(Z1000)
    ours = time.perf_counter() - t0
    print(f"DPLimeExplainer: {ours:.1f} s for {n_queries} queries (per query: "
          f"{ours / n_queries * 1000:.1f} ms)")
    out.update(seconds=ours, ms_per_query=ours / n_queries * 1000)
    try:
        from lime.lime_tabular import LimeTabularExplainer
    except ImportError:
        print("lime is not installed (pip install 'skdpx[bench]'): no ratio")
        return out
    lime = LimeTabularExplainer(X, mode="classification", discretize_continuous=False,
                                random_state=0)
    n_lime = 20
    t0 = time.perf_counter()
    for z in Z1000[:n_lime]:
        lime.explain_instance(z, model.predict_proba, num_features=5)
    per_lime = (time.perf_counter() - t0) / n_lime
    per_ours = ours / n_queries
    print(f"lime LimeTabularExplainer: {per_lime * 1000:.0f} ms per explanation "
          f"({n_lime} measured, same black box)")
    print(f"time per explanation, DPLimeExplainer / lime: {per_ours / per_lime:.3f}")
    out.update(lime_explanations=n_lime, lime_ms_per_explanation=per_lime * 1000,
               ratio=per_ours / per_lime)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--stream", type=int, default=6000)
    parser.add_argument("--jobs", type=int, default=2, help="streams run side by side (part b)")
    parser.add_argument("--png", default=None, help="save the privacy-spending curve here")
    parser.add_argument("--parts", default="abc", help="which of a, b, c to run (default: all)")
    parser.add_argument("--out", default=RESULTS, help="where the results are saved (JSON)")
    parser.add_argument("--speed-queries", type=int, default=1000,
                        help="queries timed in part c")
    parser.add_argument("--spread", type=int, default=500,
                        help="queries spread over the stream for basic's sweep in part b")
    parser.add_argument("--adaptive-epsilons", type=float, nargs="+",
                        default=list(ADAPTIVE_EPSILONS),
                        help="the smaller per-query epsilons of adaptive and enhanced in part b")
    parser.add_argument("--no-cache", action="store_true",
                        help="recompute every query's loss terms in every explainer (slow)")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    started, t_start = start(), time.perf_counter()
    results = {"settings": {
        "queries": args.queries, "stream": args.stream, "jobs": args.jobs, "parts": args.parts,
        "speed_queries": args.speed_queries, "spread": args.spread,
        "adaptive_epsilons": args.adaptive_epsilons,
        "forms_cache": not args.no_cache,
        "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
        "delta": DELTA, "black_box": "RandomForestClassifier(n_estimators=200, random_state=0) "
        "on the second half of Adult's test split",
        "explanation_rows": "Adult's training split", "queries_from": "the first half of "
        "Adult's test split", "seeds": {"forest": 0, "explainer_random_state": 0}}}
    results["noise"] = print_noise_comparison()
    train, test = load_adult(subset="train"), load_adult(subset="test")
    enc, enc_test = encode_adult(train.data), encode_adult(test.data)
    half = len(enc_test.data) // 2
    X, Z_all = enc.data, enc_test.data[:half]  # the private rows; the queries
    # the black box's rows: disjoint from the explanation rows (and from the queries)
    model = RandomForestClassifier(n_estimators=200, n_jobs=2, random_state=0).fit(
        enc_test.data[half:], test.target[half:])
    # predictions in one thread: the same labels, to the bit, in every explainer's fit
    model.set_params(n_jobs=1)
    cache = None if args.no_cache else FormsCache()

    def fitted(**params):
        params = {"epsilon": 1e9, "delta": DELTA, "bounds": enc.bounds, "random_state": 0,
                  **params}
        explainer = DPLimeExplainer(model, **params).fit(X)
        return explainer if cache is None else cache.attach(explainer)

    # the labels the explainers fit, 2 P(>50K | x) - 1
    labels = fitted()._labels[:, 1].copy()
    assert np.allclose(labels, 2 * model.predict_proba(X)[:, 1] - 1, atol=1e-12)
    Z = Z_all[: args.queries]
    qterms = local_loss_terms(Z, X, labels)
    opt, qbest = optimal_explanation(Z, X, labels, terms=qterms)
    results["settings"].update(explanation_rows_m=int(X.shape[0]), features=int(X.shape[1]),
                               black_box_rows=int(len(enc_test.data) - half),
                               query_pool=int(half))

    if cache is not None:
        print(f"(part a's loss terms shared with the explainers: "
              f"{cache.seed(fitted(), Z, qterms[0], qterms[1], labels)})")

    timings = {}
    for part, run in (("a", lambda: quality(fitted, Z, approximation_loss(qterms, qbest), opt)),
                      ("b", lambda: budget(fitted, Z_all, X, labels, enc.bounds, args, cache)),
                      ("c", lambda: speed(model, X, Z_all, enc.bounds, args.speed_queries))):
        if part in args.parts:
            t0 = time.perf_counter()
            results[{"a": "quality", "b": "budget", "c": "speed"}[part]] = run()
            timings[part] = round(time.perf_counter() - t0, 1)
    results["run"] = run_info(started, time.perf_counter() - t_start)
    results["run"]["seconds_by_part"] = timings
    print(f"\ntotal {results['run']['seconds']:.0f} s ({timings})")
    save(args.out, results)
    print(f"saved {args.out}")


def quality(fitted, Z, approx_loss, opt):
    d = Z.shape[1]
    print(f"a. Quality: {len(Z)} queries, basic, delta={DELTA:g}, against the exact optimum "
          f"({d} columns)")
    print(f"{'eps/query':>9} {'T':>5} {'mean loss':>10} {'top-5 agree':>12} {'s/1000 q':>9}")
    zero = approx_loss(np.zeros_like(Z)).mean()
    print(f"{'phi = 0':>15} {zero:>10.5f} {25 / d:>12.2f}   (no explanation; chance agreement)")
    out = {"queries": len(Z), "strategy": "basic", "zero_loss": float(zero),
           "chance_top5": 25 / d, "rows": []}
    for eps_q, T in [(0.1, 30), (0.1, 100), (1.0, 100), (1.0, 300), (1.0, 500)]:
        explainer = fitted(epsilon_per_query=eps_q, max_iter=T)
        t0 = time.perf_counter()
        phi = 2 * explainer.transform(Z)  # answers in units of P; the loss's labels are 2 P - 1
        per_1000 = (time.perf_counter() - t0) / len(Z) * 1000
        loss = approx_loss(phi).mean()
        print(f"{eps_q:>9g} {T:>5d} {loss:>10.5f} {top_k_agreement(phi, opt):>12.2f} "
              f"{per_1000:>9.1f}", flush=True)
        out["rows"].append({"epsilon_per_query": eps_q, "T": T, "mean_loss": float(loss),
                            "top5": top_k_agreement(phi, opt), "s_per_1000": per_1000})
    return out


def run_stream(fitted, stream, strategy, eps_q, T, reuse):
    """One explainer, total epsilon 1, asked the stream one query at a time."""
    explainer = fitted(epsilon=1.0, epsilon_per_query=eps_q, max_iter=T, strategy=strategy,
                       reuse_distance=reuse)
    curve, phi = [], []
    for z in stream:  # one query at a time, as a user would ask them
        phi.append(2 * explainer.transform(z[None])[0])  # in units of 2 P - 1, as the labels
        curve.append(explainer.epsilon_spent_)
    explainer.__dict__.pop("_forms", None)  # the cache's hook (and the cache) stay here
    # history_ is in answer order; with one query per call that is stream order
    return (explainer, np.array(phi), np.array(explainer.history_["phase"]),
            np.array(explainer.history_["n_iter"]), curve)


def budget(fitted, Z_all, X, labels, bounds, args, cache=None):
    T, reuse = 30, 0.15
    stream = Z_all[: args.stream]
    # basic's answers are independent of the order: its losses are measured on
    # 500 queries spread over the stream (the same queries' distribution)
    spread_idx = np.arange(0, len(stream), max(1, len(stream) // args.spread))[: args.spread]
    spread = stream[spread_idx]
    print(f"\nb. Budget: a stream of {len(stream)} queries, one at a time; total epsilon = 1, "
          f"T = {T}, reuse_distance = {reuse:g}")
    print(f"{'strategy':>9} {'eps/q':>6} {'paid':>5} {'reused':>6} {'non-int':>7} {'steps':>6} "
          f"{'eps spent':>9} {'loss paid':>9} {'reused':>8} {'non-int':>8} {'all':>8} "
          f"{'top-5 paid':>10}")
    curves, runs = {}, []
    out = {"stream": len(stream), "total_epsilon": 1.0, "T": T, "reuse_distance": reuse,
           "spread_queries": len(spread), "runs": [],
           "jobs": args.jobs}
    # the stream's loss terms and optima, once for all runs (explanation_loss, sharing them)
    terms = local_loss_terms(stream, X, labels)
    opt_stream, best = optimal_explanation(stream, X, labels, terms=terms)
    approx_loss = approximation_loss(terms, best)
    if cache is not None:
        # the stream's terms, once more for the explainers (if their inputs are the same)
        seeded = cache.seed(fitted(), stream, terms[0], terms[1], labels)
        print(f"   (the stream's loss terms shared with the explainers: {seeded})")
    # (with the cache, each worker gets a copy of it, holding the stream's terms)
    jobs = args.jobs
    configs = [(s, 0.1) for s in STRATEGIES] + [
        (s, e) for e in args.adaptive_epsilons for s in STRATEGIES[1:]]
    # each stream is asked in order, one query at a time; the streams are independent
    streams = Parallel(n_jobs=jobs)(
        delayed(run_stream)(fitted, stream, s, e, T, reuse) for s, e in configs)
    for (strategy, eps_q), (explainer, phi, phase, steps, curve) in zip(configs, streams):
        loss = local_loss(phi, *terms) - best
        paid = phase == "interactive"
        if eps_q == 0.1:
            curves[strategy] = curve
        runs.append((strategy, eps_q, int(paid.sum()), loss[paid].mean()))
        by_phase = [loss[phase == p].mean() if np.any(phase == p) else np.nan
                    for p in ("interactive", "reused", "noninteractive")]
        print(f"{strategy:>9} {eps_q:>6g} {paid.sum():>5d} {np.sum(phase == 'reused'):>6d} "
              f"{np.sum(phase == 'noninteractive'):>7d} {steps[paid].mean():>6.1f} "
              f"{explainer.epsilon_spent_:>9.4f} {by_phase[0]:>9.5f} {by_phase[1]:>8.5f} "
              f"{by_phase[2]:>8.5f} {loss.mean():>8.5f} "
              f"{top_k_agreement(phi[paid], opt_stream[paid]):>10.2f}", flush=True)
        nan_none = lambda v: None if np.isnan(v) else float(v)  # noqa: E731
        out["runs"].append({
            "strategy": strategy, "epsilon_per_query": eps_q, "paid": int(paid.sum()),
            "reused": int(np.sum(phase == "reused")),
            "noninteractive": int(np.sum(phase == "noninteractive")),
            "steps_paid": float(steps[paid].mean()), "epsilon_spent": explainer.epsilon_spent_,
            "loss_paid": nan_none(by_phase[0]), "loss_reused": nan_none(by_phase[1]),
            "loss_noninteractive": nan_none(by_phase[2]), "loss_all": float(loss.mean()),
            "top5_paid": top_k_agreement(phi[paid], opt_stream[paid])})
        if strategy == "basic":
            n_basic = int(paid.sum())
            # the paper's Algorithm 4 on the same history, for comparison
            rest = phase == "noninteractive"
            past, answers, _ = explainer._interactive()
            proxy, _ = optimal_explanation(stream[rest], past, np.einsum("ij,ij->i", answers, past),
                                           radius=1.0)
            scale = np.where(bounds[1] > bounds[0], bounds[1] - bounds[0], 1)
            paper = approx_loss(proxy / scale, rest).mean()
            none = approx_loss(np.zeros_like(stream[rest]), rest).mean()
            basic_noninteractive = (by_phase[2], paper, none)

    print(f"   non-interactive answers after basic: nearest past answer (skdpx) "
          f"{basic_noninteractive[0]:.5f}; the paper's proxy fit (Algorithm 4) "
          f"{basic_noninteractive[1]:.5f}; no explanation (phi = 0) {basic_noninteractive[2]:.5f}")
    out["noninteractive_after_basic"] = dict(zip(("nearest_answer", "paper_proxy_fit", "zero"),
                                                 map(float, basic_noninteractive)))

    # What a history can tell about a new query's explanation, at best: a
    # warm start from the *exact* optima of h past queries (not DP), for the
    # last quarter of the stream. A DP history is noisier than this.
    test = np.arange(3 * len(stream) // 4, len(stream))
    print("   a warm start's loss from a history of exact (non-DP) optima at the h first "
          f"queries, for the last {len(test)}: the average of the k nearest past optima")
    print(f"{'h':>9} " + " ".join(f"{'k = ' + str(k):>9}" for k in (1, 5, 20)))
    out["exact_history"] = {"test_queries": len(test), "k": [1, 5, 20], "rows": []}
    for h in (100, 250, 1000):
        near = np.argsort(euclidean_distances(stream[test], stream[:h]), axis=1)
        row = [approx_loss(opt_stream[:h][near[:, :k]].mean(axis=1), test).mean()
               for k in (1, 5, 20)]
        print(f"{h:>9d} " + " ".join(f"{v:>9.5f}" for v in row), flush=True)
        out["exact_history"]["rows"].append({"h": h, "loss": [float(v) for v in row]})
    # ... and what such a history would allow: 5 times basic's answers, each a
    # warm start from the nearest exact optimum plus n noisy steps, all of them
    # composing to epsilon 1 (the history itself is not paid for: a bound)
    h = 5 * n_basic
    near = np.argsort(euclidean_distances(stream[test], stream[:h]), axis=1)[:, 0]
    H, g = terms[0][test], terms[1][test]
    print(f"   with the exact optima of the first {h} queries (5 times basic's answers) as "
          f"warm starts, then n noisy steps, {h} such answers composing to epsilon 1:")
    cells = []
    out["exact_warm_start_bound"] = {"history": h, "answers": h, "total_epsilon": 1.0,
                                     "test_queries": len(test), "rows": []}
    for n in (3, 5, 10):
        z = calibrate_noise(1.0, DELTA, steps=h * n)
        # a bound, not a release to publish: its n steps for each of the test
        # queries are committed to a ledger of their own
        ledger = EstimatorLedger(np.inf, DELTA, PrivacyLedger(delta=DELTA))
        commitment = ledger.commit(gaussian_event(z, steps=n * len(test)), f"bound, n = {n}")
        phi = dpgd_explain(H, g, noise_multiplier=z, sensitivity=gradient_sensitivity(len(X)),
                           radius=1.0, n_iter=n, smoothness=1.0, noise=noise_source(0),
                           commitment=commitment, phi0=opt_stream[:h][near])
        bound = float(approx_loss(phi, test).mean())
        cells.append(f"n = {n}: {bound:.5f}")
        out["exact_warm_start_bound"]["rows"].append({"steps": n, "mean_loss": bound})
    print("   " + "  ".join(cells), flush=True)

    steps = (20, T, 50, 100)
    print(f"\n   basic at other epsilon_per_query and T: mean loss on {len(spread)} queries "
          "spread over the stream, and how many answers a total epsilon = 1 pays for (it "
          "depends on epsilon_per_query only)")
    print(f"{'eps/query':>9} {'answers':>8} " + " ".join(f"{'T = ' + str(t):>9}" for t in steps))
    sweep = []
    out["basic_sweep"] = {"T": list(steps), "rows": []}
    for e in [0.005, 0.01, 0.02, 0.03, 0.04, 0.05, 0.07, 0.1, 0.2]:
        row = []
        for t in steps:
            explainer = fitted(epsilon_per_query=e, max_iter=t)
            row.append(approx_loss(2 * explainer.transform(spread), spread_idx).mean())  # 2 P - 1
        sweep.append((n_affordable(explainer, 1.0), *row))
        print(f"{e:>9g} {sweep[-1][0]:>8d} " + " ".join(f"{v:>9.5f}" for v in row), flush=True)
        out["basic_sweep"]["rows"].append({"epsilon_per_query": e, "answers": int(sweep[-1][0]),
                                           "mean_loss": [float(v) for v in row]})
    sweep = np.array(sweep)
    counts = sweep[:, 0]
    print("   paid answers at equal mean loss (basic's count interpolated in log scale):")
    out["equal_loss"] = []
    for name, curve in [(f"T = {T}", sweep[:, 2]), ("best T", sweep[:, 1:].min(axis=1))]:
        order = np.argsort(curve)
        for strategy, eps_q, n_paid, L in runs:
            if strategy == "basic":
                continue
            equal = np.exp(np.interp(L, curve[order], np.log(counts[order])))
            where = ("" if curve.min() <= L <= curve.max() else
                     " (a lower bound: below the sweep)" if L < curve.min() else
                     " (an upper bound: above the sweep)")
            print(f"   against basic at {name}: {strategy} at {eps_q:g} pays for {n_paid} answers "
                  f"at loss {L:.5f}; basic pays for {equal:.0f} at that loss: ratio "
                  f"{n_paid / equal:.2f}{where}")
            out["equal_loss"].append({
                "against": name, "strategy": strategy, "epsilon_per_query": eps_q,
                "paid": n_paid, "loss": float(L), "basic_answers": float(equal),
                "ratio": float(n_paid / equal),
                "in_sweep": bool(curve.min() <= L <= curve.max())})

    if args.png:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(5.5, 3.8))
        for strategy in STRATEGIES:
            ax.plot(np.arange(1, len(stream) + 1), curves[strategy], label=strategy)
        ax.set_xlabel("queries asked")
        ax.set_ylabel("cumulative epsilon")
        ax.set_title(f"DPLimeExplainer on Adult, epsilon_per_query = 0.1, T = {T}")
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.png, dpi=120)
        print(f"saved {args.png}")
    # the spending curves at 0.1 per query (every 10th query, and the last)
    idx = sorted(set(range(9, len(stream), 10)) | {len(stream) - 1})
    out["spending_curves"] = {"epsilon_per_query": 0.1, "queries_asked": [i + 1 for i in idx],
                              **{s: [float(curves[s][i]) for i in idx] for s in STRATEGIES}}
    return out


if __name__ == "__main__":
    main()
