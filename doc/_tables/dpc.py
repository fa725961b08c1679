"""Tables of the DPCounterfactualGenerator benchmarks (doc/benchmarks/dpc.rst).

Each renderer takes the saved results of one benchmark under
benchmarks/results/ (written by benchmarks/dpc_*.py through
benchmarks/_dpc_bench.py::save, or by benchmarks/valid_records.py) and returns
``(header, rows)``. The only numbers that do not come from a results file are
the paper's own, published figures (Yang et al. 2022, Tables 2 and 4), kept
in ``PAPER_*`` below and always shown in a column or row labelled as the
paper's.
"""

#: Yang et al. (2022), Table 2: flip ratio of DPC at epsilon 0.025 and 0.75
#: and of DiCE ("spec." for MNIST: a specified target digit).
PAPER_FLIP = {
    "Adult": {0.025: 0.918, 0.75: 0.968, "dice": 0.972},
    "Hospital": {0.025: 0.826, 0.75: 0.884, "dice": 0.892},
    "MNIST": {0.025: 0.720, 0.75: 0.742, "dice": 0.204},
}
#: Yang et al. (2022), Table 4, Adult: surrogate accuracy (%) known / unknown
#: architecture, per number of queries; "base": the queries alone.
PAPER_EXTRACTION = {
    "base": (75.2, 73.6),
    "Non-DP": {250: (79.5, 78.1), 500: (80.1, 79.0), 1000: (81.9, 80.2), 2000: (83.1, 81.7)},
    "DPC": {250: (73.1, 72.3), 500: (71.0, 70.3), 1000: (68.9, 67.1), 2000: (66.5, 65.1)},
}
PAPER_TARGET_ACCURACY = 85.6

_METHOD = {"dpsgd": "DPC, DP-SGD autoencoder", "functional": "DPC, functional mechanism"}


def _eps(value):
    return "inf" if value == "inf" else f"{value:g}"


def _dataset(results):
    name = results["tables"][0]["dataset"]
    return next((key for key in PAPER_FLIP if name.startswith(key)), None)


def _paper(dataset, key):
    value = PAPER_FLIP.get(dataset, {}).get(key)
    return "" if value is None else f"{value:.3f}"


def flips(results):
    """Flip ratio (mean over seeds and worst seed), distance, time, and the paper's flip ratio.

    One row per (autoencoder, epsilon) of every table in ``results["tables"]``,
    then DiCE's row where it ran. "time / DiCE" is DPC's time per
    counterfactual over DiCE's, measured side by side in the same run.
    """
    dataset = _dataset(results)
    header = ["method", "epsilon", "seeds", "flip ratio", "worst seed", "avg dist",
              "ms / query", "time / DiCE", "paper's flip ratio"]
    rows, dice = [], None
    for table in results["tables"]:
        ratios = table.get("time_ratio_vs_dice") or {}
        for row in table["rows"]:
            eps = row["epsilon"]
            ratio = ratios.get(str(eps))
            rows.append([_METHOD.get(row["ae_method"], row["ae_method"]), _eps(eps),
                         len(row["per_seed"]), f"{row['flip_ratio']:.3f}",
                         f"{row['worst_seed']:.3f}", f"{row['avg_dist']:.3f}",
                         f"{row['ms_per_query']:.1f}",
                         "" if ratio is None else f"{ratio:.3f}",
                         _paper(dataset, eps if eps == "inf" else float(eps))])
        dice = dice or table.get("dice")
    if dice:
        rows.append([f"DiCE random, not private ({dice['n_queries']} queries)", "", "",
                     f"{dice['flip_ratio']:.3f}", "", f"{dice['avg_dist']:.3f}",
                     f"{dice['ms_per_query']:.1f}", "", _paper(dataset, "dice")])
    return header, rows


def seeds(results):
    """Flip ratio of every seed, one row per (autoencoder, epsilon): where the mean comes from."""
    tables = results["tables"]
    n = max(len(row["per_seed"]) for table in tables for row in table["rows"])
    header = ["method", "epsilon"] + [f"seed {i}" for i in range(n)]
    rows = []
    for table in tables:
        for row in table["rows"]:
            cells = [f"{s['flip_ratio']:.3f}" for s in row["per_seed"]]
            rows.append([_METHOD.get(row["ae_method"], row["ae_method"]), _eps(row["epsilon"])]
                        + cells + [""] * (n - len(cells)))
    return header, rows


def found_by(results):
    """How many counterfactuals each stage of the search found, summed over seeds.

    From each seed's ``meta["found_by"]`` (runs saved before it was recorded
    have none: they are left out).
    """
    stages, rows = [], []
    for table in results["tables"]:
        for row in table["rows"]:
            counts = {}
            for seed in row["per_seed"]:
                for stage, n in (seed.get("found_by") or {}).items():
                    counts[stage] = counts.get(stage, 0) + n
                    if stage not in stages:
                        stages.append(stage)
            if counts:
                rows.append((row, counts))
    header = ["method", "epsilon", "queries x seeds"] + stages
    return header, [[_METHOD.get(row["ae_method"], row["ae_method"]), _eps(row["epsilon"]),
                     results["tables"][0]["n_queries"] * len(row["per_seed"])]
                    + [counts.get(stage, 0) for stage in stages] for row, counts in rows]


def setup(results):
    """The run's settings and facts: black box, data, seeds, runtime, date, versions."""
    black_box = results["black_box"]
    table = results["tables"][0]
    settings = results["settings"]
    run = results["run"]
    rows = [
        ["black box", f"{black_box['model']} on {black_box['n_train']:,} rows; accuracy "
                      f"{black_box['accuracy']:.4f} on {black_box['n_test']:,} others"],
        ["DPC's private rows", f"{table['n_train']:,} rows, {table['n_features']} columns"],
        ["queries", f"{table['n_queries']} (desired class: {table['desired_class']})"],
        ["DPC seeds", ", ".join(map(str, table["seeds"]))],
        ["DiCE", "not run" if not settings.get("dice") else
         f"on the first {settings['n_dice']} queries" if settings.get("n_dice") else
         "on every query"],
        ["run", f"{run['date']}, {run['seconds'] / 60:.1f} min, "
                f"{run['machine']['cpus']} cores (shared; load average at start "
                f"{run['load_average_at_start'][0]:.1f})"],
        ["versions", ", ".join(f"{k} {v}" for k, v in run["versions"].items() if v)],
    ]
    return ["setting", "value"], rows


def protection(results):
    """Surrogate agreement with the black box (first setup of dpc_adult.py), per query count."""
    blocks = results["protection"]
    surrogates = blocks[0]["surrogates"]
    header = ["transfer set"] + [f"{name}, {block['n_queries']} queries"
                                 for block in blocks for name in surrogates]
    labels = [row["transfer_set"] for row in blocks[0]["rows"]]
    rows = []
    for label in labels:
        cells = []
        for block in blocks:
            row = next(r for r in block["rows"] if r["transfer_set"] == label)
            cells += [f"{row['agreement'][name]:.4f}" for name in surrogates]
        rows.append([label] + cells)
    return header, rows


_TRANSFER = {"(queries only)": "queries only",
             "DiCE random (non-DP)": "with DiCE random (not private)",
             "DPC eps=inf (non-DP)": "with DPC, epsilon inf (not private)",
             "DPC eps=0.025": "with DPC, epsilon 0.025"}


def extraction(results):
    """Surrogate accuracy (mean +- standard error), the paper's protocol (dpc_extraction.py)."""
    cells0 = results["rows"][0]["cells"]
    header = ["transfer set"] + [f"{c['n_queries']} queries, {c['architecture']}" for c in cells0]
    rows = [[_TRANSFER.get(row["transfer_set"], row["transfer_set"])]
            + [f"{c['accuracy']:.4f} ± {c['standard_error']:.4f}" for c in row["cells"]]
            for row in results["rows"]]
    return header, rows


def extraction_paper(results):
    """The paper's Table 4 (Adult) at the query counts of ``results``: published constants."""
    sizes = results["settings"]["sizes"]
    header = ["transfer set (the paper's figures, %)"] + [
        f"{n} queries, {arch}" for n in sizes for arch in ("known", "unknown")]
    base = [f"{v:.1f}" for _ in sizes for v in PAPER_EXTRACTION["base"]]
    rows = [["queries only (the paper's base extraction: one figure for every count)"] + base]
    for name, label in (("Non-DP", "with DiCE (not private)"), ("DPC", "with DPC, epsilon 0.025")):
        row = [label]
        for n in sizes:
            pair = PAPER_EXTRACTION[name].get(n)
            row += ["", ""] if pair is None else [f"{v:.1f}" for v in pair]
        rows.append(row)
    return header, rows


def extraction_setup(results):
    """The extraction run's settings and facts."""
    black_box = results["black_box"]
    settings = results["settings"]
    rows = [
        ["black box f", f"{black_box['model']} on {black_box['n_train']:,} rows; accuracy "
                        f"{black_box['accuracy']:.4f} on its {black_box['n_test']:,} test rows "
                        f"(the paper's: {PAPER_TARGET_ACCURACY:.1f}%)"],
        ["adversary's pool", f"{results['n_pool']:,} rows; DPC fitted on the "
                             f"{results['n_private']:,} that are not queries"],
        ["query counts", ", ".join(map(str, settings["sizes"]))],
        ["surrogate seeds", ", ".join(map(str, settings["mlp_seeds"]))],
        ["DPC seeds", f"epsilon 0.025: {', '.join(map(str, settings['dpc_seeds']['0.025']))}; "
                      f"epsilon inf: {', '.join(map(str, settings['dpc_seeds']['inf']))}"],
        ["DiCE random", "not run" if results["dice_ms_per_query"] is None else
         f"{results['dice_ms_per_query']:.0f} ms per counterfactual"],
        ["run", f"{results['run']['date']}, {results['run']['seconds'] / 60:.1f} min, "
                f"{results['run']['machine']['cpus']} cores (shared)"],
        ["versions", ", ".join(f"{k} {v}" for k, v in results["run"]["versions"].items() if v)],
    ]
    return ["setting", "value"], rows


_CHECKS = ("categories", "integers", "bounds", "immutables", "monotone")


def valid_records(results):
    """benchmarks/valid_records.py: flip ratio and validity shares at epsilon 1, per case.

    Only DPCounterfactualGenerator's rows (the file may hold other methods'
    rows added by their own benchmarks); "-": the check does not apply.
    """
    header = ["table", "method", "seeds", "flip ratio", "worst seed", "returned",
              *_CHECKS, "s / run"]
    rows = []
    for case, entry in results["cases"].items():
        for name, method in entry["methods"].items():
            if not name.startswith("DPC"):
                continue
            mean = method["mean"]
            label = {"DPCounterfactualGenerator": "DPC, the whole search"}.get(name, name)
            rows.append([case, label, len(method["runs"]), f"{mean['flip_ratio']:.3f}",
                         f"{method['min_flip_ratio']:.3f}", f"{mean['returned']:.3f}",
                         *["-" if mean[c] is None else f"{mean[c]:.3f}" for c in _CHECKS],
                         f"{mean['seconds']:.0f}"])
    return header, rows


def dice_gain_range(results):
    """How far DiCE's counterfactuals raised the surrogate's accuracy over the queries alone,
    in points, over the query counts and architectures: "a to b"."""
    by = {row["transfer_set"]: row["cells"] for row in results["rows"]}
    gains = [100 * (d["accuracy"] - q["accuracy"])
             for q, d in zip(by["(queries only)"], by["DiCE random (non-DP)"])]
    return f"{min(gains):.1f} to {max(gains):.1f}"


_STAGES = ("latent", "prototype segment", "score", "direction")


def stages(results):
    """Each stage's flip ratio per seed (dpc_stages.json), and what the default returns."""
    header = ["seed", *_STAGES, "returned by default (latent + prototype segment)",
              "with allow_perturbations=True"]
    rows = [[s["seed"], *(f"{s['stages'][k]['flip_ratio']:.3f}" for k in _STAGES),
             f"{s['flip_ratio_without_perturbations']:.3f}", f"{s['flip_ratio_all']:.3f}"]
            for s in results["per_seed"]]
    summary = results["summary"]
    mean = {k: sum(s["stages"][k]["flip_ratio"] for s in results["per_seed"])
            / len(results["per_seed"]) for k in _STAGES}
    rows.append(["mean", *(f"{mean[k]:.3f}" for k in _STAGES),
                 f"{summary['flip_ratio_without_perturbations']:.3f}",
                 f"{summary['flip_ratio_all']:.3f}"])
    return header, rows


def stage_plausibility(results):
    """Per stage: counterfactuals found over all seeds, their mean distance and plausibility."""
    header = ["stage", "counterfactuals (all seeds)", "avg distance", "avg plausibility"]
    rows = []
    for stage in _STAGES:
        n = sum(s["stages"][stage]["n"] for s in results["per_seed"])
        dist = results["summary"][f"{stage} avg_dist"]
        plaus = results["summary"][f"{stage} plausibility"]
        rows.append([stage, n, "-" if dist is None else f"{dist:.3f}",
                     "-" if plaus is None else f"{plaus:.3f}"])
    return header, rows


def diversity(results):
    """dpc_diversity.json: how different a query's n_counterfactuals alternatives are,
    per epsilon (mean over the seeds; the worst seed's ratio)."""
    header = ["epsilon", "seeds", "k", "valid", "diversity (mean pairwise distance)",
              "proximity (mean distance to the query)", "diversity / proximity",
              "worst seed's ratio", "distinct sets of changed columns per alternative"]
    rows = []
    for s in results["summary"]:
        mine = [r for r in results["rows"] if r["epsilon"] == s["epsilon"]]
        rows.append([_eps(s["epsilon"]), str(s["seeds"]), str(mine[0]["k"]),
                     f"{s['valid']:.3f}", f"{s['diversity']:.3f}", f"{s['proximity']:.3f}",
                     f"{s['ratio']:.2f}", f"{min(r['ratio'] for r in mine):.2f}",
                     f"{s['distinct_changes']:.2f}"])
    return header, rows
