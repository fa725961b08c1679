"""
DP recourse on Adult: a denied applicant's path to a favourable outcome
=======================================================================

``PrivRecourse`` (Pentyala et al. 2023, "Privacy-Preserving Algorithmic
Recourse") is fitted on the bundled Adult training split, restricted to its
five continuous features (age, education-num, capital-gain, capital-loss,
hours-per-week), in their original units with the public bounds of
``encode_adult``. It spends epsilon = 2 in all (delta = 1e-5) on two
releases, and these are the only things that read the training rows:

* the black box, a logistic regression trained by DP-SGD, (1, 1e-5)-DP on
  its own (``model_share=0.5``);
* 500 DP k-means centres with noisy counts (noisy sums and counts,
  Gaussian), calibrated so that model and clustering compose to exactly
  (2, 1e-5).

Everything after that is post-processing and costs no budget: the graph on
the centres with enough noisy count (edges no longer than 0.4 in the unit
cube of the bounds; along an edge age and education-num may only go up),
the favourable centres (those the black box puts above 50K), each node's
shortest path to one, and every query to ``explain``.

For the first test applicant the black box denies whose path takes at
least two steps on the graph, the table lists the path like the paper's
Table 3: the applicant, the centres the path visits and the counterfactual
(its last centre). The figure shows all graph nodes and a sample of edges in
the two features that change most along that path, with the path on top.
It is saved as ``recourse_adult.png`` (``--out``).

The first hop, from the applicant to the nearest non-favourable centre, is a
nearest-node lookup, not a graph edge: the constraints and the distance
threshold do not apply to it and the path cost (a sum of edge lengths
divided by the density of centres, a relative figure) does not count it.
"""

import argparse

import matplotlib

matplotlib.use("Agg")
from matplotlib.collections import LineCollection  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from skdpx import PrivRecourse  # noqa: E402
from skdpx.datasets import encode_adult, load_adult  # noqa: E402

FEATURES = ["age", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
INCREASING = ["age", "education-num"]
MAX_EDGES = 2000


# %%
# The DP fit
# ----------
# The data stay in input units (``scale=False``); the public bounds tell
# ``PrivRecourse`` how to scale them, so it reads nothing from the data to
# do so. ``X`` is a NumPy array, so the increasing features are given by
# their column indices. This is all the budget the example spends.


def fit(seed):
    train, test = load_adult(), load_adult(subset="test")
    enc = encode_adult(train.data, features=FEATURES, scale=False)
    X_test = encode_adult(test.data, features=FEATURES, scale=False).data
    rec = PrivRecourse(
        n_clusters=500, epsilon=2.0, delta=1e-5, model_share=0.5, model_C=10.0,
        distance_threshold=0.4, increasing_features=[FEATURES.index(f) for f in INCREASING],
        bounds=enc.bounds, random_state=seed,
    ).fit(enc.data, train.target)
    return rec, X_test, test.target


# %%
# One denied applicant's path
# ---------------------------
# ``explain`` runs on denied test applicants (not training rows). The first
# whose path visits at least three centres (two steps on the graph) is shown.
# ``RecoursePaths.to_frame`` gives one row per path point; its feature columns
# are named ``x0, ..., x4`` because the model was fitted on an array.


def pick_path(rec, X_test, n_candidates=200):
    denied = np.flatnonzero(rec.estimator_.predict(X_test) != rec.favorable_class_)
    paths = rec.explain(X_test[denied[:n_candidates]])
    long_enough = np.array([len(p) >= 4 for p in paths.paths]) & paths.success
    i = int(np.flatnonzero(long_enough)[0])
    return int(denied[i]), rec.explain(X_test[denied[i]][None])


def path_table(paths):
    df = paths.to_frame()
    df = df[df["query"] == 0].rename(columns=dict(zip(paths.feature_names, FEATURES)))
    n = len(df)
    df.index = ["query"] + [f"path point {k}" for k in range(1, n - 1)] + ["counterfactual"]
    return df[FEATURES].round().astype(int)


# %%
# The graph and the path
# ----------------------
# Nodes are the DP centres kept as graph nodes, coloured by the black box's
# decision; a random sample of at most 2,000 edges is drawn lightly. The two
# axes are the features whose values change most along the path, as a
# fraction of their public range.


def plot_graph(rec, paths, seed, ax):
    lower, upper = rec.bounds_
    path = paths.paths[0]
    change = np.abs(np.diff(path, axis=0) / (upper - lower)).sum(axis=0)
    fx, fy = np.sort(np.argsort(-change, kind="stable")[:2])
    C = rec.cluster_centers_
    rows, cols = rec.graph_.nonzero()
    if len(rows) > MAX_EDGES:
        keep = np.random.RandomState(seed).choice(len(rows), MAX_EDGES, replace=False)
        rows, cols = rows[keep], cols[keep]
    segments = np.stack([C[rows][:, [fx, fy]], C[cols][:, [fx, fy]]], axis=1)
    ax.add_collection(LineCollection(segments, colors="0.6", linewidths=0.4, alpha=0.3,
                                     label=f"graph edges ({len(rows)} of {rec.graph_.nnz})"))
    favourable = np.zeros(len(C), dtype=bool)
    favourable[rec.candidates_] = True
    ax.scatter(C[~favourable, fx], C[~favourable, fy], s=10, color="tab:red",
               label="DP centre: denied")
    ax.scatter(C[favourable, fx], C[favourable, fy], s=10, color="tab:green",
               label="DP centre: >50K")
    paths.plot(0, features=(fx, fy), ax=ax, color="tab:blue", linewidth=2,
               label="recourse path")
    ax.set_xlabel(f"{FEATURES[fx]} (input units)")
    ax.set_ylabel(f"{FEATURES[fy]} (input units)")
    ax.set_title(f"PrivRecourse on Adult: {len(C)} DP centres, epsilon "
                 f"{rec.epsilon_spent_:.2f} in all; path cost {paths.cost[0]:.3g}",
                 fontsize=9)
    ax.legend(fontsize=7, loc="best")
    return FEATURES[fx], FEATURES[fy]


# %%
# Run
# ---


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--out", default="recourse_adult.png")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    rec, X_test, y_test = fit(args.seed)
    print(f"black box: DP logistic regression at epsilon {rec.model_epsilon_:g}, test "
          f"accuracy {rec.estimator_.score(X_test, y_test):.3f}; {len(rec.cluster_centers_)} "
          f"of {rec.n_clusters} DP centres kept as nodes, {len(rec.candidates_)} favourable")
    row, paths = pick_path(rec, X_test)
    print(f"\ntest applicant {row} (denied), recourse path:\n")
    print(path_table(paths).to_string())
    proba = rec.estimator_.predict_proba(paths.paths[0])[:, 1]
    print("\nblack box P(>50K) along the path: " + ", ".join(f"{p:.2f}" for p in proba))
    print(f"path cost {paths.cost[0]:.4f}; epsilon spent {rec.epsilon_spent_:.3f} "
          f"(delta {rec.delta_spent_:g}), the path itself costs nothing")

    fig, ax = plt.subplots(figsize=(6.5, 5))
    fx, fy = plot_graph(rec, paths, args.seed, ax)
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"saved {args.out} ({fx} against {fy})")


if __name__ == "__main__":
    main()
