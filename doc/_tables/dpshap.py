"""Tables of the DPShapExplainer benchmark.

benchmarks/dpshap_adult.py (dpshap_adult.json).
"""


def _cov(value):
    return "-" if value is None else f"{value:.1%}"


def summary(results):
    """Per background: error to the reference, the std's coverage, the points kept."""
    header = ["background", "records (clusters)", "MAE to the reference",
              "relative error (sum |diff| / sum |ref|)", "median per-query relative error",
              "mean std", "noiseless-table answer within +-1.645 std"]
    rows = [[r["background"], f"{r['n_points']}" + (f" ({r['clusters']})" if "clusters" in r
                                                       else ""),
             f"{r['mae']:.3g}", f"{r['relative']:.1%}",
             f"{r['per_query_relative_median']:.1%}", f"{r['mean_std']:.2g}",
             _cov(r["coverage"])] for r in results["rows"]]
    return header, rows


def noise_only(results):
    """DP rows against the noiseless background (epsilon=inf) and the noiseless last table
    (the noise's part), and the std's coverage on numeric and categorical columns."""
    header = ["background", "relative error to the noiseless background (epsilon=inf)",
              "relative error to the noiseless last table", "coverage: numeric columns",
              "coverage: categorical columns"]
    rows = [[r["background"], f"{r['to_kmeans']['relative']:.1%}",
             f"{r['to_noiseless_table']['relative']:.1%}",
             _cov(r.get("coverage_numeric")), _cov(r.get("coverage_categorical"))]
            for r in results["rows"] if "to_kmeans" in r]
    return header, rows


def timing(results):
    """Time per query, side by side: shap's KernelExplainer + shap.kmeans(X, 50) vs ours."""
    t = results["timing"]
    header = ["explainer", "seconds per query", "ratio to shap",
              "relative error to the reference"]
    rows = [["shap KernelExplainer, shap.kmeans(X, 50), default nsamples",
             f"{t['shap_kernel_kmeans50_per_query']:.2f}", "1",
             f"{t['shap_kmeans50_relative_error']:.1%}"],
            [f"DPShapExplainer (epsilon 1, {t['dpshap_coalitions']} coalitions, std)",
             f"{t['dpshap_per_query']:.2f}", f"{t['ratio']:.2f}", "-"],
            ["DPShapExplainer, n_std_draws=0", f"{t['dpshap_per_query_no_std']:.2f}",
             f"{t['ratio_no_std']:.2f}", f"{t['dpshap_default_relative_error']:.1%}"]]
    return header, rows


def reference_size(results):
    """The mean |SHAP value| of the reference (the scale of the errors)."""
    return results["reference_size"]["mean_abs_value"]


def shap_check(results):
    """shap's own KernelExplainer on the reference rows against skdpx's engine (relative)."""
    return results["shap_reference_check"]["relative"]


def _dp_rows(results, epsilon):
    return [r for r in results["rows"] if r.get("epsilon") == epsilon and "seed" in r]


def coverages(results, epsilon=1.0):
    """The std's coverage of each DP fit at ``epsilon``, as text ("61.6% and 84.9%")."""
    values = [f"{r['coverage']:.1%}" for r in _dp_rows(results, epsilon)]
    return ", ".join(values[:-1]) + " and " + values[-1] if len(values) > 1 else values[0]


def dp_relative(results, epsilon=1.0):
    """The relative error of each DP fit at ``epsilon`` to the reference, as text."""
    values = [f"{r['relative']:.0%}" for r in _dp_rows(results, epsilon)]
    return ", ".join(values[:-1]) + " and " + values[-1] if len(values) > 1 else values[0]


def noiseless_relative(results):
    """The noiseless background's (epsilon=inf) relative error to the reference."""
    return next(r["relative"] for r in results["rows"]
                if r["epsilon"] == "inf" and "noiseless" in r["background"])


def subsample_relative(results):
    """Another random subsample's relative error to the reference (its sampling error)."""
    return next(r["relative"] for r in results["rows"]
                if r["background"].startswith("another random subsample"))
