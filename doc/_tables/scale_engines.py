"""Tables of the Spark and Dask benchmark from Parquet (doc/scale.rst).

``benchmarks/results/scale_engines.json`` (benchmarks/scale_engines.py): the
fits on each engine (time, rows per second, the driver's and the other
processes' peak memory), the passes of the partition sweep and the cost
model fitted to them.
"""

ENGINE = {"memory": "numpy, in memory", "dask": "Dask LocalCluster (2 workers)",
          "spark": "Spark local[2]"}
FIT = {"recourse": "PrivRecourse.fit", "lime": "DPLimeExplainer fit + queries"}


def _rows(n):
    return f"{n / 1e6:g}M" if n >= 1e6 else f"{n:,}"


def _gib(value):
    return "-" if value is None else f"{value:.2f}"


def fits(results):
    """Each fit: engine, rows, partitions, seconds, rows/s against in memory, peak memory."""
    q = results["settings"]["queries"]
    memory = {f["fit"]: f for f in results["fits"] if f["engine"] == "memory"}
    header = ["fit", "engine", "rows", "partitions", "seconds", "rows/s",
              "rows/s over in memory", "driver peak (GiB)",
              "workers or JVM peak (GiB)"]
    out = []
    for f in sorted(results["fits"], key=lambda f: (f["fit"], f["rows"],
                                                     list(ENGINE).index(f["engine"]))):
        ref = memory[f["fit"]]["rows_per_second"]
        name = FIT[f["fit"]] + (f" ({q} queries)" if f["fit"] == "lime" else "")
        out.append([name, ENGINE[f["engine"]], _rows(f["rows"]), str(f["partitions"]),
                    f"{f['seconds']:.1f}", f"{f['rows_per_second']:,}",
                    f"{f['rows_per_second'] / ref:.2f}", _gib(f["driver_peak_gib"]),
                    _gib(f["others_peak_gib"])])
    return header, out


def cost_model(results):
    """The fitted cost of a pass and its check at 1, 2 and 4 partitions per core."""
    header = ["engine", "rows", "partitions per core", "measured (s)", "predicted (s)",
              "error"]
    out = []
    for kind, m in results["cost_model"].items():
        for c in m["checks"]:
            err = (c["predicted"] - c["measured"]) / c["measured"]
            out.append([ENGINE[kind], _rows(c["rows"]), f"{c['tasks_per_core']:g}",
                        f"{c['measured']:.2f}", f"{c['predicted']:.2f}", f"{100 * err:+.0f}%"])
    return header, out


def coefficients(results):
    """The cost model's coefficients per engine."""
    header = ["engine", "t0: fixed per pass (s)", "t_task: per task (s)",
              "t_row: per 1M rows per core (s)"]
    out = [[ENGINE[k], f"{m['t0']:.2f}", f"{m['t_task']:.3f}", f"{m['t_row'] * 1e6:.2f}"]
           for k, m in results["cost_model"].items()]
    return header, out


def run(results):
    """The runs: the fits', and the sweep's when it was run again on its own."""
    header = ["part", "date", "commit", "seconds", "load average (start)", "command"]
    out = []
    for part, key in (("fits (and a first sweep)", "run"), ("sweep", "sweep_run")):
        r = results.get(key)
        if r:
            out.append([part, r["date"], r["commit"], f"{r['seconds']:.0f}",
                        ", ".join(f"{x:.1f}" for x in r["load_average_at_start"]),
                        r["command"]])
    return header, out
