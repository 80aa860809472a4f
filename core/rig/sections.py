# SPDX-License-Identifier: GPL-3.0-or-later
"""Cross-sections of a limb along its centre path (docs/auto_skeleton.md#landmark-cues).

A section is the loop where the plane through a point of the path, square to the path,
cuts the surface: each face that the plane crosses gives a segment between its two
crossed edges, the segments join into loops, and the limb's loop is the one around the
path (the nearest one when none winds around it: the other leg, the torso and the hand
lie beside). Its area gives the limb's thickness there, its centre the limb's axis, and
the mesh part it lies on tells a segmented body's separate limb pieces apart, and its
extent front to back (y: a humanoid's front is -y) shows a kneecap.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from ..mesh import triangle_edges
from .polyline import point_at

TANGENT_SPAN = 0.05      # the path's direction at a point: its chord over this share of the length, each way


class Section(NamedTuple):
    centre: np.ndarray   # (3,) the loop's centroid (the path point where no loop was found)
    radius: float        # sqrt(area / pi) of the loop; nan without one
    part: int            # the mesh part (vertex component) of the loop; -1 without one
    around: bool = False  # the loop winds around the path (else it is the nearest one beside it)
    front: float = float("nan")   # the loop's least y (its front-most point on a humanoid); nan without one
    back: float = float("nan")    # the loop's greatest y


def along(V, F, parts, path, fractions) -> list:
    """Section (see the module) of the mesh (V, F) at each fraction of the polyline
    `path`; `parts` (n,) labels each vertex's mesh part (connected component)."""
    E, face_edges = _edges(F)
    return [_section(V, E, face_edges, parts, point_at(path, f), _tangent(path, f)) for f in fractions]


def _tangent(path, f) -> np.ndarray:
    a, b = point_at(path, max(f - TANGENT_SPAN, 0.0)), point_at(path, min(f + TANGENT_SPAN, 1.0))
    d = b - a
    return d / max(np.linalg.norm(d), 1e-12)


def _edges(F):
    """(unique edges (m, 2), (f, 3) each face's edge indices)."""
    half = np.sort(triangle_edges(np.asarray(F, dtype=np.int64)), axis=1)
    E, inverse = np.unique(half, axis=0, return_inverse=True)
    return E, inverse.reshape(3, -1).T


def _section(V, E, face_edges, parts, p, t) -> Section:
    s = (V - p) @ t
    crossed = (s[E[:, 0]] > 0) != (s[E[:, 1]] > 0)
    if not crossed.any():
        return Section(p, float("nan"), -1)
    a, b = E[crossed, 0], E[crossed, 1]
    w = s[a] / (s[a] - s[b])
    points = V[a] + w[:, None] * (V[b] - V[a])
    index = np.full(len(E), -1)
    index[crossed] = np.arange(crossed.sum())
    seg = index[face_edges]
    seg = seg[(seg >= 0).sum(axis=1) == 2]
    seg = np.sort(seg, axis=1)[:, 1:]                       # the face's two crossed edges
    n = len(points)
    graph = coo_matrix((np.ones(len(seg)), (seg[:, 0], seg[:, 1])), shape=(n, n))
    _, loop = connected_components(graph, directed=False)
    u = np.cross(t, [1.0, 0.0, 0.0] if abs(t[0]) < 0.9 else [0.0, 1.0, 0.0])
    u /= np.linalg.norm(u)
    v = np.cross(t, u)
    xy = np.stack([(points - p) @ u, (points - p) @ v], axis=1)
    best, best_key = None, None
    for k in np.unique(loop[seg[:, 0]]) if len(seg) else []:
        mine = seg[loop[seg[:, 0]] == k]
        area, winding = _area_and_winding(xy, mine)
        key = (not winding, np.linalg.norm(xy[mine.ravel()], axis=1).min())
        if best_key is None or key < best_key:
            best, best_key = (k, area), key
    if best is None:
        return Section(p, float("nan"), -1)
    k, area = best
    members = np.unique(seg[loop[seg[:, 0]] == k])
    part = int(np.bincount(parts[a[members]]).argmax())
    return Section(points[members].mean(axis=0), float(np.sqrt(abs(area) / np.pi)), part, not best_key[0],
                   float(points[members, 1].min()), float(points[members, 1].max()))


def _area_and_winding(xy, segments):
    """(|area| enclosed by the loop's segments, whether the loop winds around the origin),
    from the segments' signed triangles with the origin; the segments' directions are
    not consistent, so each is oriented to turn the same way about the loop's centroid."""
    P, Q = xy[segments[:, 0]], xy[segments[:, 1]]
    c = np.concatenate([P, Q]).mean(axis=0)
    turn = np.sign((P[:, 0] - c[0]) * (Q[:, 1] - c[1]) - (P[:, 1] - c[1]) * (Q[:, 0] - c[0]))
    turn[turn == 0] = 1.0
    area = 0.5 * np.sum(turn * ((P[:, 0] - c[0]) * (Q[:, 1] - c[1]) - (P[:, 1] - c[1]) * (Q[:, 0] - c[0])))
    return abs(area), _contains(P, Q)


def _contains(P, Q) -> bool:
    """Whether the origin is inside the segments' loop (ray parity along +x)."""
    crosses = (P[:, 1] > 0) != (Q[:, 1] > 0)
    if not crosses.any():
        return False
    x = P[crosses, 0] + (0 - P[crosses, 1]) * (Q[crosses, 0] - P[crosses, 0]) / (Q[crosses, 1] - P[crosses, 1])
    return bool((x > 0).sum() % 2 == 1)
