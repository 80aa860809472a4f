# SPDX-License-Identifier: GPL-3.0-or-later
"""Undo exact midpoint subdivisions (docs/auto_skin.md#subdivided-meshes).

A mesh that was midpoint-subdivided (every triangle cut into four at its edge midpoints,
no smoothing: Blender's *Subdivide* on triangles, or a game mesh tessellated for
lighting) has the surface of a coarser mesh. Auto Skin weights that coarse mesh, the one
its artist would have weighted, and carries the weights back by interpolation, so a
character and its subdivided copy deform alike.

The coarse vertices C of one subdivision level are recognised from the structure: no
edge joins two of them, every face holds at most one, and every other vertex (a
midpoint M) lies halfway between two C neighbours that sit opposite each other. Starting
from the vertices that cannot be midpoints (valence other than 6 inside, 4 on a
boundary), C and M are propagated over the mesh (a part without such a vertex, a closed
ring of a tube, from the first of a vertex and its neighbours that spreads without a
contradiction); the result is accepted only if
subdividing the coarse mesh gives back exactly the faces (either winding) and positions
given; otherwise the mesh is used as it is.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from .mesh import bbox_diagonal, row_keys, triangle_edges, unique_edges

TOLERANCE = 1e-7          # a midpoint's distance from its endpoints' mean, share of the diagonal
MIN_COARSE_FACES = 4      # never undo below a tetrahedron


@dataclass
class Coarse:
    """The coarse mesh under a midpoint subdivision."""
    index: np.ndarray     # (nc,) the given vertex that each coarse vertex is
    faces: np.ndarray     # (mc, 3) triangles into the coarse vertices
    interp: sp.csr_matrix  # (n, nc) per-vertex values back onto the given vertices (rows sum to 1)
    levels: int           # subdivisions undone


def undo_midpoint_subdivision(V, F, *, tolerance: float = TOLERANCE) -> Coarse | None:
    """The coarsest mesh whose repeated midpoint subdivision is the welded triangle mesh
    (V, F), or None when (V, F) is not a midpoint subdivision. Its interpolation rows are
    barycentric weights in a coarse triangle (at most 3 non-zeros). Edges in more than two
    faces (a fin or a wing glued edge-on to a body) are cut open for the search and
    joined again in the result."""
    V, F = np.asarray(V, np.float64), np.asarray(F, np.int64)
    for pair in (True, False):       # the flattest two faces of such an edge joined, or none
        cut = _cut_open(F, len(V), V, pair=pair)
        if cut is None:
            return _undo(V, F, tolerance)
        coarse = _undo(V[cut[1]], cut[0], tolerance)
        if coarse is not None:
            return _joined(coarse, cut[1], len(V))
    return None


def _cut_open(F, n, V, *, pair: bool = True):
    """(faces, original vertex of each new vertex) with the mesh cut along its edges that
    have more than two faces, or None when there is no such edge. With `pair`, of such an
    edge's faces the two that continue each other most flatly stay joined (a body's
    surface past a fin glued to it; a midpoint subdivision keeps the angles, so a mesh
    and its subdivision are cut alike); the others become boundaries. Each fan of faces
    around a vertex joined across the kept edges then gets its own copy of the vertex.
    (Where fans join again around a vertex the cut mesh may still not be a manifold;
    undo_midpoint_subdivision then tries the other way or gives up. Where they join
    around both ends of an edge, the coarse edge has one copy and its fine midpoint
    several: _copies_of_one_midpoint.)"""
    m = len(F)
    a = np.concatenate([F[:, k] for k in range(3)])
    b = np.concatenate([F[:, (k + 1) % 3] for k in range(3)])
    third = np.concatenate([F[:, (k + 2) % 3] for k in range(3)])
    corner_a = np.concatenate([3 * np.arange(m) + k for k in range(3)])
    corner_b = np.concatenate([3 * np.arange(m) + (k + 1) % 3 for k in range(3)])
    key = np.minimum(a, b) * n + np.maximum(a, b)
    _, inverse, uses = np.unique(key, return_inverse=True, return_counts=True)
    if uses.max(initial=0) <= 2:
        return None
    by_edge = np.argsort(inverse, kind="stable")
    starts = np.concatenate([[0], np.cumsum(uses)])
    two = starts[:-1][uses == 2]
    h = np.column_stack([by_edge[two], by_edge[two + 1]])     # the two half-edges of each two-face edge
    if pair:
        h = np.vstack([h] + [_flattest_pair(by_edge[starts[e]:starts[e + 1]], a, b, third, V)[None]
                             for e in np.flatnonzero(uses > 2)])
    same = a[h[:, 0]] == a[h[:, 1]]                     # same direction: a with a (an inconsistent winding)
    left = np.concatenate([corner_a[h[:, 0]], corner_b[h[:, 0]]])
    right = np.concatenate([np.where(same, corner_a[h[:, 1]], corner_b[h[:, 1]]),
                            np.where(same, corner_b[h[:, 1]], corner_a[h[:, 1]])])
    graph = sp.coo_matrix((np.ones(len(left)), (left, right)), shape=(3 * m, 3 * m))
    _, label = connected_components(graph, directed=False)
    _, first, new = np.unique(label, return_index=True, return_inverse=True)
    return new.reshape(m, 3), F.reshape(-1)[first]


def _flattest_pair(half_edges, a, b, third, V):
    """The two of an edge's half-edges (one per face) whose faces continue each other
    most flatly: their third corners, seen from the edge, most nearly opposite."""
    e = V[b[half_edges[0]]] - V[a[half_edges[0]]]
    e = e / max(np.linalg.norm(e), 1e-300)
    wing = V[third[half_edges]] - V[a[half_edges]]
    wing -= np.outer(wing @ e, e)
    wing /= np.maximum(np.linalg.norm(wing, axis=1, keepdims=True), 1e-300)
    same_way = a[half_edges][:, None] == a[half_edges][None, :]       # not a consistently wound pair
    cos = wing @ wing.T + 3.0 * np.eye(len(half_edges)) + 2.0 * same_way
    i, j = np.unravel_index(np.argmin(cos), cos.shape)
    return half_edges[[i, j]]


def _joined(coarse: Coarse, original, n) -> Coarse:
    """A Coarse of the cut-open mesh (_cut_open) on the original vertices: copies of one
    vertex are one again."""
    index, merged = np.unique(original[coarse.index], return_inverse=True)
    join = sp.csr_matrix((np.ones(len(merged)), (np.arange(len(merged)), merged)),
                         shape=(len(merged), len(index)))
    copy = np.full(n, -1)
    copy[original[::-1]] = np.arange(len(original))[::-1]    # each vertex's first copy
    in_faces = sp.diags((copy >= 0).astype(float))            # a vertex in no face: a zero row
    interp = in_faces @ coarse.interp[np.maximum(copy, 0)] @ join
    return Coarse(index, merged[coarse.faces], interp.tocsr(), coarse.levels)


def _undo(V, F, tolerance):
    """undo_midpoint_subdivision on a mesh without edges in more than two faces."""
    tol = tolerance * max(bbox_diagonal(V), 1e-300)
    index, P, levels = np.arange(len(V)), None, 0
    while (step := _undo_once(V[index], F, tol)) is not None:
        coarse, F, Pk = step
        index = index[coarse]
        P = Pk if P is None else (P @ Pk).tocsr()
        levels += 1
    return Coarse(index, F, P, levels) if levels else None


def _undo_once(V, F, tol):
    """(coarse vertex indices, Fc, P) of one level undone, or None."""
    if len(F) % 4 or len(F) // 4 < MIN_COARSE_FACES or not _spot_check(V, F, tol):
        return None
    edges = _Edges(F, len(V))
    label = _propagate(V, edges, tol)
    return None if label is None else _coarse_mesh(V, F, label, edges, tol)


SPOT_CHECKS = 4           # coarse vertices whose neighbours are tried before the full test


def _spot_check(V, F, tol) -> bool:
    """A quick necessary test (most meshes fail it in milliseconds): a vertex in other than
    6 faces (3 on a boundary) cannot be a midpoint, so each neighbour x of such a vertex c
    is one, and a vertex sits at 2x - c, the other end of its coarse edge."""
    in_faces = np.bincount(F.reshape(-1), minlength=len(V))
    seeds = np.flatnonzero((in_faces != 6) & (in_faces != 3) & (in_faces > 0))[:SPOT_CHECKS]
    if not len(seeds):
        return True
    by_x = np.argsort(V[:, 0], kind="stable")
    xs = V[by_x, 0]
    for c in seeds:
        for x in np.unique(F[np.flatnonzero(F.reshape(-1) == c) // 3]):
            if x == c:
                continue
            target = 2.0 * V[x] - V[c]
            lo, hi = np.searchsorted(xs, target[0] - tol), np.searchsorted(xs, target[0] + tol, side="right")
            if not (np.abs(V[by_x[lo:hi]] - target).max(axis=1) <= tol).any():
                return False
    return True


class _Edges:
    """The directed edges of a triangle mesh (ids 2u and 2u + 1: undirected edge u both
    ways; e ^ 1 reverses e), grouped by source vertex, and each one's neighbours in its
    source vertex's one-ring (the edges that share a face with it)."""

    def __init__(self, F, n):
        he = triangle_edges(F).astype(np.int64)
        lo, hi = he.min(axis=1), he.max(axis=1)
        key, inverse, uses = np.unique(lo * n + hi, return_inverse=True, return_counts=True)
        ends = np.stack([key // n, key % n], axis=1)             # undirected edges (u, 2)
        self.on_boundary = np.zeros(n, bool)         # vertices of edges that one face uses
        self.on_boundary[ends[uses == 1].reshape(-1)] = True
        self.src, self.dst = ends.reshape(-1), ends[:, ::-1].reshape(-1)
        d = 2 * inverse.reshape(-1) + (he[:, 0] > he[:, 1])     # directed id of each half-edge
        e0, e1, e2 = d.reshape(3, -1)                             # (a->b), (b->c), (c->a)
        # around a: a->b and a->c (= (c->a) reversed); around b: b->c and b->a; around c: c->a and c->b
        first = np.concatenate([e0, e2 ^ 1, e1, e0 ^ 1, e2, e1 ^ 1])
        second = np.concatenate([e2 ^ 1, e0, e0 ^ 1, e1, e1 ^ 1, e2])
        # two slots per edge (its two faces), filled without a sort: one write wins slot 0,
        # the other goes to slot 1; more than two faces: not a manifold ring
        self.manifold = bool(np.bincount(first, minlength=len(self.src)).max(initial=0) <= 2)
        self.ring = np.full((len(self.src), 2), -1)
        self.ring[first, 0] = second
        later = self.ring[first, 0] != second
        self.ring[first[later], 1] = second[later]
        self.by_source = np.argsort(self.src, kind="stable")
        self.indptr = np.searchsorted(self.src[self.by_source], np.arange(n + 1))

    def leaving(self, vertices):
        """Ids of the directed edges that leave `vertices`."""
        counts = self.indptr[vertices + 1] - self.indptr[vertices]
        starts = np.repeat(self.indptr[vertices] - np.cumsum(counts) + counts, counts)
        return self.by_source[starts + np.arange(counts.sum())]

    def _next(self, e, came_from):
        """The ring neighbour of edge e that is not came_from (-1: none)."""
        r = self.ring[np.maximum(e, 0)]
        pick = np.where(r[:, 0] != came_from, r[:, 0], r[:, 1])
        return np.where(e >= 0, pick, -1)

    def opposite(self, e):
        """For edges e = (m -> c): the edge three steps around m's one-ring from e, -1 if
        none. On a midpoint m of a coarse edge (c, o) that is (m -> o)."""
        p = self._next(e, -1)
        q = self._next(p, e)
        return self._next(q, p)


C, M = 1, 2


def _propagate(V, edges: _Edges, tol):
    """Per vertex C or M, or None when the mesh does not split so."""
    valence = np.diff(edges.indptr)
    if not edges.manifold or (valence == 0).any():
        return None
    label = np.zeros(len(V), np.int8)
    if not _spread(V, edges, tol, label, np.flatnonzero(np.where(edges.on_boundary, valence != 4, valence != 6))):
        return None
    # a part with no vertex that cannot be a midpoint (a closed ring of a tube: valence 6
    # everywhere): of any vertex and its neighbours one is coarse; the first that spreads
    # without a contradiction (positions checked) is taken
    while len(rest := np.flatnonzero(label == 0)):
        v = rest[:1]
        for seed in np.concatenate([v, edges.dst[edges.leaving(v)]]):
            touched = []
            if _spread(V, edges, tol, label, np.array([seed]), touched):
                break
            if touched:
                label[np.concatenate(touched)] = 0   # undone: only this part was touched
        else:
            return None
    return label


def _spread(V, edges: _Edges, tol, label, frontier, touched=None) -> bool:
    """Label the vertices reached from `frontier` (taken as coarse) C or M in place;
    False on a contradiction. The vertices labelled are appended to `touched`."""
    touched = [] if touched is None else touched
    while len(frontier):
        if (label[frontier] == M).any():
            return False
        label[frontier] = C
        touched.append(frontier)
        out = edges.leaving(frontier)                # (c -> m)
        mids = edges.dst[out]
        if (label[mids] == C).any():                 # two coarse vertices never share an edge
            return False
        label[mids] = M
        touched.append(mids)
        # across each midpoint from a coarse vertex, halfway: the other end, coarse
        across = edges.opposite(out ^ 1)
        if (across < 0).any():
            return False
        ends = edges.dst[across]
        if (label[ends] == M).any() or \
                np.abs(V[mids] - 0.5 * (V[edges.src[out]] + V[ends])).max(initial=0.0) > tol:
            return False
        frontier = np.unique(ends[label[ends] == 0])
    return True


def _coarse_mesh(V, F, label, edges: _Edges, tol):
    """(coarse vertex indices, Fc, P) from the labels, after checking that they describe a subdivision."""
    n = len(V)
    src, dst = edges.src[edges.by_source], edges.dst[edges.by_source]   # grouped by source
    coarse = np.flatnonzero(label == C)
    index = np.full(n, -1)
    index[coarse] = np.arange(len(coarse))
    # each midpoint's two ends: its two coarse neighbours (halfway between them: checked below)
    to_c = (label[src] == M) & (label[dst] == C)
    mids, counts = np.unique(src[to_c], return_counts=True)
    if len(mids) != (label == M).sum() or (counts != 2).any():
        return None
    a, b = dst[to_c][0::2], dst[to_c][1::2]
    # coarse faces from the corner faces (c, m1, m2), rotated so the coarse vertex comes first
    is_c = label[F] == C
    per_face = is_c.sum(axis=1)
    if per_face.max() > 1 or (per_face == 0).sum() * 4 != len(F):
        return None
    corner = F[per_face == 1]
    shift = np.argmax(is_c[per_face == 1], axis=1)
    corner = np.take_along_axis(corner, (shift[:, None] + np.arange(3)) % 3, axis=1)
    Fc = np.column_stack([corner[:, 0], _other_end(mids, a, b, corner[:, 1], corner[:, 0]),
                          _other_end(mids, a, b, corner[:, 2], corner[:, 0])])
    _, keep = np.unique(row_keys(np.sort(Fc, axis=1)), return_index=True)
    Fc = index[Fc[np.sort(keep)]]
    if 4 * len(Fc) != len(F) or (Fc < 0).any():
        return None
    # the check: subdividing the coarse mesh gives exactly the faces given
    Ec = unique_edges(Fc).astype(np.int64)
    nc = len(coarse)
    edge_key = np.minimum(index[a], index[b]) * nc + np.maximum(index[a], index[b])
    copies = _copies_of_one_midpoint(V, mids, edge_key, tol)
    if copies is None:
        return None
    first, same = copies
    ec_key = Ec[:, 0] * nc + Ec[:, 1]
    if not np.array_equal(edge_key[first], ec_key):
        return None
    mid_of_edge = mids[first]                          # fine midpoint of each coarse edge (Ec order)
    fine = _subdivided_faces(Fc, Ec, coarse, mid_of_edge)
    if not np.array_equal(np.sort(row_keys(np.sort(fine, axis=1))), np.sort(row_keys(np.sort(same[F], axis=1)))):
        return None
    if np.abs(0.5 * (V[a] + V[b]) - V[mids]).max(initial=0.0) > tol:
        return None
    rows = np.concatenate([coarse, mids, mids])
    cols = np.concatenate([np.arange(nc), index[a], index[b]])
    vals = np.concatenate([np.ones(nc), np.full(2 * len(mids), 0.5)])
    P = sp.csr_matrix((vals, (rows, cols)), shape=(n, nc))
    return coarse, Fc, P


def _copies_of_one_midpoint(V, mids, edge_key, tol):
    """(first, same): per coarse edge (in key order) the index into `mids` of its first
    midpoint, and (n,) every vertex, a midpoint replaced by its edge's first one; None when
    two midpoints on one edge lie apart. A mesh cut open (_cut_open) where its fans meet
    again around a vertex keeps one copy of the coarse edge (its ends are shared) but the
    fine midpoint, which has no other way round, gets one per face: they are one."""
    _, first, inverse = np.unique(edge_key, return_index=True, return_inverse=True)
    lead = mids[first][inverse.reshape(-1)]
    if np.abs(V[mids] - V[lead]).max(initial=0.0) > tol:
        return None
    same = np.arange(len(V))
    same[mids] = lead
    return first, same


def _subdivided_faces(Fc, Ec, coarse, mid_of_edge):
    """The four fine faces of every coarse face (fine vertex indices), as subdivide_midpoint cuts them."""
    nc = len(coarse)
    key = Ec[:, 0] * nc + Ec[:, 1]

    def mid(u, v):
        return mid_of_edge[np.searchsorted(key, np.minimum(u, v) * nc + np.maximum(u, v))]

    a, b, c = Fc.T
    ab, bc, ca = mid(a, b), mid(b, c), mid(c, a)
    A, B, Cc = coarse[a], coarse[b], coarse[c]
    return np.concatenate([np.stack(t, axis=1) for t in ((A, ab, ca), (ab, B, bc), (ca, bc, Cc), (ab, bc, ca))])


def _other_end(mids, a, b, mid, c):
    """The end of midpoint `mid` (its ends a, b, rows of `mids`) that is not `c`."""
    i = np.searchsorted(mids, mid)
    return np.where(a[i] == c, b[i], a[i])


def coarse_mesh(V, F):
    """(vertices, faces) of the coarse mesh under an exact midpoint subdivision of (V, F)
    (vertices in no face ignored), or None when (V, F) is not one. Run it before welding:
    seams and degenerate faces are subdivided as exactly as the rest."""
    used = np.unique(F)
    Vu = np.asarray(V)[used]
    coarse = undo_midpoint_subdivision(Vu, np.searchsorted(used, F))
    return None if coarse is None else (Vu[coarse.index], coarse.faces)
