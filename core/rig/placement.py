# SPDX-License-Identifier: GPL-3.0-or-later
"""Joint placement: joints centred in their cross-section and kept inside the surface.

The simplified tree's joints lie on the refined graph, which can run off-centre or,
on thin parts of coarse meshes, outside the surface.
"""
from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

from ..centering import center_joints
from ..proximity import InsideRule, inside_mesh

# Walls farther than this many body radii from a joint are ignored when centring it.
CENTRE_REACH_RADII = 2.5
CENTRE_REACH_MIN = 1e-3    # ... plus this (normalised frame), for joints with a ~0 radius
CENTRE_ITERATIONS = 2      # centring passes; tuned
# A point on an open sheet has a winding number of about 0.5: it is inside only above this.
INSIDE_MARGIN = 0.6
# push_inside looks for an inside point among this many candidates nearest the joint; tuned.
PUSH_CANDIDATES = 256


def center_in_sections(pos, par, rad, socket, V, F):
    """Centre joints in their cross-section, perpendicular to the bone they start.

    Sockets (hips, shoulders) stay put: their cross-section is the whole pelvis.

    Parameters
    ----------
    pos : (n, 3) float
        Joint positions, parents first.
    par : (n,) int
        Parent joint, -1 for the root.
    rad : (n,) float
        Body radius at each joint.
    socket : (n,) bool
    V, F : (V, 3) float, (F, 3) int
        The surface.

    Returns
    -------
    (n, 3) float
    """
    axes = np.zeros_like(pos)
    for v in range(1, len(pos)):          # the bone into v, then the first bone out of v
        axes[v] = pos[v] - pos[par[v]]
    first_child = {}
    for v in range(len(pos) - 1, 0, -1):
        first_child[par[v]] = v
    for v, c in first_child.items():
        axes[v] = pos[c] - pos[v]
    axes[socket] = 0.0
    return center_joints(pos, axes, V, F, CENTRE_REACH_RADII * rad + CENTRE_REACH_MIN,
                         iterations=CENTRE_ITERATIONS)


def clearly_inside(P, V, F, margin: float = INSIDE_MARGIN):
    """inside_mesh with a margin: a point on an open sheet (winding ~0.5) is not inside.

    P: (n, 3) points; V, F: the surface. Returns (n,) bool. A point that only the
    parity test finds inside still counts (that test already ignores open sheets).
    """
    ok, det = inside_mesh(P, V, F, return_details=True)
    return ok & ((np.abs(det["winding"]) > margin) | (det["part_winding"] > margin)
                 | (det["rule"] == InsideRule.PARITY))


def push_inside(pos, movable, candidates, inside_fn, k: int = PUSH_CANDIDATES):
    """Move joints that lie outside the surface to the nearest candidate point inside.

    Parameters
    ----------
    pos : (n, 3) float
        Joint positions.
    movable : (n,) bool
        Joints that may move.
    candidates : (c, 3) float
        Points near the medial axis (contracted vertices, graph nodes).
    inside_fn : callable((m, 3) points) -> (m,) bool
    k : int
        Candidates looked at per joint, nearest first.

    Returns
    -------
    pos : (n, 3) float
        A copy; joints with no inside candidate stay put.
    moved : int
        How many joints moved.
    """
    pos = pos.copy()
    idx = np.flatnonzero(movable)
    if len(idx) == 0:
        return pos, 0
    out = idx[~inside_fn(pos[idx])]
    if len(out) == 0:
        return pos, 0
    tree = cKDTree(candidates)
    _, near = tree.query(pos[out], k=min(k, len(candidates)))
    near = np.atleast_2d(near)
    ok = inside_fn(candidates[near.ravel()]).reshape(near.shape)
    moved = 0
    for row, j in enumerate(out):
        hits = np.flatnonzero(ok[row])
        if len(hits):
            pos[j] = candidates[near[row, hits[0]]]   # query results are sorted by distance
            moved += 1
    return pos, moved
