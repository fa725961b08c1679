"""Membership inference against skdpx's four estimators and their non-private references (issue 21).

For each method, dataset, target set and epsilon in {0.1, 0.5, 1, 4, inf}: one
training run, attacked with :func:`skdpx.attacks.membership_inference`; the
AUC, the TPR at 1% and at 0.1% FPR, and the empirical epsilon lower bound
(``AttackResult.epsilon_lower_bound(delta)``, 95% confidence) next to the
claimed epsilon.

Targets (two sets, each of ``--candidates`` rows)
    * "average": random rows of the dataset with their labels;
    * "canary": planted outliers (worst case): every numeric column at the
      lower or the upper end of its public range (a coin per column), one
      random level of every one-hot block, a random label.
    Each candidate joins the private rows by an independent fair coin
    (members / non-members), so the epsilon lower bound is valid on one
    training run (Steinke, Nasr & Jagielski 2023). The private rows are
    ``--private`` background rows plus the members.

Data (disjoint pools of a seeded permutation, per dataset)
    the background private rows; the average candidates; ``--model`` rows on
    which the black box (RandomForestClassifier, 100 trees) of DPLimeExplainer,
    DPCounterfactualGenerator, PrivRecourse, lime and FACE is trained (disjoint
    from the private rows: their guarantee needs it); ``--reference`` rows
    for the shadow models (offline LiRA: ``shadow_data``). Adult: the 104
    encoded columns of ``encode_adult`` (public bounds, [0, 1]); hospital: the
    41 columns of ``benchmarks/_hospital.py``.

Methods and signals (higher = more member-like)
    * DPLocallyLinearClassifier (private = its training rows; 4 maps, 50
      epochs, batch 64): ``loss``, ``lira`` (offline LiRA against
      ``--shadows`` shadows) and ``explanation`` (Shokri et al.: minus the
      variance of the local map);
    * DPLimeExplainer (private = the explanation rows; the black box is
      trained on other rows): ``explanation``, ``explanation`` against
      ``--shadows-explainer`` shadows (``explanation+shadows``) and
      ``explanation_probe`` (:func:`skdpx.attacks.explanation_probe` with the
      reference rows' shares: the explanation at the candidate with its
      rarest non-zero feature switched off, read on that feature; a row at
      the query itself adds nothing to DPLimeExplainer's local loss,
      ``x - z = 0``). Every candidate is a
      query twice (at itself and at its probe): ``epsilon_per_query =
      epsilon / (2 candidates)``, and the claimed epsilon is what the
      explainer spent on both;
    * DPCounterfactualGenerator (private = its fit rows):
      ``counterfactual_distance`` (Pawelczyk et al.) and the callable
      ``AE reconstruction`` (:func:`ae_reconstruction`: the released
      autoencoder's reconstruction error, a white-box signal);
    * PrivRecourse (private = its fit rows; the black box is given):
      ``recourse_distance`` to its released centres (``cluster_centers_``)
      and ``recourse_distance@cand`` to the nodes of the paths released for
      the candidates as queries;
    * baselines (not private, epsilon = inf):
      - lime: ``LimeTabularExplainer(training_data=private rows)``
        (``benchmarks/_lime.py``), the reference of DPLimeExplainer, with
        the same three explanation signals;
      - DiCE "random" counterfactuals (``benchmarks/_dice.py``, 300 samples)
        for a random forest trained on the private rows (Pawelczyk et al.'s
        setting: the members are the black box's training rows; DiCE's
        ranges come from the same rows): ``counterfactual_distance``;
      - FACE (``benchmarks/_face.py``): paths through a 10-NN graph over the
        private rows, released verbatim: ``recourse_distance@cand``.
    The epsilon = inf rows of the four estimators are their non-private
    counterparts from the same code. Each setting is one training run with
    its own noise seed; the attacks' shadows and halves use ``--seed``.

Sizes (the defaults): 1,000 background private rows, 200 candidates per
target set (about 100 members), 2,000 black-box rows, 1,000 reference rows,
8 shadows for the classifier, 3 for the explainers, lime with 1,000 samples.
With about 100 non-members, a TPR "at 0.1% FPR" is the TPR at no false
positive (as is the one at 1% when there are more than 100 non-members),
and the epsilon lower bound cannot exceed ``max_epsilon_lower_bound`` (about
2.6 with 200 candidates): a claimed epsilon above it cannot be refuted, so
check (b) counts those settings apart ("not auditable").

Measured runtime (2-core machine shared with other jobs, one BLAS thread):
the full run 10.8 min wall (Adult 5.5, hospital 5.3; lime and DiCE, which
answer one query at a time, take about 45 s and 60 s per target set);
``--quick`` 2.3 min.

Run: python benchmarks/attacks.py [--quick] [--methods llc,dplime,dpc,recourse,lime,dice,face]
     [--datasets adult,hospital] [--candidates 200] [--private 1000] [--seed 0]
     python benchmarks/attacks.py --from-json benchmarks/results/attacks.json  (tables, plot)
Writes benchmarks/results/attacks.json (with ``_run_record``'s commit, date,
versions, machine and command) and benchmarks/results/attacks.png (seed 0);
benchmarks/results/attacks_seed1.json is the same run with ``--seed 1`` (other pools,
canaries, coins and noise), to see how much one run's figures move.
"""

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.ensemble import RandomForestClassifier
from sklearn.utils import Bunch
from threadpoolctl import threadpool_limits

from skdpx import (
    CounterfactualSet,
    DPCounterfactualGenerator,
    DPLimeExplainer,
    DPLocallyLinearClassifier,
    PrivRecourse,
)
from skdpx.attacks import AttackResult, explanation_probe, membership_inference
from skdpx.datasets import encode_adult, load_adult

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _face import FaceRecourse  # noqa: E402
from _run_record import run_info, save, start as record_start  # noqa: E402
from _lime import LimeReference  # noqa: E402

RESULTS = HERE / "results"
EPSILONS = (0.1, 0.5, 1.0, 4.0, np.inf)
DELTA = 1e-5
FPRS = (0.01, 0.001)
ALL_METHODS = ("llc", "dplime", "dpc", "recourse", "lime", "dice", "face")
BASELINES = ("lime", "dice", "face")
#: the non-private reference of each skdpx method (for the report)
REFERENCE = {"dplime": "lime", "dpc": "dice", "recourse": "face", "llc": "llc"}


# ----------------------------------------------------------------------------- data

def load_dataset(name):
    """X in [0, 1] (public bounds), y, numeric columns, one-hot blocks."""
    if name == "adult":
        train = load_adult()
        enc = encode_adult(train.data)
        X, y = enc.data, np.asarray(train.target)
        cols = list(enc.columns.values())
    elif name == "hospital":
        from _hospital import CATEGORIES, NUMERIC_RANGES, load_hospital

        h = load_hospital()
        X, y = h.data, h.target
        n_num = len(NUMERIC_RANGES) + 1  # the counts and age
        cols = [np.array([j]) for j in range(n_num)]
        start = n_num
        for cats in CATEGORIES.values():
            cols.append(np.arange(start, start + len(cats)))
            start += len(cats)
    else:
        raise ValueError(f"unknown dataset {name!r}")
    numeric = np.array([c[0] for c in cols if len(c) == 1])
    blocks = [np.asarray(c) for c in cols if len(c) > 1]
    d = X.shape[1]
    return Bunch(name=name, X=X.astype(float), y=y.astype(int), numeric=numeric, blocks=blocks,
                 bounds=(np.zeros(d), np.ones(d)),
                 onehot=np.concatenate(blocks) if blocks else np.array([], dtype=int))


def make_canaries(data, n, rng):
    """Planted outliers: numeric columns at a corner of the public bounds, a random
    level per one-hot block, a random label."""
    X = np.zeros((n, data.X.shape[1]))
    lower, upper = data.bounds
    corner = rng.randint(2, size=(n, data.numeric.size)).astype(bool)
    X[:, data.numeric] = np.where(corner, upper[data.numeric], lower[data.numeric])
    for block in data.blocks:
        X[np.arange(n), block[rng.randint(block.size, size=n)]] = 1.0
    return X, rng.randint(2, size=n)


def make_setting(data, args, seed=0):
    """Disjoint pools, the black box, and the two target sets (coins drawn here)."""
    rng = np.random.RandomState(seed)
    perm = rng.permutation(len(data.X))
    sizes = [args.private, args.candidates, args.model, args.reference]
    cuts = np.cumsum(sizes)
    if cuts[-1] > len(perm):
        raise ValueError("the dataset is too small for these pool sizes")
    back, cand, model, ref = np.split(perm[:cuts[-1]], cuts[:-1])
    black_box = RandomForestClassifier(n_estimators=100, min_samples_leaf=2, n_jobs=1,
                                       random_state=seed).fit(data.X[model], data.y[model])
    targets = {}
    Xc, yc = make_canaries(data, args.candidates, rng)
    for kind, (Xt, yt) in {"average": (data.X[cand], data.y[cand]), "canary": (Xc, yc)}.items():
        member = rng.rand(len(Xt)) < 0.5
        targets[kind] = Bunch(
            X_in=Xt[member], y_in=yt[member], X_out=Xt[~member], y_out=yt[~member],
            X_private=np.vstack([data.X[back], Xt[member]]),
            y_private=np.concatenate([data.y[back], yt[member]]),
            X_candidates=Xt)
    return Bunch(black_box=black_box, targets=targets, X_ref=data.X[ref], y_ref=data.y[ref],
                 X_test=data.X[perm[cuts[-1]:cuts[-1] + 2000]],
                 y_test=data.y[perm[cuts[-1]:cuts[-1] + 2000]])


# ----------------------------------------------------------------------------- DiCE reference

class DiceReference(BaseEstimator):
    """A black box trained on the private rows, explained by DiCE's "random" method.

    Pawelczyk et al.'s setting: the members are the black box's training rows,
    and DiCE's data (its permitted ranges) are the same rows. ``fit`` trains a
    clone of ``estimator`` (unfitted) on (X, y); ``explain`` returns a
    :class:`skdpx.CounterfactualSet` of the opposite class (a NaN row where DiCE
    finds none).
    """

    def __init__(self, estimator=None, sample_size=300, random_state=0):
        self.estimator = estimator
        self.sample_size = sample_size
        self.random_state = random_state

    def fit(self, X, y):
        X, y = np.asarray(X, dtype=float), np.asarray(y)
        self.model_ = clone(self.estimator).fit(X, y)
        self.X_, self.y_ = X, y
        return self

    def explain(self, X):
        from _dice import dice_random

        Q = np.atleast_2d(np.asarray(X, dtype=float))
        cf, _ = dice_random(self.model_, self.X_, self.y_, Q, "opposite",
                            random_state=self.random_state, sample_size=self.sample_size)
        pred = self.model_.predict(Q)
        desired = self.model_.classes_[1 - np.searchsorted(self.model_.classes_, pred)]
        found = np.all(np.isfinite(cf), axis=1)
        valid = np.zeros(len(Q), dtype=bool)
        if found.any():
            valid[found] = self.model_.predict(cf[found]) == desired[found]
        return CounterfactualSet(Q, cf, desired_class=desired, predicted_class=pred, valid=valid,
                                 distance=np.linalg.norm(cf - Q, axis=1), epsilon_spent=np.inf,
                                 delta_spent=0.0, meta={"method": "DiCE random"})


# ----------------------------------------------------------------------------- methods

def llc(eps, seed, args):
    return DPLocallyLinearClassifier(epsilon=eps, delta=DELTA, classes=[0, 1], n_maps=4,
                                     batch_size=64, epochs=args.llc_epochs, random_state=seed)


def ae_reconstruction(target, X, y):
    """A white-box signal for DPCounterfactualGenerator (callable): minus the released
    autoencoder's reconstruction error of the row, in the autoencoder's [-1, 1] scale
    of the public bounds (the fitted generator is the DP release)."""
    lower, upper = (np.asarray(b, dtype=float) for b in target.bounds_)
    span = np.where(upper > lower, upper - lower, 1.0)
    Xs = 2.0 * (np.asarray(X, dtype=float) - lower) / span - 1.0
    ae = target.autoencoder_
    return -np.linalg.norm(ae.decode(ae.encode(Xs)) - Xs, axis=1)


def run_method(method, eps, data, setting, kind, args, seed=0, attack_seed=0):
    """Fit one target on the private rows; return [(signal label, AttackResult, claimed eps)].

    ``seed`` seeds the target's own noise (one independent draw per setting),
    ``attack_seed`` the attack's shadows and halves.
    """
    t = setting.targets[kind]
    bounds = data.bounds
    sets = (t.X_in, t.y_in, t.X_out, t.y_out)
    shadows = (setting.X_ref, setting.y_ref)
    probe = explanation_probe(setting.X_ref)  # the population's shares of non-zero values
    mi = lambda target, signal, **kw: membership_inference(  # noqa: E731
        target, *sets, signal=signal, random_state=attack_seed, **kw)
    out = []
    if method == "llc":
        target = llc(eps, seed, args).set_params(bounds=bounds).fit(t.X_private, t.y_private)
        claimed = target.epsilon_spent_
        out.append(("loss", mi(target, "loss"), claimed))
        out.append(("lira", mi(target, "lira", shadow_data=shadows, n_shadows=args.shadows),
                    claimed))
        out.append(("explanation", mi(target, "explanation"), claimed))
    elif method in ("dplime", "lime"):
        if method == "dplime":
            # every candidate is a query (twice: the probe's neighbours as well)
            target = DPLimeExplainer(setting.black_box, epsilon=eps, delta=DELTA,
                                     epsilon_per_query=eps / (2 * args.candidates), bounds=bounds,
                                     on_budget_exhausted="raise", random_state=seed)
        else:
            target = LimeReference(setting.black_box, categorical_features=data.onehot,
                                   num_samples=args.lime_samples, random_state=seed)
        target.fit(t.X_private)
        claimed = eps
        out.append(("explanation", mi(target, "explanation"), claimed))
        out.append(("explanation+shadows", mi(target, "explanation", shadow_data=shadows,
                                              n_shadows=args.shadows_explainer), claimed))
        out.append(("explanation_probe", mi(target, probe), claimed))
        if method == "dplime":  # what the two query sets cost together
            out = [(sig, res, target.epsilon_spent_) for sig, res, _ in out]
    elif method == "dpc":
        target = DPCounterfactualGenerator(setting.black_box, epsilon=eps, delta=DELTA,
                                           bounds=bounds, random_state=seed).fit(t.X_private)
        out.append(("counterfactual_distance", mi(target, "counterfactual_distance"),
                    target.epsilon_spent_))
        out.append(("AE reconstruction", mi(target, ae_reconstruction), target.epsilon_spent_))
    elif method == "recourse":
        target = PrivRecourse(setting.black_box, epsilon=eps, delta=DELTA, bounds=bounds,
                              random_state=seed).fit(t.X_private, t.y_private)
        out.append(("recourse_distance", mi(target, "recourse_distance"), target.epsilon_spent_))
        out.append(("recourse_distance@cand", mi(target, "recourse_distance",
                                                 queries=t.X_candidates), target.epsilon_spent_))
    elif method == "dice":
        template = RandomForestClassifier(n_estimators=100, n_jobs=1, random_state=seed)
        target = DiceReference(template, random_state=seed).fit(t.X_private, t.y_private)
        out.append(("counterfactual_distance", mi(target, "counterfactual_distance"), np.inf))
    elif method == "face":
        target = FaceRecourse(setting.black_box).fit(t.X_private)
        out.append(("recourse_distance@cand", mi(target, "recourse_distance",
                                                 queries=t.X_candidates), np.inf))
    else:
        raise ValueError(f"unknown method {method!r}")
    return out


def record(dataset, kind, method, eps, signal, result, claimed, seconds):
    lb = result.epsilon_lower_bound(delta=DELTA)
    return {
        "dataset": dataset, "targets": kind, "method": method, "signal": signal,
        "epsilon": None if not np.isfinite(eps) else float(eps),
        "claimed_epsilon": None if not np.isfinite(claimed) else float(claimed),
        "auc": float(result.auc),
        "tpr_at_1%": float(result.tpr_at_fpr(0.01)),
        "tpr_at_0.1%": float(result.tpr_at_fpr(0.001)),
        "epsilon_lower_bound": float(lb),
        "n_members": int(len(result.scores_members)),
        "n_non_members": int(len(result.scores_non_members)),
        "seconds": round(seconds, 2),
    }


# ----------------------------------------------------------------------------- report

def fmt_eps(e):
    return "inf" if e is None else f"{e:g}"


def print_table(rows):
    head = (f"{'dataset':<9} {'targets':<8} {'method':<9} {'signal':<24} {'eps':>5} "
            f"{'AUC':>6} {'TPR@1%':>7} {'TPR@.1%':>7} {'eps_lb':>7} {'claimed':>8} {'s':>6}")
    print(head)
    print("-" * len(head))
    for r in rows:
        claimed = "inf" if r["claimed_epsilon"] is None else f"{r['claimed_epsilon']:.3g}"
        print(f"{r['dataset']:<9} {r['targets']:<8} {r['method']:<9} {r['signal']:<24} "
              f"{fmt_eps(r['epsilon']):>5} {r['auc']:>6.3f} {r['tpr_at_1%']:>7.3f} "
              f"{r['tpr_at_0.1%']:>7.3f} {r['epsilon_lower_bound']:>7.3f} {claimed:>8} "
              f"{r['seconds']:>6.1f}", flush=True)


def best_signals(rows):
    """Per (dataset, targets, method): the signal with the highest AUC at epsilon = inf
    (then the same signal at every epsilon; never chosen per epsilon)."""
    best = {}
    for r in rows:
        key = (r["dataset"], r["targets"], r["method"])
        if r["epsilon"] is None and r["auc"] > best.get(key, (None, -1.0))[1]:
            best[key] = (r["signal"], r["auc"])
    return {key: sig for key, (sig, _) in best.items()}


def pivot(rows, every_signal=False):
    """Lines of a table: per method (its strongest signal at inf, or every signal),
    AUC / TPR@1% / lower bound at each epsilon."""
    cols = [None if not np.isfinite(e) else e for e in EPSILONS]
    lines = [f"{'dataset/targets/method: signal':<50}" + "".join(
        f"{'eps ' + fmt_eps(e):>20}" for e in cols),
        f"{'':<50}" + "".join(f"{'AUC TPR1% eps_lb':>20}" for _ in cols)]
    keys = sorted(best_signals(rows).items()) if not every_signal else sorted(
        {((r["dataset"], r["targets"], r["method"]), r["signal"]) for r in rows})
    for (ds, kind, method), signal in keys:
        cells = {r["epsilon"]: r for r in rows if r["dataset"] == ds and r["targets"] == kind
                 and r["method"] == method and r["signal"] == signal}
        line = f"{ds + '/' + kind + '/' + method + ': ' + signal:<50}"
        for e in cols:
            r = cells.get(e)
            line += (f"{r['auc']:>8.3f}{r['tpr_at_1%']:>6.2f}{r['epsilon_lower_bound']:>6.2f}"
                     if r else f"{'':>20}")
        lines.append(line)
    return lines


def check_targets(rows):
    """Targets (a), (b), (c) of issue 21, as printed lines (per method: its strongest
    signal at epsilon = inf)."""
    lines = []
    best = best_signals(rows)
    by_key = {(r["dataset"], r["targets"], r["method"], r["signal"], r["epsilon"]): r for r in rows}
    # (a) power without privacy: each method at epsilon = inf
    for (ds, kind, method), signal in sorted(best.items()):
        r = by_key[(ds, kind, method, signal, None)]
        ok = r["auc"] >= 0.6 or (kind == "canary" and r["tpr_at_1%"] >= 0.05)
        lines.append(f"(a) {'ok  ' if ok else 'FAIL'} {ds}/{kind}/{method}: {signal}: "
                     f"AUC {r['auc']:.3f}, TPR@1% {r['tpr_at_1%']:.3f}")
    # (b) lower bound below the claimed epsilon for every skdpx setting (every signal);
    # a claim above the largest bound these candidates allow cannot fail the check
    finite = [r for r in rows if r["claimed_epsilon"] is not None]
    ceiling = {(r["n_members"], r["n_non_members"]): AttackResult(
        np.ones(r["n_members"]), np.zeros(r["n_non_members"])).max_epsilon_lower_bound(DELTA)
        for r in finite}
    testable = [r for r in finite
                if r["claimed_epsilon"] < ceiling[(r["n_members"], r["n_non_members"])]]
    bad = [r for r in finite if r["epsilon_lower_bound"] > r["claimed_epsilon"]]
    lines.append(f"(b) lower bound <= claimed epsilon in {len(finite) - len(bad)} of "
                 f"{len(finite)} finite settings; {len(testable)} of them auditable (claimed "
                 f"epsilon below the largest bound the candidates allow, "
                 f"{min(ceiling.values()):.2f}-{max(ceiling.values()):.2f})"
                 + "".join(f"\n    FAIL {r['dataset']}/{r['targets']}/{r['method']}/{r['signal']} "
                           f"eps {r['epsilon']}: {r['epsilon_lower_bound']:.3f}" for r in bad))
    # (c) leakage falls as epsilon falls: AUC at inf against the largest AUC at epsilon <= 1
    for (ds, kind, method), signal in sorted(best.items()):
        if method in BASELINES:
            continue
        aucs = {e: by_key[(ds, kind, method, signal, e)]["auc"] for e in
                (None if not np.isfinite(x) else x for x in EPSILONS)
                if (ds, kind, method, signal, e) in by_key}
        small = [a for e, a in aucs.items() if e is not None and e <= 1]
        if None not in aucs or not small:
            continue
        lines.append(f"(c) {ds}/{kind}/{method}: {signal}: AUC at inf {aucs[None]:.3f}, "
                     f"at epsilon <= 1 at most {max(small):.3f}")
    return lines


def report(rows, table_path=None):
    """Print every setting, the per-method table and the checks; return the checks.

    With ``table_path``, the per-method table and the checks also go to that
    text file (the docs render their tables from the JSON, not from this file).
    """
    print_table(rows)
    print("\nEvery signal against epsilon:\n")
    print("\n".join(pivot(rows, every_signal=True)))
    print("\nPer method, its strongest signal at epsilon = inf, against epsilon:\n")
    table = pivot(rows)
    print("\n".join(table))
    print()
    lines = check_targets(rows)
    print("\n".join(lines))
    if table_path is not None:
        Path(table_path).write_text("\n".join(table + [""] + lines) + "\n")
    return lines


def plot(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = sorted({(r["dataset"], r["targets"]) for r in rows})
    metrics = [("auc", "AUC"), ("tpr_at_1%", "TPR at 1% FPR"),
               ("epsilon_lower_bound", "epsilon lower bound")]
    fig, axes = plt.subplots(len(metrics), len(panels), figsize=(4.2 * len(panels), 9),
                             squeeze=False, sharex=True)
    xs = {e: i for i, e in enumerate(EPSILONS)}
    for col, (ds, kind) in enumerate(panels):
        sub = [r for r in rows if r["dataset"] == ds and r["targets"] == kind]
        # per method, its strongest signal at epsilon = inf (the same signal at every epsilon)
        series = [(m, sig) for (d, k, m), sig in best_signals(rows).items()
                  if d == ds and k == kind]
        for row, (key, label) in enumerate(metrics):
            ax = axes[row, col]
            for method, signal in series:
                pts = [(xs[np.inf if r["epsilon"] is None else r["epsilon"]], r[key])
                       for r in sub if r["method"] == method and r["signal"] == signal]
                pts.sort()
                style = dict(marker="s", linestyle="none", markersize=8) \
                    if method in BASELINES else dict(marker="o")
                ax.plot(*zip(*pts), label=f"{method}: {signal}", **style)
            if key == "epsilon_lower_bound":
                ax.plot(range(len(EPSILONS) - 1), EPSILONS[:-1], "k--", lw=1, label="claimed eps")
            if key == "auc":
                ax.axhline(0.5, color="grey", lw=0.5)
            ax.set_xticks(range(len(EPSILONS)), [fmt_eps(None if not np.isfinite(e) else e)
                                                 for e in EPSILONS])
            if row == 0:
                ax.set_title(f"{ds}, {kind} targets")
                ax.legend(fontsize=6, loc="best")
            if col == 0:
                ax.set_ylabel(label)
            if row == len(metrics) - 1:
                ax.set_xlabel("epsilon (baselines at inf: squares)")
    fig.suptitle("Membership inference: leakage against epsilon (per method, its strongest "
                 "signal at epsilon = inf)")
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


# ----------------------------------------------------------------------------- main

def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="Adult only, small pools (100 candidates), epsilon {1, inf}, "
                             "few shadows")
    parser.add_argument("--methods", default=",".join(ALL_METHODS))
    parser.add_argument("--datasets", default="adult,hospital")
    parser.add_argument("--candidates", type=int, default=200)
    parser.add_argument("--private", type=int, default=1000)
    parser.add_argument("--model", type=int, default=2000)
    parser.add_argument("--reference", type=int, default=1000)
    parser.add_argument("--shadows", type=int, default=8, help="LiRA shadows of the classifier")
    parser.add_argument("--shadows-explainer", type=int, default=3,
                        help="shadows of DPLimeExplainer and lime (their answers are slow)")
    parser.add_argument("--llc-epochs", type=float, default=50)
    parser.add_argument("--lime-samples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(RESULTS / "attacks.json"))
    parser.add_argument("--png", default=str(RESULTS / "attacks.png"))
    parser.add_argument("--table", default=None,
                        help="also write the per-method table and the checks to this text file")
    parser.add_argument("--from-json", metavar="PATH",
                        help="print the tables, redo the checks and redraw the plot of saved "
                             "results (no run)")
    args = parser.parse_args(argv)
    if args.from_json:
        saved = json.loads(Path(args.from_json).read_text())
        saved["checks"] = report(saved["rows"], args.table)  # re-derived from the rows
        save(args.from_json, saved)
        plot(saved["rows"], args.png)
        return
    epsilons = EPSILONS
    if args.quick:
        args.datasets = "adult"
        args.candidates, args.private, args.model, args.reference = 100, 500, 1000, 500
        args.shadows, args.shadows_explainer = 4, 2
        epsilons = (1.0, np.inf)
    methods = [m for m in args.methods.split(",") if m]
    unknown = set(methods) - set(ALL_METHODS)
    if unknown:
        parser.error(f"unknown methods {sorted(unknown)}; choose from {ALL_METHODS}")
    warnings.simplefilter("ignore")  # seeded fits warn (PrivacyLeakWarning): evaluation only
    rows = []
    started, start = record_start(), time.perf_counter()
    for ds in args.datasets.split(","):
        data = load_dataset(ds)
        setting = make_setting(data, args, seed=args.seed)
        print(f"\n{ds}: {data.X.shape[1]} columns; {args.private} background private rows + "
              f"{args.candidates} candidates per target set (fair coins); black box "
              f"(random forest, {args.model} disjoint rows) test accuracy "
              f"{setting.black_box.score(setting.X_test, setting.y_test):.3f}", flush=True)
        for k, kind in enumerate(("average", "canary")):
            t = setting.targets[kind]
            print(f"  {kind}: {len(t.X_in)} members, {len(t.X_out)} non-members", flush=True)
            for method in methods:
                for i, eps in enumerate((np.inf,) if method in BASELINES else epsilons):
                    t0 = time.perf_counter()
                    # an independent noise draw per setting (a shared seed would scale the
                    # same standard normals at every epsilon)
                    fit_seed = 1000 * args.seed + 10 * k + i
                    results = run_method(method, eps, data, setting, kind, args, seed=fit_seed,
                                         attack_seed=args.seed)
                    seconds = time.perf_counter() - t0
                    for signal, result, claimed in results:
                        rows.append(record(ds, kind, method, eps, signal, result, claimed,
                                           seconds / len(results)))
                    for r in rows[-len(results):]:
                        print(f"    {method:<9} {r['signal']:<24} eps {fmt_eps(r['epsilon']):>4}: "
                              f"AUC {r['auc']:.3f}  TPR@1% {r['tpr_at_1%']:.3f}  "
                              f"eps_lb {r['epsilon_lower_bound']:.3f}  ({seconds:.1f} s)",
                              flush=True)
    total = time.perf_counter() - start
    print(f"\nAll settings ({total / 60:.1f} min):\n")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    lines = report(rows, args.table)
    payload = {"config": {k: v for k, v in vars(args).items()
                          if k not in ("out", "png", "table")},
               "delta": DELTA, "epsilons": [fmt_eps(None if not np.isfinite(e) else e)
                                            for e in epsilons],
               "seconds": round(total, 1), "rows": rows, "checks": lines,
               "run": run_info(started, total, packages=("lime", "dice-ml", "matplotlib"))}
    save(args.out, payload)
    plot(rows, args.png)
    print(f"\nwrote {args.out} and {args.png}")


if __name__ == "__main__":
    # one BLAS thread: on a shared machine, threaded BLAS in small batched products
    # (DPLimeExplainer's local loss) ran up to 50 times slower under contention
    with threadpool_limits(limits=1):
        main()
