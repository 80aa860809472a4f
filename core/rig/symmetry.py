# SPDX-License-Identifier: GPL-3.0-or-later
"""Symmetry: a mirror-symmetric character (in x = 0) gets a mirror-symmetric rig.

The collapse is greedy and the decimated proxy is not symmetric even when the mesh
is, so left and right come out slightly different; these functions even them out.
"""
from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

MIRROR = np.array([-1.0, 1.0, 1.0])   # left <-> right (x = 0 is the plane of symmetry)
ONTO_PLANE = np.array([0.0, 1.0, 1.0])   # x -> 0: a point moved onto the plane of symmetry
# Mirrored vertices this close (median, normalised frame) to the mesh: a symmetric mesh.
SYMMETRY_TOLERANCE = 0.005
# is_mirror_symmetric tests at most this many vertices (evenly spread): cheap on huge meshes.
SYMMETRY_SAMPLE = 20000
# symmetry_frame: the plane of symmetry may lie this far (normalised frame) from the
# bounding box's centre, searched in steps of PLANE_STEP then PLANE_STEP / 10: a raised
# wing, a held prop or a longer fin on one side widens the box on that side.
PLANE_SEARCH = 0.05
PLANE_STEP = 0.0025
PLANE_SAMPLE = 2000        # vertices tested per candidate plane (the chosen one: SYMMETRY_SAMPLE)


def is_mirror_symmetric(V, tolerance: float = SYMMETRY_TOLERANCE, sample: int = SYMMETRY_SAMPLE) -> bool:
    """Is the (normalised) mesh V (n, 3) its own mirror image in x = 0?

    Median distance from a mirrored vertex to the nearest vertex (a sample of them on
    big meshes), below tolerance.
    """
    return _mirror_gap(V, 0.0, sample) < tolerance


# Quarter turns that bring another plane of symmetry to x = 0, as the naming expects:
# about the vertical, y -> x (upright, facing +-X); about y, z -> x (lying on its side).
QUARTER_TURN = np.array([[0.0, 1.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
SIDE_TURN = np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]])


def is_side_turn(turn) -> bool:
    """Is `turn` (from symmetry_turn) the one for a character lying on its side?"""
    return bool(np.array_equal(turn, SIDE_TURN))


def symmetry_turn(V) -> np.ndarray:
    """Rotation (3, 3) to apply to the normalised mesh V before rigging so that its plane
    of symmetry is x = 0: the identity when V is symmetric in x = 0 (or in no plane),
    QUARTER_TURN when it is in y = 0 (facing +X or -X), SIDE_TURN when it is in z = 0.
    Which way is up and which way is front within that plane is `orientation.upright_turn`'s
    business, once the rig's limbs are known."""
    if is_mirror_symmetric(V):
        return np.eye(3)
    for turn in (QUARTER_TURN, SIDE_TURN):
        if is_mirror_symmetric(V @ turn.T):
            return turn.copy()
    return np.eye(3)


def symmetry_frame(V) -> tuple:
    """(turn, shift): symmetry_turn, and the offset along x of the plane of symmetry in
    the turned frame (V @ turn.T - [shift, 0, 0] is symmetric in x = 0). The box centre
    is tried first; a mesh symmetric in no plane through it is tried with the plane moved
    up to PLANE_SEARCH, for each of the three turns (docs/auto_skeleton.md#symmetry).
    (np.eye(3), 0.0) when no plane is found."""
    turn = symmetry_turn(V)       # the identity: symmetric in x = 0, or in no plane through the centre
    if not np.array_equal(turn, np.eye(3)) or is_mirror_symmetric(V):
        return turn, 0.0
    best = None
    for turn in (np.eye(3), QUARTER_TURN, SIDE_TURN):
        W = V @ turn.T
        shift = _plane_offset(W)
        gap = _mirror_gap(W, shift)
        if best is None or gap < best[0]:
            best = (gap, turn.copy(), shift)
    gap, turn, shift = best
    return (turn, shift) if gap < SYMMETRY_TOLERANCE else (np.eye(3), 0.0)


def _plane_offset(W, sample: int = PLANE_SAMPLE) -> float:
    """The x offset (within PLANE_SEARCH) of the plane that W's mirror image fits best."""
    tree = cKDTree(W)
    shifts = np.arange(-PLANE_SEARCH, PLANE_SEARCH + 1e-12, PLANE_STEP)
    coarse = float(shifts[np.argmin([_mirror_gap(W, s, sample, tree) for s in shifts])])
    fine = coarse + np.arange(-PLANE_STEP, PLANE_STEP + 1e-12, PLANE_STEP / 10)
    return float(fine[np.argmin([_mirror_gap(W, s, sample, tree) for s in fine])])


def _mirror_gap(W, shift, sample: int = SYMMETRY_SAMPLE, tree=None) -> float:
    """Median distance from W's mirror image in the plane x = shift to W (tree: W's)."""
    pick = W[np.unique(np.linspace(0, len(W) - 1, min(len(W), sample)).astype(np.int64))]
    mirrored = pick * MIRROR + [2.0 * shift, 0.0, 0.0]
    d, _ = (cKDTree(W) if tree is None else tree).query(mirrored)
    return float(np.median(d))


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
