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
- Queries: test rows that the black box denies (the first ``--queries``).
- The metrics are :mod:`skdpx.metrics` on the unit cube: PDensity under a
  Gaussian KDE of the full training split (``--bandwidth``), PDistanceManifold
  (L1 to the nearest training row), PL0/PL1/PL2, redundancy and yNN; over the
  successful paths. Success counts every query.

The last row, "k-means, not DP", is the same pipeline with exact k-means
(epsilon = inf): the ceiling of any sound clustering whose centres are means.

Run: python benchmarks/recourse_adult.py [--queries 500] [--seeds 3] [--synth]
"""

import argparse
import time

import numpy as np
from scipy.sparse.csgraph import dijkstra
from sklearn.neighbors import KernelDensity, NearestNeighbors

from skdpx import PrivRecourse
from skdpx.datasets import encode_adult, load_adult
from skdpx.metrics import path_density, path_distance, path_manifold_distance, redundancy, ynn
from skdpx.privacy import compute_epsilon, gaussian_event
from skdpx.recourse import RecourseGraph, recourse_graph

FEATURES = ["age", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
INCREASING = ["age", "education-num"]


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
    _, reach, lengths, flat = routes.route(queries01)
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
        "yNN": ynn(cf, X01, Scaled, n_neighbors=5),
    })
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--clusters", type=int, default=500)
    parser.add_argument("--max-iter", type=int, default=2)
    parser.add_argument("--count-threshold", type=float, default=5.0)
    parser.add_argument("--bandwidth", type=float, default=0.05)
    parser.add_argument("--speed-queries", type=int, default=10_000)
    parser.add_argument("--synth", action="store_true", help="also run DP-SD (smartnoise-synth MST)")
    args = parser.parse_args()

    X, y, Xte, yte, (lower, upper) = load()
    X01 = (X - lower) / (upper - lower)
    incr = [FEATURES.index(f) for f in INCREASING]
    print(f"Adult, {len(X)} training rows, features {FEATURES}; KDE bandwidth {args.bandwidth} "
          f"on the unit cube")
    kde = KernelDensity(bandwidth=args.bandwidth).fit(X01)
    nn = NearestNeighbors(n_neighbors=1, metric="manhattan").fit(X01)

    methods = ["FACE", "Baseline", "DP-SD", "PrivRecourse", "k-means, not DP"]
    settings = [("none", None, ()), ("age, edu up; thr 0.4", 0.4, incr)]
    table = {(m, s[0]): [] for m in methods for s in settings}
    notes = []
    for seed in range(args.seeds):
        rng = np.random.RandomState(seed)
        fits = {}
        for name, thr, inc in settings:
            t0 = time.perf_counter()
            fits[name] = PrivRecourse(
                n_clusters=args.clusters, epsilon=2.0, delta=1e-5, model_share=0.5, model_C=10.0,
                distance_threshold=thr, increasing_features=inc, max_iter=args.max_iter,
                count_threshold=args.count_threshold, bounds=(lower, upper),
                random_state=seed).fit(X, y)
            fit_s = time.perf_counter() - t0
        rec = fits["none"]
        model = rec.estimator_
        if seed == 0:
            clus_eps = compute_epsilon(gaussian_event(rec.noise_multiplier_,
                                                      steps=rec.max_iter + 1), 1e-5)
            notes.append(f"black box: DP-SGD logistic regression at epsilon "
                         f"{rec.model_epsilon_:g} ({rec.model_n_steps_} steps, noise multiplier "
                         f"{rec.model_noise_multiplier_:.2f}), test accuracy "
                         f"{model.score(Xte, yte):.3f} (paper: 0.805)")
            notes.append(f"PrivRecourse: epsilon spent {rec.epsilon_spent_:.3f} (model + "
                         f"clustering, PLD); the clustering alone {clus_eps:.3f}; noise "
                         f"multiplier {rec.noise_multiplier_:.2f}; {len(rec.cluster_centers_)} "
                         f"of {args.clusters} centres kept as nodes, "
                         f"{len(rec.candidates_)} favourable; fit {fit_s:.1f} s")
        denied = np.flatnonzero(model.predict(Xte) != 1)
        Q = Xte[rng.choice(denied, args.queries, replace=False)]
        Q01 = (np.clip(Q, lower, upper) - lower) / (upper - lower)
        sample = X01[rng.choice(len(X01), 2000, replace=False)]
        noisy = np.clip(sample + rng.laplace(0.0, len(FEATURES) / 1.0, size=sample.shape), 0, 1)
        synth = synthetic(X, lower, upper, rng, notes if seed == 0 else []) if args.synth else None
        for name, thr, inc in settings:
            threshold = np.inf if thr is None else thr
            for method, nodes in [("FACE", sample), ("Baseline", noisy), ("DP-SD", synth)]:
                if nodes is None:
                    continue
                paths, success, _ = graph_paths(nodes, model, Q01, lower, upper,
                                                threshold=threshold, increasing=inc)
                table[(method, name)].append(metrics(paths, success, Q01, model, lower, upper,
                                                     kde, nn, X01))
            # the method's ceiling: the same pipeline with exact k-means (epsilon = inf,
            # 10 Lloyd iterations, every non-empty centre a node) and the same black box
            exact = PrivRecourse(model, n_clusters=args.clusters, epsilon=np.inf, max_iter=10,
                                 count_threshold=0.0, distance_threshold=thr,
                                 increasing_features=inc, bounds=(lower, upper),
                                 random_state=seed).fit(X)
            for method, rec_ in [("PrivRecourse", fits[name]), ("k-means, not DP", exact)]:
                res = rec_.explain(Q)
                paths = [(p - lower) / (upper - lower) for p in res.paths]
                table[(method, name)].append(metrics(paths, res.success, Q01, model, lower,
                                                     upper, kde, nn, X01))
    if not args.synth:
        notes.append("DP-SD: not run (pass --synth with smartnoise-synth installed)")

    cols = ["success", "Den", "Dist", "PL1", "PL2", "PL0", "Red", "yNN"]
    for name, _, _ in settings:
        print(f"\n### Constraints: {name}; mean over {args.seeds} seeds, {args.queries} denied "
              f"test queries each\n")
        print("| method | " + " | ".join(cols) + " |")
        print("|---|" + "---|" * len(cols))
        for method in methods:
            rows = table[(method, name)]
            if not rows:
                continue
            vals = [np.mean([r[c] for r in rows if c in r]) if any(c in r for r in rows)
                    else np.nan for c in cols]
            print(f"| {method} | " + " | ".join(f"{v:.3f}" for v in vals) + " |")
    print()
    for note in notes:
        print("-", note)
    speed(fits["none"], Xte, lower, upper, args.speed_queries)


def synthetic(X, lower, upper, rng, notes, *, epsilon=1.0, delta=1e-5, n_rows=2000, bins=16):
    """DP-SD: MST synthetic rows (2,000, as the paper) at epsilon 1, in the unit cube.

    smartnoise-synth's MST (private-pgm) needs discrete columns. Every feature
    is binned on its public integer range with public edges only: ``bins``
    equal-width bins, except that capital-gain and capital-loss (over 90% zero)
    get the bin {0} plus ``bins - 1`` equal-width bins above it, and
    education-num its 16 integer values. snsynth sees the bin codes through
    BinTransformers with given bounds (one bin per code), so its preprocessor
    reads no bounds from the data and spends no epsilon: the whole (epsilon,
    delta) goes to MST. Sampled codes map back to an integer drawn uniformly
    in the bin (post-processing). None if smartnoise-synth is not importable.
    """
    import warnings

    try:
        import pandas as pd
        from snsynth import Synthesizer
        from snsynth.transform import BinTransformer, TableTransformer
    except ImportError as exc:
        notes.append(f"DP-SD: smartnoise-synth not importable ({exc})")
        return None
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
    notes.append(
        f"DP-SD: smartnoise-synth MST, epsilon {epsilon:g}, delta {delta:g} (all of it; "
        f"preprocessor epsilon 0, public bins), fit on {len(X)} training rows, {n_rows} rows "
        f"sampled; bins per feature {dict(zip(FEATURES, [len(e) - 1 for e in edges]))} "
        f"(capital-gain/loss: {{0}} + equal width above); values uniform in the bin; "
        f"fit {fit_s:.1f} s")
    return (rows - lower) / (upper - lower)


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


if __name__ == "__main__":
    main()
