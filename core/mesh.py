# SPDX-License-Identifier: GPL-3.0-or-later
"""Mesh primitives on (V, 3) float vertex and (F, 3) int triangle arrays.

One small function per concern, each written once here and called by meshprep,
metrics, collapse, skinning and the benchmarks. Pure numpy/scipy, never bpy. The
functions keep their inputs' dtypes and return arrays in a fixed, documented order:
callers rely on it for bit-identical results.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order, connected_components

__all__ = ["triangle_edges", "unique_edges", "edge_components", "vertex_components",
           "weld_positions", "row_keys", "bbox_diagonal", "subdivide_midpoint", "close_t_junctions"]


def triangle_edges(F) -> np.ndarray:
    """Directed half-edges of triangles.

    Parameters
    ----------
    F : (m, 3) int array
        Triangles.

    Returns
    -------
    (3m, 2) array, F's dtype
        Three blocks of m rows: every face's (0, 1) edge, then its (1, 2) edges, then
        its (2, 0) edges. Row ``k * m + f`` is edge ``k`` of face ``f``.
    """
    F = np.asarray(F)
    return np.concatenate([F[:, [0, 1]], F[:, [1, 2]], F[:, [2, 0]]])


def _edge_keys(F):
    """(half-edges (3m, 2) int64 as triangle_edges, one int64 key per undirected edge, nv)."""
    he = triangle_edges(F).astype(np.int64, copy=False)   # int64 keys: no overflow
    nv = int(F.max()) + 1 if len(F) else 1
    return he, np.minimum(he[:, 0], he[:, 1]) * nv + np.maximum(he[:, 0], he[:, 1]), nv


def unique_edges(F) -> np.ndarray:
    """Undirected edges of triangles F (m, 3), each once.

    Returns an (E, 2) array of F's dtype: smaller vertex index first, rows sorted
    lexicographically (as ``np.unique(np.sort(triangle_edges(F), axis=1), axis=0)``).
    """
    F = np.asarray(F)
    _, key, nv = _edge_keys(F)
    key = np.unique(key)
    return np.stack([key // nv, key % nv], axis=1).astype(F.dtype, copy=False)


def edge_components(n, edges):
    """Connected components of an undirected graph.

    Parameters
    ----------
    n : int
        Number of nodes.
    edges : (E, 2) int array_like
        Node pairs; direction and repeats do not matter.

    Returns
    -------
    count : int
        Number of components (an isolated node is one).
    labels : (n,) int32 array
        Component of each node, numbered in the order of their smallest node
        (scipy.sparse.csgraph.connected_components).
    """
    e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    A = sp.coo_matrix((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(n, n))
    return connected_components(A, directed=False)


def vertex_components(n, F):
    """Connected components of a mesh's n vertices through its triangles F (m, 3).

    Returns (count, labels) as `edge_components`; a vertex in no face is a component.
    """
    F = np.asarray(F).reshape(-1, 3)
    return edge_components(n, np.concatenate([F[:, [0, 1]], F[:, [1, 2]]]))   # two sides join a triangle


def weld_positions(V, cell, *, origin=None, snap: str = "round"):
    """Merge points that fall on the same node of a regular grid.

    Parameters
    ----------
    V : (n, 3) float array
        Points.
    cell : float
        Grid spacing, in V's units (callers scale their tolerance by a diagonal).
    origin : (3,) float array, optional
        Subtracted from V before snapping (None: the grid is anchored at 0).
    snap : {"round", "floor"}
        "round": points whose ``(V - origin) / cell`` round to the same integers merge
        (welding near-duplicates); "floor": points in the same cell
        ``[k cell, (k + 1) cell)`` merge (coarse clustering).

    Returns
    -------
    first : (k,) int64 array
        Index of the first point of each merged point, in lexicographic order of the
        grid keys.
    inverse : (n,) int64 array
        Merged point of each point (``V[first][inverse]`` is V snapped).
    counts : (k,) int64 array
        Number of points merged into each.
    """
    X = V if origin is None else V - origin
    key = (np.round if snap == "round" else np.floor)(X / cell).astype(np.int64)
    _, first, inverse, counts = np.unique(row_keys(key), return_index=True, return_inverse=True,
                                          return_counts=True)
    return first, inverse.reshape(-1), counts


def row_keys(rows):
    """(n,) int64 keys that sort as the rows (n, 3) of non-negative-offset ints sort
    lexicographically: 21 bits a column when they fit (np.unique on them is many times
    faster than on rows), else a structured view of the rows."""
    rows = rows - rows.min(axis=0) if len(rows) else rows
    if not len(rows) or rows.max() < 2 ** 21:
        return (rows[:, 0] << 42) | (rows[:, 1] << 21) | rows[:, 2]
    rows = np.ascontiguousarray(rows)
    return rows.view([("a", rows.dtype), ("b", rows.dtype), ("c", rows.dtype)]).reshape(-1)


def bbox_diagonal(V, default: float = 0.0) -> float:
    """Length of the diagonal of the axis-aligned bounding box.

    Parameters
    ----------
    V : (n, 3) array
        Points (not validated; computed in V's dtype, NaN propagates).
    default : float
        Returned when V is empty or the diagonal is exactly 0 (every point at one
        place): ``bbox_diagonal(V, 1.0)`` is a size safe to divide by.

    Returns
    -------
    float
    """
    V = np.asarray(V)
    if V.size == 0:
        return float(default)
    return float(np.linalg.norm(V.max(axis=0) - V.min(axis=0))) or float(default)


def boundary_half_edges(F) -> np.ndarray:
    """Rows of triangle_edges(F) whose undirected edge no other face uses (open boundary)."""
    _, key, _ = _edge_keys(F)
    _, inverse, counts = np.unique(key, return_inverse=True, return_counts=True)
    return np.flatnonzero(counts[inverse.reshape(-1)] == 1)


def close_t_junctions(V, F, tolerance: float, passes: int = 8):
    """Triangles split where a vertex lies on an open edge of another triangle.

    A T-junction (a vertex in the middle of a neighbour's edge, left by exporters and by
    modellers' edge splits) leaves a crack: the mesh is open along it and steps that
    follow the surface (contraction, heat, geodesics) treat the two sides as apart.
    Each pass splits every face with an open edge that has an open-boundary vertex within
    `tolerance` of it (strictly between its ends; the one nearest the middle first) in
    two, so the crack closes once each vertex is in the edge; several vertices on one
    edge take several passes. A mesh without open edges comes back unchanged.

    V : (n, 3) float; F : (m, 3) int; tolerance in V's units.
    Returns the new faces (V is not changed: only existing vertices are used).
    """
    from scipy.spatial import cKDTree
    F = np.asarray(F, dtype=np.int64)
    for _ in range(passes):
        m = len(F)
        open_he = boundary_half_edges(F)
        if not len(open_he):
            break
        he = triangle_edges(F)[open_he]
        rim = np.unique(he)
        A, B = V[he[:, 0]], V[he[:, 1]]
        half = np.linalg.norm(B - A, axis=1) / 2
        near = cKDTree(V[rim]).query_ball_point((A + B) / 2, half + tolerance)
        split = {}
        for i, found in enumerate(near):
            f = int(open_he[i] % m)
            if f in split or len(found) < 3:
                continue
            v = rim[found]
            v = v[~np.isin(v, F[f])]
            if not len(v):
                continue
            d = B[i] - A[i]
            t = (V[v] - A[i]) @ d / max(float(d @ d), 1e-300)
            gap = np.linalg.norm(V[v] - (A[i] + t[:, None] * d), axis=1)
            ok = (gap <= tolerance) & (t > 1e-6) & (t < 1 - 1e-6)
            if ok.any():
                split[f] = (int(open_he[i] // m), int(v[ok][np.abs(t[ok] - 0.5).argmin()]))
        if not split:
            break
        F = F.copy()
        extra = []
        for f, (k, v) in split.items():
            a, b, c = F[f, k], F[f, (k + 1) % 3], F[f, (k + 2) % 3]
            F[f] = (a, v, c)
            extra.append((v, b, c))
        F = np.vstack([F, np.array(extra, dtype=np.int64)])
    return F


def subdivide_midpoint(V, F):
    """One 1 -> 4 midpoint subdivision: same surface, about 4x the vertices.

    Parameters
    ----------
    V : (n, 3) float array
        Vertices.
    F : (m, 3) int array
        Triangles.

    Returns
    -------
    Vs : (n + E, 3) array
        V, then the midpoint of every edge in `unique_edges` order.
    Fs : (4m, 3) array
        For every face (a, b, c) with edge midpoints ab, bc, ca: the blocks
        (a, ab, ca), (ab, b, bc), (ca, bc, c), (ab, bc, ca), each of m rows.
    """
    V, F = np.asarray(V), np.asarray(F)
    e = np.sort(triangle_edges(F), axis=1)
    edges, inv = np.unique(e, axis=0, return_inverse=True)
    ab, bc, ca = inv.reshape(3, -1) + len(V)
    a, b, c = F.T
    Vs = np.concatenate([V, 0.5 * (V[edges[:, 0]] + V[edges[:, 1]])])
    Fs = np.concatenate([np.stack(t, axis=1) for t in ((a, ab, ca), (ab, b, bc), (ca, bc, c), (ab, bc, ca))])
    return Vs, Fs


def face_adjacency(F):
    """Pairs of faces (a, b) sharing an edge used by exactly two faces, and whether the
    two traverse that edge in the same direction (inconsistent winding)."""
    m = len(F)
    he, key, _ = _edge_keys(F)
    fid = np.tile(np.arange(m), 3)
    order = np.argsort(key, kind="stable")          # one sort: the half-edges of an edge together
    ks = key[order]
    start = np.flatnonzero(np.r_[True, ks[1:] != ks[:-1]])
    cnt = np.diff(np.r_[start, len(ks)])
    o = order[np.repeat(cnt == 2, cnt)]
    o = o.reshape(-1, 2)          # consecutive pairs share an edge
    a, b = fid[o[:, 0]], fid[o[:, 1]]
    same_dir = (he[o[:, 0], 0] == he[o[:, 1], 0])
    return a, b, same_dir


def orient_faces(F):
    """Flip faces so that neighbours across manifold edges agree (per patch of faces
    connected through manifold edges). Returns (F', flipped mask, patch label per face).
    Non-orientable conflicts (Moebius-like) are left as found.

    One breadth-first search from a virtual face joined to the first face of every
    patch (a mesh of 10k separate hair cards costs one search, not 10k); none where
    every neighbour already agrees (the usual case)."""
    m = len(F)
    a, b, same = face_adjacency(F)
    if len(a) == 0:
        return F.copy(), np.zeros(m, bool), np.arange(m)
    n_lab, lab = edge_components(m, np.stack([a, b], axis=1))
    if not same.any():
        return F.copy(), np.zeros(m, bool), lab
    first = np.full(n_lab, -1)
    first[lab[::-1]] = np.arange(m)[::-1]
    root = np.full(n_lab, m)
    rows = np.concatenate([a, b, root, first])
    cols = np.concatenate([b, a, first, root])
    inc = np.concatenate([same, same, np.zeros(2 * n_lab, bool)]).astype(np.int8) + 1
    Ga = sp.coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(m + 1, m + 1)).tocsr()
    S = sp.coo_matrix((inc, (rows, cols)), shape=(m + 1, m + 1)).tocsr()
    order, pred = breadth_first_order(Ga, m, directed=False, return_predecessors=True)
    # a face is flipped when an odd number of disagreeing links lead to it from the root:
    # parities summed up the BFS tree by pointer jumping (log of its depth in steps)
    parent = np.where(pred >= 0, pred, m)             # the virtual root is its own parent
    parity = np.zeros(m + 1, bool)
    ch = order[1:]
    parity[ch] = np.asarray(S[pred[ch], ch]).ravel() == 2
    while (parent != m).any():
        parity ^= parity[parent]
        parent = parent[parent]
    flip = parity[:m]
    Fo = F.copy()
    Fo[flip] = Fo[flip][:, ::-1]
    return Fo, flip, lab


def consistent_winding(V, F):
    """F with one winding per patch of faces joined through manifold edges. A patch that
    already agrees is kept as it is; one that did not (game rips, half-flipped exports) is
    made to agree and then turned so that it encloses a positive volume (normals out).
    Steps that use signed volumes or winding numbers (part sizes, inside tests) need
    this; a consistent mesh comes out unchanged."""
    F = np.asarray(F)
    if not len(F):
        return F.copy()
    if not face_adjacency(F)[2].any():       # every neighbour already agrees (the usual case)
        return F.copy()
    Fo, flip, lab = orient_faces(F)
    repaired = np.zeros(int(lab.max()) + 1, bool)
    repaired[lab[flip]] = True
    if not repaired.any():
        return F.copy()
    a, b, c = (V[Fo[:, k]] for k in range(3))
    n = len(repaired)
    counts = np.maximum(np.bincount(lab, minlength=n), 1)
    centre = np.stack([np.bincount(lab, (a + b + c)[:, k] / 3, minlength=n) for k in range(3)], 1) / counts[:, None]
    o = centre[lab]
    volume = np.bincount(lab, np.einsum("ij,ij->i", a - o, np.cross(b - o, c - o)), minlength=n)
    turn = repaired[lab] & (volume[lab] < 0)
    Fo[turn] = Fo[turn][:, ::-1]
    return Fo


MAX_STEPS = 256     # surface_points: at most this many samples along a triangle's side


def surface_points(V, F, spacing):
    """The vertices and points on every triangle (barycentric grids) no farther apart
    than about `spacing`: a low-poly box's sides, which have no vertices but corners."""
    tri = V[F]
    edge = np.linalg.norm(tri - np.roll(tri, 1, axis=1), axis=2).max(axis=1)
    steps = np.clip(np.ceil(edge / spacing).astype(int), 1, MAX_STEPS)
    samples = [V]
    for n in np.unique(steps):
        i, j = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
        keep = i + j <= n
        a, b = i[keep] / n, j[keep] / n
        w = np.stack([1 - a - b, a, b], axis=1)                     # (m, 3) barycentric
        samples.append(np.einsum("mk,fkd->fmd", w, tri[steps == n]).reshape(-1, 3))
    return np.vstack(samples)
