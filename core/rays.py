# SPDX-License-Identifier: GPL-3.0-or-later
"""Rays and segments against triangle meshes, on one Möller–Trumbore test (`triangle_hits`).

- `ray_hits`: the nearest wall along a few directions from one point (Auto Skeleton's
  centring, ring parts and leaf tips; docs/auto_skeleton.md#centering).
- `segments_blocked_exact`: does each segment cross the surface (Auto Skin's visibility
  test in numpy, float64; docs/auto_skin.md#heat-prior).
- `Scene`, `segment_tester`: the same test on Intel Embree (the `embreex` binding) when it
  is installed: a BVH in C++, as Blender's bone heat uses, instead of the numpy
  candidate search.

Embree returns the first triangle a ray hits. The rules of segments_blocked_exact (a
triangle holding the segment's own start vertex does not block; with front_only a
triangle facing away from the start does not block) are applied to that hit, and a
ray whose hit does not count is cast again from just past it, up to MAX_PASSES times;
the few rays still undecided then get the exact numpy test. Embree works in float32,
on the normalised mesh (longest side 1): a hit within about 1e-6 of an edge may be
decided differently from the float64 test (measured: bench/README.md, tests).

`BONESMITH_RAYS=numpy` in the environment turns Embree off (comparisons, bug reports).
"""
from __future__ import annotations

import os

import numpy as np
from scipy.spatial import cKDTree

# ray_hits: a hit closer than this along a ray is the surface the ray starts on, not a wall.
MIN_HIT = 1e-9
RAY_MIN_DET = 1e-14       # ray_hits: rays closer to parallel with a triangle miss it
SEGMENT_MIN_DET = 1e-18   # segments_blocked_exact: the same, for segments
MAX_PASSES = 32       # Embree casts per segment before the numpy test decides
STEP_PAST = 1e-5      # a recast starts this far (share of the segment) past the ignored hit


def _dot(a, b):
    """Row-wise dot products of (..., 3) arrays, broadcast."""
    return np.einsum("...i,...i->...", a, b)


def triangle_hits(origins, directions, T0, E1, E2, min_det: float):
    """Möller–Trumbore: where the lines origins + t * directions cross the planes of the
    triangles (T0, T0 + E1, T0 + E2). All (..., 3), broadcast against each other (paired
    rays and triangles, or every ray against every triangle).

    Returns (t, det, inside): t in units of |direction|; det = E1 . (direction x E2),
    > 0 when the triangle's normal E1 x E2 faces the ray; inside: |det| > min_det and
    the crossing lies in the triangle, edges included."""
    p = np.cross(directions, E2)
    det = _dot(p, E1)
    ok = np.abs(det) > min_det
    inv = np.divide(1.0, det, out=np.zeros_like(det), where=ok)
    s = origins - T0
    u = _dot(p, s) * inv
    q = np.cross(s, E1)
    v = _dot(directions, q) * inv
    t = _dot(q, E2) * inv
    return t, det, ok & (u >= 0) & (v >= 0) & (u + v <= 1)


def ray_hits(origin, directions, T0, E1, E2):
    """Nearest positive hit distance along each direction (inf if none).

    origin: (3,); directions: (D, 3); T0: (F, 3) first corner of each triangle, E1, E2:
    (F, 3) its two edges from T0. Returns (D,) distances in units of |direction|.
    """
    t, _, inside = triangle_hits(origin, directions[:, None, :], T0, E1, E2, RAY_MIN_DET)
    return np.where(inside & (t > MIN_HIT), t, np.inf).min(axis=1)


def inflated_corners(V, F, grow: float):
    """The three corners (F, 3) each of every triangle, grown about its incentre so that
    every edge moves out by `grow` (at most half the inradius): a segment through a
    shared edge or corner hits one of the triangles whatever the rounding."""
    T0, T1, T2 = V[F[:, 0]], V[F[:, 1]], V[F[:, 2]]
    if grow <= 0:
        return T0, T1, T2
    a = np.linalg.norm(T2 - T1, axis=1)
    b = np.linalg.norm(T0 - T2, axis=1)
    c = np.linalg.norm(T1 - T0, axis=1)
    per = a + b + c
    area = 0.5 * np.linalg.norm(np.cross(T1 - T0, T2 - T0), axis=1)
    r = np.divide(2 * area, per, out=np.zeros_like(per), where=per > 0)
    inc = (a[:, None] * T0 + b[:, None] * T1 + c[:, None] * T2) / np.maximum(per, 1e-300)[:, None]
    k = 1.0 + np.divide(np.minimum(grow, 0.5 * r), r, out=np.zeros_like(r), where=r > 0)
    return tuple(inc + (T - inc) * k[:, None] for T in (T0, T1, T2))


def segments_blocked_exact(V, F, P0, P1, skip_vertex=None, *, tol: float = 1e-6, front_only: bool = False,
                           margin: float = 0.0, grow: float = 0.0):
    """For each segment P0[i] -> P1[i]: does it cross a triangle of (V, F)? (numpy, float64)

    Triangles that contain skip_vertex[i] (the segment's own start vertex) are ignored,
    and hits within `tol` (relative) of either end do not count, nor (margin > 0) hits
    on a triangle whose plane either end is within `margin` of (a segment grazing along
    a face: rounding would decide); grow > 0: triangles grown by that much
    (inflated_corners). front_only: only
    triangles whose normal (winding of F) faces the segment's start block it, as in
    Blender's bone heat (a segment leaving a closed surface is not blocked). Candidate (segment,
    triangle) pairs come from points sampled along the segments and a k-d tree over
    triangle centres, by bins of triangle size, then an exact Moller-Trumbore test."""
    P0 = np.asarray(P0, float)
    P1 = np.asarray(P1, float)
    S = len(P0)
    blocked = np.zeros(S, bool)
    if S == 0 or len(F) == 0:
        return blocked
    T0, T1, T2 = inflated_corners(V, F, grow)
    cen = (T0 + T1 + T2) / 3.0
    R = np.sqrt(np.max(np.stack([((T - cen) ** 2).sum(1) for T in (T0, T1, T2)], 1), axis=1))
    L = np.linalg.norm(P1 - P0, axis=1)
    edge = float(np.median(np.linalg.norm(T1 - T0, axis=1)))
    spacing = max(edge, 1e-9)
    # cap the number of samples
    total = float(L.sum())
    if total / spacing > 4e6:
        spacing = total / 4e6
    ns = np.ceil(L / spacing).astype(np.int64) + 1
    seg = np.repeat(np.arange(S), ns)
    first = np.cumsum(ns) - ns
    k = np.arange(len(seg)) - first[seg]
    t = (k / np.maximum(ns[seg] - 1, 1))[:, None]
    samples = P0[seg] * (1 - t) + P1[seg] * t
    step_half = 0.5 * (L[seg] / np.maximum(ns[seg] - 1, 1))
    stree = cKDTree(samples)
    # bins of triangle radius (powers of two)
    rb = np.floor(np.log2(np.maximum(R, 1e-12))).astype(np.int64)
    pairs = []
    for b in np.unique(rb):
        tri = np.flatnonzero(rb == b)
        rmax = float(R[tri].max()) + float(step_half.max() if len(step_half) else 0.0)
        ttree = cKDTree(cen[tri])
        res = ttree.sparse_distance_matrix(stree, rmax, output_type="coo_matrix")
        if res.nnz == 0:
            continue
        ti, si = tri[res.row], res.col
        ok = res.data <= R[ti] + step_half[si] + 1e-12
        pairs.append(np.unique(seg[si[ok]].astype(np.int64) * len(F) + ti[ok]))
    if not pairs:
        return blocked
    pr = np.unique(np.concatenate(pairs))
    si, ti = pr // len(F), pr % len(F)
    if skip_vertex is not None:
        sv = np.asarray(skip_vertex)[si]
        keep = (F[ti, 0] != sv) & (F[ti, 1] != sv) & (F[ti, 2] != sv)
        si, ti = si[keep], ti[keep]
    # Moller-Trumbore on the segment parameter range (tol, 1 - tol)
    step = 4_000_000
    for s in range(0, len(si), step):
        a, b = si[s:s + step], ti[s:s + step]
        o = P0[a]
        tt, det, hit = triangle_hits(o, P1[a] - o, T0[b], T1[b] - T0[b], T2[b] - T0[b], SEGMENT_MIN_DET)
        hit &= (tt > tol) & (tt < 1 - tol)
        if front_only:
            # det = (d x e2) . e1 = -d . (e1 x e2): det > 0 <=> the normal faces the ray
            hit &= det > 0
        if margin > 0:
            hit &= clear_of_plane(o, P1[a], T0[b], np.cross(T1[b] - T0[b], T2[b] - T0[b]), margin)
        if hit.any():
            blocked[a[hit]] = True
    return blocked


def clear_of_plane(P0, P1, T0, n, margin: float):
    """(S,) bool: both ends of each segment at least `margin` from its triangle's plane
    (through T0, normal n = (T1 - T0) x (T2 - T0), not normalised)."""
    ln = np.sqrt(_dot(n, n))
    s0, s1 = _dot(P0 - T0, n), _dot(P1 - T0, n)
    lim = margin * ln
    return (np.abs(s0) >= lim) & (np.abs(s1) >= lim) & (ln > 0)


def embree_available() -> bool:
    if os.environ.get("BONESMITH_RAYS", "").lower() == "numpy":
        return False
    try:
        from embreex import rtcore_scene  # noqa: F401
        from embreex.mesh_construction import TriangleMesh  # noqa: F401
    except (ImportError, OSError):      # not installed, or its library does not load here
        return False
    return True


def segment_tester(V, F, grow: float = 0.0):
    """segments_blocked_exact for one mesh and many queries, as a function (P0, P1,
    skip_vertex=None, *, tol, front_only, margin) -> (S,) bool: on Embree when it is installed
    (its scene built once), else in numpy. grow: the triangles grown by that much
    (inflated_corners)."""
    if embree_available() and len(F):
        return Scene(V, F, grow).segments_blocked
    return lambda P0, P1, skip_vertex=None, **kw: segments_blocked_exact(V, F, P0, P1, skip_vertex, grow=grow, **kw)


class Scene:
    """An Embree scene of one triangle mesh, for many segment queries."""

    def __init__(self, V, F, grow: float = 0.0):
        from embreex import rtcore_scene
        from embreex.mesh_construction import TriangleMesh
        self.V, self.F, self.grow = np.asarray(V, np.float64), np.asarray(F, np.int64), grow
        self.scene = rtcore_scene.EmbreeScene()
        if grow > 0:        # grown triangles: a soup (F, 3 corners, 3), one per face (primID = face);
            # given as float64 corners, which embreex copies faster than an indexed float32 soup
            TriangleMesh(self.scene, np.stack(inflated_corners(self.V, self.F, grow), axis=1))
        else:
            TriangleMesh(self.scene, np.ascontiguousarray(self.V, np.float32),
                         np.ascontiguousarray(self.F, np.int32))
        T0, T1, T2 = (self.V[self.F[:, k]] for k in range(3))
        self.normals = np.cross(T1 - T0, T2 - T0)      # winding of F, not normalised

    def first_hits(self, origins, directions, reach):
        """(triangle or -1, t along `directions`) of the first hit within `reach`."""
        out = self.scene.run(np.ascontiguousarray(origins, np.float32),
                             np.ascontiguousarray(directions, np.float32),
                             dists=np.ascontiguousarray(reach, np.float32), output=1)
        return out["primID"].astype(np.int64), out["tfar"].astype(np.float64)

    def segments_blocked(self, P0, P1, skip_vertex=None, *, tol: float = 1e-6, front_only: bool = False,
                         margin: float = 0.0):
        """segments_blocked_exact's answer; undecided rays: the exact numpy test."""
        P0, P1 = np.asarray(P0, np.float64), np.asarray(P1, np.float64)
        d = P1 - P0
        blocked = np.zeros(len(P0), bool)
        t = np.full(len(P0), tol)
        active = np.flatnonzero(np.einsum("ij,ij->i", d, d) > 0)
        for _ in range(MAX_PASSES):
            reach = (1.0 - tol) - t[active]
            active = active[reach > 0]
            if not len(active):
                return blocked
            tri, hit_t = self.first_hits(P0[active] + t[active, None] * d[active], d[active],
                                         (1.0 - tol) - t[active])
            hit = tri >= 0
            ignored = np.zeros(len(active), bool)
            if skip_vertex is not None:
                own = np.asarray(skip_vertex)[active][:, None]
                ignored |= hit & (self.F[np.maximum(tri, 0)] == own).any(axis=1)
            if front_only:
                facing = np.einsum("ij,ij->i", d[active], self.normals[np.maximum(tri, 0)]) < 0
                ignored |= hit & ~facing
            if margin > 0:
                face = np.maximum(tri, 0)
                ignored |= hit & ~clear_of_plane(P0[active], P1[active], self.V[self.F[face, 0]],
                                                 self.normals[face], margin)
            blocked[active[hit & ~ignored]] = True
            again = hit & ignored
            t[active[again]] += hit_t[again] + STEP_PAST
            active = active[again]
        if len(active):
            blocked[active] = segments_blocked_exact(self.V, self.F, P0[active], P1[active],
                                                     None if skip_vertex is None else np.asarray(skip_vertex)[active],
                                                     tol=tol, front_only=front_only, margin=margin, grow=self.grow)
        return blocked
