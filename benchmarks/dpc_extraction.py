"""Model extraction with counterfactuals on Adult, the paper's protocol (issue 5, target d).

Yang et al. (2022), section 5.3.2 and Table 4, as far as the text states it:

* Adult's training and test splits are merged and cut at random into four
  disjoint parts. The black box f (MLPClassifier, 64 tanh units) is trained
  and tested on the first (80/20); the adversary draws its queries from the
  other three.
* The adversary's transfer set is its queries labelled by f plus one
  counterfactual per query, labelled by f (the adversary sees f's
  predictions, as the paper assumes).
* The surrogate has f's architecture ("known") or one more dense layer
  ("unknown"); the score is its accuracy on f's test part (true labels).
* DPC is fitted on the adversary's pool minus its queries: rows disjoint
  from the black box's, as DPC's guarantee needs (the black box must not
  depend on the rows DPC protects). Until issue 18 it was fitted on f's
  training rows.
* DPC at epsilon 0.025 (mean over 3 seeds), against non-private
  counterfactuals: DiCE "random" (the paper's reference) and DPC with
  epsilon = inf (the same method without noise).

The paper's Table 4 on Adult: base extraction 75.2 / 73.6 (known / unknown);
with 1,000 queries, non-DP 81.9 / 80.2 and DPC 68.9 / 67.1.

Saves benchmarks/results/dpc_extraction.json: every cell the table prints
(mean and standard error, and the scores behind them), the settings, seeds,
runtime, date and versions.

Measured runtime (2 cores shared with other benchmarks): ``--sizes 500 1000
--mlp-seeds 2 --dpc-seeds 2`` 25 min (DiCE 1.3 s per counterfactual there),
14 min with ``--no-dice``.

Run: python benchmarks/dpc_extraction.py [--no-dice] [--sizes 250 500 1000 2000] [--mlp-seeds 3]
[--dpc-seeds 3] (dice-ml: the "bench" extra)
"""

import argparse
import time
import warnings

import numpy as np
from sklearn.neural_network import MLPClassifier

from _dpc_bench import black_box, save
from skdpx.counterfactual import DPCounterfactualGenerator
from skdpx.datasets import encode_adult, load_adult

SIZES = (250, 500, 1000, 2000)
ARCHITECTURES = {"known": (64,), "unknown": (64, 64)}


def surrogate_accuracy(queries, labels, extra, extra_labels, X_test, y_test, hidden, seeds):
    """One accuracy per surrogate seed."""
    X = np.vstack([queries, extra])
    y = np.concatenate([labels, extra_labels])
    return [MLPClassifier(hidden_layer_sizes=hidden, activation="tanh", max_iter=300,
                          random_state=s).fit(X, y).score(X_test, y_test) for s in seeds]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-dice", action="store_true")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--mlp-seeds", type=int, default=3, help="surrogate seeds per cell")
    parser.add_argument("--dpc-seeds", type=int, default=3, help="DPC seeds at epsilon 0.025")
    parser.add_argument("--out", default="dpc_extraction.json")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    sizes, mlp_seeds = args.sizes, tuple(range(args.mlp_seeds))
    warnings.simplefilter("ignore")
    train, test = load_adult(subset="train"), load_adult(subset="test")
    enc, enc_test = encode_adult(train.data), encode_adult(test.data)
    X_all = np.vstack([enc.data, enc_test.data])
    y_all = np.concatenate([train.target, test.target])
    parts = np.array_split(np.random.RandomState(0).permutation(len(X_all)), 4)
    own, pool = parts[0], np.concatenate(parts[1:])
    cut = int(0.8 * len(own))
    X, y = X_all[own[:cut]], y_all[own[:cut]]
    X_test, y_test = X_all[own[cut:]], y_all[own[cut:]]
    model = black_box(X, y)
    accuracy = model.score(X_test, y_test)
    print(f"black box f: MLPClassifier(64, tanh) on {len(X):,} rows; test accuracy "
          f"{accuracy:.4f} on {len(X_test):,} rows; the adversary's pool: "
          f"{len(pool):,} rows")
    queries = X_all[pool[:max(sizes)]]
    labels = model.predict(queries)
    X_private = X_all[pool[max(sizes):]]  # DPC's rows: disjoint from f's and from the queries

    def labelled(cf):
        ok = ~np.isnan(cf).any(axis=1)
        return np.where(ok[:, None], cf, 0.0), ok

    results = {"settings": {"sizes": sizes, "mlp_seeds": list(mlp_seeds),
                            "dpc_seeds": {"inf": [0], "0.025": list(range(args.dpc_seeds))},
                            "dice": not args.no_dice, "split_seed": 0, "black_box_seed": 0,
                            "architectures": {k: list(v) for k, v in ARCHITECTURES.items()}},
               "black_box": {"model": "MLPClassifier(64, tanh)", "n_train": int(len(X)),
                             "accuracy": float(accuracy), "n_test": int(len(X_test))},
               "n_pool": int(len(pool)), "n_private": int(len(pool) - max(sizes)),
               "dice_ms_per_query": None, "rows": []}
    sets = {}  # name -> list of (counterfactuals, kept) over seeds
    if not args.no_dice:
        from _dice import dice_random

        cf, seconds = dice_random(model, X, model.predict(X), queries, "opposite",
                                  random_state=0)
        sets["DiCE random (non-DP)"] = [labelled(cf)]
        results["dice_ms_per_query"] = float(1000 * seconds)
        print(f"DiCE random: {seconds * 1000:.0f} ms per counterfactual")
    for eps, seeds in [(np.inf, (0,)), (0.025, tuple(range(args.dpc_seeds)))]:
        runs = []
        for seed in seeds:
            dpc = DPCounterfactualGenerator(model, epsilon=eps, bounds=enc.bounds,
                                            random_state=seed).fit(X_private)
            runs.append(labelled(dpc.transform(queries)))
        sets["DPC eps=inf (non-DP)" if np.isinf(eps) else f"DPC eps={eps:g}"] = runs

    header = "".join(f"{f'{n} {a}':>16}" for n in sizes for a in ARCHITECTURES)
    print(f"\nsurrogate accuracy on f's test part: mean and its standard error over "
          f"{len(mlp_seeds)} surrogate seeds (x {args.dpc_seeds} DPC seeds at epsilon 0.025)")
    print(f"{'transfer set':<24}{header}")
    rows = {"(queries only)": [(np.empty((0, X.shape[1])), np.empty(0, bool))], **sets}
    for name, runs in rows.items():
        cells, saved = [], []
        for n in sizes:
            for arch, hidden in ARCHITECTURES.items():
                scores = []
                for cf, ok in runs:
                    cf_n, ok_n = cf[:n], ok[:n]
                    extra = cf_n[ok_n]
                    extra_labels = model.predict(extra) if len(extra) else np.empty(0, int)
                    scores += surrogate_accuracy(queries[:n], labels[:n], extra, extra_labels,
                                                 X_test, y_test, hidden, seeds=mlp_seeds)
                mean, se = np.mean(scores), np.std(scores) / np.sqrt(len(scores))
                cells.append(f"{mean:.4f}+-{se:.4f}")
                saved.append({"n_queries": int(n), "architecture": arch, "accuracy": float(mean),
                              "standard_error": float(se),
                              "scores": [float(v) for v in scores]})
        print(f"{name:<24}" + "".join(f"{v:>16}" for v in cells), flush=True)
        results["rows"].append({"transfer_set": name, "cells": saved})
    save(args.out, results, started)


if __name__ == "__main__":
    main()
