"""
=========================================================
A DP locally linear classifier on digits, and its maps
=========================================================

:class:`~skdpx.DPLocallyLinearClassifier` (Harder, Bauer & Park 2020) scores
each class with a few linear maps and a softmax over them: every prediction
comes with the linear map behind it, which is its explanation. It is trained
by DP-SGD, so the model, and everything drawn from it, is differentially
private with respect to its training rows.

This example trains it on scikit-learn's 8 x 8 digits (1,797 images, so that
the page builds in seconds; the paper uses MNIST, see ``doc/llc.rst``) and
draws its maps as images, next to the same code run without privacy
(``epsilon=np.inf``).
"""

# %%
# The private rows and the public ones
# ------------------------------------
# The digits' pixels are 0 to 16: dividing by 16 puts them in [0, 1], bounds
# known before seeing any image (public bounds cost no budget; bounds read
# from the data would be a release). 70% of the images play the private
# training set; the other 30% are test images, treated as public queries.
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.metrics import accuracy_score
from sklearn.model_selection import train_test_split

from skdpx import DPLocallyLinearClassifier
from skdpx.exceptions import PrivacyLeakWarning
from skdpx.privacy import PrivacyLedger

# The seeds make this page reproducible, but a seeded release is not private
# (whoever knows the seed can remove the noise): skdpx warns about it, and only
# that warning is silenced here. Leave random_state=None for a real release.
warnings.filterwarnings("ignore", message="random_state=", category=PrivacyLeakWarning)

X, y = load_digits(return_X_y=True)
X = X / 16.0
X_train, X_test, y_train, y_test = train_test_split(
    X, y, test_size=0.3, stratify=y, random_state=0)
print(f"{len(X_train)} private training images, {len(X_test)} public test images, "
      f"{X.shape[1]} pixels each")

# %%
# Training at epsilon 2, and without privacy
# ------------------------------------------
# One :class:`~skdpx.privacy.PrivacyLedger` holds the training rows' budget,
# (epsilon=2, delta=1e-5), and the model spends all of it: the guarantee
# covers every training image (add or remove one image, the model's
# distribution barely changes), and everything computed from the model
# afterwards (predictions, maps, explanations) is post-processing, free.
# The label set (0 to 9) is declared: read from the data it would be a
# release too. Two maps per digit and 20 epochs are settings for a quick
# demo, not tuned ones.
#
# The non-private counterpart is the same code at ``epsilon=np.inf``: it
# cannot spend from a capped ledger, so it gets an uncapped one of its own.
settings = dict(n_maps=2, epochs=20, batch_size=512, learning_rate=2.0, bounds=(0.0, 1.0),
                classes=np.arange(10), random_state=0)
ledger = PrivacyLedger(epsilon=2.0, delta=1e-5)
dp_clf = DPLocallyLinearClassifier(epsilon=2.0, delta=1e-5, accountant=ledger,
                                   **settings).fit(X_train, y_train)
exact_clf = DPLocallyLinearClassifier(epsilon=np.inf, accountant=PrivacyLedger(),
                                      **settings).fit(X_train, y_train)

# Accuracy on the public test images (``score`` would warn that an exact
# accuracy is a release when the rows are private; these are not).
print(f"DP model (epsilon={dp_clf.epsilon_spent_:.3f}, delta={dp_clf.delta_spent_:g}): "
      f"test accuracy {accuracy_score(y_test, dp_clf.predict(X_test)):.3f}")
print(f"non-private model: test accuracy "
      f"{accuracy_score(y_test, exact_clf.predict(X_test)):.3f}")
for label, _ in ledger.events:
    print(f"ledger: {label}")
print(f"ledger: epsilon={ledger.epsilon_spent:.3f} of {ledger.epsilon:g} spent")

# %%
# Each class's maps
# -----------------
# :meth:`~skdpx.DPLocallyLinearClassifier.explain_global` returns every
# class's maps, weighted by how much of the class's score each one carries on
# the rows given. The weights are exact statistics of those rows, so they are
# computed on the public test images, never on the private training ones.
# Red pixels are evidence for the class, blue against. The DP maps are
# noisier than the non-private ones: DP-SGD's noise reaches every pixel,
# even the border pixels that are blank in every image.
digits = [0, 3, 7]
fig = dp_clf.explain_global(X_test, y_test).plot(image_shape=(8, 8), classes=digits)
fig.suptitle("DP maps (epsilon = 2)", fontsize=10)
fig.tight_layout()

fig = exact_clf.explain_global(X_test, y_test).plot(image_shape=(8, 8), classes=digits)
fig.suptitle("non-private maps (epsilon = inf)", fontsize=10)
fig.tight_layout()

# %%
# The map behind one prediction
# -----------------------------
# :meth:`~skdpx.DPLocallyLinearClassifier.explain` gives, for each image, the
# softmax-weighted map of the predicted class: the model's score for that
# class is this map applied to the image (plus an intercept). It costs no
# budget. Here, for one test image of each of four digits, the image, then
# the DP model's and the non-private model's local map.
# sphx_glr_thumbnail_number = 3
rows = [int(np.flatnonzero(y_test == digit)[0]) for digit in (0, 3, 7, 9)]
dp_local = dp_clf.explain(X_test[rows])
exact_local = exact_clf.explain(X_test[rows])


def show(ax, image, title, signed=True):
    image = np.asarray(image).reshape(8, 8)
    if signed:
        vmax = np.abs(image).max() or 1.0
        ax.imshow(image, cmap="RdBu_r", vmin=-vmax, vmax=vmax)
    else:
        ax.imshow(image, cmap="gray_r", vmin=0, vmax=1)
    ax.set_title(title, fontsize=8)
    ax.set_xticks([])
    ax.set_yticks([])


fig, axes = plt.subplots(len(rows), 3, figsize=(5.4, 1.9 * len(rows)))
for i, row in enumerate(rows):
    show(axes[i, 0], X_test[row], f"digit {y_test[row]}", signed=False)
    show(axes[i, 1], dp_local.values[i],
         f"DP map: predicts {dp_local.meta['predicted_class'][i]}")
    show(axes[i, 2], exact_local.values[i],
         f"non-private: predicts {exact_local.meta['predicted_class'][i]}")
fig.tight_layout()
plt.show()
