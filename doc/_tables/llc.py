"""Tables of DPLocallyLinearClassifier's benchmarks (benchmarks/llc_adult.py, llc_mnist.py,
llc_vs_dpebm.py).

Each function takes the saved results of one file under benchmarks/results/
(llc_adult.json or llc_mnist.json) and returns (header, rows). The paper's
accuracies are published constants saved in llc_mnist.json as such
(``paper_accuracy``, ``paper_source``); every other number is measured.
"""

import math


def _eps(value):
    """An epsilon as saved ("inf" for the non-private rows) -> text."""
    value = float(value)
    return "inf" if math.isinf(value) else f"{value:g}"


def _pct(mean, std=None):
    if mean is None:
        return "--"
    return f"{100 * mean:.2f} %" if std is None else f"{100 * mean:.2f} ± {100 * std:.2f} %"


def _n_maps(row):
    return row.get("settings", {}).get("n_maps", "--")


def adult_accuracy(results):
    """llc_adult.json: test accuracy per model and epsilon (mean ± std over the seeds)."""
    header = ["model", "maps per class", "epsilon", "test accuracy", "fit time (s, mean)"]
    rows = []
    for row in results["rows"]:
        model = row["model"].replace(" M=1", "").replace(" M=2", "")
        if "not_run" in row:
            rows.append([model, _n_maps(row), _eps(row["epsilon"]),
                         f"not run: {row['not_run']}", "--"])
            continue
        rows.append([model, _n_maps(row), _eps(row["epsilon"]),
                     _pct(row["accuracy_mean"], row["accuracy_std"]),
                     f"{row['fit_seconds_mean']:.1f}"])
    return header, rows


def adult_privacy(results):
    """llc_adult.json: what each private DPLocallyLinearClassifier fit spent, and its noise."""
    header = ["maps per class", "epsilon (target)", "epsilon spent (max over seeds)",
              "delta spent", "noise multiplier"]
    rows = []
    for row in results["rows"]:
        spent = row.get("privacy")
        if not spent or math.isinf(float(row["epsilon"])):
            continue
        rows.append([_n_maps(row), _eps(row["epsilon"]),
                     f"{max(float(s['epsilon_spent']) for s in spent):.4f}",
                     f"{max(s['delta_spent'] for s in spent):.2g}",
                     f"{spent[0]['noise_multiplier']:.3f}"])
    return header, rows


def mnist_accuracy(results):
    """llc_mnist.json: test accuracy against the paper's published figures."""
    header = ["setting", "epsilon", "epsilon recomputed (max over seeds)",
              "noise multiplier z", "learning rate", "max_grad_norm",
              "test accuracy (measured)",
              "the paper's accuracy (published)"]
    rows = []
    for row in results["accuracy"]:
        finite = not math.isinf(float(row["epsilon"]))
        rows.append([
            "DP" if finite else "non-private",
            _eps(row["epsilon"]),
            f"{float(row['epsilon_recomputed_max']):.4f}" if finite else "inf",
            f"{row['noise_multiplier']:.3f}",
            f"{row['parameters']['learning_rate']:g}",
            f"{row['parameters']['max_grad_norm']:g}" if finite else "no clipping",
            _pct(row["accuracy_mean"], row["accuracy_std"]),
            _pct(row["paper_accuracy"], row.get("paper_accuracy_plusminus")),
        ])
    return header, rows


def mnist_speed(results):
    """llc_mnist.json: the training loop's time per epoch, DP-SGD against non-private."""
    speed = results["speed"]
    runs = f"median of {speed['repeats']} interleaved runs of {speed['epochs']:g} epochs"
    rows = [
        ["non-private training loop (same code)", f"{speed['seconds_per_epoch_non_private']:.2f} s"
         " per epoch", runs],
        ["DP-SGD training loop (clipping and noise)", f"{speed['seconds_per_epoch_dp']:.2f} s"
         " per epoch", runs],
        ["ratio DP / non-private", f"{speed['ratio']:.2f}", runs],
    ]
    fits = speed.get("full_dp_fit_seconds")
    if fits:
        rows.append([f"a whole {results['settings']['model']['epochs']:g}-epoch DP fit",
                     f"{fits['min']:.0f}-{fits['max']:.0f} s",
                     f"range over the {fits['n_fits']} DP fits of the accuracy table"])
    return ["measured", "time", "how"], rows


def mnist_memory(results):
    """llc_memory.json: peak RSS and fit time of a DP fit on MNIST, before and after issue 41."""
    s, settings = results["summary"], results["settings"]
    how = (f"median of {s['after']['n_runs']} interleaved runs, "
           f"{settings['epochs']:g} epochs, one BLAS thread")
    rows = []
    for code, label in (("before", f"before ({settings['before']}): whole projection kept"),
                        ("after", "after: projection never formed")):
        r = s[code]
        rows.append([label, f"{r['peak_rss_mib']:,.0f}", f"{r['peak_over_data_mib']:,.0f}",
                     f"{r['fit_seconds']:.1f}", f"{r['fit_cpu_seconds']:.1f}",
                     ", ".join(f"{a:.4f}" for a in r["accuracy"]), how])
    ratio = s["ratio_after_before"]
    rows.append(["after / before", f"{ratio['peak_rss_mib']:.2f}", "--",
                 f"{ratio['fit_seconds']:.2f}", f"{ratio['fit_cpu_seconds']:.2f}", "--",
                 "ratio of the medians"])
    rows.append(["Opacus, ghost clipping (quoted in issue 41, not measured here)",
                 f"{settings['opacus_peak_mib']:,}", "--", "--", "--", "--",
                 f"after's peak / Opacus' = {s['after_peak_over_opacus']:.2f}"])
    return ["code", "peak RSS (MiB)", "peak above the loaded data (MiB)", "fit (s)",
            "fit CPU (s)", "test accuracy", "how"], rows


def mnist_accounting(results):
    """llc_mnist.json: the paper's DP-SGD event under PLD and RDP."""
    acc = results["accounting"]
    header = ["", "PLD (skdpx)", "RDP", "the paper (moments accountant)"]
    rows = [[f"epsilon of the paper's noise z = {acc['paper_sigma']:g}",
             f"{acc['paper_sigma_epsilon_pld']:.3f}", f"{acc['paper_sigma_epsilon_rdp']:.3f}",
             f"{acc['paper_reported_epsilon']:g} (published)"]]
    for row in acc["calibrated"]:
        rows.append([f"noise multiplier z for epsilon {row['epsilon']:g}",
                     f"{row['noise_multiplier_pld']:.3f}", f"{row['noise_multiplier_rdp']:.3f}",
                     f"{acc['paper_sigma']:g} (published)" if row["epsilon"]
                     == acc["paper_reported_epsilon"] else "--"])
    return header, rows


def mnist_centring_cost(results):
    """llc_mnist.json: DP-SGD's noise multiplier with the centring release and without it."""
    alone = {row["epsilon"]: row["noise_multiplier_pld"]
             for row in results["accounting"]["calibrated"]}
    header = ["epsilon", "noise multiplier, DP-SGD alone",
              "noise multiplier, with DP centring (the fits)", "increase"]
    rows = []
    for row in results["accuracy"]:
        eps = float(row["epsilon"])
        if math.isinf(eps) or eps not in alone:
            continue
        z, z0 = row["noise_multiplier"], alone[eps]
        rows.append([_eps(eps), f"{z0:.4f}", f"{z:.4f}", f"{100 * (z / z0 - 1):+.2f} %"])
    return header, rows


def run(results):
    """Either file: when, where and with what the benchmark ran."""
    run = results["run"]
    versions = ", ".join(f"{k} {v}" for k, v in run["versions"].items() if v)
    seeds = results["settings"].get("seeds", [results["settings"].get("model", {}).get(
        "random_state")])
    rows = [
        ["date (UTC)", run["date"].replace("+00:00", "").replace(" UTC", "").replace("T", " ")],
        ["run time", f"{run['seconds'] / 60:.1f} min"],
        ["seeds", ", ".join(str(s) for s in seeds)],
        ["machine", f"{run['machine']['cpus']} CPUs, {run['machine']['platform']}"],
        ["versions", versions],
    ]
    return ["", ""], rows


def dpebm_comparison(results):
    """llc_vs_dpebm.json: fit time, accuracy and AUROC of LLC and DP-EBM at epsilon 1."""
    header = ["model", "input", "fit (s)", "fit CPU (s)", "fit time / fastest DP-EBM's",
              "test accuracy", "test AUROC"]
    rows = []
    for row in results["rows"]:
        if "not_run" in row:
            rows.append([row["model"], "--", "--", "--", "--", f"not run: {row['not_run']}",
                         "--"])
            continue
        settings = row["settings"]
        epochs = settings.get("epochs")
        model, _, what = row["model"].partition(", ")  # "DP-EBM, raw features, nominal"
        if epochs is not None:
            model, what = "DPLocallyLinearClassifier", f"encoded rows, {epochs} epochs"
        ratio = row.get("fit_seconds_over_dpebm")
        runs = row["runs"]
        rows.append([model, what,
                     f"{row['fit_seconds_median']:.2f}", f"{row['fit_cpu_seconds_median']:.2f}",
                     "--" if ratio is None else f"{ratio:.2f}",
                     f"{100 * row['accuracy_median']:.2f} % "
                     f"({100 * min(r['accuracy'] for r in runs):.2f}-"
                     f"{100 * max(r['accuracy'] for r in runs):.2f})",
                     f"{row['auroc_median']:.4f} ({min(r['auroc'] for r in runs):.4f}-"
                     f"{max(r['auroc'] for r in runs):.4f})"])
    return header, rows
