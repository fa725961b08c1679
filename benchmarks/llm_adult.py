"""DPLocallyLinearClassifier on the bundled Adult data against diffprivlib's
LogisticRegression, both at epsilon = 1, mean over 5 seeds.

Both models see the same encoded rows (skdpx.datasets.encode_adult: one-hot
categories, continuous features scaled by their public ranges, so every row
lies in [0, 1]^104). diffprivlib's LogisticRegression needs a public bound on
the row norm: each of the 13 encoded columns contributes at most 1 to the
squared norm (a one-hot group has a single 1), so data_norm = sqrt(13).

diffprivlib is a baseline here, not a dependency of skdpx: ``pip install
diffprivlib`` next to a scikit-learn it supports (its 0.6.6 fails to import on
scikit-learn 1.9 and its LogisticRegression fails on 1.8). Where it does not
import or fit, its rows say why and the comparison is left out.

Run: python benchmarks/llm_adult.py [--seeds 5]   (about a minute on 2 cores)
"""

import argparse
import math
import time
import warnings

import numpy as np
import sklearn
from sklearn.linear_model import LogisticRegression

from skdpx.datasets import encode_adult, load_adult
from skdpx.linear import DPLocallyLinearClassifier

DELTA = 1e-5


def _diffprivlib_lr():
    """diffprivlib's LogisticRegression, or the reason it is not available here."""
    try:
        from diffprivlib.models import LogisticRegression as DPLogisticRegression
    except Exception as exc:  # not installed, or broken on this scikit-learn
        return None, (f"diffprivlib does not import with scikit-learn {sklearn.__version__} "
                      f"({type(exc).__name__}: {exc}); pip install diffprivlib with "
                      "scikit-learn < 1.8 for this baseline")
    return DPLogisticRegression, None


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

    DPLogisticRegression, why_not = _diffprivlib_lr()

    def dplr(eps):
        if DPLogisticRegression is None:
            return None
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
        if make is None:
            print(f"{name:<32} {eps:>7g}   not run: {why_not}")
            continue
        accs, times = [], []
        try:
            for seed in range(args.seeds):
                t0 = time.perf_counter()
                model = make(seed).fit(X, y)
                times.append(time.perf_counter() - t0)
                accs.append(model.score(X_test, y_test))
        except Exception as exc:
            if not name.startswith("diffprivlib"):
                raise
            why_not = (f"diffprivlib fails on scikit-learn {sklearn.__version__} "
                       f"({type(exc).__name__}: {exc})")
            print(f"{name:<32} {eps:>7g}   not run: {why_not}")
            continue
        results[(name, eps)] = np.mean(accs)
        print(f"{name:<32} {eps:>7g} {np.mean(accs):>10.4f} ± {np.std(accs):.4f} "
              f"{np.mean(times):>6.1f}", flush=True)
    ours = results[("DPLocallyLinearClassifier M=2", 1.0)]
    theirs = results.get(("diffprivlib LogisticRegression", 1.0))
    if theirs is None:
        print(f"\nat epsilon = 1: DPLocallyLinearClassifier {ours:.4f}; no diffprivlib "
              "baseline on this scikit-learn")
        return
    print(f"\nat epsilon = 1: DPLocallyLinearClassifier {ours:.4f} vs diffprivlib "
          f"LogisticRegression {theirs:.4f}: {'more' if ours > theirs else 'NOT more'} accurate "
          f"by {100 * (ours - theirs):+.2f} points")


if __name__ == "__main__":
    main()
