# SPDX-License-Identifier: GPL-3.0-or-later
"""The learned correctives model: refined weights + local pose correctives, and their
factorisation into a few shape keys driven by bone quaternions.

Pose_net is linear in each joint's (R_j − I) and local: vertex v's rest-space correction is
Σ_j C[v,j] · vec(R_j − I) over the joints that influence v and their parents
(docs/correctives.md#locality: locality removes most of the error; a global map does not).
Being linear in R − I it is exactly a set of shape keys whose values are quadratic forms of
the bone quaternions, which Blender evaluates as "simple expression" drivers without running
Python.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..mesh import bbox_diagonal
from .errors import CorrectivesError
from .archive import read_npz, write_npz
from .joints import JointRegressor
from .kinematics import lbs, skinning_matrices

FORMAT = "bonesmith-correctives-1"
MONOMIALS = ("ww", "xx", "yy", "zz", "wx", "wy", "wz", "xy", "xz", "yz")
_PAIRS = [("wxyz".index(m[0]), "wxyz".index(m[1])) for m in MONOMIALS]


def rotation_features(rotations) -> np.ndarray:
    """(..., J, 3, 3) -> (..., J, 9): vec(R − I), zero at rest."""
    R = np.asarray(rotations, dtype=np.float64)
    return (R - np.eye(3)).reshape(*R.shape[:-2], 9)


def monomials(quaternions) -> np.ndarray:
    """(..., 4) quaternions (w,x,y,z) -> (..., 10) quadratic monomials in MONOMIALS order."""
    q = np.asarray(quaternions, dtype=np.float64)
    return np.stack([q[..., a] * q[..., b] for a, b in _PAIRS], axis=-1)


def _monomial_map() -> np.ndarray:
    """(9, 10) Q with vec(R(q) − I) = Q · monomials(q) for unit q."""
    Q = np.zeros((9, 10))
    idx = {m: i for i, m in enumerate(MONOMIALS)}
    rows = {0: {"yy": -2, "zz": -2}, 1: {"xy": 2, "wz": -2}, 2: {"xz": 2, "wy": 2},
            3: {"xy": 2, "wz": 2}, 4: {"xx": -2, "zz": -2}, 5: {"yz": 2, "wx": -2},
            6: {"xz": 2, "wy": -2}, 7: {"yz": 2, "wx": 2}, 8: {"xx": -2, "yy": -2}}
    for r, terms in rows.items():
        for m, c in terms.items():
            Q[r, idx[m]] = c
    return Q


MONOMIAL_MAP = _monomial_map()


# What a live shape key costs Blender 5.0 per frame (CPU, measured by bench/correctives.py):
# relative keys are summed over every vertex whatever their support, and each key's
# simple-expression driver reads four bone channels.
KEY_NS_PER_VERTEX = 3.0
KEY_NS_PER_DRIVER = 5000.0


def key_budget(vertex_count: int, ms: float = 4.0) -> int:
    """How many live shape keys a mesh of `vertex_count` vertices affords for `ms` of CPU
    time per frame."""
    per_key = KEY_NS_PER_VERTEX * max(int(vertex_count), 1) + KEY_NS_PER_DRIVER
    return max(1, int(ms * 1e6 / per_key))


@dataclass
class LiveKey:
    """One shape key of the live bake: rest `offsets` (V,3) scaled by a value that is the
    quadratic form `coeffs` (10,) of bone `joint`'s local quaternion (MONOMIALS order)."""
    joint: int
    name: str
    offsets: np.ndarray
    coeffs: np.ndarray


def key_values(keys, quaternions) -> np.ndarray:
    """(P, K) values of `keys` for bone-local quaternions (P, J, 4) (w,x,y,z)."""
    m = monomials(quaternions)  # (P, J, 10)
    if not keys:
        return np.zeros((len(m), 0))
    joints = np.array([k.joint for k in keys])
    coeffs = np.array([k.coeffs for k in keys])
    return np.einsum("pkm,km->pk", m[:, joints], coeffs)


class CorrectiveModel:
    """Refined skin weights + local pose correctives of one character
    (docs/correctives.md#model).

    pairs: the (vertex, joint) couples that carry a correction, with coefficients
    (npairs, 3, 9) mapping vec(R_joint − I) to a rest-space offset of the vertex.
    moments: (J, 9, 9) second moments of each joint's vec(R − I) over the training poses,
    so the shape-key factorisation keeps what the poses actually use.
    regressor: a family model's JointRegressor (fitted on its identities), else None. A
    family model's own rest mesh and joints are its identities' mean; `for_body` gives
    the model of any body of the family (docs/correctives.md#families).
    names: the bones' names in joint order, when the caller knows them (saved with the model).
    """

    def __init__(self, rest_verts, faces, joints, parents, weights, pair_vertex, pair_joint,
                 coefficients, moments=None, info=None, regressor=None, names=None):
        self.rest_verts = np.asarray(rest_verts, dtype=np.float64)
        self.faces = np.asarray(faces, dtype=np.int64)
        self.joints = np.asarray(joints, dtype=np.float64)
        self.parents = np.asarray(parents, dtype=np.int64)
        self.weights = np.asarray(weights, dtype=np.float64)
        self.pair_vertex = np.asarray(pair_vertex, dtype=np.int64)
        self.pair_joint = np.asarray(pair_joint, dtype=np.int64)
        self.coefficients = np.asarray(coefficients, dtype=np.float64).reshape(-1, 3, 9)
        n = len(self.joints)
        self.moments = (np.tile(np.eye(9), (n, 1, 1)) if moments is None
                        else np.asarray(moments, dtype=np.float64))
        self.info = dict(info or {})
        self.regressor = regressor
        self.names = None if names is None else [str(n) for n in names]
        self._operator = None

    @property
    def is_family(self) -> bool:
        return self.regressor is not None

    def for_body(self, rest_verts, joints=None) -> "CorrectiveModel":
        """The model of another body with this topology and skeleton: its own rest mesh and
        joints (None: predicted by the family's joint regressor), the shared refined weights,
        and the shared Pose_net scaled to the body's size (correctives grow with the body).
        No poses of the body are needed. The result keeps the regressor, so it is a family
        model too and saves as one."""
        T = np.asarray(rest_verts, dtype=np.float64)
        if T.shape != self.rest_verts.shape:
            raise CorrectivesError(
                f"The body has {len(T) if T.ndim == 2 else T.shape} vertices; this model was "
                f"learned on meshes of {len(self.rest_verts)}: a body of the family shares its "
                "topology (same vertices in the same order)")
        if not np.isfinite(T).all():
            raise CorrectivesError("The body's vertices contain NaN or infinite values")
        if joints is None:
            if self.regressor is None:
                raise CorrectivesError(
                    "This correctives model was learned from one character, so it cannot place "
                    "a new body's joints: give the joints (fit the armature first), or learn "
                    "from several bodies of the family")
            joints = self.regressor.predict(T)
        joints = np.asarray(joints, dtype=np.float64)
        if joints.shape != self.joints.shape or not np.isfinite(joints).all():
            raise CorrectivesError(f"The body's joints must be finite, shape {self.joints.shape}")
        scale = bbox_diagonal(T) / bbox_diagonal(self.rest_verts)
        info = dict(self.info, body_scale=float(self.info.get("body_scale", 1.0)) * scale)
        return CorrectiveModel(T, self.faces, joints, self.parents, self.weights,
                               self.pair_vertex, self.pair_joint, self.coefficients * scale,
                               self.moments, info, self.regressor, self.names)

    # -- evaluation -------------------------------------------------------------------------

    def _correction_operator(self) -> sp.csr_matrix:
        """Sparse (V·3, J·9) map from stacked vec(R − I) to stacked rest offsets."""
        if self._operator is None:
            V, n = len(self.rest_verts), len(self.joints)
            a, f = np.meshgrid(np.arange(3), np.arange(9), indexing="ij")
            rows = (self.pair_vertex[:, None, None] * 3 + a).ravel()
            cols = (self.pair_joint[:, None, None] * 9 + f).ravel()
            self._operator = sp.csr_matrix((self.coefficients.ravel(), (rows, cols)),
                                           shape=(V * 3, n * 9))
        return self._operator

    def corrections(self, rotations) -> np.ndarray:
        """(P, V, 3) rest-space pose correctives for local rotations (P, J, 3, 3)."""
        rotations = self._check_rotations(rotations)
        f = rotation_features(rotations).reshape(len(rotations), -1)
        return (self._correction_operator() @ f.T).T.reshape(len(rotations), -1, 3)

    def pose(self, rotations, *, correctives: bool = True, weights=None) -> np.ndarray:
        """(P, V, 3) posed vertices: LBS of the corrected rest mesh with the refined weights."""
        rotations = self._check_rotations(rotations)
        A = skinning_matrices(self.joints, self.parents, rotations)
        rest = self.rest_verts + self.corrections(rotations) if correctives else self.rest_verts
        return lbs(rest, self.weights if weights is None else weights, A)

    def _check_rotations(self, rotations) -> np.ndarray:
        R = np.asarray(rotations, dtype=np.float64)
        if R.ndim == 3:
            R = R[None]
        if R.shape[1:] != (len(self.joints), 3, 3):
            raise CorrectivesError(f"Pose rotations must have shape (P, {len(self.joints)}, 3, 3), "
                                   f"not {R.shape}")
        if not np.isfinite(R).all():
            raise CorrectivesError("Pose rotations contain NaN or infinite values")
        return R

    # -- shape keys -------------------------------------------------------------------------

    def live_keys(self, bone_rest_rotations, *, tolerance: float = 1e-9, max_keys=None,
                  names=None) -> list:
        """The shape keys that reproduce the correctives in Blender.

        bone_rest_rotations (J,3,3): each bone's rest orientation in world space, so that
        the world-aligned R_j = B_j L_j B_jᵀ with L_j the bone's own local rotation (what a
        driver reads as a quaternion). Keys are the model's components (see components());
        a model fitted with `max_keys` has exactly that many, so the keys reproduce it.
        Components are kept strongest first until they carry all but `tolerance` of the
        energy (and at most `max_keys`). Each key's value has a root mean square of 1 over
        the training poses.
        """
        B = np.asarray(bone_rest_rotations, dtype=np.float64)
        if B.shape != (len(self.joints), 3, 3) or not np.isfinite(B).all():
            raise CorrectivesError(f"bone_rest_rotations must be finite, shape ({len(self.joints)}, 3, 3)")
        keys, V, counts = [], len(self.rest_verts), {}
        for j, offsets, direction in self.components(tolerance=tolerance, max_keys=max_keys):
            i = counts[j] = counts.get(j, -1) + 1
            full = np.zeros((V, 3))
            full[self.pair_vertex[self.pair_joint == j]] = offsets.reshape(-1, 3)
            # vec(R − I) = (B ⊗ B) · vec(L − I) = (B ⊗ B) · Q · monomials(q_L)
            kron = np.einsum("ab,cd->acbd", B[j], B[j]).reshape(9, 9)
            label = names[j] if names is not None else f"joint{j}"
            keys.append(LiveKey(int(j), f"{label}.{i}", full, direction @ kron @ MONOMIAL_MAP))
        return keys

    def components(self, *, tolerance: float = 1e-9, max_keys=None) -> list:
        """[(joint, offsets (nv·3,) on the joint's pair vertices, direction (9,))], strongest
        first: joint j's correction is Σ_i offsets_i · (direction_i · vec(R_j − I)).

        Per joint an SVD of its coefficient map, whitened by the training poses' features
        so it ranks what the poses use (each direction's value has RMS 1 on them); then the
        strongest components of all joints until all but `tolerance` of the total energy
        is kept, at most `max_keys`."""
        found = []
        for j in np.unique(self.pair_joint):
            C = self.coefficients[self.pair_joint == j].reshape(-1, 9)
            evals, evecs = np.linalg.eigh(self.moments[j])
            keep = evals > 1e-12 * max(evals.max(), 1e-300)
            if not keep.any():
                continue
            U, s, Vt = np.linalg.svd(C @ (evecs[:, keep] * np.sqrt(evals[keep])), full_matrices=False)
            directions = Vt @ (evecs[:, keep] / np.sqrt(evals[keep])).T
            found += [(s[i] ** 2, int(j), U[:, i] * s[i], directions[i]) for i in range(len(s))]
        found.sort(key=lambda item: -item[0])
        total = sum(item[0] for item in found)
        chosen, kept = [], 0.0
        for energy, j, offsets, direction in found:
            if energy <= 0 or kept >= (1.0 - tolerance) * total or len(chosen) == (max_keys or np.inf):
                break
            kept += energy
            chosen.append((j, offsets, direction))
        return chosen

    # -- files ------------------------------------------------------------------------------

    def save(self, path) -> Path:
        optional = {}   # files without these keys load as before
        if self.regressor is not None:
            optional = dict(regressor_vertex_count=self.regressor.vertex_count,
                            regressor_index=self.regressor.index, regressor_coeffs=self.regressor.coeffs)
        if self.names is not None:
            optional["bone_names"] = np.array(self.names, dtype=str)
        return write_npz(path, FORMAT, rest_verts=self.rest_verts, faces=self.faces,
                         joints=self.joints, parents=self.parents, weights=self.weights,
                         pair_vertex=self.pair_vertex, pair_joint=self.pair_joint,
                         coefficients=self.coefficients, moments=self.moments,
                         info_keys=np.array(list(self.info.keys()), dtype=str),
                         info_values=np.array([float(v) for v in self.info.values()]), **optional)

    @classmethod
    def load(cls, path) -> "CorrectiveModel":
        d = read_npz(path, (FORMAT,), "correctives model")
        try:
            info = dict(zip(d["info_keys"].tolist(), d["info_values"].tolist()))
            regressor = None
            if "regressor_index" in d:
                regressor = JointRegressor(int(d["regressor_vertex_count"]), d["regressor_index"],
                                           d["regressor_coeffs"])
            return cls(d["rest_verts"], d["faces"], d["joints"], d["parents"], d["weights"],
                       d["pair_vertex"], d["pair_joint"], d["coefficients"], d["moments"], info,
                       regressor, d["bone_names"].tolist() if "bone_names" in d else None)
        except KeyError as error:
            raise CorrectivesError(f"Could not read correctives model {Path(path).name}: {error}") from None
