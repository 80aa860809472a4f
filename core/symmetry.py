# SPDX-License-Identifier: GPL-3.0-or-later
"""Symmetry of a mesh: is it its own mirror image, and which turn brings its plane of
symmetry to x = 0, a quarter turn or any other (docs/auto_skeleton.md#symmetry). Auto
Skeleton and Auto Skin both use it; making the rig itself symmetric is rig/symmetry.py's."""
from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

MIRROR = np.array([-1.0, 1.0, 1.0])   # left <-> right (x = 0 is the plane of symmetry)
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
    """Is `turn` (from symmetry_turn or oblique_frame) the one for a character lying on its
    side: does it bring z, more than x or y, onto the plane's normal x?"""
    return int(np.argmax(np.abs(np.asarray(turn)[0]))) == 2


def symmetry_turn(V) -> np.ndarray:
    """Rotation (3, 3) to apply to the normalised mesh V before rigging so that its plane
    of symmetry is x = 0: the identity when V is symmetric in x = 0 (or in no plane),
    QUARTER_TURN when it is in y = 0 (facing +X or -X), SIDE_TURN when it is in z = 0.
    Which way is up and which way is front within that plane is `orientation.upright_turn`'s
    business, once the rig's limbs are known. A mesh symmetric in both x = 0 and y = 0 (a
    body of boxes, as deep in front as behind) gets the plane across its wider side
    (widest_plane)."""
    upright = [turn for turn in (np.eye(3), QUARTER_TURN) if is_mirror_symmetric(V @ turn.T)]
    if upright:
        return upright[widest_plane(V, [turn[0] for turn in upright])].copy()
    if is_mirror_symmetric(V @ SIDE_TURN.T):
        return SIDE_TURN.copy()
    return np.eye(3)


def widest_plane(V, normals) -> int:
    """Which of several planes of symmetry (their unit normals) is the body's left-right
    plane: the one whose normal the mesh spans farthest along. A body symmetric front to
    back too is wider from side to side than from front to back (shoulders, arms, legs
    apart); the other plane took a blocky humanoid's front for a side, and it was no
    humanoid (docs/auto_skeleton.md#symmetry)."""
    return int(np.argmax([np.ptp(np.asarray(V) @ n) for n in normals]))


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


def _spread(V, count: int):
    """At most `count` rows of V spread evenly over its order (the same rows every call)."""
    return V[np.unique(np.linspace(0, len(V) - 1, min(len(V), count)).astype(np.int64))]


def _mirror_gap(W, shift, sample: int = SYMMETRY_SAMPLE, tree=None) -> float:
    """Median distance from W's mirror image in the plane x = shift to W (tree: W's)."""
    pick = _spread(W, sample)
    mirrored = pick * MIRROR + [2.0 * shift, 0.0, 0.0]
    d, _ = (cKDTree(W) if tree is None else tree).query(mirrored)
    return float(np.median(d))


# oblique_turn: a plane of symmetry at any angle (docs/auto_skeleton.md#symmetry).
OBLIQUE_STEP = 5.0         # degrees between candidate normals on each great circle searched
OBLIQUE_SAMPLE = 500       # vertices tested per candidate normal
OBLIQUE_KEEP = 3           # best candidates refined
REFINE_ITERATIONS = 20     # mirror-ICP steps per refined candidate
REFINE_SAMPLE = 2000       # vertices per mirror-ICP step
GAP_REACH = 0.05           # candidate scores: mirror images farther from the mesh count as infinitely far
# The axis each quarter turn keeps in the plane of symmetry (row 1 or 2 of the turn):
# z (up) for a plane nearest x = 0 or y = 0, y for one nearest z = 0 (lying on its side).
QUARTER_TURNS = (np.eye(3), QUARTER_TURN, SIDE_TURN)


def oblique_turn(V):
    """Rotation (3, 3) to apply to the normalised mesh V so that a plane of symmetry at
    any angle becomes parallel to x = 0, or None when the mesh is symmetric in none.

    For meshes symmetry_frame finds no plane for (a character turned about its up axis).
    Candidate normals: the principal axes of the vertices (a mirror symmetry keeps them,
    so one is the plane's normal) and the great circles perpendicular to each principal
    axis and to z, every OBLIQUE_STEP degrees (for near-equal principal spreads), each
    scored by the mirror gap in the plane through the vertices' mean; the best
    OBLIQUE_KEEP are refined by mirror-ICP. The turn is the one nearest to the quarter
    turn for that normal's nearest axis that keeps that turn's in-plane axis (z: up) in
    the plane (_turn_for). Of the refined planes with a gap under 2 SYMMETRY_TOLERANCE the
    best is taken, or, when two or more of them hold the up axis, the widest
    (widest_plane); None when there is none. oblique_frame normalises V @ turn.T again
    and tests it."""
    V = np.asarray(V, np.float64)
    tree = cKDTree(V)
    centre = V.mean(axis=0)
    axes = np.linalg.eigh(np.cov((V - centre).T))[1].T
    normals = [axes]
    angles = np.radians(np.arange(0.0, 180.0, OBLIQUE_STEP))
    for a in (*axes, np.array([0.0, 0.0, 1.0])):
        u = np.cross(a, [1.0, 0.0, 0.0] if abs(a[0]) < 0.9 else [0.0, 1.0, 0.0])
        u /= np.linalg.norm(u)
        w = np.cross(a, u)
        normals.append(np.cos(angles)[:, None] * u + np.sin(angles)[:, None] * w)
    normals = np.concatenate(normals)
    pick = _spread(V, OBLIQUE_SAMPLE)
    gaps = np.array([_plane_gap(pick, tree, n, n @ centre) for n in normals])
    found = []
    for k in _distinct(normals, np.argsort(gaps), OBLIQUE_KEEP):
        n, offset = _refine(V, tree, normals[k], normals[k] @ centre)
        gap = _plane_gap(_spread(V, SYMMETRY_SAMPLE), tree, n, offset)
        if gap < 2 * SYMMETRY_TOLERANCE:
            found.append((gap, n))
    if not found:
        return None
    found.sort(key=lambda c: c[0])
    normals = np.array([n for _, n in found])
    planes = normals[_distinct(normals, range(len(found)), len(found))]    # refined onto one: the best
    upright = [n for n in planes if np.argmax(np.abs(n)) != 2]      # planes through the up axis
    if len(upright) > 1:
        return _turn_for(upright[widest_plane(V, upright)])
    return _turn_for(planes[0])


def _plane_gap(P, tree, n, offset) -> float:
    """Median distance from P's mirror images in the plane n . x = offset to the mesh
    (tree); distances beyond GAP_REACH count as infinite (far images: slow searches)."""
    mirrored = P - 2.0 * (P @ n - offset)[:, None] * n
    return float(np.median(tree.query(mirrored, distance_upper_bound=GAP_REACH)[0]))


def _distinct(normals, order, count):
    """The first `count` of `order` whose normals are more than 2 OBLIQUE_STEP apart."""
    kept = []
    for k in order:
        if all(abs(normals[k] @ normals[j]) < np.cos(np.radians(2 * OBLIQUE_STEP)) for j in kept):
            kept.append(int(k))
            if len(kept) == count:
                break
    return kept


def _refine(V, tree, n, offset):
    """Mirror-ICP: each vertex's mirror image is matched to its nearest vertex; the plane
    that bisects the better half of the pairs is the next (normal: the main direction
    of the pairs' differences; offset: their midpoints' mean along it)."""
    P = _spread(V, REFINE_SAMPLE)
    for _ in range(REFINE_ITERATIONS):
        d, j = tree.query(P - 2.0 * (P @ n - offset)[:, None] * n)
        near = d <= np.median(d)
        D = P[near] - V[j[near]]
        m = np.linalg.eigh(D.T @ D)[1][:, -1]
        m = m if m @ n >= 0 else -m
        offset = float(m @ (P[near] + V[j[near]]).mean(axis=0) / 2.0)
        done = np.linalg.norm(m - n) < 1e-7
        n = m
        if done:
            break
    return n, offset


def _turn_for(n) -> np.ndarray:
    """Rotation whose row 0 is ±n (the plane's normal onto x), nearest to the quarter turn
    for n's nearest axis: its in-plane axis (z, or y for a plane nearest z = 0) projected
    onto the plane keeps its row; n's sign is that turn's row 0's."""
    n = np.asarray(n, np.float64) / np.linalg.norm(n)
    quarter = QUARTER_TURNS[int(np.argmax(np.abs(n)))]
    n = n if n @ quarter[0] >= 0 else -n
    if quarter is SIDE_TURN:          # y kept: rows (n, y', n x y')
        y = quarter[1] - (quarter[1] @ n) * n
        y /= np.linalg.norm(y)
        return np.array([n, y, np.cross(n, y)])
    z = quarter[2] - (quarter[2] @ n) * n
    z /= np.linalg.norm(z)
    return np.array([n, np.cross(z, n), z])


def oblique_frame(V):
    """(turn, centre, size, shift) for a normalised mesh V that symmetry_frame finds no
    plane for but oblique_turn does: (V @ turn.T - centre) / size is normalised again (box
    centred, longest side 1) and symmetric in x = shift (symmetry_frame's plane search).
    None when there is no such plane."""
    turn = oblique_turn(V)
    if turn is None:
        return None
    W = np.asarray(V, np.float64) @ turn.T
    lo, hi = W.min(axis=0), W.max(axis=0)
    centre, size = (lo + hi) / 2.0, float((hi - lo).max())
    W = (W - centre) / size
    quarter, shift = symmetry_frame(W)
    if not np.array_equal(quarter, np.eye(3)) or not is_mirror_symmetric(W - [shift, 0.0, 0.0]):
        return None
    return turn, centre, size, shift
