"""Tables of the privacy core's benchmarks (doc/privacy_core.rst, doc/benchmarks/privacy_core.rst).

Inputs: benchmarks/results/privacy_core.json (benchmarks/privacy_core.py),
dp_bounds.json (dp_bounds.py), secure_noise.json (secure_noise.py),
bad_input.json (bad_input.py), check_defaults.json (check_defaults.py), fixed_costs.json
(fixed_costs.py), row_count_cost.json (row_count_cost.py) and ledger_faults.json
(ledger_faults.py).
"""

from collections import Counter, defaultdict

import numpy as np

_ESTIMATORS = ["DPLocallyLinearClassifier", "DPLimeExplainer", "DPCounterfactualGenerator",
               "PrivRecourse"]


# ------------------------------------------------------------ privacy_core.json
def calibration(results):
    """Noise multiplier for a target (epsilon, delta): PLD against RDP accounting."""
    header = ["setting", "epsilon", "delta", "steps", "sample rate", "noise (PLD)",
              "noise (RDP)", "noise saved by PLD"]
    rows = []
    for r in results["noise"]["calibration"]:
        rate = "1 (no sampling)" if r["sample_rate"] >= 1 else f"{r['sample_rate']:.5f}"
        rows.append([r["setting"], f"{r['epsilon']:g}", f"{r['delta']:g}", r["steps"], rate,
                     f"{r['z_pld']:.3f}", f"{r['z_rdp']:.3f}", f"{r['saved']:.1%}"])
    return header, rows


def composition(results):
    """T Gaussian steps at one (epsilon, delta): exact composition against the classic bound."""
    c = results["noise"]["composition"]
    header = ["steps", "target (epsilon, delta)",
              "noise per step, exact composition (PLD)",
              "noise per step, classic mechanism at (epsilon/T, delta/T)", "ratio"]
    return header, [[c["steps"], f"({c['epsilon']:g}, {c['delta']:g})", f"{c['z_exact']:.1f}",
                     f"{c['sigma_classic_basic']:.1f}", f"{c['ratio']:.1f}x"]]


def reference(results):
    """The pinned reference: epsilon of one DP-SGD run under PLD and RDP."""
    r = results["noise"]["reference"]
    header = ["noise multiplier", "sample rate", "steps", "delta", "epsilon (PLD)",
              "epsilon (RDP)"]
    return header, [[f"{r['noise_multiplier']:g}", "500/60000", r["steps"], f"{r['delta']:g}",
                     f"{r['epsilon_pld']:.4f}", f"{r['epsilon_rdp']:.4f}"]]


def dpsgd_step(results):
    """Milliseconds per DP-SGD step against the same engine without privacy."""
    s = results["dpsgd_step"]
    ms = s["median_ms_per_step"]
    header = ["engine", "ms per step (median)", "runs (ms per step)"]

    def runs(key):
        return ", ".join(f"{1e3 * t:.2f}" for t in s["seconds_per_step"][key])

    return header, [["non-private (epsilon=inf: no clipping, no noise)",
                     f"{ms['nonprivate']:.2f}", runs("nonprivate")],
                    ["DP (clipping, secure noise)", f"{ms['dp']:.2f}", runs("dp")],
                    ["ratio DP / non-private", f"{s['ratio']:.2f}", ""]]


# --------------------------------------------------------------- dp_bounds.json
def _bounds_rows(rows):
    return (["data", "epsilon", "median inside", "rows inside", "width ratio"],
            [[r["data"], f"{r['epsilon']:g}", f"{r['median_inside']:.2f}",
              f"{r['rows_inside']:.2f}", f"{r['width_ratio']:.2f}"] for r in rows])


def bounds(results):
    """Coverage of DP bounds, every dataset and epsilon measured."""
    return _bounds_rows(results["rows"])


def bounds_at_epsilon_1(results):
    """Coverage of DP bounds at epsilon 1 (the guide's summary)."""
    return _bounds_rows([r for r in results["rows"] if r["epsilon"] == 1.0])


# ------------------------------------------------------------ secure_noise.json
_VARIANTS = {
    "before": "before (commit 223923f: PCG64 float32 DP-SGD noise, Mersenne Twister)",
    "insecure": "today's code, AES-CTR swapped for numpy's PCG64",
    "secure": "today's code as shipped (random_state=None)",
}


def secure_noise(results):
    """Fit time of DPLocallyLinearClassifier on MNIST with each noise source."""
    median = results["median"]
    header = ["variant", "fit (s), median", "runs (s)", "/ insecure"]
    rows = []
    for key, label in _VARIANTS.items():
        if key in median:
            rows.append([label, f"{median[key]:.2f}",
                         ", ".join(f"{t:.1f}" for t in results["times"][key]),
                         f"{median[key] / median['insecure']:.3f}"])
    return header, rows


# --------------------------------------------------------------- bad_input.json
def bad_input(results):
    """Bad input per entry point: cases tried, refused (any error), errors raised, events
    recorded by the refused calls; the last row sums them up."""
    by = defaultdict(list)
    for r in results["rows"]:
        by[r["estimator"]].append(r)
    header = ["entry point", "cases", "refused (an error)", "errors raised",
              "events recorded by refused calls"]
    rows = []
    for name, cases in by.items():
        outcomes = Counter(r["outcome"] for r in cases)
        refused = sum(not r["outcome"].startswith("accepted") for r in cases)
        rows.append([name, len(cases), refused,
                     ", ".join(f"{k} ({v})" for k, v in sorted(outcomes.items())),
                     sum(int(r["spent"]) for r in cases)])
    rows.append(["all entry points", len(results["rows"]),
                 sum(not r["outcome"].startswith("accepted") for r in results["rows"]),
                 f"raw tracebacks ({results['raw_tracebacks']}), refused but spent "
                 f"({results['refused_but_spent']}), refused on their DP row count (its "
                 f"share spent, by design) ({results.get('refused_on_dp_count', 0)}), errors "
                 f"after the commit not saying spent "
                 f"({results.get('after_commit_not_saying_spent', 0)}), NaN answers accepted "
                 f"({results.get('nan_answers', 0)}), timeouts ({results.get('timeouts', 0)}), "
                 f"accepted ({len(results['accepted'])})",
                 sum(int(r["spent"]) for r in results["rows"]
                     if not r["outcome"].startswith("accepted"))])
    return header, rows


def bad_input_cases(results):
    """Every bad input tried, and the error each estimator raised (first words)."""
    header = ["estimator", "input", "error", "message (start)", "spent"]
    return header, [[r["estimator"], r["input"], r["outcome"], r["message"][:70],
                     r["spent"]] for r in results["rows"]]


# ----------------------------------------------------------- check_defaults.json
def check_estimator(results):
    """scikit-learn's check_estimator on the defaults: checks passed, per saved run."""
    labels = list(results)
    header = ["estimator"] + [f"{label} (scikit-learn {results[label]['sklearn']})"
                              for label in labels]
    rows = []
    for name in _ESTIMATORS:
        row = [name]
        for label in labels:
            c = results[label]["check_estimator"].get(name)
            row.append("" if c is None else f"{c['passed']} / {c['checks']} passed")
        rows.append(row)
    return header, rows


def recourse_defaults(results):
    """PrivRecourse with its defaults on three small problems, per saved run."""
    header = ["run", "problem", "seeds", "mean success", "fits with no node", "exceptions",
              "mean nodes", "mean distance to data"]
    rows = []
    for label, run in results.items():
        rec = run["recourse"]
        for problem, p in rec["problems"].items():
            manifold = p.get("mean_manifold")
            rows.append([label, f"{problem} ({rec['rows']} x {rec['features']})",
                         len(p["runs"]), f"{p['mean_success']:.2f}", p["no_node_fits"],
                         p["exceptions"] if not isinstance(p["exceptions"], list)
                         else len(p["exceptions"]),
                         f"{p['mean_nodes']:.1f}",
                         "" if manifold is None or np.isnan(manifold) else f"{manifold:.3f}"])
    return header, rows


# ------------------------------------------------------------ fixed_costs.json
_FIXED = [
    ("calibration", "seconds", "DP-SGD calibration, MNIST 1 epoch (s)", "{:.2f}"),
    ("calibration", "cpu_seconds", "same, CPU (s)", "{:.2f}"),
    ("llc", "private", "LLC fit on MNIST, 1 epoch, DP (s)", "{:.1f}"),
    ("llc", "non_private", "same, non-private (s)", "{:.1f}"),
    ("llc", "ratio", "DP fit / non-private fit", "{:.2f}"),
    ("llc", "cpu_ratio", "same, CPU", "{:.2f}"),
    ("recourse", "own_model_first", "PrivRecourse fit, 10^4 rows, own DP model, first (s)", "{:.2f}"),
    ("recourse", "own_model_cached", "same, calibration cached (s)", "{:.2f}"),
    ("recourse", "black_box", "PrivRecourse fit, 10^4 rows, fitted black box (s)", "{:.3f}"),
    ("dplime", "ms_per_query", "DPLime m=3e5, d=50: time per query (ms)", "{:.0f}"),
    ("dplime", "cpu_ms_per_query", "same, CPU (ms)", "{:.0f}"),
    ("dplime", "explain_peak_mib", "same, traced peak during explain (MiB)", "{:.0f}"),
    ("dplime", "max_rss_mib", "same, process peak RSS (MiB)", "{:.0f}"),
]


def fixed_costs(results):
    """Before and after the fixed-cost work, side by side (median and minimum of the runs)."""
    s = results["summary"]
    header = ["measure", "before: median (min)", "after: median (min)", "before / after (medians)"]
    rows = []
    for part, key, label, fmt in _FIXED:
        if part not in s or key not in s[part]["after"]:
            continue
        b, a = s[part]["before"][key], s[part]["after"][key]
        ratio = b["median"] / a["median"] if a["median"] else float("nan")
        rows.append([label, f"{fmt.format(b['median'])} ({fmt.format(b['min'])})",
                     f"{fmt.format(a['median'])} ({fmt.format(a['min'])})", f"{ratio:.2f}"])
    return header, rows


# ------------------------------------------------------------ fixed_costs_first_fit.json
_FIRST_FIT = [
    ("import_skdpx", "import skdpx, fresh process (s)", "{:.2f}"),
    ("cpu_import_skdpx", "same, CPU (s)", "{:.2f}"),
    ("import_skdpx_own", "import skdpx after numpy, scipy.stats, scikit-learn (s)", "{:.3f}"),
    ("cpu_import_skdpx_own", "same, CPU (s)", "{:.3f}"),
    ("first", "PrivRecourse, black box, 10^4 rows: first fit (s)", "{:.3f}"),
    ("second", "same, second fit (s)", "{:.3f}"),
    ("ratio", "first fit / second fit", "{:.2f}"),
    ("cpu_first", "first fit, CPU (s)", "{:.3f}"),
    ("cpu_second", "second fit, CPU (s)", "{:.3f}"),
    ("cpu_ratio", "first fit / second fit, CPU", "{:.2f}"),
    ("gc_first", "first fit: in full garbage collections (s)", "{:.3f}"),
]


def first_fit(results):
    """A fresh process's ``import skdpx`` and first PrivRecourse fits, before and after
    issue 41 (median and minimum of the runs; a ratio's median is the median of the
    runs' ratios)."""
    s = results["summary"]["first_fit"]
    header = ["measure", "before: median (min)", "after: median (min)"]
    rows = []
    for key, label, fmt in _FIRST_FIT:
        cells = [f"{fmt.format(s[v][key]['median'])} ({fmt.format(s[v][key]['min'])})"
                 if key in s.get(v, {}) else "" for v in ("before", "after")]
        rows.append([label, *cells])
    return header, rows


# ------------------------------------------------------------ row_count_cost.json
# "llm_mnist" is the saved file's name for the llc_mnist.py job (named before the rename)
_RCC_BENCH = {"llm_mnist": "DPLocallyLinearClassifier, MNIST",
              "dplime_adult": "DPLimeExplainer, Adult (part a)",
              "dplime_budget": "DPLimeExplainer, Adult (budget)",
              "recourse_adult": "PrivRecourse, Adult (epsilon 2)",
              "dpc_adult": "DPCounterfactualGenerator, Adult"}
#: How a measure's values are shown.
_RCC_FORMAT = {"test accuracy": "{:.4f}", "DP-SGD noise multiplier": "{:.4f}",
               "mean local loss (excess)": "{:.6f}", "top-5 agreement": "{:.3f}",
               "basic answers paid by total epsilon 1": "{:.0f}", "success": "{:.3f}",
               "Den": "{:.3f}", "Dist": "{:.4f}", "PL2": "{:.4f}", "nodes": "{:.1f}",
               "flip ratio": "{:.3f}", "average distance": "{:.3f}"}
_RCC_MEASURE = {"Den": "path density (Den)", "Dist": "distance to the data (Dist)",
                "PL2": "path length, L2 (PL2)", "nodes": "graph nodes kept",
                "success": "success rate",
                "mean local loss (excess)": "mean local loss above the optimum"}


#: The rows shown, in this order: (benchmark, measure, settings or None for all of them).
_RCC_SHOWN = [
    ("llm_mnist", "test accuracy", None),
    ("llm_mnist", "DP-SGD noise multiplier", None),
    ("dplime_adult", "mean local loss (excess)",
     ("epsilon/query 0.1, T 30", "epsilon/query 1, T 300")),
    ("dplime_adult", "top-5 agreement", ("epsilon/query 0.1, T 30", "epsilon/query 1, T 300")),
    ("dplime_budget", "basic answers paid by total epsilon 1", None),
    ("recourse_adult", "success", None),
    ("recourse_adult", "Den", None),
    ("recourse_adult", "Dist", None),
    ("dpc_adult", "flip ratio", None),
    ("dpc_adult", "average distance", None),
]


def _rcc_shown(row):
    """The row's place in the table (None: not shown; the JSON has every row)."""
    for i, (bench, measure, settings) in enumerate(_RCC_SHOWN):
        if (row["benchmark"], row["measure"]) == (bench, measure) and (
                settings is None or row["setting"] in settings):
            return i
    return None


def _rcc_value(fmt, mean, std):
    if mean is None:
        return "--"
    return fmt.format(mean) + ("" if std is None else f" (std {fmt.format(std)})")


def row_count_cost(results):
    """The headline figures before and after the private row count (mean, std over seeds).

    A selection (``_RCC_SHOWN``): the file has every figure the benchmarks
    report (all of DPLime's part a, PrivRecourse's path-quality columns ...).
    """
    before, after = results["trees"]["before"]["commit"], results["trees"]["after"]["commit"]
    header = ["estimator, data", "measure", "setting", "seeds",
              f"before ({before})", f"after ({after})", "after - before (s.e.)"]
    rows = []
    for r in sorted((r for r in results["rows"] if _rcc_shown(r) is not None), key=_rcc_shown):
        fmt = _RCC_FORMAT.get(r["measure"], "{:.4g}")
        n = len(r["after_runs"] or [])
        diff = "--" if r["difference"] is None else fmt.format(r["difference"])
        if diff.lstrip("-").strip("0.") == "":  # rounds to zero: no sign
            diff = fmt.format(0.0)
        elif not diff.startswith("-"):
            diff = "+" + diff
        if r["difference_se"] is not None:
            diff += f" ({fmt.format(r['difference_se'])})"
        rows.append([_RCC_BENCH.get(r["benchmark"], r["benchmark"]),
                     _RCC_MEASURE.get(r["measure"], r["measure"]), r["setting"], n,
                     _rcc_value(fmt, r["before"], r["before_std"]),
                     _rcc_value(fmt, r["after"], r["after_std"]), diff])
    # how DPC's counterfactuals were found (summed over the seeds): its latent search, the
    # method proper, or the input-space fallback
    found = results.get("details", {}).get("dpc_found_by", {})
    n_seeds = len(results["settings"].get("dpc_seeds", []))
    for setting, before_stages in found.get("before", {}).items():
        after_stages = found["after"][setting]
        b, a = before_stages.get("latent", 0), after_stages.get("latent", 0)
        rows.append([_RCC_BENCH["dpc_adult"], "found by the latent search "
                     f"(of {sum(after_stages.values())}, all seeds)", setting, n_seeds,
                     str(b), str(a), f"{a - b:+d}" if a != b else "0"])
    return header, rows


def _rcc_command(name, command):
    """A command as run, without its temporary output file; the inline runs described."""
    tokens = command.split()
    kept = [t for i, t in enumerate(tokens) if "row-count-cost-" not in t
            and not (t == "--out" and i + 1 < len(tokens) and "row-count-cost-" in tokens[i + 1])]
    if kept[:2] != ["-c", "<inline>"]:
        return "python " + " ".join(kept)
    if name.startswith("dplime_adult_seed"):
        return ("python benchmarks/dplime_adult.py " + " ".join(kept[3:])
                + f" with the explainers' random_state {kept[2]}")
    total, steps, queries, *epsilons = kept[2:]
    return (f"basic DPLimeExplainer, total epsilon {total}, T {steps}, epsilon_per_query "
            f"{' and '.join(epsilons)}, {queries} queries asked at once")


def row_count_settings(results):
    """What ran on both trees: each benchmark's command, against its full run."""
    header = ["run", "command (the same on both trees)", "seconds (before, after)",
              "the full benchmark (not run here)"]
    rows = []
    order = ["llm_mnist", "dplime", "recourse", "dpc"]
    for name, sides in sorted(results["commands"].items(),
                              key=lambda item: [item[0].startswith(o) for o in order].index(True)):
        full = results["full_run"].get(name.split("_seed")[0], "--")
        rows.append([name, _rcc_command(name, sides["after"]["command"]),
                     f"{sides['before']['seconds']:.0f}, {sides['after']['seconds']:.0f}", full])
    return header, rows


# ------------------------------------------------------------ ledger_faults.json
def _way(way):
    if way is None:
        return "-"
    return way["error"] or f"accepted {way['accepted']}"


def ledger_faults(results):
    """Each fault of a ledger file: the error of each way in, and the spends granted after it."""
    header = ["fault", "same object", "reopened, fresh process", "unpickled, fresh process",
              "spends granted after the fault", "message (start; <path> is the file)"]
    rows = []
    for r in results["rows"]:
        if "skipped" in r:
            rows.append([r["fault"], f"skipped: {r['skipped']}", "", "", "", ""])
            continue
        ways = [r["same"], r["fresh"]["reopened"], r["fresh"]["unpickled"]]
        granted = sum(w["accepted"] for w in ways if w)
        rows.append([r["fault"], *map(_way, ways), granted, r["same"]["message"][:110]])
    return header, rows


def ledger_crashes(results):
    """Processes killed while spending: the file stays whole and keeps every acknowledged spend."""
    kills = results["kill_trials"]
    header = ["trial", "runs", "files whole", "acknowledged spends (per run)",
              "spends in the file (per run)", "largest epsilon spent"]
    mid = sum(k.get("killed_while_spending", True) for k in kills)
    rows = [[f"kill -9 at a random moment of a loop of spends ({mid} killed while spending)",
             len(kills),
             sum(k["whole"] for k in kills),
             ", ".join(str(k["acknowledged"]) for k in kills),
             ", ".join(str(k["in_file"]) for k in kills),
             f"{max(k['epsilon_spent'] or 0 for k in kills):.3f}"]]
    d = results["dask"]
    if "skipped" in d:
        rows.append(["Dask workers killed", "skipped", d["skipped"], "", "", ""])
    else:
        rows.append([f"Dask: {d['workers_killed']} of 2 workers killed while {d['tasks']} "
                     "tasks spend", 1,
                     int(d["every_acknowledged_spend_in_file"] and d["under_cap"]),
                     f"{d['acknowledged']} ({d['refused_or_lost']} lost or refused)",
                     d["in_file"], f"{d['epsilon_spent']:.3f} (cap {d['cap']:g})"])
    return header, rows


def ledger_first_read(results):
    """A fresh process's first spend on a file of DP-SGD spends: how long it holds the lock."""
    header = ["code", "spends in the file", "first spend (s)",
              "of which in the write lock (s)"]
    return header, [[r["code"], r["spends"], f"{r['seconds']:.1f}", f"{r['in_write_lock']:.3f}"]
                    for r in results.get("first_read", []) if "seconds" in r]


# ------------------------------------------------------------ fixed_costs*.json, every run
def _median(summary, part, side, key, fmt):
    cell = summary.get(part, {}).get(side, {}).get(key)
    return "" if cell is None else fmt.format(cell["median"])


def fixed_costs_runs(by_file):
    """Every saved run of benchmarks/fixed_costs.py, one row each: its commits, settings,
    load, and the medians of the LLC fits (DP, non-private, their ratio and its minimum
    over the pairs) and of the first calibration."""
    header = ["file", "after (before)", "pairs x epochs", "load (median)", "LLC DP fit (s)",
              "non-private (s)", "ratio, median (min)", "ratio before", "calibration (s)"]
    rows = []
    for name, r in by_file.items():
        s, settings = r["summary"], r["settings"]
        before = (r.get("before_commit") or "")[:7]
        ratio = s.get("llc", {}).get("after", {}).get("ratio")
        rows.append([
            name, f"{r['commit']}" + (f" ({before})" if before else ""),
            f"{settings['repeats']} x {settings['epochs']}",
            f"{float(np.median(r['load_average'][1:] or r['load_average'])):.2f}",
            _median(s, "llc", "after", "private", "{:.1f}"),
            _median(s, "llc", "after", "non_private", "{:.1f}"),
            "" if ratio is None else f"{ratio['median']:.3f} ({ratio['min']:.3f})",
            _median(s, "llc", "before", "ratio", "{:.3f}"),
            _median(s, "calibration", "after", "seconds", "{:.2f}")])
    return header, rows


def llc_phases(results):
    """The DP and non-private LLC fits' CPU by phase (medians): planning the spend and the
    calibrations, the DP-SGD loop, the rest of the work on the data."""
    s = results["summary"]["llc"]
    header = ["phase (CPU, s)", "DP fit, after", "non-private fit, after", "DP fit, before",
              "non-private fit, before"]
    rows = []
    for key, label in (("plan", "planning and calibration"), ("train", "DP-SGD loop"),
                       ("data", "the rest of the work on the data")):
        rows.append([label, *(f"{s[side][f'cpu_{key}_{fit}']['median']:.2f}"
                              if f"cpu_{key}_{fit}" in s.get(side, {}) else ""
                              for side in ("after", "before") for fit in ("private", "non_private"))])
    return header, rows


# ------------------------------------------------------------ parallel*.json
_PARALLEL = {"dplime_basic": "DPLimeExplainer explain", "search": "DPRandomSearchCV fit",
             "ceiling": "ceiling (pure CPU)"}


def parallel(by_file):
    """benchmarks/parallel.py: n_jobs=2 against n_jobs=1 (medians; one BLAS thread), per run."""
    header = ["file", "m rows", "what", "n_jobs=1 (s)", "n_jobs=2 (s)", "wall 2 / 1",
              "free cores 2 / 1", "wall 2 / 1, default BLAS threads"]
    rows = []
    for name, r in by_file.items():
        for key, label in _PARALLEL.items():
            out = r["results"][key]
            med, ratios = out["median"], out["ratios"]
            rows.append([name, f"{r['settings']['m']:,}", label,
                         f"{med['1 (1 BLAS thread)']['wall']:.3f}",
                         f"{med['2 (1 BLAS thread)']['wall']:.3f}",
                         f"{ratios['wall_2_to_1_one_blas_thread']:.2f}",
                         f"{ratios['free_cores_2_to_1_one_blas_thread']:.2f}",
                         f"{ratios['wall_2_to_1']:.2f}"])
    return header, rows


# ------------------------------------------------------------ single values for the prose
def fixed_costs_load(results):
    """The median load average over the run's processes (the first reading, before any
    process, left out)."""
    return float(np.median(results["load_average"][1:] or results["load_average"]))


def llc_dp_extra_cpu(results):
    """CPU seconds of the DP LLC fit above the non-private one (medians)."""
    after = results["summary"]["llc"]["after"]
    return after["cpu_private"]["median"] - after["cpu_non_private"]["median"]


def llc_dp_extra_wall(results):
    """Wall seconds of the DP LLC fit above the non-private one (medians)."""
    after = results["summary"]["llc"]["after"]
    return after["private"]["median"] - after["non_private"]["median"]


def change(row):
    """A row of row_count_cost.json: after / before - 1 (format it with ``%``)."""
    return row["after"] / row["before"] - 1


def share(row):
    """A row of row_count_cost.json: after / before."""
    return row["after"] / row["before"]


def drop(row):
    """A row of row_count_cost.json: 1 - after / before."""
    return 1 - row["after"] / row["before"]


def rcc_llc_steps(results):
    """The DP-SGD steps of the private MNIST fits after the change, "a to b"."""
    steps = [run["n_steps"] for entry in results["details"]["llm_mnist_runs"]["after"]
             if entry["epsilon"] != "inf" for run in entry["runs"]]
    return f"{min(steps):,} to {max(steps):,}"


def rcc_recourse_noise_change(results):
    """PrivRecourse's clustering noise multiplier, after / before - 1 (means over the fits)."""
    fits = results["details"]["recourse_fits"]
    mean = {side: np.mean([f["noise_multiplier"] for f in fits[side]]) for side in fits}
    return float(mean["after"] / mean["before"] - 1)


def _rcc_compared(results):
    """The rows of a row_count_cost.py file measured on both sides."""
    return [r for r in results["rows"] if r["before_runs"] and r["after_runs"]]


def rcc_compared(results):
    """How many figures a row_count_cost.py file compares (every row, not only those shown)."""
    return len(_rcc_compared(results))


def rcc_same_per_seed(results):
    """How many of them are the same on both sides, seed by seed, to the last digit."""
    return sum(r["before_runs"] == r["after_runs"] for r in _rcc_compared(results))


def rcc_beyond_2se(results):
    """How many differ by more than two standard errors (or at all where there is no
    spread: one seed, or seeds that agree among themselves on both sides)."""
    return sum(abs(r["difference"]) > 2 * (r["difference_se"] or 0.0)
               for r in _rcc_compared(results))



def _first_fit_runs(results, side):
    return results["runs"]["first_fit"][side]


def first_fit_runs_above(results):
    """How many runs' first / second CPU ratio (after) are above the target, 1.1."""
    return sum(run["cpu_ratio"] > 1.1 for run in _first_fit_runs(results, "after"))


def first_fit_excess_before_ms(results):
    """Median over the runs (before) of the first fit's CPU above the second's, in ms."""
    return 1e3 * float(np.median([r["cpu_first"] - r["cpu_second"]
                                  for r in _first_fit_runs(results, "before")]))


def first_fit_excess_after_ms(results):
    """Median over the runs (after) of the first fit's CPU above the second's, in ms."""
    return 1e3 * float(np.median([r["cpu_first"] - r["cpu_second"]
                                  for r in _first_fit_runs(results, "after")]))
