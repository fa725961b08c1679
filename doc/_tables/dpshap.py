"""Tables of the DPShapExplainer benchmark.

benchmarks/dpshap_adult.py (dpshap_adult.json).
"""


def _cov(value):
    return "-" if value is None else f"{value:.1%}"


def summary(results):
    """Per background: error to the reference, the std's coverage, the points kept."""
    header = ["background", "points", "MAE to the reference",
              "relative error (sum |diff| / sum |ref|)", "median per-query relative error",
              "mean std", "noiseless-table answer within +-1.645 std"]
    rows = [[r["background"], r["n_points"], f"{r['mae']:.3g}", f"{r['relative']:.1%}",
             f"{r['per_query_relative_median']:.1%}", f"{r['mean_std']:.2g}",
             _cov(r["coverage"])] for r in results["rows"]]
    return header, rows


def noise_only(results):
    """DP rows against the noiseless k-means and the noiseless last table (the noise's part),
    and the std's coverage on numeric and categorical columns."""
    header = ["background", "relative error to noiseless k-means",
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


def kmeans_relative(results):
    """The noiseless k-means background's relative error to the reference."""
    return next(r["relative"] for r in results["rows"] if r["background"].startswith("k-means"))


def subsample_relative(results):
    """Another random subsample's relative error to the reference (its sampling error)."""
    return next(r["relative"] for r in results["rows"]
                if r["background"].startswith("another random subsample"))


# benchmarks/dpshap_mixture_diagnostic.py (dpshap_mixture_diagnostic.json)
def mixture_error(results):
    """Noiseless k-means background: argmax decoding vs each centre as r mixture records."""
    header = ["centres as", "relative error to the reference",
              "median per-query relative error", "time per query relative to the argmax"]
    rows = [[r["decoding"], f"{r['relative']:.1%}", f"{r['per_query_relative_median']:.1%}",
             f"{r['time_ratio']:.1f}" if "time_ratio" in r else "-"]
            for r in results["noiseless_kmeans"]]
    return header, rows


def mixture_columns(results):
    """Per column: sum |ref| and sum |diff| of the argmax, the largest r and the probe."""
    rows_in = results["noiseless_kmeans"]
    argmax, probe = rows_in[0], rows_in[-1]
    largest = max(rows_in[1:-1], key=lambda r: r["records"])
    header = ["column", "kind", "sum |ref|", "sum |diff|: argmax",
              f"sum |diff|: mixture, {largest['records']} records",
              "sum |diff|: capital columns at 0"]
    rows = [[c, "categorical" if cat else "numeric", f"{ref:.2f}",
             f"{argmax['per_column'][j]:.2f}", f"{largest['per_column'][j]:.2f}",
             f"{probe['per_column'][j]:.2f}"]
            for j, (c, cat, ref) in enumerate(zip(results["columns"], results["categorical"],
                                                  results["reference_abs_sum_per_column"]))]
    return header, rows


def mixture_coverage(results):
    """DP fits (epsilon 1): the std's coverage with the argmax and with the mixture."""
    header = ["fit", "centres as", "relative error to the reference",
              "relative error to the noiseless last table", "mean std",
              "within +-1.645 std", "numeric columns", "categorical columns"]
    rows = [[r["seed"], r["decoding"], f"{r['relative']:.1%}",
             f"{r['to_noiseless_table']['relative']:.1%}",
             f"{r['mean_std']:.2g}", f"{r['coverage']:.1%}", f"{r['coverage_numeric']:.1%}",
             f"{r['coverage_categorical']:.1%}"] for r in results["dp_coverage"]]
    return header, rows


def mixture_time_ratio(results, records=4):
    """The time per query with ``records`` mixture records per centre, relative to the argmax."""
    return next(r["time_ratio"] for r in results["noiseless_kmeans"] if r["records"] == records
                and "time_ratio" in r and r["decoding"].startswith("mixture"))


def mixture_range(results):
    """The noiseless k-means error over the mixture's numbers of records, as text."""
    values = [r["relative"] for r in results["noiseless_kmeans"]
              if r["decoding"].startswith("mixture")]
    low, high = f"{min(values):.0%}", f"{max(values):.0%}"
    return low if low == high else f"{low} to {high}"


def capital_share(results):
    """The share of the argmax background's error (sum |diff|) held by capital-gain."""
    argmax = results["noiseless_kmeans"][0]["per_column"]
    return argmax[results["columns"].index("capital-gain")] / sum(argmax)


def mixture_coverages(results):
    """Per DP fit: the coverage with the argmax and with the mixture, as text."""
    rows = results["dp_coverage"]
    pairs = [(a, m) for a, m in zip(rows[::2], rows[1::2])]
    return "; ".join(f"fit {a['seed']}: {a['coverage']:.1%} with the argmax, "
                     f"{m['coverage']:.1%} with the mixture" for a, m in pairs)
