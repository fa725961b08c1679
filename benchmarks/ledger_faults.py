"""Faults of a ledger file (issue 36): each gives its named error and grants nothing.

A file-backed :class:`~skdpx.privacy.PrivacyLedger` is the only copy of a
budget. Each trial fills a fresh ledger file to 0.85 of its cap (epsilon 1,
five pure spends of 0.17), pickles it, then damages the file one way and
tries every way back in, spending 0.01 at a time (at most 200 tries each,
which would be 2 in epsilon, twice the cap):

* "same object": the ledger object that filled the file, in this process;
* "reopened": ``PrivacyLedger(path=p)`` (no cap: adopt the file's), in a
  fresh process;
* "unpickled": the pickle made before the fault, restored in that fresh
  process (as a joblib worker or a restarted program would).

Faults: the file deleted, emptied (0 bytes), truncated to half, its cap
edited to 1e9, one spend edited (a cheaper event), corrupted (not JSON) or
deleted, its checksum table dropped, the file replaced by another ledger's
file (same cap, nothing spent), by an older copy of itself, by a text file,
by another application's sqlite file, or by a directory; its directory
removed; the file or its directory read-only (``chattr +i`` as root, where
``chmod`` does not stop root; ``chmod`` otherwise); the disk full, on a real
128 KiB tmpfs where ``mount`` works (root), else skipped, and simulated
(sqlite3 raising "database or disk is full" at the insert); and an empty
path. "accepted" counts the spends granted after the fault, over all ways
in: 0 everywhere means the fault granted nothing.

Two crash trials: a process killed with SIGKILL at a random moment of a
loop of spends (20 times; the file must be whole afterwards, hold every
acknowledged spend and at most one more, and stay under its cap), and
Dask workers killed while their tasks spend from one file ledger (where
``distributed`` is installed).

Last, the first read: a fresh process's first spend on a file of 20
distinct DP-SGD spends (200 steps at sampling rate 0.01 each), timed in
whole and inside the write lock (where every other writer waits), on this
tree and on the code before issue 36 (``--before``, default 423cf95,
extracted with ``git archive``).

Saves ``benchmarks/results/ledger_faults.json`` (with ``_run_record``'s
date, commit, versions and command) and prints the tables.

Run: python benchmarks/ledger_faults.py [--kill-trials 20] [--no-dask]
"""

import argparse
import errno
import json
import os
import pickle
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from _run_record import run_info, save, start  # noqa: E402

from skdpx.privacy import PrivacyLedger, event_to_json, pure_event  # noqa: E402

CAP, DELTA, STEP, TINY, TRIES = 1.0, 1e-5, 0.17, 0.01, 200
KILL_CAP = 50.0  # the kill trials' cap: over 30,000 spends, never reached before the kill

# A fresh process that reopens and unpickles on request: one import for all trials.
_CHILD = r"""
import json, pickle, sys
sys.path.insert(0, sys.argv[1])
from skdpx.privacy import PrivacyLedger, pure_event

def attempt(make, tries):
    accepted = 0
    try:
        ledger = make()
        for i in range(tries):
            ledger.spend(pure_event(0.01), f"after the fault {i}")
            accepted += 1
        return {"error": None, "message": "", "accepted": accepted}
    except Exception as exc:
        return {"error": type(exc).__name__, "message": str(exc), "accepted": accepted}

print("ready", flush=True)
for line in sys.stdin:
    job = json.loads(line)
    if job["mode"] == "reopen":
        out = attempt(lambda: PrivacyLedger(path=job["path"]), job["tries"])
    else:
        with open(job["pickle"], "rb") as handle:
            data = handle.read()
        out = attempt(lambda: pickle.loads(data), job["tries"])
    print(json.dumps(out), flush=True)
"""


class Child:
    def __init__(self):
        self.proc = subprocess.Popen([sys.executable, "-c", _CHILD, str(ROOT)], cwd=ROOT,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     env={**os.environ, "OMP_NUM_THREADS": "1"})
        assert self.proc.stdout.readline().strip() == "ready"

    def ask(self, mode, path=None, pickle_path=None):
        self.proc.stdin.write(json.dumps({"mode": mode, "path": str(path), "pickle": str(
            pickle_path), "tries": TRIES}) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def attempt(ledger):
    accepted = 0
    try:
        for i in range(TRIES):
            ledger.spend(pure_event(TINY), f"after the fault {i}")
            accepted += 1
        return {"error": None, "message": "", "accepted": accepted}
    except Exception as exc:  # noqa: BLE001 - we classify every error
        return {"error": type(exc).__name__, "message": str(exc), "accepted": accepted}


def filled(path):
    ledger = PrivacyLedger(epsilon=CAP, delta=DELTA, path=path)
    for i in range(5):
        ledger.spend(pure_event(STEP), f"release {i}")
    return ledger


def sql(path, *statements):
    con = sqlite3.connect(path)
    for s in statements:
        con.execute(s)
    con.commit()
    con.close()


def immutable(target, on):
    """Read-only for root too (chattr +i), or chmod where not root."""
    if os.geteuid() != 0:
        os.chmod(target, (0o555 if os.path.isdir(target) else 0o444) if on else 0o755)
        return True
    return subprocess.run(["chattr", "+i" if on else "-i", str(target)],
                          capture_output=True).returncode == 0


def fill_up(path):
    """Write ``path`` until the disk is full."""
    with open(path, "wb", buffering=0) as handle:
        for size in (65536, 4096, 512, 1):
            try:
                while True:
                    handle.write(b"\0" * size)
            except OSError:
                continue


def can_mount():
    return sys.platform.startswith("linux") and os.geteuid() == 0 and shutil.which("mount")


class FullDisk:
    """A sqlite connection whose inserts fail as on a full disk (sqlite rolls back itself)."""

    def __init__(self, con):
        self._con = con

    def execute(self, statement, *args):
        if statement.lstrip().upper().startswith("INSERT"):
            if self._con.in_transaction:
                self._con.execute("ROLLBACK")
            raise sqlite3.OperationalError("database or disk is full")
        return self._con.execute(statement, *args)

    def __getattr__(self, name):
        return getattr(self._con, name)


# Each fault: (setup(dir, path, ledger) -> path to try, or None to skip; teardown or None)
def _replace_with_ledger(d, p, led):
    PrivacyLedger(epsilon=CAP, delta=DELTA, path=d / "other.sqlite")
    shutil.copyfile(d / "other.sqlite", p)


def _foreign(d, p, led):
    p.unlink()
    sql(p, "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)", "CREATE TABLE users (n TEXT)")


def _truncate(d, p, led):
    data = p.read_bytes()
    p.write_bytes(data[: len(data) // 2])


def _to_directory(d, p, led):
    p.unlink()
    p.mkdir()


def _rm_directory(d, p, led):
    shutil.rmtree(d)


FAULTS = {
    "deleted": lambda d, p, led: p.unlink(),
    "emptied (0 bytes)": lambda d, p, led: p.write_bytes(b""),
    "truncated to half": _truncate,
    "cap edited to 1e9": lambda d, p, led: sql(
        p, "UPDATE meta SET value = 1e9 WHERE key = 'epsilon'"),
    "a spend edited (cheaper event)": lambda d, p, led: sql(
        p, f"UPDATE spends SET event = '{event_to_json(pure_event(1e-6))}' WHERE id = 2"),
    "a spend corrupted (not JSON)": lambda d, p, led: sql(
        p, "UPDATE spends SET event = '{not json' WHERE id = 2"),
    "a spend deleted": lambda d, p, led: sql(p, "DELETE FROM spends WHERE id = 5"),
    "checksum table dropped, cap edited": lambda d, p, led: sql(
        p, "DROP TABLE skdpx_ledger", "UPDATE meta SET value = 1e9 WHERE key = 'epsilon'"),
    "replaced by another ledger's file": _replace_with_ledger,
    "replaced by an older copy of itself": None,  # special: needs the copy before spends
    "replaced by a text file": lambda d, p, led: p.write_text("epsilon = 1e9\n" * 100),
    "replaced by another app's sqlite": _foreign,
    "replaced by a directory": _to_directory,
    "its directory removed": _rm_directory,
    "read-only file": "ro-file",
    "read-only directory": "ro-dir",
    "disk full (simulated)": "full-sim",
    "disk full (128 KiB tmpfs)": "full-tmpfs",
}


def run_fault(name, setup, child, base):
    d = Path(tempfile.mkdtemp(dir=base))
    p = d / "ledger.sqlite"
    row = {"fault": name}
    undo = None
    try:
        if setup == "full-tmpfs":
            if not can_mount() or subprocess.run(
                    ["mount", "-t", "tmpfs", "-o", "size=128k", "tmpfs", str(d)],
                    capture_output=True).returncode != 0:
                return {**row, "skipped": "mount needs root"}
            undo = lambda: subprocess.run(["umount", "-l", str(d)], capture_output=True)  # noqa
            ledger = PrivacyLedger(epsilon=1e6, delta=DELTA, path=p)
            (d / "filler").write_bytes(b"\0" * 64 * 1024)
            acked, first = 0, None
            try:
                for i in range(100_000):
                    ledger.spend(pure_event(1e-3), "x" * 2000 + str(i))
                    acked += 1
            except OSError as exc:
                first = f"{type(exc).__name__} ({errno.errorcode.get(exc.errno)})"
            fill_up(d / "filler2")  # what the refused spend left: to the last byte
            pickled = d.parent / (d.name + ".pickle")
            pickled.write_bytes(pickle.dumps(ledger))
            row["same"] = attempt(ledger)
            row["fresh"] = {"reopened": child.ask("reopen", p),
                            "unpickled": child.ask("unpickle", pickle_path=pickled)}
            (d / "filler").unlink()
            (d / "filler2").unlink()
            whole = len(PrivacyLedger(path=p))
            row.update(first_error=first, spends_before_full=acked, file_whole=whole == acked,
                       note=f"the first ENOSPC after {acked} spends with 2 KB labels, then the "
                            f"disk filled to the byte; after freeing space the file holds "
                            f"exactly the {whole} acknowledged spends")
            return row
        if name == "replaced by an older copy of itself":
            ledger = PrivacyLedger(epsilon=CAP, delta=DELTA, path=p)
            for i in range(2):
                ledger.spend(pure_event(STEP), f"release {i}")
            shutil.copyfile(p, d / "backup.sqlite")
            for i in range(2, 5):
                ledger.spend(pure_event(STEP), f"release {i}")
        else:
            ledger = filled(p)
        pickled = d.parent / (d.name + ".pickle")
        pickled.write_bytes(pickle.dumps(ledger))
        if name == "replaced by an older copy of itself":
            shutil.copyfile(d / "backup.sqlite", p)
        elif setup == "ro-file" or setup == "ro-dir":
            target = p if setup == "ro-file" else d
            if not immutable(target, True):
                return {**row, "skipped": "cannot make it read-only"}
            undo = lambda: immutable(target, False)  # noqa: E731
        elif setup == "full-sim":
            connect = sqlite3.connect
            sqlite3.connect = lambda *a, **k: FullDisk(connect(*a, **k))
            undo = lambda: setattr(sqlite3, "connect", connect)  # noqa: E731
        else:
            setup(d, p, ledger)
        # each way in tries the damaged file as it was left by the fault (not as the
        # previous way's spends left it)
        damaged = p.read_bytes() if p.is_file() and os.access(p, os.R_OK) else None

        def as_damaged():
            if damaged is not None and setup not in ("ro-file", "ro-dir"):
                p.write_bytes(damaged)

        row["same"] = attempt(ledger)
        if setup == "full-sim":
            # the fresh process has a real disk: the simulated fault is this process's
            row["fresh"] = {"reopened": None, "unpickled": None}
        else:
            as_damaged()
            row["fresh"] = {"reopened": child.ask("reopen", p)}
            as_damaged()
            row["fresh"]["unpickled"] = child.ask("unpickle", pickle_path=pickled)
        if undo is not None and setup in ("ro-file", "ro-dir", "full-sim"):
            undo()
            undo = None
            # the file was never damaged: whole, the 5 spends, the cap still holds
            again = PrivacyLedger(path=p)
            over = attempt(again)  # 0.85 + 15 * 0.01 = 1.0 at most
            row["after_repair"] = {"spends": len(again) - over["accepted"],
                                   "accepted_up_to_cap": over["accepted"],
                                   "then": over["error"]}
        return row
    finally:
        for way in (row.get("same"), *(row.get("fresh") or {}).values()):
            if way:  # messages name the file: say <path> (a temporary name) instead
                way["message"] = way["message"].replace(str(p), "<path>").replace(
                    str(d), "<dir>")
        if undo is not None:
            undo()
        shutil.rmtree(d, ignore_errors=True)


# ---------------------------------------------------------------- kill -9
_KILL_CHILD = r"""
import sys
sys.path.insert(0, sys.argv[2])
from skdpx.exceptions import BudgetError
from skdpx.privacy import PrivacyLedger, gaussian_event
ledger = PrivacyLedger(path=sys.argv[1])
print("ready", flush=True)
i = 0
while True:
    try:
        ledger.spend(gaussian_event(40.0), f"k{i}")
    except BudgetError:
        print("full", flush=True)
        break
    print("ack", i, flush=True)
    i += 1
"""


def kill_trials(n, base, seed=0):
    rng = random.Random(seed)
    rows = []
    for t in range(n):
        d = Path(tempfile.mkdtemp(dir=base))
        p = d / "ledger.sqlite"
        PrivacyLedger(epsilon=KILL_CAP, delta=DELTA, path=p)  # never reached before the kill
        proc = subprocess.Popen([sys.executable, "-c", _KILL_CHILD, str(p), str(ROOT)],
                                cwd=ROOT, stdout=subprocess.PIPE, text=True,
                                env={**os.environ, "OMP_NUM_THREADS": "1"})
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.05, 1.5))
        try:
            os.kill(proc.pid, signal.SIGKILL)
        except ProcessLookupError:  # it had spent the whole cap and left
            pass
        out, _ = proc.communicate(timeout=60)
        acked = sum(line.startswith("ack") for line in out.splitlines())
        try:
            ledger = PrivacyLedger(path=p)
            held, eps, error = len(ledger), ledger.epsilon_spent, None
        except Exception as exc:  # noqa: BLE001
            held, eps, error = None, None, f"{type(exc).__name__}: {exc}"
        ok = error is None and acked <= held <= acked + 1 and eps <= KILL_CAP
        rows.append({"trial": t, "acknowledged": acked, "in_file": held,
                     "epsilon_spent": eps, "error": error, "whole": ok,
                     "killed_while_spending": "full" not in out})
        shutil.rmtree(d, ignore_errors=True)
    return rows


# ---------------------------------------------------------------- Dask workers killed
def _dask_task(ledger, i):
    from skdpx.privacy import gaussian_event
    import time as _time

    _time.sleep(0.2)
    return ledger.spend(gaussian_event(40.0), f"task {i}")


def dask_trial(base, n_tasks=40, timeout=300):
    """Kill one of two Dask worker processes while tasks spend from one ledger file."""
    try:
        import logging

        from distributed import Client, LocalCluster, wait
    except ImportError:
        return {"skipped": "distributed is not installed"}
    d = Path(tempfile.mkdtemp(dir=base))
    p = d / "ledger.sqlite"
    ledger = PrivacyLedger(epsilon=2.0, delta=DELTA, path=p)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0", silence_logs=logging.CRITICAL) as cluster, \
            Client(cluster) as client:
        client.wait_for_workers(2, timeout=120)
        futures = [client.submit(_dask_task, ledger, i, pure=False, retries=2)
                   for i in range(n_tasks)]
        t0 = time.perf_counter()
        while len(PrivacyLedger(path=p)) < 4 and time.perf_counter() - t0 < 120:
            time.sleep(0.1)  # the workers are spending
        victim = sorted(client.run(os.getpid).values())[0]
        os.kill(victim, signal.SIGKILL)
        done, not_done = wait(futures, timeout=timeout)
        ids, lost = [], 0
        for f in done:
            try:
                ids.append(f.result())
            except Exception:  # noqa: BLE001 - a task lost with its worker, or refused
                lost += 1
        for f in not_done:
            f.cancel()
    held = PrivacyLedger(path=p)
    out = {"tasks": n_tasks, "workers_killed": 1, "acknowledged": len(ids),
           "refused_or_lost": lost, "unfinished_after_timeout": len(not_done),
           "in_file": len(held), "epsilon_spent": held.epsilon_spent, "cap": 2.0,
           "every_acknowledged_spend_in_file": len(set(ids)) == len(ids) and
           set(ids) <= {i for i in range(1, len(held) + 1)},
           "under_cap": held.epsilon_spent <= 2.0}
    shutil.rmtree(d, ignore_errors=True)
    return out


# ---------------------------------------------------------------- the first read
_FIRST_READ_CHILD = r"""
import json, sys, time
from contextlib import contextmanager
sys.path.insert(0, sys.argv[2])
from skdpx.privacy import PrivacyLedger, gaussian_event
ledger = PrivacyLedger(path=sys.argv[1])
inside = [0.0]
transaction = PrivacyLedger._transaction

@contextmanager
def timed(self, *args, **kwargs):
    immediate = kwargs.get("immediate", args[0] if args else True)
    with transaction(self, *args, **kwargs) as con:
        t = time.perf_counter()
        try:
            yield con
        finally:
            if immediate:  # the write lock: every other writer waits meanwhile
                inside[0] += time.perf_counter() - t

PrivacyLedger._transaction = timed
t = time.perf_counter()
ledger.spend(gaussian_event(2.0, steps=200, sample_rate=0.01), "the next one")
print(json.dumps({"seconds": time.perf_counter() - t, "in_write_lock": inside[0]}))
"""


def first_read(base, n_spends, before=None):
    """A fresh process's first spend on a file of ``n_spends`` distinct DP-SGD spends: its
    time, and the part of it inside the write lock; on this tree and on ``before``."""
    d = Path(tempfile.mkdtemp(dir=base))
    p = d / "ledger.sqlite"
    ledger = PrivacyLedger(epsilon=1e3, delta=DELTA, path=p)
    from skdpx.privacy import gaussian_event

    for i in range(n_spends):
        ledger.spend(gaussian_event(1.1 + 0.01 * i, steps=200, sample_rate=0.01), f"fit {i}")
    trees = {"after (this tree)": ROOT}
    if before:
        tree = d / "before"
        tree.mkdir()
        archive = subprocess.run(["git", "archive", before, "skdpx"], cwd=ROOT,
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
        trees = {f"before ({before})": tree, **trees}
    rows = []
    for name, tree in trees.items():
        copy = d / f"copy-{len(rows)}.sqlite"
        shutil.copyfile(p, copy)
        done = subprocess.run([sys.executable, "-c", _FIRST_READ_CHILD, str(copy), str(tree)],
                              cwd=d, capture_output=True, text=True,
                              env={**os.environ, "OMP_NUM_THREADS": "1"})
        if done.returncode != 0:
            rows.append({"code": name, "spends": n_spends, "error": done.stderr[-300:]})
            continue
        rows.append({"code": name, "spends": n_spends, **json.loads(done.stdout)})
    shutil.rmtree(d, ignore_errors=True)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kill-trials", type=int, default=20)
    parser.add_argument("--no-dask", action="store_true")
    parser.add_argument("--first-read-spends", type=int, default=20)
    parser.add_argument("--before", default="423cf95",
                        help="the commit to time the first read against ('' to skip)")
    parser.add_argument("--out", default=str(HERE / "results" / "ledger_faults.json"))
    args = parser.parse_args()
    started, t0 = start(), time.perf_counter()
    base = tempfile.mkdtemp(prefix="ledger-faults-")
    child = Child()
    rows = []
    try:
        for name, setup in FAULTS.items():
            rows.append(run_fault(name, setup, child, Path(base)))
            print(".", end="", flush=True)
        # an empty path: nothing to damage, only to open
        try:
            PrivacyLedger(epsilon=CAP, delta=DELTA, path="")
            empty = {"error": None, "message": "", "accepted": TRIES}
        except Exception as exc:  # noqa: BLE001
            empty = {"error": type(exc).__name__, "message": str(exc), "accepted": 0}
        rows.append({"fault": "empty path ''", "same": empty,
                     "fresh": {"reopened": child.ask("reopen", ""), "unpickled": None}})
    finally:
        child.close()
    print()
    kills = kill_trials(args.kill_trials, Path(base))
    dask = {"skipped": "--no-dask"} if args.no_dask else dask_trial(Path(base))
    reads = first_read(Path(base), args.first_read_spends, args.before or None)
    shutil.rmtree(base, ignore_errors=True)

    print("| fault | same object | reopened (fresh process) | unpickled (fresh process) "
          "| spends accepted after the fault | message (start) |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        if "skipped" in r:
            print(f"| {r['fault']} | skipped: {r['skipped']} | | | | |")
            continue
        ways = [r["same"], r["fresh"]["reopened"], r["fresh"]["unpickled"]]
        accepted = sum(w["accepted"] for w in ways if w)
        print(f"| {r['fault']} | " + " | ".join(
            (w["error"] or "accepted") if w else "-" for w in ways) +
            f" | {accepted} | {r['same']['message'][:80]} |")
    whole = sum(k["whole"] for k in kills)
    mid = sum(k["killed_while_spending"] for k in kills)
    print(f"\nkill -9 during a loop of spends ({mid} of {len(kills)} killed while spending): "
          f"{whole}/{len(kills)} files whole, every acknowledged spend kept, at most one more, "
          "under the cap")
    print(f"Dask workers killed: {dask}")
    for r in reads:
        print(f"first spend of a fresh process on {r['spends']} DP-SGD spends, {r['code']}: "
              + (f"{r['seconds']:.1f} s, {r['in_write_lock']:.1f} s of it in the write lock"
                 if "seconds" in r else r["error"]))
    results = {"rows": rows, "kill_trials": kills, "dask": dask, "first_read": reads,
               "settings": {"cap": CAP, "delta": DELTA, "filled_with": "5 x pure 0.17",
                            "tries_per_way": TRIES, "try_epsilon": TINY},
               "run": run_info(started, time.perf_counter() - t0, packages=("distributed",))}
    save(args.out, results)
    print(f"saved {args.out}")


if __name__ == "__main__":
    main()
