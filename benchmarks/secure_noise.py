"""What the secure privacy core costs: a DPLocallyLinearClassifier fit, side by side.

Three variants of the same fit (MNIST, the paper's model: M = 30 maps,
D' = 300, batch 500, epsilon 2; ``--epochs`` epochs on ``--rows`` rows),
interleaved in one run, each in a fresh subprocess:

* ``before``: the code before the privacy core was made the only door
  (commit 223923f: numpy PCG64 float32 DP-SGD noise, Mersenne Twister
  subsampling and centring noise), from a checkout given with ``--before``
  (``git worktree add /tmp/skdpx-223923f 223923f``); skipped without it;
* ``insecure``: today's code with its noise source's AES-CTR bit generator
  swapped for numpy's PCG64 (isolates the generator's cost);
* ``secure``: today's code as shipped (``random_state=None``: AES-CTR from
  the OS, float64 DP-SGD noise, the centring through OpenDP's exact sampler).

Prints the median fit time of each and the ratios; saves them to
``benchmarks/results/secure_noise.json``.

Run: python benchmarks/secure_noise.py [--before /tmp/skdpx-223923f] [--repeats 3]
MNIST is read from ../shared/data/mnist (or $SKDPX_MNIST_DIR); it is not bundled.
"""

import argparse
import json
import os
from pathlib import Path
import subprocess
import sys
import time

import numpy as np

HERE = Path(__file__).resolve().parent

from _run_record import run_info, save, start  # noqa: E402
ROOT = HERE.parent

_CHILD = r"""
import json, sys, time, warnings
sys.path.insert(0, {bench!r})
import numpy as np
from _mnist import BOUNDS, load_mnist
variant, rows, epochs = {variant!r}, {rows}, {epochs}
if variant == "insecure":
    from skdpx.privacy import _random
    _init = _random.NoiseSource.__init__
    def __init__(self, seed_seq, *, secure):
        _init(self, seed_seq, secure=secure)
        self._gen = np.random.Generator(np.random.PCG64(seed_seq))
    _random.NoiseSource.__init__ = __init__
from skdpx.locally_linear import DPLocallyLinearClassifier
X, y, _, _ = load_mnist()
X, y = X[:rows], y[:rows]
clf = DPLocallyLinearClassifier(epsilon=2.0, delta=1e-5, n_maps=30, projection_dim=300, beta=0.1,
                                batch_size=500, epochs=epochs, learning_rate=1.0,
                                max_grad_norm=1.0, bounds=BOUNDS)
t0 = time.perf_counter()
clf.fit(X, y)
print(json.dumps({{"seconds": time.perf_counter() - t0}}))
"""


def _run(variant, path, rows, epochs):
    env = dict(os.environ, PYTHONPATH=str(path))
    code = _CHILD.format(bench=str(HERE), variant=variant, rows=rows, epochs=epochs)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])["seconds"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, default=None,
                        help="a checkout of commit 223923f (the code before)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rows", type=int, default=60000)
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args(argv)
    started, t_start = start(), time.perf_counter()
    variants = {"insecure": ROOT, "secure": ROOT}
    if args.before is not None:
        variants = {"before": args.before, **variants}
    times = {v: [] for v in variants}
    for r in range(args.repeats):  # interleaved: the machine's load hits all alike
        for variant, path in variants.items():
            times[variant].append(_run(variant, path, args.rows, args.epochs))
            print(f"  repeat {r}: {variant:<9} {times[variant][-1]:7.2f} s", flush=True)
    median = {v: float(np.median(t)) for v, t in times.items()}
    print(f"\nDPLocallyLinearClassifier fit, MNIST {args.rows} rows, {args.epochs} epochs, "
          f"epsilon 2 (median of {args.repeats} interleaved runs)")
    print(f"{'variant':<10} {'fit (s)':>8} {'/ insecure':>11} {'/ before':>9}")
    for v, m in median.items():
        before = f"{m / median['before']:.3f}" if "before" in median else "-"
        print(f"{v:<10} {m:>8.2f} {m / median['insecure']:>11.3f} {before:>9}")
    out = HERE / "results" / "secure_noise.json"
    save(out, {"rows": args.rows, "epochs": args.epochs, "times": times, "median": median,
               "run": run_info(started, time.perf_counter() - t_start, packages=("opendp",))})
    print(f"saved {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
