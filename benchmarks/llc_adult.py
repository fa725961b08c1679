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

Saves every number of its table, with the settings, seeds, runtime, date and
versions, to ``benchmarks/results/llc_adult.json`` (``--out``), which the
docs' benchmarks page renders.

Run: python benchmarks/llc_adult.py [--seeds 5]
Measured: 7 min (422 s) with 5 seeds on 2026-11-26, on a shared 2-core
machine with a load average near 10; a one-seed run took 58 s there.
"""

import argparse
import math
import os
import time
import warnings

import numpy as np
import sklearn
from sklearn.linear_model import LogisticRegression

from skdpx.datasets import encode_adult, load_adult
from skdpx.locally_linear import DPLocallyLinearClassifier

from _run_record import run_info, save, start as record_start

DELTA = 1e-5
RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "llc_adult.json")


def environment(started, seconds):
    """The record of this run (commit, date, runtime, versions, machine, command)."""
    return run_info(started, seconds, packages=("dp-accounting", "diffprivlib"))


def _eps(eps):
    """An epsilon for JSON: the string "inf" for the non-private rows."""
    return "inf" if math.isinf(eps) else eps


def _diffprivlib_lr():
    """diffprivlib's LogisticRegression, or the reason it is not available here."""
    try:
        from diffprivlib.models import LogisticRegression as DPLogisticRegression
    except Exception as exc:  # not installed, or broken on this scikit-learn
        return None, (f"diffprivlib does not import with scikit-learn {sklearn.__version__} "
                      f"({type(exc).__name__}: {exc}); pip install diffprivlib with "
                      "scikit-learn < 1.8 for this baseline")
    return DPLogisticRegression, None


def load_encoded():
    """The Adult rows every model of this benchmark sees: the bundled train and test
    subsets encoded by ``encode_adult`` (rows in [0, 1]^104), and the encoding (its
    public ``bounds`` and ``columns``). Returns (X, y, X_test, y_test, enc)."""
    train, test = load_adult(subset="train"), load_adult(subset="test")
    enc, enc_test = encode_adult(train.data), encode_adult(test.data)
    return enc.data, train.target, enc_test.data, test.target, enc


def llc_model(eps, seed, bounds, n_maps=2, **params):
    """The DPLocallyLinearClassifier of this benchmark (``params`` override its defaults)."""
    return DPLocallyLinearClassifier(n_maps=n_maps, epsilon=eps, delta=DELTA, bounds=bounds,
                                     random_state=seed, **params)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--out", default=RESULTS, help="where to save the results (JSON)")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    started, start = record_start(), time.perf_counter()
    seeds = list(range(args.seeds))
    X, y, X_test, y_test, enc = load_encoded()
    data_norm = math.sqrt(len(enc.columns))
    assert np.linalg.norm(X, axis=1).max() <= data_norm + 1e-9

    def llc(eps, n_maps=2):
        return lambda seed: llc_model(eps, seed, enc.bounds, n_maps=n_maps)

    DPLogisticRegression, why_not = _diffprivlib_lr()

    def dplr(eps):
        if DPLogisticRegression is None:
            return None
        return lambda seed: DPLogisticRegression(epsilon=eps, data_norm=data_norm,
                                                 random_state=seed)

    # (name, epsilon, the model's settings for the JSON, factory)
    llc_settings = {"n_maps": 2, "delta": DELTA, "bounds": "encode_adult's public ranges",
                    "other parameters": "DPLocallyLinearClassifier's defaults"}
    dplr_settings = {"data_norm": data_norm, "other parameters": "diffprivlib's defaults"}
    settings = {
        "DPLocallyLinearClassifier M=2": llc_settings,
        "DPLocallyLinearClassifier M=1": {**llc_settings, "n_maps": 1},
        "diffprivlib LogisticRegression": dplr_settings,
        "sklearn LogisticRegression": {"max_iter": 2000, "other parameters":
                                       "scikit-learn's defaults (not private)"},
    }
    rows = [
        ("DPLocallyLinearClassifier M=2", 1.0, llc(1.0)),
        ("DPLocallyLinearClassifier M=1", 1.0, llc(1.0, n_maps=1)),
        ("diffprivlib LogisticRegression", 1.0, dplr(1.0)),
        ("DPLocallyLinearClassifier M=2", 0.1, llc(0.1)),
        ("diffprivlib LogisticRegression", 0.1, dplr(0.1)),
        ("DPLocallyLinearClassifier M=2", math.inf, llc(math.inf)),
        ("sklearn LogisticRegression", math.inf,
         lambda seed: LogisticRegression(max_iter=2000)),
    ]
    print(f"Adult test accuracy ({len(X_test):,} rows), mean over {args.seeds} seeds, "
          f"delta={DELTA:g} for skdpx (diffprivlib's LR is pure epsilon-DP)")
    print(f"{'model':<32} {'epsilon':>7} {'accuracy':>17} {'fit s':>6}")
    results, saved = {}, []
    for name, eps, make in rows:
        entry = {"model": name, "epsilon": _eps(eps), "settings": settings[name]}
        saved.append(entry)
        if make is None:
            entry["not_run"] = why_not
            print(f"{name:<32} {eps:>7g}   not run: {why_not}")
            continue
        accs, times, spent = [], [], []
        try:
            for seed in seeds:
                t0 = time.perf_counter()
                model = make(seed).fit(X, y)
                times.append(time.perf_counter() - t0)
                accs.append(model.score(X_test, y_test))
                if hasattr(model, "epsilon_spent_"):
                    spent.append({"epsilon_spent": _eps(model.epsilon_spent_),
                                  "delta_spent": model.delta_spent_,
                                  "noise_multiplier": model.noise_multiplier_})
        except Exception as exc:
            if not name.startswith("diffprivlib"):
                raise
            why_not = (f"diffprivlib fails on scikit-learn {sklearn.__version__} "
                       f"({type(exc).__name__}: {exc})")
            entry["not_run"] = why_not
            print(f"{name:<32} {eps:>7g}   not run: {why_not}")
            continue
        results[(name, eps)] = np.mean(accs)
        entry.update({"accuracy": accs, "accuracy_mean": float(np.mean(accs)),
                      "accuracy_std": float(np.std(accs)), "fit_seconds": times,
                      "fit_seconds_mean": float(np.mean(times))})
        if spent:
            entry["privacy"] = spent
        print(f"{name:<32} {eps:>7g} {np.mean(accs):>10.4f} ± {np.std(accs):.4f} "
              f"{np.mean(times):>6.1f}", flush=True)
    ours = results[("DPLocallyLinearClassifier M=2", 1.0)]
    theirs = results.get(("diffprivlib LogisticRegression", 1.0))
    if theirs is None:
        print(f"\nat epsilon = 1: DPLocallyLinearClassifier {ours:.4f}; no diffprivlib "
              "baseline on this scikit-learn")
    else:
        print(f"\nat epsilon = 1: DPLocallyLinearClassifier {ours:.4f} vs diffprivlib "
              f"LogisticRegression {theirs:.4f}: {'more' if ours > theirs else 'NOT more'} "
              f"accurate by {100 * (ours - theirs):+.2f} points")
    out = {
        "benchmark": "llc_adult",
        "description": __doc__.splitlines()[0].strip(),
        "dataset": {"name": "Adult (bundled, skdpx.datasets.load_adult)",
                    "n_train": int(len(y)), "n_test": int(len(y_test)),
                    "n_features_encoded": int(X.shape[1]),
                    "n_columns": int(len(enc.columns))},
        "settings": {"delta": DELTA, "seeds": seeds, "metric": "test accuracy",
                     "std": "population standard deviation over the seeds (numpy.std)",
                     "random_state": "the seed, for every model that takes one"},
        "rows": saved,
        "difference_at_epsilon_1": (None if theirs is None else float(ours - theirs)),
        "run": environment(started, time.perf_counter() - start),
    }
    save(args.out, out)
    print(f"\n{out['run']['seconds']:.0f} s in all; wrote {args.out}")


if __name__ == "__main__":
    main()
