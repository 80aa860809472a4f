# SPDX-License-Identifier: GPL-3.0-or-later
"""A character's arms lowered into an A-pose, or its legs set apart, with its artist's own
rig, for benchmarks that ask whether a result holds when the same body comes in another
stance (bench/humanoid.py --arms-down, --legs-apart). Each upper arm's bone subtree turns
about the arm's first joint, in the vertical plane through the arm, until the line from
that joint to the farthest joint or bone tail of the subtree (a finger tip, a wrist) hangs
`degrees` below the horizontal; the mesh follows by linear blend skinning with the
artist's weights (a vertex moves by the share of its weight on that subtree). Arms
already hanging that low stay as they are. Legs apart (`legs_apart`): each thigh's bone
subtree turns outward by `degrees` about the hip joint, in the vertical plane through the
leg and its sideways direction; the foot's subtree then turns back by as much about the
ankle, so the sole stays flat."""
from __future__ import annotations

import numpy as np

from bonesmith.core.correctives.kinematics import axis_angle_to_matrix, topological_order
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
        V, J, T = _turn(V, J, T, W, bones, pivot, R)
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


def legs_apart(verts, joints, tails, parents, weights, legs, degrees: float):
    """(verts, joints, tails) with each (thigh, foot) bone index pair of `legs` set apart
    (up is +Z). foot may be None, or a bone outside the thigh's subtree (a rig whose feet
    are IK roots): it turns with the leg, then back about the ankle."""
    V = np.array(verts, dtype=np.float64)
    J = np.array(joints, dtype=np.float64)
    T = np.array(tails, dtype=np.float64)
    W = np.asarray(weights, dtype=np.float64)
    subtrees = [_with(parents, [thigh] if foot is None else [thigh, foot]) for thigh, foot in legs]
    # a leg's direction: from the hip joint to the middle of the vertices it carries
    # (some rigs' leg bones point up from the hip)
    middles = [V[W[:, bones].sum(axis=1) > 0.5].mean(axis=0) for bones in subtrees]
    between = np.mean(middles, axis=0)
    for (thigh, foot), bones, middle in zip(legs, subtrees, middles):
        pivot = J[thigh].copy()
        axis = np.cross(middle - pivot, (middle - between) * [1.0, 1.0, 0.0])
        R = axis_angle_to_matrix(axis / np.linalg.norm(axis) * np.radians(degrees))
        V, J, T = _turn(V, J, T, W, bones, pivot, R)
        if foot is not None:
            V, J, T = _turn(V, J, T, W, _with(parents, [foot]), J[foot].copy(), R.T)
    return V, J, T


def _with(parents, bones) -> np.ndarray:
    """The bones and all their descendants, once each."""
    return np.unique(np.concatenate([np.concatenate([[b], descendants(parents, b)]) for b in bones]).astype(int))


def _turn(V, J, T, W, bones, pivot, R):
    """The bones turned by R about pivot, the vertices by their share of weight on them."""
    share = W[:, bones].sum(axis=1, keepdims=True)
    V = (1.0 - share) * V + share * ((V - pivot) @ R.T + pivot)
    J, T = J.copy(), T.copy()
    J[bones] = (J[bones] - pivot) @ R.T + pivot
    T[bones] = (T[bones] - pivot) @ R.T + pivot
    return V, J, T


def reproportioned(verts, joints, parents, weights, head, legs, head_scale: float = 1.0,
                   leg_scale: float = 1.0):
    """(verts, joints) of the same body in other proportions, with its artist's rig: the
    head bone's subtree scaled by `head_scale` about the head joint, each leg's thigh and
    shin stretched by `leg_scale` along their own axes (the hip joints, the feet and
    everything above the hips keep their shapes; what hangs below follows, a foot its shin
    also where the rig makes it a root). `head`: the head bone index or None; `legs`:
    (thigh, shin, foot) bone index triples. Linear blend
    skinning with the artist's weights: each bone b moves its vertices by
    v -> J'_b + M_b (v - J_b), where M_b is the head's scale (its subtree), a leg bone's
    stretch, the identity for a foot's subtree, else its parent's; J'_b = J'_p + M_p (J_b - J_p)."""
    V = np.asarray(verts, dtype=np.float64)
    J = np.asarray(joints, dtype=np.float64)
    W = np.asarray(weights, dtype=np.float64)
    parents = np.asarray(parents)
    n = len(J)
    own = {}
    if head is not None:
        own[head] = head_scale * np.eye(3)
    for thigh, shin, foot in legs:
        for top, bottom in ((thigh, shin), (shin, foot)):
            axis = J[bottom] - J[top]
            axis /= max(np.linalg.norm(axis), 1e-12)
            stretch = np.eye(3) + (leg_scale - 1.0) * np.outer(axis, axis)
            for b in _path_down(parents, top, bottom):
                own[b] = stretch
        own[foot] = np.eye(3)
    M = np.zeros((n, 3, 3))
    J2 = J.copy()
    follows = parents.copy()        # a foot follows its shin, also where the rig makes it a root (IK)
    for _, shin, foot in legs:
        follows[foot] = shin
    for b in topological_order(follows):
        p = follows[b]
        M[b] = own.get(b, np.eye(3) if p < 0 else M[p])
        if p >= 0:
            J2[b] = J2[p] + M[p] @ (J[b] - J[p])
    moved = J2[None] + np.einsum("bij,vbj->vbi", M, V[:, None, :] - J[None])     # (V, n, 3)
    total = W.sum(axis=1, keepdims=True)
    share = np.divide(W, total, out=np.zeros_like(W), where=total > 0)
    if head is not None:
        share = _head_sharpened(share, _with(parents, [head]))
    V2 = np.where(total > 0, np.einsum("vb,vbi->vi", share, moved), V)
    return V2, J2


def _head_sharpened(share, head_bones):
    """Rows of bone weights with the head's share made (nearly) all or nothing: a scaled
    head blended with the neck over the neck's length would widen the whole neck into a
    funnel; a chibi's big head sits on a neck. smoothstep(0.4, 0.6) of the head's share,
    the other bones keeping their proportions."""
    head = share[:, head_bones].sum(axis=1)
    t = np.clip((head - 0.4) / 0.2, 0.0, 1.0)
    sharp = t * t * (3.0 - 2.0 * t)
    out = share.copy()
    rest = 1.0 - head
    out[:, head_bones] *= np.divide(sharp, head, out=np.zeros_like(head), where=head > 0)[:, None]
    others = np.setdiff1d(np.arange(share.shape[1]), head_bones)
    out[:, others] *= np.divide(1.0 - sharp, rest, out=np.zeros_like(rest), where=rest > 0)[:, None]
    return out


def _path_down(parents, top, bottom) -> list:
    """The bones from `top` down to `bottom`'s parent (bottom a descendant of top)."""
    path, b = [], parents[bottom]
    while b >= 0 and b != top:
        path.append(b)
        b = parents[b]
    return [top] + path if b == top else [top]
