"""DPLime's local loss from per-cell sums: a query's cost that does not grow with m.

The exact local loss reads every row at every query (``O(m d^2)``). Here the
rows are read once, at ``fit``: each row goes to a *cell* -- its nearest
anchor ``a_j`` (public: DP k-means centres released by the privacy core) and
the shell ``rho_{s-1} < ||x - a_j|| <= rho_s`` around it (public radii,
:func:`shell_radii`) -- and the cell's sums are kept: its count, ``sum x``,
``sum x x'``, and per label column ``sum y`` and ``sum y x``. At a query z
every row of cell (j, s) gets the weight

    ``alpha(||a_j - z|| + rho_s)``,

a function of the public anchor, the public radius and z only, so the
local loss's moments are weighted sums of the cells' sums: ``O(C d^2)`` per
query for C cells, whatever m.

Why the guarantee is unchanged: by the triangle inequality a row of the
cell is at distance ``r = ||x - z|| <= ||a_j - z|| + rho_s = R`` from z;
alpha is non-increasing and ``alpha(R) <= c / (2 R (k R + 1))``, so
``alpha(R) r (k r + 1) <= c / 2``: the row's weight is in the family F(c)
*for that row*, and at most 1. Each row's contribution to the gradient is
bounded as in the exact loss (``c / m`` under add-or-remove, ``(c + 2 r*) /
m`` under replace-one: the proofs use only those two bounds), and adding
or removing a row adds or removes its own term in its own cell (the cell
is a function of the row and public values). The smoothness bound holds
too (``alpha r^2 <= alpha r (k r + 1) / k``). The proof is on
doc/dplime_analysis.rst ("Per-cell sums").

What changes is the loss: each row's weight is that of a point at most
``2 rho_s`` farther than it (``alpha(R) <= alpha(r)``). How much the answer's
local loss moves (measured against the exact path) is on the same page.
"""

import numpy as np

from ..privacy._kmeans import nearest
from ._local_loss import _distances

__all__ = ["CellSums", "cell_sums", "cell_table", "shell_radii"]

#: the first shell's outer radius and the ratio of consecutive radii (scaled units)
_FIRST_RADIUS = 0.05
_RATIO = 1.3


def shell_radii(n_features):
    """The public outer radii of the shells around each anchor, in the unit cube.

    ``0.05 * 1.3^s`` up to the cube's diagonal ``sqrt(d)``, which is the
    last: every row of [0, 1]^d is within it of any anchor in the cube.
    """
    top = float(np.sqrt(n_features))
    n = int(np.ceil(np.log(top / _FIRST_RADIUS) / np.log(_RATIO))) if top > _FIRST_RADIUS else 0
    radii = _FIRST_RADIUS * _RATIO ** np.arange(n)
    return np.append(radii[radii < top], top)


def cell_table(X01, labels, *, anchors, radii):
    """The exact sums of every cell over one block of rows (dense over the cells).

    Cell ``j * S + s`` holds the rows nearest anchor j with
    ``radii[s - 1] < ||x - a_j|| <= radii[s]``. Returns ``(n, S1, S2, Y, YX)``
    of shapes (C,), (C, d), (C, d, d), (C, K), (C, K, d) for C = J S cells
    and K label columns: sums over rows, which add up over any split of the
    rows (:func:`~skdpx.utils._dask.partition_sum`).
    """
    X01 = np.asarray(X01, dtype=float)
    labels = np.asarray(labels, dtype=float).reshape(len(X01), -1)
    J, S = len(anchors), len(radii)
    d, K = X01.shape[1], labels.shape[1]
    C = J * S
    n, S1 = np.zeros(C), np.zeros((C, d))
    S2, Y, YX = np.zeros((C, d, d)), np.zeros((C, K)), np.zeros((C, K, d))
    if len(X01) == 0:
        return n, S1, S2, Y, YX
    near = nearest(X01, anchors)
    dist = np.linalg.norm(X01 - anchors[near], axis=1)
    shell = np.minimum(np.searchsorted(radii, dist, side="left"), S - 1)
    cell = near * S + shell
    order = np.argsort(cell, kind="stable")
    ids, starts = np.unique(cell[order], return_index=True)
    ends = np.append(starts[1:], len(order))
    # a loop over the block's non-empty cells (at most C), never over rows
    for k, a, b in zip(ids, starts, ends):
        rows = order[a:b]
        Xk, yk = X01[rows], labels[rows]
        n[k] = b - a
        S1[k] = Xk.sum(axis=0)
        S2[k] = Xk.T @ Xk
        Y[k] = yk.sum(axis=0)
        YX[k] = yk.T @ Xk
    return n, S1, S2, Y, YX


class CellSums:
    """The per-cell sums of a fit's rows (private: never released; ``release()`` drops
    them, and a pickle of the curator, which holds them, warns).

    Only the non-empty cells are kept. ``anchors`` (J, d) and ``radii`` (S,)
    are public; ``anchor`` and ``rho`` give each kept cell's anchor index
    and outer radius.
    """

    def __init__(self, anchors, radii, table):
        n, S1, S2, Y, YX = table
        keep = np.flatnonzero(n > 0)
        S = len(radii)
        self.anchors, self.radii = np.asarray(anchors, dtype=float), np.asarray(radii)
        self.anchor, self.rho = keep // S, self.radii[keep % S]
        d = S1.shape[1]
        self.n, self.S1, self.Y = n[keep], S1[keep], Y[keep]
        self.S2 = S2[keep].reshape(len(keep), d * d)
        self.YX = YX[keep]

    @property
    def n_cells(self):
        return len(self.n)

    def weights(self, Z, weight):
        """(q, C): every cell's weight ``alpha(||a_j - z|| + rho_s)`` at each query."""
        dist = _distances(np.asarray(Z, dtype=float), self.anchors)  # (q, J)
        return weight(dist[:, self.anchor] + self.rho[None, :])

    def forms(self, Z, columns, offsets, *, weight, m):
        """The local loss's (H, g) at each query, divided by ``m`` (as the exact path's).

        Query i explains label column ``columns[i]`` minus ``offsets[i]``.
        """
        Z = np.asarray(Z, dtype=float)
        q, d = Z.shape
        A = self.weights(Z, weight)  # (q, C)
        Sxx = (A @ self.S2).reshape(q, d, d)
        Sx, s0 = A @ self.S1, A @ self.n
        outer = np.einsum("qi,qj->qij", Sx, Z)
        H = Sxx - outer - np.swapaxes(outer, 1, 2) + s0[:, None, None] * np.einsum(
            "qi,qj->qij", Z, Z)
        cols = np.broadcast_to(np.asarray(columns, dtype=int), (q,))
        # sum a y x and sum a y at each query, for its own label column
        g = np.empty((q, d))
        for col in np.unique(cols):
            rows = np.flatnonzero(cols == col)
            g[rows] = A[rows] @ self.YX[:, col, :] - (A[rows] @ self.Y[:, col])[:, None] * Z[rows]
        if offsets is not None:
            o = np.broadcast_to(np.asarray(offsets, dtype=float), (q,))
            g -= o[:, None] * (Sx - s0[:, None] * Z)
        return H / m, g / m


def cell_sums(X, labels, *, anchors, radii, prepare=None):
    """:class:`CellSums` of all the rows: one pass (blocks in memory, partitions on Dask)."""
    from ..utils._engine import partition_sum

    table = partition_sum(cell_table, X, labels, prepare=prepare, anchors=anchors, radii=radii)
    return CellSums(anchors, radii, table)
