# SPDX-License-Identifier: GPL-3.0-or-later
"""Training data for Auto Skin's network (docs/auto_skin.md#training), without torch:
rigged characters as dicts, their checks, the family split, features and targets, and the
candidate-space metrics training watches.

A character is a dict: name, vertices (V,3), faces (F,3), joints (J,3), parents (J,),
tails (J,3) or None, names (J bone names) or None, weights (V,J), unweighted (V,) bool,
family (variants of one body share it).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .. import records
from ..errors import BonesmithError
from ..mesh import bbox_diagonal
from .network import K, candidate_mask

__all__ = ["MIN_COVER", "load_record", "load_records", "family", "check_characters",
           "split_by_family", "prepare_character", "layout_of", "candidate_l1", "cross_entropy",
           "coverage"]

MIN_COVER = 1e-6            # a vertex whose artist weight on its candidates is below this is skipped
ARMATURE_REACH = 0.5        # joints may lie this many mesh diagonals outside the mesh's box
ARMATURE_SCALE = (0.05, 20.0)  # the armature's extent / the mesh's, outside this: another unit


def load_record(path, *, poses: bool = False) -> dict:
    """A Bonesmith .npz record as a training dict. `poses=True` adds pose_A and
    pose_verts (for the deformation error) when the record has them."""
    path = Path(path)
    optional = ("joint_tails", "joint_names", "unweighted", "family") + (("pose_A", "pose_verts") if poses else ())
    d = records.read(path, records.RIG, optional, needed_for="a rigged-character record")
    joints = d["joints"].astype(np.float64)
    weights = d["weights"].astype(np.float64)
    ch = {
        "name": path.stem,
        "vertices": d["verts"].astype(np.float64),
        "faces": d["faces"].astype(np.int64),
        "joints": joints,
        "parents": d["parents"].astype(np.int64),
        "tails": d["joint_tails"].astype(np.float64) if "joint_tails" in d else None,
        "names": [str(n) for n in d["joint_names"]] if "joint_names" in d else None,
        "weights": weights,
        "unweighted": d["unweighted"].astype(bool) if "unweighted" in d else weights.sum(axis=1) <= 1e-12,
        "family": str(d["family"]) if "family" in d else path.stem,
    }
    if "pose_A" in d and "pose_verts" in d:
        ch["pose_A"] = d["pose_A"].astype(np.float64)
        ch["pose_verts"] = d["pose_verts"].astype(np.float64)
    if weights.shape != (len(ch["vertices"]), len(joints)):
        raise BonesmithError(f"{path.name}: weights are {weights.shape}, expected "
                             f"({len(ch['vertices'])}, {len(joints)})")
    return ch


def load_records(paths, **kw) -> list:
    return [load_record(p, **kw) for p in paths]


def family(ch: dict) -> str:
    return str(ch.get("family") or ch.get("name", ""))


def check_characters(characters) -> None:
    """Refuse what cannot teach the network, naming the character: no weights, weights
    that do not match the mesh or the armature, an armature in another place or unit
    than its mesh."""
    for ch in characters:
        name = ch.get("name") or family(ch)
        V, J = np.asarray(ch["vertices"], float), np.asarray(ch["joints"], float)
        W = np.asarray(ch["weights"], float)
        if W.shape != (len(V), len(J)):
            raise BonesmithError(f"{name}: its weights are {W.shape} but it has {len(V)} vertices and "
                                 f"{len(J)} bones: the armature does not belong to this mesh")
        unweighted = np.asarray(ch.get("unweighted", W.sum(axis=1) <= 1e-12), bool)
        if not len(V) or unweighted.all() or not np.isfinite(W).all():
            raise BonesmithError(f"{name} has no usable skin weights: weight its mesh to the "
                                 "armature (or leave it out of the training set)")
        _check_armature_fits(name, V, J)


def _check_armature_fits(name, V, J) -> None:
    lo, hi = V.min(axis=0), V.max(axis=0)
    diag = bbox_diagonal(V)
    if not len(J) or diag <= 0:
        return
    extent = bbox_diagonal(J) if len(J) > 1 else 0.0
    outside = np.maximum(np.maximum(lo - J, J - hi), 0.0).max(axis=1) > ARMATURE_REACH * diag
    if outside.mean() > 0.5 or (len(J) > 2 and not ARMATURE_SCALE[0] <= extent / diag <= ARMATURE_SCALE[1]):
        raise BonesmithError(f"{name}: its armature does not fit its mesh (armature {extent:.3g} across, "
                             f"mesh {diag:.3g}; {outside.sum()} of {len(J)} joints far outside the mesh): "
                             "apply the objects' transforms so both are in one place and unit")


def split_by_family(characters, *, val_fraction: float = 0.2, seed: int = 0,
                    val_families=None):
    """(train, validation) lists: whole families go to one side. `val_families` (names)
    forces the validation families; otherwise about `val_fraction` of the families (at
    least one when there are two or more) are drawn with `seed`."""
    families = sorted({family(c) for c in characters})
    if val_families is None:
        if len(families) < 2 or val_fraction <= 0:
            chosen = set()
        else:
            rng = np.random.default_rng(seed)
            n = min(len(families) - 1, max(1, int(round(val_fraction * len(families)))))
            chosen = set(rng.choice(families, size=n, replace=False).tolist())
    else:
        chosen = {str(f) for f in val_families}
    return ([c for c in characters if family(c) not in chosen],
            [c for c in characters if family(c) in chosen])


def _feature_fn():
    from .features import vertex_features
    return vertex_features


def layout_of(features) -> dict:
    """The FeatureSet's split of x into shared (vertex) and per-candidate (bone) columns:
    its own `layout` if it has one, else features.py's documented layout (a vertex block
    of VERTEX_DIM columns, then K blocks of BONE_DIM)."""
    layout = getattr(features, "layout", None)
    if callable(layout):
        layout = layout()
    if layout:
        return dict(layout)
    from . import features as feature_module
    vd, bd = feature_module.VERTEX_DIM, feature_module.BONE_DIM
    if np.asarray(features.x).shape[1] != vd + K * bd:
        return {}
    return {"shared_columns": list(range(vd)),
            "candidate_columns": [[vd + k * bd + i for i in range(bd)] for k in range(K)]}


def prepare_character(ch: dict, feature_fn=None) -> dict:
    """Features (core.skinning.features.vertex_features, on the welded mesh) and the
    artist's weights on each vertex's candidates (`FeatureSet.candidate_targets`)."""
    feature_fn = feature_fn or _feature_fn()
    fs = feature_fn(ch["vertices"], ch["faces"], ch["joints"], ch["parents"], ch.get("tails"))
    W = np.asarray(ch["weights"], dtype=np.float64)
    unweighted = np.asarray(ch.get("unweighted", W.sum(axis=1) <= 1e-12), dtype=bool)
    W = np.where(unweighted[:, None], 0.0, W)
    if hasattr(fs, "candidate_targets"):          # features.py: welded rows
        cand_w, cover = fs.candidate_targets(W)
        weighted = fs.gather(W).sum(axis=1) > 0
    else:                                         # a FeatureSet on the caller's vertices
        valid = candidate_mask(fs.candidates)
        cand_w = np.where(valid, np.take_along_axis(W, np.maximum(fs.candidates, 0), axis=1), 0.0)
        cover, weighted = cand_w.sum(axis=1), ~unweighted
    cand_w = cand_w * candidate_mask(fs.candidates)
    cover = np.minimum(cover, 1.0)
    mask = (cover > MIN_COVER) & weighted
    target = np.divide(cand_w, cover[:, None], out=np.zeros_like(cand_w), where=cover[:, None] > 0)
    return {"name": ch.get("name", ""), "family": family(ch),
            "features": fs, "layout": layout_of(fs), "target": target.astype(np.float32),
            "mask": mask, "cover": cover, "weighted": weighted, "cand_weights": cand_w,
            "n_joints": W.shape[1]}


def coverage(prep) -> float:
    """Share of the artist's weight (on the vertices the artist weighted) that falls on
    the candidate bones: what the network can express at best."""
    w = prep["weighted"]
    return float(prep["cover"][w].mean()) if w.any() else float("nan")


def candidate_l1(probs, prep) -> float:
    """Mean per-vertex L1 against the artist's full weights, for a prediction that lives on
    the candidates (mass the artist put on other bones counts as missed)."""
    w = prep["weighted"]
    if not w.any():
        return float("nan")
    l1 = np.abs(probs - prep["cand_weights"]).sum(axis=1) + (1.0 - prep["cover"])
    return float(l1[w].mean())


def cross_entropy(probs, prep) -> float:
    m = prep["mask"]
    if not m.any():
        return float("nan")
    p = np.clip(probs[m], 1e-12, 1.0)
    return float(-(prep["target"][m] * np.log(p)).sum(axis=1).mean())
