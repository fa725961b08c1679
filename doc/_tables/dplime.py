"""Tables of the DPLimeExplainer benchmarks.

benchmarks/dplime_adult.py (dplime_adult.json), benchmarks/dplime_models.py
(dplime_models.json), benchmarks/dplime_independence.py
(dplime_independence*.json), benchmarks/dplime_uncertainty.py
(dplime_uncertainty.json) and benchmarks/dplime_grouped_noise.py
(dplime_grouped_noise.json).
"""

import math


def _eps(e):
    e = float(e)
    return "inf" if math.isinf(e) else f"{e:g}"


def _int(n):
    return f"{int(round(n)):,}"


# --------------------------------------------------------------- dplime_adult.json


def noise(results):
    """Noise per step (std / sensitivity) of one answer: skdpx's exact composition and the
    paper's closed form (advanced composition + classic Gaussian, computed from its formula)."""
    header = ["eps/query", "T", "skdpx (exact)", "paper's closed form", "ratio"]
    rows = [[_eps(r["epsilon_per_query"]), r["T"], f"{r['skdpx']:.1f}", f"{r['paper']:.1f}",
             f"{r['ratio']:.1f}"] for r in results["noise"]["rows"]]
    return header, rows


def quality(results):
    """Part a: mean approximation loss and top-5 agreement of basic answers."""
    q = results["quality"]
    # (s_per_1000 is not shown: with the run's shared loss terms it times the descent only)
    header = ["eps/query", "T", "mean loss", "top-5 agree"]
    rows = [["(phi = 0)", "", f"{q['zero_loss']:.5f}", f"{q['chance_top5']:.2f} (chance)"]]
    rows += [[_eps(r["epsilon_per_query"]), r["T"], f"{r['mean_loss']:.5f}", f"{r['top5']:.2f}"]
             for r in q["rows"]]
    return header, rows


def _loss(v):
    return "" if v is None else f"{v:.5f}"


def budget(results):
    """Part b: one stream, total epsilon 1, per strategy and per-query epsilon."""
    header = ["strategy", "eps/q", "paid", "reused", "non-int", "steps", "eps spent",
              "loss: paid", "reused", "non-int", "all", "top-5 paid"]
    rows = [[r["strategy"], _eps(r["epsilon_per_query"]), _int(r["paid"]), _int(r["reused"]),
             _int(r["noninteractive"]), f"{r['steps_paid']:.1f}", f"{r['epsilon_spent']:.4f}",
             _loss(r["loss_paid"]), _loss(r["loss_reused"]), _loss(r["loss_noninteractive"]),
             _loss(r["loss_all"]), f"{r['top5_paid']:.2f}"] for r in results["budget"]["runs"]]
    return header, rows


def basic_sweep(results):
    """Part b: basic's mean loss at other per-query epsilons and T, and how many answers a
    total epsilon of 1 pays for."""
    sweep = results["budget"]["basic_sweep"]
    header = ["eps/query", "answers", *(f"T = {t}" for t in sweep["T"])]
    rows = [[_eps(r["epsilon_per_query"]), _int(r["answers"]),
             *(f"{v:.5f}" for v in r["mean_loss"])] for r in sweep["rows"]]
    return header, rows


def equal_loss(results):
    """Part b: paid answers at equal mean loss, against basic at its best T and at T = 30."""
    cells = {}
    for r in results["budget"]["equal_loss"]:
        key = (r["strategy"], _eps(r["epsilon_per_query"]))
        cell = cells.setdefault(key, {"paid": r["paid"], "loss": r["loss"]})
        note = "" if r["in_sweep"] else " (outside the sweep)"
        if r["against"] == "best T":
            cell["basic"] = f"{r['basic_answers']:.0f}"
            cell["ratio"] = f"{r['ratio']:.2f}{note}"
        else:
            cell["ratio30"] = f"{r['ratio']:.2f}{note}"
    header = ["strategy", "eps/q", "paid", "loss", "basic (best T)", "ratio",
              "ratio, T = 30"]
    rows = [[s, e, _int(c["paid"]), f"{c['loss']:.5f}", c.get("basic", ""),
             c.get("ratio", ""), c.get("ratio30", "")] for (s, e), c in cells.items()]
    return header, rows


def noninteractive(results):
    """Part b: the non-interactive answers after basic's budget is spent."""
    n = results["budget"]["noninteractive_after_basic"]
    header = ["answer to the queries basic could not pay for", "mean loss"]
    rows = [["nearest past interactive answer (skdpx)", f"{n['nearest_answer']:.5f}"],
            ["the paper's proxy fit (Algorithm 4)", f"{n['paper_proxy_fit']:.5f}"],
            ["no explanation (phi = 0)", f"{n['zero']:.5f}"]]
    return header, rows


def exact_history(results):
    """Part b: a warm start's loss from the exact (non-DP) optima of the first h queries."""
    e = results["budget"]["exact_history"]
    header = ["h past queries", *(f"average of {k} nearest" for k in e["k"])]
    rows = [[_int(r["h"]), *(f"{v:.5f}" for v in r["loss"])] for r in e["rows"]]
    return header, rows


def exact_warm_start_bound(results):
    """Part b: answers warm-started at exact optima, then n noisy steps, composing to epsilon 1."""
    b = results["budget"]["exact_warm_start_bound"]
    header = ["noisy steps per answer", "answers", "mean loss"]
    rows = [[r["steps"], _int(b["answers"]), f"{r['mean_loss']:.5f}"] for r in b["rows"]]
    return header, rows


def speed(results):
    """Part c: time per explanation, DPLimeExplainer (basic, T = 100) and lime."""
    s = results["speed"]
    header = ["explainer", "explanations timed", "ms per explanation"]
    rows = [["DPLimeExplainer (basic, T = 100)", _int(s["queries"]), f"{s['ms_per_query']:.1f}"]]
    if "lime_ms_per_explanation" in s:
        rows.append(["lime LimeTabularExplainer", _int(s["lime_explanations"]),
                     f"{s['lime_ms_per_explanation']:.0f}"])
        rows.append(["ratio (DPLimeExplainer / lime)", "", f"{s['ratio']:.3f}"])
    return header, rows


def run(results):
    """When, how long, on what: the run's record."""
    r = results["run"]
    v = r["versions"]
    parts = ", ".join(f"{p}: {t:.0f} s" for p, t in r.get("seconds_by_part", {}).items())
    settings = results.get("settings", {})
    header = ["", ""]
    rows = [["date", r["date"]],
            ["runtime", f"{r['seconds']:.0f} s" + (f" ({parts})" if parts else "")],
            ["command", r["command"]],
            *([["commit", r["commit"]]] if r.get("commit") else []),
            ["machine", f"{r['machine']['cpus']} cores, shared; load average at start "
                        f"{r['load_average_at_start']}" if r.get("load_average_at_start")
             else f"{r['machine']['cpus']} cores"],
            ["versions", ", ".join(f"{k} {val}" for k, val in v.items() if val)]]
    if settings.get("blas_threads"):
        rows.append(["BLAS threads", settings["blas_threads"]])
    return header, rows


# --------------------------------------------------------------- dplime_models.json


def models(results):
    """Agreement with non-private LIME and with the exact optimum, per black box and epsilon."""
    header = ["black box (explained output)", "eps/query", "r LIME", "top1 LIME", "r exact",
              "top1 exact", "feature 0 top"]
    rows = []
    for case, by_eps in results["cases"].items():
        for i, (eps, r) in enumerate(sorted(by_eps.items(), key=lambda kv: -float(kv[0]))):
            lime, exact = r["vs_lime"], r["vs_exact"]
            rows.append([case if i == 0 else "", _eps(eps), f"{lime['pearson_median']:.3f}",
                         f"{lime['top1_agreement']:.2f}", f"{exact['pearson_median']:.3f}",
                         f"{exact['top1_agreement']:.2f}",
                         f"{r['feature0_top']:.2f}" if "feature0_top" in r else ""])
    return header, rows


# --------------------------------------------------------- dplime_independence.json


def independence(results):
    """The end-to-end audit: 95% lower bounds on the epsilon of one answer (claim: 1)."""
    header = ["black box", "grad shift", "mu / mu0", "audit_epsilon", "audit_gdp (mu)",
              "Gaussian fit", "claim"]
    rows = [[r["black_box"], f"{r['gradient_shift_over_sensitivity']:.2f}",
             f"{r['screen_mu_over_claim']:.2f}", f"{r['audit_epsilon']:.3f}",
             f"{r['audit_gdp_epsilon']:.3f} ({r['audit_gdp_mu']:.3f})",
             "yes" if r["gaussian_fit"] else "no", _eps(results["epsilon_per_query"])]
            for r in results["results"]]
    return header, rows


def independence_settings(results):
    """The audit's settings, as saved."""
    header = ["setting", "value"]
    rows = [["explanation rows m", _int(results["rows"])],
            ["features", ", ".join(results["features"])],
            ["black box", results["black_box"]],
            ["epsilon_per_query, delta, T", f"{_eps(results['epsilon_per_query'])}, "
                                            f"{results['delta']:g}, {results['max_iter']}"],
            ["noise multiplier; claimed mu (mu0)", f"{results['noise_multiplier']:.2f}; "
                                                    f"{results['claimed_mu']:.3f}"],
            ["screened pairs", f"{results['targets']} targets x {results['queries']} queries, "
                               f"{_int(results['screen'])} simulated answers each"],
            ["answers per neighbour", _int(results["trials"])],
            ["runtime", f"{results['seconds']:.0f} s"]]
    run = results.get("run", {})
    rows.append(["date", run.get("date") or "not recorded"])
    rows.append(["versions", ", ".join(f"{k} {v}" for k, v in (run.get("versions") or {}).items()
                                       if v) or "not recorded"])
    return header, rows


def models_run(results):
    """The record of the run of benchmarks/dplime_models.py."""
    header = ["", ""]
    rows = [["settings", f"m = {_int(results['rows'])} explanation rows, "
                         f"{results['queries']} queries, seed {results['seed']}"]]
    if "run" in results:
        r = results["run"]
        rows += [["date", r["date"]], ["runtime", f"{r['seconds']:.0f} s"],
                 ["command", r["command"]],
                 ["versions", ", ".join(f"{k} {v}" for k, v in r["versions"].items() if v)]]
    return header, rows


# --------------------------------------------------------------- dplime_uncertainty.json


def uncertainty(results):
    """Each answer's std against the noise measured around the noiseless answer."""
    header = ["table", "rows", "features", "eps/query", "T", "coverage (1.645 std)",
              "width (std / spread)", "per value: median (5%-95%)", "above 2 std",
              "noiseless on the sphere"]
    fixed = results["settings"].get("T", results["settings"].get("max_iter"))
    rows = [[r["table"], _int(r["rows"]), r["features"], _eps(r["epsilon_per_query"]),
             r.get("T", fixed), f"{r['coverage']:.1%}", f"{r['width']:.2f}",
             f"{r['ratio_median']:.2f} ({r['ratio_p05']:.2f}-{r['ratio_p95']:.2f})",
             f"{r['distinguishable']:.1%}",
             f"{r['on_sphere']:.0%}" if "on_sphere" in r else ""] for r in results["rows"]]
    return header, rows


# --------------------------------------------------------------- dplime_grouped_noise.json


def grouped_noise(results):
    """How often the many-level column is first, by value and by margin above the noise floor."""
    header = ["eps/query", "seed", "first by value", "first, noise-aware", "no column above floor"]
    rows = [[_eps(r["epsilon_per_query"]), r["seed"], f"{r['first_by_value']} of {r['queries']}",
             f"{r['first_noise_aware']} of {r['queries']}",
             f"{r['none_above_floor']} of {r['queries']}"] for r in results["rows"]]
    return header, rows


# --------------------------------------------------------------- dplime_steps.json


def steps(results):
    """Each rule's steps and how much of the optimal improvement over answering zero it kept."""
    header = ["table", "rows", "features", "eps/query", "rule", "T (last seed)", "gain: mean (median)",
              "beats zero", "warned before spending"]
    rows = [[r["table"], _int(r["rows"]), r["features"], _eps(r["epsilon_per_query"]),
             r["rule"], r["T"], f"{r['gain_mean']:.3f} ({r['gain_median']:.3f})",
             f"{r['beats_zero']:.1%}", "yes" if r["warned"] else ""] for r in results["rows"]]
    return header, rows


# --------------------------------------------------------------- dplime_cells.json


def cells(results):
    """Exact path vs per-cell sums: CPU per query and the cells' local loss relative to the
    exact path's (median / worst query), under the exact loss."""
    header = ["data", "m", "d", "exact ms/query", "cells ms/query", "cells fit CPU s",
              "noiseless optimum, exact anchors", "noiseless optimum, DP anchors",
              "DP answers, eps=1 per query"]
    rows = []
    for r in results["runs"]:
        cells = [r[key] for key in ("rel_loss_noiseless", "rel_loss_noiseless_dp_anchors",
                                    "rel_loss_eps1")]
        rows.append([r["setting"], _int(r["m"]), r["d"], f"{r['exact_eps1_ms_per_query']:.1f}",
                     f"{r['cells_eps1_ms_per_query']:.2f}", f"{r['cells_eps1_fit_cpu_s']:.1f}",
                     *[f"{c['median']:+.2%} / {c['max']:+.2%}" for c in cells]])
    return header, rows
