"""DPCounterfactualGenerator on Adult (issue 5): flip ratio, distance, speed, protection.

Black box: MLPClassifier (64 tanh units) on the second half of the Adult
test split (8,141 rows; 104 columns: numeric scaled, categorical one-hot,
public bounds); DPC is fitted on the training split (32,561 rows, disjoint
from the black box's: the guarantee covers them only if the black box does
not depend on them); 500 random queries from the first half of the test
split (8,140 rows), where the black box's accuracy and the surrogates'
agreement are measured too; DiCE "random" (not private) on the same black
box and queries.
Paper (Yang et al. 2022, Table 2): DPC flip ratio 0.968 at epsilon 0.75 and
0.918 at 0.025; DiCE 0.972.

Protection (the paper's Table 4): an adversary with 1,000 queries, their
labels and one counterfactual each (labelled with the desired class) trains a
surrogate (logistic regression or a small MLP); its agreement with the black
box on the test split, with DP counterfactuals against non-private ones
(DiCE random, and the same method with epsilon = inf). The paper's own
protocol (disjoint splits, accuracy, the black box's architecture) is
benchmarks/dpc_extraction.py.

Saves benchmarks/results/dpc_adult.json: every number the tables print, the
settings, seeds, runtime, date and versions.

Measured runtime (2 cores shared with other benchmarks, load 5 to 13):
``--seeds 3 --queries 300 --n-dice 50 --no-protection`` took 14 to 25 min
(DiCE alone 5 to 12 s per counterfactual there); the defaults (10 seeds,
500 queries, DiCE on every query, three protection tables) take hours on
such a machine.

Run: python benchmarks/dpc_adult.py [--no-dice] [--seeds 10] [--queries 500] [--n-dice N]
[--no-protection | --protection-only] [--protection-sizes 50 200 1000]
(dice-ml: the "bench" extra)
"""

import argparse
import time
import warnings

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier

from _dpc_bench import adult_tables, black_box, eps_key, run, save
from skdpx.counterfactual import DPCounterfactualGenerator


def protection(model, X, bounds, X_test, *, epsilons, n_queries=1000, seeds=(0, 1, 2),
               dice=True):
    """Print one protection table; return it as a dict for the saved results."""
    print(f"\nProtection: surrogates trained on {n_queries} queries (labelled by the black "
          "box) + one counterfactual each (labelled with its desired class); agreement with "
          "the black box on the test split")
    rng = np.random.RandomState(1)
    queries = X_test[rng.choice(len(X_test), n_queries, replace=False)]
    labels, truth = model.predict(queries), model.predict(X_test)
    surrogates = {
        "logistic": lambda: LogisticRegression(max_iter=1000),
        "MLP(32)": lambda: MLPClassifier(hidden_layer_sizes=(32,), max_iter=300, random_state=0),
    }
    sets = {"(queries only)": [(np.empty((0, X.shape[1])), np.empty(0, int))]}
    if dice:
        from _dice import dice_random

        cf, _ = dice_random(model, X, model.predict(X), queries, "opposite", random_state=0)
        ok = ~np.isnan(cf).any(axis=1)
        sets["DiCE random (non-DP)"] = [(cf[ok], 1 - labels[ok])]
    for eps in epsilons:
        runs = []
        for seed in seeds:
            dpc = DPCounterfactualGenerator(model, epsilon=eps, bounds=bounds,
                                            random_state=seed).fit(X)
            result = dpc.explain(queries)
            runs.append((result.counterfactuals[result.valid], result.desired_class[result.valid]))
        sets["DPC eps=inf (non-DP)" if np.isinf(eps) else f"DPC eps={eps:g}"] = runs
    print(f"{'counterfactuals':<24}" + "".join(f"{name:>11}" for name in surrogates))
    out = {"n_queries": int(n_queries), "dpc_seeds": [int(s) for s in seeds],
           "epsilons": [eps_key(e) for e in epsilons], "surrogates": list(surrogates),
           "rows": []}
    for label, runs in sets.items():
        scores, per_run = [], []
        for make in surrogates.values():
            agree = [np.mean(make().fit(np.vstack([queries, cfs]), np.concatenate([labels, ys]))
                             .predict(X_test) == truth) for cfs, ys in runs]
            scores.append(np.mean(agree))
            per_run.append([float(a) for a in agree])
        print(f"{label:<24}" + "".join(f"{v:>11.4f}" for v in scores), flush=True)
        out["rows"].append({"transfer_set": label,
                            "agreement": dict(zip(surrogates, map(float, scores))),
                            "per_run": dict(zip(surrogates, per_run))})
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-dice", action="store_true")
    parser.add_argument("--protection-only", action="store_true")
    parser.add_argument("--no-protection", action="store_true")
    parser.add_argument("--seeds", type=int, default=10, help="DPC seeds per cell (0..N-1)")
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--n-dice", type=int, default=None,
                        help="DiCE on the first N queries only (default: all)")
    parser.add_argument("--protection-sizes", type=int, nargs="+", default=[50, 200, 1000])
    parser.add_argument("--protection-seeds", type=int, default=None,
                        help="DPC seeds per protection cell (default: 5, and 3 for 1,000 queries)")
    parser.add_argument("--out", default="dpc_adult.json")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    warnings.simplefilter("ignore")
    enc, X_test, y_test, X_model, y_model = adult_tables()
    X = enc.data  # the private rows
    model = black_box(X_model, y_model)
    accuracy = model.score(X_test, y_test)
    print(f"black box: MLPClassifier(64, tanh) on {len(X_model):,} test rows, accuracy "
          f"{accuracy:.4f} on the other {len(X_test):,}; DPC on the "
          f"{len(X):,} training rows\n")
    queries = X_test[np.random.RandomState(0).choice(len(X_test), args.queries, replace=False)]
    results = {"settings": {"seeds": args.seeds, "queries": args.queries,
                            "n_dice": args.n_dice, "dice": not args.no_dice,
                            "protection_sizes": [] if args.no_protection
                            else args.protection_sizes,
                            "protection_seeds": args.protection_seeds,
                            "query_seed": 0, "black_box_seed": 0},
               "black_box": {"model": "MLPClassifier(64, tanh)", "n_train": int(len(X_model)),
                             "accuracy": float(accuracy), "n_test": int(len(X_test))},
               "tables": [], "protection": []}
    if not args.protection_only:
        for method in ("dpsgd", "functional"):
            results["tables"].append(run(
                f"Adult ({method} autoencoder)", model, X, enc.bounds, queries,
                epsilons=[0.75, 0.025], dpc_params={"ae_method": method},
                dice=not args.no_dice and method == "dpsgd", n_dice=args.n_dice,
                seeds=tuple(range(args.seeds))))
    for n in [] if args.no_protection else args.protection_sizes:
        n_seeds = args.protection_seeds or (3 if n >= 1000 else 5)
        results["protection"].append(protection(
            model, X, enc.bounds, X_test, epsilons=[np.inf, 0.75, 0.025], n_queries=n,
            seeds=tuple(range(n_seeds)), dice=not args.no_dice))
    save(args.out, results, started)


if __name__ == "__main__":
    main()
