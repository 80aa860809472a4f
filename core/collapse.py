# SPDX-License-Identifier: GPL-3.0-or-later
"""Connectivity surgery by greedy half-edge collapse (Au et al. 2008);
docs/auto_skeleton.md#collapse.

Works on the contracted positions with the original connectivity. The cheapest
collapse i -> j (shape cost + sampling cost) is applied until no triangle is
left; the surviving vertices and edges form the 1-D skeleton graph. Each
survivor remembers the set of vertices merged into it.
"""
from __future__ import annotations

import heapq

import numpy as np

from .mesh import unique_edges


def edge_quadrics(P, E):
    """Q_i = sum over edges (i,j) of K_ij^T K_ij: squared distance to the edge lines."""
    d = P[E[:, 1]] - P[E[:, 0]]
    n = np.linalg.norm(d, axis=1)
    ok = n > 1e-12
    a = np.zeros_like(d)
    a[ok] = d[ok] / n[ok, None]
    b = np.cross(a, P[E[:, 0]])
    K = np.zeros((len(E), 3, 4))
    K[:, 0, 1], K[:, 0, 2], K[:, 0, 3] = -a[:, 2], a[:, 1], -b[:, 0]
    K[:, 1, 0], K[:, 1, 2], K[:, 1, 3] = a[:, 2], -a[:, 0], -b[:, 1]
    K[:, 2, 0], K[:, 2, 1], K[:, 2, 3] = -a[:, 1], a[:, 0], -b[:, 2]
    KK = np.einsum("eki,ekj->eij", K, K)
    Q = np.zeros((len(P), 4, 4))
    np.add.at(Q, E[:, 0], KK)
    np.add.at(Q, E[:, 1], KK)
    return Q


def collapse_to_graph(P, F, *, shape_weight: float = 1.0, sampling_weight: float = 0.1):
    """Collapse edges of the contracted mesh until only a graph remains.

    Returns (nodes, edges, members): nodes (k,) indices of surviving vertices,
    edges (e,2) pairs of node positions in `nodes`, members: list of arrays of the
    original vertex indices merged into each node.
    """
    P = np.asarray(P, dtype=np.float64)
    n = len(P)
    E = unique_edges(F)
    Q = edge_quadrics(P, E)
    Ph = np.hstack([P, np.ones((n, 1))])

    nbrs = [set() for _ in range(n)]
    for i, j in E.tolist():
        nbrs[i].add(j)
        nbrs[j].add(i)
    faces = [tuple(f) for f in F.tolist()]
    face_alive = [True] * len(faces)
    vfaces = [set() for _ in range(n)]
    for fi, (a, b, c) in enumerate(faces):
        vfaces[a].add(fi)
        vfaces[b].add(fi)
        vfaces[c].add(fi)
    alive = np.ones(n, bool)
    members = [[i] for i in range(n)]
    version = [0] * n

    def best(i):
        """Cheapest collapsible target of i, or None."""
        pi = P[i]
        fi = vfaces[i]
        if not fi:
            return None
        nb = [j for j in nbrs[i] if fi & vfaces[j]]
        if not nb:
            return None
        nb_all = np.fromiter(nbrs[i], dtype=np.int64)
        ring = np.linalg.norm(P[nb_all] - pi, axis=1).sum()
        nb = np.array(nb, dtype=np.int64)
        pj = Ph[nb]
        Qs = Q[i][None] + Q[nb]
        fa = np.einsum("ni,nij,nj->n", pj, Qs, pj)
        fb = np.linalg.norm(P[nb] - pi, axis=1) * ring
        cost = shape_weight * fa + sampling_weight * fb
        k = int(np.argmin(cost))
        return float(cost[k]), int(nb[k])

    heap = []
    for i in range(n):
        r = best(i)
        if r is not None:
            heap.append((r[0], i, r[1], 0))
    heapq.heapify(heap)

    dirty = np.zeros(n, bool)
    while heap:
        cost, i, j, ver = heapq.heappop(heap)
        if not alive[i] or ver != version[i]:
            continue
        if dirty[i] or not alive[j] or not (vfaces[i] & vfaces[j]):
            # Costs are re-evaluated lazily, when a vertex whose neighbourhood changed
            # reaches the top of the heap: far fewer evaluations than eager updates.
            dirty[i] = False
            version[i] += 1
            r = best(i)
            if r is not None:
                heapq.heappush(heap, (r[0], i, r[1], version[i]))
            continue
        # Collapse i -> j.
        for fi in list(vfaces[i]):
            a, b, c = faces[fi]
            if j in (a, b, c):
                face_alive[fi] = False
                for v in (a, b, c):
                    vfaces[v].discard(fi)
            else:
                faces[fi] = tuple(j if v == i else v for v in (a, b, c))
                vfaces[j].add(fi)
        vfaces[i] = set()
        for k in nbrs[i]:
            nbrs[k].discard(i)
            if k != j:
                nbrs[k].add(j)
                nbrs[j].add(k)
        nbrs[i] = set()
        Q[j] += Q[i]
        members[j].extend(members[i])
        members[i] = []
        alive[i] = False
        for k in nbrs[j]:
            dirty[k] = True
        dirty[j] = True

    nodes = np.flatnonzero(alive)
    index = np.full(n, -1, np.int64)
    index[nodes] = np.arange(len(nodes))
    edges = sorted({(min(index[i], index[k]), max(index[i], index[k])) for i in nodes for k in nbrs[i]})
    edges = np.array(edges, dtype=np.int64).reshape(-1, 2)
    return nodes, edges, [np.array(members[i], dtype=np.int64) for i in nodes]
