"""What a saved benchmark result records about its run: date, commit, versions, machine.

One module for every benchmark, so that each results file under
``benchmarks/results/`` says the same things the same way.
"""

import contextlib
import datetime
import os
import platform
import subprocess
import sys
import time
from importlib.metadata import PackageNotFoundError, version

HERE = os.path.dirname(os.path.abspath(__file__))
BASE_PACKAGES = ("skdpx", "numpy", "scipy", "scikit-learn")


def utc_now():
    """The current time, UTC, ISO 8601 to the second."""
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def commit(short=True):
    """The checkout's commit, with "+dirty" if tracked files other than saved results
    (``benchmarks/results/``, which runs write) differ from it (None outside git)."""
    try:
        head = subprocess.run(["git", "rev-parse", *(["--short"] if short else []), "HEAD"],
                              cwd=HERE, text=True, capture_output=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--",
                                ":(top)", ":(top,exclude)benchmarks/results"],
                               cwd=HERE, text=True, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("+dirty" if dirty.strip() else "")


def versions(*packages):
    """Python's version and the installed versions of the base packages and ``packages``
    (None for one that is not installed). A package run from a checkout without being
    installed (skdpx on ``PYTHONPATH``) gives its module's ``__version__``."""
    out = {"python": platform.python_version()}
    for name in (*BASE_PACKAGES, *packages):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            module = sys.modules.get(name.replace("-", "_"))
            if module is None and name == "skdpx":
                import skdpx as module
            out[name] = getattr(module, "__version__", None)
    return out


def machine():
    """The platform, the number of CPUs and the load average now (these machines are shared)."""
    load = [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None
    return {"platform": platform.platform(), "cpus": os.cpu_count(), "load_average_at_start": load}


def command():
    """The command line that ran this benchmark, from the repository's root."""
    return " ".join(["python", os.path.join("benchmarks", os.path.basename(sys.argv[0])),
                     *sys.argv[1:]])


def start():
    """The date (UTC), the commit and the machine's load when a run starts."""
    return {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "commit": commit(), "load_average_at_start": machine()["load_average_at_start"]}


def run_info(started, seconds, packages=("lime",)):
    """``started`` (from :func:`start`), the runtime, the versions of what ran, and the machine."""
    info = machine()
    return {**started, "seconds": round(seconds, 1), "versions": versions(*packages),
            "machine": {"cpus": info["cpus"], "platform": info["platform"]},
            "command": command()}


def save(path, results, default=None):
    """Write ``results`` as indented JSON at ``path`` (its folder made if needed);
    ``default`` as in :func:`json.dump` (``str`` for values JSON has no type for)."""
    import json

    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as handle:
        json.dump(results, handle, indent=2, default=default)
        handle.write("\n")


@contextlib.contextmanager
def timed_methods(cls, names, clock=time.perf_counter):
    """Add up the time spent in the methods ``names`` of ``cls`` while in the block.

    Yields a dict of seconds by method name (``clock``: ``time.perf_counter``
    for wall time, ``time.process_time`` for this process's CPU); the methods
    are restored on leaving.
    """
    totals = dict.fromkeys(names, 0.0)
    originals = {name: cls.__dict__[name] for name in names}

    def timing(name, method):
        def timed(*args, **kwargs):
            start = clock()
            try:
                return method(*args, **kwargs)
            finally:
                totals[name] += clock() - start
        return timed

    for name, method in originals.items():
        setattr(cls, name, timing(name, method))
    try:
        yield totals
    finally:
        for name, method in originals.items():
            setattr(cls, name, method)
