"""The FACE-style recourse graph and its shortest paths (Poyiadzi et al. 2020).

Everything here is post-processing of public points (DP cluster centres in
:class:`PrivRecourse`; raw or noisy rows for the benchmark's baselines, which
use this same code). Points are in the unit cube of the public bounds.
"""

import numpy as np
from scipy.sparse import csr_matrix, diags
from scipy.sparse.csgraph import dijkstra

__all__ = ["RecourseGraph", "gaussian_density", "recourse_graph"]

#: queries are matched to nodes in chunks of this many rows
_CHUNK = 2048


def gaussian_density(points, nodes, weights=None, bandwidth=None, chunk=4096):
    """Gaussian kernel density of ``nodes`` (optionally weighted) at ``points``.

    Parameters
    ----------
    points : ndarray of shape (m, d)
    nodes : ndarray of shape (k, d)
    weights : ndarray of shape (k,), optional
        Non-negative weights (e.g. the clusters' noisy counts, clipped at 0).
    bandwidth : float, optional
        Scott's rule by default: ``k_eff ** (-1 / (d + 4))`` times the mean
        per-feature standard deviation of the nodes (``k_eff`` is Kish's
        effective sample size of the weights).

    Returns
    -------
    ndarray of shape (m,)
        The density (not its log), vectorised in chunks of ``chunk`` points.
    """
    k, d = nodes.shape
    if k == 0 or len(points) == 0:
        return np.zeros(len(points))
    w = np.ones(k) if weights is None else np.clip(np.asarray(weights, dtype=float), 0, None)
    if w.sum() <= 0:
        w = np.ones(k)
    w = w / w.sum()
    if bandwidth is None:
        k_eff = 1.0 / np.sum(w**2)
        mean = w @ nodes
        spread = np.sqrt(np.mean(w @ (nodes - mean) ** 2))
        bandwidth = max(spread, 1e-3) * k_eff ** (-1.0 / (d + 4))
    norm = (2 * np.pi * bandwidth**2) ** (-d / 2)
    sq_nodes = np.sum(nodes**2, axis=1)
    out = np.empty(len(points))
    for start in range(0, len(points), chunk):
        p = points[start:start + chunk]
        sq = np.sum(p**2, axis=1)[:, None] - 2 * p @ nodes.T + sq_nodes[None, :]
        out[start:start + chunk] = np.exp(-np.maximum(sq, 0) / (2 * bandwidth**2)) @ w
    return norm * out


def _allowed_steps(nodes, rows, immutable, increasing, decreasing, tolerance):
    """Mask (len(rows), k) of the steps nodes[rows] -> nodes that respect the constraints."""
    ok = np.ones((len(rows), len(nodes)), dtype=bool)
    for f in immutable:
        ok &= np.abs(nodes[None, :, f] - nodes[rows, None, f]) <= tolerance
    for f in increasing:
        ok &= nodes[None, :, f] >= nodes[rows, None, f]
    for f in decreasing:
        ok &= nodes[None, :, f] <= nodes[rows, None, f]
    return ok


def recourse_graph(nodes, *, distance_threshold=np.inf, immutable=(), increasing=(),
                   decreasing=(), tolerance=0.0, weights=None, bandwidth=None):
    """The directed graph of FACE on ``nodes``, with actionability constraints.

    An edge i -> j exists when ``||C_i - C_j||_2 < distance_threshold`` and the
    step respects the constraints: an immutable feature moves by at most
    ``tolerance``, an increasing one does not go down, a decreasing one does
    not go up (so an edge can be one-way, as in the paper's Algorithm 1).
    Its weight is ``||C_i - C_j|| / rho((C_i + C_j) / 2)`` with ``rho`` the
    Gaussian density of the nodes (:func:`gaussian_density`), so paths
    prefer dense regions.

    Parameters
    ----------
    nodes : ndarray of shape (k, d)
    distance_threshold : float, default=inf
    immutable, increasing, decreasing : sequence of int
        Feature indices.
    tolerance : float, default=0.0
    weights, bandwidth
        Of the density, see :func:`gaussian_density`.

    Returns
    -------
    scipy.sparse.csr_matrix of shape (k, k)
    """
    nodes = np.asarray(nodes, dtype=float)
    k = len(nodes)
    i_all, j_all = [], []
    for start in range(0, k, _CHUNK):  # chunks of source nodes, vectorised within
        rows = np.arange(start, min(start + _CHUNK, k))
        dist = np.sqrt(np.maximum(
            np.sum(nodes[rows] ** 2, axis=1)[:, None] - 2 * nodes[rows] @ nodes.T
            + np.sum(nodes**2, axis=1)[None, :], 0))
        ok = (dist < distance_threshold) & _allowed_steps(nodes, rows, immutable, increasing,
                                                          decreasing, tolerance)
        ok[np.arange(len(rows)), rows] = False
        i, j = np.nonzero(ok)
        i_all.append(rows[i])
        j_all.append(j)
    i = np.concatenate(i_all) if i_all else np.empty(0, int)
    j = np.concatenate(j_all) if j_all else np.empty(0, int)
    # the density at each unordered pair's midpoint, once per pair
    lo, hi = np.minimum(i, j), np.maximum(i, j)
    pairs, inverse = np.unique(lo * k + hi, return_inverse=True)
    a, b = np.divmod(pairs, k)
    rho = gaussian_density((nodes[a] + nodes[b]) / 2, nodes, weights, bandwidth)
    length = np.linalg.norm(nodes[a] - nodes[b], axis=1)
    # a midpoint with no density at all gets the largest finite weight
    w_pair = length / np.maximum(rho, np.finfo(float).tiny)
    w_pair = np.maximum(w_pair, np.finfo(float).tiny)  # scipy drops explicit zeros
    return csr_matrix((w_pair[inverse], (i, j)), shape=(k, k))


class RecourseGraph:
    """Shortest paths from every node to its nearest candidate, precomputed.

    One multi-source Dijkstra on the reversed graph (scipy.sparse.csgraph)
    gives each node's distance to the nearest candidate and its next hop
    there; the node paths are then unrolled into a table, so that a query
    costs a nearest-node lookup and a row of that table.

    Parameters
    ----------
    nodes : ndarray of shape (k, d)
    graph : sparse matrix of shape (k, k)
        From :func:`recourse_graph`.
    candidates : ndarray of int
        Indices of the nodes with the favourable outcome.
    immutable : sequence of int, default=()
    tolerance : float, default=0.0
        A query starts at the nearest non-candidate node whose immutable
        features are within ``tolerance`` of the query's.

    Attributes
    ----------
    cost : ndarray of shape (k,)
        Each node's path cost to its nearest candidate (inf: unreachable).
    paths : ndarray of int of shape (k, max_length)
        Row v: the nodes of v's path, v first, padded with -1.
    """

    def __init__(self, nodes, graph, candidates, *, immutable=(), tolerance=0.0):
        self.nodes = np.asarray(nodes, dtype=float)
        self.graph = csr_matrix(graph)
        self.candidates = np.asarray(candidates, dtype=int)
        self.immutable = list(immutable)
        self.tolerance = float(tolerance)
        k = len(self.nodes)
        self.is_candidate = np.zeros(k, dtype=bool)
        self.is_candidate[self.candidates] = True
        if len(self.candidates) == 0 or k == 0:
            self.cost = np.full(k, np.inf)
            self.paths = np.arange(k)[:, None]
            return
        cost, pred, _ = dijkstra(self.graph.T, directed=True, indices=self.candidates,
                                 min_only=True, return_predecessors=True)
        self.cost = cost
        # on the reversed graph a node's predecessor is its next hop on the original one
        hops, cur = [np.arange(k)], np.arange(k)
        while True:
            nxt = np.where(cur >= 0, pred[np.maximum(cur, 0)], -1)
            nxt[nxt < 0] = -1
            if np.all(nxt < 0):
                break
            hops.append(nxt)
            cur = nxt
        # an unreachable node (and a candidate) has no next hop: its row is [v, -1, ...]
        self.paths = np.stack(hops, axis=1)

    def start_nodes(self, queries):
        """The nearest non-candidate node of each query that respects its immutables (-1: none)."""
        queries = np.asarray(queries, dtype=float)
        pool = np.flatnonzero(~self.is_candidate)
        out = np.full(len(queries), -1)
        if len(pool) == 0:
            return out
        nodes = self.nodes[pool]
        sq_nodes = np.sum(nodes**2, axis=1)
        for start in range(0, len(queries), _CHUNK):
            q = queries[start:start + _CHUNK]
            d2 = np.sum(q**2, axis=1)[:, None] - 2 * q @ nodes.T + sq_nodes[None, :]
            for f in self.immutable:
                d2[np.abs(nodes[None, :, f] - q[:, None, f]) > self.tolerance] = np.inf
            best = np.argmin(d2, axis=1)
            found = np.isfinite(d2[np.arange(len(q)), best])
            out[start:start + _CHUNK] = np.where(found, pool[best], -1)
        return out

    def route(self, queries, skip=None):
        """Each query's start node and path: ``(starts, reach, lengths, flat)``.

        ``starts`` from :meth:`start_nodes` (-1 where ``skip`` is True or no
        node qualifies); ``reach`` whether a candidate is reachable from it;
        ``lengths`` and ``flat`` the node paths of the reaching queries as
        :meth:`walk` gives them (length 0 for the others).
        """
        starts = self.start_nodes(queries)
        if skip is not None:
            starts[np.asarray(skip, dtype=bool)] = -1
        reach = starts >= 0
        reach[reach] = np.isfinite(self.cost[starts[reach]])
        lengths, flat = self.walk(np.where(reach, starts, -1))
        return starts, reach, lengths, flat

    def walk(self, starts):
        """Node paths of the start nodes: (lengths (n,), node indices concatenated)."""
        starts = np.asarray(starts, dtype=int)
        if len(self.paths) == 0:  # a graph with no node has no path
            return np.zeros(len(starts), dtype=int), np.empty(0, dtype=int)
        rows = self.paths[np.maximum(starts, 0)]
        rows[starts < 0] = -1
        ok = rows >= 0
        return ok.sum(axis=1), rows[ok]

    def k_best(self, starts, n_paths):
        """Up to ``n_paths`` shortest paths from each start node to distinct candidates.

        A path ends at the first candidate it reaches (a candidate's
        out-edges are not followed), as in the paper's Algorithm 2, which runs
        one Dijkstra per candidate and ranks the paths by cost: the r-th path
        here is the paper's r-th shortest. One Dijkstra call covers all the
        distinct start nodes.

        Returns
        -------
        list (one per start) of lists of (cost, ndarray of node indices), best first.
        """
        starts = np.asarray(starts, dtype=int)
        out = [[] for _ in starts]
        valid = starts >= 0
        if not valid.any() or len(self.candidates) == 0:
            return out
        unique, inverse = np.unique(starts[valid], return_inverse=True)
        # a candidate's out-edges removed: paths end at their first candidate
        sink = diags((~self.is_candidate).astype(float)) @ self.graph
        sink.eliminate_zeros()
        dist, pred = dijkstra(sink, directed=True, indices=unique, return_predecessors=True)
        for q, u in zip(np.flatnonzero(valid), inverse):
            d = dist[u, self.candidates]
            for c in self.candidates[np.argsort(d, kind="stable")[:n_paths]]:
                if not np.isfinite(dist[u, c]):
                    break
                path = [c]
                while path[-1] != unique[u]:
                    path.append(pred[u, path[-1]])
                out[q].append((float(dist[u, c]), np.array(path[::-1])))
        return out
