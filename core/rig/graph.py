# SPDX-License-Identifier: GPL-3.0-or-later
"""Graph helpers shared by the refinement stages: adjacency sets, edge lists, components,
sparse graphs weighted by edge length, and on parent arrays (joint -> parent joint, -1 for the root): subtrees, renumbering.

A skeleton graph is a dict node -> set of neighbour nodes (a defaultdict(set), so
that looking a node up adds it with no neighbours).
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np
from scipy.sparse import coo_matrix

from ..mesh import edge_components


def adjacency(n, edges):
    """Adjacency sets of an undirected graph.

    Parameters
    ----------
    n : int
        Nodes 0..n-1 are present even without edges.
    edges : array_like (E, 2) int
        Node pairs; self-loops are dropped.

    Returns
    -------
    defaultdict(set)
        node -> set of neighbour nodes.
    """
    adj = defaultdict(set)
    for a, b in np.asarray(edges).reshape(-1, 2).tolist():
        if a != b:
            adj[a].add(b)
            adj[b].add(a)
    for i in range(n):
        adj[i]
    return adj


def edge_list(adj):
    """Sorted list of the graph's edges as (low, high) node pairs, each once."""
    return sorted({(min(a, b), max(a, b)) for a in adj for b in adj[a]})


def node_components(n, edges):
    """Connected-component label of each of n nodes joined by edges (E, 2): returns (n,) ints
    (core.mesh.edge_components' labels: 0, 1, ... in order of each component's lowest node)."""
    return edge_components(n, edges)[1]


def descendants(parents, j) -> np.ndarray:
    """Every joint below joint j of a tree given by its parent array."""
    parents = np.asarray(parents)
    out, stack = [], [int(j)]
    while stack:
        children = np.flatnonzero(parents == stack.pop())
        out.extend(children.tolist())
        stack.extend(children.tolist())
    return np.array(out, dtype=np.int64)


def compact_parents(parents, keep) -> np.ndarray:
    """The kept joints' parents (keep (n,) bool) renumbered among the kept joints, in order;
    a parent that is not kept becomes -1."""
    parents, keep = np.asarray(parents), np.asarray(keep, dtype=bool)
    index = np.where(keep, np.cumsum(keep) - 1, -1)
    kept = parents[keep]
    return np.where(kept >= 0, index[np.maximum(kept, 0)], -1)


def length_graph(points, edges, n: int | None = None):
    """Symmetric sparse (n, n) CSR matrix of an undirected graph on `points` (k, 3) whose
    entries are the edges' (E, 2) lengths (n defaults to k), for scipy's shortest paths."""
    edges = np.asarray(edges)
    w = np.linalg.norm(points[edges[:, 0]] - points[edges[:, 1]], axis=1)
    n = len(points) if n is None else n
    return coo_matrix((np.concatenate([w, w]), (np.concatenate([edges[:, 0], edges[:, 1]]),
                                               np.concatenate([edges[:, 1], edges[:, 0]]))), shape=(n, n)).tocsr()
