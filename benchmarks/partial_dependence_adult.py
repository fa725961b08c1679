"""DP partial dependence on Adult (issue 40, target a).

Black box: HistGradientBoostingClassifier (categorical columns from their
pandas dtype) trained on Adult's test split (16,281 rows); the private rows
are the training split (32,561 rows), which the black box never saw. Five
numeric features (age, education-num, capital-gain, capital-loss,
hours-per-week: grids of ``--grid`` evenly spaced points over Adult's
public bounds, integers rounded) and three categorical ones (education,
marital-status, sex: their declared levels), each released by
``skdpx.inspection.partial_dependence`` at epsilon 0.1 and 1 per feature
(delta 1e-6; secure noise, ``--repeats`` releases each).

Measured per epsilon: the mean absolute error of the DP curve to the exact
one (the non-private average on the same grid: the same function at
epsilon=inf, checked against scikit-learn's ``partial_dependence`` on the
first numeric feature), and the share of grid points whose exact value lies
within ``average +- 1.645 std`` (the target: 85-97%).

Run: python benchmarks/partial_dependence_adult.py [--grid 10] [--repeats 3] [--jobs 2]
     [--out benchmarks/results/partial_dependence_adult.json]
(--jobs: features run side by side in processes.)
"""

import argparse
import os
import time
import warnings

from joblib import Parallel, delayed
import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.inspection import partial_dependence as sk_partial_dependence

from skdpx.datasets import adult_schema, load_adult
from skdpx.inspection import partial_dependence

from _run_record import run_info, save, start

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                       "partial_dependence_adult.json")
NUMERIC = ["age", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
CATEGORICAL = ["education", "marital-status", "sex"]
EPSILONS = (0.1, 1.0)
DELTA = 1e-6


def run_feature(black_box, X_private, name, public, repeats):
    """The exact curve of one feature and ``repeats`` DP releases at each epsilon."""
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # uncapped: the non-private baseline
        exact = partial_dependence(black_box, X_private, name, epsilon=np.inf, **public)
    grid = exact.grid_values[0]
    check = None
    if name == NUMERIC[0]:  # scikit-learn's exact average on the same grid (a float column)
        sk = sk_partial_dependence(black_box, X_private.astype({name: float}), [name],
                                   custom_values={name: grid.astype(float)},
                                   kind="average", method="brute")["average"]
        check = float(np.abs(sk - exact.average).max())
    feature = {"feature": name, "kind": "numeric" if name in NUMERIC else "categorical",
               "grid_points": int(len(grid)), "exact": exact.average[0].tolist(),
               "grid": [g if isinstance(g, str) else float(g) for g in grid],
               "max_diff_to_sklearn": check, "releases": []}
    for epsilon in EPSILONS:
        for rep in range(repeats):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # uncapped: each release is its own run
                r = partial_dependence(black_box, X_private, name, epsilon=epsilon,
                                       delta=DELTA, **public)
            err = np.abs(r.average[0] - exact.average[0])
            feature["releases"].append({
                "epsilon": epsilon, "repeat": rep, "average": r.average[0].tolist(),
                "std": r.std[0].tolist(), "n_rows": r.n_rows, "mae": float(err.mean()),
                "covered": int((err <= 1.645 * r.std[0]).sum())})
    feature["seconds"] = round(time.perf_counter() - t, 1)
    print(f"{name:>15} ({len(grid)} points, {feature['seconds']:.0f} s)"
          + ("" if check is None else f"  |exact - sklearn| <= {check:.1e}"), flush=True)
    return feature


def adult_black_box():
    """Adult's training split (the private rows), the HistGradientBoostingClassifier
    trained on its test split, the test split and the public schema (shared with
    benchmarks/dpshap_adult.py)."""
    X_private, _ = load_adult(subset="train", as_frame=True, return_X_y=True)
    X_model, y_model = load_adult(subset="test", as_frame=True, return_X_y=True)
    black_box = HistGradientBoostingClassifier(categorical_features="from_dtype",
                                               random_state=0).fit(X_model, y_model)
    return X_private, X_model, black_box, adult_schema()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", default=RESULTS)
    args = parser.parse_args()
    started, t0 = start(), time.perf_counter()

    X_private, _, black_box, schema = adult_black_box()
    public = dict(bounds=schema["bounds"], categories=schema["categories"],
                  grid_resolution=args.grid)

    jobs = [delayed(run_feature)(black_box, X_private, name, public, args.repeats)
            for name in NUMERIC + CATEGORICAL]
    features = Parallel(n_jobs=args.jobs)(jobs)
    rows = []
    for epsilon in EPSILONS:
        rel = [(f, r) for f in features for r in f["releases"] if r["epsilon"] == epsilon]
        points = sum(f["grid_points"] for f, _ in rel)
        covered = sum(r["covered"] for _, r in rel)
        mae = float(np.mean([r["mae"] for _, r in rel]))
        per_feature = {f["feature"]: float(np.mean([r["mae"] for g, r in rel if g is f]))
                       for f in features}
        std = float(np.mean([np.mean(r["std"]) for _, r in rel]))
        rows.append({"epsilon": epsilon, "mae": mae, "coverage": covered / points,
                     "grid_points": points, "mean_std": std, "mae_by_feature": per_feature})
        print(f"epsilon {epsilon:g} per feature: MAE {mae:.4f}, mean std {std:.4f}, "
              f"coverage of +-1.645 std {covered}/{points} = {covered / points:.1%}")

    results = {"settings": {"grid_resolution": args.grid, "repeats": args.repeats,
                            "epsilons_per_feature": list(EPSILONS),
                            "delta": DELTA, "numeric": NUMERIC, "categorical": CATEGORICAL,
                            "black_box": "HistGradientBoostingClassifier(categorical_features="
                                         "'from_dtype', random_state=0) on the test split",
                            "private_rows": int(len(X_private))},
               "rows": rows, "features": features}
    results["run"] = run_info(started, time.perf_counter() - t0, packages=())
    save(args.out, results)
    print(f"saved {args.out}")


if __name__ == "__main__":
    main()
