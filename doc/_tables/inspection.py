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
              "uniform, noiseless", "epsilon 1: mean over releases",
              "noise_std (the score part: run before the marginal's part)"]
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


# --------------------------------------------------------------------------
# benchmarks/permutation_importance_coverage.py (permutation_importance_coverage*.json)
# --------------------------------------------------------------------------
def _setting(row):
    return f"{row['task']}, n_bins={row['n_bins']}, epsilon {row['epsilon']:g}"


def permutation_coverage_summary(results):
    """Per setting: the coverage of the noiseless-marginal importance by +-1.645 noise_std
    (lowest over the features) and by the score part alone, how conservative the total
    is, and how many features are distinguishable from 0."""
    header = ["setting", "releases", "coverage, total std (lowest feature)",
              "coverage, score part only (lowest)", "total std / empirical std (median)",
              "distinguishable: score part only -> total std"]
    rows = []
    for r in results["rows"]:
        ratio = sorted(r["conservative"])[len(r["conservative"]) // 2]
        rows.append([_setting(r), r["releases"], f"{min(r['coverage_total']):.2f}",
                     f"{min(r['coverage_score_only']):.2f}", f"{ratio:.1f}",
                     f"{r['distinguishable_score_only']:.1f} -> "
                     f"{r['distinguishable_total']:.1f}"])
    return header, rows


def permutation_coverage(results):
    """Per setting and feature: the noiseless-marginal importance, the coverage of
    +-1.645 noise_std (and of the score part alone), the mean std and its parts, the
    empirical std of importances_mean across releases, the mean error (its bias: the
    marginal's threshold) and the root mean square error."""
    header = ["setting", "feature", "noiseless-marginal importance", "coverage",
              "coverage, score part only", "mean noise_std", "score part", "marginal part",
              "empirical std", "mean error (bias)", "RMSE"]
    rows = []
    for r in results["rows"]:
        means = [[run["importances_mean"][j] for run in r["runs"]]
                 for j in range(len(r["features"]))]
        for j, name in enumerate(r["features"]):
            bias = sum(means[j]) / len(means[j]) - r["target"][j]
            rows.append([_setting(r), name, f"{r['target'][j]:.4f}",
                         f"{r['coverage_total'][j]:.2f}", f"{r['coverage_score_only'][j]:.2f}",
                         f"{r['mean_noise_std'][j]:.4f}", f"{r['mean_score_noise_std'][j]:.4f}",
                         f"{r['mean_marginal_noise_std'][j]:.4f}",
                         f"{r['empirical_std'][j]:.4f}", f"{bias:+.4f}",
                         f"{r['rmse_to_target'][j]:.4f}"])
    return header, rows
