"""The FACE-style recourse graph and its shortest paths (Poyiadzi et al. 2020).

Everything here is post-processing of public points (DP cluster centres in
:class:`PrivRecourse`; raw or noisy rows for the benchmark's baselines, which
use this same code). Points are in the unit cube of the public bounds.
"""

from types import SimpleNamespace
import warnings

import numpy as np
from scipy.sparse import csr_matrix, diags
from scipy.sparse.csgraph import dijkstra

__all__ = ["RecourseGraph", "admissible_nodes", "gaussian_density", "recourse_graph"]

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


def _block_codes(points, blocks):
    """The level (argmax) of each one-hot block of each point: shape (len(points), n_blocks)."""
    points = np.asarray(points, dtype=float)
    if not len(blocks):
        return np.empty((len(points), 0), dtype=int)
    return np.stack([np.argmax(points[:, list(b)], axis=1) for b in blocks], axis=1)


def _allowed_steps(nodes, rows, immutable, increasing, decreasing, tolerance,
                   immutable_blocks=()):
    """Mask (len(rows), k) of the steps nodes[rows] -> nodes that respect the constraints."""
    ok = np.ones((len(rows), len(nodes)), dtype=bool)
    for f in immutable:
        ok &= np.abs(nodes[None, :, f] - nodes[rows, None, f]) <= tolerance
    for f in increasing:
        ok &= nodes[None, :, f] >= nodes[rows, None, f]
    for f in decreasing:
        ok &= nodes[None, :, f] <= nodes[rows, None, f]
    codes = _block_codes(nodes, immutable_blocks)
    for b in range(codes.shape[1]):  # a categorical immutable keeps its level
        ok &= codes[None, :, b] == codes[rows, None, b]
    return ok


def admissible_nodes(nodes, queries, *, immutable=(), immutable_blocks=(), increasing=(),
                     decreasing=(), tolerance=0.0):
    """Mask (n_queries, k) of the nodes each query may visit, relative to the query itself.

    A node is admissible for a query when each immutable feature is within
    ``tolerance`` of the query's, each categorical immutable (a one-hot
    block of encoded indices) has the query's level (the block's argmax),
    each increasing feature is at least the query's and each decreasing one
    at most the query's, up to ``tolerance`` (DP centres are noisy
    averages: with no slack, few are on the right side of every monotone
    feature of a query; the caller sets those features back to the query's
    value, as it does the immutables). A path through admissible nodes only
    stays within ``tolerance`` of every constraint relative to the query at
    every point (the graph's edges hold them only from one node to the
    next, so along a path an immutable could drift by ``tolerance`` per
    step, and a start node chosen near the query could be far below it).

    Parameters
    ----------
    nodes : ndarray of shape (k, d)
    queries : ndarray of shape (n, d)
    immutable, increasing, decreasing : sequence of int
        Feature indices.
    immutable_blocks : sequence of sequences of int
        The encoded indices of each immutable categorical column.
    tolerance : float, default=0.0

    Returns
    -------
    ndarray of bool of shape (n, k)
    """
    nodes = np.asarray(nodes, dtype=float)
    queries = np.asarray(queries, dtype=float)
    ok = np.ones((len(queries), len(nodes)), dtype=bool)
    for f in immutable:
        ok &= np.abs(nodes[None, :, f] - queries[:, None, f]) <= tolerance
    for f in increasing:
        ok &= nodes[None, :, f] >= queries[:, None, f] - tolerance
    for f in decreasing:
        ok &= nodes[None, :, f] <= queries[:, None, f] + tolerance
    node_codes = _block_codes(nodes, immutable_blocks)
    query_codes = _block_codes(queries, immutable_blocks)
    for b in range(node_codes.shape[1]):
        ok &= node_codes[None, :, b] == query_codes[:, None, b]
    return ok


def recourse_graph(nodes, *, distance_threshold=np.inf, immutable=(), increasing=(),
                   decreasing=(), tolerance=0.0, weights=None, bandwidth=None,
                   immutable_blocks=(), costs=None):
    """The directed graph of FACE on ``nodes``, with actionability constraints.

    An edge i -> j exists when ``||C_i - C_j||_2 < distance_threshold`` and the
    step respects the constraints: an immutable feature moves by at most
    ``tolerance`` (a categorical one, a one-hot block of
    ``immutable_blocks``, keeps its level), an increasing one does not go
    down, a decreasing one does not go up (so an edge can be one-way, as in
    the paper's Algorithm 1).
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
    immutable_blocks : sequence of sequences of int, default=()
        The encoded indices of each immutable categorical column.
    costs : ndarray of shape (d,), optional
        The cost of a unit change of each feature: distances (the edges'
        lengths and ``distance_threshold``) are taken as
        ``||costs * (C_i - C_j)||``; the density stays that of the nodes.

    Returns
    -------
    scipy.sparse.csr_matrix of shape (k, k)
    """
    nodes = np.asarray(nodes, dtype=float)
    k = len(nodes)
    scaled = nodes if costs is None else nodes * np.asarray(costs, dtype=float)
    i_all, j_all = [], []
    for start in range(0, k, _CHUNK):  # chunks of source nodes, vectorised within
        rows = np.arange(start, min(start + _CHUNK, k))
        dist = np.sqrt(np.maximum(
            np.sum(scaled[rows] ** 2, axis=1)[:, None] - 2 * scaled[rows] @ scaled.T
            + np.sum(scaled**2, axis=1)[None, :], 0))
        ok = (dist < distance_threshold) & _allowed_steps(nodes, rows, immutable, increasing,
                                                          decreasing, tolerance, immutable_blocks)
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
    length = np.linalg.norm(scaled[a] - scaled[b], axis=1)
    # a midpoint with no density at all gets the largest finite weight
    w_pair = length / np.maximum(rho, np.finfo(float).tiny)
    w_pair = np.maximum(w_pair, np.finfo(float).tiny)  # scipy drops explicit zeros
    return csr_matrix((w_pair[inverse], (i, j)), shape=(k, k))


class RecourseGraph:
    """Shortest paths to a favourable node, under constraints held from each query.

    Each query may only visit the nodes admissible relative to itself
    (:func:`admissible_nodes`: immutables within ``tolerance`` of the
    query's, categorical immutables at the query's level, increasing
    features at least, decreasing ones at most, the query's). It starts at
    its nearest admissible non-candidate node (the paper's Algorithm 2) and
    follows the shortest path, through admissible nodes only, to the nearest
    admissible candidate. Queries that share the same admissible set share
    one search: the distinct sets are stacked as disjoint copies of the
    graph (a block-diagonal sparse matrix, in chunks) and one multi-source
    Dijkstra (scipy.sparse.csgraph) from their candidates, on the reversed
    graph, gives every node of every copy its cost and next hop; the paths
    are then unrolled for all queries at once.

    Parameters
    ----------
    nodes : ndarray of shape (k, d)
    graph : sparse matrix of shape (k, k)
        From :func:`recourse_graph`.
    candidates : ndarray of int
        Indices of the nodes with the favourable outcome.
    immutable, increasing, decreasing : sequence of int, default=()
        Feature indices, held relative to each query.
    immutable_blocks : sequence of sequences of int, default=()
        The encoded indices of each immutable categorical column.
    tolerance : float, default=0.0
        How far an immutable feature of a node may be from the query's.

    Attributes
    ----------
    cost : ndarray of shape (k,)
        Each node's path cost to its nearest candidate on the whole graph,
        with no query's constraints (inf: unreachable).
    paths : ndarray of int of shape (k, max_length)
        Row v: the nodes of v's path on the whole graph, v first, padded
        with -1.
    """

    #: the block-diagonal copies of one Dijkstra call hold at most this many edges
    max_edges = 2_000_000

    def __init__(self, nodes, graph, candidates, *, immutable=(), increasing=(), decreasing=(),
                 immutable_blocks=(), tolerance=0.0):
        self.nodes = np.asarray(nodes, dtype=float)
        self.graph = csr_matrix(graph)
        self.candidates = np.asarray(candidates, dtype=int)
        self.immutable = list(immutable)
        self.increasing = list(increasing)
        self.decreasing = list(decreasing)
        self.immutable_blocks = [list(b) for b in immutable_blocks]
        self.tolerance = float(tolerance)
        k = len(self.nodes)
        self.is_candidate = np.zeros(k, dtype=bool)
        self.is_candidate[self.candidates] = True
        if len(self.candidates) == 0 or k == 0:
            self.cost = np.full(k, np.inf)
            self.paths = np.arange(k)[:, None]
            return
        cost, nxt = self._search(np.ones((1, k), dtype=bool))
        self.cost = cost[0]
        self.paths = self._unroll(nxt, np.zeros(k, dtype=int), np.arange(k))

    def admissible(self, queries):
        """Mask (n_queries, k) of the nodes each query may visit (:func:`admissible_nodes`)."""
        return admissible_nodes(self.nodes, queries, immutable=self.immutable,
                                immutable_blocks=self.immutable_blocks,
                                increasing=self.increasing, decreasing=self.decreasing,
                                tolerance=self.tolerance)

    def start_nodes(self, queries, admissible=None, candidates=None, reachable=None):
        """The nearest admissible non-candidate node of each query (-1: none).

        A query with no admissible non-candidate node, but an admissible
        candidate, starts at its nearest admissible candidate (its path is
        then that node alone). ``candidates`` (n, k): each query's own
        candidates (default: the graph's, for every query); ``reachable``
        (n, k): the non-candidates a query may start from (default: all),
        e.g. those from which one of its candidates is reachable.
        """
        queries = np.asarray(queries, dtype=float)
        out = np.full(len(queries), -1)
        k = len(self.nodes)
        if k == 0 or len(queries) == 0:
            return out
        sq_nodes = np.sum(self.nodes**2, axis=1)
        for start in range(0, len(queries), _CHUNK):
            q = queries[start:start + _CHUNK]
            ok = (self.admissible(q) if admissible is None
                  else np.asarray(admissible[start:start + _CHUNK], dtype=bool))
            cand = (self.is_candidate[None, :] if candidates is None
                    else np.asarray(candidates[start:start + _CHUNK], dtype=bool))
            reach = (True if reachable is None
                     else np.asarray(reachable[start:start + _CHUNK], dtype=bool))
            d2 = np.sum(q**2, axis=1)[:, None] - 2 * q @ self.nodes.T + sq_nodes[None, :]
            # a non-candidate first (the paper's start), else a candidate
            pools = ok & ~cand & reach, ok & cand
            best, fallback = (np.argmin(np.where(pool, d2, np.inf), axis=1) for pool in pools)
            out[start:start + _CHUNK] = np.where(pools[0].any(axis=1), best,
                                                 np.where(pools[1].any(axis=1), fallback, -1))
        return out

    def _search(self, masks, candidates=None):
        """Cost and next hop of every node to its nearest candidate within each mask.

        ``masks`` (u, k): the admissible nodes of u distinct queries;
        ``candidates`` (u, k) their candidates (default: the graph's). Returns
        ``cost`` (u, k) (inf: no admissible candidate reachable) and ``nxt``
        (u, k) (-1: a candidate, or unreachable). Edges with an end outside
        the mask are dropped; the copies are stacked block-diagonally, a
        chunk of them per Dijkstra call.
        """
        masks = np.asarray(masks, dtype=bool)
        u, k = masks.shape
        candidates = (np.broadcast_to(self.is_candidate, (u, k)) if candidates is None
                      else np.asarray(candidates, dtype=bool))
        cost = np.full((u, k), np.inf)
        nxt = np.full((u, k), -1)
        coo = self.graph.tocoo()
        i, j, w = coo.row, coo.col, coo.data
        per_call = max(1, self.max_edges // max(1, len(w)))
        for s in range(0, u, per_call):
            m = masks[s:s + per_call]
            sources = np.flatnonzero((m & candidates[s:s + per_call]).ravel())
            if len(sources) == 0:
                continue
            b, e = np.nonzero(m[:, i] & m[:, j])
            # the reversed graph (j -> i) of each copy, offset by b * k
            rev = csr_matrix((w[e], (b * k + j[e], b * k + i[e])), shape=(len(m) * k,) * 2)
            c, pred = dijkstra(rev, directed=True, indices=sources, min_only=True,
                               return_predecessors=True)[:2]
            cost[s:s + len(m)] = c.reshape(len(m), k)
            # on the reversed graph a node's predecessor is its next hop on the original one
            nxt[s:s + len(m)] = np.where(pred >= 0, pred % k, -1).reshape(len(m), k)
        return cost, nxt

    @staticmethod
    def _unroll(nxt, group, starts):
        """Node paths (rows padded with -1) from ``starts`` along ``nxt[group]``."""
        cur = np.asarray(starts, dtype=int)
        hops = [cur]
        while True:
            cur = np.where(cur >= 0, nxt[group, np.maximum(cur, 0)], -1)
            if np.all(cur < 0):
                break
            hops.append(cur)
        return np.stack(hops, axis=1)

    def search(self, queries, skip=None, *, admissible=None, candidates=None):
        """Each query's start node, path and cost, under its own constraints.

        Parameters
        ----------
        queries : ndarray of shape (n, d)
        skip : array-like of bool of shape (n,), optional
            Queries not to route (e.g. already favourable): start -1.
        admissible : ndarray of bool of shape (n, k), optional
            Each query's admissible nodes (default: :meth:`admissible`).
        candidates : ndarray of bool of shape (n, k), optional
            Each query's candidates (default: the graph's), e.g. the nodes
            whose record, once made to hold the query's constraints
            exactly, the black box gives the favourable class. Only the
            admissible ones count.

        Returns
        -------
        SimpleNamespace with
            ``starts`` (n,): the nearest admissible non-candidate node from
            which an admissible candidate is reachable (else the nearest
            admissible candidate; -1 where skipped or none):
            :meth:`start_nodes` with ``reachable``; ``reach`` (n,) whether
            a candidate is reachable from it; ``cost`` (n,) the path's cost (inf when not
            reached); ``lengths`` (n,) and ``flat``: the node paths of the
            reaching queries, concatenated (length 0 for the others);
            ``admissible`` (n, k) the mask of admissible nodes.
        """
        queries = np.asarray(queries, dtype=float)
        n, k = len(queries), len(self.nodes)
        if admissible is None:
            admissible = self.admissible(queries)
        admissible = np.asarray(admissible, dtype=bool)
        cand = (np.broadcast_to(self.is_candidate, (n, k)) if candidates is None
                else np.asarray(candidates, dtype=bool)) & admissible
        live = admissible.any(axis=1)
        if skip is not None:
            live &= ~np.asarray(skip, dtype=bool)
        live = np.flatnonzero(live & cand.any(axis=1))
        starts = np.full(n, -1)
        cost = np.full(n, np.inf)
        lengths, flat = np.zeros(n, dtype=int), np.empty(0, dtype=int)
        if len(live):
            keys, group = np.unique(np.hstack([admissible[live], cand[live]]), axis=0,
                                    return_inverse=True)
            group = np.asarray(group).ravel()
            block_cost, nxt = self._search(keys[:, :k], keys[:, k:])
            # the nearest admissible node from which a candidate is reachable
            starts[live] = self.start_nodes(queries[live], admissible[live], cand[live],
                                            reachable=np.isfinite(block_cost[group]))
            cost[live] = np.where(starts[live] >= 0,
                                  block_cost[group, np.maximum(starts[live], 0)], np.inf)
            table = self._unroll(nxt, group, np.where(np.isfinite(cost[live]),
                                                      starts[live], -1))
            ok = table >= 0
            lengths[live] = ok.sum(axis=1)
            flat = table[ok]
        reach = np.isfinite(cost)
        return SimpleNamespace(starts=starts, reach=reach, cost=cost, lengths=lengths,
                               flat=flat, admissible=admissible)

    def route(self, queries, skip=None):
        """``(starts, reach, lengths, flat)`` of :meth:`search`.

        .. deprecated:: 0.1
            Use :meth:`search` (its ``starts``, ``reach``, ``lengths`` and
            ``flat``); ``route`` is removed in the next release.
        """
        warnings.warn("RecourseGraph.route is deprecated and will be removed in the next "
                      "release: use RecourseGraph.search(queries, skip=skip), whose starts, "
                      "reach, lengths and flat it returns.", FutureWarning, stacklevel=2)
        res = self.search(queries, skip=skip)
        return res.starts, res.reach, res.lengths, res.flat

    def walk(self, starts):
        """Node paths of the start nodes on the whole graph: ``(lengths, flat)``.

        .. deprecated:: 0.1
            Read the rows of :attr:`paths` (-1 pads them); ``walk`` is
            removed in the next release.
        """
        warnings.warn("RecourseGraph.walk is deprecated and will be removed in the next "
                      "release: read the rows of RecourseGraph.paths (-1 pads them).",
                      FutureWarning, stacklevel=2)
        starts = np.asarray(starts, dtype=int)
        if len(self.paths) == 0:  # a graph with no node has no path
            return np.zeros(len(starts), dtype=int), np.empty(0, dtype=int)
        rows = self.paths[np.maximum(starts, 0)]
        rows[starts < 0] = -1
        ok = rows >= 0
        return ok.sum(axis=1), rows[ok]

    def k_best(self, starts, n_paths, admissible=None, candidates=None):
        """Up to ``n_paths`` shortest paths from each start node to distinct candidates.

        A path ends at the first candidate it reaches (a candidate's
        out-edges are not followed), as in the paper's Algorithm 2, which runs
        one Dijkstra per candidate and ranks the paths by cost: the r-th path
        here is the paper's r-th shortest. With ``admissible`` (n, k), each
        query's paths go through its admissible nodes only, to its own
        ``candidates`` (n, k) if given; one Dijkstra call per distinct pair
        of sets covers their distinct start nodes.

        Returns
        -------
        list (one per start) of lists of (cost, ndarray of node indices), best first.
        """
        starts = np.asarray(starts, dtype=int)
        k = len(self.nodes)
        out = [[] for _ in starts]
        valid = starts >= 0
        if not valid.any() or (candidates is None and len(self.candidates) == 0):
            return out
        if admissible is None:
            admissible = np.ones((len(starts), k), dtype=bool)
        admissible = np.asarray(admissible, dtype=bool)
        cand = (np.broadcast_to(self.is_candidate, (len(starts), k)) if candidates is None
                else np.asarray(candidates, dtype=bool)) & admissible
        keys, group = np.unique(np.hstack([admissible[valid], cand[valid]]), axis=0,
                                return_inverse=True)
        group = np.asarray(group).ravel()
        queries = np.flatnonzero(valid)
        for g, key in enumerate(keys):
            mask, is_cand = key[:k], key[k:]
            # inadmissible nodes and a candidate's out-edges removed: paths end at
            # their first candidate
            sub = diags((mask & ~is_cand).astype(float)) @ self.graph @ diags(mask.astype(float))
            sub.eliminate_zeros()
            mine = queries[group == g]
            unique, inverse = np.unique(starts[mine], return_inverse=True)
            dist, pred = dijkstra(sub, directed=True, indices=unique, return_predecessors=True)
            cands = np.flatnonzero(is_cand)
            for q, u in zip(mine, np.asarray(inverse).ravel()):
                d = dist[u, cands]
                for c in cands[np.argsort(d, kind="stable")[:n_paths]]:
                    if not np.isfinite(dist[u, c]):
                        break
                    path = [c]
                    while path[-1] != unique[u]:
                        path.append(pred[u, path[-1]])
                    out[q].append((float(dist[u, c]), np.array(path[::-1])))
        return out
