"""
DP counterfactuals on MNIST: query, counterfactual and their difference
=======================================================================

A black box (``MLPClassifier``, 128 tanh units) is trained on 20,000 of
the MNIST training images. ``DPCounterfactualGenerator`` trains a deep
autoencoder with DP-SGD (784-256-128-64-32 and back) on the other 40,000
(disjoint: its guarantee covers them only if the black box does not depend
on them) and releases class prototypes at (epsilon=0.75, delta=1e-5), then, for six test
images, searches a counterfactual of a chosen other digit (the paper's
"spec." scenario). Each row shows the query, the DP counterfactual (titled
with what the black box predicts for it) and their difference (red: ink
added, blue: ink removed). The search only calls ``predict_proba``; it is
post-processing of the DP releases and costs no budget. The figure is saved
as ``counterfactuals_mnist.png`` (``--out``).

MNIST is read from ``../shared/data/mnist`` next to the repository, or from
``$SKDPX_MNIST_DIR``. The black box and the autoencoder take a few minutes
to train.
"""

import argparse
from pathlib import Path
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.neural_network import MLPClassifier  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from _mnist import load_mnist  # noqa: E402

from skdpx.counterfactual import DPCounterfactualGenerator  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--out", default="counterfactuals_mnist.png")
    parser.add_argument("--epsilon", type=float, default=0.75)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    X, y, X_test, _ = load_mnist()
    X, X_test = X / 255.0, X_test / 255.0
    # the black box's images and the private ones: a seeded split, disjoint
    order = np.random.RandomState(0).permutation(len(X))
    X_model, y_model, X = X[order[:20_000]], y[order[:20_000]], X[order[20_000:]]
    model = MLPClassifier(hidden_layer_sizes=(128,), activation="tanh", max_iter=30,
                          random_state=args.seed).fit(X_model, y_model)
    dpc = DPCounterfactualGenerator(model, epsilon=args.epsilon, delta=1e-5, latent_dim=32,
                                    ae_method="dpsgd", hidden_layer_sizes=(256, 128, 64),
                                    bounds=(0.0, 1.0), random_state=args.seed).fit(X)
    queries = X_test[:6]
    desired = (model.predict(queries) + np.array([1, 3, 5, 2, 4, 6])) % 10
    result = dpc.explain(queries, desired_class=desired)

    fig, axes = plt.subplots(len(queries), 3, figsize=(5.4, 1.9 * len(queries)))
    for row, (q, cf, want, got, ok) in enumerate(zip(
            queries, result.counterfactuals, result.desired_class, result.predicted_class,
            result.valid)):
        axes[row, 0].imshow(q.reshape(28, 28), cmap="gray_r", vmin=0, vmax=1)
        axes[row, 0].set_title(f"query: {model.predict(q[None])[0]}", fontsize=8)
        if ok:
            axes[row, 1].imshow(cf.reshape(28, 28), cmap="gray_r", vmin=0, vmax=1)
            axes[row, 2].imshow((cf - q).reshape(28, 28), cmap="RdBu_r", vmin=-1, vmax=1)
        axes[row, 1].set_title(f"DP counterfactual: {got if ok else 'none'} (asked {want})",
                               fontsize=8)
        axes[row, 2].set_title("difference", fontsize=8)
        for ax in axes[row]:
            ax.set_axis_off()
    fig.suptitle(f"DPCounterfactualGenerator, epsilon {dpc.epsilon_spent_:.2f} in all", fontsize=9)
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"saved {args.out}; {int(result.valid.sum())} of {len(queries)} valid; "
          f"epsilon spent {dpc.epsilon_spent_:.3f}")


if __name__ == "__main__":
    main()
