# SPDX-License-Identifier: GPL-3.0-or-later
"""Fitting the correctives model to a character's own good deformation
(docs/correctives.md#fit).

loss = λ·loss_v + loss_w, with loss_v the mean squared vertex error over the training poses
and loss_w = μ·‖W − W_artist‖² under hard constraints: weights non-negative, rows summing
to 1, and non-zero only where the artist's weights are (sparsity: the influence count a
game engine was given does not grow). The proximity term keeps W paintable and stops it
from chasing pose-specific noise. Both blocks of the loss are linear least squares when the
other block is fixed (LBS is linear in W; the posed correction is linear in Pose_net's
coefficients), so the fit alternates exact solves, batched over vertices with numpy: no
PyTorch is needed and the fit runs inside any Blender.
"""
from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

from ..mesh import bbox_diagonal
from .errors import CorrectivesError
from .joints import family_joint_regressor
from .kinematics import blended_rotations, lbs, skinning_matrices, topological_order
from .model import CorrectiveModel, rotation_features

INFLUENCE = 1e-4     # a weight above this is an influence (docs/metrics.md#skin-metrics)
RIDGES = (1e-4, 1e-3, 1e-2, 1e-1, 1.0)  # candidates, relative to the mean feature energy
CHUNK = 2048         # vertices per batch: bounds memory at P × CHUNK × 12 floats


def fit_correctives(rest_verts, faces, joints, parents, weights, pose_rotations, posed_verts, *,
                    pose_correctives: bool = True, refine_weights: bool = True, rounds: int = 2,
                    ridge="auto", weight_prox: float = 1e-2, max_keys=None, reach: float = 0.05,
                    names=None, progress=None) -> CorrectiveModel:
    """Learn refined weights and local pose correctives so that LBS of the corrected rest
    mesh reproduces the posed meshes for the pose rotations, for one body or a family.

    `rest_verts`, `joints`, `pose_rotations` and `posed_verts` are lists, one entry per
    body (identity) — (V,3), (J,3), (P_i,J,3,3), (P_i,V,3) — that share `faces`, `parents`
    and `weights`; one body is a list of one. One Pose_net and one refined W are fitted
    across all of them; two bodies or more (a family, docs/correctives.md#families) also
    get a joint regressor on their (rest, joints), and `model.for_body(rest)` then serves a
    new body of the family.

    ridge: regularisation of Pose_net relative to the feature energy, or "auto" to pick it
    on the last fifth of the poses (a family: on its last identity, held out).
    weight_prox: μ relative to each vertex's data energy.
    max_keys: make Pose_net compact — at most this many (joint, direction) components,
    i.e. exactly the shape keys of the live bake (None: full rank, 9 per joint).
    reach: how far (fraction of the bbox diagonal) past a joint's weights its correction
    may reach.
    names: the bones' names in joint order (kept on the model; a family whose topology and
    names fit a shipped joint regressor may get that one: joints.family_joint_regressor).
    progress(fraction, message) is called between steps.
    """
    data = _Bodies.of(rest_verts, faces, joints, parents, weights, pose_rotations, posed_verts)
    report = progress or (lambda fraction, message: None)
    T, F, Jt, parents, W0, R = data.mean_rest, data.faces, data.mean_joints, data.parents, data.W0, data.R
    features = rotation_features(R)
    sees = _visible_joints(W0, parents, T, reach)
    moments = np.einsum("pja,pjb->jab", features, features) / len(R)
    target = data.residuals(W0) if pose_correctives else None
    chosen = 0.0
    if pose_correctives:
        report(0.0, "choosing the regularisation")
        chosen = (_pick_ridge(target, features, sees, data.holdout_start) if ridge == "auto"
                  else _fixed_ridge(ridge))
    bases = None
    if pose_correctives and max_keys:
        # compact Pose_net: only the strongest max_keys (joint, direction) components of a
        # full-rank fit, refitted below, so that exactly max_keys shape keys reproduce it
        report(0.05, "choosing the shape keys")
        full = _fit_pose_correctives(target, features, sees, chosen)
        bases = _key_bases(CorrectiveModel(T, F, Jt, parents, W0, *full, moments=moments), max_keys)
    W = W0.copy()
    pairs = _no_pairs()
    steps = max(1, rounds)
    for step in range(steps):
        if pose_correctives:
            report(0.1 + 0.9 * step / steps, f"pose correctives {step + 1}/{steps}")
            if step:
                target = data.residuals(W)
            pairs = _fit_pose_correctives(target, features, sees, chosen, bases)
        if refine_weights:
            report(0.1 + 0.9 * (step + 0.5) / steps, f"skin weights {step + 1}/{steps}")
            W = _fit_weights(data.corrected_rest(CorrectiveModel(T, F, Jt, parents, W, *pairs)),
                             W0, data.A, data.G, weight_prox)
        if not pose_correctives:
            break
    if pose_correctives and refine_weights:
        pairs = _fit_pose_correctives(data.residuals(W), features, sees, chosen, bases)
    regressor, how = None, {}
    if data.count > 1:
        report(0.98, "joint regressor")
        regressor, how = family_joint_regressor(data.rest, data.joints, names)
    report(1.0, "done")
    info = {"poses": len(R), "ridge": chosen, "weight_prox": weight_prox,
            "max_keys": float(max_keys or 0), "reach": reach, "identities": float(data.count), **how}
    return CorrectiveModel(T, F, Jt, parents, W, *pairs, moments=moments, info=info,
                           regressor=regressor, names=names)


def vertex_errors(model, rest_verts, joints, weights, rotations, posed_verts):
    """(plain LBS, model) vertex errors (P, V) in % of the rest mesh's bounding-box diagonal
    for one body of the model (itself, or a member of its family) in the given poses:
    plain LBS with `weights` (rows normalised) against the model's result for this body."""
    T = np.asarray(rest_verts, dtype=np.float64)
    W = np.asarray(weights, dtype=np.float64)
    W = W / np.maximum(W.sum(axis=1, keepdims=True), 1e-12)
    size = bbox_diagonal(T, 1.0)
    plain = lbs(T, W, skinning_matrices(joints, model.parents, rotations))
    learned = model.for_body(T, joints).pose(rotations)
    return (np.linalg.norm(plain - posed_verts, axis=-1) / size * 100,
            np.linalg.norm(learned - posed_verts, axis=-1) / size * 100)


class _Bodies:
    """The training data as one stack of poses: pose p belongs to identity `body[p]`.

    Rest-space correctives grow with the body, so each identity's residuals are divided by
    its size relative to the mean identity (`scale`) before the shared Pose_net is fitted,
    and its corrections multiplied back (docs/correctives.md#families)."""

    def __init__(self, rest, faces, joints, parents, W0, rotations, posed):
        self.rest, self.joints = rest, joints                    # (K,V,3), (K,J,3)
        self.faces, self.parents, self.W0 = faces, parents, W0
        self.count = len(rest)
        self.body = np.concatenate([np.full(len(r), i) for i, r in enumerate(rotations)])
        self.R = np.concatenate(rotations)
        self.G = np.concatenate(posed)
        self.A = np.concatenate([skinning_matrices(j, parents, r) for j, r in zip(joints, rotations)])
        self.mean_rest, self.mean_joints = rest.mean(axis=0), joints.mean(axis=0)
        sizes = np.array([bbox_diagonal(r) for r in rest])
        self.scale = sizes / bbox_diagonal(self.mean_rest)
        # "auto" ridge: a family holds out its last identity, one body its last fifth of poses
        self.holdout_start = int(np.flatnonzero(self.body == self.count - 1)[0]) if self.count > 1 else None

    @classmethod
    def of(cls, rest_verts, faces, joints, parents, weights, pose_rotations, posed_verts):
        lists = [rest_verts, joints, pose_rotations, posed_verts]
        if not all(isinstance(x, (list, tuple)) or np.ndim(x) >= 3 for x in lists) \
                or len({len(x) for x in lists}) != 1:
            raise CorrectivesError("fit_correctives takes one entry per body in each of rest_verts, "
                                   "joints, pose_rotations and posed_verts (lists of equal length; "
                                   "one body: lists of one)")
        if not len(rest_verts):
            raise CorrectivesError("fit_correctives needs at least one body")
        checked = []
        for i, (t, j, r, g) in enumerate(zip(*lists)):
            try:
                checked.append(_validate(t, faces, j, parents, weights, r, g))
            except CorrectivesError as error:
                raise CorrectivesError(f"Identity {i}: {error}" if len(rest_verts) > 1 else str(error)) from None
        # _validate against the shared weights and parents already holds every identity to
        # one vertex count and one joint count
        F, parents, W = checked[0][1], checked[0][3], checked[0][4]
        return cls(np.stack([c[0] for c in checked]), F, np.stack([c[2] for c in checked]),
                   parents, W, [c[5] for c in checked], [c[6] for c in checked])

    def _pose_rest(self, sl):
        return self.rest[:, sl][self.body]                        # (P, v, 3)

    def residuals(self, W) -> np.ndarray:
        """(P, V, 3) rest-space residuals, each identity's divided by its scale."""
        out = _rest_residuals(self._pose_rest, W, self.A, self.G)
        return out / self.scale[self.body][:, None, None]

    def corrected_rest(self, model) -> np.ndarray:
        """(P, V, 3): each pose's rest mesh plus the model's corrections at its scale."""
        corrections = model.corrections(self.R) * self.scale[self.body][:, None, None]
        return self.rest[self.body] + corrections


# -- input checks -----------------------------------------------------------------------------

def _fixed_ridge(ridge) -> float:
    """A given ridge: a finite number, not negative (ValueError)."""
    value = float(ridge)
    if not (np.isfinite(value) and value >= 0):
        raise ValueError(f'ridge must be "auto" or a finite number, not negative (got {ridge!r})')
    return value


def _validate(rest_verts, faces, joints, parents, weights, pose_rotations, posed_verts):
    T = np.asarray(rest_verts, dtype=np.float64)
    F = np.asarray(faces, dtype=np.int64)
    Jt = np.asarray(joints, dtype=np.float64)
    parents = np.asarray(parents, dtype=np.int64)
    W = np.asarray(weights, dtype=np.float64)
    R = np.asarray(pose_rotations, dtype=np.float64)
    G = np.asarray(posed_verts, dtype=np.float64)
    V, n = len(T), len(Jt)
    if T.ndim != 2 or T.shape[1] != 3 or V == 0:
        raise CorrectivesError("The rest mesh must have vertices of shape (V, 3)")
    if Jt.ndim != 2 or Jt.shape[1] != 3 or n == 0 or parents.shape != (n,):
        raise CorrectivesError("Joints must be (J, 3) with one parent index per joint")
    if ((parents < -1) | (parents >= n)).any() or (parents == np.arange(n)).any():
        raise CorrectivesError("Parent indices must be -1 (root) or another joint's index")
    try:
        topological_order(parents)
    except ValueError:
        raise CorrectivesError("The joints' parents form a cycle: each chain must end at a root (-1)") from None
    if W.shape != (V, n):
        raise CorrectivesError(f"Weights must have shape ({V}, {n}) (vertices × joints), not {W.shape}")
    if R.ndim != 4 or R.shape[1:] != (n, 3, 3):
        raise CorrectivesError(f"Pose rotations must have shape (P, {n}, 3, 3), not {R.shape}")
    if G.shape != (len(R), V, 3):
        raise CorrectivesError(
            f"Posed vertices must have shape ({len(R)}, {V}, 3) — one posed copy of the rest "
            f"mesh per pose — not {G.shape}; a different vertex count means a different topology")
    if len(R) < 2:
        raise CorrectivesError("Correctives need several poses to learn from (at least 2; "
                               "50 or more give corrections that hold on new poses)")
    for label, array in (("rest vertices", T), ("joints", Jt), ("weights", W),
                         ("pose rotations", R), ("posed vertices", G)):
        if not np.isfinite(array).all():
            raise CorrectivesError(f"The {label} contain NaN or infinite values")
    if (W < 0).any():
        raise CorrectivesError("Skin weights must not be negative")
    totals = W.sum(axis=1)
    if (totals <= INFLUENCE).any():
        raise CorrectivesError(
            f"{int((totals <= INFLUENCE).sum())} vertices have no skin weights: weight them "
            "(e.g. with Auto Skin) before learning correctives")
    orthogonality = np.abs(R @ np.swapaxes(R, -1, -2) - np.eye(3)).max()
    if orthogonality > 1e-4 or (np.linalg.det(R) <= 0).any():
        raise CorrectivesError("Pose rotations must be rotation matrices (orthonormal, det +1)")
    return T, F, Jt, parents, W / totals[:, None], R, G


def _visible_joints(W, parents, verts, reach) -> np.ndarray:
    """(V, J) bool: the non-root joints whose rotation may correct each vertex — those that
    influence it and their parents (docs/correctives.md#locality), widened to vertices
    within `reach` (fraction of the bbox diagonal) of that region: smoothing deformers
    spread a joint's effect past its weights, and a wider key costs Blender nothing extra
    per frame."""
    influence = W > INFLUENCE
    sees = influence.copy()
    child = np.flatnonzero(parents >= 0)
    sees[:, parents[child]] |= influence[:, child]
    sees[:, parents < 0] = False
    radius = reach * bbox_diagonal(verts)
    if radius > 0:
        for j in np.flatnonzero(sees.any(axis=0)):
            region = cKDTree(verts[sees[:, j]])
            distance, _ = region.query(verts, distance_upper_bound=radius)
            sees[:, j] |= np.isfinite(distance)
    return sees


# -- Pose_net: per-vertex ridge regression, shared by vertices that see the same joints -------

def _rest_residuals(rest_of, W, A, G) -> np.ndarray:
    """(P, V, 3): per pose, the rest-space offset that LBS with W maps onto the ground truth.
    rest_of(slice) gives the poses' rest positions of those vertices, (v,3) or (P,v,3)."""
    out = np.empty_like(G)
    for start in range(0, G.shape[1], CHUNK):
        sl = slice(start, start + CHUNK)
        posed = lbs(rest_of(sl), W[sl], A)
        out[:, sl] = _solve3(blended_rotations(W[sl], A), G[:, sl] - posed)
    return out


def _cross(u, v):
    return np.stack([u[..., 1] * v[..., 2] - u[..., 2] * v[..., 1],
                     u[..., 2] * v[..., 0] - u[..., 0] * v[..., 2],
                     u[..., 0] * v[..., 1] - u[..., 1] * v[..., 0]], axis=-1)


def _solve3(M, r):
    """M⁻¹·r for stacks of 3×3 matrices (rows a, b, c) by cofactors: far faster than a
    batched LAPACK call on tiny systems. Blended rotations are well conditioned."""
    a, b, c = M[..., 0, :], M[..., 1, :], M[..., 2, :]
    bc, ca, ab = _cross(b, c), _cross(c, a), _cross(a, b)
    det = np.einsum("...i,...i->...", a, bc)
    det = np.where(np.abs(det) > 1e-12, det, 1e-12)
    return (r[..., 0:1] * bc + r[..., 1:2] * ca + r[..., 2:3] * ab) / det[..., None]


def _groups(sees):
    rows, inverse = np.unique(sees, axis=0, return_inverse=True)
    return rows, inverse.ravel()


def _design(features, joints, bases=None):
    """(P, d) regressors of a vertex group that sees `joints`, and each joint's basis
    (r_j, 9) mapping them back to vec(R − I) coefficients (identity: full rank)."""
    mats = [np.eye(9) if bases is None else bases.get(int(j), np.zeros((0, 9))) for j in joints]
    X = np.concatenate([np.zeros((len(features), 0))]
                       + [features[:, j] @ D.T for j, D in zip(joints, mats)], axis=1)
    return X, mats


def _fit_pose_correctives(target, features, sees, ridge, bases=None):
    """Per-vertex ridge regression of the rest-space residual on the visible joints'
    features (or their `bases` projections), shared by vertices that see the same joints."""
    rows, inverse = _groups(sees)
    out_v, out_j, out_c = [], [], []
    for g, row in enumerate(rows):
        joints = np.flatnonzero(row)
        X, mats = _design(features, joints, bases)
        if not X.shape[1]:
            continue
        vertices = np.flatnonzero(inverse == g)
        XtX = X.T @ X
        scale = max(np.trace(XtX) / len(XtX), 1e-12)
        system = XtX + ridge * scale * np.eye(len(XtX))
        splits = np.cumsum([len(D) for D in mats])[:-1]
        for start in range(0, len(vertices), CHUNK):
            chunk = vertices[start:start + CHUNK]
            D = target[:, chunk].reshape(len(X), -1)  # (P, v·3)
            Bv = np.linalg.solve(system, X.T @ D).reshape(len(XtX), len(chunk), 3)
            # back to (v, k, 3, 9) coefficients on vec(R − I)
            coeff = np.stack([np.einsum("rva,rf->vaf", part, M)
                              for part, M in zip(np.split(Bv, splits), mats)], axis=1)
            out_v.append(np.repeat(chunk, len(joints)))
            out_j.append(np.tile(joints, len(chunk)))
            out_c.append(coeff.reshape(-1, 3, 9))
    if not out_v:
        return _no_pairs()
    v, j, c = np.concatenate(out_v), np.concatenate(out_j), np.concatenate(out_c)
    keep = np.abs(c).reshape(len(c), -1).max(axis=1) > 0
    v, j, c = v[keep], j[keep], c[keep]
    order = np.lexsort((v, j))
    return v[order], j[order], c[order]


def _no_pairs():
    return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, 3, 9))


def _key_bases(model, max_keys) -> dict:
    """joint -> (r_j, 9) directions of the model's strongest max_keys components."""
    bases = {}
    for j, _, direction in model.components(max_keys=max_keys):
        bases[j] = np.vstack([bases.get(j, np.zeros((0, 9))), direction])
    return bases


def _pick_ridge(target, features, sees, cut=None) -> float:
    """The ridge of RIDGES with the lowest rest-space error on the poses from `cut` on
    (None: the last fifth)."""
    P = len(features)
    if cut is None:
        if P < 10:
            return RIDGES[2]
        cut = P - max(2, P // 5)
    rows, inverse = _groups(sees)
    errors = np.zeros(len(RIDGES))
    for g, row in enumerate(rows):
        joints = np.flatnonzero(row)
        if not len(joints):
            continue
        vertices = np.flatnonzero(inverse == g)
        X, _ = _design(features, joints)
        Xa, Xb = X[:cut], X[cut:]
        evals, evecs = np.linalg.eigh(Xa.T @ Xa)
        scale = max(evals.sum() / len(evals), 1e-12)
        for start in range(0, len(vertices), CHUNK):
            chunk = vertices[start:start + CHUNK]
            D = target[:, chunk].reshape(P, -1)
            proj = evecs.T @ (Xa.T @ D[:cut])
            for r, ridge in enumerate(RIDGES):
                B = evecs @ (proj / (evals + ridge * scale)[:, None])
                errors[r] += np.sum((Xb @ B - D[cut:]) ** 2)
    return RIDGES[int(np.argmin(errors))]


# -- refined W: constrained least squares per vertex over its artist influences ------------------

def _fit_weights(rest, W0, A, G, weight_prox):
    """rest: (V,3) or (P,V,3) corrected rest positions. Returns refined (V,J) weights."""
    V, n = W0.shape
    P = len(A)
    support = W0 > INFLUENCE
    k = int(support.sum(axis=1).max())
    # each vertex's influences, padded with a masked repeat of its first one
    order = np.argsort(~support, axis=1, kind="stable")[:, :k]
    mask = np.take_along_axis(support, order, axis=1)
    W = np.zeros_like(W0)
    rest = np.broadcast_to(rest, (P, V, 3)) if rest.ndim == 2 else rest
    for start in range(0, V, CHUNK):
        sl = slice(start, min(V, start + CHUNK))
        idx, m = order[sl], mask[sl]
        x = np.concatenate([rest[:, sl], np.ones((P, idx.shape[0], 1))], axis=-1)  # (P, v, 4)
        # each influence's transform applied to the vertex, as (v, k, P·3) rows: then the
        # normal equations are batched matrix products (BLAS) rather than einsum loops
        cols = np.stack([(A[:, idx[:, s]] @ x[..., None])[..., 0] for s in range(k)], axis=2)
        C = cols.transpose(1, 2, 0, 3).reshape(len(idx), k, -1)
        H = C @ C.transpose(0, 2, 1)
        b = (C @ G[:, sl].transpose(1, 0, 2).reshape(len(idx), -1, 1))[..., 0]
        w0 = np.take_along_axis(W0[sl], idx, axis=1) * m
        w = _constrained_solve(H, b, w0, m, weight_prox)
        np.put_along_axis(W[sl], idx, w * m, axis=1)
    return W / W.sum(axis=1, keepdims=True)


def _constrained_solve(H, b, w0, mask, prox, iterations: int = 4):
    """min wᵀHw − 2bᵀw + μ‖w − w0‖², Σw = 1, w ≥ 0 over the unmasked entries: the
    equality-constrained solve, then influences that went negative are dropped and the
    rest re-solved (a few active-set steps)."""
    v, k = mask.shape
    mu = prox * np.maximum(np.einsum("vkk->v", H) / np.maximum(mask.sum(axis=1), 1), 1e-300)
    active = mask.copy()
    w = w0
    for _ in range(iterations):
        a = active.astype(np.float64)
        K = np.zeros((v, k + 1, k + 1))
        K[:, :k, :k] = (H + mu[:, None, None] * np.eye(k)) * a[:, :, None] * a[:, None, :]
        K[:, :k, :k] += np.eye(k) * (1 - a)[:, :, None]  # inactive: w = 0
        K[:, :k, k] = a
        K[:, k, :k] = a
        rhs = np.concatenate([(b + mu[:, None] * w0) * a, np.ones((v, 1))], axis=1)
        w = np.linalg.solve(K, rhs[..., None])[:, :k, 0] * a
        negative = (w < 0) & active
        if not negative.any():
            break
        active &= ~negative
        empty = ~active.any(axis=1)
        active[empty] = mask[empty] & (w0[empty] == w0[empty].max(axis=1, keepdims=True))
    w = np.clip(w, 0.0, None)
    total = w.sum(axis=1, keepdims=True)
    return np.where(total > 0, w / np.where(total > 0, total, 1), w0 / w0.sum(axis=1, keepdims=True))
