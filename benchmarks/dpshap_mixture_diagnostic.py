"""Is DPShapExplainer's error on Adult the decoding of categorical centres? (issue 40)

A diagnostic of benchmarks/dpshap_adult.py (same data, black box, queries,
reference and coalitions; fewer queries). A DP background point holds its
cluster's level *shares* in each one-hot block, but DPShapExplainer decodes
it to its largest level. Here each centre is instead expanded into ``r``
records (numeric coordinates at the centre; each categorical column's
levels by a quota allocation of the centre's clipped, normalised shares,
:func:`mixture_records`), each of weight ``w_b / r``, and compared with the
largest-level decoding:

* **error**: relative error (``sum |diff| / sum |ref|``) of the *noiseless*
  k-means background against the reference (Kernel SHAP with 100 random
  private rows as background), per column, for ``r`` in ``--records`` and
  the argmax decoding, with the time per query relative to the argmax;
* **coverage**: ``--seeds`` DP fits at epsilon 1 (seeds 0, 1, ... of the
  main benchmark; seed 0's coverage was 62% there): the std computed as DPShapExplainer does
  (counts' part exact; centres by a parametric bootstrap of ``--draws``
  draws), once with the argmax decoding and once with the mixture of
  ``--coverage-records`` records per centre (the same expansion's uniforms
  for the released and the drawn centres), and the share of values whose
  difference to the noiseless last table's answer is within +-1.645 std;
* **numeric centres**: the noiseless k-means background with its
  capital-gain and capital-loss coordinates set to 0 (an evaluation-only
  probe, not a method: 92% and 95% of the rows hold 0 there, the centres
  hold cluster *means*).

The expansion's uniforms come from numpy's generator here (a benchmark's
post-processing, not the package).

Run: python benchmarks/dpshap_mixture_diagnostic.py [--queries 20]
     [--records 1 2 4 8 16] [--coverage-records 4] [--draws 8] [--seeds 1]
"""

import argparse
import os
import sys
import time

import numpy as np
from skdpx.explain import _dpshap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _run_record import run_info, save, start  # noqa: E402
from dpshap_adult import (adult_black_box, errors, noiseless_background,  # noqa: E402
                          recorded_fit, uniform_background)

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                       "dpshap_mixture_diagnostic.json")


def mixture_records(Z, blocks, uniforms):
    """Each centre as ``r`` records keeping its categorical mixture: (n_points * r, d).

    ``uniforms`` (n_points, r + 1, len(blocks)): the first ``r`` give the
    order of the strata, the last the offset; in each block, the ``r``
    records take levels at ``(order + offset) / r`` through the distribution
    function of the centre's shares (clipped at 0 and normalised; none
    positive: the largest entry), so a level of share ``p`` gets ``floor(r
    p)`` or ``ceil(r p)`` records; orders are independent across blocks.
    """
    n, d = Z.shape
    r = uniforms.shape[1] - 1
    strata = (uniforms[:, :r].argsort(axis=1) + uniforms[:, r:]) / r  # (n, r, c)
    out = np.repeat(Z[:, None, :], r, axis=1)
    for k, idx in enumerate(blocks):  # a loop over columns
        p = np.clip(Z[:, idx], 0.0, None)
        total = p.sum(axis=1, keepdims=True)
        top = np.eye(len(idx))[Z[:, idx].argmax(axis=1)]
        p = np.where(total > 0, p / np.where(total > 0, total, 1.0), top)
        cdf = np.cumsum(p, axis=1)[:, :-1]
        level = (strata[:, :, [k]] >= cdf[:, None, :]).sum(axis=2)
        out[:, :, idx] = np.eye(len(idx))[level]
    return out.reshape(n * r, d)


def point_values(est, Zq, Zb, design, mix):
    """(values, phi_b) with each point as its ``r`` mixture records (mix) or its argmax."""
    groups = [idx for _, idx in est.schema_.groups]
    blocks = [idx for _, idx in est.schema_.groups if est.schema_.categorical[idx].all()]
    masks, M, m = design
    nb = len(Zb)
    r = 1 if mix is None else mix.shape[1] - 1
    if mix is not None:
        Zb = mixture_records(Zb, blocks, mix)
    f_b = est._outputs(Zb)
    phi = _dpshap._point_values(est._outputs, Zq, Zb, masks, M, m, groups,
                                est._outputs(Zq), f_b)
    return phi.reshape(len(Zq), nb, r, -1).mean(axis=2)


def values_std(est, Zq, bg, design, mix, normals):
    """The values and DPShapExplainer's std (counts exact, centres bootstrapped)."""
    w, C = bg.weights, bg.counts.sum()
    phi = point_values(est, Zq, bg.encoded, design, mix)
    values = np.einsum("b,qbg->qg", w, phi)
    var = bg.count_std ** 2 * (((phi - values[:, None, :]) / C) ** 2).sum(axis=1)
    acc = np.zeros_like(phi)
    for z in normals:  # a loop over draws
        drawn = np.clip(bg.encoded + z * bg.encoded_std, bg.lower, bg.upper)
        acc += (point_values(est, Zq, drawn, design, mix) - phi) ** 2
    var = var + np.einsum("b,qbg->qg", w ** 2, acc / len(normals))
    return values, np.sqrt(var)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--coalitions", type=int, default=256)
    parser.add_argument("--records", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    parser.add_argument("--coverage-records", type=int, default=4)
    parser.add_argument("--draws", type=int, default=8)
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--out", default=RESULTS)
    args = parser.parse_args()
    started, t0 = start(), time.perf_counter()

    X_private, X_model, black_box, schema = adult_black_box()
    public = dict(bounds=schema["bounds"], categories=schema["categories"])
    # the main benchmark's queries, reference rows and coalitions (the first --queries)
    queries = X_model.dropna().sample(100, random_state=1).iloc[:args.queries]
    rng = np.random.default_rng(0)
    g = X_private.shape[1]
    design = _dpshap.shapley_design(g, args.coalitions,
                                    rng.random(_dpshap.design_shape(g, args.coalitions)))
    base, _ = recorded_fit(black_box, X_private, public, np.inf, 0, args.coalitions)
    Zq = base.schema_.encode(queries)
    reference_rows = X_private.dropna().sample(100, random_state=2)
    reference, ref_base, _, _ = base._shap(Zq, uniform_background(base, reference_rows),
                                           design)
    names = [c for c, _ in base.schema_.groups]
    categorical = np.array([c in schema["categories"] for c in names])
    n_cat = int(categorical.sum())
    bg = base.background_
    mix_rng = np.random.default_rng(10)
    out = {"settings": {"queries": args.queries, "coalitions": len(design[0]),
                        "reference_rows": 100, "n_background": 50, "records": args.records,
                        "coverage_records": args.coverage_records, "draws": args.draws,
                        "seeds": args.seeds},
           "reference_base_value": ref_base, "columns": names,
           "categorical": categorical.tolist(),
           "reference_abs_sum_per_column": np.abs(reference).sum(0).tolist()}

    def per_column(values):
        return np.abs(values - reference).sum(0).tolist()

    error_rows = []
    t = time.perf_counter()
    values = np.einsum("b,qbg->qg", bg.weights, point_values(base, Zq, bg.encoded, design, None))
    t_argmax = time.perf_counter() - t
    error_rows.append({"decoding": "argmax (largest level)", "records": 1,
                       **errors(values, reference), "per_column": per_column(values),
                       "seconds_per_query": t_argmax / len(Zq), "time_ratio": 1.0})
    for r in args.records:
        mix = mix_rng.random((len(bg), r + 1, n_cat))
        t = time.perf_counter()
        values = np.einsum("b,qbg->qg", bg.weights, point_values(base, Zq, bg.encoded, design,
                                                                  mix))
        seconds = time.perf_counter() - t
        error_rows.append({"decoding": f"mixture, {r} records per centre", "records": r,
                           **errors(values, reference), "per_column": per_column(values),
                           "seconds_per_query": seconds / len(Zq),
                           "time_ratio": seconds / t_argmax})
        print(f"r={r}: relative {error_rows[-1]['relative']:.3f}, time x"
              f"{seconds / t_argmax:.1f}", flush=True)
    # the numeric probe: capital-gain and capital-loss of the centres at 0
    zeroed = bg.encoded.copy()
    for c in ("capital-gain", "capital-loss"):
        zeroed[:, dict(base.schema_.groups)[c]] = 0.0
    values = np.einsum("b,qbg->qg", bg.weights, point_values(base, Zq, zeroed, design, None))
    error_rows.append({"decoding": "argmax, capital-gain and capital-loss of the centres at 0 "
                                   "(evaluation probe)", "records": 1,
                       **errors(values, reference), "per_column": per_column(values)})
    out["noiseless_kmeans"] = error_rows
    print(f"capital columns at 0: relative {error_rows[-1]['relative']:.3f}", flush=True)

    # coverage: DP fits, std with the argmax and with the mixture
    coverage_rows = []
    for seed, r in ((seed, r) for seed in range(args.seeds)
                    for r in (None, args.coverage_records)):
        if r is None:
            est, table = recorded_fit(black_box, X_private, public, 1.0, 100 + seed,
                                      args.coalitions)
            dp = est.background_
            normals = rng.standard_normal((args.draws, *dp.encoded.shape))
            noiseless_bg = noiseless_background(est, table)
        mix = None if r is None else mix_rng.random((len(dp), r + 1, n_cat))
        t = time.perf_counter()
        values, std = values_std(est, Zq, dp, design, mix, normals)
        mix_nl = None if r is None else mix_rng.random((len(noiseless_bg), r + 1, n_cat))
        noiseless = np.einsum("b,qbg->qg", noiseless_bg.weights,
                              point_values(est, Zq, noiseless_bg.encoded, design, mix_nl))
        covered = np.abs(values - noiseless) <= 1.645 * std
        coverage_rows.append({
            "decoding": "argmax" if r is None else f"mixture, {r} records per centre",
            "epsilon": 1.0, "seed": seed, "n_points": len(dp),
            **errors(values, reference), "to_noiseless_table": errors(values, noiseless),
            "coverage": float(covered.mean()),
            "coverage_numeric": float(covered[:, ~categorical].mean()),
            "coverage_categorical": float(covered[:, categorical].mean()),
            "mean_std": float(std.mean()), "seconds": round(time.perf_counter() - t, 1)})
        print(coverage_rows[-1], flush=True)
    out["dp_coverage"] = coverage_rows
    out["run"] = run_info(started, time.perf_counter() - t0, packages=())
    save(args.out, out)
    print(f"saved {args.out}")


if __name__ == "__main__":
    main()
