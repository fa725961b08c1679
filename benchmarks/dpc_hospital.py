"""DPCounterfactualGenerator on Hospital (Diabetes 130-US; issue 5).

Black box: MLPClassifier (64 tanh units) on the second half of the test
split (41 columns with public bounds: benchmarks/_hospital.py); DPC is
fitted on the training split (81,412 encounters, disjoint from the black
box's rows); 500 random queries from the first half of the test split;
DiCE "random" (not private) on the same black box and queries. Paper (Yang et
al. 2022, Table 2): DPC flip ratio 0.884 at epsilon 0.75 and 0.826 at
0.025.

Saves benchmarks/results/dpc_hospital.json: every number the table prints,
the settings, seeds, runtime, date and versions.

Measured runtime (2 cores shared with other benchmarks): ``--seeds 3
--queries 300 --n-dice 50`` took 14 to 25 min; the defaults take hours
there.

Run: python benchmarks/dpc_hospital.py [--no-dice] [--seeds 10] [--queries 500] [--n-dice N]
(dice-ml: the "bench" extra)
"""

import argparse
import time
import warnings

import numpy as np

from _dpc_bench import black_box, disjoint_split, run, save
from _hospital import load_hospital


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-dice", action="store_true")
    parser.add_argument("--seeds", type=int, default=10, help="DPC seeds per cell (0..N-1)")
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--n-dice", type=int, default=None,
                        help="DiCE on the first N queries only (default: all)")
    parser.add_argument("--out", default="dpc_hospital.json")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    warnings.simplefilter("ignore")
    data = load_hospital()
    X = data.data  # the private rows
    X_test, y_test, X_model, y_model = disjoint_split(data.data_test, data.target_test)
    model = black_box(X_model, y_model)
    accuracy = model.score(X_test, y_test)
    print(f"black box: MLPClassifier(64, tanh) on {len(X_model):,} test rows, accuracy "
          f"{accuracy:.4f} on the other {len(X_test):,}; DPC on the "
          f"{len(X):,} training rows\n")
    queries = X_test[np.random.RandomState(0).choice(len(X_test), args.queries, replace=False)]
    results = {"settings": {"seeds": args.seeds, "queries": args.queries,
                            "n_dice": args.n_dice, "dice": not args.no_dice,
                            "query_seed": 0, "black_box_seed": 0},
               "black_box": {"model": "MLPClassifier(64, tanh)", "n_train": int(len(X_model)),
                             "accuracy": float(accuracy), "n_test": int(len(X_test))},
               "tables": []}
    for method in ("dpsgd", "functional"):
        results["tables"].append(run(
            f"Hospital ({method} autoencoder)", model, X, data.bounds, queries,
            epsilons=[0.75, 0.025], dpc_params={"ae_method": method},
            dice=not args.no_dice and method == "dpsgd", n_dice=args.n_dice,
            seeds=tuple(range(args.seeds))))
    save(args.out, results, started)


if __name__ == "__main__":
    main()
