"""Tables of the memory benchmark (doc/scale.rst).

``benchmarks/results/memory.json`` (benchmarks/memory.py): one run per
(code, case, rows, address-space limit), each in its own subprocess.
"""

CASES = {"dplime": "DPLimeExplainer: fit (DP bounds) + 3 queries",
         "recourse": "PrivRecourse: fit (DP bounds), a black box",
         "recourse_dpsgd": "PrivRecourse: fit (DP bounds), DP-SGD black box",
         "dplime_declared": "DPLimeExplainer: fit (declared bounds) + 3 queries",
         "recourse_declared": "PrivRecourse: fit (declared bounds), a black box"}


def _ratio(run, key):
    return f"{run[key]:.2f}" if key in run else "-"


def runs(results):
    """Peak memory over the size of X, and the fits under an address-space limit."""
    st = results["settings"]
    header = ["case", "rows x 50", "code", "address-space limit", "fitted", "fit (s)",
              "epsilon recorded", "(peak - RSS with X) / X", "peak / X (X included)",
              "outcome"]
    out = []
    order = {"before": 0, "after": 1}
    for run in sorted(results["runs"], key=lambda r: (r.get("limit_gib") is not None,
                                                      r["case"], order[r["code"]])):
        code = f"{run['code']} ({run.get('commit', st[run['code']])})"
        limit = f"{run['limit_gib']:g} GiB" if run.get("limit_gib") else "-"
        fit = "-" if run.get("fit_seconds") is None else f"{run['fit_seconds']:.0f}"
        outcome = "ok" if run["ok"] else run.get("error", "failed").split(":")[0]
        out.append([CASES.get(run["case"], run["case"]), f"{run['rows']:.0e}", code, limit,
                    "yes" if run["ok"] else "no", fit, f"{run.get('epsilon_spent', '-')}",
                    _ratio(run, "peak_over_x"), _ratio(run, "peak_with_x_over_x"), outcome])
    return header, out
