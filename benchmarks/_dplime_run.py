"""What a saved DPLime benchmark result records about its run: date, versions, machine."""

import datetime
import os
import platform
import sys


def _commit():
    """The checkout's commit, with "+dirty" if files differ from it (None outside git)."""
    import subprocess

    here = os.path.dirname(os.path.abspath(__file__))
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=here, text=True,
                              capture_output=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=here, text=True, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("+dirty" if dirty.strip() else "")


def start():
    """The date (UTC), the commit and the machine's load when a run starts."""
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": _commit(),
        "load_average_at_start": ([round(x, 2) for x in os.getloadavg()]
                                  if hasattr(os, "getloadavg") else None),
    }


def run_info(started, seconds):
    """``started`` (from :func:`start`), the runtime, the versions of what ran, and the machine."""
    from importlib.metadata import PackageNotFoundError, version

    import numpy
    import sklearn

    versions = {"python": platform.python_version(), "numpy": numpy.__version__,
                "scikit-learn": sklearn.__version__}
    for name in ("skdpx", "scipy", "lime"):
        try:
            versions[name] = version(name)
        except PackageNotFoundError:
            versions[name] = None
    return {
        **started,
        "seconds": round(seconds, 1),
        "versions": versions,
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
        "command": " ".join(["python", os.path.join("benchmarks", os.path.basename(sys.argv[0])),
                             *sys.argv[1:]]),
    }
