# SPDX-License-Identifier: GPL-3.0-or-later
"""Symmetry: a mirror-symmetric character (in x = 0) gets a mirror-symmetric rig.

The collapse is greedy and the decimated proxy is not symmetric even when the mesh
is, so left and right come out slightly different; these functions even them out.
Whether the mesh is symmetric, and in which plane, is core/symmetry.py's.
"""
from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

from ..symmetry import MIRROR

ONTO_PLANE = np.array([0.0, 1.0, 1.0])   # x -> 0: a point moved onto the plane of symmetry


def mirrored_counts(counts, polylines, tolerance):
    """Give a chain and its mirror image (x -> -x) the same bone count.

    So a symmetric character gets a symmetric rig even where rounding would split them
    differently. counts: one int per chain; polylines: one (n, 3) array per chain;
    chains whose ends are within tolerance of each other's mirror image are a pair.
    Returns the counts, a pair's raised to the larger of the two.
    """
    counts = list(counts)
    ends = np.array([np.concatenate([P[0], P[-1]]) for P in polylines])
    mirrored = ends * np.tile(MIRROR, 2)
    for i in range(len(counts)):
        if abs(ends[i, 0]) + abs(ends[i, 3]) < tolerance:
            continue                      # a centre chain is its own mirror
        d = np.abs(mirrored - ends[i]).max(axis=1)
        d[i] = np.inf
        j = int(d.argmin())
        if d[j] < tolerance:
            counts[i] = counts[j] = max(counts[i], counts[j])
    return counts


def mirror_tree(pos, par, rad, socket, *, centre: float, tolerance: float):
    """One side of a symmetric character's tree, mirrored onto the other.

    The collapse is greedy, so a symmetric mesh can still give left and right limbs
    different parents or joint counts (an arm off the neck on one side, off the chest on
    the other). When the two sides already match as point sets (every joint more than
    `centre` off the plane has a mirror image within `tolerance` on the other side),
    the side with more joints is kept and mirrored, centre joints move onto the plane
    and a socket that only carried a dropped limb goes.

    Parameters
    ----------
    pos, par : (n, 3) float, (n,) int
        The joint tree, as for `bones.to_bones`.
    rad : (n,) float
    socket : (n,) bool
    centre, tolerance : float

    Returns
    -------
    (pos, par, rad, socket) of the mirrored tree; the inputs themselves when the sides
    do not match (a character holding a sword in one hand) or a branch crosses the plane.
    """
    pos, par = np.asarray(pos, dtype=np.float64), np.asarray(par)
    side = np.where(pos[:, 0] > centre, 1, np.where(pos[:, 0] < -centre, -1, 0))
    if not _sides_match(pos, par, side, tolerance):
        return pos, par, rad, socket
    left, right = np.flatnonzero(side > 0), np.flatnonzero(side < 0)
    keep_side = 1 if len(left) >= len(right) else -1
    order = np.flatnonzero(_kept_joints(par, socket, side != -keep_side))
    index = np.full(len(pos), -1)
    index[order] = np.arange(len(order))
    mirror_of = {}
    new_pos = [p * ONTO_PLANE if side[v] == 0 else p for v, p in zip(order, pos[order])]
    new_par = [-1 if v == 0 else index[par[v]] for v in order]
    new_rad, new_socket = list(rad[order]), list(socket[order])
    for v in order:
        if side[v] == keep_side:
            p = par[v]
            mirror_of[v] = len(new_pos)
            new_pos.append(pos[v] * MIRROR)
            new_par.append(mirror_of[p] if side[p] == keep_side else index[p])
            new_rad.append(rad[v])
            new_socket.append(socket[v])
    return np.array(new_pos), np.array(new_par), np.array(new_rad), np.array(new_socket, bool)


def _sides_match(pos, par, side, tolerance):
    """Can the tree be mirrored? The root is on the plane, both sides have joints, each
    side's joints have mirror images on the other within tolerance, no bone crosses the
    plane and no centre joint hangs off a side joint. side: (n,) -1, 0 or 1 per joint."""
    left, right = np.flatnonzero(side > 0), np.flatnonzero(side < 0)
    if side[0] != 0 or len(left) == 0 or len(right) == 0:
        return False
    for a, b in ((left, right), (right, left)):
        if cKDTree(pos[b]).query(pos[a] * MIRROR)[0].max() > tolerance:
            return False
    return not any(side[v] * side[par[v]] < 0 or (side[v] == 0 and side[par[v]] != 0)
                   for v in range(1, len(pos)))


def _kept_joints(par, socket, kept):
    """kept (n,) bool, less the sockets left without the limb they carried (repeatedly)."""
    had_child = np.zeros(len(par), bool)
    had_child[par[1:]] = True
    while True:
        has_child = np.zeros(len(par), bool)
        has_child[par[1:][kept[1:]]] = True
        orphan = kept & had_child & ~has_child & np.asarray(socket, bool)
        if not orphan.any():
            return kept
        kept &= ~orphan


def mirror_partners(pos, tolerance: float) -> np.ndarray:
    """(n,) each joint's mirror partner: the joint nearest its mirror image (x -> -x), when
    that is mutual and within tolerance (a joint on the plane is its own partner); else -1."""
    pos = np.asarray(pos, dtype=np.float64)
    dist, near = cKDTree(pos).query(pos * MIRROR)
    mutual = (dist <= tolerance) & (near[near] == np.arange(len(pos)))
    return np.where(mutual, near, -1)


def mirror_pairs(pos, tolerance: float):
    """Joints of a mirror-symmetric character made exactly symmetric in x = 0.

    Two joints that are each other's nearest mirror image (within tolerance) move to
    the mean of one and the other's mirror image; a joint that is its own mirror image
    moves onto the plane. Joints without a partner stay where they are. The collapse
    graph and the decimated proxy are not symmetric even when the mesh is.
    pos: (n, 3). Returns a new (n, 3) array.
    """
    pos = np.asarray(pos, dtype=np.float64)
    out = pos.copy()
    for i, k in enumerate(mirror_partners(pos, tolerance)):
        if k == i:
            out[i, 0] = 0.0
        elif k >= 0:
            out[i] = 0.5 * (pos[i] + pos[k] * MIRROR)
    return out
