"""DPCounterfactualGenerator on Hospital (Diabetes 130-US; issue 5).

Black box: MLPClassifier (64 tanh units) on a seeded third of the training
split (27,137 of its 81,412 encounters, 41 columns with public bounds:
benchmarks/_hospital.py); DPC is fitted on the other two thirds (54,275,
disjoint from the black box's rows); 500 random test queries; DiCE
"random" (not private) on the same black box and queries. Paper (Yang et
al. 2022, Table 2): DPC flip ratio 0.884 at epsilon 0.75 and 0.826 at
0.025.

Run: python benchmarks/dpc_hospital.py [--no-dice]   (dice-ml: the "bench" extra)
"""

import argparse
import warnings

import numpy as np

from _dpc_bench import black_box, disjoint_split, run
from _hospital import load_hospital


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-dice", action="store_true")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    data = load_hospital()
    X_model, y_model, X = disjoint_split(data.data, data.target)  # X: the private rows
    X_test = data.data_test
    model = black_box(X_model, y_model)
    print(f"black box: MLPClassifier(64, tanh) on {len(X_model):,} training rows, test accuracy "
          f"{model.score(X_test, data.target_test):.4f}; DPC on the other {len(X):,}\n")
    queries = X_test[np.random.RandomState(0).choice(len(X_test), 500, replace=False)]
    for method in ("dpsgd", "functional"):
        run(f"Hospital ({method} autoencoder)", model, X, data.bounds, queries,
            epsilons=[0.75, 0.025], dpc_params={"ae_method": method},
            dice=not args.no_dice and method == "dpsgd", seeds=tuple(range(10)))


if __name__ == "__main__":
    main()
