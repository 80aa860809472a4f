# SPDX-License-Identifier: GPL-3.0-or-later
"""Joint_net: joints of a new identity from its rest vertices (SPEC C).

Identities that share a topology differ smoothly in shape, and a joint sits in a fixed
relation to the surface around it. Each joint is therefore an affine combination
(weights summing to 1, so moving the mesh moves the joints) of the vertices nearest to it,
fitted across identities by least squares with a minimum-norm tie-break. This is the
linear one-layer form of the spec's MLP from T to J: with the handful of identities a
user has, it generalises where a deep MLP on V·3 inputs would memorise.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .errors import CorrectivesError

FORMAT = "bonesmith-joint-regressor-1"


class JointRegressor:
    """joints = Σ_i coeffs[j, i] · verts[index[j, i]] for each joint j."""

    def __init__(self, vertex_count: int, index, coeffs):
        self.vertex_count = int(vertex_count)
        self.index = np.asarray(index, dtype=np.int64)
        self.coeffs = np.asarray(coeffs, dtype=np.float64)

    def predict(self, verts) -> np.ndarray:
        V = np.asarray(verts, dtype=np.float64)
        if V.ndim != 2 or V.shape[1] != 3:
            raise CorrectivesError(f"Vertices must have shape (V, 3), not {V.shape}")
        if len(V) != self.vertex_count:
            raise CorrectivesError(
                f"This joint regressor was trained on meshes with {self.vertex_count} vertices; "
                f"the mesh has {len(V)}. It only fits identities that share the training topology")
        if not np.isfinite(V).all():
            raise CorrectivesError("The vertices contain NaN or infinite values")
        return np.einsum("ji,jia->ja", self.coeffs, V[self.index])

    def save(self, path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as f:
            np.savez_compressed(f, format=FORMAT, vertex_count=self.vertex_count,
                                index=self.index, coeffs=self.coeffs)
        return path

    @classmethod
    def load(cls, path) -> "JointRegressor":
        try:
            with np.load(path, allow_pickle=False) as d:
                if str(d.get("format", "")) != FORMAT:
                    raise CorrectivesError(f"{Path(path).name} is not a Bonesmith joint regressor")
                return cls(int(d["vertex_count"]), d["index"], d["coeffs"])
        except (OSError, ValueError, KeyError) as error:
            raise CorrectivesError(f"Could not read joint regressor {Path(path).name}: {error}") from None


def fit_joint_regressor(rest_verts_list, joints_list, *, neighbours: int = 64,
                        ridge: float = 1e-3) -> JointRegressor:
    """Fit joints (J,3) of each identity from its rest vertices (V,3); all identities share
    one topology and one skeleton. neighbours: vertices per joint (nearest to it on the
    mean identity); ridge: minimum-norm tie-break relative to the data energy."""
    verts, joints = _validate(rest_verts_list, joints_list)
    K, V, n = len(verts), verts.shape[1], joints.shape[1]
    m = min(neighbours, V)
    mean_v, mean_j = verts.mean(axis=0), joints.mean(axis=0)
    dist = np.linalg.norm(mean_v[None, :, :] - mean_j[:, None, :], axis=2)  # (J, V)
    index = np.argsort(dist, axis=1)[:, :m]
    coeffs = np.empty((n, m))
    for j in range(n):
        # rows: every identity's 3 coordinates; columns: the joint's neighbour vertices,
        # centred on the mean identity's so the ridge shrinks toward a local average
        X = (verts[:, index[j], :] - mean_v[index[j]]).transpose(0, 2, 1).reshape(3 * K, m)
        y = (joints[:, j, :] - mean_j[j]).reshape(3 * K)
        base = _affine_min_norm(mean_v[index[j]], mean_j[j])
        coeffs[j] = base + _constrained_ridge(X, y - X @ base, ridge)
    return JointRegressor(V, index, coeffs)


def _affine_min_norm(points, target) -> np.ndarray:
    """The smallest-norm c with Σc = 1 and Σ c_i·points_i = target."""
    E = np.vstack([points.T, np.ones(len(points))])  # (4, m)
    rhs = np.append(target, 1.0)
    return np.linalg.lstsq(E, rhs, rcond=None)[0]


def _constrained_ridge(X, y, ridge) -> np.ndarray:
    """argmin ‖Xd − y‖² + λ‖d‖² subject to Σd = 0 (keeps the affine constraint)."""
    m = X.shape[1]
    H = X.T @ X
    lam = ridge * max(np.trace(H) / m, 1e-300)
    K = np.zeros((m + 1, m + 1))
    K[:m, :m] = H + lam * np.eye(m)
    K[:m, m] = K[m, :m] = 1.0
    return np.linalg.solve(K, np.append(X.T @ y, 0.0))[:m]


def _validate(rest_verts_list, joints_list):
    if len(rest_verts_list) != len(joints_list):
        raise CorrectivesError("Give one joints array per identity")
    if len(rest_verts_list) < 2:
        raise CorrectivesError("A joint regressor needs at least 2 identities that share a topology")
    shapes = {np.shape(v) for v in rest_verts_list}
    if len(shapes) != 1:
        counts = sorted({np.shape(v)[0] for v in rest_verts_list})
        raise CorrectivesError(f"The identities do not share a topology (vertex counts {counts}); "
                               "a joint regressor needs the same mesh in different shapes")
    if len({np.shape(j) for j in joints_list}) != 1:
        raise CorrectivesError("The identities' skeletons differ in joint count")
    verts = np.asarray(rest_verts_list, dtype=np.float64)
    joints = np.asarray(joints_list, dtype=np.float64)
    if verts.ndim != 3 or verts.shape[2] != 3 or joints.ndim != 3 or joints.shape[2] != 3:
        raise CorrectivesError("Vertices must be (V, 3) and joints (J, 3) per identity")
    if not (np.isfinite(verts).all() and np.isfinite(joints).all()):
        raise CorrectivesError("The vertices or joints contain NaN or infinite values")
    return verts, joints
