# SPDX-License-Identifier: GPL-3.0-or-later
"""Symmetry of a mesh: is it its own mirror image, and which turn brings its plane of
symmetry to x = 0 (docs/auto_skeleton.md#symmetry). Auto Skeleton and Auto Skin both
use it; making the rig itself symmetric is rig/symmetry.py's."""
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
