"""Model extraction and attribute inference against counterfactuals and recourse (issue 21).

What an attacker gets from DPCounterfactualGenerator (DPC) and PrivRecourse at
epsilon in {0.1, 0.5, 1, 4, inf} (inf: the same code without noise), next to
DiCE "random" (not private, the ``bench`` extra), on Adult and on the hospital
data (Diabetes 130-US, ``_hospital.py``).

Protocol (dpc_extraction.py's, with the rows made disjoint throughout). The
rows of each dataset are shuffled (seed 0) and cut into disjoint parts:

* the black box f (MLPClassifier, 64 tanh units, ``_dpc_bench.black_box``)
  is trained on its own rows;
* the explainers are fitted on other rows, their private data (DPC's and
  PrivRecourse's guarantee covers rows the black box does not depend on);
  DiCE gets them as its training data (it reads only their ranges);
* the attacker's pool, the test rows (fidelity) and the non-members of the
  attribute attack are three more disjoint parts.

Extraction (:func:`skdpx.attacks.model_extraction`): the surrogate (the
default: standardisation + MLPClassifier, 64 ReLU units, L-BFGS) is trained on n
queries from the pool labelled by f ("queries"), plus their counterfactuals
("counterfactuals", Aivodji et al. 2020), plus the counterfactuals of those
towards the query's class ("dualcf", Wang et al. 2022), or on n uniform
points in the public bounds ("random"). Fidelity = agreement with f on the
test rows. The queries are the same for every method (nested: the first 50
of the 100 ...). PrivRecourse only leads to the favourable class, so its
DualCF adds nothing and equals "counterfactuals"; queries it already grants
add no point.

Attribute inference (:func:`skdpx.attacks.attribute_inference`, Yeom et al.
2018, paper 003 Fig. 6): Adult's ``sex`` (2 levels) and the hospital data's
``race`` (5 levels and the all-zero "missing", 6 candidates). Members: the
explainer's private rows; non-members: rows nobody was fitted on. Signals:

* "cf distance": the L2 distance (public unit scale) from the completed row
  to its counterfactual, larger = member (Pawelczyk et al. 2023; for DPC on
  fewer rows: its search costs ~45 s per call on Adult); for
  PrivRecourse also "node distance" (to the nearest released cluster centre,
  nearer = member). DiCE is left out: it uses its rows for the feature ranges
  only, and costs ~0.4 s per row and candidate;
* "surrogate loss": the loss of the DualCF surrogate at the largest n (the
  attack through f' of paper 003), members = the explainer's rows;
* references: the loss of f itself with members = f's own training rows (what
  the black box leaks, which no explainer setting covers), the surrogate
  against f's rows, and a fully grown decision tree on f's rows (a model that
  memorises them: does the attack work on these data at all?).
The advantage is accuracy on members minus accuracy on non-members; the
majority-value baseline is printed next to it.

Row counts (full / --quick): f 3,000 / 1,000 rows; explainers' private rows
3,000 / 1,000; pool 400 / 100; test 2,000 / 500; attribute rows per side
(DPC cf distance) 150 Adult, 60 hospital / 40; (the others) 1,000 / 300. n_queries
50, 100, 200, 400 / 25, 50, 100 (DiCE: 50, 100 / 25). One surrogate seed per
cell, one explainer seed.

Run: python benchmarks/attacks_inference.py [--quick] [--no-dice] [--tables]
    [--datasets adult hospital]
Writes results/attacks_inference.json (--quick: attacks_inference_quick.json),
with ``_run_record``'s commit, date, versions, machine and command.

Measured runtime (shared 2-core machine, load ~3): full 864 s (14.4 min; DPC's
counterfactual search ~60 s per epsilon on Adult, DiCE ~0.5 s per
counterfactual, the black boxes ~50-90 s), --quick 234 s (3.9 min). The
results are deterministic (two full runs gave the same figures).

What the figures say (results/attacks_inference.json):

* Extraction: counterfactuals do not help the attacker on Adult (at 50
  queries: queries only 0.846, DPC 0.74-0.85, DiCE 0.77) and help a little on
  the hospital data (DualCF at 400 queries 0.95-0.975 against 0.936 for
  queries only), with no trend in epsilon: the noise of DPC does not protect
  the black box, nor is it meant to (its guarantee covers its private rows,
  which f does not depend on; f itself answers the queries). PrivRecourse
  found no recourse at all on Adult at epsilon <= 4 (104 columns, 3,000 rows:
  1 to 10 DP centres survive, none of them in the favourable class, which f
  gives 18 % of the rows; 72 centres and 9 candidates at epsilon = inf), so
  it released nothing to extract from.
* Attribute inference: no setting leaks measurably. Every advantage of the
  explainers' signals is within about two standard errors of 0, except the
  non-private k-means of PrivRecourse on Adult (node distance, epsilon =
  inf: +0.058 +- 0.018), whose advantage falls with epsilon (4: +0.027, 1:
  -0.013, 0.5: +0.003, 0.1: -0.016). The attack itself has power where the
  model memorises the attribute: a fully grown tree on the hospital data
  gives +0.198 +- 0.020 (race); on Adult it does not (+0.009: sex barely
  enters the tree's splits).
"""

import argparse
import json
import math
import os
import time
import warnings
from types import SimpleNamespace

import numpy as np
from sklearn.tree import DecisionTreeClassifier

from _dpc_bench import black_box
from _run_record import run_info, save, start as record_start
from skdpx.attacks import attribute_inference, model_extraction
from skdpx.counterfactual import DPCounterfactualGenerator
from skdpx.recourse import PrivRecourse

RESULTS = os.path.join(os.path.dirname(__file__), "results")
EPSILONS = (0.1, 0.5, 1.0, 4.0, np.inf)
FULL = dict(n_box=3000, n_private=3000, n_pool=400, n_test=2000, n_loss=1000,
            n_cf={"adult": 150, "hospital": 60}, sizes=(50, 100, 200, 400), dice_sizes=(50, 100),
            epsilons=EPSILONS)
QUICK = dict(n_box=1000, n_private=1000, n_pool=100, n_test=500, n_loss=300,
             n_cf={"adult": 40, "hospital": 40}, sizes=(25, 50, 100), dice_sizes=(25,),
             epsilons=(1.0, np.inf))


def load(name):
    """All rows (X, y), the public bounds, the sensitive block (columns) and its name."""
    if name == "adult":
        from skdpx.datasets import encode_adult, load_adult

        train, test = load_adult(subset="train"), load_adult(subset="test")
        enc, enc_test = encode_adult(train.data), encode_adult(test.data)
        X = np.vstack([enc.data, enc_test.data])
        y = np.concatenate([train.target, test.target])
        names, bounds, sensitive = enc.feature_names, enc.bounds, "sex"
    else:
        from _hospital import load_hospital

        data = load_hospital()
        X = np.vstack([data.data, data.data_test])
        y = np.concatenate([data.target, data.target_test])
        names, bounds, sensitive = data.feature_names, data.bounds, "race"
    block = [j for j, n in enumerate(names) if n.startswith(sensitive + "=")]
    return X, y, bounds, block, sensitive


class DiceExplainer:
    """DiCE "random" behind the explain() interface model_extraction reads."""

    def __init__(self, model, X_train):
        self.model, self.X_train = model, X_train
        self.seconds = []

    def explain(self, X, desired_class=None):
        from _dice import dice_random

        X = np.asarray(X, dtype=float)
        if desired_class is None:
            cf, s = dice_random(self.model, self.X_train, self.model.predict(self.X_train), X,
                                "opposite", random_state=0)
            self.seconds.append((s, len(X)))
            return SimpleNamespace(counterfactuals=cf)
        desired = np.broadcast_to(np.asarray(desired_class), (len(X),))
        cf = np.full(X.shape, np.nan)
        for c in np.unique(desired):
            rows = np.flatnonzero(desired == c)
            cf[rows], s = dice_random(self.model, self.X_train, self.model.predict(self.X_train),
                                      X[rows], int(c), random_state=0)
            self.seconds.append((s, len(rows)))
        return SimpleNamespace(counterfactuals=cf)


def attribute(target, members, non_members, block, signal):
    """The attack's summary; a loss is combined with the public marginal (prior=True)."""
    (Xm, ym), (Xn, yn) = members, non_members
    res = attribute_inference(target, Xm, ym, Xn, yn, feature=block, signal=signal,
                              prior=signal == "loss")
    return res.summary()


def run_dataset(name, cfg, dice, log):
    t0 = time.perf_counter()
    X, y, bounds, block, sensitive = load(name)
    order = np.random.RandomState(0).permutation(len(X))
    cuts = np.cumsum([cfg["n_box"], cfg["n_private"], cfg["n_pool"], cfg["n_test"],
                      max(cfg["n_loss"], cfg["n_cf"][name])])
    box_i, priv_i, pool_i, test_i, non_i = np.split(order[:cuts[-1]], cuts[:-1])
    X_box, y_box, X_priv, y_priv = X[box_i], y[box_i], X[priv_i], y[priv_i]
    pool, X_test, y_test = X[pool_i], X[test_i], y[test_i]
    X_non, y_non = X[non_i], y[non_i]
    f = black_box(X_box, y_box)
    acc = f.score(X_test, y_test)
    log(f"\n=== {name}: {len(X):,} rows, {X.shape[1]} columns; f: {len(X_box):,} rows, test "
        f"accuracy {acc:.3f}; private rows {len(X_priv):,}; pool {len(pool):,}; test "
        f"{len(X_test):,}; sensitive: {sensitive} ({len(block)} one-hot columns)")
    sizes, n_loss, n_cf = cfg["sizes"], cfg["n_loss"], cfg["n_cf"][name]
    common = dict(y_test=y_test, n_queries=sizes, random_state=0)
    out = {"rows": {"black_box": len(X_box), "private": len(X_priv), "pool": len(pool),
                    "test": len(X_test), "attribute_loss": n_loss, "attribute_cf": n_cf},
           "black_box_test_accuracy": acc, "sensitive": sensitive, "sensitive_columns": block,
           "extraction": [], "attribute": []}

    def extraction(label, eps, res):
        for r in res.records:
            out["extraction"].append({"method": label, "epsilon": eps, **r})

    def attack(label, eps, signal_name, summary):
        out["attribute"].append({**summary, "method": label, "epsilon": eps,
                                 "attack": signal_name})

    loss_m, loss_n = (X_priv[:n_loss], y_priv[:n_loss]), (X_non[:n_loss], y_non[:n_loss])
    cf_m, cf_n = (X_priv[:n_cf], y_priv[:n_cf]), (X_non[:n_cf], y_non[:n_cf])
    base = model_extraction(None, f, pool, X_test, strategies=("queries", "random"),
                            bounds=bounds, return_surrogates=True, **common)
    extraction("baseline", None, base)
    attack("f (reference)", None, "loss, members = f's rows",
           attribute(f, (X_box[:n_loss], y_box[:n_loss]), loss_n, block, "loss"))
    # does the attack work on these data at all? A model that memorises its rows
    tree = DecisionTreeClassifier(random_state=0).fit(X_box, y_box)
    attack("tree (reference)", None, "loss, members = its rows",
           attribute(tree, (X_box[:n_loss], y_box[:n_loss]), loss_n, block, "loss"))
    attack("baseline", None, "queries surrogate loss",
           attribute(base.surrogate("queries"), loss_m, loss_n, block, "loss"))
    log(f"baselines done ({time.perf_counter() - t0:.0f} s)")

    for method in ("DPC", "PrivRecourse"):
        for eps in cfg["epsilons"]:
            t1 = time.perf_counter()
            Est = DPCounterfactualGenerator if method == "DPC" else PrivRecourse
            explainer = Est(f, epsilon=eps, bounds=bounds, random_state=0).fit(X_priv)
            res = model_extraction(explainer, f, pool, X_test,
                                   strategies=("counterfactuals", "dualcf"),
                                   return_surrogates=True, **common)
            extraction(method, eps, res)
            surrogate = res.surrogate("dualcf")
            attack(method, eps, "surrogate loss", attribute(surrogate, loss_m, loss_n, block,
                                                            "loss"))
            attack(method, eps, "surrogate loss, members = f's rows",
                   attribute(surrogate, (X_box[:n_loss], y_box[:n_loss]), loss_n, block,
                             "loss"))
            # DPC's search is the slow part (~45 s per call on Adult): fewer rows for it
            rows = (cf_m, cf_n) if method == "DPC" else (loss_m, loss_n)
            attack(method, eps, "cf distance",
                   attribute(explainer, *rows, block, "counterfactual_distance"))
            if method == "PrivRecourse":
                attack(method, eps, "node distance",
                       attribute(explainer, loss_m, loss_n, block, "recourse_distance"))
            log(f"{method} eps={eps:g}: {time.perf_counter() - t1:.0f} s")
    if dice:
        t1 = time.perf_counter()
        explainer = DiceExplainer(f, X_priv)
        res = model_extraction(explainer, f, pool, X_test, y_test=y_test,
                               n_queries=cfg["dice_sizes"], strategies=("counterfactuals",
                                                                        "dualcf"),
                               return_surrogates=True, random_state=0)
        extraction("DiCE random", None, res)
        attack("DiCE random", None, "surrogate loss",
               attribute(res.surrogate("dualcf"), loss_m, loss_n, block, "loss"))
        seconds = sum(s * n for s, n in explainer.seconds) / sum(n for _, n in explainer.seconds)
        out["dice_seconds_per_counterfactual"] = seconds
        log(f"DiCE: {time.perf_counter() - t1:.0f} s ({seconds:.2f} s per counterfactual)")
    out["seconds"] = time.perf_counter() - t0
    return out


def _eps(e):
    return "" if e is None else ("inf" if np.isinf(e) else f"{e:g}")


def tables(name, out, log):
    rows = out["extraction"]
    sizes = sorted({r["n_queries"] for r in rows})
    log(f"\n{name}: surrogate fidelity to f on {out['rows']['test']:,} test rows "
        f"(rows the surrogate was trained on in brackets), by number of queries; cf found: "
        f"share of the queries that brought a new counterfactual point")
    log(f"{'method':<17}{'eps':>5}  {'strategy':<16}" + "".join(f"{n:>14}" for n in sizes)
        + f"{'cf found':>10}")
    keys = list(dict.fromkeys((r["method"], r["epsilon"], r["strategy"]) for r in rows))
    for method, eps, strategy in keys:
        cells = {r["n_queries"]: r for r in rows
                 if (r["method"], r["epsilon"], r["strategy"]) == (method, eps, strategy)}
        line = "".join(f"{cells[n]['fidelity']:>7.3f} ({cells[n]['n_train']:>4})" if n in cells
                       else f"{'':>14}" for n in sizes)
        last = cells[max(cells)]
        found = ((last["n_train"] - last["n_queries"]) / last["n_queries"]
                 if strategy == "counterfactuals" else math.nan)
        log(f"{method:<17}{_eps(eps):>5}  {strategy:<16}{line}{found:>10.2f}")
    log(f"\n{name}: attribute inference of {out['sensitive']} (accuracy on members / "
        f"non-members, advantage = their difference and its standard error, majority "
        f"baseline on members / non-members)")
    log(f"{'method':<17}{'eps':>5}  {'signal':<36}{'rows':>6}{'members':>9}{'non-mem':>9}"
        f"{'adv':>8}{'(se)':>7}{'base m':>8}{'base n':>8}")
    for r in out["attribute"]:
        a, b = r["accuracy_members"], r["accuracy_non_members"]
        se = math.sqrt(a * (1 - a) / r["n_members"] + b * (1 - b) / r["n_non_members"])
        log(f"{r['method']:<17}{_eps(r['epsilon']):>5}  {r['attack']:<36}{r['n_members']:>6}"
            f"{a:>9.3f}{b:>9.3f}{r['advantage']:>+8.3f}{se:>7.3f}"
            f"{r['baseline_members']:>8.3f}{r['baseline_non_members']:>8.3f}")


def _jsonable(obj):
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not np.isfinite(obj):
        return None if np.isnan(obj) else "Infinity"
    return obj


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rows, epsilon 1 and inf")
    parser.add_argument("--no-dice", action="store_true")
    parser.add_argument("--datasets", nargs="+", default=["adult", "hospital"],
                        choices=["adult", "hospital"])
    parser.add_argument("--tables", action="store_true",
                        help="print the tables of the saved results, run nothing")
    args = parser.parse_args(argv)
    cfg = QUICK if args.quick else FULL
    path = os.path.join(RESULTS, "attacks_inference_quick.json" if args.quick
                        else "attacks_inference.json")
    if args.tables:
        with open(path, encoding="utf-8") as fh:
            saved = json.load(fh)
        lines = []
        for name, out in saved["datasets"].items():
            for r in out["extraction"] + out["attribute"]:
                r["epsilon"] = math.inf if r["epsilon"] == "Infinity" else r["epsilon"]
            tables(name, out, lines.append)
        print("\n".join(lines))
        print(f"\nmeasured runtime: {saved['seconds']:.0f} s")
        return
    warnings.simplefilter("ignore")
    started, start = record_start(), time.perf_counter()
    results = {"config": {k: v for k, v in cfg.items()}, "datasets": {}}

    def log(line):
        print(line, flush=True)

    for name in args.datasets:
        results["datasets"][name] = run_dataset(name, cfg, not args.no_dice, log)
    for name, out in results["datasets"].items():
        tables(name, out, log)
    results["seconds"] = time.perf_counter() - start
    results["run"] = run_info(started, results["seconds"], packages=("dice-ml",))
    log(f"\ntotal: {results['seconds']:.0f} s")
    save(path, _jsonable(results))
    log(f"saved {path}")


if __name__ == "__main__":
    main()
