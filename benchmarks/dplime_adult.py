"""DPLimeExplainer on Adult: quality, budget use and speed (issue 4, in progress).

Black box: RandomForestClassifier(n_estimators=200) on the Adult training
split; explanation dataset: the same training split (32,561 rows, the
private data); queries: test rows. Quality is measured against the exact
non-private optimum of the same loss (skdpx.metrics). Only
strategy="basic" exists so far; the adaptive and enhanced rows will join.

Run: python benchmarks/dplime_adult.py [--queries 500] [--png spending.png]
(lime, for the speed ratio, is in the "bench" extra.)
"""

import argparse
import time
import warnings

import numpy as np
from sklearn.ensemble import RandomForestClassifier

from skdpx.datasets import encode_adult, load_adult
from skdpx.explain import DPLimeExplainer
from skdpx.metrics import explanation_loss, optimal_explanation

DELTA = 1e-6


def top_k_agreement(phi, opt, k=5):
    top = lambda v: set(np.argsort(-np.abs(v))[:k])  # noqa: E731
    return float(np.mean([len(top(a) & top(b)) for a, b in zip(phi, opt)]))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--png", default=None, help="save the privacy-spending curve here")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    train, test = load_adult(subset="train"), load_adult(subset="test")
    enc, enc_test = encode_adult(train.data), encode_adult(test.data)
    X, y, Z_all = enc.data, train.target, enc_test.data
    model = RandomForestClassifier(n_estimators=200, n_jobs=2, random_state=0).fit(X, y)
    labels = 2 * model.predict_proba(X)[:, 1] - 1
    Z = Z_all[: args.queries]
    opt, _ = optimal_explanation(Z, X, labels)

    print(f"a. Quality: {len(Z)} queries, basic, delta={DELTA:g}, against the exact optimum")
    print(f"{'eps/query':>9} {'T':>5} {'mean loss':>10} {'top-5 agree':>12} {'s/1000 q':>9}")
    for eps_q, T in [(0.1, 30), (0.1, 100), (1.0, 100), (1.0, 300)]:
        explainer = DPLimeExplainer(model, epsilon=1e9, delta=DELTA, epsilon_per_query=eps_q,
                                    max_iter=T, bounds=enc.bounds, random_state=0).fit(X)
        t0 = time.perf_counter()
        phi = explainer.transform(Z)
        per_1000 = (time.perf_counter() - t0) / len(Z) * 1000
        loss = explanation_loss(phi, Z, X, labels).mean()
        print(f"{eps_q:>9g} {T:>5d} {loss:>10.5f} {top_k_agreement(phi, opt):>12.2f} "
              f"{per_1000:>9.1f}", flush=True)

    print("\nb. Budget: total epsilon = 1, epsilon_per_query = 0.1, T = 100")
    explainer = DPLimeExplainer(model, epsilon=1.0, delta=DELTA, epsilon_per_query=0.1,
                                max_iter=100, bounds=enc.bounds, random_state=0).fit(X)
    curve = []
    for z in Z:  # one query at a time, as a user would ask them
        explainer.explain(z[None])
        curve.append(explainer.epsilon_spent_)
    phases = np.array(explainer.history_["phase"])
    n_int = int(np.sum(phases == "interactive"))
    print(f"basic: {n_int} queries answered interactively (tight composition; basic "
          f"composition would allow {int(1.0 / 0.1)}), then {len(Z) - n_int} non-interactively;"
          f" epsilon spent {explainer.epsilon_spent_:.4f}")
    if args.png:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(5, 3.5))
        ax.plot(np.arange(1, len(curve) + 1), curve, label="basic")
        ax.set_xlabel("queries answered")
        ax.set_ylabel("cumulative epsilon")
        ax.set_title("DPLimeExplainer on Adult, epsilon_per_query = 0.1")
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.png, dpi=120)
        print(f"saved {args.png}")

    print("\nc. Speed: 1,000 queries (basic, T = 100) against the full training split")
    Z1000 = Z_all[:1000]
    explainer = DPLimeExplainer(model, epsilon=1e9, delta=DELTA, epsilon_per_query=1.0,
                                max_iter=100, bounds=enc.bounds, random_state=0).fit(X)
    t0 = time.perf_counter()
    explainer.transform(Z1000)
    ours = time.perf_counter() - t0
    print(f"DPLimeExplainer: {ours:.1f} s for 1,000 queries (per query: "
          f"{ours / 1000 * 1000:.1f} ms)")
    try:
        from lime.lime_tabular import LimeTabularExplainer
    except ImportError:
        print("lime is not installed (pip install 'skdpx[bench]'): no ratio")
        return
    lime = LimeTabularExplainer(X, mode="classification", discretize_continuous=False,
                                random_state=0)
    n_lime = 20
    t0 = time.perf_counter()
    for z in Z1000[:n_lime]:
        lime.explain_instance(z, model.predict_proba, num_features=5)
    per_lime = (time.perf_counter() - t0) / n_lime
    per_ours = ours / 1000
    print(f"lime LimeTabularExplainer: {per_lime * 1000:.0f} ms per explanation "
          f"({n_lime} measured, same black box)")
    print(f"time per explanation, DPLimeExplainer / lime: {per_ours / per_lime:.3f}")


if __name__ == "__main__":
    main()
