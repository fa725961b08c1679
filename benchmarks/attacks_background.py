"""Membership inference on the background rows of SHAP explainers (issue 40, target d).

A SHAP explainer's private rows are its background: every answer is a
weighted average, over the background rows, of the Shapley values of the
game between the query and that row. The attacker sees the explanations
(values and base value) of queries it chooses, knows the black box and the
population, and guesses which candidate rows were in the background, with
:func:`skdpx.attacks.background_probe` (the population's common values from
``--reference`` rows): per candidate, the query at the candidate and, for
its ``--probes`` columns with the most common common values that it does not
hold, the candidate with that column set to the common value; the
candidate's own term in that column's attribution is ``w (f(z) - f(c))``,
while every background row holding the common value adds 0.

Targets
    * ``shap_rows``: ``shap.KernelExplainer`` with the private rows as its
      background (shap's documented use with a small background sample;
      what users do today), the non-private baseline;
    * ``shap_kmeans``: the same with ``shap.kmeans(private rows, k)`` (shap's
      other documented summary; rows label-encoded, as shap's own Adult
      examples do);
    * ``dpshap``: ``skdpx.explain.DPShapExplainer(n_background=k)`` at each
      of ``--epsilons`` (epsilon = inf: the exact k-means background, the
      same code without noise; ``n_std_draws=0``: the attack reads no
      ``std``, which is post-processing of the DP background anyway).
    The reference targets answer through ``KernelShapReference`` (below):
    Adult's columns label-encoded for shap, decoded for the black box.

Candidates (two kinds)
    * ``canary``: planted outliers: each numeric column at the lower or the
      upper end of its public bounds (a coin per column), a random declared
      level per categorical column;
    * ``average``: random rows of Adult.
    Each run draws ``--pool`` rows of the population and ``--candidates``
    candidates; each candidate joins the private rows by an independent fair
    coin (so a run's members are few and do not crowd each other's probes),
    the target is fitted on the private rows (its own noise seed per run) and
    the candidates scored. ``--runs`` independent runs are pooled: the AUC
    with its 95% confidence interval (Hanley & McNeil), the TPR at 1% and 5%
    FPR, and the empirical epsilon lower bound at the target's delta (95%
    confidence; valid across independent runs), next to the claimed epsilon
    and the largest bound these candidates allow. Every target sees the same
    runs (pools, candidates, coins).

Data: Adult (``load_adult``) restricted to seven columns (age, education,
marital-status, occupation, capital-gain, hours-per-week, native-country):
with seven players shap's KernelExplainer enumerates every coalition (its
answers are exact), and each answer costs ``126 x background size`` black-box
rows. The black box, a HistGradientBoostingClassifier (categorical columns
from their dtype), is trained on the test split; the population (reference,
pools, average candidates) is the training split's complete records (30,162
of 32,561), which the black box never saw. Public bounds and levels from ``adult_schema``.

Run: python benchmarks/attacks_background.py [--quick] [--targets shap_rows,shap_kmeans,dpshap]
     [--epsilons inf,10,1,0.1] [--kinds canary,average] [--runs 50] [--candidates 4]
     [--pool 96] [--background 50] [--probes 3] [--seed 0] [--jobs 2]
Writes benchmarks/results/attacks_background.json (``_run_record``'s commit, date,
versions, machine and command with it).
"""

import argparse
import math
import time
import warnings
from pathlib import Path

from joblib import Parallel, delayed
import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.ensemble import HistGradientBoostingClassifier
from threadpoolctl import threadpool_limits

from skdpx import FeatureAttribution
from skdpx.attacks import AttackResult, background_probe, membership_inference
from skdpx.datasets import adult_schema, load_adult

from _run_record import run_info, save, start as record_start

RESULTS = Path(__file__).resolve().parent / "results"
FEATURES = ["age", "education", "marital-status", "occupation", "capital-gain",
            "hours-per-week", "native-country"]
DELTA = 1e-5
FPRS = (0.01, 0.05)


# ----------------------------------------------------------------------------- reference

class KernelShapReference(BaseEstimator):
    """shap's KernelExplainer on a background of the fit rows (or their shap.kmeans).

    Parameters
    ----------
    estimator : fitted classifier taking DataFrames
        The black box; the output explained is ``predict_proba[:, 1]``.
    categories : dict
        The categorical columns' declared levels (label codes for shap).
    background : "rows" or int, default="rows"
        The fit rows themselves, or ``shap.kmeans(rows, background)``.
    """

    def __init__(self, estimator=None, categories=None, background="rows"):
        self.estimator = estimator
        self.categories = categories
        self.background = background

    def _encode(self, X):
        return np.column_stack([
            pd.Categorical(X[c], categories=self.categories[c]).codes.astype(float)
            if c in self.categories else X[c].to_numpy(dtype=float) for c in self.columns_])

    def _decode(self, A):
        out = {}
        for i, c in enumerate(self.columns_):
            if c in self.categories:
                codes = np.clip(np.rint(A[:, i]).astype(int), 0, len(self.categories[c]) - 1)
                out[c] = pd.Categorical.from_codes(codes, categories=self.categories[c])
            else:
                out[c] = A[:, i]
        return pd.DataFrame(out)

    def fit(self, X, y=None):
        import shap

        self.columns_ = list(X.columns)
        rows = self._encode(X)
        self.background_ = rows if self.background == "rows" else shap.kmeans(rows, self.background)
        return self

    def explain(self, X):
        import shap

        explainer = shap.KernelExplainer(
            lambda A: self.estimator.predict_proba(self._decode(A))[:, 1], self.background_)
        values = np.asarray(explainer.shap_values(self._encode(X), silent=True), dtype=float)
        return FeatureAttribution(values, epsilon=np.inf, feature_names=self.columns_,
                                  epsilon_spent=np.inf, delta_spent=0.0,
                                  base_value=float(explainer.expected_value))


# ----------------------------------------------------------------------------- data

def load():
    schema = adult_schema(features=FEATURES)
    X_pop, _ = load_adult(subset="train", as_frame=True, return_X_y=True)
    X_bb, y_bb = load_adult(subset="test", as_frame=True, return_X_y=True)
    black_box = HistGradientBoostingClassifier(categorical_features="from_dtype",
                                               random_state=0).fit(X_bb[FEATURES], y_bb)
    # complete records only: DPShapExplainer explains complete records (a probe of a
    # candidate with a missing value would be refused)
    return X_pop[FEATURES].dropna().reset_index(drop=True), black_box, schema


def canaries(n, schema, rng):
    """Numeric columns at a random end of their public bounds, a random declared level
    in each categorical column."""
    out = {}
    for c in FEATURES:
        if c in schema["categories"]:
            levels = schema["categories"][c]
            out[c] = pd.Categorical(np.asarray(levels, dtype=object)[rng.randint(len(levels), size=n)],
                                    categories=levels)
        else:
            lo, hi = schema["bounds"][c]
            out[c] = np.where(rng.rand(n) < 0.5, lo, hi).astype(np.int64)
    return pd.DataFrame(out)


def as_declared(X, schema):
    """The frame with its categorical columns over the declared levels."""
    X = X.copy()
    for c, levels in schema["categories"].items():
        X[c] = pd.Categorical(X[c].astype(object), categories=levels)
    return X


def make_runs(X_pop, schema, args):
    """The reference rows and, per run, the pool, the candidates of each kind and the coins."""
    rng = np.random.RandomState(args.seed)
    perm = rng.permutation(len(X_pop))
    reference = as_declared(X_pop.iloc[perm[:args.reference]], schema).reset_index(drop=True)
    rest = perm[args.reference:]
    runs = []
    for r in range(args.runs):
        draw = rng.choice(rest, args.pool + args.candidates, replace=False)
        pool = as_declared(X_pop.iloc[draw[:args.pool]], schema)
        kinds = {"average": as_declared(X_pop.iloc[draw[args.pool:]], schema),
                 "canary": canaries(args.candidates, schema, rng)}
        member = {kind: rng.rand(args.candidates) < 0.5 for kind in kinds}
        runs.append({"pool": pool, "candidates": kinds, "member": member})
    return reference, runs


# ----------------------------------------------------------------------------- targets

def make_target(name, eps, black_box, schema, args, seed):
    if name == "shap_rows":
        return KernelShapReference(black_box, schema["categories"], "rows")
    if name == "shap_kmeans":
        return KernelShapReference(black_box, schema["categories"], args.background)
    if name == "dpshap":
        from skdpx.explain import DPShapExplainer

        return DPShapExplainer(black_box, n_background=args.background, epsilon=eps,
                               delta=DELTA, bounds=schema["bounds"],
                               categories=schema["categories"], n_std_draws=0,
                               random_state=seed)
    raise ValueError(f"unknown target {name!r}")


def auc_interval(auc, n1, n0, z=1.96):
    """95% confidence interval of an AUC (Hanley & McNeil, 1982)."""
    q1, q2 = auc / (2 - auc), 2 * auc ** 2 / (1 + auc)
    se = math.sqrt(max(auc * (1 - auc) + (n1 - 1) * (q1 - auc ** 2)
                       + (n0 - 1) * (q2 - auc ** 2), 0.0) / (n1 * n0))
    return max(auc - z * se, 0.0), min(auc + z * se, 1.0)


def attack(name, eps, kind, runs, probe, black_box, schema, args):
    """Every run's target fitted and attacked; the pooled AttackResult and the spend."""
    members, non_members, claimed, seconds = [], [], [], time.perf_counter()
    silent = 0
    for r, run in enumerate(runs):
        C, m = run["candidates"][kind], run["member"][kind]
        if m.all() or not m.any():  # one side empty: nothing to compare in this run
            continue
        seed = 10_000 * args.seed + 100 * r + (0 if kind == "canary" else 50)
        target = make_target(name, eps, black_box, schema, args, seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # seeded fits, uncapped ledgers: evaluation only
            try:
                target.fit(pd.concat([run["pool"], C[m]], ignore_index=True))
            except ValueError as exc:
                # DPShapExplainer: every noisy count was <= 0, nothing was released (the
                # budget was spent): the attacker sees no explanation, a coin
                if "no background can be weighed" not in str(exc):
                    raise
                members.append(np.zeros(int(m.sum())))
                non_members.append(np.zeros(int((~m).sum())))
                claimed.append(target.epsilon)
                silent += 1
                continue
            result = membership_inference(target, C[m], None, C[~m], None, signal=probe,
                                          random_state=seed)
        members.append(result.scores_members)
        non_members.append(result.scores_non_members)
        claimed.append(getattr(target, "epsilon_spent_", np.inf))
    pooled = AttackResult(np.concatenate(members), np.concatenate(non_members),
                          signal="background_probe")
    return pooled, float(np.max(claimed)), time.perf_counter() - seconds, silent


def record(name, eps, kind, result, claimed, seconds, silent=0):
    low, high = auc_interval(result.auc, result.n_members, result.n_non_members)
    return {"target": name, "targets": kind,
            "epsilon": None if not np.isfinite(eps) else float(eps),
            "claimed_epsilon": None if not np.isfinite(claimed) else float(claimed),
            "auc": result.auc, "auc_low": low, "auc_high": high,
            **{f"tpr_at_{f:.0%}": result.tpr_at_fpr(f) for f in FPRS},
            "epsilon_lower_bound": result.epsilon_lower_bound(DELTA),
            "max_epsilon_lower_bound": result.max_epsilon_lower_bound(DELTA),
            "n_members": result.n_members, "n_non_members": result.n_non_members,
            # runs whose DP background released nothing (no cluster above its noise)
            "runs_without_release": int(silent), "seconds": round(seconds, 1)}


def fmt_eps(e):
    return "inf" if e is None else f"{e:g}"


def print_row(r):
    claimed = "inf" if r["claimed_epsilon"] is None else f"{r['claimed_epsilon']:.3g}"
    print(f"  {r['target']:<12} {r['targets']:<8} eps {fmt_eps(r['epsilon']):>4}: AUC "
          f"{r['auc']:.3f} [{r['auc_low']:.3f}, {r['auc_high']:.3f}]  TPR@1% "
          f"{r['tpr_at_1%']:.3f}  TPR@5% {r['tpr_at_5%']:.3f}  eps_lb "
          f"{r['epsilon_lower_bound']:.3f} (max {r['max_epsilon_lower_bound']:.2f}, claimed "
          f"{claimed})  {r['n_members']}+{r['n_non_members']}  ({r['seconds']:.0f} s)",
          flush=True)


def checks(rows):
    """Target d: AUC near 0.5 at epsilon <= 1, a leak without privacy, no lower bound
    above a claim."""
    lines = []
    for r in rows:
        if r["epsilon"] is None:
            leak = r["auc_low"] > 0.5 or r["epsilon_lower_bound"] > 0
            lines.append(f"leak without privacy, {r['target']}/{r['targets']}: "
                         f"{'yes' if leak else 'no'} (AUC {r['auc']:.3f} "
                         f"[{r['auc_low']:.3f}, {r['auc_high']:.3f}], eps_lb "
                         f"{r['epsilon_lower_bound']:.3f})")
        elif r["epsilon"] <= 1:
            near = r["auc_low"] <= 0.5 <= r["auc_high"]
            lines.append(f"AUC near 0.5 at epsilon {r['epsilon']:g}, {r['target']}/{r['targets']}:"
                         f" {'yes' if near else 'NO'} (AUC {r['auc']:.3f} [{r['auc_low']:.3f}, "
                         f"{r['auc_high']:.3f}])")
        if r["claimed_epsilon"] is not None and r["epsilon_lower_bound"] > r["claimed_epsilon"]:
            lines.append(f"PRIVACY BUG: lower bound {r['epsilon_lower_bound']:.3f} above the "
                         f"claim {r['claimed_epsilon']:.3f} ({r['target']}/{r['targets']})")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10 runs, canaries, shap_rows and "
                        "dpshap at inf and 1")
    parser.add_argument("--targets", default="shap_rows,shap_kmeans,dpshap")
    parser.add_argument("--epsilons", default="inf,10,1,0.1", help="of dpshap")
    parser.add_argument("--kinds", default="canary,average")
    parser.add_argument("--average-targets", default="shap_rows,dpshap@inf",
                        help="the settings also run on average candidates")
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--candidates", type=int, default=4, help="per run")
    parser.add_argument("--pool", type=int, default=96, help="population rows per run")
    parser.add_argument("--reference", type=int, default=2000)
    parser.add_argument("--background", type=int, default=50,
                        help="k of shap.kmeans and DPShapExplainer's n_background")
    parser.add_argument("--probes", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2, help="settings run side by side")
    parser.add_argument("--out", default=str(RESULTS / "attacks_background.json"))
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.kinds, args.epsilons = 10, "canary", "inf,1"
        args.targets = "shap_rows,dpshap"
    epsilons = [float(e) for e in args.epsilons.split(",")]
    settings = []
    for name in args.targets.split(","):
        for eps in (epsilons if name == "dpshap" else [np.inf]):
            for kind in args.kinds.split(","):
                label = name if name != "dpshap" else f"dpshap@{fmt_eps(None if eps == np.inf else eps)}"
                if kind == "canary" or label in args.average_targets.split(",") \
                        or name in args.average_targets.split(","):
                    settings.append((name, eps, kind))
    started, t0 = record_start(), time.perf_counter()
    X_pop, black_box, schema = load()
    reference, runs = make_runs(X_pop, schema, args)
    probe = background_probe(reference, n_probes=args.probes)
    print(f"{args.runs} runs of {args.pool} population rows + {args.candidates} candidates "
          f"(fair coins); {len(FEATURES)} columns; reference {args.reference} rows", flush=True)
    def one(name, eps, kind):
        with threadpool_limits(limits=1):
            result, claimed, seconds, silent = attack(name, eps, kind, runs, probe, black_box, schema,
                                              args)
        row = record(name, eps, kind, result, claimed, seconds, silent)
        print_row(row)
        return row

    rows = Parallel(n_jobs=args.jobs)(delayed(one)(*setting) for setting in settings)
    lines = checks(rows)
    print("\n".join(lines))
    total = time.perf_counter() - t0
    save(args.out, {"config": {k: v for k, v in vars(args).items() if k != "out"},
                    "features": FEATURES, "delta": DELTA, "rows": rows, "checks": lines,
                    "seconds": round(total, 1),
                    "run": run_info(started, total, packages=("shap", "pandas"))})
    print(f"wrote {args.out} ({total / 60:.1f} min)")


if __name__ == "__main__":
    with threadpool_limits(limits=1):
        main()
