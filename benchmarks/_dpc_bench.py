"""Shared runner of the DPCounterfactualGenerator benchmarks (issue 5).

For one dataset: a black box (scikit-learn MLPClassifier, tanh units, as the
paper's fully-connected networks) trained on half of the test split, DPC
fitted on the training split (disjoint: ``disjoint_split``), 500 random
queries from the other half of the test split, DPC at several
epsilons next to DiCE's "random" method (not private) on the same black box
and queries: flip ratio (the paper's eq. 20), average L2 distance (eq. 21)
and time per counterfactual, as a ratio measured side by side.

Each benchmark saves what its tables print, with its settings and seeds, and
``_run_record``'s commit, date, runtime, versions, machine and command
(``run``), as ``benchmarks/results/<name>.json`` (:func:`save`); the docs
render their tables from those files.
"""

import sys
import time
from pathlib import Path

import numpy as np
from sklearn.neural_network import MLPClassifier

from skdpx.counterfactual import DPCounterfactualGenerator
from skdpx.metrics import average_distance, flip_ratio

import _run_record

#: when the benchmark started (it imports this module first)
STARTED = _run_record.start()
RESULTS = Path(__file__).resolve().parent / "results"


def eps_key(eps):
    """An epsilon as JSON can hold it: a float, or the string "inf"."""
    return "inf" if np.isinf(eps) else float(eps)


def save(name, results, started):
    """Write ``results`` with the run's record (``run``: commit, date, runtime since
    ``started``, a :func:`time.perf_counter` reading, versions, machine, command) to
    ``benchmarks/results/<name>``."""
    out = {"benchmark": Path(sys.argv[0]).name, **results,
           "run": _run_record.run_info(STARTED, time.perf_counter() - started,
                                       packages=("dice-ml",))}
    path = RESULTS / name
    _run_record.save(path, out)
    print(f"\nsaved {path} ({out['run']['seconds']:.0f} s)")
    return out


def disjoint_split(X_test, y_test):
    """The black box's rows, disjoint from DPC's: the second half of the test split.

    DPCounterfactualGenerator's guarantee covers the rows it is fitted on when
    the black box does not depend on them (the prototypes' classes are the
    black box's predictions on those rows). DPC keeps the whole training
    split; the black box is trained on the second half of the test split,
    and the queries and the black box's accuracy come from the first half.
    Returns ``(X_queries, y_queries, X_model, y_model)``.
    """
    half = len(X_test) // 2
    return X_test[:half], y_test[:half], X_test[half:], y_test[half:]



def adult_tables():
    """Adult for DPC: the encoded training split (private; ``.data``, ``.bounds``) and
    :func:`disjoint_split` of the encoded test split.

    Returns ``(encoded_train, X_queries, y_queries, X_model, y_model)``.
    """
    from skdpx.datasets import encode_adult, load_adult

    train, test = load_adult(subset="train"), load_adult(subset="test")
    return (encode_adult(train.data),) + disjoint_split(encode_adult(test.data).data, test.target)


def black_box(X, y, *, hidden=(64,), random_state=0):
    return MLPClassifier(hidden_layer_sizes=hidden, activation="tanh", max_iter=300,
                         random_state=random_state).fit(X, y)


def run(name, model, X, bounds, queries, *, epsilons, desired_class="opposite", latent_dim=16,
        dpc_params=None, dice=True, X_dice=None, y_dice=None, n_dice=None, seeds=(0,)):
    """Print one table; return what it printed, as a dict for :func:`save`.

    ``{"dataset", "n_train", "n_features", "n_queries", "desired_class",
    "latent_dim", "dpc_params", "seeds", "rows": [one per epsilon: "method",
    "ae_method", "epsilon", "flip_ratio" (mean over seeds), "worst_seed",
    "avg_dist", "ms_per_query", "fit_seconds", "per_seed" (with each seed's
    ``meta["found_by"]``: the counterfactuals each stage of the search
    found)], "dice": {...} or
    None, "time_ratio_vs_dice": {epsilon: DPC's time per counterfactual /
    DiCE's}}``.
    """
    shown = desired_class if isinstance(desired_class, str) else "given per query"
    print(f"{name}: {len(X):,} training rows, {X.shape[1]} columns, {len(queries)} queries, "
          f"desired class {shown}")
    print(f"{'method':<30} {'flip ratio':>10} {'(min seed)':>10} {'avg dist':>9} {'ms/query':>9}")
    method = (dpc_params or {}).get("ae_method", "dpsgd")
    out = {"dataset": name, "n_train": int(len(X)), "n_features": int(X.shape[1]),
           "n_queries": int(len(queries)), "desired_class": shown, "latent_dim": latent_dim,
           "dpc_params": {k: (list(v) if isinstance(v, tuple) else v)
                          for k, v in (dpc_params or {}).items()},
           "seeds": [int(s) for s in seeds], "rows": [], "dice": None, "time_ratio_vs_dice": {}}
    per_query = {}
    for eps in epsilons:
        rows, fits, found_by = [], [], []
        for seed in seeds:
            t0 = time.perf_counter()
            dpc = DPCounterfactualGenerator(model, epsilon=eps, latent_dim=latent_dim,
                                            desired_class=desired_class, bounds=bounds,
                                            random_state=seed, **(dpc_params or {})).fit(X)
            fits.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            result = dpc.explain(queries)
            seconds = (time.perf_counter() - t0) / len(queries)
            fr = flip_ratio(model, result.counterfactuals, result.desired_class)
            found_by.append({k: int(v) for k, v in result.meta.get("found_by", {}).items()})
            rows.append((fr, average_distance(queries, result.counterfactuals,
                                              valid=result.valid), seconds))
        fr, dist, seconds = np.nanmean(rows, axis=0)
        worst = np.min(np.asarray(rows)[:, 0])
        per_query[eps] = seconds
        label = f"DPC {method} eps={eps:g}" + (f" ({len(seeds)} seeds)" if len(seeds) > 1 else "")
        print(f"{label:<30} {fr:>10.3f} {worst:>10.3f} {dist:>9.3f} {1000 * seconds:>9.2f}",
              flush=True)
        out["rows"].append({
            "method": label, "ae_method": method, "epsilon": eps_key(eps),
            "flip_ratio": float(fr), "worst_seed": float(worst), "avg_dist": float(dist),
            "ms_per_query": float(1000 * seconds), "fit_seconds": float(np.mean(fits)),
            "per_seed": [{"seed": int(s), "flip_ratio": float(r[0]), "avg_dist": float(r[1]),
                          "ms_per_query": float(1000 * r[2]), "fit_seconds": float(f),
                          "found_by": b}
                         for s, r, f, b in zip(seeds, rows, fits, found_by)]})
    if dice:
        from _dice import dice_random

        n = len(queries) if n_dice is None else n_dice
        X_d = X if X_dice is None else X_dice
        y_d = model.predict(X_d) if y_dice is None else y_dice
        if isinstance(desired_class, str):
            cf, seconds = dice_random(model, X_d, y_d, queries[:n], desired_class, random_state=0)
            desired = 1 - model.predict(queries[:n])
        else:  # one call per desired class
            desired = np.broadcast_to(np.asarray(desired_class), (len(queries),))[:n]
            cf, total = np.full((n, X.shape[1]), np.nan), 0.0
            for c in np.unique(desired):
                rows = np.flatnonzero(desired == c)
                cf[rows], s = dice_random(model, X_d, y_d, queries[rows], int(c), random_state=0)
                total += s * len(rows)
            seconds = total / n
        fr = flip_ratio(model, cf, desired)
        valid = ~np.isnan(cf).any(axis=1) & (model.predict(np.nan_to_num(cf)) == desired)
        dist = average_distance(queries[:n], cf, valid=valid)
        print(f"{'DiCE random (non-DP)':<30} {fr:>10.3f} {'':>10} {dist:>9.3f} {1000 * seconds:>9.2f}"
              f"   ({n} queries)")
        out["dice"] = {"method": "DiCE random (non-DP)", "n_queries": int(n),
                       "flip_ratio": float(fr), "avg_dist": float(dist),
                       "ms_per_query": float(1000 * seconds)}
        for eps, s in per_query.items():
            print(f"time per counterfactual, DPC eps={eps:g} / DiCE random: {s / seconds:.3f}")
            out["time_ratio_vs_dice"][str(eps_key(eps))] = float(s / seconds)
    return out
