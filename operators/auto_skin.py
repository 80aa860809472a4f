# SPDX-License-Identifier: GPL-3.0-or-later
"""Auto Skin: selected mesh(es) + an armature -> vertex groups for its deforming bones and
an Armature modifier. Any armature works (Auto Skeleton's, Rigify's DEF bones, Mixamo,
hand-made): only bones with Deform on get groups. The weights come from
core.skinning.predict_weights on all meshes together, in world space at rest.
Small meshes (and every headless run) are skinned synchronously; large ones in a
background thread while Blender stays responsive (Esc cancels; see base.BonesmithOperator)."""
from __future__ import annotations

from dataclasses import dataclass

import bpy
import numpy as np

from .. import preferences
from ..bridge import armature as bridge_armature
from ..bridge import markers as bridge_markers
from ..bridge import selection
from ..bridge import weights as bridge_weights
from ..bridge.mesh import MeshSet
from ..core.errors import BonesmithError
from . import options
from .base import BonesmithOperator, meshes_again, to_object_mode
from .options import DEFAULT_MAX_INFLUENCES
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


def find_targets(context):
    """(meshes, armature) from the selection: the selected meshes, and the active armature,
    else the one selected armature, else the armature the meshes already belong to
    (Armature modifier or parent). BonesmithError when either is missing or ambiguous."""
    selected = list(context.selected_objects)
    active = context.active_object
    meshes = [obj for obj in selected if obj.type == 'MESH']
    if not meshes:
        if not selected:
            raise BonesmithError("Nothing is selected: select the mesh(es) to skin and their armature")
        raise BonesmithError("Auto Skin needs a mesh: select the mesh(es) to skin together "
                             "with their armature")
    if active is not None and active.type == 'ARMATURE' and active.select_get():
        return meshes, active
    armatures = [obj for obj in selected if obj.type == 'ARMATURE']
    if len(armatures) > 1:
        names = ", ".join(f"'{a.name}'" for a in armatures)
        raise BonesmithError(f"Several armatures are selected ({names}): make the one to skin "
                             "to the active object")
    if armatures:
        return meshes, armatures[0]
    return meshes, selection.the_armature(
        meshes, several="The selected meshes belong to different armatures ({names}): "
                        "select the armature to skin to as well",
        missing="No armature: select an armature together with the mesh(es) "
                "(or give the mesh an Armature modifier)")


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


def read_input(context, meshes=None, armature=None) -> SkinInput:
    to_object_mode(context)
    if meshes is None or armature is None:
        meshes, armature = find_targets(context)
    joints, parents, tails, names = bridge_weights.deform_bones(armature)
    mesh_set = bridge_weights.combine_rest(meshes)
    for k, obj in enumerate(meshes):
        if mesh_set.offsets[k + 1] == mesh_set.offsets[k]:
            raise BonesmithError(f"The mesh '{obj.name}' has no vertices")
    check_placement(mesh_set, joints, tails, armature.name)
    model, warning = preferences.active_skin_model(context)
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
    """Write the weights into vertex groups and rig the meshes to the armature."""
    to_object_mode(context)
    meshes, armature = lookup(skin_input)
    bridge_weights.write_weights_split(meshes, skin_input.mesh_set, weights, skin_input.bone_names)
    for obj in meshes:
        bridge_armature.attach_mesh(obj, armature)
    context.view_layer.update()
    return meshes, armature


class BONESMITH_OT_auto_skin(BonesmithOperator, bpy.types.Operator):
    """Weight the selected mesh(es) to the armature's deforming bones (vertex groups +
    Armature modifier); the user's other vertex groups are kept"""
    bl_idname = "bonesmith.auto_skin"
    bl_label = "Auto Skin"

    max_influences: options.MAX_INFLUENCES

    def read(self, context):
        return read_input(context)

    def computation(self, skin_input):
        max_influences = self.max_influences
        return lambda progress: compute(skin_input, max_influences, progress)

    def apply(self, context, skin_input, weights):
        _, armature = apply(context, skin_input, weights)   # the module's apply(), which the command line runs too
        bridge_markers.note_skinned(armature, self.max_influences)   # a rebuild of its joints weights again
        meshes = len(skin_input.mesh_names)
        text = (f"Auto Skin: {skin_input.n_vertices} vertices in {meshes} mesh"
                f"{'es' if meshes > 1 else ''} weighted to {len(skin_input.bone_names)} bones of "
                f"'{skin_input.armature_name}' ({self.seconds:.1f} s)")
        self.report_done(text, skin_input.warning)
        return {'FINISHED'}
