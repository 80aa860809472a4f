# SPDX-License-Identifier: GPL-3.0-or-later
"""Rotations, forward kinematics and linear blend skinning on arrays
(docs/correctives.md#kinematics).

Joint j's world transform is G_parent · [R_j | J_j − J_parent] (root: [R_root | J_root]),
where R_j is its local rotation expressed in world-aligned axes about its head; the
skinning matrix is G_j · [I | −J_j]. Rotations are (..., 3, 3) arrays.
"""
from __future__ import annotations

import numpy as np

from .errors import CorrectivesError


def axis_angle_to_matrix(axis_angle) -> np.ndarray:
    """Rodrigues: (..., 3) axis-angle vectors -> (..., 3, 3) rotation matrices."""
    aa = np.asarray(axis_angle, dtype=np.float64)
    angle = np.linalg.norm(aa, axis=-1, keepdims=True)
    axis = aa / np.where(angle > 1e-12, angle, 1.0)
    x, y, z = np.moveaxis(axis, -1, 0)
    zero = np.zeros_like(x)
    K = np.stack([zero, -z, y, z, zero, -x, -y, x, zero], axis=-1).reshape(*aa.shape[:-1], 3, 3)
    s, c = np.sin(angle)[..., None], np.cos(angle)[..., None]
    return np.eye(3) + s * K + (1.0 - c) * (K @ K)


def matrix_to_quaternion(R) -> np.ndarray:
    """(..., 3, 3) rotations -> (..., 4) unit quaternions (w, x, y, z) with w >= 0."""
    R = np.asarray(R, dtype=np.float64)
    m = R.reshape(-1, 3, 3)
    trace = np.einsum("nii->n", m)
    # the largest of 4w², 4x², 4y², 4z² keeps the division well conditioned
    cand = np.stack([1 + trace, 1 + 2 * m[:, 0, 0] - trace, 1 + 2 * m[:, 1, 1] - trace,
                     1 + 2 * m[:, 2, 2] - trace], axis=1)
    best = cand.argmax(axis=1)
    q = np.empty((len(m), 4))
    for k in range(4):
        sel = best == k
        if not sel.any():
            continue
        r = m[sel]
        s = 2.0 * np.sqrt(np.maximum(cand[sel, k], 1e-300))
        d21, d02, d10 = r[:, 2, 1] - r[:, 1, 2], r[:, 0, 2] - r[:, 2, 0], r[:, 1, 0] - r[:, 0, 1]
        s01, s02, s12 = r[:, 0, 1] + r[:, 1, 0], r[:, 0, 2] + r[:, 2, 0], r[:, 1, 2] + r[:, 2, 1]
        rows = {0: (s * s / 4, d21, d02, d10), 1: (d21, s * s / 4, s01, s02),
                2: (d02, s01, s * s / 4, s12), 3: (d10, s02, s12, s * s / 4)}[k]
        q[sel] = np.stack(rows, axis=1) / s[:, None]
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    q[q[:, 0] < 0] *= -1
    return q.reshape(*R.shape[:-2], 4)


def quaternion_to_matrix(q) -> np.ndarray:
    """(..., 4) quaternions (w, x, y, z), normalised here -> (..., 3, 3) rotations."""
    q = np.asarray(q, dtype=np.float64)
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    w, x, y, z = np.moveaxis(q, -1, 0)
    return np.stack([
        1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
        2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
        2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y),
    ], axis=-1).reshape(*q.shape[:-1], 3, 3)


def topological_order(parents) -> np.ndarray:
    """Joint indices ordered so that every parent comes before its children."""
    parents = np.asarray(parents)
    depth = np.zeros(len(parents), dtype=np.int64)
    for j in range(len(parents)):
        p, d = parents[j], 0
        while p >= 0:
            p, d = parents[p], d + 1
            if d > len(parents):
                raise ValueError("parents contain a cycle")
        depth[j] = d
    return np.argsort(depth, kind="stable")


def skinning_matrices(joints, parents, rotations) -> np.ndarray:
    """(P, J, 3, 4) skinning matrices G_j · [I | −J_j] of each pose's local rotations."""
    joints = np.asarray(joints, dtype=np.float64)
    rotations = np.asarray(rotations, dtype=np.float64)
    P, n = rotations.shape[:2]
    rot = np.empty((P, n, 3, 3))
    head = np.empty((P, n, 3))  # world position of each joint's head
    for j in topological_order(parents):
        p = parents[j]
        if p < 0:
            rot[:, j] = rotations[:, j]
            head[:, j] = joints[j]
        else:
            rot[:, j] = rot[:, p] @ rotations[:, j]
            head[:, j] = head[:, p] + rot[:, p] @ (joints[j] - joints[p])
    trans = head - np.einsum("pjab,jb->pja", rot, joints)
    return np.concatenate([rot, trans[..., None]], axis=-1)


def lbs(vertices, weights, matrices) -> np.ndarray:
    """Linear blend skinning. vertices (V,3) or (P,V,3); weights (V,J); matrices (P,J,3,4)
    -> (P,V,3)."""
    vertices = np.asarray(vertices, dtype=np.float64)
    P, n = matrices.shape[:2]
    blended = (weights @ matrices.reshape(P, n, 12).transpose(1, 0, 2).reshape(n, -1))
    blended = blended.reshape(-1, P, 3, 4).transpose(1, 0, 2, 3)  # (P, V, 3, 4)
    if vertices.ndim == 2:
        vertices = np.broadcast_to(vertices, (P, *vertices.shape))
    return np.einsum("pvab,pvb->pva", blended[..., :3], vertices) + blended[..., 3]


def blended_rotations(weights, matrices) -> np.ndarray:
    """(P, V, 3, 3): the weight-blended linear part each vertex is skinned with."""
    P, n = matrices.shape[:2]
    lin = matrices[..., :3].reshape(P, n, 9).transpose(1, 0, 2).reshape(n, -1)
    return (weights @ lin).reshape(-1, P, 3, 3).transpose(1, 0, 2, 3)


def random_rotations(parents, count: int, *, max_degrees: float = 45.0, seed: int = 0,
                     limits=None) -> np.ndarray:
    """(count, J, 3, 3) random local rotations: a uniformly random axis per joint and an
    angle uniform in [0, limit]; `limits` (J,) degrees per joint overrides max_degrees
    (0 keeps a joint still). Roots stay at rest so poses differ only in shape."""
    parents = np.asarray(parents)
    rng = np.random.default_rng(seed)
    n = len(parents)
    limit = np.full(n, float(max_degrees)) if limits is None else np.asarray(limits, dtype=np.float64)
    limit = np.where(parents < 0, 0.0, limit)
    axis = rng.normal(size=(count, n, 3))
    axis /= np.linalg.norm(axis, axis=-1, keepdims=True)
    angle = rng.uniform(0.0, 1.0, size=(count, n, 1)) * np.radians(limit)[None, :, None]
    return axis_angle_to_matrix(axis * angle)


def local_quaternions(rotations, bone_rest_rotations) -> np.ndarray:
    """(P, J, 4) bone-local quaternions (w,x,y,z) of world-aligned local rotations
    (P, J, 3, 3): L_j = B_jᵀ R_j B_j with B_j the bone's rest orientation in world space
    (what Blender stores as the pose bone's rotation_quaternion)."""
    B = np.asarray(bone_rest_rotations, dtype=np.float64)
    return matrix_to_quaternion(np.einsum("jba,pjbc,jcd->pjad", B, rotations, B))


def in_bone_order(arrays: dict, names, label: str = "A character") -> dict:
    """`arrays` (names, joints (J,3), parents (J,), weights (V,J), and optionally tails (J,3),
    rotations (P,J,3,3)) with its bones put in the order of `names` (the same set of bone
    names), parents renumbered. CorrectivesError when the bones differ."""
    own = [str(n) for n in arrays["names"]]
    names = [str(n) for n in names]
    if sorted(own) != sorted(names):
        raise CorrectivesError(f"{label} has other deforming bones than the first character: a "
                               "family shares one skeleton (the same bone names)")
    order = np.array([own.index(n) for n in names], dtype=np.int64)
    position = np.argsort(order)          # old index -> new index
    parents = np.asarray(arrays["parents"])[order]
    out = dict(arrays, names=names, joints=np.asarray(arrays["joints"])[order],
               parents=np.where(parents >= 0, position[np.maximum(parents, 0)], -1),
               weights=np.asarray(arrays["weights"])[:, order])
    if arrays.get("tails") is not None:
        out["tails"] = np.asarray(arrays["tails"])[order]
    if arrays.get("rotations") is not None:
        out["rotations"] = np.asarray(arrays["rotations"])[:, order]
    return out
