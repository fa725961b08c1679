"""Tables of model selection (doc/model_selection.rst, doc/benchmarks/model_selection.rst).

Inputs: benchmarks/results/model_selection_costs.json
(benchmarks/model_selection_costs.py: prices, nothing fitted; and the CPU a
search spends planning) and
benchmarks/results/model_selection.json (benchmarks/model_selection.py:
private searches against the usual ways of tuning).
"""

def _g(x, digits=3):
    return f"{x:.{digits}g}"


def _setting(params):
    """A DPGridSearchCV setting as the guide names it."""
    if not params:
        return "defaults (n_iter = pool size 9, Poisson, holdout 0.2, refit_share 0.5)"
    if params.get("selection") == "negative_binomial":
        eta = params.get("eta", 0.0)
        if eta == 1.0:
            return 'selection="negative_binomial", eta=1 (the geometric)'
        return 'selection="negative_binomial" (eta=0: logarithmic)'
    return ", ".join(f'{k}="{v}"' if isinstance(v, str) else f"{k}={v}"
                     for k, v in params.items())


# ---------------------------------------------------------- model_selection_costs.json
def costs(results):
    """What tuning the 3 x 3 grid costs, three ways (prices: nothing is fitted)."""
    delta = results["delta"]
    g = results["gridsearchcv"]
    loop = results["public_validation_loop"]
    d = results["dpgridsearchcv"][0]
    header = ["how", "fits", f"epsilon at delta = {delta:g}",
              "epsilon at the summed deltas", "sum of the epsilons", "what else is released"]
    return header, [
        ["GridSearchCV, 5 folds, each fit at epsilon 1 (its own DP row count, the rest "
         "at its cap)", g["n_fits"],
         f"{g['epsilon_at_1e-5']:.2f}",
         f"{g['epsilon']:.2f} (delta {g['delta']:.2g})" + (
             f"; the ledger: {g['epsilon_at_expected_counts']:.2f} if each count is its "
             "expected value" if "epsilon_at_expected_counts" in g else ""),
         f"{g['epsilon_basic']:.0f}",
         "exact validation scores and the choice: not DP at any epsilon"],
        ["9 DP fits at epsilon 0.5, scored on public rows", loop["n_fits"],
         f"{loop['epsilon']:.2f}",
         f"{loop['epsilon_at_sum_of_deltas']:.2f} (delta {loop['n_fits'] * delta:.2g})",
         f"{0.5 * loop['n_fits']:g}", "nothing: scores on public rows are free"],
        ["DPGridSearchCV(epsilon=2)", f"{d['mean_runs']:g} runs on average + refit",
         f"{d['epsilon']:.3f}", "", "", "nothing: scores, selection and refit are in it"],
    ]


def dp_search_split(results):
    """How DPGridSearchCV(epsilon=2) splits its budget on the grid (defaults)."""
    d = results["dpgridsearchcv"][0]
    header = ["total epsilon", "row count (epsilon)", "each run's fit (epsilon)",
              "mean number of runs", "score's noise multiplier", "score's std (accuracy)",
              "training rows (expected)", "validation rows (expected)", "refit (epsilon)"]
    return header, [[f"{d['epsilon']:.3f}", _g(d.get("count_epsilon", 0.0)),
                     f"{d['candidate_epsilon']:.3f}",
                     f"{d['mean_runs']:g}", f"{d['score_noise_multiplier']:.2f}",
                     f"{d['score_std_accuracy']:.4f}", f"{d['n_train']:,.0f}",
                     f"{d['n_validation']:,.0f}", _g(d["refit_epsilon"])]]


def knobs(results):
    """DPGridSearchCV(epsilon=2) on the grid: each setting's split of the budget."""
    header = ["setting", "total epsilon", "each run's fit", "refit", "score noise",
              "score std", "tried", "K <= 3"]
    rows = []
    for d in results["dpgridsearchcv"]:
        refit = "(none)" if d["refit_epsilon"] is None else _g(d["refit_epsilon"])
        rows.append([_setting(d["params"]), f"{d['epsilon']:.3f}",
                     f"{d['candidate_epsilon']:.3f}", refit,
                     f"{d['score_noise_multiplier']:.2f}", f"{d['score_std_accuracy']:.4f}",
                     f"{d['p_best_tried']:.2f}", f"{d['p_at_most_3_runs']:.2f}"])
    return header, rows


# ---------------------------------------------------------------- model_selection.json
def _acc(stats, scale=100.0, digits=2):
    return f"{scale * stats['mean']:.{digits}f} ± {scale * stats['std']:.{digits}f}"


def _runs(values):
    return ", ".join(str(v) for v in values)


def _dataset(results, key):
    ds = results["datasets"][key]
    eps = results["epsilon"]
    b, c = ds["hindsight"], ds.get("gridsearchcv")
    header = ["method", "test accuracy (%)", "total epsilon", "runs per seed",
              "how the candidate is chosen"]
    rows = [["(a) the defaults, epsilon 2", _acc(ds["default"]), f"{eps:.2f}", "",
             "not chosen"],
            [f"(b) best of {b['n_fits']} in hindsight, each at epsilon 2",
             _acc(b["test_accuracy"]), f"{b['epsilon_total']:.2f}", "",
             f"on the test set, per seed (not private; {b['n_fits']} fits composed)"]]
    if c is not None:
        rows.append([f"(c) GridSearchCV, {c['cv']} folds, each fit at epsilon 2",
                     _acc(c["test_accuracy"]), f"{c['epsilon_total']:.2f}", "",
                     f"exact CV scores, not accounted (the total is its {c['n_fits']} fits "
                     "alone)"])
    for label, d in ds.get("dp_search", {}).items():
        rows.append([f"(d) DPRandomSearchCV, {label}", _acc(d["test_accuracy"]),
                     f"{d['epsilon_ledger']['mean']:.3f}", _runs(d["n_runs_per_seed"]),
                     f"DP (each run's fit at epsilon "
                     f"{d['plan_per_seed'][0]['candidate_epsilon']:.2f}; "
                     f"recomputed with dp_accounting: {d['epsilon_recomputed']:.3f})"])
    return header, rows


def adult(results):
    """Four ways to tune DPLocallyLinearClassifier on Adult at epsilon 2."""
    return _dataset(results, "adult")


def hospital(results):
    """Four ways to tune DPLocallyLinearClassifier on the hospital data at epsilon 2."""
    return _dataset(results, "hospital")


def picks(results):
    """What each private search picked, per dataset and seed."""
    header = ["data", "search", "picks (seed 0, 1, 2)"]
    rows = []
    for key, ds in results["datasets"].items():
        for label, d in ds.get("dp_search", {}).items():
            rows.append([key, label, "; ".join(
                ", ".join(f"{k}={p[k]:g}" for k in sorted(p)) for p in d["params_per_seed"])])
    return header, rows


def explainer(results):
    """DPLimeExplainer on Adult, tuned three ways: fidelity on public test queries."""
    e = results["explainer"]
    b = e["hindsight"]
    header = ["method", "test fidelity", "total epsilon", "runs per seed"]
    rows = [["(a) the defaults, cap epsilon 2", _acc(e["default"], 1.0, 4),
             f"{e['default_epsilon']:.2f}", ""],
            [f"(b) best of {b['n_fits']} in hindsight, each cap 2",
             _acc(b["test_fidelity"], 1.0, 4), f"{b['epsilon_total']:.2f}", ""]]
    for label, d in e["dp_search"].items():
        rows.append([f"(d) DPRandomSearchCV, {label}", _acc(d["test_fidelity"], 1.0, 4),
                     f"{d['epsilon_ledger']['mean']:.3f}", _runs(d["n_runs_per_seed"])])
    return header, rows


def candidates(results):
    """Every candidate of the grid at epsilon 2 on all training rows: test accuracy (%)."""
    keys = list(results["datasets"])
    names = list(results["datasets"][keys[0]]["candidates"])
    header = ["candidate"] + [f"{k} (%)" for k in keys]
    rows = []
    for name in names:
        row = [name]
        for k in keys:
            s = results["datasets"][k]["candidates"].get(name)
            row.append("" if s is None else _acc(s))
        rows.append(row)
    return header, rows


def runtime(results):
    """How long each part of the saved run took."""
    header = ["part", "seeds", "wall (s)", "CPU (s)"]
    rows = [[k, len(ds["seeds"]), f"{ds['seconds']:.0f}", f"{ds['cpu_seconds']:.0f}"]
            for k, ds in results["datasets"].items()]
    if "explainer" in results:
        e = results["explainer"]
        rows.append(["explainer", len(e["seeds"]), f"{e['seconds']:.0f}",
                     f"{e['cpu_seconds']:.0f}"])
    return header, rows


def planning(results):
    """Target c of issue 41: the planning's share of a private search's CPU, before and after."""
    p = results["planning"]
    names = {"before": "before (main at " + (p["setting"].get("before_commit") or "the base") + ")",
             "this": "this code (" + p["run"]["commit"] + ")"}
    header = ["code", "fit CPU (s)", "planning CPU (s)", "planning share", "calibrations",
              "accounting evaluations", "candidate epsilon", "score noise multiplier",
              "planned epsilon"]
    rows = []
    for key in ("before", "this"):
        if key not in p["median"]:
            continue
        m = p["median"][key]
        rows.append([names[key], f"{m['cpu_fit']:.2f}", f"{m['cpu_plan']:.2f}",
                     f"{100 * m['plan_share']:.1f}%", m["calibrations"],
                     m["epsilon_evaluations"], f"{m['candidate_epsilon']:.6f}",
                     f"{m['score_noise_multiplier']:.6f}", f"{m['planned_epsilon']:.6f}"])
    return header, rows


__all__ = ["adult", "candidates", "costs", "dp_search_split", "explainer", "hospital", "knobs",
           "picks", "planning", "runtime"]
