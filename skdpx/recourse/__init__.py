"""DP multi-step recourse over a graph of DP cluster centres (Pentyala et al. 2023)."""

from ._graph import RecourseGraph, gaussian_density, recourse_graph
from ._privrecourse import PrivRecourse

__all__ = ["PrivRecourse", "RecourseGraph", "gaussian_density", "recourse_graph"]
