"""PrivRecourse on Adult: the paper's Table 2 layout, the constrained run, and speed.

Pentyala et al. (2023), "Privacy-Preserving Algorithmic Recourse", Table 2:
FACE (not private) / the noisy-data baseline / DP synthetic data /
PrivRecourse on Adult's five continuous features (age, education-num,
capital-gain, capital-loss, hours-per-week), public min-max bounds, 500
clusters, epsilon 1 for the model and 1 for the clustering.

Setup (as the paper, unless said):
- The black box is the one PrivRecourse trains: a logistic regression trained
  by DP-SGD, (1, 1e-5)-DP on its own, on the full training split; all methods
  use it. PrivRecourse gets epsilon = 2 in all (model_share 0.5), its
  clustering runs on the full training split, and its noise is calibrated so
  that model and clustering compose to exactly epsilon 2 (the paper's 1 + 1 by
  basic composition); the clustering's own epsilon is printed. Add-or-remove
  neighbours (the default ledger).
- FACE and the noisy baseline build their graph on 2,000 sampled training
  rows (the paper's sample). The noisy baseline adds Laplace noise to every
  coordinate of those rows, epsilon 1 split equally over the 5 features
  (sensitivity 1 in the unit cube), then clips to the bounds.
- DP synthetic data (MST, the paper's DP-SD) runs when smartnoise-synth is
  importable (``--synth``; it is heavy: it pulls in torch); else its row says
  why not.
- Queries: test rows that the black box denies (``--queries`` drawn per seed).
- The metrics are :mod:`skdpx.metrics` on the unit cube: PDensity under a
  Gaussian KDE of the full training split (``--bandwidth``), PDistanceManifold
  (L1 to the nearest training row), PL0/PL1/PL2, redundancy and yNN; over the
  successful paths. Success counts every query. The KDE and the nearest-row
  index are fitted on the distinct training rows (11,107 of 32,561), the KDE
  weighted by their multiplicity: the same density and distances with a
  third of the kernels. (scikit-learn's tree KDE agrees with an exact sum to
  about 1e-11 at the densities of test rows; far from the data, below a
  log-density of about -17, it is approximate either way, by up to 0.2 in
  our check: points far from the data, the noisy baseline's above all.)

The "k-means, not DP" row is the same pipeline with exact k-means
(epsilon = inf): the ceiling of any sound clustering whose centres are means.

Also measured: PrivRecourse with the other ``--sweep`` count thresholds
(the same seed, so the same DP centres: only the post-processing filter
differs), the black box's test accuracy with the default ``model_C=1``, and
the speed of ``explain`` on ``--speed-queries`` queries against one Dijkstra
per query (the paper's Algorithm 2) on seed 0's unconstrained graph.

Prints the tables and saves every figure (per seed and as means), the
settings, seeds, date, runtime and versions to
``benchmarks/results/recourse_adult.json`` (``--out``), which the docs render
(doc/benchmarks/recourse.rst).

Run: python benchmarks/recourse_adult.py [--queries 500] [--seeds 3] [--synth]

Runtime: the saved results (``--queries 200 --seeds 2``, DP-SD not run:
smartnoise-synth is not installed) took 21.5 minutes (1,290 s) on a shared
2-core machine, under nice -n 10 next to other jobs (load average about 5;
10 minutes for the first seed). Most of it is the density weights of the
two fully connected 2,000-row graphs (FACE and the baseline) per seed and
setting. The default run (500 queries, 3 seeds) was not made: at that pace
it would take well over 40 minutes here. ``recourse_density.py`` takes the
same seeds further: PDensity per KDE bandwidth and the gap to FACE.
"""

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.sparse.csgraph import dijkstra
from sklearn.neighbors import KernelDensity, NearestNeighbors

from skdpx import PrivRecourse
from skdpx.datasets import encode_adult, load_adult
from skdpx.metrics import path_density, path_distance, path_manifold_distance, redundancy, ynn
from skdpx.privacy import compute_epsilon, gaussian_event
from skdpx.recourse import RecourseGraph, recourse_graph

from _run_record import run_info, save, start

FEATURES = ["age", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
INCREASING = ["age", "education-num"]
COLUMNS = ["success", "Den", "Dist", "PL1", "PL2", "PL0", "Red", "yNN"]
RESULTS = Path(__file__).parent / "results" / "recourse_adult.json"
#: the benchmark's fixed settings (the command line sets the others)
FIXED = {
    "epsilon": 2.0, "delta": 1e-5, "model_share": 0.5, "model_C": 10.0,
    "relation": "add_or_remove", "graph_sample_rows": 2000, "baseline_epsilon": 1.0,
    "exact_kmeans_max_iter": 10, "exact_kmeans_count_threshold": 0.0,
    "constrained": {"increasing": INCREASING, "distance_threshold": 0.4},
    "metrics_space": "unit cube of the public min-max bounds",
    "ynn_neighbors": 5,
}


def load():
    train, test = load_adult(), load_adult(subset="test")
    enc_tr = encode_adult(train.data, features=FEATURES, scale=False)
    enc_te = encode_adult(test.data, features=FEATURES, scale=False)
    return enc_tr.data, train.target, enc_te.data, test.target, enc_tr.bounds


def graph_paths(nodes01, model, queries01, lower, upper, *, threshold, increasing=()):
    """FACE on public points with the same graph code: one path per query (unit cube)."""
    to_input = lambda Z: lower + Z * (upper - lower)  # noqa: E731
    favorable = model.predict(to_input(nodes01)) == 1
    graph = recourse_graph(nodes01, distance_threshold=threshold, increasing=increasing)
    routes = RecourseGraph(nodes01, graph, np.flatnonzero(favorable))
    found = routes.search(queries01)
    reach, lengths, flat = found.reach, found.lengths, found.flat
    node_lists = np.split(flat, np.cumsum(lengths)[:-1])
    paths = [np.vstack([q, nodes01[nl]]) for q, nl in zip(queries01, node_lists)]
    return paths, reach, routes


def metrics(paths, success, queries01, model, lower, upper, kde, nn, X01):
    """The Table 2 figures of one method (unit cube; the black box in input units)."""
    ok = [p for p, s in zip(paths, success) if s]
    row = {"success": float(np.mean(success))}
    if not ok:
        return row
    to_input = lambda Z: lower + Z * (upper - lower)  # noqa: E731
    cf = np.full_like(queries01, np.nan)
    cf[success] = np.array([p[-1] for p in ok])

    class Scaled:  # the black box on unit-cube points
        @staticmethod
        def predict(Z):
            return model.predict(to_input(Z))

    row.update({
        "Den": path_density(ok, kde=kde), "Dist": path_manifold_distance(ok, nn=nn),
        "PL1": path_distance(ok, ord=1), "PL2": path_distance(ok, ord=2),
        "PL0": path_distance(ok, ord=0), "Red": redundancy(queries01, cf, Scaled),
        "yNN": ynn(cf, X01, Scaled, n_neighbors=FIXED["ynn_neighbors"]),
    })
    return {k: float(v) for k, v in row.items()}


def fit_privrecourse(X, y, lower, upper, seed, args, *, threshold, increasing,
                     count_threshold=None, model_C=FIXED["model_C"]):
    """PrivRecourse as the benchmark runs it, and its fit's public figures."""
    t0 = time.perf_counter()
    rec = PrivRecourse(
        n_clusters=args.clusters, epsilon=FIXED["epsilon"], delta=FIXED["delta"],
        model_share=FIXED["model_share"], model_C=model_C, distance_threshold=threshold,
        increasing_features=increasing, max_iter=args.max_iter,
        count_threshold=args.count_threshold if count_threshold is None else count_threshold,
        bounds=(lower, upper), random_state=seed).fit(X, y)
    fit_s = time.perf_counter() - t0
    clustering_epsilon = compute_epsilon(gaussian_event(rec.noise_multiplier_,
                                                        steps=rec.max_iter + 1), FIXED["delta"])
    info = {
        "epsilon_spent": float(rec.epsilon_spent_), "delta_spent": float(rec.delta_spent_),
        "clustering_epsilon": float(clustering_epsilon),
        "noise_multiplier": float(rec.noise_multiplier_),
        "count_noise_std": float(rec.count_noise_std_), "n_clusters": int(rec.n_clusters_),
        "nodes": int(len(rec.cluster_centers_)), "candidates": int(len(rec.candidates_)),
        "edges": int(rec.graph_.nnz), "fit_s": round(fit_s, 2),
    }
    return rec, info


def mean_table(rows, group):
    """Mean of every column over the seeds, per ``group`` key (as printed)."""
    out = []
    for key in dict.fromkeys(tuple(r[g] for g in group) for r in rows):
        mine = [r for r in rows if tuple(r[g] for g in group) == key]
        entry = dict(zip(group, key))
        entry["n_seeds"] = len(mine)
        for c in COLUMNS:
            vals = [r[c] for r in mine if c in r]
            entry[c] = float(np.mean(vals)) if vals else None
        for c in ("nodes",):
            vals = [r[c] for r in mine if c in r]
            if vals:
                entry[c] = float(np.mean(vals))
        out.append(entry)
    return out


def print_table(entries, first, title):
    print(f"\n### {title}\n")
    print(f"| {first} | " + " | ".join(COLUMNS) + " |")
    print("|---|" + "---|" * len(COLUMNS))
    for e in entries:
        vals = ["nan" if e[c] is None else f"{e[c]:.3f}" for c in COLUMNS]
        print(f"| {e[first]} | " + " | ".join(vals) + " |")


def seed_draws(rng, model, Xte, X01, lower, upper, n_queries):
    """A seed's draws, in this order from ``rng``: the denied test queries (and in
    the unit cube), the FACE graph's sample of training rows, and the noisy
    baseline's copy of it (Laplace noise, clipped). recourse_density.py makes the
    same draws through this function."""
    denied = np.flatnonzero(model.predict(Xte) != 1)
    Q = Xte[rng.choice(denied, n_queries, replace=False)]
    Q01 = (np.clip(Q, lower, upper) - lower) / (upper - lower)
    sample = X01[rng.choice(len(X01), FIXED["graph_sample_rows"], replace=False)]
    noisy = np.clip(sample + rng.laplace(0.0, len(FEATURES) / FIXED["baseline_epsilon"],
                                         size=sample.shape), 0, 1)
    return Q, Q01, sample, noisy


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--clusters", type=int, default=500)
    parser.add_argument("--max-iter", type=int, default=2)
    parser.add_argument("--count-threshold", type=float, default=5.0)
    parser.add_argument("--sweep", type=float, nargs="*", default=[2.0, 10.0],
                        help="other count_threshold values to run PrivRecourse with")
    parser.add_argument("--bandwidth", type=float, default=0.05)
    parser.add_argument("--speed-queries", type=int, default=10_000)
    parser.add_argument("--synth", action="store_true", help="also run DP-SD (smartnoise-synth MST)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    record, started = start(), time.perf_counter()  # the commit the run starts from
    warnings.filterwarnings("ignore", message="random_state=")
    warnings.filterwarnings("ignore", message="accountant=None")
    warnings.filterwarnings("ignore", message="classes=None")

    X, y, Xte, yte, (lower, upper) = load()
    X01 = (X - lower) / (upper - lower)
    incr = [FEATURES.index(f) for f in INCREASING]
    print(f"Adult, {len(X)} training rows, features {FEATURES}; KDE bandwidth {args.bandwidth} "
          f"on the unit cube")
    # the KDE and the nearest row of the training split, on its distinct rows (weighted by
    # their multiplicity for the KDE): the same density and distances, fewer kernels
    distinct, multiplicity = np.unique(X01, axis=0, return_counts=True)
    kde = KernelDensity(bandwidth=args.bandwidth).fit(distinct, sample_weight=multiplicity)
    nn = NearestNeighbors(n_neighbors=1, metric="manhattan").fit(distinct)

    settings = [("none", None, ()), ("age, edu up; thr 0.4", 0.4, incr)]
    rows, sweep_rows, fits_info, black_box, notes = [], [], [], [], []
    synth_status = {"ran": False, "reason": "not requested (--synth)"}
    for seed in range(args.seeds):
        rng = np.random.RandomState(seed)
        fits = {}
        for name, thr, inc in settings:
            fits[name], info = fit_privrecourse(X, y, lower, upper, seed, args, threshold=thr,
                                                increasing=inc)
            fits_info.append({"seed": seed, "constraints": name, **info})
        rec = fits["none"]
        model = rec.estimator_
        # the black box with the default model_C=1 (the same seed, so the same batches and noise)
        default_c = fit_privrecourse(X, y, lower, upper, seed, args, threshold=None,
                                     increasing=(), model_C=1.0)[0]
        black_box.append({
            "seed": seed, "model_epsilon": float(rec.model_epsilon_),
            "model_n_steps": int(rec.model_n_steps_),
            "model_noise_multiplier": float(rec.model_noise_multiplier_),
            "model_sample_rate": float(rec.model_sample_rate_),
            "test_accuracy": float(model.score(Xte, yte)),
            "test_accuracy_model_C_1": float(default_c.estimator_.score(Xte, yte)),
        })
        Q, Q01, sample, noisy = seed_draws(rng, model, Xte, X01, lower, upper, args.queries)
        synth = None
        if args.synth:
            synth, synth_status = synthetic(X, lower, upper, rng)
        for name, thr, inc in settings:
            threshold = np.inf if thr is None else thr
            for method, nodes in [("FACE", sample), ("Baseline", noisy), ("DP-SD", synth)]:
                if nodes is None:
                    continue
                paths, success, _ = graph_paths(nodes, model, Q01, lower, upper,
                                                threshold=threshold, increasing=inc)
                rows.append({"method": method, "constraints": name, "seed": seed,
                             "nodes": len(nodes),
                             **metrics(paths, success, Q01, model, lower, upper, kde, nn, X01)})
            # the method's ceiling: the same pipeline with exact k-means (epsilon = inf,
            # 10 Lloyd iterations, every non-empty centre a node) and the same black box
            exact = PrivRecourse(model, n_clusters=args.clusters, epsilon=np.inf,
                                 max_iter=FIXED["exact_kmeans_max_iter"],
                                 count_threshold=FIXED["exact_kmeans_count_threshold"],
                                 distance_threshold=thr, increasing_features=inc,
                                 bounds=(lower, upper), random_state=seed).fit(X)
            variants = [("PrivRecourse", args.count_threshold, fits[name]),
                        ("k-means, not DP", None, exact)]
            for ct in args.sweep:  # the count filter: the same DP centres, filtered otherwise
                variants.append(("PrivRecourse", ct, fit_privrecourse(
                    X, y, lower, upper, seed, args, threshold=thr, increasing=inc,
                    count_threshold=ct)[0]))
            for method, ct, rec_ in variants:
                res = rec_.explain(Q)
                paths = [(p - lower) / (upper - lower) for p in res.paths]
                row = {"method": method, "constraints": name, "seed": seed,
                       "nodes": int(len(rec_.cluster_centers_)),
                       **metrics(paths, res.success, Q01, model, lower, upper, kde, nn, X01)}
                if ct is not None and method == "PrivRecourse":
                    sweep_rows.append({**row, "count_threshold": float(ct)})
                if ct == args.count_threshold or method != "PrivRecourse":
                    rows.append(row)
        print(f"seed {seed} done ({time.perf_counter() - started:.0f} s)", flush=True)
    if not args.synth:
        notes.append("DP-SD: not run (pass --synth with smartnoise-synth installed)")
    elif not synth_status["ran"]:
        notes.append(f"DP-SD: {synth_status['reason']}")

    tables = {}
    for name, _, _ in settings:
        tables[name] = mean_table([r for r in rows if r["constraints"] == name], ["method"])
        print_table(tables[name], "method", f"Constraints: {name}; mean over {args.seeds} "
                    f"seeds, {args.queries} denied test queries each")
    sweep = mean_table(sweep_rows, ["count_threshold", "constraints"])
    sweep.sort(key=lambda e: (e["constraints"] != "none", e["count_threshold"]))
    print("\n### PrivRecourse's count_threshold (the same DP centres; mean over seeds)\n")
    print("| count_threshold | constraints | nodes | success | Den | Dist |")
    print("|---|---|---|---|---|---|")
    for e in sweep:
        print(f"| {e['count_threshold']:g} | {e['constraints']} | {e['nodes']:.1f} | "
              f"{e['success']:.3f} | {e['Den']:.3f} | {e['Dist']:.3f} |")
    print()
    bb = black_box
    notes.append(f"black box: DP-SGD logistic regression at epsilon {bb[0]['model_epsilon']:g} "
                 f"({bb[0]['model_n_steps']} steps, noise multiplier "
                 f"{bb[0]['model_noise_multiplier']:.2f}), test accuracy "
                 f"{np.mean([b['test_accuracy'] for b in bb]):.3f} (model_C=10; "
                 f"{np.mean([b['test_accuracy_model_C_1'] for b in bb]):.3f} with model_C=1; "
                 f"mean of {len(bb)} seeds; paper: 0.805)")
    f0 = fits_info[0]
    notes.append(f"PrivRecourse (seed 0): epsilon spent {f0['epsilon_spent']:.3f} (model + "
                 f"clustering, PLD); the clustering alone {f0['clustering_epsilon']:.3f}; noise "
                 f"multiplier {f0['noise_multiplier']:.2f}; count noise std "
                 f"{f0['count_noise_std']:.2f}; {f0['nodes']} of {args.clusters} centres kept "
                 f"as nodes, {f0['candidates']} favourable; fit {f0['fit_s']:.1f} s")
    for note in notes:
        print("-", note)
    speed_result = speed(fits["none"], Xte, lower, upper, args.speed_queries)
    runtime = time.perf_counter() - started
    print(f"\nruntime {runtime:.0f} s")
    saved = {
        "benchmark": "benchmarks/recourse_adult.py",
        "run": run_info(record, runtime, packages=("dp-accounting", "opendp", "smartnoise-synth")),
        "settings": {**{k: (str(v) if isinstance(v, Path) else v)
                        for k, v in vars(args).items()}, **FIXED,
                     "n_train": int(len(X)), "n_test": int(len(Xte)), "features": FEATURES},
        "seeds": list(range(args.seeds)),
        "synth": synth_status,
        "black_box": black_box,
        "fits": fits_info,
        "rows": rows,
        "tables": tables,
        "count_threshold_rows": sweep_rows,
        "count_threshold": sweep,
        "speed": speed_result,
        "notes": notes,
    }
    save(args.out, saved)
    print(f"saved {args.out}")


def synthetic(X, lower, upper, rng, *, epsilon=1.0, delta=1e-5, n_rows=2000, bins=16):
    """DP-SD: MST synthetic rows (2,000, as the paper) at epsilon 1, in the unit cube.

    smartnoise-synth's MST (private-pgm) needs discrete columns. Every feature
    is binned on its public integer range with public edges only: ``bins``
    equal-width bins, except that capital-gain and capital-loss (over 90% zero)
    get the bin {0} plus ``bins - 1`` equal-width bins above it, and
    education-num its 16 integer values. snsynth sees the bin codes through
    BinTransformers with given bounds (one bin per code), so its preprocessor
    reads no bounds from the data and spends no epsilon: the whole (epsilon,
    delta) goes to MST. Sampled codes map back to an integer drawn uniformly
    in the bin (post-processing). Returns the rows (None if smartnoise-synth
    is not importable) and a status dict for the saved results.
    """
    try:
        import pandas as pd
        from snsynth import Synthesizer
        from snsynth.transform import BinTransformer, TableTransformer
    except ImportError as exc:
        return None, {"ran": False, "reason": f"smartnoise-synth not importable ({exc})"}
    lo, hi = np.round(lower).astype(int), np.round(upper).astype(int)
    edges = []  # integer bin edges on the public range: bin i is [e[i], e[i + 1])
    for f, a, b in zip(FEATURES, lo, hi):
        if b - a + 1 <= bins:  # education-num: one bin per value
            e = np.arange(a, b + 2)
        elif f in ("capital-gain", "capital-loss"):  # isolate 0 (the bulk)
            e = np.concatenate([[a], np.round(np.linspace(a + 1, b + 1, bins)).astype(int)])
        else:
            e = np.round(np.linspace(a, b + 1, bins + 1)).astype(int)
        edges.append(np.unique(e))
    Xi = np.clip(np.round(X), lo, hi).astype(int)
    codes = pd.DataFrame({f: np.searchsorted(e, Xi[:, j], side="right") - 1
                          for j, (f, e) in enumerate(zip(FEATURES, edges))})
    # identity on codes 0..k-1 with a public domain of size k (no data-derived bounds)
    transformer = TableTransformer([BinTransformer(bins=len(e) - 1, lower=0, upper=len(e) - 1)
                                    for e in edges])
    synth = Synthesizer.create("mst", epsilon=epsilon, delta=delta)
    with warnings.catch_warnings():  # snsynth hands private-pgm (mbi) a DataFrame
        warnings.filterwarnings("ignore", "Pandas dataframe inputs are deprecated", UserWarning)
        t0 = time.perf_counter()
        synth.fit(codes, transformer=transformer, preprocessor_eps=0.0)
        fit_s = time.perf_counter() - t0
        out = synth.sample(n_rows)[FEATURES].to_numpy(float)
    # the preprocessor spent nothing: MST got the whole budget
    assert synth.epsilon == epsilon and transformer.odometer.spent[0] == 0.0
    rows = np.empty_like(out)
    for j, e in enumerate(edges):
        c = np.clip(np.floor(out[:, j]).astype(int), 0, len(e) - 2)  # bin centre -> code
        rows[:, j] = e[c] + np.floor(rng.uniform(size=len(c)) * (e[c + 1] - e[c]))
    status = {"ran": True, "epsilon": epsilon, "delta": delta, "n_rows": n_rows,
              "bins": dict(zip(FEATURES, [len(e) - 1 for e in edges])),
              "fit_s": round(fit_s, 1),
              "description": "smartnoise-synth MST, all of (epsilon, delta) (preprocessor "
                             "epsilon 0, public bins); capital-gain/loss: {0} + equal width "
                             "above; values uniform in the bin"}
    return (rows - lower) / (upper - lower), status


def speed(rec, Xte, lower, upper, n):
    """explain() over a batch of n queries against one Dijkstra per query (the paper)."""
    rng = np.random.RandomState(0)
    Q = Xte[rng.choice(len(Xte), n, replace=True)]
    rec.explain(Q[:100])  # warm up
    t0 = time.perf_counter()
    res = rec.explain(Q)
    ours = (time.perf_counter() - t0) / n
    # the paper's Algorithm 2: a Dijkstra from the start node per query
    m = min(n, 1000)
    routes = rec._routes
    Q01 = (np.clip(Q[:m], lower, upper) - lower) / (upper - lower)
    t0 = time.perf_counter()
    starts = routes.start_nodes(Q01)
    for s in starts:
        if s >= 0:
            dist = dijkstra(rec.graph_, directed=True, indices=s)
            dist[routes.candidates].argmin()
    theirs = (time.perf_counter() - t0) / m
    print(f"\n### Speed ({n} queries in one explain(); side by side)\n")
    print("| method | ms per query |")
    print("|---|---|")
    print(f"| PrivRecourse.explain (precomputed paths) | {1e3 * ours:.4f} |")
    print(f"| one Dijkstra per query ({m} queries) | {1e3 * theirs:.4f} |")
    print(f"\nratio (ours / per-query Dijkstra): {ours / theirs:.3f}; "
          f"success {res.success.mean():.3f}; {len(rec.cluster_centers_)} nodes")
    return {"queries": int(n), "dijkstra_queries": int(m), "explain_ms_per_query": 1e3 * ours,
            "dijkstra_ms_per_query": 1e3 * theirs, "ratio": ours / theirs,
            "success": float(res.success.mean()), "nodes": int(len(rec.cluster_centers_)),
            "graph": "seed 0's unconstrained fit (fully connected)"}


if __name__ == "__main__":
    main()
