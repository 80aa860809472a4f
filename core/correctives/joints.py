# SPDX-License-Identifier: GPL-3.0-or-later
"""Joint_net: joints of a new identity from its rest vertices
(docs/correctives.md#joint-regressor).

Identities that share a topology differ smoothly in shape, and a joint sits in a fixed
relation to the surface around it. Each joint j is a linear combination of the vertices
nearest to it (on the mean training identity) with a 3×3 matrix per vertex,

    J_j = Σ_i C_ji · v_i,   Σ_i C_ji = I,

so translating the mesh, or scaling it uniformly, moves and scales the joints with it
exactly. Fitted per joint, across identities, in two stages:

1. an affine combination, C_ji = c_i·I with Σc = 1, of the `neighbours` nearest vertices
   (least squares over every identity's 3 coordinates; the ridge shrinks it toward the
   smallest-norm combination that reproduces the mean joint from the mean identity). It
   also commutes with rotations, so it carries over to bent or turned limbs;
2. a correction D_ji (Σ_i D_ji = 0) of what stage 1 misses, over the
   `correction_neighbours` nearest vertices: ridge regression from the neighbours'
   positions about their centroid (3m features) to the residual (3 targets), solved in
   its dual (an identities × identities system), each identity weighted by 1 / its
   bounding-box diagonal (errors count relative to body size, as they are measured), the
   ridge relative to the features' variance across identities. Its 3×3 blocks let one
   axis of the surface inform another: how far a knee sits along the leg depends on the
   leg's length, not only on the skin ring around the knee.

This is the linear one-layer form of an MLP from T to J, made local: with the
handful of identities a user has, it generalises where a deep MLP on V·3 inputs would
memorise. Measured with bench/joint_regressor.py (anny bodies, 13 380 vertices, 52 joints,
leave-one-identity-out over 40; bench/README.md): mean joint error 0.046 % of the
bounding-box diagonal on random phenotypes, 0.44 % with stage 1 alone. Stage 1 matters
where identities also differ by bends (rotation): on the generated bent tubes of
tests/test_joint_regressor.py, 12 identities, 0.015 % with both stages, 0.05 % with
stage 1 alone, and about 10× worse than stage 1 with stage 2 alone on top of the mean
identity's interpolation (0.6 % vs 0.06 %, 10 training tubes).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..mesh import bbox_diagonal
from .errors import CorrectivesError
from .archive import read_npz, write_npz

FORMAT = "bonesmith-joint-regressor-2"
FORMATS = ("bonesmith-joint-regressor-1", FORMAT)   # 1: one scalar per vertex (J, m)


class JointRegressor:
    """joints[j] = Σ_i coeffs[j, i] @ verts[index[j, i]]: coeffs (J, m, 3, 3), one 3×3
    matrix per neighbour, summing to the identity over i; (J, m) scalars (format 1, an
    affine combination) are read too. `names`: the joints' names when known."""

    def __init__(self, vertex_count: int, index, coeffs, names=None):
        self.vertex_count = int(vertex_count)
        self.index = np.asarray(index, dtype=np.int64)
        self.coeffs = np.asarray(coeffs, dtype=np.float64)
        self.names = None if names is None else [str(n) for n in names]
        self.source = None        # the shipped file it came from (family_joint_regressor)
        if self.names is not None and len(self.names) != len(self.index):
            raise CorrectivesError("A joint regressor needs one name per joint")
        if self.index.ndim != 2 or self.coeffs.shape[:2] != self.index.shape \
                or self.coeffs.shape[2:] not in ((), (3, 3)):
            raise CorrectivesError(f"A joint regressor needs index (J, m) and coeffs (J, m) or "
                                   f"(J, m, 3, 3), not {self.index.shape} and {self.coeffs.shape}")
        if self.index.size and not (0 <= self.index.min() and self.index.max() < self.vertex_count):
            raise CorrectivesError("The joint regressor's vertex indices do not fit its vertex count")

    @property
    def joint_count(self) -> int:
        return len(self.index)

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
        if self.coeffs.ndim == 2:
            return np.einsum("ji,jia->ja", self.coeffs, V[self.index])
        return np.einsum("jiab,jib->ja", self.coeffs, V[self.index])

    def for_names(self, names) -> "JointRegressor | None":
        """The regressor's joints in the order of `names` (None unless it has them all)."""
        if self.names is None or not set(map(str, names)) <= set(self.names):
            return None
        rows = [self.names.index(str(n)) for n in names]
        return JointRegressor(self.vertex_count, self.index[rows], self.coeffs[rows], list(map(str, names)))

    def save(self, path, *, compact: bool = False) -> Path:
        """compact: coefficients as float32 and indices as int32 (a shipped model: half the size)."""
        extra = {} if self.names is None else {"names": np.array(self.names, dtype=str)}
        index, coeffs = (self.index.astype(np.int32), self.coeffs.astype(np.float32)) if compact \
            else (self.index, self.coeffs)
        return write_npz(path, FORMAT if self.coeffs.ndim == 4 else FORMATS[0],
                         vertex_count=self.vertex_count, index=index, coeffs=coeffs, **extra)

    @classmethod
    def load(cls, path) -> "JointRegressor":
        d = read_npz(path, FORMATS, "joint regressor")
        try:
            return cls(int(d["vertex_count"]), d["index"], d["coeffs"],
                       d["names"].tolist() if "names" in d else None)
        except KeyError as error:
            raise CorrectivesError(f"Could not read joint regressor {Path(path).name}: {error}") from None


def fit_joint_regressor(rest_verts_list, joints_list, *, neighbours: int = 64,
                        ridge: float = 1e-3, correction_neighbours: int = 256,
                        correction_ridge: float = 1e-3) -> JointRegressor:
    """Fit joints (J,3) of each identity from its rest vertices (V,3); all identities share
    one topology and one skeleton (2 or more identities). Neighbours are the vertices
    nearest to the joint on the mean identity (at most V).
    neighbours / ridge: the affine combination (one scalar per vertex); ridge shrinks it
    toward the mean identity's smallest-norm interpolation, relative to the data energy.
    correction_neighbours / correction_ridge: the 3×3-per-vertex correction of what the
    affine combination misses (0 neighbours: none); the ridge is relative to the features'
    variance across identities (0 = least squares with a minimum-norm tie-break)."""
    verts, joints = _validate(rest_verts_list, joints_list)
    for name, value in (("neighbours", neighbours), ("correction_neighbours", correction_neighbours)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0 \
                or (value == 0 and name == "neighbours"):
            what = "a positive" if name == "neighbours" else "a non-negative"
            raise CorrectivesError(f"{name} must be {what} integer, not {value!r}")
    for name, value in (("ridge", ridge), ("correction_ridge", correction_ridge)):
        if not (isinstance(value, (int, float, np.number)) and np.isfinite(value) and value >= 0):
            raise CorrectivesError(f"{name} must be a non-negative number, not {value!r}")
    K, V, n = len(verts), verts.shape[1], joints.shape[1]
    diagonals = np.linalg.norm(np.ptp(verts, axis=1), axis=1)
    if not (diagonals > 0).all():
        raise CorrectivesError(f"Identity {int(np.argmin(diagonals))} has all its vertices at one point")
    mb, mc = min(int(neighbours), V), min(int(correction_neighbours), V)
    m = max(mb, mc)
    mean_v, mean_j = verts.mean(axis=0), joints.mean(axis=0)
    dist = np.linalg.norm(mean_v[None, :, :] - mean_j[:, None, :], axis=2)  # (J, V)
    index = np.argsort(dist, axis=1, kind="stable")[:, :m]  # the first mb / mc of each row
    coeffs = np.zeros((n, m, 3, 3))
    weight = 1.0 / diagonals   # per identity: errors count relative to body size
    for j in range(n):
        # 1. affine combination; rows: every identity's 3 coordinates; columns: the joint's
        # neighbours, centred on the mean identity's so the ridge shrinks toward `base`
        near = index[j, :mb]
        X = (verts[:, near, :] - mean_v[near]).transpose(0, 2, 1).reshape(3 * K, mb)
        y = (joints[:, j, :] - mean_j[j]).reshape(3 * K)
        base = _affine_min_norm(mean_v[near], mean_j[j])
        c = base + _constrained_ridge(X, y - X @ base, ridge)
        coeffs[j, :mb] = c[:, None, None] * np.eye(3)
        if mc == 0:
            continue
        # 2. 3×3 correction of the residual, from the neighbours about their centroid
        P = verts[:, index[j, :mc], :]                                     # (K, mc, 3)
        F = (P - P.mean(axis=1, keepdims=True)).reshape(K, 3 * mc) * weight[:, None]
        R = (joints[:, j, :] - np.einsum("i,kia->ka", c, verts[:, near, :])) * weight[:, None]
        Fc = F - F.mean(axis=0)
        lam = max(correction_ridge * np.einsum("ka,ka->", Fc, Fc) / K,
                  1e-12 * max(np.einsum("ka,ka->", F, F) / K, 1e-300))    # tie-break
        if K > 3 * mc:     # more identities than features (a shipped regressor): the primal system
            W = np.linalg.solve(F.T @ F + lam * np.eye(3 * mc), F.T @ R)
        else:
            W = F.T @ np.linalg.solve(F @ F.T + lam * np.eye(K), R)
        W = W.reshape(mc, 3, 3)                                            # r_a = Σ f_ib W_iba
        coeffs[j, :mc] += (W - W.mean(axis=0, keepdims=True)).transpose(0, 2, 1)  # Σ_i D_i = 0
    return JointRegressor(V, index, coeffs)


SHIPPED_DIR = Path(__file__).resolve().parents[2] / "models"   # joints_*.npz: shipped regressors
SHIPPED_FIT = 0.05    # with 2 identities (no leave-one-out): a shipped regressor this close (%) is used


def mean_error(regressor: "JointRegressor", rest_verts_list, joints_list) -> float:
    """Mean joint error of `regressor` on identities, % of each one's bounding-box diagonal."""
    return float(np.mean([np.linalg.norm(regressor.predict(V) - J, axis=1).mean() / bbox_diagonal(V) * 100
                          for V, J in zip(rest_verts_list, joints_list)]))


def shipped_joint_regressors(vertex_count: int, names) -> dict:
    """{file stem: regressor in the order of `names`} of the shipped regressors
    (models/joints_*.npz) for meshes of `vertex_count` vertices that know every name."""
    out = {}
    if names is None:
        return out
    for path in sorted(SHIPPED_DIR.glob("joints_*.npz")):
        regressor = JointRegressor.load(path)
        if regressor.vertex_count == vertex_count and (sub := regressor.for_names(names)) is not None:
            out[path.stem] = sub
    return out


def family_joint_regressor(rest_verts_list, joints_list, names=None) -> tuple["JointRegressor", dict]:
    """The joint regressor of a family of identities, and how it was chosen
    (docs/correctives.md#shipped-regressors): fitted on the identities, or a shipped one
    for their topology and bone names (the MakeHuman body's, trained on thousands of
    bodies) when it places the identities' own joints better than the fitted one places a
    left-out identity's (with 2 identities: within SHIPPED_FIT %). info (floats):
    joints_shipped 1/0, joints_leave_one_out_pct (3+ identities), joints_shipped_error_pct
    (when a shipped one fits the topology and names)."""
    info = {"joints_shipped": 0.0}
    loo = leave_one_out_error(rest_verts_list, joints_list) if len(rest_verts_list) >= 3 else None
    if loo is not None:
        info["joints_leave_one_out_pct"] = loo
    shipped = shipped_joint_regressors(len(rest_verts_list[0]), names)
    if shipped:
        errors = {stem: mean_error(reg, rest_verts_list, joints_list) for stem, reg in shipped.items()}
        stem = min(errors, key=errors.get)
        info["joints_shipped_error_pct"] = errors[stem]
        if errors[stem] <= (SHIPPED_FIT if loo is None else loo):
            shipped[stem].source = f"models/{stem}.npz"
            info["joints_shipped"] = 1.0
            return shipped[stem], info
    own = fit_joint_regressor(rest_verts_list, joints_list)      # only when no shipped one is better
    if names is not None:
        own.names = [str(n) for n in names]
    return own, info


def leave_one_out_error(rest_verts_list, joints_list, **options) -> float:
    """Mean joint error (% of the bounding-box diagonal) of each identity predicted by a
    regressor fitted on the others (3 or more identities)."""
    verts, joints = _validate(rest_verts_list, joints_list)
    errors = []
    for k in range(len(verts)):
        others = [i for i in range(len(verts)) if i != k]
        regressor = fit_joint_regressor(verts[others], joints[others], **options)
        errors.append(mean_error(regressor, verts[k:k + 1], joints[k:k + 1]))
    return float(np.mean(errors))


def _affine_min_norm(points, target) -> np.ndarray:
    """The smallest-norm c with Σc = 1 and Σ c_i·points_i = target."""
    E = np.vstack([points.T, np.ones(len(points))])  # (4, m)
    rhs = np.append(target, 1.0)
    return np.linalg.lstsq(E, rhs, rcond=None)[0]


def _constrained_ridge(X, y, ridge) -> np.ndarray:
    """argmin ‖Xd − y‖² + λ‖d‖² subject to Σd = 0 (keeps the affine constraint)."""
    m = X.shape[1]
    H = X.T @ X
    lam = max(ridge, 1e-12) * max(np.trace(H) / m, 1e-300)   # 1e-12: minimum-norm tie-break
    K = np.zeros((m + 1, m + 1))
    K[:m, :m] = H + lam * np.eye(m)
    K[:m, m] = K[m, :m] = 1.0
    return np.linalg.solve(K, np.append(X.T @ y, 0.0))[:m]


def _validate(rest_verts_list, joints_list):
    if len(rest_verts_list) != len(joints_list):
        raise CorrectivesError(f"Give one joints array per identity ({len(rest_verts_list)} meshes, "
                               f"{len(joints_list)} joint sets)")
    if len(rest_verts_list) < 2:
        raise CorrectivesError("A joint regressor needs at least 2 identities that share a topology")
    shapes = {np.shape(v) for v in rest_verts_list}
    if len(shapes) != 1:
        counts = sorted({np.shape(v)[0] if np.ndim(v) else 0 for v in rest_verts_list})
        raise CorrectivesError(f"The identities do not share a topology (vertex counts {counts}); "
                               "a joint regressor needs the same mesh in different shapes")
    if len({np.shape(j) for j in joints_list}) != 1:
        raise CorrectivesError("The identities' skeletons differ in joint count")
    verts = np.asarray(rest_verts_list, dtype=np.float64)
    joints = np.asarray(joints_list, dtype=np.float64)
    if verts.ndim != 3 or verts.shape[2] != 3 or joints.ndim != 3 or joints.shape[2] != 3:
        raise CorrectivesError("Vertices must be (V, 3) and joints (J, 3) per identity")
    if verts.shape[1] == 0 or joints.shape[1] == 0:
        raise CorrectivesError("A joint regressor needs vertices and at least one joint")
    if not (np.isfinite(verts).all() and np.isfinite(joints).all()):
        raise CorrectivesError("The vertices or joints contain NaN or infinite values")
    return verts, joints
