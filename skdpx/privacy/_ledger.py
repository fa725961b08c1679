"""The privacy ledger: the budget of one protected dataset."""

from contextlib import contextmanager
import errno
from functools import lru_cache
import hashlib
import json
import math
from numbers import Real
import os
import shutil
import sqlite3
import tempfile
import threading
import time
import urllib.parse
import uuid
import warnings
import weakref

import dp_accounting

from ._composition import epsilon_of_spends, is_pure
from ._events import event_from_json, event_to_json
from ._exceptions import BudgetError, LedgerIntegrityError, PrivacyLeakWarning

__all__ = ["LedgerDetachedError", "PrivacyLedger", "RELATIONS", "check_relation",
           "is_budget_accountant"]

#: The methods of diffprivlib's ``BudgetAccountant`` a ledger mirrors its
#: spends with: ``check(epsilon, delta)`` raises if the spend would exceed the
#: accountant's cap; ``spend(epsilon, delta)`` records it.
ACCOUNTANT_METHODS = ("check", "spend")


def is_budget_accountant(obj):
    """Whether ``obj`` can be mirrored into like a diffprivlib ``BudgetAccountant``.

    Duck typing (callable ``check`` and ``spend``), so that skdpx never
    imports diffprivlib, which fails to import on recent scikit-learn.
    A :class:`PrivacyLedger` is not one: pass it as the ledger itself.
    """
    return not isinstance(obj, PrivacyLedger) and all(
        callable(getattr(obj, name, None)) for name in ACCOUNTANT_METHODS)

#: The neighbouring relations a ledger can be kept under: datasets that differ
#: by one row added or removed (the size of the data is private), or by one
#: row replaced by another (the size is public).
RELATIONS = ("add_or_remove", "replace_one")


def check_relation(relation):
    """``relation`` if it is one of :data:`RELATIONS`, else a ValueError.

    The one check of a neighbouring relation, for the ledger and every
    sensitivity stated under one (add-or-remove: the size of the data is
    private; replace-one: it is public).

    Parameters
    ----------
    relation : str

    Returns
    -------
    str
        ``relation``, unchanged.

    Examples
    --------
    >>> from skdpx.privacy import check_relation
    >>> check_relation("replace_one")
    'replace_one'
    >>> check_relation("swap")
    Traceback (most recent call last):
    ...
    ValueError: relation must be one of ('add_or_remove', 'replace_one'), got 'swap'.
    """
    if relation not in RELATIONS:
        raise ValueError(f"relation must be one of {RELATIONS}, got {relation!r}.")
    return relation

# Relative slack when comparing a composed epsilon with a cap: calibration
# targets the cap exactly, and floating point must not turn that into a refusal.
_RTOL = 1e-9

_LIVE = weakref.WeakValueDictionary()  # uid -> ledger, this process's live ledgers


class _DefaultCap(float):
    """A cap left at its default: told apart from the same value given explicitly
    (a ledger file is created only with a cap given explicitly)."""

    __slots__ = ()


_DEFAULT_EPSILON = _DefaultCap(math.inf)
_DEFAULT_DELTA = _DefaultCap(1.0)
#: ``accountant=`` not given (its deprecated name for ``mirror``)
_NOT_GIVEN = object()


class LedgerDetachedError(RuntimeError):
    """A copy of an in-memory ledger was asked to spend.

    An in-memory ledger restored from a pickle (in a worker process, after a
    restart, or once the original is gone) is a read-only record: its spends
    would never reach the ledger of record, and an older copy would grant
    again a budget already spent. Use a file-backed ledger
    (``PrivacyLedger(path="budget.sqlite")``) to share one budget between
    processes and restarts, or :meth:`PrivacyLedger.resume` (with a warning)
    to make a copy the ledger of record.
    """


_DETACHED_MESSAGE = (
    "this PrivacyLedger is a read-only copy of an in-memory ledger (restored from a pickle: "
    "in a joblib worker of GridSearchCV(n_jobs=2), say, or after a restart), where its "
    "spends would never reach the ledger of record and an older copy would grant again a "
    "budget already spent; so nothing was spent and the fit stops here. To share one budget "
    "between processes and restarts, keep it in a sqlite file: "
    "PrivacyLedger(path='budget.sqlite', epsilon=..., delta=...), which every process that "
    "opens the file spends from. Or fit in this process (n_jobs=1, or joblib's threading "
    "backend). Call resume() only if this copy is knowingly the one ledger of record."
)


class PrivacyLedger:
    """The privacy budget of one protected dataset, composed tightly.

    Each differentially private release computed from the protected rows is
    recorded as a dp_accounting ``DpEvent`` with a label. The events are
    composed with privacy loss distributions (exactly for Gaussian
    mechanisms), and a release that would take the total above the cap
    (``epsilon``, ``delta``) is refused with
    :class:`~skdpx.exceptions.BudgetError` before any data are touched.

    Several estimators working on the same private data should share one
    ledger. A ledger is an identity, not a value: ``clone``, ``copy.copy``,
    ``copy.deepcopy`` and an in-process pickle round trip all return the same
    ledger, so a ``GridSearchCV`` over an estimator that holds it records every
    fit. Threads may spend at once; they never overspend.

    Parameters
    ----------
    epsilon : float, default=np.inf
        The cap on the total epsilon.
    delta : float, default=1.0
        The delta at which the total is reported and capped. ``1.0`` means no
        cap on delta: the total is then reported at the sum of the deltas the
        releases declared (``spend(..., delta=...)``).
    path : str or os.PathLike, default=None
        A sqlite file that holds the events. Several processes, and a program
        that restarts, then share one budget: restarting never resets it.
        The file is the budget's only copy. It is created only by
        ``PrivacyLedger(path, epsilon=..., delta=...)`` (a cap given
        explicitly, ``np.inf`` included) on a path that does not exist;
        with ``epsilon`` and ``delta`` omitted, an existing file is opened
        with its own cap, and a missing one raises
        :class:`~skdpx.exceptions.LedgerIntegrityError`. The file keeps the
        cap it was created with; opening it with another cap raises
        ``ValueError``. A checksum kept in the file (a running hash of its
        cap and spends) is checked on every read: a file deleted, emptied,
        truncated, replaced, rolled back, foreign or edited outside skdpx
        raises ``LedgerIntegrityError`` and grants nothing, to a ledger
        object that opened it and to its pickles. A program that passes the
        cap at every start (``PrivacyLedger(path, epsilon=...)``) creates the
        file anew if it was deleted, with nothing spent: open an existing
        budget with ``PrivacyLedger(path=path)`` (no cap), which refuses a
        missing file.
    mirror : diffprivlib.BudgetAccountant or alike, default=None
        Each spend is mirrored into it as the (epsilon, delta) of that event
        alone, and its own cap is checked too: before recording,
        ``mirror.check(epsilon, delta)`` (a ``ValueError`` from it, such
        as diffprivlib's ``BudgetError``, refuses the spend and is raised
        as skdpx's :class:`~skdpx.exceptions.BudgetError`), after,
        ``mirror.spend(epsilon, delta)``.
        Any object with those two methods will do (found by duck typing:
        skdpx does not import diffprivlib).
    relation : {"add_or_remove", "replace_one"}, default="add_or_remove"
        The neighbouring relation every spend in this ledger is calibrated
        for: the sensitivities of all its releases are stated under it, so
        their epsilons compose. A spend calibrated for another relation is
        refused (``ValueError``): composing it would be wrong. Estimators
        read it and calibrate under it. A file-backed ledger keeps the
        relation it was created with.
    accountant : diffprivlib.BudgetAccountant or alike
        Deprecated: the old name of ``mirror`` (it warns, ``FutureWarning``,
        and will be removed in the next release). Giving both is a
        ``TypeError``. (An estimator's ``accountant`` is its ledger: that
        name stays.)

    Attributes
    ----------
    mirror : diffprivlib.BudgetAccountant or alike, or None
        The ``mirror`` given (``accountant``, its deprecated alias, reads it
        with a ``FutureWarning``).
    events : list of (str, DpEvent)
        The releases recorded so far, in order.
    epsilon_spent, delta_spent : float
        The total spent so far (see Notes).
    epsilon_remaining : float
        ``epsilon - epsilon_spent``.

    Notes
    -----
    Privacy unit: one row of the protected dataset, under :attr:`relation`.
    A ledger file's checksum is a plain hash, not a signature: it catches
    mistakes and naive edits, but whoever can write the file and recompute
    the hash can forge it. The file's permissions are the protection (skdpx
    creates it readable and writable by its owner only).
    A spend is final: nothing refunds it, not even an exception raised while
    the release is computed (its noisy intermediate values may already have
    escaped, in a traceback or a log). ``delta_spent`` is ``delta`` (or the
    sum of the declared deltas when ``delta`` is 1) as soon as one release
    needs a delta; when every release is pure (Laplace, exponential), it is 0
    and ``epsilon_spent`` is the exact sum of their epsilons.

    Examples
    --------
    >>> from skdpx.privacy import PrivacyLedger, gaussian_event
    >>> ledger = PrivacyLedger(epsilon=1.0, delta=1e-5)
    >>> _ = ledger.spend(gaussian_event(6.0), "mean age")
    >>> _ = ledger.spend(gaussian_event(6.0), "mean income")
    >>> round(ledger.epsilon_spent, 3)
    0.868
    >>> ledger.spend(gaussian_event(6.0), "one too many")
    Traceback (most recent call last):
    ...
    skdpx.exceptions.BudgetError: ...
    """

    def __init__(self, epsilon=_DEFAULT_EPSILON, delta=_DEFAULT_DELTA, path=None,
                 mirror=None, *, relation="add_or_remove", accountant=_NOT_GIVEN):
        if accountant is not _NOT_GIVEN:
            if mirror is not None:
                raise TypeError("PrivacyLedger got both mirror and accountant, its deprecated "
                                "name: give mirror only.")
            warnings.warn("PrivacyLedger(accountant=...) was renamed PrivacyLedger(mirror=...); "
                          "accountant= will be removed in the next release.",
                          FutureWarning, stacklevel=2)
            mirror = accountant
        check_relation(relation)
        if isinstance(epsilon, bool) or not isinstance(epsilon, Real) or not epsilon > 0:
            raise ValueError(f"epsilon must be > 0 (np.inf for no cap), got {epsilon!r}.")
        if isinstance(delta, bool) or not isinstance(delta, Real) or not 0 <= delta <= 1:
            raise ValueError(f"delta must be in [0, 1], got {delta!r}.")
        if mirror is not None and not is_budget_accountant(mirror):
            raise TypeError(
                "mirror must be a diffprivlib BudgetAccountant (or any object with its "
                f"`check` and `spend` methods) or None, got {type(mirror).__name__}."
            )
        self._epsilon = float(epsilon)
        self._delta = float(delta)
        self._relation = relation
        self._path = None if path is None else os.fspath(path)
        self.mirror = mirror
        self._entries = []  # in memory: dicts {id, label, event, delta}
        self._next_id = 1
        self._uid = uuid.uuid4().hex
        self._pid = os.getpid()
        self._detached = False
        self._lock = threading.RLock()
        self._file_id = self._cap_digest = None  # a file ledger's identity, once opened
        self._seen = 0  # the most spends this ledger has seen in its file
        if self._path is not None:
            explicit = epsilon is not _DEFAULT_EPSILON or delta is not _DEFAULT_DELTA
            self._open_file(explicit_cap=explicit, create=explicit)
        _LIVE[self._uid] = self

    # ------------------------------------------------------------------ caps
    @property
    def epsilon(self):
        """The cap on epsilon."""
        return self._epsilon

    @property
    def delta(self):
        """The cap on delta (1.0: uncapped)."""
        return self._delta

    @property
    def relation(self):
        """The neighbouring relation of every spend in this ledger."""
        return self._relation

    @property
    def path(self):
        """The sqlite file behind the ledger, or None."""
        return self._path

    # --------------------------------------------------------------- queries
    @property
    def events(self):
        """The recorded releases: a list of (label, DpEvent), in order."""
        return [(e["label"], event_from_json(e["event"])) for e in self._read()]

    @property
    def epsilon_spent(self):
        """The total epsilon spent, composed tightly, at :attr:`delta_spent`."""
        return self._total(self._read())[0]

    @property
    def delta_spent(self):
        """The delta at which :attr:`epsilon_spent` holds."""
        return self._total(self._read())[1]

    @property
    def epsilon_remaining(self):
        """The cap minus what has been spent (composition is not additive:
        the next release may cost less than its own epsilon)."""
        return max(self._epsilon - self.epsilon_spent, 0.0)

    @property
    def accountant(self):
        """Deprecated: the old name of :attr:`mirror` (warns; removed in the next release)."""
        warnings.warn("PrivacyLedger.accountant was renamed PrivacyLedger.mirror; the old name "
                      "will be removed in the next release.", FutureWarning, stacklevel=2)
        return self.mirror

    def __len__(self):
        return len(self._read())

    def __repr__(self):
        eps, delta = self._total(self._read())
        where = "" if self._path is None else f", path={self._path!r}"
        return (
            f"PrivacyLedger(epsilon={self._epsilon:g}, delta={self._delta:g}, "
            f"relation={self._relation!r}{where}; "
            f"spent epsilon={eps:.4g} at delta={delta:.3g} in {len(self)} releases)"
        )

    # --------------------------------------------------------------- spending
    def check(self, event, *, delta=None, relation=None):
        """Raise BudgetError if recording ``event`` would exceed the cap.

        Nothing is recorded. Use :meth:`spend` to record: it checks again,
        atomically.
        """
        entry = self._new_entry(event, "check", delta, relation)
        with self._lock:
            self._check_entries(self._read() + [entry], entry)

    def spend(self, event, label, *, delta=None, relation=None):
        """Record a release, or raise BudgetError if it would exceed the cap.

        The check and the record are one atomic step, across threads and
        (for a file-backed ledger) processes. Record the spend before the
        release reads the private data: it is final, whatever happens next.

        Parameters
        ----------
        event : dp_accounting.DpEvent
        label : str
            What was released, for the record.
        delta : float, optional
            The delta this release was calibrated for; needed when the ledger
            has no delta cap and the event is not pure.
        relation : {"add_or_remove", "replace_one"}, optional
            The relation the release was calibrated for (default: the
            ledger's). Another relation than the ledger's is refused.

        Returns
        -------
        spend_id : int
            The record's id.
        """
        entry = self._new_entry(event, label, delta, relation)
        # A copy in another process (unpickled there, or inherited by fork)
        # would spend where the original never sees it.
        if self._detached or (self._path is None and self._pid != os.getpid()):
            raise LedgerDetachedError(_DETACHED_MESSAGE)
        with self._lock:
            if self._path is None:
                self._check_entries(self._entries + [entry], entry)
                entry["id"] = self._next_id
                self._next_id += 1
                self._entries.append(entry)
            else:
                # Compose what the file holds before taking its write lock: a fresh
                # process composes every recorded spend once (seconds for hundreds of
                # DP-SGD spends), and must not hold the other processes waiting
                # meanwhile. Under the lock, the same composition is then memoised, and
                # only spends appended since are composed.
                self._total(self._read() + [entry])
                with self._transaction() as con:
                    state = self._load(con)
                    self._check_entries(state["entries"] + [entry], entry)
                    cur = con.execute(
                        "INSERT INTO spends (label, event, delta, created) VALUES (?, ?, ?, ?)",
                        (entry["label"], entry["event"], entry["delta"], time.time()),
                    )
                    entry["id"] = cur.lastrowid
                    head = _chain_next(state["head"], entry["id"], entry["label"],
                                       entry["event"], entry["delta"])
                    con.executemany(
                        f"UPDATE {_INTEGRITY} SET value = ? WHERE key = ?",
                        [(head, "head"), (str(state["count"] + 1), "count")])
                # only once committed (a failed commit, on a full disk say, records nothing)
                self._seen = max(self._seen, state["count"] + 1)
            if self.mirror is not None:
                self.mirror.spend(*self._own_cost(entry))
        return entry["id"]

    @property
    def read_only(self):
        """Whether this is a read-only copy (restored from a pickle; see :meth:`resume`)."""
        return self._detached or (self._path is None and self._pid != os.getpid())

    def resume(self):
        """Make this read-only copy the ledger of record, with a warning.

        The copy holds the spends recorded when it was pickled, not those
        recorded since by the original or by other copies: resuming an
        older copy, or two copies, grants again a budget already spent.
        Do it only for the one copy that is knowingly the record (e.g. the
        original is gone for good); a file-backed ledger
        (``path=...``) is the way to persist a budget.
        """
        if self.read_only and self._path is None:
            warnings.warn(
                f"resuming a copy of an in-memory PrivacyLedger with {len(self._entries)} "
                "spends: any spend recorded since it was pickled, by the original or by another "
                "copy, is not in it and will be granted again. Persist budgets with "
                "PrivacyLedger(path=...).", PrivacyLeakWarning, stacklevel=2)
        self._detached = False
        self._pid = os.getpid()
        return self

    # ------------------------------------------------------------- internals
    def _new_entry(self, event, label, delta, relation):
        relation = self._relation if relation is None else relation
        if relation != self._relation:
            raise ValueError(
                f"this ledger composes releases calibrated for {self._relation!r} neighbours; "
                f"{label!r} was calibrated for {relation!r}. Releases under two relations do "
                "not compose: keep one ledger per relation, or recalibrate under "
                f"{self._relation!r}."
            )
        if not isinstance(event, dp_accounting.DpEvent):
            raise TypeError(f"event must be a dp_accounting DpEvent, got {type(event).__name__}.")
        if not isinstance(label, str):
            raise TypeError(f"label must be a str, got {type(label).__name__}.")
        pure = is_pure(event)
        if delta is None:
            if pure:
                delta = 0.0
            elif self._delta < 1:
                delta = self._delta
            else:
                raise ValueError(
                    "this event needs a delta: pass spend(..., delta=...) or give the ledger "
                    "a delta cap."
                )
        if not isinstance(delta, Real) or not 0 <= delta < 1:
            raise ValueError(f"delta must be in [0, 1), got {delta!r}.")
        return {"id": None, "label": label, "event": event_to_json(event), "delta": float(delta),
                "relation": relation}

    def _total(self, entries):
        """(epsilon, delta) of the composition of ``entries``."""
        if not entries:
            return 0.0, 0.0
        texts = [e["event"] for e in entries]
        eps0, pure = epsilon_of_spends(texts, 0.0)
        if pure and eps0 <= self._epsilon * (1 + _RTOL):
            return eps0, 0.0
        if self._delta < 1:
            delta = self._delta
        else:
            delta = min(1.0, math.fsum(e["delta"] for e in entries))
        return epsilon_of_spends(texts, delta)[0], delta

    def _check_entries(self, entries, new):
        eps, delta = self._total(entries)
        # written so that a NaN total is refused too
        if not (eps <= self._epsilon * (1 + _RTOL) and delta <= self._delta):
            spent, _ = self._total(entries[:-1])
            raise BudgetError(
                f"Privacy budget exceeded: recording {new['label']!r} would bring the total to "
                f"epsilon={eps:.4g} at delta={delta:.3g}, above the cap epsilon="
                f"{self._epsilon:g}, delta={self._delta:g} (spent so far: epsilon={spent:.4g})."
            )
        if self.mirror is not None:
            try:
                self.mirror.check(*self._own_cost(new))
            except BudgetError:
                raise
            except ValueError as exc:
                # diffprivlib's BudgetError (a ValueError) or alike: the
                # accountant refuses the spend; one error type for callers
                raise BudgetError(
                    f"the mirrored accountant ({type(self.mirror).__name__}) refuses "
                    f"{new['label']!r}: {exc}"
                ) from exc

    def _own_cost(self, entry):
        """(epsilon, delta) of one release alone, for a diffprivlib-like accountant."""
        return epsilon_of_spends([entry["event"]], entry["delta"])[0], entry["delta"]

    def _read(self):
        with self._lock:
            if self._path is None:
                return list(self._entries)
        return self._load()["entries"]

    # ------------------------------------------------------------ the file
    def _uri(self, mode):
        return "file:" + urllib.parse.quote(os.path.abspath(self._path)) + f"?mode={mode}"

    @contextmanager
    def _connect(self, path=None):
        """A connection to the existing ledger file (never creates one)."""
        if path is None:
            _check_path(self._path)
            if not os.path.exists(self._path):
                raise _missing(self._path)
        with _file_errors(self._path):
            # mode=rw: sqlite never creates the file (a plain connect() re-created
            # a deleted ledger empty)
            con = sqlite3.connect(self._uri("rw") if path is None else path, uri=path is None,
                                  timeout=120, isolation_level=None)
            try:
                yield con
            finally:
                con.close()

    @contextmanager
    def _transaction(self, immediate=True):
        """A transaction; immediate: one writer at a time, across processes."""
        with self._connect() as con:
            with _file_errors(self._path):
                con.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
                try:
                    yield con
                    con.execute("COMMIT")
                except BaseException:
                    # sqlite rolls back by itself on some errors (disk full): a second
                    # rollback would hide the cause under "no transaction is active"
                    if con.in_transaction:
                        try:
                            con.execute("ROLLBACK")
                        except sqlite3.Error:
                            pass
                    raise

    def _load(self, con=None):
        """The file's content, verified against its checksum and this ledger's identity."""
        if con is None:
            with self._transaction(immediate=False) as con:  # one consistent snapshot
                return self._load(con)
        state = _verify_file(con, self._path)
        self._check_identity(state)
        return state

    def _check_identity(self, state):
        """Refuse a file that is not (or no longer) the one this ledger opened."""
        path = self._path
        if state["relation"] != self._relation:
            raise ValueError(
                f"the ledger file {path!r} holds releases calibrated for {state['relation']!r} "
                f"neighbours; open it with relation={state['relation']!r}."
            )
        if self._file_id is not None and state["file_id"] != self._file_id:
            raise LedgerIntegrityError(
                f"the ledger file {path!r} is not the file this ledger opened: it was deleted "
                "and re-created, or replaced by another ledger's file, since. Its spends are not "
                "this budget's record; nothing was spent.", path)
        if self._cap_digest is not None and state["cap_digest"] != self._cap_digest:
            raise LedgerIntegrityError(
                f"the ledger file {path!r} holds the cap epsilon={state['epsilon']:g}, "
                f"delta={state['delta']:g}, not the cap epsilon={self._epsilon:g}, "
                f"delta={self._delta:g} this ledger opened it with; nothing was spent.", path)
        if state["count"] < self._seen:
            raise LedgerIntegrityError(
                f"the ledger file {path!r} holds {state['count']} spends, fewer than the "
                f"{self._seen} this ledger has already seen there: it was rolled back (an older "
                "copy put in its place) or rewritten. Nothing was spent.", path)
        self._seen = state["count"]

    def _open_file(self, explicit_cap, create):
        path = self._path
        _check_path(path)
        if not os.path.exists(path):
            if not create:
                raise _missing(path, hint=True)
            self._create_file()
        state = self._load()
        if explicit_cap and (state["epsilon"], state["delta"]) != (self._epsilon, self._delta):
            raise ValueError(
                f"the ledger file {path!r} was created with the cap "
                f"epsilon={state['epsilon']:g}, delta={state['delta']:g}; a ledger's "
                "cap cannot change. Open it with that cap, or with no cap to adopt it."
            )
        self._epsilon, self._delta = state["epsilon"], state["delta"]
        self._file_id, self._cap_digest = state["file_id"], state["cap_digest"]

    def _create_file(self):
        """Write a new, empty ledger file with this cap, atomically: built under a temporary
        name, then linked to the path (which must still not exist: a file created meanwhile
        by another process wins and is opened instead)."""
        path = self._path
        directory = os.path.dirname(os.path.abspath(path))
        try:
            fd, tmp = tempfile.mkstemp(prefix=".skdpx-ledger-", suffix=".tmp", dir=directory)
        except OSError as exc:
            raise _os_error(exc, path, "create") from exc
        os.close(fd)
        try:
            with self._connect(path=tmp) as con, _file_errors(path):
                file_id = uuid.uuid4().hex
                cap = _cap_text(self._epsilon, self._delta, self._relation)
                con.execute("BEGIN IMMEDIATE")
                con.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value REAL)")
                con.execute(
                    "CREATE TABLE spends (id INTEGER PRIMARY KEY AUTOINCREMENT, "
                    "label TEXT NOT NULL, event TEXT NOT NULL, delta REAL NOT NULL, created REAL)"
                )
                con.execute(f"CREATE TABLE {_INTEGRITY} (key TEXT PRIMARY KEY, value TEXT)")
                con.executemany(
                    "INSERT INTO meta (key, value) VALUES (?, ?)",
                    [("epsilon", self._epsilon), ("delta", self._delta),
                     ("replace_one", float(self._relation == "replace_one"))],
                )
                con.executemany(
                    f"INSERT INTO {_INTEGRITY} (key, value) VALUES (?, ?)",
                    [("format", _FORMAT), ("file_id", file_id), ("cap", _digest(cap)),
                     ("head", _chain_start(file_id, cap)), ("count", "0")],
                )
                con.execute("COMMIT")
            try:
                os.link(tmp, path)
            except FileExistsError:
                pass  # another process created it first: open theirs
            except OSError:
                # no hard links here: exclusive creation, then a copy
                try:
                    with open(path, "xb") as out, open(tmp, "rb") as src:
                        shutil.copyfileobj(src, out)
                except FileExistsError:
                    pass
                except OSError as exc:
                    raise _os_error(exc, path, "create") from exc
        finally:
            for name in (tmp, tmp + "-journal"):
                try:
                    os.unlink(name)
                except OSError:
                    pass

    # ----------------------------------------------- identity: never copied
    def __sklearn_clone__(self):
        return self

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        with self._lock:
            state = {
                "relation": self._relation,
                "uid": self._uid,
                "pid": self._pid,
                "epsilon": self._epsilon,
                "delta": self._delta,
                "path": self._path,
                "mirror": self.mirror,
                "entries": list(self._entries),
                "next_id": self._next_id,
                # a file ledger's identity: which file, which cap, how far it has seen
                "file_id": self._file_id,
                "cap_digest": self._cap_digest,
                "seen": self._seen,
            }
        return (_restore_ledger, (state,))


def _restore_ledger(state):
    """Unpickle a ledger: the live one when it exists in this process."""
    live = _LIVE.get(state["uid"])
    if live is not None:
        return live
    ledger = object.__new__(PrivacyLedger)
    ledger._epsilon = state["epsilon"]
    ledger._delta = state["delta"]
    ledger._relation = state.get("relation", "add_or_remove")
    ledger._path = state["path"]
    # "accountant": a pickle made before the keyword's rename
    ledger.mirror = state["mirror"] if "mirror" in state else state["accountant"]
    ledger._entries = state["entries"]
    ledger._next_id = state["next_id"]
    ledger._uid = state["uid"]
    ledger._pid = state["pid"]
    ledger._lock = threading.RLock()
    ledger._file_id = state.get("file_id")
    ledger._cap_digest = state.get("cap_digest")
    ledger._seen = state.get("seen", 0)
    # An in-memory copy restored from a pickle (the original is not live in
    # this process) is a read-only record: it would spend where nobody looks,
    # and an older copy would grant again what was spent since.
    ledger._detached = ledger._path is None
    if ledger._path is not None:
        # the file is the ledger of record: it must still be there (never re-created),
        # be the same file, and hold this cap and relation and at least the spends seen
        if ledger._cap_digest is None:  # pickled before the file kept a checksum
            ledger._cap_digest = _digest(
                _cap_text(ledger._epsilon, ledger._delta, ledger._relation))
        _check_path(ledger._path)
        if not os.path.exists(ledger._path):
            raise LedgerIntegrityError(
                f"the ledger file {ledger._path!r} that this pickled ledger spends from is "
                "gone; it is the budget's only record, so it is not re-created and nothing "
                "can be spent. Restore the file, or create a new budget explicitly with "
                "PrivacyLedger(path, epsilon=..., delta=...).", ledger._path)
        ledger._load()
    _LIVE[ledger._uid] = ledger
    return ledger


# ------------------------------------------------------------- file integrity
#: The table where a ledger file keeps its format, identity and checksum.
_INTEGRITY = "skdpx_ledger"
_FORMAT = "1"
_TAG = "skdpx privacy ledger v1"


def _cap_text(epsilon, delta, relation):
    return json.dumps([_TAG, float(epsilon), float(delta), relation])


def _digest(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _chain_start(file_id, cap_text):
    """The running hash of a ledger file with no spend: its identity and its cap."""
    return _digest(json.dumps([file_id, cap_text]))


def _chain_next(head, spend_id, label, event, delta):
    """The running hash once one more spend is recorded (every field that counts)."""
    return _digest(json.dumps([head, spend_id, label, event, float(delta)]))


def _check_path(path):
    if path == "":
        raise ValueError("path must name a ledger file (a sqlite file), got an empty path ''.")
    if os.path.isdir(path):
        raise IsADirectoryError(
            errno.EISDIR, "the ledger path is a directory, not a ledger file; nothing was spent",
            path)
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(
            errno.ENOENT, f"the directory {directory!r} of the ledger file does not exist; "
            "nothing was created, and nothing was spent", path)


def _missing(path, hint=False):
    if hint:
        return LedgerIntegrityError(
            f"there is no ledger file at {path!r}. A ledger file is created only with its cap, "
            f"PrivacyLedger(path={path!r}, epsilon=..., delta=...); opening one without a cap "
            "needs the file to exist (was it deleted or moved?).", path)
    return LedgerIntegrityError(
        f"the ledger file {path!r} is gone (deleted or moved since it was opened). It was "
        "the budget's only record: it is not re-created, and nothing was spent.", path)


def _os_error(exc, path, action):
    """An OSError of ours, with the path, for an OS-level failure."""
    code = getattr(exc, "errno", None)
    if code in (errno.EACCES, errno.EPERM, errno.EROFS):
        return PermissionError(code, f"cannot {action} the ledger file: permission denied "
                                     "(read-only file or directory); nothing was spent", path)
    if code == errno.ENOSPC:
        return OSError(code, f"cannot {action} the ledger file: the disk is full; nothing was "
                             "spent", path)
    return OSError(code, f"cannot {action} the ledger file ({exc}); nothing was spent", path)


@contextmanager
def _file_errors(path):
    """sqlite's errors, as clear ones that name the ledger file."""
    try:
        yield
    except sqlite3.Error as exc:
        raise _sqlite_error(exc, path) from exc


def _sqlite_error(exc, path):
    text = str(exc)
    low = text.lower()
    if "disk is full" in low or "database or disk is full" in low:
        return OSError(errno.ENOSPC, "the disk holding the ledger file is full: nothing was "
                                     "recorded, so nothing may be released", path)
    if "readonly" in low or "read-only" in low:
        return PermissionError(errno.EACCES, "the ledger file (or its directory) is read-only: "
                                             "nothing was recorded, so nothing may be released",
                               path)
    if "locked" in low or "busy" in low:
        return TimeoutError(errno.ETIMEDOUT, "the ledger file stayed locked by another "
                                             f"process ({text}); nothing was spent", path)
    if "unable to open" in low:
        if os.path.isdir(path):
            return IsADirectoryError(errno.EISDIR, "the ledger path is a directory", path)
        if not os.path.exists(path):
            return _missing(path)
        if not os.access(path, os.R_OK):
            return PermissionError(errno.EACCES, "the ledger file cannot be read", path)
        # the file is there and readable: what failed is the journal sqlite writes next
        # to it when a transaction starts
        return PermissionError(errno.EACCES, "cannot write next to the ledger file: its "
                                             "directory is read-only (sqlite writes a journal "
                                             "there); nothing was recorded, so nothing may be "
                                             "released", path)
    if "disk i/o" in low:
        return OSError(errno.EIO, f"cannot read or write the ledger file ({text}); nothing was "
                                  "spent", path)
    if isinstance(exc, (sqlite3.DatabaseError,)):
        # "file is not a database", "database disk image is malformed", "no such table"...
        return LedgerIntegrityError(
            f"the ledger file {path!r} is damaged or not a skdpx ledger (sqlite: {text}); "
            "nothing was spent.", path)
    return LedgerIntegrityError(f"the ledger file {path!r} cannot be used (sqlite: {text}); "
                                "nothing was spent.", path)


def _verify_file(con, path):
    """Read a ledger file and check it against the checksum it keeps.

    Returns the cap, relation, identity, running hash and spends; raises
    LedgerIntegrityError for an empty, foreign, older or edited file.
    """
    with _file_errors(path):
        tables = {name for (name,) in con.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()}
    if not tables:
        raise LedgerIntegrityError(
            f"the ledger file {path!r} is empty (0 bytes, or a database with nothing in it): "
            "its spends and cap are lost. It is not re-created and grants no budget; restore "
            "it from a backup. (An empty file made on purpose for a new ledger: remove it; "
            "PrivacyLedger(path, epsilon=..., delta=...) creates the file itself.)", path)
    if _INTEGRITY not in tables:
        if {"meta", "spends"} <= tables:
            raise LedgerIntegrityError(
                f"the ledger file {path!r} keeps no checksum: it was written by skdpx before "
                "ledger files kept one (issue 36), or its checksum table was removed. skdpx "
                "cannot tell that its cap and spends are intact, so it grants no budget from it.",
                path)
        raise LedgerIntegrityError(
            f"the file {path!r} is a sqlite database of another application, not a skdpx "
            "privacy ledger; nothing was written to it or spent.", path)
    with _file_errors(path):
        try:
            info = dict(con.execute(f"SELECT key, value FROM {_INTEGRITY}").fetchall())
            meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
            rows = con.execute(
                "SELECT id, label, event, delta FROM spends ORDER BY id").fetchall()
        except sqlite3.OperationalError as exc:  # a table or column missing
            raise LedgerIntegrityError(
                f"the ledger file {path!r} is damaged (sqlite: {exc}); nothing was spent.",
                path) from exc
    if info.get("format") != _FORMAT or not {"file_id", "cap", "head", "count"} <= set(info):
        raise LedgerIntegrityError(
            f"the ledger file {path!r} has an unknown format or a damaged checksum table; "
            "nothing was spent.", path)
    try:
        epsilon, delta = float(meta["epsilon"]), float(meta["delta"])
        relation = RELATIONS[int(meta.get("replace_one", 0.0))]
        count = int(info["count"])
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise LedgerIntegrityError(
            f"the ledger file {path!r} has a damaged cap; nothing was spent.", path) from exc
    cap = _cap_text(epsilon, delta, relation)
    if _digest(cap) != info["cap"]:
        raise LedgerIntegrityError(
            f"the cap in the ledger file {path!r} (epsilon={epsilon:g}, delta={delta:g}, "
            f"{relation}) does not match its checksum: it was edited outside skdpx. The file "
            "grants no budget; restore it from a backup.", path)
    head = _chain_start(info["file_id"], cap)
    entries = []
    try:
        for spend_id, label, event, spend_delta in rows:
            head = _chain_next(head, spend_id, label, event, spend_delta)
            entries.append({"id": spend_id, "label": label, "event": event,
                            "delta": float(spend_delta)})
    except (TypeError, ValueError) as exc:
        raise LedgerIntegrityError(
            f"the ledger file {path!r} holds a damaged spend; nothing was spent.", path) from exc
    if len(entries) != count or head != info["head"]:
        how = ("spends were removed from it" if len(entries) < count else
               "spends were added to it outside skdpx" if len(entries) > count else
               "a recorded spend was edited")
        raise LedgerIntegrityError(
            f"the spends in the ledger file {path!r} do not match its checksum: {how}. The "
            "file grants no budget; restore it from a backup.", path)
    for e in entries:  # parse here: a damaged event is refused, not raised on later
        if not _readable_event(e["event"]):
            raise LedgerIntegrityError(
                f"the ledger file {path!r} holds a spend that cannot be read; nothing was "
                "spent.", path)
    return {"epsilon": epsilon, "delta": delta, "relation": relation, "count": count,
            "file_id": info["file_id"], "cap_digest": info["cap"], "head": head,
            "entries": entries}


@lru_cache(maxsize=4096)
def _readable_event(text):
    try:
        event_from_json(text)
    except Exception:  # noqa: BLE001 - any parse failure is damage
        return False
    return True
