"""
Locally linear maps on MNIST: the maps behind each prediction
=============================================================

Train ``DPLocallyLinearClassifier`` on MNIST at (epsilon=2, delta=1e-5)
with the benchmark's settings: 30 maps per digit, each seeing the image
through its own random projection to 300 dimensions, 20 epochs of DP-SGD.
For one test image of each of four digits, the figure shows the three maps
of the predicted digit with the highest softmax weight for that image (the
weight in each title) and the softmax-weighted local map that ``explain``
returns, all as 28 x 28 pictures (red: evidence for the digit, blue:
against). The maps are post-processing of the DP model: showing them costs
no budget. The figure is saved as ``llm_filters.png`` (``--out``).

At epsilon = 2 the single maps look noisy: DP-SGD's noise reaches every
pixel through the random projections, even the pixels near the border
that are blank in every training image (the paper's Figure 2 shows the
same). The local map, a weighted average of 30 maps, is smoother.

MNIST is not bundled: it is read from ``../shared/data/mnist`` next to the
repository, or from ``$SKDPX_MNIST_DIR``. The fit takes about a minute;
``--epochs 2`` gives a quicker, less accurate run.
"""

import argparse
from pathlib import Path
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from _mnist import BOUNDS, load_mnist  # noqa: E402

from skdpx.linear import DPLocallyLinearClassifier  # noqa: E402

DIGITS = (0, 3, 7, 9)
TOP = 3

parser = argparse.ArgumentParser(description="DP locally linear maps on MNIST, as pictures.")
parser.add_argument("--epochs", type=float, default=20)
parser.add_argument("--out", default="llm_filters.png")
args = parser.parse_args()

X_train, y_train, X_test, y_test = load_mnist()
clf = DPLocallyLinearClassifier(
    n_maps=30, projection_dim=300, beta=0.1, batch_size=500, epochs=args.epochs,
    epsilon=2.0, delta=1e-5, learning_rate=1.0, max_grad_norm=1.0, bounds=BOUNDS,
    random_state=0,
).fit(X_train, y_train)
print(f"test accuracy {clf.score(X_test, y_test):.4f} after {args.epochs:g} epochs; "
      f"epsilon spent {clf.epsilon_spent_:.4f} at delta {clf.delta_spent_:g}")

# The first test image of each digit, and its local explanation (free).
rows = [int(np.flatnonzero(y_test == digit)[0]) for digit in DIGITS]
explanation = clf.explain(X_test[rows])
predicted = explanation.meta["predicted_class"]
weights = np.asarray(explanation.meta["map_weights"])  # (rows, n_maps)


def show(ax, image, title, signed=True):
    image = np.asarray(image).reshape(28, 28)
    if signed:
        vmax = np.abs(image).max() or 1.0
        ax.imshow(image, cmap="RdBu_r", vmin=-vmax, vmax=vmax)
    else:
        ax.imshow(image, cmap="gray_r")
    ax.set_title(title, fontsize=8)
    ax.set_xticks([])
    ax.set_yticks([])


fig, axes = plt.subplots(len(rows), TOP + 2, figsize=(1.7 * (TOP + 2), 1.8 * len(rows)))
for i, (row, digit) in enumerate(zip(rows, DIGITS)):
    k = int(np.flatnonzero(clf.classes_ == predicted[i])[0])
    show(axes[i, 0], X_test[row], f"digit {digit}, predicted {predicted[i]}", signed=False)
    for j, m in enumerate(np.argsort(-weights[i])[:TOP]):
        show(axes[i, j + 1], clf.coef_[k, m], f"map {m}: weight {weights[i, m]:.2f}")
    show(axes[i, TOP + 1], explanation.values[i], "local map (explain)")
fig.suptitle(f"DP locally linear maps, epsilon = {clf.epsilon_spent_:.2f}, "
             f"delta = {clf.delta_spent_:g}", fontsize=9)
fig.tight_layout()
fig.savefig(args.out, dpi=120)
print(f"saved {args.out}")
