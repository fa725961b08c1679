"""Tables of the global importance benchmark.

benchmarks/global_importance_coverage.py (global_importance_coverage.json).
"""


def bias(results):
    """Mean error of the mean |v| and of ``debiased`` against the noiseless mean |a|."""
    header = ["noiseless attributions", "mean |v|: bias", "debiased: bias", "mean |v|: sd",
              "debiased: sd"]
    rows = [[r["population"], f"{r['bias_mean_abs']:+.3f}", f"{r['bias_debiased']:+.3f}",
             f"{r['sd_mean_abs']:.3f}", f"{r['sd_debiased']:.3f}"] for r in results["bias"]]
    return header, rows


def rows_coverage(results):
    """Coverage of rows_low-rows_high, and with noise_std halved."""
    header = ["case", "coverage", "with noise_std halved", "noise_std / actual sd"]
    rows = [[r["case"], f"{r['coverage']:.1%}", f"{r['coverage_halved']:.1%}",
             f"{r['sd_bound_over_actual']:.2f}"] for r in results["rows_coverage"]]
    return header, rows


def population_coverage(results):
    """Coverage of low-high of the population mean |a|, and with the standard errors halved."""
    header = ["population of a", "noise", "coverage", "with the standard errors halved"]
    rows = [[r["population"], r["noise"], f"{r['coverage']:.1%}", f"{r['coverage_halved']:.1%}"]
            for r in results["population_coverage"]]
    return header, rows


def flags(results):
    """How often a column is ``supported``."""
    header = ["attributions", "a feature", "a 4-level one-hot block"]
    rows = [[r["case"], f"{r['feature']:.1%}", f"{r['block_of_4']:.1%}"]
            for r in results["flags"]]
    return header, rows
