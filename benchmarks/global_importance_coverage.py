"""Global importance of many attributions: bias, interval coverage and the noise flag.

FeatureAttribution.global_importance (skdpx/results/_summary.py) summarises
many released attributions ``v = a + e`` (``e ~ N(0, s^2)``, ``s`` the row's
std) into the mean ``|v|`` per column with its uncertainty. This benchmark
simulates known noiseless attributions ``a`` and noise of known std, and
measures, over many repetitions of ``n`` rows (one column each, in one call):

* the bias of the mean ``|v|`` and of the folded-normal ``debiased`` mean, by
  ``|a| / s``;
* the coverage of the two intervals at level 0.9: ``rows_low``-``rows_high``
  (the noiseless mean of the rows, over the noise) and ``low``-``high`` (the
  population's mean ``|a|``, over sampling and noise), and the same with
  their standard deviations halved (what a test must catch);
* how often a column of noise alone is ``supported`` (passes its noise
  floor), for a feature and a 4-level one-hot block, and how often a small
  signal is.

The noise here is the benchmark's simulation (numpy, seeded), not a release.
Run: ``python benchmarks/global_importance_coverage.py`` (about a minute);
writes ``benchmarks/results/global_importance_coverage.json``.
"""

import os
import time

import numpy as np

from _run_record import run_info, save, start
from skdpx import FeatureAttribution
from skdpx.results._summary import summarize

HERE = os.path.dirname(os.path.abspath(__file__))
N, REPS, LEVEL = 50, 2000, 0.9
Z = 1.6448536269514722  # the normal's 0.95 quantile: LEVEL's two-sided z


def bias_rows(rng):
    """Mean error (and sd) of the mean |v| and of ``debiased`` against mean |a|, s = 1."""
    rows = []
    for a in (0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0):
        v = a + rng.standard_normal((N, REPS))
        f = summarize(v, np.ones((N, REPS)), None, level=LEVEL)
        rows.append({"population": f"|a| = {a:g} s",
                     "bias_mean_abs": float((f["importance"] - a).mean()),
                     "bias_debiased": float((f["debiased"] - a).mean()),
                     "sd_mean_abs": float(f["importance"].std()),
                     "sd_debiased": float(f["debiased"].std())})
    for name, draw in (("a ~ N(0, s^2)", lambda: rng.normal(0, 1, (N, REPS))),
                       ("half 0, half 3 s", lambda: np.where(rng.random((N, REPS)) < 0.5, 0, 3.0))):
        a = draw()
        v = a + rng.standard_normal((N, REPS))
        f = summarize(v, np.ones((N, REPS)), None, level=LEVEL)
        target = np.abs(a).mean(axis=0)
        rows.append({"population": name,
                     "bias_mean_abs": float((f["importance"] - target).mean()),
                     "bias_debiased": float((f["debiased"] - target).mean()),
                     "sd_mean_abs": float((f["importance"] - target).std()),
                     "sd_debiased": float((f["debiased"] - target).std())})
    return rows


def rows_coverage(rng):
    """Coverage of rows_low-rows_high of the rows' noiseless mean |a|, and with noise_std halved."""
    s = rng.uniform(0.5, 1.5, (N, 1)) * np.ones((1, REPS))
    out = []
    for name, a in (("|a| = 3 s (signal)", np.full((N, REPS), 3.0)),
                    ("a = 0 (noise only)", np.zeros((N, REPS))),
                    ("half 0, half N(0, 4 s^2)",
                     np.where(rng.random((N, REPS)) < 0.5, 0.0, rng.normal(0, 2, (N, REPS))))):
        v = a + s * rng.standard_normal((N, REPS))
        f = summarize(v, s, None, level=LEVEL)
        target = np.abs(a).mean(axis=0)
        half_low = np.maximum(f["importance"] - f["noise_level"] - Z * f["noise_std"] / 2, 0)
        half_high = f["importance"] + Z * f["noise_std"] / 2
        out.append({"case": name,
                    "coverage": float(((f["rows_low"] <= target) & (target <= f["rows_high"])).mean()),
                    "coverage_halved": float(((half_low <= target) & (target <= half_high)).mean()),
                    "sd_bound_over_actual": float(f["noise_std"].mean() / (
                        np.abs(v).mean(axis=0) - target).std())})
    return out


def population_coverage(rng):
    """Coverage of low-high of the population's mean |a|, and with the standard errors halved."""
    out = []
    for pop_name, pop in (("N(0.5, 4)", rng.normal(0.5, 2.0, 100_000)),
                          ("half 0, half N(0, 16)",
                           np.r_[np.zeros(50_000), rng.normal(0, 4, 50_000)])):
        mu = np.abs(pop).mean()
        for noise, (lo, hi) in (("small (s in 0.01-0.05)", (0.01, 0.05)),
                                ("large (s in 0.5-1.5)", (0.5, 1.5))):
            a = rng.choice(pop, (N, REPS))
            s = rng.uniform(lo, hi, (N, REPS))
            v = a + s * rng.standard_normal((N, REPS))
            f = summarize(v, s, None, level=LEVEL)
            corrected = np.abs(v) - s * np.sqrt(2 / np.pi)
            c_se = corrected.std(axis=0, ddof=1) / np.sqrt(N)
            half_low = np.maximum(corrected.mean(axis=0) - Z * c_se / 2, 0)
            half_high = f["importance"] + Z * f["sampling_se"] / 2
            out.append({"population": pop_name, "noise": noise,
                        "coverage": float(((f["low"] <= mu) & (mu <= f["high"])).mean()),
                        "coverage_halved": float(((half_low <= mu) & (mu <= half_high)).mean())})
    return out


def flag_rates(rng, reps=500):
    """How often ``supported`` is True: noise alone, and a signal of 1.4 s per row."""
    out = []
    groups = [("x", [0]), ("c", [1, 2, 3, 4])]
    for name, a in (("noise only", np.zeros(5)), ("signal 1.4 s", np.array([1.0, 0, 1.0, 0, 0]))):
        hits = []
        for _ in range(reps):  # one result per repetition: its columns are x and c
            v = a + 0.7 * rng.standard_normal((N, 5))
            fa = FeatureAttribution(v, epsilon=1.0, std=np.full((N, 5), 0.7), groups=groups,
                                    feature_range=np.ones(5), epsilon_spent=1.0,
                                    delta_spent=0.0)
            hits.append(fa.global_importance().supported)
        hits = np.array(hits)
        out.append({"case": name, "feature": float(hits[:, 0].mean()),
                    "block_of_4": float(hits[:, 1].mean())})
    return out


def main():
    started, t0 = start(), time.perf_counter()
    rng = np.random.default_rng(0)
    results = {"n_rows": N, "repetitions": REPS, "level": LEVEL,
               "bias": bias_rows(rng), "rows_coverage": rows_coverage(rng),
               "population_coverage": population_coverage(rng), "flags": flag_rates(rng)}
    for key in ("bias", "rows_coverage", "population_coverage", "flags"):
        print(key)
        for row in results[key]:
            print("  ", {k: round(v, 3) if isinstance(v, float) else v for k, v in row.items()})
    results["run"] = run_info(started, time.perf_counter() - t0, packages=())
    save(os.path.join(HERE, "results", "global_importance_coverage.json"), results)


if __name__ == "__main__":
    main()
