# SPDX-License-Identifier: GPL-3.0-or-later
"""Auto Skin as a service: read the meshes and the armature into arrays, compute the
weights through core, write them back as vertex groups with an Armature modifier. The
operators (Auto Skin, Auto Rig, Rebuild) and the command line all call it; the model and
the options are arguments, nothing here reads the UI."""
from __future__ import annotations

from dataclasses import dataclass, field

import bpy
import numpy as np

from ..core.errors import BonesmithError
from ..core.skinning.armature_check import check_placement
from . import armature as bridge_armature
from . import mesh as bridge_mesh
from . import weights as bridge_weights
from .mesh import MeshSet
from .selection import meshes_again

DEFAULT_MAX_INFLUENCES = 4

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
    left_out: list = field(default_factory=list)   # selected ground plates (bridge.mesh.without_ground)

    @property
    def n_vertices(self) -> int:
        return len(self.mesh_set.vertices)


def read(meshes, armature, model=None, warning: str = "") -> SkinInput:
    """SkinInput of `meshes` (rest pose, world space) and the deforming bones of
    `armature`; `model`: a trained model's path, None for the shipped default. A ground
    plane selected with the meshes is left out."""
    joints, parents, tails, names = bridge_armature.deform_bones(armature)
    bridge_weights.check_modifiers(meshes, names)
    mesh_set = bridge_mesh.combine_rest(meshes)
    for k, obj in enumerate(meshes):
        if mesh_set.offsets[k + 1] == mesh_set.offsets[k]:
            raise BonesmithError(f"The mesh '{obj.name}' has no vertices")
    meshes, mesh_set, left_out, plate = bridge_mesh.without_ground(meshes, mesh_set)
    slices = [mesh_set.object_slice(k) for k in range(len(meshes))]
    check_placement([(obj.name, mesh_set.vertices[s][~plate[s]]) for obj, s in zip(meshes, slices)],
                    joints, tails, armature.name)
    return SkinInput(
        mesh_names=[obj.name for obj in meshes],
        vertex_counts=[len(obj.data.vertices) for obj in meshes],
        armature_name=armature.name,
        mesh_set=mesh_set, joints=joints, parents=parents, tails=tails, bone_names=names,
        model=None if model is None else str(model), warning=warning, left_out=left_out,
    )


def predict(vertices, faces, joints, parents, tails, *, model=None, names=None,
            max_influences=DEFAULT_MAX_INFLUENCES, progress=None):
    """core.skinning.predict_weights, checked: ((V, J) finite weights, rows summing to 1;
    a line saying which model weighted them). `names`: the bones' names, by which a model
    trained on the user's characters knows the rig templates it was trained for."""
    from ..core import skinning  # imported on first use: loads the model's code only then
    if progress is not None:
        progress(0.0, "Computing skin weights")
    weights, info = skinning.predict_weights(vertices, faces, joints, parents, tails, model=model,
                                             names=names, max_influences=max_influences, return_info=True)
    weights = np.asarray(weights, dtype=np.float64)
    if weights.shape != (len(vertices), len(joints)) or not np.isfinite(weights).all():
        raise BonesmithError(f"Auto Skin produced unusable weights (shape {weights.shape}); "
                             "please report this with the mesh")
    if progress is not None:
        progress(1.0, "Done")
    return weights, info["model"]


def compute(skin_input: SkinInput, max_influences: int, progress=None):
    """(weights, which model weighted them) for what `read` read."""
    return predict(skin_input.mesh_set.vertices, skin_input.mesh_set.faces, skin_input.joints,
                   skin_input.parents, skin_input.tails, model=skin_input.model, names=skin_input.bone_names,
                   max_influences=max_influences, progress=progress)


def lookup(skin_input: SkinInput):
    """The meshes and armature again, by name (the user may have edited the scene while a
    background job ran); BonesmithError when one is gone or changed."""
    meshes = meshes_again(skin_input.mesh_names, "Auto Skin", skin_input.vertex_counts)
    armature = bpy.data.objects.get(skin_input.armature_name)
    if armature is None or armature.type != 'ARMATURE':
        raise BonesmithError(f"The armature '{skin_input.armature_name}' was removed or renamed "
                             "while Auto Skin ran")
    bridge_armature.require_bones(armature, skin_input.bone_names, of="that Auto Skin read",
                                  fix="they were renamed or removed while it ran; run it again")
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
