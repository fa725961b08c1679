"""What a saved DPLime benchmark result records about its run: date, versions, machine."""

import datetime
import os
import platform
import sys


def start():
    """The date (UTC) and the machine's load when a run starts."""
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
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
