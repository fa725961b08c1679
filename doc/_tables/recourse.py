"""Tables of PrivRecourse's benchmarks (doc/benchmarks/recourse.rst).

``benchmarks/results/recourse_adult.json`` (benchmarks/recourse_adult.py),
``benchmarks/results/valid_records_recourse.json``
(benchmarks/valid_records_recourse.py) and the PrivRecourse part of
``benchmarks/results/check_defaults.json`` (benchmarks/check_defaults.py).
"""

COLUMNS = ["success", "Den", "Dist", "PL1", "PL2", "PL0", "Red", "yNN"]
CONSTRAINED = "age, edu up; thr 0.4"
LABELS = {"none": "none, fully connected graph",
          CONSTRAINED: "age and education-num non-decreasing, distance threshold 0.4"}
METHODS = {"FACE": "FACE (not DP)", "Baseline": "Noisy rows (baseline)", "DP-SD": "DP-SD (MST)",
           "PrivRecourse": "PrivRecourse", "k-means, not DP": "k-means, not DP"}


def _num(value, digits=3):
    return "n/a" if value is None else f"{value:.{digits}f}"


def _table2(results, constraints):
    header = ["method", *COLUMNS]
    rows = [[METHODS.get(e["method"], e["method"]), *(_num(e[c]) for c in COLUMNS)]
            for e in results["tables"][constraints]]
    return header, rows


def table2_none(results):
    """The paper's Table 2 layout, no constraints (fully connected graph)."""
    return _table2(results, "none")


def table2_constrained(results):
    """Table 2's columns with age and education-num non-decreasing, threshold 0.4."""
    return _table2(results, CONSTRAINED)


def count_threshold(results):
    """PrivRecourse's rows for each count_threshold (the same DP centres)."""
    header = ["count_threshold", "constraints", "nodes (mean)", "success", "Den", "Dist",
              "PL1"]
    rows = []
    for e in results["count_threshold"]:
        label = "none" if e["constraints"] == "none" else "age, edu up; thr 0.4"
        default = " (default)" if e["count_threshold"] == results["settings"][
            "count_threshold"] else ""
        rows.append([f"{e['count_threshold']:g}{default}", label, f"{e['nodes']:.1f}",
                     _num(e["success"]), _num(e["Den"]), _num(e["Dist"]), _num(e["PL1"])])
    return header, rows


def fit_figures(results):
    """What each fit released and spent, per seed (the unconstrained fit)."""
    header = ["seed", "black box test accuracy (model_C=10)", "same, model_C=1",
              "model epsilon", "clustering epsilon alone", "epsilon spent (composed)",
              "count noise std", "nodes of clusters", "favourable nodes"]
    by_seed = {b["seed"]: b for b in results["black_box"]}
    rows = []
    for f in results["fits"]:
        if f["constraints"] != "none":
            continue
        b = by_seed[f["seed"]]
        rows.append([f["seed"], _num(b["test_accuracy"]), _num(b["test_accuracy_model_C_1"]),
                     f"{b['model_epsilon']:g}", _num(f["clustering_epsilon"]),
                     _num(f["epsilon_spent"]), f"{f['count_noise_std']:.2f}",
                     f"{f['nodes']} of {f['n_clusters']}", f["candidates"]])
    return header, rows


def speed(results):
    """explain() on a batch against one Dijkstra per query (the paper's Algorithm 2)."""
    s = results["speed"]
    header = ["method", "queries", "ms per query"]
    rows = [["PrivRecourse.explain (one batched search)", s["queries"],
             f"{s['explain_ms_per_query']:.4f}"],
            ["one Dijkstra per query (the paper's Algorithm 2)", s["dijkstra_queries"],
             f"{s['dijkstra_ms_per_query']:.4f}"],
            ["ratio (explain / Dijkstra)", "", f"{s['ratio']:.2f}"]]
    return header, rows


def valid_records(results):
    """Shares of returned end points that are valid records, hold their constraints, flip."""
    header = ["table", "constraints", "queries", "nodes", "coverage", "categories",
              "integers", "bounds", "immutables", "monotone", "flip ratio"]
    rows = []
    for e in results["summary"]:
        rows.append([e["table"], e["constraints"], f"{e['queries']:.0f}", f"{e['nodes']:.1f}",
                     *(_num(e[c], 2) for c in ("coverage", "categories", "integers", "bounds",
                                               "immutables", "monotone", "flip_ratio"))])
    return header, rows


def valid_records_seeds(results):
    """The same, one row per seed (coverage and returned end points)."""
    header = ["table", "constraints", "seed", "nodes", "favourable nodes", "returned",
              "coverage", "fit (s)"]
    rows = [[r["table"], r["constraints"], r["seed"], r["nodes"], r["candidates"],
             f"{r['returned']} of {r['queries']}", _num(r["coverage"], 2), f"{r['fit_s']:.2f}"]
            for r in results["rows"]]
    return header, rows


def defaults(results):
    """PrivRecourse with its defaults on 1,000 rows: fixed 100 clusters against "auto"."""
    header = ["code", "problem", "seeds", "clusters", "nodes (mean)", "fits with no node",
              "fits with a favourable node", "seeds that raised", "success (mean)"]
    rows = []
    for label, name in (("before", "fixed n_clusters=100"), ("current", 'n_clusters="auto"')):
        entry = results[label]["recourse"]
        for problem, p in entry["problems"].items():
            clusters = sorted({r["clusters"] for r in p["runs"]})
            rows.append([name, problem, p["seeds"], ", ".join(map(str, clusters)),
                         f"{p['mean_nodes']:.2f}", p["no_node_fits"],
                         sum(r.get("candidates", 0) > 0 for r in p["runs"]), p["exceptions"],
                         f"{p['mean_success']:.2f}"])
    return header, rows


def run_info(results):
    """How the saved run was made: command, settings, seeds, date, runtime, versions."""
    s, run = results["settings"], results["run"]
    v = run["versions"]
    synth = results["synth"]
    rows = [
        ["command", run["command"]],
        ["date (UTC)", run["date"]],
        ["runtime", f"{run['seconds'] / 60:.1f} min ({run['machine']['cpus']} cores, "
                    f"{run['machine'].get('note', 'shared machine')})"],
        ["seeds", ", ".join(map(str, results["seeds"]))],
        ["denied test queries per seed", s["queries"]],
        ["training rows (clustering, model, KDE)", s["n_train"]],
        ["features", ", ".join(s["features"])],
        ["PrivRecourse", f"epsilon {s['epsilon']:g} in all, delta {s['delta']:g}, model_share "
                         f"{s['model_share']:g}, model_C {s['model_C']:g}, {s['clusters']} "
                         f"clusters, max_iter {s['max_iter']}, count_threshold "
                         f"{s['count_threshold']:g}, {s['relation']} neighbours"],
        ["FACE and baseline graphs", f"{s['graph_sample_rows']} sampled training rows; baseline "
                                     f"Laplace noise at epsilon {s['baseline_epsilon']:g}"],
        ["exact k-means", f"epsilon inf, max_iter {s['exact_kmeans_max_iter']}, "
                          f"count_threshold {s['exact_kmeans_count_threshold']:g}"],
        ["metrics", f"KDE bandwidth {s['bandwidth']:g}, yNN with {s['ynn_neighbors']} "
                    f"neighbours, on the {s['metrics_space']}"],
        ["DP-SD (MST)", "run" if synth["ran"] else f"not run: {synth['reason']}"],
        ["versions", ", ".join(f"{k} {val}" for k, val in v.items() if val)],
        ["code", f"commit {run['commit'][:10]}" if run.get("commit") else "n/a"],
    ]
    return ["item", "value"], rows


#: the paper's Table 2 (Adult), published: FACE Den 2.38, Dist 0; PrivRecourse 2.25, 0.01
PAPER_GAP = {"Den": 2.38 - 2.25, "Dist": 0.01 - 0.0}


def gaps(results):
    """How far each method's paths are from FACE's on Den and Dist (FACE minus method on
    Den, method minus FACE on Dist: lower is closer), per constraint setting."""
    header = ["method", "constraints", "Den below FACE", "Dist above FACE"]
    rows = [["PrivRecourse, the paper's Table 2 (published)", "none",
             f"{PAPER_GAP['Den']:.2f}", f"{PAPER_GAP['Dist']:.2f}"]]
    sweep = {(e["count_threshold"], e["constraints"]): e for e in results["count_threshold"]}
    default = results["settings"]["count_threshold"]
    for constraints, entries in results["tables"].items():
        by_method = {e["method"]: e for e in entries}
        face = by_method["FACE"]
        label = "none" if constraints == "none" else "age, edu up; thr 0.4"
        methods = [(METHODS[m], by_method[m]) for m in ("PrivRecourse", "k-means, not DP",
                                                        "DP-SD") if m in by_method]
        methods[0] = (f"PrivRecourse (count_threshold {default:g})", methods[0][1])
        for (ct, c), e in sorted(sweep.items()):
            if c == constraints and ct != default:
                methods.append((f"PrivRecourse (count_threshold {ct:g})", e))
        for name, e in methods:
            rows.append([name, label, _num(face["Den"] - e["Den"]),
                         _num(e["Dist"] - face["Dist"])])
    return header, rows


def per_seed(results):
    """success, Den and Dist of every method, per seed (the tables above are their means)."""
    header = ["method", "constraints", "seed", "nodes", "success", "Den", "Dist"]
    rows = [[METHODS.get(r["method"], r["method"]),
             "none" if r["constraints"] == "none" else "age, edu up; thr 0.4", r["seed"],
             r["nodes"], _num(r["success"]), _num(r.get("Den")), _num(r.get("Dist"))]
            for r in results["rows"]]
    return header, rows


def rules_adult(results):
    """Issue 39's rules on raw Adult at epsilon 1 (benchmarks/rules_adult.py): DPC's flip
    ratio and PrivRecourse's success, and the returned records that break a rule (DPC:
    its counterfactuals; PrivRecourse: every point of every path)."""
    header = ["method", "rules", "seeds", "flip ratio / success", "worst seed",
              "latent search", "records checked", "records breaking a rule"]
    names = {"rules": "the rules (ordered, linked, feasibility)",
             "before": "before: immutables, age and education-num up"}
    rows = []
    for e in results["summary"]:
        mine = [r for r in results["rows"]
                if r["method"] == e["method"] and r["rules"] == e["rules"]]
        checked = sum(r["returned"] if e["method"] == "DPC" else r["path_points"]
                      for r in mine)
        rows.append([e["method"], names[e["rules"]], str(e["seeds"]), _num(e["rate"], 2),
                     _num(e["worst"], 2), _num(e["latent_share"], 2), str(checked),
                     str(e["broken"])])
    return header, rows


def _histogram(counts):
    return "; ".join(f"{k}: {v}" for k, v in counts.items()) or "none"


def coverage_adult(results):
    """PrivRecourse's success on Adult under issue 39's rules, per setting
    (benchmarks/recourse_coverage.py): mean and worst over the secure fits."""
    header = ["setting", "fits", "success (mean)", "worst fit", "success per fit",
              "nodes (mean)", "favourable nodes (mean)", "path points breaking a rule",
              "failures by reason (all fits)"]
    rows = [[e["setting"], str(e["fits"]), _num(e["success"], 2), _num(e["worst"], 2),
             ", ".join(f"{v:.2f}" for v in e["per_fit"]), f"{e['nodes']:.1f}",
             f"{e['favourable_nodes']:.1f}", f"{e['broken']} of {e['path_points']}",
             _histogram(e["reasons"])]
            for e in results["adult"]["summary"]]
    return header, rows


def coverage_adult_tolerance(results):
    """The tolerance each path needed, and the paths stepping back, per fit of the
    default setting (with the step-by-step hold, and the same fit without it)."""
    header = ["fit", "success", "paths by tolerance needed",
              "paths whose education steps back (with the hold / without)",
              "paths whose age steps back (with / without)"]
    rows = []
    for r in results["adult"]["rows"]:
        if r["setting"] != "default":
            continue
        off = r["without_hold"]
        rows.append([str(r["fit"]), _num(r["success"], 2), _histogram(r["tolerance_needed"]),
                     f"{r['paths_education_steps_back']} / {off['paths_education_steps_back']}",
                     f"{r['paths_age_steps_back']} / {off['paths_age_steps_back']}"])
    return header, rows


def coverage_cancer(results):
    """PrivRecourse on breast cancer (284 private rows) at epsilon 1, per secure fit."""
    header = ["features", "fit", "DP row count", "clusters", "nodes", "favourable nodes",
              "success", "warned before the clustering's spend", "failures by reason"]
    rows = [[str(r["features"]), str(r["fit"]), f"{r['n_rows_dp']:.0f}", str(r["n_clusters"]),
             str(r["nodes"]), str(r["favourable_nodes"]), _num(r["success"], 2),
             "yes" if r["warned_before_spend"] else "no", _histogram(r["reasons"])]
            for r in results["breast_cancer"]["rows"]]
    return header, rows


def coverage_run(results):
    """How a benchmarks/recourse_coverage.py run was made."""
    run = results["run"]
    rows = [["command", run["command"]], ["date (UTC)", run["date"]],
            ["commit", str(run["commit"])],
            ["runtime", f"{run['seconds'] / 60:.1f} min ({run['machine']['cpus']} cores, "
                        "shared machine)"],
            ["versions", ", ".join(f"{k} {v}" for k, v in run["versions"].items())]]
    return ["", ""], rows


# ---------------------------------------------------------------- recourse_density.json
#: the paper's Table 2 (Adult, no constraints): published Den, Dist and yNN, not measured
PAPER_TABLE2 = {"FACE": (2.38, 0.0, 0.79), "Baseline": (-0.34, 0.21, 0.13),
                "DP-SD": (2.15, 0.15, 0.78), "PrivRecourse": (2.25, 0.01, 0.94)}
#: the methods of recourse_density.json as the pages name them
DENSITY_METHODS = {
    "FACE": "FACE (rows, not DP)", "Baseline": "Noisy rows (baseline)",
    "PrivRecourse": "PrivRecourse",
    "PrivRecourse (integer schema)": "PrivRecourse, integer columns declared",
    "k-means, not DP": "exact k-means (means, not DP)",
    "k-means, not DP (integer schema)": "exact k-means, integer columns declared",
    "k-means medoids (rows), not DP": "exact k-means medoids (rows, not DP)",
}


def _density_entry(results, method, family=None, param=None):
    for e in results["summary"]:
        if e["method"] == method and (family is None or e["family"] == family) and (
                e["param"] == param):
            return e
    return None


def _bandwidths(results):
    return [f"{h:g}" for h in results["settings"]["bandwidths"]]


def h_face(results):
    """The KDE bandwidth at which our FACE's Den is the paper's 2.38 (mean over seeds)."""
    hs = [c["h_face"] for c in results["calibration"] if c["h_face"] is not None]
    return sum(hs) / len(hs)


def _at(results, curve, h):
    """A curve given per bandwidth, interpolated linearly in log bandwidth at ``h``."""
    import numpy as np

    keys = _bandwidths(results)
    return float(np.interp(np.log(h), np.log([float(k) for k in keys]),
                           [curve[k] for k in keys]))


def default_gap_at(results, h):
    """FACE's Den minus PrivRecourse's (the default fit), mean over seeds, at bandwidth h."""
    return _density_entry(results, "PrivRecourse", "default")["gap"][f"{h:g}"]


def default_gap_005(results):
    """The gap at the bandwidth of recourse_adult.py (0.05)."""
    return default_gap_at(results, 0.05)


def default_gap_010(results):
    """The gap at bandwidth 0.1."""
    return default_gap_at(results, 0.1)


def default_gap_h_face(results):
    """The gap at the bandwidth where our FACE has the paper's Den."""
    return _at(results, _density_entry(results, "PrivRecourse", "default")["gap"],
               h_face(results))


def exact_gap_005(results):
    """Exact k-means' gap at bandwidth 0.05."""
    return _density_entry(results, "k-means, not DP", "exact")["gap"]["0.05"]


def density_side_by_side(results):
    """Table 2's realism figures (Den, Dist, yNN): the paper's next to ours, no constraints."""
    h = h_face(results)
    header = ["method", "Den (paper)", "Den (ours, bandwidth 0.05)",
              f"Den (ours, bandwidth {h:.3f})", "Dist (paper)", "Dist (ours)",
              "yNN (paper)", "yNN (ours)", "success (ours)"]
    rows = []
    for method, family in (("FACE", "reference"), ("Baseline", "reference"), ("DP-SD", None),
                           ("PrivRecourse", "default"), ("k-means, not DP", "exact"),
                           ("k-means medoids (rows), not DP", "exact")):
        paper = PAPER_TABLE2.get(method, (None, None, None))
        e = _density_entry(results, method, family) if family else None
        if e is None:
            ours = ["not run"] * 5
        else:
            ours = [_num(e["Den"]["0.05"], 2), _num(_at(results, e["Den"], h), 2),
                    _num(e["Dist"]), None, _num(e["success"])]
            ours[3] = _num(e["yNN"], 2)
        rows.append([DENSITY_METHODS.get(method, method),
                     "n/a" if paper[0] is None else f"{paper[0]:.2f}", ours[0], ours[1],
                     "n/a" if paper[1] is None else f"{paper[1]:.2f}", ours[2],
                     "n/a" if paper[2] is None else f"{paper[2]:.2f}", ours[3], ours[4]])
    return header, rows


def density_curve(results):
    """Den of each method per KDE bandwidth (mean over seeds) and under scipy's Scott KDE."""
    hs = _bandwidths(results)
    header = ["method", *hs, "scipy Scott", "nodes"]
    rows = []
    for e in results["summary"]:
        if e["family"] in ("reference", "default", "exact"):
            rows.append([DENSITY_METHODS.get(e["method"], e["method"]),
                         *(_num(e["Den"][h], 2) for h in hs), _num(e["Den_scipy_scott"], 2),
                         f"{e['nodes']:.0f}"])
    return header, rows


def density_gap(results):
    """FACE's Den minus each method's (same seed; mean over seeds) per KDE bandwidth; the
    paper's gap is 0.13 at its (unstated) bandwidth."""
    hs = _bandwidths(results)
    header = ["method", *hs, "scipy Scott", "Dist"]
    rows = [["the paper's PrivRecourse (published)", *(["0.13 at its bandwidth"] + [""] *
                                                        (len(hs) - 1)), "", "0.01"]]
    for e in results["summary"]:
        if e["family"] in ("reference", "default", "exact"):
            if e["method"] == "FACE":
                continue
            rows.append([DENSITY_METHODS.get(e["method"], e["method"]),
                         *(_num(e["gap"][h], 2) for h in hs), _num(e["gap_scipy_scott"], 2),
                         _num(e["Dist"])])
    return header, rows


def density_gap_seeds(results):
    """The default PrivRecourse's and exact k-means' gap per seed, at a few bandwidths."""
    hs = [h for h in ("0.03", "0.05", "0.1", "0.2") if h in _bandwidths(results)]
    header = ["method", "seed", *(f"gap at {h}" for h in hs)]
    face = {r["seed"]: r for r in results["rows"] if r["method"] == "FACE"}
    rows = []
    for r in results["rows"]:
        if r["family"] in ("default", "exact") and r["method"] in (
                "PrivRecourse", "k-means, not DP"):
            rows.append([DENSITY_METHODS[r["method"]], r["seed"],
                         *(_num(face[r["seed"]]["Den"][h] - r["Den"][h], 2) for h in hs)])
    return header, rows


def density_calibration(results):
    """Per seed: the bandwidth at which our FACE's Den is the paper's 2.38, the one at which
    our noisy baseline's is the paper's -0.34, and the gap and baseline there."""
    header = ["seed", "bandwidth: FACE Den = 2.38", "bandwidth: baseline Den = -0.34",
              "PrivRecourse's gap there", "baseline's Den there (paper -0.34)"]
    rows = []
    for c in results["calibration"]:
        rows.append([c["seed"], _num(c["h_face"]),
                     "never (its curve stays below)" if c["h_baseline"] is None
                     else _num(c["h_baseline"]),
                     _num(c.get("gap_at_h_face"), 2), _num(c.get("baseline_den_at_h_face"), 2)])
    return header, rows


def density_sweeps(results):
    """PrivRecourse at the same epsilon with one parameter changed: nodes, success, Dist and
    the gap to FACE at a few bandwidths (mean over seeds)."""
    hs = [h for h in ("0.03", "0.05", "0.1", "0.2") if h in _bandwidths(results)]
    header = ["parameter", "value", "columns", "nodes", "success", "Dist",
              *(f"gap at {h}" for h in hs), "yNN"]
    defaults = results["settings"]["defaults"]
    rows = []
    order = {"default": 0, "n_clusters": 1, "count_threshold": 2, "max_iter": 3}
    entries = [e for e in results["summary"] if e["family"] in order]
    entries.sort(key=lambda e: (order[e["family"]], e["param"] or 0, e["method"]))
    for e in entries:
        param = "default" if e["family"] == "default" else e["family"]
        value = ", ".join(f"{k}={defaults[k]:g}" for k in defaults) if e["param"] is None \
            else f"{e['param']:g}"
        rows.append([param, value, "integer" if "integer" in e["method"] else "float",
                     f"{e['nodes']:.0f}", _num(e["success"]), _num(e["Dist"]),
                     *(_num(e["gap"][h], 2) for h in hs), _num(e["yNN"], 2)])
    return header, rows


def density_run_info(results):
    """How recourse_density.json was made."""
    s, run = results["settings"], results["run"]
    return ["item", "value"], [
        ["command", run["command"]],
        ["date (UTC)", run["date"]],
        ["runtime", f"{run['seconds'] / 60:.1f} min ({run['machine']['cpus']} cores, shared)"],
        ["seeds", ", ".join(map(str, results["seeds"]))],
        ["denied test queries per seed", s["queries"]],
        ["KDE", f"{s['kde']}; bandwidths {', '.join(_bandwidths(results))}; scipy "
                f"gaussian_kde factor {s['scipy_scott_factor']:.3f}"],
        ["constraints", s["constraints"]],
        ["PrivRecourse", f"epsilon {s['epsilon']:g} in all (model share {s['model_share']:g}),"
                         f" defaults " + ", ".join(f"{k} {v:g}" for k, v in
                                                   s["defaults"].items())],
        ["code", f"commit {run['commit'][:10]}" if run.get("commit") else "n/a"],
    ]


def _adult_gap(results, constraints, method):
    entries = {e["method"]: e for e in results["tables"][constraints]}
    return entries["FACE"]["Den"] - entries[method]["Den"]


def adult_gap_none(results):
    """recourse_adult.json: FACE's Den minus PrivRecourse's, no constraints."""
    return _adult_gap(results, "none", "PrivRecourse")


def adult_gap_exact_none(results):
    """recourse_adult.json: FACE's Den minus exact k-means', no constraints."""
    return _adult_gap(results, "none", "k-means, not DP")


def adult_gap_constrained(results):
    """recourse_adult.json: FACE's Den minus PrivRecourse's, with the constraints."""
    return _adult_gap(results, CONSTRAINED, "PrivRecourse")


def adult_gap_exact_constrained(results):
    """recourse_adult.json: FACE's Den minus exact k-means', with the constraints."""
    return _adult_gap(results, CONSTRAINED, "k-means, not DP")
