"""What a private row count costs (issue 35): the four headline benchmarks, before and after.

One driver for any before/after comparison of the headline benchmarks on
two trees: written for issue 35 (below; ``row_count_cost.json``), and used
again for issue 37's check that its refactor left behaviour unchanged
(``--base 9225612 --no-budget --title ... --out
benchmarks/results/refactor_check.json``). ``--title`` is the run's
purpose, saved as its ``description``; ``--no-budget`` leaves out the
DPLime budget side-measurement, which only issue 35's question needs.

Issue 35 made the number of rows private under add-or-remove neighbours:
every fit first releases a DP count of its rows (Laplace, ``COUNT_SHARE`` =
5% of the estimator's epsilon) and plans everything from it. This driver
runs, in one run and with identical settings, the four headline benchmarks
on the code before that change (``--base``: a checkout, default
``/tmp/base``, or a commit, checked out for the run with ``git worktree add
--detach`` and removed afterwards; the issue's "before" is ``4ef86d4``) and
on the code after it (``--after``: default, this checkout), each script in
a subprocess of its own whose working directory and ``PYTHONPATH`` are its
tree (the skdpx it imports is checked and saved), with one BLAS thread,
writing its JSON to a temporary file. It then takes the headline numbers
from each JSON, saves them side by side with the settings to
``benchmarks/results/row_count_cost.json`` (``--out``) through
``_run_record``, and prints a table: before, after, after - before.

REDUCED SETTINGS, not the full benchmarks (defaults; each is an option):

* ``llc_mnist.py --seeds 3 --parts models`` (``llm_mnist.py`` in a tree before
  its rename; the job and its saved results keep the name ``llm_mnist``):
  DPLocallyLinearClassifier's MNIST test accuracy at epsilon 2 and 0.5 (and
  not private), the paper's model (30 maps, projection 300, 20 epochs, batch
  500, delta 1e-5), seeds 0-2 (the full run also has the accounting part, not run here: it does not
  depend on the data).
* ``dplime_adult.py --parts a``: DPLimeExplainer's quality on Adult (mean
  local loss above the exact optimum, top-5 agreement with it) at
  epsilon_per_query 0.1 (T 30, 100) and 1 (T 100, 300, 500), 500 queries, as
  the full run's part a; parts b (the stream) and c (speed) not run. The
  script fixes the explainer's ``random_state=0``; to see the seed noise the
  driver runs the same script again with the explainer's seed set to 1 and
  2 (``--dplime-seeds 3``: the script's ``main`` unchanged, only
  ``DPLimeExplainer``'s ``random_state`` replaced in its module).
  Part a's explainers have a total epsilon of 1e9, so their count is exact
  in effect: what the count costs DPLime is budget, which a second, small
  measurement shows: how many basic answers a total epsilon of 1 pays for
  at epsilon_per_query 0.1 and 0.05 (T 30, as part b; the black box of
  ``dplime_adult.py``), from each tree's own ledger.
* ``recourse_adult.py --queries 100 --seeds 2 --sweep --speed-queries 200``:
  PrivRecourse's success rate and path quality on Adult (epsilon 2), both
  constraint settings, seeds 0 and 1, 100 denied queries per seed (the full
  run: 500 queries, 3 seeds, count thresholds 2 and 10 swept, 10,000 speed
  queries).
* ``dpc_adult.py --no-dice --no-protection --seeds 3 --queries 100``:
  DPCounterfactualGenerator's flip ratio and average distance on Adult at
  epsilon 0.75 and 0.025, both autoencoders, seeds 0-2, 100 queries (the
  full run: 10 seeds, 500 queries, DiCE, the protection tables).

The two trees' runs of one benchmark go side by side (``--jobs 2``). The
scripts are the same file in both trees, except that ``llc_mnist.py``
after the change adds the count's ``n_rows_epsilon_`` to its recomputed
epsilon (its accuracy figures are computed the same way).

Differences: "after - before"; where both sides have two seeds or more,
its standard error ``sqrt(s_b^2 / n_b + s_a^2 / n_a)`` (sample standard
deviations over the seeds) says what seed noise alone would give. The
after tree's noise draws differ from the before tree's even at the same
seed (the count is drawn first), so even an identical mechanism would
differ by about that much.

Run: python benchmarks/row_count_cost.py [--base /tmp/base | --base 4ef86d4]
     [--only llm_mnist dplime_adult recourse_adult dpc_adult] [--jobs 2]
     [--keep] [--merge FILE]
(``--only`` with ``--keep`` reruns some benchmarks and keeps the others of
``--out``; ``--merge FILE`` puts the benchmarks of another run's file in
place of theirs; both refuse results of other skdpx code. The saved file's
``runs`` says which run measured which benchmarks.)
Measured runtime: see the saved file's ``run.seconds`` (about an hour here,
a shared 2-core machine; issue 37's check, ``refactor_check.json``, took
35 minutes in three runs with ``--only`` and ``--keep``, at a load average
of 1 to 3).
"""

import argparse
import concurrent.futures
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _run_record import run_info, save, start  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results" / "row_count_cost.json"
BENCHMARKS = ("llm_mnist", "dplime_adult", "recourse_adult", "dpc_adult")
#: What each benchmark's full run does that this one does not (saved with the results).
FULL_RUN = {
    "llm_mnist": "3 seeds and the accounting part (the defaults; the accounting does not "
                 "depend on the data)",
    "dplime_adult": "parts a, b and c with 500 queries and a stream of 6,000 (the defaults); "
                    "its explainers' random_state is 0 only",
    "recourse_adult": "500 queries, 3 seeds, count thresholds 2 and 10 swept, 10,000 speed "
                      "queries (the defaults; the saved results used 200 queries, 2 seeds)",
    "dpc_adult": "10 seeds, 500 queries, DiCE, the protection tables (the defaults; the "
                 "saved results used 3 seeds, 300 queries, DiCE on 50)",
}

#: Run dplime_adult.py's own main with the explainer's random_state set to argv[1].
DPLIME_SEEDED = """
import sys
sys.path.insert(0, "benchmarks")
import dplime_adult as bench
seed, argv = int(sys.argv[1]), sys.argv[2:]
explainer = bench.DPLimeExplainer
def seeded(*args, **params):
    params["random_state"] = seed
    return explainer(*args, **params)
bench.DPLimeExplainer = seeded
sys.argv = ["benchmarks/dplime_adult.py", *argv]
bench.main(argv)
"""

#: How many basic answers a total epsilon pays for (the black box of dplime_adult.py).
DPLIME_BUDGET = """
import json, sys, warnings
import numpy as np
from sklearn.ensemble import RandomForestClassifier
import skdpx
from skdpx.datasets import encode_adult, load_adult
from skdpx.explain import DPLimeExplainer
warnings.simplefilter("ignore")
out_path, total, T, n_queries = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
epsilons = [float(e) for e in sys.argv[5:]]
train, test = load_adult(subset="train"), load_adult(subset="test")
enc, enc_test = encode_adult(train.data), encode_adult(test.data)
half = len(enc_test.data) // 2
X, Z = enc.data, enc_test.data[:n_queries]
model = RandomForestClassifier(n_estimators=200, n_jobs=1, random_state=0).fit(
    enc_test.data[half:], test.target[half:])
rows = []
for eps_q in epsilons:
    explainer = DPLimeExplainer(model, epsilon=total, delta=1e-6, epsilon_per_query=eps_q,
                                max_iter=T, strategy="basic", bounds=enc.bounds,
                                random_state=0).fit(X)
    explainer.transform(Z)
    phase = np.asarray(explainer.history_["phase"])
    paid = int(np.sum(phase == "interactive"))
    if paid == len(Z):
        raise SystemExit(f"all {len(Z)} queries paid for at {eps_q}: ask more (--budget-queries)")
    rows.append({"epsilon_per_query": eps_q, "T": T, "total_epsilon": total,
                 "queries_asked": int(len(Z)), "paid": paid,
                 "epsilon_spent": float(explainer.epsilon_spent_),
                 "n_rows": float(getattr(explainer, "n_rows_", len(X))),
                 "n_rows_epsilon": float(getattr(explainer, "n_rows_epsilon_", 0.0)),
                 "ledger": [str(label) for label, _ in explainer.ledger_.events]})
    print(rows[-1], flush=True)
with open(out_path, "w") as fh:
    json.dump({"skdpx": skdpx.__file__, "rows": rows}, fh, indent=1)
"""


# --------------------------------------------------------------------- the trees
def git(*args, cwd=ROOT):
    return subprocess.run(["git", *args], cwd=cwd, text=True, capture_output=True,
                          check=True).stdout.strip()


def tree_commit(tree):
    """A tree's commit, "+dirty" if its tracked files differ from it."""
    head = git("rev-parse", "--short", "HEAD", cwd=tree)
    dirty = git("status", "--porcelain", "--untracked-files=no", cwd=tree)
    return head + ("+dirty" if dirty else "")


class Base:
    """The "before" tree: a checkout as it is, or a commit checked out for the run."""

    def __init__(self, spec):
        self.spec, self.worktree = spec, None
        if Path(spec).is_dir():
            self.path = Path(spec).resolve()
        else:
            sha = git("rev-parse", "--verify", f"{spec}^{{commit}}")
            self.worktree = Path(tempfile.mkdtemp(prefix="skdpx-base-"))
            git("worktree", "add", "--detach", str(self.worktree), sha)
            self.path = self.worktree

    def close(self):
        if self.worktree is not None:
            git("worktree", "remove", "--force", str(self.worktree))
            shutil.rmtree(self.worktree, ignore_errors=True)


def environment(tree):
    """The subprocess's environment: its tree first on the path, one BLAS thread, MNIST."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(tree)
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[name] = "1"
    # MNIST is found next to a checkout (../shared/data/mnist); a temporary tree has none
    env.setdefault("SKDPX_MNIST_DIR", str(ROOT.parent / "shared" / "data" / "mnist"))
    return env


def skdpx_file(tree):
    """The skdpx a script in ``tree`` imports (checked to be the tree's own)."""
    out = subprocess.run([sys.executable, "-c", "import skdpx; print(skdpx.__file__)"],
                         cwd=tree, env=environment(tree), text=True, capture_output=True,
                         check=True).stdout.strip()
    if not Path(out).resolve().is_relative_to(Path(tree).resolve()):
        raise RuntimeError(f"{tree}: imports skdpx from {out}, not from the tree")
    return out


# --------------------------------------------------------------------- the runs
def commands(args, tmp, side, tree):
    """The jobs of one tree: (name, argv after the interpreter, JSON it writes)."""
    out = lambda name: str(Path(tmp) / f"{side}_{name}.json")  # noqa: E731
    jobs = []
    if "llm_mnist" in args.only:
        # the job keeps its saved name; the script was benchmarks/llm_mnist.py before the
        # rename to llc_mnist.py (a base tree may predate it)
        script = ("benchmarks/llc_mnist.py" if (Path(tree) / "benchmarks/llc_mnist.py").exists()
                  else "benchmarks/llm_mnist.py")
        jobs.append(("llm_mnist", [script, "--seeds", str(args.mnist_seeds),
                                   "--parts", "models", "--out", out("llm_mnist")],
                     out("llm_mnist")))
    if "dplime_adult" in args.only:
        for seed in range(args.dplime_seeds):
            name = f"dplime_adult_seed{seed}"
            bench = ["--parts", "a", "--queries", str(args.dplime_queries), "--out", out(name)]
            argv = (["benchmarks/dplime_adult.py", *bench] if seed == 0
                    else ["-c", DPLIME_SEEDED, str(seed), *bench])
            jobs.append((name, argv, out(name)))
    if "dplime_adult" in args.only and args.budget:
        jobs.append(("dplime_budget", ["-c", DPLIME_BUDGET, out("dplime_budget"), "1.0", "30",
                                       str(args.budget_queries), "0.1", "0.05"],
                     out("dplime_budget")))
    if "recourse_adult" in args.only:
        jobs.append(("recourse_adult", ["benchmarks/recourse_adult.py",
                                        "--queries", str(args.recourse_queries),
                                        "--seeds", str(args.recourse_seeds), "--sweep",
                                        "--speed-queries", "200", "--out", out("recourse_adult")],
                     out("recourse_adult")))
    if "dpc_adult" in args.only:
        jobs.append(("dpc_adult", ["benchmarks/dpc_adult.py", "--no-dice", "--no-protection",
                                   "--seeds", str(args.dpc_seeds),
                                   "--queries", str(args.dpc_queries), "--out", out("dpc_adult")],
                     out("dpc_adult")))
    return jobs


def run_job(tree, side, name, argv, out, logs):
    """One benchmark in a subprocess of its tree; its JSON (None if it failed) and seconds."""
    log = Path(logs) / f"{side}_{name}.log"
    t0 = time.perf_counter()
    with open(log, "w") as fh:
        proc = subprocess.run([sys.executable, *argv], cwd=tree, env=environment(tree),
                              stdout=fh, stderr=subprocess.STDOUT, text=True)
    seconds = time.perf_counter() - t0
    shown = " ".join(a if not a.startswith("\nimport") else "<inline>" for a in argv)
    if proc.returncode or not Path(out).is_file():
        tail = log.read_text().splitlines()[-15:]
        print(f"[{side}] {name} FAILED ({proc.returncode}) after {seconds:.0f} s:\n  "
              + "\n  ".join(tail), flush=True)
        return {"command": shown, "seconds": round(seconds, 1), "failed": True,
                "returncode": proc.returncode, "log_tail": tail}, None
    print(f"[{side}] {name} done in {seconds:.0f} s", flush=True)
    return {"command": shown, "seconds": round(seconds, 1)}, json.loads(Path(out).read_text())


# --------------------------------------------------------------------- headline numbers
def _runs(values):
    return [float(v) for v in values]


def llm_mnist(res):
    """Accuracy per setting (per seed), the noise multiplier and the recomputed epsilon."""
    out = {}
    for row in res["accuracy"]:
        eps = row["epsilon"]
        key = "not private" if eps == "inf" else f"epsilon {eps:g}"
        out[("test accuracy", key)] = _runs(r["accuracy"] for r in row["runs"])
        if eps != "inf":
            out[("DP-SGD noise multiplier", key)] = _runs(r["noise_multiplier"] for r in row["runs"])
            out[("epsilon recomputed from the fit", key)] = _runs(
                r["epsilon_recomputed"] for r in row["runs"])
    return out


def dplime_adult(seeds):
    """Mean loss and top-5 agreement per (epsilon_per_query, T): one value per explainer seed."""
    out = {}
    for res in seeds:
        for row in res["quality"]["rows"]:
            key = f"epsilon/query {row['epsilon_per_query']:g}, T {row['T']}"
            out.setdefault(("mean local loss (excess)", key), []).append(float(row["mean_loss"]))
            out.setdefault(("top-5 agreement", key), []).append(float(row["top5"]))
    return out


def dplime_budget(res):
    return {("basic answers paid by total epsilon 1",
             f"epsilon/query {r['epsilon_per_query']:g}, T {r['T']}"): [float(r["paid"])]
            for r in res["rows"]}


RECOURSE_COLUMNS = ("success", "Den", "Dist", "PL1", "PL2", "PL0", "Red", "yNN")


def recourse_adult(res):
    """PrivRecourse's row of each constraint setting, per seed; its nodes; the black box."""
    out = {}
    for row in res["rows"]:
        if row["method"] != "PrivRecourse":
            continue
        for col in RECOURSE_COLUMNS + ("nodes",):
            if col in row:
                out.setdefault((col, row["constraints"]), []).append(float(row[col]))
    out[("black box test accuracy", "DP-SGD logistic regression, epsilon 1")] = _runs(
        b["test_accuracy"] for b in res["black_box"])
    return out


def dpc_adult(res):
    """Flip ratio and average distance per autoencoder and epsilon, per seed."""
    out = {}
    for table in res["tables"]:
        for row in table["rows"]:
            key = f"{row['ae_method']} autoencoder, epsilon {row['epsilon']:g}"
            out[("flip ratio", key)] = _runs(s["flip_ratio"] for s in row["per_seed"])
            out[("average distance", key)] = _runs(s["avg_dist"] for s in row["per_seed"])
    return out


def dpc_found_by(res):
    """How the counterfactuals were found: summed over the seeds, per autoencoder and epsilon."""
    out = {}
    for table in res["tables"]:
        for row in table["rows"]:
            total = {}
            for s in row["per_seed"]:
                for stage, n in s.get("found_by", {}).items():
                    total[stage] = total.get(stage, 0) + int(n)
            out[f"{row['ae_method']} autoencoder, epsilon {row['epsilon']:g}"] = total
    return out


#: Which rows the docs' short table shows (benchmark, measure, setting-prefix).
HEADLINE = {
    ("llm_mnist", "test accuracy"), ("llm_mnist", "DP-SGD noise multiplier"),
    ("dplime_adult", "mean local loss (excess)"), ("dplime_adult", "top-5 agreement"),
    ("dplime_budget", "basic answers paid by total epsilon 1"),
    ("recourse_adult", "success"), ("recourse_adult", "Den"), ("recourse_adult", "Dist"),
    ("recourse_adult", "PL2"), ("recourse_adult", "nodes"),
    ("dpc_adult", "flip ratio"), ("dpc_adult", "average distance"),
}
HIGHER_IS_BETTER = {"test accuracy": True, "top-5 agreement": True, "success": True,
                    "Den": True, "yNN": True, "flip ratio": True,
                    "black box test accuracy": True,
                    "basic answers paid by total epsilon 1": True,
                    "mean local loss (excess)": False, "Dist": False, "PL1": False,
                    "PL2": False, "PL0": False, "Red": False, "average distance": False}


def _std(values):
    return float(np.std(values, ddof=1)) if len(values) > 1 else None


def side_by_side(benchmark, before, after):
    """One row per measure of ``benchmark``: means, per-seed values, difference, its s.e."""
    rows = []
    for key in dict.fromkeys([*before, *after]):
        measure, setting = key
        b, a = before.get(key), after.get(key)
        row = {"benchmark": benchmark, "measure": measure, "setting": setting,
               "headline": (benchmark, measure) in HEADLINE,
               "higher_is_better": HIGHER_IS_BETTER.get(measure),
               "before": None if not b else float(np.mean(b)),
               "after": None if not a else float(np.mean(a)),
               "before_runs": b, "after_runs": a,
               "before_std": None if not b else _std(b),
               "after_std": None if not a else _std(a)}
        row["difference"] = (None if row["before"] is None or row["after"] is None
                             else row["after"] - row["before"])
        row["difference_se"] = (
            math.sqrt(row["before_std"] ** 2 / len(b) + row["after_std"] ** 2 / len(a))
            if row["before_std"] is not None and row["after_std"] is not None else None)
        rows.append(row)
    return rows


def extract(name, results):
    """The headline numbers of one benchmark from its JSON(s) (None: it failed)."""
    if name == "dplime_adult":
        results = [r for r in results if r is not None]
        return dplime_adult(results) if results else None
    if results is None:
        return None
    return {"llm_mnist": llm_mnist, "dplime_budget": dplime_budget,
            "recourse_adult": recourse_adult, "dpc_adult": dpc_adult}[name](results)


def _of(key):
    """The benchmark (an --only choice) a row, command, detail or setting belongs to."""
    for prefix, bench in (("llm_mnist", "llm_mnist"), ("mnist", "llm_mnist"),
                          ("dplime", "dplime_adult"), ("budget", "dplime_adult"),
                          ("recourse", "recourse_adult"), ("dpc", "dpc_adult")):
        if key.startswith(prefix):
            return bench
    return key


def _skdpx_tree(tree):
    """The git tree of a side's skdpx/ (from its commit when the file predates the field)."""
    commit = tree["commit"]
    return tree.get("skdpx_tree") or (
        None if commit.endswith("+dirty") else git("rev-parse", f"{commit}:skdpx"))


def _same_code(old, trees):
    """Refuse to put together results measured on different skdpx code."""
    for side, now in trees.items():
        if _skdpx_tree(old["trees"][side]) != _skdpx_tree(now):
            raise SystemExit(f"the {side} tree's skdpx differs from the saved run's "
                             f"({old['trees'][side]['commit']}): rerun every benchmark")


def kept_results(args, info):
    """With --keep: the saved results whose other benchmarks are kept (None without it).

    Refused unless they were measured on the same skdpx code on both sides (the
    commits may differ in the benchmarks' driver only), and this checkout's
    skdpx/ and benchmarks/ hold no uncommitted change.
    """
    if not args.keep or not args.out.is_file():
        return None
    old = json.loads(args.out.read_text())
    _same_code(old, info)
    for side, now in info.items():
        if git("status", "--porcelain", "--untracked-files=no", "--", "skdpx", "benchmarks",
               cwd=now["path"]):
            raise SystemExit(f"--keep: the {side} tree has uncommitted changes")
    return old


def merged(old, new):
    """``new``'s benchmarks (``new["run"]["benchmarks"]``) in place of ``old``'s."""
    only = set(new["run"]["benchmarks"])
    _same_code(old, new["trees"])
    out = dict(new)
    out["rows"] = [r for r in old["rows"] if _of(r["benchmark"]) not in only] + new["rows"]
    for key in ("commands", "details"):
        out[key] = {**{k: v for k, v in old[key].items() if _of(k) not in only}, **new[key]}
    out["settings"] = {**old["settings"],
                       **{k: v for k, v in new["settings"].items() if _of(k) in only}}
    earlier = old.get("runs") or [{**old["run"], "benchmarks": list(BENCHMARKS)}]
    out["runs"] = [r for r in earlier if set(r["benchmarks"]) - only] + [new["run"]]
    out["trees"] = {side: {**t, "earlier_commits": sorted(
        {old["trees"][side]["commit"], *old["trees"][side].get("earlier_commits", [])}
        - {t["commit"]})} for side, t in new["trees"].items()}
    return out


def _fmt(value):
    if value is None:
        return "--"
    return f"{value:.4g}" if abs(value) >= 1e-3 or value == 0 else f"{value:.3e}"


def print_table(rows):
    print(f"\n{'benchmark':<15} {'measure':<40} {'setting':<38} {'before':>10} {'after':>10} "
          f"{'after-before':>12} {'s.e.':>9}  per seed (before | after)")
    for r in rows:
        runs = (" ".join(_fmt(v) for v in r["before_runs"] or []) + " | "
                + " ".join(_fmt(v) for v in r["after_runs"] or []))
        print(f"{r['benchmark']:<15} {r['measure'][:40]:<40} {r['setting'][:38]:<38} "
              f"{_fmt(r['before']):>10} {_fmt(r['after']):>10} {_fmt(r['difference']):>12} "
              f"{_fmt(r['difference_se']):>9}  {runs}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="/tmp/base",
                        help="the code before: a checkout, or a commit (checked out for the run)")
    parser.add_argument("--after", default=str(ROOT), help="the code after (default: this tree)")
    parser.add_argument("--only", nargs="+", choices=BENCHMARKS, default=list(BENCHMARKS))
    parser.add_argument("--jobs", type=int, default=2, help="subprocesses side by side")
    parser.add_argument("--mnist-seeds", type=int, default=3)
    parser.add_argument("--dplime-seeds", type=int, default=3,
                        help="explainer seeds of dplime_adult.py's part a (0: the script as is)")
    parser.add_argument("--dplime-queries", type=int, default=500)
    parser.add_argument("--budget-queries", type=int, default=600,
                        help="queries asked of the budget measurement's explainers")
    parser.add_argument("--recourse-queries", type=int, default=100)
    parser.add_argument("--recourse-seeds", type=int, default=2)
    parser.add_argument("--dpc-seeds", type=int, default=3)
    parser.add_argument("--dpc-queries", type=int, default=100)
    parser.add_argument("--no-budget", dest="budget", action="store_false",
                        help="leave out the DPLime budget side-measurement (issue 35's)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--title", default=__doc__.splitlines()[0],
                        help="what the run compares, saved as its description")
    parser.add_argument("--keep", action="store_true",
                        help="keep the benchmarks of --out that --only does not rerun (the "
                             "same skdpx code on both sides is checked)")
    parser.add_argument("--merge", type=Path, default=None,
                        help="run nothing: put the benchmarks of this results file (a run of "
                             "this driver with --only) in place of theirs in --out")
    args = parser.parse_args(argv)
    if args.merge is not None:
        results = merged(json.loads(args.out.read_text()), json.loads(args.merge.read_text()))
        print_table(results["rows"])
        save(args.out, results)
        print(f"\nmerged {args.merge} into {args.out}")
        return
    started, t_start = start(), time.perf_counter()
    base = Base(args.base)
    try:
        trees = {"before": base.path, "after": Path(args.after).resolve()}
        info = {side: {"path": str(tree), "commit": tree_commit(tree),
                       "skdpx_tree": git("rev-parse", "HEAD:skdpx", cwd=tree),
                       "skdpx": skdpx_file(tree)} for side, tree in trees.items()}
        kept = kept_results(args, info)
        if args.base != str(base.path):
            info["before"]["given_as"] = args.base
        for side, t in info.items():
            print(f"{side}: {t['path']} at {t['commit']} (skdpx from {t['skdpx']})")
        with tempfile.TemporaryDirectory(prefix="row-count-cost-") as tmp:
            jobs = []
            for (name, argv_b, out_b), (_, argv_a, out_a) in zip(
                    commands(args, tmp, "before", trees["before"]),
                    commands(args, tmp, "after", trees["after"])):
                jobs += [("before", name, argv_b, out_b), ("after", name, argv_a, out_a)]
            with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
                futures = [pool.submit(run_job, trees[side], side, name, argv, out, tmp)
                           for side, name, argv, out in jobs]
                done = [f.result() for f in futures]
        ran, outputs = {}, {}
        for (side, name, _, _), (record, result) in zip(jobs, done):
            ran.setdefault(name, {})[side] = record
            outputs.setdefault(name, {})[side] = result
    finally:
        base.close()

    rows, details = [], {}
    groups = {"llm_mnist": ["llm_mnist"], "recourse_adult": ["recourse_adult"],
              "dpc_adult": ["dpc_adult"], "dplime_budget": ["dplime_budget"],
              "dplime_adult": [n for n in outputs if n.startswith("dplime_adult_seed")]}
    for bench, names in groups.items():
        if not names or names[0] not in outputs:
            continue
        per_side = {}
        for side in ("before", "after"):
            results = [outputs[n][side] for n in names]
            per_side[side] = extract(bench, results if bench == "dplime_adult" else results[0])
        if per_side["before"] is None or per_side["after"] is None:
            continue
        rows += side_by_side(bench, per_side["before"], per_side["after"])
        if bench == "dpc_adult":
            details["dpc_found_by"] = {side: dpc_found_by(outputs[bench][side])
                                       for side in ("before", "after")}
        if bench == "dplime_budget":
            details["dplime_budget"] = {side: outputs[bench][side]["rows"]
                                        for side in ("before", "after")}
        if bench == "recourse_adult":
            details["recourse_fits"] = {side: outputs[bench][side]["fits"]
                                        for side in ("before", "after")}
        if bench == "llm_mnist":
            details["llm_mnist_runs"] = {side: outputs[bench][side]["accuracy"]
                                         for side in ("before", "after")}
    run = run_info(started, time.perf_counter() - t_start,
                   packages=("dp-accounting", "opendp", "lime"))
    run["benchmarks"] = list(args.only)
    settings = {"mnist_seeds": list(range(args.mnist_seeds)),
                "dplime_explainer_seeds": list(range(args.dplime_seeds)),
                "dplime_queries": args.dplime_queries,
                "budget": ({"total_epsilon": 1.0, "T": 30, "strategy": "basic",
                            "epsilons_per_query": [0.1, 0.05],
                            "queries_asked": args.budget_queries}
                           if args.budget else "not run (--no-budget)"),
                "recourse_seeds": list(range(args.recourse_seeds)),
                "recourse_queries": args.recourse_queries,
                "dpc_seeds": list(range(args.dpc_seeds)), "dpc_queries": args.dpc_queries}
    print_table(rows)
    results = {
        "benchmark": "row_count_cost",
        "description": args.title,
        "trees": info,
        "reduced": ("REDUCED settings, not the full benchmarks: see 'settings' and "
                    "'full_run'; the same settings on both trees"),
        "settings": {**settings, "jobs": args.jobs, "blas_threads": 1,
                     "std": "sample standard deviation over the seeds (ddof=1)",
                     "difference_se": "sqrt(before_std^2 / n_before + after_std^2 / n_after)"},
        "full_run": FULL_RUN,
        "commands": ran,
        "rows": rows,
        "details": details,
        "run": run,
        "runs": [run],
    }
    if kept is not None:
        results = merged(kept, results)
        print("\nwith the other benchmarks kept from the saved results:")
        print_table(results["rows"])
    save(args.out, results)
    print(f"\n{run['seconds']:.0f} s in all; saved {args.out}")


if __name__ == "__main__":
    main()
