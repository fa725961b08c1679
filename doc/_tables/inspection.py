"""Tables of the partial dependence and permutation importance benchmarks.

benchmarks/partial_dependence_adult.py (partial_dependence_adult.json),
benchmarks/permutation_importance.py (permutation_importance.json).
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


# --------------------------------------------------------------------------
# benchmarks/permutation_importance.py (permutation_importance.json)
# --------------------------------------------------------------------------
def _rho(value, low=None):
    if value is None:
        return ""
    return f"{value:.3f}" + ("" if low is None else f" (min {low:.3f})")


def permutation_summary(results):
    """Per data set and setting: Spearman rank correlation of importances_mean with
    scikit-learn's exact permutation importance and with the noiseless scheme."""
    header = ["data set", "replacement", "epsilon (total)", "releases",
              "rank corr. with scikit-learn's", "rank corr. with the noiseless scheme"]
    rows = []
    for r in results["rows"]:
        eps = "" if r["epsilon"] is None else f"{r['epsilon']:g}"
        rows.append([r["task"], r["replacement"], eps, r["releases"],
                     _rho(r["rho_sklearn_mean"], r["rho_sklearn_min"]),
                     _rho(r["rho_noiseless_mean"], r["rho_noiseless_min"])])
    return header, rows


def _features(results, task):
    runs = [r for r in results["runs"] if r["task"] == task]
    exact = next(r for r in runs if r["kind"] == "sklearn" and r["seed"] == 0)
    noiseless = next(r for r in runs if r["kind"] == "skdpx" and r["epsilon"] is None
                     and r["replacement"] == "marginal")
    uniform = next(r for r in runs if r["kind"] == "skdpx" and r["epsilon"] is None
                   and r["replacement"] == "uniform")
    dp = [r for r in runs if r["kind"] == "skdpx" and r["epsilon"] == 1.0
          and r["replacement"] == "marginal"]
    header = ["feature", "scikit-learn (exact)", "DP marginal, noiseless",
              "uniform, noiseless", "epsilon 1: mean over releases", "noise_std"]
    rows = []
    for j, name in enumerate(noiseless["feature_names"]):
        rows.append([name, f"{exact['importances_mean'][j]:.4f}",
                     f"{noiseless['importances_mean'][j]:.4f}",
                     f"{uniform['importances_mean'][j]:.4f}",
                     f"{sum(r['importances_mean'][j] for r in dp) / len(dp):.4f}",
                     f"{sum(r['noise_std'][j] for r in dp) / len(dp):.4f}"])
    return header, rows


def permutation_features_adult(results):
    """Adult: each feature's importance (accuracy drop) by each method."""
    return _features(results, "adult")


def permutation_features_diabetes130(results):
    """diabetes130: each feature's importance (accuracy drop) by each method."""
    return _features(results, "diabetes130")
