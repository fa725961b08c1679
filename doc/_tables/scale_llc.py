"""Tables of DPLocallyLinearClassifier's full-batch fits on Dask and Spark (doc/scale.rst).

``benchmarks/results/scale_llc.json`` (benchmarks/scale_llc.py): each fit's
time per step (median), the rest of the fit (the passes before the steps),
the driver's peak memory and the held-out accuracy; the crossover against
in memory at each size.
"""

ENGINE = {"memory": "numpy, in memory", "dask": "Dask LocalCluster (2 workers)",
          "spark": "Spark local[2]"}


def _rows(n):
    return f"{n / 1e6:g}M" if n >= 1e6 else f"{n:,}"


def _fits(results, big):
    n = results["settings"]["rows"]
    order = list(ENGINE)
    return sorted((f for f in results["fits"] if (f["rows"] == n) == big),
                  key=lambda f: (f["rows"], f["kind"] != "full batch", order.index(f["engine"])))


def accuracy(results):
    """At the largest size: steps, time per step, rest, total, driver peak, accuracy."""
    header = ["fit", "engine", "partitions", "steps", "seconds per step (median)",
              "rest of the fit (s)", "total (s)", "driver peak (GiB)",
              "driver peak over its start (GiB)", "test accuracy"]
    out = []
    for f in _fits(results, True):
        out.append([f["kind"], ENGINE[f["engine"]], str(f["partitions"]), f"{f['steps']:,}",
                    f"{f['step_median']:.3f}" if f["step_median"] >= 1e-3
                    else f"{f['step_median'] * 1e3:.2f} ms",
                    f"{f['rest_seconds']:.1f}", f"{f['seconds']:.1f}",
                    f"{f['driver_peak_gib']:.2f}", f"{f['driver_added_gib']:.2f}",
                    f"{f['accuracy']:.4f}"])
    return header, out


def steps(results):
    """Time per full-batch step against the number of rows, on each engine."""
    header = ["rows", "engine", "partitions", "seconds per step (median)",
              "rest of the fit (s)", "driver peak over its start (GiB)", "load average"]
    out = []
    for f in sorted((f for f in results["fits"] if f["kind"] == "full batch"),
                    key=lambda f: (f["rows"], list(ENGINE).index(f["engine"]))):
        out.append([_rows(f["rows"]), ENGINE[f["engine"]], str(f["partitions"]),
                    f"{f['step_median']:.3f}", f"{f['rest_seconds']:.1f}",
                    f"{f['driver_added_gib']:.2f}", f"{f['load'][0]:.1f}"])
    return header, out


def crossover(results):
    """Per size and engine: its step over the in-memory step, the extra fixed time, and
    the number of steps from which its fit is faster (never when its step is slower)."""
    header = ["rows", "engine", "step / in-memory step", "extra fixed time (s)",
              "faster from (steps)"]
    out = []
    for c in sorted(results["crossover"], key=lambda c: (c["rows"], c["engine"])):
        s = c["crossover_steps"]
        out.append([_rows(c["rows"]), ENGINE[c["engine"]], f"{c['step_ratio']:.2f}",
                    f"{c['fixed_extra_seconds']:.1f}", "never" if s is None else f"{s:.0f}"])
    return header, out


def run(results):
    """The run: when, which commit, how loaded, how long."""
    r = results["run"]
    header = ["date", "commit", "seconds", "load average (start)", "command"]
    return header, [[r["date"], r["commit"], f"{r['seconds']:.0f}",
                     ", ".join(f"{x:.1f}" for x in r["load_average_at_start"]), r["command"]]]
