"""DPCounterfactualGenerator on scikit-learn's 8 x 8 digits: which stage found each counterfactual (issue 39).

The setting of examples/plot_counterfactuals_digits.py: the 1,797 images
(pixels / 16, in [0, 1]: public bounds) split once at random into the black
box's 600 (MLPClassifier(32)), DPC's 900 private images and 297 public
queries; each query asks for a random other digit (the paper's "spec."
scenario). DPC: DP-SGD autoencoder, ``latent_dim=8``,
``hidden_layer_sizes=(32,)``, ``allow_perturbations=True`` so that every
stage's finds are measured. Per seed: each stage's flip ratio (a later stage
runs only where the earlier ones found none), what the default
(``allow_perturbations=False``) returns, and per stage the mean L2 distance
(pixels in [0, 1]) and ``plausibility``; the same fields as
benchmarks/dpc_stages.py, so the docs render both alike.

Target (issue 39, b): the latent search alone >= 0.8 at epsilon 1.

Saves benchmarks/results/dpc_digits_stages.json (settings, seeds, per-seed
figures, the run's commit, date, versions).

Run: python benchmarks/dpc_digits_stages.py [--seeds 10] [--epsilon 1.0]
(about 30 s per seed on 2 shared cores)
"""

import argparse
import time
import warnings

import numpy as np
from sklearn.datasets import load_digits
from sklearn.neural_network import MLPClassifier

from _dpc_bench import eps_key, save
from dpc_stages import seed_row, summarise
from skdpx.counterfactual import DPCounterfactualGenerator
from skdpx.counterfactual._dpc import STAGES


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10, help="DPC seeds (0..N-1)")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--out", default="dpc_digits_stages.json")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    warnings.simplefilter("ignore")
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    order = np.random.RandomState(0).permutation(len(X))
    model_rows, private_rows, test_rows = order[:600], order[600:1500], order[1500:]
    X_private, queries = X[private_rows], X[test_rows]
    model = MLPClassifier(hidden_layer_sizes=(32,), max_iter=1000, random_state=0)
    model.fit(X[model_rows], y[model_rows])
    rng = np.random.RandomState(0)
    desired = (model.predict(queries) + rng.randint(1, 10, size=len(queries))) % 10
    print(f"digits, DPC (DP-SGD autoencoder) at epsilon {args.epsilon:g}, {len(queries)} queries "
          "(a random other digit each), allow_perturbations=True")
    head = "".join(f"{s:>19}" for s in STAGES)
    print(f"{'seed':>4}{head}{'without perturb.':>18}  (flip ratio / avg dist / plausibility)")
    seeds = []
    for seed in range(args.seeds):
        dpc = DPCounterfactualGenerator(model, epsilon=args.epsilon, latent_dim=8,
                                        hidden_layer_sizes=(32,), bounds=(0.0, 1.0),
                                        allow_perturbations=True, random_state=seed).fit(X_private)
        result = dpc.explain(queries, desired_class=desired)
        seeds.append(seed_row(seed, result))
    summary = summarise(seeds)
    print(f"latent search alone: {summary['latent_flip_ratio']:.3f} (worst seed "
          f"{summary['latent_worst_seed']:.3f}); target 0.8")
    save(args.out, {"settings": {"epsilon": eps_key(args.epsilon), "seeds": args.seeds,
                                 "queries": int(len(queries)), "query_seed": 0,
                                 "split_seed": 0, "black_box": "MLPClassifier(32)",
                                 "latent_dim": 8, "hidden_layer_sizes": [32],
                                 "ae_method": "dpsgd", "allow_perturbations": True},
                    "summary": summary, "per_seed": seeds}, started)


if __name__ == "__main__":
    main()
