"""FACE-style recourse over the data rows (not private): a benchmark baseline.

Poyiadzi, Sokol, Santos-Rodriguez, De Bie & Flach, "FACE: Feasible and
Actionable Counterfactual Explanations" (AIES 2020). The recourse path of a
query runs through a graph whose nodes are the data rows themselves, to the
nearest-by-path row that the black box predicts favourable with enough
confidence: every node of a released path is a real data row, released
verbatim. It is the non-private reference of :class:`skdpx.PrivRecourse`
(whose nodes are DP cluster centres), and it returns the same kind of result
(:class:`skdpx.RecoursePaths`: ``paths`` query first, ``counterfactuals``),
so the ``"recourse_distance"`` membership signal applies to both.

The graph is the paper's k-NN variant with distance weights: an edge between
two rows when one is among the other's ``n_neighbors`` nearest (symmetrised),
optionally cut at ``radius`` (the epsilon-graph variant), weighted by the
Euclidean distance (the paper also weights by a density estimate; not done
here). A query joins the graph through edges to its ``n_neighbors`` nearest
rows. All shortest paths to the favourable rows come from one multi-source
Dijkstra run (scipy.sparse.csgraph), done once at ``fit``.

Not part of skdpx (benchmarks only).
"""

import numpy as np
from sklearn.base import BaseEstimator
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import dijkstra
from sklearn.neighbors import NearestNeighbors, kneighbors_graph

from skdpx import RecoursePaths

__all__ = ["FaceRecourse"]

#: added to every edge weight: scipy's sparse graphs drop explicit zeros, which
#: would disconnect duplicate rows
_TINY = 1e-12


class FaceRecourse(BaseEstimator):
    """FACE recourse paths through the (private) data rows.

    Parameters
    ----------
    estimator : fitted classifier with predict_proba and classes_
        The black box.
    n_neighbors : int, default=10
        Neighbours of each row (and of each query) in the graph.
    radius : float or None, default=None
        Longest edge kept (None: no cut).
    favorable_class : label, default=1
        The class the recourse should reach.
    threshold : float, default=0.6
        A row is a possible end point when the black box gives it the
        favourable class with at least this probability.
    """

    def __init__(self, estimator, *, n_neighbors=10, radius=None, favorable_class=1,
                 threshold=0.6):
        self.estimator = estimator
        self.n_neighbors = n_neighbors
        self.radius = radius
        self.favorable_class = favorable_class
        self.threshold = threshold

    def fit(self, X, y=None):
        """Build the graph over the rows of X and the shortest paths to favourable rows."""
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[0] < 2 or not np.all(np.isfinite(X)):
            raise ValueError("X must be a finite 2-D array of at least 2 rows.")
        classes = np.asarray(self.estimator.classes_)
        hits = np.flatnonzero(classes == self.favorable_class)
        if hits.size != 1:
            raise ValueError(f"favorable_class {self.favorable_class!r} is not a class of the "
                             f"black box {classes.tolist()}.")
        k = min(int(self.n_neighbors), X.shape[0] - 1)
        A = kneighbors_graph(X, k, mode="distance", include_self=False).tocoo()
        weights = A.data + _TINY
        keep = np.ones_like(weights, dtype=bool) if self.radius is None else A.data <= self.radius
        n = X.shape[0]
        G = csr_matrix((weights[keep], (A.row[keep], A.col[keep])), shape=(n, n))
        G = G.maximum(G.T)  # symmetric: an edge when either row is among the other's neighbours
        proba = self.estimator.predict_proba(X)[:, hits[0]]
        self.candidates_ = np.flatnonzero(proba >= self.threshold)
        self.X_ = X
        self.graph_ = G
        self.nn_ = NearestNeighbors(n_neighbors=k).fit(X)
        if self.candidates_.size:
            # distance of every row to its nearest favourable row, and the next hop towards it
            self.dist_, pred, self.source_ = dijkstra(
                G, directed=False, indices=self.candidates_, min_only=True,
                return_predecessors=True)
            self.pred_ = pred
        else:
            self.dist_ = np.full(n, np.inf)
            self.pred_ = np.full(n, -9999)
            self.source_ = np.full(n, -9999)
        return self

    def explain(self, X):
        """One path per query: the query, then the data rows to a favourable row.

        Returns
        -------
        RecoursePaths
            ``paths[i]`` is the query followed by the rows of the path (just
            the query when no favourable row is reachable; then ``success`` is
            False and the counterfactual a row of NaN); ``cost`` the path's
            length. A query equal to a data row starts at that row, which is
            not listed again (a favourable one is its own counterfactual).
        """
        Q = np.atleast_2d(np.asarray(X, dtype=float))
        if Q.shape[1] != self.X_.shape[1]:
            raise ValueError(f"X has {Q.shape[1]} features; expected {self.X_.shape[1]}.")
        dist, idx = self.nn_.kneighbors(Q)
        if self.radius is not None:
            dist = np.where(dist <= self.radius, dist, np.inf)
        total = dist + self.dist_[idx]  # through each neighbour, then the shortest path
        best = np.argmin(total, axis=1)
        # a query that is a data row starts at that row's node (FACE's graph has the
        # query as a node), which is not listed again after the query
        at_row = dist[:, 0] == 0.0
        best[at_row] = 0
        rows = np.arange(len(Q))
        cost = total[rows, best]
        success = np.isfinite(cost)
        first = np.where(success, idx[rows, best], -9999)
        first = np.where(at_row & success, self.pred_[np.maximum(first, 0)], first)
        # follow the predecessors towards the favourable source, all queries at once
        hops = [first]
        cur = first
        while True:
            nxt = np.where(cur >= 0, self.pred_[np.maximum(cur, 0)], -9999)
            if not np.any(nxt >= 0):
                break
            hops.append(nxt)
            cur = nxt
        hops = np.stack(hops, axis=1)  # (q, longest path), -9999 padded
        paths = [np.vstack([q, self.X_[h[h >= 0]]]) for q, h in zip(Q, hops)]
        cf = np.full_like(Q, np.nan)
        ends = [p[-1] for p, s in zip(paths, success) if s]
        if ends:
            cf[success] = np.asarray(ends)
        return RecoursePaths(Q, paths, cost=np.where(success, cost, np.inf), success=success,
                             counterfactuals=cf, epsilon_spent=np.inf, delta_spent=0.0,
                             meta={"method": "FACE (k-NN graph over the data rows)"})
