# SPDX-License-Identifier: GPL-3.0-or-later
"""Auto Skin as a service: read the meshes and the armature into arrays, compute the
weights through core, write them back as vertex groups with an Armature modifier. The
operators (Auto Skin, Auto Rig, Rebuild) and the command line all call it; the model and
the options are arguments, nothing here reads the UI."""
from __future__ import annotations

from dataclasses import dataclass

import bpy
import numpy as np

from ..core.errors import BonesmithError
from . import armature as bridge_armature
from . import weights as bridge_weights
from .mesh import MeshSet
from .selection import meshes_again

DEFAULT_MAX_INFLUENCES = 4

# A mesh whose bounding box stays this far (fraction of the rig's size) from the bones' box
# is not where the armature is: refuse rather than weight it to whichever bone is nearest.
FAR_APART = 0.25
# An armature (3 bones or more) spanning less than this share of the meshes' size is in
# another unit (centimetres against metres) or left unscaled: refuse rather than skin
# the whole body to the few bones it reaches.
TOO_SMALL = 0.02


@dataclass
class SkinInput:
    """What the computation needs, read from Blender before it starts."""
    mesh_names: list
    vertex_counts: list
    armature_name: str
    mesh_set: MeshSet
    joints: np.ndarray
    parents: np.ndarray
    tails: np.ndarray
    bone_names: list
    model: object = None      # path of a trained model, None = the shipped default
    warning: str = ""

    @property
    def n_vertices(self) -> int:
        return len(self.mesh_set.vertices)


def check_placement(mesh_set: MeshSet, joints, tails, armature_name: str) -> None:
    """BonesmithError when a mesh lies clearly away from the bones (an armature left at
    the origin while the character stands elsewhere, a wrong unit scale...)."""
    bones = np.vstack([joints, tails])
    lo, hi = bones.min(axis=0), bones.max(axis=0)
    rig_size = float(np.linalg.norm(hi - lo))
    size = max(float(np.linalg.norm(np.ptp(mesh_set.vertices, axis=0))), rig_size)
    margin = FAR_APART * size
    finite = mesh_set.vertices[np.isfinite(mesh_set.vertices).all(axis=1)]
    mesh_size = float(np.linalg.norm(np.ptp(finite, axis=0))) if len(finite) else 0.0
    if len(joints) >= 3 and mesh_size > 0 and rig_size < TOO_SMALL * mesh_size:
        raise BonesmithError(
            f"The armature '{armature_name}' is {mesh_size / max(rig_size, 1e-30):.0f}x smaller than the "
            "mesh it should deform: the two are in different units or one has an unapplied scale. "
            "Scale the armature to the mesh (or apply the objects' scale: Ctrl+A) and run Auto Skin again")
    far = []
    for k, name in enumerate(mesh_set.names):
        vertices = mesh_set.vertices[mesh_set.object_slice(k)]
        if not len(vertices) or not np.isfinite(vertices).all():
            continue  # core reports empty / NaN meshes with its own message
        v_lo, v_hi = vertices.min(axis=0), vertices.max(axis=0)
        gap = np.maximum(np.maximum(lo - v_hi, v_lo - hi), 0.0)
        if np.linalg.norm(gap) > margin:
            far.append(name)
    if far:
        listed = ", ".join(f"'{n}'" for n in far)
        raise BonesmithError(
            f"The mesh {listed} is far away from the bones of '{armature_name}': move the "
            "armature onto the mesh (or fix a unit scale) and run Auto Skin again")


def read(meshes, armature, model=None, warning: str = "") -> SkinInput:
    """SkinInput of `meshes` (rest pose, world space) and the deforming bones of
    `armature`; `model`: a trained model's path, None for the shipped default."""
    joints, parents, tails, names = bridge_weights.deform_bones(armature)
    mesh_set = bridge_weights.combine_rest(meshes)
    for k, obj in enumerate(meshes):
        if mesh_set.offsets[k + 1] == mesh_set.offsets[k]:
            raise BonesmithError(f"The mesh '{obj.name}' has no vertices")
    check_placement(mesh_set, joints, tails, armature.name)
    return SkinInput(
        mesh_names=[obj.name for obj in meshes],
        vertex_counts=[len(obj.data.vertices) for obj in meshes],
        armature_name=armature.name,
        mesh_set=mesh_set, joints=joints, parents=parents, tails=tails, bone_names=names,
        model=None if model is None else str(model), warning=warning,
    )


def predict(vertices, faces, joints, parents, tails, *, model=None,
            max_influences=DEFAULT_MAX_INFLUENCES, progress=None) -> np.ndarray:
    """core.skinning.predict_weights, checked: (V, J) finite, rows summing to 1."""
    from ..core import skinning  # imported on first use: loads the model's code only then
    if progress is not None:
        progress(0.0, "Computing skin weights")
    weights = skinning.predict_weights(vertices, faces, joints, parents, tails,
                                       model=model, max_influences=max_influences)
    weights = np.asarray(weights, dtype=np.float64)
    if weights.shape != (len(vertices), len(joints)) or not np.isfinite(weights).all():
        raise BonesmithError(f"Auto Skin produced unusable weights (shape {weights.shape}); "
                             "please report this with the mesh")
    if progress is not None:
        progress(1.0, "Done")
    return weights


def compute(skin_input: SkinInput, max_influences: int, progress=None) -> np.ndarray:
    return predict(skin_input.mesh_set.vertices, skin_input.mesh_set.faces, skin_input.joints,
                   skin_input.parents, skin_input.tails, model=skin_input.model,
                   max_influences=max_influences, progress=progress)


def lookup(skin_input: SkinInput):
    """The meshes and armature again, by name (the user may have edited the scene while a
    background job ran); BonesmithError when one is gone or changed."""
    meshes = meshes_again(skin_input.mesh_names, "Auto Skin", skin_input.vertex_counts)
    armature = bpy.data.objects.get(skin_input.armature_name)
    if armature is None or armature.type != 'ARMATURE':
        raise BonesmithError(f"The armature '{skin_input.armature_name}' was removed or renamed "
                             "while Auto Skin ran")
    missing = [n for n in skin_input.bone_names if n not in armature.data.bones]
    if missing:
        raise BonesmithError(f"Bones of '{armature.name}' were renamed or removed while Auto Skin "
                             f"ran ({', '.join(missing[:3])}): run it again")
    return meshes, armature


def apply(context, skin_input: SkinInput, weights: np.ndarray):
    """Write the weights into vertex groups and rig the meshes to the armature (Object
    Mode: the caller leaves any other mode first)."""
    meshes, armature = lookup(skin_input)
    bridge_weights.write_weights_split(meshes, skin_input.mesh_set, weights, skin_input.bone_names)
    for obj in meshes:
        bridge_armature.attach_mesh(obj, armature)
    context.view_layer.update()
    return meshes, armature
