"""DPCounterfactualGenerator on Adult (issue 5): flip ratio, distance, speed, protection.

Black box: MLPClassifier (64 tanh units) on the Adult training split (104
columns: numeric scaled, categorical one-hot, public bounds); 500 random
test queries; DiCE "random" (not private) on the same black box and queries.
Paper (Yang et al. 2022, Table 2): DPC flip ratio 0.968 at epsilon 0.75 and
0.918 at 0.025; DiCE 0.972.

Protection (the paper's Table 4): an adversary with 1,000 queries, their
labels and one counterfactual each (labelled with the desired class) trains a
surrogate (LogisticRegression); its agreement with the black box on the test
split, with DP counterfactuals against non-private ones (the same method
with epsilon = inf).

Run: python benchmarks/dpc_adult.py [--no-dice]   (dice-ml: the "bench" extra)
"""

import argparse
import warnings

import numpy as np
from sklearn.linear_model import LogisticRegression

from _dpc_bench import black_box, run
from skdpx.counterfactual import DPCounterfactualGenerator
from skdpx.datasets import encode_adult, load_adult


def protection(model, X, bounds, X_test, *, epsilons, n_queries=1000, seeds=(0, 1, 2)):
    print(f"\nProtection: surrogate (LogisticRegression) trained on {n_queries} queries + their "
          "counterfactuals; agreement with the black box on the test split")
    print(f"{'counterfactuals':<22} {'agreement':>9}")
    rng = np.random.RandomState(1)
    queries = X_test[rng.choice(len(X_test), n_queries, replace=False)]
    truth = model.predict(X_test)
    base = LogisticRegression(max_iter=1000).fit(queries, model.predict(queries))
    print(f"{'(queries only)':<22} {np.mean(base.predict(X_test) == truth):>9.4f}")
    for eps in epsilons:
        scores = []
        for seed in seeds:
            dpc = DPCounterfactualGenerator(model, epsilon=eps, bounds=bounds,
                                            random_state=seed).fit(X)
            result = dpc.explain(queries)
            ok = result.valid
            Xs = np.vstack([queries, result.counterfactuals[ok]])
            ys = np.concatenate([model.predict(queries), result.desired_class[ok]])
            surrogate = LogisticRegression(max_iter=1000).fit(Xs, ys)
            scores.append(np.mean(surrogate.predict(X_test) == truth))
        label = "non-private (eps=inf)" if np.isinf(eps) else f"DPC eps={eps:g}"
        print(f"{label:<22} {np.mean(scores):>9.4f}   ({len(seeds)} seeds)", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-dice", action="store_true")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    train, test = load_adult(subset="train"), load_adult(subset="test")
    enc, enc_test = encode_adult(train.data), encode_adult(test.data)
    X, y, X_test = enc.data, train.target, enc_test.data
    model = black_box(X, y)
    print(f"black box: MLPClassifier(64, tanh), test accuracy "
          f"{model.score(X_test, test.target):.4f}\n")
    queries = X_test[np.random.RandomState(0).choice(len(X_test), 500, replace=False)]
    run("Adult", model, X, enc.bounds, queries, epsilons=[np.inf, 0.75, 0.025],
        dice=not args.no_dice, seeds=(0, 1, 2))
    protection(model, X, enc.bounds, X_test, epsilons=[np.inf, 0.75, 0.025])


if __name__ == "__main__":
    main()
