# SPDX-License-Identifier: GPL-3.0-or-later
"""The trained characters' own weights, carried over where a new character's surface
lies on one of theirs (docs/auto_skin.md#carried-weights).

A studio's variants of one body (outfits of a hero, a horse's breeds) share its base
mesh and its rig: where a new variant's skin lies on a trained character's, the artist's
weights there are the answer, better than any network's (what a technical artist does by
hand with a data transfer). A trained skin model keeps its training characters (mesh,
weights, bones) as *exemplars*. For an armature of an exemplar's rig template, each
exemplar is first posed onto the new armature (every bone turned onto its counterpart,
its vertices moved with their weights: linear blend skinning of the exemplar), then each
vertex takes the weights of the nearest point of the nearest posed exemplar's surface,
in full within NEAR of the bounding-box diagonal, blended with the network's weights up
to FAR, not beyond (a new cloak: the network's). An exemplar counts only when at least
SHARED of the new character's vertices lie on its surface (within COINCIDE): a variant of
its base mesh. Another body on the same rig (a husky after a wolf, a man of another
modeller) is near everywhere but coincides nowhere, and its weights would be worse than
the network's.

A new character of the same *topology* as an exemplar (the same faces, vertex for vertex:
body shapes of one base mesh from a character creator, MPFB's bodies, a baby and an adult
elephant of one mesh) takes its weights vertex by vertex, whatever its shape and pose.
"""
from __future__ import annotations

import hashlib

import numpy as np
from scipy.spatial import cKDTree
from scipy.spatial.transform import Rotation

from . import templates
from .prep import prepare_mesh

COINCIDE = 0.001      # share of the diagonal within which two surfaces are one
SHARED = 0.25         # an exemplar counts when this share of the vertices lie on its surface
NEAR = 0.01           # share of the diagonal: closer than this, the exemplar's weights alone
FAR = 0.03            # ... farther than this, the network's alone; linear between
# Points of an exemplar's surface (barycentric): its vertices and these inside each face.
_SAMPLES = ((1 / 3, 1 / 3, 1 / 3), (2 / 3, 1 / 6, 1 / 6), (1 / 6, 2 / 3, 1 / 6), (1 / 6, 1 / 6, 2 / 3))


def make(character, template: dict) -> dict:
    """An exemplar from a training character (dict with vertices, faces, weights, joints,
    tails or None, parents, names or None) and its rig template (templates.make)."""
    heads = np.asarray(character["joints"], np.float64)
    parents = np.asarray(character["parents"], np.int64)
    welded = prepare_mesh(character["vertices"], character["faces"], undo_subdivision=True)
    return {"verts": np.asarray(character["vertices"], np.float32),
            "topology": topology(welded.F), "source": np.asarray(welded.source_index, np.int32),
            "faces": np.asarray(character["faces"], np.int32),
            "weights": np.asarray(character["weights"], np.float32),
            "heads": heads.astype(np.float32),
            "tails": bone_tails(heads, parents).astype(np.float32),
            "labels": labels(character.get("names"), parents),
            "template": template, "name": str(character.get("name", ""))}


def topology(faces) -> str:
    """A fingerprint of a welded mesh's faces (Auto Skin's preparation, prep.prepare_mesh)."""
    return hashlib.sha256(np.ascontiguousarray(faces, np.int64).tobytes()).hexdigest()[:32]


def labels(names, parents) -> list:
    """Bone labels that match across characters: cleaned names, or indices without names."""
    n = len(np.ravel(parents))
    return [templates.clean(x) for x in names] if names is not None else [f"#{i}" for i in range(n)]


def bone_tails(heads, parents) -> np.ndarray:
    """Where each bone points: the mean head of its children; a leaf continues its
    parent's direction by a tenth of the armature's size. Only the directions are used,
    and they are made the same way for the exemplar and the new armature (their given
    tails are not: Auto Skin's preparation moves some)."""
    heads = np.asarray(heads, np.float64)
    out = heads.copy()
    size = max(float(np.ptp(heads, axis=0).max()), 1e-9) if len(heads) else 1.0
    for j in range(len(heads)):
        kids = np.flatnonzero(np.asarray(parents) == j)
        if len(kids):
            out[j] = heads[kids].mean(axis=0)
        else:
            p = parents[j]
            d = heads[j] - heads[p] if p >= 0 else np.array([0.0, 0.0, 1.0])
            out[j] = heads[j] + 0.1 * size * d / max(np.linalg.norm(d), 1e-12)
    return out


def matching(exemplars, names, parents) -> list:
    """The exemplars of the armature's rig template (templates.match)."""
    return [e for e in exemplars if templates.match([e["template"]], names, parents)[0] is not None]


def carry(exemplars, V, heads, parents, names=None, faces=None):
    """((V, J) weights carried over from the nearest exemplar, (V,) how much each vertex
    takes them: 1 within NEAR of the diagonal, 0 beyond FAR, the number of exemplars that
    counted), or None without an exemplar that shares bones with the armature and SHARED
    of its surface. V and `faces`: a mesh welded by prep.prepare_mesh; with `faces`, an
    exemplar of the same topology gives its weights vertex by vertex (_same_topology)."""
    V = np.asarray(V, np.float64)
    heads = np.asarray(heads, np.float64)
    mine = labels(names, parents)
    if faces is not None:
        same = _same_topology(exemplars, V, faces, mine)
        if same is not None:
            return same
    tails = bone_tails(heads, parents)
    diag = float(np.linalg.norm(np.ptp(V, axis=0)))
    best_d, best_W = np.full(len(V), np.inf), np.zeros((len(V), len(heads)))
    counted = 0
    for ex in exemplars:
        posed = _posed(ex, heads, tails, mine)
        if posed is None:
            continue
        P, Wm, F = posed
        d, nn = cKDTree(P).query(V)
        if (d <= COINCIDE * diag).mean() < SHARED:
            continue
        counted += 1
        closer = d < best_d
        best_d[closer], best_W[closer] = d[closer], _point_weights(Wm, F, nn[closer])
    if not counted:
        return None
    reach = np.clip((FAR * diag - best_d) / ((FAR - NEAR) * diag), 0.0, 1.0)
    reach[best_W.sum(axis=1) <= 0] = 0.0          # the exemplar's unweighted vertices teach nothing
    return best_W, reach, counted


def _same_topology(exemplars, V, faces, mine):
    """carry's answer from the exemplars whose welded mesh has these faces: the weights of
    the one nearest in shape (after a similarity on the vertices), vertex by vertex."""
    key = topology(faces)
    best, best_err = None, np.inf
    for ex in exemplars:
        if ex.get("topology") != key or len(ex["source"]) != len(V):
            continue
        X = np.asarray(ex["verts"], np.float64)[ex["source"]]
        s, R, t = _similarity(X, V)
        err = float(np.linalg.norm(s * X @ R.T + t - V, axis=1).mean())
        if err < best_err:
            best, best_err = ex, err
    if best is None:
        return None
    at = _columns(best["labels"], mine)
    if at is None:
        return None
    W = _in_order(np.asarray(best["weights"], np.float64)[best["source"]], at)
    reach = (W.sum(axis=1) > 0).astype(np.float64)
    return W, reach, 1


def _columns(theirs, mine):
    """For each of the armature's bone labels (`mine`) the exemplar's bone with that label
    (-1: none); None when they share fewer than three bones."""
    index = {label: i for i, label in enumerate(theirs)}
    at = np.array([index.get(label, -1) for label in mine])
    return at if (at >= 0).sum() >= 3 else None


def _in_order(W, at):
    """An exemplar's (n, J') weights in the columns of the armature's bones (`at`: _columns)."""
    out = np.zeros((len(W), len(at)))
    out[:, at >= 0] = W[:, at[at >= 0]]
    return out


def _posed(ex, heads, tails, mine):
    """(surface points, the vertices' (n, J) weights in the armature's bone order, the
    faces) of an exemplar posed onto the armature, or None when they share fewer than
    three bones."""
    theirs = _columns(ex["labels"], mine)
    if theirs is None:
        return None
    shared = theirs >= 0
    X = np.asarray(ex["verts"], np.float64)
    W = np.asarray(ex["weights"], np.float64)
    s, R, t = _similarity(np.asarray(ex["heads"], np.float64)[theirs[shared]], heads[shared])
    X = s * X @ R.T + t
    eh = s * np.asarray(ex["heads"], np.float64) @ R.T + t
    et = s * np.asarray(ex["tails"], np.float64) @ R.T + t
    moved, total = np.zeros_like(X), np.zeros(len(X))
    for j in np.flatnonzero(shared):
        i = theirs[j]
        turn = _turn(et[i] - eh[i], tails[j] - heads[j])
        moved += W[:, [i]] * ((X - eh[i]) @ turn.T + heads[j])
        total += W[:, i]
    X = np.where(total[:, None] > 1e-9, moved / np.maximum(total, 1e-12)[:, None], X)
    F = np.asarray(ex["faces"], np.int64)
    points = [X] + [a * X[F[:, 0]] + b * X[F[:, 1]] + c * X[F[:, 2]] for a, b, c in _SAMPLES]
    return np.vstack(points), _in_order(W, theirs), F


def _point_weights(Wm, F, k) -> np.ndarray:
    """The weights of the surface points `k` (_posed's order: the vertices, then each
    _SAMPLES point of every face), interpolated only for the points asked (a big
    exemplar's points times its bones would not fit in memory)."""
    out = np.empty((len(k), Wm.shape[1]))
    vertex = k < len(Wm)
    out[vertex] = Wm[k[vertex]]
    sample, face = np.divmod(k[~vertex] - len(Wm), len(F))
    bary = np.asarray(_SAMPLES)[sample]
    out[~vertex] = np.einsum("nk,nkj->nj", bary, Wm[F[face]])
    return out


def _similarity(A, B):
    """(scale, rotation, translation) taking the points A onto B in the least-squares
    sense (Umeyama); the identity turn for fewer than three points or a flat set."""
    mA, mB = A.mean(axis=0), B.mean(axis=0)
    a, b = A - mA, B - mB
    var = float((a ** 2).sum())
    if var <= 0:
        return 1.0, np.eye(3), mB - mA
    U, S, Vt = np.linalg.svd(b.T @ a)
    D = np.eye(3)
    D[2, 2] = np.sign(np.linalg.det(U @ Vt)) or 1.0
    R = U @ D @ Vt
    s = float((S * np.diag(D)).sum() / var)
    return s, R, mB - s * R @ mA


def _turn(a, b) -> np.ndarray:
    """The smallest rotation taking direction a onto direction b (identity for a zero one)."""
    if np.linalg.norm(a) < 1e-12 or np.linalg.norm(b) < 1e-12:
        return np.eye(3)
    return Rotation.align_vectors([b], [a])[0].as_matrix()


def to_arrays(exemplars, prefix: str) -> tuple:
    """(arrays for the model file under `prefix`, their JSON-friendly descriptions)."""
    arrays, meta = {}, []
    for i, ex in enumerate(exemplars):
        for key, dtype in (("verts", np.float32), ("faces", np.int32), ("weights", np.float16),
                           ("heads", np.float32), ("tails", np.float32), ("source", np.int32)):
            arrays[f"{prefix}exemplar/{i}/{key}"] = np.asarray(ex[key], dtype)
        meta.append({"labels": list(ex["labels"]), "template": ex["template"], "name": ex["name"],
                     "topology": ex["topology"]})
    return arrays, meta


def from_arrays(d, prefix: str, meta) -> list:
    """The exemplars stored under `prefix` (as stored: weights stay float16 until used)."""
    out = []
    for i, m in enumerate(meta or []):
        ex = {key: d[f"{prefix}exemplar/{i}/{key}"]
              for key in ("verts", "faces", "weights", "heads", "tails", "source")}
        out.append({**ex, "labels": list(m["labels"]), "template": m["template"], "name": m.get("name", ""),
                    "topology": m["topology"]})
    return out
