# SPDX-License-Identifier: GPL-3.0-or-later
"""Auto Skin: skin weights for any mesh + armature (docs/auto_skin.md). numpy/scipy only;
never imports bpy or torch.

    W = predict_weights(vertices, faces, joints, parents, tails=None, model=None,
                        max_influences=4)          # (V, J), rows sum to 1

- heat.py      robust bone heat, the smooth global prior
- geodesic.py  vertex-to-bone distances robust on multi-part meshes
- features.py  per-vertex network features (docs/auto_skin.md#features) + prior: vertex_features()
- weights.py   scatter / prune / normalise
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import InvalidArmatureError, InvalidMeshError
from ..ground import ground_vertices
from ..meshprep import validate
from . import exemplars
from .armature_check import check_placement
from .features import FeatureSet, compute_features, mirrored, vertex_features
from .heat import HeatOptions, bone_heat
from .prep import dense_proxy, interpolate_weights, prepare, transfer_weights
from .weights import prune, rigid_members, scatter

__all__ = ["predict_weights", "weights_from_features", "vertex_features", "FeatureSet", "HeatOptions",
           "InvalidMeshError", "InvalidArmatureError", "PRIOR"]

PRIOR = "prior"           # model="prior": the heat prior alone, even when a model is shipped
MIN_WEIGHT = 0.0          # prior: Blender's weight limit already cut the small weights
MODEL_MIN_WEIGHT = 0.01   # model: probabilities below this share of the row are dropped
REDISTRIBUTE = True       # pruned weight goes to the nearest kept bone in the tree (weights.prune)


def _default_model(front_known: bool = True):
    """The shipped default model, or None when there is none (then the heat prior)."""
    try:
        from . import network
    except ImportError:
        return None
    fn = getattr(network, "default_model", None)
    return fn(front_known=front_known) if fn is not None else None


def _resolve_model(model, front_known: bool = True):
    if model is None:
        return _default_model(front_known)
    if isinstance(model, str) and model == PRIOR:
        return None
    if isinstance(model, (str, Path)):
        from . import network
        return network.load_model(model)
    if not hasattr(model, "predict"):
        raise TypeError("model must be None, 'prior', a path to a model file, or an object "
                        "with .predict(FeatureSet) -> (n, 5) probabilities")
    return model


def predict_weights(vertices, faces, joints, parents, tails=None, model=None,
                    max_influences: int = 4, *, names=None, heat_options: HeatOptions | None = None,
                    return_info: bool = False):
    """Skin weights of a mesh for an armature.

    vertices (V,3) float, faces (F,3) int triangles, joints (J,3) bone heads, parents
    (J,) int (-1 = root), tails (J,3) bone tails (None: derived from the children;
    zero-length bones are fine). Any units; mesh and bones in the same frame.
    model: None = the shipped default model if there is one (for an armature whose feet
    do not give the character's front, the shipped model that does not depend on the
    facing), else the heat prior;
    "prior" = the heat prior alone; a path = a model file (network.load_model);
    or an object with `.predict(FeatureSet) -> (n, 5)` candidate probabilities.
    names: the J bone names (optional). A model trained on a user's characters is used
    only for armatures of the rig templates it learned (network.SkinModel.for_rig:
    compared by bone names and hierarchy, by hierarchy alone without `names`); any other
    armature gets the model it was trained from. `info["model"]` says which weighted it.

    Returns (V, J) float64: every row sums to 1 with at most `max_influences` non-zero
    entries; every vertex is weighted (loose vertices take their nearest surface
    vertex's weights). A flat plate the character stands on (a ground plane, a shadow
    disc joined into the mesh: ground.ground_vertices) follows the root bone nearest to
    it alone and is left out of the weighting. The members of a group of small separate
    things (a shoal) each follow one bone (weights.rigid_members). A mesh of more than
    prep.PROXY_VERTICES welded vertices is weighted on a decimated proxy and the weights
    are carried over (prep.dense_proxy, prep.transfer_weights); a midpoint-subdivided
    mesh on the coarse mesh under it, the weights blended back (prep.interpolate_weights).
    Raises InvalidMeshError / InvalidArmatureError with a message for the user, also when
    the bones lie clearly away from the mesh or are in another unit
    (armature_check.check_placement).
    """
    if int(max_influences) < 1:
        raise ValueError("max_influences must be at least 1")
    V, F = validate(vertices, faces)
    plate = ground_vertices(V, F)
    W, info = _predict(V, F[~plate[F].any(axis=1)], joints, parents, tails, model, max_influences, names,
                       heat_options)
    if plate.any():
        W[plate] = 0.0
        W[plate, _nearest_root(V[plate], joints, parents)] = 1.0
    info["ground_vertices"] = int(plate.sum())
    return (W, info) if return_info else W


def _nearest_root(points, joints, parents) -> int:
    """The root bone (parent < 0) whose head is nearest the points' centre."""
    roots = np.flatnonzero(np.asarray(parents).reshape(-1) < 0)
    heads = np.asarray(joints, float).reshape(-1, 3)[roots]
    return int(roots[np.argmin(np.linalg.norm(heads - points.mean(axis=0), axis=1))])


def _predict(vertices, faces, joints, parents, tails, model, max_influences, names, heat_options):
    """predict_weights without the ground plates: (W, info)."""
    mesh, bones = prepare(vertices, faces, joints, parents, tails, undo_subdivision=True)
    check_placement([(None, mesh.V)], bones.heads, bones.tails)     # as Blender's Auto Skin checks
    work = dense_proxy(mesh)                 # big meshes: weighted on a decimated copy
    resolved = _resolve_model(model, front_known=mesh.front_from_armature)
    net, which = _for_rig(resolved, names, parents, _model_name(model))
    info = {"model": which, "proxy_vertices": work.n if work is not mesh else None, "subdivisions_undone": mesh.subdivisions,
            "front_from_armature": mesh.front_from_armature}
    if net is None:
        res = bone_heat(work, bones, heat_options)
        info.update(res.info, method="prior")
        W = prune(res.W, int(max_influences), MIN_WEIGHT, fallback=res.dist.argmin(axis=1),
                  parents=bones.parents if REDISTRIBUTE else None)
    else:
        fs = compute_features(work, bones, heat_options)
        W = _welded_weights(fs, net, max_influences, _symmetries(fs, _facing_free(net)))
        info.update(fs.info, method="model")
    W = rigid_members(W, work.V, work.F, bones.heads, bones.tails)
    if work is not mesh:
        W = transfer_weights(W, work, mesh, int(max_influences), bones.parents if REDISTRIBUTE else None)
    W, info["carried"] = _carried(resolved, W, mesh, bones, names, int(max_influences))
    if info["carried"]:
        info["model"] += (f", with the weights of {info['carried']['characters']} trained character(s) on "
                          f"{100 * info['carried']['share']:.0f} % of the vertices, where the surfaces coincide")
    if mesh.interp is not None:          # the coarse mesh under a subdivision: blended back
        W = interpolate_weights(W, mesh.interp, int(max_influences), bones.parents if REDISTRIBUTE else None)
    else:
        W = W[mesh.vmap]
    return W, info


def weights_from_features(fs: FeatureSet, model, max_influences: int = 4, names=None) -> np.ndarray:
    """A model's (V, J) weights from a character's features (`vertex_features`): its
    candidate probabilities scattered to the bones, pruned and mapped back to the input
    vertices, exactly as predict_weights does (features can be computed once and reused
    for several models; a gated model picks its network for the armature as there)."""
    net, _ = _for_rig(model, names, fs.bones.parents)
    W, _ = _carried(model, _welded_weights(fs, net, max_influences), fs.mesh, fs.bones, names, max_influences)
    return W[fs.vmap]


def _carried(model, W, mesh, bones, names, max_influences: int):
    """(weights, None or {characters, share}): a trained model's characters' own weights
    carried over where this (welded) mesh's surface lies on theirs or it has the topology
    of one of them (exemplars.py), blended with W."""
    found = model.exemplars_for(names, bones.parents) if hasattr(model, "exemplars_for") else []
    got = exemplars.carry(found, mesh.V, bones.heads, bones.parents, names, mesh.F) if found else None
    if got is None or not (got[1] > 0).any():
        return W, None
    Wx, reach, counted = got
    a = reach[:, None]
    W = prune(a * Wx + (1 - a) * W, max_influences, MODEL_MIN_WEIGHT, fallback=np.argmax(W, axis=1),
              parents=bones.parents if REDISTRIBUTE else None)
    return W, {"characters": counted, "share": float((reach > 0).mean())}


def _for_rig(net, names, parents, name: str = "the given model"):
    """(the model that weights this armature, a line saying which): a gated model's choice
    (network.SkinModel.for_rig); None is the heat prior."""
    if net is None:
        return None, "the heat prior"
    chosen, why = net.for_rig(names, parents) if hasattr(net, "for_rig") else (net, None)
    return chosen, why or name


def _model_name(model) -> str:
    """How the report names the `model` argument of predict_weights."""
    if model is None:
        return "the shipped default model"
    if isinstance(model, (str, Path)):
        return f"the skin model {Path(model).name}"
    return "the given model"


IDENTITY = (1.0, 1.0, 1.0)
MIRROR = (-1.0, 1.0, 1.0)          # x -> -x: the character's left and right swapped
HALF_TURN = (-1.0, -1.0, 1.0)      # half a turn about Z: front and back swapped
FRONT_BAND = 0.01                  # |skewness along y| below this: both facings blended


def _symmetries(fs: FeatureSet, facing_free: bool) -> tuple:
    """((weight, signs), ...): the moved copies of the features whose network answers are
    averaged. Always the character and its mirror image (x -> -x), so that both get the
    same weights. With the facing-free model (used when the armature does not give the
    front), also a canonical facing: the one in which the surface's area-weighted
    skewness along y is positive, both facings blended linearly while its size is below
    FRONT_BAND, so the choice is continuous and a half turn about Z changes nothing
    (docs/auto_skin.md#frame-invariance)."""
    share = 1.0
    if facing_free:
        share = float(np.clip(0.5 + _y_skewness(fs.mesh) / (2 * FRONT_BAND), 0.0, 1.0))
    moves = []
    for w, base in ((share, IDENTITY), (1.0 - share, HALF_TURN)):
        if w > 0:
            moves += [(w / 2, base), (w / 2, tuple(a * b for a, b in zip(base, MIRROR)))]
    return tuple(moves)


def _y_skewness(mesh) -> float:
    """Area-weighted skewness of the face centres' y: odd under y -> -y, even under x -> -x."""
    from ..meshprep import triangle_areas
    a = triangle_areas(mesh.V, mesh.F)
    y = mesh.V[mesh.F, 1].mean(axis=1)
    a = a / max(a.sum(), 1e-300)
    d = y - (a * y).sum()
    var = (a * d * d).sum()
    return float((a * d ** 3).sum() / var ** 1.5) if var > 0 else 0.0


def _facing_free(net) -> bool:
    """Is `net` the shipped model that does not depend on the facing?"""
    from . import network
    path = network.ANY_FRONT_MODEL_PATH
    return path.is_file() and net is network.load_model(path)


def _mean_prediction(fs: FeatureSet, model, symmetries) -> np.ndarray:
    """(n, K) weighted mean of model.predict over the moved copies of the features (a
    SkinModel normalises the inputs once for all of them: SkinModel.predict_moved)."""
    if hasattr(model, "predict_moved"):
        probs = model.predict_moved(fs, [m for _, m in symmetries])
    else:
        probs = [model.predict(fs if all(x > 0 for x in m) else mirrored(fs, m)) for _, m in symmetries]
    return sum(w * np.asarray(p, dtype=np.float64) for (w, _), p in zip(symmetries, probs))


def _welded_weights(fs: FeatureSet, model, max_influences: int, symmetries=((1.0, IDENTITY),)) -> np.ndarray:
    """A model's pruned (n, J) weights on the welded mesh the features were computed on,
    its candidate probabilities averaged over the `symmetries` ((weight, signs), ...)."""
    probs = _mean_prediction(fs, model, symmetries)
    if probs.shape != fs.candidates.shape:
        raise ValueError(f"model.predict returned shape {probs.shape}, expected {fs.candidates.shape}")
    Wn = scatter(fs.candidates, probs * fs.mask, fs.n_bones)
    return prune(Wn, int(max_influences), MODEL_MIN_WEIGHT, fallback=fs.candidates[:, 0],
                 parents=fs.bones.parents if REDISTRIBUTE else None)
