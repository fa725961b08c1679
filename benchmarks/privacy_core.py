"""Benchmark of the privacy core: how much noise tight accounting saves, and
what DP-SGD's clipping and noise cost per step.

Two parts:

* **noise for a target**: the noise multiplier that ``calibrate_noise``
  finds for a target (epsilon, delta) with privacy loss distributions (PLD,
  the default) and with Renyi DP (RDP), for DP-SGD settings of the papers
  and for 100 composed Gaussians; the per-step noise of 100 Gaussian steps
  under exact composition against the classic Gaussian mechanism (Dwork &
  Roth) at (epsilon / T, delta / T); and the pinned reference (noise
  multiplier 1.3, sample rate 500/60000, 2400 steps, delta 1e-5). Pure
  arithmetic: no data.
* **a DP-SGD step**: the time per step of a softmax regression (random data,
  ``n`` x ``d``, ``k`` classes, batch 500, Poisson-subsampled) through
  ``DPSGD`` with clipping and secure noise, against the same engine at
  ``epsilon=np.inf`` (no clipping, no noise), interleaved, median of
  ``--repeats`` runs of ``--steps`` steps.

Prints both tables and saves them to ``benchmarks/results/privacy_core.json``
with ``_run_record``'s commit, date, runtime, versions, machine and command
(``run``).

Runtime: a few minutes on 2 cores shared with other jobs (the ``run.seconds``
field of the JSON), most of it the DP-SGD step timing. The timings are
ratios measured side by side; their absolute values depend on the machine's
load.

Run: python benchmarks/privacy_core.py [--repeats 3] [--steps 60]
"""

import argparse
import math
from pathlib import Path
import time

import numpy as np

from skdpx.privacy import (
    DPSGD,
    Commitment,
    DenseGradients,
    noise_source,
    calibrate_noise,
    gaussian_epsilon,
)

HERE = Path(__file__).resolve().parent

from _run_record import run_info, save, start as record_start  # noqa: E402


def classic_sigma(epsilon, delta):
    """Dwork & Roth's Gaussian mechanism (valid for epsilon < 1)."""
    return math.sqrt(2 * math.log(1.25 / delta)) / epsilon


def noise_table():
    print("Noise for a target (epsilon, delta): tight PLD vs RDP accounting")
    print(f"{'setting':<44} {'eps':>5} {'PLD z':>8} {'RDP z':>8} {'saved':>6}")
    settings = [
        ("DP-SGD MNIST: q=500/60000, 2400 steps", 0.5, 1e-5, 2400, 500 / 60000),
        ("DP-SGD MNIST: q=500/60000, 2400 steps", 2.0, 1e-5, 2400, 500 / 60000),
        ("DP-SGD Adult: q=256/32561, 20 epochs", 1.0, 1e-5, 2544, 256 / 32561),
        ("Gaussian, 100 compositions (LIME basic)", 1.0, 1e-6, 100, 1.0),
    ]
    rows = []
    for name, eps, delta, steps, q in settings:
        z_pld = calibrate_noise(eps, delta, steps=steps, sample_rate=q)
        z_rdp = calibrate_noise(eps, delta, steps=steps, sample_rate=q, accounting="rdp")
        note = "" if q < 1 else "  (no subsampling: exact under both)"
        print(f"{name:<44} {eps:>5g} {z_pld:>8.3f} {z_rdp:>8.3f} {1 - z_pld / z_rdp:>6.1%}{note}")
        rows.append({"setting": name, "epsilon": eps, "delta": delta, "steps": steps,
                     "sample_rate": q, "z_pld": z_pld, "z_rdp": z_rdp,
                     "saved": 1 - z_pld / z_rdp})
    eps, delta, T = 1.0, 1e-6, 100
    naive = classic_sigma(eps / T, delta / T)
    tight = calibrate_noise(eps, delta, steps=T)
    print(f"\n100 Gaussian steps at (1, 1e-6): per-step sigma {tight:.1f} (exact composition) "
          f"vs {naive:.1f} (classic mechanism at (eps/T, delta/T), basic composition): "
          f"{naive / tight:.1f}x less noise")
    ref = {"noise_multiplier": 1.3, "sample_rate": 500 / 60000, "steps": 2400, "delta": 1e-5}
    ref["epsilon_pld"] = gaussian_epsilon(1.3, 1e-5, steps=2400, sample_rate=500 / 60000)
    ref["epsilon_rdp"] = gaussian_epsilon(1.3, 1e-5, steps=2400, sample_rate=500 / 60000,
                                          accounting="rdp")
    print(f"reference: z=1.3, q=500/60000, 2400 steps, delta=1e-5: "
          f"PLD {ref['epsilon_pld']:.4f}, RDP {ref['epsilon_rdp']:.4f}")
    return {"calibration": rows,
            "composition": {"epsilon": eps, "delta": delta, "steps": T,
                            "z_exact": tight, "sigma_classic_basic": naive,
                            "ratio": naive / tight},
            "reference": ref}


def dpsgd_table(n=60000, d=784, k=10, batch=500, steps=60, repeats=3):
    """Time per step of a softmax regression: DP engine vs non-private, same code."""
    rng = np.random.RandomState(0)
    X = rng.rand(n, d)
    y = rng.randint(k, size=n)
    W = np.zeros((d, k))
    b = np.zeros(k)

    def errors(idx):
        logits = X[idx] @ W + b
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        p[np.arange(len(idx)), y[idx]] -= 1
        return p

    def run(engine):
        t = time.perf_counter()
        for _ in range(steps):
            engine.step(lambda idx: DenseGradients([(X[idx], errors(idx))]))
        return (time.perf_counter() - t) / steps

    times = {"dp": [], "nonprivate": []}
    for r in range(repeats):  # interleaved, side by side
        dp = DPSGD.from_budget(2.0, 1e-5, n_samples=n, batch_size=batch, epochs=1,
                               max_grad_norm=1.0)
        nonp = DPSGD.from_budget(np.inf, 1e-5, n_samples=n, batch_size=batch, epochs=1,
                                 max_grad_norm=1.0)
        for engine in (dp, nonp):  # secure noise; the commitment stands in for a ledger
            engine.bind(noise_source(), Commitment(engine.planned_event(), "benchmark"))
        times["dp"].append(run(dp))
        times["nonprivate"].append(run(nonp))
    dp_t, np_t = np.median(times["dp"]), np.median(times["nonprivate"])
    print(f"\nDP-SGD step, softmax regression n={n}, d={d}, batch {batch} (median of {repeats})")
    print(f"{'engine':<12} {'ms/step':>8}")
    print(f"{'non-private':<12} {1e3 * np_t:>8.2f}")
    print(f"{'DP':<12} {1e3 * dp_t:>8.2f}")
    print(f"ratio DP / non-private: {dp_t / np_t:.2f}")
    return {"n": n, "d": d, "classes": k, "batch_size": batch, "steps": steps,
            "repeats": repeats, "data": "uniform random X, random labels (seed 0)",
            "epsilon": 2.0, "delta": 1e-5, "max_grad_norm": 1.0,
            "seconds_per_step": times,
            "median_ms_per_step": {"dp": 1e3 * dp_t, "nonprivate": 1e3 * np_t},
            "ratio": dp_t / np_t}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=60)
    args = parser.parse_args()
    started, start = record_start(), time.perf_counter()
    out = {"noise": noise_table(), "dpsgd_step": dpsgd_table(steps=args.steps,
                                                             repeats=args.repeats)}
    out["run"] = run_info(started, time.perf_counter() - start, packages=("dp-accounting",))
    print(", ".join(f"{k} {v}" for k, v in out["run"]["versions"].items()))
    path = HERE / "results" / "privacy_core.json"
    save(path, out)
    print(f"{out['run']['seconds']:.0f} s; saved {path}")


if __name__ == "__main__":
    main()
