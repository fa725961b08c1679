"""DPLocallyLinearClassifier on the bundled Adult data against diffprivlib's
LogisticRegression, both at epsilon = 1, mean over 5 seeds.

Both models see the same encoded rows (skdpx.datasets.encode_adult: one-hot
categories, continuous features scaled by their public ranges, so every row
lies in [0, 1]^104). diffprivlib's LogisticRegression needs a public bound on
the row norm: each of the 13 encoded columns contributes at most 1 to the
squared norm (a one-hot group has a single 1), so data_norm = sqrt(13).

Run: python benchmarks/llm_adult.py [--seeds 5]   (about a minute on 2 cores)
"""

import argparse
import math
import time
import warnings

from diffprivlib.models import LogisticRegression as DPLogisticRegression
import numpy as np
from sklearn.linear_model import LogisticRegression

from skdpx.datasets import encode_adult, load_adult
from skdpx.linear import DPLocallyLinearClassifier

DELTA = 1e-5


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    train, test = load_adult(subset="train"), load_adult(subset="test")
    enc, enc_test = encode_adult(train.data), encode_adult(test.data)
    X, y, X_test, y_test = enc.data, train.target, enc_test.data, test.target
    data_norm = math.sqrt(len(enc.columns))
    assert np.linalg.norm(X, axis=1).max() <= data_norm + 1e-9

    def llm(eps, n_maps=2):
        return lambda seed: DPLocallyLinearClassifier(
            n_maps=n_maps, epsilon=eps, delta=DELTA, bounds=enc.bounds, random_state=seed)

    def dplr(eps):
        return lambda seed: DPLogisticRegression(epsilon=eps, data_norm=data_norm,
                                                 random_state=seed)

    rows = [
        ("DPLocallyLinearClassifier M=2", 1.0, llm(1.0)),
        ("DPLocallyLinearClassifier M=1", 1.0, llm(1.0, n_maps=1)),
        ("diffprivlib LogisticRegression", 1.0, dplr(1.0)),
        ("DPLocallyLinearClassifier M=2", 0.1, llm(0.1)),
        ("diffprivlib LogisticRegression", 0.1, dplr(0.1)),
        ("DPLocallyLinearClassifier M=2", math.inf, llm(math.inf)),
        ("sklearn LogisticRegression", math.inf,
         lambda seed: LogisticRegression(max_iter=2000)),
    ]
    print(f"Adult test accuracy ({len(X_test):,} rows), mean over {args.seeds} seeds, "
          f"delta={DELTA:g} for skdpx (diffprivlib's LR is pure epsilon-DP)")
    print(f"{'model':<32} {'epsilon':>7} {'accuracy':>17} {'fit s':>6}")
    results = {}
    for name, eps, make in rows:
        accs, times = [], []
        for seed in range(args.seeds):
            t0 = time.perf_counter()
            model = make(seed).fit(X, y)
            times.append(time.perf_counter() - t0)
            accs.append(model.score(X_test, y_test))
        results[(name, eps)] = np.mean(accs)
        print(f"{name:<32} {eps:>7g} {np.mean(accs):>10.4f} ± {np.std(accs):.4f} "
              f"{np.mean(times):>6.1f}", flush=True)
    ours = results[("DPLocallyLinearClassifier M=2", 1.0)]
    theirs = results[("diffprivlib LogisticRegression", 1.0)]
    print(f"\nat epsilon = 1: DPLocallyLinearClassifier {ours:.4f} vs diffprivlib "
          f"LogisticRegression {theirs:.4f}: {'more' if ours > theirs else 'NOT more'} accurate "
          f"by {100 * (ours - theirs):+.2f} points")


if __name__ == "__main__":
    main()
