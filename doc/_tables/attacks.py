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
