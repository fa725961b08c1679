"""
===============================================================
DP counterfactuals on digits: query, counterfactual, difference
===============================================================

A counterfactual answers "what would have to change in this input for the
model to decide otherwise?". :class:`~skdpx.counterfactual.DPCounterfactualGenerator`
(Yang et al. 2022, with its privacy gaps closed) searches counterfactuals
from an autoencoder and class prototypes that it learns, with differential
privacy, from a private dataset; the search itself only queries the black
box and costs no budget.

Here the black box is a small neural network that reads scikit-learn's
8 x 8 digits, and the question is: for a test image, what would make the
network read another, chosen digit? (The paper's "spec." scenario; it uses
MNIST, see ``doc/dpc.rst``. The digits keep this page to a few seconds.)
"""

# %%
# Three disjoint sets of images
# -----------------------------
# The generator's guarantee covers the rows it is fitted on, *if the black
# box does not depend on them*: a black box trained on those rows would carry
# them into every counterfactual, unprotected. So the 1,797 images are split
# once, at random, into the black box's training images (600), the private
# images the generator learns from (900) and test images whose
# counterfactuals are asked for (297, public queries). Pixels are divided by
# 16, so that every image lies in [0, 1]: public bounds, known in advance.
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.metrics import accuracy_score
from sklearn.neural_network import MLPClassifier

from skdpx.counterfactual import DPCounterfactualGenerator
from skdpx.exceptions import PrivacyLeakWarning
from skdpx.privacy import PrivacyLedger

# The seeds make this page reproducible, but a seeded release is not private
# (whoever knows the seed can remove the noise): skdpx warns about it, and only
# that warning is silenced here. Leave random_state=None for a real release.
warnings.filterwarnings("ignore", message="random_state=", category=PrivacyLeakWarning)

X, y = load_digits(return_X_y=True)
X = X / 16.0
order = np.random.RandomState(0).permutation(len(X))
model_rows, private_rows, test_rows = order[:600], order[600:1500], order[1500:]
X_private, X_test = X[private_rows], X[test_rows]

black_box = MLPClassifier(hidden_layer_sizes=(32,), max_iter=1000, random_state=0)
black_box.fit(X[model_rows], y[model_rows])
print(f"black box: test accuracy "
      f"{accuracy_score(y[test_rows], black_box.predict(X_test)):.3f}")

# %%
# The DP fit: autoencoder and prototypes, at epsilon 1
# ----------------------------------------------------
# ``fit`` reads the 900 private images once. It trains an autoencoder with
# DP-SGD (90% of the budget) and releases each class's prototype, the mean
# code of the images the black box puts in that class, with Gaussian noise
# (the rest): the two compose to exactly (epsilon=1, delta=1e-5), planned
# and recorded in the ledger before any image is read. The guarantee: adding
# or removing one private image barely changes the distribution of the
# autoencoder, the prototypes, and so of every counterfactual computed from
# them. A small autoencoder (one hidden layer of 32, a code of 8) suits
# 900 images of 64 pixels.
ledger = PrivacyLedger(epsilon=1.0, delta=1e-5)
dpc = DPCounterfactualGenerator(black_box, epsilon=1.0, delta=1e-5, latent_dim=8,
                                hidden_layer_sizes=(32,), bounds=(0.0, 1.0),
                                accountant=ledger, random_state=0)
dpc.fit(X_private)
for label, _ in ledger.events:
    print(f"ledger: {label}")
print(f"ledger: epsilon={ledger.epsilon_spent:.3f} of {ledger.epsilon:g} spent "
      f"(delta={ledger.delta_spent:g})")

# %%
# Counterfactuals for six test images
# -----------------------------------
# For each query, a desired digit other than the one the black box reads.
# ``explain`` only post-processes the DP releases and queries the black box
# (public): the ledger is unchanged afterwards. A counterfactual is *valid*
# when the black box does read the desired digit in it; the generator
# returns NaN rather than a point that fails to flip the decision.
queries = X_test[:6]
read = black_box.predict(queries)
desired = (read + np.array([1, 3, 5, 2, 4, 6])) % 10
result = dpc.explain(queries, desired_class=desired)
distance = np.abs(result.counterfactuals - queries).sum(axis=1)
for i in range(len(queries)):
    print(f"query {i}: read as {read[i]}, asked {result.desired_class[i]}, "
          f"counterfactual read as {result.predicted_class[i]} "
          f"(valid: {result.valid[i]}); pixels changed by {distance[i]:.2f} in all (L1)")
print(f"after explain: epsilon={ledger.epsilon_spent:.3f} spent (unchanged)")

# %%
# What changed
# ------------
# Each row: the query, its DP counterfactual (titled with what the black box
# reads in it), and their difference (red: ink added, blue: ink removed).
# The search keeps the point of the desired class closest to the query, so
# the changes are often small: a few pixels are enough to change this
# network's reading, which is what a counterfactual exposes about a model.
fig, axes = plt.subplots(len(queries), 3, figsize=(4.8, 1.7 * len(queries)))
for row, (q, cf, want, got, ok) in enumerate(zip(
        queries, result.counterfactuals, result.desired_class, result.predicted_class,
        result.valid)):
    axes[row, 0].imshow(q.reshape(8, 8), cmap="gray_r", vmin=0, vmax=1)
    axes[row, 0].set_title(f"query: read {read[row]}", fontsize=8)
    if ok:
        axes[row, 1].imshow(cf.reshape(8, 8), cmap="gray_r", vmin=0, vmax=1)
        axes[row, 2].imshow((cf - q).reshape(8, 8), cmap="RdBu_r", vmin=-1, vmax=1)
    axes[row, 1].set_title(f"counterfactual: {got if ok else 'none'} (asked {want})",
                           fontsize=8)
    axes[row, 2].set_title("difference", fontsize=8)
    for ax in axes[row]:
        ax.set_axis_off()
fig.suptitle(f"DPCounterfactualGenerator, epsilon {dpc.epsilon_spent_:.2f} in all",
             fontsize=9)
fig.tight_layout()
plt.show()
