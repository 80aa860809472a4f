# SPDX-License-Identifier: GPL-3.0-or-later
"""Where points lie relative to a surface and to segments: each point's nearest segment,
and whether it is inside a mesh. Pure numpy/scipy, never bpy. Auto Skeleton and Auto
Skin use them; the skeleton quality metrics (core/metrics.py) measure with them.

Inside test: `winding_number` is the generalized winding number (Jacobson, Kavan,
Sorkine-Hornung 2013) summed from van Oosterom–Strackee solid angles;
`inside_mesh` makes it robust for real game meshes (see its docstring;
docs/metrics.md#skeleton-metrics).
"""
from __future__ import annotations

from enum import IntEnum

import numpy as np
from scipy.sparse import csr_matrix

from . import mesh

__all__ = ["points_array", "segments_array", "nearest_segments", "winding_number", "inside_mesh",
           "mesh_components", "InsideRule"]

# Work arrays are (points chunk × faces or segments); keep each below ~this many entries.
_CHUNK_ENTRIES = 1_000_000


def points_array(x, name) -> np.ndarray:
    """x as a float64 (n, 3) array; ValueError naming it when empty or not finite."""
    a = np.asarray(x, dtype=np.float64)
    if a.size == 0:
        a = a.reshape(0, 3)
    a = a.reshape(-1, 3)
    if len(a) == 0:
        raise ValueError(f"{name} is empty")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} has non-finite coordinates")
    return a


def segments_array(x, name) -> np.ndarray:
    """x as a float64 (k, 2, 3) array of segments; ValueError naming it when empty or not finite."""
    a = np.asarray(x, dtype=np.float64)
    if a.size == 0:
        raise ValueError(f"{name} is empty")
    a = a.reshape(-1, 2, 3)
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} has non-finite coordinates")
    return a


def nearest_segments(points, segments):
    """(distance (N,), index (N,)) of each point's nearest segment of (K,2,3).

    Zero-length segments count as points. Brute force in chunks (N·K work)."""
    P = points_array(points, "points")
    S = segments_array(segments, "segments")
    A = S[:, 0]
    D = S[:, 1] - A
    dd = np.einsum("ij,ij->i", D, D)
    inv = np.divide(1.0, dd, out=np.zeros_like(dd), where=dd > 0)
    out, index = np.empty(len(P)), np.empty(len(P), np.int64)
    step = max(1, _CHUNK_ENTRIES // max(1, len(S)))
    for s in range(0, len(P), step):
        p = P[s:s + step, None, :]                      # (n,1,3)
        ap = p - A[None]                                # (n,K,3)
        t = np.clip(np.einsum("nkj,kj->nk", ap, D) * inv, 0.0, 1.0)
        r = ap - t[..., None] * D[None]
        d2 = np.einsum("nkj,nkj->nk", r, r)
        index[s:s + step] = d2.argmin(axis=1)
        out[s:s + step] = np.sqrt(np.take_along_axis(d2, index[s:s + step, None], axis=1)[:, 0])
    return out, index


# ---------------------------------------------------------------------------------------
# Inside / outside

def _solid_angles(P, T0, T1, T2) -> np.ndarray:
    """Signed solid angles (n, F) of triangles (T0,T1,T2 each (F,3)) seen from points P (n,3).

    van Oosterom & Strackee 1983: tan(Ω/2) = a·(b×c) / (|a||b||c| + (a·b)|c| + (b·c)|a| + (c·a)|b|).
    """
    a = T0[None] - P[:, None]
    b = T1[None] - P[:, None]
    c = T2[None] - P[:, None]
    la = np.sqrt(np.einsum("nfj,nfj->nf", a, a))
    lb = np.sqrt(np.einsum("nfj,nfj->nf", b, b))
    lc = np.sqrt(np.einsum("nfj,nfj->nf", c, c))
    num = np.einsum("nfj,nfj->nf", a, np.cross(b, c))
    den = (la * lb * lc + np.einsum("nfj,nfj->nf", a, b) * lc
           + np.einsum("nfj,nfj->nf", b, c) * la + np.einsum("nfj,nfj->nf", c, a) * lb)
    return 2.0 * np.arctan2(num, den)


def _winding_per_group(P, V, F, group: csr_matrix) -> np.ndarray:
    """Winding numbers (n, C): face solid angles summed per group (group: F×C indicator)."""
    T0, T1, T2 = V[F[:, 0]], V[F[:, 1]], V[F[:, 2]]
    out = np.empty((len(P), group.shape[1]))
    step = max(1, _CHUNK_ENTRIES // max(1, len(F)))
    for s in range(0, len(P), step):
        omega = _solid_angles(P[s:s + step], T0, T1, T2)
        out[s:s + step] = np.asarray(group.T.dot(omega.T).T) if group.shape[1] > 1 \
            else omega.sum(axis=1, keepdims=True)
    return out / (4.0 * np.pi)


def _mesh_arrays(V, F):
    V = points_array(V, "V")
    F = np.asarray(F, dtype=np.int64).reshape(-1, 3)
    if len(F) and (F.min() < 0 or F.max() >= len(V)):
        raise ValueError("faces index outside the vertex array")
    return V, F


def winding_number(points, V, F) -> np.ndarray:
    """Generalized winding number of mesh (V,F) at each point (N,3): returns (N,).

    w(p) = (1/4π) Σ_f Ω_f(p) with Ω_f the signed solid angle of triangle f
    (van Oosterom–Strackee). For a closed, consistently outward-oriented mesh w = 1
    inside and 0 outside; inward-oriented gives −1; holes make it fractional.
    Work is N·F, done in chunks.
    """
    P = points_array(points, "points")
    V, F = _mesh_arrays(V, F)
    if len(F) == 0:
        return np.zeros(len(P))
    return _winding_per_group(P, V, F, csr_matrix(np.ones((len(F), 1))))[:, 0]


def mesh_components(V, F, weld_tol: float = 1e-6):
    """Weld coincident vertices and label connected components.

    Returns (Vw, Fw, face_label, n_components): welded vertices, faces re-indexed into
    them, each face's component id. Vertices closer than weld_tol·(bbox diagonal),
    on a grid, count as one (seams split for UVs or normals are rejoined).
    """
    V, F = _mesh_arrays(V, F)
    diag = mesh.bbox_diagonal(V)
    tol = weld_tol * diag if diag > 0 else 1.0
    first, inv, _ = mesh.weld_positions(V, tol, origin=V.min(axis=0))
    Vw = V[first]
    Fw = inv[F]
    if len(Fw) == 0:
        return Vw, Fw, np.zeros(0, dtype=np.int64), 0
    _, vlabel = mesh.vertex_components(len(Vw), Fw)
    flabel = vlabel[Fw[:, 0]]
    _, flabel = np.unique(flabel, return_inverse=True)
    flabel = flabel.reshape(-1)
    return Vw, Fw, flabel, int(flabel.max()) + 1


def _line_frames() -> np.ndarray:
    """Six well-spread line directions (the icosahedron's vertex axes), turned by a fixed
    "irrational" rotation so that no line runs along the axis-aligned edges and faces
    of game meshes. Returns (6, 3, 3) orthonormal frames whose last row is the line."""
    g = (1.0 + 5.0 ** 0.5) / 2.0
    D = np.array([[0, 1, g], [0, -1, g], [1, g, 0], [-1, g, 0], [g, 0, 1], [-g, 0, 1]], float)
    D /= np.linalg.norm(D, axis=1, keepdims=True)

    def rot(axis, ang):
        axis = np.asarray(axis, float) / np.linalg.norm(axis)
        K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
        return np.eye(3) + np.sin(ang) * K + (1 - np.cos(ang)) * K @ K
    D = D @ (rot([0.3141, 0.5926, 0.5358], 0.9791) @ rot([0.8979, -0.3238, 0.4626], 0.4338)).T
    frames = []
    for d in D:
        e1 = np.cross(d, [0.5377, 0.2131, -0.8156])
        e1 /= np.linalg.norm(e1)
        frames.append(np.stack([e1, np.cross(d, e1), d]))
    return np.array(frames)


_FRAMES = _line_frames()
N_LINES = len(_FRAMES)
PARITY_MIN_VOTES = 4      # of N_LINES lines: at least two thirds must agree


def _line_parity_votes(P, V, F) -> np.ndarray:
    """Per point: how many of the N_LINES fixed lines through it cross the surface an odd
    number of times on BOTH sides of the point. Orientation does not matter. (n,) ints."""
    votes = np.zeros(len(P), dtype=np.int64)
    step = max(1, _CHUNK_ENTRIES // max(1, len(F)))
    for R in _FRAMES:
        Pr = P @ R.T                 # columns: u, v, depth along the line
        Vr = V @ R.T
        A, B, C = Vr[F[:, 0]], Vr[F[:, 1]], Vr[F[:, 2]]
        area2 = (B[:, 0] - A[:, 0]) * (C[:, 1] - A[:, 1]) - (B[:, 1] - A[:, 1]) * (C[:, 0] - A[:, 0])
        ok = area2 != 0
        A, B, C, area2 = A[ok], B[ok], C[ok], area2[ok]
        if len(A) == 0:
            continue
        sgn = np.sign(area2)[None]
        for s in range(0, len(P), step):
            p = Pr[s:s + step]
            pu, pv = p[:, 0, None], p[:, 1, None]
            # barycentric coordinates (times area2) of the projected point
            w0 = (B[None, :, 0] - pu) * (C[None, :, 1] - pv) - (B[None, :, 1] - pv) * (C[None, :, 0] - pu)
            w1 = (C[None, :, 0] - pu) * (A[None, :, 1] - pv) - (C[None, :, 1] - pv) * (A[None, :, 0] - pu)
            w2 = area2[None] - w0 - w1
            hit = (w0 * sgn >= 0) & (w1 * sgn >= 0) & (w2 * sgn > 0)
            depth = (w0 * A[None, :, 2] + w1 * B[None, :, 2] + w2 * C[None, :, 2]) / area2[None]
            above = np.count_nonzero(hit & (depth > p[:, 2, None]), axis=1)
            below = np.count_nonzero(hit & (depth < p[:, 2, None]), axis=1)
            votes[s:s + step] += ((above % 2 == 1) & (below % 2 == 1)).astype(np.int64)
    return votes


class InsideRule(IntEnum):
    """Which test of `inside_mesh` decided a point (its details["rule"]; ints, as stored)."""
    OUTSIDE = 0        # no test passed
    WINDING = 1        # 1. total winding number, every part oriented outward
    PART_WINDING = 2   # 2. winding number of one part on its own
    PARITY = 3         # 3. ray parity within one part


def inside_mesh(points, V, F, *, weld_tol: float = 1e-6, return_details: bool = False):
    """Robust inside test for real meshes (multi-part, flipped or mixed winding, holes).

    The mesh is welded (see `mesh_components`) and split into connected components;
    patches of mixed winding are made consistent (`core.mesh.consistent_winding`).
    A point is inside if ANY of these holds:

    1. |Σ_c s_c·w_c(p)| > 0.5 — the total winding number after orienting every
       component outward (s_c = sign of the component's signed volume), so parts that
       are modelled inside-out count like the others, and open pieces that together
       enclose the point (a head and a torso meeting at the neck) add up;
    2. |w_c(p)| > 0.5 for some component c — inside one part on its own, whatever
       the orientation (overlapping parts cannot cancel out, e.g. an inverted eye
       inside a head);
    3. ray parity within one component (fallback for winding that is inconsistent
       inside a component): of 6 lines through p along fixed, well-spread directions,
       at least 4 cross that component an odd number of times on both sides of p. On a closed
       surface both sides of a line always agree, so a point inside a closed part
       passes however its triangles are oriented; an open sheet is crossed on one side
       only and never passes; a hole spoils only the lines that go through it.

    Winding numbers cost N·F; the parity fallback only runs for points that 1–2 left
    outside and only against components whose bounding box contains them.
    Returns a bool array (N,); with return_details=True also a dict with the total
    oriented winding number ("winding"), the largest per-part |w| ("part_winding"),
    parity votes ("parity_votes") and which rule decided ("rule": an InsideRule value).
    """
    P = points_array(points, "points")
    V, F = _mesh_arrays(V, F)
    n = len(P)
    details = {"winding": np.zeros(n), "part_winding": np.zeros(n),
               "parity_votes": np.zeros(n, dtype=np.int64), "rule": np.zeros(n, dtype=np.int64)}
    if len(F) == 0:
        return (np.zeros(n, bool), details) if return_details else np.zeros(n, bool)
    Vw, Fw, label, C = mesh_components(V, F, weld_tol)
    Fw = mesh.consistent_winding(Vw, Fw)     # patches of mixed winding: one winding first (core.mesh)
    # Orientation of each component from its signed volume (about its own centroid).
    T0, T1, T2 = Vw[Fw[:, 0]], Vw[Fw[:, 1]], Vw[Fw[:, 2]]
    cen = np.zeros((C, 3))
    np.add.at(cen, label, (T0 + T1 + T2) / 3.0)
    cen /= np.maximum(np.bincount(label, minlength=C), 1)[:, None]
    c = cen[label]
    vol6 = np.einsum("ij,ij->i", T0 - c, np.cross(T1 - c, T2 - c))
    signed = np.bincount(label, weights=vol6, minlength=C)
    s = np.where(signed < 0, -1.0, 1.0)
    group = csr_matrix((np.ones(len(Fw)), (np.arange(len(Fw)), label)), shape=(len(Fw), C))
    wc = _winding_per_group(P, Vw, Fw, group)            # (n, C)
    total = wc @ s
    part = np.abs(wc).max(axis=1)
    inside = np.abs(total) > 0.5
    details["rule"][inside] = InsideRule.WINDING
    r2 = ~inside & (part > 0.5)
    details["rule"][r2] = InsideRule.PART_WINDING
    inside |= r2
    details["winding"], details["part_winding"] = total, part
    # Parity fallback.
    todo = np.flatnonzero(~inside)
    if len(todo):
        lo = np.full((C, 3), np.inf)
        hi = np.full((C, 3), -np.inf)
        for T in (T0, T1, T2):
            np.minimum.at(lo, label, T)
            np.maximum.at(hi, label, T)
        order = np.argsort(label, kind="stable")
        starts = np.searchsorted(label[order], np.arange(C + 1))
        votes = np.zeros(n, dtype=np.int64)
        for ci in range(C):
            q = todo[np.all((P[todo] >= lo[ci]) & (P[todo] <= hi[ci]), axis=1)]
            q = q[votes[q] < PARITY_MIN_VOTES]
            if len(q) == 0:
                continue
            faces = Fw[order[starts[ci]:starts[ci + 1]]]
            votes[q] = np.maximum(votes[q], _line_parity_votes(P[q], Vw, faces))
        r3 = votes >= PARITY_MIN_VOTES
        r3 &= ~inside
        details["parity_votes"] = votes
        details["rule"][r3] = InsideRule.PARITY
        inside |= r3
    return (inside, details) if return_details else inside
