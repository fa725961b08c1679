"""DPCounterfactualGenerator on Adult: which stage found each counterfactual, how plausible (issue 39).

The setting of benchmarks/dpc_adult.py (MLPClassifier(64, tanh) on the
second half of the Adult test split; DPC, DP-SGD autoencoder, fitted on the
training split; random queries from the first half) at epsilon 0.025, with
``allow_perturbations=True`` so that every stage's finds are measured. Per
seed: each stage's flip ratio (the share of the queries whose counterfactual
it found; a later stage runs only where the earlier ones found none), what
``allow_perturbations=False`` (the default) returns (latent + prototype
segment), and per stage the mean distance (L2 in the encoded features, as
dpc_adult.py's "avg dist") and the mean ``plausibility`` (1 - ||c - p|| /
||q - p||, toward the desired class's decoded DP prototype). Where the latent
search serves every query, the perturbation stages never run: a probe runs
the "score" stage (a line search along the black box's gradient from the
query, then the move toward the query, as explain does) on every query of
every seed, to read the plausibility of such perturbations beside the
latent finds'.

Paper (Yang et al. 2022, Table 2): flip ratio 0.918 at epsilon 0.025.

Saves benchmarks/results/dpc_stages.json (settings, seeds, per-seed figures,
the run's commit, date, versions).

Run: python benchmarks/dpc_stages.py [--seeds 10] [--first-seed 0] [--queries 300] [--epsilon 0.025]
(about 30 s per seed on 2 shared cores)
"""

import argparse
import time
import warnings

import numpy as np

from _dpc_bench import adult_tables, black_box, eps_key, save
from skdpx.counterfactual import DPCounterfactualGenerator
from skdpx.counterfactual._dpc import STAGES


def per_stage(result):
    """Flip ratio, mean distance and mean plausibility of each stage, from one result."""
    out = {}
    for stage in STAGES:
        mine = result.valid & (result.found_by == stage)
        out[stage] = {
            "flip_ratio": float(result.meta["flip_ratio"][stage]),
            "n": int(mine.sum()),
            "avg_dist": float(np.mean(result.distance[mine])) if mine.any() else None,
            "plausibility": float(np.mean(result.plausibility[mine])) if mine.any() else None,
        }
    return out


def seed_row(seed, result, **extra):
    """One seed's record (each stage's figures, with and without perturbations),
    printed as a table row; ``extra`` is added to the record."""
    stages = per_stage(result)
    without = stages["latent"]["flip_ratio"] + stages["prototype segment"]["flip_ratio"]
    cells = "".join(
        f"{v['flip_ratio']:>7.3f}/" + (f"{v['avg_dist']:.2f}/{v['plausibility']:.2f}"
                                       if v["n"] else "  -  /  -  ").rjust(11)
        for v in stages.values())
    print(f"{seed:>4}{cells}{without:>18.3f}", flush=True)
    return {"seed": seed, "stages": stages, "flip_ratio_all": float(result.valid.mean()),
            "flip_ratio_without_perturbations": float(without), **extra}


def summarise(seeds):
    """The seeds' mean (and worst) flip ratios, and each stage's distance and
    plausibility weighted by its finds."""
    latent = [s["stages"]["latent"]["flip_ratio"] for s in seeds]
    without = [s["flip_ratio_without_perturbations"] for s in seeds]
    summary = {"latent_flip_ratio": float(np.mean(latent)),
               "latent_worst_seed": float(np.min(latent)),
               "flip_ratio_without_perturbations": float(np.mean(without)),
               "worst_seed_without_perturbations": float(np.min(without)),
               "flip_ratio_all": float(np.mean([s["flip_ratio_all"] for s in seeds]))}
    for stage in STAGES:
        for key in ("avg_dist", "plausibility"):
            values = [s["stages"][stage][key] for s in seeds if s["stages"][stage]["n"]]
            weights = [s["stages"][stage]["n"] for s in seeds if s["stages"][stage]["n"]]
            summary[f"{stage} {key}"] = (float(np.average(values, weights=weights))
                                         if values else None)
    return summary


def perturbation_probe(dpc, queries, result):
    """The "score" stage run on every query: flip ratio, mean distance and plausibility."""
    target = np.searchsorted(dpc.classes_, result.desired_class)
    anchors = dpc._input_search(queries, target)
    found = ~np.isnan(anchors).any(axis=1)
    cf = np.full(queries.shape, np.nan)
    cf[found] = dpc._segment_search(queries[found], anchors[found], target[found],
                                    np.ones(int(found.sum())))
    ok = ~np.isnan(cf).any(axis=1)
    plausibility = dpc._plausibility(cf[ok], queries[ok], target[ok])
    return {"flip_ratio": float(ok.mean()),
            "avg_dist": float(np.mean(np.linalg.norm(cf[ok] - queries[ok], axis=1))),
            "plausibility": float(np.mean(plausibility))}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10, help="DPC seeds (0..N-1)")
    parser.add_argument("--first-seed", type=int, default=0,
                        help="seeds FIRST..FIRST+N-1 (e.g. 10: seeds not used in development)")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--epsilon", type=float, default=0.025)
    parser.add_argument("--out", default="dpc_stages.json")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    warnings.simplefilter("ignore")
    enc, X_test, y_test, X_model, y_model = adult_tables()
    X = enc.data
    model = black_box(X_model, y_model)
    queries = X_test[np.random.RandomState(0).choice(len(X_test), args.queries, replace=False)]
    print(f"Adult, DPC (DP-SGD autoencoder) at epsilon {args.epsilon:g}, {args.queries} queries, "
          "allow_perturbations=True")
    head = "".join(f"{s:>19}" for s in STAGES)
    print(f"{'seed':>4}{head}{'without perturb.':>18}  (flip ratio / avg dist / plausibility)")
    seeds = []
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        dpc = DPCounterfactualGenerator(model, epsilon=args.epsilon, bounds=enc.bounds,
                                        allow_perturbations=True, random_state=seed).fit(X)
        result = dpc.explain(queries)
        seeds.append(seed_row(seed, result,
                              score_stage_probe=perturbation_probe(dpc, queries, result)))
    summary = summarise(seeds)
    probes = [s["score_stage_probe"] for s in seeds]
    summary["score_probe"] = {k: float(np.mean([p[k] for p in probes]))
                              for k in ("flip_ratio", "avg_dist", "plausibility")}
    print(f"score stage on every query (probe): flip {summary['score_probe']['flip_ratio']:.3f}, "
          f"avg dist {summary['score_probe']['avg_dist']:.3f}, plausibility "
          f"{summary['score_probe']['plausibility']:.3f}")
    print(f"latent search alone: {summary['latent_flip_ratio']:.3f} (worst seed "
          f"{summary['latent_worst_seed']:.3f}); paper 0.918")
    for stage in STAGES:
        if summary[f"{stage} plausibility"] is not None:
            print(f"{stage:>18}: avg dist {summary[f'{stage} avg_dist']:.3f}, plausibility "
                  f"{summary[f'{stage} plausibility']:.3f}")
    save(args.out, {"settings": {"epsilon": eps_key(args.epsilon), "seeds": args.seeds,
                                 "first_seed": args.first_seed,
                                 "queries": args.queries, "query_seed": 0,
                                 "ae_method": "dpsgd", "allow_perturbations": True},
                    "summary": summary, "per_seed": seeds}, started)


if __name__ == "__main__":
    main()
