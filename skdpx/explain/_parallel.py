"""Where DPLime reads its private rows: in this process, in joblib workers, or in Dask workers.

The explainer (:class:`~skdpx.explain.DPLimeExplainer`) holds its rows as one
numpy array, read in blocks (``prepare`` fills, clips and scales each block as
it is read: :class:`~skdpx.utils._validation.UnitCubeRows`), or as dask arrays
persisted in a cluster. Every function here gets the rows, their labels, the
weight function, the public count ``m`` and what it needs of the public
calibration as arguments (never the explainer, which holds the rows), so that
it can be sent to a worker. Nothing here spends: every caller has committed
the spend of the releases computed from what it returns; the only noise drawn
here is a "basic" piece's, drawn by the privacy core from the share of the
commitment it was sent with (:func:`_basic_piece`).
"""

from contextlib import contextmanager

from joblib import effective_n_jobs
import numpy as np
from sklearn.utils.parallel import Parallel, delayed

from ..privacy import gaussian_event
from ..utils._engine import is_distributed, map_blocks, partition_sum, rows_like
from ._dpgd import dpgd_explain
from ._local_loss import blocked_sums
from ._outputs import private_row_labels, row_labels

#: "adaptive" and "enhanced" compute a query's local loss over parallel blocks
#: of rows (``n_jobs``) only with at least this much work per block (rows x d^2,
#: the cost of its H): one query's round trip to the workers costs about
#: 10-25 ms, about what a block of 5e7 costs (a 2-core machine, loky), so from
#: 2e8 (m = 500,000 at d = 20, 80,000 at d = 50) two blocks save more than that
_MIN_BLOCK_WORK = 1e8


def _piece_forms(Z, columns, offsets, X, labels, weight, m, prepare=None):
    """The local-loss forms (H, g) of queries ``Z`` over the rows ``X``, divided by m.

    ``m`` is the public planning count of the rows (their DP count under
    add-or-remove, never ``len(X)``); ``X`` may be a block of the private
    rows: the forms of the blocks add up to the forms over all rows. Reads
    private rows and draws no noise. ``prepare`` makes each block of ``X``
    read ready (see :func:`_batch_sums`).
    """
    H, g, _ = _batch_sums(X, labels, queries=Z, columns=columns, weight=weight, offset=offsets,
                          prepare=prepare)
    return H / m, g / m


def _basic_piece(Z, columns, offsets, X, labels, weight, *, key, share, n_iter, m, prepare=None,
                 **descent):
    """One parallel piece of a "basic" batch: Algorithm 1 for its queries, in a worker.

    The spend of the whole batch was committed by the explainer's process
    before this piece was sent: ``share`` (a :class:`~skdpx.privacy.Commitment`
    part) pays for exactly this piece's ``n_iter * len(Z)`` noisy gradients,
    and no ledger is touched here. ``key`` opens the piece's own noise
    source (fresh OS entropy in this worker, or the piece's spawned stream
    of a seed); the noise is drawn by the privacy core
    (:func:`~skdpx.privacy.noisy_gradient`, through :func:`dpgd_explain`).
    ``descent``: the public calibration of the descent (``noise_multiplier``,
    ``sensitivity``, ``radius``, ``smoothness``).
    """
    H, g = _piece_forms(Z, columns, offsets, X, labels, weight, m, prepare)
    with key.open() as noise:  # closed (its key wiped) when the piece ends
        return dpgd_explain(H, g, n_iter=n_iter, noise=noise, commitment=share.open(),
                            with_std=True, **descent)


def local_forms(Z, columns, offsets, X, labels, *, weight, m, prepare=None):
    """The quadratic forms (H, g) of each query's local loss, over all the rows.

    Rows held as dask arrays (a fit on Dask data): one pass over the
    workers' partitions for the whole batch, every class column of it at
    once; the workers return the sums, divided by m here. Rows in memory:
    read here, block by block (``prepare``).
    """
    if is_distributed(X):
        H, g, _ = partition_sum(
            _batch_sums, X, labels, queries=np.asarray(Z, dtype=float),
            columns=np.asarray(columns), offset=offsets, weight=weight)
        return H / m, g / m
    # Z and the rows were validated (finite) and scaled already
    return _piece_forms(Z, columns, offsets, X, labels, weight, m, prepare)


def n_workers(X, k, n_jobs):
    """How many parallel pieces ``k`` queries (or row blocks) are split into (1: none)."""
    if k < 2 or not isinstance(X, np.ndarray):
        return 1  # nothing to split, or rows that are not one in-memory array
    return max(1, min(int(k), effective_n_jobs(n_jobs)))


def dpgd_pieces(Z, columns, offsets, X, labels, *, weight, m, prepare, noise, commitment,
                n_pieces, n_jobs, n_iter, **descent):
    """Algorithm 1 for the queries ``Z`` in ``n_pieces`` parallel pieces, each with its own noise.

    ``commitment`` (the batch's spend, recorded already) is shared out
    here, piece by piece, before any piece is sent; the keys of the
    pieces' noise streams are made here too (see ``n_jobs`` of
    :class:`~skdpx.explain.DPLimeExplainer`). ``descent``: as
    :func:`_basic_piece`'s. Returns the answers and their noise's standard
    deviations (:func:`~skdpx.explain._dpgd.dpgd_explain`, ``with_std``).
    """
    parts = np.array_split(np.arange(len(Z)), n_pieces)
    keys = noise.stream_keys(n_pieces)
    shares = [commitment.share(gaussian_event(descent["noise_multiplier"]), n_iter * len(p))
              for p in parts]
    if offsets is None:
        offsets = np.zeros(len(Z))
    out = Parallel(n_jobs=n_jobs)(
        delayed(_basic_piece)(
            Z[p], columns[p], offsets[p], X, labels, weight, key=key, share=share,
            n_iter=n_iter, m=m, prepare=prepare, **descent)
        for p, key, share in zip(parts, keys, shares))
    phi, std = zip(*out)
    return np.concatenate(phi, axis=0), np.concatenate(std, axis=0)


@contextmanager
def forms_in_blocks(X, labels, *, weight, m, prepare, n_jobs, forms):
    """A function computing ``forms``, over parallel blocks of rows with ``n_jobs``.

    The forms are sums over the rows: each worker computes those of a
    block of rows (no noise), and they are added here. One joblib pool
    (and one transfer of the rows) serves the whole call. ``forms`` (the
    explainer's, over all the rows in this process) is yielded as it is
    when the rows are too few to pay for the round trips, or not one
    in-memory array.
    """
    n_blocks = 1
    if isinstance(X, np.ndarray):
        n_rows, d = X.shape
        n_blocks = min(n_workers(X, int(n_rows * d * d // _MIN_BLOCK_WORK), n_jobs), n_rows)
    if n_blocks == 1:
        yield forms
        return
    blocks = np.array_split(np.arange(n_rows), n_blocks)
    X_blocks = [X[b[0]:b[-1] + 1] for b in blocks]
    label_blocks = [labels[b[0]:b[-1] + 1] for b in blocks]
    with Parallel(n_jobs=n_jobs) as parallel:
        def block_forms(Z, columns, offsets):
            parts = parallel(delayed(_piece_forms)(Z, columns, offsets, Xb, yb, weight, m, prepare)
                             for Xb, yb in zip(X_blocks, label_blocks))
            return sum(p[0] for p in parts), sum(p[1] for p in parts)

        yield block_forms


# ------------------------------------------------------------------ Dask
# Module-level functions: what a dask X's workers run (picklable; never the
# explainer itself, which holds the persisted rows).


def _block_labels(block, *, explained, estimator, schema):
    """The black box's labels of one block of encoded rows (in a worker): (b, K).

    ``explained``: the kind of output, the classes and the public range. A
    row the black box fails on gets the neutral labels, as in memory
    (:func:`~skdpx.explain._outputs.private_row_labels`).
    """
    kind, classes, bounds = explained
    if len(block) == 0:  # a black box may refuse 0 rows
        return np.empty((0, 1 if classes is None else len(classes)))
    return private_row_labels(kind, classes, bounds, estimator,
                              lambda idx: schema.decode(block[idx]), len(block))


def _block_given_labels(y, *, bounds):
    """``estimator=None``: the given labels of one block, clipped and mapped (b, 1)."""
    return row_labels("labels", None, bounds, None, None, y)


def _batch_sums(X, labels, *, queries, columns, weight, offset, prepare=None):
    """The local loss's sums over one block of rows for a batch of queries (in a worker).

    Query ``i`` uses the label column ``columns[i]`` (minus ``offset[i]``);
    every column of the batch is summed in this one pass over the block,
    in sub-blocks of queries x rows of bounded memory as in memory
    (:func:`~skdpx.explain._local_loss.local_loss_terms`). Not divided by m.
    ``prepare`` (in memory: :class:`~skdpx.utils._validation.UnitCubeRows`)
    makes each sub-block of rows ready (filled, clipped, scaled) as it is
    read: the explainer keeps the rows as they were given, never a scaled
    copy of them.
    """
    n, d = queries.shape
    H, g, s = np.zeros((n, d, d)), np.zeros((n, d)), np.zeros(n)
    for col in np.unique(columns):
        rows = np.flatnonzero(columns == col)
        H[rows], g[rows], s[rows] = blocked_sums(
            queries[rows], X, labels[:, col], weight=weight,
            offset=None if offset is None else offset[rows], prepare=prepare)
    return H, g, s


def engine_labels(X, y, output, *, estimator, schema):
    """The rows' labels (m, K), lazily, on the engine that holds ``X`` (same rows).

    The black box runs on each partition's rows in the workers or
    executors (it is shipped there); given labels (``estimator=None``) are
    mapped there too.
    """
    kind, classes, bounds = output
    if kind == "labels":
        return map_blocks(_block_given_labels, rows_like(y, X), n_columns=1, bounds=bounds)
    n_columns = 1 if classes is None else len(classes)
    return map_blocks(_block_labels, X, n_columns=n_columns, explained=output,
                      estimator=estimator, schema=schema)
