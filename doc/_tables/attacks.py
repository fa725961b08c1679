"""Tables of benchmarks/attacks.py and benchmarks/attacks_inference.py."""

import math

import pandas as pd


def _eps(e):
    if e is None or e == "Infinity" or (isinstance(e, float) and math.isinf(e)):
        return "inf"
    return f"{float(e):g}"


def _order(e):
    return math.inf if _eps(e) == "inf" else float(e)


def _membership(results, targets):
    rows = [r for r in results["rows"] if r["targets"] == targets]
    epsilons = sorted({r["epsilon"] for r in rows}, key=_order)
    cells = {}
    for r in rows:
        key = (r["dataset"], r["method"], r["signal"])
        cells.setdefault(key, {})[_eps(r["epsilon"])] = (
            f"{r['auc']:.2f} / {r['tpr_at_1%']:.2f} / {r['epsilon_lower_bound']:.2f}")
    table = [[ds, method, signal, *(by_eps.get(_eps(e), "") for e in epsilons)]
             for (ds, method, signal), by_eps in sorted(cells.items())]
    return pd.DataFrame(table, columns=["data", "method", "signal",
                                        *(f"eps {_eps(e)}" for e in epsilons)])


def membership_average(results):
    """Every signal against random members: AUC / TPR at 1% FPR / epsilon lower bound."""
    return _membership(results, "average")


def membership_canary(results):
    """Every signal against canaries: AUC / TPR at 1% FPR / epsilon lower bound."""
    return _membership(results, "canary")


def extraction(results):
    """Surrogate fidelity to the black box by number of queries, per dataset and strategy."""
    table, sizes = [], set()
    for name, out in results["datasets"].items():
        for r in out["extraction"]:
            sizes.add(r["n_queries"])
    sizes = sorted(sizes)
    for name, out in results["datasets"].items():
        cells = {}
        for r in out["extraction"]:
            key = (name, r["method"], _eps(r["epsilon"]), r["strategy"])
            cells.setdefault(key, {})[r["n_queries"]] = f"{r['fidelity']:.3f}"
        for key, by_n in cells.items():
            table.append([*key, *(by_n.get(n, "") for n in sizes)])
    return pd.DataFrame(table, columns=["data", "method", "eps", "strategy",
                                        *(f"{n} queries" for n in sizes)])


def attribute(results):
    """Attribute inference: accuracy on members and non-members, and the advantage."""
    table = []
    for name, out in results["datasets"].items():
        for r in out["attribute"]:
            a, b = r["accuracy_members"], r["accuracy_non_members"]
            se = math.sqrt(a * (1 - a) / r["n_members"] + b * (1 - b) / r["n_non_members"])
            table.append([name, out["sensitive"], r["method"], _eps(r["epsilon"]), r["attack"],
                          f"{a:.3f}", f"{b:.3f}", f"{r['advantage']:+.3f} ({se:.3f})",
                          f"{r['baseline_members']:.3f} / {r['baseline_non_members']:.3f}"])
    return pd.DataFrame(table, columns=["data", "attribute", "method", "eps", "attack",
                                        "members", "non-members", "advantage (se)",
                                        "majority baseline"])


def membership_best(results):
    """Per data, targets and method, the signal strongest at epsilon = inf (the same signal
    at every epsilon, never chosen per epsilon): AUC / TPR at 1% FPR / lower bound."""
    rows = results["rows"]
    best = {}
    for r in rows:
        key = (r["dataset"], r["targets"], r["method"])
        if _eps(r["epsilon"]) == "inf" and r["auc"] > best.get(key, (None, -1.0))[1]:
            best[key] = (r["signal"], r["auc"])
    epsilons = sorted({r["epsilon"] for r in rows}, key=_order)
    table = []
    for (ds, kind, method), (signal, _) in sorted(best.items()):
        cells = {_eps(r["epsilon"]): r for r in rows if (r["dataset"], r["targets"], r["method"],
                                                          r["signal"]) == (ds, kind, method, signal)}
        table.append([ds, kind, method, signal, *(
            f"{c['auc']:.2f} / {c['tpr_at_1%']:.2f} / {c['epsilon_lower_bound']:.2f}"
            if (c := cells.get(_eps(e))) else "" for e in epsilons)])
    return pd.DataFrame(table, columns=["data", "targets", "method", "signal",
                                        *(f"eps {_eps(e)}" for e in epsilons)])


# ------------------------------------------------------------ single values for the prose
def _best_signals(rows):
    """(dataset, targets, method) -> the signal strongest at epsilon = inf (as membership_best)."""
    best = {}
    for r in rows:
        key = (r["dataset"], r["targets"], r["method"])
        if _eps(r["epsilon"]) == "inf" and r["auc"] > best.get(key, (None, -1.0))[1]:
            best[key] = (r["signal"], r["auc"])
    return {key: signal for key, (signal, _) in best.items()}


def _best_rows(results, targets=None, methods=None):
    best = _best_signals(results["rows"])
    return [r for r in results["rows"]
            if best.get((r["dataset"], r["targets"], r["method"])) == r["signal"]
            and (targets is None or r["targets"] == targets)
            and (methods is None or r["method"] in methods)]


_PRIVATE = ("llc", "dplime", "recourse")


def canary_max_auc_private(results):
    """The largest canary AUC of the private methods' strongest signals at epsilon <= 1."""
    return max(r["auc"] for r in _best_rows(results, "canary", _PRIVATE)
               if _eps(r["epsilon"]) != "inf" and float(r["epsilon"]) <= 1)


def n_finite(results):
    """The number of settings (rows) with a finite epsilon."""
    return sum(_eps(r["epsilon"]) != "inf" for r in results["rows"])


def max_finite_bound(results):
    """The largest empirical epsilon lower bound over the finite settings."""
    return max(r["epsilon_lower_bound"] for r in results["rows"] if _eps(r["epsilon"]) != "inf")


def canary_inf_max_bound(results):
    """The largest lower bound of the private methods' strongest canary signals at epsilon = inf."""
    return max(r["epsilon_lower_bound"] for r in _best_rows(results, "canary", _PRIVATE)
               if _eps(r["epsilon"]) == "inf")


def dpc_auc_range(results):
    """DPC's AUCs over every setting and signal, as "a-b"."""
    aucs = [r["auc"] for r in results["rows"] if r["method"] == "dpc"]
    return f"{min(aucs):.2f}-{max(aucs):.2f}"


def lime_max_auc(results):
    """lime's largest AUC over every signal and target set."""
    return max(r["auc"] for r in results["rows"] if r["method"] == "lime")


def minutes(results):
    """The run's wall time in minutes."""
    return results["seconds"] / 60


def dpc_dualcf_range(results, dataset="hospital", n=400):
    """DualCF's fidelity on DPC at ``n`` queries on ``dataset``, over the epsilons, "a-b"."""
    values = [r["fidelity"] for r in results["datasets"][dataset]["extraction"]
              if r["method"] == "DPC" and r["strategy"] == "dualcf" and r["n_queries"] == n]
    return f"{min(values):.3g}-{max(values):.3g}"


def _advantage(results, dataset, method, epsilon, attack):
    rows = [r for r in results["datasets"][dataset]["attribute"]
            if r["method"] == method and _eps(r["epsilon"]) == epsilon and r["attack"] == attack]
    (r,) = rows
    a, b = r["accuracy_members"], r["accuracy_non_members"]
    se = math.sqrt(a * (1 - a) / r["n_members"] + b * (1 - b) / r["n_non_members"])
    return f"{r['advantage']:+.3f} +- {se:.3f}"


def recourse_node_advantage(results):
    """Non-private PrivRecourse's centres on Adult: the advantage and its standard error."""
    return _advantage(results, "adult", "PrivRecourse", "inf", "node distance")


_BACKGROUND_TARGETS = {"shap_rows": "shap KernelExplainer, the rows as background",
                       "shap_kmeans": "shap KernelExplainer, shap.kmeans background",
                       "dpshap": "DPShapExplainer"}


def background(results):
    """benchmarks/attacks_background.py: per target, candidates and epsilon, the pooled
    attack's AUC with its 95% interval, TPR at 1% and 5% FPR, the epsilon lower bound."""
    table = []
    for r in results["rows"]:
        claimed = "inf" if r["claimed_epsilon"] is None else f"{r['claimed_epsilon']:.3g}"
        table.append([_BACKGROUND_TARGETS.get(r["target"], r["target"]), r["targets"],
                      _eps(r["epsilon"]), f"{r['n_members']} + {r['n_non_members']}",
                      f"{r['auc']:.2f} [{r['auc_low']:.2f}, {r['auc_high']:.2f}]",
                      f"{r['tpr_at_1%']:.2f}", f"{r['tpr_at_5%']:.2f}",
                      f"{r['epsilon_lower_bound']:.2f} (max {r['max_epsilon_lower_bound']:.1f})",
                      claimed, r.get("runs_without_release", 0)])
    return pd.DataFrame(table, columns=["target", "candidates", "eps", "members + non",
                                        "AUC [95% CI]", "TPR@1%", "TPR@5%",
                                        "eps lower bound", "claimed eps",
                                        "runs that released nothing"])


def background_private_max_auc(results):
    """The largest AUC of DPShapExplainer at epsilon <= 1."""
    return max(r["auc"] for r in results["rows"] if r["target"] == "dpshap"
               and r["epsilon"] is not None and float(r["epsilon"]) <= 1)


def background_max_finite_bound(results):
    """The largest epsilon lower bound of a finite claim, and that claim."""
    rows = [r for r in results["rows"] if r["claimed_epsilon"] is not None]
    worst = max(rows, key=lambda r: r["epsilon_lower_bound"])
    return f"{worst['epsilon_lower_bound']:.2f} (claimed {worst['claimed_epsilon']:.3g})"

