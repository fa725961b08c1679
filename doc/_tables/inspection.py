"""Tables of the partial dependence benchmark.

benchmarks/partial_dependence_adult.py (partial_dependence_adult.json).
"""


def summary(results):
    """Per epsilon (per feature): mean absolute error, mean std, coverage of +-1.645 std."""
    header = ["epsilon per feature", "grid points x releases", "MAE to the exact curve",
              "mean std", "exact within +-1.645 std"]
    rows = [[f"{r['epsilon']:g}", f"{r['grid_points']:,}", f"{r['mae']:.2g}",
             f"{r['mean_std']:.2g}", f"{r['coverage']:.1%}"] for r in results["rows"]]
    return header, rows


def by_feature(results):
    """Per feature: its grid, the range of its exact curve and the MAE at each epsilon."""
    eps = [r["epsilon"] for r in results["rows"]]
    header = ["feature", "kind", "grid points", "exact curve: min - max"] + [
        f"MAE at {e:g}" for e in eps]
    rows = []
    for f in results["features"]:
        maes = [r["mae_by_feature"][f["feature"]] for r in results["rows"]]
        rows.append([f["feature"], f["kind"], f["grid_points"],
                     f"{min(f['exact']):.3f} - {max(f['exact']):.3f}"]
                    + [f"{m:.2g}" for m in maes])
    return header, rows


def sklearn_check(results):
    """The largest difference between the exact curve and scikit-learn's (brute)."""
    return max(f["max_diff_to_sklearn"] for f in results["features"]
               if f["max_diff_to_sklearn"] is not None)
