# SPDX-License-Identifier: GPL-3.0-or-later
"""Auto Skin: selected mesh(es) + an armature -> vertex groups for its deforming bones and
an Armature modifier. Any armature works (Auto Skeleton's, Rigify's DEF bones, Mixamo,
hand-made): only bones with Deform on get groups. The weights come from
bridge/skin.py (core.skinning.predict_weights on all meshes together, in world space at rest).
Small meshes (and every headless run) are skinned synchronously; large ones in a
background thread while Blender stays responsive (Esc cancels; see base.BonesmithOperator)."""
from __future__ import annotations

import bpy

from .. import preferences
from ..bridge import markers as bridge_markers
from ..bridge import mesh as bridge_mesh
from ..bridge import selection
from ..bridge import skin as bridge_skin
from ..core.errors import BonesmithError
from . import options
from .base import BonesmithOperator, to_object_mode


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


def read_input(context, meshes=None, armature=None) -> bridge_skin.SkinInput:
    """The selection (or `meshes` and `armature`) read for Auto Skin, with the Skin Model
    of the preferences."""
    to_object_mode(context)
    if meshes is None or armature is None:
        meshes, armature = find_targets(context)
    return bridge_skin.read(meshes, armature, *preferences.active_skin_model(context))


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
        return lambda progress: bridge_skin.compute(skin_input, max_influences, progress)

    def apply(self, context, skin_input, result):
        weights, which = result
        to_object_mode(context)
        _, armature = bridge_skin.apply(context, skin_input, weights)
        bridge_markers.note_skinned(armature, self.max_influences)   # a rebuild of its joints weights again
        meshes = len(skin_input.mesh_names)
        text = (f"Auto Skin: {skin_input.n_vertices} vertices in {meshes} mesh"
                f"{'es' if meshes > 1 else ''} weighted to {len(skin_input.bone_names)} bones of "
                f"'{skin_input.armature_name}' by {which} ({self.seconds:.1f} s)")
        self.report_done(text, "; ".join(filter(None, [skin_input.warning,
                                                       bridge_mesh.ground_note(skin_input.left_out)])))
        return {'FINISHED'}
