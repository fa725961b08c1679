"""
=======================================================================
DP recourse on Adult: a denied applicant's path to a favourable outcome
=======================================================================

Recourse tells someone a model turned down what to change, step by step, to
be accepted. :class:`~skdpx.PrivRecourse` (Pentyala et al. 2023,
"Privacy-Preserving Algorithmic Recourse") builds its paths on a graph of
differentially private cluster centres of a private dataset, so that the
steps it proposes are realistic (they go through dense regions of the data)
without giving away the people in it.

Here it is fitted on the bundled Adult training file, restricted to its five
continuous features (age, education-num, capital-gain, capital-loss,
hours-per-week), and gives a path to a denied test applicant.
"""

# %%
# The DP fit: a black box and the centres, at epsilon 2
# -----------------------------------------------------
# With no black box given, ``PrivRecourse`` trains its own: a logistic
# regression by DP-SGD, on half of the budget (``model_share=0.5``). The
# other half buys 500 DP k-means centres with noisy counts (noisy sums and
# counts, Gaussian). The two are calibrated to compose to exactly
# (epsilon=2, delta=1e-5), recorded in the ledger before the training rows
# are read, and they are the only things that read them: the guarantee
# covers every training row.
#
# The data stay in their input units (``scale=False``); the public bounds of
# ``encode_adult`` tell ``PrivRecourse`` how to scale them, so it reads
# nothing from the data to do so. Age and education-num may only go up along
# a path (``increasing_features``, by column index since ``X`` is an array).
# The label set is declared (``classes``): read from the data, it would be a
# release too.
import warnings

import matplotlib.pyplot as plt
from matplotlib.collections import LineCollection
import numpy as np
from sklearn.metrics import accuracy_score

from skdpx import PrivRecourse
from skdpx.datasets import encode_adult, load_adult
from skdpx.exceptions import PrivacyLeakWarning
from skdpx.privacy import PrivacyLedger

# The seeds make this page reproducible, but a seeded release is not private
# (whoever knows the seed can remove the noise): skdpx warns about it, and only
# that warning is silenced here. Leave random_state=None for a real release.
warnings.filterwarnings("ignore", message="random_state=", category=PrivacyLeakWarning)

FEATURES = ["age", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
INCREASING = ["age", "education-num"]

train, test = load_adult(), load_adult(subset="test")
enc = encode_adult(train.data, features=FEATURES, scale=False)
X_test = encode_adult(test.data, features=FEATURES, scale=False).data

ledger = PrivacyLedger(epsilon=2.0, delta=1e-5)
rec = PrivRecourse(
    n_clusters=500, epsilon=2.0, delta=1e-5, model_share=0.5, model_C=10.0,
    distance_threshold=0.4, increasing_features=[FEATURES.index(f) for f in INCREASING],
    bounds=enc.bounds, classes=[0, 1], accountant=ledger, random_state=0,
).fit(enc.data, train.target)

print(f"black box: DP logistic regression at epsilon {rec.model_epsilon_:g}, test "
      f"accuracy {accuracy_score(test.target, rec.estimator_.predict(X_test)):.3f}")
print(f"{len(rec.cluster_centers_)} of {rec.n_clusters} DP centres kept as graph nodes, "
      f"{len(rec.candidates_)} of them favourable (the black box says >50K)")
print(f"ledger: epsilon={ledger.epsilon_spent:.3f} of {ledger.epsilon:g} spent "
      f"(delta={ledger.delta_spent:g})")

# %%
# Everything else is free
# -----------------------
# The graph on the centres with enough noisy count (edges no longer than 0.4
# in the unit cube of the bounds, never lowering age or education-num), the
# favourable centres, each node's shortest path to one, and every query to
# ``explain`` are post-processing of the two DP releases: they cost no
# budget, however many applicants ask.
#
# ``explain`` runs on denied test applicants (not training rows). The first
# whose path visits at least three centres (two steps on the graph) is shown.
denied = np.flatnonzero(rec.estimator_.predict(X_test) != rec.favorable_class_)
candidates = rec.explain(X_test[denied[:200]])
long_enough = np.array([len(p) >= 4 for p in candidates.paths]) & candidates.success
row = int(denied[np.flatnonzero(long_enough)[0]])
paths = rec.explain(X_test[row][None])
print(f"paths for {len(denied[:200])} denied applicants: "
      f"{int(candidates.success.sum())} found one; "
      f"ledger still at epsilon={ledger.epsilon_spent:.3f}")

# %%
# One path, as a table
# --------------------
# Like the paper's Table 3: the applicant, the centres the path visits and the
# counterfactual (its last centre). ``RecoursePaths.to_frame`` gives one row
# per path point; its feature columns are ``x0, ..., x4`` because the model
# was fitted on an array, renamed here. The first hop, from the applicant to
# the nearest non-favourable centre, is a nearest-node lookup, not a graph
# edge: the constraints and the distance threshold do not apply to it, and
# the path cost (a sum of edge lengths divided by the density of centres, a
# relative figure) does not count it.
table = paths.to_frame()
table = table[table["query"] == 0].rename(columns=dict(zip(paths.feature_names, FEATURES)))
n = len(table)
table.index = ["applicant"] + [f"path point {k}" for k in range(1, n - 1)] + ["counterfactual"]
print(f"test applicant {row} (denied):")
print(table[FEATURES].round().astype(int).to_string())
proba = rec.estimator_.predict_proba(paths.paths[0])[:, 1]
print("black box P(>50K) along the path: " + ", ".join(f"{p:.2f}" for p in proba))
print(f"path cost {paths.cost[0]:.4f}")

# %%
# The graph and the path
# ----------------------
# Nodes are the DP centres kept as graph nodes, coloured by the black box's
# decision; a random sample of at most 2,000 edges is drawn lightly. The two
# axes are the features that change most along the path, as a fraction of
# their public range.
lower, upper = rec.bounds_
path = paths.paths[0]
change = np.abs(np.diff(path, axis=0) / (upper - lower)).sum(axis=0)
fx, fy = np.sort(np.argsort(-change, kind="stable")[:2])
C = rec.cluster_centers_
rows, cols = rec.graph_.nonzero()
if len(rows) > 2000:
    keep = np.random.RandomState(0).choice(len(rows), 2000, replace=False)
    rows, cols = rows[keep], cols[keep]

fig, ax = plt.subplots(figsize=(6.5, 5))
segments = np.stack([C[rows][:, [fx, fy]], C[cols][:, [fx, fy]]], axis=1)
ax.add_collection(LineCollection(segments, colors="0.6", linewidths=0.4, alpha=0.3,
                                 label=f"graph edges ({len(rows)} of {rec.graph_.nnz})"))
favourable = np.zeros(len(C), dtype=bool)
favourable[rec.candidates_] = True
ax.scatter(C[~favourable, fx], C[~favourable, fy], s=10, color="tab:red",
           label="DP centre: denied")
ax.scatter(C[favourable, fx], C[favourable, fy], s=10, color="tab:green",
           label="DP centre: >50K")
paths.plot(0, features=(fx, fy), ax=ax, color="tab:blue", linewidth=2, label="recourse path")
ax.set_xlabel(f"{FEATURES[fx]} (input units)")
ax.set_ylabel(f"{FEATURES[fy]} (input units)")
ax.set_title(f"PrivRecourse on Adult: {len(C)} DP centres, epsilon "
             f"{rec.epsilon_spent_:.2f} in all; path cost {paths.cost[0]:.3g}", fontsize=9)
ax.legend(fontsize=7, loc="best")
fig.tight_layout()
plt.show()
