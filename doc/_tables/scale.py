"""Tables of the Dask scale benchmark (doc/scale.rst).

``benchmarks/results/scale.json`` (benchmarks/scale.py). Each phase of the
run is saved with its kind (``recourse``, ``lime``, ``pass``, ``persist``,
``round trip``), where it ran (``memory``, ``dask streamed``, ``dask
persisted``), its number of rows, bounds and workers, its median seconds and
the peak RSS of the client and of each worker.
"""

WHERE = {"memory": "numpy, in memory (one process)",
         "dask streamed": "Dask, streamed (generated in the workers on each pass)",
         "dask persisted": "Dask, persisted (held by the workers)"}
ORDER = {"memory": 0, "dask streamed": 1, "dask persisted": 2}


def _gib(value):
    return "-" if value is None else f"{value:.2f}"


def _rows(n):
    return f"{n / 1e6:g}M" if n >= 1e6 else f"{n:,}"


def _workers(phase):
    peaks = phase.get("worker_peak_gib")
    return "-" if not peaks else ", ".join(f"{p:.2f}" for p in peaks)


def _phases(results, kind):
    return [p for p in results["phases"].values() if p["kind"] == kind]


def recourse(results):
    """PrivRecourse.fit: time, per million rows, against in memory, peak memory."""
    memory = {p["bounds"]: p for p in _phases(results, "recourse") if p["where"] == "memory"}
    header = ["data", "rows", "bounds", "workers", "fit (s)", "s per 1M rows",
              f"per row, x in memory ({_rows(results['settings']['memory_rows'])} rows)",
              "client peak (GiB)", "worker peak (GiB)"]
    out = []
    phases = sorted(_phases(results, "recourse"),
                    key=lambda p: (ORDER[p["where"]], p["rows"], -p["n_workers"],
                                   p["bounds"] != "declared"))
    for p in phases:
        ref = memory.get(p["bounds"])
        # per row: this phase's seconds per row over the in-memory fit's
        ratio = "1" if p["where"] == "memory" else (
            "-" if ref is None else
            f"{p['seconds'] / p['rows'] / (ref['seconds'] / ref['rows']):.1f}")
        runs = len(p["seconds_all"])
        out.append([WHERE[p["where"]], _rows(p["rows"]), p["bounds"],
                    str(p["n_workers"] or "-"),
                    f"{p['seconds']:.1f}" + ("" if runs > 1 else " (1 run)"),
                    f"{p['seconds'] / (p['rows'] / 1e6):.2f}", ratio,
                    _gib(p["client_peak_gib"]), _workers(p)])
    return header, out


def lime(results):
    """DPLimeExplainer: fit, explain of the queries, cost per query against m."""
    q = results["settings"]["queries"]
    header = ["data", "m (rows)", "fit (s)", f"explain {q} queries (s)", "ms per query",
              "client peak (GiB)", "worker peak (GiB)"]
    out = []
    for p in sorted(_phases(results, "lime"), key=lambda p: (ORDER[p["where"]], p["rows"])):
        where = ("numpy, in memory (one process)" if p["where"] == "memory" else
                 "Dask (generated in the workers; fit persists the scaled rows there)")
        once = "" if len(p["seconds_all"]) > 1 else " (1 run)"
        out.append([where, _rows(p["rows"]), f"{p['fit_seconds']:.1f}",
                    f"{p['explain_seconds']:.1f}{once}",
                    f"{p['explain_seconds'] / q * 1e3:.0f}",
                    _gib(p["client_peak_gib"]), _workers(p)])
    return header, out


def round_trip(results):
    """One map-reduce round trip on the cluster against one in-memory DP-SGD step."""
    d = results["derived"].get("dpsgd")
    header = ["what", "seconds", "x one DP-SGD step",
              "over MNIST's DP-SGD steps (s)"]
    out = []
    for p in sorted(_phases(results, "pass"), key=lambda p: p["rows"]):
        out.append([f"one streamed pass over {_rows(p['rows'])} rows (generate, count)",
                    f"{p['seconds']:.2f}", "", ""])
    for p in sorted(_phases(results, "persist"), key=lambda p: p["rows"]):
        out.append([f"persist {_rows(p['rows'])} rows (once)", f"{p['seconds']:.2f}", "", ""])
    if d is None:
        return header, out
    step = d["in_memory_seconds_per_step"]
    for key, seconds in d["round_trip_seconds"].items():
        n = int(key.split("=")[1])
        out.append([f"one round trip (partition_sum of a count), {_rows(n)} rows persisted",
                    f"{seconds:.3f}", f"{seconds / step:.1f}",
                    f"{seconds * d['mnist_steps']:.0f}"])
    s = results["dpsgd_step"]
    what = (f"one in-memory DP-SGD step of DPLocallyLinearClassifier ({s['rows']:,} x "
            f"{s['features']}, n_maps={s['n_maps']}, projection_dim={s['projection_dim']}, "
            f"batch {s['batch_size']})")
    out.append([what, f"{step:.3f}", "1",
                f"{step * d['mnist_steps']:.0f}"])
    header[-1] = f"x {d['mnist_steps']:,} steps (s)"
    return header, out


def run(results):
    """The run: when, which commit, how loaded, how long."""
    records = [results["run"], *results.get("part_runs", [])]
    header = ["parts", "date", "commit", "seconds", "load average (start)",
              "load average (end)", "command"]
    out = []
    for r in records:
        out.append([", ".join(r.get("parts", ["all"])), r["date"], r["commit"],
                    f"{r['seconds']:.0f}", ", ".join(f"{x:.1f}" for x in
                                                     r["load_average_at_start"]),
                    ", ".join(f"{x:.1f}" for x in r.get("load_average_at_end", [])),
                    r["command"]])
    return header, out


def client_memory(results):
    """The client's lifetime peak RSS (ru_maxrss) over the Dask phases of each part."""
    header = ["part", "client ru_maxrss over its Dask phases (GiB)",
              "over the whole run, in-memory references included (GiB)"]
    out = [[", ".join(results["run"].get("parts", ["all"])),
            _gib(results.get("client_ru_maxrss_gib_dask_phases")),
            _gib(results.get("client_ru_maxrss_gib_whole_run"))]]
    extra = results.get("parts_client_ru_maxrss", {})
    for label in sorted({k.split(" (")[1][:-1] for k in extra}):
        out.append([label, _gib(extra.get(f"client_ru_maxrss_gib_dask_phases ({label})")),
                    _gib(extra.get(f"client_ru_maxrss_gib_whole_run ({label})"))])
    return header, out
