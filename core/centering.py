# SPDX-License-Identifier: GPL-3.0-or-later
"""Centre joints in the cross-section of the body part around them.

The skeleton graph can run off-centre where contraction left a sheet instead of
a curve (a fish's flat body, a cow's barrel). Each joint is moved, within the
plane perpendicular to its bone, halfway between the walls hit by rays shot in
opposite directions.
"""
from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

from .rays import ray_hits

N_DIRECTIONS = 8   # rays per joint in its cross-section plane: 4 opposite pairs
# inward_midpoints casts rays from this many surface vertices nearest each point; tuned.
INWARD_VERTICES = 32
# inward_midpoints starts each ray this far off its vertex, so it does not hit the
# vertex's own triangles.
RAY_START_OFFSET = 1e-7


def _plane_directions(axis):
    """N_DIRECTIONS unit vectors (N_DIRECTIONS, 3) evenly spread in the plane perpendicular
    to axis (3,); the second half are the first half reversed."""
    a = axis / max(np.linalg.norm(axis), 1e-12)
    # a reference axis well away from parallel to `a`, for a stable cross product
    ref = np.array([1.0, 0, 0]) if abs(a[0]) < 0.9 else np.array([0, 1.0, 0])
    e1 = np.cross(a, ref)
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(a, e1)
    ang = np.pi * np.arange(N_DIRECTIONS // 2) / (N_DIRECTIONS // 2)
    half = np.cos(ang)[:, None] * e1 + np.sin(ang)[:, None] * e2
    return np.vstack([half, -half])


def center_joints(pos, axes, V, F, reach, *, iterations: int = 2):
    """Move each point pos[i] toward the centre of its cross-section perpendicular to axes[i].

    pos: (n, 3); axes: (n, 3), a zero axis leaves its point alone; V, F: the surface.
    reach: (n,), how far walls may be (about 3 body radii); farther hits are ignored
    and so are points with no pair of opposite walls. Returns new positions (n, 3).
    """
    pos = np.array(pos, dtype=np.float64)
    T0 = V[F[:, 0]]
    E1, E2 = V[F[:, 1]] - T0, V[F[:, 2]] - T0
    centres = (T0 + V[F[:, 1]] + V[F[:, 2]]) / 3
    edge = np.sqrt(np.maximum((E1 * E1).sum(1), (E2 * E2).sum(1)))
    for _ in range(iterations):
        for i, (p, axis) in enumerate(zip(pos, axes)):
            if not np.linalg.norm(axis) > 0:
                continue
            near = np.linalg.norm(centres - p, axis=1) < reach[i] + edge
            if not near.any():
                continue
            dirs = _plane_directions(axis)
            t = ray_hits(p, dirs, T0[near], E1[near], E2[near])
            t = np.where(t < reach[i], t, np.inf)
            k = N_DIRECTIONS // 2
            pair = np.isfinite(t[:k]) & np.isfinite(t[k:])
            if pair.any():
                half = (t[:k][pair] - t[k:][pair]) / 2
                shift = (half[:, None] * dirs[:k][pair]).mean(axis=0)
                pos[i] = p + shift
    return pos


def inward_midpoints(V, F, points, k: int = INWARD_VERTICES):
    """Points halfway through the body under the surface vertices nearest to `points`.

    For each of the k nearest vertices, a ray is cast along both senses of its
    normal (winding may be inconsistent); the midpoint to the first wall hit lies
    inside the part. A fallback pool of inside candidates for thin, coarse meshes.
    points: (n, 3). Returns (m, 3).
    """
    T0 = V[F[:, 0]]
    E1, E2 = V[F[:, 1]] - T0, V[F[:, 2]] - T0
    fn = np.cross(E1, E2)
    normals = np.zeros_like(V)
    for c in range(3):
        np.add.at(normals, F[:, c], fn)
    normals /= np.maximum(np.linalg.norm(normals, axis=1, keepdims=True), 1e-300)
    _, near = cKDTree(V).query(np.atleast_2d(points), k=min(k, len(V)))
    out = []
    for v in np.unique(near):
        n = normals[v]
        if not np.linalg.norm(n) > 0:
            continue
        for sense in (-1.0, 1.0):
            d = sense * n
            start = V[v] + RAY_START_OFFSET * d
            t = ray_hits(start, d[None], T0, E1, E2)[0]
            if np.isfinite(t):
                out.append(start + 0.5 * t * d)
    return np.array(out).reshape(-1, 3)
