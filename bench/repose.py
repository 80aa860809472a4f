# SPDX-License-Identifier: GPL-3.0-or-later
"""A character's arms lowered into an A-pose with its artist's own rig, for benchmarks
that ask whether a result holds when the same body comes A-posed (bench/humanoid.py
--arms-down). Each upper arm's bone subtree turns about the arm's first joint, in the
vertical plane through the arm, until the line from that joint to the farthest joint or
bone tail of the subtree (a finger tip, a wrist) hangs `degrees` below the horizontal;
the mesh follows by linear blend skinning with the artist's weights (a vertex moves by
the share of its weight on that subtree). Arms already hanging that low stay as they
are."""
from __future__ import annotations

import numpy as np

from bonesmith.core.correctives.kinematics import axis_angle_to_matrix
from bonesmith.core.rig.graph import descendants


def lowered_arms(verts, joints, tails, parents, weights, arms, degrees: float):
    """(verts, joints, tails, lowered) with each upper arm bone index of `arms` lowered
    (the rest unchanged; up is +Z); lowered: how many arms turned."""
    V = np.array(verts, dtype=np.float64)
    J = np.array(joints, dtype=np.float64)
    T = np.array(tails, dtype=np.float64)
    W = np.asarray(weights, dtype=np.float64)
    lowered = 0
    for arm in arms:
        pivot = J[arm].copy()
        bones = np.concatenate([[arm], descendants(parents, arm)])
        ends = np.vstack([J[bones], T[bones]])
        tip = ends[np.argmax(np.linalg.norm(ends - pivot, axis=1))]
        R = _lowering(tip - pivot, np.radians(degrees))
        if R is None:
            continue
        share = W[:, bones].sum(axis=1, keepdims=True)
        V = (1.0 - share) * V + share * ((V - pivot) @ R.T + pivot)
        J[bones] = (J[bones] - pivot) @ R.T + pivot
        T[bones] = (T[bones] - pivot) @ R.T + pivot
        lowered += 1
    return V, J, T, lowered


def _lowering(direction, target: float):
    """The rotation that turns `direction` down to `target` radians below the horizontal
    about the horizontal axis across it; None when it already hangs that low (or is
    vertical)."""
    d = np.asarray(direction, dtype=np.float64)
    d = d / max(np.linalg.norm(d), 1e-12)
    below = np.arcsin(np.clip(-d[2], -1.0, 1.0))
    axis = np.cross(d, [0.0, 0.0, -1.0])
    if below >= target or np.linalg.norm(axis) < 1e-6:
        return None
    return axis_angle_to_matrix(axis / np.linalg.norm(axis) * (target - below))
