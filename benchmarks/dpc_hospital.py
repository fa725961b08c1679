"""DPCounterfactualGenerator on Hospital (Diabetes 130-US; issue 5).

Black box: MLPClassifier (64 tanh units) on the second half of the test
split (41 columns with public bounds: benchmarks/_hospital.py); DPC is
fitted on the training split (81,412 encounters, disjoint from the black
box's rows); 500 random queries from the first half of the test split;
DiCE "random" (not private) on the same black box and queries. Paper (Yang et
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
    X = data.data  # the private rows
    X_test, y_test, X_model, y_model = disjoint_split(data.data_test, data.target_test)
    model = black_box(X_model, y_model)
    print(f"black box: MLPClassifier(64, tanh) on {len(X_model):,} test rows, accuracy "
          f"{model.score(X_test, y_test):.4f} on the other {len(X_test):,}; DPC on the "
          f"{len(X):,} training rows\n")
    queries = X_test[np.random.RandomState(0).choice(len(X_test), 500, replace=False)]
    for method in ("dpsgd", "functional"):
        run(f"Hospital ({method} autoencoder)", model, X, data.bounds, queries,
            epsilons=[0.75, 0.025], dpc_params={"ae_method": method},
            dice=not args.no_dice and method == "dpsgd", seeds=tuple(range(10)))


if __name__ == "__main__":
    main()
